"""fusetile.importer - import PyTorch and ONNX models as fusetile scheduling problems.

Stages, one module each, in reading order: trace_fx / load_onnx (1: trace
or load), buffers (2: one buffer per value), canonical (3: the canonical
op table), shapes (4: shape propagation), validate (5: checks); pipeline
runs them.  Then lower (with views, problem, machine) writes the problem.
cli is the command line.  Only a target (--target, machine.load_target)
needs the fusetile C extension: the C library reads and applies it;
torch, torchvision and onnx are imported only when a model needs them.
"""

__all__ = ["import_graph", "to_problem", "ImportFailure"]

from .errors import ImportFailure


def import_graph(model, input_shapes=None, frontend="auto", log=None):
    """The canonical model graph of MODEL (see pipeline.import_graph); raises ImportFailure."""
    from .pipeline import import_graph as run
    return run(model, input_shapes, frontend, log)


def to_problem(graph, dtype="bf16", target=None, batch_split=None, group_split=None):
    """Lower a model graph to a problem dict (contest format plus op_names, op_kinds, tensor_names).

    dtype: a machine.DTYPE_BYTES key; target: a target file path (None: the
    default machine; a target needs the binding's C extension).  Returns (problem dict, stats).  Raises ImportFailure.
    """
    from .lower import BATCH_SPLIT, GROUP_SPLIT, Options, lower
    from .machine import DEFAULT, load_target
    m = (load_target(target) if target else DEFAULT).for_dtype(dtype)
    opts = Options(batch_split or BATCH_SPLIT, group_split or GROUP_SPLIT)
    p, stats = lower(graph, m, opts)
    return p.to_json(), stats
