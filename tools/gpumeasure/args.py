"""args.py - gpumeasure's command line: sizes, lists and numbers parsed and checked, and the defaults that --quick changes (parse_args)."""

import argparse
import math

from .common import (DEFAULT_GEMM, DEFAULT_POINTWISE, DEFAULT_PROBLEMS, POINTWISE_OPS, PROG, QUICK_GEMM,
                     QUICK_POINTWISE, SETS)


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
