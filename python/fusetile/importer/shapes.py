"""shapes.py - stage 4: every canonical node's output shapes from PyTorch itself (the op run on meta tensors), checked against the recorded ones.

No shape arithmetic lives here: each canonical op has a short recipe that
runs the torch function it means (F.conv2d, torch.matmul, Tensor.reshape,
indexing, torch.broadcast_shapes, ...) on meta tensors of its operands'
shapes with its canonical attributes, and the result's shapes are the
output shapes.  The frontends record shapes already (the FX trace runs
every op on meta tensors; an ONNX model goes through
onnx.shape_inference.infer_shapes), so this stage fills the ones a frontend
left unknown (a model graph written by hand, an ONNX value inference could
not shape) and checks that the canonical op and attributes reproduce the
recorded ones.  A failure of the torch function (operands that do not
broadcast, channels that do not match a weight, a reshape that changes the
element count) is an ImportFailure naming the node, "shape mismatch: OP
of [..] and [..]: TORCH'S MESSAGE", with a hint.
"""

from . import canonical as C
from .errors import ImportFailure, node_where

HINT = "check --input-shape against what the model expects"


def broadcast(shapes):
    """The broadcast of several shapes (torch.broadcast_shapes), or None when they do not broadcast."""
    import torch
    try:
        return tuple(torch.broadcast_shapes(*[tuple(s) for s in shapes]))
    except RuntimeError:
        return None


def _meta(shape, dtype=None):
    import torch
    return torch.empty(tuple(shape), dtype=dtype or torch.float32, device="meta")


def _conv2d(xs, a):
    import torch.nn.functional as F
    x, w = xs[0], xs[1]
    if x.dim() != 4:
        raise RuntimeError("expected an input of 4 dimensions N x C x H x W")
    t, l, b, r = a["padding"]
    x = F.pad(x, (l, r, t, b))
    return F.conv2d(x, w, xs[2] if len(xs) > 2 else None, tuple(a["stride"]), 0, tuple(a["dilation"]), a["groups"])


def _linear(xs, a):
    import torch.nn.functional as F
    w = xs[1].t() if a.get("weight_layout") == "in_out" else xs[1]
    if xs[0].dim() == 0 or xs[0].shape[-1] != a["in_features"]:
        raise RuntimeError(f"expected a last dimension of {a['in_features']} (in_features)")
    return F.linear(xs[0], w, xs[2] if len(xs) > 2 else None)


def _matmul(xs, a):
    import torch
    return torch.matmul(xs[0], xs[1])


def _bmm(xs, a):
    import torch
    return torch.bmm(xs[0], xs[1])


def _batch_norm(xs, a):
    import torch.nn.functional as F
    c = a["num_features"]
    stats = [xs[i] if i < len(xs) else _meta((c,)) for i in range(1, 5)]
    return F.batch_norm(xs[0], stats[0], stats[1], stats[2], stats[3], False)


def _layer_norm(xs, a):
    import torch.nn.functional as F
    return F.layer_norm(xs[0], tuple(a["normalized_shape"]))


def _rowwise(xs, a):
    return xs[0].softmax(a.get("dim", -1))


def _elementwise(xs, a):
    import torch
    return _meta(torch.broadcast_shapes(*[x.shape for x in xs]))


def _pool(xs, a):
    import torch.nn.functional as F
    x = xs[0]
    if x.dim() != 4:
        raise RuntimeError("expected an input of 4 dimensions N x C x H x W")
    kh, kw = a["kernel"]
    t, l, b, r = a["padding"]
    if (t, l) == (b, r) and 2 * t <= kh and 2 * l <= kw:
        pad = (t, l)
    else:   # asymmetric (ONNX): pad first
        x, pad = F.pad(x, (l, r, t, b)), (0, 0)
    # the output size of a window is the same for every pooling: max_pool2d's
    return F.max_pool2d(x, (kh, kw), tuple(a["stride"]), pad, tuple(a.get("dilation", (1, 1))), a["ceil_mode"])


def _adaptive(xs, a):
    import torch.nn.functional as F
    if xs[0].dim() != 4:
        raise RuntimeError("expected an input of 4 dimensions N x C x H x W")
    return F.adaptive_avg_pool2d(xs[0], tuple(a["output_size"]))


def _reduce(xs, a):
    import torch
    if not a["dims"]:
        return xs[0]
    return torch.sum(xs[0], tuple(a["dims"]), keepdim=bool(a["keepdim"]))


def _reshape(xs, a):
    return xs[0].reshape(tuple(a["shape"]))


def _permute(xs, a):
    return xs[0].permute(tuple(a["dims"]))


def _transpose(xs, a):
    return xs[0].transpose(a["dim0"], a["dim1"]) if xs[0].dim() else xs[0]


def _getitem(xs, a):
    index = []
    for item in a["index"]:
        if item[0] == "new":
            index.append(None)
        elif item[0] == "int":
            index.append(item[1])
        else:
            _, s, e, st = item
            index.append(slice(s, e, st))
    if sum(1 for i in index if i is not None) > xs[0].dim():
        raise RuntimeError(f"index {a['index']} has more entries than the input has dimensions")
    return xs[0][tuple(index)]


def _split(xs, a):
    import torch
    x, d = xs[0], a["dim"]
    if sum(a["sizes"]) != x.shape[d]:
        raise RuntimeError(f"split sizes {a['sizes']} do not add up to dimension {d}")
    parts = torch.split(x, list(a["sizes"]), d)
    return tuple(p.squeeze(d) for p in parts) if a.get("squeeze") else parts


def _cat(xs, a):
    import torch
    return torch.cat(xs, a["dim"])


def _expand(xs, a):
    return xs[0].expand(tuple(a["shape"]))


def _pad(xs, a):
    import torch
    flat = []
    for before, after in reversed(a["pads"]):
        flat += [before, after]
    return torch.constant_pad_nd(xs[0], flat)


def _same(xs, a):
    return xs[0]


RECIPES = {
    "conv2d": _conv2d, "linear": _linear, "matmul": _matmul, "bmm": _bmm,
    "batch_norm": _batch_norm, "layer_norm": _layer_norm, "softmax": _rowwise, "log_softmax": _rowwise,
    "mean": _reduce, "sum": _reduce, "flatten": _reshape, "reshape": _reshape, "permute": _permute,
    "transpose": _transpose, "getitem": _getitem, "split": _split, "cat": _cat, "expand": _expand, "pad": _pad,
    "roll": _same, "dropout": _same, "identity": _same,
    "adaptive_avg_pool2d": _adaptive, "adaptive_max_pool2d": _adaptive,
}
for _op in C.ELEMENTWISE_BINARY | C.ELEMENTWISE_UNARY:
    RECIPES[_op] = _elementwise
for _op in C.POOLING - {"adaptive_avg_pool2d", "adaptive_max_pool2d"}:
    RECIPES[_op] = _pool
assert set(RECIPES) == set(C.TABLE), set(RECIPES) ^ set(C.TABLE)


def output_shapes(op, in_shapes, attrs):
    """The output shapes of canonical op `op` on operands of in_shapes with attrs (torch on meta tensors).

    Raises RuntimeError (or another exception of torch's) when the op
    cannot take operands of those shapes.
    """
    import torch
    with torch.no_grad():
        out = RECIPES[op]([_meta(s) for s in in_shapes], attrs)
    outs = out if isinstance(out, (tuple, list)) else [out]
    return [tuple(int(d) for d in o.shape) for o in outs]


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
    where = node_where(n.name, n.op)
    for i in n.inputs:
        b = g.buffers.get(i)
        if b is not None and b.shape is None:
            raise ImportFailure(where, f"the shape of operand {i} is unknown",
                                "give the model static input shapes (--input-shape)")
    ins = [tuple(g.buffers[i].shape) for i in n.inputs]
    try:
        outs = output_shapes(n.op, ins, n.attrs)
    except (RuntimeError, ValueError, IndexError, TypeError, KeyError) as e:
        text = str(e).strip().splitlines()
        what = f"{n.op} of {' and '.join(str(list(s)) for s in ins)}" if ins else n.op
        raise ImportFailure(where, f"shape mismatch: {what}: {text[0] if text else type(e).__name__}", HINT) from None
    if len(outs) != len(n.outputs):
        raise ImportFailure(where, f"{len(n.outputs)} outputs, the op makes {len(outs)}",
                            "a multi-output op must have all its outputs named")
    for name, shape in zip(n.outputs, outs):
        b = g.buffers[name]
        if b.shape is None:
            b.shape = tuple(shape)
            filled += 1
        elif tuple(b.shape) != tuple(shape):
            raise ImportFailure(where, f"shape mismatch: the op gives {list(shape)} but {name} is recorded as "
                                f"{list(b.shape)}", "the model's recorded shapes disagree with its ops")
        if any(d < 1 for d in b.shape):
            raise ImportFailure(where, f"{name} has an empty shape {list(b.shape)}",
                                "every dimension must be at least 1")
    return filled
