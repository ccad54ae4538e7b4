/* supertile_footprint.c - super tiling's footprint model: a fused tile loop's working set as its real nesting holds it (SPEC 4's walk), the tile refinement that makes it fit, and the exact check over every step. */
#include "strategy/supertile.h"
#include "cost/walk.h"

#include <stdlib.h>
#include <string.h>

/* A footprint that no capacity holds: the loop's steps cannot be counted
 * (ft__walk_new's step-count overflow). */
#define FOOTPRINT_UNWALKABLE (INT64_MAX - 1)

int ft__st_scratch_init(ft_st_scratch *sc, const ft_problem *p)
{
    memset(sc, 0, sizeof *sc);
    sc->member = ft__calloc((size_t)p->nops + 1, sizeof(int));
    if (!sc->member || ft__sctx_alloc(&sc->x, p->ntensors)) {
        ft__st_scratch_free(sc);
        return -1;
    }
    return 0;
}

void ft__st_scratch_free(ft_st_scratch *sc)
{
    ft__free(sc->member);
    ft__sctx_free(&sc->x);
    memset(sc, 0, sizeof *sc);
}

/* Mark the ops of ops[] as members and flag as written each of their
 * outputs that leaves them (a graph output, or consumed by a non-member):
 * the partition's context of a loop.  clear_context undoes it. */
static void set_context(const ft_problem *p, ft_st_scratch *sc, const int *ops, int n)
{
    for (int j = 0; j < n; j++)
        sc->member[ops[j]] = 1;
    for (int j = 0; j < n; j++)
        sc->x.written[p->ops[ops[j]].output] = (unsigned char)ft__output_leaves(p, ops[j], sc->member, 1);
}

/* Undo set_context for ops[]. */
static void clear_context(const ft_problem *p, ft_st_scratch *sc, const int *ops, int n)
{
    for (int j = 0; j < n; j++) {
        sc->member[ops[j]] = 0;
        sc->x.written[p->ops[ops[j]].output] = 0;
    }
}

/* The subgraph of ops[] at tile t (ops borrowed, no traversal order). */
static ft_subgraph loop_subgraph(const int *ops, int n, const ft_supertile_tile *t)
{
    ft_subgraph g;
    memset(&g, 0, sizeof g);
    g.ops = (int *)ops;
    g.nops = n;
    g.w = t->w;
    g.h = t->h;
    g.k = t->k > 0 ? t->k : 1;
    return g;
}

int64_t ft__st_footprint(const ft_problem *p, ft_st_scratch *sc, const int *ops, int n, const ft_supertile_tile *t)
{
    ft_subgraph g = loop_subgraph(ops, n, t);
    ft_walk *w;
    ft_status st;
    int64_t fp = -1;
    set_context(p, sc, ops, n);
    int rc = ft__walk_new(p, &g, FT_COMPUTE_NATIVE, sc->x.written, sc->x.retained, sc->x.resident, &w, &st);
    if (rc == FT_EINPUT)
        fp = FOOTPRINT_UNWALKABLE;
    if (rc == FT_OK) {
        fp = 0;
        for (int j = 0; j < n && fp == 0; j++)
            if (w->role[j] == FT_ROLE_UPSTREAM && sc->x.written[p->ops[ops[j]].output])
                fp = FT_SUPERTILE_ESCAPES;
        if (fp == 0) {
            /* the first k-step has every k-loop slice at full depth, the
             * last adds the epilogue's operands; a middle one holds no
             * more than the first */
            ft_step s;
            ft__walk_derive(w, 0, 0, &s);
            fp = s.working_set;
            if (w->nk > 1) {
                ft__walk_derive(w, 0, w->nk - 1, &s);
                fp = s.working_set > fp ? s.working_set : fp;
            }
        }
        ft_walk_free(w);
    }
    clear_context(p, sc, ops, n);
    return fp;
}

int ft__supertile_footprint(const ft_problem *p, const int *ops, int n, int64_t w, int64_t h, int64_t k, int64_t *out, ft_status *st)
{
    ft_st_scratch sc;
    if (ft__st_scratch_init(&sc, p))
        return ft__fail(st, FT_ENOMEM, 0, "out of memory");
    ft_supertile_tile t = {w, h, k, 0};
    int64_t fp = ft__st_footprint(p, &sc, ops, n, &t);
    ft__st_scratch_free(&sc);
    if (fp < 0)
        return ft__fail(st, FT_ENOMEM, 0, "out of memory");
    *out = fp;
    return FT_OK;
}

void ft__st_whole(const ft_problem *p, const int *ops, int n, ft_supertile_tile *t)
{
    ft_supertile_tile one = {1, 1, 1, 0};
    ft_subgraph g = loop_subgraph(ops, n, &one);
    int64_t ntx, nty, nk;
    ft_role *roles = ft__malloc(sizeof(ft_role) * ((size_t)n + 1));
    int grid_rc = ft__sg_grid(p, &g, roles, &ntx, &nty, &nk);
    /* at k = 1 the grid's k-steps are the deepest k-loop K, and 1 also
     * when there is none: the roles tell (out of memory: assume one; the
     * failure is counted, ft__alloc_failures, and ft_search reports it) */
    int kloop = !roles || grid_rc;
    for (int j = 0; roles && !grid_rc && j < n && !kloop; j++)
        kloop = roles[j] == FT_ROLE_KLOOP;
    ft__free(roles);
    *t = (ft_supertile_tile){ntx, nty, kloop ? nk : 0, 0};
}

void ft__st_clip(const ft_problem *p, ft_supertile_tile *t)
{
    int64_t nk = ft_native_k(p);
    if (t->k <= 0)
        t->k = nk;
    if (p->allow_larger)
        return;
    t->w = t->w < p->native_w ? t->w : p->native_w;
    t->h = t->h < p->native_h ? t->h : p->native_h;
    t->k = t->k < nk ? t->k : nk;
}

/* Half of a tile length, rounded up (1 stays 1). */
static int64_t half(int64_t v) { return (v + 1) / 2; }

int ft__st_halve(ft_supertile_tile *t, int64_t K)
{
    int64_t kk = t->k < K ? t->k : K; /* the k that matters: 0 without a k-loop */
    if (kk > FT_SUPERTILE_K_FLOOR) {
        t->k = half(kk);
        return 1;
    }
    if (t->w > 1 || t->h > 1) {
        if (t->w >= t->h)
            t->w = half(t->w);
        else
            t->h = half(t->h);
        return 1;
    }
    if (kk > 1) {
        t->k = half(kk);
        return 1;
    }
    return 0;
}

int ft__st_refine(const ft_problem *p, ft_st_scratch *sc, const int *ops, int n, ft_supertile_tile *t)
{
    ft_supertile_tile whole;
    ft__st_whole(p, ops, n, &whole);
    for (;;) {
        int64_t fp = ft__st_footprint(p, sc, ops, n, t);
        if (fp < 0)
            return -1;
        if (fp != FT_SUPERTILE_ESCAPES && (double)fp <= p->capacity)
            return 1;
        if (fp == FT_SUPERTILE_ESCAPES || !ft__st_halve(t, whole.k))
            return 0;
    }
}

int ft__st_fits_exactly(ft__scorer *scorer, ft_st_scratch *sc, const int *ops, int n, const ft_supertile_tile *t)
{
    ft_subgraph g = loop_subgraph(ops, n, t);
    mixinfo mx;
    cfg c = {g.w, g.h, g.k, ORD_RASTER};
    set_context(scorer->p, sc, ops, n);
    ft__probe_mixed(scorer, &sc->x, &g, &mx);
    double lat = ft__score(scorer, &sc->x, &mx, &g, &c, INF);
    clear_context(scorer->p, sc, ops, n);
    return lat < INF;
}
