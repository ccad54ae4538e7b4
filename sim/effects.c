/* effects.c - a replay's cross-check against the analytic model explained: the same replay with each timing effect of the target turned off, then all of them, and which effect accounts for each difference (ft_sim_effects_run, ft_sim_accounted; `fusetile simulate`, the Python binding's simulate()). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fusetile/sim.h"

/* The timing effects of a target (ft_timing), each of which can be turned
 * off in a copy of the problem. */
enum { EFF_LATENCY, EFF_WRITE_BW, EFF_DUPLEX, EFF_LAUNCH, EFF_PIPELINE, EFF_UNITS, EFF_CACHE, EFF_FLOOR, EFF_STEP_OVERHEAD,
       EFF_TILE_OVERHEAD, EFF_MATMUL_TILE_OVERHEAD, EFF_RESIDENT, EFF_POWER, NEFFECTS };

_Static_assert(NEFFECTS == FT_SIM_NEFFECTS, "FT_SIM_NEFFECTS counts the effects");

static const char *const effect_name[NEFFECTS] = {"transfer latency", "write bandwidth", "separate channels", "launch overhead",
                                                  "double buffering", "units",           "shared cache",      "cache floor",
                                                  "step overhead",    "tile overhead",     "MatMul tile overhead",
                                                  "partial residency", "power limit"};

/* Whether p's timing has effect e. */
static int effect_present(const ft_problem *p, int e)
{
    const ft_timing *t = &p->timing;
    switch (e) {
    case EFF_LATENCY: return t->transfer_latency > 0;
    case EFF_WRITE_BW: return t->write_bandwidth > 0 && t->write_bandwidth != p->bandwidth;
    case EFF_DUPLEX: return t->duplex != 0;
    case EFF_LAUNCH: return t->launch_overhead > 0;
    case EFF_PIPELINE: return t->overlap == FT_OVERLAP_PIPELINE;
    case EFF_UNITS: return t->units > 1;
    case EFF_CACHE: /* fall through */
    case EFF_FLOOR: return t->cache_capacity > 0;
    case EFF_TILE_OVERHEAD: return t->tile_overhead > 0;
    case EFF_MATMUL_TILE_OVERHEAD: return t->matmul_tile_overhead > 0;
    case EFF_RESIDENT: return t->cache_capacity > 0 && t->cache_resident > 0;
    case EFF_POWER: return p->energy.on && p->energy.power_limit > 0;
    default: return t->step_overhead > 0;
    }
}

/* Turn effect e off in p's timing, as the target file would with that
 * setting changed (double buffering off: a step loads, computes, writes;
 * units off: one unit, its tiles in waves of one at the whole bandwidth;
 * shared cache off: no cache; cache floor off: a cache that every
 * subgraph fits, so no subgraph waits for the slow memory behind it;
 * partial residency off: a footprint larger than the cache is moved
 * whole, all or nothing; power limit off: the full clock whatever the
 * power). */
static void effect_off(ft_problem *p, int e)
{
    ft_timing *t = &p->timing;
    switch (e) {
    case EFF_LATENCY: t->transfer_latency = 0; break;
    case EFF_WRITE_BW: t->write_bandwidth = 0; break;
    case EFF_DUPLEX: t->duplex = 0; break;
    case EFF_LAUNCH: t->launch_overhead = 0; break;
    case EFF_PIPELINE: t->overlap = FT_OVERLAP_NONE; break;
    case EFF_UNITS: t->units = 1; break;
    case EFF_CACHE: t->cache_capacity = t->cache_bandwidth = 0; break;
    case EFF_FLOOR:
        if (t->cache_capacity > 0)
            t->cache_capacity = DBL_MAX;
        break;
    case EFF_TILE_OVERHEAD: t->tile_overhead = 0; break;
    case EFF_MATMUL_TILE_OVERHEAD: t->matmul_tile_overhead = 0; break;
    case EFF_RESIDENT: t->cache_resident = 0; break;
    case EFF_POWER: p->energy.power_limit = 0; break;
    default: t->step_overhead = 0; break;
    }
}

/* Contract: sim.h. */
double ft_sim_rel_diff(double sim, double ana)
{
    if (isnan(sim) || isnan(ana))
        return INFINITY;
    double d = fabs(sim - ana), m = fabs(ana);
    return d == 0 ? 0 : m > 0 ? d / m : INFINITY;
}

/* Contract: sim.h. */
int ft_sim_agrees(const ft_sim_result *r, int sg)
{
    if (r->analytic_reason)
        return 0;
    return sg < 0 ? ft_sim_rel_diff(r->total_simulated, r->total_analytic) <= FT_SIM_AGREE_REL
                  : ft_sim_rel_diff(r->sg[sg].simulated, r->sg[sg].analytic) <= FT_SIM_AGREE_REL;
}

/* Contract: sim.h. */
int ft_sim_energy_agrees(const ft_sim_result *r, int sg)
{
    if (r->analytic_reason)
        return 0;
    return sg < 0 ? ft_sim_rel_diff(r->energy_simulated, r->energy_analytic) <= FT_SIM_AGREE_REL
                  : ft_sim_rel_diff(r->sg[sg].energy, r->sg[sg].energy_analytic) <= FT_SIM_AGREE_REL;
}

/* The caller's progress callback, whether it asked to stop, and the
 * replay under way (run of runs): the caller sees one count over them. */
typedef struct relay {
    ft_progress_fn fn;
    void *ctx;
    int stopped;
    int run, runs;
} relay;

static int relay_progress(void *ctx, int64_t done, int64_t total)
{
    relay *r = ctx;
    if (r->fn && r->fn(r->ctx, (int64_t)r->run * total + done, (int64_t)r->runs * total))
        r->stopped = 1;
    return r->stopped;
}

/* Contract: sim.h. */
int ft_sim_effects_count(const ft_problem *p)
{
    int n = 0;
    for (int e = 0; e < NEFFECTS; e++)
        n += effect_present(p, e);
    return n ? n + 1 : 0;
}

/* Contract: sim.h. */
int ft_sim_effects_run(ft_sim *sim, const ft_problem *p, const ft_schedule *s, const ft_sim_opts *o, ft_sim_effects *rep)
{
    memset(rep, 0, sizeof *rep);
    ft_sim_opts so;
    ft_sim_opts_init(&so);
    relay rl = {NULL, NULL, 0, 0, ft_sim_effects_count(p)};
    if (o) {
        so.model = o->model;
        rl.fn = o->progress;
        rl.ctx = o->progress_ctx;
    }
    so.progress = relay_progress;
    so.progress_ctx = &rl;
    if (rl.runs == 0)
        return FT_OK;
    for (int e = 0; e <= NEFFECTS; e++) {
        if (e < NEFFECTS && !effect_present(p, e))
            continue;
        ft_problem *c = ft_problem_clone(p);
        if (!c) {
            ft_sim_effects_free(rep);
            return FT_ENOMEM;
        }
        for (int x = 0; x < NEFFECTS; x++)
            if (x == e || e == NEFFECTS)
                effect_off(c, x);
        rl.run = rep->nvar;
        ft_sim_variant *v = &rep->var[rep->nvar++];
        v->turned_off = e < NEFFECTS ? effect_name[e] : "all effects";
        v->ok = ft_sim_run(sim, c, s, &so, &v->r) == FT_OK;
        if (!v->ok)
            snprintf(v->error, sizeof v->error, "%s", ft_sim_errmsg(sim));
        ft_problem_free(c);
        if (rl.stopped) {
            ft_sim_effects_free(rep);
            return FT_EINPUT;
        }
    }
    return FT_OK;
}

/* Contract: sim.h. */
int ft_sim_accounted(const ft_sim_result *r, const ft_sim_effects *rep, int sg, char *buf, size_t n)
{
    buf[0] = 0;
    if (ft_sim_agrees(r, sg))
        return 1;
    size_t len = 0;
    for (int v = 0; v < rep->nvar - 1; v++)
        if (rep->var[v].ok && ft_sim_agrees(&rep->var[v].r, sg) && len < n)
            len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? ", " : "", rep->var[v].turned_off);
    if (len)
        return 1;
    if (rep->nvar && rep->var[rep->nvar - 1].ok && ft_sim_agrees(&rep->var[rep->nvar - 1].r, sg)) {
        snprintf(buf, n, "the effects together");
        return 1;
    }
    snprintf(buf, n, "nothing");
    return 0;
}

/* Contract: sim.h. */
void ft_sim_effects_free(ft_sim_effects *rep)
{
    if (!rep)
        return;
    for (int v = 0; v < rep->nvar; v++)
        ft_sim_result_free(&rep->var[v].r);
    rep->nvar = 0;
}
