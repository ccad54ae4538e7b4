"""support.py - shared helpers of the importer tests: the import path, small graphs, problem summaries, the fusetile binary."""

import io
import json
import os
import sys
import contextlib

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(SRCDIR, "python"))
# a build tree that is not the source tree holds the binding's C extension
# (which --target needs) beside copies of the package's .py files: first
_BUILD_PY = os.path.join(os.environ.get("FT_BUILDDIR", SRCDIR), "python")
if os.path.isfile(os.path.join(_BUILD_PY, "fusetile", "importer", "__main__.py")):
    sys.path.insert(0, _BUILD_PY)
sys.path.insert(0, HERE)

from fusetile.importer import canonical, pipeline, shapes, validate  # noqa: E402,F401 - for the tests
from fusetile.importer.graph import Graph, Node  # noqa: E402
from fusetile.importer.lower import Options, lower  # noqa: E402
from fusetile.importer.machine import DEFAULT  # noqa: E402


def graph(module, *shapes, frontend="fx", log=None):
    """The canonical graph of a module class instance (built again per attempt)."""
    import copy
    import inspect
    import torch.nn as nn
    if isinstance(module, nn.Module):
        factory = lambda: copy.deepcopy(module)  # noqa: E731 - each attempt moves its copy to meta
    else:
        factory = module  # a class or a function returning a module
    del inspect
    return pipeline.import_module(factory, shapes, frontend, "test", log)


def problem(g, dtype="bf16", machine=DEFAULT, **opts):
    """Lower g; returns (problem dict, stats)."""
    p, stats = lower(g, machine.for_dtype(dtype), Options(**opts))
    return p.to_json(), stats


def ops(d):
    """The problem's ops as (type, [(rows, cols) of inputs], (rows, cols) of output, base cost, name, kind)."""
    out = []
    for i, t in enumerate(d["op_types"]):
        o = d["outputs"][i][0]
        out.append((t, [(d["heights"][x], d["widths"][x]) for x in d["inputs"][i]],
                    (d["heights"][o], d["widths"][o]), d["base_costs"][i], d["op_names"][i], d["op_kinds"][i]))
    return out


def signature(d):
    """A problem without names and order: the sorted (type, input shapes, output shape) of its ops."""
    return sorted((t, tuple(ins), out) for t, ins, out, _, _, _ in ops(d))


def hand_graph(buffers, nodes, inputs, outputs):
    """A canonical Graph from lists: buffers {name: (shape, kind)}, nodes [(name, op, inputs, outputs, attrs)]."""
    g = Graph("hand", "json")
    for name, (shape, kind) in buffers.items():
        g.add_buffer(name, shape, "float32", kind)
    for name, op, ins, outs, attrs in nodes:
        g.nodes.append(Node(name, op, ins, outs, attrs, {"form": op}))
        for o in outs:
            g.buffers[o].producer = name
    g.inputs = list(inputs)
    g.outputs = list(outputs)
    return g


def run_cli(*argv):
    """Run the importer's main in this process: (exit status, stdout, stderr)."""
    from fusetile.importer import cli
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = cli.main(list(argv))
    return rc, out.getvalue(), err.getvalue()


def fusetile_binary():
    """The fusetile program to run end to end (FT_FUSETILE, else ./fusetile in the build or source tree), or None."""
    for cand in (os.environ.get("FT_FUSETILE"), os.path.join(os.environ.get("FT_BUILDDIR", SRCDIR), "fusetile"),
                 os.path.join(SRCDIR, "fusetile")):
        if cand and os.access(cand, os.X_OK):
            return cand
    return None


def load(path):
    with open(path) as f:
        return json.load(f)
