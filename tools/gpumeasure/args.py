"""args.py - gpumeasure's command line: sizes, lists and numbers parsed and checked, and the defaults that --quick changes (parse_args)."""

import argparse
import math
import re

from .budget import Budget
from .common import (CHECKPOINT_S, DEFAULT_BATCHES, DEFAULT_CONV_MODELS, DEFAULT_ENERGY_SIZES, DEFAULT_EXAMPLES,
                     DEFAULT_GEMM, DEFAULT_MODELS, DEFAULT_POINTWISE, DEFAULT_PROBLEMS, ENERGY_OPS, ENERGY_SECONDS,
                     IMAGE_SIZE, ODD_GEMM_COUNT, ODD_GEMM_MAX_FLOP, ODD_GEMM_RANGE, POINTWISE_OPS, PROG,
                     QUICK_BATCHES, QUICK_CONV_MODELS, QUICK_ENERGY_GEMMS, QUICK_ENERGY_SIZES, QUICK_GEMM,
                     QUICK_MODELS, QUICK_ODD_GEMM_COUNT, QUICK_POINTWISE, SET_ALIASES, SETS)
from .shapes import ENERGY_GEMMS


def parse_size(text):
    """An element count: 4096, 2^12 or 2**12."""
    t = text.strip()
    for sep in ("^", "**"):
        if sep in t:
            base, _, exp = t.partition(sep)
            return int(base) ** int(exp)
    return int(t)


def size_list(text):
    """Element counts separated by commas: 4096,2^14."""
    try:
        sizes = [parse_size(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}': expected sizes separated by commas (4096, 2^12)")
    if not sizes or any(s < 1 for s in sizes):
        raise argparse.ArgumentTypeError(f"'{text}': sizes must be positive")
    return sizes


def choice_list(allowed):
    """A parser of 'all' or some of allowed, separated by commas, into a list in allowed's order."""
    def parse(text):
        items = [s.strip() for s in text.split(",") if s.strip()]
        if items == ["all"]:
            return list(allowed)
        bad = [s for s in items if s not in allowed]
        if bad or not items:
            raise argparse.ArgumentTypeError(f"'{text}': expected 'all' or some of {', '.join(allowed)}")
        return [s for s in allowed if s in items]   # in the canonical order
    return parse


def set_list(text):
    """--sets: names of SETS and the aliases of SET_ALIASES (all, extra, everything), in SETS's order."""
    items = [s.strip() for s in text.split(",") if s.strip()]
    bad = [s for s in items if s not in SETS and s not in SET_ALIASES]
    if bad or not items:
        raise argparse.ArgumentTypeError(f"'{text}': expected some of {', '.join(SETS)}, or "
                                         f"{', '.join(SET_ALIASES)}")
    chosen = set()
    for s in items:
        chosen.update(SET_ALIASES.get(s, (s,)))
    return [s for s in SETS if s in chosen]


def int_list(text):
    """Positive whole numbers separated by commas: 1,32."""
    try:
        values = [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}': expected whole numbers separated by commas (1,32)")
    if not values or any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"'{text}': numbers must be at least 1")
    return values


def name_list(text):
    """Model names separated by commas (resnet18,vit_b_16): identifiers, checked against torchvision later."""
    names = [s.strip() for s in text.split(",") if s.strip()]
    bad = [s for s in names if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", s)]
    if bad or not names:
        raise argparse.ArgumentTypeError(f"'{text}': expected torchvision model names separated by commas")
    return list(dict.fromkeys(names))


def gemm_list(text):
    """GEMM shapes MxNxK separated by commas: 4096x4096x4096,128x50257x768."""
    shapes = []
    for item in (s.strip() for s in text.split(",") if s.strip()):
        parts = item.lower().split("x")
        if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
            raise argparse.ArgumentTypeError(f"'{item}': expected MxNxK with positive whole numbers (512x512x512)")
        shapes.append(tuple(int(p) for p in parts))
    if not shapes:
        raise argparse.ArgumentTypeError(f"'{text}': expected GEMM shapes MxNxK separated by commas")
    return shapes


def size_range(text):
    """MIN,MAX for the random GEMM axes: 8 <= MIN, 2 MIN <= MAX."""
    parts = text.split(",")
    try:
        lo, hi = (int(p) for p in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}': expected MIN,MAX (16,16384)")
    if lo < 8 or hi < 2 * lo:
        raise argparse.ArgumentTypeError(f"'{text}': needs 8 <= MIN and 2 MIN <= MAX")
    return lo, hi


def positive_int(text):
    """A whole number, at least 1."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number")
    if v < 1:
        raise argparse.ArgumentTypeError(f"'{text}' must be at least 1")
    return v


def nonneg_int(text):
    """A whole number, at least 0."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number")
    if v < 0:
        raise argparse.ArgumentTypeError(f"'{text}' must be at least 0")
    return v


def positive_float(text):
    """A finite number above 0."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number")
    if not v > 0 or math.isinf(v):
        raise argparse.ArgumentTypeError(f"'{text}' must be a positive number")
    return v


def parse_args(argv):
    """The command line checked (argparse: a bad one exits 2 with its usage and one error line), with the
    defaults --quick changes filled in and args.budget, the --budget-s clock, started now."""
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Time GEMMs, element-wise ops and whole contest problems op by op on this machine's "
                    "GPU (PyTorch with CUDA, bf16) and write env.tsv, gemm.tsv, pointwise.tsv, graph_ops.tsv "
                    "and graphs.tsv in the formats of targets/measured/h100/; with --sets, also "
                    "odd_gemm.tsv, models.tsv, conv.tsv, energy.tsv and model_kernels.tsv. Without a CUDA "
                    "GPU it says so and exits 2.",
        epilog="Exit status: 0 done; 2 no CUDA GPU, bad arguments or a bad problem file; 1 other failures. "
               "Times are medians of --reps measurements after --warmup calls; see the script's docstring "
               "for each column.")
    p.add_argument("-o", "--output", metavar="DIR",
                   help="directory for the TSV files (created if missing; default: a new directory "
                        "measured-YYYYMMDD-HHMMSS here)")
    p.add_argument("--sets", type=set_list, default=list(SET_ALIASES["all"]), metavar="LIST",
                   help=f"comma-separated sets to measure, run in this order: {', '.join(SETS)}; or "
                        f"all (the first five, the default), extra (the last five), everything")
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
                   help="skip torch.compile in graphs.tsv and models.tsv (its columns are '-')")
    p.add_argument("--budget-s", type=positive_float, metavar="SECONDS",
                   help="start no new row once this many seconds have passed since the start: the set "
                        "under way writes what it has, later sets are not started, env.tsv's settings "
                        "say what was cut (default: no limit)")
    p.add_argument("--odd-gemm-count", type=positive_int, metavar="N",
                   help=f"odd_gemm: random shapes (default {ODD_GEMM_COUNT}; --quick {QUICK_ODD_GEMM_COUNT})")
    p.add_argument("--seed", type=nonneg_int, default=0, metavar="N",
                   help="odd_gemm: seed of the random shapes and of the order of all rows (default 0)")
    p.add_argument("--odd-gemm-range", type=size_range, default=ODD_GEMM_RANGE, metavar="MIN,MAX",
                   help=f"odd_gemm: each axis of a random shape is drawn log-uniform in MIN..MAX "
                        f"(default {ODD_GEMM_RANGE[0]},{ODD_GEMM_RANGE[1]})")
    p.add_argument("--odd-gemm-max-flop", type=positive_float, default=ODD_GEMM_MAX_FLOP, metavar="FLOP",
                   help=f"odd_gemm: leave out every shape whose 2MNK exceeds this (default {ODD_GEMM_MAX_FLOP:g})")
    p.add_argument("--odd-gemm-problems", nargs="+", metavar="PATH", default=[DEFAULT_EXAMPLES],
                   help="odd_gemm: problem files or directories of them (*.problem.json) whose MatMul shapes "
                        "are measured (default: the project's examples/)")
    p.add_argument("--models", type=name_list, metavar="LIST",
                   help="models and model_kernels: torchvision models (default " + ",".join(DEFAULT_MODELS)
                        + "; --quick " + ",".join(QUICK_MODELS) + ")")
    p.add_argument("--model-batches", type=int_list, metavar="LIST",
                   help="models and model_kernels: batch sizes (default 1,32; --quick 1)")
    p.add_argument("--conv-models", type=name_list, metavar="LIST",
                   help="conv: torchvision models whose convolutions are measured (default "
                        + ",".join(DEFAULT_CONV_MODELS) + "; --quick " + ",".join(QUICK_CONV_MODELS) + ")")
    p.add_argument("--conv-batches", type=int_list, metavar="LIST",
                   help="conv: batch sizes (default 1,32; --quick 1)")
    p.add_argument("--image-size", type=positive_int, default=IMAGE_SIZE, metavar="N",
                   help=f"models, model_kernels and conv: input images are N x N (default {IMAGE_SIZE}; "
                        "vit_b_16 needs 224)")
    p.add_argument("--energy-gemms", type=gemm_list, metavar="LIST",
                   help="energy: GEMM shapes MxNxK (default 13 shapes: squares 512..8192, real layers, "
                        "misaligned, skinny; --quick 512x512x512,1000x1000x1000)")
    p.add_argument("--energy-sizes", type=size_list, metavar="LIST",
                   help="energy: element counts of the element-wise ops (default 2^20,2^22,...,2^28; "
                        "--quick 2^16,2^20)")
    p.add_argument("--energy-ops", type=choice_list(ENERGY_OPS), default=list(ENERGY_OPS), metavar="LIST",
                   help=f"energy: element-wise ops: {', '.join(ENERGY_OPS)} or all (default all)")
    p.add_argument("--energy-seconds", type=positive_float, default=ENERGY_SECONDS, metavar="S",
                   help=f"energy: seconds of back-to-back replays per row (default {ENERGY_SECONDS:g})")
    p.add_argument("--checkpoint-s", type=positive_float, default=CHECKPOINT_S, metavar="S",
                   help="the sets after the first five rewrite their file with the rows so far at most "
                        f"every S seconds, so that a killed run keeps them (default {CHECKPOINT_S:g})")
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
    if args.odd_gemm_count is None:
        args.odd_gemm_count = QUICK_ODD_GEMM_COUNT if quick else ODD_GEMM_COUNT
    if args.models is None:
        args.models = list(QUICK_MODELS if quick else DEFAULT_MODELS)
    if args.model_batches is None:
        args.model_batches = list(QUICK_BATCHES if quick else DEFAULT_BATCHES)
    if args.conv_models is None:
        args.conv_models = list(QUICK_CONV_MODELS if quick else DEFAULT_CONV_MODELS)
    if args.conv_batches is None:
        args.conv_batches = list(QUICK_BATCHES if quick else DEFAULT_BATCHES)
    if args.energy_gemms is None:
        args.energy_gemms = list(QUICK_ENERGY_GEMMS if quick else ENERGY_GEMMS)
    if args.energy_sizes is None:
        args.energy_sizes = QUICK_ENERGY_SIZES if quick else DEFAULT_ENERGY_SIZES
    args.budget = Budget(args.budget_s)
    return args
