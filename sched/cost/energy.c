/* energy.c - the energy rule (ft_energy, fusetile.h): joules of a subgraph from its work, traffic, footprint and latency; shared with the simulator through shared_rules.h, called by ft_evaluate and the measured-file predictions. */
#include "cost/cost.h"

#include <string.h>
#include <math.h>

/* Contract: shared_rules.h. */
double ft__energy(const ft_problem *p, const ft__energy_counts *c)
{
    const ft_energy *e = &p->energy;
    if (!e->on)
        return 0;
    double moved = c->loaded + c->written;
    double j = e->mac * c->macs + e->pointwise * c->pointwise + e->fast * moved + e->launch;
    if (p->timing.cache_capacity > 0) {
        double miss = ft__cache_miss_share(p, c->fp_read + c->fp_write);
        j += e->cache * moved + miss * (e->slow_read * c->fp_read + e->slow_write * c->fp_write);
    } else {
        j += e->slow_read * c->loaded + e->slow_write * c->written;
    }
    return j + (e->static_watts + e->active_watts) * c->latency * e->seconds_per_unit;
}

/* Contract: cost.h. */
void ft__ops_work(const ft_problem *p, const int *ops, int nops, ft__energy_counts *c)
{
    c->macs = c->pointwise = 0;
    for (int j = 0; j < nops; j++) {
        const ft_op *op = &p->ops[ops ? ops[j] : j];
        double out = (double)ft_tensor_size(p, op->output);
        if (op->type == FT_OP_MATMUL)
            c->macs += out * (double)op->k;
        else
            c->pointwise += out * (double)op->ninputs;
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
    ft__ops_work(p, g->ops, g->nops, c);
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
    ft__ops_work(p, NULL, p->nops, &c);
    int64_t reads, writes;
    ft__compulsory(p, &reads, &writes);
    c.loaded = (double)reads;
    c.written = (double)writes;
    c.latency = t;
    double e = ft__energy(p, &c);
    return o == FT_OBJECTIVE_ENERGY ? e : e * t * p->energy.seconds_per_unit;
}
