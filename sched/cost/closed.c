/* closed.c - the scorer's closed form (score.h: ft__score_closed, ft__eval_closed): a subgraph's steps costed once per kind of tile (interior, edges, corners; first tiles of a line; waves on several units) and multiplied by the kinds' counts, through the tile memo of score.c, equal to ft_evaluate's walk to 1e-12. */
#include "cost/score.h"

#include <stdlib.h>
#include <string.h>

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

/* Fill ar for len tiles of size t classed by ft__dim_class among the tensor
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
        ar->cls[i] = ft__dim_class(ar->start[i], t, lens, nl);
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
 * the outer axis, i along the inner one: the kind costed once (ft__tile_entry,
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
            ikey[ax] = C->iabs[ax] ? ((int64_t)1 << 40) + i : ft__dim_class(i, C->isize[ax], C->ilens[ax], C->nlens) * C->iper[ax] + i % C->iper[ax];
        }
    tmemo *e = ft__tile_entry(C->sc->tm, C->gen, key, C->w, pos, prev, r * C->ntx + c, C->ff, C->figs, &C->sc->tmused, C->sc, C->imemo ? ikey : NULL);
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
    const int64_t T = C->units / ft__gcd64(B, C->units);
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
        per[ax] = mixed[ax] && !absolute[ax] ? mx->period[ax] / ft__gcd64(mx->period[ax], size[ax]) : 1;
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
    int nh = ft__sg_lengths(p, g, hs, ws), nw = nh;
    axis_runs_fill(&rr, nty, g->h, hs, nh, absolute[0], per[0]);
    axis_runs_fill(&cr, ntx, g->w, ws, nw, absolute[1], per[1]);
    /* the memo's fast-forward of like k-steps (ft__score_tiles) */
    int ff = ft__ff_mode(mx, w, g);
    closed C = {sc, w, NULL, NULL, order == ORD_RASTER || order == ORD_SNAKE_ROW, ntx, 1, ft__memo_gen(sc, w, mx, g, figs), ++sc->tmcall, 0, 0, ff, figs, used,
                ft__units(p), ntx * nty, ntx * nty, 0, 0, {0, 0}, 0, {0, 0}, 0, {1, 1}, {1, 1}, {NULL, NULL}, budget, 0, 0};
    if (C.units > 1 && C.ntiles > C.units && C.ntiles % C.units)
        C.lastw = C.ntiles - C.ntiles % C.units;
    C.imemo = 0;
    C.nlens = nh;
    for (int ax = 0; ax < 2; ax++) {
        C.iabs[ax] = mx->iperiod[ax] == 0;
        C.iper[ax] = C.iabs[ax] ? 1 : mx->iperiod[ax] / ft__gcd64(mx->iperiod[ax], size[ax]);
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
    sc->loaded = sc->written = 0;
    if (closed_run(sc, mx, w, g, order, sc->power, budget, used, &nused, &cut, acc) == FT_OK) {
        sum = 0;
        for (int u = 0; u < nused && sum < INF; u++) {
            if ((double)used[u]->ws > p->capacity)
                sum = INF;
            else if (!acc->waves)
                ft__sg_acc_tiles(acc, used[u]->n, &(ksum){used[u]->lat, 0});
            if (sc->power) { /* the figures' traffic (ft__score) */
                sc->loaded += used[u]->n * used[u]->figs.loaded;
                sc->written += used[u]->n * used[u]->figs.written;
            }
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
