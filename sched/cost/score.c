/* score.c - the exact scorer (score.h): a subgraph's latency at one configuration through a memo of tile costs (its closed form, a cost per kind of tile times its count, is closed.c), with k-step fast-forward and the periods that let like tiles and k-steps share a cost, equal to ft_evaluate's walk (the walker's fast path it uses is in walk.c). */
#include "cost/score.h"

#include <stdlib.h>
#include <string.h>

int64_t ft__order_tile(int kind, int64_t ntx, int64_t nty, int64_t pos)
{
    if (kind == ORD_RASTER || kind == ORD_SNAKE_ROW) {
        int64_t r = pos / ntx, i = pos % ntx;
        return r * ntx + ((kind == ORD_SNAKE_ROW && (r & 1)) ? ntx - 1 - i : i);
    }
    int64_t c = pos / nty, i = pos % nty;
    return ((kind == ORD_SNAKE_COL && (c & 1)) ? nty - 1 - i : i) * ntx + c;
}

/* Tile visiting order of kind `kind` over an ntx x nty grid into out. */
void ft__make_order(int kind, int64_t ntx, int64_t nty, int64_t *out)
{
    for (int64_t n = 0; n < ntx * nty; n++)
        out[n] = ft__order_tile(kind, ntx, nty, n);
}

/* ------------------------------------------------------------ scoring one subgraph */

/* The heights (hs) and widths (ws) of every tensor reference of g's ops,
 * outputs and inputs: the lengths that class its tile rows and columns
 * (ft__dim_class).  Returns their count (1 + inputs per op). */
int ft__sg_lengths(const ft_problem *p, const ft_subgraph *g, int64_t *hs, int64_t *ws)
{
    int n = 0;
    for (int j = 0; j < g->nops; j++) {
        const ft_op *op = &p->ops[g->ops[j]];
        for (int i = -1; i < op->ninputs; i++, n++) {
            const ft_tensor *T = &p->tensors[i < 0 ? op->output : op->inputs[i]];
            hs[n] = T->height;
            ws[n] = T->width;
        }
    }
    return n;
}

/* Class of tile row (or column) i of size t among tensor lengths lens[]:
 * rows that every tensor either fully covers or misses share a class (the
 * number of lengths covering them); a row cut by some tensor's edge is a
 * class of its own. */
int64_t ft__dim_class(int64_t i, int64_t t, const int64_t *lens, int n)
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

/* A rational scale num / den from tile coordinates to a tensor's along
 * one axis (reduced); den 0: not from the tile (a k slice, a whole
 * reduction); den -1: two different scales meet. */
typedef struct scale {
    int64_t num, den;
} scale;

/* The scale of op's input `in` along axis ax (0 rows, 1 columns) when its
 * output's is o (SPEC 4's needs: a Pointwise op passes ranges through, a
 * Layout scales them by input over output length, a MatMul takes its rows
 * from input 0 and its columns from input 1, the rest from k). */
static scale input_scale(const ft_problem *p, const ft_op *op, int in, int ax, scale o)
{
    if (o.den <= 0)
        return o;
    if (op->type == FT_OP_MATMUL)
        return (ax == 0) == (in == 0) ? o : (scale){0, 0};
    if (op->type != FT_OP_LAYOUT)
        return o;
    const ft_tensor *O = &p->tensors[op->output], *X = &p->tensors[op->inputs[0]];
    int64_t n = ax ? O->width : O->height, m = ax ? X->width : X->height;
    if (o.num > INT64_MAX / (m > 0 ? m : 1) || o.den > INT64_MAX / (n > 0 ? n : 1))
        return (scale){0, -1};
    int64_t a = o.num * m, b = o.den * n, d = ft__gcd64(a, b);
    return (scale){a / d, b / d};
}

/* Which ops of g (roles role[]) a period leaves out into off[]: with epi,
 * the epilogue ops (a tile's last k-step alone); k-loop ops shallower than
 * kmin (finished); and upstream ops that only ops left out need. */
static void period_off(const ft_problem *p, const ft_subgraph *g, const ft_role *role, int epi, int64_t kmin, unsigned char *off)
{
    for (int j = g->nops - 1; j >= 0; j--) {
        const ft_op *op = &p->ops[g->ops[j]];
        off[j] = (epi && role[j] == FT_ROLE_EPILOGUE) || (role[j] == FT_ROLE_KLOOP && op->k < kmin);
        if (role[j] != FT_ROLE_UPSTREAM)
            continue;
        off[j] = 1;
        for (int q = j + 1; q < g->nops && off[j]; q++)
            for (int i = 0; i < p->ops[g->ops[q]].ninputs; i++)
                if (!off[q] && p->ops[g->ops[q]].inputs[i] == op->output)
                    off[j] = 0;
    }
}

/* l with the denominator of scale u taken in (least common multiple), 0
 * when u is two scales meeting (den -1) or the result passes max. */
static int64_t period_take(int64_t l, scale u, int64_t max)
{
    if (u.den == -1)
        return 0;
    if (u.den > 0) {
        l = l / ft__gcd64(l, u.den) * u.den;
        if (l > max)
            return 0;
    }
    return l;
}

/* Whether every tensor that ops of g not left out (off[]) read twice is
 * read at one scale: in[] the scale of each input (inputs numbered op by
 * op, nax axes each). */
static int reads_agree(const ft_problem *p, const ft_subgraph *g, const unsigned char *off, const scale *in, int nax)
{
    for (int j = 0, sj = 0; j < g->nops; sj += p->ops[g->ops[j]].ninputs, j++) {
        const ft_op *a = &p->ops[g->ops[j]];
        for (int i = 0; i < a->ninputs && !off[j]; i++)
            for (int q = j, sq = sj; q < g->nops; sq += p->ops[g->ops[q]].ninputs, q++) {
                const ft_op *b = &p->ops[g->ops[q]];
                for (int k = 0; k < b->ninputs && !off[q]; k++)
                    for (int ax = 0; ax < nax && b->inputs[k] == a->inputs[i]; ax++) {
                        scale u = in[(sj + i) * nax + ax], v = in[(sq + k) * nax + ax];
                        if (u.num != v.num || u.den != v.den)
                            return 0;
                    }
            }
    }
    return 1;
}

/* The scale of output t of op j from g's later ops' needs not left out
 * (off[]), their own scales sc[] (nax axes each, axis ax here) taken
 * through inscale; {0, -2} when none needs it, {0, -1} when two differ. */
typedef scale (*in_scale_fn)(const ft_problem *p, const ft_op *op, ft_role role, int in, int ax, const scale *o);

static scale period_need(const ft_problem *p, const ft_subgraph *g, const ft_role *role, const unsigned char *off, const scale *sc, int nax,
                         int j, int ax, in_scale_fn inscale)
{
    int t = p->ops[g->ops[j]].output;
    scale s = {0, -2}; /* none seen yet */
    for (int q = j + 1; q < g->nops; q++) {
        const ft_op *c = &p->ops[g->ops[q]];
        for (int i = 0; i < c->ninputs && !off[q]; i++)
            if (c->inputs[i] == t) {
                scale u = inscale(p, c, role[q], i, ax, sc + (size_t)q * nax);
                if (s.den == -2)
                    s = u;
                else if (s.num != u.num || s.den != u.den)
                    s = (scale){0, -1};
            }
    }
    return s;
}

/* input_scale along one axis (o: the output's scale along it), as an
 * in_scale_fn. */
static scale tile_input_scale(const ft_problem *p, const ft_op *op, ft_role role, int in, int ax, const scale *o)
{
    (void)role;
    return input_scale(p, op, in, ax, *o);
}

/* Scratch of the period functions: per op a scale per axis, per input a
 * scale per axis, per op a flag.  NULL on OOM. */
static scale *period_scratch(const ft_problem *p, const ft_subgraph *g, int nax, scale **in, unsigned char **off)
{
    size_t nin = 0;
    for (int j = 0; j < g->nops; j++)
        nin += (size_t)p->ops[g->ops[j]].ninputs;
    scale *sc = ft__malloc(sizeof(scale) * ((size_t)(g->nops + 1) + nin) * (size_t)nax + (size_t)g->nops + 1);
    if (!sc)
        return NULL;
    *in = sc + (size_t)(g->nops + 1) * nax;
    *off = (unsigned char *)(*in + nin * (size_t)nax);
    return sc;
}

/* The period of like tiles along axis ax of subgraph g (roles role[]) that
 * Layout ops mix (mixinfo.period): the scale of each tensor from tile
 * coordinates, from the tile-sized outputs (k-loop and epilogue ops, scale
 * 1) back through their needs, must be one per tensor; a shift of the
 * tile by a multiple of every scale's denominator then shifts every range
 * by whole elements.  The least common multiple of the denominators, or 0
 * when two scales meet on a tensor or it passes FT_SCORE_PERIOD_MAX.
 * no_epi: as the interior k-steps see it (mixinfo.iperiod), without the
 * epilogue ops and what only they need (period_off). */
static int64_t layout_period(const ft_problem *p, const ft_subgraph *g, const ft_role *role, int ax, int no_epi)
{
    scale *in;
    unsigned char *off;
    scale *sc = period_scratch(p, g, 1, &in, &off);
    if (!sc)
        return 0;
    period_off(p, g, role, no_epi, 0, off);
    int64_t l = 1;
    for (int j = g->nops - 1; j >= 0; j--) {
        if (off[j])
            continue;
        scale s = role[j] == FT_ROLE_KLOOP || role[j] == FT_ROLE_EPILOGUE ? (scale){1, 1} : period_need(p, g, role, off, sc, 1, j, ax, tile_input_scale);
        sc[j] = s.den == -2 ? (scale){0, 0} : s;
        l = period_take(l, sc[j], FT_SCORE_PERIOD_MAX);
    }
    /* the ops' inputs, from outside or not, meet their scales here too */
    for (int j = 0, sj = 0; j < g->nops; sj += p->ops[g->ops[j]].ninputs, j++)
        for (int i = 0; i < p->ops[g->ops[j]].ninputs; i++) {
            in[sj + i] = off[j] ? (scale){0, 0} : input_scale(p, &p->ops[g->ops[j]], i, ax, sc[j]);
            if (!off[j])
                l = l ? period_take(l, in[sj + i], FT_SCORE_PERIOD_MAX) : 0;
        }
    /* two ops reading one outside tensor at different scales */
    if (l && !reads_agree(p, g, off, in, 1))
        l = 0;
    ft__free(sc);
    return l;
}

/* The scale of op's input `in` along axis ax from the k slice, when its
 * output's is o[ax] (den 0: not set by the k slice): a k-loop MatMul's
 * slice sets input 0's columns and input 1's rows (scale 1); other ops as
 * input_scale.  den -1 where an input's range along a scaled axis might be
 * clipped (an input of another length than the output along it: a
 * broadcast, a MatMul of mismatched shapes). */
static scale ks_input_scale(const ft_problem *p, const ft_op *op, ft_role role, int in, int ax, const scale *o)
{
    const ft_tensor *X = &p->tensors[op->inputs[in]], *O = &p->tensors[op->output];
    const int64_t xl = ax ? X->width : X->height, ol = ax ? O->width : O->height;
    if (op->type == FT_OP_MATMUL && role == FT_ROLE_KLOOP) {
        if ((in == 0) == (ax == 1))
            return xl == op->k ? (scale){1, 1} : (scale){0, -1};
        return (scale){0, 0};
    }
    scale u = input_scale(p, op, in, ax, o[ax]);
    if (u.den > 0 && op->type != FT_OP_LAYOUT && xl != ol)
        return (scale){0, -1};
    return u;
}

/* The period of like k-steps of subgraph g (roles role[]) in k elements
 * while only its k-loop MatMuls of depth at least kmin run (mixinfo.kper,
 * .kper_last): the scale from the k slice of every tensor axis, from those
 * MatMuls' inputs back through the needs, must be one per tensor axis (a
 * range set by the k slice and one set otherwise, merged into one region,
 * would not shift alike), and a tensor read twice must be read at one
 * scale (slices compare equal, or not, alike); a shift of the k slice by a
 * multiple of every scale's denominator then shifts every range by whole
 * elements, and no range it sets is clipped (ks_input_scale).  Ops that do
 * not run then do not count: epilogue ops (a tile's last k-step only,
 * which mode 4 always derives), shallower k-loop MatMuls (finished) and
 * upstream ops that only they need.  The least common multiple of the
 * denominators (1 when no Layout scales a k slice), or 0 when the scales
 * disagree or it passes FT_WALK_KPER_MAX. */
static int64_t ks_period(const ft_problem *p, const ft_subgraph *g, const ft_role *role, int64_t kmin)
{
    scale *in;
    unsigned char *off;
    scale *sc = period_scratch(p, g, 2, &in, &off);
    if (!sc)
        return 0;
    period_off(p, g, role, 1, kmin, off);
    int64_t l = 1;
    for (int j = g->nops - 1; j >= 0; j--)
        for (int ax = 0; ax < 2 && !off[j]; ax++) {
            /* a k-loop op's own output: the tile's rows and columns */
            scale s = role[j] == FT_ROLE_KLOOP ? (scale){0, 0} : period_need(p, g, role, off, sc, 2, j, ax, ks_input_scale);
            sc[2 * j + ax] = s.den == -2 ? (scale){0, 0} : s;
            l = period_take(l, sc[2 * j + ax], FT_WALK_KPER_MAX);
        }
    /* every input's scale, from outside or not */
    for (int j = 0, sj = 0; j < g->nops; sj += p->ops[g->ops[j]].ninputs, j++)
        for (int i = 0; i < p->ops[g->ops[j]].ninputs; i++)
            for (int ax = 0; ax < 2; ax++) {
                in[2 * (sj + i) + ax] = off[j] ? (scale){0, 0} : ks_input_scale(p, &p->ops[g->ops[j]], role[j], i, ax, sc + 2 * j);
                if (!off[j])
                    l = l ? period_take(l, in[2 * (sj + i) + ax], FT_WALK_KPER_MAX) : 0;
            }
    /* two reads of one tensor at different scales */
    if (l && !reads_agree(p, g, off, in, 2))
        l = 0;
    ft__free(sc);
    return l;
}

/* ft__walk_tile's fast-forward mode for walk w of g under mx: 1 where no
 * axis is mixed, 2 where only the first and last k-steps mix, 3 where
 * interior k-steps mix boundary tensors only; else (a Layout scales a
 * tensor made inside) 4 with w->kper set where mx->kper proves a period
 * of k-steps, 0 (every k-step derived) where not. */
int ft__ff_mode(const mixinfo *mx, ft_walk *w, const ft_subgraph *g)
{
    if (!mx->rows && !mx->cols)
        return 1;
    if (mx->interior == 0)
        return 2;
    if (mx->interior == 1)
        return 3;
    if (mx->kper <= 0 && mx->kper_last <= 0)
        return 0;
    w->kper = mx->kper > 0 ? mx->kper / ft__gcd64(mx->kper, g->k) : 0;
    w->kper_last = mx->kper_last > 0 ? mx->kper_last / ft__gcd64(mx->kper_last, g->k) : 0;
    return 4;
}

/* The memo generation for scoring subgraph g through walker w (its tensor
 * flags), mx and figs: the current one when nothing a tile's cost depends
 * on changed since the last score (the ops, their granularity, the
 * context's flags, the mixing, the problem's timing terms; the traversal
 * order is not in it: a tile's cost after its predecessor does not depend
 * on the order that put them there, so the four orders of one granularity
 * share their kinds) and the memo is at most a quarter full; else a new
 * one. */
uint64_t ft__memo_gen(ft__scorer *sc, const ft_walk *w, const mixinfo *mx, const ft_subgraph *g, int figs)
{
    const ft_problem *p = sc->p;
    uint64_t h = 1469598103934665603ULL;
#define MIX(v) (h = (h ^ (uint64_t)(v)) * 1099511628211ULL)
    MIX(sc->model);
    MIX(figs);
    MIX(g->w);
    MIX(g->h);
    MIX(g->k);
    MIX(g->nops);
    for (int j = 0; j < g->nops; j++)
        MIX(g->ops[j]);
    MIX(mx->rows);
    MIX(mx->cols);
    MIX(mx->interior);
    MIX(mx->period[0]);
    MIX(mx->period[1]);
    MIX(mx->kper);
    MIX(mx->kper_last);
    MIX(mx->iperiod[0]);
    MIX(mx->iperiod[1]);
    size_t nb = 4 * (size_t)p->ntensors;
    for (size_t i = 0; i < nb; i += 8) {
        uint64_t word = 0;
        memcpy(&word, w->tbits + i, nb - i < 8 ? nb - i : 8);
        MIX(word);
    }
    uint64_t t[sizeof p->timing / 8 + 1];
    memset(t, 0, sizeof t);
    memcpy(t, &p->timing, sizeof p->timing);
    for (size_t i = 0; i < sizeof t / 8; i++)
        MIX(t[i]);
    /* the doubles' bits (a capacity near DBL_MAX scaled to an integer
     * was out of range: fuzz/corpus/schedule/capacity-1e308) */
    uint64_t bits;
    memcpy(&bits, &p->capacity, sizeof bits);
    MIX(bits);
    memcpy(&bits, &p->bandwidth, sizeof bits);
    MIX(bits);
#undef MIX
    if (h == sc->tmsig && sc->tmgen && sc->tmused <= FT_SCORE_TILE_MEMO / 4) {
        /* what the walks of this generation saw, though this one may
         * derive nothing */
        sc->kinds_differ |= sc->tmkinds;
        return sc->tmgen;
    }
    sc->tmsig = h;
    sc->tmused = 0;
    sc->tmkinds = 0;
    return ++sc->tmgen;
}

/* An interior memo entry (ft__scorer.im): the figures of a tile's interior
 * k-steps (neither first nor last) keyed by ikey: the classes of its row
 * and column as the interior k-steps alone see them (closed_kind) and the
 * wave's size. */
struct imemo {
    int64_t key[3];
    ft__tile_figs mid;
    int64_t ws;
    uint64_t gen; /* valid when equal to the tile memo's generation */
};

/* The interior memo's entry for ikey, or NULL when it is half full; *fresh
 * set when it is new (its figures for the caller to fill). */
static imemo *imemo_slot(ft__scorer *sc, uint64_t gen, const int64_t ikey[3], int *fresh)
{
    uint64_t h = 1469598103934665603ULL;
    for (int i = 0; i < 3; i++)
        h = (h ^ (uint64_t)ikey[i]) * 1099511628211ULL;
    size_t slot = (size_t)(h ^ (h >> 29)) & (FT_SCORE_TILE_MEMO - 1);
    imemo *im = sc->im;
    if (sc->imgen != gen) {
        sc->imgen = gen;
        sc->imused = 0;
    }
    while (im[slot].gen == gen && memcmp(im[slot].key, ikey, 3 * sizeof *ikey) != 0)
        slot = (slot + 1) & (FT_SCORE_TILE_MEMO - 1);
    *fresh = im[slot].gen != gen;
    if (*fresh) {
        if (sc->imused >= FT_SCORE_TILE_MEMO / 2)
            return NULL;
        memcpy(im[slot].key, ikey, 3 * sizeof *ikey);
        im[slot].gen = gen;
        sc->imused++;
    }
    return &im[slot];
}

/* The memo entry of tile `tile` after tile `prev` (-1: none) at traversal
 * position pos, keyed by key (classes of the two tiles' rows and columns,
 * whether they share a row or a column, the wave's size): found, or
 * costed once by walking the tile (ft__walk_tile with fast-forward mode
 * ff) and added.  NULL when the memo is half full (*nused entries of
 * generation gen). */
tmemo *ft__tile_entry(tmemo *tm, uint64_t gen, const int64_t key[7], ft_walk *w, int64_t pos, int64_t prev, int64_t tile, int ff,
                         int figs, int *nused, ft__scorer *isc, const int64_t *ikey)
{
    uint64_t h = 1469598103934665603ULL;
    for (int i = 0; i < 7; i++)
        h = (h ^ (uint64_t)key[i]) * 1099511628211ULL;
    size_t slot = (size_t)(h ^ (h >> 29)) & (FT_SCORE_TILE_MEMO - 1);
    while (tm[slot].gen == gen && memcmp(tm[slot].key, key, 7 * sizeof *key) != 0)
        slot = (slot + 1) & (FT_SCORE_TILE_MEMO - 1);
    if (tm[slot].gen != gen) {
        if (*nused >= FT_SCORE_TILE_MEMO / 2)
            return NULL;
        memcpy(tm[slot].key, key, 7 * sizeof *key);
        ft__walk_at(w, pos);
        int fresh = 0;
        imemo *ie = ikey && w->nk >= 3 ? imemo_slot(isc, gen, ikey, &fresh) : NULL;
        if (ie && !fresh && ++isc->ihits)
            tm[slot].lat = ft__walk_tile_ends(w, prev, tile, &ie->mid, ie->ws, &tm[slot].ws, figs ? &tm[slot].figs : NULL);
        else
            tm[slot].lat = ft__walk_tile_split(w, prev, tile, &tm[slot].ws, ff, figs ? &tm[slot].figs : NULL, ie ? &ie->mid : NULL,
                                               ie ? &ie->ws : NULL);
        tm[slot].n = 0;
        tm[slot].call = 0;
        tm[slot].gen = gen;
        (*nused)++;
    }
    return &tm[slot];
}

/* Whether sc's caller asks it to score nothing more. */
static int stopped(ft__scorer *sc)
{
    return sc->stop && sc->stop(sc);
}

int ft__scorer_init(ft__scorer *sc, const ft_problem *p, ft_compute_model model)
{
    memset(sc, 0, sizeof *sc);
    sc->p = p;
    sc->model = model;
    ft__objective_init(&sc->ob, FT_OBJECTIVE_LATENCY);
    sc->tm = ft__calloc(FT_SCORE_TILE_MEMO, sizeof(tmemo));
    sc->im = ft__calloc(FT_SCORE_TILE_MEMO, sizeof(imemo));
    sc->power = ft__power_limited(p);
    if (sc->power)
        sc->pflags = ft__calloc(2, (size_t)p->ntensors + 1);
    if (!sc->tm || !sc->im || (sc->power && !sc->pflags)) {
        ft__scorer_free(sc);
        return -1;
    }
    return 0;
}

void ft__scorer_free(ft__scorer *sc)
{
    ft__free(sc->tm);
    ft__free(sc->im);
    ft__free(sc->pflags);
    memset(sc, 0, sizeof *sc);
}

int ft__sctx_alloc(sctx *x, int ntensors)
{
    size_t n = (size_t)ntensors + 1;
    unsigned char *b = ft__calloc(3, n);
    x->written = b;
    x->retained = b ? b + n : NULL;
    x->resident = b ? b + 2 * n : NULL;
    return b ? 0 : -1;
}

void ft__sctx_free(sctx *x)
{
    ft__free(x->written);
    memset(x, 0, sizeof *x);
}

double ft__score_tiles(ft__scorer *sc, const mixinfo *mx, ft_walk *w, const ft_subgraph *g, const int64_t *ord, int order,
                       double budget, ft__sg_acc *acc)
{
    const ft_problem *p = sc->p;
    tmemo *tm = sc->tm;
    uint64_t gen = ft__memo_gen(sc, w, mx, g, sc->power);
    sc->loaded = sc->written = 0;
    ft__sg_acc own;
    if (!acc)
        acc = &own;
    ft__sg_acc_init(acc, p);
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
    int nh = ft__sg_lengths(p, g, hs, ws), nw = nh;
    for (int64_t r = 0; r < nty; r++)
        rc[r] = mx->rows ? ((int64_t)1 << 40) + r : ft__dim_class(r, g->h, hs, nh);
    for (int64_t c = 0; c < ntx; c++)
        cc[c] = mx->cols ? ((int64_t)1 << 40) + c : ft__dim_class(c, g->w, ws, nw);
    int mixed = mx->rows || mx->cols, ff = ft__ff_mode(mx, w, g);
    double sum = 0;
    int64_t prev = -1, ntiles = ntx * nty;
    /* several units: tiles combine over waves, each tile at its wave's
     * share of the bandwidths (ft_timing); the wave's size is in the key */
    for (int64_t pos = 0; pos < ntiles; pos++) {
        int64_t tile = ord ? ord[pos] : ft__order_tile(order, ntx, nty, pos), r = tile / ntx, c = tile % ntx;
        int64_t key[7];
        key[6] = ft__wave_size(p, ntiles, pos);
        if (prev < 0) {
            key[0] = rc[r], key[1] = cc[c], key[2] = key[3] = -1, key[4] = key[5] = 0;
        } else {
            int64_t pr = prev / ntx, pc = prev % ntx;
            key[0] = rc[r], key[1] = cc[c], key[2] = rc[pr], key[3] = cc[pc], key[4] = pr == r, key[5] = pc == c;
        }
        tmemo *e = ft__tile_entry(tm, gen, key, w, pos, prev, tile, ff, sc->power, &sc->tmused, NULL, NULL);
        if (!e) {
            ft__free(rc);
            return -1;
        }
        if ((double)e->ws > p->capacity) {
            ft__free(rc);
            sc->tmkinds |= w->kinds_differ;
            if (ft__walk_irregular(w) && !mixed) {
                sc->tmsig = 0;
                return -1;
            }
            return INF;
        }
        ft__sg_acc_tile(acc, pos, e->lat);
        if (sc->power) {
            sc->loaded += e->figs.loaded;
            sc->written += e->figs.written;
        }
        sum = ft__sg_acc_total(acc);
        if (sum > budget)
            break;
        if ((pos & 0x1ff) == 0x1ff && stopped(sc)) {
            ft__free(rc);
            return INF;
        }
        prev = tile;
    }
    ft__free(rc);
    sc->tmkinds |= w->kinds_differ;
    if (ft__walk_irregular(w) && !mixed) {
        sc->tmsig = 0; /* the next score starts a new generation */
        return -1;
    }
    return sum;
}

void ft__probe_mixed(ft__scorer *sc, const sctx *x, ft_subgraph *g, mixinfo *mx)
{
    const ft_problem *p = sc->p;
    ft_walk *pw;
    ft_status pst;
    mx->rows = mx->cols = 0;
    mx->interior = 2;
    g->w = p->native_w;
    g->h = p->native_h;
    g->k = 1;
    g->order = NULL;
    g->norder = 0;
    mx->period[0] = mx->period[1] = 0;
    mx->iperiod[0] = mx->iperiod[1] = 0;
    mx->kper = mx->kper_last = 0;
    if (ft__walk_new(p, g, sc->model, x->written, x->retained, x->resident, &pw, &pst) == FT_OK) {
        ft__walk_mixed(pw, &mx->rows, &mx->cols, &mx->interior);
        for (int ax = 0; ax < 2; ax++)
            mx->period[ax] = pw->mixed_tag[ax] ? 0 : layout_period(p, g, pw->role, ax, 0);
        /* the interior k-steps alone (no epilogue): ikey */
        for (int ax = 0; ax < 2; ax++)
            mx->iperiod[ax] = pw->mixed_tag0[ax] ? 0 : layout_period(p, g, pw->role, ax, 1);
        if (!sc->no_kper) {
            int64_t kmax = 0;
            for (int j = 0; j < g->nops; j++)
                if (pw->role[j] == FT_ROLE_KLOOP && p->ops[g->ops[j]].k > kmax)
                    kmax = p->ops[g->ops[j]].k;
            mx->kper = ks_period(p, g, pw->role, 0);
            mx->kper_last = ks_period(p, g, pw->role, kmax);
        }
        ft_walk_free(pw);
    }
}

/* Every step of walk w (g at order ord, nk k-steps a tile) added to *acc
 * in order: the steps' total, any value > budget once it passes budget,
 * or INF on a capacity overflow or when sc->stop says so. */
static double score_steps(ft__scorer *sc, ft_walk *w, int64_t nk, double budget, ft__sg_acc *acc)
{
    ft_step stp;
    double sum = 0;
    ft__sg_acc_init(acc, sc->p);
    sc->loaded = sc->written = 0;
    while (ft_walk_next(w, &stp)) {
        if ((double)stp.working_set > sc->p->capacity)
            return INF;
        ft__sg_acc_step(acc, stp.index / nk, stp.kstep == nk - 1, stp.latency);
        sc->loaded += stp.loaded_elems;
        sc->written += stp.written_elems;
        sum = ft__sg_acc_total(acc);
        /* (a walk that stops inside the first tile has not seen every
         * need: assume the op order matters) */
        if (sum > budget) {
            if (stp.index < nk - 1)
                sc->kinds_differ = 1;
            break;
        }
        if ((stp.index & 0x3fff) == 0x3fff && stopped(sc))
            return INF;
    }
    return sum;
}

/* The configuration-independent counts of g in context x into *c (as
 * ft__ctx_counts), with flags, 2 x (ntensors + 1) zeroed bytes, as scratch
 * (left zeroed). */
static void ctx_counts_in(const ft_problem *p, const sctx *x, const ft_subgraph *g, unsigned char *flags,
                          ft__energy_counts *c)
{
    int nt = p->ntensors;
    unsigned char *produced = flags, *seen = flags + nt + 1;
    memset(c, 0, sizeof *c);
    ft__ops_work(p, g->ops, g->nops, &c->macs, &c->pointwise);
    for (int j = 0; j < g->nops; j++)
        produced[p->ops[g->ops[j]].output] = 1;
    int64_t reads, writes;
    ft__sg_footprint(p, g->ops, g->nops, produced, x->written, x->resident, seen, &reads, &writes);
    memset(flags, 0, 2 * ((size_t)nt + 1));
    c->fp_read = (double)reads;
    c->fp_write = (double)writes;
}

/* Latency lat of g (its steps' traffic in sc->loaded and sc->written) in
 * context x at the clock sc's power limit allows (ft__power_latency, as
 * ft_evaluate lengthens it). */
static double power_latency(ft__scorer *sc, const sctx *x, const ft_subgraph *g, double lat)
{
    ft__energy_counts e;
    ctx_counts_in(sc->p, x, g, sc->pflags, &e);
    e.loaded = (double)sc->loaded;
    e.written = (double)sc->written;
    e.latency = lat;
    return ft__power_latency(sc->p, &e);
}

double ft__score(ft__scorer *sc, const sctx *x, const mixinfo *mx, ft_subgraph *g, const cfg *c, double budget)
{
    const ft_problem *p = sc->p;
    /* past the deadline nothing new is scored: what is not memoised is
     * treated as infeasible (the one-op schedule was offered first) */
    if (stopped(sc))
        return INF;
    int64_t ntx, nty, nk;
    g->w = c->w;
    g->h = c->h;
    g->k = c->k;
    g->order = NULL;
    g->norder = 0;
    if (ft__sg_grid(p, g, NULL, &ntx, &nty, &nk))
        return INF;
    /* the tiles in order: from their positions (ft__order_tile) */
    ft_walk *w;
    ft_status st;
    double lat = INF;
    ft__sg_acc acc;
    /* besides its steps a subgraph pays the launch overhead and, with
     * double buffering, the pipeline's fill and drain (ft__sg_extra, as
     * ft_evaluate); at least ft__sg_fixed_least (a single step that moves
     * nothing pays no transfer latency: ft__sg_single) */
    const double fixed = ft__sg_fixed_least(p, 0, ntx * nty * nk), whole_budget = budget;
    budget -= fixed;
    double floor = 0; /* a cache the subgraph does not fit (ft_timing) */
    if (ft__walk_new(p, g, sc->model, x->written, x->retained, x->resident, &w, &st) == FT_OK) {
        floor = w->floor;
        lat = -1;
        if (!sc->walk_all && !sc->no_closed)
            lat = ft__score_closed(sc, mx, w, g, c->order, budget, &acc);
        if (lat >= 0)
            sc->closed++;
        else
            sc->fallbacks++;
        if (lat < 0 && !sc->walk_all)
            lat = ft__score_tiles(sc, mx, w, g, NULL, c->order, budget, &acc);
        sc->kinds_differ |= w->kinds_differ;
        sc->kskipped += w->kskipped;
        ft_walk_free(w);
        /* the memo cannot be used: every step, in order, unless there are
         * too many to walk */
        if (lat < 0 && ntx * nty * nk > FT_SCORE_STEP_CAP)
            lat = INF;
        if (lat < 0 && ft__walk_new(p, g, sc->model, x->written, x->retained, x->resident, &w, &st) == FT_OK) {
            w->order_kind = c->order; /* the tiles from their positions */
            lat = score_steps(sc, w, nk, budget, &acc);
            sc->kinds_differ |= w->kinds_differ;
            ft_walk_free(w);
        }
    }
    if (lat < 0)
        lat = INF; /* no memory for the step-by-step walk */
    if (lat < INF) {
        /* what the subgraph pays besides its steps, as ft_evaluate adds it
         * (ft__sg_acc_finish); under a pipeline, a single step overlaps
         * nothing (ft__sg_single).  A sum cut past the budget stays past
         * it. */
        double extra = fixed;
        int single = 0, past = lat > budget;
        if (p->timing.overlap == FT_OVERLAP_PIPELINE &&
            ft__walk_new(p, g, sc->model, x->written, x->retained, x->resident, &w, &st) == FT_OK) {
            int64_t n = ntx * nty, loaded0, written_last;
            double compute_last;
            ft__rates r0; /* the first wave's bandwidths, as ft_evaluate */
            ft__rates_share(&w->rates, ft__wave_size(p, n, 0), &r0);
            ft__walk_edges(w, 0, ft__order_tile(c->order, ntx, nty, n - 1), &loaded0, &written_last, &compute_last);
            single = n * nk == 1;
            if (single)
                lat = ft__sg_single(p, &r0, loaded0, written_last, compute_last);
            else
                extra = ft__sg_extra(p, &r0, loaded0, written_last, compute_last);
            ft_walk_free(w);
        }
        if (!single)
            lat = ft__sg_acc_finish(&acc, floor, extra);
        /* the closed form stops on its plain running sum, which may pass
         * the budget where the compensated sum of the same kinds rounds
         * to it (ft__score_closed) */
        if (past && lat <= whole_budget)
            lat = nextafter(whole_budget, INF);
        /* under a power limit, at the clock it allows (a latency past the
         * budget only grows past it) */
        else if (sc->power && !past)
            lat = power_latency(sc, x, g, lat);
    }
    sc->evals++;
    g->order = NULL;
    g->norder = 0;
    return lat;
}

/* Contract: score.h. */
int ft__ctx_counts(const ft_problem *p, const sctx *x, const ft_subgraph *g, ft__energy_counts *c)
{
    if (!p->energy.on) {
        memset(c, 0, sizeof *c);
        ft__ops_work(p, g->ops, g->nops, &c->macs, &c->pointwise);
        return 0;
    }
    unsigned char *flags = ft__calloc(2 * ((size_t)p->ntensors + 1), 1);
    if (!flags)
        return -1;
    ctx_counts_in(p, x, g, flags, c);
    ft__free(flags);
    return 0;
}

/* Contract: score.h. */
int ft__score_traffic(ft__scorer *sc, const sctx *x, const mixinfo *mx, ft_subgraph *g, const cfg *c, int64_t *loaded,
                      int64_t *written)
{
    const ft_problem *p = sc->p;
    int64_t ntx, nty, nk;
    *loaded = *written = 0;
    g->w = c->w, g->h = c->h, g->k = c->k;
    g->order = NULL;
    g->norder = 0;
    if (ft__sg_grid(p, g, NULL, &ntx, &nty, &nk))
        return -1;
    ft_walk *w;
    ft_status st;
    int done = 0;
    /* each kind of tile once, with its figures (ft__score_tiles' keys) */
    if (!sc->walk_all && ft__walk_new(p, g, sc->model, x->written, x->retained, x->resident, &w, &st) == FT_OK) {
        uint64_t gen = ft__memo_gen(sc, w, mx, g, 1);
        int nrefs = 0;
        for (int j = 0; j < g->nops; j++)
            nrefs += 1 + p->ops[g->ops[j]].ninputs;
        int64_t *rc = ft__malloc(sizeof(int64_t) * (size_t)(nty + ntx + 2 * nrefs));
        if (rc) {
            int64_t *cc = rc + nty, *hs = cc + ntx, *ws = hs + nrefs;
            int nh = ft__sg_lengths(p, g, hs, ws);
            for (int64_t r = 0; r < nty; r++)
                rc[r] = mx->rows ? ((int64_t)1 << 40) + r : ft__dim_class(r, g->h, hs, nh);
            for (int64_t q = 0; q < ntx; q++)
                cc[q] = mx->cols ? ((int64_t)1 << 40) + q : ft__dim_class(q, g->w, ws, nh);
            int ff = ft__ff_mode(mx, w, g);
            int64_t prev = -1, ntiles = ntx * nty, ld = 0, wr = 0;
            done = 1;
            for (int64_t pos = 0; pos < ntiles && done; pos++) {
                int64_t tile = ft__order_tile(c->order, ntx, nty, pos), r = tile / ntx, q = tile % ntx, key[7];
                key[6] = ft__wave_size(p, ntiles, pos);
                key[0] = rc[r], key[1] = cc[q];
                key[2] = prev < 0 ? -1 : rc[prev / ntx], key[3] = prev < 0 ? -1 : cc[prev % ntx];
                key[4] = prev >= 0 && prev / ntx == r, key[5] = prev >= 0 && prev % ntx == q;
                tmemo *e = ft__tile_entry(sc->tm, gen, key, w, pos, prev, tile, ff, 1, &sc->tmused, NULL, NULL);
                if (!e || ((pos & 0x1ff) == 0x1ff && stopped(sc)))
                    done = 0;
                else
                    ld += e->figs.loaded, wr += e->figs.written;
                prev = tile;
            }
            ft__free(rc);
            /* derived from like tiles: exact only for a regular walk */
            if (done && ft__walk_irregular(w) && !(mx->rows || mx->cols))
                done = 0;
            if (!done)
                sc->tmsig = 0; /* the next score starts a new generation */
            *loaded = ld, *written = wr;
        }
        ft_walk_free(w);
    }
    if (done)
        return 0;
    /* every step, in order */
    if (ntx * nty * nk > FT_SCORE_STEP_CAP || stopped(sc))
        return -1;
    if (ft__walk_new(p, g, sc->model, x->written, x->retained, x->resident, &w, &st) != FT_OK)
        return -1;
    w->order_kind = c->order;
    ft_step stp;
    *loaded = *written = 0;
    while (ft_walk_next(w, &stp)) {
        *loaded += stp.loaded_elems;
        *written += stp.written_elems;
    }
    ft_walk_free(w);
    return 0;
}

/* Contract: score.h. */
double ft__sg_objective_bound(const ft__scorer *sc, const ft__energy_counts *base, double lat_lb, double reads_lb, double writes_lb)
{
    if (sc->ob.kind == FT_OBJECTIVE_LATENCY)
        return lat_lb;
    ft__energy_counts c = *base;
    c.loaded = reads_lb;
    c.written = writes_lb;
    c.latency = lat_lb;
    return ft__objective_of(sc->p, &sc->ob, &c);
}

/* Contract: score.h. */
double ft__sg_objective(ft__scorer *sc, const sctx *x, const mixinfo *mx, ft_subgraph *g, const cfg *c, const ft__energy_counts *base,
                        double budget)
{
    if (sc->ob.kind == FT_OBJECTIVE_LATENCY)
        return ft__score(sc, x, mx, g, c, budget);
    /* the latency may take what the budget leaves past the value's other
     * terms (at no traffic): beyond that the value is past the budget */
    ft__energy_counts k = *base;
    k.loaded = k.written = k.latency = 0;
    double rest = ft__objective_of(sc->p, &sc->ob, &k);
    double per = sc->ob.wt + sc->ob.we * (sc->p->energy.static_watts + sc->p->energy.active_watts) * sc->p->energy.seconds_per_unit;
    double lat_budget = per > 0 && budget < INF ? (budget - rest) / per : INF;
    double lat = ft__score(sc, x, mx, g, c, lat_budget < 0 ? 0 : lat_budget);
    if (lat == INF)
        return INF;
    k.latency = lat;
    if (lat > lat_budget)
        return fmax(ft__objective_of(sc->p, &sc->ob, &k), nextafter(budget, INF));
    int64_t ld, wr;
    if (ft__score_traffic(sc, x, mx, g, c, &ld, &wr))
        return INF;
    k.loaded = (double)ld;
    k.written = (double)wr;
    return ft__objective_of(sc->p, &sc->ob, &k);
}
