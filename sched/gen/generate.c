/* generate.c - generator of capacity-tight problems like the contest's (MLP chains, attention blocks, residual diamonds, shared weights) and of small ones for exact solving. */
#include "cost/cost.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ PRNG */

/* splitmix64: the whole state is one word, so a seed fixes every draw. */
static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform integer in [lo, hi]. */
static int64_t rng_range(uint64_t *s, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rng_next(s) % (uint64_t)(hi - lo + 1));
}

/* Uniform double in [0, 1). */
static double rng_unit(uint64_t *s)
{
    return (double)(rng_next(s) >> 11) * (1.0 / 9007199254740992.0);
}

/* ------------------------------------------------------------ options */

static const char *const family_names[] = {"contest", "small", "scale"};

const char *ft_gen_family_name(ft_gen_family f)
{
    return (unsigned)f < 3 ? family_names[f] : "unknown";
}

int ft_gen_family_parse(const char *name, ft_gen_family *out)
{
    for (int i = 0; i < 3; i++)
        if (name && strcmp(name, family_names[i]) == 0) {
            *out = (ft_gen_family)i;
            return 0;
        }
    return -1;
}

void ft_gen_opts_init(ft_gen_opts *o)
{
    memset(o, 0, sizeof *o);
    o->family = FT_GEN_CONTEST;
    o->seed = 1;
}

/* ------------------------------------------------------------ builder */

#define RING 16 /* recent weights a MatMul may share */

typedef struct gen {
    uint64_t rng;
    ft_gen_family family;
    ft_problem *p;
    int cap_t, cap_o;
    int target;          /* ops wanted */
    int oom;
    int64_t lo, hi;      /* size range */
    double mm_cost, pw_cost;
    int ring[RING], nring;
} gen;

/* Room for entry n of *arr (capacity *cap, entries of `size` bytes),
 * doubling it when full; -1 (and g->oom) when out of memory. */
static int grow(gen *g, void **arr, int *cap, int n, size_t size)
{
    if (n < *cap)
        return 0;
    int nc = *cap ? 2 * *cap : 64;
    void *na = ft__realloc(*arr, size * (size_t)nc);
    if (!na) {
        g->oom = 1;
        return -1;
    }
    *arr = na;
    *cap = nc;
    return 0;
}

static int new_tensor(gen *g, int64_t w, int64_t h)
{
    ft_problem *p = g->p;
    if (g->oom)
        return 0;
    if (grow(g, (void **)&p->tensors, &g->cap_t, p->ntensors, sizeof *p->tensors))
        return 0;
    ft_tensor *t = &p->tensors[p->ntensors];
    memset(t, 0, sizeof *t);
    t->width = w;
    t->height = h;
    t->producer = -1;
    return p->ntensors++;
}

/* A new op of `type` over inputs[0..n) producing a new w x h tensor;
 * returns that tensor. */
static int new_op(gen *g, ft_op_type type, const int *inputs, int n, int64_t w, int64_t h)
{
    ft_problem *p = g->p;
    int out = new_tensor(g, w, h);
    if (g->oom)
        return 0;
    if (grow(g, (void **)&p->ops, &g->cap_o, p->nops, sizeof *p->ops))
        return 0;
    ft_op *op = &p->ops[p->nops];
    memset(op, 0, sizeof *op);
    op->inputs = ft__malloc(sizeof(int) * (size_t)n);
    if (!op->inputs) {
        g->oom = 1;
        return 0;
    }
    memcpy(op->inputs, inputs, sizeof(int) * (size_t)n);
    op->ninputs = n;
    op->type = type;
    op->output = out;
    /* like mlsys-2026-5: a few ops cost half the problem's figure */
    double c = type == FT_OP_MATMUL ? g->mm_cost : g->pw_cost;
    op->base_cost = rng_unit(&g->rng) < 0.15 && c >= 2 ? floor(c / 2) : c;
    p->nops++;
    return out;
}

/* A size of the family: odd ones (not multiples of 128, resp. of 4 for the
 * small family) about a quarter of the time. */
static int64_t draw_size(gen *g)
{
    if (g->family == FT_GEN_SMALL)
        return rng_range(&g->rng, g->lo, g->hi);
    if (rng_unit(&g->rng) < 0.25) {
        int64_t v;
        do
            v = rng_range(&g->rng, g->lo, g->hi);
        while (v % 128 == 0);
        return v;
    }
    return 128 * rng_range(&g->rng, (g->lo + 127) / 128, g->hi / 128);
}

/* MatMul L x W where W is a K x n weight (K = width of L): a recent weight
 * of that shape a third of the time (shared weights), else a new input. */
static int matmul(gen *g, int L, int64_t n)
{
    if (g->oom)
        return 0;
    int64_t K = g->p->tensors[L].width;
    int R = -1;
    if (rng_unit(&g->rng) < 0.35)
        for (int i = 0; i < g->nring && R < 0; i++) {
            const ft_tensor *t = &g->p->tensors[g->ring[i]];
            if (t->height == K && t->width == n)
                R = g->ring[i];
        }
    if (R < 0) {
        R = new_tensor(g, n, K);
        if (g->oom)
            return 0;
        g->ring[g->nring < RING ? g->nring++ : (int)rng_range(&g->rng, 0, RING - 1)] = R;
    }
    int in[2] = {L, R};
    return new_op(g, FT_OP_MATMUL, in, 2, n, g->p->tensors[L].height);
}

/* Pointwise over x and, for n = 2 or 3, partners of x's shape: `other`
 * when >= 0, else new graph inputs (a bias, a scale). */
static int pointwise(gen *g, int x, int other, int n)
{
    if (g->oom)
        return 0;
    int in[3] = {x, other, -1};
    int64_t w = g->p->tensors[x].width, h = g->p->tensors[x].height;
    for (int i = 1; i < n; i++)
        if (in[i] < 0)
            in[i] = new_tensor(g, w, h);
    return new_op(g, FT_OP_POINTWISE, in, n, w, h);
}

static int ops_left(const gen *g) { return g->target - g->p->nops; }

/* Pointwise of 1 to 3 inputs (as room allows) on x. */
static int any_pointwise(gen *g, int x, int other)
{
    int n = (int)rng_range(&g->rng, 1, 3);
    if (other >= 0 && n == 1)
        n = 2;
    return pointwise(g, x, other, n);
}

/* One block on activation x (H x D); returns the new activation, of x's
 * shape except after a projection. */
static int block(gen *g, int x)
{
    int left = ops_left(g);
    int64_t D = g->p->tensors[x].width, H = g->p->tensors[x].height;
    double r = rng_unit(&g->rng);
    if (left >= 7 && r < 0.3) {
        /* attention: Q, K, V share x; S = Q K (Q is H x H, K is H x H: the
         * head dimension equals the sequence length so that K serves as
         * K^T), softmax-like Pointwise, P V, output projection, and a
         * residual add when there is room */
        int q = matmul(g, x, H), k = matmul(g, x, H);
        int64_t dv = draw_size(g);
        int v = matmul(g, x, dv);
        int s = new_op(g, FT_OP_MATMUL, (int[]){q, k}, 2, H, H);
        int pr = pointwise(g, s, -1, 1);
        int a = new_op(g, FT_OP_MATMUL, (int[]){pr, v}, 2, dv, H);
        int o = matmul(g, a, D);
        return ops_left(g) >= 1 && rng_unit(&g->rng) < 0.8 ? pointwise(g, o, x, rng_range(&g->rng, 2, 3)) : o;
    }
    if (left >= 3 && r < 0.65) {
        /* MLP: up projection, activation, down projection (+ residual) */
        int64_t f = draw_size(g);
        int u = matmul(g, x, f);
        if (left >= 4 && rng_unit(&g->rng) < 0.3) {
            /* gated: two projections of x meet in a Pointwise */
            int v = matmul(g, x, f);
            u = pointwise(g, u, v, 2);
        } else
            u = any_pointwise(g, u, -1);
        int d = matmul(g, u, D);
        return ops_left(g) >= 1 && rng_unit(&g->rng) < 0.7 ? pointwise(g, d, x, 2) : d;
    }
    if (left >= 2 && r < 0.8) {
        /* residual diamond around one Pointwise */
        int y = any_pointwise(g, x, -1);
        return pointwise(g, y, x, rng_range(&g->rng, 2, 3));
    }
    if (r < 0.9 || left < 2)
        return rng_unit(&g->rng) < 0.5 ? matmul(g, x, rng_unit(&g->rng) < 0.6 ? D : draw_size(g)) : any_pointwise(g, x, -1);
    /* a side branch: a new chain from a new input, joined to x */
    int y = new_tensor(g, D, H);
    y = matmul(g, y, D);
    return pointwise(g, x, y, 2);
}

/* Working set of the first step of the one-op subgraph [o] at granularity
 * [w, h, k] (slices, distinct inputs once, plus the output tile). */
static double oneop_ws(const ft_problem *p, int o, int64_t w, int64_t h, int64_t k)
{
    const ft_op *op = &p->ops[o];
    const ft_tensor *O = &p->tensors[op->output];
    int64_t tw = w < O->width ? w : O->width, th = h < O->height ? h : O->height;
    double ws = (double)tw * (double)th;
    if (op->type == FT_OP_MATMUL) {
        int64_t tk = k < op->k ? k : op->k;
        return ws + (double)th * (double)tk + (double)tk * (double)tw;
    }
    for (int i = 0; i < op->ninputs; i++) {
        int dup = 0;
        for (int j = 0; j < i; j++)
            dup |= op->inputs[j] == op->inputs[i];
        if (!dup)
            ws += (double)tw * (double)th;
    }
    return ws;
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

int ft_gen_oneop_schedule(const ft_problem *p, ft_schedule **out, ft_status *st)
{
    ft_status_clear(st);
    *out = NULL;
    ft_schedule *s = ft_schedule_new(p->nops);
    if (!s)
        return ft__fail(st, FT_ENOMEM, 0, "one-op schedule: out of memory");
    int64_t nk = ft_native_k(p), top = p->native_w;
    top = top > p->native_h ? top : p->native_h;
    top = top > nk ? top : nk;
    for (int i = 0; i < p->nops; i++) {
        ft_subgraph *sg = &s->sg[i];
        int o = p->topo[i];
        if (ft_subgraph_set_ops(sg, &o, 1) != FT_OK) {
            ft_schedule_free(s);
            return ft__fail(st, FT_ENOMEM, 0, "one-op schedule: out of memory");
        }
        sg->w = sg->h = sg->k = 1;
        /* the native size first, then powers of two downwards */
        int64_t g = top;
        while (g >= 1) {
            int64_t w = min64(g, p->native_w), h = min64(g, p->native_h), k = min64(g, nk);
            if (oneop_ws(p, o, w, h, k) <= p->capacity) {
                sg->w = w;
                sg->h = h;
                sg->k = k;
                break;
            }
            int64_t next = 1;
            while (next * 2 < g)
                next *= 2;
            g = g == 1 ? 0 : next;
        }
    }
    *out = s;
    return FT_OK;
}

/* Largest working set of a native tile over the ops, and the largest at
 * half the native size (the floor of the capacity). */
static void tile_sets(const ft_problem *p, double *native, double *half)
{
    int64_t nk = ft_native_k(p);
    *native = *half = 0;
    for (int o = 0; o < p->nops; o++) {
        double a = oneop_ws(p, o, p->native_w, p->native_h, nk);
        double b = oneop_ws(p, o, (p->native_w + 1) / 2, (p->native_h + 1) / 2, (nk + 1) / 2);
        *native = a > *native ? a : *native;
        *half = b > *half ? b : *half;
    }
}

/* Whether the one-op schedule of p is valid (1), not (0), or -1 on OOM. */
static int oneop_valid(const ft_problem *p, ft_status *st)
{
    ft_schedule *s;
    if (ft_gen_oneop_schedule(p, &s, st) != FT_OK)
        return -1;
    ft_eval ev;
    int rc = ft_evaluate(p, s, FT_COMPUTE_NATIVE, &ev, st);
    ft_schedule_free(s);
    if (rc == FT_OK)
        ft_eval_free(&ev);
    return rc == FT_OK ? 1 : rc == FT_ENOMEM ? -1 : 0;
}

int ft_generate(const ft_gen_opts *o, ft_problem **out, ft_status *st)
{
    ft_status_clear(st);
    *out = NULL;
    if ((unsigned)o->family > FT_GEN_SCALE)
        return ft__fail(st, FT_EINPUT, 0, "generate: family %d is not one of contest, small, scale", (int)o->family);
    int maxops = o->family == FT_GEN_SMALL ? 8 : 10000000;
    if (o->nops < 0 || o->nops > maxops)
        return ft__fail(st, FT_EINPUT, 0, "generate: nops is %d, must be 1 to %d for the %s family (0: drawn from the seed)",
                        o->nops, maxops, ft_gen_family_name(o->family));
    gen g;
    memset(&g, 0, sizeof g);
    g.family = o->family;
    g.rng = o->seed ^ 0x66757365ULL * (uint64_t)(o->family + 1);
    rng_next(&g.rng);
    g.p = ft__calloc(1, sizeof *g.p);
    if (!g.p)
        return ft__fail(st, FT_ENOMEM, 0, "generate: out of memory");
    ft_problem *p = g.p;
    if (o->family == FT_GEN_SMALL) {
        g.target = o->nops ? o->nops : (int)rng_range(&g.rng, 2, 8);
        p->native_w = rng_range(&g.rng, 4, 16);
        p->native_h = rng_unit(&g.rng) < 0.5 ? p->native_w : rng_range(&g.rng, 4, 16);
        g.lo = 3;
        g.hi = 4 * (p->native_w > p->native_h ? p->native_w : p->native_h);
        g.hi = g.hi > 64 ? 64 : g.hi;
        static const double bws[] = {1, 2, 4, 5};
        p->bandwidth = bws[rng_range(&g.rng, 0, 3)];
        /* a native MatMul tile moves about 3 nw nh elements: costs around
         * that time keep compute and memory in balance, as the contest's */
        g.mm_cost = fmax(1, round(3.0 * (double)(p->native_w * p->native_h) / p->bandwidth * (0.3 + 2.7 * rng_unit(&g.rng))));
        g.pw_cost = fmax(1, round(g.mm_cost / (double)rng_range(&g.rng, 4, 20)));
    } else {
        g.target = o->nops ? o->nops : o->family == FT_GEN_SCALE ? 1000 : (int)rng_range(&g.rng, 10, 150);
        p->native_w = p->native_h = 128;
        g.lo = o->family == FT_GEN_SCALE ? 128 : 100;
        g.hi = o->family == FT_GEN_SCALE ? 512 : 4096;
        static const double bws[] = {10, 15, 20, 25, 50, 100};
        static const double mms[] = {500, 1000, 2000, 5000, 10000};
        static const double pws[] = {100, 200, 500};
        p->bandwidth = bws[rng_range(&g.rng, 0, 5)];
        g.mm_cost = mms[rng_range(&g.rng, 0, 4)];
        g.pw_cost = pws[rng_range(&g.rng, 0, 2)];
    }
    /* one chain of blocks on an H x D activation */
    int64_t H = draw_size(&g), D = draw_size(&g);
    int x = new_tensor(&g, D, H);
    while (!g.oom && p->nops < g.target)
        x = block(&g, x);
    if (g.oom) {
        ft_problem_free(p);
        return ft__fail(st, FT_ENOMEM, 0, "generate: out of memory");
    }
    char name[96];
    snprintf(name, sizeof name, "generated-%s-%llu-%d", ft_gen_family_name(o->family), (unsigned long long)o->seed, g.target);
    p->name = ft__strdup(name);
    p->capacity = 1; /* for ft_problem_finish; set below */
    int rc = p->name ? ft_problem_finish(p, st) : ft__fail(st, FT_ENOMEM, 0, "generate: out of memory");
    if (rc) {
        ft_problem_free(p);
        return rc;
    }
    /* tight capacity: a fraction of the largest native tile's working set,
     * not below what every op needs at half the native size */
    double native, half;
    tile_sets(p, &native, &half);
    double cap = floor(native * (0.35 + 0.6 * rng_unit(&g.rng)));
    double unit = o->family == FT_GEN_SMALL ? 1 : 1000;
    cap = ceil(fmax(cap, half) / unit) * unit;
    for (int tries = 0;; tries++) {
        p->capacity = cap;
        int v = oneop_valid(p, st);
        if (v < 0) {
            ft_problem_free(p);
            return ft__fail(st, FT_ENOMEM, 0, "generate: out of memory");
        }
        if (v)
            break;
        if (tries == 40) {
            ft_problem_free(p);
            return ft__fail(st, FT_EINPUT, 0, "generate: no capacity makes the one-op schedule valid (%s)", st->msg);
        }
        cap = ceil(cap * 1.25 / unit) * unit;
    }
    ft_status_clear(st);
    *out = p;
    return FT_OK;
}
