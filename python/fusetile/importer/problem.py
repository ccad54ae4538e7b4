"""problem.py - the contest problem being built: 2-D tensors, MatMul / Pointwise / Layout ops, structural checks and the JSON text (SPEC section 1)."""

import json

from .errors import ImportFailure

OP_TYPES = ("MatMul", "Pointwise", "Layout")


class Problem:
    """Tensors (rows x cols, a name) and ops (type, inputs, output, factor, name, kind), then base costs.

    Sizes are in elements; widths are columns, heights rows.  Op and tensor
    names fill the extra fields op_names, op_kinds and tensor_names.  An
    op's factor is the elements a Pointwise or Layout op reads per output
    element (docs/LOWERING.md); set_costs() gives every op its base cost
    from the machine (machine.py) once the ops are all there.
    """

    def __init__(self, machine, kernels=False):
        self.m = machine
        self.kernels = [] if kernels else None   # per op, its kernel (op_kernels); None: not recorded
        self.rows, self.cols, self.tnames = [], [], []
        self.types, self.inputs, self.outputs, self.factors, self.names, self.kinds = [], [], [], [], [], []
        self.costs = []
        self.producer = {}

    def tensor(self, rows, cols, name):
        """A new tensor; returns its index.  rows and cols must be integers >= 1."""
        rows, cols = int(rows), int(cols)
        if rows < 1 or cols < 1:
            raise ImportFailure(name, f"a {rows} x {cols} tensor", "every tensor needs at least one element")
        self.rows.append(rows)
        self.cols.append(cols)
        self.tnames.append(name)
        return len(self.rows) - 1

    def shape(self, t):
        return self.rows[t], self.cols[t]

    def op(self, typ, inputs, output, factor, name, kind):
        """Add an op writing tensor `output` (reading `factor` elements per output element); returns its index."""
        assert typ in OP_TYPES
        ins = []
        for t in inputs:
            if t not in ins:
                ins.append(t)
        self.types.append(typ)
        self.inputs.append(ins)
        self.outputs.append(output)
        self.factors.append(factor)
        self.names.append(name)
        self.kinds.append(kind)
        if self.kernels is not None:
            self.kernels.append(len(self.types) - 1)   # a kernel of its own until same_kernel joins it
        self.producer[output] = len(self.types) - 1
        return len(self.types) - 1

    def matmul(self, left, right, name, kind, out_name=None):
        """O = left @ right: a new output tensor of left's rows and right's cols; returns it."""
        out = self.tensor(self.rows[left], self.cols[right], out_name or name)
        if self.cols[left] != self.rows[right]:
            raise ImportFailure(name, f"internal error: MatMul of {self.shape(left)} by {self.shape(right)}",
                                "report the model")
        self.op("MatMul", [left, right], out, 1, name, kind)
        return out

    def pointwise(self, inputs, rows, cols, factor, name, kind, out_name=None):
        """A Pointwise op of the given inputs (each rows x cols) into a new tensor; returns it."""
        out = self.tensor(rows, cols, out_name or name)
        for t in inputs:
            if self.shape(t) != (rows, cols):
                raise ImportFailure(name, f"internal error: Pointwise input {self.shape(t)} for a "
                                    f"{rows} x {cols} output", "report the model")
        self.op("Pointwise", inputs, out, factor, name, kind)
        return out

    def layout(self, src, rows, cols, factor, name, kind, out_name=None):
        """A Layout op from tensor src into a new rows x cols tensor; returns it."""
        out = self.tensor(rows, cols, out_name or name)
        self.op("Layout", [src], out, factor, name, kind)
        return out

    def same_kernel(self, a, b):
        """Run the ops that write tensors a and b in one kernel (b's joins a's); a no-op without op_kernels."""
        if self.kernels is None:
            return
        ka, kb = self.kernels[self.producer[a]], self.kernels[self.producer[b]]
        self.kernels = [ka if k == kb else k for k in self.kernels]

    def op_kernels(self):
        """Per op, its kernel numbered 0, 1, ... in the order of the kernels' first ops; None when not recorded."""
        if self.kernels is None:
            return None
        ids = {}
        return [ids.setdefault(k, len(ids)) for k in self.kernels]

    def set_costs(self):
        """Give every op its base cost on the machine (machine.py: base_costs)."""
        self.costs = list(self.m.base_costs(self))

    def counts(self):
        """Op type -> number of ops."""
        c = {t: 0 for t in OP_TYPES}
        for t in self.types:
            c[t] += 1
        return c

    def check(self):
        """Structural checks of SPEC section 1 (and Layout: one input): ImportFailure on the first violation."""
        produced = set()
        for o, typ in enumerate(self.types):
            out, ins = self.outputs[o], self.inputs[o]
            where = f"{self.names[o]} (op {o})"
            if out in produced:
                raise ImportFailure(where, "internal error: tensor written twice", "report the model")
            produced.add(out)
            if out in ins:
                raise ImportFailure(where, "internal error: op reads its own output", "report the model")
            if typ == "MatMul":
                l, r = ins if len(ins) == 2 else (ins[0], ins[0])
                if not (self.rows[l] == self.rows[out] and self.cols[r] == self.cols[out] and
                        self.cols[l] == self.rows[r]):
                    raise ImportFailure(where, "internal error: MatMul shapes", "report the model")
            elif typ == "Pointwise":
                if any(self.shape(t) != self.shape(out) for t in ins):
                    raise ImportFailure(where, "internal error: Pointwise shapes", "report the model")
            elif len(ins) != 1:
                raise ImportFailure(where, "internal error: Layout with several inputs", "report the model")
            if not (o < len(self.costs) and self.costs[o] > 0):
                raise ImportFailure(where, "internal error: base cost not positive", "report the model")

    def prune(self):
        """Drop tensors that no op reads or writes (never expected; kept for safety), renumbering."""
        used = set(self.outputs)
        for ins in self.inputs:
            used.update(ins)
        keep = [t for t in range(len(self.rows)) if t in used]
        if len(keep) == len(self.rows):
            return
        new = {t: i for i, t in enumerate(keep)}
        self.rows = [self.rows[t] for t in keep]
        self.cols = [self.cols[t] for t in keep]
        self.tnames = [self.tnames[t] for t in keep]
        self.inputs = [[new[t] for t in ins] for ins in self.inputs]
        self.outputs = [new[t] for t in self.outputs]

    def to_json(self, extra=None):
        """The problem as a dict in the contest's field order, then op_names, op_kinds, tensor_names and extra."""
        d = {
            "widths": self.cols,
            "heights": self.rows,
            "inputs": self.inputs,
            "outputs": [[t] for t in self.outputs],
            "base_costs": self.costs,
            "op_types": self.types,
            "fast_memory_capacity": self.m.capacity,
            "slow_memory_bandwidth": _num(self.m.bandwidth),
            "native_granularity": [self.m.native_w, self.m.native_h],
            "op_names": self.names,
            "op_kinds": self.kinds,
            "tensor_names": self.tnames,
        }
        if self.kernels is not None:
            d["op_kernels"] = self.op_kernels()
        if extra:
            d.update(extra)
        return d

    def dumps(self, extra=None):
        """The problem as JSON text: one field a line, lists on one line."""
        d = self.to_json(extra)
        lines = ["{"]
        items = list(d.items())
        for i, (k, v) in enumerate(items):
            lines.append(f"  {json.dumps(k)}: {json.dumps(v, separators=(',', ':'))}" +
                         ("," if i + 1 < len(items) else ""))
        lines.append("}")
        return "\n".join(lines) + "\n"


def _num(x):
    """A figure as written: an int when it is one, else the double itself (what the C library computed)."""
    x = float(x)
    return int(x) if x.is_integer() else x
