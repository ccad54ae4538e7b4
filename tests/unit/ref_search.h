/* ref_search.h - exhaustive reference scheduler for small problems (every partition, order, granularity, traversal and retention; no recomputation), scored only through the public cost model; header-only, for test_exhaustive.c and tools/exact.c. */
#ifndef FT_REF_SEARCH_H
#define FT_REF_SEARCH_H

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fusetile/fusetile.h"

/* The search space (the contract of this reference):
 *  - every partition of the ops into subgraphs connected through their
 *    tensors (SPEC 2: ops linked by any tensor one produces or consumes and
 *    another consumes), each op in exactly one subgraph;
 *  - every topological order of the subgraphs (a partition whose quotient
 *    graph has a cycle has none); ops inside a subgraph in the order of
 *    p->topo (with REF_ALL_OP_ORDERS: in every topological order, which the
 *    cost model can tell apart through the dimension kinds of upstream ops);
 *  - per subgraph every (w, h, k): w in {powers of two <= nw} u {divisors
 *    <= nw of the width of a tensor the subgraph produces}, h likewise with
 *    heights and nh, k in {powers of two <= nw} u {divisors <= nw of K of a
 *    MatMul of the subgraph} (k = 1 only when there is no MatMul); with
 *    REF_ALL_GRANULARITIES every w in 1..nw, h in 1..nh, k in 1..nw;
 *  - traversal: raster, row snake, column snake (a snake equal to raster is
 *    tried once);
 *  - retention: for consecutive subgraphs, every subset of the tensors S_i
 *    produces and S_{i+1} consumes.
 * Scores come from ft_schedule_validate + ft_evaluate_subgraph; the winner
 * is re-evaluated with ft_evaluate.  Exact pruning only: for a fixed ordered
 * partition the total is a sum of per-subgraph costs that depend on the
 * subgraph's own configuration, its resident set R_{i-1}, its retained set
 * R_i and its written set, so a DP over i with state R_i is exact; each
 * (subgraph, resident, retained, written) context is minimised once and
 * cached; inside a context a configuration is skipped only when a lower
 * bound on its latency (below) is already >= the context's best. */

#define REF_MAX_OPS 8

enum { REF_RASTER = 0, REF_ROW_SNAKE = 1, REF_COL_SNAKE = 2 };

/* Flags of ref_search. */
enum {
    REF_NO_PRUNE = 1,      /* evaluate every configuration (slow; checks the bound) */
    REF_ALL_OP_ORDERS = 2, /* every topological op order inside a subgraph */
    REF_ALL_GRANULARITIES = 4 /* every w in 1..nw, h in 1..nh, k in 1..nw (k = 1
                                 without MatMul): for small native sizes */
};

/* A subgraph configuration: op order, granularity and traversal kind. */
typedef struct ref_cfg {
    int ops[REF_MAX_OPS];  /* the subgraph's ops in list order */
    int64_t w, h, k;
    int order;
} ref_cfg;

/* What the search did (for reports). */
typedef struct ref_stats {
    long partitions;      /* set partitions into connected subgraphs */
    long ordered;         /* ordered partitions scored by the DP */
    long ordered_invalid; /* ordered partitions ft_schedule_validate rejects */
    long contexts;        /* distinct contexts minimised */
    long configs;         /* (w, h, k) configurations considered */
    long op_orders;       /* op orders tried per context, summed */
    long pruned;          /* of which skipped by the bound */
    long evaluations;     /* ft_evaluate_subgraph calls */
    long oom;             /* of which over capacity */
} ref_stats;

/* Result of ref_search. */
typedef struct ref_result {
    int found;           /* 0: no valid schedule in the space */
    double total;        /* ft_evaluate total of best */
    ft_schedule *best;   /* owned by the result (release with ref_result_free);
                            its reported latencies are ft_evaluate's */
    ref_stats stats;
} ref_result;

/* ------------------------------------------------------------ internals */

typedef struct ref_entry {
    uint32_t key;        /* 0: empty slot (a key always has a nonempty block) */
    int found;           /* some configuration is valid */
    double cost;         /* its minimum latency */
    ref_cfg cfg;         /* the minimising configuration */
} ref_entry;

typedef struct ref_state {
    const ft_problem *p;
    ft_compute_model model;
    int prune, all_op_orders, all_granularities;
    int n;                                /* ops */
    unsigned consumers[REF_MAX_OPS];      /* ops reading op o's output */
    unsigned char connected[1u << REF_MAX_OPS];
    ref_entry *tab;                       /* context cache, open addressing */
    size_t cap, used;
    int nblocks;                          /* the current partition */
    unsigned block[REF_MAX_OPS];
    unsigned pred[REF_MAX_OPS];           /* blocks that must run before b */
    int order[REF_MAX_OPS];               /* block indices, execution order */
    double best_total;                    /* DP total of best */
    ft_schedule *best;
    ref_stats stats;
    int failed;
    char *err;
    size_t errlen;
} ref_state;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void ref_fail(ref_state *S, const char *fmt, ...)
{
    va_list ap;
    if (S->failed)
        return;
    S->failed = 1;
    va_start(ap, fmt);
    vsnprintf(S->err, S->errlen, fmt, ap);
    va_end(ap);
}

static int64_t ref_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Ops of mask in p->topo order; returns their count. */
static int ref_block_ops(const ref_state *S, unsigned mask, int *ops)
{
    int n = 0;
    for (int j = 0; j < S->p->nops; j++)
        if (mask >> S->p->topo[j] & 1u)
            ops[n++] = S->p->topo[j];
    return n;
}

/* Output tensors of the ops in mask, ascending op order; returns count. */
static int ref_mask_tensors(const ref_state *S, unsigned mask, int *tensors)
{
    int n = 0;
    for (int o = 0; o < S->n; o++)
        if (mask >> o & 1u)
            tensors[n++] = S->p->ops[o].output;
    return n;
}

/* Whether the ops of mask form one component when ops are joined through
 * every tensor they produce or consume (SPEC 2's connectivity rule). */
static int ref_is_connected(const ref_state *S, unsigned mask)
{
    const ft_problem *p = S->p;
    unsigned reached = mask & (~mask + 1u), grew = 1;
    while (grew) {
        grew = 0;
        for (int a = 0; a < S->n; a++) {
            if (!(mask >> a & 1u) || (reached >> a & 1u))
                continue;
            for (int b = 0; b < S->n && !(reached >> a & 1u); b++) {
                if (!(reached >> b & 1u))
                    continue;
                /* a and b share a tensor among their inputs and outputs */
                const ft_op *A = &p->ops[a], *B = &p->ops[b];
                for (int i = -1; i < A->ninputs && !(reached >> a & 1u); i++) {
                    int t = i < 0 ? A->output : A->inputs[i];
                    int hit = t == B->output;
                    for (int j = 0; j < B->ninputs && !hit; j++)
                        hit = B->inputs[j] == t;
                    if (hit) {
                        reached |= 1u << a;
                        grew = 1;
                    }
                }
            }
        }
    }
    return reached == mask;
}

static uint32_t ref_hash(uint32_t key)
{
    key ^= key >> 16;
    key *= 0x7feb352dU;
    key ^= key >> 15;
    key *= 0x846ca68bU;
    return key ^ (key >> 16);
}

/* Cache slot of key: the entry holding it, or the empty slot where it goes. */
static ref_entry *ref_slot(ref_state *S, uint32_t key)
{
    size_t i = ref_hash(key) & (S->cap - 1);
    while (S->tab[i].key && S->tab[i].key != key)
        i = (i + 1) & (S->cap - 1);
    return &S->tab[i];
}

/* Store e in the cache (growing it at half load).  0, or -1 out of memory. */
static int ref_insert(ref_state *S, const ref_entry *e)
{
    if (2 * (S->used + 1) > S->cap) {
        size_t ocap = S->cap, ncap = ocap ? 2 * ocap : 1024;
        ref_entry *old = S->tab, *nt = calloc(ncap, sizeof *nt);
        if (!nt)
            return -1;
        S->tab = nt;
        S->cap = ncap;
        for (size_t i = 0; i < ocap; i++)
            if (old[i].key)
                *ref_slot(S, old[i].key) = old[i];
        free(old);
    }
    *ref_slot(S, e->key) = *e;
    S->used++;
    return 0;
}

/* Sorted distinct values: powers of two <= lim, plus divisors <= lim of each
 * of the nv values v[].  Returns the count (at most 64 + lim). */
static int ref_candidates(int64_t lim, const int64_t *v, int nv, int64_t **out)
{
    int64_t *a = malloc(sizeof(int64_t) * (size_t)(lim + 64));
    int n = 0;
    *out = a;
    if (!a)
        return -1;
    for (int64_t d = 1; d <= lim; d++) {
        int take = (d & (d - 1)) == 0;
        for (int i = 0; i < nv && !take; i++)
            take = v[i] % d == 0;
        if (take)
            a[n++] = d;
    }
    return n;
}

/* Every value 1..lim into a malloc'd *out; returns lim (-1: out of memory). */
static int ref_every(int64_t lim, int64_t **out)
{
    int64_t *a = malloc(sizeof(int64_t) * (size_t)lim);
    *out = a;
    if (!a)
        return -1;
    for (int64_t d = 1; d <= lim; d++)
        a[d - 1] = d;
    return (int)lim;
}

/* Tile permutation of the given kind for an ntx x nty grid (tile index =
 * row * ntx + col), or NULL for raster.  *same is set when it equals raster.
 * NULL with *oom = 1 when out of memory. */
static int64_t *ref_traversal(int kind, int64_t ntx, int64_t nty, int *same,
                              int *oom)
{
    int64_t *o, n = 0;
    *same = 0;
    *oom = 0;
    if (kind == REF_RASTER)
        return NULL;
    o = malloc(sizeof(int64_t) * (size_t)(ntx * nty));
    if (!o) {
        *oom = 1;
        return NULL;
    }
    if (kind == REF_ROW_SNAKE) {
        for (int64_t r = 0; r < nty; r++)
            for (int64_t j = 0; j < ntx; j++)
                o[n++] = r * ntx + (r % 2 == 0 ? j : ntx - 1 - j);
    } else {
        for (int64_t c = 0; c < ntx; c++)
            for (int64_t j = 0; j < nty; j++)
                o[n++] = (c % 2 == 0 ? j : nty - 1 - j) * ntx + c;
    }
    *same = 1;
    for (int64_t i = 0; i < n && *same; i++)
        *same = o[i] == i;
    return o;
}

/* Sum over the tiles of a grid dimension (count tiles of size g) of
 * ceil(clipped length / native), for a tensor dimension of length len. */
static double ref_padded_sum(int64_t len, int64_t g, int64_t count,
                             int64_t native)
{
    double s = 0;
    for (int64_t i = 0; i < count; i++) {
        int64_t lo = i * g, hi = (i + 1) * g < len ? (i + 1) * g : len;
        if (hi > lo)
            s += (double)ref_ceil_div(hi - lo, native);
    }
    return s;
}

typedef struct ref_cand {
    double bound;       /* compute lower bound */
    int64_t w, h, k;
} ref_cand;

static int ref_cand_cmp(const void *a, const void *b)
{
    const ref_cand *x = a, *y = b;
    if (x->bound != y->bound)
        return x->bound < y->bound ? -1 : 1;
    if (x->w != y->w)
        return x->w < y->w ? -1 : 1;
    if (x->h != y->h)
        return x->h < y->h ? -1 : 1;
    return x->k < y->k ? -1 : x->k > y->k;
}

/* Append to orders (room for `cap` orders of nops ints) every topological
 * order of ops[] (a subgraph's ops, any order) extending prefix[0..depth);
 * returns the new count. */
static int ref_op_orders(const ref_state *S, const int *ops, int nops, int *prefix,
                         int depth, unsigned used, int *orders, int count, int cap)
{
    if (depth == nops) {
        if (count < cap)
            memcpy(orders + (size_t)count * (size_t)nops, prefix, sizeof(int) * (size_t)nops);
        return count + 1;
    }
    for (int j = 0; j < nops; j++) {
        int o = ops[j], ready = !(used >> j & 1u);
        /* every producer of o's inputs inside the subgraph already placed */
        for (int q = 0; q < nops && ready; q++)
            if (!(used >> q & 1u) && (S->consumers[ops[q]] >> o & 1u))
                ready = 0;
        if (ready) {
            prefix[depth] = o;
            count = ref_op_orders(S, ops, nops, prefix, depth + 1, used | 1u << j,
                                  orders, count, cap);
        }
    }
    return count;
}

/* Minimise subgraph i of skeleton s (retained sets already set on s) over
 * every configuration, filling e->found/cost/cfg.  The lower bound of a
 * configuration is max(C, M): C = compute of the k-loop and epilogue ops
 * alone (each contributes base x sum over its tiles of ceil(rows/nh) x
 * ceil(cols/nw), times K/kref for a MatMul, since its k-steps cover K once),
 * M = (full size of every written output + full size of every non-resident
 * boundary input read by a k-loop or epilogue op, each element of which some
 * slice must load at least once) / bandwidth; roles, hence the bound, do not
 * depend on the op order.  Every evaluated valid configuration checks
 * bound <= latency; a violation fails the search.  Leaves s->sg[i] as found
 * except w = h = k = 1. */
static void ref_minimise(ref_state *S, ft_schedule *s, int i, unsigned rin,
                         unsigned wr, ref_entry *e)
{
    const ft_problem *p = S->p;
    ft_subgraph *g = &s->sg[i];
    unsigned blk = 0;
    unsigned char feeds[REF_MAX_OPS] = {0};
    int64_t widths[REF_MAX_OPS], heights[REF_MAX_OPS], kdepths[REF_MAX_OPS];
    int nprod = 0, nmm = 0;
    int64_t wg = 0, hg = 0;
    int64_t *ws = NULL, *hs = NULL, *ks = NULL, one = 1;
    ref_cand *cand = NULL;
    int nw, nh, nk, norders = 1;
    int topo_ops[REF_MAX_OPS], prefix[REF_MAX_OPS], *orders = NULL;
    ft_status st;

    e->found = 0;
    e->cost = INFINITY;
    for (int j = 0; j < g->nops; j++)
        blk |= 1u << g->ops[j];
    /* feeds[o]: o's output feeds a MatMul inside the subgraph, directly or
     * through Pointwise and Layout ops (SPEC 3) */
    for (int j = g->nops - 1; j >= 0; j--) {
        int o = g->ops[j];
        for (int c = 0; c < S->n; c++)
            if ((blk >> c & 1u) && (S->consumers[o] >> c & 1u) &&
                (p->ops[c].type == FT_OP_MATMUL || feeds[c]))
                feeds[o] = 1;
    }
    for (int j = 0; j < g->nops; j++) {
        const ft_op *op = &p->ops[g->ops[j]];
        const ft_tensor *T = &p->tensors[op->output];
        widths[nprod] = T->width;
        heights[nprod++] = T->height;
        if (op->type == FT_OP_MATMUL)
            kdepths[nmm++] = op->k;
        if (!feeds[g->ops[j]]) {
            wg = T->width > wg ? T->width : wg;
            hg = T->height > hg ? T->height : hg;
        }
    }
    /* memory part of the bound: the same for every configuration */
    double mem = 0;
    for (int j = 0; j < g->nops; j++) {
        int o = g->ops[j];
        if (wr >> o & 1u)
            mem += (double)ft_tensor_size(p, p->ops[o].output);
    }
    for (int t = 0; t < p->ntensors; t++) {
        int pr = p->tensors[t].producer, direct = 0;
        if (pr >= 0 && ((blk >> pr & 1u) || (rin >> pr & 1u)))
            continue; /* produced here, or resident */
        for (int j = 0; j < g->nops && !direct; j++) {
            const ft_op *op = &p->ops[g->ops[j]];
            if (feeds[g->ops[j]])
                continue;
            for (int q = 0; q < op->ninputs; q++)
                direct |= op->inputs[q] == t;
        }
        if (direct)
            mem += (double)ft_tensor_size(p, t);
    }
    mem /= p->bandwidth;

    nw = S->all_granularities ? ref_every(p->native_w, &ws) : ref_candidates(p->native_w, widths, nprod, &ws);
    nh = S->all_granularities ? ref_every(p->native_h, &hs) : ref_candidates(p->native_h, heights, nprod, &hs);
    if (nmm)
        nk = S->all_granularities ? ref_every(p->native_w, &ks) : ref_candidates(p->native_w, kdepths, nmm, &ks);
    else
        nk = 1, ks = NULL;
    cand = malloc(sizeof *cand * (size_t)(nw > 0 && nh > 0 && nk > 0 ? nw * nh * nk : 1));
    if (nw < 0 || nh < 0 || nk < 0 || !cand) {
        ref_fail(S, "reference: out of memory");
        goto done;
    }
    int nc = 0;
    for (int a = 0; a < nw; a++)
        for (int b = 0; b < nh; b++)
            for (int c = 0; c < nk; c++) {
                ref_cand *x = &cand[nc++];
                x->w = ws[a];
                x->h = hs[b];
                x->k = ks ? ks[c] : one;
                int64_t ntx = ref_ceil_div(wg, x->w), nty = ref_ceil_div(hg, x->h);
                x->bound = 0;
                for (int j = 0; j < g->nops; j++) {
                    const ft_op *op = &p->ops[g->ops[j]];
                    const ft_tensor *T = &p->tensors[op->output];
                    if (feeds[g->ops[j]])
                        continue;
                    double c0 = op->base_cost *
                                ref_padded_sum(T->height, x->h, nty, p->native_h) *
                                ref_padded_sum(T->width, x->w, ntx, p->native_w);
                    if (op->type == FT_OP_MATMUL)
                        c0 *= S->model == FT_COMPUTE_OP ? 1.0
                                                        : (double)op->k / (double)p->native_w;
                    x->bound += c0;
                }
            }
    qsort(cand, (size_t)nc, sizeof *cand, ref_cand_cmp);
    S->stats.configs += nc;
    memcpy(topo_ops, g->ops, sizeof(int) * (size_t)g->nops);
    if (S->all_op_orders) {
        int cap = ref_op_orders(S, topo_ops, g->nops, prefix, 0, 0, NULL, 0, 0);
        orders = malloc(sizeof(int) * (size_t)cap * (size_t)g->nops);
        if (!orders) {
            ref_fail(S, "reference: out of memory");
            goto done;
        }
        norders = ref_op_orders(S, topo_ops, g->nops, prefix, 0, 0, orders, 0, cap);
    }
    S->stats.op_orders += norders;
    for (int c = 0; c < nc && !S->failed; c++) {
        double bound = cand[c].bound > mem ? cand[c].bound : mem;
        if (S->prune && e->found && bound * (1 - 1e-12) >= e->cost) {
            S->stats.pruned += nc - c;
            break;
        }
        g->w = cand[c].w;
        g->h = cand[c].h;
        g->k = cand[c].k;
        int64_t ntx = ref_ceil_div(wg, g->w), nty = ref_ceil_div(hg, g->h);
        for (int kk = 0; kk < 3 * norders && !S->failed; kk++) {
            int kind = kk % 3;
            if (orders)
                memcpy(g->ops, orders + (size_t)(kk / 3) * (size_t)g->nops,
                       sizeof(int) * (size_t)g->nops);
            int same, oom, rc;
            ft_sg_result res;
            int64_t *ord = ref_traversal(kind, ntx, nty, &same, &oom);
            if (oom) {
                ref_fail(S, "reference: out of memory");
                break;
            }
            if (same) {
                free(ord);
                continue;
            }
            g->order = ord;
            g->norder = ord ? ntx * nty : 0;
            /* the order's length rests on our grid: let the validator judge */
            rc = ord ? ft_schedule_validate(p, s, &st) : FT_OK;
            if (rc != FT_OK) {
                ref_fail(S, "reference: traversal rejected: %s", st.msg);
            } else {
                S->stats.evaluations++;
                rc = ft_evaluate_subgraph(p, s, i, S->model, &res, &st);
                if (rc == FT_OK) {
                    /* (a bound without target terms: a target's units
                     * share the compute and its cache the traffic) */
                    static const ft_timing untimed;
                    int timed = memcmp(&p->timing, &untimed, sizeof untimed) != 0 || p->pointwise_exact;
                    if (!timed && bound > res.latency * (1 + 1e-9))
                        ref_fail(S, "reference: unsound bound %.17g > latency %.17g "
                                 "(subgraph %d, w=%lld h=%lld k=%lld)", bound,
                                 res.latency, i, (long long)g->w, (long long)g->h,
                                 (long long)g->k);
                    else if (!e->found || res.latency < e->cost) {
                        e->found = 1;
                        e->cost = res.latency;
                        memcpy(e->cfg.ops, g->ops, sizeof(int) * (size_t)g->nops);
                        e->cfg.w = g->w;
                        e->cfg.h = g->h;
                        e->cfg.k = g->k;
                        e->cfg.order = kind;
                    }
                } else if (rc == FT_EINVALID && st.reason == FT_R_OOM) {
                    S->stats.oom++;
                } else {
                    ref_fail(S, "reference: ft_evaluate_subgraph: %s (%s)", st.msg,
                             ft_reason_name(st.reason));
                }
            }
            g->order = NULL;
            g->norder = 0;
            free(ord);
        }
    }
done:
    g->w = g->h = g->k = 1;
    memcpy(g->ops, topo_ops, sizeof(int) * (size_t)g->nops);
    free(orders);
    free(ws);
    free(hs);
    free(ks);
    free(cand);
}

/* Written set (op mask) of position i of the ordered partition blk[0..m-1]
 * when it retains rout: an output is written iff it is a graph output, or a
 * later subgraph reads it, except S_{i+1} alone reading a retained one. */
static unsigned ref_written(const ref_state *S, const unsigned *blk, int m,
                            int i, unsigned rout)
{
    unsigned wr = 0;
    for (int o = 0; o < S->n; o++) {
        if (!(blk[i] >> o & 1u))
            continue;
        if (S->p->tensors[S->p->ops[o].output].nconsumers == 0)
            wr |= 1u << o;
        for (int j = i + 1; j < m; j++)
            if (S->consumers[o] & blk[j] && (j > i + 1 || !(rout >> o & 1u)))
                wr |= 1u << o;
    }
    return wr;
}

/* Minimum latency of position i of skeleton s when resident = rin (ops of
 * blk[i-1]) and retained = rout, through the context cache.  INFINITY when
 * no configuration is valid (or on failure, with S->failed set). */
static double ref_context_cost(ref_state *S, ft_schedule *s, const unsigned *blk,
                               int m, int i, unsigned rin, unsigned rout,
                               const ref_entry **hit)
{
    unsigned wr = ref_written(S, blk, m, i, rout);
    uint32_t key = blk[i] | rin << 8 | rout << 16 | wr << 24;
    ref_entry *slot = S->cap ? ref_slot(S, key) : NULL;
    ref_entry e;
    int tensors[REF_MAX_OPS];
    ft_status st;

    if (slot && slot->key == key) {
        *hit = slot;
        return slot->found ? slot->cost : INFINITY;
    }
    memset(&e, 0, sizeof e);
    e.key = key;
    if ((i > 0 && ft_subgraph_set_retain(&s->sg[i - 1], tensors,
                                         ref_mask_tensors(S, rin, tensors)) != FT_OK) ||
        ft_subgraph_set_retain(&s->sg[i], tensors, ref_mask_tensors(S, rout, tensors)) != FT_OK) {
        ref_fail(S, "reference: out of memory");
        return INFINITY;
    }
    for (int o = 0; o < S->n; o++)
        if ((blk[i] >> o & 1u) &&
            ft_tensor_written(S->p, s, i, S->p->ops[o].output) != (int)(wr >> o & 1u))
            ref_fail(S, "reference: written rule disagrees with ft_tensor_written "
                        "(subgraph %d, tensor %d)", i, S->p->ops[o].output);
    if (!S->failed && ft_schedule_validate(S->p, s, &st) != FT_OK)
        ref_fail(S, "reference: context schedule rejected: %s", st.msg);
    if (!S->failed) {
        S->stats.contexts++;
        ref_minimise(S, s, i, rin, wr, &e);
    }
    if (i > 0)
        ft_subgraph_set_retain(&s->sg[i - 1], tensors, 0);
    ft_subgraph_set_retain(&s->sg[i], tensors, 0);
    if (S->failed)
        return INFINITY;
    if (ref_insert(S, &e) != 0) {
        ref_fail(S, "reference: out of memory");
        return INFINITY;
    }
    *hit = ref_slot(S, key);
    return e.found ? e.cost : INFINITY;
}

/* Build the schedule of ordered partition blk[0..m-1] with retained sets
 * r[0..m-1] and configurations cfg[] (NULL: w = h = k = 1, raster).  NULL
 * when out of memory. */
static ft_schedule *ref_build(const ref_state *S, const unsigned *blk, int m,
                              const unsigned *r, const ref_cfg *cfg)
{
    ft_schedule *s = ft_schedule_new(m);
    int ops[REF_MAX_OPS], tensors[REF_MAX_OPS];
    if (!s)
        return NULL;
    s->len_orders = m;
    for (int i = 0; i < m; i++) {
        ft_subgraph *g = &s->sg[i];
        int nops = ref_block_ops(S, blk[i], ops);
        if (cfg)
            memcpy(ops, cfg[i].ops, sizeof(int) * (size_t)nops);
        if (ft_subgraph_set_ops(g, ops, nops) != FT_OK ||
            ft_subgraph_set_retain(g, tensors, ref_mask_tensors(S, r ? r[i] : 0, tensors)) != FT_OK) {
            ft_schedule_free(s);
            return NULL;
        }
        g->w = cfg ? cfg[i].w : 1;
        g->h = cfg ? cfg[i].h : 1;
        g->k = cfg ? cfg[i].k : 1;
    }
    return s;
}

/* Grid of subgraph g for its granularity (largest k-loop/epilogue output),
 * from the public walker so the winner's traversal matches the evaluator. */
static int ref_grid(const ft_problem *p, const ft_schedule *s, int i,
                    int64_t *ntx, int64_t *nty)
{
    ft_walk *w = NULL;
    ft_status st;
    if (ft_walk_begin(p, s, i, FT_COMPUTE_NATIVE, &w, &st) != FT_OK)
        return -1;
    ft_walk_grid(w, ntx, nty, NULL, NULL);
    ft_walk_free(w);
    return 0;
}

/* DP over the current ordered partition (S->order). */
static void ref_score_order(ref_state *S)
{
    int m = S->nblocks;
    unsigned blk[REF_MAX_OPS], cand[REF_MAX_OPS];
    double dp[REF_MAX_OPS][1u << REF_MAX_OPS];
    unsigned char back[REF_MAX_OPS][1u << REF_MAX_OPS];
    ft_status st;

    for (int i = 0; i < m; i++)
        blk[i] = S->block[S->order[i]];
    for (int i = 0; i < m; i++) {
        cand[i] = 0;
        for (int o = 0; o < S->n; o++)
            /* nothing is retained on several units (their fast memories
             * are their own: FT_R_RETAIN_ON_UNITS) */
            if ((blk[i] >> o & 1u) && i + 1 < m && (S->consumers[o] & blk[i + 1]) && S->p->timing.units <= 1)
                cand[i] |= 1u << o;
    }
    ft_schedule *s = ref_build(S, blk, m, NULL, NULL);
    if (!s) {
        ref_fail(S, "reference: out of memory");
        return;
    }
    /* Validity of everything but the working set does not depend on the
     * retained sets here (no recomputation: an upstream output that leaves
     * is written or retained either way), so one check covers all of them. */
    if (ft_schedule_validate(S->p, s, &st) != FT_OK) {
        S->stats.ordered_invalid++;
        ft_schedule_free(s);
        return;
    }
    S->stats.ordered++;
    for (int i = 0; i < m && !S->failed; i++) {
        unsigned cin = i > 0 ? cand[i - 1] : 0;
        for (unsigned r = 0; r < (1u << REF_MAX_OPS); r++)
            dp[i][r] = INFINITY;
        for (unsigned rin = cin;; rin = (rin - 1) & cin) {
            double base = i > 0 ? dp[i - 1][rin] : 0;
            if (isfinite(base))
                for (unsigned rout = cand[i];; rout = (rout - 1) & cand[i]) {
                    const ref_entry *hit = NULL;
                    double c = ref_context_cost(S, s, blk, m, i, rin, rout, &hit);
                    if (S->failed)
                        break;
                    if (isfinite(c) && base + c < dp[i][rout]) {
                        dp[i][rout] = base + c;
                        back[i][rout] = (unsigned char)rin;
                    }
                    if (rout == 0)
                        break;
                }
            if (rin == 0 || S->failed)
                break;
        }
    }
    ft_schedule_free(s);
    if (S->failed || !isfinite(dp[m - 1][0]) || dp[m - 1][0] >= S->best_total)
        return;

    /* a new best: rebuild it with the cached configurations */
    unsigned r[REF_MAX_OPS];
    ref_cfg cfg[REF_MAX_OPS];
    r[m - 1] = 0;
    for (int i = m - 1; i > 0; i--)
        r[i - 1] = back[i][r[i]];
    s = ref_build(S, blk, m, r, NULL);
    if (!s)
        ref_fail(S, "reference: out of memory");
    for (int i = 0; s && !S->failed && i < m; i++) {
        const ref_entry *hit = NULL;
        ref_context_cost(S, s, blk, m, i, i > 0 ? r[i - 1] : 0, r[i], &hit);
        if (!hit || !hit->found) {
            ref_fail(S, "reference: lost the configuration of subgraph %d", i);
            break;
        }
        cfg[i] = hit->cfg;
    }
    ft_schedule_free(s);
    s = S->failed ? NULL : ref_build(S, blk, m, r, cfg);
    for (int i = 0; s && i < m; i++) {
        int64_t ntx, nty;
        int same, oom;
        if (ref_grid(S->p, s, i, &ntx, &nty) != 0) {
            ft_schedule_free(s);
            s = NULL;
            break;
        }
        s->sg[i].order = ref_traversal(cfg[i].order, ntx, nty, &same, &oom);
        s->sg[i].norder = s->sg[i].order ? ntx * nty : 0;
        if (oom) {
            ft_schedule_free(s);
            s = NULL;
        }
    }
    if (!s) {
        ref_fail(S, "reference: out of memory");
        return;
    }
    ft_schedule_free(S->best);
    S->best = s;
    S->best_total = dp[m - 1][0];
}

/* Every topological order of the current partition's blocks. */
static void ref_orders(ref_state *S, int depth, unsigned placed)
{
    if (depth == S->nblocks) {
        ref_score_order(S);
        return;
    }
    for (int b = 0; b < S->nblocks && !S->failed; b++)
        if (!(placed >> b & 1u) && (S->pred[b] & ~placed) == 0) {
            S->order[depth] = b;
            ref_orders(S, depth + 1, placed | 1u << b);
        }
}

/* Every partition of ops op.. into blocks (restricted growth: op joins one
 * of the nblocks open blocks or opens a new one). */
static void ref_partitions(ref_state *S, int op, int nblocks)
{
    if (S->failed)
        return;
    if (op == S->n) {
        for (int b = 0; b < nblocks; b++)
            if (!S->connected[S->block[b]])
                return;
        S->nblocks = nblocks;
        S->stats.partitions++;
        for (int b = 0; b < nblocks; b++) {
            S->pred[b] = 0;
            for (int c = 0; c < nblocks; c++)
                for (int o = 0; o < S->n && c != b; o++)
                    if ((S->block[c] >> o & 1u) && (S->consumers[o] & S->block[b]))
                        S->pred[b] |= 1u << c;
        }
        ref_orders(S, 0, 0);
        return;
    }
    for (int b = 0; b <= nblocks; b++) {
        S->block[b] |= 1u << op;
        ref_partitions(S, op + 1, b == nblocks ? nblocks + 1 : nblocks);
        S->block[b] &= ~(1u << op);
    }
}

/* ------------------------------------------------------------ public */

/* Release what a ref_result owns (NULL fields are fine). */
static void ref_result_free(ref_result *r)
{
    if (!r)
        return;
    ft_schedule_free(r->best);
    memset(r, 0, sizeof *r);
}

/* Exhaustive search of p (at most REF_MAX_OPS ops) under `model`; flags
 * are REF_NO_PRUNE, REF_ALL_OP_ORDERS and REF_ALL_GRANULARITIES (0: the
 * contract above).  Returns 0 with *out filled (out->found = 0
 * when the space holds no valid schedule; out->best belongs to *out), or -1
 * with a message in err: out of memory, too many ops, or an inconsistency
 * between the reference and the library (unsound bound, written-rule
 * disagreement, a rejected context schedule, a winner whose ft_evaluate
 * total differs from the DP's). */
static int ref_search(const ft_problem *p, ft_compute_model model, unsigned flags,
                      ref_result *out, char *err, size_t errlen)
{
    ref_state S;
    memset(out, 0, sizeof *out);
    memset(&S, 0, sizeof S);
    S.p = p;
    S.model = model;
    S.prune = !(flags & REF_NO_PRUNE);
    S.all_op_orders = !!(flags & REF_ALL_OP_ORDERS);
    S.all_granularities = !!(flags & REF_ALL_GRANULARITIES);
    S.n = p->nops;
    S.best_total = INFINITY;
    S.err = err;
    S.errlen = errlen;
    if (errlen)
        err[0] = '\0';
    if (p->nops < 1 || p->nops > REF_MAX_OPS) {
        ref_fail(&S, "reference: %d ops (1 to %d supported)", p->nops, REF_MAX_OPS);
        return -1;
    }
    for (int o = 0; o < S.n; o++) {
        const ft_tensor *T = &p->tensors[p->ops[o].output];
        for (int c = 0; c < T->nconsumers; c++)
            S.consumers[o] |= 1u << T->consumers[c];
    }
    for (unsigned mask = 1; mask < (1u << S.n); mask++)
        S.connected[mask] = (unsigned char)ref_is_connected(&S, mask);
    ref_partitions(&S, 0, 0);
    if (!S.failed && S.best) {
        ft_eval ev;
        ft_status st;
        memset(&ev, 0, sizeof ev);
        if (ft_evaluate(p, S.best, model, &ev, &st) != FT_OK)
            ref_fail(&S, "reference: winner rejected: %s", st.msg);
        else if (fabs(ev.total - S.best_total) > 1e-9 * fabs(ev.total))
            ref_fail(&S, "reference: winner evaluates to %.17g, DP says %.17g",
                     ev.total, S.best_total);
        else {
            out->found = 1;
            out->total = ev.total;
            for (int i = 0; i < S.best->nsubgraphs; i++) {
                S.best->sg[i].has_reported = 1;
                S.best->sg[i].reported = ev.sg[i].latency;
            }
            S.best->len_latencies = S.best->nsubgraphs;
        }
        ft_eval_free(&ev);
    }
    out->stats = S.stats;
    free(S.tab);
    if (S.failed) {
        ft_schedule_free(S.best);
        return -1;
    }
    out->best = S.best;
    return 0;
}

#endif /* FT_REF_SEARCH_H */
