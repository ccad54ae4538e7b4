/* fusetile.h - public API of the fusetile scheduler library: problem and
 * schedule models, their JSON I/O and validation, and the exact cost model of
 * SPEC.md (per-step evaluator and lower bound).
 *
 * Conventions (as in SQLite and Redis):
 *  - Functions that can fail return an int code (FT_OK on success) and fill
 *    an ft_status the caller owns; they never print and never exit.
 *  - Objects returned through an out-parameter belong to the caller, who
 *    releases them with the matching *_free function (NULL is accepted).
 *  - Models are plain structs so tools and bindings can read them; fields
 *    documented as "derived" are recomputed by ft_problem_finish().
 */
#ifndef FUSETILE_H
#define FUSETILE_H

#include "fusetile/api.h"
FT_API_BEGIN

#include <stddef.h>
#include <stdint.h>

#include "fusetile/limits.h" /* FT_MAX_OPS, FT_MAX_STEPS, ...: every named limit */

#ifdef __cplusplus
extern "C" {
#endif

#define FT_VERSION "0.1.0"

/* ---------------------------------------------------------------- errors */

/* Return codes; they double as the command-line exit status. */
enum ft_code {
    FT_OK = 0,
    FT_EINVALID = 1, /* the schedule breaks SPEC section 2 (see ft_reason) */
    FT_EINPUT = 2,   /* bad file: unreadable, not JSON, bad field or value */
    FT_ENOMEM = 3    /* out of memory */
};

/* Why a schedule is invalid.  ft_reason_name() gives the stable names used
 * in vectors/expected.tsv ("oom", "op-not-covered", ...). */
enum ft_reason {
    FT_R_NONE = 0,
    FT_R_LENGTH_MISMATCH,        /* a per-subgraph list has the wrong length */
    FT_R_EMPTY_SUBGRAPH,
    FT_R_REPEATED_OP,            /* an op listed twice in one subgraph */
    FT_R_OP_OUT_OF_RANGE,
    FT_R_OP_NOT_COVERED,         /* an op in no subgraph */
    FT_R_OP_BEFORE_PRODUCER,     /* op listed before the producer of an input */
    FT_R_NOT_CONNECTED,          /* subgraph not connected through tensors */
    FT_R_GRANULARITY_BELOW_ONE,
    FT_R_GRANULARITY_ABOVE_NATIVE,
    FT_R_RETAIN_NOT_PRODUCED,    /* retained tensor not produced by subgraph */
    FT_R_BAD_TRAVERSAL,          /* traversal order not a tile permutation */
    FT_R_TENSOR_UNAVAILABLE,     /* needed tensor neither in slow memory nor resident */
    FT_R_OOM,                    /* a step's working set exceeds capacity */
    FT_R_FUSED_OPERAND_ESCAPES,  /* a tensor feeding a fused MatMul leaves */
    FT_R_RETAIN_ON_UNITS,        /* a tensor retained on a machine of several
                                    units, whose fast memories are each their
                                    own: a schedule made for another machine */
    FT_R_COUNT
};

/* Outcome of a call: code, reason (for FT_EINVALID) and a one-line message
 * naming the file, field and index.  Where a step is concerned, sg/tile/step
 * locate it (-1 when not applicable). */
typedef struct ft_status {
    int code;
    int reason;
    int sg;
    int64_t tile;
    int64_t step;
    char msg[512];
} ft_status;

/* Reset *st to FT_OK with an empty message. */
void ft_status_clear(ft_status *st);

/* Stable lower-case name of an ft_reason ("none" for FT_R_NONE,
 * "unknown" for out-of-range values).  Never NULL; static storage. */
const char *ft_reason_name(int reason);

/* Shortest decimal text (%.15g to %.17g) that reads back as exactly x, for
 * reports and JSON; buf needs FT_NUMBUF bytes.  Returns buf. */
#define FT_NUMBUF 32
char *ft_format_double(char *buf, double x);

/* A count of cycles (an overhead, a latency) for people, into buf
 * (FT_NUMBUF bytes): rounded to FT_CYCLES_EPSILON, six significant digits
 * below a million and whole cycles from there; a value below
 * FT_CYCLES_EPSILON in magnitude (a fitted 9.35762e-14) reads "0".  Only
 * for reports: JSON keeps every digit (ft_format_double).  Returns buf. */
#define FT_CYCLES_EPSILON 1e-3
char *ft_format_cycles(char *buf, double x);

/* ---------------------------------------------------------------- memory */

/* An allocator for the library (ft_set_allocator).  malloc_fn(n, ud)
 * returns n bytes (n >= 1) or NULL; realloc_fn(ptr, n, ud) resizes a block
 * malloc_fn or realloc_fn returned (ptr never NULL, n >= 1), NULL leaving
 * it as it was; free_fn(ptr, ud) releases one (ptr never NULL).  ud is
 * passed back unchanged. */
typedef struct ft_allocator {
    void *(*malloc_fn)(size_t n, void *ud);
    void *(*realloc_fn)(void *ptr, size_t n, void *ud);
    void (*free_fn)(void *ptr, void *ud);
    void *ud;
} ft_allocator;

/* Route every heap allocation of the library (sched/: problems, schedules,
 * targets, evaluations, the bounds, the scheduler and its strategies) and
 * of jansson (json_set_alloc_funcs: JSON parsing and writing, including
 * the caller's own jansson use) through *a, copied; NULL restores the
 * system's malloc, realloc and free.  An allocation the hook refuses makes
 * the call that needed it fail with FT_ENOMEM, leaking nothing (the
 * exceptions, which fall back instead, are documented at each function:
 * ft_lower_bound, ft_lower_bound_capacity).  Not hooked: libconfig's
 * allocations while it parses a target file, METIS's, SQLite's (sweep/),
 * the simulator's (C++, SystemC) and the trace writers'.
 * Blocks allocated before the change are released through the new hook, so
 * either install it before fusetile allocates anything (and restore the
 * default only after everything is freed), or give it a free_fn that also
 * accepts blocks of the system's malloc (a hook that wraps malloc and only
 * counts or refuses, as tests do).  Not thread-safe: call it while no
 * other thread is inside fusetile or jansson; the hook itself must be
 * thread-safe when ft_search runs several threads.  Returns FT_OK, or
 * FT_EINPUT (nothing changed) when one of the three functions is NULL. */
int ft_set_allocator(const ft_allocator *a);

/* Release memory a fusetile function returned to the caller (the strings
 * of ft_problem_to_json, ft_schedule_to_json, ft_subgraph_label) through
 * the current allocator; free() does the same under the default one.  NULL
 * is a no-op. */
void ft_free(void *ptr);

/* ---------------------------------------------------------------- problem */

/* Op types of SPEC section 1: a MatMul [L, R] -> O, a Pointwise op over
 * inputs of its output's shape, and a Layout op X -> O of any two shapes
 * (each region of O reads the proportional region of X, SPEC 4). */
typedef enum ft_op_type { FT_OP_MATMUL = 0, FT_OP_POINTWISE = 1, FT_OP_LAYOUT = 2 } ft_op_type;

/* Name of an op type as op_types spells it ("MatMul", "Pointwise",
 * "Layout"; "unknown" for other values).  Never NULL; static storage. */
const char *ft_op_type_name(ft_op_type t);

/* Compute models of SPEC section 4: kref is native k or the op's own K. */
typedef enum ft_compute_model {
    FT_COMPUTE_NATIVE = 0,
    FT_COMPUTE_OP = 1
} ft_compute_model;

/* Name of a compute model ("native" or "op"); parse one back with
 * ft_compute_model_parse, which returns 0 and sets *out, or -1. */
const char *ft_compute_model_name(ft_compute_model m);
int ft_compute_model_parse(const char *name, ft_compute_model *out);

typedef struct ft_op {
    ft_op_type type;
    int ninputs;
    int *inputs;       /* tensor indices; MatMul: [L, R] */
    int output;        /* tensor index */
    double base_cost;  /* > 0 */
    int64_t k;         /* derived: reduction depth K of a MatMul (width of L), 0 for Pointwise and Layout */
    /* Optional names from the problem file's op_names and op_kinds lists
     * (SPEC section 1; owned by the problem, NULL when the file has no such
     * list): the layer's source name ("layer1.0.conv1", or
     * "layer1.0.conv1/im2col" for an op made by lowering) and the canonical
     * op name ("conv2d", "relu", "add").  Reports only: no rule or cost
     * depends on them. */
    char *name;
    char *kind;
} ft_op;

typedef struct ft_tensor {
    int64_t width;     /* columns, > 0 */
    int64_t height;    /* rows, > 0 */
    int producer;      /* derived: op index, or -1 for a graph input */
    int nconsumers;    /* derived */
    int *consumers;    /* derived: op indices, ascending */
    char *name;        /* optional, from tensor_names (SPEC section 1); owned
                          by the problem, NULL when the file has none */
} ft_tensor;

/* How a step's transfers and compute share time (ft_timing.overlap). */
typedef enum ft_overlap {
    /* SPEC section 4: a step takes max(compute, memory), every transfer of
     * the step overlapping its compute (the contest's machine). */
    FT_OVERLAP_STEP = 0,
    /* No double buffering: a step loads, then computes, then writes back;
     * it takes read time + compute + write time. */
    FT_OVERLAP_NONE = 1,
    /* Double buffering across steps: the next step's loads run during this
     * step's compute.  The analytic model keeps SPEC's per-step roofline,
     * max(compute, memory), as its closed form; the simulator pipelines the
     * steps (see sim/README.md), so the two may differ. */
    FT_OVERLAP_PIPELINE = 2
} ft_overlap;

/* Timing terms a machine target adds to SPEC's cost model (target.h's
 * ft_target_apply sets them).  All zero, as ft_problem_load leaves them,
 * is SPEC's model exactly.  A step that loads `loaded` and writes `written`
 * elements and computes for `compute` cost units takes (ft_step_time):
 *   rd = loaded  > 0 ? L + loaded / bandwidth       : 0
 *   wr = written > 0 ? L + written / write_bandwidth : 0
 *   overlap NONE:   rd + compute + wr (memory = rd + wr)
 *   duplex:         max(compute, max(rd, wr))
 *   otherwise:      max(compute, memory), memory = loaded / bandwidth +
 *                   written / write_bandwidth, plus L once when the step
 *                   moves anything ((loaded + written) / bandwidth when
 *                   the two bandwidths are equal, as SPEC);
 * where L is transfer_latency, or 0 with overlap PIPELINE: the prefetch
 * hides the steps' latencies, and each subgraph pays it once instead (the
 * pipeline's fill); with two buffers a step that loads takes at least
 * (transfer_latency + loaded / bandwidth + compute) / 2, the period of a
 * run of like steps.  Every subgraph adds launch_overhead once.
 *
 * Whole-device terms (docs/DEVICE.md; all zero: one unit, as above):
 *   step_overhead  cost units added to every step's compute (a tile's
 *                  k-step pays it whatever its size: small tiles run
 *                  below peak);
 *   tile_overhead  cost units added to the compute of each tile's last
 *                  k-step (a tile fills its pipeline and stores its
 *                  output once);
 *   matmul_tile_overhead  cost units each tile of a subgraph with a MatMul
 *                  adds to its last k-step besides tile_overhead (a GEMM
 *                  tile's deeper pipeline: its operands staged through
 *                  shared memory before the first multiply, its
 *                  accumulators drained after the last);
 *   cache_capacity, cache_bandwidth  a cache level shared by the units
 *                  between them and the slow memory: every step moves its
 *                  data at cache_bandwidth, reads and writes alike (the
 *                  cache serves the tiles' re-reads); a subgraph whose
 *                  slow-memory footprint (each tensor it loads from or
 *                  writes to slow memory, whole and once) exceeds
 *                  cache_capacity takes at least that footprint's time at
 *                  the slow memory's own bandwidths (one that fits is
 *                  warm: its data stays in the cache between runs; a
 *                  target of cache partitions gives one partition's
 *                  capacity here);
 *   cache_resident R, partial residency: of a footprint F larger than
 *                  cache_capacity, kept = 2 R - F elements (the
 *                  resident part less what overflows it: each element
 *                  beyond R evicts one that would have been re-read, as
 *                  in an LRU-like cache) stay in the cache between runs,
 *                  and only the share 1 - kept / F (0 to 1) counts in
 *                  that floor (R = 0: all or nothing);
 *   units          compute units, each with its own fast memory of
 *                  `capacity`, sharing the slow memory: a subgraph's tiles
 *                  go to the units in waves of `units` tiles, in traversal
 *                  order; a tile of a wave of u tiles moves data at 1/u of
 *                  the bandwidths; a wave takes as long as its slowest
 *                  tile, and the subgraph the sum of its waves.  Tensors
 *                  are not retained across subgraphs on more than one
 *                  unit (a unit's fast memory is its own). */
/* FT_MAX_UNITS (fusetile/limits.h): most compute units. */

typedef struct ft_timing {
    double write_bandwidth;   /* elements per cost unit; 0: same as bandwidth */
    double transfer_latency;  /* cost units before a step's transfers move data, >= 0 */
    double launch_overhead;   /* cost units per subgraph, >= 0 */
    ft_overlap overlap;
    int duplex;               /* 1: reads and writes use separate channels */
    double step_overhead;     /* cost units per step, >= 0 */
    double tile_overhead;     /* cost units per tile, paid on its last k-step, >= 0 */
    double matmul_tile_overhead; /* more cost units per tile of a subgraph with a MatMul, >= 0 */
    double cache_capacity;    /* elements a footprint must fit to stay cached, >= 0; 0: no shared cache */
    double cache_bandwidth;   /* elements per cost unit, > 0 when cache_capacity is */
    double cache_resident;    /* elements, >= 0: partial residency of a larger footprint; 0: all or nothing */
    int units;                /* compute units, >= 0; 0 or 1: one */
} ft_timing;

/* A machine's energy model (a target's `energy` group, ft_target_apply;
 * docs/DEVICE.md "Energy"): joules per operation and per element moved,
 * and power over time.  `on` 0 (a problem file, the contest target, a
 * target without the group): no energy is figured.  The energy of a
 * subgraph (ft__sg_energy, sched/cost/energy.c; the one rule):
 *   mac x its MatMuls' multiply-accumulates (M x N x K each)
 *   + pointwise x its Pointwise and Layout ops' input elements
 *   + fast x (loaded + written)                  (fast memory)
 *   + with a shared cache: cache x (loaded + written)
 *       + miss x (slow_read x footprint read + slow_write x footprint written)
 *     (miss: ft_timing's partial residency, 0 when the footprint stays warm)
 *   + without one: slow_read x loaded + slow_write x written
 *   + launch
 *   + (static_watts + active_watts) x latency x seconds_per_unit
 * where loaded and written are the subgraph's elements moved from and to
 * slow memory (ft_sg_result) and the footprint counts each tensor it
 * reads from or writes to slow memory whole and once.  With a power limit
 * (power_limit > 0; the power rule, ft__power_latency in shared_rules.h,
 * docs/DEVICE.md "Power and the clock"): the dynamic part D (every term
 * but the watts x latency one) at the full clock over the latency T would
 * draw D / T watts; past the power left, A = power_limit - static_watts -
 * active_watts, the clock falls until it fits, its voltage with it, so
 * that D scales with the clock squared: the latency becomes
 * T' = max(T, cbrt(D x T^2 / A)) (seconds) and the energy at T' is
 * min(D, A x T') + (static_watts + active_watts) x T', the limit times
 * T' when it binds. */
typedef struct ft_energy {
    int on;                   /* 1: the terms below hold */
    double seconds_per_unit;  /* seconds of one cost unit (1 / clock_hz), > 0 */
    double static_watts;      /* W the machine draws idle, >= 0 */
    double active_watts;      /* W more while it runs a subgraph, >= 0 */
    double mac;               /* J per multiply-accumulate, >= 0 */
    double pointwise;         /* J per input element of a Pointwise or Layout op, >= 0 */
    double slow_read;         /* J per element read from slow memory (past the cache), >= 0 */
    double slow_write;        /* J per element written to slow memory (past the cache), >= 0 */
    double cache;             /* J per element moved through the shared cache, >= 0 */
    double fast;              /* J per element moved into or out of fast memory, >= 0 */
    double launch;            /* J per subgraph (its kernel's launch), >= 0 */
    double power_limit;       /* W the machine may draw (energy.power_limit_watts),
                                 > static_watts + active_watts; 0: no limit */
} ft_energy;

typedef struct ft_problem {
    char *name;          /* file path used in messages */
    int ntensors;
    ft_tensor *tensors;
    int nops;
    ft_op *ops;
    double capacity;     /* fast_memory_capacity, elements, > 0 */
    double bandwidth;    /* slow_memory_bandwidth, elements per cost unit, > 0
                            (the read bandwidth when timing sets another for writes) */
    int64_t native_w;    /* native_granularity[0] */
    int64_t native_h;    /* native_granularity[1] */
    int64_t native_k;    /* native k-slice; 0 (a problem file): native_w, as
                            SPEC section 1 says; read it with ft_native_k */
    int allow_larger;    /* 1: granularities above native are valid (padding
                            to native tiles still applies); 0 for a problem file */
    int pointwise_exact; /* 1: Pointwise and Layout ops compute on their exact
                            elements, not whole native tiles (a target's
                            compute.pointwise_unpadded); 0 for a problem file */
    ft_timing timing;    /* machine timing terms; all zero for a problem file */
    ft_energy energy;    /* machine energy terms; all zero (off) for a problem file */
    /* the problem file's imported_for (SPEC section 1): the name of the
       target its machine and base costs were imported for, and that
       target's file; NULL when it has none.  Owned (ft_problem_free);
       read them with ft_problem_imported_for and ft_problem_imported_file */
    char *imported_target;
    char *imported_file;
    /* the problem file's optional op_kernels (SPEC section 1): per op, the
       index (0 .. nops - 1) of the library kernel that runs it as PyTorch's
       eager mode does (ops sharing an index run as one kernel: a
       convolution's im2col and its MatMul); NULL when the file has none.
       Owned; read by `fusetile validate` (models files) only: no cost rule
       depends on it */
    int *op_kernels;
    /* derived */
    int *topo;           /* nops op indices in a topological order */
    int ngraph_inputs;
    int *graph_inputs;   /* tensors with no producer, ascending */
    int ngraph_outputs;
    int *graph_outputs;  /* tensors with no consumer, ascending */
} ft_problem;

/* Average power in watts of `joules` spent over `latency` cost units of
 * p (latency x p->energy.seconds_per_unit seconds); 0 when p's energy
 * model is off or the latency is not positive. */
double ft_energy_watts(const ft_problem *p, double joules, double latency);

/* Native k-slice of p: p->native_k, or native_w when that is 0. */
int64_t ft_native_k(const ft_problem *p);

/* Latency and memory time of one step of p (the formula at ft_timing):
 * `compute` cost units of compute, `loaded` and `written` elements moved.
 * Stores the memory time in *memory when memory is not NULL.  With p's
 * timing all zero this is SPEC's max(compute, (loaded + written) /
 * bandwidth), bit for bit. */
double ft_step_time(const ft_problem *p, double compute, int64_t loaded,
                    int64_t written, double *memory);

/* The roofs of p's machine for a roofline chart (fusetile/report.h): in
 * *compute (may be NULL) the most cost units of compute it does per cost
 * unit, its compute units (at least 1); in *data (may be NULL) the most
 * elements a step moves per cost unit between the slow and the fast
 * memory, at the fastest rates ft_step_time's rule allows (a shared
 * cache's bandwidth when it is faster): read plus write bandwidth on
 * separate channels (ft_timing.duplex), else the larger of the two.  No
 * subgraph of an evaluation computes faster (ft_sg_result.compute_time
 * over its latency) nor moves loaded + written elements faster. */
void ft_roofline_peaks(const ft_problem *p, double *compute, double *data);

/* Load and validate a contest problem file (SPEC section 1).  On success
 * returns FT_OK and stores a new problem in *out (free with
 * ft_problem_free).  On failure returns FT_EINPUT (or FT_ENOMEM), leaves *out
 * NULL and puts one line in st->msg naming the file, field and index.
 * The optional extra fields op_names, op_kinds (nops strings each) and
 * tensor_names (ntensors strings) fill ft_op.name, ft_op.kind and
 * ft_tensor.name (null or absent: all NULL); a list of the wrong type or
 * length, or an entry that is not a string, is FT_EINPUT
 * ("FILE: op_names[3]: expected a string, got an integer").  The
 * optional imported_for, an object {"target": NAME, "file": PATH} (file
 * optional; null or absent: none), is kept (ft_problem_imported_for); any
 * other shape is FT_EINPUT ("FILE: imported_for.target: expected a
 * non-empty string, got an integer"). */
int ft_problem_load(const char *path, ft_problem **out, ft_status *st);

/* Same as ft_problem_load, from a NUL-terminated JSON text; `name` is used in
 * messages in place of a file path. */
int ft_problem_parse(const char *json, const char *name, ft_problem **out,
                     ft_status *st);

/* Validate the problem's structure (SPEC section 1) and recompute every
 * derived field.  Call it after building or editing a problem by hand.
 * Returns FT_OK, FT_EINPUT with a message, or FT_ENOMEM. */
int ft_problem_finish(ft_problem *p, ft_status *st);

/* The name of the target that p was imported for (the problem file's
 * imported_for.target: `fusetile import --target` writes it, the .cfg's
 * name field), or NULL when p has none. */
const char *ft_problem_imported_for(const ft_problem *p);

/* The target file that p was imported for (imported_for.file, as the
 * importer was given it), or NULL when p has none or the field has no
 * file. */
const char *ft_problem_imported_file(const ft_problem *p);

/* Deep copy (op and tensor names and imported_for included); NULL when
 * out of memory. */
ft_problem *ft_problem_clone(const ft_problem *p);

/* Release a problem and everything it owns.  NULL is a no-op. */
void ft_problem_free(ft_problem *p);

/* Serialise p as a contest problem file (SPEC section 1): widths, heights,
 * inputs, outputs, base_costs, op_types, fast_memory_capacity,
 * slow_memory_bandwidth and native_granularity, one field a line, numbers
 * exact (ft_problem_parse of the text gives back the same tensors, ops,
 * capacity, bandwidth and native granularity).  Then the optional names:
 * op_names when some op has a name, op_kinds when some op has a kind,
 * tensor_names when some tensor has a name (a NULL entry among them is
 * written as ""), and imported_for when p has it.  The fields a contest file cannot hold (native_k,
 * allow_larger, timing, name) are left out.  p must
 * have passed ft_problem_finish, and its names must be UTF-8 (as loaded
 * ones are).  Returns a NUL-terminated string the caller releases
 * (ft_free), or NULL on OOM (or a name that is not UTF-8). */
char *ft_problem_to_json(const ft_problem *p);

/* Write ft_problem_to_json's text to `path` atomically (as
 * ft_schedule_write).  FT_OK, FT_ENOMEM, or FT_EINPUT with the OS error in
 * st->msg. */
int ft_problem_write(const ft_problem *p, const char *path, ft_status *st);

/* Machine parameters that replace a problem's (ft_problem_override): each
 * field 0 keeps the problem's value. */
typedef struct ft_override {
    double capacity;     /* fast-memory capacity, elements, > 0 */
    double bandwidth;    /* slow-memory (read) bandwidth, elements per cost
                            unit, > 0; a separate write bandwidth
                            (timing.write_bandwidth) keeps its ratio to it */
    int64_t native_w;    /* native granularity width, 1 to FT_OVERRIDE_MAX_NATIVE */
    int64_t native_h;    /* native granularity height, the same range */
    int64_t native_k;    /* native k-slice, the same range */
    int units;           /* compute units (timing.units), 1 to FT_MAX_UNITS */
} ft_override;

/* FT_OVERRIDE_MAX_NATIVE (fusetile/limits.h): largest native granularity
 * ft_problem_override accepts. */

/* Replace p's capacity, bandwidth, native granularity and units by the
 * nonzero fields of *o (a sweep's overrides; the base costs stay as they
 * are, cost units per native tile), then call ft_problem_finish.  Returns
 * FT_OK; FT_EINPUT when a field is out of range (negative, NaN, infinite,
 * above its limit), with st->msg "capacity is -1, must be a positive
 * number" and p unchanged; or ft_problem_finish's error (p may then be
 * partly changed: discard it). */
int ft_problem_override(ft_problem *p, const ft_override *o, ft_status *st);

/* Elements of tensor t (width x height; overflow was rejected at load). */
int64_t ft_tensor_size(const ft_problem *p, int t);

/* ---------------------------------------------------------------- schedule */

typedef struct ft_subgraph {
    int nops;
    int *ops;             /* op indices in execution order */
    int64_t w, h, k;      /* granularity */
    int nretain;
    int *retain;          /* tensors_to_retain of this subgraph */
    int64_t *order;       /* traversal order (tile indices); NULL: raster (null in JSON) */
    int64_t norder;       /* entries in order */
    int has_reported;     /* subgraph_latencies entry present */
    double reported;      /* the producer's own latency figure */
    char *label;          /* what made the subgraph ("conv+bn+relu layer1.0.conv1",
                             a strategy's group); NULL: none.  JSON:
                             subgraph_labels; owned by the schedule */
} ft_subgraph;

typedef struct ft_schedule {
    char *name;           /* file path used in messages (may be NULL) */
    int nsubgraphs;
    ft_subgraph *sg;
    /* Entries found in the file's per-subgraph lists (-1: list absent);
     * ft_schedule_validate reports any that differ from nsubgraphs.  Set
     * them to nsubgraphs (or -1) when building a schedule by hand. */
    int len_granularities, len_retain, len_orders, len_latencies;
} ft_schedule;

/* Load a schedule file (SPEC section 2).  Checks JSON well-formedness and
 * field types only (FT_EINPUT); semantic rules are checked against a problem
 * by ft_schedule_validate / ft_evaluate.  Lists whose lengths differ from
 * `subgraphs` load (the shortest common length is kept) but the difference is
 * recorded and reported by ft_schedule_validate as FT_R_LENGTH_MISMATCH.
 * On success *out is a new schedule (free with ft_schedule_free). */
int ft_schedule_load(const char *path, ft_schedule **out, ft_status *st);

/* Same as ft_schedule_load, from a NUL-terminated JSON text. */
int ft_schedule_parse(const char *json, const char *name, ft_schedule **out,
                      ft_status *st);

/* Empty schedule with room for n subgraphs (all fields zero); NULL on OOM. */
ft_schedule *ft_schedule_new(int n);

/* Set subgraph i's op list / retained list (copies the arrays).  Return
 * FT_OK or FT_ENOMEM. */
int ft_subgraph_set_ops(ft_subgraph *g, const int *ops, int nops);
int ft_subgraph_set_retain(ft_subgraph *g, const int *tensors, int n);

/* Release a schedule.  NULL is a no-op. */
void ft_schedule_free(ft_schedule *s);

/* FT_LABEL_MAX (fusetile/limits.h): longest label ft_subgraph_label returns. */

/* A subgraph's name for reports and traces.  When every op of g has a
 * non-empty name (ft_op.name): the names joined by '+', each after the
 * first without the dotted components it shares with the name before it
 * (layer1.0.conv1, layer1.0.bn1, layer1.0.relu give
 * "layer1.0.conv1+bn1+relu"; a name is never elided whole).  Otherwise the
 * op indices joined by ',' ("12,13,14", as the reports' op lists), also
 * when g names an op out of range.  A label longer than FT_LABEL_MAX bytes
 * is cut at a UTF-8 character boundary and ends in "...", FT_LABEL_MAX
 * bytes in all.  Returns a NUL-terminated string the caller releases
 * (ft_free), or NULL when out of memory. */
char *ft_subgraph_label(const ft_problem *p, const ft_subgraph *g);

/* The source layer of op name `name` in buf (n bytes): the name without a
 * suffix that the importer's lowering adds ("layer1.0.conv1/im2col" ->
 * "layer1.0.conv1", "matmul/rhs" -> "matmul"; docs/LOWERING.md), cut to
 * fit; "" for NULL.  Returns buf. */
char *ft_op_source_name(const char *name, char *buf, size_t n);

/* A subgraph's name by its source layers, for traces: the source layer of
 * each op (ft_op_source_name; "op N" for an op without a name or out of
 * range), each layer once, joined by '+', each after the first without the
 * dotted components it shares with the one shown before it (as
 * ft_subgraph_label elides).  When the next part would take the name past
 * max bytes (at least one part is always shown, itself cut to max bytes),
 * the name ends "+... (+N ops)", N the ops not looked at.  Returns a
 * NUL-terminated string the caller releases (ft_free), or NULL when out of
 * memory. */
char *ft_subgraph_source_label(const ft_problem *p, const ft_subgraph *g, size_t max);

/* Serialise a schedule as contest JSON (subgraphs, granularities,
 * tensors_to_retain, traversal_orders, subgraph_latencies).  `latencies`
 * (nsubgraphs entries) replaces the reported figures when not NULL.  Returns
 * a NUL-terminated string the caller releases (ft_free), or NULL on OOM. */
char *ft_schedule_to_json(const ft_schedule *s, const double *latencies);

/* Write ft_schedule_to_json's text to `path` atomically (temporary file then
 * rename, so a reader never sees a partial file).  FT_OK or FT_EINPUT with
 * the OS error in st->msg. */
int ft_schedule_write(const ft_schedule *s, const double *latencies,
                      const char *path, ft_status *st);

/* Check every rule of SPEC section 2 that does not need the per-step walk
 * (everything but the working set; ft_evaluate checks that too).  Returns
 * FT_OK or FT_EINVALID with st->reason and a message naming the subgraph
 * and index. */
int ft_schedule_validate(const ft_problem *p, const ft_schedule *s,
                         ft_status *st);

/* ---------------------------------------------------------------- cost model */

/* A region of a tensor: rows [r0, r1) x columns [c0, c1), clipped. */
typedef struct ft_region {
    int64_t r0, r1, c0, c1;
} ft_region;

/* A slice is a (tensor, region) pair. */
typedef struct ft_slice {
    int tensor;
    ft_region region;
} ft_slice;

/* Role of an op inside a subgraph (SPEC section 3). */
typedef enum ft_role {
    FT_ROLE_KLOOP = 0,    /* MatMul whose output feeds no MatMul in S */
    FT_ROLE_UPSTREAM = 1, /* op whose output feeds a MatMul in S */
    FT_ROLE_EPILOGUE = 2  /* Pointwise or Layout op whose output feeds no MatMul in S */
} ft_role;

/* An op active in a step: the region of its output computed in the step,
 * the kind of each dimension of that region (FT_DIM_SPATIAL pays whole
 * native tiles, FT_DIM_REDUCTION a proportional share) and, for a k-loop
 * MatMul, its k slice [ks0, ks1) (0, 0 otherwise). */
enum { FT_DIM_SPATIAL = 0, FT_DIM_REDUCTION = 1 };
typedef struct ft_active {
    int op;
    ft_role role;
    ft_region region;
    unsigned char row_kind, col_kind;
    int64_t ks0, ks1;
} ft_active;

/* Compute time of an active op in a step (SPEC 4): base_cost x f(rows) x
 * f(cols), f being whole native tiles along a spatial dimension and a
 * proportional share along a reduction one, times depth / kref for a MatMul
 * (depth: the k slice of a k-loop MatMul, the full K of an upstream one;
 * kref: native k, or the op's own K under FT_COMPUTE_OP).  The one rule
 * the evaluator, the bounds, the scheduler and the simulator share. */
double ft_op_compute(const ft_problem *p, ft_compute_model model, const ft_active *a);

/* One step of a subgraph, as produced by ft_walk_next.  Arrays belong to the
 * walker and stay valid until the next ft_walk_next or ft_walk_free. */
typedef struct ft_step {
    int64_t index;        /* step number within the subgraph */
    int64_t tile;         /* tile index (row * ntx + col) */
    int64_t tile_row, tile_col;
    int64_t kstep;        /* k-step within the tile */
    int nslices;
    const ft_slice *slices;   /* boundary-input slices needed (resident excluded) */
    const unsigned char *loaded; /* per slice: 1 loaded, 0 reused from previous step */
    int nwrites;
    const ft_slice *writes;   /* output regions written to slow memory */
    int nactive;
    const int *active;        /* ops active in this step, in list order */
    const ft_active *acts;    /* the same ops with their regions */
    double compute;       /* compute time */
    double memory;        /* memory time (ft_step_time; SPEC: (loaded + written) / bandwidth) */
    double latency;       /* ft_step_time (SPEC: max(compute, memory)) */
    int64_t loaded_elems;
    int64_t written_elems;
    int64_t working_set;
} ft_step;

typedef struct ft_walk ft_walk;

/* Start walking the steps of subgraph `sg` of a schedule that passed
 * ft_schedule_validate (behaviour is undefined otherwise).  On success *out
 * is a walker to free with ft_walk_free.  FT_ENOMEM on allocation failure. */
int ft_walk_begin(const ft_problem *p, const ft_schedule *s, int sg,
                  ft_compute_model model, ft_walk **out, ft_status *st);

/* Produce the next step in *step.  Returns 1 when a step was produced, 0
 * after the last one. */
int ft_walk_next(ft_walk *w, ft_step *step);

/* Geometry of the walk: tile grid, k-steps per tile, total steps. */
void ft_walk_grid(const ft_walk *w, int64_t *ntx, int64_t *nty, int64_t *nk,
                  int64_t *nsteps);

/* Role of op `op` (an op of this subgraph) in the walk's subgraph. */
ft_role ft_walk_role(const ft_walk *w, int op);

/* From now on, derive only the data flow of w's steps: ft_walk_next fills
 * the index, tile, k-step and active ops with their regions (nactive,
 * active, acts) and leaves slices, loaded flags, writes, compute, memory,
 * latency, the element counts and the working set empty or 0.  For a
 * caller that costs the steps itself (the simulator); faster. */
void ft_walk_flow_only(ft_walk *w);

/* Skip the next n steps of a walker that derives the data flow only
 * (ft_walk_flow_only) without deriving them: the next ft_walk_next
 * produces the step after them, as if they had been walked.  For a caller
 * that works out a run of steps itself (the simulator's like steps).
 * Returns the number skipped: n, or the steps left when fewer; 0 when n <= 0
 * or the walker is not flow-only (a full walk's loaded flags compare each
 * step with the one before it, so it cannot skip). */
int64_t ft_walk_skip(ft_walk *w, int64_t n);

/* Release a walker.  NULL is a no-op. */
void ft_walk_free(ft_walk *w);

/* Per-subgraph figures of an evaluation. */
typedef struct ft_sg_result {
    double latency;               /* launch overhead (+ the pipeline's fill, ft_timing)
                                     + sum of step latencies */
    int64_t steps;
    int64_t ntx, nty, nk;
    int64_t compute_bound_steps;  /* compute > memory time */
    int64_t memory_bound_steps;   /* memory time >= compute */
    int64_t peak_working_set;     /* elements */
    int64_t loaded;               /* elements loaded from slow memory */
    int64_t written;              /* elements written to slow memory */
    double compute_time;          /* sum of step compute times */
    double memory_time;           /* sum of step memory times */
    double energy;                /* joules (ft_energy; 0 when p->energy is off or the
                                     figures are scored: ft_eval.scored) */
} ft_sg_result;

typedef struct ft_eval {
    ft_compute_model model;
    int nsubgraphs;
    ft_sg_result *sg;
    double total;
    double lower_bound;
    /* 1 when the figures come from the scheduler's exact scorer instead of
     * a walk of every step (ft_search, when walking them all would not end
     * within its time limit): latencies, total, grid and step counts are
     * filled; the per-step sums (loaded, written, peak working set,
     * compute and memory time, bound steps) are 0. */
    int scored;
    double capacity_bound;   /* ft_lower_bound_capacity (SPEC section 7) */
    double energy;           /* joules, the subgraphs' summed (ft_energy; 0 when off or
                                scored: the scorer has no traffic) */
} ft_eval;

/* Evaluate a schedule exactly under the cost model (SPEC sections 3-4):
 * validates it (ft_schedule_validate, then every step's working set) and
 * fills *out (release with ft_eval_free).  Returns FT_OK, FT_EINVALID with
 * st->reason and st->sg/tile/step set, FT_EINPUT for a schedule of more
 * than FT_MAX_STEPS steps (ft_schedule_steps, before any is walked), or
 * FT_ENOMEM.  On failure *out holds no allocations. */
int ft_evaluate(const ft_problem *p, const ft_schedule *s,
                ft_compute_model model, ft_eval *out, ft_status *st);

/* The steps (k-steps of tiles, over every subgraph) s's evaluation walks,
 * in closed form from the tile grids, into *steps.  s must pass
 * ft_schedule_validate.  FT_OK, or FT_EINPUT when the count is over
 * FT_MAX_STEPS (*steps holds it) or overflows 64 bits, with a message
 * naming the count, the largest subgraph and FT_MAX_STEPS; or FT_ENOMEM.
 * ft_evaluate and the simulator refuse such a schedule with this message
 * before walking a step. */
int ft_schedule_steps(const ft_problem *p, const ft_schedule *s, int64_t *steps, ft_status *st);

/* Progress callback for long evaluations: called about every 2^18 steps with
 * the steps done and the schedule's total (a subgraph costed in closed
 * form counts on once, at its end, when it has 2^18 steps or more); a
 * nonzero return stops the evaluation, which then fails with FT_EINPUT
 * ("interrupted"). */
typedef int (*ft_progress_fn)(void *ctx, int64_t done, int64_t total);

/* ft_evaluate with a progress callback (fn may be NULL). */
int ft_evaluate_progress(const ft_problem *p, const ft_schedule *s,
                         ft_compute_model model, ft_progress_fn fn, void *ctx,
                         ft_eval *out, ft_status *st);

/* Evaluate one subgraph of a valid schedule (no validation of the rest);
 * same results as the matching entry of ft_evaluate.  Returns FT_OK,
 * FT_EINVALID (oom) or FT_ENOMEM. */
int ft_evaluate_subgraph(const ft_problem *p, const ft_schedule *s, int sg,
                         ft_compute_model model, ft_sg_result *out,
                         ft_status *st);

/* Release what ft_evaluate allocated; the struct itself is the caller's. */
void ft_eval_free(ft_eval *e);

/* Whether tensor t, produced by subgraph sg, is written to slow memory
 * (SPEC section 3, "written"); 0 for tensors sg does not produce. */
int ft_tensor_written(const ft_problem *p, const ft_schedule *s, int sg,
                      int t);

/* Lower bound of SPEC section 5: max(C, M).  *compute and *memory (either
 * may be NULL) receive C and M.  With timing terms (ft_timing), M is the
 * compulsory traffic's time under ft_step_time (graph inputs read, graph
 * outputs written), the bound is C + M when steps do not overlap, and one
 * launch overhead is added. */
double ft_lower_bound(const ft_problem *p, ft_compute_model model,
                      double *compute, double *memory);

/* Capacity-aware lower bound (SPEC section 7): slow-memory traffic that
 * every valid schedule of p has given the fast memory's capacity (the
 * compulsory graph inputs and outputs, plus the re-reads that deep
 * k-loops, tensors too big to stay resident and exclusive MatMul operands
 * force), combined with the SPEC bound's compute C as ft_lower_bound
 * combines them (max, or sum without overlap, plus one launch overhead).  Never below ft_lower_bound
 * and never above the total of any schedule ft_evaluate accepts.  *compute
 * and *memory (either may be NULL) receive C and the traffic's time. */
double ft_lower_bound_capacity(const ft_problem *p, ft_compute_model model,
                               double *compute, double *memory);

/* Where a schedule's gap to the lower bound lies (ft_gap_report). */
typedef struct ft_gap {
    double total;           /* the schedule's total (as given) */
    double bound;           /* the larger of ft_lower_bound and ft_lower_bound_capacity */
    double ratio;           /* total / bound */
    double grouping_bound;  /* the sum over the schedule's subgraphs of each one's
                               own bound: no schedule with these subgraphs (ops,
                               order, retention) costs less, whatever their
                               configurations */
    int nsubgraphs;
    double within;          /* total / max(grouping_bound, bound): the share of the
                               gap inside the subgraphs */
    double between;         /* max(grouping_bound, bound) / bound: the share the
                               grouping itself pays (launches, overheads, waves
                               and traffic between subgraphs) */
    int in_bound;           /* 1 when within >= between: most of the gap is inside
                               subgraphs whose configurations the search chose
                               among all, so most likely what the bound does not
                               count; 0: most is the grouping's (fewer, larger
                               subgraphs might remove it, or the bound assumes a
                               fusion no schedule can make).  After ft_gap_alone:
                               1 exactly when gap_in is FT_GAP_IN_BOUND */
    /* The evidence (ft_gap_alone; before it, best_alone = total, the
     * counts 0, search_part 1, bound_part = within): */
    double best_alone;      /* the sum over the subgraphs of each one's best
                               configuration alone (in its context in the
                               schedule), never above total */
    double search_part;     /* total / best_alone: what the search left inside
                               the subgraphs (their configurations) */
    double bound_part;      /* best_alone / max(grouping_bound, bound): inside
                               the subgraphs, what no configuration reaches
                               (what the bound does not count);
                               ratio = search_part x bound_part x between */
    long long alone_tried;  /* configurations scored */
    int alone_done;         /* subgraphs whose whole set was scored (the others
                               keep the best found before the deadline, at
                               worst their own latency) */
    double alone_seconds;   /* the evidence's wall time */
    /* The grouping's evidence (ft_gap_alone, once every subgraph's own set
     * was scored): every two neighbouring subgraphs where the second reads
     * what the first makes, merged and costed over the same set. */
    int pairs_tried;        /* neighbouring pairs merged and costed */
    int pairs_done;         /* of them, those whose whole set was scored */
    long long pairs_configs; /* configurations scored for them */
    int merge_at;           /* -1: no merge costs less than its two subgraphs
                               at their best alone; else i, the first of the
                               two whose merge saves the most (the schedule
                               it makes validated) */
    double merge_gain;      /* what that merge saves (0: none) */
    double merge_sum;       /* what every merge that saves something saves,
                               pair by pair, summed (the pairs overlap: an
                               estimate of what merging neighbours can save;
                               0: none) */
    int grouping_in_bound;  /* 1 when gap_in is FT_GAP_IN_GROUPING, every
                               neighbouring pair was costed whole, and
                               merge_sum is under FT_GAP_GROUPING_SHARE of what
                               the grouping pays (total - total / between):
                               merging neighbours cannot remove most of it, so
                               most of it lies in the bound, which counts the
                               whole problem as one subgraph */
    int gap_in;             /* the largest of the three parts: FT_GAP_IN_SEARCH,
                               FT_GAP_IN_BOUND or FT_GAP_IN_GROUPING */
} ft_gap;

/* ft_gap.gap_in: where most of a schedule's gap to the bound lies. */
enum { FT_GAP_IN_SEARCH = 0, FT_GAP_IN_BOUND = 1, FT_GAP_IN_GROUPING = 2 };

/* The name of ft_gap.gap_in's part, as `fusetile evaluate --json` and the
 * Python binding give it: "search", "bound" or "grouping" ("?" for any
 * other value). */
const char *ft_gap_in_name(int gap_in);

/* Where the gap of schedule s of p (valid, its total `total` under model)
 * lies: fills *out (ft_gap).  grouping_bound is a lower bound on every
 * schedule with s's subgraphs, each bounded alone with the target's terms
 * (docs/SCHEDULER.md, "The lower bound on a target").  FT_OK, or FT_ENOMEM
 * (st says so, *out zeroed). */
int ft_gap_report(const ft_problem *p, const ft_schedule *s, ft_compute_model model, double total, ft_gap *out,
                  ft_status *st);

/* The evidence of where the gap lies: for every subgraph i of s (valid,
 * evaluated into *e under e->model, g filled by ft_gap_report for it), in
 * its context in s (what it reads, writes, retains, which tensors are
 * resident), every configuration of the set docs/SCHEDULER.md states
 * ("The evidence") is costed by the search's exact scorer (the cost rules
 * of ft_evaluate): w and h each the native size, the powers of two from 1
 * to the output's extent, the extent and the schedule's own; k likewise
 * over the reduction extent when the subgraph has a MatMul (else its own);
 * every traversal order kind where the grid has several rows and columns.
 * Each subgraph keeps the least of them and its own latency e->sg[i].
 * latency; their sum is g->best_alone (so total >= best_alone >=
 * grouping_bound).  The work stops once `seconds` have passed (any
 * non-finite or huge value: none; 0: nothing is scored): subgraphs not
 * reached keep their own latency, and alone_done says how many were
 * finished.  Then, when every subgraph was finished and time is left,
 * the grouping's evidence: every two neighbouring subgraphs i, i + 1 where
 * i + 1 reads what i makes, merged (i's ops then i + 1's, retaining what
 * i + 1 retains) and costed over the same set in their context, against
 * the two at their best alone; the largest saving of a merge whose
 * schedule is valid is merge_gain at merge_at (pairs_tried,
 * pairs_done, pairs_configs say how far it went; without the memory for
 * it, none is tried).  Fills best_alone, search_part, bound_part,
 * alone_tried, alone_done, alone_seconds, the pairs' fields, gap_in (the
 * largest of search_part, bound_part and between) and in_bound.  FT_OK,
 * or FT_ENOMEM (st says so, g's evidence left as ft_gap_report set it). */
int ft_gap_alone(const ft_problem *p, const ft_schedule *s, const ft_eval *e, double seconds, ft_gap *g, ft_status *st);

/* ft_gap_report then ft_gap_alone for schedule s evaluated into *e (by
 * ft_evaluate or ft_search), the bounds taken from e (lower_bound,
 * capacity_bound) rather than computed again: what `fusetile schedule`,
 * `evaluate` and the Python binding print.  FT_OK (the evidence may be
 * missing after an allocation failure, the report stands), or FT_ENOMEM
 * from the report (st says so, *g zeroed). */
int ft_gap_evidence(const ft_problem *p, const ft_schedule *s, const ft_eval *e, double seconds, ft_gap *g, ft_status *st);

/* ---------------------------------------------------------------- scheduler */

/* What ft_search reports while it runs (ft_search_opts.on_progress). */
typedef struct ft_search_progress {
    double elapsed;          /* seconds since the search began */
    double limit;            /* its time limit, seconds */
    double best;             /* best total so far (HUGE_VAL before the first) */
    double bound;            /* the best lower bound (the larger of the two) */
    int64_t evals;           /* subgraph configurations scored so far */
    double evals_per_s;
    const char *pass;        /* the pass running (ft_search's pass table) */
    int threads;
    int64_t closed;          /* configurations scored in closed form (a cost
                                per kind of tile, docs/SCHEDULER.md) ... */
    int64_t fallbacks;       /* ... and by walking tiles or steps instead */
} ft_search_progress;

/* How ft_search groups ops (ft_search_opts.strategy).  FT_STRATEGY_SEARCH
 * is fusetile's own search; the others are the classic groupings users
 * compare it with, each run alone: the strategy's groups, each at its best
 * granularity and traversal, with optimal retention (sched/strategy/strategy.h). */
typedef enum ft_strategy {
    FT_STRATEGY_SEARCH = 0,    /* "search": the pass table of sched/search/search.c */
    FT_STRATEGY_PATTERNS = 1,  /* "patterns": pattern-library tiling (patterns.c) */
    FT_STRATEGY_RULES = 2,     /* "rules": rule-based fusion (rules.c) */
    FT_STRATEGY_PARTITION = 3, /* "partition": rule-based fusion, then the
                                  fused graph partitioned (partition_strategy.c) */
    FT_STRATEGY_SUPERTILE = 4  /* "supertile": super tiling (supertile.c) */
} ft_strategy;
#define FT_STRATEGY_COUNT 5
/* How the partition strategy cuts the fused graph (ft_search_opts.partition). */
typedef enum ft_partition_method {
    FT_PARTITION_AUTO = 0,   /* METIS when parts is set; else layer-based when
                                the model has two residual blocks or layers
                                or more; else METIS, a part per fit group */
    FT_PARTITION_FIT = 1,    /* resource-constrained: fused groups merged
                                while the working set fits the fast memory */
    FT_PARTITION_LAYERS = 2, /* layer-based: a residual block or a
                                transformer layer per group, stem and head */
    FT_PARTITION_METIS = 3   /* edge-cut minimisation with METIS into parts */
} ft_partition_method;

/* The name of method m ("auto", "fit", "layers", "metis"); NULL when m is
 * not one. */
const char *ft_partition_method_name(ft_partition_method m);

/* The method named `name` into *m: FT_OK, or FT_EINPUT with st naming the
 * valid names. */
int ft_partition_method_parse(const char *name, ft_partition_method *m, ft_status *st);

/* ft_search_opts.start_from: every grouping strategy */
#define FT_STRATEGY_ALL_STARTS ((1u << FT_STRATEGY_COUNT) - 2u)

/* The name of strategy s ("search", "patterns", ...); NULL when s is not
 * an ft_strategy. */
const char *ft_strategy_name(ft_strategy s);

/* The strategy named `name` into *s: FT_OK, or FT_EINPUT with st naming
 * the valid names. */
int ft_strategy_parse(const char *name, ft_strategy *s, ft_status *st);

/* The start_from mask (ft_search_opts) of `list`: grouping strategies
 * separated by commas ("rules,patterns"), "all" or "none".  FT_OK, or
 * FT_EINPUT with st naming the entry that is not one. */
int ft_strategy_parse_starts(const char *list, unsigned *mask, ft_status *st);

/* FT_SEARCH_MAX_THREADS (fusetile/limits.h): most search threads. */

/* Options of ft_search; ft_search_opts_init sets the defaults. */
/* What ft_search minimises.  LATENCY: the total latency (cost units).
 * ENERGY: the total joules (ft_eval.energy: every subgraph's ft_energy,
 * static power times its latency included), additive over subgraphs as
 * latency is.  EDP: the energy-delay product, joules x seconds (not
 * additive: docs/SCHEDULER.md "Objectives" says how it is searched). */
typedef enum ft_objective {
    FT_OBJECTIVE_LATENCY = 0,
    FT_OBJECTIVE_ENERGY,
    FT_OBJECTIVE_EDP,
    FT_OBJECTIVE_COUNT
} ft_objective;

/* The name of objective o ("latency", "energy", "edp"; NULL out of range). */
const char *ft_objective_name(ft_objective o);

/* The objective named `name` (ft_objective_name's) into *o: 0, or -1 for
 * an unknown name (*o untouched). */
int ft_objective_parse(const char *name, ft_objective *o);

/* The value of objective o for evaluation ev of a schedule of p: ev->total
 * (latency), ev->energy (joules) or ev->energy x ev->total x
 * p->energy.seconds_per_unit (edp, J s); 0 for energy and edp when p has
 * no energy model. */
double ft_objective_value(const ft_problem *p, ft_objective o, const ft_eval *ev);

/* A lower bound of objective o over every schedule of p under model:
 * latency, ft_lower_bound_capacity; energy, the joules of p's whole work
 * (MACs and pointwise inputs), its compulsory traffic at the cheapest
 * tier it may take, one launch, and static and active power over that
 * latency bound; edp, the energy bound times the latency bound in
 * seconds.  0 for energy and edp when p has no energy model. */
double ft_objective_bound(const ft_problem *p, ft_compute_model model, ft_objective o);

typedef struct ft_search_opts {
    ft_compute_model model;  /* default FT_COMPUTE_NATIVE */
    double time_limit;       /* seconds of wall time, default 10; the search,
                                its final evaluation and the caller's
                                on_improve calls end within it */
    uint64_t seed;           /* default 1; same seed, threads and
                                max_restarts and no time cut: same result */
    int threads;             /* search threads; 0 (default): one per core;
                                at most FT_SEARCH_MAX_THREADS */
    int64_t max_restarts;    /* restarts of the improvement pass per thread;
                                0 (default): until the deadline or the bound */
    int verbose;             /* 1: progress lines (a line per better
                                schedule) to on_message, default 0 */
    ft_strategy strategy;    /* default FT_STRATEGY_SEARCH; another runs that
                                strategy alone, its groups costed within
                                time_limit (FT_EINPUT when they cannot be) */
    unsigned start_from;     /* FT_STRATEGY_SEARCH: the strategies whose
                                groupings the search also starts from, a bit
                                (1u << s) each; default FT_STRATEGY_ALL_STARTS,
                                0: none.  The search's result is then never
                                worse than theirs (time permitting) */
    const char *const *pattern_files; /* patterns: the pattern libraries
                                (patterns/README.md); NULL or none: the
                                bundled ones (patterns_dir) */
    int npattern_files;
    const char *patterns_dir; /* patterns, no files named: the directory of
                                the bundled libraries, tried first; NULL
                                (default) or "": the installed one, then
                                ./patterns, then the build's source tree.
                                The library reads no environment: the
                                command line, Tcl, Python and sweep runs
                                pass $FT_PATTERNS_DIR here */
    ft_partition_method partition; /* partition: how it cuts (default
                                FT_PARTITION_AUTO) */
    int parts;               /* partition: parts for METIS (a target's SMs,
                                tiles or cores); 0 (default): one part per
                                resource-constrained group */
    /* Called about every 0.25 s (at least once a second) while the search
     * runs, from the thread that calls ft_search or one of its threads,
     * never two at once (may be NULL). */
    void (*on_progress)(void *ctx, const ft_search_progress *pr);
    /* Called with every better valid schedule found, with its exact
     * per-subgraph latencies and total (may be NULL).  The schedule is only
     * valid during the call. */
    void (*on_improve)(void *ctx, const ft_schedule *s,
                       const double *latencies, double total);
    /* With verbose, called with each progress line (one line, without its
     * newline; may be NULL: the lines go nowhere, the library prints
     * nothing), from one of the search's threads, never at the same time
     * as another of these callbacks. */
    void (*on_message)(void *ctx, const char *line);
    void *ctx;
    /* When not NULL, read by the search's threads (about every
     * evaluation); once *stop is nonzero the search ends as at its
     * deadline: the passes stop, the final evaluation is cut to the
     * scorer's figures, and ft_search returns the best schedule found so
     * far (FT_OK; the first, one-op grouping is finished first).  For a
     * caller that interrupts a search (Ctrl-C in the Python binding).
     * Default NULL. */
    const volatile int *stop;
    ft_objective objective;  /* what the search minimises (ft_objective):
                                default FT_OBJECTIVE_LATENCY; energy and
                                edp need p's energy model (FT_EINPUT
                                without it) */
} ft_search_opts;

/* Fill *o with the defaults above. */
void ft_search_opts_init(ft_search_opts *o);

/* Search for the schedule of p of lowest o->objective (latency by
 * default; energy and edp need p->energy, else FT_EINPUT naming the
 * objective) under o->model within
 * o->time_limit (passes and limits: sched/search/search.c): fusion of connected subgraphs (MatMul chains, Pointwise and Layout
 * prologues and epilogues), recomputation, granularities, traversal orders,
 * retention and subgraph order, every candidate scored by the exact cost
 * model.  On success returns FT_OK with a new valid schedule in *out (free
 * with ft_schedule_free; its reported latencies are the exact ones) and its
 * evaluation in *ev (free with ft_eval_free).  Returns FT_EINVALID when no
 * valid schedule exists (an op whose smallest tile does not fit), FT_ENOMEM
 * on allocation failure. */
int ft_search(const ft_problem *p, const ft_search_opts *o,
              ft_schedule **out, ft_eval *ev, ft_status *st);

/* The contest's time limit in seconds for a problem of nops ops: 2 s up to
 * 5 ops, 5 s up to 20, 15 s up to 40, 30 s up to 70, 60 s up to 110, 120 s
 * above. */
double ft_contest_time_limit(int nops);

#ifdef __cplusplus
}
#endif

/* the problem generator (ft_generate), a concern of its own */
#include "fusetile/gen.h"

FT_API_END

#endif /* FUSETILE_H */
