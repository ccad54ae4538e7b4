/* eval.c - the per-step cost model of SPEC sections 3 and 4: region derivation, reuse, writes, working set. */
#include "internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { SPATIAL = 0, REDUCTION = 1 };

/* Source of a region's row or column range: the tile's rows, the tile's
 * columns, the k slice, or a whole reduction depth. */
enum { TAG_NONE = 0, TAG_TY, TAG_TX, TAG_KS, TAG_FULL };

void ft__sg_grid(const ft_problem *p, const ft_subgraph *g, ft_role *roles, int64_t *ntx, int64_t *nty, int64_t *nk)
{
    /* feeds[j]: output of g->ops[j] feeds a MatMul inside g.  Consumers are
     * listed after producers, so a reverse pass sees them first. */
    unsigned char small[64];
    unsigned char *feeds = g->nops <= 64 ? small : malloc((size_t)g->nops);
    int64_t wg = 0, hg = 0, steps = 1;
    if (!feeds) { /* out of memory: degrade to a safe (unfused) answer */
        *ntx = *nty = *nk = 1;
        return;
    }
    for (int j = g->nops - 1; j >= 0; j--) {
        int t = p->ops[g->ops[j]].output;
        feeds[j] = 0;
        for (int m = j + 1; m < g->nops && !feeds[j]; m++) {
            const ft_op *c = &p->ops[g->ops[m]];
            for (int i = 0; i < c->ninputs; i++)
                if (c->inputs[i] == t && (c->type == FT_OP_MATMUL || feeds[m])) {
                    feeds[j] = 1;
                    break;
                }
        }
        const ft_op *op = &p->ops[g->ops[j]];
        ft_role r = feeds[j] ? FT_ROLE_UPSTREAM : op->type == FT_OP_MATMUL ? FT_ROLE_KLOOP : FT_ROLE_EPILOGUE;
        if (roles)
            roles[j] = r;
        if (r != FT_ROLE_UPSTREAM) {
            const ft_tensor *T = &p->tensors[t];
            if (T->width > wg)
                wg = T->width;
            if (T->height > hg)
                hg = T->height;
            if (r == FT_ROLE_KLOOP && ft__ceil_div(op->k, g->k) > steps)
                steps = ft__ceil_div(op->k, g->k);
        }
    }
    if (feeds != small)
        free(feeds);
    *ntx = ft__ceil_div(wg, g->w);
    *nty = ft__ceil_div(hg, g->h);
    *nk = steps;
}

struct ft_walk {
    const ft_problem *p;
    const ft_subgraph *g;
    ft_compute_model model;
    int nops;
    ft_role *role;              /* per position */
    unsigned char *tbits;       /* produced | written | retained | resident, ntensors each */
    unsigned char *produced, *written, *retained, *resident;
    int64_t ntx, nty, nk, nsteps, next;
    int64_t ws_fixed;           /* resident tensors + written/retained outputs */
    /* needs on tensors produced inside the subgraph, per tensor */
    int64_t stamp;              /* one per derived step */
    int64_t *need_stamp;
    ft_region *need;
    unsigned char (*need_kind)[2];
    unsigned char (*need_tag)[2];
    /* per tensor and axis, where its ranges come from (TAG_*); a tensor
     * whose axis mixes sources makes the walk irregular (ft__walk_tile) */
    unsigned char (*tag_seen)[2];
    int irregular;
    int mixed[2];               /* some tensor's rows (0) / columns (1) mix sources */
    int mixed_internal;         /* ... and one of them is made inside the subgraph */
    int have_prev;              /* the previous derived step counts for reuse */
    /* per-step output */
    int cap;                    /* slice capacity */
    ft_slice *slices, *prev;
    int nslices, nprev;
    unsigned char *loaded;
    ft_slice *writes;
    int nwrites;
    int *active;
    ft_active *acts;
    int nactive;
};

void ft_walk_free(ft_walk *w)
{
    if (!w)
        return;
    free(w->role);
    free(w->tbits);
    free(w->need_stamp);
    free(w->need);
    free(w->need_kind);
    free(w->need_tag);
    free(w->tag_seen);
    free(w->slices);
    free(w->prev);
    free(w->loaded);
    free(w->writes);
    free(w->active);
    free(w->acts);
    free(w);
}

/* Allocate a walker for subgraph g (tensor sets not yet filled). */
static ft_walk *walk_alloc(const ft_problem *p, const ft_subgraph *g, ft_compute_model model)
{
    ft_walk *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    size_t nt = (size_t)p->ntensors;
    w->p = p;
    w->g = g;
    w->model = model;
    w->nops = g->nops;
    w->cap = 1;
    for (int j = 0; j < g->nops; j++)
        w->cap += p->ops[g->ops[j]].ninputs;
    w->role = malloc(sizeof(ft_role) * (size_t)(g->nops + 1));
    w->tbits = malloc(nt * 4 + 4);
    w->need_stamp = malloc(sizeof(int64_t) * (nt + 1));
    w->need = malloc(sizeof(ft_region) * (nt + 1));
    w->need_kind = malloc(2 * (nt + 1));
    w->need_tag = malloc(2 * (nt + 1));
    w->tag_seen = calloc(nt + 1, 2);
    w->slices = malloc(sizeof(ft_slice) * (size_t)w->cap);
    w->prev = malloc(sizeof(ft_slice) * (size_t)w->cap);
    w->loaded = malloc((size_t)w->cap);
    w->writes = malloc(sizeof(ft_slice) * (size_t)(g->nops + 1));
    w->active = malloc(sizeof(int) * (size_t)(g->nops + 1));
    w->acts = malloc(sizeof(ft_active) * (size_t)(g->nops + 1));
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

/* Grid, step count and the fixed part of the working set, once the tensor
 * sets are filled. */
static int walk_prepare(ft_walk *w, ft_status *st)
{
    const ft_problem *p = w->p;
    const ft_subgraph *g = w->g;
    size_t nt = (size_t)p->ntensors;
    ft__sg_grid(p, g, w->role, &w->ntx, &w->nty, &w->nk);
    int64_t tiles;
    if (__builtin_mul_overflow(w->ntx, w->nty, &tiles) || __builtin_mul_overflow(tiles, w->nk, &w->nsteps))
        return ft__fail(st, FT_EINPUT, 0, "the number of steps of a subgraph overflows 64 bits");
    for (size_t t = 0; t < nt; t++)
        w->need_stamp[t] = -1;
    for (size_t t = 0; t < nt; t++) {
        const ft_tensor *T = &p->tensors[t];
        if (w->resident[t])
            w->ws_fixed += T->width * T->height;
        if (w->produced[t] && w->retained[t])
            w->ws_fixed += T->width * T->height;
        else if (w->produced[t] && w->written[t])
            w->ws_fixed += (g->w < T->width ? g->w : T->width) * (g->h < T->height ? g->h : T->height);
    }
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

/* f(len, n) of SPEC 4: whole native tiles for a spatial dimension,
 * a proportional share for a reduction dimension. */
static inline double dim_factor(int64_t len, int64_t n, int kind)
{
    return kind == SPATIAL ? (double)ft__ceil_div(len, n) : (double)len / (double)n;
}

/* Record that tensor t is needed as region r with dimension kinds k0, k1. */
/* Note that tensor t's axis ax takes its ranges from source tag. */
static inline void see_tag(ft_walk *w, int t, int ax, int tag)
{
    if (!w->tag_seen[t][ax])
        w->tag_seen[t][ax] = (unsigned char)tag;
    else if (w->tag_seen[t][ax] != tag) {
        w->irregular = w->mixed[ax] = 1;
        if (w->produced[t])
            w->mixed_internal = 1;
    }
}

static void need(ft_walk *w, int t, ft_region r, int k0, int k1, int g0, int g1)
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
    w->slices[w->nslices].tensor = t;
    w->slices[w->nslices].region = r;
    w->nslices++;
}

/* Derive the step (tile, k-step ks) into *step: regions, slices (loaded
 * unless in the previously derived step), writes, compute and memory. */
static void derive(ft_walk *w, int64_t tile, int64_t ks, ft_step *step)
{
    const ft_problem *p = w->p;
    const ft_subgraph *g = w->g;
    int64_t idx = ++w->stamp;
    int64_t trow = tile / w->ntx, tcol = tile % w->ntx;
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
        int k0 = SPATIAL, k1 = SPATIAL, g0 = TAG_TY, g1 = TAG_TX;
        int64_t s0 = 0, s1 = 0; /* k slice of a k-loop MatMul */
        int last = 0;           /* this step finishes the op's tile */
        switch (w->role[j]) {
        case FT_ROLE_KLOOP:
            s0 = ks * g->k;
            if (s0 >= op->k)
                continue;
            s1 = min64(op->k, s0 + g->k);
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
        w->acts[w->nactive] = (ft_active){o, w->role[j], r, (unsigned char)k0, (unsigned char)k1, s0, s1};
        w->active[w->nactive++] = o;
        double kref = w->model == FT_COMPUTE_OP && op->type == FT_OP_MATMUL ? (double)op->k : (double)ft_native_k(p);
        double c = op->base_cost * dim_factor(r.r1 - r.r0, p->native_h, k0) * dim_factor(r.c1 - r.c0, p->native_w, k1);
        if (op->type == FT_OP_MATMUL) {
            int upstream = w->role[j] == FT_ROLE_UPSTREAM;
            c *= upstream ? (double)op->k / kref : (double)(s1 - s0) / kref;
            if (upstream) {
                need(w, op->inputs[0], (ft_region){r.r0, r.r1, 0, op->k}, k0, REDUCTION, g0, TAG_FULL);
                need(w, op->inputs[1], (ft_region){0, op->k, r.c0, r.c1}, REDUCTION, k1, TAG_FULL, g1);
            } else {
                need(w, op->inputs[0], (ft_region){r.r0, r.r1, s0, s1}, SPATIAL, REDUCTION, TAG_TY, TAG_KS);
                need(w, op->inputs[1], (ft_region){s0, s1, r.c0, r.c1}, REDUCTION, SPATIAL, TAG_KS, TAG_TX);
            }
        } else {
            for (int i = 0; i < op->ninputs; i++)
                need(w, op->inputs[i], r, k0, k1, g0, g1);
        }
        compute += c;
        if (last && w->written[op->output]) {
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
    double memory;
    double latency = ft_step_time(p, compute, loaded, written, &memory);
    step->index = idx;
    step->tile = tile;
    step->tile_row = trow;
    step->tile_col = tcol;
    step->kstep = ks;
    step->nslices = w->nslices;
    step->slices = w->slices;
    step->loaded = w->loaded;
    step->nwrites = w->nwrites;
    step->writes = w->writes;
    step->nactive = w->nactive;
    step->active = w->active;
    step->acts = w->acts;
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
    int64_t pos = idx / w->nk, ks = idx % w->nk;
    derive(w, w->g->order ? w->g->order[pos] : pos, ks, step);
    step->index = idx;
    w->next++;
    return 1;
}

double ft__walk_tile(ft_walk *w, int64_t prev, int64_t tile, int64_t *ws_max, int allow_ff)
{
    ft_step stp;
    if (prev >= 0)
        derive(w, prev, w->nk - 1, &stp);
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
        derive(w, tile, ks, &stp);
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
    derive(w, first, 0, &stp);
    *loaded0 = stp.loaded_elems;
    /* the last step's writes and compute do not depend on reuse */
    derive(w, last, w->nk - 1, &stp);
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
    derive(w, 0, 0, &stp);
    *interior = w->nk > 1 && (w->mixed[0] || w->mixed[1]) ? (w->mixed_internal ? 2 : 1) : 0;
    /* the last k-step adds the epilogue */
    derive(w, 0, w->nk - 1, &stp);
    *rows = w->mixed[0];
    *cols = w->mixed[1];
}

/* Neumaier's compensated sum: step latencies like 819.2 do not add exactly
 * in binary, and the simulator's integer clock must agree to the last digit. */
typedef struct ksum {
    double s, c;
} ksum;

static inline void ksum_add(ksum *k, double x)
{
    double t = k->s + x;
    if ((k->s >= 0 ? k->s : -k->s) >= (x >= 0 ? x : -x))
        k->c += (k->s - t) + x;
    else
        k->c += (x - t) + k->s;
    k->s = t;
}

static inline double ksum_value(const ksum *k) { return k->s + k->c; }

typedef struct progress {
    ft_progress_fn fn;
    void *ctx;
    int64_t done, total;
} progress;

#define PROGRESS_EVERY (1 << 18)

static int eval_sg(const ft_problem *p, const ft_schedule *s, int sg, ft_compute_model model, ft_sg_result *r, progress *pr,
                   ft_status *st)
{
    ft_walk *w;
    int rc = ft_walk_begin(p, s, sg, model, &w, st);
    if (rc)
        return rc;
    memset(r, 0, sizeof *r);
    ft_walk_grid(w, &r->ntx, &r->nty, &r->nk, &r->steps);
    ft_step stp;
    ksum lat = {0, 0}, comp = {0, 0}, mem = {0, 0};
    int64_t loaded0 = 0;
    while (ft_walk_next(w, &stp)) {
        if (stp.index == 0)
            loaded0 = stp.loaded_elems;
        if ((double)stp.working_set > p->capacity) {
            st->sg = sg;
            st->tile = stp.tile;
            st->step = stp.index;
            rc = ft__fail(st, FT_EINVALID, FT_R_OOM,
                          "%s: subgraph %d, tile %lld (row %lld, col %lld), step %lld (k-step %lld): working set %lld exceeds "
                          "fast_memory_capacity %.17g",
                          s->name ? s->name : "schedule", sg, (long long)stp.tile, (long long)stp.tile_row, (long long)stp.tile_col,
                          (long long)stp.index, (long long)stp.kstep, (long long)stp.working_set, p->capacity);
            break;
        }
        ksum_add(&lat, stp.latency);
        ksum_add(&comp, stp.compute);
        ksum_add(&mem, stp.memory);
        if (stp.compute > stp.memory)
            r->compute_bound_steps++;
        else
            r->memory_bound_steps++;
        if (stp.working_set > r->peak_working_set)
            r->peak_working_set = stp.working_set;
        r->loaded += stp.loaded_elems;
        r->written += stp.written_elems;
        if (pr && pr->fn && ((stp.index + 1) & (PROGRESS_EVERY - 1)) == 0 && pr->fn(pr->ctx, pr->done + stp.index + 1, pr->total)) {
            rc = ft__fail(st, FT_EINPUT, 0, "%s: evaluation interrupted in subgraph %d at step %lld", s->name ? s->name : "schedule", sg,
                          (long long)stp.index);
            break;
        }
    }
    if (pr)
        pr->done += r->steps;
    if (!rc && r->steps > 0) {
        double extra = ft__sg_extra(p, loaded0, stp.written_elems, stp.compute);
        if (extra > 0)
            ksum_add(&lat, extra);
    }
    r->latency = ksum_value(&lat);
    if (!rc && r->steps == 1 && p->timing.overlap == FT_OVERLAP_PIPELINE)
        r->latency = ft__sg_single(p, stp.loaded_elems, stp.written_elems, stp.compute);
    r->compute_time = ksum_value(&comp);
    r->memory_time = ksum_value(&mem);
    ft_walk_free(w);
    return rc;
}

int ft_evaluate_subgraph(const ft_problem *p, const ft_schedule *s, int sg, ft_compute_model model, ft_sg_result *out, ft_status *st)
{
    ft_status_clear(st);
    return eval_sg(p, s, sg, model, out, NULL, st);
}

void ft_eval_free(ft_eval *e)
{
    if (!e)
        return;
    free(e->sg);
    e->sg = NULL;
    e->nsubgraphs = 0;
}

int ft_evaluate(const ft_problem *p, const ft_schedule *s, ft_compute_model model, ft_eval *out, ft_status *st)
{
    return ft_evaluate_progress(p, s, model, NULL, NULL, out, st);
}

int ft_evaluate_progress(const ft_problem *p, const ft_schedule *s, ft_compute_model model, ft_progress_fn fn, void *ctx, ft_eval *out,
                         ft_status *st)
{
    progress pr = {fn, ctx, 0, 0};
    memset(out, 0, sizeof *out);
    out->model = model;
    int rc = ft_schedule_validate(p, s, st);
    if (rc)
        return rc;
    out->sg = calloc((size_t)s->nsubgraphs + 1, sizeof(ft_sg_result));
    if (!out->sg)
        return ft__fail(st, FT_ENOMEM, 0, "out of memory");
    out->nsubgraphs = s->nsubgraphs;
    for (int i = 0; i < s->nsubgraphs && fn; i++) {
        int64_t ntx, nty, nk;
        int64_t n;
        ft__sg_grid(p, &s->sg[i], NULL, &ntx, &nty, &nk);
        if (__builtin_mul_overflow(ntx, nty, &n) || __builtin_mul_overflow(n, nk, &n) || __builtin_add_overflow(pr.total, n, &pr.total))
            pr.total = INT64_MAX; /* the walk itself reports the overflow */
    }
    ksum total = {0, 0};
    for (int i = 0; i < s->nsubgraphs; i++) {
        rc = eval_sg(p, s, i, model, &out->sg[i], &pr, st);
        if (rc) {
            ft_eval_free(out);
            return rc;
        }
        ksum_add(&total, out->sg[i].latency);
    }
    out->total = ksum_value(&total);
    out->lower_bound = ft_lower_bound(p, model, NULL, NULL);
    out->capacity_bound = ft_lower_bound_capacity(p, model, NULL, NULL);
    return FT_OK;
}
