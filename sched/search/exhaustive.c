/* exhaustive.c - exact enumeration of partitions: every ordered partition of a small problem, and the large-neighbourhood move that re-partitions a window of a larger one exactly. */
#include "search/search.h"

#include <stdlib.h>
#include <string.h>

/* The groups of base in every topological order: for each, the retention
 * DP; every complete plan is offered. */
static void try_orders(search *S, sctx *x, plan *P, int pos, unsigned char *used, const unsigned char *edge, int *order, const plan *base)
{
    int ng = base->ngroups;
    if (ft__out_of_time(S))
        return;
    if (pos == ng) {
        for (int i = 0; i < ng; i++) {
            P->g[i].nops = base->g[order[i]].nops;
            memcpy(P->g[i].ops, base->g[order[i]].ops, sizeof(int) * (size_t)base->g[order[i]].nops);
            P->g[i].nret = 0;
        }
        double t = ft__retention(S, P, x);
        if (t < INF && t < S->best * (1 + 1e-12))
            ft__offer(S, P);
        return;
    }
    for (int g = 0; g < ng; g++) {
        if (used[g])
            continue;
        int ready = 1;
        for (int h = 0; h < ng && ready; h++)
            if (!used[h] && h != g && edge[h * ng + g])
                ready = 0;
        if (!ready)
            continue;
        used[g] = 1;
        order[pos] = g;
        try_orders(S, x, P, pos + 1, used, edge, order, base);
        used[g] = 0;
    }
}

/* Every order of the groups of partition gid (ng groups), when each is
 * connected and the quotient graph acyclic. */
static void exhaustive_partition(search *S, sctx *x, const int *gid, int ng)
{
    const ft_problem *p = S->p;
    plan base, P;
    if (ft__plan_from_partition(S, gid, ng, &base))
        return; /* cyclic */
    for (int i = 0; i < ng; i++)
        if (!ft__connected(p, base.g[i].ops, base.g[i].nops)) {
            ft__plan_free(&base);
            return;
        }
    unsigned char *edge = ft__calloc((size_t)ng * (size_t)ng, 1);
    unsigned char *used = ft__calloc((size_t)ng, 1);
    int *order = ft__malloc(sizeof(int) * (size_t)ng);
    int *bg = ft__malloc(sizeof(int) * (size_t)p->nops);
    if (edge && used && order && bg && ft__plan_copy(&base, &P, p->nops) == 0) {
        /* group index in base order for each op */
        for (int i = 0; i < ng; i++)
            for (int j = 0; j < base.g[i].nops; j++)
                bg[base.g[i].ops[j]] = i;
        for (int o = 0; o < p->nops; o++)
            for (int i = 0; i < p->ops[o].ninputs; i++) {
                int pr = p->tensors[p->ops[o].inputs[i]].producer;
                if (pr >= 0 && bg[pr] != bg[o])
                    edge[bg[pr] * ng + bg[o]] = 1;
            }
        try_orders(S, x, &P, 0, used, edge, order, &base);
        ft__plan_free(&P);
    }
    ft__free(edge);
    ft__free(used);
    ft__free(order);
    ft__free(bg);
    ft__plan_free(&base);
}

/* Enumerate set partitions by restricted growth strings. */
static void exhaustive_rec(search *S, sctx *x, int *gid, int o, int ng)
{
    if (ft__out_of_time(S))
        return;
    if (o == S->p->nops) {
        exhaustive_partition(S, x, gid, ng);
        return;
    }
    for (int g = 0; g <= ng; g++) {
        gid[o] = g;
        exhaustive_rec(S, x, gid, o + 1, g == ng ? ng + 1 : ng);
    }
}

void ft__exhaustive(search *S, sctx *x, int *gid)
{
    exhaustive_rec(S, x, gid, 0, 0);
}

/* ------------------------------------------------------------ window re-partition */

typedef struct window {
    const int *ops;     /* the window's ops */
    int n;
    int *gid;           /* the partition being changed (window ops get ids base + k) */
    int base;           /* first free group id */
    int *best;          /* best assignment of the window's ops */
    double best_cost;
    int *work;          /* scratch: op list */
    unsigned char *touched; /* groups whose cost changes */
} window;

/* Cost of the groups touching the window under the current gid: every
 * group that holds a window op or held one before (touched); INF when a
 * group is disconnected.  Acyclicity is checked by the caller. */
static double window_cost(search *S, sctx *x, window *W)
{
    const ft_problem *p = S->p;
    double total = 0;
    for (int g = 0; g < W->base + W->n && total < INF; g++) {
        if (!W->touched[g])
            continue;
        int m = 0;
        for (int i = 0; i < p->nops; i++)
            if (W->gid[p->topo[i]] == g)
                W->work[m++] = p->topo[i];
        if (!m)
            continue;
        if (!ft__connected(p, W->work, m))
            return INF;
        cfg c;
        total += ft__partition_group_cost(S, x, W->gid, g, W->work, m, &c);
    }
    return total;
}

/* Assign window op j onward: to a group of an outside neighbour, to a
 * group opened by an earlier window op, or to a new group. */
static void window_rec(search *S, sctx *x, window *W, int j, int nnew)
{
    if (ft__out_of_time(S))
        return;
    const ft_problem *p = S->p;
    if (j == W->n) {
        plan P;
        int ng = W->base + nnew;
        if (ft__plan_from_partition(S, W->gid, ng, &P))
            return;
        ft__plan_free(&P);
        double c = window_cost(S, x, W);
        if (c < W->best_cost * (1 - 1e-12)) {
            W->best_cost = c;
            for (int k = 0; k < W->n; k++)
                W->best[k] = W->gid[W->ops[k]];
        }
        return;
    }
    int o = W->ops[j];
    /* candidate groups: new ones opened so far, one more new one, and the
     * groups of ops outside the window linked to o */
    for (int g = W->base; g <= W->base + nnew && g < W->base + W->n; g++) {
        W->gid[o] = g;
        window_rec(S, x, W, j + 1, g == W->base + nnew ? nnew + 1 : nnew);
    }
    const ft_op *op = &p->ops[o];
    int tried[FT_SEARCH_WINDOW_LINKS], ntried = 0;
    for (int i = -1; i < op->ninputs; i++) {
        int t = i < 0 ? op->output : op->inputs[i];
        const ft_tensor *T = &p->tensors[t];
        for (int q = -1; q < T->nconsumers && ntried < FT_SEARCH_WINDOW_LINKS; q++) {
            int nb = q < 0 ? T->producer : T->consumers[q];
            if (nb < 0 || W->gid[nb] >= W->base)
                continue; /* a graph input, or a window op */
            int g = W->gid[nb], seen = 0;
            for (int k = 0; k < ntried && !seen; k++)
                seen = tried[k] == g;
            if (seen)
                continue;
            tried[ntried++] = g;
            W->gid[o] = g;
            window_rec(S, x, W, j + 1, nnew);
        }
    }
    W->gid[o] = W->base; /* any window id; the caller restores */
}

int ft__window_repartition(search *S, sctx *x, int *gid, int span)
{
    const ft_problem *p = S->p;
    int n = p->nops;
    if (span > n)
        span = n;
    int ng = ft__compact_gids(gid, n);
    int start = (int)(ft__rng(S) % (uint64_t)(n - span + 1));
    window W;
    memset(&W, 0, sizeof W);
    W.ops = p->topo + start;
    W.n = span;
    W.gid = gid;
    W.base = ng;
    W.best = ft__malloc(sizeof(int) * (size_t)span);
    W.work = ft__malloc(sizeof(int) * (size_t)n);
    W.touched = ft__calloc((size_t)(ng + span), 1);
    int *old = ft__malloc(sizeof(int) * (size_t)n);
    int changed = 0;
    if (W.best && W.work && W.touched && old) {
        memcpy(old, gid, sizeof(int) * (size_t)n);
        for (int k = 0; k < span; k++) {
            W.touched[gid[W.ops[k]]] = 1;
            W.best[k] = gid[W.ops[k]];
        }
        for (int g = ng; g < ng + span; g++)
            W.touched[g] = 1;
        /* the neighbours' groups change too when a window op joins them */
        for (int k = 0; k < span; k++) {
            const ft_op *op = &p->ops[W.ops[k]];
            for (int i = -1; i < op->ninputs; i++) {
                const ft_tensor *T = &p->tensors[i < 0 ? op->output : op->inputs[i]];
                if (T->producer >= 0)
                    W.touched[gid[T->producer]] = 1;
                for (int q = 0; q < T->nconsumers; q++)
                    W.touched[gid[T->consumers[q]]] = 1;
            }
        }
        W.best_cost = window_cost(S, x, &W); /* the current assignment */
        double before = W.best_cost;
        window_rec(S, x, &W, 0, 0);
        memcpy(gid, old, sizeof(int) * (size_t)n);
        if (W.best_cost < before * (1 - 1e-12)) {
            for (int k = 0; k < span; k++)
                gid[W.ops[k]] = W.best[k];
            ft__compact_gids(gid, n);
            changed = 1;
        }
    }
    ft__free(W.best);
    ft__free(W.work);
    ft__free(W.touched);
    ft__free(old);
    return changed;
}
