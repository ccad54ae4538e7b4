"""canonical.py - stage 3: THE table from every syntactic form of an op to its canonical name, and each op's canonical operands and attributes.

TABLE lists, per canonical op, every form that means it: FX function
calls ("torch.add", "operator.add", "F.relu"), tensor methods
("Tensor.add_"), leaf modules ("nn.ReLU") and ONNX op types ("onnx.Relu").
FORMS is its inverse.  A node whose form is in no list is an unsupported op.
In-place forms mean the same op as their out-of-place forms: the graph is
in SSA form (buffers.fold_and_prune refuses an in-place update whose result
is unused).  Each canonical op has one normaliser that turns the raw call
(positional and keyword arguments with Ref for buffers, or ONNX attributes
and constant inputs) into tensor operands in canonical order and canonical
attributes (docs/MODEL_GRAPH.md lists them per op).
"""

from .errors import ImportFailure, node_where
from .graph import Ref

_ADD = ["operator.add", "torch.add", "Tensor.add", "Tensor.add_", "onnx.Add"]

TABLE = {
    # --- compute: MatMul after lowering
    "conv2d": ["nn.Conv2d", "F.conv2d", "torch.conv2d", "onnx.Conv"],
    "linear": ["nn.Linear", "F.linear", "torch._C._nn.linear", "onnx.Gemm"],
    "matmul": ["torch.matmul", "Tensor.matmul", "operator.matmul", "torch.mm", "Tensor.mm",
               "onnx.MatMul"],
    "bmm": ["torch.bmm", "Tensor.bmm"],
    # --- normalisation
    "batch_norm": ["nn.BatchNorm2d", "nn.BatchNorm1d", "F.batch_norm", "torch.batch_norm",
                   "onnx.BatchNormalization"],
    "layer_norm": ["nn.LayerNorm", "F.layer_norm", "torch.layer_norm", "onnx.LayerNormalization"],
    "softmax": ["nn.Softmax", "F.softmax", "torch.softmax", "Tensor.softmax", "torch.special.softmax", "onnx.Softmax"],
    "log_softmax": ["nn.LogSoftmax", "F.log_softmax", "torch.log_softmax", "Tensor.log_softmax", "onnx.LogSoftmax"],
    # --- element-wise arithmetic
    "add": _ADD,
    "sub": ["operator.sub", "torch.sub", "torch.subtract", "Tensor.sub", "Tensor.sub_",
            "torch.rsub", "onnx.Sub"],
    "mul": ["operator.mul", "torch.mul", "torch.multiply", "Tensor.mul", "Tensor.mul_",
            "onnx.Mul"],
    "div": ["operator.truediv", "torch.div", "torch.divide", "torch.true_divide", "Tensor.div",
            "Tensor.div_", "onnx.Div"],
    "pow": ["operator.pow", "torch.pow", "Tensor.pow", "Tensor.pow_", "onnx.Pow"],
    "maximum": ["torch.maximum", "onnx.Max"],
    "minimum": ["torch.minimum", "onnx.Min"],
    "eq": ["operator.eq", "torch.eq", "Tensor.eq", "onnx.Equal"],
    "ne": ["operator.ne", "torch.ne", "Tensor.ne"],
    "gt": ["operator.gt", "torch.gt", "Tensor.gt", "onnx.Greater"],
    "ge": ["operator.ge", "torch.ge", "Tensor.ge", "onnx.GreaterOrEqual"],
    "lt": ["operator.lt", "torch.lt", "Tensor.lt", "onnx.Less"],
    "le": ["operator.le", "torch.le", "Tensor.le", "onnx.LessOrEqual"],
    "masked_fill": ["Tensor.masked_fill", "Tensor.masked_fill_", "torch.masked_fill"],
    "where": ["torch.where", "onnx.Where"],
    # --- element-wise functions
    "relu": ["nn.ReLU", "F.relu", "F.relu_", "torch.relu", "torch.relu_", "Tensor.relu", "Tensor.relu_", "onnx.Relu"],
    "relu6": ["nn.ReLU6", "F.relu6"],
    "hardtanh": ["nn.Hardtanh", "F.hardtanh", "F.hardtanh_"],
    "clamp": ["torch.clamp", "torch.clip", "Tensor.clamp", "Tensor.clamp_", "Tensor.clip", "onnx.Clip"],
    "gelu": ["nn.GELU", "F.gelu", "onnx.Gelu"],
    "silu": ["nn.SiLU", "F.silu"],
    "sigmoid": ["nn.Sigmoid", "F.sigmoid", "torch.sigmoid", "Tensor.sigmoid", "Tensor.sigmoid_",
                "torch.special.expit", "onnx.Sigmoid"],
    "tanh": ["nn.Tanh", "F.tanh", "torch.tanh", "Tensor.tanh", "Tensor.tanh_", "onnx.Tanh"],
    "hardswish": ["nn.Hardswish", "F.hardswish", "onnx.HardSwish"],
    "hardsigmoid": ["nn.Hardsigmoid", "F.hardsigmoid", "onnx.HardSigmoid"],
    "leaky_relu": ["nn.LeakyReLU", "F.leaky_relu", "onnx.LeakyRelu"],
    "elu": ["nn.ELU", "F.elu", "onnx.Elu"],
    "softplus": ["nn.Softplus", "F.softplus", "onnx.Softplus"],
    "mish": ["nn.Mish", "F.mish", "onnx.Mish"],
    "erf": ["torch.erf", "Tensor.erf", "torch.special.erf", "onnx.Erf"],
    "exp": ["torch.exp", "Tensor.exp", "onnx.Exp"],
    "log": ["torch.log", "Tensor.log", "onnx.Log"],
    "sqrt": ["torch.sqrt", "Tensor.sqrt", "onnx.Sqrt"],
    "rsqrt": ["torch.rsqrt", "Tensor.rsqrt"],
    "reciprocal": ["torch.reciprocal", "Tensor.reciprocal", "onnx.Reciprocal"],
    "neg": ["operator.neg", "torch.neg", "Tensor.neg", "onnx.Neg"],
    "abs": ["torch.abs", "Tensor.abs", "onnx.Abs"],
    # --- pooling and reductions: Layout after lowering
    "max_pool2d": ["nn.MaxPool2d", "F.max_pool2d", "torch.max_pool2d", "onnx.MaxPool"],
    "avg_pool2d": ["nn.AvgPool2d", "F.avg_pool2d", "torch._C._nn.avg_pool2d", "onnx.AveragePool"],
    "adaptive_avg_pool2d": ["nn.AdaptiveAvgPool2d", "F.adaptive_avg_pool2d", "torch._C._nn.adaptive_avg_pool2d",
                            "onnx.GlobalAveragePool"],
    "adaptive_max_pool2d": ["nn.AdaptiveMaxPool2d", "F.adaptive_max_pool2d", "onnx.GlobalMaxPool"],
    "mean": ["torch.mean", "Tensor.mean", "onnx.ReduceMean"],
    "sum": ["torch.sum", "Tensor.sum", "onnx.ReduceSum"],
    # --- data movement: no op, or one Layout, after lowering
    "flatten": ["nn.Flatten", "torch.flatten", "Tensor.flatten", "onnx.Flatten"],
    "reshape": ["Tensor.view", "Tensor.reshape", "torch.reshape", "Tensor.view_as", "Tensor.reshape_as",
                "Tensor.unflatten", "nn.Unflatten", "Tensor.squeeze", "torch.squeeze", "Tensor.unsqueeze",
                "torch.unsqueeze", "onnx.Reshape", "onnx.Squeeze", "onnx.Unsqueeze"],
    "permute": ["Tensor.permute", "torch.permute", "onnx.Transpose"],
    "transpose": ["Tensor.transpose", "torch.transpose", "Tensor.t", "torch.t", "Tensor.swapaxes",
                  "torch.swapaxes"],
    "getitem": ["operator.getitem", "Tensor.narrow", "torch.narrow", "Tensor.select",
                "torch.select", "onnx.Slice", "onnx.Gather"],
    "split": ["Tensor.chunk", "torch.chunk", "Tensor.split", "torch.split", "Tensor.unbind", "torch.unbind",
              "onnx.Split"],
    "cat": ["torch.cat", "torch.concat", "onnx.Concat"],
    "expand": ["Tensor.expand", "Tensor.expand_as", "torch.broadcast_to", "onnx.Expand"],
    "pad": ["F.pad", "torch.constant_pad_nd", "onnx.Pad"],
    "roll": ["torch.roll", "Tensor.roll"],
    "dropout": ["nn.Dropout", "F.dropout", "torch.dropout", "onnx.Dropout"],
    "identity": ["nn.Identity", "Tensor.contiguous", "Tensor.clone", "torch.clone", "Tensor.detach",
                 "Tensor.float", "Tensor.to", "Tensor.type_as", "onnx.Identity", "onnx.Cast"],
}

FORMS = {}
for _op, _forms in TABLE.items():
    for _f in _forms:
        assert _f not in FORMS, _f
        FORMS[_f] = _op

ELEMENTWISE_BINARY = {"add", "sub", "mul", "div", "pow", "maximum", "minimum", "masked_fill", "where",
                      "eq", "ne", "gt", "ge", "lt", "le"}
ELEMENTWISE_UNARY = {"relu", "relu6", "hardtanh", "clamp", "gelu", "silu", "sigmoid", "tanh", "hardswish",
                     "hardsigmoid", "leaky_relu", "elu", "softplus", "mish", "erf", "exp", "log", "sqrt", "rsqrt",
                     "reciprocal", "neg", "abs"}
ROWWISE = {"softmax", "log_softmax", "layer_norm"}
POOLING = {"max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "adaptive_max_pool2d"}
REDUCTIONS = {"mean", "sum"}
DATA_MOVEMENT = {"flatten", "reshape", "permute", "transpose", "getitem", "split", "expand", "pad", "roll",
                 "dropout", "identity"}


def leaf_modules():
    """The nn.Module classes the FX tracer keeps whole: those with an "nn.CLASS" form in TABLE."""
    import torch.nn as nn
    return [getattr(nn, f[3:]) for f in FORMS if f.startswith("nn.") and hasattr(nn, f[3:])]


def canonicalise(g, after=None):
    """Rewrite every node of g to its canonical op, operands and attributes (in place).

    ONNX graphs first get their multi-node idioms folded (onnx_idioms).
    after(node), when given, runs after each node (the pipeline computes
    its output shapes there, which the next nodes' arguments may need).
    Raises ImportFailure naming the node and its form for an unsupported op
    or arguments the op cannot take.
    """
    if g.frontend == "onnx":
        onnx_idioms(g)
    for n in g.nodes:
        op = FORMS.get(n.form)
        if op is None:
            raise ImportFailure(node_where(n.name, n.form), "unsupported op",
                                f"supported ops are listed in docs/MODEL_GRAPH.md; {_near(n.form)}")
        for i in n.inputs:
            if g.buffers[i].shape is None:
                raise ImportFailure(node_where(n.name, n.form), f"the shape of operand {i} is unknown",
                                    "the graph computes it at run time; give static input shapes")
        call = _Call(n, g)
        try:
            inputs, attrs = _NORMALISERS[op](call)
        except ImportFailure:
            raise
        except (TypeError, ValueError, KeyError, IndexError) as e:
            raise ImportFailure(node_where(n.name, n.form), f"cannot read the op's arguments: {e}",
                                "this form of the op is not supported") from None
        n.op = op
        n.inputs = inputs
        n.attrs = attrs
        n.args, n.kwargs, n.module_obj = (), {}, None
        if after is not None:
            after(n)
    g.notes.append(f"canonical ops: {len(g.nodes)} nodes, {len(g.op_counts())} kinds")


def _near(form):
    name = form.rsplit(".", 1)[-1].lower().rstrip("_")
    for op in TABLE:
        if op == name or op.replace("_", "") == name.replace("_", ""):
            return f"'{op}' is supported in the forms {', '.join(TABLE[op][:4])}"
    return "rewrite the model with supported ops, or export it to ONNX"


class _Call:
    """A raw node's arguments, read by name or position."""

    def __init__(self, node, graph):
        self.node = node
        self.graph = graph
        self.onnx = node.form.startswith("onnx.")
        self.method = node.form.startswith("Tensor.") or node.form.startswith("operator.")
        self.m = node.module_obj
        self.args = list(node.args)
        self.kwargs = dict(node.kwargs)

    def get(self, pos, name, default=None):
        """Argument `name` at position pos (None: keyword only)."""
        if name in self.kwargs:
            return self.kwargs[name]
        if pos is not None and pos < len(self.args):
            return self.args[pos]
        return default

    def shape(self, ref):
        return self.graph.buffers[ref.name].shape

    def out_shape(self, i=0):
        return self.graph.buffers[self.node.outputs[i]].shape

    def fail(self, message, hint=""):
        return ImportFailure(node_where(self.node.name, self.node.form), message, hint)

    def tensor(self, v, what):
        if not isinstance(v, Ref):
            raise self.fail(f"{what} is not a tensor", "pass a tensor")
        return v.name

    # ONNX: attributes live in kwargs, inputs (Ref or constant values) in args
    def attr(self, name, default=None):
        return self.kwargs.get(name, default)

    def const(self, i, default=None):
        """ONNX input i as a constant value (a list or number), default when absent."""
        if i >= len(self.args) or self.args[i] is None:
            return default
        v = self.args[i]
        if isinstance(v, Ref):
            raise self.fail(f"input {i} must be a constant, not the tensor {v.name}",
                            "the importer needs sizes known at import time")
        return v


def param(path, name):
    """The weight buffer of a module's parameter: "PATH.NAME", or NAME for the model itself (path "")."""
    return f"{path}.{name}" if path else name


def _pair(v):
    if isinstance(v, (list, tuple)):
        return [int(x) for x in v] if len(v) == 2 else [int(v[0])] * 2
    return [int(v), int(v)]


def _dim(d, rank):
    d = int(d)
    return d + rank if d < 0 else d


def _refs(vals):
    return [v.name for v in vals if isinstance(v, Ref)]


# ------------------------------------------------------------------ compute
def _conv2d(c):
    if c.m is not None:
        m = c.m
        x = c.node.inputs[0]
        pad = m.padding
        k = list(m.kernel_size)
        if isinstance(pad, str):
            pad = _same_padding(k, list(m.dilation)) if pad == "same" else [0, 0, 0, 0]
        else:
            pad = [pad[0], pad[1], pad[0], pad[1]]
        inputs = [x, param(c.node.source['module'], "weight")]
        if m.bias is not None:
            inputs.append(param(c.node.source['module'], "bias"))
        return inputs, {"kernel": k, "stride": list(m.stride), "padding": pad, "dilation": list(m.dilation),
                        "groups": m.groups, "in_channels": m.in_channels, "out_channels": m.out_channels}
    if c.onnx:
        x, w = c.tensor(c.args[0], "X"), c.tensor(c.args[1], "W")
        ws = c.graph.buffers[w].shape
        k = list(c.attr("kernel_shape", ws[2:]))
        pads = list(c.attr("pads", [0, 0, 0, 0]))
        auto = c.attr("auto_pad", "NOTSET")
        if isinstance(auto, bytes):
            auto = auto.decode()
        dil = list(c.attr("dilations", [1, 1]))
        if auto in ("SAME_UPPER", "SAME_LOWER"):
            pads = _same_padding(k, dil)
        inputs = [x, w] + ([c.tensor(c.args[2], "B")] if len(c.args) > 2 and c.args[2] is not None else [])
        g = int(c.attr("group", 1))
        return inputs, {"kernel": k, "stride": list(c.attr("strides", [1, 1])), "padding": pads, "dilation": dil,
                        "groups": g, "in_channels": ws[1] * g, "out_channels": ws[0]}
    x = c.tensor(c.get(0, "input"), "input")
    w = c.tensor(c.get(1, "weight"), "weight")
    b = c.get(2, "bias")
    ws = c.graph.buffers[w].shape
    k = list(ws[2:])
    dil = _pair(c.get(5, "dilation", 1))
    pad = c.get(4, "padding", 0)
    if isinstance(pad, str):
        pad = _same_padding(k, dil) if pad == "same" else [0, 0, 0, 0]
    else:
        p = _pair(pad)
        pad = [p[0], p[1], p[0], p[1]]
    g = int(c.get(6, "groups", 1))
    return [x, w] + _refs([b]), {"kernel": k, "stride": _pair(c.get(3, "stride", 1)), "padding": pad,
                                 "dilation": dil, "groups": g, "in_channels": ws[1] * g, "out_channels": ws[0]}


def _same_padding(k, dil):
    tot = [d * (kk - 1) for kk, d in zip(k, dil)]
    return [tot[0] // 2, tot[1] // 2, tot[0] - tot[0] // 2, tot[1] - tot[1] // 2]


def _linear(c):
    if c.m is not None:
        p = c.node.source["module"]
        inputs = [c.node.inputs[0], param(p, "weight")] + ([param(p, "bias")] if c.m.bias is not None else [])
        return inputs, {"in_features": c.m.in_features, "out_features": c.m.out_features, "weight_layout": "out_in"}
    if c.onnx:  # Gemm: Y = alpha A B' + beta C
        if int(c.attr("transA", 0)):
            raise c.fail("Gemm with transA=1 is not supported", "export without transposing A")
        a, b = c.tensor(c.args[0], "A"), c.tensor(c.args[1], "B")
        layout = "out_in" if int(c.attr("transB", 0)) else "in_out"
        bs = c.graph.buffers[b].shape
        cin, cout = (bs[1], bs[0]) if layout == "out_in" else (bs[0], bs[1])
        bias = [c.tensor(c.args[2], "C")] if len(c.args) > 2 and isinstance(c.args[2], Ref) else []
        return [a, b] + bias, {"in_features": cin, "out_features": cout, "weight_layout": layout}
    x = c.tensor(c.get(0, "input"), "input")
    w = c.tensor(c.get(1, "weight"), "weight")
    ws = c.graph.buffers[w].shape
    return [x, w] + _refs([c.get(2, "bias")]), {"in_features": ws[-1], "out_features": ws[0],
                                                 "weight_layout": "out_in"}


def _matmul(c):
    if c.onnx:
        return [c.tensor(c.args[0], "A"), c.tensor(c.args[1], "B")], {}
    a = c.get(0, "input")
    b = c.get(1, "other") if "other" in c.kwargs or len(c.args) > 1 else c.get(1, "mat2")
    if b is None:
        b = c.kwargs.get("mat2")
    return [c.tensor(a, "the left operand"), c.tensor(b, "the right operand")], {}


# ------------------------------------------------------------ normalisation
def _batch_norm(c):
    if c.m is not None:
        p = c.node.source["module"]
        names = [param(p, s) for s in ("running_mean", "running_var", "weight", "bias")]
        inputs = [c.node.inputs[0]] + [n for n in names if n in c.node.inputs]
        return inputs, {"eps": c.m.eps, "num_features": c.m.num_features}
    if c.onnx:
        x = c.tensor(c.args[0], "X")
        return [x] + _refs(c.args[1:5]), {"eps": float(c.attr("epsilon", 1e-5)),
                                           "num_features": c.graph.buffers[x].shape[1]}
    x = c.tensor(c.get(0, "input"), "input")
    rest = [c.get(1, "running_mean"), c.get(2, "running_var"), c.get(3, "weight"), c.get(4, "bias")]
    return [x] + _refs(rest), {"eps": float(c.get(7, "eps", 1e-5)), "num_features": c.graph.buffers[x].shape[1]}


def _layer_norm(c):
    if c.m is not None:
        p = c.node.source["module"]
        extra = [param(p, s) for s in ("weight", "bias") if param(p, s) in c.node.inputs]
        return [c.node.inputs[0]] + extra, {"normalized_shape": list(c.m.normalized_shape), "eps": c.m.eps}
    if c.onnx:
        x = c.tensor(c.args[0], "X")
        shape = c.graph.buffers[x].shape
        axis = _dim(c.attr("axis", -1), len(shape))
        return [x] + _refs(c.args[1:3]), {"normalized_shape": list(shape[axis:]),
                                           "eps": float(c.attr("epsilon", 1e-5))}
    x = c.tensor(c.get(0, "input"), "input")
    ns = c.get(1, "normalized_shape")
    ns = [int(ns)] if isinstance(ns, int) else [int(d) for d in ns]
    return [x] + _refs([c.get(2, "weight"), c.get(3, "bias")]), {"normalized_shape": ns,
                                                                  "eps": float(c.get(4, "eps", 1e-5))}


def _softmax(c):
    if c.m is not None:
        x = c.node.inputs[0]
        dim = c.m.dim
    elif c.onnx:
        x = c.tensor(c.args[0], "input")
        dim = c.attr("axis", -1)
    else:
        x = c.tensor(c.get(0, "input"), "input")
        dim = c.get(1, "dim")
    rank = len(c.graph.buffers[x].shape)
    if dim is None:
        dim = 0 if rank in (0, 1, 3) else 1   # torch's legacy implicit dim
    return [x], {"dim": _dim(dim, rank)}


# ------------------------------------------------------------- element-wise
def _binary(c):
    if c.node.form == "onnx.Where":
        vals = list(c.args[:3])
    elif c.onnx:
        vals = list(c.args[:2])
    elif c.node.form in ("Tensor.masked_fill", "Tensor.masked_fill_", "torch.masked_fill"):
        x = c.tensor(c.get(0, "input"), "input")
        mask = c.get(1, "mask")
        value = c.get(2, "value")
        attrs = {"value": _num(value)} if not isinstance(value, Ref) else {}
        return [x] + _refs([mask]) + _refs([value]), attrs
    elif c.node.form == "torch.where":
        return _refs([c.get(0, "condition"), c.get(1, "input"), c.get(2, "other")]), \
            {k: _num(v) for k, v in (("input", c.get(1, "input")), ("other", c.get(2, "other")))
             if not isinstance(v, Ref) and v is not None}
    else:
        a = c.get(0, "input")
        b = c.get(1, "other")
        if b is None:
            b = c.get(1, "exponent")
        vals = [a, b]
        if c.node.form == "torch.rsub":   # other - input
            vals = [b, a]
    tensors = [v.name for v in vals if isinstance(v, Ref)]
    if not tensors:
        raise c.fail("no tensor operand", "an element-wise op needs a tensor")
    attrs = {}
    scalars = [(i, v) for i, v in enumerate(vals) if not isinstance(v, Ref) and v is not None]
    if scalars:
        i, v = scalars[0]
        attrs["scalar"] = _num(v)
        attrs["scalar_position"] = i
    alpha = c.kwargs.get("alpha") if not c.onnx else None
    if alpha is not None and alpha != 1:
        attrs["alpha"] = _num(alpha)
    return tensors, attrs


def _num(v):
    if isinstance(v, (list, tuple)) and len(v) == 1:
        v = v[0]
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)):
        return v
    try:
        return float(v)
    except (TypeError, ValueError):
        return repr(v)


_UNARY_ATTRS = {
    "leaky_relu": [("negative_slope", 1, 0.01, "alpha")],
    "elu": [("alpha", 1, 1.0, "alpha")],
    "hardtanh": [("min_val", 1, -1.0, None), ("max_val", 2, 1.0, None)],
    "clamp": [("min", 1, None, None), ("max", 2, None, None)],
    "gelu": [("approximate", None, "none", "approximate")],
    "softplus": [("beta", 1, 1.0, None), ("threshold", 2, 20.0, None)],
}


def _unary_for(op):
    def norm(c):
        if c.m is not None:
            x = c.node.inputs[0]
            attrs = {name: _num(getattr(c.m, name)) if not isinstance(getattr(c.m, name), str) else getattr(c.m, name)
                     for name, _, _, _ in _UNARY_ATTRS.get(op, []) if hasattr(c.m, name)}
            return [x], attrs
        if c.onnx:
            x = c.tensor(c.args[0], "X")
            attrs = {}
            if op == "clamp":
                lo, hi = c.const(1), c.const(2)
                if lo is not None:
                    attrs["min"] = _num(lo)
                if hi is not None:
                    attrs["max"] = _num(hi)
            for name, _, default, oname in _UNARY_ATTRS.get(op, []):
                if oname and oname in c.kwargs:
                    v = c.kwargs[oname]
                    attrs[name] = v.decode() if isinstance(v, bytes) else _num(v)
            return [x], attrs
        x = c.tensor(c.get(0, "input"), "input")
        attrs = {}
        for name, pos, default, _ in _UNARY_ATTRS.get(op, []):
            v = c.get(pos, name, default)
            if v is not None:
                attrs[name] = v if isinstance(v, str) else _num(v)
        return [x], attrs
    return norm


# ------------------------------------------------------ pooling, reductions
def _pool(op):
    def norm(c):
        if op in ("adaptive_avg_pool2d", "adaptive_max_pool2d"):
            if c.m is not None:
                x, size = c.node.inputs[0], c.m.output_size
            elif c.onnx:
                x, size = c.tensor(c.args[0], "X"), 1
            else:
                x, size = c.tensor(c.get(0, "input"), "input"), c.get(1, "output_size")
            shape = c.graph.buffers[x].shape
            size = list(size) if isinstance(size, (list, tuple)) else [size, size]
            size = [shape[-2 + i] if s is None else int(s) for i, s in enumerate(size)]
            return [x], {"output_size": size}
        if c.m is not None:
            m = c.m
            k = _pair(m.kernel_size)
            s = _pair(m.stride if m.stride is not None else m.kernel_size)
            p = _pair(m.padding)
            d = _pair(getattr(m, "dilation", 1))
            attrs = {"kernel": k, "stride": s, "padding": [p[0], p[1], p[0], p[1]], "dilation": d,
                     "ceil_mode": bool(m.ceil_mode)}
            if op == "avg_pool2d":
                attrs["count_include_pad"] = bool(m.count_include_pad)
            return [c.node.inputs[0]], attrs
        if c.onnx:
            x = c.tensor(c.args[0], "X")
            k = list(c.attr("kernel_shape"))
            pads = list(c.attr("pads", [0, 0, 0, 0]))
            attrs = {"kernel": k, "stride": list(c.attr("strides", [1, 1])), "padding": pads,
                     "dilation": list(c.attr("dilations", [1, 1])), "ceil_mode": bool(c.attr("ceil_mode", 0))}
            if op == "avg_pool2d":
                attrs["count_include_pad"] = bool(c.attr("count_include_pad", 0))
            return [x], attrs
        x = c.tensor(c.get(0, "input"), "input")
        k = _pair(c.get(1, "kernel_size"))
        stride = c.get(2, "stride")
        s = _pair(stride) if stride not in (None, [], ()) else list(k)
        p = _pair(c.get(3, "padding", 0))
        if op == "max_pool2d":
            d, ceil = _pair(c.get(4, "dilation", 1)), bool(c.get(5, "ceil_mode", False))
            if c.get(6, "return_indices", False):
                raise c.fail("max_pool2d with return_indices is not supported", "drop return_indices")
            return [x], {"kernel": k, "stride": s, "padding": [p[0], p[1], p[0], p[1]], "dilation": d,
                         "ceil_mode": ceil}
        return [x], {"kernel": k, "stride": s, "padding": [p[0], p[1], p[0], p[1]], "dilation": [1, 1],
                     "ceil_mode": bool(c.get(4, "ceil_mode", False)),
                     "count_include_pad": bool(c.get(5, "count_include_pad", True))}
    return norm


def _reduce(c):
    if c.onnx:
        x = c.tensor(c.args[0], "data")
        rank = len(c.graph.buffers[x].shape)
        axes = c.attr("axes")
        if axes is None:
            axes = c.const(1)
        dims = list(range(rank)) if axes is None else [_dim(a, rank) for a in axes]
        return [x], {"dims": sorted(dims), "keepdim": bool(c.attr("keepdims", 1))}
    x = c.tensor(c.get(0, "input"), "input")
    rank = len(c.graph.buffers[x].shape)
    dim = c.get(1, "dim")
    if dim is None or dim == [] or dim == ():
        dims = list(range(rank))
    else:
        dims = [_dim(d, rank) for d in (dim if isinstance(dim, (list, tuple)) else [dim])]
    return [x], {"dims": sorted(dims), "keepdim": bool(c.get(2, "keepdim", False))}


# ------------------------------------------------------------ data movement
def _flatten(c):
    if c.m is not None:
        x, start, end = c.node.inputs[0], c.m.start_dim, c.m.end_dim
    elif c.onnx:
        x = c.tensor(c.args[0], "input")
        rank = len(c.graph.buffers[x].shape)
        axis = _dim(c.attr("axis", 1), rank)
        shape = c.graph.buffers[x].shape
        lead = 1
        for d in shape[:axis]:
            lead *= d
        rest = 1
        for d in shape[axis:]:
            rest *= d
        return [x], {"start_dim": 0, "end_dim": -1, "shape": [lead, rest]}
    else:
        x, start, end = c.tensor(c.get(0, "input"), "input"), c.get(1, "start_dim", 0), c.get(2, "end_dim", -1)
    shape = c.graph.buffers[x].shape
    rank = len(shape)
    s, e = _dim(start, rank), _dim(end, rank)
    return [x], {"start_dim": s, "end_dim": e,
                 "shape": _on_meta(c, shape, lambda t: t.flatten(s, e), f"flatten dimensions {s} to {e}")}


def _reshape(c):
    """Every reshaping form as one "reshape" to its result's shape, which torch computes (the form's own
    call on a meta tensor of the operand's shape: -1 resolved, squeeze and unsqueeze dims applied)."""
    form = c.node.form
    if c.onnx:
        x = c.tensor(c.args[0], "data")
    else:
        x = c.tensor(c.get(0, "input") if not c.method else c.args[0], "input")
    in_shape = c.graph.buffers[x].shape
    if form in ("Tensor.view", "Tensor.reshape", "torch.reshape"):
        sizes = c.args[1:] if form != "torch.reshape" else [c.get(1, "shape")]
        if not sizes and "shape" in c.kwargs:
            sizes = [c.kwargs["shape"]]
        if not sizes and "size" in c.kwargs:
            sizes = [c.kwargs["size"]]
        if len(sizes) == 1 and isinstance(sizes[0], (list, tuple)):
            sizes = list(sizes[0])
        sizes = [int(s) for s in sizes]
        shape = _on_meta(c, in_shape, lambda t: t.reshape(sizes), f"cannot view {list(in_shape)} as {sizes}")
    elif form in ("Tensor.view_as", "Tensor.reshape_as"):
        shape = list(c.shape(c.get(1, "other")))
    elif form in ("Tensor.unflatten", "nn.Unflatten"):
        if c.m is not None:
            dim, sizes = c.m.dim, list(c.m.unflattened_size)
        else:
            dim, sizes = c.get(1, "dim"), list(c.get(2, "sizes"))
        sizes = [int(s) for s in sizes]
        shape = _on_meta(c, in_shape, lambda t: t.unflatten(int(dim), sizes),
                         f"cannot unflatten dimension {dim} of {list(in_shape)} into {sizes}")
    elif form in ("Tensor.squeeze", "torch.squeeze", "onnx.Squeeze"):
        dims = c.const(1) if c.onnx else c.get(1, "dim")
        if c.onnx and dims is None:
            dims = c.attr("axes")
        if dims is None:
            shape = _on_meta(c, in_shape, lambda t: t.squeeze(), "squeeze")
        else:
            dims = sorted({_dim(d, len(in_shape)) for d in (dims if isinstance(dims, (list, tuple)) else [dims])})

            def squeeze(t):
                for d in reversed(dims):   # one at a time: torch 1.13 takes one dim
                    t = t.squeeze(d)
                return t
            shape = _on_meta(c, in_shape, squeeze, f"squeeze {dims}")
    elif form in ("Tensor.unsqueeze", "torch.unsqueeze", "onnx.Unsqueeze"):
        dims = c.const(1) if c.onnx else c.get(1, "dim")
        if c.onnx and dims is None:
            dims = c.attr("axes")
        dims = dims if isinstance(dims, (list, tuple)) else [dims]
        rank = len(in_shape) + len(dims)
        dims = sorted(_dim(d, rank) for d in dims)

        def unsqueeze(t):
            for d in dims:
                t = t.unsqueeze(d)
            return t
        shape = _on_meta(c, in_shape, unsqueeze, f"unsqueeze {dims}")
    elif form == "onnx.Reshape":
        target = [int(v) for v in c.const(1)]
        allow_zero = int(c.attr("allowzero", 0))
        if not allow_zero:
            target = [in_shape[i] if v == 0 else v for i, v in enumerate(target)]
        shape = _on_meta(c, in_shape, lambda t: t.reshape(target), f"cannot view {list(in_shape)} as {target}")
    else:
        raise c.fail("unknown reshape form")
    return [x], {"shape": [int(d) for d in shape]}


def _on_meta(c, in_shape, fn, what, parts=False):
    """The shape of fn(a meta tensor of in_shape) (parts: the list of shapes of the tensors it returns):
    torch's own rules; ImportFailure "shape mismatch" when torch refuses."""
    import torch
    try:
        out = fn(torch.empty(tuple(in_shape), device="meta"))
        return [list(t.shape) for t in out] if parts else list(out.shape)
    except (RuntimeError, IndexError, ValueError, TypeError) as e:
        text = str(e).strip().splitlines()
        raise c.fail(f"shape mismatch: {what}: {text[0] if text else type(e).__name__}",
                     "the sizes must multiply to the input's element count") from None


def _permute(c):
    if c.onnx:
        x = c.tensor(c.args[0], "data")
        rank = len(c.graph.buffers[x].shape)
        perm = c.attr("perm", list(reversed(range(rank))))
        return [x], {"dims": [int(p) for p in perm]}
    x = c.tensor(c.args[0] if c.args else c.kwargs.get("input"), "input")
    rank = len(c.graph.buffers[x].shape)
    dims = c.args[1:] if c.node.form == "Tensor.permute" else [c.get(1, "dims")]
    if not dims:
        dims = [c.kwargs.get("dims")]
    if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
        dims = list(dims[0])
    return [x], {"dims": [_dim(d, rank) for d in dims]}


def _transpose(c):
    x = c.tensor(c.args[0] if c.args else c.kwargs.get("input"), "input")
    rank = len(c.graph.buffers[x].shape)
    if c.node.form in ("Tensor.t", "torch.t"):
        d0, d1 = (0, 1) if rank == 2 else (0, 0)
    else:
        d0, d1 = c.get(1, "dim0"), c.get(2, "dim1")
        if d0 is None:
            d0, d1 = c.get(1, "axis0"), c.get(2, "axis1")
    return [x], {"dim0": _dim(d0, rank), "dim1": _dim(d1, rank)}


def _getitem(c):
    form = c.node.form
    if form == "onnx.Slice":
        x = c.tensor(c.args[0], "data")
        shape = c.graph.buffers[x].shape
        starts, ends = c.const(1), c.const(2)
        if starts is None:  # opset < 10: attributes
            starts, ends = c.attr("starts"), c.attr("ends")
            axes, steps = c.attr("axes"), None
        else:
            axes, steps = c.const(3), c.const(4)
        axes = list(range(len(starts))) if axes is None else [_dim(a, len(shape)) for a in axes]
        steps = [1] * len(starts) if steps is None else steps
        index = [["slice", 0, d, 1] for d in shape]
        for a, s, e, st in zip(axes, starts, ends, steps):
            if int(st) < 1:
                raise c.fail("a Slice with a negative step is not supported", "")
            sl = slice(int(s), int(e), int(st)).indices(shape[a])
            index[a] = ["slice", sl[0], sl[1], sl[2]]
        return [x], {"index": index}
    if form == "onnx.Gather":
        x = c.tensor(c.args[0], "data")
        shape = c.graph.buffers[x].shape
        idx = c.const(1)
        if isinstance(idx, (list, tuple)):
            raise c.fail("Gather with a list of indices (an embedding lookup) is not supported",
                         "only a constant scalar index is")
        axis = _dim(c.attr("axis", 0), len(shape))
        index = [["slice", 0, d, 1] for d in shape]
        index[axis] = ["int", _dim(int(idx), shape[axis])]
        return [x], {"index": index}
    x = c.tensor(c.args[0] if c.args else c.kwargs.get("input"), "input")
    shape = c.graph.buffers[x].shape
    if form in ("Tensor.narrow", "torch.narrow"):
        dim = _dim(c.get(1, "dim"), len(shape))
        start = _dim(c.get(2, "start"), shape[dim])
        index = [["slice", 0, d, 1] for d in shape]
        index[dim] = ["slice", start, start + int(c.get(3, "length")), 1]
        return [x], {"index": index}
    if form in ("Tensor.select", "torch.select"):
        dim = _dim(c.get(1, "dim"), len(shape))
        index = [["slice", 0, d, 1] for d in shape]
        index[dim] = ["int", _dim(c.get(2, "index"), shape[dim])]
        return [x], {"index": index}
    return [x], {"index": normalise_index(c, shape, c.args[1])}


def normalise_index(c, shape, idx):
    """A Python index (int, slice, None, Ellipsis or a tuple of them) as a list of entries.

    One entry per input dimension, ["int", i] or ["slice", start, stop, step]
    (all normalised to the dimension's size), plus ["new"] where None adds a
    dimension.  Tensor indices are unsupported.
    """
    items = list(idx) if isinstance(idx, tuple) else [idx]
    n_real = sum(1 for it in items if it is not None and it is not Ellipsis)
    out, dim = [], 0
    for it in items:
        if it is Ellipsis:
            for _ in range(len(shape) - n_real):
                out.append(["slice", 0, shape[dim], 1])
                dim += 1
        elif it is None:
            out.append(["new"])
        elif isinstance(it, bool) or isinstance(it, Ref):
            raise c.fail("indexing with a tensor or a mask is not supported", "index with ints and slices")
        elif isinstance(it, int):
            if dim >= len(shape) or not -shape[dim] <= it < shape[dim]:
                raise c.fail(f"shape mismatch: index {it} is out of range", "check the index against the shape")
            out.append(["int", _dim(it, shape[dim])])
            dim += 1
        elif isinstance(it, slice):
            if dim >= len(shape):
                raise c.fail("shape mismatch: too many indices", "")
            if any(isinstance(v, Ref) for v in (it.start, it.stop, it.step)):
                raise c.fail("a slice bound is a tensor", "slice with ints")
            s = it.indices(shape[dim])
            if s[2] < 1:
                raise c.fail("a negative slice step is not supported", "")
            out.append(["slice", s[0], max(s[0], s[1]), s[2]])
            dim += 1
        else:
            raise c.fail(f"index of type {type(it).__name__} is not supported", "index with ints and slices")
    while dim < len(shape):
        out.append(["slice", 0, shape[dim], 1])
        dim += 1
    return out


def _split(c):
    form = c.node.form
    if c.onnx:
        x = c.tensor(c.args[0], "input")
        shape = c.graph.buffers[x].shape
        dim = _dim(c.attr("axis", 0), len(shape))
        sizes = c.const(1) or c.attr("split")
        n = len(c.node.outputs)
        if sizes is None:
            sizes = [shape[dim] // n] * n
        return [x], {"dim": dim, "sizes": [int(s) for s in sizes], "squeeze": False}
    x = c.tensor(c.args[0] if c.args else c.kwargs.get("input"), "input")
    shape = c.graph.buffers[x].shape
    if form in ("Tensor.unbind", "torch.unbind"):
        dim = _dim(c.get(1, "dim", 0), len(shape))
        return [x], {"dim": dim, "sizes": [1] * shape[dim], "squeeze": True}
    dim = _dim(c.get(2, "dim", 0), len(shape))
    if form in ("Tensor.chunk", "torch.chunk"):
        chunks = int(c.get(1, "chunks"))
        parts = _on_meta(c, shape, lambda t: t.chunk(chunks, dim), f"chunk into {chunks} along {dim}", parts=True)
    else:
        s = c.get(1, "split_size_or_sections")
        if s is None:
            s = c.get(1, "split_size")
        s = [int(v) for v in s] if isinstance(s, (list, tuple)) else int(s)
        parts = _on_meta(c, shape, lambda t: t.split(s, dim), f"split into {s} along {dim}", parts=True)
    return [x], {"dim": dim, "sizes": [p[dim] for p in parts], "squeeze": False}


def _cat(c):
    if c.onnx:
        vals = list(c.args)
        rank = len(c.out_shape())
        dim = _dim(c.attr("axis"), rank)
    else:
        vals = c.get(0, "tensors")
        if vals is None:
            vals = c.kwargs.get("tensors")
        rank = len(c.out_shape())
        dim = _dim(c.get(1, "dim", 0), rank)
    names = []
    for v in vals:
        if not isinstance(v, Ref):
            raise c.fail("a concatenated value is not a tensor", "concatenate tensors")
        if c.graph.buffers[v.name].shape and 0 in c.graph.buffers[v.name].shape:
            continue
        names.append(v.name)
    return names, {"dim": dim}


def _expand(c):
    x = c.tensor(c.args[0], "input")
    return [x], {"shape": list(c.out_shape())}


def _pad(c):
    if c.onnx:
        x = c.tensor(c.args[0], "data")
        rank = len(c.graph.buffers[x].shape)
        pads = c.const(1)
        if pads is None:
            pads = c.attr("pads")
        mode = c.attr("mode", "constant")
        mode = mode.decode() if isinstance(mode, bytes) else mode
        per_dim = [[int(pads[i]), int(pads[i + rank])] for i in range(rank)]
        value = c.const(2, 0.0)
    else:
        x = c.tensor(c.get(0, "input"), "input")
        rank = len(c.graph.buffers[x].shape)
        pad = list(c.get(1, "pad"))
        mode = c.get(2, "mode", "constant")
        value = c.get(3, "value", 0.0)
        per_dim = [[0, 0] for _ in range(rank)]
        for i in range(len(pad) // 2):
            per_dim[rank - 1 - i] = [int(pad[2 * i]), int(pad[2 * i + 1])]
    if any(p < 0 for pair in per_dim for p in pair):
        raise c.fail("negative padding (a crop) is not supported", "slice the tensor instead")
    return [x], {"pads": per_dim, "mode": mode, "value": _num(value if value is not None else 0.0)}


def _roll(c):
    x = c.tensor(c.get(0, "input") if not c.method else c.args[0], "input")
    rank = len(c.graph.buffers[x].shape)
    shifts, dims = c.get(1, "shifts"), c.get(2, "dims")
    shifts = list(shifts) if isinstance(shifts, (list, tuple)) else [shifts]
    if dims is None:
        raise c.fail("roll without dims (over the flattened tensor) is not supported", "give dims")
    dims = list(dims) if isinstance(dims, (list, tuple)) else [dims]
    return [x], {"shifts": [int(s) for s in shifts], "dims": [_dim(d, rank) for d in dims]}


def _passthrough(c):
    if c.m is not None:
        return [c.node.inputs[0]], {}
    v = c.args[0] if c.args else c.kwargs.get("input")
    x = c.tensor(v, "input")
    attrs = {}
    if c.node.form in ("F.dropout", "nn.Dropout", "torch.dropout"):
        attrs["p"] = _num(c.m.p if c.m is not None else c.get(1, "p", 0.5))
    return [x], attrs


_NORMALISERS = {
    "conv2d": _conv2d, "linear": _linear, "matmul": _matmul, "bmm": _matmul,
    "batch_norm": _batch_norm, "layer_norm": _layer_norm, "softmax": _softmax, "log_softmax": _softmax,
    "flatten": _flatten, "reshape": _reshape, "permute": _permute, "transpose": _transpose,
    "getitem": _getitem, "split": _split, "cat": _cat, "expand": _expand, "pad": _pad, "roll": _roll,
    "dropout": _passthrough, "identity": _passthrough, "mean": _reduce, "sum": _reduce,
}
for _op in ELEMENTWISE_BINARY:
    _NORMALISERS[_op] = _binary
for _op in ELEMENTWISE_UNARY:
    _NORMALISERS[_op] = _unary_for(_op)
for _op in POOLING:
    _NORMALISERS[_op] = _pool(_op)
assert set(_NORMALISERS) == set(TABLE), set(TABLE) ^ set(_NORMALISERS)


# ----------------------------------------------------------- ONNX idioms
def onnx_idioms(g):
    """Fold the multi-node forms a PyTorch export writes for one torch op back into one node.

    - MatMul(X, W) + Add(., b), W and b weights, b of W's column count: the
      export of nn.Linear on a tensor of rank > 2 -> onnx.Gemm-like linear
      (form "onnx.MatMul+Add").
    - Div(X, sqrt 2) -> Erf -> Add(., 1) -> Mul(X, .) -> Mul(., 0.5): the
      export of F.gelu -> onnx.Gelu.
    - Sigmoid(X) -> Mul(X, .): the export of F.silu -> nn.SiLU's form.
    - Sqrt(X) -> Div(1, .): the export of torch.rsqrt (ONNX has no Rsqrt;
      LLaMA's RMSNorm) -> torch.rsqrt's form.  A model that writes
      1 / sqrt(x) itself is folded too, where FX keeps its two ops.
    Only chains whose intermediate values have no other reader are folded.
    """
    users = g.consumers()
    by_out = {o: n for n in g.nodes for o in n.outputs}
    remove = set()

    def only_user(buf, node):
        return [u for u in users.get(buf, [])] == [node] and buf not in g.outputs

    def const_of(v):
        return v if not isinstance(v, Ref) else None

    for n in g.nodes:
        if n.name in remove:
            continue
        if n.form == "onnx.Add":
            a, b = n.args[0], n.args[1]
            mm_ref, bias = (a, b) if isinstance(a, Ref) and a.name in by_out else (b, a)
            mm = by_out.get(mm_ref.name) if isinstance(mm_ref, Ref) else None
            if (mm is not None and mm.form == "onnx.MatMul" and isinstance(bias, Ref) and mm.name not in remove
                    and g.buffers[bias.name].producer is None and only_user(mm_ref.name, n)
                    and isinstance(mm.args[1], Ref) and g.buffers[mm.args[1].name].producer is None):
                ws = g.buffers[mm.args[1].name].shape
                bs = g.buffers[bias.name].shape
                if len(ws) == 2 and len(bs) == 1 and bs[0] == ws[1]:
                    n.source["form"] = "onnx.Gemm"
                    n.source["onnx_idiom"] = "MatMul+Add"
                    n.source["onnx_nodes"] = [mm.name, n.name]
                    n.args = (mm.args[0], mm.args[1], bias)
                    n.kwargs = {"transB": 0}
                    n.inputs = [mm.args[0].name, mm.args[1].name, bias.name]
                    if "module" not in n.source and "module" in mm.source:
                        n.source["module"] = mm.source["module"]
                    remove.add(mm.name)
        elif n.form == "onnx.Erf":
            div = by_out.get(n.args[0].name) if isinstance(n.args[0], Ref) else None
            if div is None or div.form != "onnx.Div" or not only_user(div.outputs[0], n):
                continue
            c = const_of(div.args[1])
            if c is None or abs(_num(c) - 1.41421356) > 1e-3 or not isinstance(div.args[0], Ref):
                continue
            x = div.args[0]
            chain = _follow(users, g, n, [("onnx.Add", 1.0), ("onnx.Mul", x), ("onnx.Mul", 0.5)])
            if chain is None:
                continue
            last = chain[-1]
            for m in [div, n] + chain[:-1]:
                remove.add(m.name)
            last.source["form"] = "onnx.Gelu"
            last.source["onnx_idiom"] = "Div+Erf+Add+Mul+Mul"
            last.args, last.kwargs, last.inputs = (x,), {}, [x.name]
        elif n.form == "onnx.Tanh" and isinstance(n.args[0], Ref):
            found = _tanh_gelu(g, users, by_out, n, only_user)
            if found is None:
                continue
            x, chain, last = found
            remove.update(m.name for m in chain)
            last.source["form"] = "onnx.Gelu"
            last.source["onnx_idiom"] = "tanh approximation"
            last.args, last.kwargs, last.inputs = (x,), {"approximate": "tanh"}, [x.name]
        elif n.form == "onnx.Sigmoid" and isinstance(n.args[0], Ref):
            x = n.args[0]
            us = users.get(n.outputs[0], [])
            if len(us) == 1 and us[0].form == "onnx.Mul" and n.outputs[0] not in g.outputs:
                mul = us[0]
                other = [a for a in mul.args[:2] if not (isinstance(a, Ref) and a.name == n.outputs[0])]
                if len(other) == 1 and other[0] == x:
                    remove.add(n.name)
                    mul.source["form"] = "F.silu"
                    mul.source["onnx_idiom"] = "Sigmoid+Mul"
                    mul.args, mul.kwargs, mul.inputs = (x,), {}, [x.name]
                    mul.module_obj = None
        elif n.form == "onnx.Sqrt" and isinstance(n.args[0], Ref):
            us = users.get(n.outputs[0], [])
            if len(us) != 1 or not only_user(n.outputs[0], us[0]):
                continue
            div = us[0]
            c = const_of(div.args[0]) if div.form == "onnx.Div" else None
            if c is None or list(div.args[1:2]) != [Ref(n.outputs[0])] or abs(_num(c) - 1) > 1e-12:
                continue
            x = n.args[0]
            remove.add(n.name)
            div.source["form"] = "torch.rsqrt"
            div.source["onnx_idiom"] = "Sqrt+Div"
            div.args, div.kwargs, div.inputs = (x,), {}, [x.name]
    if remove:
        g.nodes = [n for n in g.nodes if n.name not in remove]
        g.notes.append(f"ONNX idioms: {len(remove)} nodes folded into linear, gelu, silu or rsqrt")
    return len(remove)


def _tanh_gelu(g, users, by_out, tanh, only_user):
    """Match 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) around a Tanh node.

    Returns (x, the nodes to remove, the last node) or None.
    """
    def producer(v):
        return by_out.get(v.name) if isinstance(v, Ref) else None

    def split(node, const):
        """(the Ref operand, the other operand) of a two-operand node whose other operand is ~const."""
        a, b = node.args[0], node.args[1]
        for ref, other in ((a, b), (b, a)):
            if isinstance(ref, Ref) and not isinstance(other, Ref) and abs(_num(other) - const) < 1e-4:
                return ref
        return None

    scale = producer(tanh.args[0])
    if scale is None or scale.form != "onnx.Mul" or not only_user(scale.outputs[0], tanh):
        return None
    inner_ref = split(scale, 0.7978845608)
    add = producer(inner_ref)
    if add is None or add.form != "onnx.Add" or not only_user(add.outputs[0], scale):
        return None
    for x, cube_ref in ((add.args[0], add.args[1]), (add.args[1], add.args[0])):
        cmul = producer(cube_ref)
        if not isinstance(x, Ref) or cmul is None or cmul.form != "onnx.Mul":
            continue
        cube = producer(split(cmul, 0.044715))
        if cube is None:
            continue
        chain = [cube]
        if cube.form == "onnx.Pow":
            if cube.args[0] != x or isinstance(cube.args[1], Ref) or abs(_num(cube.args[1]) - 3) > 1e-6:
                continue
        elif cube.form == "onnx.Mul":
            sq = producer(cube.args[1]) if cube.args[0] == x else producer(cube.args[0])
            if sq is None or sq.form != "onnx.Mul" or list(sq.args[:2]) != [x, x]:
                continue
            chain.append(sq)
        else:
            continue
        rest = _follow(users, g, tanh, [("onnx.Add", 1.0), ("onnx.Mul", x), ("onnx.Mul", 0.5)])
        if rest is None:
            return None
        return x, chain + [cmul, add, scale, tanh] + rest[:-1], rest[-1]
    return None


def _follow(users, g, start, steps):
    """The chain of single-reader nodes after `start` matching steps [(form, operand), ...], or None.

    operand is a number (a constant operand close to it) or a Ref (that
    buffer as the other operand).
    """
    chain, cur = [], start
    for form, want in steps:
        us = users.get(cur.outputs[0], [])
        if len(us) != 1 or us[0].form != form or cur.outputs[0] in g.outputs:
            return None
        nxt = us[0]
        others = [a for a in nxt.args[:2] if not (isinstance(a, Ref) and a.name == cur.outputs[0])]
        if len(others) != 1:
            return None
        o = others[0]
        if isinstance(want, Ref):
            if o != want:
                return None
        elif isinstance(o, Ref) or abs(_num(o) - want) > 1e-6:
            return None
        chain.append(nxt)
        cur = nxt
    return chain
