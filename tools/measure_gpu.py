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

The code is in gpumeasure/, next to this script (its __init__.py lists the
modules); this script is the command line's entry point.

Exit status: 0 done; 2 no CUDA GPU (or torch missing: one line on stderr,
nothing measured), bad arguments or a bad problem file (the message names
the file and field); 1 any other failure (a CUDA error, out of memory, a
file that cannot be written).
"""

import datetime
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))   # gpumeasure/, next to this script

from gpumeasure.args import parse_args  # noqa: E402
from gpumeasure.common import PROG, UsageError, first_line, log  # noqa: E402
from gpumeasure.device import Device, open_torch  # noqa: E402
from gpumeasure.env import measure_env  # noqa: E402
from gpumeasure.ops import problem_function  # noqa: E402
from gpumeasure.output import write_tsv  # noqa: E402
from gpumeasure.problems import find_problems, load_problem  # noqa: E402
from gpumeasure.sets import measure_gemm, measure_graph_ops, measure_graphs, measure_pointwise  # noqa: E402

# main, and what tests/python/test_measure_gpu.py uses through this script
__all__ = ["main", "parse_args", "load_problem", "find_problems", "problem_function", "Device", "UsageError",
           "write_tsv"]


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
