/* test_robust.c - robustness of ft_evaluate on the public benchmarks: one-op schedules at every candidate granularity, random fusions, broken schedules; it must never crash. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fusetile/fusetile.h"
#include "../../tools/oneop.h"

/* Budgets that keep the whole test within seconds: a schedule is skipped
 * when one of its subgraphs would walk more than MAX_SG_STEPS steps, or all
 * of them more than the test's cap (all computed from the shapes before
 * anything is evaluated).  FT_ROBUST_SCALE (default 1) scales the sweep's
 * cap (never below the native granularity's steps) and the number of random
 * schedules; under valgrind it defaults to VALGRIND_SCALE. */
#define MAX_SG_STEPS 200000
#define SWEEP_STEPS 100000          /* one-op sweep: per schedule */
#define RANDOM_STEPS 100000         /* random schedules: per schedule */
#define RANDOM_SCHEDULES 120        /* random schedules per benchmark */
#define LONG_WALK_STEPS 100000
#define VALGRIND_SCALE 0.05

static const char *const bench_names[] = {
    "mlsys-2026-1", "mlsys-2026-5", "mlsys-2026-9", "mlsys-2026-13",
    "mlsys-2026-17",
};
#define NBENCH ((int)(sizeof bench_names / sizeof bench_names[0]))

/* Per-test fixture: the benchmark problem and what the evaluations gave. */
struct fixture {
    const char *bench;
    ft_problem *p;
    uint64_t rng;
    int64_t evaluated_steps;
    int ok, skipped;
    int fused_ok, retain_ok, order_ok; /* valid ones that fuse, retain, reorder */
    int invalid[FT_R_COUNT];
};

/* ------------------------------------------------------------ utilities */

static uint64_t rnd(struct fixture *f)
{
    uint64_t z = (f->rng += 0x9e3779b97f4a7c15ULL); /* splitmix64 */
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int64_t rnd_below(struct fixture *f, int64_t n)
{
    return n > 0 ? (int64_t)(rnd(f) % (uint64_t)n) : 0;
}

static int chance(struct fixture *f, int num, int den)
{
    return rnd_below(f, den) < num;
}

/* Whether we run under valgrind (its preload library, or make
 * check-valgrind's FT_RUNNER). */
static int under_valgrind(void)
{
    const char *pre = getenv("LD_PRELOAD"), *runner = getenv("FT_RUNNER");
    return (pre && strstr(pre, "vgpreload")) ||
           (runner && strstr(runner, "valgrind"));
}

/* n scaled by FT_ROBUST_SCALE, at least `min`. */
static int64_t scaled(int64_t n, int64_t min)
{
    const char *v = getenv("FT_ROBUST_SCALE");
    double x = v && *v ? atof(v) : under_valgrind() ? VALGRIND_SCALE : 1.0;
    double r = (double)n * (x > 0 ? x : 1.0);
    return r < (double)min ? min : (int64_t)r;
}

/* Loads the fixture's benchmark from $FT_BENCHDATA, else "benchmarks"
 * relative to the working directory, else $FT_SRCDIR/benchmarks. */
static int setup_bench(void **state)
{
    struct fixture *f = *state;
    const char *dir = getenv("FT_BENCHDATA"), *src = getenv("FT_SRCDIR");
    char path[1024];
    ft_status st;
    snprintf(path, sizeof path, "%s/%s.json", dir && *dir ? dir : "benchmarks",
             f->bench);
    if (!(dir && *dir) && src && *src) {
        FILE *probe = fopen(path, "r");
        if (probe)
            fclose(probe);
        else
            snprintf(path, sizeof path, "%s/benchmarks/%s.json", src, f->bench);
    }
    f->p = NULL;
    f->rng = 1469598103934665603ULL; /* fixed seed: FNV-1a of the name */
    for (const char *c = f->bench; *c; c++)
        f->rng = (f->rng ^ (unsigned char)*c) * 1099511628211ULL;
    f->evaluated_steps = 0;
    f->ok = f->skipped = 0;
    f->fused_ok = f->retain_ok = f->order_ok = 0;
    memset(f->invalid, 0, sizeof f->invalid);
    if (ft_problem_load(path, &f->p, &st) != FT_OK) {
        print_error("cannot load %s (set FT_BENCHDATA to the benchmarks "
                    "directory): %s\n", path, st.msg);
        return -1;
    }
    return 0;
}

static int teardown_bench(void **state)
{
    struct fixture *f = *state;
    int invalid = 0;
    char reasons[512] = "";
    for (int r = 0; r < FT_R_COUNT; r++) {
        if (!f->invalid[r])
            continue;
        invalid += f->invalid[r];
        size_t n = strlen(reasons);
        snprintf(reasons + n, sizeof reasons - n, " %s=%d", ft_reason_name(r),
                 f->invalid[r]);
    }
    print_message("%s: %d evaluations valid (%lld steps; %d fused, %d "
                  "retaining, %d reordered), %d invalid (%s), %d schedules "
                  "skipped as too long\n",
                  f->bench, f->ok, (long long)f->evaluated_steps, f->fused_ok,
                  f->retain_ok, f->order_ok, invalid,
                  reasons[0] ? reasons + 1 : "none", f->skipped);
    ft_problem_free(f->p);
    f->p = NULL;
    return 0;
}

/* Evaluate s in one compute model and check only robustness: FT_OK with
 * finite figures not below the lower bound, or FT_EINVALID with a reason
 * and a message.  Returns the code. */
static int check_model(struct fixture *f, const ft_schedule *s,
                       ft_compute_model model)
{
    ft_eval e;
    ft_status st;
    memset(&e, 0x5a, sizeof e);
    ft_status_clear(&st);
    int rc = ft_evaluate(f->p, s, model, &e, &st);
    assert_true(rc == FT_OK || rc == FT_EINVALID);
    assert_int_equal(st.code, rc);
    if (rc == FT_OK) {
        double lb = ft_lower_bound(f->p, model, NULL, NULL);
        assert_true(isfinite(lb) && lb > 0);
        assert_int_equal(e.nsubgraphs, s->nsubgraphs);
        assert_true(isfinite(e.total));
        if (!(e.total >= lb * (1 - 1e-9)))
            fail_msg("%s (%s model): total %.6f below the lower bound %.6f",
                     f->bench, ft_compute_model_name(model), e.total, lb);
        double sum = 0;
        for (int i = 0; i < e.nsubgraphs; i++) {
            assert_true(isfinite(e.sg[i].latency) && e.sg[i].latency >= 0);
            assert_true(e.sg[i].steps >= 1);
            sum += e.sg[i].latency;
            f->evaluated_steps += e.sg[i].steps;
        }
        assert_true(fabs(sum - e.total) <= 1e-9 * (fabs(e.total) + 1));
        ft_eval_free(&e);
        f->ok++;
        int fused = 0, retain = 0, order = 0;
        for (int i = 0; i < s->nsubgraphs; i++) {
            fused |= s->sg[i].nops > 1;
            retain |= s->sg[i].nretain > 0;
            order |= s->sg[i].norder > 0;
        }
        f->fused_ok += fused;
        f->retain_ok += retain;
        f->order_ok += order;
    } else {
        assert_true(st.msg[0] != '\0');
        assert_true(st.reason > FT_R_NONE && st.reason < FT_R_COUNT);
        assert_string_not_equal(ft_reason_name(st.reason), "unknown");
        f->invalid[st.reason]++;
    }
    return rc;
}

/* Validate, then evaluate in both compute models.  A schedule that
 * ft_schedule_validate rejects must not evaluate.  Returns the native
 * model's code. */
static int check(struct fixture *f, const ft_schedule *s)
{
    ft_status st;
    ft_status_clear(&st);
    int vrc = ft_schedule_validate(f->p, s, &st);
    assert_true(vrc == FT_OK || vrc == FT_EINVALID);
    if (vrc != FT_OK)
        assert_true(st.msg[0] != '\0');
    int rc = check_model(f, s, FT_COMPUTE_NATIVE);
    int rc2 = check_model(f, s, FT_COMPUTE_OP);
    if (vrc != FT_OK) {
        assert_int_equal(rc, FT_EINVALID);
        assert_int_equal(rc2, FT_EINVALID);
    }
    return rc;
}

/* A deliberately broken schedule: it must be rejected (accepting it would
 * mean reading out of range or ignoring a rule of SPEC section 2). */
static void check_broken(struct fixture *f, const ft_schedule *s,
                         const char *what)
{
    ft_status st;
    ft_status_clear(&st);
    if (ft_schedule_validate(f->p, s, &st) != FT_EINVALID)
        fail_msg("%s: broken schedule (%s) passes ft_schedule_validate",
                 f->bench, what);
    if (check(f, s) != FT_EINVALID)
        fail_msg("%s: broken schedule (%s) evaluates", f->bench, what);
}

/* Deep copy of a schedule through the public fields; fails the test when
 * out of memory. */
static ft_schedule *clone(const ft_schedule *s)
{
    ft_schedule *c = ft_schedule_new(s->nsubgraphs);
    assert_non_null(c);
    for (int i = 0; i < s->nsubgraphs; i++) {
        const ft_subgraph *g = &s->sg[i];
        ft_subgraph *h = &c->sg[i];
        assert_int_equal(ft_subgraph_set_ops(h, g->ops, g->nops), FT_OK);
        assert_int_equal(ft_subgraph_set_retain(h, g->retain, g->nretain), FT_OK);
        h->w = g->w;
        h->h = g->h;
        h->k = g->k;
        h->has_reported = g->has_reported;
        h->reported = g->reported;
        if (g->order) {
            h->order = malloc(sizeof(int64_t) * (size_t)(g->norder ? g->norder : 1));
            assert_non_null(h->order);
            memcpy(h->order, g->order, sizeof(int64_t) * (size_t)g->norder);
        }
        h->norder = g->norder;
    }
    c->len_granularities = s->len_granularities;
    c->len_retain = s->len_retain;
    c->len_orders = s->len_orders;
    c->len_latencies = s->len_latencies;
    return c;
}

/* Give subgraph g the traversal order `kind` over ntx x nty tiles:
 * 0 raster (null), 1 snake, 2 column-major, 3 a random permutation. */
static void set_order(struct fixture *f, ft_subgraph *g, int kind,
                      int64_t ntx, int64_t nty)
{
    free(g->order);
    g->order = NULL;
    g->norder = 0;
    if (kind == 0)
        return;
    int64_t n = ntx * nty;
    g->order = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
    assert_non_null(g->order);
    g->norder = n;
    for (int64_t r = 0; r < nty; r++)
        for (int64_t c = 0; c < ntx; c++) {
            if (kind == 2) /* column-major */
                g->order[c * nty + r] = r * ntx + c;
            else /* raster, or snake when kind == 1 */
                g->order[r * ntx + c] = r * ntx + ((kind == 1 && (r & 1)) ? ntx - 1 - c : c);
        }
    if (kind == 3)
        for (int64_t i = n - 1; i > 0; i--) {
            int64_t j = rnd_below(f, i + 1), t = g->order[i];
            g->order[i] = g->order[j];
            g->order[j] = t;
        }
}

/* Upper bound on the steps of subgraph g, from the shapes alone: the grid of
 * the widest and tallest outputs times the deepest k-loop. */
static int64_t sg_steps_bound(const ft_problem *p, const ft_subgraph *g)
{
    int64_t wmax = 1, hmax = 1, nk = 1;
    if (g->w < 1 || g->h < 1 || g->k < 1)
        return 1;
    for (int j = 0; j < g->nops; j++) {
        if (g->ops[j] < 0 || g->ops[j] >= p->nops)
            continue;
        const ft_op *o = &p->ops[g->ops[j]];
        const ft_tensor *t = &p->tensors[o->output];
        if (t->width > wmax)
            wmax = t->width;
        if (t->height > hmax)
            hmax = t->height;
        if (o->type == FT_OP_MATMUL && oneop_ceil_div(o->k, g->k) > nk)
            nk = oneop_ceil_div(o->k, g->k);
    }
    double n = (double)oneop_ceil_div(wmax, g->w) *
               (double)oneop_ceil_div(hmax, g->h) * (double)nk;
    return n > (double)INT64_MAX / 2 ? INT64_MAX / 2 : (int64_t)n;
}

/* Whether every subgraph of s is within MAX_SG_STEPS and the whole within
 * `cap` steps. */
static int within_budget(const ft_problem *p, const ft_schedule *s, int64_t cap)
{
    int64_t total = 0;
    for (int i = 0; i < s->nsubgraphs; i++) {
        int64_t n = sg_steps_bound(p, &s->sg[i]);
        if (n > MAX_SG_STEPS)
            return 0;
        total += n;
    }
    return total <= cap;
}

/* ------------------------------------------- one-op schedules, every granularity */

static void test_robust_oneop_every_granularity(void **state)
{
    struct fixture *f = *state;
    int64_t *v[3];
    int n[3];
    int64_t native[3] = { f->p->native_w, f->p->native_h, f->p->native_w };
    int64_t cap = scaled(SWEEP_STEPS, oneop_steps(f->p, native));
    for (int d = 0; d < 3; d++) {
        n[d] = oneop_candidates(f->p, d, &v[d]);
        assert_true(n[d] >= 1);
    }
    for (int a = 0; a < n[0]; a++)
        for (int b = 0; b < n[1]; b++)
            for (int c = 0; c < n[2]; c++) {
                int64_t g[3] = { v[0][a], v[1][b], v[2][c] };
                ft_schedule *s = oneop_schedule(f->p, g);
                assert_non_null(s);
                if (within_budget(f->p, s, cap))
                    check(f, s);
                else
                    f->skipped++;
                ft_schedule_free(s);
            }
    for (int d = 0; d < 3; d++)
        free(v[d]);
    assert_true(f->ok > 0);
}

/* ------------------------------------------------------ random schedules */

static int64_t random_dim(struct fixture *f, int64_t limit)
{
    switch (rnd_below(f, 8)) {
    case 0: return 1;
    case 1: return 3 <= limit ? 3 : limit;
    case 2: return 100 <= limit ? 100 : limit;
    case 3: return limit / 2 > 0 ? limit / 2 : 1;
    case 4: {
        int64_t v = (int64_t)1 << rnd_below(f, 8);
        return v <= limit ? v : limit;
    }
    case 5: return 1 + rnd_below(f, limit);
    default: return limit;
    }
}

static int in_list(const int *a, int n, int x)
{
    for (int i = 0; i < n; i++)
        if (a[i] == x)
            return 1;
    return 0;
}

static int sg_consumes(const ft_problem *p, const ft_subgraph *g, int t)
{
    for (int j = 0; j < g->nops; j++) {
        const ft_op *o = &p->ops[g->ops[j]];
        if (in_list(o->inputs, o->ninputs, t))
            return 1;
    }
    return 0;
}

/* Whether adding MatMul `mm` to the subgraph `group` would make a fused
 * operand escape: a tensor produced in the group that feeds mm (directly or
 * through Pointwise or Layout ops of the group) and has a consumer outside. */
static int would_escape(const ft_problem *p, const int *group, int size, int mm)
{
    int stack[64], n = 0;
    stack[n++] = mm;
    while (n > 0) {
        const ft_op *o = &p->ops[stack[--n]];
        for (int m = 0; m < o->ninputs; m++) {
            const ft_tensor *t = &p->tensors[o->inputs[m]];
            if (t->producer < 0 || !in_list(group, size, t->producer))
                continue;
            for (int c = 0; c < t->nconsumers; c++)
                if (t->consumers[c] != mm && !in_list(group, size, t->consumers[c]))
                    return 1;
            if (p->ops[t->producer].type != FT_OP_MATMUL) {
                if (n == 64)
                    return 1; /* too deep to tell: call it escaping */
                stack[n++] = t->producer;
            }
        }
    }
    return 0;
}

/* Random connected fusions in execution order: each subgraph starts at the
 * first op (in p->topo) not yet covered and grows along producer->consumer
 * edges to uncovered consumers whose other inputs are already available.
 * Modes: CAREFUL adds no MatMul that would make a fused operand escape;
 * LONE is careful and fuses one subgraph only (of at least two ops when it
 * can), so that it can have many steps; WILD, otherwise, now and then, a subgraph recomputes
 * the producer of one of its inputs, lists a consumer before its producer,
 * or two subgraphs swap places.  Returns a schedule without granularities. */
enum mode { CAREFUL, LONE, WILD };

static ft_schedule *random_fusion(struct fixture *f, int max_size, enum mode mode)
{
    int careful = mode != WILD;
    int lone_at = (int)rnd_below(f, f->p->nops), lone_done = 0;
    if (max_size < 2)
        max_size = 2;
    const ft_problem *p = f->p;
    int *covered = calloc((size_t)p->nops, sizeof *covered);
    int *pos = malloc(sizeof(int) * (size_t)p->nops);
    int *group = malloc(sizeof(int) * (size_t)p->nops * 2);
    int *cand = malloc(sizeof(int) * (size_t)p->nops);
    ft_schedule *s = ft_schedule_new(p->nops);
    assert_true(covered && pos && group && cand && s);
    for (int i = 0; i < p->nops; i++)
        pos[p->topo[i]] = i;
    int nsg = 0;
    for (int i = 0; i < p->nops; i++) {
        int seed = p->topo[i];
        if (covered[seed])
            continue;
        int size = 1, target = 1 + (int)rnd_below(f, max_size);
        if (mode == LONE) /* until one subgraph has grown */
            target = i >= lone_at && !lone_done ? max_size : 1;
        group[0] = seed;
        covered[seed] = 1;
        while (size < target) {
            int nc = 0;
            for (int j = 0; j < size; j++) {
                const ft_tensor *t = &p->tensors[p->ops[group[j]].output];
                for (int c = 0; c < t->nconsumers; c++) {
                    int op = t->consumers[c];
                    const ft_op *o = &p->ops[op];
                    int ready = !covered[op] && !in_list(cand, nc, op);
                    for (int m = 0; ready && m < o->ninputs; m++) {
                        int pr = p->tensors[o->inputs[m]].producer;
                        ready = pr < 0 || covered[pr];
                    }
                    if (ready && careful && o->type == FT_OP_MATMUL)
                        ready = !would_escape(p, group, size, op);
                    if (ready)
                        cand[nc++] = op;
                }
            }
            if (nc == 0)
                break;
            int op = cand[rnd_below(f, nc)];
            group[size++] = op;
            covered[op] = 1;
        }
        lone_done |= size > 1;
        if (!careful && chance(f, 1, 4)) { /* recompute an input's producer */
            const ft_op *o = &p->ops[group[rnd_below(f, size)]];
            int pr = p->tensors[o->inputs[rnd_below(f, o->ninputs)]].producer;
            if (pr >= 0 && !in_list(group, size, pr))
                group[size++] = pr;
        }
        for (int a = 1; a < size; a++) /* topological order */
            for (int b = a; b > 0 && pos[group[b - 1]] > pos[group[b]]; b--) {
                int t = group[b];
                group[b] = group[b - 1];
                group[b - 1] = t;
            }
        if (!careful && size > 1 && chance(f, 1, 10)) { /* op before producer */
            int t = group[0];
            group[0] = group[size - 1];
            group[size - 1] = t;
        }
        assert_int_equal(ft_subgraph_set_ops(&s->sg[nsg++], group, size), FT_OK);
    }
    s->nsubgraphs = nsg;
    s->len_granularities = s->len_retain = nsg;
    if (!careful && nsg > 1 && chance(f, 1, 10)) { /* swap two subgraphs */
        int a = (int)rnd_below(f, nsg), b = (int)rnd_below(f, nsg);
        ft_subgraph t = s->sg[a];
        s->sg[a] = s->sg[b];
        s->sg[b] = t;
    }
    free(covered);
    free(pos);
    free(group);
    free(cand);
    return s;
}

/* Make subgraph i of a structurally valid schedule fit the capacity if
 * halving its tile (w and h, then k) a few times while it stays within
 * `share` steps, and at last dropping the retention into and out of it,
 * does. */
static void shrink_until_fits(const ft_problem *p, ft_schedule *s, int i,
                              int64_t share)
{
    ft_subgraph *g = &s->sg[i];
    for (int tries = 0; tries < 8; tries++) {
        ft_sg_result r;
        ft_status st;
        int rc = ft_evaluate_subgraph(p, s, i, FT_COMPUTE_NATIVE, &r, &st);
        if (rc != FT_EINVALID || st.reason != FT_R_OOM)
            return;
        int64_t *d = g->w >= g->h && g->w > 1 ? &g->w : g->h > 1 ? &g->h : &g->k;
        int64_t was = *d;
        *d = (*d + 1) / 2;
        if (tries >= 6 || sg_steps_bound(p, g) > share) {
            *d = was;
            g->nretain = 0;
            if (i > 0)
                s->sg[i - 1].nretain = 0;
            return;
        }
    }
}

/* Random granularities (resampled while a subgraph is over its share of
 * `cap`, native as the last resort), random retention, then random
 * traversal orders over the grids the walker reports.  A `careful` schedule
 * keeps granularities in range, retains only tensors that fit a quarter of
 * the capacity and leave the subgraph anyway, and keeps orders permutations.
 * Returns 0 when the schedule is over budget and should be skipped. */
static int randomize(struct fixture *f, ft_schedule *s, enum mode mode,
                     int64_t cap)
{
    const ft_problem *p = f->p;
    int careful = mode != WILD;
    int64_t share = cap / (s->nsubgraphs ? s->nsubgraphs : 1);
    if (mode == LONE) { /* single ops at native; the rest for the fused one */
        int64_t used = 0;
        for (int i = 0; i < s->nsubgraphs; i++) {
            ft_subgraph *g = &s->sg[i];
            g->w = g->k = p->native_w;
            g->h = p->native_h;
            if (g->nops == 1)
                used += sg_steps_bound(p, g);
        }
        share = cap - used > 1000 ? cap - used : 1000;
    }
    for (int i = 0; i < s->nsubgraphs; i++) {
        ft_subgraph *g = &s->sg[i];
        for (int tries = 0; !(mode == LONE && g->nops == 1); tries++) {
            g->w = tries < 12 ? random_dim(f, p->native_w) : p->native_w;
            g->h = tries < 12 ? random_dim(f, p->native_h) : p->native_h;
            g->k = tries < 12 ? random_dim(f, p->native_w) : p->native_w;
            if (tries >= 12 || sg_steps_bound(p, g) <= share)
                break;
        }
        if (!careful && chance(f, 1, 30)) /* a granularity out of range */
            g->k = chance(f, 1, 2) ? p->native_w + 1 : 0;
        if (i + 1 < s->nsubgraphs || chance(f, 1, 4)) {
            int *keep = malloc(sizeof(int) * (size_t)g->nops);
            int n = 0;
            assert_non_null(keep);
            for (int j = 0; j < g->nops; j++) {
                int t = p->ops[g->ops[j]].output;
                const ft_tensor *T = &p->tensors[t];
                int next = i + 1 < s->nsubgraphs &&
                           sg_consumes(p, &s->sg[i + 1], t);
                int leaves = T->nconsumers == 0;
                for (int c = 0; c < T->nconsumers; c++)
                    leaves |= !in_list(g->ops, g->nops, T->consumers[c]);
                if (careful && (!leaves || (double)ft_tensor_size(p, t) >
                                               p->capacity / 4))
                    continue;
                if (!in_list(keep, n, t) && chance(f, 1, next ? 2 : 12))
                    keep[n++] = t;
            }
            assert_int_equal(ft_subgraph_set_retain(g, keep, n), FT_OK);
            free(keep);
        }
    }
    if (!within_budget(p, s, cap))
        return 0;
    ft_status st;
    if (ft_schedule_validate(p, s, &st) != FT_OK)
        return 1; /* stays null-ordered; check() sees the rejection */
    for (int i = 0; careful && i < s->nsubgraphs; i++)
        shrink_until_fits(p, s, i, share);
    for (int i = 0; i < s->nsubgraphs; i++) {
        ft_walk *w = NULL;
        int64_t ntx, nty, nk, n;
        assert_int_equal(ft_walk_begin(p, s, i, FT_COMPUTE_NATIVE, &w, &st), FT_OK);
        ft_walk_grid(w, &ntx, &nty, &nk, &n);
        ft_walk_free(w);
        assert_true(ntx >= 1 && nty >= 1 && nk >= 1 && n == ntx * nty * nk);
        assert_true(n <= sg_steps_bound(p, &s->sg[i]));
        set_order(f, &s->sg[i], (int)rnd_below(f, 4), ntx, nty);
        if (!careful && chance(f, 1, 20) && s->sg[i].norder > 0)
            s->sg[i].order[rnd_below(f, s->sg[i].norder)] =
                chance(f, 1, 2) ? -1 : ntx * nty;
    }
    return 1;
}

static void test_robust_random_schedules(void **state)
{
    struct fixture *f = *state;
    int64_t count = scaled(RANDOM_SCHEDULES, 4);
    int64_t cap = RANDOM_STEPS;
    int per_sg_checked = 0;
    for (int64_t it = 0; it < count; it++) {
        enum mode mode = it % 4 == 3 ? WILD : it % 4 == 2 ? LONE : CAREFUL;
        ft_schedule *s = random_fusion(f, 1 + (int)(it % 6), mode);
        if (!randomize(f, s, mode, cap)) {
            f->skipped++;
            ft_schedule_free(s);
            continue;
        }
        if (check(f, s) == FT_OK && per_sg_checked < 4) {
            /* the per-subgraph entry point agrees on validity */
            per_sg_checked++;
            for (int i = 0; i < s->nsubgraphs; i++) {
                ft_sg_result r;
                ft_status st;
                int rc = ft_evaluate_subgraph(f->p, s, i, FT_COMPUTE_OP, &r, &st);
                assert_int_equal(rc, FT_OK);
                assert_true(isfinite(r.latency) && r.latency >= 0);
            }
        }
        ft_schedule_free(s);
    }
    if (count >= RANDOM_SCHEDULES) /* the generator does make valid ones */
        assert_true(f->ok > 0);
}

/* ------------------------------------------------------ broken schedules */

/* Two ops of the problem that share no tensor (-1 when none). */
static void unrelated_pair(const ft_problem *p, int *a, int *b)
{
    *a = *b = -1;
    for (int i = 0; i < p->nops && *a < 0; i++)
        for (int j = i + 1; j < p->nops; j++) {
            const ft_op *x = &p->ops[p->topo[i]], *y = &p->ops[p->topo[j]];
            int shared = in_list(y->inputs, y->ninputs, x->output) ||
                         in_list(x->inputs, x->ninputs, y->output);
            for (int m = 0; !shared && m < x->ninputs; m++)
                shared = in_list(y->inputs, y->ninputs, x->inputs[m]);
            if (!shared) {
                *a = p->topo[i];
                *b = p->topo[j];
                break;
            }
        }
}

/* The one-op schedule at the first granularity, from native down by
 * halving every dimension, that evaluates (the base of broken variants). */
static ft_schedule *valid_oneop(struct fixture *f)
{
    int64_t g[3] = { f->p->native_w, f->p->native_h, f->p->native_w };
    for (;;) {
        ft_schedule *s = oneop_schedule(f->p, g);
        assert_non_null(s);
        if (within_budget(f->p, s, MAX_SG_STEPS) && check(f, s) == FT_OK)
            return s;
        ft_schedule_free(s);
        if (g[0] == 1 && g[1] == 1 && g[2] == 1)
            fail_msg("%s: no one-op schedule evaluates", f->bench);
        for (int d = 0; d < 3; d++)
            g[d] = (g[d] + 1) / 2;
    }
}

/* A copy of `base` with subgraph j replaced by the op list `ops`. */
static ft_schedule *with_subgraph(const ft_schedule *base, int j,
                                  const int *ops, int n)
{
    ft_schedule *s = clone(base);
    assert_int_equal(ft_subgraph_set_ops(&s->sg[j], ops, n), FT_OK);
    return s;
}

static void test_robust_broken_schedules(void **state)
{
    struct fixture *f = *state;
    const ft_problem *p = f->p;
    ft_schedule *base = valid_oneop(f);
    int last = base->nsubgraphs - 1;
    int j = (int)rnd_below(f, base->nsubgraphs);
    ft_schedule *s;

    /* an op in no subgraph: drop subgraph j */
    s = ft_schedule_new(base->nsubgraphs - 1);
    assert_non_null(s);
    for (int i = 0, m = 0; i < base->nsubgraphs; i++)
        if (i != j) {
            assert_int_equal(ft_subgraph_set_ops(&s->sg[m], base->sg[i].ops, 1), FT_OK);
            s->sg[m].w = base->sg[i].w;
            s->sg[m].h = base->sg[i].h;
            s->sg[m].k = base->sg[i].k;
            m++;
        }
    check_broken(f, s, "op missing");
    ft_schedule_free(s);

    s = ft_schedule_new(0);
    assert_non_null(s);
    check_broken(f, s, "no subgraph");
    ft_schedule_free(s);

    s = clone(base);
    s->sg[j].nops = 0;
    check_broken(f, s, "empty subgraph");
    ft_schedule_free(s);

    const int bad_ops[] = { -1, p->nops, INT_MAX, INT_MIN };
    for (size_t i = 0; i < sizeof bad_ops / sizeof bad_ops[0]; i++) {
        s = clone(base);
        s->sg[j].ops[0] = bad_ops[i];
        check_broken(f, s, "op out of range");
        ft_schedule_free(s);
    }

    int dup[2] = { base->sg[j].ops[0], base->sg[j].ops[0] };
    s = with_subgraph(base, j, dup, 2);
    check_broken(f, s, "repeated op");
    ft_schedule_free(s);

    const int64_t bad_dims[] = { 0, -5, INT64_MIN, INT64_MAX };
    for (int d = 0; d < 3; d++) {
        for (size_t i = 0; i < sizeof bad_dims / sizeof bad_dims[0] + 1; i++) {
            int64_t v = i < sizeof bad_dims / sizeof bad_dims[0]
                            ? bad_dims[i] : oneop_limit(p, d) + 1;
            s = clone(base);
            int64_t *field = d == 0 ? &s->sg[j].w : d == 1 ? &s->sg[j].h : &s->sg[j].k;
            *field = v;
            check_broken(f, s, d == 2 && v > 0 ? "k above native" : "granularity out of range");
            ft_schedule_free(s);
        }
    }

    /* retained tensors that subgraph j does not produce */
    int foreign = p->ops[base->sg[j == 0 ? last : 0].ops[0]].output;
    assert_true(p->ngraph_inputs > 0);
    const int bad_retain[] = { -1, p->ntensors, INT_MAX, p->graph_inputs[0], foreign };
    for (size_t i = 0; i < sizeof bad_retain / sizeof bad_retain[0]; i++) {
        s = clone(base);
        assert_int_equal(ft_subgraph_set_retain(&s->sg[j], &bad_retain[i], 1), FT_OK);
        check_broken(f, s, "retain not produced");
        ft_schedule_free(s);
    }

    /* traversal orders that are not permutations of the tiles */
    const ft_tensor *out = &p->tensors[p->ops[base->sg[j].ops[0]].output];
    int64_t ntiles = oneop_ceil_div(out->width, base->sg[j].w) *
                     oneop_ceil_div(out->height, base->sg[j].h);
    for (int kind = 0; kind < 8; kind++) {
        s = clone(base);
        ft_subgraph *g = &s->sg[j];
        set_order(f, g, 3, ntiles, 1);
        if (kind == 0) {
            g->norder = ntiles - 1; /* short (maybe empty: raster) */
            if (g->norder == 0) {
                ft_schedule_free(s);
                continue;
            }
        } else if (kind == 1) {
            int64_t *o = realloc(g->order, sizeof(int64_t) * (size_t)(ntiles + 1));
            assert_non_null(o);
            g->order = o;
            g->order[ntiles] = 0;
            g->norder = ntiles + 1;
        } else if (kind == 2) {
            if (ntiles < 2) {
                ft_schedule_free(s);
                continue;
            }
            g->order[0] = g->order[1]; /* duplicate */
        } else {
            const int64_t bad[] = { -1, ntiles, INT64_MAX, INT64_MIN, ntiles * 2 + 7, -ntiles };
            g->order[rnd_below(f, ntiles)] = bad[kind - 3];
        }
        check_broken(f, s, "bad traversal order");
        ft_schedule_free(s);
    }

    /* subgraph order reversed: inputs not yet produced */
    if (base->nsubgraphs > 1) {
        s = clone(base);
        for (int a = 0, b = last; a < b; a++, b--) {
            ft_subgraph t = s->sg[a];
            s->sg[a] = s->sg[b];
            s->sg[b] = t;
        }
        check_broken(f, s, "subgraphs reversed");
        ft_schedule_free(s);
    }

    /* a consumer listed before its producer; two unrelated ops */
    for (int o = 0; o < p->nops; o++) {
        const ft_op *op = &p->ops[o];
        int pr = p->tensors[op->inputs[0]].producer;
        if (pr < 0)
            continue;
        int pair[2] = { o, pr };
        int at = 0;
        while (base->sg[at].ops[0] != pr)
            at++;
        s = with_subgraph(base, at, pair, 2);
        check_broken(f, s, "op before producer");
        ft_schedule_free(s);
        break;
    }
    int a, b;
    unrelated_pair(p, &a, &b);
    if (a >= 0) {
        int pair[2] = { a, b };
        int at = 0;
        while (base->sg[at].ops[0] != a)
            at++;
        s = with_subgraph(base, at, pair, 2);
        check_broken(f, s, "not connected");
        ft_schedule_free(s);
    }

    /* per-subgraph lists of the wrong length */
    for (int kind = 0; kind < 4; kind++) {
        s = clone(base);
        int *len = kind == 0 ? &s->len_granularities : kind == 1 ? &s->len_retain
                 : kind == 2 ? &s->len_orders : &s->len_latencies;
        *len = kind < 2 ? s->nsubgraphs - 1 : s->nsubgraphs + 1;
        check_broken(f, s, "list length mismatch");
        ft_schedule_free(s);
    }

    /* the JSON text of broken schedules, and truncated texts, parse back or
     * are refused without a crash */
    s = clone(base);
    s->sg[j].ops[0] = -7;
    s->sg[j].k = p->native_w + 1;
    set_order(f, &s->sg[j], 3, ntiles, 1);
    s->sg[j].order[0] = -3;
    char *text = ft_schedule_to_json(s, NULL);
    assert_non_null(text);
    ft_schedule_free(s);
    size_t len = strlen(text);
    for (size_t cut = len; cut > 0; cut = cut > 16 ? cut * 3 / 4 : cut - 1) {
        ft_schedule *back = NULL;
        ft_status st;
        char saved = text[cut];
        text[cut] = '\0';
        int rc = ft_schedule_parse(text, "truncated.json", &back, &st);
        text[cut] = saved;
        assert_true(rc == FT_OK || rc == FT_EINPUT);
        if (rc == FT_OK) {
            check_broken(f, back, "broken schedule from JSON");
            ft_schedule_free(back);
        } else {
            assert_null(back);
            assert_true(st.msg[0] != '\0');
        }
    }
    free(text);

    /* a fused operand that escapes: producer -> MatMul with the producer's
     * output also used elsewhere (robustness only: may also be oom) */
    for (int o = 0; o < p->nops; o++) {
        const ft_op *op = &p->ops[o];
        int t = op->inputs[0], pr = p->tensors[t].producer;
        if (op->type != FT_OP_MATMUL || pr < 0 || p->tensors[t].nconsumers < 2)
            continue;
        int pair[2] = { pr, o };
        int at = 0;
        while (base->sg[at].ops[0] != pr)
            at++;
        s = with_subgraph(base, at, pair, 2);
        check(f, s);
        ft_schedule_free(s);
        break;
    }
    ft_schedule_free(base);
}

/* ------------------------------------------------------ a long walk */

static void test_robust_long_walk(void **state)
{
    struct fixture *f = *state;
    int64_t g[3];
    oneop_granularity_for_steps(f->p, LONG_WALK_STEPS, g);
    ft_schedule *s = oneop_schedule(f->p, g);
    assert_non_null(s);
    ft_eval e;
    ft_status st;
    int rc = ft_evaluate(f->p, s, FT_COMPUTE_NATIVE, &e, &st);
    if (rc != FT_OK)
        fail_msg("%s at [%lld,%lld,%lld]: %s", f->bench, (long long)g[0],
                 (long long)g[1], (long long)g[2], st.msg);
    int64_t steps = 0;
    for (int i = 0; i < e.nsubgraphs; i++)
        steps += e.sg[i].steps;
    assert_true(steps >= LONG_WALK_STEPS);
    assert_int_equal(steps, oneop_steps(f->p, g));
    assert_true(isfinite(e.total) &&
                e.total >= ft_lower_bound(f->p, FT_COMPUTE_NATIVE, NULL, NULL) * (1 - 1e-9));
    f->ok++;
    f->evaluated_steps += steps;
    ft_eval_free(&e);
    ft_schedule_free(s);
}

/* ------------------------------------------------------ driver */

/* Runs every test on every public benchmark; cmocka's exit status. */
int main(void)
{
    static const struct {
        const char *name;
        CMUnitTestFunction fn;
    } tests[] = {
        { "test_robust_oneop_every_granularity", test_robust_oneop_every_granularity },
        { "test_robust_random_schedules", test_robust_random_schedules },
        { "test_robust_broken_schedules", test_robust_broken_schedules },
        { "test_robust_long_walk", test_robust_long_walk },
    };
    enum { NTESTS = sizeof tests / sizeof tests[0] };
    static struct fixture fixtures[NTESTS * NBENCH];
    static char names[NTESTS * NBENCH][96];
    struct CMUnitTest list[NTESTS * NBENCH];
    int n = 0;
    for (int t = 0; t < NTESTS; t++)
        for (int b = 0; b < NBENCH; b++, n++) {
            fixtures[n].bench = bench_names[b];
            snprintf(names[n], sizeof names[n], "%s/%s", tests[t].name,
                     bench_names[b]);
            list[n] = (struct CMUnitTest){ names[n], tests[t].fn, setup_bench,
                                           teardown_bench, &fixtures[n] };
        }
    assert_int_equal(n, NTESTS * NBENCH);
    return cmocka_run_group_tests_name("test_robust", list, NULL, NULL);
}
