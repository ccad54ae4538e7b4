/* partition.c - partition moves: greedy pairwise fusion, hill climbing on the partition, and perturbations for restarts. */
#include "search/search.h"

#include <stdlib.h>
#include <string.h>

/* Groups as op-id lists indexed by group id (gid per op).  Cost of a group
 * in the partition context: outputs consumed outside are written, nothing
 * retained or resident. */
double ft__partition_group_cost(search *S, sctx *x, const int *gid, int g, int *ops, int n, cfg *c)
{
    const ft_problem *p = S->p;
    size_t nt = (size_t)p->ntensors;
    memset(x->written, 0, nt);
    memset(x->retained, 0, nt);
    memset(x->resident, 0, nt);
    for (int j = 0; j < n; j++)
        if (ft__output_leaves(p, ops[j], gid, g))
            x->written[p->ops[ops[j]].output] = 1;
    return ft__group_cost(S, x, ops, n, c);
}

/* Collect ops of groups a and b (b may be -1) into out in topological order. */
static int collect(search *S, const int *gid, int a, int b, int *out)
{
    int n = 0;
    for (int i = 0; i < S->p->nops; i++) {
        int o = S->p->topo[i];
        if (gid[o] == a || (b >= 0 && gid[o] == b))
            out[n++] = o;
    }
    return n;
}

/* Whether merging groups a and b keeps the quotient graph acyclic: no path
 * from a to b (or b to a) through a third group. */
static int merge_acyclic(search *S, const int *gid, int ngid, int a, int b, unsigned char *mark, int *stack)
{
    const ft_problem *p = S->p;
    for (int dir = 0; dir < 2; dir++) {
        int src = dir ? b : a, dst = dir ? a : b;
        memset(mark, 0, (size_t)ngid);
        int top = 0;
        /* start from the groups directly fed by src, other than dst */
        mark[src] = 1;
        stack[top++] = src;
        while (top) {
            int g = stack[--top];
            for (int o = 0; o < p->nops; o++) {
                if (gid[o] != g)
                    continue;
                const ft_tensor *T = &p->tensors[p->ops[o].output];
                for (int q = 0; q < T->nconsumers; q++) {
                    int h = gid[T->consumers[q]];
                    if (mark[h])
                        continue;
                    if (h == dst) {
                        if (g != src)
                            return 0; /* path src -> ... -> g -> dst */
                        continue;
                    }
                    mark[h] = 1;
                    stack[top++] = h;
                }
            }
        }
    }
    return 1;
}

/* The merged cost of two groups depends only on their ops (the partition
 * context: outputs consumed outside are written), so greedy fusion caches
 * it per pair of group ids, valid while neither group has changed since
 * (ver[] counts the changes of each group). */
typedef struct pair_gain {
    int a, b;          /* a < b; a = -1: empty slot */
    int va, vb;        /* versions of a and b when costed */
    double cost;       /* the merged group's cost */
} pair_gain;

typedef struct pair_cache {
    pair_gain *slot;
    size_t size, used; /* size: a power of two */
} pair_cache;

/* The entry of pair (a, b) in c, existing or new (cleared when the cache is
 * half full: it is only a cache). */
static pair_gain *pair_slot(pair_cache *c, int a, int b)
{
    if (2 * (c->used + 1) > c->size) {
        for (size_t i = 0; i < c->size; i++)
            c->slot[i].a = -1;
        c->used = 0;
    }
    uint64_t h = ((uint64_t)(uint32_t)a * 0x9E3779B97F4A7C15ULL) ^ ((uint64_t)(uint32_t)b * 0xC2B2AE3D27D4EB4FULL);
    size_t i = (size_t)(h ^ (h >> 31)) & (c->size - 1);
    while (c->slot[i].a >= 0 && (c->slot[i].a != a || c->slot[i].b != b))
        i = (i + 1) & (c->size - 1);
    if (c->slot[i].a < 0) {
        c->slot[i] = (pair_gain){a, b, -1, -1, INF};
        c->used++;
    }
    return &c->slot[i];
}

void ft__greedy_fusion(search *S, sctx *x, int *gid)
{
    const ft_problem *p = S->p;
    int n = p->nops;
    int *ops = ft__malloc(sizeof(int) * (size_t)n);
    int *ops2 = ft__malloc(sizeof(int) * (size_t)n);
    double *gcost = ft__malloc(sizeof(double) * (size_t)n);
    int *ver = ft__calloc((size_t)n, sizeof(int));
    unsigned char *mark = ft__malloc((size_t)n);
    int *stack = ft__malloc(sizeof(int) * (size_t)(n + 1));
    pair_cache pc = {NULL, 64, 0};
    for (int o = 0; o < n; o++)
        pc.size += 4 * (size_t)(p->ops[o].ninputs + 1);
    while (pc.size & (pc.size - 1))
        pc.size &= pc.size - 1;
    pc.size *= 2;
    pc.slot = ft__malloc(sizeof(pair_gain) * pc.size);
    if (!ops || !ops2 || !gcost || !ver || !mark || !stack || !pc.slot)
        goto done;
    for (size_t i = 0; i < pc.size; i++)
        pc.slot[i].a = -1;
    for (int o = 0; o < n; o++)
        gid[o] = o;
    for (int g = 0; g < n; g++) {
        cfg c;
        int m = collect(S, gid, g, -1, ops);
        gcost[g] = ft__partition_group_cost(S, x, gid, g, ops, m, &c);
    }
    for (;;) {
        if (ft__out_of_time(S))
            break;
        double best_gain = 0;
        int ba = -1, bb = -1;
        double best_cost = 0;
        /* candidate pairs: groups linked by a tensor; the whole scan
         * stops at the deadline (each pair not yet costed may take a
         * tiling search, and a 10 000-op scan many seconds) */
        int cut = 0;
        for (int o = 0; o < n && !cut; o++) {
            const ft_op *op = &p->ops[o];
            for (int i = 0; i < op->ninputs && !cut; i++) {
                int t = op->inputs[i];
                int pr = p->tensors[t].producer;
                /* producer-consumer and sibling (shared input) links */
                int partners[2] = {pr, -1};
                int np = pr >= 0 ? 1 : 0;
                const ft_tensor *T = &p->tensors[t];
                for (int q = 0; q < T->nconsumers; q++) {
                    int c2 = T->consumers[q];
                    if (c2 < o && np < 2 && gid[c2] != gid[o]) {
                        partners[np++] = c2;
                        break;
                    }
                }
                for (int k = 0; k < np; k++) {
                    int a = gid[partners[k]], b = gid[o];
                    if (a == b)
                        continue;
                    if (a > b) {
                        int t2 = a;
                        a = b;
                        b = t2;
                    }
                    pair_gain *e = pair_slot(&pc, a, b);
                    if (e->va != ver[a] || e->vb != ver[b]) {
                        int m = collect(S, gid, a, b, ops);
                        /* cost the merge with b relabelled as a */
                        for (int j = 0; j < m; j++)
                            ops2[j] = gid[ops[j]];
                        for (int j = 0; j < m; j++)
                            gid[ops[j]] = a;
                        cfg c;
                        double mc = ft__partition_group_cost(S, x, gid, a, ops, m, &c);
                        for (int j = 0; j < m; j++)
                            gid[ops[j]] = ops2[j];
                        if (ft__out_of_time(S) && mc >= INF) {
                            cut = 1; /* not costed: the deadline cut it */
                            break;
                        }
                        e->va = ver[a];
                        e->vb = ver[b];
                        e->cost = mc;
                    }
                    double mc = e->cost;
                    double gain = gcost[a] + gcost[b] - mc;
                    if (mc < INF && gain > best_gain * (1 + 1e-12) + 1e-9 && merge_acyclic(S, gid, n, a, b, mark, stack)) {
                        best_gain = gain;
                        ba = a;
                        bb = b;
                        best_cost = mc;
                    }
                    if (ft__out_of_time(S)) {
                        cut = 1;
                        break;
                    }
                }
            }
        }
        if (ba < 0)
            break;
        for (int o = 0; o < n; o++)
            if (gid[o] == bb)
                gid[o] = ba;
        ver[ba]++;
        ver[bb]++;
        gcost[ba] = best_cost;
    }
done:
    ft__free(ops);
    ft__free(ops2);
    ft__free(gcost);
    ft__free(ver);
    ft__free(pc.slot);
    ft__free(mark);
    ft__free(stack);
}

/* Whether group b reads a tensor group a makes (gid per op). */
static int reads_from(const ft_problem *p, const int *gid, const int *bops, int nb, int a)
{
    for (int j = 0; j < nb; j++) {
        const ft_op *op = &p->ops[bops[j]];
        for (int i = 0; i < op->ninputs; i++) {
            int pr = p->tensors[op->inputs[i]].producer;
            if (pr >= 0 && gid[pr] == a)
                return 1;
        }
    }
    return 0;
}

int ft__neighbour_merge(search *S, sctx *x, int *gid)
{
    const ft_problem *p = S->p;
    int n = p->nops, merges = 0;
    int *ops = ft__malloc(sizeof(int) * (size_t)n), *bops = ft__malloc(sizeof(int) * (size_t)n);
    int *old = ft__malloc(sizeof(int) * (size_t)n), *stack = ft__malloc(sizeof(int) * (size_t)(n + 1));
    unsigned char *mark = ft__malloc((size_t)n + 1);
    double *gc = ft__malloc(sizeof(double) * (size_t)(n + 1));
    if (!ops || !bops || !old || !stack || !mark || !gc)
        goto done;
    for (int changed = 1; changed && !ft__out_of_time(S);) {
        changed = 0;
        int ng = ft__compact_gids(gid, n);
        plan P;
        if (ft__plan_from_partition(S, gid, ng, &P))
            break;
        /* the plan's order: group i of P is partition group bops[i] */
        for (int i = 0; i < P.ngroups; i++)
            bops[i] = gid[P.g[i].ops[0]];
        int ngroups = P.ngroups;
        ft__plan_free(&P);
        for (int g = 0; g < ng; g++)
            gc[g] = -1; /* not costed yet */
        for (int i = 0; i + 1 < ngroups && !ft__out_of_time(S); i++) {
            int a = bops[i], b = bops[i + 1];
            int mb = collect(S, gid, b, -1, ops);
            if (!reads_from(p, gid, ops, mb, a) || !merge_acyclic(S, gid, ng, a, b, mark, stack))
                continue;
            cfg c;
            for (int k = 0; k < 2; k++) {
                int g = k ? b : a;
                if (gc[g] < 0) {
                    int m = collect(S, gid, g, -1, ops);
                    gc[g] = ft__partition_group_cost(S, x, gid, g, ops, m, &c);
                }
            }
            /* cost the merge with b relabelled as a */
            memcpy(old, gid, sizeof(int) * (size_t)n);
            for (int o = 0; o < n; o++)
                if (gid[o] == b)
                    gid[o] = a;
            int m = collect(S, gid, a, -1, ops);
            double mc = ft__partition_group_cost(S, x, gid, a, ops, m, &c);
            if (mc < INF && mc < (gc[a] + gc[b]) * (1 - 1e-12)) {
                gc[a] = mc;
                gc[b] = 0;
                merges++;
                changed = 1;
                bops[i + 1] = a; /* the merged group meets the next one */
            } else {
                memcpy(gid, old, sizeof(int) * (size_t)n);
            }
        }
    }
done:
    ft__free(ops);
    ft__free(bops);
    ft__free(old);
    ft__free(stack);
    ft__free(mark);
    ft__free(gc);
    return merges;
}

/* Renumber group ids 0..ng-1; returns ng. */
int ft__compact_gids(int *gid, int n)
{
    /* ids may run past n (a move that splits an op out, a window's new
     * groups): map every id in use */
    int top = 0;
    for (int o = 0; o < n; o++)
        top = gid[o] > top ? gid[o] : top;
    int *map = ft__malloc(sizeof(int) * ((size_t)top + 1));
    if (!map)
        return top + 1; /* out of memory: the ids stay as they are */
    for (int i = 0; i <= top; i++)
        map[i] = -1;
    int ng = 0;
    for (int o = 0; o < n; o++) {
        if (map[gid[o]] < 0)
            map[gid[o]] = ng++;
        gid[o] = map[gid[o]];
    }
    ft__free(map);
    return ng;
}

/* ------------------------------------------------------------ local search */

/* Sum of partition costs of the groups of gid (ng groups). */
static double partition_cost(search *S, sctx *x, const int *gid, int ng, int *ops, double *gc)
{
    double total = 0;
    for (int g = 0; g < ng; g++) {
        cfg c;
        int m = collect(S, gid, g, -1, ops);
        gc[g] = m ? ft__partition_group_cost(S, x, gid, g, ops, m, &c) : 0;
        total += gc[g];
    }
    return total;
}

/* Whether every group of gid is connected and the quotient graph acyclic. */
static int partition_ok(search *S, const int *gid, int ng, int *ops)
{
    for (int g = 0; g < ng; g++) {
        int m = collect(S, gid, g, -1, ops);
        if (m && !ft__connected(S->p, ops, m))
            return 0;
    }
    plan P;
    if (ft__plan_from_partition(S, gid, ng, &P))
        return 0;
    ft__plan_free(&P);
    return 1;
}

/* Apply a random move to partition gid (ng groups): pick an op o, then
 * move it into the group of an op linked to it through a tensor, split it
 * out alone (group ng), or merge its group into a linked one.  cand is
 * scratch of nops ints.  Sets *from and *to; -1 (gid unchanged) when the
 * move changes nothing. */
static int random_move(search *S, int *gid, int ng, int *cand, int *from, int *to)
{
    const ft_problem *p = S->p;
    int n = p->nops;
    int o = (int)(ft__rng(S) % (uint64_t)n);
    /* ops linked to o through a tensor */
    int nc = 0;
    const ft_op *op = &p->ops[o];
    const ft_tensor *T = &p->tensors[op->output];
    for (int q = 0; q < T->nconsumers && nc < n; q++)
        cand[nc++] = T->consumers[q];
    for (int i = 0; i < op->ninputs && nc < n; i++) {
        const ft_tensor *I = &p->tensors[op->inputs[i]];
        if (I->producer >= 0)
            cand[nc++] = I->producer;
        for (int q = 0; q < I->nconsumers && nc < n; q++)
            if (I->consumers[q] != o)
                cand[nc++] = I->consumers[q];
    }
    int kind = (int)(ft__rng(S) % 3);
    *from = gid[o];
    if (kind == 1 || nc == 0)
        *to = ng; /* split o out alone */
    else
        *to = gid[cand[ft__rng(S) % (uint64_t)nc]];
    if (*to == *from)
        return -1;
    if (kind == 2 && *to < ng) {
        for (int q = 0; q < n; q++)
            if (gid[q] == *from)
                gid[q] = *to; /* merge the groups */
    } else {
        gid[o] = *to;
    }
    return 0;
}

void ft__perturb(search *S, int *gid, int nmoves)
{
    int n = S->p->nops;
    int *cand = ft__malloc(sizeof(int) * (size_t)n), *ops = ft__malloc(sizeof(int) * (size_t)n), *old = ft__malloc(sizeof(int) * (size_t)n);
    for (int it = 0; cand && ops && old && it < nmoves; it++) {
        int ng = ft__compact_gids(gid, n), from, to;
        memcpy(old, gid, sizeof(int) * (size_t)n);
        if (random_move(S, gid, ng, cand, &from, &to) == 0 && !partition_ok(S, gid, to == ng ? ng + 1 : ng, ops))
            memcpy(gid, old, sizeof(int) * (size_t)n);
    }
    ft__free(cand);
    ft__free(ops);
    ft__free(old);
}

/* Seeded hill climbing on the partition: move an op into a linked group,
 * split it out alone, or merge its group with a linked one; keep strict
 * improvements.  At most `moves` tries (the time limit may cut it). */
void ft__local_search(search *S, sctx *x, int *gid, int64_t moves)
{
    const ft_problem *p = S->p;
    int n = p->nops;
    int *ops = ft__malloc(sizeof(int) * (size_t)n);
    int *cand = ft__malloc(sizeof(int) * (size_t)n);
    double *gc = ft__malloc(sizeof(double) * (size_t)(n + 1));
    double *gc2 = ft__malloc(sizeof(double) * (size_t)(n + 1));
    if (!ops || !cand || !gc || !gc2)
        goto done;
    int ng = ft__compact_gids(gid, n);
    double cur = partition_cost(S, x, gid, ng, ops, gc);
    int *old = ft__malloc(sizeof(int) * (size_t)n);
    if (!old)
        goto done;
    for (int64_t it = 0; it < moves && !ft__out_of_time(S); it++) {
        memcpy(old, gid, sizeof(int) * (size_t)n);
        int from, to;
        if (random_move(S, gid, ng, cand, &from, &to))
            continue;
        int ng2 = to == ng ? ng + 1 : ng;
        double next = INF;
        if (partition_ok(S, gid, ng2, ops)) {
            next = 0;
            for (int g = 0; g < ng2; g++) {
                int changed = g == from || g == to;
                if (!changed) {
                    gc2[g] = gc[g];
                } else {
                    cfg c;
                    int m = collect(S, gid, g, -1, ops);
                    gc2[g] = m ? ft__partition_group_cost(S, x, gid, g, ops, m, &c) : 0;
                }
                next += gc2[g];
                if (next == INF)
                    break;
            }
        }
        if (next < cur - 1e-9 * fmax(1, cur)) {
            cur = next;
            ng = ft__compact_gids(gid, n);
            partition_cost(S, x, gid, ng, ops, gc);
        } else {
            memcpy(gid, old, sizeof(int) * (size_t)n);
        }
    }
    ft__free(old);
done:
    ft__free(ops);
    ft__free(cand);
    ft__free(gc);
    ft__free(gc2);
}

