/* gap.c - where a schedule's gap to the lower bound lies (ft_gap_report): the bound of its own grouping, each subgraph bounded alone with the target's terms (bound.c, tbound.c), against the total and the whole problem's bound. */
#include "cost/cost.h"

#include <string.h>

/* The bound of subgraph i of s alone: its ops' compute (SPEC 5's flags of
 * p, which only lower it), one tile's overheads, the busiest op's waves,
 * the traffic its grouping forces (each input neither produced in it nor
 * resident, and each written output, once), the shared cache's floor on
 * that footprint when it does not fit (walk.c's floor exactly), and its
 * launch.  Scratch: 4 x ntensors bytes in tb. */
static double sg_bound(const ft_problem *p, const ft_schedule *s, int i, ft_compute_model model, const unsigned char *rw,
                       const unsigned char *rh, unsigned char *tb)
{
    const ft_subgraph *g = &s->sg[i];
    int nt = p->ntensors;
    unsigned char *produced = tb, *written = tb + nt, *retained = tb + 2 * nt, *resident = tb + 3 * nt;
    ft__sg_tensors(p, s, i, produced, written, retained, resident);
    double c = 0;
    int mm = 0;
    for (int j = 0; j < g->nops; j++) {
        const ft_op *op = &p->ops[g->ops[j]];
        c += ft__op_least_compute(p, model, op, rw, rh);
        mm |= op->type == FT_OP_MATMUL;
    }
    c = (c + ft__tile_overheads(p, mm)) / (double)ft__units(p);
    double waves = ft__op_waves(p, model, rw, rh, g->ops, g->nops);
    /* retained doubles as "seen": each tensor counted once */
    memset(retained, 0, (size_t)nt);
    int64_t reads = 0, writes = 0;
    for (int j = 0; j < g->nops; j++) {
        const ft_op *op = &p->ops[g->ops[j]];
        for (int k = 0; k <= op->ninputs; k++) {
            int t = k < op->ninputs ? op->inputs[k] : op->output;
            int moved = k < op->ninputs ? !produced[t] && !resident[t] : written[t];
            if (moved && !retained[t]) {
                retained[t] = 1;
                *(k < op->ninputs ? &reads : &writes) += ft_tensor_size(p, t);
            }
        }
    }
    ft__rates r;
    double m, floor_ = 0;
    ft__fastest_rates(p, &r);
    ft__step_time_at(p, &r, 0, reads, writes, &m);
    /* (not with double buffering: a configuration of one step pays none,
     * ft__cache_floor) */
    if (p->timing.cache_capacity > 0 && p->timing.overlap != FT_OVERLAP_PIPELINE &&
        (double)(reads + writes) > p->timing.cache_capacity) {
        ft__rates own;
        ft__rates_init(p, &own);
        floor_ = (double)reads / own.rb + (double)writes / own.wb;
    }
    return ft__bound_target(p, c, m, waves, floor_);
}

/* Contract: fusetile.h. */
int ft_gap_report(const ft_problem *p, const ft_schedule *s, ft_compute_model model, double total, ft_gap *out,
                  ft_status *st)
{
    memset(out, 0, sizeof *out);
    int nt = p->ntensors;
    unsigned char *buf = ft__malloc(6 * (size_t)nt + 1);
    if (!buf)
        return ft__fail(st, FT_ENOMEM, 0, "out of memory");
    unsigned char *rw = buf, *rh = buf + nt;
    ft__reduction_flags(p, rw, rh);
    double lb = ft_lower_bound(p, model, NULL, NULL), cb = ft_lower_bound_capacity(p, model, NULL, NULL);
    ksum g = {0, 0};
    for (int i = 0; i < s->nsubgraphs; i++)
        ksum_add(&g, sg_bound(p, s, i, model, rw, rh, buf + 2 * nt));
    ft__free(buf);
    out->total = total;
    out->bound = cb > lb ? cb : lb;
    out->grouping_bound = ksum_value(&g);
    out->nsubgraphs = s->nsubgraphs;
    double G = out->grouping_bound > out->bound ? out->grouping_bound : out->bound;
    out->ratio = out->bound > 0 ? total / out->bound : 0;
    out->within = G > 0 ? total / G : 0;
    out->between = out->bound > 0 ? G / out->bound : 0;
    out->in_bound = out->within >= out->between;
    return FT_OK;
}
