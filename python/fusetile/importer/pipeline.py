"""pipeline.py - the conversion stages in order: trace or load (1), buffers (2), canonical ops (3), shapes (4), validation (5)."""

import os
import sys

from . import buffers, canonical, shapes, source, validate
from .errors import ImportFailure, warn_fallback

FRONTENDS = ("auto", "fx", "onnx")


def import_graph(spec, input_shapes=None, frontend="auto", log=None):
    """Import the model MODEL names and return its canonical, shaped, validated Graph.

    spec: "torchvision:NAME", "FILE.py:CALLABLE", "FILE.onnx", a model
    graph "FILE.json" (a str or os.PathLike), or an nn.Module (traced as
    import_module does, never changed).  input_shapes: list of shape tuples
    or tensors, one per model input (None: the model's default).  frontend: "fx" traces with torch.fx,
    "onnx" exports a PyTorch model to ONNX and reads that, "auto" traces and
    falls back to the ONNX export when torch.fx cannot trace the model or
    meets an op it has no canonical form for.  log(text) receives the notes
    worth a line on stderr (the fallback).  Raises ImportFailure.
    """
    if frontend not in FRONTENDS:
        raise ImportFailure("--frontend", f"'{frontend}' is not one of {', '.join(FRONTENDS)}", "")
    log = log or (lambda text: None)
    if not isinstance(spec, (str, os.PathLike)):
        _need_torch()
        import torch
        if not isinstance(spec, torch.nn.Module):
            raise TypeError(f"model must be an nn.Module, a path or 'torchvision:NAME', not {type(spec).__name__}")
        if not input_shapes:
            raise ImportFailure(type(spec).__name__, "no example input", "give one tensor or shape per model input")
        return import_module(lambda: spec, list(input_shapes), frontend, type(spec).__name__, log)
    spec = os.fspath(spec)
    src = source.parse_model(spec)
    _need_torch()   # a model graph too: the lowering replays data movement with torch tensors
    if src.kind == "graph":
        return _from_json(src)
    if src.kind == "onnx":
        from . import load_onnx
        model = load_onnx.read_model(path=src.path)
        shapes_ = [tuple(s.shape) if hasattr(s, "shape") else s for s in input_shapes] if input_shapes else None
        om = load_onnx.prepare(model, shapes_, where=src.path)
        return _finish(buffers.graph_from_onnx(om, spec))

    module = source.build_module(src)
    shapes_ = list(input_shapes) if input_shapes else source.default_shapes(src, module)
    if not shapes_:
        raise ImportFailure(spec, "no input shape", "give --input-shape (once per model input), e.g. 1x3x224x224")
    first = [module]

    def factory():  # the first call gets the module built above, later calls a new one
        return first.pop() if first else source.build_module(src)
    return import_module(factory, shapes_, frontend, spec, log)


def import_module(factory, input_shapes, frontend="auto", name="module", log=None):
    """The canonical, shaped, validated Graph of the nn.Module that factory() returns.

    factory is called once per attempt and may return the same module or a
    new one: the FX trace runs on a meta-device copy of it (made by
    meta_copy: the module itself, its weights and its device are left as
    they were), the ONNX export on the module itself (in eval mode; its
    training flag is put back).  input_shapes: one entry per model input, a
    shape tuple (a float input) or a tensor (its shape and dtype; the ONNX
    export runs on its values).  frontend and log as for import_graph;
    name labels the graph and the messages.  Falling back to the ONNX export
    warns FallbackWarning (and logs a note).  Raises ImportFailure.
    """
    import torch
    log = log or (lambda text: None)
    module = _nn_module(factory(), name)
    first = next(iter(module.parameters()), None)
    examples = [_example(s, name, first.device if first is not None else None) for s in input_shapes]
    if frontend == "onnx":
        branches = []
        g = _via_onnx(name, module, examples, branches)
        if branches:
            text = (f"{name}: the ONNX export kept one branch of data-dependent control flow, the one the "
                    f"example inputs take ({branches[0]})")
            log(f"note: {text}")
            g.notes.append(text)
            warn_fallback(text)
        return g
    try:
        module = meta_copy(module)
        metas = [torch.empty(tuple(x.shape), dtype=x.dtype, device="meta") for x in examples]
        return _via_fx(name, module, metas)
    except ImportFailure as e:
        if frontend == "fx" or "shape mismatch" in e.message:
            raise
        first = e
    except Exception as e:  # noqa: BLE001 - torch.fx's TraceError and what tracing user code raises
        if frontend == "fx":
            raise ImportFailure(name, f"torch.fx cannot trace the model: {_first_line(e)}",
                                "try --frontend onnx") from None
        first = ImportFailure(name, f"torch.fx cannot trace the model: {_first_line(e)}",
                              "make the control flow depend on sizes only")
    log(f"note: {first.line()}; importing through an ONNX export instead")
    try:
        g = _via_onnx(name, _nn_module(factory(), name), examples)
    except ImportFailure as e:
        raise ImportFailure(first.where, first.message,
                            (first.hint + "; " if first.hint else "") + f"the ONNX fallback failed too: {e.where}: {e.message}")
    g.notes.append(f"ONNX fallback: {first.line()}")
    kept = (" (the export runs the model once on the example inputs: of data-dependent control flow only "
            "the branch those inputs take is kept)" if "data-dependent" in first.message else "")
    warn_fallback(f"{first.line()}; imported through an ONNX export instead{kept}")
    return g


def meta_copy(module):
    """A copy of nn.Module `module` in eval mode whose parameters and buffers are empty meta tensors.

    The module is left as it was (its weights, device and training flag);
    the weights are not copied (copy.deepcopy with each tensor of the
    module mapped to its meta twin first).  ImportFailure when the module
    cannot be copied.
    """
    import copy
    import torch
    memo = {}
    for t in list(module.parameters()) + list(module.buffers()):
        if id(t) in memo:
            continue
        m = torch.empty_like(t, device="meta")
        memo[id(t)] = torch.nn.Parameter(m, requires_grad=t.requires_grad) if isinstance(t, torch.nn.Parameter) else m
    try:
        c = copy.deepcopy(module, memo)
    except Exception as e:  # noqa: BLE001 - what a module's own __deepcopy__ or state raises
        raise ImportFailure(type(module).__name__, f"cannot copy the module to trace it: {_first_line(e)}",
                            "the importer traces a copy and never changes the module given; make it deep-copyable")
    return c.eval().to("meta")


def _nn_module(m, name):
    import torch
    if not isinstance(m, torch.nn.Module):
        raise ImportFailure(name, f"{type(m).__name__} is not a torch.nn.Module", "give an nn.Module instance")
    return m


def _example(x, name, device=None):
    """One model input: a tensor as it is, a shape (a tuple or torch.Size of positive ints) as zeros of that shape
    (on device, the module's)."""
    import torch
    if isinstance(x, torch.Tensor):
        return x
    try:
        shape = tuple(int(d) for d in x)
        ok = all(d >= 1 and d == e for d, e in zip(shape, x))
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ImportFailure(name, f"example input {x!r} is neither a tensor nor a shape",
                            "give one tensor (or shape tuple) per model input")
    return torch.zeros(shape, device=device)


def _need_torch():
    try:
        import torch  # noqa: F401
    except ImportError:
        raise ImportFailure(sys.executable, "torch is not installed for this Python",
                            "install python3-torch (and python3-torchvision, python3-onnx), or point "
                            "FUSETILE_PYTHON at a Python that has them") from None


def _via_fx(name, module, examples):
    from . import trace_fx
    fxgraph, root = trace_fx.trace_module(module, examples, canonical.leaf_modules())
    return _finish(buffers.graph_from_fx(fxgraph, root, name))


def _via_onnx(name, module, examples, branches=None):
    """Export module (in eval mode for the export, every submodule's training flag put back) on the example tensors; its Graph."""
    from . import load_onnx, trace_fx
    import inspect
    modes = [(m, m.training) for m in module.modules()]
    try:
        root = trace_fx._wrap_root(module.eval(), len(examples))
        names = list(inspect.signature(root.forward).parameters)[:len(examples)]
        data = load_onnx.export_module(root, examples, names, branches)
    finally:
        for m, training in modes:   # each submodule's own flag (a frozen BatchNorm in a training model)
            m.training = training
    model = load_onnx.read_model(data=data)
    om = load_onnx.prepare(model, [tuple(x.shape) for x in examples], input_names=names, where=name)
    g = buffers.graph_from_onnx(om, name)
    for n in g.nodes:   # the export's scopes start at the wrapper's "model" attribute
        m = n.source.get("module", "")
        if m == "model":
            del n.source["module"]
        elif m.startswith("model."):
            n.source["module"] = m[len("model."):]
    return _finish(g)


def _finish(g):
    # stage 3, with each node's shapes computed as soon as it is canonical
    # (an ONNX graph may leave some for stage 4 to fill), then stage 4 over
    # the whole graph, then stage 5
    canonical.canonicalise(g, after=lambda n: shapes.shape_node(n, g))
    buffers.prune_dead(g)
    shapes.propagate_shapes(g)
    validate.validate(g)
    return g


def _from_json(src):
    import json
    import os
    from .graph import graph_from_json
    from .limits import MAX_GRAPH_BYTES
    try:
        size = os.path.getsize(src.path)
    except OSError as e:
        raise ImportFailure(src.path, f"cannot read the model graph: {e}", "give a file written by --graph-only") from None
    if size > MAX_GRAPH_BYTES:
        raise ImportFailure(src.path, f"{size} bytes, the limit is {MAX_GRAPH_BYTES} (FT_MAX_GRAPH_BYTES)",
                            "a model graph written by --graph-only is far smaller; split the model")
    try:
        with open(src.path) as f:
            d = json.load(f)
    except (OSError, ValueError) as e:
        raise ImportFailure(src.path, f"cannot read the model graph: {e}", "give a file written by --graph-only") from None
    g = graph_from_json(d, src.path)
    for n in g.nodes:
        if n.op not in canonical.TABLE:
            raise ImportFailure(f"{n.name} ({n.op})", "unsupported op", "a model graph holds canonical ops only")
    validate.toposort(g)
    shapes.propagate_shapes(g)
    validate.validate(g)
    return g


def _first_line(e):
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__
