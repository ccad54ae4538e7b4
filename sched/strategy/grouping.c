/* grouping.c - what makes a grouping of ops schedulable: connected groups (SPEC 2) and an acyclic quotient graph, checked for a merge and repaired for a whole partition. */
/*
 * A partition from a heuristic (METIS parts, name prefixes, rule matches)
 * may put two unlinked ops in one group, or make groups that depend on each
 * other both ways.  ft__grouping_repair fixes both, splitting only:
 *
 *  1. Connected components.  Ops of one group are linked when one reads
 *     the other's output or both read one tensor (SPEC 2's connectivity);
 *     each group becomes its components (union-find over the users of each
 *     tensor, Tarjan's "Efficiency of a good but not linear set union
 *     algorithm", JACM 1975).
 *  2. Cycles.  The strongly connected components of the quotient graph
 *     (Tarjan, "Depth-first search and linear graph algorithms", SIAM J.
 *     Comput. 1972, iteratively) are found; in each one with more than one
 *     group, the group g holding the component's first unit in a
 *     topological order of the units is split in topological fashion: its
 *     "late" units, those with an op reachable from the component's other
 *     groups, leave g for a new group.  The early part is never reached
 *     from outside g (late is closed under g's own edges), so it lies on
 *     no cycle; both parts are non-empty (g's first unit has no ancestor
 *     in the component, and g has an edge in from it, which lands on
 *     another unit), so every round adds a group, and step 1 runs again.
 *     At most nops rounds: one-unit groups are acyclic.
 *
 * Units are ops, or the groups of a valid partition the caller names (the
 * fused groups a partitioner merged): then no unit is ever split, and the
 * worst repair gives back the units themselves.  Step 1 keeps each unit in
 * one piece.
 *
 * Merging two groups (ft__merge_cycles) is refused when a path of ops
 * leaves them and comes back: a breadth-first search from their ops
 * through outside consumers, pruned at the last topological position of
 * their ops (nothing later can lead back).
 */
#include "strategy/rules.h"
#include "core/uf.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ labels */

/* Contract: rules.h. */
void ft__labels_free(char **label, int n)
{
    if (!label)
        return;
    for (int g = 0; g < n; g++)
        ft__free(label[g]);
    ft__free(label);
}

/* ------------------------------------------------------------ merge check */

/* Contract: rules.h.  -1 on OOM. */
int ft__reach_init(ft__reach *R, const ft_problem *p)
{
    size_t n = (size_t)p->nops + 1;
    R->pos = ft__malloc(sizeof(int) * n);
    R->queue = ft__malloc(sizeof(int) * n);
    R->seen = ft__calloc(n, sizeof(unsigned));
    R->stamp = 0;
    if (!R->pos || !R->queue || !R->seen) {
        ft__reach_free(R);
        return -1;
    }
    for (int i = 0; i < p->nops; i++)
        R->pos[p->topo[i]] = i;
    return 0;
}

/* Contract: rules.h. */
void ft__reach_free(ft__reach *R)
{
    ft__free(R->pos);
    ft__free(R->queue);
    ft__free(R->seen);
    memset(R, 0, sizeof *R);
}

/* A fresh mark for R->seen (all marks forgotten when the stamp wraps). */
static void next_stamp(ft__reach *R, int nops)
{
    if (++R->stamp == 0) {
        memset(R->seen, 0, sizeof(unsigned) * (size_t)nops);
        R->stamp = 1;
    }
}

/* Breadth-first search forward from R->queue[0..tail-1] (marked seen):
 * every op reachable through consumers at a topological position below
 * limit gets R->seen = R->stamp.  With gid, reaching an op of group a or
 * b returns 1 at once, except from the first nseeds ops (their edges
 * within a and b are no path out and back); else 0. */
static int flood(ft__reach *R, const ft_problem *p, int tail, int nseeds, const int *gid, int a, int b, int limit)
{
    for (int head = 0; head < tail; head++) {
        const ft_tensor *T = &p->tensors[p->ops[R->queue[head]].output];
        for (int q = 0; q < T->nconsumers; q++) {
            int c = T->consumers[q];
            if (gid && (gid[c] == a || gid[c] == b)) {
                if (head >= nseeds)
                    return 1;
            } else if (R->pos[c] < limit && R->seen[c] != R->stamp) {
                R->seen[c] = R->stamp;
                R->queue[tail++] = c;
            }
        }
    }
    return 0;
}

/* Contract: rules.h. */
int ft__merge_cycles(ft__reach *R, const ft_problem *p, const int *gid, int a, int b, const int *ops, int n)
{
    next_stamp(R, p->nops);
    int last = 0;
    for (int j = 0; j < n; j++) {
        if (R->pos[ops[j]] > last)
            last = R->pos[ops[j]];
        R->seen[ops[j]] = R->stamp;
        R->queue[j] = ops[j];
    }
    return flood(R, p, n, n, gid, a, b, last);
}

/* ------------------------------------------------------------ repair */

/* Working state of a repair: gid and origin (group -> the input group
 * whose label it keeps) for up to cap groups, and scratch. */
typedef struct fixer {
    const ft_problem *p;
    int n, ng, cap, nscc;
    int *gid, *origin, *norigin;
    int *uf, *stamp, *last;      /* union-find over ops; per-group scratch */
    int nu, mark;
    int *unit, *urep, *uorder, *umark; /* op -> unit; an op of each; units in topological order; late marks */
    int *xadj, *adj, *idx, *low, *scc, *stack, *frame, *fedge, *first;
    unsigned char *onstack;
    ft__reach R;
} fixer;

/* Step 1: every group becomes its connected components, numbered by their
 * first op in p->topo (origin follows). */
static void split_components(fixer *F)
{
    const ft_problem *p = F->p;
    for (int o = 0; o < F->n; o++)
        ft__uf_make(F->uf, o);
    for (int o = 0; o < F->n; o++)
        ft__uf_union(F->uf, o, F->urep[F->unit[o]]);
    for (int g = 0; g < F->ng; g++)
        F->stamp[g] = -1;
    for (int t = 0; t < p->ntensors; t++) {
        const ft_tensor *T = &p->tensors[t];
        for (int q = -1; q < T->nconsumers; q++) {
            int o = q < 0 ? T->producer : T->consumers[q];
            if (o < 0)
                continue;
            int g = F->gid[o];
            if (F->stamp[g] == t)
                ft__uf_union(F->uf, o, F->last[g]);
            else {
                F->stamp[g] = t;
                F->last[g] = o;
            }
        }
    }
    /* F->last: new id per union-find root (-1: none yet) */
    for (int o = 0; o < F->n; o++)
        F->last[o] = -1;
    int ng = 0;
    for (int i = 0; i < F->n; i++) {
        int o = p->topo[i], r = ft__uf_find(F->uf, o);
        if (F->last[r] < 0) {
            F->norigin[ng] = F->origin[F->gid[o]];
            F->last[r] = ng++;
        }
    }
    for (int o = 0; o < F->n; o++)
        F->gid[o] = F->last[ft__uf_find(F->uf, o)];
    memcpy(F->origin, F->norigin, sizeof(int) * (size_t)ng);
    F->ng = ng;
}

/* The quotient graph's edges (duplicates kept) as CSR in xadj/adj. */
static void quotient(fixer *F)
{
    const ft_problem *p = F->p;
    memset(F->xadj, 0, sizeof(int) * ((size_t)F->ng + 1));
    for (int pass = 0; pass < 2; pass++) {
        for (int o = 0; o < F->n; o++) {
            const ft_tensor *T = &p->tensors[p->ops[o].output];
            for (int q = 0; q < T->nconsumers; q++) {
                int g = F->gid[o], h = F->gid[T->consumers[q]];
                if (g == h)
                    continue;
                if (pass == 0)
                    F->xadj[g + 1]++;
                else
                    F->adj[F->last[g]++] = h;
            }
        }
        if (pass == 0) {
            for (int g = 0; g < F->ng; g++)
                F->xadj[g + 1] += F->xadj[g];
            memcpy(F->last, F->xadj, sizeof(int) * (size_t)F->ng); /* fill cursors */
        }
    }
}

/* Strongly connected components of the quotient (iterative Tarjan):
 * scc[g] = component id; returns 1 when some component has two groups. */
static int components(fixer *F)
{
    int ng = F->ng, counter = 0, nscc = 0, top = 0, sp = 0, cyclic = 0;
    for (int g = 0; g < ng; g++)
        F->idx[g] = -1;
    for (int root = 0; root < ng; root++) {
        if (F->idx[root] >= 0)
            continue;
        F->frame[sp] = root;
        F->fedge[sp++] = F->xadj[root];
        F->idx[root] = F->low[root] = counter++;
        F->stack[top++] = root;
        F->onstack[root] = 1;
        while (sp > 0) {
            int v = F->frame[sp - 1];
            if (F->fedge[sp - 1] < F->xadj[v + 1]) {
                int w = F->adj[F->fedge[sp - 1]++];
                if (F->idx[w] < 0) {
                    F->frame[sp] = w;
                    F->fedge[sp++] = F->xadj[w];
                    F->idx[w] = F->low[w] = counter++;
                    F->stack[top++] = w;
                    F->onstack[w] = 1;
                } else if (F->onstack[w] && F->idx[w] < F->low[v])
                    F->low[v] = F->idx[w];
                continue;
            }
            sp--;
            if (F->low[v] == F->idx[v]) {
                int size = 0, w;
                do {
                    w = F->stack[--top];
                    F->onstack[w] = 0;
                    F->scc[w] = nscc;
                    size++;
                } while (w != v);
                cyclic |= size > 1;
                F->first[nscc++] = size > 1 ? -1 : -2; /* -1: to split (its group not found yet); -2: acyclic */
            }
            if (sp > 0 && F->low[v] < F->low[F->frame[sp - 1]])
                F->low[F->frame[sp - 1]] = F->low[v];
        }
    }
    F->nscc = nscc;
    return cyclic;
}

/* Step 2: in every cyclic component, the late units of the group holding
 * its first unit (with an op reachable from the component's other groups)
 * become a new group. */
static void split_late(fixer *F)
{
    const ft_problem *p = F->p;
    ft__reach *R = &F->R;
    /* first[c]: the group holding cyclic component c's first unit */
    for (int i = 0; i < F->nu; i++) {
        int rep = F->urep[F->uorder[i]]; /* -1: an empty unit */
        if (rep >= 0 && F->first[F->scc[F->gid[rep]]] == -1)
            F->first[F->scc[F->gid[rep]]] = F->gid[rep];
    }
    int ng = F->ng;
    for (int c = 0; c < F->nscc; c++) {
        int g = F->first[c];
        if (g < 0)
            continue;
        next_stamp(R, F->n);
        int tail = 0;
        for (int o = 0; o < F->n; o++)
            if (F->gid[o] < ng && F->gid[o] != g && F->scc[F->gid[o]] == c) {
                R->seen[o] = R->stamp;
                R->queue[tail++] = o;
            }
        flood(R, p, tail, tail, NULL, -1, -1, F->n);
        int late = F->ng;
        F->mark++;
        for (int o = 0; o < F->n; o++)
            if (F->gid[o] == g && R->seen[o] == R->stamp)
                F->umark[F->unit[o]] = F->mark;
        for (int o = 0; o < F->n; o++)
            if (F->gid[o] == g && F->umark[F->unit[o]] == F->mark)
                F->gid[o] = late;
        F->origin[late] = F->origin[g];
        F->ng++;
    }
}

/* F's units (see the top): units->gid when units is not NULL, every
 * group of F a union of its groups, and their quotient graph acyclic;
 * else one unit per op.  Fills unit, urep and uorder (Kahn's algorithm
 * over the units).  -1 on OOM. */
static int set_units(fixer *F, const ft_partition *units)
{
    const ft_problem *p = F->p;
    int n = F->n, nu = units ? units->ngroups : 0, ok = units && nu > 0 && nu <= n, k = 0;
    size_t nu1 = (size_t)(ok ? nu : n) + 1;
    int *start = ft__calloc(nu1 + 1, sizeof(int)), *mem = ft__malloc(sizeof(int) * ((size_t)n + 1));
    int *indeg = ft__calloc(nu1, sizeof(int));
    F->urep = ft__malloc(sizeof(int) * nu1);
    F->uorder = ft__malloc(sizeof(int) * nu1);
    F->umark = ft__calloc(nu1, sizeof(int));
    F->unit = ft__malloc(sizeof(int) * ((size_t)n + 1));
    if (!start || !mem || !indeg || !F->urep || !F->uorder || !F->umark || !F->unit) {
        ft__free(start);
        ft__free(mem);
        ft__free(indeg);
        return -1;
    }
    for (int u = 0; ok && u < nu; u++)
        F->urep[u] = -1;
    for (int o = 0; ok && o < n; o++) {
        int u = units->gid[o];
        ok = u >= 0 && u < nu && (F->urep[u] < 0 || F->gid[F->urep[u]] == F->gid[o]);
        if (ok && F->urep[u] < 0)
            F->urep[u] = o;
    }
    if (ok) { /* members per unit, then Kahn */
        for (int o = 0; o < n; o++)
            start[units->gid[o] + 1]++;
        for (int u = 0; u < nu; u++)
            start[u + 1] += start[u];
        for (int o = 0; o < n; o++)
            mem[start[units->gid[o]] + indeg[units->gid[o]]++] = o;
        memset(indeg, 0, sizeof(int) * nu1);
        for (int o = 0; o < n; o++) {
            const ft_tensor *T = &p->tensors[p->ops[o].output];
            for (int q = 0; q < T->nconsumers; q++)
                indeg[units->gid[T->consumers[q]]] += units->gid[T->consumers[q]] != units->gid[o];
        }
        for (int u = 0; u < nu; u++)
            if (!indeg[u])
                F->uorder[k++] = u;
        for (int i = 0; i < k; i++)
            for (int j = start[F->uorder[i]]; j < start[F->uorder[i] + 1]; j++) {
                const ft_tensor *T = &p->tensors[p->ops[mem[j]].output];
                for (int q = 0; q < T->nconsumers; q++) {
                    int v = units->gid[T->consumers[q]];
                    if (v != F->uorder[i] && --indeg[v] == 0)
                        F->uorder[k++] = v;
                }
            }
        ok = k == nu;
    }
    ft__free(start);
    ft__free(mem);
    ft__free(indeg);
    if (ok) {
        memcpy(F->unit, units->gid, sizeof(int) * (size_t)n);
        F->nu = nu;
        return 0;
    }
    for (int o = 0; o < n; o++)
        F->unit[o] = F->urep[o] = o;
    memcpy(F->uorder, p->topo, sizeof(int) * (size_t)n);
    F->nu = n;
    return 0;
}

static void fixer_free(fixer *F)
{
    ft__free(F->unit);
    ft__free(F->urep);
    ft__free(F->uorder);
    ft__free(F->umark);
    ft__free(F->gid);
    ft__free(F->origin);
    ft__free(F->norigin);
    ft__free(F->uf);
    ft__free(F->stamp);
    ft__free(F->last);
    ft__free(F->xadj);
    ft__free(F->adj);
    ft__free(F->idx);
    ft__free(F->low);
    ft__free(F->scc);
    ft__free(F->stack);
    ft__free(F->frame);
    ft__free(F->fedge);
    ft__free(F->first);
    ft__free(F->onstack);
    ft__reach_free(&F->R);
}

/* Contract: rules.h. */
int ft__grouping_repair(const ft_problem *p, ft_partition *part, const ft_partition *units, ft_status *st)
{
    fixer F;
    memset(&F, 0, sizeof F);
    F.p = p;
    F.n = p->nops;
    F.cap = (part->ngroups > F.n ? part->ngroups : F.n) + 1;
    size_t cap = (size_t)F.cap, n = (size_t)F.n + 1, edges = 1;
    for (int o = 0; o < F.n; o++)
        edges += (size_t)p->tensors[p->ops[o].output].nconsumers;
    F.gid = ft__malloc(sizeof(int) * n);
    F.origin = ft__malloc(sizeof(int) * cap);
    F.norigin = ft__malloc(sizeof(int) * cap);
    F.uf = ft__malloc(sizeof(int) * n);
    F.stamp = ft__malloc(sizeof(int) * cap);
    F.last = ft__malloc(sizeof(int) * (cap > n ? cap : n));
    F.xadj = ft__malloc(sizeof(int) * (cap + 1));
    F.adj = ft__malloc(sizeof(int) * edges);
    F.idx = ft__malloc(sizeof(int) * cap);
    F.low = ft__malloc(sizeof(int) * cap);
    F.scc = ft__malloc(sizeof(int) * cap);
    F.stack = ft__malloc(sizeof(int) * cap);
    F.frame = ft__malloc(sizeof(int) * cap);
    F.fedge = ft__malloc(sizeof(int) * cap);
    F.first = ft__malloc(sizeof(int) * (cap + 1));
    F.onstack = ft__calloc(cap, 1);
    char **label = NULL;
    if (!F.gid || !F.origin || !F.norigin || !F.uf || !F.stamp || !F.last || !F.xadj || !F.adj || !F.idx || !F.low ||
        !F.scc || !F.stack || !F.frame || !F.fedge || !F.first || !F.onstack || ft__reach_init(&F.R, p))
        goto oom;
    memcpy(F.gid, part->gid, sizeof(int) * (size_t)F.n);
    F.ng = part->ngroups;
    for (int g = 0; g < F.ng; g++)
        F.origin[g] = g;
    if (set_units(&F, units))
        goto oom;
    split_components(&F);
    /* each round adds a group (see the top): at most nops rounds */
    int cyclic = 1;
    for (int round = 0; round <= F.n && cyclic; round++) {
        quotient(&F);
        if ((cyclic = components(&F))) {
            split_late(&F);
            split_components(&F);
        }
    }
    if (cyclic) { /* cannot happen (see the top); said rather than returned wrong */
        fixer_free(&F);
        return ft__fail(st, FT_EINPUT, 0, "grouping repair: the quotient graph is still cyclic after %d rounds", p->nops + 1);
    }
    if (part->label) {
        label = ft__calloc((size_t)F.ng + 1, sizeof(char *));
        if (!label)
            goto oom;
        for (int g = 0; g < F.ng; g++) {
            const char *s = part->label[F.origin[g]];
            if (s && !(label[g] = ft__strdup(s))) {
                ft__labels_free(label, F.ng);
                goto oom;
            }
        }
        ft__labels_free(part->label, part->ngroups);
        part->label = label;
    }
    memcpy(part->gid, F.gid, sizeof(int) * (size_t)F.n);
    part->ngroups = F.ng;
    fixer_free(&F);
    return FT_OK;
oom:
    fixer_free(&F);
    return ft__fail(st, FT_ENOMEM, 0, "grouping repair: out of memory");
}
