/* oneop.h - one-op-per-subgraph schedules and granularity candidates, shared by tools/baseline.c, bench/ and tests/unit/ (header-only, public API only). */
#ifndef FT_ONEOP_H
#define FT_ONEOP_H

#include "fusetile/fusetile.h"

#include <stdint.h>
#include <stdlib.h>

/* Dimensions of a granularity [w, h, k], as indices into a 3-array. */
enum { ONEOP_W = 0, ONEOP_H = 1, ONEOP_K = 2 };

/* Divisors are searched up to this bound, so that an absurd native
 * granularity in a problem file cannot make the search quadratic. */
#define ONEOP_DIVISOR_SEARCH 65536

static inline int64_t oneop_ceil_div(int64_t a, int64_t b)
{
    return a / b + (a % b != 0);
}

/* Upper limit of dimension `dim` of a granularity: native w, native h, and
 * native k (= native w). */
static inline int64_t oneop_limit(const ft_problem *p, int dim)
{
    return dim == ONEOP_H ? p->native_h : p->native_w;
}

/* Steps of the one-op subgraph [op] at granularity g: the tile grid covers
 * the op's output; a MatMul runs ceil(K / k) k-steps per tile (saturates at
 * INT64_MAX; a tile count alone cannot overflow, widths x heights having
 * been checked at load). */
static inline int64_t oneop_op_steps(const ft_problem *p, int op,
                                     const int64_t g[3])
{
    const ft_op *o = &p->ops[op];
    const ft_tensor *t = &p->tensors[o->output];
    int64_t n = oneop_ceil_div(t->width, g[ONEOP_W]) *
                oneop_ceil_div(t->height, g[ONEOP_H]);
    if (o->type == FT_OP_MATMUL) {
        int64_t nk = oneop_ceil_div(o->k, g[ONEOP_K]);
        n = n > INT64_MAX / nk ? INT64_MAX : n * nk;
    }
    return n;
}

/* Total steps of the one-op-per-subgraph schedule at granularity g
 * (saturates at INT64_MAX). */
static inline int64_t oneop_steps(const ft_problem *p, const int64_t g[3])
{
    int64_t n = 0;
    for (int i = 0; i < p->nops; i++) {
        int64_t m = oneop_op_steps(p, i, g);
        n = n > INT64_MAX - m ? INT64_MAX : n + m;
    }
    return n;
}

/* One-op-per-subgraph schedule in the order p->topo, every subgraph at
 * granularity g, nothing retained, raster order.  NULL when out of memory;
 * the caller frees the result with ft_schedule_free. */
static inline ft_schedule *oneop_schedule(const ft_problem *p,
                                          const int64_t g[3])
{
    ft_schedule *s = ft_schedule_new(p->nops);
    if (!s)
        return NULL;
    for (int i = 0; i < p->nops; i++) {
        ft_subgraph *sg = &s->sg[i];
        if (ft_subgraph_set_ops(sg, &p->topo[i], 1) != FT_OK) {
            ft_schedule_free(s);
            return NULL;
        }
        sg->w = g[ONEOP_W];
        sg->h = g[ONEOP_H];
        sg->k = g[ONEOP_K];
    }
    return s;
}

static inline int oneop_cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Candidate values of dimension `dim` (ONEOP_W, ONEOP_H or ONEOP_K): powers
 * of two up to the native limit, the limit itself, and the divisors (<= the
 * limit) of the sizes that dimension tiles: output widths for w, output
 * heights for h, the reduction depths K of MatMuls for k (a problem without
 * MatMul gets the single k candidate native, k being irrelevant there).
 * Stores a malloc'd ascending array without duplicates in *out (the caller
 * frees it) and returns its length, or -1 when out of memory. */
static inline int oneop_candidates(const ft_problem *p, int dim, int64_t **out)
{
    int64_t limit = oneop_limit(p, dim);
    int64_t search = limit < ONEOP_DIVISOR_SEARCH ? limit : ONEOP_DIVISOR_SEARCH;
    size_t cap = 128, n = 0;
    int64_t *v = malloc(cap * sizeof *v);
    if (!v)
        return -1;
#define ONEOP_PUSH(x)                                               \
    do {                                                            \
        if (n == cap) {                                             \
            int64_t *nv_ = realloc(v, 2 * cap * sizeof *v);         \
            if (!nv_) {                                             \
                free(v);                                            \
                return -1;                                          \
            }                                                       \
            v = nv_;                                                \
            cap *= 2;                                               \
        }                                                           \
        v[n++] = (x);                                               \
    } while (0)
    int any_matmul = 0;
    for (int i = 0; i < p->nops; i++)
        any_matmul |= p->ops[i].type == FT_OP_MATMUL;
    if (dim == ONEOP_K && !any_matmul) {
        ONEOP_PUSH(limit);
    } else {
        for (int64_t x = 1; x <= limit && x > 0; x *= 2)
            ONEOP_PUSH(x);
        ONEOP_PUSH(limit);
        for (int i = 0; i < p->nops; i++) {
            const ft_op *o = &p->ops[i];
            const ft_tensor *t = &p->tensors[o->output];
            int64_t size = dim == ONEOP_W ? t->width
                         : dim == ONEOP_H ? t->height : o->k;
            if (dim == ONEOP_K && o->type != FT_OP_MATMUL)
                continue;
            for (int64_t d = 1; d <= search && d <= size; d++)
                if (size % d == 0)
                    ONEOP_PUSH(d);
        }
    }
#undef ONEOP_PUSH
    qsort(v, n, sizeof *v, oneop_cmp_i64);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (m == 0 || v[m - 1] != v[i])
            v[m++] = v[i];
    *out = v;
    return (int)m;
}

/* Largest granularity, from native down by halving one dimension at a time
 * (k first, then w, then h, round-robin), whose one-op-per-subgraph schedule
 * has at least min_steps steps; stops at [1, 1, 1].  Result in g. */
static inline void oneop_granularity_for_steps(const ft_problem *p,
                                               int64_t min_steps, int64_t g[3])
{
    static const int turn[3] = { ONEOP_K, ONEOP_W, ONEOP_H };
    g[ONEOP_W] = p->native_w;
    g[ONEOP_H] = p->native_h;
    g[ONEOP_K] = p->native_w;
    for (int i = 0; oneop_steps(p, g) < min_steps; i++) {
        if (g[0] == 1 && g[1] == 1 && g[2] == 1)
            break;
        int d = turn[i % 3];
        if (g[d] > 1)
            g[d] = (g[d] + 1) / 2;
    }
}

#endif /* FT_ONEOP_H */
