/* energy.c - the energy rule and the power rule (ft_energy, fusetile.h): joules of a subgraph from its work, traffic, footprint and latency, and its latency under a power limit; shared with the simulator through shared_rules.h, called by ft_evaluate, the scorer and the measured-file predictions. */
#include "cost/cost.h"

#include <math.h>
#include <string.h>

/* The least power left to run at, as a share of the power limit (see
 * ft__power_latency). */
#define FT_POWER_MIN_SHARE 1e-3

/* The dynamic joules of a subgraph of p with counts c: every term of the
 * energy rule but the watts x latency one, at the full clock. */
static double dynamic_joules(const ft_problem *p, const ft__energy_counts *c)
{
    const ft_energy *e = &p->energy;
    double moved = c->loaded + c->written;
    double j = e->mac * c->macs + e->pointwise * c->pointwise + e->fast * moved + e->launch;
    if (p->timing.cache_capacity > 0) {
        double miss = ft__cache_miss_share(p, c->fp_read + c->fp_write);
        j += e->cache * moved + miss * (e->slow_read * c->fp_read + e->slow_write * c->fp_write);
    } else {
        j += e->slow_read * c->loaded + e->slow_write * c->written;
    }
    return j;
}

/* Contract: shared_rules.h. */
double ft__energy(const ft_problem *p, const ft__energy_counts *c)
{
    const ft_energy *e = &p->energy;
    if (!e->on)
        return 0;
    double j = dynamic_joules(p, c), w = e->static_watts + e->active_watts, secs = c->latency * e->seconds_per_unit;
    /* under the limit the lowered clock and voltage leave the dynamic part
     * at the power left times the latency (ft__power_latency) */
    if (e->power_limit > 0 && secs > 0)
        j = fmin(j, fmax(e->power_limit - w, FT_POWER_MIN_SHARE * e->power_limit) * secs);
    return j + w * secs;
}

/* Contract: shared_rules.h. */
double ft__power_latency(const ft_problem *p, const ft__energy_counts *c)
{
    const ft_energy *e = &p->energy;
    double t = c->latency;
    if (!ft__power_limited(p) || !(t > 0) || !isfinite(t))
        return t;
    /* D joules over t at the full clock; at a clock s times it, D s^2
     * over t / s draws D s^3 / t: the power left A is met at
     * s = cbrt(A t / D) */
    double d = dynamic_joules(p, c), avail = e->power_limit - e->static_watts - e->active_watts, secs = t * e->seconds_per_unit;
    /* the target loader refuses a limit at or under static_watts +
     * active_watts; a fit (calibrate) that moves active_watts past it
     * meets the least power left, a share of the limit, not a failure */
    avail = fmax(avail, FT_POWER_MIN_SHARE * e->power_limit);
    if (!(d > avail * secs))
        return t;
    return cbrt(d * secs * secs / avail) / e->seconds_per_unit;
}

/* Contract: shared_rules.h. */
void ft__ops_work(const ft_problem *p, const int *ops, int nops, double *macs, double *pointwise)
{
    *macs = *pointwise = 0;
    for (int j = 0; j < nops; j++) {
        const ft_op *op = &p->ops[ops ? ops[j] : j];
        double out = (double)ft_tensor_size(p, op->output);
        if (op->type == FT_OP_MATMUL)
            *macs += out * (double)op->k;
        else
            *pointwise += out * (double)op->ninputs;
    }
}

/* Contract: shared_rules.h. */
int ft__sg_energy_counts(const ft_problem *p, const ft_schedule *s, int sg, ft__energy_counts *c)
{
    int nt = p->ntensors;
    unsigned char *tb = ft__calloc(4 * (size_t)nt + 1, 1);
    if (!tb)
        return FT_ENOMEM;
    unsigned char *produced = tb, *written = tb + nt, *seen = tb + 2 * nt, *resident = tb + 3 * nt;
    ft__sg_tensors(p, s, sg, produced, written, seen, resident);
    memset(seen, 0, (size_t)nt); /* the retained flags, reused */
    const ft_subgraph *g = &s->sg[sg];
    ft__ops_work(p, g->ops, g->nops, &c->macs, &c->pointwise);
    int64_t reads, writes;
    ft__sg_footprint(p, g->ops, g->nops, produced, written, resident, seen, &reads, &writes);
    c->fp_read = (double)reads;
    c->fp_write = (double)writes;
    ft__free(tb);
    return FT_OK;
}

/* Contract: cost.h. */
void ft__sg_footprint(const ft_problem *p, const int *ops, int nops, const unsigned char *produced, const unsigned char *written,
                      const unsigned char *resident, unsigned char *seen, int64_t *reads, int64_t *writes)
{
    *reads = *writes = 0;
    for (int j = 0; j < nops; j++) {
        const ft_op *op = &p->ops[ops[j]];
        for (int k = 0; k <= op->ninputs; k++) {
            int t = k < op->ninputs ? op->inputs[k] : op->output;
            int moved = k < op->ninputs ? !produced[t] && !resident[t] : written[t];
            if (moved && !seen[t]) {
                seen[t] = 1;
                *(k < op->ninputs ? reads : writes) += ft_tensor_size(p, t);
            }
        }
    }
}

/* Contract: fusetile.h. */
double ft_energy_watts(const ft_problem *p, double joules, double latency)
{
    if (!p->energy.on || !(latency > 0))
        return 0;
    return joules / (latency * p->energy.seconds_per_unit);
}

/* Contract: cost.h. */
void ft__objective_init(ft__objective *ob, ft_objective kind)
{
    ob->kind = kind;
    ob->we = kind == FT_OBJECTIVE_LATENCY ? 0 : 1;
    ob->wt = kind == FT_OBJECTIVE_LATENCY ? 1 : 0;
}

/* Contract: cost.h. */
double ft__objective_of(const ft_problem *p, const ft__objective *ob, const ft__energy_counts *c)
{
    if (ob->we == 0 && ob->wt == 1)
        return c->latency;
    if (c->latency == HUGE_VAL)
        return HUGE_VAL;
    return ob->we * ft__energy(p, c) + ob->wt * c->latency;
}

static const char *const objective_names[FT_OBJECTIVE_COUNT] = {"latency", "energy", "edp"};

/* Contract: fusetile.h. */
const char *ft_objective_name(ft_objective o)
{
    return (int)o >= 0 && o < FT_OBJECTIVE_COUNT ? objective_names[o] : NULL;
}

/* Contract: fusetile.h. */
int ft_objective_parse(const char *name, ft_objective *o)
{
    for (int i = 0; name && i < FT_OBJECTIVE_COUNT; i++)
        if (strcmp(name, objective_names[i]) == 0) {
            *o = (ft_objective)i;
            return 0;
        }
    return -1;
}

/* Contract: fusetile.h. */
double ft_objective_value(const ft_problem *p, ft_objective o, const ft_eval *ev)
{
    if (o == FT_OBJECTIVE_LATENCY)
        return ev->total;
    if (!p->energy.on)
        return 0;
    return o == FT_OBJECTIVE_ENERGY ? ev->energy : ev->energy * ev->total * p->energy.seconds_per_unit;
}

/* Contract: fusetile.h.  Every schedule runs each op once: its MACs and
 * pointwise inputs whatever the grouping; it moves at least the
 * compulsory traffic (ft__compulsory) from and to slow memory, each
 * element through the fast memory and, with a shared cache, through the
 * cache (the slow-memory share past the cache, ft__cache_miss_share, is
 * >= 0: bounded by 0, a footprint of 0); it launches at least one
 * subgraph and lasts at least the latency bound. */
double ft_objective_bound(const ft_problem *p, ft_compute_model model, ft_objective o)
{
    double t = ft_lower_bound_capacity(p, model, NULL, NULL);
    if (o == FT_OBJECTIVE_LATENCY)
        return t;
    if (!p->energy.on)
        return 0;
    ft__energy_counts c = {0};
    ft__ops_work(p, NULL, p->nops, &c.macs, &c.pointwise);
    int64_t reads, writes;
    ft__compulsory(p, &reads, &writes);
    c.loaded = (double)reads;
    c.written = (double)writes;
    c.latency = t;
    double e = ft__energy(p, &c);
    return o == FT_OBJECTIVE_ENERGY ? e : e * t * p->energy.seconds_per_unit;
}
