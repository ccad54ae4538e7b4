/* cost.c - the cost model's shared rules, each written once: an op's compute in a step, roles and the tile grid, and the "written" rule (SPEC sections 3 and 4). */
#include "cost/cost.h"

#include <stdlib.h>

double ft__op_compute(const ft_problem *p, ft_compute_model model, const ft_op *op, double rows, double cols, double depth)
{
    double units = rows * cols;
    /* Pointwise and Layout ops: depth 1, over their output's region */
    if (op->type == FT_OP_MATMUL)
        units *= depth / (model == FT_COMPUTE_OP ? (double)op->k : (double)ft_native_k(p));
    /* the base cost last: a cost near DBL_MAX times a share below one
     * stays finite (fuzz/regress/schedule/bound-overflow) */
    return op->base_cost * units;
}

double ft_op_compute(const ft_problem *p, ft_compute_model model, const ft_active *a)
{
    const ft_op *op = &p->ops[a->op];
    const ft_region *r = &a->region;
    double depth = a->role == FT_ROLE_UPSTREAM ? (double)op->k : (double)(a->ks1 - a->ks0);
    /* an op that pays its exact elements takes every dimension's share */
    const int padded = ft__op_padded(p, op);
    return ft__op_compute(p, model, op, ft__dim_units(r->r1 - r->r0, p->native_h, padded ? a->row_kind : FT_DIM_REDUCTION),
                          ft__dim_units(r->c1 - r->c0, p->native_w, padded ? a->col_kind : FT_DIM_REDUCTION), depth);
}

int ft__sg_grid(const ft_problem *p, const ft_subgraph *g, ft_role *roles, int64_t *ntx, int64_t *nty, int64_t *nk)
{
    /* feeds[j]: output of g->ops[j] feeds a MatMul inside g, directly or
     * through Pointwise and Layout ops.  Consumers are listed after
     * producers, so a reverse pass sees them first. */
    unsigned char small[64];
    unsigned char *feeds = g->nops <= 64 ? small : ft__malloc((size_t)g->nops);
    int64_t wg = 0, hg = 0, steps = 1;
    if (!feeds) {
        *ntx = *nty = *nk = 1;
        return FT_ENOMEM;
    }
    for (int j = g->nops - 1; j >= 0; j--) {
        int t = p->ops[g->ops[j]].output;
        feeds[j] = 0;
        for (int m = j + 1; m < g->nops && !feeds[j]; m++) {
            const ft_op *c = &p->ops[g->ops[m]];
            for (int i = 0; i < c->ninputs; i++)
                if (c->inputs[i] == t && (c->type == FT_OP_MATMUL || feeds[m])) {
                    feeds[j] = 1;
                    break;
                }
        }
        const ft_op *op = &p->ops[g->ops[j]];
        ft_role r = feeds[j] ? FT_ROLE_UPSTREAM : op->type == FT_OP_MATMUL ? FT_ROLE_KLOOP : FT_ROLE_EPILOGUE;
        if (roles)
            roles[j] = r;
        if (r != FT_ROLE_UPSTREAM) {
            const ft_tensor *T = &p->tensors[t];
            if (T->width > wg)
                wg = T->width;
            if (T->height > hg)
                hg = T->height;
            if (r == FT_ROLE_KLOOP && ft__ceil_div(op->k, g->k) > steps)
                steps = ft__ceil_div(op->k, g->k);
        }
    }
    if (feeds != small)
        ft__free(feeds);
    *ntx = ft__ceil_div(wg, g->w);
    *nty = ft__ceil_div(hg, g->h);
    *nk = steps;
    return FT_OK;
}

int ft__ops_use(const ft_problem *p, const int *ops, int nops, int t)
{
    int u = 0;
    for (int j = 0; j < nops; j++) {
        const ft_op *op = &p->ops[ops[j]];
        if (op->output == t)
            u |= FT_USE_PRODUCES;
        for (int i = 0; i < op->ninputs; i++)
            if (op->inputs[i] == t)
                u |= FT_USE_CONSUMES;
    }
    return u;
}

int ft__written_rule(const ft_problem *p, int t, int i, int retained, int nsg, ft__ops_of_fn ops_of, const void *ctx)
{
    if (p->tensors[t].nconsumers == 0)
        return 1; /* graph output */
    for (int j = i + 1; j < nsg; j++) {
        int n;
        const int *ops = ops_of(ctx, j, &n);
        int u = ft__ops_use(p, ops, n, t);
        if (u & FT_USE_PRODUCES)
            return 0; /* made again before any later load */
        if (u & FT_USE_CONSUMES) {
            if (j == i + 1 && retained)
                continue; /* resident there */
            return 1;
        }
    }
    return 0;
}
