"""common.py - gpumeasure's constants (sets, ops, file headers, default sizes), UsageError, progress and warning lines, and TSV cell formatting."""

import os
import sys

PROG = "measure_gpu.py"
HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_PROBLEMS = os.path.join(os.path.dirname(os.path.dirname(HERE)), "benchmarks")

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


def fmt(v, digits):
    return MISSING if v is None else f"{v:.{digits}f}"


def clean(v):
    """A TSV cell: no tabs or line breaks."""
    return " ".join(str(v).split())


def first_line(e):
    text = str(e).strip().splitlines()
    return text[0] if text else "no message"
