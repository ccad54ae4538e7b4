/* score.c - the exact scorer (score.h): a subgraph's latency at one configuration in closed form (a cost per kind of tile, times its count; ft_evaluate's figures the same way) or through a memo of tile costs, with k-step fast-forward, equal to ft_evaluate's walk (the walker's fast path it uses is in walk.c). */
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
 * (dim_class).  Returns their count (1 + inputs per op). */
static int sg_lengths(const ft_problem *p, const ft_subgraph *g, int64_t *hs, int64_t *ws)
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

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
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
    int64_t a = o.num * m, b = o.den * n, d = gcd64(a, b);
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
        l = l / gcd64(l, u.den) * u.den;
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
static int ff_mode(const mixinfo *mx, ft_walk *w, const ft_subgraph *g)
{
    if (!mx->rows && !mx->cols)
        return 1;
    if (mx->interior == 0)
        return 2;
    if (mx->interior == 1)
        return 3;
    if (mx->kper <= 0 && mx->kper_last <= 0)
        return 0;
    w->kper = mx->kper > 0 ? mx->kper / gcd64(mx->kper, g->k) : 0;
    w->kper_last = mx->kper_last > 0 ? mx->kper_last / gcd64(mx->kper_last, g->k) : 0;
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
static uint64_t memo_gen(ft__scorer *sc, const ft_walk *w, const mixinfo *mx, const ft_subgraph *g, int figs)
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
    MIX(p->capacity * 1e3);
    MIX(p->bandwidth * 1e3);
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

/* A tile memo entry: the cost of a tile given the classes of its row and
 * column and of the tile before it. */
struct tmemo {
    int64_t key[7];
    double lat;
    int64_t ws;
    ft__tile_figs figs; /* with figures (ft__eval_closed) */
    int64_t n;     /* the closed form: tiles of this kind in call `call` */
    uint64_t call;
    uint64_t gen;  /* valid when equal to the scorer's generation */
};

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
static tmemo *tile_entry(tmemo *tm, uint64_t gen, const int64_t key[7], ft_walk *w, int64_t pos, int64_t prev, int64_t tile, int ff,
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
    sc->tm = ft__calloc(FT_SCORE_TILE_MEMO, sizeof(tmemo));
    sc->im = ft__calloc(FT_SCORE_TILE_MEMO, sizeof(imemo));
    if (!sc->tm || !sc->im) {
        ft__scorer_free(sc);
        return -1;
    }
    return 0;
}

void ft__scorer_free(ft__scorer *sc)
{
    ft__free(sc->tm);
    ft__free(sc->im);
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
    uint64_t gen = memo_gen(sc, w, mx, g, 0);
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
    int nh = sg_lengths(p, g, hs, ws), nw = nh;
    for (int64_t r = 0; r < nty; r++)
        rc[r] = mx->rows ? ((int64_t)1 << 40) + r : dim_class(r, g->h, hs, nh);
    for (int64_t c = 0; c < ntx; c++)
        cc[c] = mx->cols ? ((int64_t)1 << 40) + c : dim_class(c, g->w, ws, nw);
    int mixed = mx->rows || mx->cols, ff = ff_mode(mx, w, g);
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
        tmemo *e = tile_entry(tm, gen, key, w, pos, prev, tile, ff, 0, &sc->tmused, NULL, NULL);
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

/* ------------------------------------------------------------ the closed form */

/* Runs of like tiles along one axis of len tiles: per run, its first index
 * (start[], each run ending where the next starts, the last at len) and
 * the class its tiles share (cls[]), and the period per: two tiles of a
 * run are alike when their indices are equal modulo per (1 where the axis
 * is not mixed).  The class of index i is cls * per + i mod per. */
typedef struct axis_runs {
    int n;
    int64_t len, per;
    int64_t *start, *cls;
} axis_runs;

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Fill ar for len tiles of size t classed by dim_class among the tensor
 * lengths lens[] (nl of them): a class can change only at a tile a length
 * cuts or begins after, so the runs start at 0 and at floor(len / t) and
 * floor(len / t) + 1 for each length (at most 2 nl + 1 runs).  absolute:
 * every index a run and class of its own (as the memo keys a mixed axis). */
static void axis_runs_fill(axis_runs *ar, int64_t len, int64_t t, const int64_t *lens, int nl, int absolute, int64_t per)
{
    ar->len = len;
    ar->per = absolute ? 1 : per;
    if (absolute) {
        for (int64_t i = 0; i < len; i++)
            ar->start[i] = i, ar->cls[i] = ((int64_t)1 << 40) + i;
        ar->n = (int)len;
        return;
    }
    int m = 0;
    ar->start[m++] = 0;
    for (int j = 0; j < nl; j++)
        for (int d = 0; d < 2; d++) {
            int64_t b = lens[j] / t + d;
            if (b > 0 && b < len)
                ar->start[m++] = b;
        }
    qsort(ar->start, (size_t)m, sizeof *ar->start, cmp_i64);
    int u = 0;
    for (int i = 0; i < m; i++)
        if (u == 0 || ar->start[i] != ar->start[u - 1])
            ar->start[u++] = ar->start[i];
    for (int i = 0; i < u; i++)
        ar->cls[i] = dim_class(ar->start[i], t, lens, nl);
    ar->n = u;
}

static inline int64_t run_end(const axis_runs *ar, int i) { return i + 1 < ar->n ? ar->start[i + 1] : ar->len; }

/* The class of index i along ar (its run's, and its place in the period). */
static int64_t run_class(const axis_runs *ar, int64_t i)
{
    int lo = 0, hi = ar->n - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (ar->start[mid] <= i)
            lo = mid;
        else
            hi = mid - 1;
    }
    return ar->cls[lo] * ar->per + i % ar->per;
}

/* The closed form's walk over kinds of tile (ft__score_closed). */
typedef struct closed {
    ft__scorer *sc;
    ft_walk *w;
    const axis_runs *ro, *ri; /* runs of the outer and inner axis of the traversal */
    int rows_outer;           /* the outer axis is the rows (raster, snake by rows) */
    int64_t ntx, wave;
    uint64_t gen;
    uint64_t call;            /* this call's stamp on the kinds it counts */
    int nused, fail;
    int ff;                   /* ft__walk_tile's fast-forward mode */
    int figs;                 /* each kind's figures too (ft__eval_closed) */
    tmemo **used;             /* the kinds costed, nused of them */
    /* several units (closed_waves): the tiles in traversal order */
    int64_t units, ntiles, lastw; /* lastw: where the last, smaller wave starts (ntiles: none) */
    int64_t pos;              /* tiles added so far */
    double cur;               /* the open wave's slowest tile */
    ksum done;                /* the finished waves' slowest tiles */
    /* the interior memo (ikey): used where an axis keyed by absolute index
     * is not so for the interior k-steps (only the epilogue mixes it) */
    int imemo, iabs[2], nlens;
    int64_t iper[2], isize[2];
    const int64_t *ilens[2];
    /* one unit: the caller's budget and the sum of the kinds counted so
     * far (count x latency, a part of the total); past the budget, or at a
     * kind past the capacity (any units), the run stops (over) */
    double budget, sum;
    int over;
} closed;

/* count tiles like tile (o, i) after tile (po, pi) (po < 0: none), o along
 * the outer axis, i along the inner one: the kind costed once (tile_entry,
 * keyed as ft__score_tiles keys it) and counted. */
static tmemo *closed_kind(closed *C, int64_t count, int64_t o, int64_t i, int64_t po, int64_t pi, int64_t wave, int64_t pos)
{
    if (count <= 0 || C->fail || C->over)
        return NULL;
    const axis_runs *ar = C->rows_outer ? C->ro : C->ri, *ac = C->rows_outer ? C->ri : C->ro;
    int64_t r = C->rows_outer ? o : i, c = C->rows_outer ? i : o;
    int64_t key[7], prev = -1;
    key[0] = run_class(ar, r);
    key[1] = run_class(ac, c);
    key[6] = wave;
    if (po < 0) {
        key[2] = key[3] = -1, key[4] = key[5] = 0;
    } else {
        int64_t pr = C->rows_outer ? po : pi, pc = C->rows_outer ? pi : po;
        key[2] = run_class(ar, pr);
        key[3] = run_class(ac, pc);
        key[4] = pr == r, key[5] = pc == c;
        prev = pr * C->ntx + pc;
    }
    int64_t ikey[3] = {0, 0, wave};
    if (C->imemo) /* the interior k-steps' classes (mixinfo.iperiod) */
        for (int ax = 0; ax < 2; ax++) {
            int64_t i = ax ? c : r;
            ikey[ax] = C->iabs[ax] ? ((int64_t)1 << 40) + i : dim_class(i, C->isize[ax], C->ilens[ax], C->nlens) * C->iper[ax] + i % C->iper[ax];
        }
    tmemo *e = tile_entry(C->sc->tm, C->gen, key, C->w, pos, prev, r * C->ntx + c, C->ff, C->figs, &C->sc->tmused, C->sc, C->imemo ? ikey : NULL);
    if (!e) {
        C->fail = 1;
        return NULL;
    }
    if (e->call != C->call) {
        /* first seen in this call (the memo may hold it from another order) */
        e->call = C->call;
        e->n = 0;
        C->used[C->nused++] = e;
    }
    e->n += count;
    /* a tile past the capacity makes the configuration infeasible
     * (ft__score_closed): no other kind need be costed */
    if ((double)e->ws > C->sc->p->capacity)
        C->over = 1;
    if (C->units == 1) {
        C->sum += (double)count * e->lat;
        C->over |= C->sum > C->budget;
    }
    return e;
}

/* closed_kind for one unit (every tile in the one wave size C->wave). */
static void closed_add(closed *C, int64_t count, int64_t o, int64_t i, int64_t po, int64_t pi)
{
    closed_kind(C, count, o, i, po, pi, C->wave, 0);
}

/* ------------------------------------------------------------ waves in closed form (several units) */

/* Add n tiles of latency lat in traversal order to the waves of C (each
 * wave's slowest tile, ft__waves): the open wave's share, whole waves of
 * lat times their count, the rest into a new open wave. */
static void waves_add(closed *C, double lat, int64_t n)
{
    const int64_t u = C->units;
    while (n > 0) {
        int64_t room = u - C->pos % u, a = n < room ? n : room;
        if (C->pos % u == 0 && C->pos > 0) { /* a tile opens a wave: the last one is done */
            ksum_add(&C->done, C->cur);
            C->cur = 0;
        }
        if (lat > C->cur)
            C->cur = lat;
        C->pos += a;
        n -= a;
        if (n >= u && C->pos % u == 0) {
            /* whole waves of lat alone: the open one closes first */
            int64_t m = n / u - 1; /* the last of them stays open */
            ksum_add(&C->done, C->cur);
            C->cur = lat;
            if (m > 0)
                ksum_add_n(&C->done, m, &(ksum){lat, 0});
            C->pos += (m + 1) * u;
            n -= (m + 1) * u;
        }
    }
}

/* A segment of like tiles in traversal order: count tiles like (o, i)
 * after (po, pi), along the line (count > 1: each after its neighbour). */
typedef struct wseg {
    int64_t o, i, po, pi, count;
    tmemo *e; /* its kind at the full wave size (closed_waves) */
} wseg;

/* Most segments a block of lines may have (closed_waves); more: the
 * closed form does not apply (the memo walks every tile). */
enum { WAVE_SEGS = 4096 };

/* The segments of line o (its first tile after (po, pi), po < 0: none)
 * into seg[] from *n: the line's first tile, and per run of the inner
 * axis its first tile after the run before it and the rest after their
 * neighbour (one segment: an inner axis of period 1).  0, or -1 when they
 * do not fit. */
static int line_segs(const closed *C, int64_t o, int rev, int64_t po, int64_t pi, wseg *seg, int *n)
{
    const axis_runs *ri = C->ri;
    int64_t ni = ri->len, first = rev ? ni - 1 : 0;
#define SEG(O, I, PO, PI, CNT)                                                                                                             do {                                                                                                                                       if ((CNT) > 0) {                                                                                                                           if (*n >= WAVE_SEGS)                                                                                                                       return -1;                                                                                                                         seg[(*n)++] = (wseg){O, I, PO, PI, CNT, NULL};                                                                                     }                                                                                                                                  } while (0)
    SEG(o, first, po, pi, 1);
    for (int jj = 0; jj < ri->n; jj++) {
        int j = rev ? ri->n - 1 - jj : jj;
        int64_t a = ri->start[j], b = run_end(ri, j); /* [a, b) */
        if (!rev) {
            if (a > 0)
                SEG(o, a, o, a - 1, 1);
            SEG(o, a + 1, o, a, b - a - 1);
        } else {
            if (b < ni)
                SEG(o, b - 1, o, b, 1);
            SEG(o, b - 2, o, b - 1, b - a - 1);
        }
    }
#undef SEG
    return 0;
}

/* Add segment sg (its kind at the full wave size in sg->e, or NULL) n
 * times in a row... once, at C->pos: its kinds (the part past C->lastw at
 * the last wave's size, walked there) counted and its tiles added to the
 * waves. */
static void seg_add(closed *C, wseg *sg)
{
    int64_t c = sg->count;
    if (C->pos < C->lastw) {
        int64_t a = C->lastw - C->pos < c ? C->lastw - C->pos : c;
        tmemo *e = closed_kind(C, a, sg->o, sg->i, sg->po, sg->pi, ft__wave_size(C->sc->p, C->ntiles, C->pos), C->pos);
        if (!e)
            return;
        waves_add(C, e->lat, a);
        c -= a;
    }
    if (c > 0) {
        tmemo *e = closed_kind(C, c, sg->o, sg->i, sg->po, sg->pi, ft__wave_size(C->sc->p, C->ntiles, C->pos), C->pos);
        if (!e)
            return;
        waves_add(C, e->lat, c);
    }
}

/* Add `reps` repetitions of the block of segments seg[0..n) (B tiles,
 * every one before C->lastw) to the waves and counts of C: the waves'
 * offsets cycle every T = units / gcd(B, units) blocks, and from the
 * second cycle on each adds the same waves (a cycle starts and ends at the
 * same offset, with the same tiles open), so two cycles are added tile
 * segment by segment and the others as the second's sum times their
 * count. */
static void block_add(closed *C, wseg *seg, int n, int64_t B, int64_t reps)
{
    if (reps <= 0 || C->fail)
        return;
    const int64_t T = C->units / gcd64(B, C->units);
    int64_t wave = ft__wave_size(C->sc->p, C->ntiles, C->pos);
    for (int s = 0; s < n && !C->fail && !C->over; s++)
        seg[s].e = closed_kind(C, seg[s].count * reps, seg[s].o, seg[s].i, seg[s].po, seg[s].pi, wave, C->pos);
    if (C->fail || C->over)
        return;
    int64_t cycles = reps / T;
    int64_t explicit_ = reps;
    if (cycles >= 3) {
        for (int64_t b = 0; b < T; b++)
            for (int s = 0; s < n; s++)
                waves_add(C, seg[s].e->lat, seg[s].count);
        ksum saved = C->done;
        C->done = (ksum){0, 0};
        for (int64_t b = 0; b < T; b++)
            for (int s = 0; s < n; s++)
                waves_add(C, seg[s].e->lat, seg[s].count);
        ksum cyc = C->done;
        C->done = saved;
        ksum_add_n(&C->done, cycles - 1, &cyc);
        C->pos += (cycles - 2) * T * B;
        explicit_ = reps - cycles * T;
    }
    for (int64_t b = 0; b < explicit_; b++)
        for (int s = 0; s < n; s++)
            waves_add(C, seg[s].e->lat, seg[s].count);
}

/* Lines lo .. hi - 1 of one outer run (line lo's first tile after the last
 * of line lo - 1, or none at line 0) added in traversal order. */
static void lines_add(closed *C, int64_t lo, int64_t hi, int snake, wseg *seg)
{
    int64_t ni = C->ri->len;
    for (int64_t o = lo; o < hi && !C->fail; o++) {
        int rev = snake && (o & 1);
        int64_t first = rev ? ni - 1 : 0;
        int n = 0;
        if (line_segs(C, o, rev, o == 0 ? -1 : o - 1, o == 0 ? -1 : (snake ? first : ni - 1), seg, &n)) {
            C->fail = 1;
            return;
        }
        for (int s = 0; s < n && !C->fail; s++)
            seg_add(C, &seg[s]);
    }
}

/* The waves of the traversal (several units): per outer run, its first
 * line, then the block of q lines (the outer period, doubled when snaking
 * and odd) that repeats up to the run's end (block_add, as far as the last
 * wave's start; the rest line by line).  The kinds' counts as closed_run
 * makes them.  0, or -1 where it does not apply: an inner axis with a
 * period, a block of too many segments. */
static int closed_waves(closed *C, int snake, wseg *seg)
{
    const axis_runs *ro = C->ro;
    int64_t ni = C->ri->len;
    if (C->ri->per > 1)
        return -1;
    int64_t q = ro->per;
    if (snake && (q & 1))
        q *= 2;
    for (int j = 0; j < ro->n && !C->fail; j++) {
        int64_t a = ro->start[j], b = run_end(ro, j);
        lines_add(C, a, a + 1, snake, seg);
        int64_t reps = (b - a - 1) / q;
        /* whole blocks before the last wave */
        int64_t fit = C->pos < C->lastw ? (C->lastw - C->pos) / (q * ni) : 0;
        if (reps > fit)
            reps = fit;
        if (reps >= 2) {
            int n = 0;
            for (int64_t o = a + 1; o < a + 1 + q; o++) {
                int rev = snake && (o & 1);
                int64_t first = rev ? ni - 1 : 0;
                if (line_segs(C, o, rev, o - 1, snake ? first : ni - 1, seg, &n))
                    return -1;
            }
            block_add(C, seg, n, q * ni, reps);
        } else
            reps = 0;
        /* the rest like the block's first lines */
        lines_add(C, a + 1 + reps * q, b, snake, seg);
    }
    return C->fail ? -1 : 0;
}

/* The tiles of `lines` like lines (outer index o) after their first, inner
 * indices going up (rev 0) or down: per run of the inner axis, its first
 * tile after the run before it, and the rest after their neighbour, by
 * their place in the inner period. */
static void closed_line(closed *C, int64_t lines, int64_t o, int rev)
{
    const axis_runs *ri = C->ri;
    int64_t n = ri->len, per = ri->per;
    for (int j = 0; j < ri->n; j++) {
        int64_t a = ri->start[j], b = run_end(ri, j); /* [a, b) */
        if (!rev) {
            if (a > 0)
                closed_add(C, lines, o, a, o, a - 1);
            for (int64_t i = a + 1; i < b && i < a + 1 + per; i++) /* i after i - 1, i in [a + 1, b) */
                closed_add(C, lines * ((b - 1 - i) / per + 1), o, i, o, i - 1);
        } else {
            if (b < n)
                closed_add(C, lines, o, b - 1, o, b);
            for (int64_t i = a; i < b - 1 && i < a + per; i++) /* i after i + 1, i in [a, b - 1) */
                closed_add(C, lines * ((b - 2 - i) / per + 1), o, i, o, i + 1);
        }
    }
}

/* Every kind of tile of walk w of g in traversal order kind `order`,
 * costed once (with its figures when figs is set) and counted: FT_OK with
 * the kinds in used[] (FT_SCORE_TILE_MEMO / 2 slots, *nused of them), or
 * -1 where the closed form does not apply (ft__score_closed).  *cut: 1 when
 * the run stopped because its running sum passed budget (one unit). */
static int closed_run(ft__scorer *sc, const mixinfo *mx, ft_walk *w, const ft_subgraph *g, int order, int figs, double budget,
                      tmemo **used, int *nused, int *cut, ft__sg_acc *acc)
{
    const ft_problem *p = sc->p;
    *cut = 0;
    if (order < 0 || order >= ORD_COUNT)
        return -1;
    int64_t ntx, nty, nk, nsteps;
    ft_walk_grid(w, &ntx, &nty, &nk, &nsteps);
    /* a mixed axis: like tiles a period apart where only Layout ops mix
     * it, else a kind per index along it (at most half the memo's) */
    const int mixed[2] = {mx->rows, mx->cols};
    const int64_t len[2] = {nty, ntx}, size[2] = {g->h, g->w};
    int absolute[2];
    int64_t per[2];
    for (int ax = 0; ax < 2; ax++) {
        absolute[ax] = mixed[ax] && mx->period[ax] == 0;
        per[ax] = mixed[ax] && !absolute[ax] ? mx->period[ax] / gcd64(mx->period[ax], size[ax]) : 1;
        if (absolute[ax] && len[ax] > FT_SCORE_TILE_MEMO / 2)
            return -1;
    }
    if (absolute[0] && absolute[1])
        return -1;
    int nrefs = 0;
    for (int j = 0; j < g->nops; j++)
        nrefs += 1 + p->ops[g->ops[j]].ninputs;
    size_t nr = 2 * (size_t)nrefs + 2 + FT_SCORE_TILE_MEMO / 2;
    int64_t *buf = ft__malloc(sizeof(int64_t) * (2 * (size_t)nrefs + 4 * nr));
    if (!buf)
        return -1;
    int64_t *hs = buf, *ws = hs + nrefs;
    axis_runs rr = {0, 0, 1, ws + nrefs, ws + nrefs + nr}, cr = {0, 0, 1, ws + nrefs + 2 * nr, ws + nrefs + 3 * nr};
    int nh = sg_lengths(p, g, hs, ws), nw = nh;
    axis_runs_fill(&rr, nty, g->h, hs, nh, absolute[0], per[0]);
    axis_runs_fill(&cr, ntx, g->w, ws, nw, absolute[1], per[1]);
    /* the memo's fast-forward of like k-steps (ft__score_tiles) */
    int ff = ff_mode(mx, w, g);
    closed C = {sc, w, NULL, NULL, order == ORD_RASTER || order == ORD_SNAKE_ROW, ntx, 1, memo_gen(sc, w, mx, g, figs), ++sc->tmcall, 0, 0, ff, figs, used,
                ft__units(p), ntx * nty, ntx * nty, 0, 0, {0, 0}, 0, {0, 0}, 0, {1, 1}, {1, 1}, {NULL, NULL}, budget, 0, 0};
    if (C.units > 1 && C.ntiles > C.units && C.ntiles % C.units)
        C.lastw = C.ntiles - C.ntiles % C.units;
    C.imemo = 0;
    C.nlens = nh;
    for (int ax = 0; ax < 2; ax++) {
        C.iabs[ax] = mx->iperiod[ax] == 0;
        C.iper[ax] = C.iabs[ax] ? 1 : mx->iperiod[ax] / gcd64(mx->iperiod[ax], size[ax]);
        C.isize[ax] = size[ax];
        C.ilens[ax] = ax ? ws : hs;
        if (absolute[ax] && !C.iabs[ax] && nk >= 3)
            C.imemo = 1;
    }
    int snake = order == ORD_SNAKE_ROW || order == ORD_SNAKE_COL;
    C.ro = C.rows_outer ? &rr : &cr;
    C.ri = C.rows_outer ? &cr : &rr;
    int64_t ni = C.ri->len;
    C.wave = ft__wave_size(p, ntx * nty, 0);
    /* Line o runs up the inner axis, or down when snaking and o is odd;
     * its first tile follows the last of line o - 1 (the same inner index
     * when snaking, the far end otherwise).  Lines of one outer run cost
     * alike but for the first's predecessor, their place in the outer
     * period and, snaking, their parity: per run, its first line, then
     * one line per residue of the period q (doubled when snaking and
     * odd), each standing for the lines q apart below the run's end. */
    int64_t q = C.ro->per;
    if (snake && (q & 1))
        q *= 2;
    /* several units: waves take the slowest tile of each, the tiles in
     * traversal order (closed_waves) */
    wseg *seg = C.units > 1 ? ft__malloc(sizeof(wseg) * WAVE_SEGS) : NULL;
    if (C.units > 1 && (!seg || closed_waves(&C, snake, seg)))
        C.fail = 1;
    ft__free(seg);
    for (int j = 0; j < C.ro->n && !C.fail && !C.over && C.units == 1; j++) {
        int64_t a = C.ro->start[j], b = run_end(C.ro, j);
        for (int64_t o = a; o < b && o < a + 1 + q && !C.over; o++) {
            int rev = snake && (o & 1);
            int64_t lines = o == a ? 1 : (b - 1 - o) / q + 1;
            int64_t first = rev ? ni - 1 : 0;
            if (o == 0)
                closed_add(&C, lines, o, first, -1, -1);
            else
                closed_add(&C, lines, o, first, o - 1, snake ? first : ni - 1);
            closed_line(&C, lines, o, rev);
        }
    }
    /* an axis the walk found mixed must be keyed as the probe said */
    int agree = !C.fail;
    for (int ax = 0; ax < 2; ax++)
        if ((w->mixed[ax] && !mixed[ax]) || (w->mixed_tag[ax] && !absolute[ax]))
            agree = 0;
    ft__free(buf);
    *nused = C.nused;
    *cut = C.units == 1 && C.sum > C.budget;
    if (C.units > 1 && acc) {
        acc->wv.done = C.done;
        acc->wv.wave = C.cur;
        acc->wv.pos = C.ntiles - 1;
    }
    sc->tmkinds |= w->kinds_differ;
    if (agree && !(ft__walk_irregular(w) && !mx->rows && !mx->cols))
        return FT_OK;
    sc->tmsig = 0; /* not these kinds again: the next score starts a new generation */
    return -1;
}

double ft__score_closed(ft__scorer *sc, const mixinfo *mx, ft_walk *w, const ft_subgraph *g, int order, double budget, ft__sg_acc *acc)
{
    const ft_problem *p = sc->p;
    ft__sg_acc own;
    if (!acc)
        acc = &own;
    ft__sg_acc_init(acc, p);
    tmemo **used = ft__malloc(sizeof(tmemo *) * (FT_SCORE_TILE_MEMO / 2 + 1));
    int nused = 0, cut;
    if (!used)
        return -1;
    double sum = -1;
    if (closed_run(sc, mx, w, g, order, 0, budget, used, &nused, &cut, acc) == FT_OK) {
        sum = 0;
        for (int u = 0; u < nused && sum < INF; u++) {
            if ((double)used[u]->ws > p->capacity)
                sum = INF;
            else if (!acc->waves)
                ft__sg_acc_tiles(acc, used[u]->n, &(ksum){used[u]->lat, 0});
        }
        if (sum < INF)
            sum = ft__sg_acc_total(acc);
        /* the run stopped once its plain running sum (count x latency a
         * call) passed budget; the compensated sum of the kinds so far
         * (each kind's whole count x latency) may round to budget or
         * below it, and a value at or under budget would read as a
         * complete total: the contract is a value past it */
        if (cut && sum <= budget)
            sum = nextafter(budget, INF);
    }
    ft__free(used);
    return sum;
}

int ft__eval_closed(ft__scorer *sc, const ft_schedule *s, int sg, ft_sg_result *r)
{
    const ft_problem *p = sc->p;
    const ft_subgraph *G = &s->sg[sg];
    int64_t ntx, nty, nk;
    if (ft__sg_grid(p, G, NULL, &ntx, &nty, &nk))
        return 0;
    /* the schedule's order: raster, or one of the scorer's kinds */
    int order = G->order ? -1 : ORD_RASTER;
    if (G->order) {
        int64_t *ord = ft__malloc(sizeof(int64_t) * (size_t)(ntx * nty));
        if (!ord)
            return 0;
        for (int kind = 0; kind < ORD_COUNT && order < 0; kind++) {
            ft__make_order(kind, ntx, nty, ord);
            if (memcmp(ord, G->order, sizeof(int64_t) * (size_t)(ntx * nty)) == 0)
                order = kind;
        }
        ft__free(ord);
        if (order < 0)
            return 0;
    }
    size_t nt = (size_t)p->ntensors + 1;
    unsigned char *flags = ft__calloc(4, nt);
    tmemo **used = ft__malloc(sizeof(tmemo *) * (FT_SCORE_TILE_MEMO / 2 + 1));
    if (!flags || !used) {
        ft__free(flags);
        ft__free(used);
        return 0;
    }
    sctx x = {flags + nt, flags + 2 * nt, flags + 3 * nt};
    ft__sg_tensors(p, s, sg, flags, x.written, x.retained, x.resident);
    ft_subgraph g = *G;
    mixinfo mx;
    ft__probe_mixed(sc, &x, &g, &mx);
    g.w = G->w, g.h = G->h, g.k = G->k;
    ft_walk *w = NULL;
    ft_status st;
    int nused = 0, done = 0, cut;
    ft__sg_acc acc;
    ft__sg_acc_init(&acc, p);
    if (ft__walk_new(p, &g, sc->model, x.written, x.retained, x.resident, &w, &st) == FT_OK &&
        closed_run(sc, &mx, w, &g, order, 1, INF, used, &nused, &cut, &acc) == FT_OK) {
        /* a kind over the capacity: the walk names the first step that is */
        done = 1;
        for (int u = 0; u < nused; u++)
            if ((double)used[u]->ws > p->capacity)
                done = 0;
    }
    if (done) {
        memset(r, 0, sizeof *r);
        r->ntx = ntx, r->nty = nty, r->nk = nk, r->steps = ntx * nty * nk;
        ksum comp = {0, 0}, mem = {0, 0};
        for (int u = 0; u < nused; u++) {
            const tmemo *e = used[u];
            if (!acc.waves) /* (waves: their slowest tiles, closed_run) */
                ft__sg_acc_tiles(&acc, e->n, &e->figs.lat);
            ksum_add_n(&comp, e->n, &e->figs.comp);
            ksum_add_n(&mem, e->n, &e->figs.mem);
            r->compute_bound_steps += e->n * e->figs.cbound;
            r->memory_bound_steps += e->n * e->figs.mbound;
            r->loaded += e->n * e->figs.loaded;
            r->written += e->n * e->figs.written;
            if (e->ws > r->peak_working_set)
                r->peak_working_set = e->ws;
        }
        /* what the subgraph pays besides its steps, as eval.c adds it */
        int64_t n = ntx * nty, loaded0, written_last;
        double compute_last;
        ft__rates r0; /* the first wave's bandwidths */
        ft__rates_share(&w->rates, ft__wave_size(p, n, 0), &r0);
        ft__walk_edges(w, G->order ? G->order[0] : 0, G->order ? G->order[n - 1] : n - 1, &loaded0, &written_last, &compute_last);
        r->latency = ft__sg_acc_finish(&acc, w->floor, ft__sg_extra(p, &r0, loaded0, written_last, compute_last));
        if (r->steps == 1 && p->timing.overlap == FT_OVERLAP_PIPELINE)
            r->latency = ft__sg_single(p, &r0, loaded0, written_last, compute_last);
        r->compute_time = ksum_value(&comp);
        r->memory_time = ksum_value(&mem);
    }
    if (w)
        sc->kskipped += w->kskipped;
    ft_walk_free(w);
    ft__free(flags);
    ft__free(used);
    return done;
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
    while (ft_walk_next(w, &stp)) {
        if ((double)stp.working_set > sc->p->capacity)
            return INF;
        ft__sg_acc_step(acc, stp.index / nk, stp.kstep == nk - 1, stp.latency);
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
     * ft_evaluate); at least ft__sg_fixed */
    const double fixed = ft__sg_fixed(p), whole_budget = budget;
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
    }
    sc->evals++;
    g->order = NULL;
    g->norder = 0;
    return lat;
}
