"""validate.py - stage 5: the graph is a DAG, every operand has a producer or is an input or weight, every op is canonical and every shape known."""

from . import canonical as C
from .errors import ImportFailure, node_where


def toposort(g):
    """Order g.nodes so that every node comes after the producers of its operands (in place).

    Keeps the given order where it is already valid.  Raises ImportFailure
    for a buffer written by two nodes, an operand that nothing produces and
    that is neither a graph input nor a weight ("missing producer"), and a
    cycle (naming a node on it).
    """
    producer = {}
    for n in g.nodes:
        for o in n.outputs:
            if o in producer:
                raise ImportFailure(node_where(n.name, n.op), f"{o} is also written by {producer[o].name}",
                                    "every value must have one producer")
            producer[o] = n
    sources = {name for name, b in g.buffers.items() if b.producer is None and name not in producer}
    sources.update(g.inputs)
    for n in g.nodes:
        for i in n.inputs:
            if i not in producer and i not in sources:
                raise ImportFailure(node_where(n.name, n.op), f"missing producer: operand {i} is written by no "
                                    "node and is neither a graph input nor a weight",
                                    "the graph is incomplete: check the model file")
    for o in g.outputs:
        if o not in producer and o not in sources:
            raise ImportFailure("graph output", f"missing producer: output {o} is written by no node",
                                "the graph is incomplete: check the model file")
    order, state = [], {}
    for start in g.nodes:
        if start.name in state:
            continue
        stack = [(start, 0)]
        while stack:
            n, k = stack.pop()
            if k == 0:
                if state.get(n.name) == "done":
                    continue
                state[n.name] = "open"
            deps = [producer[i] for i in n.inputs if i in producer]
            if k < len(deps):
                stack.append((n, k + 1))
                d = deps[k]
                s = state.get(d.name)
                if s == "open":
                    raise ImportFailure(node_where(d.name, d.op), f"cycle: {d.name} depends on its own output "
                                        f"(through {n.name})", "a model graph must be acyclic")
                if s is None:
                    stack.append((d, 0))
            else:
                state[n.name] = "done"
                order.append(n)
    g.nodes = order
    for n in g.nodes:
        for o in n.outputs:
            if o in g.buffers:
                g.buffers[o].producer = n.name


def validate(g):
    """Check the canonical, shaped graph g; ImportFailure for the first problem.

    Every node's op is canonical, the graph is acyclic and every operand has
    a producer (toposort), every buffer has a known shape with all
    dimensions >= 1, and there is at least one output and one op.
    """
    for n in g.nodes:
        if n.op not in C.TABLE:
            raise ImportFailure(node_where(n.name, n.op), "unsupported op", "see docs/MODEL_GRAPH.md")
        for b in n.inputs + n.outputs:
            if b not in g.buffers:
                raise ImportFailure(node_where(n.name, n.op), f"missing producer: buffer {b} does not exist",
                                    "the graph is incomplete")
    toposort(g)
    if not g.outputs:
        raise ImportFailure("graph", "the model has no outputs", "the model must return a tensor")
    if not g.nodes:
        raise ImportFailure("graph", "the model has no ops", "the model must compute something")
    for name, b in g.buffers.items():
        if b.shape is None:
            raise ImportFailure(name, "unknown shape", "give the model static input shapes (--input-shape)")
        if any(d < 1 for d in b.shape):
            raise ImportFailure(name, f"empty shape {list(b.shape)}", "every dimension must be at least 1")
    g.mark_kinds()
