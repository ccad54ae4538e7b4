/* score.c - the scheduler's exact scorer: a subgraph's latency at one configuration, through a memo of tile costs and k-step fast-forward, equal to ft_evaluate's walk. */
#include "search/search.h"
#include "cost/walk.h"

#include <stdlib.h>
#include <string.h>

/* Tile visiting order of kind `kind` over an ntx x nty grid into out. */
void ft__make_order(int kind, int64_t ntx, int64_t nty, int64_t *out)
{
    int64_t n = 0;
    if (kind == ORD_RASTER || kind == ORD_SNAKE_ROW) {
        for (int64_t r = 0; r < nty; r++)
            for (int64_t i = 0; i < ntx; i++) {
                int64_t c = (kind == ORD_SNAKE_ROW && (r & 1)) ? ntx - 1 - i : i;
                out[n++] = r * ntx + c;
            }
    } else {
        for (int64_t c = 0; c < ntx; c++)
            for (int64_t i = 0; i < nty; i++) {
                int64_t r = (kind == ORD_SNAKE_COL && (c & 1)) ? nty - 1 - i : i;
                out[n++] = r * ntx + c;
            }
    }
}

/* ------------------------------------------------------------ the walker's fast path */

double ft__walk_tile(ft_walk *w, int64_t prev, int64_t tile, int64_t *ws_max, int allow_ff)
{
    ft_step stp;
    if (prev >= 0)
        ft__walk_derive(w, prev, w->nk - 1, &stp);
    else
        w->have_prev = 0;
    double lat = 0, last = 0;
    int64_t ws = 0;
    int same = 0; /* consecutive earlier k-steps with this k-step's pattern */
    for (int64_t ks = 0; ks < w->nk; ks++) {
        /* An interior k-step whose k-loop slice lengths (and finishing
         * ops) equal those of the two before it costs what the previous
         * one did: its k-slice regions are new either way, and every other
         * region, the active ops and the writes are the same. */
        int eq = ks > 0;
        for (int j = 0; j < w->nops && eq; j++) {
            if (w->role[j] != FT_ROLE_KLOOP)
                continue;
            int64_t K = w->p->ops[w->g->ops[j]].k, kk = w->g->k;
            int64_t a = K - ks * kk, b = K - (ks - 1) * kk;
            a = a < 0 ? 0 : a > kk ? kk : a;
            b = b < 0 ? 0 : b > kk ? kk : b;
            /* the op's last active k-step writes its tile: never the same */
            int fa = a > 0 && ks * kk + a >= K, fb = b > 0 && (ks - 1) * kk + b >= K;
            eq = a == b && fa == fb;
        }
        same = eq ? same + 1 : 0;
        /* mode 3: boundary tensors mix sources, so a k slice may coincide
         * with the tile's own rows or columns: derive every k-step whose
         * neighbourhood (two before, one after) has a k slice overlapping
         * the tile's row or column range */
        if (allow_ff == 3 && same >= 2) {
            int64_t kk = w->g->k, r0 = (tile / w->ntx) * w->g->h, c0 = (tile % w->ntx) * w->g->w;
            for (int64_t t = ks - 2; t <= ks + 1 && same >= 2; t++) {
                int64_t a0 = t * kk, a1 = a0 + kk;
                if ((a0 < r0 + w->g->h && r0 < a1) || (a0 < c0 + w->g->w && c0 < a1))
                    same = 0;
            }
        }
        /* the step before the last is always derived: the last step's
         * reuse compares with its real slices */
        if (same >= 2 && ks < w->nk - 2 && (allow_ff >= 2 || (allow_ff && !w->irregular))) {
            /* every k-step up to the next one that must be derived repeats
             * this one: jump there (an op's finishing step, the step before
             * the last, or a k slice near the tile's rows or columns) */
            int64_t next = w->nk - 2, kk = w->g->k;
            for (int j = 0; j < w->nops; j++) {
                if (w->role[j] != FT_ROLE_KLOOP)
                    continue;
                int64_t f = ft__ceil_div(w->p->ops[w->g->ops[j]].k, kk) - 1;
                if (f > ks && f < next)
                    next = f;
            }
            if (allow_ff == 3) {
                int64_t lo[2] = {(tile / w->ntx) * w->g->h, (tile % w->ntx) * w->g->w};
                for (int d = 0; d < 2; d++) {
                    int64_t a = lo[d] / kk - 1; /* first k-step whose window overlaps */
                    if (a > ks && a < next)
                        next = a;
                }
            }
            lat += last * (double)(next - ks);
            ks = next - 1;
            continue;
        }
        ft__walk_derive(w, tile, ks, &stp);
        last = stp.latency;
        lat += stp.latency;
        if (stp.working_set > ws)
            ws = stp.working_set;
    }
    *ws_max = ws;
    return lat;
}

void ft__walk_edges(ft_walk *w, int64_t first, int64_t last, int64_t *loaded0, int64_t *written_last, double *compute_last)
{
    ft_step stp;
    w->have_prev = 0;
    ft__walk_derive(w, first, 0, &stp);
    *loaded0 = stp.loaded_elems;
    /* the last step's writes and compute do not depend on reuse */
    ft__walk_derive(w, last, w->nk - 1, &stp);
    *written_last = stp.written_elems;
    *compute_last = stp.compute;
    w->have_prev = 0;
}

int ft__walk_irregular(const ft_walk *w)
{
    return w->irregular;
}

void ft__walk_mixed(ft_walk *w, int *rows, int *cols, int *interior)
{
    ft_step stp;
    /* k-step 0 at k = 1: every k-loop MatMul and upstream op, no epilogue
     * (unless there is a single k-step, and then there are never interior
     * steps): the derivations of any interior k-step at any k */
    w->have_prev = 0;
    ft__walk_derive(w, 0, 0, &stp);
    *interior = w->nk > 1 && (w->mixed[0] || w->mixed[1]) ? (w->mixed_internal ? 2 : 1) : 0;
    /* the last k-step adds the epilogue */
    ft__walk_derive(w, 0, w->nk - 1, &stp);
    *rows = w->mixed[0];
    *cols = w->mixed[1];
}

/* ------------------------------------------------------------ scoring one subgraph */

/* Class of tile row (or column) i of size t among tensor lengths lens[]:
 * rows that every tensor either fully covers or misses share a class (the
 * number of lengths covering them); a row cut by some tensor's edge is a
 * class of its own. */
static int64_t dim_class(int64_t i, int64_t t, const int64_t *lens, int n)
{
    int64_t lo = i * t, hi = lo + t, cover = 0;
    for (int j = 0; j < n; j++) {
        if (lens[j] > lo && lens[j] < hi)
            return ((int64_t)1 << 40) + i;
        if (lens[j] >= hi)
            cover++;
    }
    return cover;
}

/* A tile memo entry: the cost of a tile given the classes of its row and
 * column and of the tile before it. */
struct tmemo {
    int64_t key[7];
    double lat;
    int64_t ws;
    uint64_t gen;  /* valid when equal to the scorer's generation */
};

tmemo *ft__tmemo_new(void)
{
    return ft__calloc(FT_SEARCH_TILE_MEMO, sizeof(tmemo));
}

double ft__score_tiles(search *S, const mixinfo *mx, ft_walk *w, const ft_subgraph *g, const int64_t *ord, double budget)
{
    const ft_problem *p = S->p;
    tmemo *tm = S->tm;
    uint64_t gen = ++S->tmgen;
    int64_t ntx, nty, nk, nsteps;
    ft_walk_grid(w, &ntx, &nty, &nk, &nsteps);
    /* every tensor length of the subgraph: rows and columns are classed by
     * the lengths that cut them */
    int nrefs = 0;
    for (int j = 0; j < g->nops; j++)
        nrefs += 1 + p->ops[g->ops[j]].ninputs;
    int64_t *rc = ft__malloc(sizeof(int64_t) * (size_t)(nty + ntx + 2 * nrefs));
    if (!rc)
        return -1;
    int64_t *cc = rc + nty, *hs = cc + ntx, *ws = hs + nrefs;
    int nh = 0, nw = 0;
    for (int j = 0; j < g->nops; j++) {
        const ft_op *op = &p->ops[g->ops[j]];
        for (int i = -1; i < op->ninputs; i++) {
            const ft_tensor *T = &p->tensors[i < 0 ? op->output : op->inputs[i]];
            hs[nh++] = T->height;
            ws[nw++] = T->width;
        }
    }
    for (int64_t r = 0; r < nty; r++)
        rc[r] = mx->rows ? ((int64_t)1 << 40) + r : dim_class(r, g->h, hs, nh);
    for (int64_t c = 0; c < ntx; c++)
        cc[c] = mx->cols ? ((int64_t)1 << 40) + c : dim_class(c, g->w, ws, nw);
    int mixed = mx->rows || mx->cols;
    int nused = 0;
    double sum = 0;
    int64_t prev = -1, ntiles = ntx * nty;
    /* several units: tiles combine over waves, each tile at its wave's
     * share of the bandwidths (ft_timing); the wave's size is in the key */
    int waves = ft__units(p) > 1;
    ft__waves wv;
    ft__waves_init(&wv, p);
    for (int64_t pos = 0; pos < ntiles; pos++) {
        int64_t tile = ord ? ord[pos] : pos, r = tile / ntx, c = tile % ntx;
        int64_t key[7];
        key[6] = ft__wave_size(p, ntiles, pos);
        if (prev < 0) {
            key[0] = rc[r], key[1] = cc[c], key[2] = key[3] = -1, key[4] = key[5] = 0;
        } else {
            int64_t pr = prev / ntx, pc = prev % ntx;
            key[0] = rc[r], key[1] = cc[c], key[2] = rc[pr], key[3] = cc[pc], key[4] = pr == r, key[5] = pc == c;
        }
        uint64_t h = 1469598103934665603ULL;
        for (int i = 0; i < 7; i++)
            h = (h ^ (uint64_t)key[i]) * 1099511628211ULL;
        size_t slot = (size_t)(h ^ (h >> 29)) & (FT_SEARCH_TILE_MEMO - 1);
        while (tm[slot].gen == gen && memcmp(tm[slot].key, key, sizeof key) != 0)
            slot = (slot + 1) & (FT_SEARCH_TILE_MEMO - 1);
        if (tm[slot].gen != gen) {
            if (nused >= FT_SEARCH_TILE_MEMO / 2) {
                ft__free(rc);
                return -1;
            }
            memcpy(tm[slot].key, key, sizeof key);
            ft__walk_at(w, pos);
            tm[slot].lat = ft__walk_tile(w, prev, tile, &tm[slot].ws, !mixed ? 1 : mx->interior == 0 ? 2 : mx->interior == 1 ? 3 : 0);
            tm[slot].gen = gen;
            nused++;
        }
        if ((double)tm[slot].ws > p->capacity) {
            ft__free(rc);
            return ft__walk_irregular(w) && !mixed ? -1 : INF;
        }
        if (waves) {
            ft__waves_tile(&wv, pos, tm[slot].lat);
            sum = ft__waves_total(&wv);
        } else {
            sum += tm[slot].lat;
        }
        if (sum > budget)
            break;
        if ((pos & 0x1ff) == 0x1ff && ft__out_of_time(S)) {
            ft__free(rc);
            return INF;
        }
        prev = tile;
    }
    ft__free(rc);
    return ft__walk_irregular(w) && !mixed ? -1 : sum;
}

/* (which axes mix range sources: ft__walk_mixed at k = 1; once per
 * subgraph and context, before scoring its configurations) */
void ft__probe_mixed(search *S, const sctx *x, ft_subgraph *g, mixinfo *mx)
{
    const ft_problem *p = S->p;
    ft_walk *pw;
    ft_status pst;
    mx->rows = mx->cols = 0;
    mx->interior = 2;
    g->w = p->native_w;
    g->h = p->native_h;
    g->k = 1;
    g->order = NULL;
    g->norder = 0;
    if (ft__walk_new(p, g, S->model, x->written, x->retained, x->resident, &pw, &pst) == FT_OK) {
        ft__walk_mixed(pw, &mx->rows, &mx->cols, &mx->interior);
        ft_walk_free(pw);
    }
}

double ft__score(search *S, const sctx *x, const mixinfo *mx, ft_subgraph *g, const cfg *c, double budget)
{
    const ft_problem *p = S->p;
    /* past the deadline nothing new is scored: what is not memoised is
     * treated as infeasible (the one-op schedule was offered first) */
    if (ft__out_of_time(S))
        return INF;
    int64_t ntx, nty, nk;
    g->w = c->w;
    g->h = c->h;
    g->k = c->k;
    g->order = NULL;
    g->norder = 0;
    if (ft__sg_grid(p, g, NULL, &ntx, &nty, &nk))
        return INF;
    int64_t *ord = NULL;
    if (c->order != ORD_RASTER) {
        ord = ft__malloc(sizeof(int64_t) * (size_t)(ntx * nty));
        if (!ord)
            return INF;
        ft__make_order(c->order, ntx, nty, ord);
    }
    ft_walk *w;
    ft_status st;
    double lat = INF;
    /* besides its steps a subgraph pays the launch overhead and, with
     * double buffering, the pipeline's fill and drain (ft__sg_extra, as
     * ft_evaluate); at least ft__sg_fixed */
    const double fixed = ft__sg_fixed(p);
    budget -= fixed;
    double floor = 0; /* a cache the subgraph does not fit (ft_timing) */
    if (ft__walk_new(p, g, S->model, x->written, x->retained, x->resident, &w, &st) == FT_OK) {
        floor = w->floor;
        lat = ft__score_tiles(S, mx, w, g, ord, budget);
        S->kinds_differ |= w->kinds_differ;
        ft_walk_free(w);
        /* the memo cannot be used: every step, in order, unless there are
         * too many to walk */
        if (lat < 0 && ntx * nty * nk > FT_SEARCH_STEP_CAP)
            lat = INF;
        if (lat < 0 && ft__walk_new(p, g, S->model, x->written, x->retained, x->resident, &w, &st) == FT_OK) {
            g->order = ord;
            g->norder = ord ? ntx * nty : 0;
            ft_step stp;
            double sum = 0, tile = 0;
            int ok = 1, waves = ft__units(p) > 1;
            ft__waves wv;
            ft__waves_init(&wv, p);
            while (ft_walk_next(w, &stp)) {
                if ((double)stp.working_set > p->capacity) {
                    ok = 0;
                    break;
                }
                if (!waves) {
                    sum += stp.latency;
                } else {
                    tile += stp.latency;
                    ft__waves_tile(&wv, stp.index / nk, tile);
                    sum = ft__waves_total(&wv);
                    if (stp.kstep == nk - 1)
                        tile = 0;
                }
                /* (a walk that stops inside the first tile has not seen
                 * every need: assume the op order matters) */
                if (sum > budget) {
                    if (stp.index < nk - 1)
                        S->kinds_differ = 1;
                    break;
                }
                if ((stp.index & 0x3fff) == 0x3fff && ft__out_of_time(S)) {
                    ok = 0;
                    break;
                }
            }
            S->kinds_differ |= w->kinds_differ;
            ft_walk_free(w);
            lat = ok ? sum : INF;
        }
    }
    if (lat >= 0 && lat < floor)
        lat = floor;
    if (lat >= 0 && lat < INF && (fixed > 0 || p->timing.overlap == FT_OVERLAP_PIPELINE)) {
        double total = lat + fixed;
        if (p->timing.overlap == FT_OVERLAP_PIPELINE &&
            ft__walk_new(p, g, S->model, x->written, x->retained, x->resident, &w, &st) == FT_OK) {
            int64_t n = ntx * nty, loaded0, written_last;
            double compute_last;
            ft__rates r0; /* the first wave's bandwidths, as ft_evaluate */
            ft__rates_share(&w->rates, ft__wave_size(p, n, 0), &r0);
            ft__walk_edges(w, ord ? ord[0] : 0, ord ? ord[n - 1] : n - 1, &loaded0, &written_last, &compute_last);
            total = n * nk == 1 ? ft__sg_single(p, &r0, loaded0, written_last, compute_last) /* nothing overlaps */
                                : lat + ft__sg_extra(p, &r0, loaded0, written_last, compute_last);
            ft_walk_free(w);
        }
        lat = total;
    }
    S->evals++;
    ft__free(ord);
    g->order = NULL;
    g->norder = 0;
    return lat;
}

