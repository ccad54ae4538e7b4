/* cost.h - the cost part's private interface (sched/cost/): the rules of SPEC sections 2-5 and 8 each written once (an op's compute, dimension units, roles and the tile grid, the "written" rule and whether an output leaves a group, compulsory traffic, connectivity), the one accumulator of a subgraph's latency from its steps (waves included), and the walker's entry for what-if scoring; not installed. */
#ifndef FT_COST_H
#define FT_COST_H

#include "core/core.h"
#include "cost/shared_rules.h"

/* A subgraph's latency over waves: the sum of its waves' slowest tiles
 * (ft_timing); the part of ft__sg_acc (below) that several units add
 * through.  ft__waves_tile adds the latency of the tile at traversal
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

/* The one accumulator of a subgraph's latency from its steps (SPEC 4 and
 * ft_timing), which ft_evaluate and the scorer both add through: with one
 * unit, the steps' latencies in traversal order; with several, the waves'
 * slowest tiles (ft__waves), a tile's latency the sum of its k-steps.
 * Every sum is compensated (ksum), so a walk added step by step gives
 * ft_evaluate's figure to the last digit.  Steps and whole tiles come in
 * traversal order (ft__sg_acc_step, or ft__sg_acc_tile for a tile whose
 * k-steps were summed elsewhere); ft__sg_acc_total is the sum so far, an
 * unfinished tile included; ft__sg_acc_finish adds what the subgraph pays
 * besides its steps. */
typedef struct ft__sg_acc {
    int waves;    /* several units */
    int open;     /* waves: a tile's k-steps are being added ... */
    int64_t pos;  /* ... at this traversal position */
    ksum steps;   /* one unit: the steps so far */
    ksum tile;    /* waves: the open tile's k-steps so far */
    ft__waves wv; /* waves: the tiles so far */
} ft__sg_acc;

/* An empty accumulator for a subgraph of p. */
static inline void ft__sg_acc_init(ft__sg_acc *a, const ft_problem *p)
{
    a->waves = ft__units(p) > 1;
    a->open = 0;
    a->pos = -1;
    a->steps = (ksum){0, 0};
    a->tile = (ksum){0, 0};
    ft__waves_init(&a->wv, p);
}

/* Add a step of latency lat: a k-step of the tile at traversal position
 * pos, the tile's last k-step when last is nonzero. */
static inline void ft__sg_acc_step(ft__sg_acc *a, int64_t pos, int last, double lat)
{
    if (!a->waves) {
        ksum_add(&a->steps, lat);
        return;
    }
    ksum_add(&a->tile, lat);
    a->open = 1;
    a->pos = pos;
    if (last) {
        ft__waves_tile(&a->wv, pos, ksum_value(&a->tile));
        a->tile = (ksum){0, 0};
        a->open = 0;
    }
}

/* Add a whole tile of latency lat (its k-steps' compensated sum) at
 * traversal position pos. */
static inline void ft__sg_acc_tile(ft__sg_acc *a, int64_t pos, double lat)
{
    if (a->waves)
        ft__waves_tile(&a->wv, pos, lat);
    else
        ksum_add(&a->steps, lat);
}

/* Add n like tiles of latency lat each (their k-steps' compensated sum),
 * one unit only (no waves): the closed form's multiply (closed.c), exact
 * up to the sum's own rounding (ksum_add_n). */
static inline void ft__sg_acc_tiles(ft__sg_acc *a, int64_t n, const ksum *lat)
{
    ksum_add_n(&a->steps, n, lat);
}

/* The steps' total so far (with waves, an open tile counts with the
 * k-steps added so far): never more than the finished total. */
static inline double ft__sg_acc_total(const ft__sg_acc *a)
{
    if (!a->waves)
        return ksum_value(&a->steps);
    ft__waves w = a->wv;
    if (a->open)
        ft__waves_tile(&w, a->pos, ksum_value(&a->tile));
    return ft__waves_total(&w);
}

/* The subgraph's latency once every step is added: the steps' total, at
 * least floor (the walker's: a shared cache the subgraph does not fit,
 * ft_timing), plus extra when positive (ft__sg_extra: launch overhead, the
 * pipeline's fill and drain). */
static inline double ft__sg_acc_finish(const ft__sg_acc *a, double floor, double extra)
{
    ksum k = a->waves ? (ksum){ft__sg_acc_total(a), 0} : a->steps;
    if (floor > ksum_value(&k))
        k = (ksum){floor, 0};
    if (extra > 0)
        ksum_add(&k, extra);
    return ksum_value(&k);
}

/* The smallest ft__sg_extra of p (no transfer time). */
static inline double ft__sg_fixed(const ft_problem *p)
{
    return p->timing.launch_overhead + (p->timing.overlap == FT_OVERLAP_PIPELINE ? p->timing.transfer_latency : 0);
}


/* The least a subgraph of `steps` steps at least whose transfers take
 * `memory` at least pays besides its steps: ft__sg_fixed, but with
 * double buffering a single step that moves nothing (memory 0) pays no
 * transfer latency (ft__sg_single: only for transfers that happen), so
 * then the launch overhead only. */
static inline double ft__sg_fixed_least(const ft_problem *p, double memory, int64_t steps)
{
    return steps <= 1 && !(memory > 0) ? p->timing.launch_overhead : ft__sg_fixed(p);
}

/* How a bound combines compute C and memory M (SPEC 5 and the timing
 * terms) over subgraphs of `steps` steps at least: max(C, M), or C + M
 * when steps do not overlap transfers and compute, plus what every
 * subgraph pays besides its steps (one is run; ft__sg_fixed_least). */
static inline double ft__bound_combine_steps(const ft_problem *p, double compute, double memory, int64_t steps)
{
    return (p->timing.overlap == FT_OVERLAP_NONE ? compute + memory : compute > memory ? compute : memory) +
           ft__sg_fixed_least(p, memory, steps);
}

/* ft__bound_combine_steps where a subgraph may be a single step. */
static inline double ft__bound_combine(const ft_problem *p, double compute, double memory)
{
    return ft__bound_combine_steps(p, compute, memory, 1);
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

/* ---- what every schedule pays on a target (tbound.c, its proofs) ---- */

/* The least time the overheads of a subgraph's steps add, over ntiles
 * tiles of nk k-steps each (matmul: the subgraph has a MatMul): every tile
 * pays step_overhead on each k-step and ft__tile_extra on its last, on
 * its compute, and a wave of ft__units tiles takes at least its slowest
 * tile, so ceil(ntiles / units) waves of them, above the waves' average
 * compute (the tiling's bound and the gap's evidence prune by it). */
static inline double ft__waves_overheads(const ft_problem *p, int64_t ntiles, int64_t nk, int matmul)
{
    return (double)ft__ceil_div(ntiles, ft__units(p)) *
           ((double)nk * p->timing.step_overhead + ft__tile_extra(p, matmul, nk - 1, nk));
}

/* Compute overheads of the fewest steps a tile has (one) and of a tile:
 * step_overhead + tile_overhead, + matmul_tile_overhead when matmul. */
double ft__tile_overheads(const ft_problem *p, int matmul);

/* The least time the steps of a schedule take that holds ops[] (all of
 * p's ops when ops is NULL; or one subgraph holding them): the larger of
 * the busiest op's per-unit waves with one tile's overheads, and the sum
 * over the ops of their least tiles (the first tile holds them all) with
 * one tile's overheads.  rw, rh: SPEC 5's flags
 * (ft__reduction_flags), or NULL (then no op counts whole native tiles). */
double ft__op_waves(const ft_problem *p, ft_compute_model model, const unsigned char *rw, const unsigned char *rh,
                    const int *ops, int nops);

/* The shared cache's floor on every schedule of p: the graph inputs and
 * outputs larger than cache_capacity, each once at p's own bandwidths
 * (0 without a cache). */
double ft__cache_floor(const ft_problem *p);

/* A bound from its terms (bound.c): compute c (units shared), compulsory
 * traffic time m, the busiest op's waves (ft__op_waves) and the shared
 * cache's floor, combined as ft__bound_combine with what every subgraph
 * pays besides its steps; for the whole problem and for one subgraph. */
double ft__bound_target(const ft_problem *p, double c, double m, double waves, double floor_);

/* The least compute of op over its whole output in any schedule (SPEC 5's
 * term of C): whole native tiles along a dimension without a reduction
 * flag, a proportional share along one with (rw, rh: ft__reduction_flags,
 * or NULL out of memory: every dimension proportional) or where the op
 * pays exact elements.  (bound.c) */
double ft__op_least_compute(const ft_problem *p, ft_compute_model model, const ft_op *op, const unsigned char *rw,
                            const unsigned char *rh);

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

/* The slow-memory footprint of the nops ops ops[] of a subgraph, each
 * tensor counted whole and once: into *reads the inputs neither produced
 * there nor resident, into *writes the written outputs (flags as
 * ft__sg_tensors's, ntensors bytes each).  seen: ntensors bytes, all 0
 * (left marked).  The one statement of the footprint that the cache's
 * floor (walk.c), the gap's bounds (gap.c) and the energy rule
 * (energy.c) take. */
void ft__sg_footprint(const ft_problem *p, const int *ops, int nops, const unsigned char *produced,
                      const unsigned char *written, const unsigned char *resident, unsigned char *seen, int64_t *reads,
                      int64_t *writes);

/* A walker for subgraph g under explicit tensor sets (ntensors bytes each:
 * written, retained and resident flags; "produced" is derived from g), for
 * the scheduler's what-if scoring.  g must satisfy ft_schedule_validate's
 * per-subgraph rules and outlive the walker.  FT_OK, FT_ENOMEM or FT_EINPUT
 * (step count overflow). */
int ft__walk_new(const ft_problem *p, const ft_subgraph *g, ft_compute_model model, const unsigned char *written,
                 const unsigned char *retained, const unsigned char *resident, ft_walk **out, ft_status *st);

/* SPEC 2's connectivity rule, written once (validate.c): ops[] (n >= 1
 * distinct ops of p) hang together through tensors when each op is joined
 * to its output and inputs (an op reads another's output, or two ops share
 * an input).  Returns the first position j whose op is not connected to
 * ops[0], or -1 when all are.  par: scratch of n + p->ntensors ints. */
int ft__first_unconnected(const ft_problem *p, const int *ops, int n, int *par);

/* Whether ops[] (n ops of p) is connected through tensors
 * (ft__first_unconnected); 1 for n <= 1, 0 when out of memory.
 * (validate.c) */
int ft__connected(const ft_problem *p, const int *ops, int n);

/* Whether op's output leaves the set of ops {o : label[o] == g} (a group
 * by its id, members marked 1, a generation stamp): it is a graph output
 * (no consumer) or an op outside the set reads it.  The partition
 * context's "written" flag (SPEC 3 before a sequence exists) and a fused
 * operand's escape (SPEC 3's fused-operand rule). */
static inline int ft__output_leaves(const ft_problem *p, int op, const int *label, int g)
{
    const ft_tensor *T = &p->tensors[p->ops[op].output];
    if (T->nconsumers == 0)
        return 1;
    for (int q = 0; q < T->nconsumers; q++)
        if (label[T->consumers[q]] != g)
            return 1;
    return 0;
}

/* ft_evaluate_subgraph by walking every step, never in closed form: the
 * reference the closed form is tested against (eval.c). */
int ft__evaluate_walk(const ft_problem *p, const ft_schedule *s, int sg, ft_compute_model model, ft_sg_result *out, ft_status *st);

/* Finish an evaluation *ev of p whose subgraphs are filled: its total (the
 * compensated sum *total of their latencies) and its two lower bounds
 * under model.  FT_OK, or FT_ENOMEM when a bound ran out of memory (it then
 * falls back to a weaker one silently): *ev is released and st says so.
 * (eval.c; ft_evaluate's and the search's report of a schedule.) */
int ft__eval_finish(const ft_problem *p, ft_compute_model model, const ksum *total, ft_eval *ev, ft_status *st);


/* ---- the search's objective (energy.c): what a subgraph's value is ---- */

/* The weights the search minimises a subgraph by (ft_search_opts.objective):
 * its value is we x its joules (ft__energy) + wt x its latency (cost
 * units).  Latency: we 0, wt 1 (the value is the latency, bit for bit);
 * energy: we 1, wt 0; edp searches with we 1 and wt the joules per cost
 * unit of the point it linearises around (search.c, docs/SCHEDULER.md
 * "Objectives").  Additive over subgraphs whatever the weights. */
typedef struct ft__objective {
    ft_objective kind;
    double we, wt;
} ft__objective;

/* *ob = the weights of objective kind (edp: energy's; search.c sets wt). */
void ft__objective_init(ft__objective *ob, ft_objective kind);

/* The value of a subgraph of p with counts c under weights ob: c->latency
 * exactly when we is 0 and wt 1, else we x ft__energy(p, c) + wt x
 * c->latency.  Nondecreasing in c's loaded, written and latency (every
 * energy term is >= 0): counts that bound those from below give a lower
 * bound of the value. */
double ft__objective_of(const ft_problem *p, const ft__objective *ob, const ft__energy_counts *c);

#endif
