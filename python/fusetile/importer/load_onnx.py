"""load_onnx.py - stage 1 (ONNX): read an ONNX model, infer shapes, evaluate its constant subgraphs; export a PyTorch model to ONNX in memory (the fallback)."""

import io

from .errors import ImportFailure, node_where

OPSET = 17            # LayerNormalization exists from 17; torch 1.13 exports up to 17
SMALL_CONST = 4096    # constants up to this many elements are kept as values
MAX_ROUNDS = 64       # at most this many rounds of constant evaluation and shape inference

# Inputs that carry sizes, indices or bounds rather than data: a constant
# there is read as a value, never as a weight.
PARAM_INPUTS = {
    "Reshape": {1}, "Slice": {1, 2, 3, 4}, "Squeeze": {1}, "Unsqueeze": {1}, "Expand": {1}, "Pad": {1, 2},
    "Split": {1}, "Clip": {1, 2}, "Gather": {1}, "ReduceMean": {1}, "ReduceSum": {1}, "ConstantOfShape": {0},
}


class OnnxModel:
    """An ONNX graph ready for stage 2.

    nodes: the remaining (non-constant) NodeProtos in topological order with
    their unique names; shapes and dtypes: per value name (None when
    unknown); consts: small constant values (numpy arrays) by name;
    inputs: the model inputs; weights: names of initializers and big
    constants; outputs: the model outputs.
    """

    def __init__(self):
        self.nodes = []
        self.names = []
        self.shapes = {}
        self.dtypes = {}
        self.consts = {}
        self.inputs = []
        self.weights = set()
        self.outputs = []
        self.folded = 0


def read_model(path=None, data=None):
    """Parse an ONNX ModelProto from a file or bytes; ImportFailure when it is unreadable."""
    import onnx
    where = path or "ONNX model"
    try:
        if data is None:
            with open(path, "rb") as f:
                data = f.read()
        model = onnx.load_from_string(data)
    except OSError as e:
        raise ImportFailure(where, f"cannot read: {e.strerror or e}", "check the path and its permissions") from None
    except Exception as e:  # noqa: BLE001 - protobuf's DecodeError and friends
        raise ImportFailure(where, f"not an ONNX model: {_first_line(e)}",
                            "give a .onnx file written by torch.onnx.export or onnx.save") from None
    if not model.graph.node:
        raise ImportFailure(where, "not an ONNX model: the graph has no nodes",
                            "give a .onnx file written by torch.onnx.export or onnx.save")
    return model


def prepare(model, input_shapes=None, input_names=None, where="ONNX model"):
    """Shape and fold an ONNX ModelProto; returns an OnnxModel.

    input_shapes (a list of tuples) replace the shapes of the model inputs,
    in order.  input_names, when given, are the model inputs; every other
    graph input is a weight (an export with export_params=False lists the
    parameters as inputs).  Otherwise graph inputs that are initializers are
    weights.  Cycles and missing producers are ImportFailure naming the
    node (validate.toposort).
    """
    import onnx
    from onnx import numpy_helper
    from .graph import Graph, Node
    from .validate import toposort

    g = model.graph
    inits = {t.name: t for t in g.initializer}
    graph_inputs = [vi for vi in g.input if vi.name not in inits]
    if input_names is not None:
        real = [vi for vi in graph_inputs if vi.name in set(input_names)]
        weight_inputs = [vi for vi in graph_inputs if vi.name not in set(input_names)]
        graph_inputs = real
    else:
        weight_inputs = []
    if input_shapes:
        if len(input_shapes) > len(graph_inputs):
            raise ImportFailure("--input-shape", f"{len(input_shapes)} shapes for a model with "
                                f"{len(graph_inputs)} input{'s' if len(graph_inputs) != 1 else ''} "
                                f"({', '.join(vi.name for vi in graph_inputs[:8])})",
                                "give one --input-shape per model input")
        for vi, shape in zip(graph_inputs, input_shapes):
            dims = vi.type.tensor_type.shape.dim
            if len(dims) and len(dims) != len(shape):
                raise ImportFailure("--input-shape", f"{'x'.join(map(str, shape))} has {len(shape)} dimensions, "
                                    f"input {vi.name} has {len(dims)}", "give a shape of the input's rank")
            del vi.type.tensor_type.shape.dim[:]
            for d in shape:
                vi.type.tensor_type.shape.dim.add().dim_value = int(d)
    for vi in graph_inputs[len(input_shapes or ()):]:
        dims = vi.type.tensor_type.shape.dim
        if not dims or any(not d.HasField("dim_value") or d.dim_value < 1 for d in dims):
            raise ImportFailure("--input-shape", f"input {vi.name} has no static shape",
                                f"give one --input-shape per model input ({len(graph_inputs)} in all)")

    # names and a structural check before anything is evaluated
    names, seen = [], set()
    for i, n in enumerate(g.node):
        base = n.name or (f"{n.op_type}_{i}" if not n.output else n.output[0])
        name = base
        k = 1
        while name in seen:
            name = f"{base}#{k}"
            k += 1
        seen.add(name)
        names.append(name)
    check = Graph(where, "onnx")
    for vi in graph_inputs:
        check.add_buffer(vi.name, None, kind="input")
        check.inputs.append(vi.name)
    for name in list(inits) + [vi.name for vi in weight_inputs]:
        check.add_buffer(name, None, kind="weight")
    for name, n in zip(names, g.node):
        ins = [i for i in n.input if i]
        for i in ins:
            if i not in check.buffers:
                check.add_buffer(i, None, kind="activation", producer="?")
        for o in n.output:
            if o:
                check.add_buffer(o, None, kind="activation", producer=name)
        check.nodes.append(Node(name, "onnx." + n.op_type, ins, [o for o in n.output if o]))
    for b in check.buffers.values():
        if b.producer == "?":
            b.producer = None if b.name in inits else "?"
    check.outputs = [o.name for o in g.output]
    _check_producers(check)
    toposort(check)
    order = {n.name: i for i, n in enumerate(check.nodes)}
    pairs = sorted(zip(names, g.node), key=lambda p: order[p[0]])

    om = OnnxModel()
    om.inputs = [vi.name for vi in graph_inputs]
    om.outputs = [o.name for o in g.output]
    for name, t in inits.items():
        n = 1
        for d in t.dims:
            n *= d
        if n <= SMALL_CONST:
            om.consts[name] = numpy_helper.to_array(t)
        om.shapes[name] = tuple(t.dims)
        om.dtypes[name] = _elem_type_name(t.data_type)
        om.weights.add(name)
    for vi in weight_inputs:
        om.weights.add(vi.name)

    work = model
    live = pairs
    for _ in range(MAX_ROUNDS):
        try:
            inferred = onnx.shape_inference.infer_shapes(work, data_prop=True)
        except Exception:  # noqa: BLE001 - keep what we have
            inferred = work
        _collect_shapes(inferred.graph, om)
        remaining, progress = [], False
        for name, n in live:
            vals = _evaluate(n, om)
            if vals is not None:
                for o, v in zip(n.output, vals):
                    if not o:
                        continue
                    om.shapes[o] = tuple(v.shape)
                    om.dtypes[o] = str(v.dtype)
                    if v.size <= SMALL_CONST:
                        om.consts[o] = v
                    else:
                        om.weights.add(o)
                om.folded += 1
                progress = True
            else:
                remaining.append((name, n))
        live = remaining
        unknown = [o for _, n in live for o in n.output if o and om.shapes.get(o) is None]
        if not progress or not unknown:
            break
        work = _rebuild(model, live, om)
    om.names = [name for name, _ in live]
    om.nodes = [n for _, n in live]
    return om


def _check_producers(check):
    for n in check.nodes:
        for i in n.inputs:
            if check.buffers[i].producer == "?":
                raise ImportFailure(node_where(n.name, n.op), f"missing producer: input {i} is written by no node "
                                    "and is neither a graph input nor an initializer",
                                    "the ONNX graph is incomplete: check the file")


def _elem_type_name(t):
    import onnx
    try:
        return onnx.helper.tensor_dtype_to_np_dtype(t).name
    except Exception:  # noqa: BLE001 - older onnx
        try:
            return onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[t].name
        except Exception:  # noqa: BLE001
            return "float32"


def _collect_shapes(graph, om):
    for vi in list(graph.input) + list(graph.value_info) + list(graph.output):
        tt = vi.type.tensor_type
        if not tt.HasField("shape"):
            continue
        dims = []
        for d in tt.shape.dim:
            if d.HasField("dim_value") and d.dim_value > 0:
                dims.append(d.dim_value)
            else:
                dims = None
                break
        if dims is not None and om.shapes.get(vi.name) is None:
            om.shapes[vi.name] = tuple(dims)
        if tt.elem_type and vi.name not in om.dtypes:
            om.dtypes[vi.name] = _elem_type_name(tt.elem_type)


def _rebuild(model, live, om):
    """A model of the remaining nodes with the evaluated constants as initializers (for shape inference)."""
    import onnx
    from onnx import helper, numpy_helper
    g = model.graph
    needed = {i for _, n in live for i in n.input if i}
    inits = [numpy_helper.from_array(v, name=k) for k, v in om.consts.items() if k in needed]
    init_names = {t.name for t in inits}
    inits += [t for t in g.initializer if t.name in needed and t.name not in init_names]
    init_names = {t.name for t in inits}
    inputs = list(g.input)
    have = {vi.name for vi in inputs} | init_names
    for k in sorted(needed - have):
        if k in om.weights and om.shapes.get(k) is not None:
            inputs.append(helper.make_tensor_value_info(k, onnx.TensorProto.FLOAT, list(om.shapes[k])))
    graph = helper.make_graph([n for _, n in live], g.name, inputs, list(g.output), inits)
    m = helper.make_model(graph, opset_imports=model.opset_import)
    m.ir_version = model.ir_version
    return m


def _attrs(node):
    from onnx import helper, numpy_helper
    out = {}
    for a in node.attribute:
        v = helper.get_attribute_value(a)
        if hasattr(v, "dims") and hasattr(v, "data_type"):
            v = numpy_helper.to_array(v)
        elif isinstance(v, bytes):
            v = v.decode()
        elif isinstance(v, list):
            v = [x.decode() if isinstance(x, bytes) else x for x in v]
        out[a.name] = v
    return out


def node_attributes(node):
    """The attributes of a NodeProto as Python values (lists, numbers, strings, numpy arrays)."""
    return _attrs(node)


def _evaluate(node, om):
    """The outputs of node as numpy arrays when all its inputs are known constants, else None."""
    import numpy as np
    op = node.op_type
    a = _attrs(node)
    if op == "Constant":
        if "value" in a:
            return [np.asarray(a["value"])]
        for k in ("value_float", "value_int"):
            if k in a:
                return [np.asarray(a[k])]
        for k in ("value_floats", "value_ints"):
            if k in a:
                return [np.asarray(a[k])]
        return None
    if op == "Shape":
        s = om.shapes.get(node.input[0])
        if s is None:
            return None
        s = np.asarray(s, dtype=np.int64)
        return [s[a.get("start", 0):a.get("end", len(s))]]
    if op == "Size":
        s = om.shapes.get(node.input[0])
        return None if s is None else [np.asarray(int(np.prod(s)), dtype=np.int64)]
    ins = []
    for i in node.input:
        if not i:
            ins.append(None)
        elif i in om.consts:
            ins.append(om.consts[i])
        else:
            return None
    try:
        return _EVAL[op](ins, a)
    except KeyError:
        return None
    except Exception:  # noqa: BLE001 - leave it to the graph
        return None


def _np():
    import numpy as np
    return np


def _slice(ins, a):
    np = _np()
    data, starts, ends = ins[0], ins[1], ins[2]
    axes = ins[3] if len(ins) > 3 and ins[3] is not None else range(len(starts))
    steps = ins[4] if len(ins) > 4 and ins[4] is not None else [1] * len(starts)
    idx = [slice(None)] * data.ndim
    for ax, s, e, st in zip(axes, starts, ends, steps):
        idx[int(ax)] = slice(int(s), int(e), int(st))
    return [np.asarray(data[tuple(idx)])]


def _unsqueeze(ins, a):
    np = _np()
    x = ins[0]
    axes = ins[1] if len(ins) > 1 and ins[1] is not None else a["axes"]
    rank = x.ndim + len(axes)
    for ax in sorted(int(v) + rank if v < 0 else int(v) for v in axes):
        x = np.expand_dims(x, ax)
    return [x]


def _squeeze(ins, a):
    np = _np()
    axes = ins[1] if len(ins) > 1 and ins[1] is not None else a.get("axes")
    return [np.squeeze(ins[0], axis=tuple(int(v) for v in axes) if axes is not None else None)]


def _reshape(ins, a):
    x, shape = ins[0], [int(v) for v in ins[1]]
    shape = [x.shape[i] if v == 0 else v for i, v in enumerate(shape)]
    return [x.reshape(shape)]


def _cast(ins, a):
    np = _np()
    import onnx
    try:
        dt = onnx.helper.tensor_dtype_to_np_dtype(a["to"])
    except Exception:  # noqa: BLE001
        dt = onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[a["to"]]
    return [np.asarray(ins[0]).astype(dt)]


def _binop(f):
    return lambda ins, a: [_np().asarray(f(ins[0], ins[1]))]


def _div(x, y):
    np = _np()
    if np.issubdtype(np.asarray(x).dtype, np.integer) and np.issubdtype(np.asarray(y).dtype, np.integer):
        return np.asarray(x) // np.asarray(y)
    return np.asarray(x) / np.asarray(y)


def _range(ins, a):
    np = _np()
    return [np.arange(ins[0], ins[1], ins[2]).astype(np.asarray(ins[0]).dtype)]


def _const_of_shape(ins, a):
    np = _np()
    v = a.get("value")
    v = np.asarray(v).reshape(-1)[0] if v is not None else np.float32(0)
    return [np.full([int(d) for d in ins[0]], v, dtype=np.asarray(v).dtype)]


def _gather(ins, a):
    np = _np()
    return [np.take(ins[0], np.asarray(ins[1]).astype(np.int64), axis=int(a.get("axis", 0)))]


def _concat(ins, a):
    np = _np()
    return [np.concatenate([np.atleast_1d(x) for x in ins if x is not None], axis=int(a.get("axis", 0)))]


def _transpose(ins, a):
    np = _np()
    return [np.transpose(ins[0], a.get("perm"))]


def _expand(ins, a):
    np = _np()
    shape = np.broadcast_shapes(ins[0].shape, tuple(int(v) for v in ins[1]))
    return [np.broadcast_to(ins[0], shape).copy()]


def _reduce(f):
    def ev(ins, a):
        np = _np()
        axes = a.get("axes")
        if axes is None and len(ins) > 1 and ins[1] is not None:
            axes = ins[1]
        ax = tuple(int(v) for v in axes) if axes is not None else None
        return [np.asarray(f(ins[0], axis=ax, keepdims=bool(a.get("keepdims", 1))))]
    return ev


_EVAL = {
    "Identity": lambda ins, a: [ins[0]],
    "Gather": _gather, "Unsqueeze": _unsqueeze, "Squeeze": _squeeze, "Concat": _concat, "Cast": _cast,
    "Slice": _slice, "Reshape": _reshape, "Transpose": _transpose, "Expand": _expand, "Range": _range,
    "ConstantOfShape": _const_of_shape,
    "Add": _binop(lambda x, y: x + y), "Sub": _binop(lambda x, y: x - y), "Mul": _binop(lambda x, y: x * y),
    "Div": _binop(_div), "Mod": _binop(lambda x, y: _np().mod(x, y)), "Pow": _binop(lambda x, y: x ** y),
    "Equal": _binop(lambda x, y: x == y), "Less": _binop(lambda x, y: x < y),
    "Greater": _binop(lambda x, y: x > y), "Min": _binop(lambda x, y: _np().minimum(x, y)),
    "Max": _binop(lambda x, y: _np().maximum(x, y)),
    "And": _binop(lambda x, y: _np().logical_and(x, y)), "Or": _binop(lambda x, y: _np().logical_or(x, y)),
    "Not": lambda ins, a: [_np().logical_not(ins[0])],
    "Neg": lambda ins, a: [-ins[0]], "Sqrt": lambda ins, a: [_np().sqrt(ins[0])],
    "Floor": lambda ins, a: [_np().floor(ins[0])], "Ceil": lambda ins, a: [_np().ceil(ins[0])],
    "Abs": lambda ins, a: [_np().abs(ins[0])],
    "Where": lambda ins, a: [_np().where(ins[0], ins[1], ins[2])],
    "ReduceProd": _reduce(lambda x, axis, keepdims: _np().prod(x, axis=axis, keepdims=keepdims)),
    "ReduceSum": _reduce(lambda x, axis, keepdims: _np().sum(x, axis=axis, keepdims=keepdims)),
}


def export_module(model, inputs, input_names, branches=None):
    """Export `model` (real-valued, eval mode) to ONNX (opset OPSET) in memory; returns the bytes.

    inputs: one entry per model input, a tensor or a shape (zeros of that
    shape).  The model runs once on them (torch.onnx.export
    traces by running every op; on a meta-device model the meta kernels'
    own shape arithmetic would be recorded instead).  Parameters are not
    exported: they become graph inputs other than input_names.  branches,
    when a list, receives the first sentence of each tracer warning about a
    tensor turned into a Python bool (data-dependent control flow: the
    export keeps the branch taken).  ImportFailure when the export fails.
    """
    import torch
    import warnings
    xs = tuple(s if isinstance(s, torch.Tensor) else torch.zeros(tuple(s)) for s in inputs)
    try:
        with warnings.catch_warnings(record=True) as seen:   # not under no_grad: nn.TransformerEncoderLayer's fast path would run
            warnings.simplefilter("always")
            f = io.BytesIO()
            torch.onnx.export(model, xs, f, export_params=False, opset_version=OPSET, do_constant_folding=True,
                              input_names=list(input_names), training=torch.onnx.TrainingMode.EVAL)
        if branches is not None:
            branches.extend(str(w.message).split(". ")[0] for w in seen
                            if issubclass(w.category, torch.jit.TracerWarning) and "Python boolean" in str(w.message))
        return f.getvalue()
    except ImportFailure:
        raise
    except Exception as e:  # noqa: BLE001
        raise ImportFailure("ONNX export", f"torch.onnx.export failed: {_first_line(e)}",
                            "simplify the model or export it to ONNX yourself") from None


def _first_line(e):
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__
