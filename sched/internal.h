/* internal.h - helpers shared by the sched/ sources; not installed. */
#ifndef FT_INTERNAL_H
#define FT_INTERNAL_H

#include "fusetile.h"

#if defined(__GNUC__)
#define FT_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define FT_PRINTF(a, b)
#endif

/* Fill *st (may be NULL) with code, reason and a formatted message (its
 * control characters, a newline quoted from the input say, become '?': one
 * line); returns code so callers can write
 * `return ft__fail(st, FT_EINPUT, 0, ...)`. */
int ft__fail(ft_status *st, int code, int reason, const char *fmt, ...)
    FT_PRINTF(4, 5);

/* Read a NUL-terminated file into a malloc'd buffer.  FT_OK, FT_EINPUT (with
 * the OS error naming the path) or FT_ENOMEM. */
int ft__read_file(const char *path, char **out, ft_status *st);

/* ft__read_file refusing a file of more than max bytes (a regular file at
 * once, before reading; a pipe when the bytes read pass max) with FT_EINPUT
 * "PATH: N bytes, the limit is MAX (LIMIT_NAME)"; ft__read_file itself
 * applies FT_MAX_FILE_BYTES. */
int ft__read_file_max(const char *path, long long max, const char *limit_name, char **out, ft_status *st);

/* Parse a JSON text into *root (json_t *, decref when done); on failure
 * FT_EINPUT with "NAME: empty file" or "NAME:LINE:COL: not valid JSON". */
int ft__json_parse(const char *text, const char *name, void **root, ft_status *st);

/* Write the NUL-terminated text to path under the output rules of
 * safe_write.h (atomic replacement, the rest refused or written in place).
 * FT_OK, FT_ENOMEM, or FT_EINPUT naming the file.  Defined in
 * safe_write.c. */
int ft__write_atomic(const char *text, const char *path, ft_status *st);

/* Most levels of groups, lists and arrays one libconfig text (a target or
 * a sweep file) may nest (ft__cfg_read). */
#define FT_CFG_MAX_DEPTH 64

struct config_t;

/* Parse the libconfig text `text` (a target or sweep file; `name` names it
 * in messages) into cfg, which the caller has config_init'ed and
 * config_destroy's whatever the result.  The text is first read by a
 * scanner that mirrors libconfig 1.5's (sched/cfgtext.c) and refuses, with
 * "NAME:LINE: message", what libconfig would leak memory on (a string
 * literal where its grammar allows none), what it would silently drop (a
 * string or a comment left open at the end), @include, and nesting deeper
 * than FT_CFG_MAX_DEPTH.  FT_OK, FT_ENOMEM, or FT_EINPUT with
 * "NAME:LINE: message (not libconfig syntax)" for libconfig's own errors. */
int ft__cfg_read(struct config_t *cfg, const char *text, const char *name, ft_status *st);

/* FT_EINPUT "NAME: op_types: N ops, the limit is M (FT_MAX_OPS)" (or
 * widths and FT_MAX_TENSORS) when a problem of nops ops and ntensors
 * tensors is over the limits of fusetile_limits.h, else FT_OK. */
int ft__check_problem_size(const char *name, long long nops, long long ntensors, ft_status *st);

/* The library's allocation functions (alloc.c): every allocation of
 * sched/ goes through them, so ft_set_allocator's hook sees it.  They never
 * return NULL for a size of 0 unless the allocator fails; ft__calloc
 * returns NULL when n * size overflows; ft__realloc(NULL, n) is
 * ft__malloc(n); ft__free(NULL) is a no-op. */
void *ft__malloc(size_t n);
void *ft__calloc(size_t n, size_t size);
void *ft__realloc(void *ptr, size_t n);
void ft__free(void *ptr);

/* How many allocations of the calling thread have failed so far (ft__calloc's
 * overflow included).  A function whose callees fall back when memory runs
 * out (a weaker bound, a candidate skipped) compares it before and after
 * to report FT_ENOMEM instead. */
unsigned long ft__alloc_failures(void);

/* strdup through ft__malloc that tolerates NULL (returns NULL) */
char *ft__strdup(const char *s);

/* Division rounding up for positive operands. */
static inline int64_t ft__ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Neumaier's compensated sum: step latencies like 819.2 do not add exactly
 * in binary, and the simulator's integer clock must agree to the last digit. */
typedef struct ksum {
    double s, c;
} ksum;

static inline void ksum_add(ksum *k, double x)
{
    double t = k->s + x;
    if ((k->s >= 0 ? k->s : -k->s) >= (x >= 0 ? x : -x))
        k->c += (k->s - t) + x;
    else
        k->c += (x - t) + k->s;
    k->s = t;
}

static inline double ksum_value(const ksum *k) { return k->s + k->c; }

/* The bandwidths a subgraph's steps move data at, elements per cost unit
 * (read rb, write wb): p's, the shared cache's when the subgraph's
 * footprint fits it (cached = 1, ft__step_rates), then 1/u of them for a
 * tile of a wave of u units (ft__rates_share). */
typedef struct ft__rates {
    double rb, wb;
    int cached;
} ft__rates;

/* p's own bandwidths, no cache. */
void ft__rates_init(const ft_problem *p, ft__rates *r);

/* The bandwidths every step of p moves data at before the units share
 * them (ft_timing): the shared cache's, reads and writes alike, when p has
 * one (cached = 1), else p's own. */
void ft__step_rates(const ft_problem *p, ft__rates *r);

/* *r = whole with both bandwidths divided by u (u <= 1: whole). */
void ft__rates_share(const ft__rates *whole, int64_t u, ft__rates *r);

/* The fastest bandwidths any step of p may see: p's, or its shared
 * cache's where faster (for bounds). */
void ft__fastest_rates(const ft_problem *p, ft__rates *r);

/* ft_step_time at the bandwidths of r (ft_step_time: p's own). */
double ft__step_time_at(const ft_problem *p, const ft__rates *r, double compute, int64_t loaded, int64_t written, double *memory);

/* Cost units a subgraph of p pays besides its steps' latencies (ft_timing):
 * the launch overhead and, with double buffering, the pipeline's fill and
 * drain, from the subgraph's first step (loaded0 elements loaded) and last
 * step (written_last elements written, compute_last of compute), at the
 * bandwidths r of those steps:
 *   L + (written_last > 0 ? L : 0) + min(loaded0 / r->rb +
 *   written_last / r->wb, compute_last)
 * (the first loads and the last write-backs cannot overlap compute; when
 * the steps are memory-bound the last compute shows instead). */
double ft__sg_extra(const ft_problem *p, const ft__rates *r, int64_t loaded0, int64_t written_last, double compute_last);

/* Latency of a subgraph of p whose only step loads `loaded`, writes
 * `written` and computes for `compute`, with double buffering: nothing
 * overlaps, so launch overhead + L + loaded / r->rb + compute + L +
 * written / r->wb (the latencies only for transfers that happen). */
double ft__sg_single(const ft_problem *p, const ft__rates *r, int64_t loaded, int64_t written, double compute);

/* Compute units of p (timing.units, at least 1). */
static inline int64_t ft__units(const ft_problem *p) { return p->timing.units > 1 ? p->timing.units : 1; }

/* Whether subgraph g of p has a MatMul (its tiles pay the MatMul tile
 * overhead, ft_timing). */
static inline int ft__sg_matmul(const ft_problem *p, const ft_subgraph *g)
{
    for (int j = 0; j < g->nops; j++)
        if (p->ops[g->ops[j]].type == FT_OP_MATMUL)
            return 1;
    return 0;
}

/* What k-step ks of nk adds to its compute for its tile (ft_timing): on
 * the tile's last k-step the tile overhead (it fills its pipeline and
 * stores its output once), and the MatMul tile overhead too when its
 * subgraph has a MatMul (`matmul`, ft__sg_matmul); else 0. */
static inline double ft__tile_extra(const ft_problem *p, int matmul, int64_t ks, int64_t nk)
{
    if (ks != nk - 1)
        return 0;
    return p->timing.tile_overhead + (matmul ? p->timing.matmul_tile_overhead : 0);
}

/* Tiles in the wave of the tile at traversal position pos among ntiles
 * (ft_timing: waves of ft__units tiles in traversal order). */
static inline int64_t ft__wave_size(const ft_problem *p, int64_t ntiles, int64_t pos)
{
    int64_t u = ft__units(p), first = pos - pos % u;
    return ntiles - first < u ? ntiles - first : u;
}

/* A subgraph's latency over waves: the sum of its waves' slowest tiles
 * (ft_timing).  ft__waves_tile adds the latency of the tile at traversal
 * position pos (positions in order; a tile's growing partial latency may
 * be given again at the same position); ft__waves_total is the sum so far,
 * the current wave included. */
typedef struct ft__waves {
    int64_t units, pos; /* pos: the last position seen */
    ksum done;
    double wave;
} ft__waves;

static inline void ft__waves_init(ft__waves *w, const ft_problem *p)
{
    w->units = ft__units(p);
    w->pos = -1;
    w->done = (ksum){0, 0};
    w->wave = 0;
}

static inline void ft__waves_tile(ft__waves *w, int64_t pos, double lat)
{
    if (pos != w->pos && pos % w->units == 0 && pos > 0) {
        ksum_add(&w->done, w->wave);
        w->wave = 0;
    }
    w->pos = pos;
    if (lat > w->wave)
        w->wave = lat;
}

static inline double ft__waves_total(const ft__waves *w)
{
    ksum k = w->done;
    ksum_add(&k, w->wave);
    return ksum_value(&k);
}

/* The smallest ft__sg_extra of p (no transfer time). */
static inline double ft__sg_fixed(const ft_problem *p)
{
    return p->timing.launch_overhead + (p->timing.overlap == FT_OVERLAP_PIPELINE ? p->timing.transfer_latency : 0);
}


/* How a bound combines compute C and memory M (SPEC 5 and the timing
 * terms): max(C, M), or C + M when steps do not overlap transfers and
 * compute, plus what every subgraph pays besides its steps (one is run). */
static inline double ft__bound_combine(const ft_problem *p, double compute, double memory)
{
    return (p->timing.overlap == FT_OVERLAP_NONE ? compute + memory : compute > memory ? compute : memory) + ft__sg_fixed(p);
}

/* ---- the cost model's shared rules (cost.c), each written once ---- */

/* f(len, n) of SPEC 4: whole native tiles (n elements each) along a
 * spatial dimension, a proportional share along a reduction one. */
static inline double ft__dim_units(int64_t len, int64_t n, int kind)
{
    return kind == FT_DIM_SPATIAL ? (double)ft__ceil_div(len, n) : (double)len / (double)n;
}

/* Whether op pays whole native tiles along a spatial dimension (SPEC 4):
 * every op of a problem file, and a MatMul always; a Pointwise or Layout op
 * pays its exact elements where p->pointwise_exact is set (a target's
 * compute.pointwise_unpadded: a GPU's elementwise kernel runs a thread per
 * element, not a tile's worth of them). */
static inline int ft__op_padded(const ft_problem *p, const ft_op *op)
{
    return op->type == FT_OP_MATMUL || !p->pointwise_exact;
}

/* Compute of op in a step (SPEC 4): base_cost x rows x cols native-tile
 * units, times depth / kref for a MatMul (kref: native k, or the op's K
 * under the op compute model).  rows and cols are ft__dim_units of the
 * region (or sums of them over tiles); depth is the reduction length the
 * step covers. */
double ft__op_compute(const ft_problem *p, ft_compute_model model, const ft_op *op, double rows, double cols, double depth);

/* The compulsory traffic of every schedule of p (SPEC section 5): *reads
 * gets the elements of the graph inputs, *writes those of the outputs. */
void ft__compulsory(const ft_problem *p, int64_t *reads, int64_t *writes);

/* Per-tensor reduction flags of SPEC section 5 (rw[t], rh[t]: a dimension
 * of t may be a reduction dimension of some region, so the op computing t
 * may pay it proportionally); rw and rh are ntensors bytes each, filled. */
void ft__reduction_flags(const ft_problem *p, unsigned char *rw, unsigned char *rh);

/* Roles of the ops of subgraph g (roles[j] for g->ops[j], may be NULL) and
 * its tile grid: ntx x nty tiles of nk k-steps (SPEC 3 and 4).  Assumes ops
 * are in range, distinct and listed after their producers, and w, h, k >= 1.
 * FT_OK, or FT_ENOMEM (a subgraph of more than 64 ops needs scratch space)
 * with the grid 1 x 1 x 1 and roles unset. */
int ft__sg_grid(const ft_problem *p, const ft_subgraph *g, ft_role *roles,
                 int64_t *ntx, int64_t *nty, int64_t *nk);

/* What an op list does with tensor t: FT_USE_PRODUCES and/or
 * FT_USE_CONSUMES bits. */
enum { FT_USE_PRODUCES = 1, FT_USE_CONSUMES = 2 };
int ft__ops_use(const ft_problem *p, const int *ops, int nops, int t);

/* Op list of subgraph j of a sequence (a schedule's subgraphs, a plan's
 * groups): returns the ops and stores their count in *n. */
typedef const int *(*ft__ops_of_fn)(const void *ctx, int j, int *n);

/* SPEC 3's "written" rule: whether tensor t, produced by subgraph i of a
 * sequence of nsg subgraphs (ops_of(ctx, j) gives each), is written to slow
 * memory; `retained` says whether subgraph i retains t. */
int ft__written_rule(const ft_problem *p, int t, int i, int retained, int nsg, ft__ops_of_fn ops_of, const void *ctx);

/* Per-tensor facts of subgraph sg, each array ntensors long (caller
 * allocates): produced[t] = 1 if an op of sg outputs t; written[t] = 1 if
 * that output is written to slow memory (SPEC 3); retained[t] = 1 if sg
 * retains it; resident[t] = 1 if sg-1 retained it. */
void ft__sg_tensors(const ft_problem *p, const ft_schedule *s, int sg,
                    unsigned char *produced, unsigned char *written,
                    unsigned char *retained, unsigned char *resident);

/* A walker for subgraph g under explicit tensor sets (ntensors bytes each:
 * written, retained and resident flags; "produced" is derived from g), for
 * the scheduler's what-if scoring.  g must satisfy ft_schedule_validate's
 * per-subgraph rules and outlive the walker.  FT_OK, FT_ENOMEM or FT_EINPUT
 * (step count overflow). */
int ft__walk_new(const ft_problem *p, const ft_subgraph *g, ft_compute_model model, const unsigned char *written,
                 const unsigned char *retained, const unsigned char *resident, ft_walk **out, ft_status *st);

#endif
