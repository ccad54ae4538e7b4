"""problems.py - gpumeasure's problem files: read and checked (only the fields that say what to run), with the ops in a topological order; errors name the file and the field."""

import heapq
import json
import os

from .common import OP_TYPES, UsageError


class Problem:
    """A problem file's tensors and ops, checked, with the ops in a topological order."""

    def __init__(self, path, name, widths, heights, op_types, inputs, outputs, order):
        self.path = path
        self.name = name
        self.widths = widths
        self.heights = heights
        self.op_types = op_types
        self.inputs = inputs          # per op, tensor indices
        self.outputs = outputs        # per op, the one output tensor
        self.order = order            # op indices, producers first

    def shape(self, t):
        return (self.heights[t], self.widths[t])

    def op_k(self, o):
        return self.widths[self.inputs[o][0]] if self.op_types[o] == "MatMul" else 0


def problem_name(path):
    base = os.path.basename(path)
    if base.endswith(".json"):
        base = base[:-5]
    if base.endswith(".problem"):
        base = base[:-8]
    return base


def load_problem(path):
    """Read and check one problem file; UsageError naming the file and field on anything wrong."""
    def bad(msg):
        return UsageError(f"{path}: {msg}")
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        raise bad(f"cannot read: {e.strerror}")
    except (ValueError, UnicodeDecodeError) as e:
        raise bad(f"not JSON: {e}")
    if not isinstance(doc, dict):
        raise bad("expected a JSON object")

    def int_list(field, positive):
        v = doc.get(field)
        if v is None:
            raise bad(f"missing field '{field}'")
        if not isinstance(v, list):
            raise bad(f"{field}: expected a list")
        for i, x in enumerate(v):
            if isinstance(x, bool) or not isinstance(x, int):
                raise bad(f"{field}[{i}]: expected an integer")
            if positive and x < 1:
                raise bad(f"{field}[{i}]: must be positive, got {x}")
        return v

    widths = int_list("widths", True)
    heights = int_list("heights", True)
    if len(widths) != len(heights):
        raise bad(f"heights has {len(heights)} entries, widths {len(widths)}")
    ntensors = len(widths)
    for t in range(ntensors):
        if widths[t] * heights[t] >= 2 ** 63:
            raise bad(f"tensor {t}: widths[{t}] x heights[{t}] = {widths[t]} x {heights[t]} overflows 64 bits")
    op_types = doc.get("op_types")
    if op_types is None:
        raise bad("missing field 'op_types'")
    if not isinstance(op_types, list):
        raise bad("op_types: expected a list")
    nops = len(op_types)
    for o, t in enumerate(op_types):
        if t not in OP_TYPES:
            raise bad(f"op_types[{o}]: unknown op type {json.dumps(t)} (expected {', '.join(OP_TYPES)})")
    lists = {}
    for field in ("inputs", "outputs"):
        v = doc.get(field)
        if v is None:
            raise bad(f"missing field '{field}'")
        if not isinstance(v, list):
            raise bad(f"{field}: expected a list")
        if len(v) != nops:
            raise bad(f"{field} has {len(v)} entries, op_types {nops}")
        for o, ts in enumerate(v):
            if not isinstance(ts, list):
                raise bad(f"{field}[{o}]: expected a list of tensor indices")
            for j, t in enumerate(ts):
                if isinstance(t, bool) or not isinstance(t, int):
                    raise bad(f"{field}[{o}][{j}]: expected an integer")
                if not 0 <= t < ntensors:
                    raise bad(f"{field}[{o}][{j}]: tensor {t} out of range (0..{ntensors - 1})")
        lists[field] = v
    inputs = lists["inputs"]
    outputs = []
    producer = {}
    for o, outs in enumerate(lists["outputs"]):
        if len(outs) != 1:
            raise bad(f"outputs[{o}]: op {o} has {len(outs)} outputs, needs 1")
        t = outs[0]
        if t in producer:
            raise bad(f"outputs[{o}]: tensor {t} is also produced by op {producer[t]}")
        producer[t] = o
        outputs.append(t)
    for o, kind in enumerate(op_types):
        ins, out = inputs[o], outputs[o]
        if out in ins:
            raise bad(f"inputs[{o}]: op {o} consumes its own output, tensor {out}")
        shape = (heights[out], widths[out])
        if kind == "MatMul":
            if len(ins) != 2:
                raise bad(f"inputs[{o}]: MatMul op {o} has {len(ins)} inputs, needs exactly 2 [L, R]")
            left, right = ins
            if heights[left] != shape[0] or widths[right] != shape[1] or widths[left] != heights[right]:
                raise bad(f"inputs[{o}]: MatMul op {o}: L {heights[left]}x{widths[left]} @ "
                          f"R {heights[right]}x{widths[right]} does not give {shape[0]}x{shape[1]}")
        elif kind == "Pointwise":
            if not ins:
                raise bad(f"inputs[{o}]: Pointwise op {o} has no input")
            for j, t in enumerate(ins):
                if (heights[t], widths[t]) != shape:
                    raise bad(f"inputs[{o}][{j}]: Pointwise op {o}: tensor {t} is {heights[t]}x{widths[t]}, "
                              f"its output {shape[0]}x{shape[1]}")
        elif len(ins) != 1:
            raise bad(f"inputs[{o}]: Layout op {o} has {len(ins)} inputs, needs exactly 1 [X]")
    # Topological order, file order where it allows (Kahn, smallest op first).
    consumers = [[] for _ in range(ntensors)]
    waiting = []
    for o, ins in enumerate(inputs):
        deps = {producer[t] for t in ins if t in producer}
        waiting.append(len(deps))
        for d in deps:
            consumers[outputs[d]].append(o)
    ready = [o for o in range(nops) if waiting[o] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        o = heapq.heappop(ready)
        order.append(o)
        for c in consumers[outputs[o]]:
            waiting[c] -= 1
            if waiting[c] == 0:
                heapq.heappush(ready, c)
    if len(order) != nops:
        # Every op left waits on some op left: walking back from one finds a cycle.
        walk = [min(o for o in range(nops) if waiting[o] > 0)]
        while walk.count(walk[-1]) < 2:
            walk.append(min(producer[t] for t in inputs[walk[-1]] if t in producer and waiting[producer[t]] > 0))
        cycle = walk[walk.index(walk[-1]):][::-1]        # producer -> consumer, first op again at the end
        start = cycle.index(min(cycle))
        cycle = cycle[start:-1] + cycle[:start] + [cycle[start]]
        raise bad(f"inputs[{cycle[0]}]: op {cycle[0]} is on a cycle ({' -> '.join(map(str, cycle))})")
    return Problem(path, problem_name(path), widths, heights, op_types, inputs, outputs, order)


def find_problems(paths):
    """The problem files named by --problems (directories: their *.json, sorted), loaded and checked."""
    files = []
    for p in paths:
        if os.path.isdir(p):
            found = sorted(os.path.join(p, f) for f in os.listdir(p) if f.endswith(".json"))
            if not found:
                raise UsageError(f"{p}: --problems: no .json files in this directory")
            files.extend(found)
        elif os.path.isfile(p):
            files.append(p)
        else:
            raise UsageError(f"{p}: --problems: no such file or directory")
    problems = [load_problem(f) for f in files]
    seen = {}
    for pr in problems:
        if pr.name in seen:
            raise UsageError(f"{pr.path}: problem name '{pr.name}' is also that of {seen[pr.name]}")
        seen[pr.name] = pr.path
    return problems
