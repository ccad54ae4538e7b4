/* bound.c - the lower bound of SPEC section 5: max(total compute, compulsory traffic / bandwidth), compute paying a dimension proportionally where it can be a reduction dimension, with a target's timing terms (compute shared by its units, traffic at its fastest bandwidths, and tbound.c's terms: the busiest op's waves, the fewest steps' and tiles' overheads, the shared cache's floor). */
#include "cost/cost.h"

#include <stdlib.h>

void ft__reduction_flags(const ft_problem *p, unsigned char *rw, unsigned char *rh)
{
    for (int t = 0; t < p->ntensors; t++)
        rw[t] = rh[t] = 0;
    /* consumers before producers (reverse topological order): one pass
     * reaches the least fixpoint, since an op's rule only reads its output's
     * flags, which every consumer of that output has set already */
    for (int i = p->nops - 1; i >= 0; i--) {
        const ft_op *op = &p->ops[p->topo[i]];
        int o = op->output;
        if (op->type == FT_OP_MATMUL) {
            int l = op->inputs[0], r = op->inputs[1];
            rw[l] = rh[r] = 1;          /* the K dimension */
            rh[l] |= rh[o];
            rw[r] |= rw[o];
        } else {
            /* Pointwise, and Layout: its input's dimensions keep the kinds
             * of its output's (SPEC 4) */
            for (int j = 0; j < op->ninputs; j++) {
                rw[op->inputs[j]] |= rw[o];
                rh[op->inputs[j]] |= rh[o];
            }
        }
    }
}

void ft__compulsory(const ft_problem *p, int64_t *reads, int64_t *writes)
{
    *reads = *writes = 0;
    for (int t = 0; t < p->ntensors; t++) {
        /* a tensor no op produces or reads starts where it must end: no
         * traffic (counting it read let the bound exceed a valid
         * schedule's total: fuzz/regress/schedule/orphan-tensor) */
        if (p->tensors[t].producer < 0 && p->tensors[t].nconsumers > 0)
            *reads += ft_tensor_size(p, t);
        else if (p->tensors[t].producer >= 0 && p->tensors[t].nconsumers == 0)
            *writes += ft_tensor_size(p, t);
    }
}

double ft__op_least_compute(const ft_problem *p, ft_compute_model model, const ft_op *op, const unsigned char *rw,
                            const unsigned char *rh)
{
    const ft_tensor *O = &p->tensors[op->output];
    /* out of memory: no flags, every dimension padded (the old, larger
     * figure would not be a bound; the proportional one always is) */
    int fw = rw ? rw[op->output] : 1, fh = rh ? rh[op->output] : 1;
    if (!ft__op_padded(p, op))   /* it pays its exact elements */
        fw = fh = 1;
    /* over the op's output, Layout ops as Pointwise ones (SPEC 5) */
    /* g(len, n, r) of SPEC 5: a reduction dimension's share where r
     * holds, else whole native tiles (ft__dim_units) */
    return ft__op_compute(p, model, op, ft__dim_units(O->height, p->native_h, fh ? FT_DIM_REDUCTION : FT_DIM_SPATIAL),
                          ft__dim_units(O->width, p->native_w, fw ? FT_DIM_REDUCTION : FT_DIM_SPATIAL), (double)op->k);
}

double ft_lower_bound(const ft_problem *p, ft_compute_model model, double *compute, double *memory)
{
    unsigned char *rw = ft__malloc(2 * (size_t)p->ntensors + 1), *rh = NULL;
    if (rw) {
        rh = rw + p->ntensors;
        ft__reduction_flags(p, rw, rh);
    }
    double c = 0;
    for (int o = 0; o < p->nops; o++)
        c += ft__op_least_compute(p, model, &p->ops[o], rw, rh);
    /* every schedule has a step and a tile, one with a MatMul if p has
     * one: their overheads are compute the units share too (tbound.c) */
    int mm = 0;
    for (int o = 0; o < p->nops; o++)
        mm |= p->ops[o].type == FT_OP_MATMUL;
    c += ft__tile_overheads(p, mm);
    /* several units share the compute (ft_timing) */
    c /= (double)ft__units(p);
    /* the waves of the op whose work spreads worst over the units
     * (tbound.c; without flags, out of memory, only its even share) */
    double waves = ft__op_waves(p, model, rw, rh, NULL, p->nops);
    ft__free(rw);
    int64_t reads, writes;
    ft__compulsory(p, &reads, &writes);
    /* the compulsory traffic as one step's transfers: at least the time
     * ft_step_time gives it (latency once, bandwidths as the machine has
     * them, a shared cache's if faster), and every subgraph pays the
     * launch overhead: there is one */
    double m;
    ft__rates r;
    ft__fastest_rates(p, &r);
    ft__step_time_at(p, &r, 0, reads, writes, &m);
    if (compute)
        *compute = ft__units(p) == 1 || p->timing.overlap != FT_OVERLAP_NONE ? (waves > c ? waves : c) : c;
    if (memory)
        *memory = m;
    return ft__bound_target(p, c, m, waves, ft__cache_floor(p));
}

double ft__bound_target(const ft_problem *p, double c, double m, double waves, double floor_)
{
    /* one unit, or steps that overlap their transfers: the busiest op's
     * waves are compute like the rest; several units without overlap: a
     * bound of their own (a wave's slowest tile need not be the one that
     * moves the data) */
    double sep = 0;
    if (ft__units(p) == 1 || p->timing.overlap != FT_OVERLAP_NONE) {
        if (waves > c)
            c = waves;
    } else {
        sep = waves;
    }
    /* the shared cache's floor, a bound of its own: it replaces a
     * subgraph's steps, it does not add to them */
    if (floor_ > sep)
        sep = floor_;
    double b = ft__bound_combine(p, c, m), s = sep + ft__sg_fixed_least(p, m, 1);
    return sep > 0 && s > b ? s : b;
}
