/* shared_rules.h - the cost rules the simulator (sim/) shares with the library: the bandwidths a step moves data at, the step time at those bandwidths, the overheads a subgraph pays besides its steps, the compute units and the waves tiles run in (SPEC section 8), and the compensated sum (ksum) both add their figures with.  The one header of sched/ that sim/ includes; the functions are defined in sched/cost/rates.c and hidden from libfusetile.so (sim/README.md says which parts of the simulator's check depend on them). */
#ifndef FT_SHARED_RULES_H
#define FT_SHARED_RULES_H

#include "fusetile/fusetile.h"

/* Neumaier's compensated sum: step latencies like 819.2 do not add exactly
 * in binary, and the simulator's integer clock must agree to the last digit, and its
 * energy account sums its subgraphs' joules as ft_evaluate does. */
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

/* Add n times the compensated sum x to *k: each product goes in exactly
 * (its rounding error added beside it), so n like terms added here give
 * their compensated sum added one by one, up to its own rounding. */
static inline void ksum_add_n(ksum *k, int64_t n, const ksum *x)
{
    double dn = (double)n, y = dn * x->s, z = dn * x->c;
    ksum_add(k, y);
    ksum_add(k, __builtin_fma(dn, x->s, -y));
    ksum_add(k, z);
    ksum_add(k, __builtin_fma(dn, x->c, -z));
}

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

/* The share of a subgraph's slow-memory footprint (`footprint` elements,
 * each tensor it loads from or writes to slow memory whole and once) that
 * the slow memory behind p's shared cache moves on every run (ft_timing):
 * 0 without a cache or when the footprint fits cache_capacity (warm);
 * else 1 - kept / footprint, kept = 2 cache_resident - footprint (the
 * resident part less what overflows it, between 0 and the footprint:
 * each element beyond the resident part evicts one that a later run
 * would have found, as in an LRU-like cache; 1 when cache_resident is
 * 0: all or nothing).  The one rule of partial residency: the walker's
 * floor, the bounds and the simulator's cache all take it. */
static inline double ft__cache_miss_share(const ft_problem *p, double footprint)
{
    const ft_timing *tm = &p->timing;
    if (tm->cache_capacity <= 0 || footprint <= tm->cache_capacity)
        return 0;
    if (tm->cache_resident <= 0)
        return 1;
    double kept = 2 * tm->cache_resident - footprint;   /* the resident part less what overflows it */
    return kept >= footprint ? 0 : kept <= 0 ? 1 : 1 - kept / footprint;
}

/* The message of a tensor retained on a machine of several units
 * (FT_R_RETAIN_ON_UNITS), for the validator and the simulator alike; its
 * arguments: the schedule's name, the subgraph, the index in its
 * tensors_to_retain, the tensor and the units. */
#define FT_RETAIN_ON_UNITS_MSG                                                                                          \
    "%s: tensors_to_retain[%d][%d]: tensor %d is retained, but this machine has %lld units, each with its own fast "   \
    "memory, so nothing stays resident between subgraphs: the schedule was made for a machine of one unit (schedule " \
    "it again for this one)"

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

/* What a subgraph's energy is figured from (ft__energy): its work, its
 * traffic, its slow-memory footprint and its latency. */
typedef struct ft__energy_counts {
    double macs;       /* multiply-accumulates of its MatMuls, M x N x K each */
    double pointwise;  /* input elements of its Pointwise and Layout ops */
    double loaded;     /* elements moved from slow memory (ft_sg_result.loaded) */
    double written;    /* elements moved to slow memory (ft_sg_result.written) */
    double fp_read;    /* its footprint: elements of the tensors it reads from slow memory, each once */
    double fp_write;   /* ... and of those it writes to slow memory, each once */
    double latency;    /* cost units: its latency as run (ft__power_latency's where p has a power limit) */
} ft__energy_counts;

/* Joules of a subgraph of p with counts c: the rule at ft_energy
 * (fusetile.h), the one place it is written (sched/cost/energy.c); 0 when
 * p->energy is off.  Under a power limit c->latency is the limited one
 * (ft__power_latency's): the dynamic part is then at most the power left
 * times that latency. */
double ft__energy(const ft_problem *p, const ft__energy_counts *c);

/* The power rule (ft_energy, fusetile.h; docs/DEVICE.md "Power and the
 * clock"), the one place it is written (sched/cost/energy.c): the latency
 * in cost units of a subgraph of p with counts c whose latency at the full
 * clock is c->latency, under p's power limit: c->latency when p has none
 * (energy off or power_limit 0) or its power fits, else the longer latency
 * at the clock that fits, max(T, cbrt(D x T^2 / A)).  ft_evaluate (eval.c),
 * the scorer (ft__score) and the simulator call it. */
double ft__power_latency(const ft_problem *p, const ft__energy_counts *c);

/* Whether p has a power limit (ft__power_latency can lengthen a latency). */
static inline int ft__power_limited(const ft_problem *p)
{
    return p->energy.on && p->energy.power_limit > 0;
}

/* The multiply-accumulates of the MatMuls among ops[0..nops) of p (M x N x
 * K each; ops NULL: ops 0 .. nops-1 of p) into *macs and the input
 * elements of the others into *pointwise (ft__energy_counts). */
void ft__ops_work(const ft_problem *p, const int *ops, int nops, double *macs, double *pointwise);

/* The work and footprint of subgraph sg of s (which passed
 * ft_schedule_validate) into c's macs, pointwise, fp_read and fp_write
 * (the rest untouched).  FT_OK or FT_ENOMEM. */
int ft__sg_energy_counts(const ft_problem *p, const ft_schedule *s, int sg, ft__energy_counts *c);

#endif
