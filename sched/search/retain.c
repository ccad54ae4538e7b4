/* retain.c - retention: which tensors each group of a fixed ordered plan keeps in fast memory for the next, by dynamic programming. */
#include "search/search.h"

#include <stdlib.h>
#include <string.h>

/* Tensors group i produces that group i+1 consumes (candidates to retain),
 * at most FT_SEARCH_MAX_RETAIN, the largest first (they save the most
 * traffic); returns their count. */
static int retain_candidates(const ft_problem *p, const plan *P, int i, int *out)
{
    int n = 0;
    if (i + 1 >= P->ngroups || ft__units(p) > 1)
        return 0; /* the last group, or units with fast memories of their own */
    const group *G = &P->g[i], *N = &P->g[i + 1];
    for (int j = 0; j < G->nops; j++) {
        int t = p->ops[G->ops[j]].output;
        if (ft__ops_use(p, N->ops, N->nops, t) != FT_USE_CONSUMES)
            continue; /* not read there, or made there again */
        int at = n < FT_SEARCH_MAX_RETAIN ? n++ : n;
        while (at > 0 && ft_tensor_size(p, out[at - 1]) < ft_tensor_size(p, t)) {
            if (at < FT_SEARCH_MAX_RETAIN)
                out[at] = out[at - 1];
            at--;
        }
        if (at < FT_SEARCH_MAX_RETAIN)
            out[at] = t;
    }
    return n;
}

/* Set group i's retained list to the candidates of bit set r. */
static void set_retained(group *G, const int *cands, int ncand, int r)
{
    G->nret = 0;
    for (int b = 0; b < ncand; b++)
        if (r >> b & 1)
            G->ret[G->nret++] = cands[b];
}

double ft__retention(search *S, plan *P, sctx *x)
{
    int ng = P->ngroups;
    int (*cands)[FT_SEARCH_MAX_RETAIN] = ft__malloc(sizeof(int[FT_SEARCH_MAX_RETAIN]) * (size_t)(ng + 1));
    int *ncand = ft__calloc((size_t)ng + 1, sizeof(int));
    double **cost = ft__calloc((size_t)ng + 1, sizeof(double *));
    int **from = ft__calloc((size_t)ng + 1, sizeof(int *));
    double total = INF;
    if (!cands || !ncand || !cost || !from)
        goto done;
    for (int i = 0; i < ng; i++) {
        ncand[i] = retain_candidates(S->p, P, i, cands[i]);
        int ns = 1 << ncand[i];
        cost[i] = ft__malloc(sizeof(double) * (size_t)ns);
        from[i] = ft__malloc(sizeof(int) * (size_t)ns);
        ft__free(P->g[i].ret);
        P->g[i].ret = ft__malloc(sizeof(int) * (FT_SEARCH_MAX_RETAIN + 1));
        P->g[i].nret = 0;
        if (!cost[i] || !from[i] || !P->g[i].ret)
            goto done;
    }
    /* cost[i][r]: least latency of groups 0..i with group i retaining set r */
    for (int i = 0; i < ng; i++) {
        int ns = 1 << ncand[i], nprev = i ? 1 << ncand[i - 1] : 1;
        for (int r = 0; r < ns; r++) {
            cost[i][r] = INF;
            from[i][r] = 0;
            set_retained(&P->g[i], cands[i], ncand[i], r);
            for (int q = 0; q < nprev; q++) {
                double before = i ? cost[i - 1][q] : 0;
                if (before == INF)
                    continue;
                if (i)
                    set_retained(&P->g[i - 1], cands[i - 1], ncand[i - 1], q);
                ft__plan_context(S->p, P, i, x);
                cfg c;
                double l = ft__group_cost(S, x, P->g[i].ops, P->g[i].nops, &c);
                if (before + l < cost[i][r]) {
                    cost[i][r] = before + l;
                    from[i][r] = q;
                }
            }
        }
        if (ft__out_of_time(S) && i < ng - 1)
            goto done; /* no time to finish: no plan (INF) */
    }
    /* best final state, then walk back */
    int last = ng - 1, r = 0;
    for (int q = 1; q < (1 << ncand[last]); q++)
        if (cost[last][q] < cost[last][r])
            r = q;
    total = cost[last][r];
    for (int i = last; i >= 0; i--) {
        set_retained(&P->g[i], cands[i], ncand[i], r);
        r = from[i][r];
    }
    if (total < INF)
        ft__plan_cost(S, P, x);
done:
    for (int i = 0; i < ng && cost; i++) {
        ft__free(cost[i]);
        if (from)
            ft__free(from[i]);
    }
    ft__free(cost);
    ft__free(from);
    ft__free(cands);
    ft__free(ncand);
    return total;
}
