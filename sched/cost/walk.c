/* walk.c - the per-step cost model of SPEC sections 3 and 4: region derivation, reuse, writes and working set of each step of a subgraph, and the walker's fast path the scorer uses (whole tiles with k-step fast-forward, a tile's edges, mixed axes). */
#include "cost/walk.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void ft_walk_free(ft_walk *w)
{
    if (!w)
        return;
    ft__free(w->role);
    ft__free(w->tbits);
    ft__free(w->need_stamp);
    ft__free(w->need);
    ft__free(w->need_kind);
    ft__free(w->need_tag);
    ft__free(w->tag_seen);
    ft__free(w->slices);
    ft__free(w->prev);
    ft__free(w->loaded);
    ft__free(w->writes);
    ft__free(w->active);
    ft__free(w->acts);
    ft__free(w);
}

/* Allocate a walker for subgraph g (tensor sets not yet filled). */
static ft_walk *walk_alloc(const ft_problem *p, const ft_subgraph *g, ft_compute_model model)
{
    ft_walk *w = ft__calloc(1, sizeof *w);
    if (!w)
        return NULL;
    size_t nt = (size_t)p->ntensors;
    w->p = p;
    w->g = g;
    w->model = model;
    w->row_tile = -1;
    w->nops = g->nops;
    w->matmul = ft__sg_matmul(p, g);
    w->cap = 1;
    for (int j = 0; j < g->nops; j++)
        w->cap += p->ops[g->ops[j]].ninputs;
    w->role = ft__malloc(sizeof(ft_role) * (size_t)(g->nops + 1));
    w->tbits = ft__malloc(nt * 4 + 4);
    w->need_stamp = ft__calloc(nt + 1, sizeof(int64_t)); /* 0: no need yet (stamps start at 1) */
    w->need = ft__malloc(sizeof(ft_region) * (nt + 1));
    w->need_kind = ft__malloc(2 * (nt + 1));
    w->need_tag = ft__malloc(2 * (nt + 1));
    w->tag_seen = ft__calloc(nt + 1, 2);
    w->slices = ft__malloc(sizeof(ft_slice) * (size_t)w->cap);
    w->prev = ft__malloc(sizeof(ft_slice) * (size_t)w->cap);
    w->loaded = ft__malloc((size_t)w->cap);
    w->writes = ft__malloc(sizeof(ft_slice) * (size_t)(g->nops + 1));
    w->active = ft__malloc(sizeof(int) * (size_t)(g->nops + 1));
    w->acts = ft__malloc(sizeof(ft_active) * (size_t)(g->nops + 1));
    if (!w->role || !w->tbits || !w->need_stamp || !w->need || !w->need_kind || !w->need_tag || !w->tag_seen || !w->slices || !w->prev || !w->loaded || !w->writes ||
        !w->active || !w->acts) {
        ft_walk_free(w);
        return NULL;
    }
    w->produced = w->tbits;
    w->written = w->tbits + nt;
    w->retained = w->tbits + 2 * nt;
    w->resident = w->tbits + 3 * nt;
    return w;
}

/* The subgraph's bandwidths (ft_timing): with a shared cache, its
 * bandwidth, and when the subgraph's slow-memory footprint (each tensor
 * counted whole and once: inputs neither produced here nor resident,
 * written outputs) does not fit the cache, a floor on the steps' total:
 * that footprint moved once at p's own bandwidths; without a cache, p's
 * bandwidths.  The walk starts at position 0. */
static int sg_rates(ft_walk *w, ft_status *st)
{
    const ft_problem *p = w->p;
    const ft_timing *tm = &p->timing;
    ft__rates_init(p, &w->rates);
    if (tm->cache_capacity > 0) {
        unsigned char *seen = ft__calloc((size_t)p->ntensors + 1, 1);
        if (!seen)
            return ft__fail(st, FT_ENOMEM, 0, "out of memory");
        int64_t ir, iw;
        ft__sg_footprint(p, w->g->ops, w->g->nops, w->produced, w->written, w->resident, seen, &ir, &iw);
        double reads = (double)ir, writes = (double)iw;
        ft__free(seen);
        double miss = ft__cache_miss_share(p, reads + writes);
        w->floor = miss > 0 ? miss * (reads / w->rates.rb + writes / w->rates.wb) : 0;
    }
    ft__step_rates(p, &w->rates);
    w->wave = 0;
    ft__walk_at(w, 0);
    return FT_OK;
}

void ft__walk_at(ft_walk *w, int64_t pos)
{
    assert(pos >= 0 && pos < w->ntx * w->nty); /* a traversal position */
    int64_t u = ft__wave_size(w->p, w->ntx * w->nty, pos);
    if (u != w->wave) {
        w->wave = u;
        ft__rates_share(&w->rates, u, &w->tile_rates);
    }
}

/* Grid, step count and the fixed part of the working set, once the tensor
 * sets are filled. */
static int walk_prepare(ft_walk *w, ft_status *st)
{
    const ft_problem *p = w->p;
    const ft_subgraph *g = w->g;
    size_t nt = (size_t)p->ntensors;
    if (ft__sg_grid(p, g, w->role, &w->ntx, &w->nty, &w->nk))
        return ft__fail(st, FT_ENOMEM, 0, "out of memory");
    int64_t tiles;
    if (__builtin_mul_overflow(w->ntx, w->nty, &tiles) || __builtin_mul_overflow(tiles, w->nk, &w->nsteps))
        return ft__fail(st, FT_EINPUT, 0, "the number of steps of a subgraph overflows 64 bits");
    /* granularities >= 1 (validated) and tensors of positive size (the
     * problem's checks): every subgraph has a tile and a k-step */
    assert(w->ntx >= 1 && w->nty >= 1 && w->nk >= 1);
    /* resident tensors count whole (SPEC 4), used here or not: scan the
     * flags a word at a time, most are 0 */
    size_t t = 0;
    for (; t + 8 <= nt; t += 8) {
        uint64_t word;
        memcpy(&word, w->resident + t, 8);
        for (size_t u = t; word && u < t + 8; u++)
            if (w->resident[u])
                w->ws_fixed += ft_tensor_size(p, (int)u);
    }
    for (; t < nt; t++)
        if (w->resident[t])
            w->ws_fixed += ft_tensor_size(p, (int)t);
    int rc = sg_rates(w, st);
    if (rc)
        return rc;
    /* each written or retained output of the subgraph, once */
    for (int j = 0; j < g->nops; j++) {
        int o = p->ops[g->ops[j]].output, dup = 0;
        for (int i = 0; i < j && !dup; i++)
            dup = p->ops[g->ops[i]].output == o;
        const ft_tensor *T = &p->tensors[o];
        if (dup)
            continue;
        if (w->retained[o])
            w->ws_fixed += T->width * T->height;
        else if (w->written[o])
            w->ws_fixed += (g->w < T->width ? g->w : T->width) * (g->h < T->height ? g->h : T->height);
    }
    assert(w->ws_fixed >= 0); /* the problem's tensors total below 2^63 elements (problem.c) */
    return FT_OK;
}

int ft_walk_begin(const ft_problem *p, const ft_schedule *s, int sg, ft_compute_model model, ft_walk **out, ft_status *st)
{
    ft_status_clear(st);
    *out = NULL;
    ft_walk *w = walk_alloc(p, &s->sg[sg], model);
    if (!w)
        return ft__fail(st, FT_ENOMEM, 0, "out of memory");
    ft__sg_tensors(p, s, sg, w->produced, w->written, w->retained, w->resident);
    int rc = walk_prepare(w, st);
    if (rc) {
        ft_walk_free(w);
        return rc;
    }
    *out = w;
    return FT_OK;
}

int ft__walk_new(const ft_problem *p, const ft_subgraph *g, ft_compute_model model, const unsigned char *written,
                 const unsigned char *retained, const unsigned char *resident, ft_walk **out, ft_status *st)
{
    size_t nt = (size_t)p->ntensors;
    *out = NULL;
    ft_walk *w = walk_alloc(p, g, model);
    if (!w)
        return ft__fail(st, FT_ENOMEM, 0, "out of memory");
    memset(w->produced, 0, nt);
    for (int j = 0; j < g->nops; j++)
        w->produced[p->ops[g->ops[j]].output] = 1;
    memcpy(w->written, written, nt);
    memcpy(w->retained, retained, nt);
    memcpy(w->resident, resident, nt);
    int rc = walk_prepare(w, st);
    if (rc) {
        ft_walk_free(w);
        return rc;
    }
    *out = w;
    return FT_OK;
}

void ft_walk_grid(const ft_walk *w, int64_t *ntx, int64_t *nty, int64_t *nk, int64_t *nsteps)
{
    if (ntx)
        *ntx = w->ntx;
    if (nty)
        *nty = w->nty;
    if (nk)
        *nk = w->nk;
    if (nsteps)
        *nsteps = w->nsteps;
}

void ft_walk_flow_only(ft_walk *w)
{
    w->flow_only = 1;
}

int64_t ft_walk_skip(ft_walk *w, int64_t n)
{
    if (n <= 0 || !w->flow_only)
        return 0;
    if (n > w->nsteps - w->next)
        n = w->nsteps - w->next;
    /* the position and k-step ft_walk_next counts along, moved on n */
    int64_t ks = w->next_ks + n;
    w->next += n;
    w->next_pos += ks / w->nk;
    w->next_ks = ks % w->nk;
    return n;
}

ft_role ft_walk_role(const ft_walk *w, int op)
{
    for (int j = 0; j < w->nops; j++)
        if (w->g->ops[j] == op)
            return w->role[j];
    return FT_ROLE_EPILOGUE;
}

static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

static inline int region_empty(const ft_region *r) { return r->r0 >= r->r1 || r->c0 >= r->c1; }

static inline int64_t region_size(const ft_region *r) { return (r->r1 - r->r0) * (r->c1 - r->c0); }

static inline int region_eq(const ft_region *a, const ft_region *b)
{
    return a->r0 == b->r0 && a->r1 == b->r1 && a->c0 == b->c0 && a->c1 == b->c1;
}

/* Note that tensor t's axis ax takes its ranges from source tag. */
static inline void see_tag(ft_walk *w, int t, int ax, int tag)
{
    if (!w->tag_seen[t][ax])
        w->tag_seen[t][ax] = (unsigned char)tag;
    else if (w->tag_seen[t][ax] != tag) {
        w->irregular = w->mixed[ax] = w->mixed_tag[ax] = 1;
        if (w->produced[t])
            w->mixed_internal = 1;
    }
}

/* Record that tensor t is needed as region r with dimension kinds k0, k1
 * and range sources g0, g1. */
static void need_region(ft_walk *w, int t, ft_region r, int k0, int k1, int g0, int g1)
{
    const ft_tensor *T = &w->p->tensors[t];
    r.r0 = max64(r.r0, 0);
    r.c0 = max64(r.c0, 0);
    r.r1 = min64(r.r1, T->height);
    r.c1 = min64(r.c1, T->width);
    if (region_empty(&r))
        return;
    see_tag(w, t, 0, g0);
    see_tag(w, t, 1, g1);
    if (w->produced[t]) {
        if (w->need_stamp[t] != w->stamp) {
            w->need_stamp[t] = w->stamp;
            w->need[t] = r;
            w->need_kind[t][0] = (unsigned char)k0;
            w->need_kind[t][1] = (unsigned char)k1;
            w->need_tag[t][0] = (unsigned char)g0;
            w->need_tag[t][1] = (unsigned char)g1;
        } else {
            if (w->need_kind[t][0] != k0 || w->need_kind[t][1] != k1)
                w->kinds_differ = 1;
            ft_region *b = &w->need[t];
            b->r0 = min64(b->r0, r.r0);
            b->r1 = max64(b->r1, r.r1);
            b->c0 = min64(b->c0, r.c0);
            b->c1 = max64(b->c1, r.c1);
        }
        return;
    }
    if (w->resident[t])
        return;
    for (int i = 0; i < w->nslices; i++)
        if (w->slices[i].tensor == t && region_eq(&w->slices[i].region, &r))
            return;
    /* a step needs each input of each active op at most once: cap is one
     * more than the subgraph's inputs (walk_alloc) */
    assert(w->nslices < w->cap);
    w->slices[w->nslices].tensor = t;
    w->slices[w->nslices].region = r;
    w->nslices++;
}

/* need_region, but nothing for a tensor from outside the subgraph when
 * the walk derives the data flow only (ft_walk_flow_only): only needs on
 * tensors made inside make regions.  Inline, so that such a need costs a
 * test, not a call with its region. */
static inline void need(ft_walk *w, int t, ft_region r, int k0, int k1, int g0, int g1)
{
    if (w->flow_only && !w->produced[t])
        return;
    need_region(w, t, r, k0, k1, g0, g1);
}

/* SPEC 4's Layout rule along one axis: the range [a0, a1) of an output
 * axis of length n needs [floor(a0 m / n), ceil(a1 m / n)) of the input
 * axis of length m.  Exact: a0 m may pass 64 bits, not 127. */
static inline void layout_range(int64_t a0, int64_t a1, int64_t n, int64_t m, int64_t *b0, int64_t *b1)
{
    *b0 = (int64_t)((__int128)a0 * m / n);
    *b1 = (int64_t)(((__int128)a1 * m + (n - 1)) / n);
}

/* The need of Layout op `op` on its input for output region r (dimension
 * kinds k0, k1, range sources g0, g1).  An axis that the Layout scales
 * takes its input range from where the tile or k slice lies, not only from
 * its length: the walk is irregular on that axis (the scorer keys tiles by
 * their absolute row or column, ft__walk_tile) and derives every k-step
 * (mixed_internal); an axis of equal lengths maps onto itself, as through a
 * Pointwise op, and a whole reduction depth onto the whole input. */
static void need_layout(ft_walk *w, const ft_op *op, const ft_region *r, int k0, int k1, int g0, int g1)
{
    const ft_tensor *O = &w->p->tensors[op->output], *X = &w->p->tensors[op->inputs[0]];
    ft_region x;
    layout_range(r->r0, r->r1, O->height, X->height, &x.r0, &x.r1);
    layout_range(r->c0, r->c1, O->width, X->width, &x.c0, &x.c1);
    const int scaled[2] = {O->height != X->height && g0 != TAG_FULL, O->width != X->width && g1 != TAG_FULL};
    for (int ax = 0; ax < 2; ax++)
        if (scaled[ax])
            w->irregular = w->mixed[ax] = w->mixed_internal = 1;
    need(w, op->inputs[0], x, k0, k1, g0, g1);
}

/* Derive the step (tile, k-step ks) into *step: regions, slices (loaded
 * unless in the previously derived step), writes, compute and memory. */
void ft__walk_derive(ft_walk *w, int64_t tile, int64_t ks, ft_step *step)
{
    const ft_problem *p = w->p;
    const ft_subgraph *g = w->g;
    /* tile and k-step in the grid: the traversal order is a permutation of
     * the tiles (validated), the scorer's tiles come from the grid */
    assert(tile >= 0 && tile < w->ntx * w->nty);
    assert(ks >= 0 && ks < w->nk);
    int64_t idx = ++w->stamp;
    if (tile != w->row_tile) { /* a tile's k-steps share its row and column */
        w->row_tile = tile;
        w->row_r = tile / w->ntx;
        w->row_c = tile % w->ntx;
    }
    int64_t trow = w->row_r, tcol = w->row_c;
    ft_region tr = {trow * g->h, (trow + 1) * g->h, tcol * g->w, (tcol + 1) * g->w};

    /* keep the previous step's slices for reuse */
    ft_slice *tmp = w->prev;
    w->prev = w->slices;
    w->nprev = w->nslices;
    w->slices = tmp;
    w->nslices = 0;
    w->nwrites = 0;
    w->nactive = 0;

    double compute = 0;
    int64_t written = 0;
    for (int j = g->nops - 1; j >= 0; j--) {
        int o = g->ops[j];
        const ft_op *op = &p->ops[o];
        const ft_tensor *O = &p->tensors[op->output];
        ft_region r;
        int k0 = FT_DIM_SPATIAL, k1 = FT_DIM_SPATIAL, g0 = TAG_TY, g1 = TAG_TX;
        int64_t s0 = 0, s1 = 0; /* k slice of a k-loop MatMul */
        int last = 0;           /* this step finishes the op's tile */
        switch (w->role[j]) {
        case FT_ROLE_KLOOP:
            s0 = ks * g->k;
            if (s0 >= op->k)
                continue;
            s1 = min64(op->k, s0 + g->k);
            assert(s0 >= 0 && s0 < s1); /* a non-empty k slice of the op's depth */
            last = s1 == op->k;
            r = (ft_region){tr.r0, min64(tr.r1, O->height), tr.c0, min64(tr.c1, O->width)};
            break;
        case FT_ROLE_EPILOGUE:
            if (ks != w->nk - 1)
                continue;
            last = 1;
            r = (ft_region){tr.r0, min64(tr.r1, O->height), tr.c0, min64(tr.c1, O->width)};
            break;
        default:
            if (w->need_stamp[op->output] != idx)
                continue;
            r = w->need[op->output];
            k0 = w->need_kind[op->output][0];
            k1 = w->need_kind[op->output][1];
            g0 = w->need_tag[op->output][0];
            g1 = w->need_tag[op->output][1];
            break;
        }
        if (region_empty(&r))
            continue;
        /* an active op's region (and so a write's) lies inside its output:
         * tile rows and columns are clipped above, needs in need() */
        assert(r.r0 >= 0 && r.c0 >= 0 && r.r1 <= O->height && r.c1 <= O->width);
        assert(w->nactive < g->nops); /* each op active at most once a step */
        w->acts[w->nactive] = (ft_active){o, w->role[j], r, (unsigned char)k0, (unsigned char)k1, s0, s1};
        w->active[w->nactive++] = o;
        double c = w->flow_only ? 0 : ft_op_compute(p, w->model, &w->acts[w->nactive - 1]);
        if (op->type == FT_OP_MATMUL) {
            if (w->role[j] == FT_ROLE_UPSTREAM) {
                need(w, op->inputs[0], (ft_region){r.r0, r.r1, 0, op->k}, k0, FT_DIM_REDUCTION, g0, TAG_FULL);
                need(w, op->inputs[1], (ft_region){0, op->k, r.c0, r.c1}, FT_DIM_REDUCTION, k1, TAG_FULL, g1);
            } else {
                need(w, op->inputs[0], (ft_region){r.r0, r.r1, s0, s1}, FT_DIM_SPATIAL, FT_DIM_REDUCTION, TAG_TY, TAG_KS);
                need(w, op->inputs[1], (ft_region){s0, s1, r.c0, r.c1}, FT_DIM_REDUCTION, FT_DIM_SPATIAL, TAG_KS, TAG_TX);
            }
        } else if (op->type == FT_OP_LAYOUT) {
            need_layout(w, op, &r, k0, k1, g0, g1);
        } else {
            for (int i = 0; i < op->ninputs; i++)
                need(w, op->inputs[i], r, k0, k1, g0, g1);
        }
        compute += c;
        if (last && w->written[op->output] && !w->flow_only) {
            w->writes[w->nwrites].tensor = op->output;
            w->writes[w->nwrites].region = r;
            w->nwrites++;
            written += region_size(&r);
        }
    }
    /* active ops were collected in reverse; report them in list order */
    for (int a = 0, b = w->nactive - 1; a < b; a++, b--) {
        int t = w->active[a];
        w->active[a] = w->active[b];
        w->active[b] = t;
        ft_active x = w->acts[a];
        w->acts[a] = w->acts[b];
        w->acts[b] = x;
    }
    step->index = idx;
    step->tile = tile;
    step->tile_row = trow;
    step->tile_col = tcol;
    step->kstep = ks;
    step->nactive = w->nactive;
    step->active = w->active;
    step->acts = w->acts;
    if (w->flow_only) { /* the data flow only (ft_walk_flow_only) */
        step->nslices = step->nwrites = 0;
        step->slices = step->writes = NULL;
        step->loaded = NULL;
        step->compute = step->memory = step->latency = 0;
        step->loaded_elems = step->written_elems = step->working_set = 0;
        return;
    }
    int64_t loaded = 0, ws = w->ws_fixed;
    int first = !w->have_prev;
    w->have_prev = 1;
    for (int i = 0; i < w->nslices; i++) {
        const ft_slice *sl = &w->slices[i];
        int64_t sz = region_size(&sl->region);
        ws += sz;
        int reused = 0;
        if (!first)
            for (int q = 0; q < w->nprev; q++)
                if (w->prev[q].tensor == sl->tensor && region_eq(&w->prev[q].region, &sl->region)) {
                    reused = 1;
                    break;
                }
        w->loaded[i] = (unsigned char)!reused;
        if (!reused)
            loaded += sz;
    }
    compute += p->timing.step_overhead + ft__tile_extra(p, w->matmul, ks, w->nk);
    double memory;
    double latency = ft__step_time_at(p, &w->tile_rates, compute, loaded, written, &memory);
    /* loads are a part of the slices, all counted in the working set; costs
     * are positive (the problem's checks), so no time is negative (NaN is
     * left to the evaluator's own checks) */
    assert(loaded >= 0 && written >= 0 && loaded <= ws - w->ws_fixed);
    assert(!(compute < 0) && !(memory < 0) && !(latency < 0));
    step->nslices = w->nslices;
    step->slices = w->slices;
    step->loaded = w->loaded;
    step->nwrites = w->nwrites;
    step->writes = w->writes;
    step->compute = compute;
    step->memory = memory;
    step->latency = latency;
    step->loaded_elems = loaded;
    step->written_elems = written;
    step->working_set = ws;
}

int ft_walk_next(ft_walk *w, ft_step *step)
{
    if (w->next >= w->nsteps)
        return 0;
    int64_t idx = w->next;
    /* position and k-step counted along, not divided out of idx */
    int64_t pos = w->next_pos, ks = w->next_ks;
    assert(ks >= 0 && ks < w->nk && pos * w->nk + ks == idx); /* no division */
    if (++w->next_ks == w->nk) {
        w->next_ks = 0;
        w->next_pos++;
    }
    assert(!w->g->order || w->g->norder == w->ntx * w->nty); /* validated */
    if (ks == 0 && !w->flow_only)
        ft__walk_at(w, pos);
    ft__walk_derive(w, w->g->order ? w->g->order[pos] : w->order_kind ? ft__order_tile(w->order_kind, w->ntx, w->nty, pos) : pos, ks, step);
    step->index = idx;
    w->next++;
    return 1;
}

/* ------------------------------------------------------------ the walker's fast path (walk.h): whole tiles, a tile's edges, mixed axes */

/* Add n of a step's figures to *f (the product of a latency added exactly). */
static void figs_add(ft__tile_figs *f, const ft_step *s, int64_t n)
{
    const ksum lat = {s->latency, 0}, comp = {s->compute, 0}, mem = {s->memory, 0};
    ksum_add_n(&f->lat, n, &lat);
    ksum_add_n(&f->comp, n, &comp);
    ksum_add_n(&f->mem, n, &mem);
    *(s->compute > s->memory ? &f->cbound : &f->mbound) += n;
    f->loaded += n * s->loaded_elems;
    f->written += n * s->written_elems;
}

/* Mode 4 of ft__walk_tile: the first k-step past ks that must be derived
 * when k-step ks repeats the one *P before it (*P: w->kper, or
 * w->kper_last where only the deepest k-loop MatMuls run), or 0 when it
 * does not.  A k-step t repeats t - P when t - P - 1 >= 0 lies in the
 * tile, t is not its last k-step (the epilogue and the tile's overhead)
 * and every k-loop op is either finished before t - P - 1 or still runs
 * full, unfinished slices through t (its k slices then shift by P k-steps
 * between the two, and every range they set by whole elements); the
 * previous k-steps, whose slices the reuse compares with, likewise.  The
 * run ends at the next k-loop op's finishing k-step or the last. */
static int64_t kper_next(const ft_walk *w, int64_t ks, int64_t *P)
{
    int64_t kk = w->g->k, next = w->nk - 1, kmax = 0;
    if (ks >= next)
        return 0;
    for (int j = 0; j < w->nops; j++)
        if (w->role[j] == FT_ROLE_KLOOP && w->p->ops[w->g->ops[j]].k > kmax)
            kmax = w->p->ops[w->g->ops[j]].k;
    for (int pass = 0; pass < 2; pass++) {
        int64_t per = pass ? w->kper_last : w->kper, end = next;
        if (per <= 0 || per > FT_WALK_KPER_MAX || ks < per + 1)
            continue;
        for (int j = 0; j < w->nops && end; j++) {
            if (w->role[j] != FT_ROLE_KLOOP)
                continue;
            int64_t K = w->p->ops[w->g->ops[j]].k, f = ft__ceil_div(K, kk) - 1; /* its finishing k-step */
            if (f > ks && (!pass || K == kmax)) {
                if (f < end)
                    end = f;
            } else if (f >= ks - per - 1)
                end = 0;
        }
        if (end) {
            *P = per;
            return end;
        }
    }
    return 0;
}

/* A k-step's figures (mode 4's period). */
typedef struct kfig {
    double lat, comp, mem;
    int64_t loaded, written;
} kfig;

double ft__walk_tile(ft_walk *w, int64_t prev, int64_t tile, int64_t *ws_max, int allow_ff, ft__tile_figs *figs)
{
    return ft__walk_tile_split(w, prev, tile, ws_max, allow_ff, figs, NULL, NULL);
}

double ft__walk_tile_split(ft_walk *w, int64_t prev, int64_t tile, int64_t *ws_max, int allow_ff, ft__tile_figs *figs, ft__tile_figs *mid,
                           int64_t *mid_ws)
{
    ft_step stp;
    if (figs)
        memset(figs, 0, sizeof *figs);
    if (mid)
        memset(mid, 0, sizeof *mid), *mid_ws = 0;
    if (prev >= 0)
        ft__walk_derive(w, prev, w->nk - 1, &stp);
    else
        w->have_prev = 0;
    /* the tile's k-steps add up as ft_evaluate adds a tile's (ft__sg_acc) */
    ksum lat = {0, 0};
    double last = 0;
    int64_t ws = 0;
    int same = 0; /* consecutive earlier k-steps with this k-step's pattern */
    /* mode 4: the figures of the last FT_WALK_KPER_MAX k-steps, by k-step
     * modulo FT_WALK_KPER_MAX */
    kfig per[FT_WALK_KPER_MAX];
    for (int64_t ks = 0; ks < w->nk; ks++) {
        int64_t P = 0, next = allow_ff == 4 ? kper_next(w, ks, &P) : 0;
        if (next > ks) {
            /* k-steps ks .. next - 1 each cost what the one P before did
             * (derived: a run starts past every finishing k-step by more
             * than P): per residue, its figures times its count */
            for (int64_t r = 0; r < P && r < next - ks; r++) {
                const kfig *f = &per[(ks - P + r) % FT_WALK_KPER_MAX];
                int64_t n = (next - 1 - (ks + r)) / P + 1;
                ksum_add_n(&lat, n, &(ksum){f->lat, 0});
                if (figs || mid) {
                    ft_step s = stp;
                    s.latency = f->lat, s.compute = f->comp, s.memory = f->mem;
                    s.loaded_elems = f->loaded, s.written_elems = f->written;
                    if (figs)
                        figs_add(figs, &s, n);
                    if (mid)
                        figs_add(mid, &s, n);
                }
            }
            /* the step before next, derived again for the slices next's
             * reuse compares with (its figures counted above) */
            w->kskipped += next - ks;
            ft__walk_derive(w, tile, next - 1, &stp);
            per[(next - 1) % FT_WALK_KPER_MAX] = (kfig){stp.latency, stp.compute, stp.memory, stp.loaded_elems, stp.written_elems};
            ks = next - 1;
            continue;
        }
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
        if (same >= 2 && ks < w->nk - 2 && (allow_ff == 2 || allow_ff == 3 || (allow_ff == 1 && !w->irregular))) {
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
            ksum_add(&lat, last * (double)(next - ks));
            if (figs)
                figs_add(figs, &stp, next - ks);
            if (mid)
                figs_add(mid, &stp, next - ks);
            ks = next - 1;
            continue;
        }
        ft__walk_derive(w, tile, ks, &stp);
        if (figs)
            figs_add(figs, &stp, 1);
        if (mid && ks > 0 && ks < w->nk - 1) {
            figs_add(mid, &stp, 1);
            if (stp.working_set > *mid_ws)
                *mid_ws = stp.working_set;
        }
        if (allow_ff == 4)
            per[ks % FT_WALK_KPER_MAX] = (kfig){stp.latency, stp.compute, stp.memory, stp.loaded_elems, stp.written_elems};
        last = stp.latency;
        ksum_add(&lat, stp.latency);
        if (stp.working_set > ws)
            ws = stp.working_set;
    }
    *ws_max = ws;
    return ksum_value(&lat);
}

double ft__walk_tile_ends(ft_walk *w, int64_t prev, int64_t tile, const ft__tile_figs *mid, int64_t mid_ws, int64_t *ws_max,
                          ft__tile_figs *figs)
{
    ft_step stp;
    assert(w->nk >= 3); /* a first, a last and interior k-steps */
    if (prev >= 0)
        ft__walk_derive(w, prev, w->nk - 1, &stp);
    else
        w->have_prev = 0;
    ft__tile_figs f;
    memset(&f, 0, sizeof f);
    ft__walk_derive(w, tile, 0, &stp);
    figs_add(&f, &stp, 1);
    int64_t ws = stp.working_set > mid_ws ? stp.working_set : mid_ws;
    ksum_add_n(&f.lat, 1, &mid->lat);
    ksum_add_n(&f.comp, 1, &mid->comp);
    ksum_add_n(&f.mem, 1, &mid->mem);
    f.cbound += mid->cbound, f.mbound += mid->mbound, f.loaded += mid->loaded, f.written += mid->written;
    /* the step before the last again: the slices its reuse compares with */
    ft__walk_derive(w, tile, w->nk - 2, &stp);
    ft__walk_derive(w, tile, w->nk - 1, &stp);
    figs_add(&f, &stp, 1);
    if (stp.working_set > ws)
        ws = stp.working_set;
    *ws_max = ws;
    if (figs)
        *figs = f;
    return ksum_value(&f.lat);
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
    w->mixed_tag0[0] = w->mixed_tag[0];
    w->mixed_tag0[1] = w->mixed_tag[1];
    /* the last k-step adds the epilogue */
    ft__walk_derive(w, 0, w->nk - 1, &stp);
    *rows = w->mixed[0];
    *cols = w->mixed[1];
}
