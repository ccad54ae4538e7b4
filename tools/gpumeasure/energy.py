"""energy.py - gpumeasure's energy.tsv: energy per GEMM and per element-wise op from NVML's total-energy counter (pynvml, else ctypes on libnvidia-ml.so.1) around back-to-back CUDA-graph replays, with the board's idle power (EnergyCounter, energy_cells, measure_energy)."""

import ctypes
import math
import statistics
import time

from .common import (ENERGY_CALLS_PER_GRAPH, IDLE_WINDOW_S, IDLE_WINDOWS, SkipSet, first_line, fmt, log, warn)
from .env import gpu_index


class EnergyCounter:
    """NVML's total-energy counter of the GPU torch uses (millijoules since the driver loaded): read()."""

    def __init__(self, torch):
        """Open NVML through pynvml (nvidia-ml-py) if importable, else ctypes on libnvidia-ml.so.1; RuntimeError
        saying why when neither gives a counter."""
        errors = []
        for opener in (self._open_pynvml, self._open_ctypes):
            try:
                self.read_mj, self.how = opener(torch)
                self.read()
                return
            except Exception as e:   # noqa: BLE001 - missing module or library, no such function, no counter
                errors.append(f"{opener.__name__[6:]}: {type(e).__name__}: {first_line(e)}")
        raise RuntimeError("; ".join(errors))

    def read(self):
        """The counter now, in joules."""
        return self.read_mj() / 1000.0

    @staticmethod
    def _uuid(torch):
        """The NVML UUID ("GPU-...") of torch's current device, or None."""
        try:
            u = str(torch.cuda.get_device_properties(torch.cuda.current_device()).uuid)
        except Exception:   # noqa: BLE001 - an older torch has no uuid
            return None
        return u if u.startswith(("GPU-", "MIG-")) else "GPU-" + u

    def _open_pynvml(self, torch):
        import pynvml
        pynvml.nvmlInit()
        handle = None
        uuid = self._uuid(torch)
        if uuid:
            try:
                handle = pynvml.nvmlDeviceGetHandleByUUID(uuid)
            except Exception:   # noqa: BLE001 - fall back on the index
                handle = None
        if handle is None:
            handle = pynvml.nvmlDeviceGetHandleByIndex(nvml_index())
        return (lambda: pynvml.nvmlDeviceGetTotalEnergyConsumption(handle)), "pynvml"

    def _open_ctypes(self, torch):
        lib = ctypes.CDLL("libnvidia-ml.so.1")

        def check(rc, what):
            if rc != 0:
                raise RuntimeError(f"{what} returned NVML error {rc}")
        check(lib.nvmlInit_v2(), "nvmlInit_v2")
        handle = ctypes.c_void_p()
        uuid = self._uuid(torch)
        if not uuid or lib.nvmlDeviceGetHandleByUUID(uuid.encode(), ctypes.byref(handle)) != 0:
            check(lib.nvmlDeviceGetHandleByIndex_v2(ctypes.c_uint(nvml_index()), ctypes.byref(handle)),
                  "nvmlDeviceGetHandleByIndex_v2")
        value = ctypes.c_ulonglong()

        def read_mj():
            check(lib.nvmlDeviceGetTotalEnergyConsumption(handle, ctypes.byref(value)),
                  "nvmlDeviceGetTotalEnergyConsumption")
            return value.value
        return read_mj, "ctypes libnvidia-ml.so.1"


def nvml_index():
    """NVML's index of the GPU when its UUID is not known: CUDA_VISIBLE_DEVICES's first if a number, else 0."""
    i = gpu_index()
    return int(i) if i.isdigit() else 0


def energy_cells(seconds, ops, joules, idle_w):
    """us_per_op, J_per_op, avg_W, J_per_op_above_idle and idle_W, formatted, of ops calls run in seconds
    of wall time that used joules (None on the CPU: those four cells '-'); idle_w the board's idle power
    (None: '-'). J_per_op_above_idle = J_per_op - idle_W x the op's time."""
    us_per_op = seconds * 1e6 / ops
    if joules is None:
        return fmt(us_per_op, 3), "-", "-", "-", fmt(idle_w, 1)
    j_per_op = joules / ops
    avg_w = joules / seconds
    above = None if idle_w is None else j_per_op - idle_w * us_per_op * 1e-6
    return (fmt(us_per_op, 3), f"{j_per_op:.6e}", fmt(avg_w, 1),
            "-" if above is None else f"{above:.6e}", fmt(idle_w, 1))


def idle_power(counter):
    """The board's idle power (W): the median of IDLE_WINDOWS windows of IDLE_WINDOW_S seconds with nothing
    running, after a half-second settle."""
    time.sleep(0.5)
    watts = []
    for _ in range(IDLE_WINDOWS):
        e0, t0 = counter.read(), time.perf_counter()
        time.sleep(IDLE_WINDOW_S)
        e1, t1 = counter.read(), time.perf_counter()
        watts.append((e1 - e0) / (t1 - t0))
    return statistics.median(watts)


def energy_call(dev, kind, a, b, k):
    """A function running one op with its output written in place (out=): kind 'gemm' (a=M, b=N, k=K:
    torch.matmul), or 'pointwise' (a = copy, add, relu as torch.clamp_min, gelu; b = elements)."""
    torch = dev.torch
    if kind == "gemm":
        x, y, out = dev.randn((a, k)), dev.randn((k, b)), dev.randn((a, b))
        return lambda: torch.matmul(x, y, out=out)
    x = dev.randn((b,))
    out = torch.empty_like(x)
    if a == "copy":
        return lambda: out.copy_(x)
    if a == "add":
        y = dev.randn((b,))
        return lambda: torch.add(x, y, out=out)
    if a == "relu":
        return lambda: torch.clamp_min(x, 0, out=out)
    try:
        torch._C._nn.gelu(x, out=out)
        return lambda: torch._C._nn.gelu(x, out=out)
    except (AttributeError, TypeError, RuntimeError):   # no out= variant: a new output per call
        return lambda: torch.nn.functional.gelu(x)


def run_energy_row(dev, args, call, counter):
    """(seconds, calls, joules) of about --energy-seconds of the op run back to back: on the GPU,
    ENERGY_CALLS_PER_GRAPH calls captured in one CUDA graph, replayed (after a warm-up of a sixth of
    that time), the counter read before and after; on the CPU, the calls in a loop and joules None."""
    calls = ENERGY_CALLS_PER_GRAPH

    def many():
        for _ in range(calls):
            call()
    if not dev.cuda:
        many()
        t0 = time.perf_counter()
        n = 0
        while True:
            many()
            n += 1
            if time.perf_counter() - t0 >= args.energy_seconds:
                break
        return time.perf_counter() - t0, n * calls, None
    torch = dev.torch
    graph, _ = dev.capture(many)
    try:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        replay_s = max(start.elapsed_time(end) / 1000.0, 1e-6)
        n = max(1, math.ceil(args.energy_seconds / replay_s))
        for _ in range(max(1, n // 6)):   # warm-up
            graph.replay()
        torch.cuda.synchronize()
        e0, t0 = counter.read(), time.perf_counter()
        for _ in range(n):
            graph.replay()
        torch.cuda.synchronize()
        t1, e1 = time.perf_counter(), counter.read()
        return t1 - t0, n * calls, e1 - e0
    finally:
        del graph
        torch.cuda.synchronize()


def measure_energy(dev, args, out):
    """energy.tsv's rows into out (a TsvRows): --energy-gemms, then --energy-ops on --energy-sizes elements.
    On a GPU without an NVML energy counter: SkipSet (a warning, no file). On the CPU: us_per_op only,
    the energy cells '-'. A row that fails (out of memory) is left out with a warning."""
    counter = None
    idle_w = None
    if dev.cuda:
        try:
            counter = EnergyCounter(dev.torch)
        except RuntimeError as e:
            raise SkipSet(f"no NVML energy counter ({e})")
        log(args, f"energy: NVML through {counter.how}; idle power over {IDLE_WINDOWS} x {IDLE_WINDOW_S:g} s")
        dev.sync()
        idle_w = idle_power(counter)
        log(args, f"energy: idle {idle_w:.1f} W")
    rows = [("gemm", m, n, k) for m, n, k in args.energy_gemms]
    rows += [("pointwise", op, e, 0) for e in args.energy_sizes for op in args.energy_ops]
    for i, (kind, a, b, k) in enumerate(rows, 1):
        if args.budget.stop("energy", i - 1, len(rows)):
            break
        what = f"M={a} N={b} K={k}" if kind == "gemm" else f"{a} on {b} elements"
        log(args, f"energy {i}/{len(rows)}: {kind} {what}")
        try:
            call = energy_call(dev, kind, a, b, k)
            seconds, ops, joules = run_energy_row(dev, args, call, counter)
        except Exception as e:   # noqa: BLE001 - out of memory, a capture failure: the row is left out
            warn(f"energy: {kind} {what}: {type(e).__name__}: {first_line(e)}; row left out")
            continue
        finally:
            call = None
        out.add((kind, a, b, k) + energy_cells(seconds, ops, joules, idle_w))
