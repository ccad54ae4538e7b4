/* capbound.c - the capacity-aware lower bound (SPEC section 7): slow-memory traffic that the fast memory's capacity forces on top of the compulsory graph inputs and outputs, combined with compute as the SPEC bound does.
 *
 * Every figure below is traffic that EVERY valid schedule has (SPEC
 * sections 2-4, recomputation, retention, any granularity and traversal
 * included); SPEC.md section 7 has the proof with examples.  In brief:
 *
 * Facts.  (F1) Graph inputs are never resident; a tensor of more than
 * `capacity` elements cannot be resident either (a resident tensor counts
 * in full in the working set).  (F2) A slice is free only when the
 * previous step of the subgraph had the identical (tensor, region) slice.
 * (F3) A tensor that some subgraph reads from slow memory in full was
 * written in full before.  (F4) A k-loop MatMul q of a subgraph with
 * nk >= 2 k-steps per tile needs, in each of its tiles, L[rows, ks] and
 * R[ks, cols] for distinct k slices ks covering [0, K), and never has the
 * same k slice in the step before a tile's first: within a tile the slices
 * differ, and the previous tile's last k-step either has q inactive (when q
 * has fewer k-steps than the subgraph) or a slice other than the first.
 * (F5) Without granularities above native, a MatMul with K > native k has
 * at least two k-steps, and q has at least ceil(H/nh) x ceil(W/nw) tiles.
 *
 * Streams.  Along a chain of tensors each read by one op only, every step
 * of such a q needs a region no other step next to it needs, so each step
 * loads it when it is a graph input (F2).  q's L is swept once per column
 * of tiles (ceil(W/nw) times in all), its R once per row of tiles; through
 * an upstream MatMul that produces L (R), its R (L) operand is swept whole
 * in every tile.  A produced tensor on the chain is either ephemeral (its
 * producer is in the subgraph: recurse), resident (only if it fits: 0), or
 * loaded (its sweeps, plus its write, F3).  stream() takes the least.  A
 * Layout producer ends the chain: two regions of its output may map to one
 * region of its input (SPEC 4), so the input's steps may repeat a region
 * and nothing is claimed for it (its output's own figure, loaded or
 * resident, still counts).
 *
 * Anchors.  A MatMul o with K > native k whose output reaches no MatMul
 * through Pointwise or Layout ops is a k-loop MatMul in every subgraph that holds it,
 * so nk >= 2 there (F5): its two streams apply.  If its output t is larger
 * than the capacity and read by one Pointwise op e only (a Layout e has
 * no other input: nothing is claimed when fused), then either no
 * subgraph holds o and e (t is written and read: 2|t|), or one, S, does:
 * there e's other inputs are needed tile by tile and each is a graph input
 * (0), fits (0), is loaded (written and read in full: 2|u|), or is
 * produced in S by a k-loop MatMul (whose streams apply, nk >= 2 in S) or
 * an epilogue Pointwise op (recurse).
 *
 * Exclusive pairs.  A MatMul whose L and R are distinct graph inputs read
 * by it only: each step's new (row, column, k) triples are at most rho per
 * element of L or R it loads, rho the most rows or columns a region can
 * have, so L and R are loaded H W K / rho elements at least.
 *
 * Each op gives the larger of its two figures, charged to the tensors whose
 * traffic it counts; figures of ops with disjoint charged tensors add up
 * (greedily, largest first), since they count different transfers.  Writes
 * are counted in read time at min(1, bandwidth / write_bandwidth) each,
 * and not at all with separate channels (where they may hide behind the
 * reads).  The traffic time is ft_step_time's for that many elements moved
 * as one step (as ft_lower_bound does), combined with the SPEC bound's
 * compute by ft__bound_combine; the result is never below ft_lower_bound. */
#include "cost/cost.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A stream of [fixed rows, ks] or [ks, fixed cols] regions, or the inputs
 * of an epilogue op, needed tile by tile (swept once in all). */
enum { COL = 0, ROW = 1, TILE = 2 };

typedef struct cb {
    const ft_problem *p;
    double cap;       /* capacity */
    double wf;        /* read-time weight of one written element */
    int depth;        /* recursion guard */
    const unsigned char *feeds;  /* fill_feeds */
    int oom;          /* an allocation failed: every figure is 0 */
} cb;

static double size_of(const cb *c, int t) { return (double)ft_tensor_size(c->p, t); }

static unsigned char *set_new(cb *c)
{
    unsigned char *s = ft__calloc((size_t)c->p->ntensors, 1);
    if (!s)
        c->oom = 1;
    return s;
}

/* a (+) b: the sum when the charged sets sa and sb are disjoint, else the
 * larger; sa becomes their union. */
static double join(const cb *c, double a, unsigned char *sa, double b, const unsigned char *sb)
{
    int disjoint = 1;
    for (int t = 0; t < c->p->ntensors; t++) {
        if (sa[t] && sb[t])
            disjoint = 0;
        sa[t] |= sb[t];
    }
    return disjoint ? a + b : a > b ? a : b;
}

/* Whether input i of op repeats an earlier input (the same slice). */
static int repeated(const ft_op *op, int i)
{
    for (int j = 0; j < i; j++)
        if (op->inputs[j] == op->inputs[i])
            return 1;
    return 0;
}

/* Extra traffic (beyond the compulsory) of tensor t needed as a stream in
 * direction dir, swept mult times in all, tiles = the root MatMul's tiles;
 * with TILE, an input of an epilogue op in a subgraph with at least two
 * k-steps per tile (mult = 1). */
static double stream(cb *c, int t, int dir, double mult, double tiles, unsigned char *set);

/* (+) over the distinct inputs of Pointwise op other than `skip` of their
 * streams (stream's arguments). */
static double over_inputs(cb *c, const ft_op *op, int skip, int dir, double mult, double tiles, unsigned char *set)
{
    double x = 0;
    for (int i = 0; i < op->ninputs && !c->oom; i++) {
        if (op->inputs[i] == skip || repeated(op, i))
            continue;
        unsigned char *sub = set_new(c);
        if (!sub)
            break;
        double y = stream(c, op->inputs[i], dir, mult, tiles, sub);
        x = join(c, x, set, y, sub);
        ft__free(sub);
    }
    return x;
}

static double kloop(cb *c, const ft_op *op, unsigned char *set);

static double stream(cb *c, int t, int dir, double mult, double tiles, unsigned char *set)
{
    const ft_tensor *T = &c->p->tensors[t];
    double n = size_of(c, t);
    if (T->nconsumers != 1)
        return 0;
    if (T->producer < 0) {
        if (mult <= 1)
            return 0;
        set[t] = 1;
        return (mult - 1) * n;
    }
    if (n <= c->cap)
        return 0;   /* it could be resident */
    set[t] = 1;
    double loaded = mult * n + c->wf * n, eph = 0;
    const ft_op *q = &c->p->ops[T->producer];
    if (c->depth < c->p->nops) {
        c->depth++;
        if (q->type == FT_OP_MATMUL && dir == TILE) {
            eph = kloop(c, q, set);   /* a k-loop MatMul: only an epilogue reads t */
        } else if (q->type == FT_OP_MATMUL) {
            if (q->inputs[0] != q->inputs[1])
                eph = stream(c, q->inputs[dir == COL ? 1 : 0], dir, tiles, tiles, set);
        } else if (q->type == FT_OP_LAYOUT) {
            eph = 0;   /* the chain ends: nothing claimed through a Layout */
        } else {
            eph = over_inputs(c, q, -1, dir, mult, tiles, set);
        }
        c->depth--;
    }
    return eph < loaded ? eph : loaded;
}

/* The two streams of MatMul op o as a k-loop MatMul of a subgraph with at
 * least two k-steps per tile. */
static double kloop(cb *c, const ft_op *op, unsigned char *set)
{
    const ft_problem *p = c->p;
    const ft_tensor *O = &p->tensors[op->output];
    if (op->inputs[0] == op->inputs[1])
        return 0;
    double cols = ft__dim_units(O->width, p->native_w, FT_DIM_SPATIAL), rows = ft__dim_units(O->height, p->native_h, FT_DIM_SPATIAL);
    unsigned char *sub = set_new(c);
    if (!sub)
        return 0;
    double a = stream(c, op->inputs[0], COL, cols, rows * cols, set);
    double b = stream(c, op->inputs[1], ROW, rows, rows * cols, sub);
    a = join(c, a, set, b, sub);
    ft__free(sub);
    return a;
}

/* feeds[t] = 1 when tensor t reaches a MatMul through Pointwise and
 * Layout ops only (SPEC 3; ntensors bytes, filled; consumers come later in
 * p->topo). */
static void fill_feeds(const ft_problem *p, unsigned char *feeds)
{
    memset(feeds, 0, (size_t)p->ntensors);
    for (int i = p->nops - 1; i >= 0; i--) {
        const ft_tensor *T = &p->tensors[p->ops[p->topo[i]].output];
        unsigned char *f = &feeds[p->ops[p->topo[i]].output];
        for (int j = 0; j < T->nconsumers && !*f; j++) {
            const ft_op *c = &p->ops[T->consumers[j]];
            *f = c->type == FT_OP_MATMUL || feeds[c->output];
        }
    }
}

/* Anchor figure of op (0 if op is no anchor). */
static double anchor(cb *c, const ft_op *op, unsigned char *set)
{
    const ft_problem *p = c->p;
    if (op->type != FT_OP_MATMUL || p->allow_larger || op->k <= ft_native_k(p) || c->feeds[op->output])
        return 0;
    double x = kloop(c, op, set);
    int t = op->output;
    const ft_tensor *T = &p->tensors[t];
    double n = size_of(c, t);
    if (T->nconsumers != 1 || n <= c->cap || c->oom)
        return x;
    unsigned char *sub = set_new(c);
    if (!sub)
        return x;
    sub[t] = 1;
    double fused = over_inputs(c, &p->ops[T->consumers[0]], t, TILE, 1, 1, sub);
    double apart = n + c->wf * n;
    x = join(c, x, set, fused < apart ? fused : apart, sub);
    ft__free(sub);
    return x;
}

/* The most rows (n = nh, len = H) or columns (n = nw, len = W) a region of
 * MatMul op can have in a step that holds both of its operand slices. */
static double region_max(const ft_problem *p, const ft_op *op, int64_t len, int64_t n)
{
    double cap = floor(p->capacity);
    double up = floor(p->capacity / (double)op->k) - 1;   /* upstream: kappa = K */
    double kl = p->allow_larger ? cap - 1 : (double)n;     /* k-loop: the tile */
    double m = kl > up ? kl : up;
    if (m > cap - 1)
        m = cap - 1;
    if (m > (double)len)
        m = (double)len;
    return m < 1 ? 1 : m;
}

/* Exclusive-pair figure of op (0 unless a MatMul of two distinct graph
 * inputs that only it reads). */
static double pair(cb *c, const ft_op *op, unsigned char *set)
{
    const ft_problem *p = c->p;
    if (op->type != FT_OP_MATMUL)
        return 0;
    int l = op->inputs[0], r = op->inputs[1];
    const ft_tensor *L = &p->tensors[l], *R = &p->tensors[r], *O = &p->tensors[op->output];
    if (l == r || L->producer >= 0 || R->producer >= 0 || L->nconsumers != 1 || R->nconsumers != 1)
        return 0;
    double rmax = region_max(p, op, O->height, p->native_h);
    double cmax = region_max(p, op, O->width, p->native_w);
    double rho = rmax > cmax ? rmax : cmax;
    double need = ceil((double)O->height * (double)O->width * (double)op->k / rho) - size_of(c, l) - size_of(c, r);
    if (need <= 0)
        return 0;
    set[l] = set[r] = 1;
    return need;
}

/* Traffic, in elements read, that capacity forces beyond the compulsory. */
static double forced(const ft_problem *p)
{
    cb c = {p, p->capacity, 0, 0, NULL, 0};
    double wbw = p->timing.write_bandwidth > 0 ? p->timing.write_bandwidth : p->bandwidth;
    c.wf = p->timing.duplex ? 0 : wbw < p->bandwidth ? 1 : p->bandwidth / wbw;
    int n = p->nops, nt = p->ntensors;
    double *fig = ft__calloc((size_t)n + 1, sizeof *fig);
    unsigned char *sets = ft__calloc((size_t)n * (size_t)nt + 1, 1), *used = ft__calloc((size_t)nt + 1, 1);
    unsigned char *alt = ft__calloc((size_t)nt + 1, 1), *feeds = ft__malloc((size_t)nt + 1);
    double total = 0;
    if (!fig || !sets || !used || !alt || !feeds)
        goto out;
    fill_feeds(p, feeds);
    c.feeds = feeds;
    for (int o = 0; o < n && !c.oom; o++) {
        unsigned char *s = sets + (size_t)o * (size_t)nt;
        memset(alt, 0, (size_t)nt);
        double a = anchor(&c, &p->ops[o], s), b = pair(&c, &p->ops[o], alt);
        if (b > a) {
            memcpy(s, alt, (size_t)nt);
            a = b;
        }
        fig[o] = a;
    }
    if (c.oom)
        goto out;
    /* greedily, largest first, the figures whose charged tensors are new */
    for (;;) {
        int best = -1;
        for (int o = 0; o < n; o++)
            if (fig[o] > 0 && (best < 0 || fig[o] > fig[best]))
                best = o;
        if (best < 0)
            break;
        const unsigned char *s = sets + (size_t)best * (size_t)nt;
        int clash = 0;
        for (int t = 0; t < nt && !clash; t++)
            clash = s[t] && used[t];
        if (!clash) {
            total += fig[best];
            for (int t = 0; t < nt; t++)
                used[t] |= s[t];
        }
        fig[best] = 0;
    }
out:
    ft__free(fig);
    ft__free(sets);
    ft__free(used);
    ft__free(alt);
    ft__free(feeds);
    return c.oom ? 0 : total;
}

double ft_lower_bound_capacity(const ft_problem *p, ft_compute_model model, double *compute, double *memory)
{
    double c, m;
    double spec = ft_lower_bound(p, model, &c, &m);
    int64_t reads, writes;
    ft__compulsory(p, &reads, &writes);
    /* (one fast memory: several units hold more between them) */
    double extra = ft__units(p) > 1 ? 0 : floor(forced(p));
    double mc = m;
    ft__rates r;
    ft__fastest_rates(p, &r);
    if (extra > 0 && extra < 4e18 && (double)reads < 4e18) {
        ft__step_time_at(p, &r, 0, reads + (int64_t)extra, writes, &mc);
        if (mc < m)
            mc = m;
    }
    double b = ft__bound_combine(p, c, mc);
    if (compute)
        *compute = c;
    if (memory)
        *memory = mc;
    return b > spec ? b : spec;
}
