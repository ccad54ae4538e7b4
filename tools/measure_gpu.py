#!/usr/bin/env python3
"""measure_gpu.py - time GEMMs, element-wise ops and whole contest problems op by op on this machine's GPU (PyTorch, CUDA) and write the measured-hardware TSV files; on request also odd GEMM shapes, torchvision models whole, kernel by kernel and conv by conv, and energy per op.

usage: measure_gpu.py [-o DIR] [--sets LIST] [--problems PATH ...] [--quick] [--budget-s S] [options]
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

us_sync appears in gemm.tsv and odd_gemm.tsv only, as in the H100 files.

--sets picks the sets (files); they run in the order below whatever the
order given. 'all', the default, is the five above; 'extra' the five
below; 'everything' all ten. The five below are written as they go:
each rewrites its file (atomically) with the rows so far at most every
--checkpoint-s seconds (20) and when it ends, so a killed run keeps most
of the set under way too; a row that fails (out of memory, a CUDA graph
that cannot be captured) gets '-' cells and a warning, and a set that
fails as a whole writes the rows it has, says why, and the run goes on
with the next set (exit status 1 at the end).

  odd_gemm.tsv   M N K source us_stream us_graph us_sync tflops_graph:
                 GEMMs of odd and misaligned shapes timed as in gemm.tsv;
                 tflops_graph = 2MNK / us_graph. Shapes: --odd-gemm-count
                 (300) random ones, each axis log-uniform in
                 --odd-gemm-range (16..16384) drawn with --seed (0), every
                 third with K, N or both not a multiple of 8 (M as drawn),
                 the others all multiples of 8 (source "random"); each
                 distinct MatMul of --odd-gemm-problems (the project's
                 examples/*.problem.json; [H,W] = L[H,K] @ R[K,W] is M = H,
                 N = W; source the file's name less .problem.json); and
                 real layers (source network.layer.size: d768.* for
                 BERT-base/ViT-B/GPT-2 at 128, 197, 512 and 4096 tokens,
                 llama7b.* at 1, 16, 128, 2048 tokens, the LM heads
                 gpt2.lm_head (vocabulary 50257) and llama7b.lm_head, CNN
                 layers as implicit GEMMs, M = batch x output pixels, K =
                 in_ch x kh x kw, at batch 1 and 32). A shape whose 2MNK
                 exceeds --odd-gemm-max-flop (2e12) is left out (a random
                 one is drawn again); a shape of two sources is one row,
                 its sources joined by commas; the rows are shuffled with
                 --seed, so a run cut short still has a mix
  models.tsv     model batch us_eager us_cudagraph us_compiled compile_s
                 params, as targets/measured/h100/'s: each torchvision model
                 of --models at each batch of --model-batches (1,32),
                 weights=None, eval mode, torch.no_grad(), input batch x 3
                 x S x S (S = --image-size, 224) from randn: us_eager one
                 forward from Python back to back, time per call;
                 us_cudagraph the forward captured in one CUDA graph,
                 replayed; us_compiled and compile_s through torch.compile
                 (default mode, compiled afresh for each batch; '-' with
                 --no-compile); params the parameter count
  conv.tsv       model layer uses batch in_ch out_ch kh kw stride pad
                 dilation groups bias in_h in_w out_h out_w us_stream
                 us_graph: the convolutions of each model of --conv-models
                 as cuDNN runs them in eager PyTorch
                 (torch.nn.functional.conv2d, channels first, cuDNN's
                 default algorithm choice): one row per distinct
                 convolution of the model (found by forward hooks on its
                 Conv2d modules in one forward at batch 1, S x S) and batch
                 of --conv-batches (1,32); layer is the first module that
                 runs it, uses how many calls of the forward do; stride,
                 pad and dilation are one number when square (else HxW);
                 bias 1 or 0. A convolution two models share is timed once
                 and written for both. Sum us_graph x uses over a model's
                 rows for its convolutions' time
  energy.tsv     kind M_or_op N_or_elements K us_per_op J_per_op avg_W
                 J_per_op_above_idle idle_W, as targets/measured/h100/'s:
                 NVML's total-energy counter (pynvml from nvidia-ml-py,
                 else ctypes on libnvidia-ml.so.1) read before and after
                 about --energy-seconds (0.6) of back-to-back replays of a
                 CUDA graph of 64 calls of the op (after a warm-up of a
                 sixth of that); us_per_op = wall time / calls; J_per_op
                 whole board; avg_W = J / wall time; J_per_op_above_idle =
                 J_per_op - idle_W x the op's time; idle_W the median of
                 three 1-s windows with nothing running, measured once
                 when the set starts. Rows: kind gemm (M N K, torch.matmul
                 with out=) for --energy-gemms (13 shapes: squares 512 ..
                 8192, real layers, misaligned, skinny), then kind
                 pointwise (op, elements, K 0: copy, add, relu as
                 torch.clamp_min, gelu, each with out=) for --energy-ops
                 on --energy-sizes (2^20, 2^22, ..., 2^28). Without an NVML
                 energy counter: a warning and no file
  model_kernels.tsv  model batch index kernel_name us: for each model and
                 batch of the models set, every kernel of one forward
                 (after two unprofiled ones), without CUDA graphs, as
                 torch.profiler records it on the GPU (memory copies and
                 sets too), in start order from index 0, the name cut to
                 120 characters, us its GPU time. torch.profiler failing
                 or recording nothing on the first forward: a warning and
                 no file. It is the last set so that the profiler cannot
                 disturb the timings of the others

--budget-s S: no row is started once S seconds have passed since the
start (torch's import included); the set under way writes what it has,
later sets are not started, each cut is a warning and env.tsv (rewritten)
says what was cut in its settings ("truncated: odd_gemm 120/370 rows;
energy not started"). SIGTERM (timeout(1)) and Ctrl-C alike write the
rows of the set under way and say so in env.tsv; exit status 1.

A cell that was not measured holds "-" (never NaN): torch.compile
unavailable or failed (a line on stderr says why), CUDA graph capture
failed, or the CPU test mode below.

--device cpu is a test mode for machines without a GPU: the same code
paths, timed with time.perf_counter, on float32 tensors (bf16 matmul on a
CPU is slow or missing); CUDA graphs and torch.compile are skipped and
their columns are "-"; env.tsv says "device cpu" and a note. energy.tsv
then has us_per_op (the 64 calls in a Python loop) and '-' energy cells;
model_kernels.tsv the top-level operators torch.profiler records on the
CPU. Its figures are not GPU figures; --image-size, --models and
--conv-models make the torchvision sets small enough for a test.

Files are written atomically (a temporary file in DIR, then os.replace),
each when its set is done (the five extra sets also on the way): a killed
run leaves whole files only. Progress lines go to stderr; the long sets
(odd_gemm, conv) print one every 25 rows.

The code is in gpumeasure/, next to this script (its __init__.py lists the
modules); this script is the command line's entry point.

Exit status: 0 done (also when --budget-s cut sets short, or the energy
set found no NVML); 2 no CUDA GPU (or torch missing: one line on stderr,
nothing measured), bad arguments, a bad problem file (the message names
the file and field) or a model torchvision lacks (one line, nothing
measured); 1 any other failure (a CUDA error, out of memory, a file that
cannot be written, an interrupt).
"""

import datetime
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))   # gpumeasure/, next to this script

from gpumeasure.args import parse_args  # noqa: E402
from gpumeasure.common import PROG, SkipSet, UsageError, first_line, log, warn  # noqa: E402
from gpumeasure.device import Device, open_torch  # noqa: E402
from gpumeasure.energy import energy_cells, measure_energy  # noqa: E402
from gpumeasure.env import measure_env, settings_text  # noqa: E402
from gpumeasure.nets import measure_conv, measure_model_kernels, measure_models, open_torchvision  # noqa: E402
from gpumeasure.ops import problem_function  # noqa: E402
from gpumeasure.output import TsvRows, write_tsv  # noqa: E402
from gpumeasure.problems import find_problems, load_problem  # noqa: E402
from gpumeasure.sets import (measure_gemm, measure_graph_ops, measure_graphs, measure_odd_gemm,  # noqa: E402
                             measure_pointwise)
from gpumeasure.shapes import odd_gemm_shapes  # noqa: E402

# main, and what tests/python/test_measure_gpu.py uses through this script
__all__ = ["main", "parse_args", "load_problem", "find_problems", "problem_function", "Device", "UsageError",
           "write_tsv", "TsvRows", "odd_gemm_shapes", "energy_cells"]

# The sets whose rows are written as they go (TsvRows): set name -> fn(dev, args, rows).
ROW_SETS = {"odd_gemm": measure_odd_gemm, "models": measure_models, "conv": measure_conv,
            "energy": measure_energy, "model_kernels": measure_model_kernels}


def check_inputs(args):
    """What a run reads besides the command line, checked before anything is measured (UsageError):
    the problem files, the example problems' MatMul shapes, the torchvision models. The problems."""
    problems = find_problems(args.problems) if {"graph_ops", "graphs"} & set(args.sets) else []
    if "odd_gemm" in args.sets:
        odd_gemm_shapes(args)
    if {"models", "model_kernels"} & set(args.sets):
        open_torchvision(args.models, "--models")
    if "conv" in args.sets:
        open_torchvision(args.conv_models, "--conv-models")
    return problems


def terminated(signum, frame):
    """SIGTERM (timeout(1), a batch system) as Ctrl-C: the set under way writes the rows it has."""
    raise KeyboardInterrupt


def main(argv=None):
    """The command line's entry point: the exit status (see the module docstring)."""
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    torch = open_torch(args.device)
    try:
        problems = check_inputs(args)
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

    signal.signal(signal.SIGTERM, terminated)
    dev = Device(torch, args.device, args)
    torch.manual_seed(0)
    if args.device == "cpu":
        log(args, "--device cpu: test mode, CPU wall times on float32, no CUDA graphs or torch.compile")
    op_graph_us = {}
    env_rows = []
    status = 0
    rows = None
    current = "env"

    def note_env():
        """env.tsv again, its settings saying what the budget, a failure or an interrupt cut."""
        if env_rows:
            env_rows[:] = [(k, settings_text(args) if k == "settings" else v) for k, v in env_rows]
            write_tsv(outdir, "env", env_rows)

    try:
        with torch.no_grad():
            for name in args.sets:
                current = name
                cuts = len(args.budget.notes)
                if args.budget.passed():
                    args.budget.skip(name)
                elif name in ROW_SETS:
                    rows = TsvRows(outdir, name, args.checkpoint_s, lambda msg: log(args, msg))
                    try:
                        ROW_SETS[name](dev, args, rows)
                    except SkipSet as e:
                        warn(f"{name}: {e}; {name}.tsv not written")
                        rows = None
                        continue
                    except Exception as e:   # noqa: BLE001 - write what the set has, go on with the next
                        print(f"{PROG}: {name}: {type(e).__name__}: {first_line(e)}", file=sys.stderr)
                        args.budget.cut(name, f"failed after {len(rows)} rows", "see the error above")
                        status = 1
                    path = rows.write()
                    log(args, f"wrote {path} ({len(rows)} rows)")
                    rows = None
                else:
                    if name == "env":
                        env_rows = out = measure_env(dev, args, argv)
                    elif name == "gemm":
                        out = measure_gemm(dev, args)
                    elif name == "pointwise":
                        out = measure_pointwise(dev, args)
                    elif name == "graph_ops":
                        out = measure_graph_ops(dev, args, problems, op_graph_us)
                    else:
                        out = measure_graphs(dev, args, problems, op_graph_us)
                    path = write_tsv(outdir, name, out)
                    log(args, f"wrote {path} ({len(out)} rows)")
                if len(args.budget.notes) > cuts:
                    note_env()
    except KeyboardInterrupt:
        what = "the files written before are whole"
        if rows is not None:
            args.budget.cut(current, f"interrupted after {len(rows)} rows", "interrupted")
            path = rows.write()
            what += f"; wrote the {len(rows)} rows of {current} measured so far to {path}"
            note_env()
        print(f"{PROG}: interrupted while measuring {current}; {what}", file=sys.stderr)
        return 1
    except Exception as e:   # noqa: BLE001 - CUDA errors, out of memory, write errors: status 1
        print(f"{PROG}: {current}: {type(e).__name__}: {first_line(e)}", file=sys.stderr)
        return 1
    return status


if __name__ == "__main__":
    sys.exit(main())
