/* search.c - the scheduler: fusion, granularity, traversal, retention and recomputation scored by the exact cost model. */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------ basics */

enum { ORD_RASTER = 0, ORD_SNAKE_ROW, ORD_COL, ORD_SNAKE_COL, ORD_COUNT };

/* A subgraph configuration: granularity and traversal order kind. */
typedef struct cfg {
    int64_t w, h, k;
    int order;
} cfg;

/* Memo entry: best configuration of one subgraph in one context. */
typedef struct memo {
    struct memo *next;
    uint64_t hash;
    int nkey;
    int *key;
    cfg c;
    double lat;
    int *order;      /* best op order of the subgraph */
} memo;

typedef struct search {
    const ft_problem *p;
    const ft_search_opts *o;
    ft_compute_model model;
    double t0, deadline;
    int timed_out;
    int first;             /* 1 while the one-op schedule is built: no deadline
                              cuts it, so a valid schedule exists whatever the
                              time limit */
    uint64_t rng;
    /* scratch, ntensors each */
    unsigned char *written, *retained, *resident, *produced, *uses;
    int *topo_pos;         /* op -> position in p->topo */
    memo **tab;
    size_t tabsize, nmemo;
    int *keybuf;
    int keycap;
    /* best complete schedule so far */
    double best;
    ft_schedule *best_s;
    int64_t evals;
    int check;           /* FT_SEARCH_CHECK set: compare predictions with ft_evaluate */
    struct tmemo *tm;    /* tile memo (TMEMO entries) and its generation */
    uint64_t tmgen;
    int mixed_rows, mixed_cols;  /* of the subgraph being optimised (ft__walk_mixed) */
    int mixed_interior;
} search;

#define INF HUGE_VAL
#define STEP_CAP ((int64_t)1 << 26)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int out_of_time(search *S)
{
    if (S->first)
        return 0;
    if (!S->timed_out && now_s() > S->deadline)
        S->timed_out = 1;
    return S->timed_out;
}

static uint64_t rng_next(search *S)
{
    /* xorshift64* */
    uint64_t x = S->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    S->rng = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* Tile visiting order of kind `kind` over an ntx x nty grid into out. */
static void make_order(int kind, int64_t ntx, int64_t nty, int64_t *out)
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

typedef struct tmemo {
    int64_t key[6];
    double lat;
    int64_t ws;
    uint64_t gen;  /* valid when equal to the scorer's generation */
} tmemo;

#define TMEMO 1024

/* Tile-memoised sum over the walk of w in order ord (NULL: raster); -1 when
 * the subgraph turns out irregular or the memo overflows (the caller then
 * walks every step).  INF on a capacity overflow. */
static double score_tiles(search *S, ft_walk *w, const ft_subgraph *g, const int64_t *ord, double budget, tmemo *tm, uint64_t gen)
{
    const ft_problem *p = S->p;
    int64_t ntx, nty, nk, nsteps;
    ft_walk_grid(w, &ntx, &nty, &nk, &nsteps);
    int64_t hs[64], ws[64];
    int nh = 0, nw = 0;
    for (int j = 0; j < g->nops; j++) {
        const ft_op *op = &p->ops[g->ops[j]];
        for (int i = -1; i < op->ninputs; i++) {
            const ft_tensor *T = &p->tensors[i < 0 ? op->output : op->inputs[i]];
            if (nh < 64)
                hs[nh++] = T->height;
            if (nw < 64)
                ws[nw++] = T->width;
        }
    }
    int64_t *rc = malloc(sizeof(int64_t) * (size_t)(nty + ntx));
    if (!rc)
        return -1;
    int64_t *cc = rc + nty;
    for (int64_t r = 0; r < nty; r++)
        rc[r] = S->mixed_rows ? ((int64_t)1 << 40) + r : dim_class(r, g->h, hs, nh);
    for (int64_t c = 0; c < ntx; c++)
        cc[c] = S->mixed_cols ? ((int64_t)1 << 40) + c : dim_class(c, g->w, ws, nw);
    int mixed = S->mixed_rows || S->mixed_cols;
    int nused = 0;
    double sum = 0;
    int64_t prev = -1, ntiles = ntx * nty;
    for (int64_t pos = 0; pos < ntiles; pos++) {
        int64_t tile = ord ? ord[pos] : pos, r = tile / ntx, c = tile % ntx;
        int64_t key[6];
        if (prev < 0) {
            key[0] = rc[r], key[1] = cc[c], key[2] = key[3] = -1, key[4] = key[5] = 0;
        } else {
            int64_t pr = prev / ntx, pc = prev % ntx;
            key[0] = rc[r], key[1] = cc[c], key[2] = rc[pr], key[3] = cc[pc], key[4] = pr == r, key[5] = pc == c;
        }
        uint64_t h = 1469598103934665603ULL;
        for (int i = 0; i < 6; i++)
            h = (h ^ (uint64_t)key[i]) * 1099511628211ULL;
        size_t slot = (size_t)(h ^ (h >> 29)) & (TMEMO - 1);
        while (tm[slot].gen == gen && memcmp(tm[slot].key, key, sizeof key) != 0)
            slot = (slot + 1) & (TMEMO - 1);
        if (tm[slot].gen != gen) {
            if (nused >= TMEMO / 2) {
                free(rc);
                return -1;
            }
            memcpy(tm[slot].key, key, sizeof key);
            tm[slot].lat = ft__walk_tile(w, prev, tile, &tm[slot].ws, !mixed ? 1 : S->mixed_interior == 0 ? 2 : S->mixed_interior == 1 ? 3 : 0);
            tm[slot].gen = gen;
            nused++;
        }
        if ((double)tm[slot].ws > p->capacity) {
            free(rc);
            return ft__walk_irregular(w) && !mixed ? -1 : INF;
        }
        sum += tm[slot].lat;
        if (sum > budget)
            break;
        if ((pos & 0x1ff) == 0x1ff && out_of_time(S)) {
            free(rc);
            return INF;
        }
        prev = tile;
    }
    free(rc);
    return ft__walk_irregular(w) && !mixed ? -1 : sum;
}

/* Set S->mixed_rows / mixed_cols / mixed_interior for subgraph g in S's
 * context (which axes mix range sources: ft__walk_mixed at k = 1).  Once per
 * subgraph and context, before scoring its configurations. */
static void probe_mixed(search *S, ft_subgraph *g)
{
    const ft_problem *p = S->p;
    ft_walk *pw;
    ft_status pst;
    S->mixed_rows = S->mixed_cols = 0;
    S->mixed_interior = 2;
    g->w = p->native_w;
    g->h = p->native_h;
    g->k = 1;
    g->order = NULL;
    g->norder = 0;
    if (ft__walk_new(p, g, S->model, S->written, S->retained, S->resident, &pw, &pst) == FT_OK) {
        ft__walk_mixed(pw, &S->mixed_rows, &S->mixed_cols, &S->mixed_interior);
        ft_walk_free(pw);
    }
}

/* Exact latency of subgraph g at configuration c under the tensor sets in
 * S (written/retained/resident); INF if a step overflows the capacity, or
 * any value > budget once the running sum passes budget. */
static double score(search *S, ft_subgraph *g, const cfg *c, double budget)
{
    const ft_problem *p = S->p;
    /* past the deadline nothing new is scored: what is not memoised is
     * treated as infeasible (the one-op schedule was offered first) */
    if (out_of_time(S))
        return INF;
    int64_t ntx, nty, nk;
    g->w = c->w;
    g->h = c->h;
    g->k = c->k;
    g->order = NULL;
    g->norder = 0;
    ft__sg_grid(p, g, NULL, &ntx, &nty, &nk);
    int64_t *ord = NULL;
    if (c->order != ORD_RASTER) {
        ord = malloc(sizeof(int64_t) * (size_t)(ntx * nty));
        if (!ord)
            return INF;
        make_order(c->order, ntx, nty, ord);
    }
    ft_walk *w;
    ft_status st;
    double lat = INF;
    /* besides its steps a subgraph pays the launch overhead and, with
     * double buffering, the pipeline's fill and drain (ft__sg_extra, as
     * ft_evaluate); at least ft__sg_fixed */
    const double fixed = ft__sg_fixed(p);
    budget -= fixed;
    if (ft__walk_new(p, g, S->model, S->written, S->retained, S->resident, &w, &st) == FT_OK) {
        lat = score_tiles(S, w, g, ord, budget, S->tm, ++S->tmgen);
        ft_walk_free(w);
        if (lat < 0 && ft__walk_new(p, g, S->model, S->written, S->retained, S->resident, &w, &st) == FT_OK) {
            /* every step, in order */
            g->order = ord;
            g->norder = ord ? ntx * nty : 0;
            ft_step stp;
            double sum = 0;
            int ok = 1;
            while (ft_walk_next(w, &stp)) {
                if ((double)stp.working_set > p->capacity) {
                    ok = 0;
                    break;
                }
                sum += stp.latency;
                if (sum > budget)
                    break;
                if ((stp.index & 0x3fff) == 0x3fff && out_of_time(S)) {
                    ok = 0;
                    break;
                }
            }
            ft_walk_free(w);
            lat = ok ? sum : INF;
        }
    }
    if (lat >= 0 && lat < INF && (fixed > 0 || p->timing.overlap == FT_OVERLAP_PIPELINE)) {
        double total = lat + fixed;
        if (p->timing.overlap == FT_OVERLAP_PIPELINE &&
            ft__walk_new(p, g, S->model, S->written, S->retained, S->resident, &w, &st) == FT_OK) {
            int64_t n = ntx * nty, loaded0, written_last;
            double compute_last;
            ft__walk_edges(w, ord ? ord[0] : 0, ord ? ord[n - 1] : n - 1, &loaded0, &written_last, &compute_last);
            total = n * nk == 1 ? ft__sg_single(p, loaded0, written_last, compute_last) /* nothing overlaps */
                                : lat + ft__sg_extra(p, loaded0, written_last, compute_last);
            ft_walk_free(w);
        }
        lat = total;
    }
    S->evals++;
    free(ord);
    g->order = NULL;
    g->norder = 0;
    return lat;
}

/* Sum over the tiles of a grid dimension of ceil(clipped length / n), for a
 * tensor dimension of length len cut in tiles of t. */
static double padded_units(int64_t len, int64_t t, int64_t n)
{
    int64_t full = len / t, rem = len % t;
    return (double)full * (double)ft__ceil_div(t, n) + (rem ? (double)ft__ceil_div(rem, n) : 0.0);
}

/* Candidate tile sizes for one dimension: powers of two up to lim and the
 * divisors up to lim of each length in lens[]; sorted, distinct. */
static int candidates(int64_t lim, const int64_t *lens, int nlens, int64_t *out, int cap)
{
    int n = 0;
    for (int64_t v = 1; v <= lim && n < cap; v *= 2)
        out[n++] = v;
    for (int i = 0; i < nlens; i++) {
        int64_t L = lens[i];
        for (int64_t d = 1; d <= lim && d <= L && n < cap; d++)
            if (L % d == 0)
                out[n++] = d;
        if (L <= lim && n < cap)
            out[n++] = L;
    }
    /* sort and dedupe */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && out[j - 1] > out[j]; j--) {
            int64_t t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    int m = 0;
    for (int i = 0; i < n; i++)
        if (m == 0 || out[m - 1] != out[i])
            out[m++] = out[i];
    return m;
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

#define MAXCAND 96

/* Best configuration of the subgraph g (ops set, tensor sets in S) by
 * lower-bound ordered enumeration; returns its latency (INF if none fits). */
static double optimise(search *S, ft_subgraph *g, cfg *best_c)
{
    const ft_problem *p = S->p;
    int nops = g->nops;
    ft_role roles_small[32];
    ft_role *roles = nops <= 32 ? roles_small : malloc(sizeof(ft_role) * (size_t)nops);
    if (!roles)
        return INF;
    int64_t ntx0, nty0, nk0;
    g->w = g->h = g->k = 1;
    ft__sg_grid(p, g, roles, &ntx0, &nty0, &nk0);
    /* fused operands never leave the subgraph */
    int64_t widths[64] = {0}, heights[64] = {0}, ks[64] = {0};
    int nw = 0, nh = 0, nks = 0;
    int64_t Wg = 0, Hg = 0;
    double reads_lb = 0, writes_lb = 0, fixed_ws = 0;
    for (int j = 0; j < nops; j++) {
        const ft_op *op = &p->ops[g->ops[j]];
        const ft_tensor *T = &p->tensors[op->output];
        if (roles[j] == FT_ROLE_UPSTREAM && (S->written[op->output] || S->retained[op->output])) {
            if (roles != roles_small)
                free(roles);
            return INF;
        }
        if (roles[j] != FT_ROLE_UPSTREAM) {
            if (nw < 64)
                widths[nw++] = T->width;
            if (nh < 64)
                heights[nh++] = T->height;
            if (T->width > Wg)
                Wg = T->width;
            if (T->height > Hg)
                Hg = T->height;
        }
        if (op->type == FT_OP_MATMUL && roles[j] == FT_ROLE_KLOOP && nks < 64)
            ks[nks++] = op->k;
        if (S->written[op->output])
            writes_lb += (double)(T->width * T->height);
        if (S->retained[op->output])
            fixed_ws += (double)(T->width * T->height);
    }
    /* boundary inputs are loaded at least once unless resident */
    for (int j = 0; j < nops; j++) {
        const ft_op *op = &p->ops[g->ops[j]];
        for (int i = 0; i < op->ninputs; i++) {
            int t = op->inputs[i];
            int dup = 0;
            for (int jj = 0; jj < nops && !dup; jj++)
                if (p->ops[g->ops[jj]].output == t)
                    dup = 1;
            for (int jj = 0; jj <= j && !dup; jj++) {
                const ft_op *q = &p->ops[g->ops[jj]];
                for (int ii = 0; ii < (jj == j ? i : q->ninputs); ii++)
                    if (q->inputs[ii] == t)
                        dup = 1;
            }
            if (!dup && !S->resident[t])
                reads_lb += (double)ft_tensor_size(p, t);
            if (!dup && S->resident[t])
                fixed_ws += (double)ft_tensor_size(p, t);
        }
    }
    /* uses of each tensor inside the subgraph; produced inside */
    unsigned char *uses = S->uses;
    memset(uses, 0, (size_t)p->ntensors);
    memset(S->produced, 0, (size_t)p->ntensors);
    for (int j = 0; j < nops; j++) {
        const ft_op *op = &p->ops[g->ops[j]];
        S->produced[op->output] = 1;
        for (int i = 0; i < op->ninputs; i++)
            if (uses[op->inputs[i]] < 255)
                uses[op->inputs[i]]++;
    }
    int64_t wc[MAXCAND], hc[MAXCAND], kc[MAXCAND];
    /* granularities up to native, or (a target that allows larger ones)
     * up to the largest length */
    int64_t limw = p->native_w, limh = p->native_h, limk = ft_native_k(p);
    if (p->allow_larger) {
        for (int q = 0; q < nw; q++)
            limw = widths[q] > limw ? widths[q] : limw;
        for (int q = 0; q < nh; q++)
            limh = heights[q] > limh ? heights[q] : limh;
        for (int q = 0; q < nks; q++)
            limk = ks[q] > limk ? ks[q] : limk;
    }
    int nwc = candidates(limw, widths, nw, wc, MAXCAND);
    int nhc = candidates(limh, heights, nh, hc, MAXCAND);
    int nkc = nks ? candidates(limk, ks, nks, kc, MAXCAND) : 1;
    if (!nks)
        kc[0] = 1;
    cand *cs = malloc(sizeof(cand) * (size_t)(nwc * nhc * nkc));
    if (!cs) {
        if (roles != roles_small)
            free(roles);
        return INF;
    }
    int nc = 0;
    for (int a = 0; a < nwc; a++)
        for (int b = 0; b < nhc; b++)
            for (int d = 0; d < nkc; d++) {
                int64_t w = wc[a], h = hc[b], k = kc[d];
                /* compute of the k-loop and epilogue ops is fixed by the tiling */
                double comp = 0;
                for (int j = 0; j < nops; j++) {
                    if (roles[j] == FT_ROLE_UPSTREAM)
                        continue;
                    const ft_op *op = &p->ops[g->ops[j]];
                    const ft_tensor *T = &p->tensors[op->output];
                    double c = op->base_cost * padded_units(T->height, h, p->native_h) * padded_units(T->width, w, p->native_w);
                    if (op->type == FT_OP_MATMUL)
                        c *= (double)op->k / (S->model == FT_COMPUTE_OP ? (double)op->k : (double)ft_native_k(p));
                    comp += c;
                }
                int64_t nk = 1;
                for (int q = 0; q < nks; q++)
                    if (ft__ceil_div(ks[q], k) > nk)
                        nk = ft__ceil_div(ks[q], k);
                /* with several k-steps, a k-loop MatMul's operand slices are
                 * new in every step (each k-step has its own slice): its
                 * boundary operands used by nothing else stream in whole once
                 * per tile column (L) or tile row (R) */
                double extra = 0;
                for (int j = 0; j < nops && nk > 1; j++) {
                    const ft_op *op = &p->ops[g->ops[j]];
                    if (roles[j] != FT_ROLE_KLOOP)
                        continue;
                    const ft_tensor *O = &p->tensors[op->output];
                    for (int side = 0; side < 2; side++) {
                        int t = op->inputs[side];
                        if (S->resident[t] || uses[t] != 1 || S->produced[t])
                            continue;
                        double once = (double)ft_tensor_size(p, t);
                        double times = side == 0 ? (double)ft__ceil_div(O->width, w) : (double)ft__ceil_div(O->height, h);
                        extra += once * (times - 1);
                    }
                }
                /* memory time of the compulsory traffic as one step's
                 * (a lower bound of the sum over steps: ft_step_time) */
                double mem;
                ft_step_time(p, 0, (int64_t)(reads_lb + extra), (int64_t)writes_lb, &mem);
                double steps = (double)ft__ceil_div(Wg, w) * (double)ft__ceil_div(Hg, h) * (double)nk;
                if (steps > (double)STEP_CAP)
                    continue;
                if (fixed_ws > p->capacity)
                    continue;
                cs[nc].c = (cfg){w, h, k, ORD_RASTER};
                cs[nc].lb = (p->timing.overlap == FT_OVERLAP_NONE ? comp + mem : comp > mem ? comp : mem) + ft__sg_fixed(p);
                nc++;
            }
    if (roles != roles_small)
        free(roles);
    qsort(cs, (size_t)nc, sizeof(cand), cand_cmp);
    probe_mixed(S, g);
    double best = INF;
    for (int i = 0; i < nc; i++) {
        if (cs[i].lb >= best * (1 - 1e-12))
            break;
        if (best < INF && out_of_time(S))
            break;
        int64_t ntx = ft__ceil_div(Wg, cs[i].c.w), nty = ft__ceil_div(Hg, cs[i].c.h);
        int norders = (ntx > 1 || nty > 1) ? ORD_COUNT : 1;
        for (int ok = 0; ok < norders; ok++) {
            if (ok != ORD_RASTER && (ntx < 2 || nty < 2))
                continue; /* a single row or column: every order is raster */
            cfg c = cs[i].c;
            c.order = ok;
            double lat = score(S, g, &c, best);
            if (lat < best) {
                best = lat;
                *best_c = c;
            }
        }
    }
    free(cs);
    return best;
}

/* ------------------------------------------------------------ memo */

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
static int make_key(search *S, const int *ops, int nops)
{
    const ft_problem *p = S->p;
    int need = 4 + nops * 4;
    for (int j = 0; j < nops; j++)
        need += p->ops[ops[j]].ninputs;
    if (need > S->keycap) {
        int *nb = realloc(S->keybuf, sizeof(int) * (size_t)need);
        if (!nb)
            return -1;
        S->keybuf = nb;
        S->keycap = need;
    }
    int *k = S->keybuf, n = 0;
    for (int j = 0; j < nops; j++)
        k[n++] = ops[j];
    k[n++] = -1;
    for (int j = 0; j < nops; j++) {
        int t = p->ops[ops[j]].output;
        k[n++] = (S->written[t] ? 1 : 0) | (S->retained[t] ? 2 : 0);
    }
    k[n++] = -2;
    for (int j = 0; j < nops; j++) {
        const ft_op *op = &p->ops[ops[j]];
        for (int i = 0; i < op->ninputs; i++)
            k[n++] = S->resident[op->inputs[i]];
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
        memo **nt = calloc(ns, sizeof(memo *));
        if (!nt)
            return;
        for (size_t i = 0; i < S->tabsize; i++)
            for (memo *m = S->tab[i], *nx; m; m = nx) {
                nx = m->next;
                m->next = nt[m->hash & (ns - 1)];
                nt[m->hash & (ns - 1)] = m;
            }
        free(S->tab);
        S->tab = nt;
        S->tabsize = ns;
    }
    memo *m = malloc(sizeof *m);
    if (!m)
        return;
    m->key = malloc(sizeof(int) * (size_t)n);
    m->order = malloc(sizeof(int) * (size_t)nops);
    if (!m->key || !m->order) {
        free(m->key);
        free(m->order);
        free(m);
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

static void memo_free(search *S)
{
    for (size_t i = 0; i < S->tabsize; i++)
        for (memo *m = S->tab[i], *nx; m; m = nx) {
            nx = m->next;
            free(m->key);
            free(m->order);
            free(m);
        }
    free(S->tab);
}

static void sort_topo(search *S, int *ops, int n);

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

/* A seeded random topological order of ops[] into out. */
static void random_topo(search *S, const int *ops, int nops, int *out)
{
    const ft_problem *p = S->p;
    unsigned char placed[256] = {0};
    for (int n = 0; n < nops; n++) {
        int ready[256], nr = 0;
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
        int pick = ready[rng_next(S) % (uint64_t)nr];
        placed[pick] = 1;
        out[n] = ops[pick];
    }
}

/* Best latency and configuration of subgraph ops[] under the tensor sets
 * currently in S, memoised.  ops[] is reordered in place into the best
 * execution order found (a topological order). */
static double group_cost(search *S, int *ops, int nops, cfg *c)
{
    sort_topo(S, ops, nops);
    int n = make_key(S, ops, nops);
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
    double lat = optimise(S, &g, &best);
    if (nops <= 256 && order_sensitive(S, ops, nops)) {
        int *alt = malloc(sizeof(int) * (size_t)nops * 2);
        if (alt) {
            int *bestord = alt + nops, tries = nops <= 6 ? 12 : 4;
            memcpy(bestord, ops, sizeof(int) * (size_t)nops);
            for (int v = 0; v < tries && !out_of_time(S); v++) {
                random_topo(S, ops, nops, alt);
                cfg c2 = best;
                g.ops = alt;
                double l2 = optimise(S, &g, &c2);
                if (l2 < lat - 1e-12 * fmax(1, lat)) {
                    lat = l2;
                    best = c2;
                    memcpy(bestord, alt, sizeof(int) * (size_t)nops);
                }
            }
            memcpy(ops, bestord, sizeof(int) * (size_t)nops);
            free(alt);
        }
    }
    /* a cut-short optimisation is not memoised: it may not be the best */
    if (!S->timed_out) {
        int *keyops = malloc(sizeof(int) * (size_t)nops);
        if (keyops) {
            memcpy(keyops, ops, sizeof(int) * (size_t)nops);
            sort_topo(S, keyops, nops);
            n = make_key(S, keyops, nops);
            memo_add(S, n, h, &best, lat, ops, nops);
            free(keyops);
        }
    }
    *c = best;
    return lat;
}

/* ------------------------------------------------------------ plans */

/* A plan: ordered groups with their configurations and retained sets. */
typedef struct plan {
    int ngroups;
    int **ops;       /* per group, ops in topological order */
    int *nops;
    cfg *c;
    int **ret;       /* retained tensors per group */
    int *nret;
    double *lat;
} plan;

static void plan_free(plan *P)
{
    for (int i = 0; i < P->ngroups; i++) {
        free(P->ops[i]);
        free(P->ret[i]);
    }
    free(P->ops);
    free(P->nops);
    free(P->c);
    free(P->ret);
    free(P->nret);
    free(P->lat);
    memset(P, 0, sizeof *P);
}

static int plan_alloc(plan *P, int n)
{
    memset(P, 0, sizeof *P);
    P->ops = calloc((size_t)n + 1, sizeof(int *));
    P->nops = calloc((size_t)n + 1, sizeof(int));
    P->c = calloc((size_t)n + 1, sizeof(cfg));
    P->ret = calloc((size_t)n + 1, sizeof(int *));
    P->nret = calloc((size_t)n + 1, sizeof(int));
    P->lat = calloc((size_t)n + 1, sizeof(double));
    P->ngroups = n;
    if (!P->ops || !P->nops || !P->c || !P->ret || !P->nret || !P->lat) {
        plan_free(P);
        return -1;
    }
    return 0;
}

/* Schedule of a plan (NULL on OOM). */
static ft_schedule *plan_schedule(search *S, const plan *P)
{
    ft_schedule *s = ft_schedule_new(P->ngroups);
    if (!s)
        return NULL;
    s->len_orders = P->ngroups;
    for (int i = 0; i < P->ngroups; i++) {
        ft_subgraph *g = &s->sg[i];
        if (ft_subgraph_set_ops(g, P->ops[i], P->nops[i]) || ft_subgraph_set_retain(g, P->ret[i], P->nret[i])) {
            ft_schedule_free(s);
            return NULL;
        }
        g->w = P->c[i].w;
        g->h = P->c[i].h;
        g->k = P->c[i].k;
        if (P->c[i].order != ORD_RASTER) {
            int64_t ntx, nty, nk;
            ft__sg_grid(S->p, g, NULL, &ntx, &nty, &nk);
            g->order = malloc(sizeof(int64_t) * (size_t)(ntx * nty));
            if (!g->order) {
                ft_schedule_free(s);
                return NULL;
            }
            g->norder = ntx * nty;
            make_order(P->c[i].order, ntx, nty, g->order);
        }
    }
    return s;
}

/* Evaluate a plan exactly; keep it when it beats the best so far and tell
 * the caller's callback.  Returns the plan's total (INF if invalid). */
static double plan_offer(search *S, const plan *P)
{
    ft_schedule *s = plan_schedule(S, P);
    if (!s)
        return INF;
    ft_eval e;
    ft_status st;
    double total = INF;
    if (ft_evaluate(S->p, s, S->model, &e, &st) == FT_OK) {
        total = e.total;
        for (int i = 0; S->check && i < e.nsubgraphs; i++)
            if (fabs(e.sg[i].latency - P->lat[i]) > 1e-9 * fmax(1, e.sg[i].latency))
                fprintf(stderr, "FT_SEARCH_CHECK: subgraph %d: predicted %.17g, evaluated %.17g\n", i, P->lat[i], e.sg[i].latency);
        if (total < S->best) {
            double *lat = malloc(sizeof(double) * (size_t)(e.nsubgraphs + 1));
            if (lat) {
                for (int i = 0; i < e.nsubgraphs; i++) {
                    lat[i] = e.sg[i].latency;
                    s->sg[i].has_reported = 1;
                    s->sg[i].reported = lat[i];
                }
                s->len_latencies = s->nsubgraphs;
                S->best = total;
                ft_schedule_free(S->best_s);
                S->best_s = s;
                s = NULL;
                if (S->o->verbose)
                    fprintf(stderr, "fusetile schedule: %.2f s: total %.17g (%d subgraphs, %lld evaluations)\n", now_s() - S->t0,
                            total, P->ngroups, (long long)S->evals);
                if (S->o->on_improve)
                    S->o->on_improve(S->o->ctx, S->best_s, lat, total);
                free(lat);
            }
        }
        ft_eval_free(&e);
    }
    ft_schedule_free(s);
    return total;
}

/* Fill S->written/retained/resident for group i of an ordered plan (the
 * SPEC 3 rules, using the plan's retained sets) and return its cost. */
static void set_context(search *S, const plan *P, int i)
{
    const ft_problem *p = S->p;
    size_t nt = (size_t)p->ntensors;
    memset(S->written, 0, nt);
    memset(S->retained, 0, nt);
    memset(S->resident, 0, nt);
    memset(S->produced, 0, nt);
    for (int j = 0; j < P->nret[i]; j++)
        S->retained[P->ret[i][j]] = 1;
    if (i > 0)
        for (int j = 0; j < P->nret[i - 1]; j++)
            S->resident[P->ret[i - 1][j]] = 1;
    for (int j = 0; j < P->nops[i]; j++)
        S->produced[p->ops[P->ops[i][j]].output] = 1;
    for (int j = 0; j < P->nops[i]; j++) {
        int t = p->ops[P->ops[i][j]].output;
        if (p->tensors[t].nconsumers == 0) {
            S->written[t] = 1;
            continue;
        }
        for (int q = i + 1; q < P->ngroups && !S->written[t]; q++) {
            int prod = 0, cons = 0;
            for (int a = 0; a < P->nops[q]; a++) {
                const ft_op *op = &p->ops[P->ops[q][a]];
                if (op->output == t)
                    prod = 1;
                for (int b = 0; b < op->ninputs; b++)
                    if (op->inputs[b] == t)
                        cons = 1;
            }
            if (prod)
                break;
            if (cons) {
                if (q == i + 1 && S->retained[t])
                    continue;
                S->written[t] = 1;
            }
        }
    }
}

/* Re-optimise every group of P in its context; returns the sum. */
static double plan_cost(search *S, plan *P)
{
    double total = 0;
    for (int i = 0; i < P->ngroups; i++) {
        set_context(S, P, i);
        P->lat[i] = group_cost(S, P->ops[i], P->nops[i], &P->c[i]);
        total += P->lat[i];
    }
    return total;
}

/* ------------------------------------------------------------ groups as op sets */

/* Sort ops by topological position. */
static void sort_topo(search *S, int *ops, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && S->topo_pos[ops[j - 1]] > S->topo_pos[ops[j]]; j--) {
            int t = ops[j];
            ops[j] = ops[j - 1];
            ops[j - 1] = t;
        }
}

/* group id of each op (partition), ngroups groups: write a plan with groups
 * in a topological order of the quotient graph; -1 if it has a cycle. */
static int plan_from_partition(search *S, const int *gid, int ng, plan *P)
{
    const ft_problem *p = S->p;
    if (plan_alloc(P, ng))
        return -1;
    int *indeg = calloc((size_t)ng, sizeof(int));
    unsigned char *edge = calloc((size_t)ng * (size_t)ng, 1);
    int *order = malloc(sizeof(int) * (size_t)ng);
    int rc = -1;
    if (!indeg || !edge || !order)
        goto done;
    for (int o = 0; o < p->nops; o++)
        for (int i = 0; i < p->ops[o].ninputs; i++) {
            int pr = p->tensors[p->ops[o].inputs[i]].producer;
            if (pr >= 0 && gid[pr] != gid[o] && !edge[gid[pr] * ng + gid[o]]) {
                edge[gid[pr] * ng + gid[o]] = 1;
                indeg[gid[o]]++;
            }
        }
    /* Kahn, preferring the group whose first op comes first in topo order */
    int n = 0;
    unsigned char *done_g = calloc((size_t)ng, 1);
    if (!done_g)
        goto done;
    while (n < ng) {
        int pick = -1, pickpos = 0;
        for (int g = 0; g < ng; g++) {
            if (done_g[g] || indeg[g])
                continue;
            int pos = p->nops;
            for (int o = 0; o < p->nops; o++)
                if (gid[o] == g && S->topo_pos[o] < pos)
                    pos = S->topo_pos[o];
            if (pick < 0 || pos < pickpos) {
                pick = g;
                pickpos = pos;
            }
        }
        if (pick < 0)
            break;
        done_g[pick] = 1;
        order[n++] = pick;
        for (int g = 0; g < ng; g++)
            if (edge[pick * ng + g])
                indeg[g]--;
    }
    free(done_g);
    if (n < ng)
        goto done;
    for (int i = 0; i < ng; i++) {
        int g = order[i], m = 0;
        P->ops[i] = malloc(sizeof(int) * (size_t)p->nops);
        if (!P->ops[i])
            goto done;
        for (int o = 0; o < p->nops; o++)
            if (gid[o] == g)
                P->ops[i][m++] = o;
        sort_topo(S, P->ops[i], m);
        P->nops[i] = m;
    }
    rc = 0;
done:
    free(indeg);
    free(edge);
    free(order);
    if (rc)
        plan_free(P);
    return rc;
}

/* Whether ops[] (n ops) is connected through tensors. */
static int connected(search *S, const int *ops, int n)
{
    const ft_problem *p = S->p;
    if (n <= 1)
        return 1;
    unsigned char *in = calloc((size_t)n, 1);
    int *stack = malloc(sizeof(int) * (size_t)n);
    if (!in || !stack) {
        free(in);
        free(stack);
        return 0;
    }
    int top = 0, seen = 1;
    in[0] = 1;
    stack[top++] = 0;
    while (top) {
        int a = stack[--top];
        const ft_op *A = &p->ops[ops[a]];
        for (int b = 0; b < n; b++) {
            if (in[b])
                continue;
            const ft_op *B = &p->ops[ops[b]];
            int link = 0;
            for (int i = 0; i < B->ninputs && !link; i++)
                link = B->inputs[i] == A->output;
            for (int i = 0; i < A->ninputs && !link; i++)
                link = A->inputs[i] == B->output;
            for (int i = 0; i < A->ninputs && !link; i++)
                for (int j = 0; j < B->ninputs && !link; j++)
                    link = A->inputs[i] == B->inputs[j];
            if (link) {
                in[b] = 1;
                seen++;
                stack[top++] = b;
            }
        }
    }
    free(in);
    free(stack);
    return seen == n;
}

/* ------------------------------------------------------------ retention */

/* Tensors group i produces that group i+1 consumes (candidates to retain). */
static int retain_candidates(search *S, const plan *P, int i, int *out)
{
    const ft_problem *p = S->p;
    int n = 0;
    if (i + 1 >= P->ngroups)
        return 0;
    for (int j = 0; j < P->nops[i]; j++) {
        int t = p->ops[P->ops[i][j]].output;
        int cons = 0;
        for (int a = 0; a < P->nops[i + 1] && !cons; a++) {
            const ft_op *op = &p->ops[P->ops[i + 1][a]];
            if (op->output == t)
                break;
            for (int b = 0; b < op->ninputs; b++)
                if (op->inputs[b] == t)
                    cons = 1;
        }
        if (cons && n < 16)
            out[n++] = t;
    }
    return n;
}

/* Optimal retained sets for the fixed ordered groups of P by dynamic
 * programming over i (state: the set retained by group i); fills P->ret,
 * P->c, P->lat and returns the total. */
static double plan_retention_dp(search *S, plan *P)
{
    int ng = P->ngroups;
    int (*cands)[16] = malloc(sizeof(int[16]) * (size_t)ng);
    int *ncand = calloc((size_t)ng, sizeof(int));
    double **cost = calloc((size_t)ng, sizeof(double *));
    int **from = calloc((size_t)ng, sizeof(int *));
    double total = INF;
    if (!cands || !ncand || !cost || !from)
        goto done;
    for (int i = 0; i < ng; i++) {
        ncand[i] = retain_candidates(S, P, i, cands[i]);
        if (ncand[i] > 6)
            ncand[i] = 6; /* at most 64 states */
        int ns = 1 << ncand[i];
        cost[i] = malloc(sizeof(double) * (size_t)ns);
        from[i] = malloc(sizeof(int) * (size_t)ns);
        if (!cost[i] || !from[i])
            goto done;
    }
    for (int i = 0; i < ng; i++) {
        int ns = 1 << ncand[i], nprev = i ? 1 << ncand[i - 1] : 1;
        for (int r = 0; r < ns; r++) {
            cost[i][r] = INF;
            from[i][r] = 0;
            free(P->ret[i]);
            P->ret[i] = malloc(sizeof(int) * 17);
            if (!P->ret[i])
                goto done;
            P->nret[i] = 0;
            for (int b = 0; b < ncand[i]; b++)
                if (r >> b & 1)
                    P->ret[i][P->nret[i]++] = cands[i][b];
            for (int q = 0; q < nprev; q++) {
                double before = i ? cost[i - 1][q] : 0;
                if (before == INF)
                    continue;
                if (i) {
                    P->nret[i - 1] = 0;
                    for (int b = 0; b < ncand[i - 1]; b++)
                        if (q >> b & 1)
                            P->ret[i - 1][P->nret[i - 1]++] = cands[i - 1][b];
                }
                set_context(S, P, i);
                cfg c;
                double l = group_cost(S, P->ops[i], P->nops[i], &c);
                if (before + l < cost[i][r]) {
                    cost[i][r] = before + l;
                    from[i][r] = q;
                }
            }
        }
        if (out_of_time(S) && i < ng - 1) {
            /* no time for the DP: keep nothing retained */
            for (int a = 0; a < ng; a++)
                P->nret[a] = 0;
            total = plan_cost(S, P);
            goto done;
        }
    }
    /* best final state, then walk back */
    {
        int last = ng - 1, r = 0;
        for (int q = 1; q < (1 << ncand[last]); q++)
            if (cost[last][q] < cost[last][r])
                r = q;
        total = cost[last][r];
        for (int i = last; i >= 0; i--) {
            P->nret[i] = 0;
            for (int b = 0; b < ncand[i]; b++)
                if (r >> b & 1)
                    P->ret[i][P->nret[i]++] = cands[i][b];
            r = from[i][r];
        }
        if (total < INF)
            plan_cost(S, P);
    }
done:
    for (int i = 0; i < ng && cost; i++) {
        free(cost[i]);
        if (from)
            free(from[i]);
    }
    free(cost);
    free(from);
    free(cands);
    free(ncand);
    return total;
}

/* ------------------------------------------------------------ exhaustive search (small problems) */

/* All topological orders of the groups of partition gid: for each, the
 * retention DP; every complete plan is offered. */
static void try_orders(search *S, plan *P, int pos, unsigned char *used, int ng, const unsigned char *edge, int *order, plan *base)
{
    if (out_of_time(S))
        return;
    if (pos == ng) {
        for (int i = 0; i < ng; i++) {
            P->ops[i] = base->ops[order[i]];
            P->nops[i] = base->nops[order[i]];
            P->nret[i] = 0;
        }
        double t = plan_retention_dp(S, P);
        if (t < INF && t < S->best * (1 + 1e-12))
            plan_offer(S, P);
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
        try_orders(S, P, pos + 1, used, ng, edge, order, base);
        used[g] = 0;
    }
}

static void exhaustive_partition(search *S, const int *gid, int ng)
{
    const ft_problem *p = S->p;
    plan base;
    if (plan_from_partition(S, gid, ng, &base))
        return; /* cyclic */
    for (int i = 0; i < ng; i++)
        if (!connected(S, base.ops[i], base.nops[i])) {
            plan_free(&base);
            return;
        }
    unsigned char *edge = calloc((size_t)ng * (size_t)ng, 1);
    unsigned char *used = calloc((size_t)ng, 1);
    int *order = malloc(sizeof(int) * (size_t)ng);
    plan P;
    if (edge && used && order && !plan_alloc(&P, ng)) {
        /* group index in base order for each op */
        int *bg = malloc(sizeof(int) * (size_t)p->nops);
        if (bg) {
            for (int i = 0; i < ng; i++)
                for (int j = 0; j < base.nops[i]; j++)
                    bg[base.ops[i][j]] = i;
            for (int o = 0; o < p->nops; o++)
                for (int i = 0; i < p->ops[o].ninputs; i++) {
                    int pr = p->tensors[p->ops[o].inputs[i]].producer;
                    if (pr >= 0 && bg[pr] != bg[o])
                        edge[bg[pr] * ng + bg[o]] = 1;
                }
            for (int i = 0; i < ng; i++) {
                P.ret[i] = NULL;
                P.nret[i] = 0;
            }
            try_orders(S, &P, 0, used, ng, edge, order, &base);
            free(bg);
        }
        /* P borrowed base's op arrays */
        for (int i = 0; i < ng; i++)
            P.ops[i] = NULL;
        plan_free(&P);
    }
    free(edge);
    free(used);
    free(order);
    plan_free(&base);
}

/* Enumerate set partitions by restricted growth strings. */
static void exhaustive_rec(search *S, int *gid, int o, int ng)
{
    if (out_of_time(S))
        return;
    if (o == S->p->nops) {
        exhaustive_partition(S, gid, ng);
        return;
    }
    for (int g = 0; g <= ng; g++) {
        gid[o] = g;
        exhaustive_rec(S, gid, o + 1, g == ng ? ng + 1 : ng);
    }
}

/* ------------------------------------------------------------ greedy fusion (large problems) */

/* Groups as op-id lists indexed by group id (gid per op).  Cost of a group
 * in the partition context: outputs consumed outside are written, nothing
 * retained or resident. */
static double partition_group_cost(search *S, const int *gid, int g, int *ops, int n, cfg *c)
{
    const ft_problem *p = S->p;
    size_t nt = (size_t)p->ntensors;
    memset(S->written, 0, nt);
    memset(S->retained, 0, nt);
    memset(S->resident, 0, nt);
    for (int j = 0; j < n; j++) {
        int t = p->ops[ops[j]].output;
        const ft_tensor *T = &p->tensors[t];
        if (T->nconsumers == 0)
            S->written[t] = 1;
        for (int q = 0; q < T->nconsumers; q++)
            if (gid[T->consumers[q]] != g)
                S->written[t] = 1;
    }
    return group_cost(S, ops, n, c);
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

static double greedy_fusion(search *S, int *gid)
{
    const ft_problem *p = S->p;
    int n = p->nops;
    int *ops = malloc(sizeof(int) * (size_t)n);
    int *ops2 = malloc(sizeof(int) * (size_t)n);
    double *gcost = malloc(sizeof(double) * (size_t)n);
    unsigned char *alive = calloc((size_t)n, 1);
    unsigned char *mark = malloc((size_t)n);
    int *stack = malloc(sizeof(int) * (size_t)(n + 1));
    double total = INF;
    if (!ops || !ops2 || !gcost || !alive || !mark || !stack)
        goto done;
    for (int o = 0; o < n; o++) {
        gid[o] = o;
        alive[o] = 1;
    }
    total = 0;
    for (int g = 0; g < n; g++) {
        cfg c;
        int m = collect(S, gid, g, -1, ops);
        gcost[g] = partition_group_cost(S, gid, g, ops, m, &c);
        total += gcost[g];
    }
    for (;;) {
        if (out_of_time(S))
            break;
        double best_gain = 0;
        int ba = -1, bb = -1;
        double best_cost = 0;
        /* candidate pairs: groups linked by a tensor */
        for (int o = 0; o < n; o++) {
            const ft_op *op = &p->ops[o];
            for (int i = 0; i < op->ninputs; i++) {
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
                    int m = collect(S, gid, a, b, ops);
                    /* evaluate the merge with b relabelled as a */
                    for (int j = 0; j < m; j++)
                        ops2[j] = gid[ops[j]];
                    for (int j = 0; j < m; j++)
                        gid[ops[j]] = a;
                    cfg c;
                    double mc = partition_group_cost(S, gid, a, ops, m, &c);
                    for (int j = 0; j < m; j++)
                        gid[ops[j]] = ops2[j];
                    double gain = gcost[a] + gcost[b] - mc;
                    if (mc < INF && gain > best_gain * (1 + 1e-12) + 1e-9 && merge_acyclic(S, gid, n, a, b, mark, stack)) {
                        best_gain = gain;
                        ba = a;
                        bb = b;
                        best_cost = mc;
                    }
                    if (out_of_time(S))
                        break;
                }
            }
        }
        if (ba < 0)
            break;
        for (int o = 0; o < n; o++)
            if (gid[o] == bb)
                gid[o] = ba;
        alive[bb] = 0;
        gcost[ba] = best_cost;
        total -= best_gain;
    }
done:
    free(ops);
    free(ops2);
    free(gcost);
    free(alive);
    free(mark);
    free(stack);
    return total;
}

/* Renumber group ids 0..ng-1; returns ng. */
static int compact_gids(int *gid, int n)
{
    int *map = malloc(sizeof(int) * (size_t)n);
    if (!map)
        return n;
    for (int i = 0; i < n; i++)
        map[i] = -1;
    int ng = 0;
    for (int o = 0; o < n; o++) {
        if (map[gid[o]] < 0)
            map[gid[o]] = ng++;
        gid[o] = map[gid[o]];
    }
    free(map);
    return ng;
}

/* ------------------------------------------------------------ local search */

/* Sum of partition costs of the groups of gid (ng groups). */
static double partition_cost(search *S, const int *gid, int ng, int *ops, double *gc)
{
    double total = 0;
    for (int g = 0; g < ng; g++) {
        cfg c;
        int m = collect(S, gid, g, -1, ops);
        gc[g] = m ? partition_group_cost(S, gid, g, ops, m, &c) : 0;
        total += gc[g];
    }
    return total;
}

/* Whether every group of gid is connected and the quotient graph acyclic. */
static int partition_ok(search *S, const int *gid, int ng, int *ops)
{
    for (int g = 0; g < ng; g++) {
        int m = collect(S, gid, g, -1, ops);
        if (m && !connected(S, ops, m))
            return 0;
    }
    plan P;
    if (plan_from_partition(S, gid, ng, &P))
        return 0;
    plan_free(&P);
    return 1;
}

/* Seeded hill climbing on the partition: move an op into a linked group,
 * split it out alone, or merge its group with a linked one; keep strict
 * improvements.  At most `moves` tries (the time limit may cut it). */
static void local_search(search *S, int *gid, int64_t moves)
{
    const ft_problem *p = S->p;
    int n = p->nops;
    int *ops = malloc(sizeof(int) * (size_t)n);
    int *cand = malloc(sizeof(int) * (size_t)n);
    double *gc = malloc(sizeof(double) * (size_t)(n + 1));
    double *gc2 = malloc(sizeof(double) * (size_t)(n + 1));
    if (!ops || !cand || !gc || !gc2)
        goto done;
    int ng = compact_gids(gid, n);
    double cur = partition_cost(S, gid, ng, ops, gc);
    for (int64_t it = 0; it < moves && !out_of_time(S); it++) {
        int o = (int)(rng_next(S) % (uint64_t)n);
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
        int kind = (int)(rng_next(S) % 3);
        int from = gid[o], to;
        if (kind == 1 || nc == 0)
            to = ng; /* split o out alone */
        else
            to = gid[cand[rng_next(S) % (uint64_t)nc]];
        if (to == from)
            continue;
        int *old = malloc(sizeof(int) * (size_t)n);
        if (!old)
            break;
        memcpy(old, gid, sizeof(int) * (size_t)n);
        if (kind == 2 && to < ng) {
            for (int q = 0; q < n; q++)
                if (gid[q] == from)
                    gid[q] = to; /* merge the groups */
        } else {
            gid[o] = to;
        }
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
                    gc2[g] = m ? partition_group_cost(S, gid, g, ops, m, &c) : 0;
                }
                next += gc2[g];
                if (next == INF)
                    break;
            }
        }
        if (next < cur - 1e-9 * fmax(1, cur)) {
            cur = next;
            ng = compact_gids(gid, n);
            partition_cost(S, gid, ng, ops, gc);
        } else {
            memcpy(gid, old, sizeof(int) * (size_t)n);
        }
        free(old);
    }
done:
    free(ops);
    free(cand);
    free(gc);
    free(gc2);
}

/* ------------------------------------------------------------ recomputation */

/* Deep copy of a plan's groups (configurations and retained sets are
 * recomputed by the retention DP); -1 on OOM. */
static int plan_copy(const plan *A, plan *B, int extra_slot)
{
    if (plan_alloc(B, A->ngroups))
        return -1;
    for (int i = 0; i < A->ngroups; i++) {
        B->ops[i] = malloc(sizeof(int) * (size_t)(A->nops[i] + extra_slot + 1));
        if (!B->ops[i]) {
            plan_free(B);
            return -1;
        }
        memcpy(B->ops[i], A->ops[i], sizeof(int) * (size_t)A->nops[i]);
        B->nops[i] = A->nops[i];
    }
    return 0;
}

static int group_has(const plan *P, int i, int op)
{
    for (int j = 0; j < P->nops[i]; j++)
        if (P->ops[i][j] == op)
            return 1;
    return 0;
}

/* Whether group j still does useful work: some output written or
 * retained in P's current context. */
static int group_useful(search *S, plan *P, int j)
{
    set_context(S, P, j);
    for (int a = 0; a < P->nops[j]; a++) {
        int t = S->p->ops[P->ops[j][a]].output;
        if (S->written[t] || S->retained[t])
            return 1;
    }
    return 0;
}

/* Try recomputing producers inside their consumers' groups: for group i and
 * a boundary input t made by op q in an earlier group j, add q to group i
 * (and drop group j when it has nothing left to do).  Keeps a change when
 * the retention DP of the new plan beats `cur`.  Returns the best total. */
static double recompute_pass(search *S, plan *P, double cur)
{
    const ft_problem *p = S->p;
    int improved = 1;
    while (improved && !out_of_time(S)) {
        improved = 0;
        for (int i = 1; i < P->ngroups && !improved && !out_of_time(S); i++) {
            for (int a = 0; a < P->nops[i] && !improved; a++) {
                const ft_op *op = &p->ops[P->ops[i][a]];
                for (int b = 0; b < op->ninputs && !improved; b++) {
                    int t = op->inputs[b], q = p->tensors[t].producer;
                    if (q < 0 || group_has(P, i, q))
                        continue;
                    int j = -1;
                    for (int x = i - 1; x >= 0 && j < 0; x--)
                        if (group_has(P, x, q))
                            j = x;
                    if (j < 0)
                        continue;
                    plan Q;
                    if (plan_copy(P, &Q, 1))
                        return cur;
                    Q.ops[i][Q.nops[i]++] = q;
                    sort_topo(S, Q.ops[i], Q.nops[i]);
                    if (!group_useful(S, &Q, j)) {
                        free(Q.ops[j]);
                        free(Q.ret[j]);
                        for (int x = j; x + 1 < Q.ngroups; x++) {
                            Q.ops[x] = Q.ops[x + 1];
                            Q.nops[x] = Q.nops[x + 1];
                            Q.ret[x] = Q.ret[x + 1];
                            Q.nret[x] = Q.nret[x + 1];
                        }
                        Q.ngroups--;
                        Q.ops[Q.ngroups] = NULL;
                        Q.ret[Q.ngroups] = NULL;
                    }
                    double t2 = plan_retention_dp(S, &Q);
                    if (t2 < cur - 1e-9 * fmax(1, cur)) {
                        plan_free(P);
                        *P = Q;
                        cur = t2;
                        improved = 1;
                    } else {
                        plan_free(&Q);
                    }
                }
            }
        }
    }
    return cur;
}

/* ------------------------------------------------------------ entry */

int ft_search(const ft_problem *p, const ft_search_opts *o, ft_schedule **out, ft_eval *ev, ft_status *st)
{
    ft_status_clear(st);
    *out = NULL;
    memset(ev, 0, sizeof *ev);
    search S;
    memset(&S, 0, sizeof S);
    S.p = p;
    S.o = o;
    S.model = o->model;
    S.t0 = now_s();
    /* keep a tenth of the time (at least 50 ms) for the final evaluation and
     * the caller's write */
    double limit = o->time_limit > 0 ? o->time_limit : 1e9;
    S.deadline = S.t0 + limit - fmax(0.05, 0.1 * limit);
    S.rng = o->seed * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL;
    if (!S.rng)
        S.rng = 1;
    S.best = INF;
    S.check = getenv("FT_SEARCH_CHECK") != NULL;
    S.tm = calloc(TMEMO, sizeof(tmemo));
    size_t nt = (size_t)p->ntensors + 1;
    S.written = calloc(nt, 1);
    S.retained = calloc(nt, 1);
    S.resident = calloc(nt, 1);
    S.produced = calloc(nt, 1);
    S.uses = calloc(nt, 1);
    S.topo_pos = malloc(sizeof(int) * ((size_t)p->nops + 1));
    int *gid = malloc(sizeof(int) * ((size_t)p->nops + 1));
    int rc = FT_OK;
    if (!S.tm || !S.uses || !S.written || !S.retained || !S.resident || !S.produced || !S.topo_pos || !gid) {
        rc = ft__fail(st, FT_ENOMEM, 0, "out of memory");
        goto done;
    }
    for (int i = 0; i < p->nops; i++)
        S.topo_pos[p->topo[i]] = i;

    /* 1. one op per subgraph: a valid schedule early, whatever the time */
    for (int i = 0; i < p->nops; i++)
        gid[i] = i;
    S.first = 1;
    {
        plan P;
        if (plan_from_partition(&S, gid, p->nops, &P) == 0) {
            if (plan_cost(&S, &P) < INF)
                plan_offer(&S, &P);
            plan_free(&P);
        }
    }
    S.first = 0;
    /* 2. greedy fusion, then order and retention */
    if (!out_of_time(&S)) {
        greedy_fusion(&S, gid);
        int ng = compact_gids(gid, p->nops);
        plan P;
        if (plan_from_partition(&S, gid, ng, &P) == 0) {
            if (plan_retention_dp(&S, &P) < INF)
                plan_offer(&S, &P);
            plan_free(&P);
        }
    }
    /* 3. small problems: every ordered partition; larger ones: local search */
    if (p->nops <= 7 && !out_of_time(&S)) {
        exhaustive_rec(&S, gid, 0, 0);
    } else if (!out_of_time(&S)) {
        local_search(&S, gid, 400 * (int64_t)p->nops);
        int ng = compact_gids(gid, p->nops);
        plan P;
        if (plan_from_partition(&S, gid, ng, &P) == 0) {
            double t = plan_retention_dp(&S, &P);
            if (t < INF) {
                plan_offer(&S, &P);
                /* 4. recomputation of producers inside their consumers */
                if (recompute_pass(&S, &P, t) < t)
                    plan_offer(&S, &P);
            }
            plan_free(&P);
        }
    }

    if (!S.best_s) {
        rc = ft__fail(st, FT_EINVALID, FT_R_OOM, "%s: no valid schedule found: some op does not fit fast_memory_capacity %.17g even at the smallest granularity",
                      p->name ? p->name : "problem", p->capacity);
        goto done;
    }
    rc = ft_evaluate(p, S.best_s, S.model, ev, st);
    if (rc == FT_OK) {
        *out = S.best_s;
        S.best_s = NULL;
    }
done:
    ft_schedule_free(S.best_s);
    memo_free(&S);
    free(S.tm);
    free(S.keybuf);
    free(S.written);
    free(S.retained);
    free(S.resident);
    free(S.produced);
    free(S.uses);
    free(S.topo_pos);
    free(gid);
    return rc;
}
