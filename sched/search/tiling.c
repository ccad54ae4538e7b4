/* tiling.c - granularity and traversal choice for one subgraph in its context: candidate tile sizes ordered by a lower bound, each scored exactly. */
#include "search/search.h"

#include <assert.h>

#include <stdlib.h>
#include <string.h>

/* Sum over the tiles of a grid dimension of their spatial units
 * (ft__dim_units of the clipped length), for a tensor dimension of length
 * len cut in tiles of t. */
static double padded_units(int64_t len, int64_t t, int64_t n)
{
    int64_t full = len / t, rem = len % t;
    return (double)full * ft__dim_units(t, n, FT_DIM_SPATIAL) + (rem ? ft__dim_units(rem, n, FT_DIM_SPATIAL) : 0.0);
}

/* Add v to the n distinct sizes in out (room for FT_SEARCH_MAX_CANDIDATES);
 * returns the new count. */
static int add_size(int64_t *out, int n, int64_t v)
{
    for (int i = 0; i < n; i++)
        if (out[i] == v)
            return n;
    if (n < FT_SEARCH_MAX_CANDIDATES)
        out[n++] = v;
    return n;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Candidate tile sizes for one dimension, sorted and distinct: the powers
 * of two up to lim and lim itself, then the lengths in lens[] up to lim and
 * their divisors; with FINE_ALL and lim at most FT_SEARCH_ALL_SIZES, every
 * size up to lim first; with FINE_COUNTS, then for each tile count m of each
 * length L the smallest size giving it, ceil(L / m) (a tile that fills the
 * capacity without adding a tile), while there is room
 * (FT_SEARCH_MAX_CANDIDATES: what does not fit is not tried).  quick (the
 * cheap start): the powers of two, lim and the lengths only, no divisors
 * (finding them costs a loop up to each length, long on large tensors). */
static int candidates(int64_t lim, const int64_t *lens, int nlens, int64_t *out, int fine, int quick)
{
    int n = 0;
    if (fine == FINE_ALL && lim <= FT_SEARCH_ALL_SIZES)
        for (int64_t v = 1; v <= lim; v++)
            n = add_size(out, n, v);
    for (int64_t v = 1; v <= lim; v *= 2)
        n = add_size(out, n, v);
    n = add_size(out, n, lim);
    for (int i = 0; i < nlens; i++)
        if (lens[i] <= lim)
            n = add_size(out, n, lens[i]);
    for (int i = 0; i < nlens && !quick; i++)
        for (int64_t d = 1; d <= lim && d <= lens[i]; d++)
            if (lens[i] % d == 0)
                n = add_size(out, n, d);
    if (fine == FINE_COUNTS)
        for (int i = 0; i < nlens; i++)
            for (int64_t m = ft__ceil_div(lens[i], lim); m <= lens[i]; m++) {
                int64_t v = ft__ceil_div(lens[i], m);
                if (v < FINE_COUNTS_MIN)
                    break;
                n = add_size(out, n, v);
            }
    qsort(out, (size_t)n, sizeof *out, cmp_i64);
    return n;
}

typedef struct cand {
    cfg c;
    double lb;
} cand;

static int cand_cmp(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->lb != y->lb)
        return x->lb < y->lb ? -1 : 1;
    /* larger tiles first among equals: fewer steps */
    int64_t ax = x->c.w * x->c.h * x->c.k, ay = y->c.w * y->c.h * y->c.k;
    if (ax != ay)
        return ax > ay ? -1 : 1;
    if (x->c.w != y->c.w)
        return x->c.w > y->c.w ? -1 : 1;
    if (x->c.h != y->c.h)
        return x->c.h > y->c.h ? -1 : 1;
    return x->c.k > y->c.k ? -1 : x->c.k < y->c.k;
}

/* Sift h[i] down the min-heap h[0..n) ordered by cand_cmp. */
static void heap_down(cand *h, int n, int i)
{
    for (;;) {
        int l = 2 * i + 1, m = i;
        if (l < n && cand_cmp(&h[l], &h[m]) < 0)
            m = l;
        if (l + 1 < n && cand_cmp(&h[l + 1], &h[m]) < 0)
            m = l + 1;
        if (m == i)
            return;
        cand t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

/* The lengths a subgraph's tiling is cut against (outputs of its k-loop
 * and epilogue ops, K of its k-loop MatMuls), its tile grid's extent, and
 * the bounds every configuration shares: boundary inputs are loaded at
 * least once unless resident, written outputs are written once, and
 * resident and retained tensors occupy the fast memory throughout. */
typedef struct shape {
    int64_t *widths, *heights, *ks;
    int nw, nh, nks;
    int64_t Wg, Hg;
    double reads_lb, writes_lb, fixed_ws;
    int matmul; /* the subgraph has a MatMul (ft__sg_matmul) */
} shape;

/* Fill *sh for g (roles[] its ops' roles); -1 when an upstream output
 * escapes (written or retained: never valid), -2 on OOM. */
static int subgraph_shape(search *S, const sctx *x, const ft_subgraph *g, const ft_role *roles, shape *sh)
{
    const ft_problem *p = S->p;
    int nops = g->nops;
    memset(sh, 0, sizeof *sh);
    sh->widths = ft__malloc(sizeof(int64_t) * (size_t)(3 * nops + 3));
    if (!sh->widths)
        return -2;
    sh->heights = sh->widths + nops + 1;
    sh->ks = sh->heights + nops + 1;
    sh->matmul = ft__sg_matmul(p, g);
    for (int j = 0; j < nops; j++) {
        const ft_op *op = &p->ops[g->ops[j]];
        const ft_tensor *T = &p->tensors[op->output];
        if (roles[j] == FT_ROLE_UPSTREAM && (x->written[op->output] || x->retained[op->output]))
            return -1;
        if (roles[j] != FT_ROLE_UPSTREAM) {
            sh->widths[sh->nw++] = T->width;
            sh->heights[sh->nh++] = T->height;
            sh->Wg = T->width > sh->Wg ? T->width : sh->Wg;
            sh->Hg = T->height > sh->Hg ? T->height : sh->Hg;
        }
        if (op->type == FT_OP_MATMUL && roles[j] == FT_ROLE_KLOOP)
            sh->ks[sh->nks++] = op->k;
        if (x->written[op->output])
            sh->writes_lb += (double)(T->width * T->height);
        if (x->retained[op->output])
            sh->fixed_ws += (double)(T->width * T->height);
    }
    /* uses of each tensor inside the subgraph; produced inside */
    unsigned char *uses = S->uses, *produced = S->produced;
    for (int j = 0; j < nops; j++) {
        const ft_op *op = &p->ops[g->ops[j]];
        produced[op->output] = 1;
        for (int i = 0; i < op->ninputs; i++)
            if (uses[op->inputs[i]] < 255)
                uses[op->inputs[i]]++;
    }
    /* each boundary input once */
    for (int j = 0; j < nops; j++) {
        const ft_op *op = &p->ops[g->ops[j]];
        for (int i = 0; i < op->ninputs; i++) {
            int t = op->inputs[i];
            if (produced[t] == 1 || produced[t] == 2)
                continue;
            produced[t] = 2; /* counted */
            if (x->resident[t])
                sh->fixed_ws += (double)ft_tensor_size(p, t);
            else
                sh->reads_lb += (double)ft_tensor_size(p, t);
        }
    }
    return 0;
}

/* Clear the scratch flags subgraph_shape set. */
static void shape_done(search *S, const ft_subgraph *g, shape *sh)
{
    const ft_problem *p = S->p;
    for (int j = 0; j < g->nops; j++) {
        const ft_op *op = &p->ops[g->ops[j]];
        S->produced[op->output] = 0;
        S->uses[op->output] = 0;
        for (int i = 0; i < op->ninputs; i++)
            S->produced[op->inputs[i]] = S->uses[op->inputs[i]] = 0;
    }
    ft__free(sh->widths);
}

/* Lower bound of g's latency at tile w x h x k: the compute of its k-loop
 * and epilogue ops, which the tiling fixes, and of each upstream op's
 * whole output once, unpadded, against the traffic every
 * configuration must move (with several k-steps, a k-loop MatMul's operand
 * used by nothing else streams in once per tile column or row); INF past
 * FT_SCORE_STEP_CAP tiles.  An epilogue Layout op pays for its output's
 * tiles as a Pointwise op does, and its input counts in reads_lb like any
 * boundary input: the regions SPEC 4 maps from regions covering its output
 * cover its input. */
static double config_bound(search *S, const sctx *x, const ft_subgraph *g, const ft_role *roles, const shape *sh, int64_t w, int64_t h,
                           int64_t k, double *reads, double *writes)
{
    const ft_problem *p = S->p;
    double comp = 0;
    int64_t nk = 1;
    for (int q = 0; q < sh->nks; q++)
        if (ft__ceil_div(sh->ks[q], k) > nk)
            nk = ft__ceil_div(sh->ks[q], k);
    double extra = 0;
    for (int j = 0; j < g->nops; j++) {
        const ft_op *op = &p->ops[g->ops[j]];
        const ft_tensor *T = &p->tensors[op->output];
        if (roles[j] == FT_ROLE_UPSTREAM || !ft__op_padded(p, op)) {
            /* the regions its consumers need cover its whole output over
             * the subgraph's steps: at least once, unpadded (as an op that
             * pays its exact elements pays it, ft__op_padded) */
            comp += ft__op_compute(p, S->sc.model, op, ft__dim_units(T->height, p->native_h, FT_DIM_REDUCTION),
                                   ft__dim_units(T->width, p->native_w, FT_DIM_REDUCTION), (double)op->k);
            continue;
        }
        comp += ft__op_compute(p, S->sc.model, op, padded_units(T->height, h, p->native_h), padded_units(T->width, w, p->native_w), (double)op->k);
        if (roles[j] != FT_ROLE_KLOOP || nk <= 1)
            continue;
        for (int side = 0; side < 2; side++) {
            int t = op->inputs[side];
            if (x->resident[t] || S->uses[t] != 1 || S->produced[t] == 1)
                continue;
            double times = side == 0 ? (double)ft__ceil_div(T->width, w) : (double)ft__ceil_div(T->height, h);
            extra += (double)ft_tensor_size(p, t) * (times - 1);
        }
    }
    double tiles = (double)ft__ceil_div(sh->Wg, w) * (double)ft__ceil_div(sh->Hg, h);
    if (tiles > (double)FT_SCORE_STEP_CAP)
        return INF;
    /* several units share the compute; a wave's slowest tile moves at
     * least its tiles' traffic at the whole bandwidth (ft_timing); the
     * waves' overheads add to the compute (ft__waves_overheads: on a
     * target with tile overheads most of a small subgraph's time, which
     * the compute alone bounds far below) */
    double mem;
    ft__rates r;
    ft__fastest_rates(p, &r);
    ft__step_time_at(p, &r, 0, (int64_t)(sh->reads_lb + extra), (int64_t)sh->writes_lb, &mem);
    *reads = (double)(int64_t)(sh->reads_lb + extra);
    *writes = (double)(int64_t)sh->writes_lb;
    return ft__bound_combine_steps(p, comp / (double)ft__units(p) + ft__waves_overheads(p, (int64_t)tiles, nk, sh->matmul), mem,
                                   (int64_t)tiles * nk);
}

double ft__choose_tiling(search *S, const sctx *x, ft_subgraph *g, cfg *best_c)
{
    const ft_problem *p = S->p;
    int nops = g->nops;
    /* no time to order the candidates (never while S->first) */
    if (ft__out_of_time(S))
        return INF;
    ft_role *roles = ft__malloc(sizeof(ft_role) * (size_t)(nops + 1));
    if (!roles)
        return INF;
    int64_t ntx0, nty0, nk0;
    g->w = g->h = g->k = 1;
    if (ft__sg_grid(p, g, roles, &ntx0, &nty0, &nk0)) {
        ft__free(roles);
        return INF;
    }
    shape sh;
    int rc = subgraph_shape(S, x, g, roles, &sh);
    if (rc < 0 || sh.fixed_ws > p->capacity) {
        shape_done(S, g, &sh);
        ft__free(roles);
        return INF;
    }
    int64_t wc[FT_SEARCH_MAX_CANDIDATES], hc[FT_SEARCH_MAX_CANDIDATES], kc[FT_SEARCH_MAX_CANDIDATES];
    /* granularities up to native, or (a target that allows larger ones)
     * up to the largest length */
    int64_t limw = p->native_w, limh = p->native_h, limk = ft_native_k(p);
    if (p->allow_larger) {
        for (int q = 0; q < sh.nw; q++)
            limw = sh.widths[q] > limw ? sh.widths[q] : limw;
        for (int q = 0; q < sh.nh; q++)
            limh = sh.heights[q] > limh ? sh.heights[q] : limh;
        for (int q = 0; q < sh.nks; q++)
            limk = sh.ks[q] > limk ? sh.ks[q] : limk;
    }
    int nwc = candidates(limw, sh.widths, sh.nw, wc, S->fine, S->quick);
    int nhc = candidates(limh, sh.heights, sh.nh, hc, S->fine, S->quick);
    int nkc = sh.nks ? candidates(limk, sh.ks, sh.nks, kc, S->fine, S->quick) : 1;
    if (!sh.nks)
        kc[0] = 1;
    cand *cs = ft__malloc(sizeof(cand) * (size_t)(nwc * nhc * nkc));
    int nc = 0;
    /* what the objective counts whatever the configuration (latency:
     * nothing) */
    ft__energy_counts base = {0};
    if (cs && S->sc.ob.kind != FT_OBJECTIVE_LATENCY && ft__ctx_counts(p, x, g, &base)) {
        ft__free(cs);
        cs = NULL;
    }
    /* up to FT_SEARCH_MAX_CANDIDATES^3 bounds, each over the ops: the
     * clock is read every 4096 (a large group on a loaded machine took
     * seconds here) */
    int late = 0;
    for (int a = 0; cs && a < nwc && !late; a++)
        for (int b = 0; b < nhc && !late; b++)
            for (int d = 0; d < nkc; d++) {
                if (((a * nhc + b) * nkc + d) % 4096 == 4095 && (late = ft__out_of_time(S)))
                    break;
                double rd, wr, lb = config_bound(S, x, g, roles, &sh, wc[a], hc[b], kc[d], &rd, &wr);
                /* ordered and cut by a bound of the objective (latency:
                 * lb itself) */
                if (lb < INF)
                    cs[nc++] = (cand){{wc[a], hc[b], kc[d], ORD_RASTER}, ft__sg_objective_bound(&S->sc, &base, lb, rd, wr)};
            }
    shape_done(S, g, &sh);
    ft__free(roles);
    if (!cs || late) {
        ft__free(cs);
        return INF;
    }
    /* a heap, not a sort: the candidates come out in the same order
     * (cand_cmp is total), and building it takes linear time, where
     * sorting up to FT_SEARCH_MAX_CANDIDATES^3 of them ran a second
     * without a look at the clock (llama_block on tpu-v5e-chip past its
     * limit); usually few are scored before the bound stops them */
    for (int i = nc / 2 - 1; i >= 0; i--)
        heap_down(cs, nc, i);
    mixinfo mx;
    ft__probe_mixed(&S->sc, x, g, &mx);
    double best = INF;
    /* a walk that derives every k-step (mx.interior 2: a Layout scales a
     * tensor made inside) costs its steps: after FT_SEARCH_TILING_PATIENCE
     * configurations without a better one, the rest are not tried */
    int stale = 0, scored = 0;
    for (int left = nc; left > 0;) {
        cand top = cs[0];
        cs[0] = cs[--left];
        heap_down(cs, left, 0);
        if (top.lb >= best * (1 - 1e-12) && !S->tiling_all)
            break;
        /* the cheap start: a few granularities, once one fits */
        if (S->quick && best < INF && scored >= FT_SEARCH_QUICK_TRIES)
            break;
        scored++;
        /* past the deadline, whether or not a configuration fits yet:
         * each score would stop at once, but the candidates are many */
        if (ft__out_of_time(S))
            break;
        if (best < INF && mx.interior == 2 && stale >= FT_SEARCH_TILING_PATIENCE && !S->tiling_all)
            break;
        stale++;
        int64_t ntx = ft__ceil_div(sh.Wg, top.c.w), nty = ft__ceil_div(sh.Hg, top.c.h);
        if (S->tiling_check && ntx * nty > FT_SEARCH_CHECK_TILES)
            continue; /* the check's cap: scoring every small tile takes minutes */
        /* a single row or column: every order is raster; the cheap start
         * scores raster only */
        int norders = ntx > 1 && nty > 1 && !S->quick ? ORD_COUNT : 1;
        for (int ok = 0; ok < norders; ok++) {
            cfg c = top.c;
            c.order = ok;
            double lat = ft__sg_objective(&S->sc, x, &mx, g, &c, &base, best);
            if (S->tiling_check) {
                /* a score cut by the budget is a partial sum, at most the
                 * whole: scored whole again only where it is below */
                double whole = (lat <= best && lat < INF) || lat >= top.lb * (1 - 1e-9) ? lat
                                                                                        : ft__sg_objective(&S->sc, x, &mx, g, &c, &base, INF);
                S->bound_checked += whole < INF;
                if (whole < INF && whole < top.lb * (1 - 1e-9) && S->bound_over++ == 0) {
                    S->bound_cfg = c;
                    S->bound_lb = top.lb;
                    S->bound_exact = whole;
                }
            }
            /* the bound the candidates are ordered and cut by is a lower
             * bound of the objective (a value past the budget is a
             * partial sum, a value scored whole is not) */
            assert(!(lat <= best && lat < INF) || S->sc.ob.kind == FT_OBJECTIVE_LATENCY ||
                   lat >= top.lb * (1 - 1e-9) - 1e-300);
            if (lat < best) {
                best = lat;
                *best_c = c;
                stale = 0;
            }
        }
    }
    ft__free(cs);
    return best;
}
