"""common.py - gpumeasure's constants (sets, ops, file headers, default sizes and lists), UsageError and SkipSet, progress and warning lines, and TSV cell formatting."""

import os
import sys

PROG = "measure_gpu.py"
HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.path.dirname(os.path.dirname(HERE))
DEFAULT_PROBLEMS = os.path.join(SRCDIR, "benchmarks")
DEFAULT_EXAMPLES = os.path.join(SRCDIR, "examples")

# Every set, in the order a run measures them. 'all' (the default) is the
# first five; 'extra' the five after them; 'everything' all ten.
SETS = ("env", "gemm", "pointwise", "graph_ops", "graphs", "odd_gemm", "models", "conv", "energy",
        "model_kernels")
SET_ALIASES = {"all": SETS[:5], "extra": SETS[5:], "everything": SETS}
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
    "odd_gemm": ("M", "N", "K", "source", "us_stream", "us_graph", "us_sync", "tflops_graph"),
    "conv": ("model", "layer", "uses", "batch", "in_ch", "out_ch", "kh", "kw", "stride", "pad", "dilation",
             "groups", "bias", "in_h", "in_w", "out_h", "out_w", "us_stream", "us_graph"),
    "models": ("model", "batch", "us_eager", "us_cudagraph", "us_compiled", "compile_s", "params"),
    "model_kernels": ("model", "batch", "index", "kernel_name", "us"),
    "energy": ("kind", "M_or_op", "N_or_elements", "K", "us_per_op", "J_per_op", "avg_W", "J_per_op_above_idle",
               "idle_W"),
}

DEFAULT_GEMM = [2 ** e for e in range(7, 14)]           # 128 .. 8192
DEFAULT_POINTWISE = [2 ** e for e in range(12, 29, 2)]  # 2^12 .. 2^28
QUICK_GEMM = [128, 256]
QUICK_POINTWISE = [2 ** 12, 2 ** 14, 2 ** 16]

# odd_gemm: random shapes drawn log-uniform in ODD_GEMM_RANGE on each axis;
# no shape of any source above ODD_GEMM_MAX_FLOP (2MNK) is measured.
ODD_GEMM_COUNT = 300
QUICK_ODD_GEMM_COUNT = 20
ODD_GEMM_RANGE = (16, 16384)
ODD_GEMM_MAX_FLOP = 2e12

# models, model_kernels and conv: torchvision models (weights=None).
DEFAULT_MODELS = ("resnet18", "resnet34", "resnet50", "mobilenet_v2", "mobilenet_v3_large", "efficientnet_b0",
                  "shufflenet_v2_x1_0", "densenet121", "convnext_tiny", "regnet_y_400mf", "vit_b_16", "swin_t")
QUICK_MODELS = ("resnet18",)
DEFAULT_CONV_MODELS = ("resnet18", "resnet50", "mobilenet_v2", "vit_b_16", "efficientnet_b0", "convnext_tiny")
QUICK_CONV_MODELS = ("resnet18",)
DEFAULT_BATCHES = [1, 32]
QUICK_BATCHES = [1]
IMAGE_SIZE = 224
KERNEL_NAME_CHARS = 120     # model_kernels.tsv: kernel names cut to this many characters

# energy: NVML's total-energy counter around back-to-back CUDA-graph replays.
ENERGY_OPS = ("copy", "add", "relu", "gelu")
ENERGY_CALLS_PER_GRAPH = 64
ENERGY_SECONDS = 0.6
IDLE_WINDOWS = 3            # idle_W: the median of this many windows of IDLE_WINDOW_S seconds
IDLE_WINDOW_S = 1.0
DEFAULT_ENERGY_SIZES = [2 ** e for e in range(20, 29, 2)]   # 2^20 .. 2^28
QUICK_ENERGY_SIZES = [2 ** 16, 2 ** 20]
QUICK_ENERGY_GEMMS = [(512, 512, 512), (1000, 1000, 1000)]

CHECKPOINT_S = 20.0         # a set's file is rewritten with the rows so far at most this often
PROGRESS_EVERY = 25         # odd_gemm and conv: a progress line every this many rows

MISSING = "-"   # a cell that was not measured

UMASK = os.umask(0o022)
os.umask(UMASK)


class UsageError(Exception):
    """A bad argument or problem file: exit status 2."""


class SkipSet(Exception):
    """A set that cannot be measured here (energy without NVML): a warning, no file, exit status unchanged."""


def log(args, msg):
    """A progress line on stderr (none with --quiet)."""
    if not args.quiet:
        print(f"{PROG}: {msg}", file=sys.stderr, flush=True)


def warn(msg):
    """A warning line on stderr (also with --quiet)."""
    print(f"{PROG}: warning: {msg}", file=sys.stderr, flush=True)


def fmt(v, digits):
    """A number with this many decimals, or '-' for None."""
    return MISSING if v is None else f"{v:.{digits}f}"


def clean(v):
    """A TSV cell: no tabs or line breaks."""
    return " ".join(str(v).split())


def first_line(e):
    """The first line of an exception's message."""
    text = str(e).strip().splitlines()
    return text[0] if text else "no message"
