"""machine.py - the machine a problem is written for, scaled to --dtype: the default abstract machine, or a target file that the C library reads and applies (through the Python binding) for the capacity, bandwidth, native granularity and base costs."""

import os
import sys

from .errors import ImportFailure

DTYPE_BYTES = {"bf16": 2, "fp16": 2, "fp32": 4, "int8": 1}
DEFAULT_DTYPE = "bf16"


class Machine:
    """The default machine: capacity, bandwidth, native tile and throughput, per element of `element_bytes` bytes.

    The figures are in bytes and per cost unit, as a target file's are;
    for_dtype() gives them in elements of another size.
    """

    def __init__(self, name, element_bytes, capacity_bytes, read_bandwidth, native_w, native_h,
                 matmul_macs_per_cycle, pointwise_elements_per_cycle):
        self.name = name
        self.element_bytes = element_bytes
        self.capacity_bytes = capacity_bytes
        self.read_bandwidth = read_bandwidth
        self.native_w = native_w
        self.native_h = native_h
        self.macs = matmul_macs_per_cycle
        self.pointwise = pointwise_elements_per_cycle

    def for_dtype(self, dtype):
        """The problem-level figures for elements of `dtype` (a DTYPE_BYTES key).

        capacity = floor(capacity_bytes / bytes) elements; bandwidth =
        read_bandwidth / bytes elements per cycle; the throughputs scale by
        element_bytes / bytes (a datapath of fixed width in bytes: int8 on a
        bf16 machine does twice the MACs per cycle, fp32 half).
        """
        b = DTYPE_BYTES[dtype]
        scale = self.element_bytes / b
        return Scaled(self, dtype, b, int(self.capacity_bytes // b), self.read_bandwidth / b,
                      self.macs * scale, self.pointwise * scale)


class Scaled:
    """The default machine's figures for one element size; base_matmul / base_pointwise give the costs."""

    def __init__(self, machine, dtype, element_bytes, capacity, bandwidth, macs, pointwise):
        self.machine = machine
        self.name = machine.name
        self.dtype = dtype
        self.element_bytes = element_bytes
        self.capacity = capacity
        self.bandwidth = bandwidth
        self.macs = macs
        self.pointwise = pointwise
        self.native_w = machine.native_w
        self.native_h = machine.native_h

    def base_matmul(self):
        """Cycles of one native MatMul step: nw x nh outputs over native k = nw (SPEC section 4)."""
        return tidy(self.native_w * self.native_h * self.native_w / self.macs)

    def base_pointwise(self, factor=1.0):
        """Cycles of one native tile of a Pointwise or Layout op that reads `factor` elements per output."""
        return tidy(self.native_w * self.native_h * factor / self.pointwise)

    def base_costs(self, p):
        """The base cost of every op of problem.Problem p (its types and factors)."""
        return [self.base_matmul() if t == "MatMul" else self.base_pointwise(f) for t, f in zip(p.types, p.factors)]


def tidy(x):
    """A cost as an int when it is one, else rounded to 6 decimals; never below 1e-6."""
    x = max(round(x, 6), 1e-6)
    return int(x) if x == int(x) else x


# The default abstract machine: the contest's native tile (128 x 128), the
# capacity and bandwidth of the public benchmark mlsys-2026-13 (600000
# elements, 50 elements per cost unit) at 2 bytes per element, and
# throughputs that give a native MatMul step 4096 units and a one-input
# Pointwise tile 128, in the range of the contest's base costs.
DEFAULT = Machine("default", 2, 1_200_000, 100.0, 128, 128, 512.0, 128.0)


# ---------------------------------------------------------------- targets
#
# A target file is read and applied by the C library only (ft_target_load,
# ft_target_apply), through the binding: fusetile.load_target and
# Problem.with_target.  The importer adds two rules of its own on top of
# what ft_target_apply gives: --dtype (sizes in elements of another size
# than the target's element_bytes) and the factor of a Pointwise or Layout
# op that reads other than one element per input per output.


def _binding():
    """The fusetile package with its C extension; ImportFailure (one line) naming what is missing."""
    import glob
    import fusetile
    if getattr(fusetile, "_fusetile", None) is None:
        where = fusetile.__path__[0]
        if glob.glob(os.path.join(where, "_fusetile*.so")):
            why = getattr(fusetile, "_IMPORT_ERROR", None) or "not loaded"
        else:
            why = "there is no _fusetile*.so there"
        raise ImportFailure(
            "--target", f"needs the Python binding's C extension fusetile._fusetile, which {sys.executable} cannot "
            f"import from {where} ({why})",
            "make builds it when ./configure finds this Python's headers (python3-dev); or import without --target")
    return fusetile


def load_target(path):
    """The machine of a target file (targets/*.cfg): DEFAULT's figures for a contest target, else a Target.

    Its imported_for is the problem's "imported_for" field: {"target": the
    file's name setting, "file": path as given}.
    The file is read and checked by the C library (fusetile.load_target);
    its message ("FILE:LINE: SETTING: message") becomes an ImportFailure.
    Without the binding's C extension: ImportFailure saying so.
    """
    fusetile = _binding()
    try:
        t = fusetile.load_target(path)
    except fusetile.Error as e:
        hint = "see targets/README.md for the settings" if os.path.isfile(path) else "check the --target path"
        raise ImportFailure("", e.message or str(e), hint) from None
    if t.contest:
        d = DEFAULT
        m = Machine("contest", d.element_bytes, d.capacity_bytes, d.read_bandwidth, d.native_w, d.native_h, d.macs,
                    d.pointwise)
    else:
        m = Target(t)
    m.imported_for = {"target": t.info()["name"], "file": os.fspath(path)}
    return m


class Target:
    """A real machine of a target file, as the C library reads it (a fusetile.Target)."""

    def __init__(self, target):
        self.target = target
        self.info = target.info()
        self.name = self.info["name"]
        self.element_bytes = self.info["element_bytes"]

    def for_dtype(self, dtype):
        return TargetScaled(self, dtype)

    def apply(self, d):
        """ft_target_apply on problem dict d: the info() of the problem on this target (base costs recomputed)."""
        fusetile = _binding()
        try:
            return fusetile.problem_from_dict(d, "<imported problem>").with_target(self.target).info()
        except fusetile.Error as e:
            raise ImportFailure(self.info["path"], f"cannot apply the target to the imported problem: "
                                f"{e.message or e}", "report the model") from None


def _probe(n=1):
    """A problem of one MatMul and one one-input Pointwise op, neither of a kind: the plain base costs.

    Its tensors are n x n: n the target's compute.aligned_elements, so that
    the MatMul is an aligned one (ft_target_misaligned)."""
    return {"widths": [n, n, n, n], "heights": [n, n, n, n], "inputs": [[0, 1], [2]], "outputs": [[2], [3]],
            "base_costs": [1, 1], "op_types": ["MatMul", "Pointwise"], "fast_memory_capacity": 4 * n * n,
            "slow_memory_bandwidth": 1, "native_granularity": [1, 1]}


class TargetScaled:
    """A Target's figures for one element size, from ft_target_apply.

    With the target's own element size (bytes == element_bytes) every
    figure is ft_target_apply's: capacity floor(capacity_bytes /
    element_bytes), bandwidth read_bandwidth x slow_memory.efficiency /
    element_bytes, native [w, h], base costs from native w, h and k, the
    throughputs, their efficiencies and compute.kind_cost.  Another element
    size divides the capacity and bandwidth by bytes instead, and
    multiplies the base costs by bytes / element_bytes (the throughputs
    scale by element_bytes / bytes, as the default machine's do).
    """

    def __init__(self, target, dtype):
        self.machine = target
        self.name = target.name
        self.dtype = dtype
        self.element_bytes = DTYPE_BYTES[dtype]
        self.scale = self.element_bytes / target.element_bytes
        probe = target.apply(_probe(int(target.info.get("aligned_elements", 1))))
        if self.element_bytes == target.element_bytes:
            self.capacity = int(probe["capacity"])
            self.bandwidth = probe["bandwidth"]
        else:
            self.capacity = int(target.info["capacity_bytes"] // self.element_bytes)
            self.bandwidth = probe["bandwidth"] / self.scale
        self.native_w = probe["native"]["w"]
        self.native_h = probe["native"]["h"]
        self.native_k = probe["native"]["k"]
        self.kind_cost = dict(target.info["kind_cost"])   # compute.kind_cost: op kind -> factor (for the summary)
        self.plain_matmul, self.plain_pointwise = (op["base_cost"] * self.scale for op in probe["ops"])

    def base_matmul(self):
        """Cycles of one native MatMul step (native k = the target's) of an op of no kind_cost kind."""
        return _cost(self.plain_matmul)

    def base_pointwise(self, factor=1.0):
        """Cycles of one native tile of a Pointwise op of no kind_cost kind that reads `factor` elements per output."""
        return _cost(self.plain_pointwise * factor)

    def base_costs(self, p):
        """The base cost of every op of problem.Problem p: ft_target_apply's on p, scaled to the dtype.

        A Pointwise or Layout op that reads `factor` elements per output
        other than one per input (a pooling window, a reduction, a copy of
        several parts) costs ft_target_apply's x factor / inputs:
        ft_target_apply charges one element per input.
        """
        d = p.to_json()
        d["base_costs"] = [1] * len(p.types)   # placeholders: ft_target_apply sets every one
        ops = self.machine.apply(d)["ops"]
        out = []
        for o, op in enumerate(ops):
            c = op["base_cost"] * self.scale
            n = len(p.inputs[o])
            if p.types[o] != "MatMul" and p.factors[o] != n:
                c = c / n * p.factors[o]
            out.append(_cost(c))
        return out


def _cost(x):
    """A base cost as written: an int when it is one, else the double itself."""
    x = float(x)
    return int(x) if x.is_integer() else x
