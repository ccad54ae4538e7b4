/* capbound.c - the capacity-aware lower bound (SPEC section 7): slow-memory traffic that the fast memory's capacity forces on top of the compulsory graph inputs and outputs, combined with compute as the SPEC bound does.
 *
 * Proof (SPEC.md section 7 has it with an example).  Let o be a MatMul
 * [L, R] -> O (O is H x W, depth K) whose L and R are two distinct graph
 * inputs that no other op consumes.  Call (i, j, x) a triple of o: output
 * element (i, j) and reduction index x.
 *  1. Every triple is covered by some step: every element of every tensor
 *     a graph output depends on is computed at least once with its full
 *     reduction (a graph output is written from whole tiles; an input of an
 *     op is a slice, resident or ephemeral, and slices and resident tensors
 *     come from complete computations), and a MatMul computes an element
 *     within one tile's k-steps (k-loop) or one step (upstream).  A step
 *     where o computes rows r x cols c over the k-slice kappa covers
 *     r x c x kappa triples and holds the slices L[r rows, kappa] and
 *     R[kappa, c cols] (graph inputs are never resident).
 *  2. Only o needs L or R, so a step's slices of L and R are exactly o's
 *     needs.  A slice is not loaded only when the previous step of the
 *     subgraph had it.  If neither is loaded, o had the same rows, kappa and
 *     cols in the previous step: no triple is new.  If only R is loaded
 *     (kappa c elements) the step covers at most r x (kappa c) triples; if
 *     only L, at most c x (r kappa); if both, r c kappa <= min(r, c) x
 *     (r kappa + kappa c).  So a step's new triples are at most
 *     rho x (its loads of L and R), rho the most rows or columns o's region
 *     can have.
 *  3. rho: a region's rows are at most H, and the two slices fit the
 *     capacity: r kappa + kappa c <= capacity, so r <= capacity - 1.  A
 *     k-loop MatMul's region is the tile (r <= h <= nh unless the problem
 *     allows larger granularities); an upstream MatMul reduces its full K,
 *     so r <= capacity / K - 1.  Likewise for columns.
 *  Hence loads of L and R >= H W K / rho, and the traffic of any schedule
 *  is at least the compulsory traffic plus, summed over such ops (their
 *  tensors are disjoint), max(0, ceil(H W K / rho) - |L| - |R|).
 * The traffic time is ft_step_time's for that many elements moved as one
 * step (as ft_lower_bound does for the compulsory traffic; the latency terms
 * can only add), combined with the SPEC bound's compute by
 * ft__bound_combine; the result is never below ft_lower_bound. */
#include "internal.h"

#include <math.h>

/* The most rows (n = nh, len = H) or columns (n = nw, len = W) a region of
 * MatMul op can have in a step that holds both of its operand slices. */
static double region_max(const ft_problem *p, const ft_op *op, int64_t len, int64_t n)
{
    double cap = floor(p->capacity);
    double up = floor(p->capacity / (double)op->k) - 1;   /* upstream: kappa = K */
    double kl = p->allow_larger ? cap - 1 : (double)n;     /* k-loop: the tile */
    double m = kl > up ? kl : up;
    if (m > cap - 1)
        m = cap - 1;
    if (m > (double)len)
        m = (double)len;
    return m < 1 ? 1 : m;
}

/* Elements of L and R that op o must load beyond their sizes (proof above);
 * 0 when o is not a MatMul with two exclusive graph-input operands. */
static double forced_extra(const ft_problem *p, const ft_op *op)
{
    if (op->type != FT_OP_MATMUL)
        return 0;
    int l = op->inputs[0], r = op->inputs[1];
    const ft_tensor *L = &p->tensors[l], *R = &p->tensors[r], *O = &p->tensors[op->output];
    if (l == r || L->producer >= 0 || R->producer >= 0 || L->nconsumers != 1 || R->nconsumers != 1)
        return 0;
    double rmax = region_max(p, op, O->height, p->native_h);
    double cmax = region_max(p, op, O->width, p->native_w);
    double rho = rmax > cmax ? rmax : cmax;
    double triples = (double)O->height * (double)O->width * (double)op->k;
    double need = ceil(triples / rho) - (double)ft_tensor_size(p, l) - (double)ft_tensor_size(p, r);
    return need > 0 ? need : 0;
}

double ft_lower_bound_capacity(const ft_problem *p, ft_compute_model model, double *compute, double *memory)
{
    double c, m;
    double spec = ft_lower_bound(p, model, &c, &m);
    int64_t reads, writes;
    ft__compulsory(p, &reads, &writes);
    double extra = 0;
    for (int o = 0; o < p->nops; o++)
        extra += forced_extra(p, &p->ops[o]);
    double mc = m;
    if (extra > 0 && extra < 9e18) {
        ft_step_time(p, 0, reads + (int64_t)extra, writes, &mc);
        if (mc < m)
            mc = m;
    }
    double b = ft__bound_combine(p, c, mc);
    if (compute)
        *compute = c;
    if (memory)
        *memory = mc;
    return b > spec ? b : spec;
}
