/* kernel_time.c - the cost model's time of one kernel (one op alone in a subgraph) on a target: the fastest candidate granularity, and for a MatMul the split-K form a GEMM library may run. */
#include "fusetile/measured.h"

#include "cost/score.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether x is one of the n ints at a. */
static int has_int(const int *a, int n, int x)
{
    for (int i = 0; i < n; i++)
        if (a[i] == x)
            return 1;
    return 0;
}

int ft_kernel_new(ft_problem **out, const char *type, const char *kind, int nin, const int64_t *w, const int64_t *h,
                  ft_status *st)
{
    *out = NULL;
    if (nin < 1 || nin > FT_KERNEL_MAX_INPUTS)
        return ft__fail(st, FT_EINPUT, 0, "kernel %s: %d inputs (1 to %d)", kind, nin, FT_KERNEL_MAX_INPUTS);
    size_t n = (size_t)(nin + 1) * 64 + 512, lw = 0;
    char *json = ft__malloc(n);
    if (!json)
        return ft__fail(st, FT_ENOMEM, 0, "out of memory");
#define PUT(...) lw += (size_t)snprintf(json + lw, n - lw, __VA_ARGS__)
    PUT("{\"widths\":[");
    for (int i = 0; i <= nin; i++)
        PUT("%s%lld", i ? "," : "", (long long)w[i]);
    PUT("],\"heights\":[");
    for (int i = 0; i <= nin; i++)
        PUT("%s%lld", i ? "," : "", (long long)h[i]);
    PUT("],\"inputs\":[[");
    for (int i = 0; i < nin; i++)
        PUT("%s%d", i ? "," : "", i);
    PUT("]],\"outputs\":[[%d]],\"base_costs\":[1],\"op_types\":[\"%s\"],\"op_kinds\":[\"%s\"],"
        "\"fast_memory_capacity\":1,\"slow_memory_bandwidth\":1,\"native_granularity\":[1,1]}",
        nin, type, kind);
#undef PUT
    int rc = ft_problem_parse(json, kind, out, st);
    ft__free(json);
    return rc;
}
/* Write s as a JSON string at out (room for strlen(s) + 3 bytes): a '"',
 * '\\' or control character replaced by '_' (names and kinds are for
 * reports); the bytes written. */
static size_t json_name(char *out, const char *s)
{
    size_t n = 0;
    out[n++] = '"';
    for (; *s; s++)
        out[n++] = (*s == '"' || *s == '\\' || (unsigned char)*s < 0x20) ? '_' : *s;
    out[n++] = '"';
    out[n] = 0;
    return n;
}

int ft_kernel_of_ops(const ft_problem *p, const int *ops, int nops, ft_problem **out, int *ids, ft_status *st)
{
    *out = NULL;
    if (nops < 1 || nops > FT_KERNEL_MAX_OPS)
        return ft__fail(st, FT_EINPUT, 0, "%s: a kernel of %d ops (1 to %d, FT_KERNEL_MAX_OPS)", p->name, nops,
                        FT_KERNEL_MAX_OPS);
    /* the kernel's tensors: its inputs (read, produced by none of its
     * ops) in order of first use, its output (the one op's output that no
     * op of the kernel reads), then the tensors made and used inside */
    int map[FT_KERNEL_MAX_OPS * (FT_KERNEL_MAX_INPUTS + 1)], nmap = 0, nin = 0, sink = -1;
    int in_kernel[FT_KERNEL_MAX_OPS];
    for (int i = 0; i < nops; i++) {
        if (ops[i] < 0 || ops[i] >= p->nops)
            return ft__fail(st, FT_EINPUT, 0, "%s: op %d out of range", p->name, ops[i]);
        in_kernel[i] = p->ops[ops[i]].output;
    }
#define PRODUCED(t) (has_int(in_kernel, nops, (t)))
    for (int i = 0; i < nops; i++) {
        const ft_op *op = &p->ops[ops[i]];
        if (op->ninputs > FT_KERNEL_MAX_INPUTS)
            return ft__fail(st, FT_EINPUT, 0, "%s: op %d has %d inputs (at most %d in a kernel)", p->name, ops[i],
                            op->ninputs, FT_KERNEL_MAX_INPUTS);
        for (int q = 0; q < op->ninputs; q++) {
            int t = op->inputs[q];
            if (!PRODUCED(t) && !has_int(map, nmap, t))
                map[nmap++] = t;
        }
        int read = 0;
        for (int j = 0; j < nops && !read; j++)
            for (int q = 0; q < p->ops[ops[j]].ninputs; q++)
                read |= p->ops[ops[j]].inputs[q] == op->output;
        if (!read) {
            if (sink >= 0)
                return ft__fail(st, FT_EINPUT, 0, "%s: the kernel of ops %d and %d has two outputs (%s and %s): its ops must "
                                "make one tensor", p->name, ops[sink], ops[i], p->ops[ops[sink]].name ? p->ops[ops[sink]].name : "?",
                                op->name ? op->name : "?");
            sink = i;
        }
    }
    if (sink < 0)
        return ft__fail(st, FT_EINPUT, 0, "%s: the kernel of op %d has no output (its ops form a cycle)", p->name, ops[0]);
    nin = nmap;
    map[nmap++] = p->ops[ops[sink]].output;
    for (int i = 0; i < nops; i++)
        if (i != sink)
            map[nmap++] = p->ops[ops[i]].output;
#undef PRODUCED
    /* ops in the problem's topological order, the sink last */
    int order[FT_KERNEL_MAX_OPS], no = 0;
    for (int x = 0; x < p->nops && no < nops; x++)
        for (int i = 0; i < nops; i++)
            if (ops[i] == p->topo[x] && i != sink)
                order[no++] = ops[i];
    order[no++] = ops[sink];
    /* the text's length: 24 bytes a number at most, the names as they are */
    size_t n = 512 + (size_t)nmap * 2 * 24, lw = 0;
    for (int i = 0; i < no; i++) {
        const ft_op *op = &p->ops[order[i]];
        const char *kind = op->kind ? op->kind : ft_op_type_name(op->type);
        n += (size_t)(op->ninputs + 4) * 24 + strlen(kind) + strlen(op->name ? op->name : kind) + 32;
    }
    char *json = ft__malloc(n);
    if (!json)
        return ft__fail(st, FT_ENOMEM, 0, "out of memory");
#define PUT(...) lw += (size_t)snprintf(json + lw, n - lw, __VA_ARGS__)
    PUT("{\"widths\":[");
    for (int i = 0; i < nmap; i++)
        PUT("%s%lld", i ? "," : "", (long long)p->tensors[map[i]].width);
    PUT("],\"heights\":[");
    for (int i = 0; i < nmap; i++)
        PUT("%s%lld", i ? "," : "", (long long)p->tensors[map[i]].height);
    const char *lists[] = {"inputs", "outputs", "base_costs", "op_types", "op_kinds", "op_names"};
    for (int l = 0; l < 6; l++) {
        PUT("],\"%s\":[", lists[l]);
        for (int i = 0; i < no; i++) {
            const ft_op *op = &p->ops[order[i]];
            const char *kind = op->kind ? op->kind : ft_op_type_name(op->type);
            PUT("%s", i ? "," : "");
            if (l == 0 || l == 1) {
                PUT("[");
                for (int q = 0; q < (l == 0 ? op->ninputs : 1); q++) {
                    int t = l == 0 ? op->inputs[q] : op->output, id = 0;
                    while (map[id] != t)
                        id++;
                    PUT("%s%d", q ? "," : "", id);
                }
                PUT("]");
            } else if (l == 2) {
                PUT("1");
            } else if (l == 3) {
                PUT("\"%s\"", ft_op_type_name(op->type));
            } else {
                lw += json_name(json + lw, l == 4 ? kind : op->name ? op->name : kind);
            }
        }
    }
    PUT("],\"fast_memory_capacity\":1,\"slow_memory_bandwidth\":1,\"native_granularity\":[1,1]}");
#undef PUT
    const ft_op *last = &p->ops[ops[sink]];
    int rc = ft_problem_parse(json, last->name ? last->name : last->kind ? last->kind : "kernel", out, st);
    ft__free(json);
    if (rc)
        return rc;
    for (int i = 0; i <= nin; i++)
        ids[i] = map[i];
    return FT_OK;
}

/* ------------------------------------------------------------- prediction */

/* Candidate extents along an axis of length len with native extent nat:
 * nat times 2^lo .. 2^hi (below len; none above nat unless larger ones
 * are allowed), and len itself where it is one of them or shorter than
 * nat.  At most hi - lo + 2 of them. */
static int extents(int64_t len, int64_t nat, int lo, int hi, int larger, int64_t *out)
{
    int n = 0;
    for (int s = lo; s <= hi; s++) {
        int64_t v = s < 0 ? nat >> -s : nat << s;
        if (v < 1 || (s > 0 && !larger))
            continue;
        if (v >= len) {
            if (n == 0 || out[n - 1] != len)
                out[n++] = len;
            break;
        }
        out[n++] = v;
    }
    if (n == 0)
        out[n++] = len < nat ? len : nat;
    return n;
}

/* A candidate granularity and a lower bound on the one-op subgraph's time
 * at it. */
typedef struct cand {
    int64_t w, h, k;
    double bound;
} cand;

static int cand_cmp(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->bound != y->bound)
        return x->bound < y->bound ? -1 : 1;
    return x->w != y->w ? (x->w < y->w ? -1 : 1) : x->h != y->h ? (x->h < y->h ? -1 : 1) : (x->k > y->k) - (x->k < y->k);
}

/* Lower bound on one-op problem p's time at granularity w x h x k: its
 * launch, and the longer of its tiles' compute (SPEC 4's rule,
 * ft__op_compute under the native compute model: each tile's whole w x h
 * region in native tiles, or the output's exact elements where the op pays
 * those, ft__op_padded; each k-step paying the step overhead, each tile its
 * tile overheads) spread evenly over the units and its tensors moved once
 * at the fastest bandwidths (ft__fastest_rates). */
static double cand_bound(const ft_problem *p, int64_t w, int64_t h, int64_t k)
{
    const ft_op *op = &p->ops[p->nops - 1];
    const ft_tensor *out = &p->tensors[op->output];
    int64_t ntx = ft__ceil_div(out->width, w), nty = ft__ceil_div(out->height, h), tiles = ntx * nty;
    int64_t steps = op->type == FT_OP_MATMUL ? ft__ceil_div(op->k, k) : 1;
    /* one k-step of k over all the tiles: rows and cols summed over them */
    double rows, cols;
    if (ft__op_padded(p, op)) {
        rows = (double)nty * ft__dim_units(h, p->native_h, FT_DIM_SPATIAL);
        cols = (double)ntx * ft__dim_units(w, p->native_w, FT_DIM_SPATIAL);
    } else {
        rows = ft__dim_units(out->height, p->native_h, FT_DIM_REDUCTION);
        cols = ft__dim_units(out->width, p->native_w, FT_DIM_REDUCTION);
    }
    double per = ft__op_compute(p, FT_COMPUTE_NATIVE, op, rows, cols, (double)k);
    double compute = ((double)steps * (per + (double)tiles * p->timing.step_overhead) +
                      (double)tiles * ft__tile_extra(p, op->type == FT_OP_MATMUL, 0, 1)) /
                     (double)ft__units(p);
    ft__rates r;
    ft__fastest_rates(p, &r);
    double loaded = 0;   /* the kernel's inputs: what no op of it produces */
    for (int i = 0; i < p->ngraph_inputs; i++)
        loaded += (double)ft_tensor_size(p, p->graph_inputs[i]);
    double memory = fmax(loaded / r.rb, (double)ft_tensor_size(p, op->output) / r.wb);
    return p->timing.launch_overhead + fmax(compute, memory);
}

/* The candidate extents of a kernel's tile along each output side: native
 * >> 3 up to native << 3 (these, when no region of a kernel without a
 * MatMul fits, from native >> 6: one element on a 64-wide native tile). */
#define KERNEL_EXTENT_LO (-3)
#define KERNEL_EXTENT_FINE (-6)

/* Capacity of the shared cache left to a kernel when `occupied` elements
 * of it hold other kernels' data: at least half an element, so that a
 * full cache leaves every footprint (one element or more) cold while the
 * cache still serves the kernel's re-reads (ft_timing). */
#define CACHE_LEFT_MIN 0.5

/* The time of one-op problem k (not yet mapped onto t) at its fastest
 * candidate granularity, or at fixed's when fixed is not NULL; *g gets the
 * granularity (its split is left alone).  `occupied` elements of the
 * shared cache hold other kernels' data (ft_kernel_time_shared).
 * misaligned: -1, k's MatMul runs at the speed its own K and N give
 * (ft_target_misaligned, in ft_target_apply); 0 or 1, at the speed of an
 * aligned or a misaligned one (a slice of a split-K GEMM runs as the
 * whole GEMM's operands are laid out).
 * Candidates whose bound reaches `budget` are not timed: *cycles is
 * INFINITY when that cuts them all.  lo: the smallest extent, native >>
 * -lo (KERNEL_EXTENT_LO or KERNEL_EXTENT_FINE). */
static int tiled_time_at(const ft_problem *k, const ft_target *t, const ft_kernel_choice *fixed, double budget,
                         double occupied, int misaligned, int lo, double *cycles, ft_kernel_choice *g, ft_status *st)
{
    ft_problem *p = ft_problem_clone(k);
    int rc = !p ? ft__fail(st, FT_ENOMEM, 0, "out of memory") : ft_target_apply(t, p, 0, st);
    if (rc) {
        ft_problem_free(p);
        return rc;
    }
    for (int i = 0; misaligned >= 0 && i < p->nops; i++) {
        int own = ft_target_misaligned(t, p, &p->ops[i]);
        if (p->ops[i].type == FT_OP_MATMUL && own != misaligned)
            p->ops[i].base_cost *= own ? t->misaligned_efficiency : 1 / t->misaligned_efficiency;
    }
    if (occupied > 0 && p->timing.cache_capacity > 0) {
        p->timing.cache_capacity = fmax(p->timing.cache_capacity - occupied, CACHE_LEFT_MIN);
        p->timing.cache_resident = fmax(p->timing.cache_resident - occupied, 0);
    }
    const ft_op *op = &p->ops[p->nops - 1];   /* the kernel's last op writes its output */
    const ft_tensor *out = &p->tensors[op->output];
    int64_t ow = out->width, oh = out->height;
    int ncand = 0;
    cand cs[8 * 8 * 8];
    if (fixed) {
        cs[ncand++] = (cand){fixed->w, fixed->h, fixed->k, 0};
    } else {
        int64_t ws[3 - KERNEL_EXTENT_FINE + 1], hs[3 - KERNEL_EXTENT_FINE + 1], ks[3 - KERNEL_EXTENT_FINE + 1];
        int nw = extents(ow, p->native_w, lo, 3, p->allow_larger, ws);
        int nh = extents(oh, p->native_h, lo, 3, p->allow_larger, hs);
        int nk = 1;
        ks[0] = ft_native_k(p);
        if (op->type == FT_OP_MATMUL)
            nk = extents(op->k, ft_native_k(p), -2, 3, p->allow_larger, ks);
        /* candidates in order of a lower bound on their time
         * (cand_bound): the fast ones first, the rest cut; a kernel
         * with a MatMul only at tiles whose accumulators fit a unit's
         * registers */
        int mm = 0;
        for (int i = 0; i < p->nops; i++)
            mm |= p->ops[i].type == FT_OP_MATMUL;
        /* 7 x 7 x 6 at most with a MatMul (KERNEL_EXTENT_LO), 10 x 10 x 1 without */
        assert(nw * nh * nk <= (int)(sizeof cs / sizeof cs[0]));
        for (int a = 0; a < nw; a++)
            for (int b = 0; b < nh; b++)
                for (int c = 0; c < nk && (!mm || ft_target_tile_fits_registers(t, ws[a], hs[b])); c++)
                    cs[ncand++] = (cand){ws[a], hs[b], ks[c], cand_bound(p, ws[a], hs[b], ks[c])};
        if (ncand == 0) {   /* the message from k: op is p's, freed here */
            const ft_op *kop = &k->ops[k->nops - 1];
            ft_problem_free(p);
            return ft__fail(st, FT_EINPUT, 0, "%s kernel %lldx%lld: no tile's accumulators fit %s's "
                            "compute.register_file_bytes (%lld)", kop->kind ? kop->kind : "op", (long long)ow,
                            (long long)oh, t->name, (long long)t->register_file_bytes);
        }
        qsort(cs, (size_t)ncand, sizeof cs[0], cand_cmp);
    }
    /* each candidate scored exactly by the scorer (equal to ft_evaluate's
     * walk, through its memo of like tiles) in the one-op subgraph's
     * context: its output written, nothing retained */
    ft__scorer S;
    unsigned char *flags = ft__calloc((size_t)p->ntensors * 3 + 3, 1);
    if (!flags || ft__scorer_init(&S, p, FT_COMPUTE_NATIVE) != 0) {
        ft__free(flags);
        ft_problem_free(p);
        return ft__fail(st, FT_ENOMEM, 0, "out of memory");
    }
    sctx x = {flags, flags + p->ntensors + 1, flags + 2 * (p->ntensors + 1)};
    x.written[op->output] = 1;
    mixinfo mx;
    int all[FT_KERNEL_MAX_OPS];
    assert(p->nops >= 1 && p->nops <= FT_KERNEL_MAX_OPS); /* ft_kernel_new: 1; ft_kernel_of_ops: checked */
    for (int i = 0; i < p->nops; i++)
        all[i] = i;
    ft_subgraph one = {.nops = p->nops, .ops = all};
    ft_subgraph *sg = &one;
    ft__probe_mixed(&S, &x, sg, &mx);
    double best = INFINITY;
    for (int i = 0; i < ncand && cs[i].bound < fmin(best, budget); i++) {
        cfg c = {cs[i].w, cs[i].h, cs[i].k, ORD_RASTER};
        double lat = ft__score(&S, &x, &mx, sg, &c, fmin(best, budget));
        if (lat < best) {
            best = lat;
            g->w = c.w;
            g->h = c.h;
            g->k = c.k;
        }
    }
    ft__scorer_free(&S);
    ft__free(flags);
    int matmul = 0;
    for (int i = 0; i < p->nops; i++)
        matmul |= p->ops[i].type == FT_OP_MATMUL;
    ft_problem_free(p);
    /* a kernel without a MatMul whose regions at the usual extents fit
     * nowhere (a pooling Layout whose every output element reads a whole
     * feature map) is tried at tiles down to one element */
    if (!isfinite(best) && !fixed && !matmul && lo > KERNEL_EXTENT_FINE && ncand > 0 && cs[0].bound < budget)
        return tiled_time_at(k, t, NULL, budget, occupied, misaligned, KERNEL_EXTENT_FINE, cycles, g, st);
    if (!isfinite(best) && (fixed || ncand == 0 || cs[0].bound < budget))
        return ft__fail(st, FT_EINPUT, 0, "%s kernel %lldx%lld: %s fits %s's fast memory",
                        k->ops[k->nops - 1].kind ? k->ops[k->nops - 1].kind : "op", (long long)ow, (long long)oh,
                        fixed ? "the granularity given no longer" : "no granularity", t->name);
    *cycles = best;
    return FT_OK;
}

/* tiled_time_at from the usual extents (KERNEL_EXTENT_LO). */
static int tiled_time(const ft_problem *k, const ft_target *t, const ft_kernel_choice *fixed, double budget,
                      double occupied, int misaligned, double *cycles, ft_kernel_choice *g, ft_status *st)
{
    return tiled_time_at(k, t, fixed, budget, occupied, misaligned, KERNEL_EXTENT_LO, cycles, g, st);
}

/* The split-K form of MatMul kernel k in s slices: the MatMul of the
 * slices side by side (the same tiles and per-step traffic as s slices)
 * and the add of the s partial sums.  The slices are stacked along the
 * longer of M and N: [M, K/s] x [K/s, s*N] when M <= N, so that every
 * element of the larger operand is there once and only the smaller
 * operand's footprint is short (by (s - 1) / s of it). */
static int split_kernels(const ft_problem *k, int s, ft_problem **mm, ft_problem **add, ft_status *st)
{
    const ft_op *op = &k->ops[0];
    int64_t m = k->tensors[op->output].height, n = k->tensors[op->output].width;
    int64_t ks = ft__ceil_div(op->k, s);
    int64_t sm = m <= n ? m : (int64_t)s * m, sn = m <= n ? (int64_t)s * n : n;
    int64_t w[FT_KERNEL_MAX_INPUTS + 1], h[FT_KERNEL_MAX_INPUTS + 1];
    w[0] = ks, h[0] = sm;
    w[1] = sn, h[1] = ks;
    w[2] = sn, h[2] = sm;
    *add = NULL;
    int rc = ft_kernel_new(mm, "MatMul", k->ops[0].kind ? k->ops[0].kind : "matmul", 2, w, h, st);
    if (rc)
        return rc;
    for (int i = 0; i <= s; i++)
        w[i] = n, h[i] = m;
    if ((rc = ft_kernel_new(add, "Pointwise", "add", s, w, h, st))) {
        ft_problem_free(*mm);
        *mm = NULL;
    }
    return rc;
}

/* The stream-K time of MatMul kernel k (not yet mapped onto t) whose
 * data-parallel form at granularity g takes dp cycles: INFINITY unless
 * its tiles make more than one wave of the units with the last partial.
 * Stream-K gives every unit the same share of the tiles' k-iterations, so
 * the waves past the launch take tiles / units of the whole waves' time,
 * not below the candidates' lower bound at g (cand_bound: the compute
 * over all units, the tensors moved once), plus t's streamk_overhead (the
 * fix-up: a tile shared by two units has its partial accumulators written
 * to a workspace and summed). */
static int streamk_time(const ft_problem *k, const ft_target *t, const ft_kernel_choice *g, double dp, double *cycles,
                        ft_status *st)
{
    *cycles = INFINITY;
    ft_problem *p = ft_problem_clone(k);
    int rc = !p ? ft__fail(st, FT_ENOMEM, 0, "out of memory") : ft_target_apply(t, p, 0, st);
    if (rc == FT_OK) {
        const ft_tensor *out = &p->tensors[p->ops[p->nops - 1].output];
        int64_t tiles = ft__ceil_div(out->width, g->w) * ft__ceil_div(out->height, g->h), units = ft__units(p);
        if (tiles > units && tiles % units != 0) {
            double whole = (double)ft__ceil_div(tiles, units), launch = p->timing.launch_overhead;
            double spread = launch + (dp - launch) * ((double)tiles / (double)units) / whole;
            *cycles = fmax(spread, cand_bound(p, g->w, g->h, g->k)) + t->streamk_overhead;
        }
    }
    ft_problem_free(p);
    return rc;
}

int ft_kernel_time(const ft_problem *k, const ft_target *t, const ft_kernel_choice *fixed, double *cycles,
                   ft_kernel_choice *chosen, ft_status *st)
{
    return ft_kernel_time_shared(k, t, fixed, 0, cycles, chosen, st);
}

int ft_kernel_time_shared(const ft_problem *k, const ft_target *t, const ft_kernel_choice *fixed, double occupied,
                          double *cycles, ft_kernel_choice *chosen, ft_status *st)
{
    ft_status_clear(st);
    if (t->contest)
        return ft__fail(st, FT_EINPUT, 0, "%s: a contest target has no clock; give a machine target", t->path);
    if (k->nops < 1 || k->nops > FT_KERNEL_MAX_OPS)
        return ft__fail(st, FT_EINPUT, 0, "kernel of %d ops (1 to %d, FT_KERNEL_MAX_OPS)", k->nops, FT_KERNEL_MAX_OPS);
    ft_kernel_choice best = {0, 0, 0, 1, 0, 0, 0, 0};
    int rc = tiled_time(k, t, fixed && fixed->split == 1 ? fixed : NULL, INFINITY, occupied, -1, cycles, &best, st);
    const ft_op *op = &k->ops[k->nops - 1];
    /* stream-K: the data-parallel form's tiles, their k-loops spread over
     * the units (a kernel that is one MatMul alone, as split-K) */
    int sk_on = t->streamk_overhead >= 0 && k->nops == 1 && op->type == FT_OP_MATMUL;
    if (rc == FT_OK && sk_on && (!fixed || (fixed->split == 1 && fixed->streamk))) {
        double sk;
        if ((rc = streamk_time(k, t, &best, *cycles, &sk, st)))
            return rc;
        if (fixed && !isfinite(sk))
            return ft__fail(st, FT_EINPUT, 0, "%s kernel: the stream-K form given no longer applies", op->kind ? op->kind : "op");
        if (fixed || sk < *cycles) {
            *cycles = sk;
            best.streamk = 1;
        }
    }
    if (fixed && fixed->split == 1) {
        if (chosen && rc == FT_OK)
            *chosen = best;
        return rc;
    }
    if (rc && !fixed)
        return rc;
    if (rc)
        *cycles = INFINITY;
    int64_t m = k->tensors[op->output].height, n = k->tensors[op->output].width;
    int misaligned = ft_target_misaligned(t, k, op);
    /* split-K for a kernel that is one MatMul alone (a fused kernel's
     * operand is made inside it) */
    for (int s = 2; k->nops == 1 && op->type == FT_OP_MATMUL && s <= FT_KERNEL_MAX_SPLIT; s *= 2) {
        if (fixed && fixed->split != s)
            continue;
        if (ft__ceil_div(op->k, s) < t->native_k || (m < n ? m : n) > INT64_MAX / 2 / s)
            break;
        ft_problem *mm, *add;
        if ((rc = split_kernels(k, s, &mm, &add, st)))
            return rc;
        ft_kernel_choice c = {0, 0, 0, s, 0, 0, 0, 0};
        ft_kernel_choice cadd = {0, 0, 0, 1, 0, 0, 0, 0};
        ft_kernel_choice fmm, fadd;
        if (fixed) {
            fmm = (ft_kernel_choice){fixed->w, fixed->h, fixed->k, 1, 0, 0, 0, 0};
            fadd = (ft_kernel_choice){fixed->add_w, fixed->add_h, fixed->add_k, 1, 0, 0, 0, 0};
        }
        double tm, ta;
        double budget = fixed ? INFINITY : *cycles + t->launch_overhead - t->split_overhead;
        rc = tiled_time(add, t, fixed ? &fadd : NULL, budget, occupied, -1, &ta, &cadd, st);
        if (rc == FT_OK && ta < budget)
            rc = tiled_time(mm, t, fixed ? &fmm : NULL, budget - ta, occupied, misaligned, &tm, &c, st);
        else
            tm = INFINITY;
        ft_problem_free(mm);
        ft_problem_free(add);
        if (rc == FT_ENOMEM || (rc && fixed))
            return rc;
        /* one kernel: the add of the partial sums is its last pass (the
         * last slice of each tile adds the others, as serial split-K
         * does), so it pays no launch of its own, but the target's
         * split overhead (the reduction's own fixed cost) */
        double ts = tm + ta - t->launch_overhead + t->split_overhead;
        if (rc == FT_OK && ts < *cycles) {
            *cycles = ts;
            best = c;
            best.split = s;
            best.add_w = cadd.w;
            best.add_h = cadd.h;
            best.add_k = cadd.k;
        }
    }
    if (!isfinite(*cycles))
        return ft__fail(st, FT_EINPUT, 0, "%s kernel: no form fits %s's fast memory", op->kind ? op->kind : "op", t->name);
    ft_status_clear(st);
    if (chosen)
        *chosen = best;
    return FT_OK;
}

/* The reuse window of every kernel of replayed row r (ft_meas_predict):
 * span[i] is how many kernels back, cyclically, the last touch of kernel
 * i's inputs reaches (1: the kernel before it; r->nkernels: only kernel i
 * itself, in the replay before).  Two passes over the replay, the first
 * to learn where each tensor was last touched.  0 with span all 1 when r
 * has no tensor ids. */
static int reuse_spans(const ft_meas_row *r, int *span, ft_status *st)
{
    int n = r->nkernels;
    for (int i = 0; i < n; i++)
        span[i] = 1;
    if (!r->tensors || n == 0)
        return FT_OK;
    int64_t *last = ft__malloc(sizeof *last * (size_t)(r->ntensors > 0 ? r->ntensors : 1));
    if (!last)
        return ft__fail(st, FT_ENOMEM, 0, "out of memory");
    for (int x = 0; x < r->ntensors; x++)
        last[x] = -1;
    for (int64_t s = 0; s < 2 * (int64_t)n; s++) {
        int i = (int)(s % n);
        int nin = r->kernels[i]->ngraph_inputs;
        if (s >= n) {
            span[i] = 1;
            for (int q = 0; q < nin; q++) {
                int64_t d = s - last[r->tensors[i][q]];
                if (d > span[i])
                    span[i] = (int)d;
            }
        }
        for (int q = 0; q <= nin; q++)
            last[r->tensors[i][q]] = s;
    }
    ft__free(last);
    return FT_OK;
}

/* Elements of the shared cache held by tensors of kernel i's reuse window
 * (span kernels back) that are not kernel i's own, counted once each;
 * the count stops once it passes cap (the kernel is cold then anyway).
 * mark has r->ntensors entries, each below *gen. */
static double window_others(const ft_meas_row *r, int i, int span, double cap, int *mark, int *gen)
{
    int n = r->nkernels, g = ++*gen;
    for (int q = 0; q <= r->kernels[i]->ngraph_inputs; q++)
        mark[r->tensors[i][q]] = g;
    double held = 0;
    for (int d = 1; d < span && held <= cap; d++) {
        int j = ((i - d) % n + n) % n;
        const ft_problem *kj = r->kernels[j];
        for (int q = 0; q <= kj->ngraph_inputs; q++) {
            int x = r->tensors[j][q];
            if (mark[x] != g) {
                mark[x] = g;
                held += (double)ft_tensor_size(kj, q);
            }
        }
    }
    return held;
}

int ft_meas_predict(const ft_meas_row *r, const ft_target *t, const ft_kernel_choice *fixed, ft_kernel_choice *chosen,
                    double *us, ft_status *st)
{
    return ft_meas_predict_kernels(r, t, fixed, chosen, NULL, us, st);
}

int ft_meas_predict_kernels(const ft_meas_row *r, const ft_target *t, const ft_kernel_choice *fixed,
                            ft_kernel_choice *chosen, double *kernel_us, double *us, ft_status *st)
{
    int n = r->nkernels;
    int *span = ft__malloc(sizeof *span * (size_t)(n > 0 ? n : 1));
    int *mark = r->tensors ? ft__calloc((size_t)(r->ntensors > 0 ? r->ntensors : 1), sizeof *mark) : NULL;
    if (!span || (r->tensors && !mark)) {
        ft__free(span);
        ft__free(mark);
        return ft__fail(st, FT_ENOMEM, 0, "out of memory");
    }
    int rc = reuse_spans(r, span, st), gen = 0;
    double cap = ft_target_cache_elements(t);
    ksum sum = {0, 0};
    if (!r->bare)
        ksum_add(&sum, t->run_overhead);
    for (int i = 0; i < n && rc == FT_OK; i++) {
        double c, held = r->tensors && cap > 0 ? window_others(r, i, span[i], cap, mark, &gen) : 0;
        rc = ft_kernel_time_shared(r->kernels[i], t, fixed ? &fixed[i] : NULL, held, &c, chosen ? &chosen[i] : NULL, st);
        if (rc == FT_OK)
            ksum_add(&sum, c);
        if (rc == FT_OK && kernel_us)
            kernel_us[i] = c / t->clock_hz * 1e6;
    }
    ft__free(span);
    ft__free(mark);
    if (rc)
        return rc;
    /* back-to-back replays: the next is launched while this one runs */
    *us = fmax(r->bare ? 0 : t->replay_interval, ksum_value(&sum)) / t->clock_hz * 1e6;
    return FT_OK;
}

/* The energy counts (ft__energy_counts: work, traffic, footprint; not the
 * latency) of kernel problem p (a target applied) run as one subgraph at
 * granularity w x h x k, added to *c. */
static int form_counts(const ft_problem *p, int64_t w, int64_t h, int64_t k, ft__energy_counts *c, ft_status *st)
{
    int all[FT_KERNEL_MAX_OPS];
    for (int i = 0; i < p->nops; i++)
        all[i] = i;
    ft_subgraph one = {.nops = p->nops, .ops = all, .w = w, .h = h, .k = k};
    ft_schedule s = {.name = "kernel", .nsubgraphs = 1, .sg = &one, .len_granularities = -1, .len_retain = -1,
                     .len_orders = -1, .len_latencies = -1};
    ft_eval ev;
    int rc = ft_evaluate(p, &s, FT_COMPUTE_NATIVE, &ev, st);
    if (rc)
        return rc;
    ft__energy_counts f;
    if (ft__sg_energy_counts(p, &s, 0, &f)) {
        ft_eval_free(&ev);
        return ft__fail(st, FT_ENOMEM, 0, "out of memory");
    }
    c->macs += f.macs;
    c->pointwise += f.pointwise;
    c->fp_read += f.fp_read;
    c->fp_write += f.fp_write;
    c->loaded += (double)ev.sg[0].loaded;
    c->written += (double)ev.sg[0].written;
    ft_eval_free(&ev);
    return FT_OK;
}

/* Contract: measured.h. */
int ft_kernel_energy(const ft_problem *k, const ft_target *t, const ft_kernel_choice *form, double cycles, double *joules,
                     ft_status *st)
{
    ft_status_clear(st);
    if (t->contest || !t->energy_on)
        return ft__fail(st, FT_EINPUT, 0, "%s: the target has no energy group (docs/DEVICE.md, \"Energy\")", t->path);
    ft_problem *mm = NULL, *add = NULL;
    int rc = form->split > 1 ? split_kernels(k, form->split, &mm, &add, st) : FT_OK;
    const ft_problem *parts[2] = {form->split > 1 ? mm : k, add};
    const int64_t g[2][3] = {{form->w, form->h, form->k}, {form->add_w, form->add_h, form->add_k}};
    ft__energy_counts c = {0, 0, 0, 0, 0, 0, cycles};
    ft_problem *p = NULL;
    for (int i = 0; i < 2 && rc == FT_OK && parts[i]; i++) {
        ft_problem_free(p);
        p = ft_problem_clone(parts[i]);
        rc = !p ? ft__fail(st, FT_ENOMEM, 0, "out of memory") : ft_target_apply(t, p, 0, st);
        if (rc == FT_OK)
            rc = form_counts(p, g[i][0], g[i][1], g[i][2], &c, st);
    }
    /* one kernel: one launch, its time the kernel's (ft_kernel_time) */
    if (rc == FT_OK)
        *joules = ft__energy(p, &c);
    ft_problem_free(p);
    ft_problem_free(mm);
    ft_problem_free(add);
    return rc;
}

/* Contract: measured.h. */
int ft_meas_predict_energy(const ft_meas_row *r, const ft_target *t, const ft_kernel_choice *forms, const double *kernel_us,
                           double *joules, ft_status *st)
{
    ksum sum = {0, 0};
    for (int i = 0; i < r->nkernels; i++) {
        double j;
        int rc = ft_kernel_energy(r->kernels[i], t, &forms[i], kernel_us[i] * 1e-6 * t->clock_hz, &j, st);
        if (rc)
            return rc;
        ksum_add(&sum, j);
    }
    *joules = ksum_value(&sum);
    return FT_OK;
}

/* Contract: measured.h. */
int ft_meas_predict_figure(const ft_meas_row *r, const ft_target *t, double *pred, double *meas, ft_status *st)
{
    if (!(r->measured_j > 0)) {
        *meas = r->measured_us;
        return ft_meas_predict(r, t, NULL, NULL, pred, st);
    }
    int n = r->nkernels > 0 ? r->nkernels : 1;
    ft_kernel_choice *forms = ft__calloc((size_t)n, sizeof *forms);
    double *kus = ft__calloc((size_t)n, sizeof *kus), us;
    int rc = !forms || !kus ? ft__fail(st, FT_ENOMEM, 0, "out of memory") : ft_meas_predict_kernels(r, t, NULL, forms, kus, &us, st);
    if (rc == FT_OK)
        rc = ft_meas_predict_energy(r, t, forms, kus, pred, st);
    *meas = r->measured_j;
    ft__free(forms);
    ft__free(kus);
    return rc;
}
