/* plan.c - plans (ordered groups of ops with their configurations and retained sets): building, copying, their contexts and their schedules. */
#include "search/search.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

int ft__plan_alloc(plan *P, int n)
{
    P->g = ft__calloc((size_t)n + 1, sizeof(group));
    P->ngroups = P->g ? n : 0;
    return P->g ? 0 : -1;
}

void ft__plan_free(plan *P)
{
    for (int i = 0; P->g && i < P->ngroups; i++) {
        ft__free(P->g[i].ops);
        ft__free(P->g[i].ret);
    }
    ft__free(P->g);
    memset(P, 0, sizeof *P);
}

int ft__plan_copy(const plan *A, plan *B, int extra)
{
    if (ft__plan_alloc(B, A->ngroups))
        return -1;
    for (int i = 0; i < A->ngroups; i++) {
        const group *a = &A->g[i];
        group *b = &B->g[i];
        *b = *a;
        b->ops = ft__malloc(sizeof(int) * (size_t)(a->nops + extra + 1));
        b->ret = ft__malloc(sizeof(int) * (size_t)(a->nret + 1));
        if (!b->ops || !b->ret) {
            ft__plan_free(B);
            return -1;
        }
        memcpy(b->ops, a->ops, sizeof(int) * (size_t)a->nops);
        if (a->nret)
            memcpy(b->ret, a->ret, sizeof(int) * (size_t)a->nret);
    }
    return 0;
}

#ifndef NDEBUG
/* The plan's invariants (asserted; O(ops + inputs), as is building its
 * schedule): at least one group, none empty; every op of the problem in
 * some group and in none twice; within a group, an op after every
 * producer of its inputs that the group holds; an input whose producer
 * the group does not hold made by an earlier group (or a graph input) -
 * hence the groups in a topological order.  An op may sit in more than
 * one group (recomputation, recompute.c), each time after its inputs. */
static int plan_check(const ft_problem *p, const plan *P)
{
    int *in = ft__calloc((size_t)p->nops + 1, sizeof(int));   /* op -> 1 + last group that ran it */
    unsigned char *made = ft__calloc((size_t)p->ntensors + 1, 1); /* output of an op that has run */
    if (!in || !made) {
        ft__free(in);
        ft__free(made);
        return -1; /* out of memory, as any allocation of ft__plan_schedule */
    }
    assert(P->ngroups >= 1);
    for (int i = 0; i < P->ngroups; i++) {
        const group *G = &P->g[i];
        assert(G->nops >= 1);
        for (int j = 0; j < G->nops; j++) {
            int o = G->ops[j];
            assert(o >= 0 && o < p->nops && in[o] != i + 1); /* in range, once a group */
            const ft_op *op = &p->ops[o];
            /* each input a graph input, made by an earlier group, or by
             * an op listed before this one in this group */
            for (int k = 0; k < op->ninputs; k++)
                assert(p->tensors[op->inputs[k]].producer < 0 || made[op->inputs[k]]);
            in[o] = i + 1;
            made[op->output] = 1;
        }
        for (int j = 0; j < G->nret; j++) /* retains only what it made */
            assert(G->ret[j] >= 0 && G->ret[j] < p->ntensors && p->tensors[G->ret[j]].producer >= 0 &&
                   in[p->tensors[G->ret[j]].producer] == i + 1);
    }
    for (int o = 0; o < p->nops; o++)
        assert(in[o] != 0); /* every op runs */
    ft__free(in);
    ft__free(made);
    return 0;
}
#endif

ft_schedule *ft__plan_schedule(const ft_problem *p, const plan *P)
{
#ifndef NDEBUG
    if (plan_check(p, P))
        return NULL;
#endif
    ft_schedule *s = ft_schedule_new(P->ngroups);
    if (!s)
        return NULL;
    s->len_orders = P->ngroups;
    for (int i = 0; i < P->ngroups; i++) {
        const group *G = &P->g[i];
        ft_subgraph *g = &s->sg[i];
        if (ft_subgraph_set_ops(g, G->ops, G->nops) || ft_subgraph_set_retain(g, G->ret, G->nret)) {
            ft_schedule_free(s);
            return NULL;
        }
        g->w = G->c.w;
        g->h = G->c.h;
        g->k = G->c.k;
        g->has_reported = 1;
        g->reported = G->lat;
        if (G->c.order != ORD_RASTER) {
            int64_t ntx, nty, nk;
            g->order = ft__sg_grid(p, g, NULL, &ntx, &nty, &nk) ? NULL : ft__malloc(sizeof(int64_t) * (size_t)(ntx * nty));
            if (!g->order) {
                ft_schedule_free(s);
                return NULL;
            }
            assert(ntx >= 1 && nty >= 1); /* granularities >= 1, tensors non-empty */
            g->norder = ntx * nty;
            ft__make_order(G->c.order, ntx, nty, g->order);
        }
    }
    s->len_latencies = s->nsubgraphs;
    return s;
}

static const int *group_ops(const void *ctx, int j, int *n)
{
    const group *G = &((const plan *)ctx)->g[j];
    *n = G->nops;
    return G->ops;
}

void ft__plan_context(const ft_problem *p, const plan *P, int i, sctx *x)
{
    assert(i >= 0 && i < P->ngroups);
    const group *G = &P->g[i];
    size_t nt = (size_t)p->ntensors;
    memset(x->written, 0, nt);
    memset(x->retained, 0, nt);
    memset(x->resident, 0, nt);
    for (int j = 0; j < G->nret; j++)
        x->retained[G->ret[j]] = 1;
    if (i > 0)
        for (int j = 0; j < P->g[i - 1].nret; j++)
            x->resident[P->g[i - 1].ret[j]] = 1;
    for (int j = 0; j < G->nops; j++) {
        int t = p->ops[G->ops[j]].output;
        x->written[t] = (unsigned char)ft__written_rule(p, t, i, x->retained[t], P->ngroups, group_ops, P);
    }
}

double ft__plan_cost(search *S, plan *P, sctx *x)
{
    double total = 0;
    for (int i = 0; i < P->ngroups; i++) {
        ft__plan_context(S->p, P, i, x);
        group *G = &P->g[i];
        G->lat = ft__group_cost(S, x, G->ops, G->nops, &G->c);
        total += G->lat;
    }
    return total;
}

/* Heap of group ids keyed by the topological position of their first op. */
static void heap_push(int *h, int *n, const int *key, int g)
{
    int i = (*n)++;
    for (; i > 0 && key[h[(i - 1) / 2]] > key[g]; i = (i - 1) / 2)
        h[i] = h[(i - 1) / 2];
    h[i] = g;
}

static int heap_pop(int *h, int *n, const int *key)
{
    int top = h[0], last = h[--(*n)], i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && key[h[c + 1]] < key[h[c]])
            c++;
        if (key[h[c]] >= key[last])
            break;
        h[i] = h[c];
        i = c;
    }
    if (*n > 0)
        h[i] = last;
    return top;
}

int ft__plan_from_partition(search *S, const int *gid, int ng, plan *P)
{
    const ft_problem *p = S->p;
    int n = p->nops, rc = -1;
    memset(P, 0, sizeof *P);
    /* groups' sizes, first topological position, in-degrees of the
     * quotient graph (an edge per producer-consumer pair across groups;
     * duplicates only inflate both counts alike) */
    int *size = ft__calloc((size_t)ng + 1, sizeof(int)), *first = ft__malloc(sizeof(int) * ((size_t)ng + 1));
    int *indeg = ft__calloc((size_t)ng + 1, sizeof(int)), *heap = ft__malloc(sizeof(int) * ((size_t)ng + 1));
    int *start = ft__calloc((size_t)ng + 2, sizeof(int)), *members = ft__malloc(sizeof(int) * ((size_t)n + 1));
    if (!size || !first || !indeg || !heap || !start || !members)
        goto done;
    for (int g = 0; g < ng; g++)
        first[g] = n;
    for (int i = 0; i < n; i++) {
        int o = p->topo[i], g = gid[o];
        assert(g >= 0 && g < ng); /* a partition into ng groups (some may be empty) */
        size[g]++;
        if (i < first[g])
            first[g] = i;
        for (int k = 0; k < p->ops[o].ninputs; k++) {
            int pr = p->tensors[p->ops[o].inputs[k]].producer;
            if (pr >= 0 && gid[pr] != g)
                indeg[g]++;
        }
    }
    /* members of each group in topological order */
    for (int g = 0; g < ng; g++)
        start[g + 1] = start[g] + size[g];
    assert(start[ng] == n); /* each op in exactly one group */
    for (int g = 0; g < ng; g++)
        size[g] = 0;
    for (int i = 0; i < n; i++) {
        int o = p->topo[i], g = gid[o];
        members[start[g] + size[g]++] = o;
    }
    if (ft__plan_alloc(P, ng))
        goto done;
    /* Kahn, taking the ready group whose first op comes first */
    int nh = 0, placed = 0;
    for (int g = 0; g < ng; g++)
        if (!indeg[g])
            heap_push(heap, &nh, first, g);
    while (nh > 0) {
        int g = heap_pop(heap, &nh, first);
        /* every group feeding g is placed (Kahn): the groups come out in a
         * topological order of the quotient graph, each once */
        assert(indeg[g] == 0 && placed < ng);
        group *G = &P->g[placed++];
        G->nops = size[g];
        G->ops = ft__malloc(sizeof(int) * (size_t)(size[g] + 1));
        if (!G->ops)
            goto done;
        memcpy(G->ops, members + start[g], sizeof(int) * (size_t)size[g]);
        for (int m = 0; m < size[g]; m++) {
            const ft_tensor *T = &p->tensors[p->ops[members[start[g] + m]].output];
            int t = p->ops[members[start[g] + m]].output;
            for (int q = 0; q < T->nconsumers; q++) {
                const ft_op *c = &p->ops[T->consumers[q]];
                int h = gid[T->consumers[q]];
                for (int k = 0; k < c->ninputs && h != g; k++)
                    if (c->inputs[k] == t && --indeg[h] == 0)
                        heap_push(heap, &nh, first, h);
            }
        }
    }
    rc = placed == ng ? 0 : -1; /* otherwise a cycle */
done:
    ft__free(size);
    ft__free(first);
    ft__free(indeg);
    ft__free(heap);
    ft__free(start);
    ft__free(members);
    if (rc)
        ft__plan_free(P);
    return rc;
}

