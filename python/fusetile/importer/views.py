"""views.py - how an N-d buffer is laid out as a 2-D problem tensor, and whether two layouts hold the same elements in the same order.

A View of a buffer of shape S is (perm, split): the physical dimension
order perm, flattened row-major, rows = prod(S[perm[:split]]), cols =
prod(S[perm[split:]]).  ROWMAJOR is (identity, rank - 1): rows are every
dimension but the last.  NCHW is the channels-last view of a 4-d feature
map, ((0, 2, 3, 1), 3): rows N*H*W, cols C.

Data-movement ops (reshape, permute, slices, ...) are replayed on a tensor
of element positions to decide whether a chain of them, read through a
view, is the identity on the source's problem tensor (then no Layout op is
needed).
"""

MAX_REPLAY = 1 << 24   # elements: above this the replay is skipped (a Layout is kept)


class View:
    """A 2-D layout of an N-d buffer: perm (physical dimension order) and split (rows | cols)."""

    __slots__ = ("perm", "split")

    def __init__(self, perm, split):
        self.perm = tuple(perm)
        self.split = int(split)

    def key(self):
        return ("view", self.perm, self.split)

    def shape2d(self, shape):
        """(rows, cols) of a buffer of `shape` in this view."""
        phys = [shape[p] for p in self.perm]
        return prod(phys[:self.split]), prod(phys[self.split:])

    def __eq__(self, other):
        return isinstance(other, View) and self.perm == other.perm and self.split == other.split

    def __hash__(self):
        return hash(self.key())

    def __repr__(self):
        return f"View({self.perm}, {self.split})"


def prod(xs):
    n = 1
    for x in xs:
        n *= int(x)
    return n


def rowmajor(rank):
    """Rows = every dimension but the last (a scalar or 1-d buffer is one row)."""
    return View(range(rank), max(rank - 1, 0))


def nchw():
    """The channels-last view of an N x C x H x W feature map: rows N*H*W, cols C."""
    return View((0, 2, 3, 1), 3)


def last_dims(rank, k):
    """Rows = the leading dimensions, cols = the last k (layer_norm over k dimensions)."""
    return View(range(rank), rank - k)


def dim_last(rank, d):
    """Cols = dimension d, rows = the others in order (softmax over d)."""
    return View([i for i in range(rank) if i != d] + [d], rank - 1)


def equivalent(shape, a, b):
    """True when views a and b of a buffer of `shape` give the same 2-D tensor (same shape, same order)."""
    if a == b:
        return True
    if a.shape2d(shape) != b.shape2d(shape):
        return False
    pa = [p for p in a.perm if shape[p] != 1]
    pb = [p for p in b.perm if shape[p] != 1]
    return pa == pb


def positions(shape, view):
    """An int64 tensor of logical `shape` holding each element's index in the view's 2-D flattening."""
    import torch
    phys = [shape[p] for p in view.perm]
    t = torch.arange(prod(shape), dtype=torch.int64).reshape(phys) if shape else torch.zeros((), dtype=torch.int64)
    inv = [0] * len(view.perm)
    for i, p in enumerate(view.perm):
        inv[p] = i
    return t.permute(inv) if shape else t


def replay(t, op, attrs):
    """Apply one data-movement op (canonical name and attributes) to tensor t."""
    import torch
    import torch.nn.functional as F
    if op in ("reshape", "flatten"):
        return t.reshape(attrs["shape"])
    if op == "expand":
        return t.expand(attrs["shape"])
    if op == "permute":
        return t.permute(attrs["dims"])
    if op == "transpose":
        return t.transpose(attrs["dim0"], attrs["dim1"])
    if op == "getitem":
        idx = []
        for item in attrs["index"]:
            if item[0] == "new":
                idx.append(None)
            elif item[0] == "int":
                idx.append(item[1])
            else:
                idx.append(slice(item[1], item[2], item[3]))
        return t[tuple(idx)]
    if op == "split_part":
        part = t.narrow(attrs["dim"], attrs["start"], attrs["size"])
        return part.squeeze(attrs["dim"]) if attrs.get("squeeze") else part
    if op == "pad":
        flat = []
        for before, after in reversed(attrs["pads"]):
            flat += [before, after]
        return F.pad(t, flat, value=-1)
    if op == "roll":
        return torch.roll(t, attrs["shifts"], attrs["dims"])
    if op in ("dropout", "identity"):
        return t
    raise ValueError(f"no replay for {op}")


def chain_is_identity(src_shape, src_view, chain, dst_shape, dst_view):
    """True when reading the chain's result through dst_view is exactly the source's 2-D tensor.

    chain: [(op, attrs), ...] applied to the source buffer (src_shape, laid
    out as src_view).  Both 2-D shapes must agree and every element must
    sit at the same position.  Chains over more than MAX_REPLAY elements
    count as the identity only when they are made of identity ops and the
    views are equivalent.
    """
    import torch
    if src_view.shape2d(src_shape) != dst_view.shape2d(dst_shape):
        return False
    if all(op in ("dropout", "identity") for op, _ in chain):
        return equivalent(src_shape, src_view, dst_view) and tuple(src_shape) == tuple(dst_shape)
    n = prod(src_shape)
    if n > MAX_REPLAY or prod(dst_shape) != n:
        return False
    t = positions(src_shape, src_view)
    for op, attrs in chain:
        t = replay(t, op, attrs)
    if tuple(t.shape) != tuple(dst_shape):
        return False
    flat = t.permute(dst_view.perm).reshape(-1)
    return bool(torch.equal(flat, torch.arange(n, dtype=torch.int64)))
