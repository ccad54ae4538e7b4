/* test_exhaustive.c - cmocka tests holding ft_search to an exhaustive reference search (ref_search.h) on small random problems, and self-checks of that reference. */
#include "ft_testutil.h"
#include "ref_search.h"

#include <time.h>

/* Budgets.  FT_EXHAUSTIVE_COUNT overrides the number of random problems
 * (default 200, or SLOW_COUNT when FT_SLOW=1, under valgrind or in a
 * sanitizer build); FT_EXHAUSTIVE_TIME_LIMIT overrides ft_search's time
 * limit (default 2 s, the contest's limit up to 5 ops); FT_EXHAUSTIVE_SHOW
 * is how many losing problems are printed in full (default 3);
 * FT_EXHAUSTIVE_OP_ORDERS=1 widens the reference to every topological op
 * order inside each subgraph (beyond the contract; informative). */
#define DEFAULT_COUNT 200
/* Under the slow runners (valgrind, sanitizers: make check-valgrind and
 * check-sanitize, where this test was the longest item at 450 s and 293 s)
 * the random problems are fewer, not different: the plain 'make check' runs
 * the full counts, and the slow runners' job is the memory checks of the
 * same code paths (halved again 2026-11-28 for CI's 45 minutes: 58 and
 * 100 s of the two bounds checks under valgrind).  The bound checks' counts stay multiples of 6, so that
 * every problem size (3 + i % 6 ops) meets both compute models (i % 2). */
#define SLOW_COUNT 4
#define BOUND_COUNT 500        /* problems of each bounds check (FT_BOUND_COUNT overrides) */
#define SLOW_BOUND_COUNT 12
#define LAYOUT_BOUND_COUNT 300
#define SLOW_LAYOUT_BOUND_COUNT 6
#define TIMED_BOUND_COUNT 200  /* each of the two timed checks */
#define SLOW_TIMED_BOUND_COUNT 6
#define DEFAULT_TIME_LIMIT 2.0
#define DEFAULT_SHOW 3
#define PRUNE_CHECKS 12        /* problems of the pruning self-check */
#define SLOW_PRUNE_CHECKS 2
#define SAMPLE_PROBLEMS 40     /* problems of the random-schedule self-check */
#define SAMPLE_OPS 5           /* at most this many ops in each */
#define SLOW_SAMPLE_PROBLEMS 2    /* (68 s under valgrind at 4: the reference on 5 ops) */
#define SLOW_SAMPLE_OPS 4         /* (83 s under valgrind at 2 problems of up to 5 ops) */
#define SAMPLES 300            /* random schedules per problem */
#define SEED_BASE 0x5eed0000ULL
#define LAYOUT_SEED_BASE 0x1a900000ULL
#define LAYOUT_COUNT 60        /* problems with Layout ops (FT_EXHAUSTIVE_COUNT overrides) */
#define PRUNE_SEED_BASE 0x9a0e0000ULL
#define SAMPLE_SEED_BASE 0x5a3b0000ULL

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

/* ------------------------------------------------------------ budgets */

/* Whether the run is slow: FT_SLOW=1, valgrind (its preload library or
 * make check-valgrind's FT_RUNNER) or a sanitizer build. */
static int slow_run(void)
{
    const char *slow = getenv("FT_SLOW");
    return (slow && strcmp(slow, "1") == 0) || ftt_valgrind() || SANITIZED;
}

/* Integer from environment variable `name` (> 0), else `dflt`. */
static long env_long(const char *name, long dflt)
{
    const char *v = getenv(name);
    long x = v && *v ? strtol(v, NULL, 10) : 0;
    return x > 0 ? x : dflt;
}

/* printf to stdout, flushed, without cmocka's 1 KiB message limit (problem
 * and schedule texts are longer). */
#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fflush(stdout);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ------------------------------------------------------------ generator */

typedef struct gen {
    uint64_t s;
} gen;

static uint64_t gen_next(gen *g)
{
    uint64_t z = (g->s += 0x9e3779b97f4a7c15ULL); /* splitmix64 */
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int gen_below(gen *g, int n) { return n > 0 ? (int)(gen_next(g) % (uint64_t)n) : 0; }

static double gen_unit(gen *g) { return (double)(gen_next(g) >> 11) * 0x1p-53; }

static int gen_chance(gen *g, int num, int den) { return gen_below(g, den) < num; }

/* Text appended to a fixed buffer (truncation is caught by the parser). */
typedef struct text {
    char buf[8192];
    size_t len;
} text;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void text_add(text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (t->len < sizeof t->buf) {
        int n = vsnprintf(t->buf + t->len, sizeof t->buf - t->len, fmt, ap);
        t->len += n > 0 ? (size_t)n : 0;
    }
    va_end(ap);
}

#define GEN_MAX_TENSORS 32

typedef struct gen_problem {
    int nt, nops;
    int64_t w[GEN_MAX_TENSORS], h[GEN_MAX_TENSORS];
    int produced[GEN_MAX_TENSORS];
    int mm[REF_MAX_OPS], nin[REF_MAX_OPS], in[REF_MAX_OPS][3], out[REF_MAX_OPS];
    double cost[REF_MAX_OPS];
} gen_problem;

static int gen_tensor(gen_problem *q, int64_t w, int64_t h)
{
    q->w[q->nt] = w;
    q->h[q->nt] = h;
    q->produced[q->nt] = 0;
    return q->nt++;
}

/* A random tensor index among those accepted by `ok` (produced ones only
 * when `produced_only`), excluding `not`; -1 if none. */
static int gen_pick(gen *g, const gen_problem *q, int produced_only, int64_t w,
                    int64_t h, int not1, int not2)
{
    int cand[GEN_MAX_TENSORS], n = 0;
    for (int t = 0; t < q->nt; t++)
        if ((!produced_only || q->produced[t]) && t != not1 && t != not2 &&
            (w <= 0 || q->w[t] == w) && (h <= 0 || q->h[t] == h))
            cand[n++] = t;
    return n ? cand[gen_below(g, n)] : -1;
}

/* Contest JSON of a random problem from `seed`: 1..max_ops ops (the larger
 * of two uniform draws), MatMul (2 in 5) or Pointwise with 1-3 inputs,
 * shapes consistent (SPEC 1), operands often shared so outputs get several
 * consumers, sizes from dims[], native granularity [8|16, 8|16], random
 * costs and bandwidth, and a capacity log-uniform between one 4 x 4 tile of
 * every operand of the largest op and 1.5 x all tensors.  Returns a malloc'd
 * string, NULL when out of memory. */
/* Variants of the generator for the bound tests: small native tiles
 * [4|8, 4|8] and operands shared half as often (more tensors read by one op
 * only, which the capacity bound counts); with `layout`, half the ops that
 * would be Pointwise are Layout ops (SPEC 1) from one earlier or new
 * tensor to a shape drawn from dims[], which later MatMuls often take as
 * operands (im2col-like), while shapes that do not divide each other
 * exercise floor and ceil.  Off, the draws are exactly those of before. */
static struct {
    int small;
    int layout;
} gen_mode;

static char *gen_problem_json(uint64_t seed, int max_ops, const int64_t *dims,
                              int ndims)
{
    static const int64_t natives[4][2] = {{8, 8}, {16, 16}, {16, 8}, {8, 16}};
    static const int64_t small_natives[4][2] = {{4, 4}, {8, 8}, {8, 4}, {4, 8}};
    const int share = gen_mode.small ? 2 : 1;   /* divides the odds of a shared operand */
    gen g = {seed};
    gen_problem q;
    text *t;
    char num[FT_NUMBUF];
    memset(&q, 0, sizeof q);
    q.nops = 1 + gen_below(&g, max_ops);
    int again = 1 + gen_below(&g, max_ops);
    q.nops = again > q.nops ? again : q.nops; /* biased to more ops */
    for (int o = 0; o < q.nops; o++) {
        q.mm[o] = gen_chance(&g, 2, 5);
        q.cost[o] = (double)(50 + gen_below(&g, 3000)) / 10.0;
        if (q.mm[o]) {
            int l = gen_chance(&g, 3, 4) ? gen_pick(&g, &q, 1, 0, 0, -1, -1) : -1;
            if (l < 0)
                l = gen_tensor(&q, dims[gen_below(&g, ndims)], dims[gen_below(&g, ndims)]);
            int r = gen_chance(&g, 1, 3 * share) ? gen_pick(&g, &q, 0, 0, q.w[l], l, -1) : -1;
            if (r < 0)
                r = gen_tensor(&q, dims[gen_below(&g, ndims)], q.w[l]);
            q.nin[o] = 2;
            q.in[o][0] = l;
            q.in[o][1] = r;
            q.out[o] = gen_tensor(&q, q.w[r], q.h[l]);
        } else if (gen_mode.layout && gen_chance(&g, 1, 2)) {
            int x = gen_chance(&g, 4, 5) ? gen_pick(&g, &q, 1, 0, 0, -1, -1) : -1;
            if (x < 0)
                x = gen_tensor(&q, dims[gen_below(&g, ndims)], dims[gen_below(&g, ndims)]);
            q.mm[o] = 2;
            q.nin[o] = 1;
            q.in[o][0] = x;
            q.out[o] = gen_tensor(&q, dims[gen_below(&g, ndims)], dims[gen_below(&g, ndims)]);
        } else {
            int x = gen_chance(&g, 4, 5) ? gen_pick(&g, &q, 1, 0, 0, -1, -1) : -1;
            if (x < 0)
                x = gen_tensor(&q, dims[gen_below(&g, ndims)], dims[gen_below(&g, ndims)]);
            q.nin[o] = 1 + (gen_chance(&g, 1, 2) ? 0 : gen_chance(&g, 3, 5) ? 1 : 2);
            q.in[o][0] = x;
            for (int i = 1; i < q.nin[o]; i++) {
                int y = gen_chance(&g, 1, 2 * share)
                            ? gen_pick(&g, &q, 0, q.w[x], q.h[x], q.in[o][0],
                                       i > 1 ? q.in[o][1] : -1)
                            : -1;
                q.in[o][i] = y >= 0 ? y : gen_tensor(&q, q.w[x], q.h[x]);
            }
            q.out[o] = gen_tensor(&q, q.w[x], q.h[x]);
        }
        q.produced[q.out[o]] = 1;
    }
    const int64_t *nat = (gen_mode.small ? small_natives : natives)[gen_below(&g, 4)];
    double total = 0, lo = 0;
    for (int i = 0; i < q.nt; i++)
        total += (double)(q.w[i] * q.h[i]);
    for (int o = 0; o < q.nops; o++)
        lo = 16.0 * (q.nin[o] + 1) > lo ? 16.0 * (q.nin[o] + 1) : lo;
    double cap = floor(lo * pow(1.5 * total / lo, gen_unit(&g)));
    double bw = pow(2.0, -1.0 + 6.0 * gen_unit(&g));

    t = malloc(sizeof *t);
    if (!t)
        return NULL;
    t->len = 0;
    text_add(t, "{\"widths\": [");
    for (int i = 0; i < q.nt; i++)
        text_add(t, "%s%lld", i ? ", " : "", (long long)q.w[i]);
    text_add(t, "], \"heights\": [");
    for (int i = 0; i < q.nt; i++)
        text_add(t, "%s%lld", i ? ", " : "", (long long)q.h[i]);
    text_add(t, "], \"inputs\": [");
    for (int o = 0; o < q.nops; o++) {
        text_add(t, "%s[", o ? ", " : "");
        for (int i = 0; i < q.nin[o]; i++)
            text_add(t, "%s%d", i ? ", " : "", q.in[o][i]);
        text_add(t, "]");
    }
    text_add(t, "], \"outputs\": [");
    for (int o = 0; o < q.nops; o++)
        text_add(t, "%s[%d]", o ? ", " : "", q.out[o]);
    text_add(t, "], \"base_costs\": [");
    for (int o = 0; o < q.nops; o++)
        text_add(t, "%s%s", o ? ", " : "", ft_format_double(num, q.cost[o]));
    text_add(t, "], \"op_types\": [");
    for (int o = 0; o < q.nops; o++)
        text_add(t, "%s\"%s\"", o ? ", " : "", q.mm[o] == 2 ? "Layout" : q.mm[o] ? "MatMul" : "Pointwise");
    text_add(t, "], \"fast_memory_capacity\": %s", ft_format_double(num, cap));
    text_add(t, ", \"slow_memory_bandwidth\": %s", ft_format_double(num, bw));
    text_add(t, ", \"native_granularity\": [%lld, %lld]}", (long long)nat[0],
             (long long)nat[1]);
    char *json = strdup(t->buf);
    free(t);
    return json;
}

static const int64_t dims_main[] = {4, 6, 8, 12, 16, 24, 32};
static const int64_t dims_small[] = {2, 4, 6, 8, 12};
static const int64_t dims_bound[] = {1, 3, 4, 6, 8, 12, 16, 24};

/* ------------------------------------------------------------ fixture */

/* Everything a test allocates, freed by teardown (so a failing assertion
 * leaks nothing) or by fix_clear between problems. */
struct fix {
    char *json;
    ft_problem *p;
    ref_result ref, ref2;
    ft_schedule *s;
    ft_eval ev, ev2;
    char *text1, *text2;
};

static void fix_clear(struct fix *f)
{
    free(f->json);
    ft_problem_free(f->p);
    ref_result_free(&f->ref);
    ref_result_free(&f->ref2);
    ft_schedule_free(f->s);
    ft_eval_free(&f->ev);
    ft_eval_free(&f->ev2);
    free(f->text1);
    free(f->text2);
    memset(f, 0, sizeof *f);
}

static int setup(void **state)
{
    *state = calloc(1, sizeof(struct fix));
    return *state ? 0 : -1;
}

static int teardown(void **state)
{
    struct fix *f = *state;
    if (f) {
        fix_clear(f);
        free(f);
    }
    *state = NULL;
    return 0;
}

/* Parse f->json into f->p; fails the test if it does not load. */
static void fix_parse(struct fix *f, const char *name)
{
    ft_status st;
    ft_status_clear(&st);
    if (ft_problem_parse(f->json, name, &f->p, &st) != FT_OK) {
        say("problem: %s\n", f->json);
        fail_msg("%s: %s", name, st.msg);
    }
}

/* Run the reference on f->p into *r; fails the test on an internal error.
 * When found, also checks that its schedule re-evaluates to its total.
 * Returns 1 when that total is below SPEC 5's lower bound (which happened
 * before the bound's reduction flags: a fused Pointwise prologue pays its
 * reduction dimension proportionally, len / nw, where the bound charged
 * ceil(W / nw)), else 0. */
static int run_reference(struct fix *f, ft_compute_model m, unsigned flags,
                         ref_result *r)
{
    char err[512];
    ft_eval ev;
    ft_status st;
    if (ref_search(f->p, m, flags, r, err, sizeof err) != 0) {
        say("problem: %s\n", f->json);
        fail_msg("%s", err);
    }
    if (!r->found)
        return 0;
    memset(&ev, 0, sizeof ev);
    if (ft_evaluate(f->p, r->best, m, &ev, &st) != FT_OK)
        fail_msg("reference schedule rejected: %s", st.msg);
    double total = ev.total, lb = ev.lower_bound;
    ft_eval_free(&ev);
    assert_cost(total, r->total);
    return r->total < lb * (1 - 1e-9);
}

/* ------------------------------------------------------------ self-checks */

/* Reference total on inline problem `json` under both compute models is at
 * most `known` (a vector's total, hence achievable); returns nothing, fails
 * the test otherwise. */
static void check_known(void **state, const char *json, double known)
{
    struct fix *f = *state;
    for (int m = 0; m < 2; m++) {
        fix_clear(f);
        f->json = strdup(json);
        assert_non_null(f->json);
        fix_parse(f, "known.problem.json");
        run_reference(f, (ft_compute_model)m, 0, &f->ref);
        if (!f->ref.found) {
            say("problem: %s\n", json);
            fail_msg("no schedule found; %.10g is achievable", known);
        }
        if (!(f->ref.total <= known * (1 + 1e-9))) {
            f->text1 = ft_schedule_to_json(f->ref.best, NULL);
            say("problem: %s\nreference schedule: %s\n", json,
                f->text1 ? f->text1 : "?");
            fail_msg("%s model: reference %.10g > known %.10g",
                     ft_compute_model_name((ft_compute_model)m), f->ref.total, known);
        }
    }
}

/* Examples 1 (two Pointwise, 128^2): ex1B's fusion gives 3276.8. */
static void test_exhaustive_reference_ex1(void **state)
{
    check_known(state,
                PJ("[128, 128, 128]", "[128, 128, 128]", "[[0], [1]]", "[[1], [2]]",
                   "[1000, 100]", "[" PW ", " PW "]", "35000", "10", N128),
                3276.8);
}

/* Example 2 (the same at 256^2, capacity 35000): ex2B gives 13107.2. */
static void test_exhaustive_reference_ex2(void **state)
{
    check_known(state,
                PJ("[256, 256, 256]", "[256, 256, 256]", "[[0], [1]]", "[[1], [2]]",
                   "[1000, 100]", "[" PW ", " PW "]", "35000", "10", N128),
                13107.2);
}

/* Example 3 (diamond of Pointwise ops): ex3C's retention gives 4638.4. */
static void test_exhaustive_reference_ex3(void **state)
{
    check_known(state,
                PJ("[128, 128, 128, 128]", "[128, 128, 128, 128]",
                   "[[0], [1], [1, 2]]", "[[1], [2], [3]]", "[1500, 1500, 1500]",
                   "[" PW ", " PW ", " PW "]", "50000", "10", N128),
                4638.4);
}

/* Example 4 (one 128^3 MatMul, capacity 25000): ex4B's snake gives 6548. */
static void test_exhaustive_reference_ex4(void **state)
{
    check_known(state,
                PJ("[128, 128, 128]", "[128, 128, 128]", "[[0, 1]]", "[[2]]", "[1500]",
                   "[" MM "]", "25000", "10", N128),
                6548);
}

/* Example 5 (two chained MatMuls, capacity 45000): ex5B gives 6915.2. */
static void test_exhaustive_reference_ex5(void **state)
{
    check_known(state,
                PJ("[128, 128, 128, 128, 128]", "[128, 128, 128, 128, 128]",
                   "[[0, 1], [3, 2]]", "[[3], [4]]", "[2000, 2000]",
                   "[" MM ", " MM "]", "45000", "10", N128),
                6915.2);
}

/* The bound-based pruning is exact: on small random problems the pruned
 * search finds the same total as the one that evaluates everything. */
static void test_exhaustive_reference_pruning_exact(void **state)
{
    struct fix *f = *state;
    int n = slow_run() ? SLOW_PRUNE_CHECKS : PRUNE_CHECKS;
    long full = 0, pruned = 0;
    for (int i = 0; i < n; i++) {
        ft_compute_model m = i % 2 ? FT_COMPUTE_OP : FT_COMPUTE_NATIVE;
        fix_clear(f);
        f->json = gen_problem_json(PRUNE_SEED_BASE + (uint64_t)i, 4, dims_small,
                                   (int)(sizeof dims_small / sizeof dims_small[0]));
        assert_non_null(f->json);
        fix_parse(f, "random.problem.json");
        run_reference(f, m, 0, &f->ref);
        run_reference(f, m, REF_NO_PRUNE, &f->ref2);
        assert_int_equal(f->ref.found, f->ref2.found);
        if (f->ref.found && !(fabs(f->ref.total - f->ref2.total) <= 1e-9 * f->ref2.total)) {
            say("problem: %s\n", f->json);
            fail_msg("problem %d: pruned %.17g, full %.17g", i, f->ref.total,
                     f->ref2.total);
        }
        full += f->ref2.stats.evaluations;
        pruned += f->ref.stats.evaluations;
    }
    say("pruning check: %d problems, %ld evaluations pruned vs %ld full\n",
                  n, pruned, full);
}

/* The reference beats (or ties) the simplest schedule of its space, one op
 * per subgraph in topological order at native granularity, when that one is
 * valid.  Returns through failure only. */
static void check_beats_unfused(struct fix *f, ft_compute_model m)
{
    ft_schedule *s = ft_schedule_new(f->p->nops);
    ft_eval ev;
    ft_status st;
    assert_non_null(s);
    for (int i = 0; i < f->p->nops; i++) {
        if (ft_subgraph_set_ops(&s->sg[i], &f->p->topo[i], 1) != FT_OK) {
            ft_schedule_free(s);
            fail_msg("out of memory");
        }
        s->sg[i].w = f->p->native_w;
        s->sg[i].h = f->p->native_h;
        s->sg[i].k = f->p->native_w;
    }
    memset(&ev, 0, sizeof ev);
    int rc = ft_evaluate(f->p, s, m, &ev, &st);
    double total = ev.total;
    ft_eval_free(&ev);
    ft_schedule_free(s);
    if (rc == FT_OK && !(f->ref.found && f->ref.total <= total * (1 + 1e-9))) {
        say("problem: %s\n", f->json);
        fail_msg("reference %.17g (found %d) worse than the unfused native schedule "
                 "%.17g", f->ref.total, f->ref.found, total);
    }
}

/* A random schedule of the reference's space for f->p (random partition,
 * block order, granularities from the candidate sets, traversal kind and
 * retained subsets); NULL when the draw has a cyclic block order (or on
 * out of memory).  Validity is left to ft_evaluate. */
static ft_schedule *sample_schedule(const ft_problem *p, gen *g)
{
    ref_state S;
    int label[REF_MAX_OPS], nb = 0, map[REF_MAX_OPS], order[REF_MAX_OPS];
    unsigned blk[REF_MAX_OPS], pred[REF_MAX_OPS], placed = 0;
    memset(&S, 0, sizeof S);
    S.p = p;
    S.n = p->nops;
    for (int o = 0; o < S.n; o++) {
        const ft_tensor *T = &p->tensors[p->ops[o].output];
        for (int c = 0; c < T->nconsumers; c++)
            S.consumers[o] |= 1u << T->consumers[c];
    }
    for (int b = 0; b < REF_MAX_OPS; b++)
        map[b] = -1, blk[b] = 0;
    for (int o = 0; o < S.n; o++) { /* random labels, renumbered densely */
        int l = gen_below(g, S.n);
        if (map[l] < 0)
            map[l] = nb++;
        label[o] = map[l];
        blk[label[o]] |= 1u << o;
    }
    for (int b = 0; b < nb; b++) {
        pred[b] = 0;
        for (int o = 0; o < S.n; o++)
            if (label[o] != b && (S.consumers[o] & blk[b]))
                pred[b] |= 1u << label[o];
    }
    for (int i = 0; i < nb; i++) { /* random topological order */
        int ready[REF_MAX_OPS], nr = 0;
        for (int b = 0; b < nb; b++)
            if (!(placed >> b & 1u) && !(pred[b] & ~placed))
                ready[nr++] = b;
        if (!nr)
            return NULL;
        order[i] = ready[gen_below(g, nr)];
        placed |= 1u << order[i];
    }
    unsigned ob[REF_MAX_OPS], r[REF_MAX_OPS];
    ref_cfg cfg[REF_MAX_OPS];
    for (int i = 0; i < nb; i++)
        ob[i] = blk[order[i]];
    for (int i = 0; i < nb; i++) {
        int64_t wv[REF_MAX_OPS], hv[REF_MAX_OPS], kv[REF_MAX_OPS], *ws, *hs, *ks;
        int nprod = 0, nmm = 0;
        r[i] = 0;
        for (int o = 0; o < S.n; o++) {
            if (!(ob[i] >> o & 1u))
                continue;
            wv[nprod] = p->tensors[p->ops[o].output].width;
            hv[nprod++] = p->tensors[p->ops[o].output].height;
            if (p->ops[o].type == FT_OP_MATMUL)
                kv[nmm++] = p->ops[o].k;
            if (i + 1 < nb && (S.consumers[o] & ob[i + 1]) && gen_chance(g, 1, 2))
                r[i] |= 1u << o;
        }
        int nw = ref_candidates(p->native_w, wv, nprod, &ws);
        int nh = ref_candidates(p->native_h, hv, nprod, &hs);
        int nk = ref_candidates(p->native_w, kv, nmm, &ks);
        if (nw > 0 && nh > 0 && nk > 0) {
            cfg[i].w = ws[gen_below(g, nw)];
            cfg[i].h = hs[gen_below(g, nh)];
            cfg[i].k = nmm ? ks[gen_below(g, nk)] : 1;
        }
        cfg[i].order = gen_below(g, 3);
        free(ws);
        free(hs);
        free(ks);
        if (nw <= 0 || nh <= 0 || nk <= 0)
            return NULL;
        ref_block_ops(&S, ob[i], cfg[i].ops);
    }
    ft_schedule *s = ref_build(&S, ob, nb, r, cfg);
    for (int i = 0; s && i < nb; i++) {
        int64_t ntx, nty;
        int same, oom;
        if (ref_grid(p, s, i, &ntx, &nty) != 0)
            continue; /* invalid anyway: ft_evaluate says why */
        s->sg[i].order = ref_traversal(cfg[i].order, ntx, nty, &same, &oom);
        s->sg[i].norder = s->sg[i].order ? ntx * nty : 0;
    }
    return s;
}

/* The reference is at most every valid random schedule of its space, scored
 * by ft_evaluate alone: a check of the DP and its cache that shares none of
 * their code. */
static void test_exhaustive_reference_beats_random_schedules(void **state)
{
    struct fix *f = *state;
    int n = slow_run() ? SLOW_SAMPLE_PROBLEMS : SAMPLE_PROBLEMS;
    int nops = slow_run() ? SLOW_SAMPLE_OPS : SAMPLE_OPS;
    long valid = 0, equal = 0;
    for (int i = 0; i < n; i++) {
        ft_compute_model m = i % 2 ? FT_COMPUTE_OP : FT_COMPUTE_NATIVE;
        gen g = {SAMPLE_SEED_BASE ^ (uint64_t)i << 32};
        fix_clear(f);
        f->json = gen_problem_json(SAMPLE_SEED_BASE + (uint64_t)i, nops, dims_main,
                                   (int)(sizeof dims_main / sizeof dims_main[0]));
        assert_non_null(f->json);
        fix_parse(f, "random.problem.json");
        run_reference(f, m, 0, &f->ref);
        for (int k = 0; k < SAMPLES; k++) {
            ft_status st;
            ft_schedule_free(f->s);
            ft_eval_free(&f->ev);
            f->s = sample_schedule(f->p, &g);
            if (!f->s || ft_evaluate(f->p, f->s, m, &f->ev, &st) != FT_OK)
                continue;
            valid++;
            if (!f->ref.found || f->ev.total < f->ref.total * (1 - 1e-9)) {
                f->text1 = ft_schedule_to_json(f->s, NULL);
                say("problem: %s\nschedule: %s\n", f->json, f->text1 ? f->text1 : "?");
                fail_msg("problem %d: random schedule %.17g beats the reference "
                         "%.17g (found %d)", i, f->ev.total, f->ref.total, f->ref.found);
            }
            equal += f->ev.total <= f->ref.total * (1 + 1e-9);
        }
    }
    say("random schedules: %ld valid on %d problems, %ld as good as the "
                  "reference\n", valid, n, equal);
    assert_true(valid > 0);
}

/* ------------------------------------------------------------ the search */

/* ft_search is never worse than the reference on `count` random problems
 * of 1 to 6 ops from seeds seed_base + i (compute model alternating
 * native/op, time limit 2 s).  Every problem is tried; the losses are
 * listed, then the test fails. */
static void search_never_worse(struct fix *f, uint64_t seed_base, long count)
{
    long show = env_long("FT_EXHAUSTIVE_SHOW", DEFAULT_SHOW);
    const char *tlv = getenv("FT_EXHAUSTIVE_TIME_LIMIT");
    double tl = tlv && atof(tlv) > 0 ? atof(tlv) : DEFAULT_TIME_LIMIT;
    unsigned flags = env_long("FT_EXHAUSTIVE_OP_ORDERS", 0) == 1 ? REF_ALL_OP_ORDERS : 0;
    long tried = 0, skipped = 0, ties = 0, wins = 0, losses = 0, failed = 0;
    long evals = 0, contexts = 0, below_lb = 0, none = 0;
    double worst = 1, excess = 0, ref_time = 0, search_time = 0, t0;

    for (long i = 0; i < count; i++) {
        ft_compute_model m = i % 2 ? FT_COMPUTE_OP : FT_COMPUTE_NATIVE;
        ft_search_opts o;
        ft_status st;
        fix_clear(f);
        f->json = gen_problem_json(seed_base + (uint64_t)i, 6, dims_main,
                                   (int)(sizeof dims_main / sizeof dims_main[0]));
        assert_non_null(f->json);
        fix_parse(f, "random.problem.json");
        t0 = now();
        below_lb += run_reference(f, m, flags, &f->ref);
        ref_time += now() - t0;
        evals += f->ref.stats.evaluations;
        contexts += f->ref.stats.contexts;
        check_beats_unfused(f, m);
        if (!f->ref.found) {
            skipped++;
            continue;
        }
        tried++;
        ft_search_opts_init(&o);
        o.model = m;
        o.time_limit = tl;
        o.seed = 1;
        t0 = now();
        int rc = ft_search(f->p, &o, &f->s, &f->ev, &st);
        search_time += now() - t0;
        double got = INFINITY;
        if (rc == FT_OK) {
            /* the scheduler's own figures must be the evaluator's */
            if (ft_evaluate(f->p, f->s, m, &f->ev2, &st) != FT_OK) {
                say("problem %ld: ft_search's schedule is invalid: %s\n", i,
                              st.msg);
                failed++;
                continue;
            }
            if (!(fabs(f->ev2.total - f->ev.total) <= 1e-9 * f->ev2.total)) {
                say("problem %ld: ft_search reports %.17g, ft_evaluate "
                              "gives %.17g\n", i, f->ev.total, f->ev2.total);
                failed++;
                continue;
            }
            got = f->ev2.total;
        }
        double want = f->ref.total, ratio = got / want;
        if (got <= want * (1 + 1e-9)) {
            if (got < want * (1 - 1e-9)) {
                /* outside the reference's space: recomputation, op order */
                wins++;
                say("problem %ld (seed %#llx, %d ops, %s): ft_search %.10g "
                              "< reference %.10g (-%.4g%%)\n", i,
                              (unsigned long long)(seed_base + (uint64_t)i),
                              f->p->nops, ft_compute_model_name(m), got, want,
                              100 * (1 - ratio));
            } else {
                ties++;
            }
            continue;
        }
        losses++;
        if (rc == FT_OK) {
            worst = ratio > worst ? ratio : worst;
            excess += ratio - 1;
        } else {
            none++;
        }
        say("problem %ld (seed %#llx, %d ops, %s): ft_search %.10g%s > "
                      "reference %.10g (+%.4g%%)\n", i,
                      (unsigned long long)(seed_base + (uint64_t)i), f->p->nops,
                      ft_compute_model_name(m), got,
                      rc == FT_OK ? "" : " (no schedule)", want, 100 * (ratio - 1));
        if (losses <= show) {
            f->text1 = ft_schedule_to_json(f->ref.best, NULL);
            f->text2 = f->s ? ft_schedule_to_json(f->s, NULL) : NULL;
            say("  problem: %s\n  reference schedule (%.17g): %s\n"
                          "  ft_search schedule (%.17g): %s\n", f->json, want,
                          f->text1 ? f->text1 : "?", got,
                          f->text2 ? f->text2 : (rc == FT_OK ? "?" : st.msg));
        }
    }
    say("exhaustive: %ld problems (%ld without a valid schedule skipped), "
                  "ft_search ties %ld, beats the reference on %ld, loses %ld (%ld "
                  "with no schedule; the others by +%.4g%% on average, +%.4g%% at "
                  "worst), inconsistent %ld; reference %.1f s (%ld contexts, %ld "
                  "evaluations; below SPEC 5's lower bound on %ld), ft_search %.1f s\n",
                  tried, skipped, ties, wins, losses, none,
                  losses > none ? 100 * excess / (double)(losses - none) : 0.0,
                  100 * (worst - 1), failed, ref_time, contexts, evals, below_lb,
                  search_time);
    if (losses || failed)
        fail_msg("ft_search is worse than the exhaustive reference on %ld of %ld "
                 "problems (%ld with no schedule, worst other +%.4g%%) and "
                 "inconsistent on %ld", losses, tried, none, 100 * (worst - 1), failed);
}

static void test_exhaustive_search_never_worse(void **state)
{
    search_never_worse(*state, SEED_BASE, env_long("FT_EXHAUSTIVE_COUNT", slow_run() ? SLOW_COUNT : DEFAULT_COUNT));
}

/* The same on problems with Layout ops (gen_mode.layout; LAYOUT_COUNT of
 * them, SLOW_COUNT under the slow runners). */
static void test_exhaustive_layout_search_never_worse(void **state)
{
    gen_mode.layout = 1;
    search_never_worse(*state, LAYOUT_SEED_BASE, env_long("FT_EXHAUSTIVE_COUNT", slow_run() ? SLOW_COUNT : LAYOUT_COUNT));
    gen_mode.layout = 0;
}

/* Print p's target terms (random_timing's draws) when it has any. */
static void say_timing(const ft_problem *p)
{
    const ft_timing *t = &p->timing;
    say("timing: overlap %d latency %g launch %g write_bandwidth %g duplex %d units %d step %g tile %g matmul_tile %g "
        "cache %g at %g; pointwise_exact %d allow_larger %d\n",
        (int)t->overlap, t->transfer_latency, t->launch_overhead, t->write_bandwidth, t->duplex, t->units, t->step_overhead,
        t->tile_overhead, t->matmul_tile_overhead, t->cache_capacity, t->cache_bandwidth, p->pointwise_exact, p->allow_larger);
}

/* Schedule s of f->p is at or above both bounds under model m: its total is
 * at least cap (the capacity bound, itself at least the SPEC bound), and
 * its memory time, summed over steps, at least capm (the bound's traffic
 * time: the two are the same model without timing terms).  Fails the test
 * naming `who` otherwise. */
static void check_above_bounds(struct fix *f, const ft_schedule *s, ft_compute_model m, double cap, double capm,
                               const char *who)
{
    ft_eval ev;
    ft_status st;
    memset(&ev, 0, sizeof ev);
    if (ft_evaluate(f->p, s, m, &ev, &st) != FT_OK)
        fail_msg("%s schedule rejected: %s", who, st.msg);
    double total = ev.total, mem = 0;
    for (int i = 0; i < ev.nsubgraphs; i++)
        mem += ev.sg[i].memory_time;
    ft_eval_free(&ev);
    if (total < cap * (1 - 1e-9) || mem < capm * (1 - 1e-9)) {
        say("problem: %s\n", f->json);
        say_timing(f->p);
        fail_msg("%s schedule: total %.17g, memory %.17g; capacity bound %.17g, its memory %.17g", who, total, mem,
                 cap, capm);
    }
    /* the bound of its grouping (ft_gap_report) is a bound too, and the
     * best configuration of each subgraph alone in its context
     * (ft_gap_alone: retention, recomputation, every target term) lies
     * between it and the total */
    ft_gap g;
    if (ft_gap_report(f->p, s, m, total, &g, &st) != FT_OK)
        fail_msg("%s schedule: gap report: %s", who, st.msg);
    memset(&ev, 0, sizeof ev);
    if (ft_evaluate(f->p, s, m, &ev, &st) != FT_OK || ft_gap_alone(f->p, s, &ev, HUGE_VAL, &g, &st) != FT_OK)
        fail_msg("%s schedule: gap evidence: %s", who, st.msg);
    ft_eval_free(&ev);
    if (total < g.grouping_bound * (1 - 1e-9) || g.bound < cap * (1 - 1e-9) || g.best_alone > total * (1 + 1e-12) ||
        g.best_alone < g.grouping_bound * (1 - 1e-9) || g.alone_done != g.nsubgraphs) {
        say("problem: %s\n", f->json);
        say_timing(f->p);
        char *js = ft_schedule_to_json(s, NULL);
        say("schedule: %s\n", js ? js : "(out of memory)");
        free(js);
        fail_msg("%s schedule: total %.17g, its grouping's bound %.17g (bound %.17g), best alone %.17g (%d of %d subgraphs)",
                 who, total, g.grouping_bound, g.bound, g.best_alone, g.alone_done, g.nsubgraphs);
    }
}

/* A random schedule of p, valid or not (ft_evaluate tells): 1 to nops + 2
 * subgraphs, each a random connected set of ops grown from a random op
 * (ops may repeat across subgraphs: recomputation), in topological order,
 * sorted by their last op; the ops no subgraph took get one each; every
 * granularity from 1 to native; random retention of what the next
 * subgraph reads.  NULL when out of memory. */
static ft_schedule *wild_schedule(const ft_problem *p, gen *g)
{
    int n = p->nops, pos[REF_MAX_OPS], m = 1 + gen_below(g, n + 2), cnt = 0;
    unsigned blk[2 * REF_MAX_OPS + 2], covered = 0;
    for (int i = 0; i < n; i++)
        pos[p->topo[i]] = i;
    for (int i = 0; i < m; i++) {
        unsigned b = 1u << gen_below(g, n);
        int want = 1 + gen_below(g, n);
        for (int grow = 0; grow < 4 * n && __builtin_popcount(b) < want; grow++) {
            int o = gen_below(g, n), linked = 0;   /* o shares a tensor with b? */
            for (int x = 0; x < n && !linked; x++) {
                if (!(b >> x & 1u))
                    continue;
                const ft_op *a = &p->ops[o], *c = &p->ops[x];
                for (int i1 = 0; i1 < a->ninputs; i1++)
                    for (int i2 = 0; i2 < c->ninputs; i2++)
                        linked |= a->inputs[i1] == c->inputs[i2] || a->inputs[i1] == c->output ||
                                  c->inputs[i2] == a->output;
            }
            if (linked)
                b |= 1u << o;
        }
        blk[cnt++] = b;
        covered |= b;
    }
    for (int i = 0; i < n; i++)
        if (!(covered >> p->topo[i] & 1u))
            blk[cnt++] = 1u << p->topo[i];
    int last[2 * REF_MAX_OPS + 2];
    for (int i = 0; i < cnt; i++) {
        last[i] = 0;
        for (int o = 0; o < n; o++)
            if (blk[i] >> o & 1u && pos[o] > last[i])
                last[i] = pos[o];
    }
    for (int i = 1; i < cnt; i++)   /* insertion sort by the last op */
        for (int j = i; j > 0 && last[j - 1] > last[j]; j--) {
            int tl = last[j];
            unsigned tb = blk[j];
            last[j] = last[j - 1], blk[j] = blk[j - 1];
            last[j - 1] = tl, blk[j - 1] = tb;
        }
    ft_schedule *s = ft_schedule_new(cnt);
    if (!s)
        return NULL;
    s->len_granularities = s->len_retain = cnt;
    for (int i = 0; i < cnt; i++) {
        int ops[REF_MAX_OPS], k = 0, keep[REF_MAX_OPS], nk = 0;
        for (int j = 0; j < n; j++)
            if (blk[i] >> p->topo[j] & 1u)
                ops[k++] = p->topo[j];
        for (int j = 0; j < k && i + 1 < cnt; j++) {
            int t = p->ops[ops[j]].output, read = 0;
            for (int o = 0; o < n; o++)
                if (blk[i + 1] >> o & 1u)
                    for (int x = 0; x < p->ops[o].ninputs; x++)
                        read |= p->ops[o].inputs[x] == t;
            if (read && gen_chance(g, 1, 2))
                keep[nk++] = t;
        }
        if (ft_subgraph_set_ops(&s->sg[i], ops, k) != FT_OK || ft_subgraph_set_retain(&s->sg[i], keep, nk) != FT_OK) {
            ft_schedule_free(s);
            return NULL;
        }
        s->sg[i].w = 1 + gen_below(g, (int)p->native_w);
        s->sg[i].h = 1 + gen_below(g, (int)p->native_h);
        s->sg[i].k = 1 + gen_below(g, (int)ft_native_k(p));
    }
    return s;
}

/* Target terms drawn at random onto f->p from g (as test_search_score
 * draws them): overlap mode, transfer latency, launch overhead, write
 * bandwidth, separate channels, units in waves, step, tile and MatMul tile
 * overheads, a shared cache that some subgraphs fit, exact Pointwise
 * elements, a quarter of the time granularities above native.  Three
 * quarters of the time several units (nothing retained then). */
static void random_timing(struct fix *f, gen *g)
{
    static const double lats[] = {0, 1, 50, 400};
    static const int units[] = {1, 2, 3, 7};
    ft_problem *p = f->p;
    ft_status st;
    p->timing.overlap = (ft_overlap)gen_below(g, 3);
    p->timing.transfer_latency = lats[gen_below(g, 4)];
    p->timing.launch_overhead = (double)gen_below(g, 3) * 100;
    p->timing.write_bandwidth = gen_chance(g, 1, 2) ? 0 : p->bandwidth * (0.25 + 0.25 * (double)gen_below(g, 8));
    p->timing.duplex = gen_below(g, 2);
    p->timing.units = units[gen_below(g, 4)];
    p->timing.step_overhead = gen_chance(g, 1, 2) ? 0 : 13;
    p->timing.tile_overhead = gen_chance(g, 1, 2) ? 0 : 29;
    p->timing.matmul_tile_overhead = gen_chance(g, 1, 2) ? 0 : 41;
    p->timing.cache_capacity = gen_chance(g, 1, 2) ? 0 : (double)(16 << gen_below(g, 6));
    p->timing.cache_resident = gen_chance(g, 1, 2) ? 0 : p->timing.cache_capacity * (double)(1 + gen_below(g, 3)) / 2;
    p->timing.cache_bandwidth = p->bandwidth * 4;
    p->pointwise_exact = gen_below(g, 2);
    /* a quarter with granularities above native (ft_search tries them; the
     * reference stays at native and below) */
    p->allow_larger = gen_chance(g, 1, 4);
    if (ft_problem_finish(p, &st) != FT_OK)
        fail_msg("random timing: %s", st.msg);
}

/* Whether bounds_below_reference draws target terms (random_timing). */
static int bounds_timed;

/* Both lower bounds (SPEC sections 5 and 7) hold on `count` random
 * problems from seeds seed_base + 0x5bd1e995 + i, of up to 8 ops, native tiles of 4 or
 * 8, sizes 1 to 24 and capacities from tight to roomy: the capacity bound
 * is at least the SPEC bound, and at most the totals of the reference's
 * best schedule (itself at most the unfused one's, check_beats_unfused),
 * of ft_search's (which may recompute) and of 20 random schedules per
 * problem (wild_schedule), whose traffic is also at least the bound's. */
static void bounds_below_reference(struct fix *f, uint64_t seed_base, long count)
{
    long checked = 0, above = 0, traffic = 0, wild = 0;
    gen_mode.small = 1;
    for (long i = 0; i < count; i++) {
        ft_compute_model m = i % 2 ? FT_COMPUTE_OP : FT_COMPUTE_NATIVE;
        ft_search_opts o;
        ft_status st;
        fix_clear(f);
        f->json = gen_problem_json(seed_base + 0x5bd1e995u + (uint64_t)i, 3 + (int)(i % 6), dims_bound,
                                   (int)(sizeof dims_bound / sizeof dims_bound[0]));
        assert_non_null(f->json);
        fix_parse(f, "random.problem.json");
        if (bounds_timed) {
            gen tg = {seed_base ^ 0x7173u ^ (uint64_t)i};
            random_timing(f, &tg);
        }
        double sm, cm;
        double spec = ft_lower_bound(f->p, m, NULL, &sm);
        double cap = ft_lower_bound_capacity(f->p, m, NULL, &cm);
        assert_true(cap >= spec && cm >= sm);
        /* (the reference's pruning bound knows no target terms) */
        if (run_reference(f, m, bounds_timed ? REF_NO_PRUNE : 0, &f->ref)) {
            say("problem %ld: reference %.17g below the SPEC bound %.17g\n  %s\n", i, f->ref.total, spec, f->json);
            fail();
        }
        check_beats_unfused(f, m);
        if (!f->ref.found)
            continue;
        checked++;
        above += cap > spec * (1 + 1e-9);
        traffic += cm > sm * (1 + 1e-9);
        check_above_bounds(f, f->ref.best, m, cap, cm, "reference");
        ft_search_opts_init(&o);
        o.model = m;
        o.time_limit = 0.01;
        if (ft_search(f->p, &o, &f->s, &f->ev, &st) == FT_OK)
            check_above_bounds(f, f->s, m, cap, cm, "ft_search");
        gen g = {seed_base ^ (uint64_t)i};
        for (int j = 0; j < 20; j++) {
            ft_schedule_free(f->s);
            f->s = wild_schedule(f->p, &g);
            assert_non_null(f->s);
            ft_eval_free(&f->ev2);
            if (ft_evaluate(f->p, f->s, m, &f->ev2, &st) != FT_OK)
                continue;
            wild++;
            check_above_bounds(f, f->s, m, cap, cm, "random");
        }
    }
    gen_mode.small = 0;
    say("bounds: %ld problems with a schedule; the capacity bound adds traffic on %ld, is above the SPEC bound on "
        "%ld; %ld valid random schedules (recomputation, every granularity) checked too\n", checked, traffic, above,
        wild);
}

/* FT_BOUND_COUNT problems (BOUND_COUNT by default, SLOW_BOUND_COUNT under
 * the slow runners). */
static void test_exhaustive_bounds_below_reference(void **state)
{
    bounds_below_reference(*state, SEED_BASE, env_long("FT_BOUND_COUNT", slow_run() ? SLOW_BOUND_COUNT : BOUND_COUNT));
}

/* The same with every target term drawn at random (random_timing; the
 * target-aware terms of tbound.c), with and without Layout ops:
 * FT_BOUND_COUNT problems each (TIMED_BOUND_COUNT by default,
 * SLOW_TIMED_BOUND_COUNT under the slow runners). */
static void test_exhaustive_timed_bounds_below_reference(void **state)
{
    bounds_timed = 1;
    bounds_below_reference(*state, SEED_BASE ^ 0x7100000ULL, env_long("FT_BOUND_COUNT", slow_run() ? SLOW_TIMED_BOUND_COUNT : TIMED_BOUND_COUNT));
    gen_mode.layout = 1;
    bounds_below_reference(*state, LAYOUT_SEED_BASE ^ 0x7100000ULL, env_long("FT_BOUND_COUNT", slow_run() ? SLOW_TIMED_BOUND_COUNT : TIMED_BOUND_COUNT));
    gen_mode.layout = 0;
    bounds_timed = 0;
}

/* The same with Layout ops (FT_BOUND_COUNT problems, LAYOUT_BOUND_COUNT by
 * default, SLOW_LAYOUT_BOUND_COUNT under the slow runners): a Layout op ends the capacity bound's streams
 * (SPEC 7), and both bounds count its compute as a Pointwise op's. */
static void test_exhaustive_layout_bounds_below_reference(void **state)
{
    gen_mode.layout = 1;
    bounds_below_reference(*state, LAYOUT_SEED_BASE, env_long("FT_BOUND_COUNT", slow_run() ? SLOW_LAYOUT_BOUND_COUNT : LAYOUT_BOUND_COUNT));
    gen_mode.layout = 0;
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_exhaustive_reference_ex1),
        T(test_exhaustive_reference_ex2),
        T(test_exhaustive_reference_ex3),
        T(test_exhaustive_reference_ex4),
        T(test_exhaustive_reference_ex5),
        T(test_exhaustive_reference_pruning_exact),
        T(test_exhaustive_reference_beats_random_schedules),
        T(test_exhaustive_search_never_worse),
        T(test_exhaustive_bounds_below_reference),
        T(test_exhaustive_layout_search_never_worse),
        T(test_exhaustive_layout_bounds_below_reference),
        T(test_exhaustive_timed_bounds_below_reference),
    };
    /* FT_TEST_FILTER: run only the tests whose names match (cmocka's
     * pattern, * and ? wildcards) */
    if (getenv("FT_TEST_FILTER"))
        cmocka_set_test_filter(getenv("FT_TEST_FILTER"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
