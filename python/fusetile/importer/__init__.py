"""fusetile.importer - import PyTorch and ONNX models as fusetile scheduling problems.

Stages, one module each, in reading order: trace_fx / load_onnx (1: trace
or load), buffers (2: one buffer per value), canonical (3: the canonical
op table), shapes (4: output shapes from torch on meta tensors, checked), validate (5: checks); pipeline
runs them.  Then lower (with views, problem, machine) writes the problem.
cli is the command line.  Only a target (--target, machine.load_target)
needs the fusetile C extension: the C library reads and applies it;
torch, torchvision and onnx are imported only when a model needs them.
"""

__all__ = ["import_model", "import_graph", "to_problem", "ImportFailure", "FallbackWarning"]

import os

from .errors import FallbackWarning, ImportFailure


def import_graph(model, input_shapes=None, frontend="auto", log=None):
    """The canonical model graph of MODEL (see pipeline.import_graph); raises ImportFailure.

    model: an nn.Module (never changed), "torchvision:NAME", "FILE.py:CALLABLE",
    "FILE.onnx" or "FILE.json"; input_shapes: one tensor or shape per model input.
    """
    from .pipeline import import_graph as run
    return run(model, input_shapes, frontend, log)


def import_model(model, example_inputs=None, target=None, dtype="bf16", frontend="auto", batch_split=None,
                 group_split=None, log=None, as_="compiler"):
    """Import a model as a fusetile.Problem (contest format plus op_names, op_kinds, tensor_names).

    model: an nn.Module (traced on a meta-device copy: the module keeps its
    weights, device and training flag), "torchvision:NAME", "FILE.py:CALLABLE",
    "FILE.onnx" or a model graph "FILE.json".  example_inputs: one tensor
    (or shape tuple) per model input; None for a path with default shapes.
    target: a target file path (None: the default machine); the problem then
    has "imported_for": {"target": its name, "file": target}.  dtype,
    frontend, batch_split and group_split as `fusetile import`'s options,
    as_ its --as ("compiler" or "eager": op_kernels, docs/LOWERING.md).
    log(text) receives the notes `fusetile import` prints.  Warns
    FallbackWarning when the import falls back to the ONNX export.  Raises
    ImportFailure (a fusetile.Error) or TypeError for an argument of the wrong type.
    """
    import fusetile
    from .machine import DTYPE_BYTES
    fusetile._need()   # the Problem is the C extension's
    if isinstance(example_inputs, (str, bytes)):
        raise TypeError("example_inputs must be a tuple of tensors or shapes, not a string")
    if example_inputs is not None and not isinstance(example_inputs, (tuple, list)):
        example_inputs = (example_inputs,)   # a lone tensor
    if dtype not in DTYPE_BYTES:
        raise ImportFailure("dtype", f"'{dtype}' is not one of {', '.join(sorted(DTYPE_BYTES))}", "")
    if target is not None and not isinstance(target, (str, os.PathLike)):
        raise TypeError(f"target must be a target file path or None, not {type(target).__name__}")
    g = import_graph(model, example_inputs, frontend, log)
    d, _ = to_problem(g, dtype, target, batch_split, group_split,
                      model=model if isinstance(model, (str, os.PathLike)) else type(model).__name__, as_=as_)
    return fusetile.problem_from_dict(d, "<import_model>")


def to_problem(graph, dtype="bf16", target=None, batch_split=None, group_split=None, model=None, as_="compiler"):
    """Lower a model graph to a problem dict (contest format plus op_names, op_kinds, tensor_names).

    dtype: a machine.DTYPE_BYTES key; target: a target file path (None: the
    default machine; a target needs the binding's C extension).  With model
    (its name), the dict has `fusetile import`'s "importer" field, and for
    a target "imported_for".  as_: "compiler" or "eager" (lower.Options).  Returns (problem dict, stats).  Raises ImportFailure.
    """
    from .cli import importer_field
    from .lower import BATCH_SPLIT, GROUP_SPLIT, Options, lower
    from .machine import DEFAULT, load_target
    machine = load_target(os.fspath(target)) if target else DEFAULT
    m = machine.for_dtype(dtype)
    opts = Options(batch_split or BATCH_SPLIT, group_split or GROUP_SPLIT, as_)
    p, stats = lower(graph, m, opts)
    extra = importer_field(os.fspath(model), graph, m, machine) if model is not None else {}
    if getattr(machine, "imported_for", None):
        extra["imported_for"] = dict(machine.imported_for)
    return p.to_json(extra), stats
