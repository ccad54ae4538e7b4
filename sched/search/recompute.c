/* recompute.c - recomputation: a producer computed again inside the group of its consumer, when that beats loading its output. */
#include "search/search.h"

#include <stdlib.h>
#include <string.h>

static int group_has(const group *G, int op)
{
    for (int j = 0; j < G->nops; j++)
        if (G->ops[j] == op)
            return 1;
    return 0;
}

/* Whether group j of P still does useful work: some output written or
 * retained in its context. */
static int group_useful(const ft_problem *p, const plan *P, int j, sctx *x)
{
    ft__plan_context(p, P, j, x);
    for (int a = 0; a < P->g[j].nops; a++) {
        int t = p->ops[P->g[j].ops[a]].output;
        if (x->written[t] || x->retained[t])
            return 1;
    }
    return 0;
}

/* P with op q added to group i (and group j dropped when it has nothing
 * left to do) into Q; -1 on OOM. */
static int with_recompute(search *S, const plan *P, int i, int j, int q, plan *Q, sctx *x)
{
    if (ft__plan_copy(P, Q, 1))
        return -1;
    for (int a = 0; a < Q->ngroups; a++)
        Q->g[a].nret = 0; /* the retention DP chooses again */
    group *G = &Q->g[i];
    G->ops[G->nops++] = q;
    ft__sort_topo(S, G->ops, G->nops);
    if (!group_useful(S->p, Q, j, x)) {
        ft__free(Q->g[j].ops);
        ft__free(Q->g[j].ret);
        memmove(&Q->g[j], &Q->g[j + 1], sizeof(group) * (size_t)(Q->ngroups - j - 1));
        Q->ngroups--;
        memset(&Q->g[Q->ngroups], 0, sizeof(group));
    }
    return 0;
}

double ft__recompute(search *S, plan *P, sctx *x, double cur)
{
    const ft_problem *p = S->p;
    int improved = 1;
    while (improved && !ft__out_of_time(S)) {
        improved = 0;
        for (int i = 1; i < P->ngroups && !improved && !ft__out_of_time(S); i++) {
            for (int a = 0; a < P->g[i].nops && !improved; a++) {
                const ft_op *op = &p->ops[P->g[i].ops[a]];
                for (int b = 0; b < op->ninputs && !improved; b++) {
                    int t = op->inputs[b], q = p->tensors[t].producer;
                    if (q < 0 || group_has(&P->g[i], q))
                        continue;
                    int j = -1;
                    for (int y = i - 1; y >= 0 && j < 0; y--)
                        if (group_has(&P->g[y], q))
                            j = y;
                    if (j < 0)
                        continue;
                    plan Q;
                    if (with_recompute(S, P, i, j, q, &Q, x))
                        return cur;
                    double t2 = ft__retention(S, &Q, x);
                    if (t2 < cur - 1e-9 * fmax(1, cur)) {
                        ft__plan_free(P);
                        *P = Q;
                        cur = t2;
                        improved = 1;
                    } else {
                        ft__plan_free(&Q);
                    }
                }
            }
        }
    }
    return cur;
}
