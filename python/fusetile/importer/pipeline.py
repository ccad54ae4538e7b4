"""pipeline.py - the conversion stages in order: trace or load (1), buffers (2), canonical ops (3), shapes (4), validation (5)."""

import sys

from . import buffers, canonical, shapes, source, validate
from .errors import ImportFailure

FRONTENDS = ("auto", "fx", "onnx")


def import_graph(spec, input_shapes=None, frontend="auto", log=None):
    """Import the model MODEL names and return its canonical, shaped, validated Graph.

    spec: "torchvision:NAME", "FILE.py:CALLABLE", "FILE.onnx" or a model
    graph "FILE.json".  input_shapes: list of shape tuples, one per model
    input (None: the model's default).  frontend: "fx" traces with torch.fx,
    "onnx" exports a PyTorch model to ONNX and reads that, "auto" traces and
    falls back to the ONNX export when torch.fx cannot trace the model or
    meets an op it has no canonical form for.  log(text) receives the notes
    worth a line on stderr (the fallback).  Raises ImportFailure.
    """
    if frontend not in FRONTENDS:
        raise ImportFailure("--frontend", f"'{frontend}' is not one of {', '.join(FRONTENDS)}", "")
    log = log or (lambda text: None)
    src = source.parse_model(spec)
    _need_torch()   # a model graph too: the lowering replays data movement with torch tensors
    if src.kind == "graph":
        return _from_json(src)
    if src.kind == "onnx":
        from . import load_onnx
        model = load_onnx.read_model(path=src.path)
        om = load_onnx.prepare(model, input_shapes, where=src.path)
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

    factory is called once per attempt (the FX trace moves its module to
    the meta device; the ONNX export needs a real one).  input_shapes: one
    shape tuple per model input.  frontend and log as for import_graph;
    name labels the graph and the messages.  Raises ImportFailure.
    """
    import torch
    log = log or (lambda text: None)
    shapes_ = [tuple(int(d) for d in s) for s in input_shapes]
    if frontend == "onnx":
        return _via_onnx(name, factory(), shapes_)
    try:
        module = factory().eval().to("meta")
        examples = [torch.empty(s, device="meta") for s in shapes_]
        return _via_fx(name, module, examples)
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
        g = _via_onnx(name, factory(), shapes_)
    except ImportFailure as e:
        raise ImportFailure(first.where, first.message,
                            (first.hint + "; " if first.hint else "") + f"the ONNX fallback failed too: {e.where}: {e.message}")
    g.notes.append(f"ONNX fallback: {first.line()}")
    return g


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


def _via_onnx(name, module, shapes_):
    from . import load_onnx, trace_fx
    import inspect
    root = trace_fx._wrap_root(module.eval(), len(shapes_))
    names = list(inspect.signature(root.forward).parameters)[:len(shapes_)]
    data = load_onnx.export_module(root, shapes_, names)
    model = load_onnx.read_model(data=data)
    om = load_onnx.prepare(model, shapes_, input_names=names, where=name)
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
