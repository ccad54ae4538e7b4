/* group.c - the best configuration and op order of one subgraph in its context, memoised by (ops, context). */
#include "search/search.h"

#include <stdlib.h>
#include <string.h>

/* Memo entry: best configuration of one subgraph in one context. */
struct memo {
    struct memo *next;
    uint64_t hash;
    int nkey;
    int *key;
    cfg c;
    double lat;
    int *order;      /* best op order of the subgraph */
};

/* Sort ops by topological position. */
void ft__sort_topo(const search *S, int *ops, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && S->topo_pos[ops[j - 1]] > S->topo_pos[ops[j]]; j--) {
            int t = ops[j];
            ops[j] = ops[j - 1];
            ops[j - 1] = t;
        }
}


static uint64_t hash_ints(const int *a, int n)
{
    uint64_t h = 1469598103934665603ULL;
    for (int i = 0; i < n; i++) {
        h ^= (uint64_t)(uint32_t)a[i];
        h *= 1099511628211ULL;
    }
    return h;
}

/* Key of a subgraph in context: its ops (sorted), then the written,
 * retained and resident tensors that concern it. */
static int make_key(search *S, const sctx *x, const int *ops, int nops)
{
    const ft_problem *p = S->p;
    int need = 4 + nops * 4;
    for (int j = 0; j < nops; j++)
        need += p->ops[ops[j]].ninputs;
    if (need > S->keycap) {
        int *nb = ft__realloc(S->keybuf, sizeof(int) * (size_t)need);
        if (!nb)
            return -1;
        S->keybuf = nb;
        S->keycap = need;
    }
    int *k = S->keybuf, n = 0;
    for (int j = 0; j < nops; j++)
        k[n++] = ops[j];
    k[n++] = -3 - S->fine; /* the candidate set is part of the key */
    for (int j = 0; j < nops; j++) {
        int t = p->ops[ops[j]].output;
        k[n++] = (x->written[t] ? 1 : 0) | (x->retained[t] ? 2 : 0);
    }
    k[n++] = -2;
    for (int j = 0; j < nops; j++) {
        const ft_op *op = &p->ops[ops[j]];
        for (int i = 0; i < op->ninputs; i++)
            k[n++] = x->resident[op->inputs[i]];
    }
    return n;
}

static memo *memo_find(search *S, int n, uint64_t h)
{
    if (!S->tab)
        return NULL;
    for (memo *m = S->tab[h & (S->tabsize - 1)]; m; m = m->next)
        if (m->hash == h && m->nkey == n && memcmp(m->key, S->keybuf, sizeof(int) * (size_t)n) == 0)
            return m;
    return NULL;
}

static void memo_add(search *S, int n, uint64_t h, const cfg *c, double lat, const int *order, int nops)
{
    if (S->nmemo * 2 >= S->tabsize) {
        size_t ns = S->tabsize ? S->tabsize * 2 : 1024;
        memo **nt = ft__calloc(ns, sizeof(memo *));
        if (!nt)
            return;
        for (size_t i = 0; i < S->tabsize; i++)
            for (memo *m = S->tab[i], *nx; m; m = nx) {
                nx = m->next;
                m->next = nt[m->hash & (ns - 1)];
                nt[m->hash & (ns - 1)] = m;
            }
        ft__free(S->tab);
        S->tab = nt;
        S->tabsize = ns;
    }
    memo *m = ft__malloc(sizeof *m);
    if (!m)
        return;
    m->key = ft__malloc(sizeof(int) * (size_t)n);
    m->order = ft__malloc(sizeof(int) * (size_t)nops);
    if (!m->key || !m->order) {
        ft__free(m->key);
        ft__free(m->order);
        ft__free(m);
        return;
    }
    memcpy(m->order, order, sizeof(int) * (size_t)nops);
    memcpy(m->key, S->keybuf, sizeof(int) * (size_t)n);
    m->nkey = n;
    m->hash = h;
    m->c = *c;
    m->lat = lat;
    m->next = S->tab[h & (S->tabsize - 1)];
    S->tab[h & (S->tabsize - 1)] = m;
    S->nmemo++;
}

void ft__memo_free(search *S)
{
    for (size_t i = 0; i < S->tabsize; i++)
        for (memo *m = S->tab[i], *nx; m; m = nx) {
            nx = m->next;
            ft__free(m->key);
            ft__free(m->order);
            ft__free(m);
        }
    ft__free(S->tab);
}


/* Whether the op order inside the subgraph can change its cost: some
 * tensor made inside has two consumers inside (an upstream op takes its
 * dimension kinds from the consumer listed last, SPEC 4). */
static int order_sensitive(search *S, const int *ops, int nops)
{
    const ft_problem *p = S->p;
    for (int j = 0; j < nops; j++) {
        int t = p->ops[ops[j]].output, n = 0;
        for (int a = 0; a < nops; a++) {
            const ft_op *op = &p->ops[ops[a]];
            for (int i = 0; i < op->ninputs; i++)
                if (op->inputs[i] == t) {
                    n++;
                    break;
                }
        }
        if (n >= 2)
            return 1;
    }
    return 0;
}

/* The signature of order ord[] of the ops of ops[] into sig[] (nedges
 * entries, the group's producer-consumer pairs): for each op of ops[] in
 * turn, its consumers in the group in the order ord[] lists them.  SPEC 4
 * lets the order change a cost only through that order (the kinds of an
 * upstream op's region are those of the need recorded first in the reverse
 * walk), so two topological orders with one signature cost the same.
 * Returns the number of entries. */
static int order_signature(search *S, const int *ops, const int *ord, int nops, int *sig)
{
    const ft_problem *p = S->p;
    int n = 0;
    for (int j = 0; j < nops; j++) {
        int t = p->ops[ops[j]].output;
        for (int a = 0; a < nops; a++) {
            const ft_op *op = &p->ops[ord[a]];
            for (int i = 0; i < op->ninputs; i++)
                if (op->inputs[i] == t) {
                    if (sig)
                        sig[n] = ord[a];
                    n++;
                    break;
                }
        }
    }
    return n;
}

/* A seeded random topological order of ops[] (at most
 * FT_SEARCH_OP_ORDER_OPS) into out. */
static void random_topo(search *S, const int *ops, int nops, int *out)
{
    const ft_problem *p = S->p;
    unsigned char placed[FT_SEARCH_OP_ORDER_OPS] = {0};
    for (int n = 0; n < nops; n++) {
        int ready[FT_SEARCH_OP_ORDER_OPS], nr = 0;
        for (int j = 0; j < nops; j++) {
            if (placed[j])
                continue;
            int ok = 1;
            const ft_op *op = &p->ops[ops[j]];
            for (int i = 0; i < op->ninputs && ok; i++)
                for (int a = 0; a < nops && ok; a++)
                    if (!placed[a] && a != j && p->ops[ops[a]].output == op->inputs[i])
                        ok = 0;
            if (ok)
                ready[nr++] = j;
        }
        int pick = ready[ft__rng(S) % (uint64_t)nr];
        placed[pick] = 1;
        out[n] = ops[pick];
    }
}

/* Best latency and configuration of subgraph ops[] under the tensor sets
 * currently in S, memoised.  ops[] is reordered in place into the best
 * execution order found (a topological order). */
double ft__group_cost(search *S, const sctx *x, int *ops, int nops, cfg *c)
{
    ft__sort_topo(S, ops, nops);
    int n = make_key(S, x, ops, nops);
    if (n < 0)
        return INF;
    uint64_t h = hash_ints(S->keybuf, n);
    memo *m = memo_find(S, n, h);
    if (m) {
        *c = m->c;
        memcpy(ops, m->order, sizeof(int) * (size_t)nops);
        return m->lat;
    }
    ft_subgraph g;
    memset(&g, 0, sizeof g);
    g.ops = ops;
    g.nops = nops;
    cfg best = {S->p->native_w, S->p->native_h, ft_native_k(S->p), ORD_RASTER};
    S->sc.kinds_differ = 0;
    double lat = ft__choose_tiling(S, x, &g, &best);
    /* other op orders score every configuration alike unless some walk saw
     * needs of different kinds on one output (the first tile of every
     * configuration scored is walked whole, and has each k-step's largest
     * set of active ops) */
    if (!S->quick && nops <= FT_SEARCH_OP_ORDER_OPS && S->sc.kinds_differ && order_sensitive(S, ops, nops)) {
        enum { MAX_TRIES = 12 };
        int tries = nops <= 6 ? MAX_TRIES : 4, ne = order_signature(S, ops, ops, nops, NULL);
        /* the orders' signatures scored so far (the first is ops[]'s): a
         * drawn order with a signature already scored costs the same */
        int *alt = ft__malloc(sizeof(int) * ((size_t)nops * 2 + (size_t)ne * (MAX_TRIES + 1)));
        if (alt) {
            int *bestord = alt + nops, *seen = bestord + nops, nseen = 1;
            memcpy(bestord, ops, sizeof(int) * (size_t)nops);
            order_signature(S, ops, ops, nops, seen);
            for (int v = 0; v < tries && !ft__out_of_time(S); v++) {
                random_topo(S, ops, nops, alt);
                int *sig = seen + (size_t)nseen * ne, dup = 0;
                order_signature(S, ops, alt, nops, sig);
                for (int q = 0; q < nseen && !dup; q++)
                    dup = memcmp(seen + (size_t)q * ne, sig, sizeof(int) * (size_t)ne) == 0;
                if (dup)
                    continue;
                nseen++;
                cfg c2 = best;
                g.ops = alt;
                double l2 = ft__choose_tiling(S, x, &g, &c2);
                if (l2 < lat - 1e-12 * fmax(1, lat)) {
                    lat = l2;
                    best = c2;
                    memcpy(bestord, alt, sizeof(int) * (size_t)nops);
                }
            }
            memcpy(ops, bestord, sizeof(int) * (size_t)nops);
            ft__free(alt);
        }
    }
    /* a cut-short optimisation is not memoised: it may not be the best;
     * nor is the cheap start's choice among a few candidates */
    if (!S->timed_out && !S->quick) {
        int *keyops = ft__malloc(sizeof(int) * (size_t)nops);
        if (keyops) {
            memcpy(keyops, ops, sizeof(int) * (size_t)nops);
            ft__sort_topo(S, keyops, nops);
            n = make_key(S, x, keyops, nops);
            memo_add(S, n, h, &best, lat, ops, nops);
            ft__free(keyops);
        }
    }
    *c = best;
    return lat;
}

