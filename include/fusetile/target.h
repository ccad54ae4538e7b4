/* target.h - machine descriptions (targets/NAME.cfg, libconfig syntax): load and
 * check them, and map a target onto a problem's cost-model parameters.
 *
 * A target is either the contest's abstract machine (`contest = true`: the
 * problem file keeps its own capacity, bandwidth, native granularity and base
 * costs) or a real machine described in bytes, cycles and operations per
 * cycle.  With a real target one cost unit is one clock cycle: capacity
 * becomes capacity_bytes / element_bytes elements, bandwidth becomes
 * read_bandwidth / element_bytes elements per cycle, and base costs are
 * cycles per native tile (ft_target_apply).
 *
 * Conventions are those of fusetile.h: functions that can fail return an int
 * code and fill an ft_status; objects returned through an out-parameter
 * belong to the caller and are released with ft_target_free.  Installed as
 * fusetile/target.h.
 */
#ifndef FUSETILE_TARGET_H
#define FUSETILE_TARGET_H

#include "fusetile/api.h"
FT_API_BEGIN

#include <stddef.h>
#include <stdint.h>

#include "fusetile/fusetile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* FT_TARGET_MAX_KINDS (fusetile/limits.h): most op kinds of kind_cost. */

/* Every setting of a target file (targets/example.cfg lists them with their
 * units and defaults; targets/README.md explains them).  For a contest target
 * only path, name, description and contest are meaningful; the machine
 * fields are zero. */
typedef struct ft_target {
    char *path;                      /* file the target was loaded from */
    char *name;                      /* name: short label for reports */
    char *description;               /* description: free text ("" by default) */
    int contest;                     /* contest: 1 = SPEC's abstract machine */

    double clock_hz;                 /* clock_hz: cycles per second, > 0 */
    int64_t element_bytes;           /* element_bytes: bytes per tensor element, > 0 */
    int64_t capacity_bytes;          /* fast_memory.capacity_bytes: bytes, >= element_bytes */
    double read_bandwidth;           /* slow_memory.read_bandwidth: bytes per cycle, > 0 */
    double write_bandwidth;          /* slow_memory.write_bandwidth: bytes per cycle, > 0
                                        (default: read_bandwidth) */
    double transfer_latency;         /* slow_memory.transfer_latency: cycles from a step's first
                                        request to its first data, >= 0 (default 0) */
    int separate_channels;           /* slow_memory.separate_channels: 1 = reads and writes move
                                        on separate channels at once (default 0: they share one) */
    int64_t native_w;                /* compute.native_granularity.w: elements, > 0 */
    int64_t native_h;                /* compute.native_granularity.h: elements, > 0 */
    int64_t native_k;                /* compute.native_granularity.k: elements, > 0 (default: w) */
    int allow_larger_granularity;    /* compute.allow_larger_granularity (default 0) */
    int pointwise_unpadded;          /* compute.pointwise_unpadded: 1 = Pointwise and Layout ops
                                        compute on their exact elements, not whole native tiles
                                        (default 0, SPEC 4's padding; ft_problem.pointwise_exact) */
    double matmul_macs_per_cycle;    /* compute.matmul_macs_per_cycle: MACs per cycle, > 0 */
    double pointwise_elements_per_cycle; /* compute.pointwise_elements_per_cycle:
                                        input elements per cycle, > 0 */
    double launch_overhead;          /* execution.launch_overhead: cycles per subgraph, >= 0 */
    int double_buffering;            /* execution.double_buffering (default 0) */
    /* whole-device terms (docs/DEVICE.md; the defaults are one unit as above) */
    int64_t units;                   /* units: compute units, each with the fast memory and
                                        compute above, sharing the slow memory, 1 to
                                        FT_MAX_UNITS (default 1) */
    double matmul_efficiency;        /* compute.matmul_efficiency: share of the MatMul peak
                                        reached, (0, 1] (default 1) */
    double pointwise_efficiency;     /* compute.pointwise_efficiency: (0, 1] (default 1) */
    int64_t register_file_bytes;     /* compute.register_file_bytes: bytes of registers per unit,
                                        >= 0 (default 0: no bound); a kernel with a MatMul takes
                                        only tiles whose accumulators (w x h x accumulator_bytes)
                                        are less than it (ft_target_tile_fits_registers) */
    int64_t accumulator_bytes;       /* compute.accumulator_bytes: bytes of one MatMul accumulator
                                        element, > 0 (default 4: fp32) */
    double misaligned_efficiency;    /* compute.misaligned_efficiency: share of the MatMul speed
                                        a MatMul keeps when its K or N (its output's width) is
                                        not a multiple of aligned_elements, (0, 1] (default 1) */
    int64_t aligned_elements;        /* compute.aligned_elements: elements, > 0 (default 8) */
    double conv_efficiency;          /* compute.conv_efficiency: share of the MatMul speed a
                                        convolution's GEMM (a MatMul op of kind "conv2d": a
                                        library's implicit GEMM) keeps, (0, 1] (default 1);
                                        ft_target_conv_efficiency */
    int64_t conv_small_channels;     /* compute.conv_small_channels: a convolution of fewer input
                                        channels than this runs at conv_small_efficiency
                                        instead (a library's path for tiny Cin, such as a
                                        stem's 3), >= 0 (default 0: none) */
    double conv_small_efficiency;    /* compute.conv_small_efficiency: (0, 1] (default 1) */
    double streamk_overhead;         /* execution.streamk_overhead: cycles a stream-K GEMM
                                        pays for its fix-up, >= 0 (default -1: no stream-K
                                        form; ft_kernel_time) */
    double memory_efficiency;        /* slow_memory.efficiency: share of both bandwidths
                                        reached, (0, 1] (default 1) */
    double read_efficiency;          /* slow_memory.read_efficiency: share of the read
                                        bandwidth reached, (0, 1] (default -1: as
                                        memory_efficiency, also when a fit moves that);
                                        ft_target_memory_efficiencies */
    double write_efficiency;         /* slow_memory.write_efficiency: share of the write
                                        bandwidth reached, (0, 1] (default -1: as
                                        memory_efficiency) */
    double step_overhead;            /* execution.step_overhead: cycles every step pays, >= 0
                                        (default 0) */
    double tile_overhead;            /* execution.tile_overhead: cycles every tile pays once,
                                        on its last k-step, >= 0 (default 0) */
    double matmul_tile_overhead;     /* execution.matmul_tile_overhead: cycles every tile of a
                                        subgraph with a MatMul pays once more, >= 0 (default 0) */
    int64_t cache_partitions;        /* shared_cache.partitions: parts that each cache the
                                        data their own units use, so a footprint stays in the
                                        cache when it fits one, 1 to FT_MAX_UNITS (default 1) */
    int64_t cache_capacity_bytes;    /* shared_cache.capacity_bytes: bytes, > 0; 0 (no
                                        shared_cache group): no cache */
    double cache_bandwidth;          /* shared_cache.bandwidth: bytes per cycle, > 0 */
    double cache_resident_bytes;     /* shared_cache.resident_bytes: R, partial residency: of a
                                        footprint of F bytes larger than a partition, 2 R - F
                                        bytes (0 to F) stay cached between runs and the rest
                                        moves at the slow memory's speed (ft_timing's
                                        cache_resident), >= 0 (default 0: all or nothing) */
    double split_overhead;           /* execution.split_overhead: cycles a MatMul kernel split along
                                        K pays once more for the reduction of its partial sums (a
                                        GEMM library's second pass: its launch, the fp32 workspace),
                                        >= 0 (default 0); ft_kernel_time */
    double run_overhead;             /* execution.run_overhead: cycles a measured run (one CUDA
                                        graph replay, one program) pays once, >= 0 (default 0);
                                        used by validate and calibrate, not in a schedule's total */
    double replay_interval;          /* execution.replay_interval: cycles, >= 0 (default 0): the
                                        shortest time between the starts of back-to-back
                                        measured runs (the host's launch of the next CUDA graph
                                        replay overlaps this one's kernels), so a run takes at
                                        least this long; used by validate and calibrate only */
    /* the energy group (docs/DEVICE.md "Energy"; absent: energy_on 0, no
       energy is figured); every figure >= 0 */
    int energy_on;                   /* 1: the file has an energy group */
    double energy_static_watts;      /* energy.static_watts: W idle (required in the group) */
    double energy_active_watts;      /* energy.active_watts: W more while running (default 0) */
    double energy_mac_pj;            /* energy.mac_pj: pJ per MAC (required) */
    double energy_pointwise_pj;      /* energy.pointwise_pj: pJ per Pointwise input element (default 0) */
    double energy_slow_read_pj;      /* energy.slow_read_pj: pJ per byte read from slow memory (required) */
    double energy_slow_write_pj;     /* energy.slow_write_pj: pJ per byte written (default -1:
                                        as slow_read_pj, ft_target_apply) */
    double energy_cache_pj;          /* energy.cache_pj: pJ per byte through the shared cache (default 0) */
    double energy_fast_pj;           /* energy.fast_pj: pJ per byte into or out of fast memory (default 0) */
    double energy_launch_pj;         /* energy.launch_pj: pJ per subgraph, its kernel launch (default 0) */
    double energy_power_limit_watts; /* energy.power_limit_watts: W the machine may draw, above static_watts +
                                        active_watts (default 0: no limit; ft_energy.power_limit) */
    int nkind_costs;                 /* compute.kind_cost: NAME = factor entries */
    char *kind_names[FT_TARGET_MAX_KINDS]; /* op kinds (op_kinds names: "gelu") */
    double kind_costs[FT_TARGET_MAX_KINDS]; /* factors > 0 on those ops' base costs */
} ft_target;

/* Load and check a target file.  Every setting's type is checked before it
 * is read (an integer is accepted where a real number is expected, nothing
 * else is converted), every value's range, every required setting's
 * presence, and every name: an unknown setting is an error, with a "did you
 * mean" suggestion when a known name is close.  On success returns FT_OK and
 * stores a new target in *out (free with ft_target_free).  On failure returns
 * FT_EINPUT (or FT_ENOMEM), leaves *out NULL and puts one line in st->msg,
 * "FILE:LINE: SETTING: message" (LINE is that of the enclosing group, or 0
 * for the top level, when a required setting is missing; "FILE: cannot open:
 * ..." when the file cannot be read). */
int ft_target_load(const char *path, ft_target **out, ft_status *st);

/* Where the target NAME_OR_PATH is, as a path for ft_target_load, into out
 * (n bytes).  In this order, the first file that exists:
 *   - name_or_path as given (a path, relative to the working directory;
 *     but a bare name that is a directory there is looked up as a name);
 *   - when it has no '/': NAME and NAME.cfg in each directory of
 *     search_path (colon-separated, empty entries skipped; NULL or "":
 *     none; the command line, Tcl and Python pass $FUSETILE_TARGETS), then
 *     in the shipped targets directory: the source tree's targets/ for a
 *     program that runs from its build tree, else $(datadir)/fusetile/targets
 *     of the install tree the code runs from (found from the program's or
 *     shared library's own path, so that a moved or DESTDIR install finds
 *     its own), then the configured $(datadir)/fusetile/targets.
 * Returns FT_OK, or FT_EINPUT with one line in st->msg:
 * "NAME: no such file or shipped target (looked in DIR, DIR); shipped
 * targets: contest, example, ...; give a path or a name" (for a NAME with
 * a '/', a path: "NAME: cannot open: No such file or directory; shipped
 * targets: ..."), or "NAME: the
 * path of the target is longer than N bytes" when out is too small. */
int ft_target_find(const char *name_or_path, const char *search_path, char *out, size_t n, ft_status *st);

/* The names of the shipped targets (the NAME.cfg files of the first
 * shipped targets directory ft_target_find searches), sorted and separated
 * by ", ", into out (n bytes; "" when none is found).  Returns 0, or -1
 * when the list did not fit (out then ends in ", ..."). */
int ft_target_names(char *out, size_t n);

/* As ft_target_load, from the text of a target file (NUL-terminated);
 * `name` stands for the file in messages and becomes t->path. */
int ft_target_parse(const char *text, const char *name, ft_target **out, ft_status *st);

/* Release a target and the strings it owns.  NULL is a no-op. */
void ft_target_free(ft_target *t);

/* Map target t onto problem p.  A contest target changes nothing.  A real
 * target sets, in cost units of one clock cycle:
 *   capacity  = floor(capacity_bytes / element_bytes)      elements
 *   bandwidth = read_bandwidth / element_bytes              elements per cycle
 *   native_w, native_h from the target;
 * and, unless keep_costs is nonzero, every op's base cost (cycles for one
 * native tile):
 *   MatMul    = native_w * native_h * native_k / matmul_macs_per_cycle
 *               (one native tile over one native k-slice)
 *   Pointwise = native_w * native_h * ninputs / pointwise_elements_per_cycle
 *               (a Layout op too: a copy of its one input).
 * (MatMul uses native_k, the target's k-slice, which becomes p->native_k);
 * allow_larger from allow_larger_granularity; pointwise_exact from
 * pointwise_unpadded; and the timing terms
 * (ft_timing): write_bandwidth / element_bytes, transfer_latency,
 * launch_overhead, overlap FT_OVERLAP_PIPELINE with double buffering and
 * FT_OVERLAP_NONE without, duplex from separate_channels; and the
 * whole-device terms: the read and write bandwidths times their efficiencies
 * (ft_target_memory_efficiencies), MatMul and
 * Pointwise base costs divided by their efficiencies (a MatMul whose K or
 * N is not a multiple of aligned_elements by misaligned_efficiency too,
 * ft_target_misaligned; a convolution's by ft_target_conv_efficiency), units,
 * step_overhead, cache capacity (ft_target_cache_elements)
 * and bandwidth (elements per cycle); then every op whose kind is named in
 * compute.kind_cost has its base cost multiplied by that factor
 * (ft_target_kind_cost; not with keep_costs); and with an energy group
 * p->energy (ft_energy): on, seconds_per_unit = 1 / clock_hz, the watts,
 * and each pJ figure x 1e-12 J, per byte times element_bytes (per element).
 * Then it calls ft_problem_finish.
 * Returns FT_OK, or FT_EINPUT / FT_ENOMEM from ft_problem_finish (p may then
 * be partly changed: discard it). */
int ft_target_apply(const ft_target *t, ft_problem *p, int keep_costs,
                    ft_status *st);

/* Elements a footprint must fit to stay in t's shared cache: one
 * partition's capacity, capacity_bytes / element_bytes / partitions (0:
 * no shared cache). */
double ft_target_cache_elements(const ft_target *t);

/* Whether op (of problem p) is a MatMul that t runs at its misaligned
 * efficiency: its K or its N (its output's width) is not a multiple of
 * compute.aligned_elements (GEMM libraries take a slower path then); 0
 * for any other op and on the contest target. */
int ft_target_misaligned(const ft_target *t, const ft_problem *p, const ft_op *op);

/* Whether a MatMul tile of w x h output elements may run on a unit of t:
 * its accumulators, w * h * compute.accumulator_bytes, are less than the
 * unit's compute.register_file_bytes (always, when that is 0 or on the
 * contest target).  The tile menu of ft_kernel_time takes only tiles
 * that fit. */
int ft_target_tile_fits_registers(const ft_target *t, int64_t w, int64_t h);

/* The share of t's MatMul speed that op (of problem p) keeps as a
 * convolution: 1 unless op is a MatMul of kind "conv2d" whose left
 * operand an im2col (a Layout of kind "conv2d" in p) makes, a library's
 * implicit GEMM (a 1x1 convolution is a plain GEMM); then
 * compute.conv_small_efficiency when its input channels (the width of
 * the im2col's input) are fewer than compute.conv_small_channels, else
 * compute.conv_efficiency.  ft_target_apply divides the op's base cost by
 * it (not with keep_costs). */
double ft_target_conv_efficiency(const ft_target *t, const ft_problem *p, const ft_op *op);

/* The shares of t's slow-memory read and write bandwidths reached, into
 * *read_eff and *write_eff: slow_memory.read_efficiency and
 * .write_efficiency, each slow_memory.efficiency when not given (so a fit
 * of efficiency moves both).  ft_target_apply multiplies the read and
 * write bandwidths by them; every model (analytic, scorer, simulator)
 * takes the bandwidths from there. */
void ft_target_memory_efficiencies(const ft_target *t, double *read_eff, double *write_eff);

/* The factor compute.kind_cost gives ops of kind `kind` (NULL: none): the
 * entry named exactly so, or 1. */
double ft_target_kind_cost(const ft_target *t, const char *kind);

/* The number setting `name` of machine target t, by its dotted path
 * ("execution.launch_overhead", "shared_cache.bandwidth",
 * "compute.kind_cost.gelu"): a pointer into t, or NULL for a contest
 * target or a name that is no real-number setting.  A kind_cost entry t
 * lacks is added with factor 1 (NULL when FT_TARGET_MAX_KINDS are taken
 * or out of memory).  *fraction (may be NULL) is 1 for a setting whose
 * range is (0, 1] (the efficiencies).  Calibration moves settings through
 * it. */
double *ft_target_setting(ft_target *t, const char *name, int *fraction);

/* One-line summary of t for reports, written to buf (at most n bytes, always
 * NUL-terminated when n > 0).  Returns the length the full summary has, as
 * snprintf does. */
int ft_target_describe(const ft_target *t, char *buf, size_t n);

#ifdef __cplusplus
}
#endif

FT_API_END

#endif /* FUSETILE_TARGET_H */
