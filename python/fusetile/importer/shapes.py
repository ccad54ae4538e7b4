"""shapes.py - stage 4: shape propagation over canonical nodes, with broadcasting checked.

Each canonical op has a rule that computes its output shapes from its
operands' shapes and its attributes.  propagate_shapes walks the graph in
order: a computed shape fills a buffer the frontend left unknown, and must
equal the shape the frontend recorded (FX meta tensors, ONNX shape
inference) when there is one.  Operands that do not broadcast, channels
that do not match a weight, a reshape that changes the element count: each
is an ImportFailure naming the node, "shape mismatch: ...", with a hint.
"""

from . import canonical as C
from .errors import ImportFailure, node_where


def broadcast(shapes):
    """The broadcast of several shapes (numpy rules), or None when they do not broadcast."""
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(rank):
        size = 1
        for s in shapes:
            d = s[len(s) - rank + i] if len(s) - rank + i >= 0 else 1
            if d != 1:
                if size not in (1, d):
                    return None
                size = d
        out.append(size)
    return tuple(out)


class _Rule:
    def __init__(self, node, graph):
        self.node = node
        self.graph = graph

    def shape(self, i):
        return self.graph.buffers[self.node.inputs[i]].shape

    def fail(self, message, hint="check --input-shape against what the model expects"):
        return ImportFailure(node_where(self.node.name, self.node.op), f"shape mismatch: {message}", hint)


def _conv_out(size, k, s, p0, p1, d, ceil=False):
    span = size + p0 + p1 - d * (k - 1) - 1
    if span < 0:
        return 0
    return (-(-span // s) if ceil else span // s) + 1


def _conv2d(r, a):
    x, w = r.shape(0), r.shape(1)
    if len(x) != 4:
        raise r.fail(f"conv2d input has shape {list(x)}, expected 4 dimensions N x C x H x W")
    if x[1] != w[1] * a["groups"]:
        raise r.fail(f"conv2d input has {x[1]} channels, the weight {list(w)} with groups={a['groups']} "
                     f"expects {w[1] * a['groups']}")
    kh, kw = a["kernel"]
    p = a["padding"]
    ho = _conv_out(x[2], kh, a["stride"][0], p[0], p[2], a["dilation"][0])
    wo = _conv_out(x[3], kw, a["stride"][1], p[1], p[3], a["dilation"][1])
    if ho < 1 or wo < 1:
        raise r.fail(f"conv2d input {list(x)} is smaller than the kernel {a['kernel']}")
    return [(x[0], w[0], ho, wo)]


def _linear(r, a):
    x = r.shape(0)
    if not x or x[-1] != a["in_features"]:
        raise r.fail(f"linear input has shape {list(x)}, expected a last dimension of {a['in_features']}")
    return [tuple(x[:-1]) + (a["out_features"],)]


def _matmul(r, a):
    x, y = r.shape(0), r.shape(1)
    if not x or not y:
        raise r.fail("matmul of a scalar")
    xs = (1,) + tuple(x) if len(x) == 1 else tuple(x)
    ys = tuple(y) + (1,) if len(y) == 1 else tuple(y)
    if xs[-1] != ys[-2]:
        raise r.fail(f"matmul of {list(x)} by {list(y)}: inner dimensions {xs[-1]} and {ys[-2]} differ",
                     "check the operands' shapes (a missing transpose?)")
    if r.node.op == "bmm" and (len(x) != 3 or len(y) != 3 or x[0] != y[0]):
        raise r.fail(f"bmm of {list(x)} by {list(y)}: expected two 3-d tensors with the same batch")
    batch = broadcast([xs[:-2], ys[:-2]])
    if batch is None:
        raise r.fail(f"matmul batch dimensions {list(xs[:-2])} and {list(ys[:-2])} do not broadcast")
    out = tuple(batch) + (xs[-2], ys[-1])
    if len(x) == 1:
        out = out[:-2] + out[-1:]
    if len(y) == 1:
        out = out[:-1]
    return [out]


def _same_as_first(r, a):
    return [r.shape(0)]


def _batch_norm(r, a):
    x = r.shape(0)
    if len(x) < 2 or x[1] != a["num_features"]:
        raise r.fail(f"batch_norm input {list(x)} does not have {a['num_features']} channels")
    return [x]


def _layer_norm(r, a):
    x = r.shape(0)
    ns = tuple(a["normalized_shape"])
    if tuple(x[len(x) - len(ns):]) != ns:
        raise r.fail(f"layer_norm over {list(ns)} of an input of shape {list(x)}")
    return [x]


def _elementwise(r, a):
    shapes = [r.shape(i) for i in range(len(r.node.inputs))]
    out = broadcast(shapes)
    if out is None:
        raise r.fail(f"{r.node.op} operands {' and '.join(str(list(s)) for s in shapes)} do not broadcast",
                     "the trailing dimensions must be equal or 1")
    return [out]


def _pool(r, a):
    x = r.shape(0)
    if len(x) != 4:
        raise r.fail(f"{r.node.op} input {list(x)} is not N x C x H x W")
    if r.node.op.startswith("adaptive"):
        return [(x[0], x[1]) + tuple(a["output_size"])]
    p = a["padding"]
    ho = _conv_out(x[2], a["kernel"][0], a["stride"][0], p[0], p[2], a["dilation"][0], a["ceil_mode"])
    wo = _conv_out(x[3], a["kernel"][1], a["stride"][1], p[1], p[3], a["dilation"][1], a["ceil_mode"])
    if a["ceil_mode"]:  # torch: the last window must start inside the input or its left padding
        if (ho - 1) * a["stride"][0] >= x[2] + p[0]:
            ho -= 1
        if (wo - 1) * a["stride"][1] >= x[3] + p[1]:
            wo -= 1
    if ho < 1 or wo < 1:
        raise r.fail(f"{r.node.op} input {list(x)} is smaller than the window {a['kernel']}")
    return [(x[0], x[1], ho, wo)]


def _reduce(r, a):
    x = r.shape(0)
    dims = set(a["dims"])
    if any(d >= len(x) for d in dims):
        raise r.fail(f"{r.node.op} over dimensions {sorted(dims)} of a {len(x)}-d input")
    if a["keepdim"]:
        return [tuple(1 if i in dims else d for i, d in enumerate(x))]
    return [tuple(d for i, d in enumerate(x) if i not in dims)]


def _numel(s):
    n = 1
    for d in s:
        n *= d
    return n


def _reshape(r, a):
    x = r.shape(0)
    out = tuple(a["shape"])
    if _numel(out) != _numel(x):
        raise r.fail(f"{r.node.op} of {list(x)} ({_numel(x)} elements) to {list(out)} ({_numel(out)} elements)")
    return [out]


def _permute(r, a):
    x = r.shape(0)
    dims = a["dims"]
    if sorted(dims) != list(range(len(x))):
        raise r.fail(f"permute dims {dims} are not a permutation of {len(x)} dimensions")
    return [tuple(x[d] for d in dims)]


def _transpose(r, a):
    x = list(r.shape(0))
    if x:
        d0, d1 = a["dim0"], a["dim1"]
        if max(d0, d1) >= len(x):
            raise r.fail(f"transpose of dimensions {d0} and {d1} of a {len(x)}-d input")
        x[d0], x[d1] = x[d1], x[d0]
    return [tuple(x)]


def _getitem(r, a):
    x = r.shape(0)
    out, dim = [], 0
    for item in a["index"]:
        if item[0] == "new":
            out.append(1)
            continue
        if dim >= len(x):
            raise r.fail(f"index {a['index']} has more entries than the input {list(x)} has dimensions")
        if item[0] == "slice":
            _, s, e, st = item
            out.append(max(0, -(-(min(e, x[dim]) - s) // st)))
        dim += 1
    return [tuple(out)]


def _split(r, a):
    x = r.shape(0)
    d = a["dim"]
    if sum(a["sizes"]) != x[d]:
        raise r.fail(f"split sizes {a['sizes']} do not add up to dimension {d} of {list(x)}")
    outs = []
    for s in a["sizes"]:
        shape = list(x)
        shape[d] = s
        if a.get("squeeze"):
            del shape[d]
        outs.append(tuple(shape))
    return outs


def _cat(r, a):
    shapes = [r.shape(i) for i in range(len(r.node.inputs))]
    d = a["dim"]
    first = shapes[0]
    for s in shapes[1:]:
        if len(s) != len(first) or any(s[i] != first[i] for i in range(len(s)) if i != d):
            raise r.fail(f"cat along dimension {d} of {' and '.join(str(list(t)) for t in shapes)}",
                         "all dimensions but the concatenated one must be equal")
    out = list(first)
    out[d] = sum(s[d] for s in shapes)
    return [tuple(out)]


def _expand(r, a):
    x = r.shape(0)
    out = tuple(a["shape"])
    if broadcast([x, out]) != out:
        raise r.fail(f"cannot expand {list(x)} to {list(out)}")
    return [out]


def _pad(r, a):
    x = r.shape(0)
    return [tuple(d + p[0] + p[1] for d, p in zip(x, a["pads"]))]


def _roll(r, a):
    return [r.shape(0)]


RULES = {
    "conv2d": _conv2d, "linear": _linear, "matmul": _matmul, "bmm": _matmul,
    "batch_norm": _batch_norm, "layer_norm": _layer_norm, "softmax": _same_as_first,
    "log_softmax": _same_as_first, "mean": _reduce, "sum": _reduce,
    "flatten": _reshape, "reshape": _reshape, "permute": _permute, "transpose": _transpose,
    "getitem": _getitem, "split": _split, "cat": _cat, "expand": _expand, "pad": _pad, "roll": _roll,
    "dropout": _same_as_first, "identity": _same_as_first,
}
for _op in C.ELEMENTWISE_BINARY:
    RULES[_op] = _elementwise
for _op in C.ELEMENTWISE_UNARY:
    RULES[_op] = _elementwise
for _op in C.POOLING:
    RULES[_op] = _pool
assert set(RULES) == set(C.TABLE), set(RULES) ^ set(C.TABLE)


def propagate_shapes(g):
    """Compute every node's output shapes in order; fill unknown shapes, check known ones.

    Returns the number of buffers whose shape was filled in.  Raises
    ImportFailure for a shape mismatch, or for an operand whose shape is
    still unknown (its producer could not be shaped).
    """
    return sum(shape_node(n, g) for n in g.nodes)


def shape_node(n, g):
    """Compute one canonical node's output shapes (propagate_shapes's step); returns how many were filled in."""
    filled = 0
    for i in n.inputs:
        b = g.buffers.get(i)
        if b is not None and b.shape is None:
            raise ImportFailure(node_where(n.name, n.op), f"the shape of operand {i} is unknown",
                                "give the model static input shapes (--input-shape)")
    outs = RULES[n.op](_Rule(n, g), n.attrs)
    if len(outs) != len(n.outputs):
        raise ImportFailure(node_where(n.name, n.op), f"{len(n.outputs)} outputs, the op makes {len(outs)}",
                            "a multi-output op must have all its outputs named")
    for name, shape in zip(n.outputs, outs):
        b = g.buffers[name]
        if b.shape is None:
            b.shape = tuple(shape)
            filled += 1
        elif tuple(b.shape) != tuple(shape):
            raise ImportFailure(node_where(n.name, n.op),
                                f"shape mismatch: the op gives {list(shape)} but {name} is recorded as "
                                f"{list(b.shape)}",
                                "the model's recorded shapes disagree with its ops")
        if any(d < 1 for d in b.shape):
            raise ImportFailure(node_where(n.name, n.op), f"{name} has an empty shape {list(b.shape)}",
                                "every dimension must be at least 1")
    return filled
