"""buffers.py - stage 2: one buffer per value (graph inputs, weights, node outputs) from a traced FX graph or a loaded ONNX graph; constant folding and dead-code removal."""

from .errors import ImportFailure, node_where
from .graph import Graph, Node, Ref

# Forms whose result does not depend on their tensor operands' values (only
# on shapes): a node of this form on an activation is still a constant.
CREATION_FORMS = {
    "Tensor.new_zeros", "Tensor.new_ones", "Tensor.new_full", "Tensor.new_empty", "Tensor.new_tensor",
    "torch.zeros_like", "torch.ones_like", "torch.full_like", "torch.empty_like",
    "onnx.ConstantOfShape", "onnx.Shape", "onnx.Size",
}

_FORM_CACHE = {}


def fx_form(kind, target, module):
    """The syntactic form of an FX call, the key of the canonical table.

    call_module: "nn.CLASS" for torch.nn classes, else "MODULE.CLASS";
    call_method: "Tensor.NAME"; call_function: "operator.NAME", "F.NAME",
    "torch.NAME", "torch._C._nn.NAME", ... (the first of those namespaces
    that holds the very function), else "MODULE.QUALNAME".
    """
    if kind == "call_module":
        if module is None:
            return str(target)
        cls = type(module)
        mod = cls.__module__ or ""
        if mod.startswith("torch.nn"):
            return "nn." + cls.__name__
        return f"{mod}.{cls.__qualname__}"
    if kind == "call_method":
        return "Tensor." + str(target)
    if not _FORM_CACHE:
        _index_functions()
    name = _FORM_CACHE.get(id(target))
    if name:
        return name
    mod = getattr(target, "__module__", None) or ""
    qual = getattr(target, "__qualname__", None) or getattr(target, "__name__", None) or repr(target)
    return f"{mod}.{qual}" if mod else qual


def _index_functions():
    import math
    import operator
    import torch
    import torch.nn.functional as F
    spaces = [("operator", operator), ("F", F), ("torch", torch), ("torch._C._nn", torch._C._nn),
              ("torch.special", torch.special), ("torch.linalg", torch.linalg), ("math", math)]
    for prefix, space in spaces:
        for attr in dir(space):
            if attr.startswith("__"):
                continue
            try:
                fn = getattr(space, attr)
            except Exception:  # noqa: BLE001 - odd module attributes
                continue
            if callable(fn) and not isinstance(fn, type):
                _FORM_CACHE.setdefault(id(fn), f"{prefix}.{attr}")
    import builtins
    for attr in ("getattr", "len", "abs", "max", "min"):
        _FORM_CACHE.setdefault(id(getattr(builtins, attr)), f"builtins.{attr}")


def _strip_root(path):
    """A path inside the trace's wrapper module without its "model." prefix."""
    if path == "model":
        return ""
    return path[len("model."):] if path.startswith("model.") else path


def _dtype_name(t):
    return str(t.dtype).replace("torch.", "")


def graph_from_fx(fxgraph, root, model_name):
    """The model graph of a traced FX graph (trace_fx.trace_module's result).

    Placeholders become input buffers, get_attr nodes and the parameters
    and buffers of leaf modules weight buffers (named by their module path,
    "layer1.0.conv1.weight"), the output node's tensors the graph outputs;
    operator.getitem on a node with several outputs (chunk, split) selects
    one of its buffers ("NODE.0", "NODE.1") and is no node.  Nodes keep
    their raw call (form, args with Ref) for canonicalisation.  Then
    constant folding and dead-code removal (fold_and_prune).
    """
    import operator
    import torch
    import torch.fx as fx
    from .trace_fx import VAL, PATH

    g = Graph(model_name, "fx")
    bufs = {}  # fx node -> buffer name, or list of buffer names (several outputs)
    taken = {n.name for n in fxgraph.nodes}
    for n in fxgraph.nodes:   # "model_layer1_0_conv1" -> "layer1_0_conv1": the wrapper's attribute is no part of the name
        if n.op in ("call_module", "get_attr") and n.name.startswith("model_") and n.name[6:] not in taken:
            taken.discard(n.name)
            n.name = n.name[6:]
            taken.add(n.name)

    def ref(n):
        b = bufs.get(n)
        if b is None:
            raise ImportFailure(node_where(n.name, n.op), "missing producer: the node has no value",
                                "the trace lost this value; report the model")
        if isinstance(b, list):   # the tuple of a chunk or split passed on whole: torch.cat(x.chunk(2))
            return [Ref(part) for part in b]
        return Ref(b)

    for n in fxgraph.nodes:
        val = n.meta.get(VAL)
        if n.op == "placeholder":
            if not isinstance(val, torch.Tensor):
                continue
            g.add_buffer(n.name, val.shape, _dtype_name(val), "input")
            g.inputs.append(n.name)
            bufs[n] = n.name
        elif n.op == "get_attr":
            if not isinstance(val, torch.Tensor):
                continue
            name = _strip_root(n.target)
            g.add_buffer(name, val.shape, _dtype_name(val), "weight")
            bufs[n] = name
        elif n.op == "output":
            outs = []
            fx.node.map_arg(n.args, lambda a: outs.append(a))
            for a in outs:
                b = bufs.get(a)
                for name in (b if isinstance(b, list) else [b]):
                    if name and name not in g.outputs:
                        g.outputs.append(name)
        elif (n.op == "call_function" and n.target is operator.getitem and isinstance(n.args[0], fx.Node)
              and isinstance(bufs.get(n.args[0]), list) and isinstance(n.args[1], int)):
            parts = bufs[n.args[0]]
            bufs[n] = parts[n.args[1]]
        else:
            module = root.get_submodule(n.target) if n.op == "call_module" else None
            form = fx_form(n.op, n.target, module)
            if isinstance(val, torch.Tensor):
                outputs = [n.name]
                g.add_buffer(n.name, val.shape, _dtype_name(val), "activation", n.name)
            elif isinstance(val, (list, tuple)) and all(isinstance(v, torch.Tensor) for v in val):
                outputs = [f"{n.name}.{i}" for i in range(len(val))]
                for name, v in zip(outputs, val):
                    g.add_buffer(name, v.shape, _dtype_name(v), "activation", n.name)
            else:
                raise ImportFailure(node_where(n.name, form), "the op's result is not a tensor or a list of tensors",
                                    "only tensor-valued ops can be imported")
            bufs[n] = outputs if len(outputs) > 1 or not isinstance(val, torch.Tensor) else outputs[0]
            args = fx.node.map_arg(n.args, ref)
            kwargs = fx.node.map_arg(n.kwargs, ref)
            path = _strip_root(n.target) if n.op == "call_module" else None
            inputs = []
            fx.node.map_aggregate((args, kwargs), lambda a: inputs.append(a.name) if isinstance(a, Ref) else None)
            inputs = list(dict.fromkeys(inputs))
            if module is not None:
                for pname, p in list(module.named_parameters(recurse=False)) + list(module.named_buffers(recurse=False)):
                    if p is None:
                        continue
                    wname = f"{path}.{pname}" if path else pname
                    g.add_buffer(wname, p.shape, _dtype_name(p), "weight")
                    inputs.append(wname)
            source = {"form": form, "fx_node": n.name}
            if path is not None:
                source["module"] = path
            scope = _strip_root(n.meta.get(PATH, ""))
            if scope and path is None:
                source["scope"] = scope
            g.nodes.append(Node(n.name, form, inputs, outputs, source=source, args=args, kwargs=kwargs,
                                module_obj=module))
    fold_and_prune(g)
    return g


def fold_and_prune(g, creation_forms=CREATION_FORMS):
    """Fold constant nodes into weights and drop nodes no graph output needs.

    A node is constant when none of its operands depends on a graph input
    (a node of a creation form, such as Tensor.new_zeros, depends on no
    operand).  Its outputs become weight buffers and the node goes: a
    constant subgraph is data the host computes once (swin_t's attention
    masks and relative-position bias, a GPT causal mask).  Then nodes whose
    outputs reach no graph output are dropped; such a node that updates an
    activation in place (Tensor.add_, operator.setitem) is an error, since
    dropping it would change the model.  The counts go to g.notes.
    """
    live = set(g.inputs)
    kept, folded = [], 0
    for n in g.nodes:
        depends = n.form not in creation_forms and any(i in live for i in n.inputs)
        if depends:
            live.update(n.outputs)
            kept.append(n)
        else:
            folded += 1
            for o in n.outputs:
                g.buffers[o].producer = None
                g.buffers[o].kind = "weight"
    g.nodes = kept
    alive = _live_nodes(g, check_in_place=True)
    dropped = len(g.nodes) - len(alive)
    g.nodes = alive
    used = set(g.inputs) | set(g.outputs)
    for n in g.nodes:
        used.update(n.inputs)
        used.update(n.outputs)
    g.buffers = {k: v for k, v in g.buffers.items() if k in used}
    if folded:
        g.notes.append(f"constant folding: {folded} nodes that depend on no input became weights")
    if dropped:
        g.notes.append(f"dead code: {dropped} nodes that no output needs were dropped")
    g.mark_kinds()


def prune_dead(g):
    """Drop nodes whose outputs no graph output needs (after canonicalisation: an operand
    read only for its shape, as by expand_as or view_as, is no operand any more)."""
    alive = _live_nodes(g)
    if len(alive) != len(g.nodes):
        g.notes.append(f"dead code: {len(g.nodes) - len(alive)} nodes read only for their shapes were dropped")
        g.nodes = alive
        g.mark_kinds()


def _live_nodes(g, check_in_place=False):
    """The nodes of g some graph output needs, in order; with check_in_place, an unused
    in-place update is an ImportFailure naming it."""
    need = set(g.outputs)
    alive = []
    for n in reversed(g.nodes):
        if any(o in need for o in n.outputs):
            alive.append(n)
            need.update(n.inputs)
        elif check_in_place and _in_place(n.form):
            raise ImportFailure(node_where(n.name, n.form),
                                "in-place update whose result is never used: the importer works on values",
                                "write it out of place (y = x.add(z)) and use y")
    alive.reverse()
    return alive


def _in_place(form):
    name = form.rsplit(".", 1)[-1]
    return (form.startswith("Tensor.") and name.endswith("_") and not name.endswith("__")) or \
        form in ("operator.setitem",)


def onnx_module_path(node_name):
    """The module path in a node name written by torch.onnx.export ("/layer1/layer1.0/conv1/Conv" -> "layer1.0.conv1").

    "" when the name has no scope.
    """
    if not node_name.startswith("/"):
        return ""
    parts = [p for p in node_name.split("/") if p][:-1]
    prefix, last = "", ""
    for p in parts:
        if last and p.startswith(last + "."):   # "layer1" then "layer1.0": the same level, one index deeper
            last = p
        else:
            prefix = prefix + last + "." if last else prefix
            last = p
    return prefix + last


def graph_from_onnx(om, model_name):
    """The model graph of a prepared ONNX model (load_onnx.prepare's result).

    Model inputs become input buffers, initializers and big constants
    weight buffers, every remaining node a node whose args are Ref for
    tensors and values for constants (a constant is a value when it is a
    scalar or feeds a size, index or bound input: load_onnx.PARAM_INPUTS;
    otherwise a weight).  Node names are the ONNX node names; source.module
    is the PyTorch module path when the name carries one.  Then constant
    folding and dead-code removal (fold_and_prune).
    """
    from .load_onnx import PARAM_INPUTS, node_attributes

    g = Graph(model_name, "onnx")

    def ensure(name, kind):
        if name not in g.buffers:
            g.add_buffer(name, om.shapes.get(name), om.dtypes.get(name, "float32"), kind)
        return name

    for name in om.inputs:
        ensure(name, "input")
        g.inputs.append(name)
    for name, n in zip(om.names, om.nodes):
        for o in n.output:
            if o:
                g.add_buffer(o, om.shapes.get(o), om.dtypes.get(o, "float32"), "activation", name)
    for name, n in zip(om.names, om.nodes):
        params = PARAM_INPUTS.get(n.op_type, set())
        args, inputs = [], []
        for k, i in enumerate(n.input):
            if not i:
                args.append(None)
            elif i in g.buffers and g.buffers[i].producer is not None or i in om.inputs:
                args.append(Ref(i))
                inputs.append(i)
            elif i in om.consts and (k in params or om.consts[i].size == 1):
                v = om.consts[i]
                args.append(v.tolist())
            else:
                ensure(i, "weight")
                args.append(Ref(i))
                inputs.append(i)
        source = {"form": "onnx." + n.op_type, "onnx_node": name}
        path = onnx_module_path(n.name)
        if path:
            source["module"] = path
        outs = [o for o in n.output if o]
        if n.op_type in ("Dropout", "MaxPool") and len(outs) > 1:
            outs = outs[:1]   # the mask or the indices: never read by an inference graph
        g.nodes.append(Node(name, "onnx." + n.op_type, inputs, outs, source=source, args=args,
                            kwargs=node_attributes(n)))
    for o in om.outputs:
        if o in om.consts or (o in om.weights and o not in g.buffers):
            ensure(o, "weight")
        g.outputs.append(o)
    if om.folded:
        g.notes.append(f"ONNX constants: {om.folded} nodes evaluated at import (shapes, indices)")
    fold_and_prune(g)
    return g
