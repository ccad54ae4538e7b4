/* fusetile/limits.h - every named limit of fusetile's inputs in one place: the largest problem, schedule, step count and file each reader and command accepts (docs/LIMITS.md lists them with their messages). */
#ifndef FUSETILE_LIMITS_H
#define FUSETILE_LIMITS_H

#include "fusetile/api.h"
FT_API_BEGIN

#include <stdint.h>

/*
 * Each limit says what it bounds, why it has its value and where it is
 * checked.  An input over a limit is refused when it is loaded, before any
 * work that grows with it, with FT_EINPUT (exit status 2) and one line
 * naming the file, the field, the value and the limit by name:
 *
 *     big.json: op_types: 20001 ops, the limit is 20000 (FT_MAX_OPS)
 *
 * The values were measured on a 2-core machine (docs/LIMITS.md gives the
 * figures): at every limit, each command either finishes within seconds or
 * prints progress at least every two seconds; nothing hangs silently.
 * fusetile.h includes this header, so the Tcl extension and the Python
 * binding, which load through the same library calls, apply the same
 * limits.
 */

/* ------------------------------------------------------------ problems */

/* Most ops of a problem (op_types and the per-op lists).  Checked by
 * ft_problem_parse / ft_problem_load before anything is allocated, and by
 * ft_problem_finish (problems built in code: Tcl, Python).  Why: commands
 * cost O(ops x tensors) in validation and per-subgraph bookkeeping; at
 * 20 000 generated ops (`fusetile generate --family scale`) evaluate takes
 * about 2 s, simulate 3 s, and the search's first schedule about 8 s with
 * progress lines (wall times on a loaded 2-core machine; at 100 000 ops
 * evaluate took 25 s without a line of output), while the largest model
 * in the repository has 68 ops and bench/run's scale table 10 000. */
#define FT_MAX_OPS 20000

/* Most tensors of a problem (widths, heights).  Checked where FT_MAX_OPS
 * is.  Why: four per op (an output, a weight, a bias, a side input) leaves
 * room for every imported model, and bounds the per-subgraph tensor flags
 * (FT_MAX_SUBGRAPHS x FT_MAX_TENSORS bytes touched per evaluation). */
#define FT_MAX_TENSORS (4 * FT_MAX_OPS)

/* Most elements along one dimension of a tensor (widths[t], heights[t])
 * and largest native granularity (native_granularity, and native k).
 * Checked by ft_problem_finish, so by every loader and by problems changed
 * in code (Tcl's `P configure -native`).  Why: 2^32 is far past any real
 * model (the largest dimension of the bundled ones is 50 176, ResNet-18's
 * 224 x 224; bench/run's deadline problem has 65 536) yet keeps the
 * 4 x 10^9-row tensors of the unit tests that check the cost model's
 * products past 64 bits (tests/unit/layout_problems.h); a tensor whose
 * element count overflows 64 bits is refused by its own check. */
#define FT_MAX_DIM ((int64_t)1 << 32)

/* Largest problem file, bytes.  Checked by ft_problem_load before the file
 * is parsed (a larger regular file is refused at once; a pipe when the
 * bytes read pass it).  Why: a generated 20 000-op problem takes 0.9 MiB,
 * and names (op_names, op_kinds, tensor_names) add tens of bytes an op;
 * the parse's memory is bounded too: 16 MiB of one-digit numbers (8.4
 * million JSON values) peak at 345 MiB. */
#define FT_MAX_PROBLEM_BYTES ((long long)16 << 20)

/* ----------------------------------------------------------- schedules */

/* Most subgraphs of a schedule (subgraphs, and each per-subgraph list).
 * Checked by ft_schedule_parse / ft_schedule_load.  Why: one subgraph per
 * op of the largest problem, plus as many again for recomputed ops. */
#define FT_MAX_SUBGRAPHS (2 * FT_MAX_OPS)

/* Most ops one subgraph lists (subgraphs[i]).  Checked by
 * ft_schedule_parse.  Why: a subgraph lists an op at most once. */
#define FT_MAX_SUBGRAPH_OPS FT_MAX_OPS

/* Most tensors one subgraph retains (tensors_to_retain[i]).  Checked by
 * ft_schedule_parse.  Why: a tensor is retained at most once. */
#define FT_MAX_RETAIN FT_MAX_TENSORS

/* Most entries of one traversal order (traversal_orders[i]: one per tile
 * of the subgraph).  Checked by ft_schedule_parse.  Why: 16 times the
 * 262 144 tiles of bench/run's 65 536 x 65 536 problem at native
 * granularity; the order is kept as 8-byte integers (32 MiB at most). */
#define FT_MAX_TRAVERSAL ((int64_t)1 << 22)

/* Largest schedule file, bytes.  Checked by ft_schedule_load as
 * FT_MAX_PROBLEM_BYTES is.  Why: room for the longest traversal orders
 * (FT_MAX_TRAVERSAL entries of up to 8 digits) of a few subgraphs. */
#define FT_MAX_SCHEDULE_BYTES ((long long)64 << 20)

/* ---------------------------------------------------------------- steps */

/* Most steps (k-steps of tiles, summed over the subgraphs) one evaluation
 * or replay walks.  Computed in closed form from the tile grids (with
 * overflow checks) and checked before the first step by ft_evaluate /
 * ft_evaluate_progress (evaluate, simulate's analytic side, the Tcl and
 * Python evaluate) and ft_sim_run (simulate).  The scheduler scores in
 * closed form and is not bound by it: it falls back to its own figures for
 * a schedule above it (ft_search).  Why: the evaluator walks about
 * 1.5 x 10^7 steps a second and the simulator, replay and analytic check
 * together, about 4 x 10^6 (both print progress every two seconds), so a
 * walk at the limit takes under a minute, resp. about 2 minutes, while
 * bench/run's 65 536 x 65 536 schedule (4.03 x 10^8 steps) still
 * evaluates and a 10^9-step schedule is refused at once. */
#define FT_MAX_STEPS ((int64_t)500000000)

/* ------------------------------------------------------- other readers */

/* Any file the library reads whole (ft__read_file) that has no limit of
 * its own below, bytes. */
#define FT_MAX_FILE_BYTES ((long long)64 << 20)

/* Largest target file (targets/ *.cfg), bytes.  Checked by ft_target_load
 * before libconfig reads it.  Why: the bundled targets are under 8 KiB. */
#define FT_MAX_TARGET_BYTES ((long long)1 << 20)

/* Largest pattern library (patterns/ *.patterns), bytes.  Checked by
 * the pattern-library loader (schedule --strategy patterns --patterns,
 * the search's patterns start).  Why: the bundled libraries are under
 * 8 KiB. */
#define FT_MAX_PATTERNS_BYTES ((long long)1 << 20)

/* Largest measured-times file (TSV), bytes.  Checked by ft_measured_load.
 * Why: FT_MEAS_MAX_ROWS rows of about 200 bytes. */
#define FT_MAX_MEASURED_BYTES ((long long)32 << 20)

/* Largest sweep file, bytes.  Checked by ft_sweep_load before libconfig
 * reads it.  Why: the sweeps of docs/SWEEP.md are under 2 KiB; large
 * sweeps are written as axes (a cross product), not run by run. */
#define FT_MAX_SWEEP_BYTES ((long long)1 << 20)

/* Largest model graph (`fusetile import GRAPH.json`, written by
 * --graph-only), bytes.  Checked by the Python importer
 * (python/fusetile/importer/pipeline.py, which reads this value from here
 * in its test).  Why: the graphs of bench/run's models are under 1 MiB. */
#define FT_MAX_GRAPH_BYTES ((long long)64 << 20)

/* Most rows a measured file may have, and most kernels one row may run
 * (ft_measured_load). */
#define FT_MEAS_MAX_ROWS 100000
#define FT_MEAS_MAX_KERNELS 100000

/* Most split-K slices a GEMM kernel is tried with (2, 4, ... up to it),
 * and most inputs a kernel may have (the add of the slices). */
#define FT_KERNEL_MAX_SPLIT 64
#define FT_KERNEL_MAX_INPUTS FT_KERNEL_MAX_SPLIT

/* Most ops one kernel may run fused (op_kernels of a models file's
 * problems: a convolution's im2col and MatMul, ft_kernel_of_ops).  Why:
 * PyTorch's eager kernels run one or two of the importer's ops. */
#define FT_KERNEL_MAX_OPS 16

/* Most settings one calibration fit moves, and most measured files it
 * reads (ft_calibrate). */
#define FT_CALIB_MAX_FREE 32
#define FT_CALIB_MAX_FILES 16

/* Most op kinds a target's compute.kind_cost group may name
 * (ft_target_load). */
#define FT_TARGET_MAX_KINDS 64

/* Most runs one sweep file may expand to (cross product or runs list),
 * most values one axis may have (a list, a range or a glob's matches), and
 * most worker processes of ft_sweep_execute (ft_sweep_load, sweep run). */
#define FT_SWEEP_MAX_RUNS 100000
#define FT_SWEEP_MAX_VALUES 4096
#define FT_SWEEP_MAX_JOBS 256

/* ------------------------------------------------------------ machines */

/* Most compute units a machine may have (ft_timing.units; a problem, a
 * target, a sweep's units axis). */
#define FT_MAX_UNITS 65536

/* Largest native granularity ft_problem_override accepts (a target's, a
 * sweep's native axis): 2^24, 256 times the largest a bundled target
 * has. */
#define FT_OVERRIDE_MAX_NATIVE ((int64_t)1 << 24)

/* Most compute units a trace shows (simulate --trace/--vcd). */
#define FT_TRACE_MAX_UNITS 1024

/* Most samples a counter track of a trace holds by default (the
 * fast-memory occupancy, the channels' busy fractions): the steps are
 * taken in periods of ceil(steps / FT_TRACE_COUNTER_SAMPLES) and each
 * period gives one sample (trace.h).  --detail steps writes every change. */
#define FT_TRACE_COUNTER_SAMPLES 1000

/* Spans per track of a trace by default, about (FT_TRACE_DETAIL_WAVES):
 * a track's span covers a tile's k-steps, and consecutive tiles while
 * they cover fewer than ceil(steps / FT_TRACE_WAVE_SPANS) steps, so that a
 * track holds at most this many spans plus one per subgraph (8 MB of
 * JSON or so); --detail steps writes one per step. */
#define FT_TRACE_WAVE_SPANS 20000

/* Size of a trace file above which the simulator warns on stderr, once,
 * how to trace less (--window, --detail): 100 MB, about what the Perfetto
 * UI loads.  ft_sim_opts.trace_warn_bytes (--trace-warn) sets another. */
#define FT_TRACE_WARN_BYTES ((int64_t)100000000)

/* Most search threads ft_search runs (ft_search_opts.threads, --threads). */
#define FT_SEARCH_MAX_THREADS 256

/* Share of the search's time limit within which its first valid schedule
 * is due (ft_search: the cheap start, every op its own subgraph at one
 * granularity from a few candidates, costed once and published before any
 * other pass).  `fusetile schedule` prints when it came and says when it
 * came later than this share (docs/LIMITS.md). */
#define FT_FIRST_VALID_SHARE 0.1

/* Share of `fusetile schedule`'s time limit that the evidence of its gap
 * line (ft_gap_alone: each subgraph's best configuration alone) may take
 * after the search, and never more than half of what the limit leaves;
 * the line says how many subgraphs it covered when cut (docs/SCHEDULER.md,
 * "The evidence"). */
#define FT_GAP_EVIDENCE_SHARE 0.02

/* Share of what a schedule's grouping pays (its total less total /
 * between, ft_gap) under which the savings of every merge of two
 * neighbouring subgraphs, summed, leave most of it to the bound
 * (ft_gap.grouping_in_bound): no merge of neighbours comes near it. */
#define FT_GAP_GROUPING_SHARE 0.5

/* Seconds the evidence of `fusetile evaluate`'s gap line and of the Python
 * binding's evaluate may take by default (evaluate --gap-time sets
 * another): a whole model's evidence takes 0.2 to 5 s on the development
 * machine, a 10 000-op problem's much longer. */
#define FT_GAP_EVALUATE_SECONDS 2.0

/* --------------------------------------------------------------- output */

/* Longest label ft_subgraph_label returns, in bytes (the NUL not counted);
 * longer ones are cut (see ft_subgraph_label), not refused. */
#define FT_LABEL_MAX 256

FT_API_END

#endif /* FUSETILE_LIMITS_H */
