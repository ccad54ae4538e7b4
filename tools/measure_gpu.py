#!/usr/bin/env python3
"""measure_gpu.py - time GEMMs, element-wise ops and whole contest problems op by op on this machine's GPU (PyTorch, CUDA) and write the measured-hardware TSV files.

usage: measure_gpu.py [-o DIR] [--sets LIST] [--problems PATH ...] [--quick] [options]
       measure_gpu.py --help

What it measures (every operand bf16; times in microseconds, each the
median of --reps measurements taken after --warmup calls):

  us_stream  the op launched back to back in one stream, time per call
             (CUDA events around N calls, N chosen so that a measurement
             lasts about --target-ms; small ops show the launch cost)
  us_graph   the op captured in a CUDA graph, the graph replayed back to
             back, time per replay (GPU time plus the per-graph overhead)
  us_sync    one call, then torch.cuda.synchronize(): wall time
             (time.perf_counter), launch latency included

Files written to DIR (tab-separated, one header line; the formats of the
H100 measurements in targets/measured/h100/, whose README explains them):

  env.tsv        key, value: device, gpu, sms, memory_bytes, torch, cuda,
                 l2_bytes, smem_per_block_optin, smem_per_sm, the nvidia-smi
                 clocks/power/driver line, then driver, capability, dtype,
                 date, python, compile, settings, command
  gemm.tsv       M N K us_stream us_graph us_sync tflops_stream: C[M,N] =
                 A[M,K] @ B[K,N] (torch.matmul); tflops_stream = 2MNK /
                 us_stream; default M, N, K in {128, 256, ..., 8192}
  pointwise.tsv  op ninputs elements us_stream us_graph gbps_stream: relu,
                 gelu (1 input), add (2), add3 (3 inputs, two adds), copy
                 (1) on 2^12, 2^14, ..., 2^28 elements; gbps_stream counts
                 the bytes of the inputs and the output
  graph_ops.tsv  problem op type out_w out_h K ninputs us_stream us_graph:
                 every op of every problem file (--problems, default the
                 project's benchmarks/) run as a real kernel: a tensor of
                 width W and height H is a [H, W] matrix; a MatMul is
                 torch.matmul(L, R) (K = width of L; 0 for other ops); a
                 Pointwise op with one input is relu, with n >= 2 inputs
                 the n - 1 adds that sum them (n - 1 kernels); a Layout op
                 (fusetile's extension) is a copy when its input and output
                 have one shape, else one gather kernel that maps output
                 rows and columns onto input rows and columns in proportion
                 (SPEC.md's Layout rule). Only the fields that say what
                 to run are read and checked (widths, heights, op_types,
                 inputs, outputs: SPEC.md section 1); ops run in a
                 topological order
  graphs.tsv     problem ops us_eager_stream us_cudagraph us_compiled
                 us_compiled_graph compile_s sum_op_graph_us: each problem
                 run whole, one kernel per op as above (n - 1 for an
                 n-input add), time per run: us_eager_stream back to back
                 in one stream; us_cudagraph the whole problem captured in
                 one CUDA graph, replayed; us_compiled and
                 us_compiled_graph the same function through torch.compile
                 (default mode, Inductor, which fuses element-wise ops), in
                 a stream and captured in a CUDA graph; compile_s the wall
                 time of the compiled function's first call (seconds);
                 sum_op_graph_us the sum of the problem's ops' us_graph

us_sync appears in gemm.tsv only, as in the H100 files.

A cell that was not measured holds "-" (never NaN): torch.compile
unavailable or failed (a line on stderr says why), CUDA graph capture
failed, or the CPU test mode below.

--device cpu is a test mode for machines without a GPU: the same code
paths, timed with time.perf_counter, on float32 tensors (bf16 matmul on a
CPU is slow or missing); CUDA graphs and torch.compile are skipped and
their columns are "-"; env.tsv says "device cpu" and a note. Its figures
are not GPU figures.

Files are written atomically (a temporary file in DIR, then os.replace),
each when its set is done: a killed run leaves whole files only. Progress
lines go to stderr.

Exit status: 0 done; 2 no CUDA GPU (or torch missing: one line on stderr,
nothing measured), bad arguments or a bad problem file (the message names
the file and field); 1 any other failure (a CUDA error, out of memory, a
file that cannot be written).
"""

import argparse
import datetime
import json
import math
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

PROG = "measure_gpu.py"
HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_PROBLEMS = os.path.join(os.path.dirname(HERE), "benchmarks")

SETS = ("env", "gemm", "pointwise", "graph_ops", "graphs")
POINTWISE_OPS = ("relu", "gelu", "add", "add3", "copy")
POINTWISE_NINPUTS = {"relu": 1, "gelu": 1, "add": 2, "add3": 3, "copy": 1}
OP_TYPES = ("MatMul", "Pointwise", "Layout")

# The header line of each file, as in targets/measured/h100/.
HEADERS = {
    "env": ("key", "value"),
    "gemm": ("M", "N", "K", "us_stream", "us_graph", "us_sync", "tflops_stream"),
    "pointwise": ("op", "ninputs", "elements", "us_stream", "us_graph", "gbps_stream"),
    "graph_ops": ("problem", "op", "type", "out_w", "out_h", "K", "ninputs", "us_stream", "us_graph"),
    "graphs": ("problem", "ops", "us_eager_stream", "us_cudagraph", "us_compiled", "us_compiled_graph",
               "compile_s", "sum_op_graph_us"),
}

DEFAULT_GEMM = [2 ** e for e in range(7, 14)]           # 128 .. 8192
DEFAULT_POINTWISE = [2 ** e for e in range(12, 29, 2)]  # 2^12 .. 2^28
QUICK_GEMM = [128, 256]
QUICK_POINTWISE = [2 ** 12, 2 ** 14, 2 ** 16]

MISSING = "-"   # a cell that was not measured

UMASK = os.umask(0o022)
os.umask(UMASK)


class UsageError(Exception):
    """A bad argument or problem file: exit status 2."""


def log(args, msg):
    """A progress line on stderr (none with --quiet)."""
    if not args.quiet:
        print(f"{PROG}: {msg}", file=sys.stderr, flush=True)


def warn(msg):
    print(f"{PROG}: warning: {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- arguments

def parse_size(text):
    """An element count: 4096, 2^12 or 2**12."""
    t = text.strip()
    for sep in ("^", "**"):
        if sep in t:
            base, _, exp = t.partition(sep)
            return int(base) ** int(exp)
    return int(t)


def size_list(text):
    try:
        sizes = [parse_size(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}': expected sizes separated by commas (4096, 2^12)")
    if not sizes or any(s < 1 for s in sizes):
        raise argparse.ArgumentTypeError(f"'{text}': sizes must be positive")
    return sizes


def choice_list(allowed):
    def parse(text):
        items = [s.strip() for s in text.split(",") if s.strip()]
        if items == ["all"]:
            return list(allowed)
        bad = [s for s in items if s not in allowed]
        if bad or not items:
            raise argparse.ArgumentTypeError(f"'{text}': expected 'all' or some of {', '.join(allowed)}")
        return [s for s in allowed if s in items]   # in the canonical order
    return parse


def positive_int(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number")
    if v < 1:
        raise argparse.ArgumentTypeError(f"'{text}' must be at least 1")
    return v


def nonneg_int(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number")
    if v < 0:
        raise argparse.ArgumentTypeError(f"'{text}' must be at least 0")
    return v


def positive_float(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number")
    if not v > 0 or math.isinf(v):
        raise argparse.ArgumentTypeError(f"'{text}' must be a positive number")
    return v


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Time GEMMs, element-wise ops and whole contest problems op by op on this machine's "
                    "GPU (PyTorch with CUDA, bf16) and write env.tsv, gemm.tsv, pointwise.tsv, graph_ops.tsv "
                    "and graphs.tsv in the formats of targets/measured/h100/. Without a CUDA GPU it says so "
                    "and exits 2.",
        epilog="Exit status: 0 done; 2 no CUDA GPU, bad arguments or a bad problem file; 1 other failures. "
               "Times are medians of --reps measurements after --warmup calls; see the script's docstring "
               "for each column.")
    p.add_argument("-o", "--output", metavar="DIR",
                   help="directory for the TSV files (created if missing; default: a new directory "
                        "measured-YYYYMMDD-HHMMSS here)")
    p.add_argument("--sets", type=choice_list(SETS), default=list(SETS), metavar="LIST",
                   help=f"comma-separated sets to measure: {', '.join(SETS)} or all (default all)")
    p.add_argument("--problems", nargs="+", metavar="PATH", default=[DEFAULT_PROBLEMS],
                   help="problem JSON files or directories of them (*.json), for graph_ops and graphs "
                        "(default: the project's benchmarks/)")
    p.add_argument("--gemm-sizes", type=size_list, metavar="LIST",
                   help="values of each of M, N and K (default 128,256,...,8192; --quick 128,256)")
    p.add_argument("--pointwise-sizes", type=size_list, metavar="LIST",
                   help="element counts (default 2^12,2^14,...,2^28; --quick 2^12,2^14,2^16)")
    p.add_argument("--pointwise-ops", type=choice_list(POINTWISE_OPS), default=list(POINTWISE_OPS),
                   metavar="LIST", help=f"element-wise ops: {', '.join(POINTWISE_OPS)} or all (default all)")
    p.add_argument("--reps", type=positive_int, metavar="N",
                   help="measurements per figure, whose median is written (default 7; --quick 3)")
    p.add_argument("--warmup", type=nonneg_int, metavar="N",
                   help="calls before the measurements of each figure (default 5; --quick 2)")
    p.add_argument("--target-ms", type=positive_float, metavar="MS",
                   help="a measurement runs enough back-to-back calls to last about this long "
                        "(default 2; --quick 0.5)")
    p.add_argument("--max-calls", type=positive_int, default=1000, metavar="N",
                   help="at most this many calls per measurement (default 1000)")
    p.add_argument("--no-compile", action="store_true",
                   help="skip torch.compile in graphs.tsv (its columns are '-')")
    p.add_argument("--quick", action="store_true",
                   help="small sizes and few repetitions: a check that everything runs, not a measurement")
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                   help="cuda (default), or cpu: a test mode for machines without a GPU (CPU wall times, "
                        "float32, no CUDA graphs or torch.compile; env.tsv says 'device cpu')")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    args = p.parse_args(argv)
    quick = args.quick
    if args.gemm_sizes is None:
        args.gemm_sizes = QUICK_GEMM if quick else DEFAULT_GEMM
    if args.pointwise_sizes is None:
        args.pointwise_sizes = QUICK_POINTWISE if quick else DEFAULT_POINTWISE
    if args.reps is None:
        args.reps = 3 if quick else 7
    if args.warmup is None:
        args.warmup = 2 if quick else 5
    if args.target_ms is None:
        args.target_ms = 0.5 if quick else 2.0
    return args


# ---------------------------------------------------------------- problems

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
    import heapq
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


# ---------------------------------------------------------------- timing

class Device:
    """The torch device, its element type and the three timings."""

    def __init__(self, torch, kind, args):
        self.torch = torch
        self.kind = kind
        self.cuda = kind == "cuda"
        self.dev = torch.device("cuda") if self.cuda else torch.device("cpu")
        self.dtype = torch.bfloat16 if self.cuda else torch.float32
        self.elem_bytes = torch.tensor([], dtype=self.dtype).element_size()
        self.reps = args.reps
        self.warmup = args.warmup
        self.target_us = args.target_ms * 1000.0
        self.max_calls = args.max_calls

    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize()

    def randn(self, shape):
        return self.torch.randn(shape, device=self.dev, dtype=self.dtype)

    def _measure(self, fn, n):
        """One measurement: n back-to-back calls of fn, microseconds per call."""
        if self.cuda:
            ev = self.torch.cuda.Event
            start, end = ev(enable_timing=True), ev(enable_timing=True)
            start.record()
            for _ in range(n):
                fn()
            end.record()
            end.synchronize()
            return start.elapsed_time(end) * 1000.0 / n
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        return (time.perf_counter() - t0) * 1e6 / n

    def per_call(self, fn):
        """Median time per call of fn run back to back, after the warm-up (us)."""
        for _ in range(self.warmup):
            fn()
        self.sync()
        estimate = self._measure(fn, 2)
        n = max(1, min(self.max_calls, int(self.target_us / max(estimate, 1e-3))))
        return statistics.median(self._measure(fn, n) for _ in range(self.reps))

    def sync_wall(self, fn):
        """Median wall time of one call followed by a synchronize (us)."""
        for _ in range(self.warmup):
            fn()
        times = []
        for _ in range(self.reps):
            self.sync()
            t0 = time.perf_counter()
            fn()
            self.sync()
            times.append((time.perf_counter() - t0) * 1e6)
        return statistics.median(times)

    def capture(self, fn):
        """(graph, its outputs) of fn captured in a CUDA graph, warmed up on a side stream first."""
        torch = self.torch
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(max(2, self.warmup)):
                fn()
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            out = fn()
        torch.cuda.synchronize()
        return graph, out

    def per_replay(self, fn):
        """Median time per replay of fn captured in a CUDA graph (us); None on the CPU (no graphs)."""
        if not self.cuda:
            return None
        graph, out = self.capture(fn)
        try:
            return self.per_call(graph.replay)
        finally:
            self.sync()
            del graph, out


def fmt(v, digits):
    return MISSING if v is None else f"{v:.{digits}f}"


# ---------------------------------------------------------------- ops

def op_function(dev, kind, in_shapes, out_shape):
    """The op as a function of its input tensors: MatMul, Pointwise (relu or n-1 adds), Layout (copy or gather)."""
    torch = dev.torch
    if kind == "MatMul":
        return torch.matmul
    if kind == "Pointwise":
        if len(in_shapes) == 1:
            return torch.relu

        def add_all(*xs):
            acc = xs[0] + xs[1]
            for x in xs[2:]:
                acc = acc + x
            return acc
        return add_all
    # Layout: output row i reads input row floor(i * Hx / Ho); columns alike.
    in_h, in_w = in_shapes[0]
    out_h, out_w = out_shape
    if (in_h, in_w) == (out_h, out_w):
        return torch.clone
    rows = torch.div(torch.arange(out_h, device=dev.dev) * in_h, out_h, rounding_mode="floor").view(out_h, 1)
    cols = torch.div(torch.arange(out_w, device=dev.dev) * in_w, out_w, rounding_mode="floor").view(1, out_w)
    return lambda x: x[rows, cols]


def problem_steps(dev, pr):
    """(function, input tensor indices, output tensor index) per op, in the problem's topological order."""
    steps = {}
    for o in pr.order:
        shapes = [pr.shape(t) for t in pr.inputs[o]]
        fn = op_function(dev, pr.op_types[o], shapes, pr.shape(pr.outputs[o]))
        steps[o] = (fn, tuple(pr.inputs[o]), pr.outputs[o])
    return steps


def problem_function(dev, pr):
    """The whole problem as fn(*graph_inputs) -> graph outputs, one kernel per op (n-1 for an n-input add)."""
    steps = problem_steps(dev, pr)
    produced = set(pr.outputs)
    consumed = {t for ins in pr.inputs for t in ins}
    graph_inputs = [t for t in range(len(pr.widths)) if t not in produced]
    graph_outputs = [t for t in range(len(pr.widths)) if t not in consumed]
    last_use = {}
    for pos, o in enumerate(pr.order):
        for t in pr.inputs[o]:
            last_use[t] = pos
    free_after = [[] for _ in pr.order]
    for t, pos in last_use.items():
        if t not in graph_outputs:
            free_after[pos].append(t)
    plan = [(steps[o][0], steps[o][1], steps[o][2], tuple(free_after[pos])) for pos, o in enumerate(pr.order)]
    outputs = tuple(graph_outputs)

    def run(*xs):
        vals = dict(zip(graph_inputs, xs))
        for fn, ins, out, free in plan:
            vals[out] = fn(*[vals[t] for t in ins])
            for t in free:
                del vals[t]
        return tuple(vals[t] for t in outputs)

    return run, [dev.randn(pr.shape(t)) for t in graph_inputs]


# ---------------------------------------------------------------- the sets

def measure_env(dev, args, argv):
    torch = dev.torch
    rows = [("device", dev.kind)]
    if dev.cuda:
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        smi = nvidia_smi()
        rows += [
            ("gpu", props.name),
            ("sms", props.multi_processor_count),
            ("memory_bytes", props.total_memory),
            ("torch", torch.__version__),
            ("cuda", torch.version.cuda or MISSING),
            ("l2_bytes", getattr(props, "L2_cache_size", MISSING)),
            ("smem_per_block_optin", getattr(props, "shared_memory_per_block_optin", MISSING)),
            ("smem_per_sm", getattr(props, "shared_memory_per_multiprocessor", MISSING)),
            ("nvidia_smi max_sm_MHz,max_mem_MHz,sm_MHz,power_limit,driver", smi or MISSING),
            ("driver", smi.rsplit(",", 1)[-1].strip() if smi else MISSING),
            ("capability", f"{props.major}.{props.minor}"),
            ("dtype", "bfloat16"),
        ]
    else:
        rows += [
            ("gpu", "none"),
            ("cpu", cpu_model()),
            ("cpu_threads", torch.get_num_threads()),
            ("memory_bytes", physical_memory()),
            ("torch", torch.__version__),
            ("cuda", torch.version.cuda or MISSING),
            ("dtype", "float32"),
            ("note", "test mode (--device cpu): CPU wall times (time.perf_counter) on float32 tensors; "
                     "no CUDA graphs or torch.compile: those columns are '-'; not GPU figures"),
        ]
    rows += [
        ("date", datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")),
        ("python", platform.python_version()),
        ("compile", compile_state(dev, args)),
        ("settings", f"reps {args.reps}, warmup {args.warmup}, target_ms {args.target_ms:g}, "
                     f"max_calls {args.max_calls}{', quick' if args.quick else ''}"),
        ("command", " ".join(shlex.quote(a) for a in [PROG] + argv)),
    ]
    return [(k, clean(v)) for k, v in rows]


def clean(v):
    """A TSV cell: no tabs or line breaks."""
    return " ".join(str(v).split())


def nvidia_smi():
    """nvidia-smi's max SM clock, max memory clock, SM clock, power limit and driver, or None."""
    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=clocks.max.sm,clocks.max.mem,clocks.sm,power.limit,"
                            "driver_version", "--format=csv,noheader", "--id=" + gpu_index()],
                           capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    line = r.stdout.strip().splitlines()
    return line[0].strip() if r.returncode == 0 and line else None


def gpu_index():
    """The physical index of the GPU torch uses: the first of CUDA_VISIBLE_DEVICES, else 0."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
    return visible if visible else "0"


def cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or MISSING


def physical_memory():
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return MISSING


def compile_state(dev, args):
    if not dev.cuda:
        return "skipped (--device cpu)"
    if args.no_compile:
        return "skipped (--no-compile)"
    if not hasattr(dev.torch, "compile"):
        return "unavailable (this torch has no torch.compile)"
    return "torch.compile (default mode, Inductor)"


def measure_gemm(dev, args):
    torch = dev.torch
    sizes = args.gemm_sizes
    configs = [(m, n, k) for m in sizes for n in sizes for k in sizes]
    rows = []
    for i, (m, n, k) in enumerate(configs, 1):
        log(args, f"gemm {i}/{len(configs)}: M={m} N={n} K={k}")
        a, b = dev.randn((m, k)), dev.randn((k, n))

        def call():
            return torch.matmul(a, b)
        us_stream = dev.per_call(call)
        us_graph = dev.per_replay(call)
        us_sync = dev.sync_wall(call)
        tflops = 2.0 * m * n * k / us_stream / 1e6
        rows.append((m, n, k, fmt(us_stream, 3), fmt(us_graph, 3), fmt(us_sync, 1), fmt(tflops, 1)))
    return rows


def pointwise_call(dev, op, n):
    torch = dev.torch
    xs = [dev.randn((n,)) for _ in range(POINTWISE_NINPUTS[op])]
    if op == "relu":
        return lambda: torch.relu(xs[0])
    if op == "gelu":
        return lambda: torch.nn.functional.gelu(xs[0])
    if op == "add":
        return lambda: xs[0] + xs[1]
    if op == "add3":
        return lambda: xs[0] + xs[1] + xs[2]
    out = torch.empty_like(xs[0])
    return lambda: out.copy_(xs[0])


def measure_pointwise(dev, args):
    configs = [(op, n) for n in args.pointwise_sizes for op in args.pointwise_ops]
    rows = []
    for i, (op, n) in enumerate(configs, 1):
        log(args, f"pointwise {i}/{len(configs)}: {op} on {n} elements")
        call = pointwise_call(dev, op, n)
        us_stream = dev.per_call(call)
        us_graph = dev.per_replay(call)
        nbytes = (POINTWISE_NINPUTS[op] + 1) * n * dev.elem_bytes
        rows.append((op, POINTWISE_NINPUTS[op], n, fmt(us_stream, 3), fmt(us_graph, 3),
                     fmt(nbytes / us_stream / 1000.0, 1)))
    return rows


def measure_graph_ops(dev, args, problems, op_graph_us):
    """graph_ops.tsv rows; op_graph_us[problem name] gets the ops' us_graph (None on the CPU)."""
    total = sum(len(pr.op_types) for pr in problems)
    rows = []
    i = 0
    for pr in problems:
        steps = problem_steps(dev, pr)
        graph_us = []
        for o in range(len(pr.op_types)):
            i += 1
            kind = pr.op_types[o]
            out = pr.outputs[o]
            log(args, f"graph_ops {i}/{total}: {pr.name} op {o} ({kind} {pr.widths[out]}x{pr.heights[out]})")
            fn, ins, _ = steps[o]
            tensors = {t: dev.randn(pr.shape(t)) for t in ins}
            operands = [tensors[t] for t in ins]

            def call():
                return fn(*operands)
            us_stream = dev.per_call(call)
            us_graph = dev.per_replay(call)
            graph_us.append(us_graph)
            rows.append((pr.name, o, kind, pr.widths[out], pr.heights[out], pr.op_k(o), len(ins),
                         fmt(us_stream, 3), fmt(us_graph, 3)))
        op_graph_us[pr.name] = graph_us
    return rows


def measure_op_graphs_only(dev, args, pr):
    """The ops' us_graph of one problem, for sum_op_graph_us when graph_ops is not measured."""
    if not dev.cuda:
        return [None] * len(pr.op_types)
    steps = problem_steps(dev, pr)
    out = []
    for o in range(len(pr.op_types)):
        log(args, f"graphs: {pr.name} op {o}/{len(pr.op_types)} alone, for sum_op_graph_us")
        fn, ins, _ = steps[o]
        tensors = {t: dev.randn(pr.shape(t)) for t in ins}
        operands = [tensors[t] for t in ins]
        out.append(dev.per_replay(lambda: fn(*operands)))
    return out


def measure_compiled(dev, args, pr, run, xs):
    """(us_compiled, us_compiled_graph, compile_s) of the problem through torch.compile; '-' cells on failure."""
    torch = dev.torch
    state = compile_state(dev, args)
    if not state.startswith("torch.compile"):
        return None, None, None
    try:
        import torch._dynamo
        torch._dynamo.reset()   # every problem is compiled afresh, not against another's cache
        compiled = torch.compile(run)
        log(args, f"graphs: {pr.name}: compiling")
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        compiled(*xs)
        torch.cuda.synchronize()
        compile_s = time.perf_counter() - t0
        us_compiled = dev.per_call(lambda: compiled(*xs))
    except Exception as e:   # noqa: BLE001 - any compiler failure leaves '-' cells, with the reason
        warn(f"graphs: {pr.name}: torch.compile failed ({type(e).__name__}: {first_line(e)}); "
             "us_compiled, us_compiled_graph and compile_s written as '-'")
        return None, None, None
    try:
        us_compiled_graph = dev.per_replay(lambda: compiled(*xs))
    except Exception as e:   # noqa: BLE001
        warn(f"graphs: {pr.name}: capturing the compiled function in a CUDA graph failed "
             f"({type(e).__name__}: {first_line(e)}); us_compiled_graph written as '-'")
        us_compiled_graph = None
    return us_compiled, us_compiled_graph, compile_s


def first_line(e):
    text = str(e).strip().splitlines()
    return text[0] if text else "no message"


def measure_graphs(dev, args, problems, op_graph_us):
    rows = []
    for i, pr in enumerate(problems, 1):
        log(args, f"graphs {i}/{len(problems)}: {pr.name} ({len(pr.op_types)} ops)")
        run, xs = problem_function(dev, pr)
        us_eager = dev.per_call(lambda: run(*xs))
        us_cudagraph = None
        if dev.cuda:
            try:
                us_cudagraph = dev.per_replay(lambda: run(*xs))
            except Exception as e:   # noqa: BLE001
                warn(f"graphs: {pr.name}: CUDA graph capture failed ({type(e).__name__}: {first_line(e)}); "
                     "us_cudagraph written as '-'")
        us_compiled, us_compiled_graph, compile_s = measure_compiled(dev, args, pr, run, xs)
        graph_us = op_graph_us.get(pr.name)
        if graph_us is None:
            graph_us = measure_op_graphs_only(dev, args, pr)
        sum_graph = None if any(v is None for v in graph_us) else sum(graph_us)
        rows.append((pr.name, len(pr.op_types), fmt(us_eager, 3), fmt(us_cudagraph, 3), fmt(us_compiled, 3),
                     fmt(us_compiled_graph, 3), fmt(compile_s, 1), fmt(sum_graph, 3)))
    return rows


# ---------------------------------------------------------------- output

def write_tsv(directory, name, rows):
    """DIR/NAME.tsv: the header line, then the rows; atomically (a temporary file, then os.replace)."""
    path = os.path.join(directory, name + ".tsv")
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=directory)
    try:
        os.chmod(tmp, 0o666 & ~UMASK)   # mkstemp makes it 0600; a plain file's mode instead
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write("\t".join(HEADERS[name]) + "\n")
            for row in rows:
                f.write("\t".join(str(c) for c in row) + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path


def open_torch(device):
    """torch, with the requested device usable; else the one-line no-GPU message and exit status 2."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import torch
    except Exception as e:   # noqa: BLE001 - a broken install is as good as none here
        what = "CUDA GPU" if device == "cuda" else "torch"
        print(f"{PROG}: no {what} found (torch not importable: {first_line(e)}); nothing measured",
              file=sys.stderr)
        sys.exit(2)
    if device == "cuda":
        try:
            ok = torch.cuda.is_available() and torch.cuda.device_count() > 0
        except Exception:   # noqa: BLE001
            ok = False
        if not ok:
            why = "" if torch.version.cuda else ": this torch is built without CUDA"
            print(f"{PROG}: no CUDA GPU found (torch {torch.__version__}, CUDA not available{why}); "
                  "nothing measured", file=sys.stderr)
            sys.exit(2)
    return torch


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    torch = open_torch(args.device)
    try:
        problems = find_problems(args.problems) if {"graph_ops", "graphs"} & set(args.sets) else []
        outdir = args.output
        if outdir is None:
            stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
            outdir = f"measured-{stamp}" + ("-cpu" if args.device == "cpu" else "")
        try:
            os.makedirs(outdir, exist_ok=True)
        except OSError as e:
            raise UsageError(f"{outdir}: -o: cannot create the directory: {e.strerror}")
    except UsageError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2

    dev = Device(torch, args.device, args)
    torch.manual_seed(0)
    if args.device == "cpu":
        log(args, "--device cpu: test mode, CPU wall times on float32, no CUDA graphs or torch.compile")
    op_graph_us = {}
    current = "env"
    try:
        with torch.no_grad():
            for name in args.sets:
                current = name
                if name == "env":
                    rows = measure_env(dev, args, argv)
                elif name == "gemm":
                    rows = measure_gemm(dev, args)
                elif name == "pointwise":
                    rows = measure_pointwise(dev, args)
                elif name == "graph_ops":
                    rows = measure_graph_ops(dev, args, problems, op_graph_us)
                else:
                    rows = measure_graphs(dev, args, problems, op_graph_us)
                path = write_tsv(outdir, name, rows)
                log(args, f"wrote {path} ({len(rows)} rows)")
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted while measuring {current}; the files written before are whole",
              file=sys.stderr)
        return 1
    except Exception as e:   # noqa: BLE001 - CUDA errors, out of memory, write errors: status 1
        print(f"{PROG}: {current}: {type(e).__name__}: {first_line(e)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
