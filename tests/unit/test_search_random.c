/* test_search_random.c - cmocka tests of ft_search on random 200-op DAGs: time bound, validity, exact reported latencies, monotone improvements, determinism. */
#include "ft_testutil.h"

#include <time.h>

/* Environment:
 *   FT_RANDOM_DAGS  number of random DAGs (default 3)
 *   FT_RANDOM_SEED  base seed of the generator (default 20260101); DAG i
 *                   uses base + i, so a failure names the seed to rerun
 *   FT_SLOW=1       the code runs under valgrind or sanitizers: the wall
 *                   time may overrun the search's limit by more */

#define DAG_OPS 200
#define TIME_LIMIT 3.0        /* seconds given to each search */
#define MARGIN 1.5            /* allowed overrun of the limit, seconds */
#define SLOW_MARGIN 30.0      /* the same under FT_SLOW=1 */
#define EVAL_CHECKS 6         /* improvements re-evaluated per search */

/* ------------------------------------------------------------ generator */

/* splitmix64: small, fixed and the same everywhere. */
static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform integer in [0, n). */
static int rng_int(uint64_t *s, int n)
{
    return (int)(rng_next(s) % (uint64_t)n);
}

static const int64_t dims[] = { 64, 128, 256, 512, 128, 256, 100, 300 };
#define NDIMS ((int)(sizeof dims / sizeof dims[0]))

/* A growing text buffer; aborts the test on OOM. */
typedef struct strbuf {
    char *s;
    size_t n, cap;
} strbuf;

static void sb_printf(strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(strbuf *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int w = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        assert_true(w >= 0);
        if (b->s && b->n + (size_t)w < b->cap) {
            b->n += (size_t)w;
            return;
        }
        size_t ncap = b->cap ? 2 * b->cap : 4096;
        while (ncap < b->n + (size_t)w + 1)
            ncap *= 2;
        char *ns = realloc(b->s, ncap);
        assert_non_null(ns);
        b->s = ns;
        b->cap = ncap;
    }
}

/* The random DAG under construction. */
typedef struct dag {
    int ntensors;
    int64_t w[4 * DAG_OPS], h[4 * DAG_OPS];
    int produced[4 * DAG_OPS];   /* 1: output of an op */
    int nops;
    int type[DAG_OPS];           /* FT_OP_MATMUL or FT_OP_POINTWISE */
    int nin[DAG_OPS];
    int in[DAG_OPS][3];
    int out[DAG_OPS];
    int cost[DAG_OPS];
} dag;

static int new_tensor(dag *d, int64_t w, int64_t h)
{
    assert_true(d->ntensors < 4 * DAG_OPS);
    d->w[d->ntensors] = w;
    d->h[d->ntensors] = h;
    d->produced[d->ntensors] = 0;
    return d->ntensors++;
}

/* A tensor to consume: mostly a recent op output (chains), sometimes any
 * tensor (multiple consumers, long edges), sometimes a new graph input. */
static int pick_source(dag *d, uint64_t *s)
{
    int r = rng_int(s, 100);
    if (d->nops > 0 && r < 60) {
        int back = rng_int(s, d->nops < 6 ? d->nops : 6);
        return d->out[d->nops - 1 - back];
    }
    if (d->ntensors > 0 && r < 85)
        return rng_int(s, d->ntensors);
    return new_tensor(d, dims[rng_int(s, NDIMS)], dims[rng_int(s, NDIMS)]);
}

/* An existing tensor of shape w x h other than the `n` in `avoid`, found
 * by a few random probes; -1 if none was found. */
static int find_shape(dag *d, uint64_t *s, int64_t w, int64_t h, const int *avoid, int n)
{
    for (int tries = 0; tries < 24 && d->ntensors > 0; tries++) {
        int t = rng_int(s, d->ntensors);
        int used = 0;
        for (int j = 0; j < n; j++)
            used |= avoid[j] == t;
        if (!used && d->w[t] == w && d->h[t] == h)
            return t;
    }
    return -1;
}

/* Random valid DAG of `nops` MatMul and Pointwise ops with consistent
 * shapes, as contest JSON (caller frees). */
static char *random_problem(uint64_t seed, int nops, double capacity)
{
    static dag d;
    uint64_t s = seed;
    memset(&d, 0, sizeof d);
    for (int i = 0; i < nops; i++) {
        int a = pick_source(&d, &s);
        int o = d.nops;
        if (rng_int(&s, 100) < 50) {
            /* MatMul: L = a (H x K); R is K x W, a weight or an activation. */
            int64_t k = d.w[a], hh = d.h[a];
            int r = rng_int(&s, 100) < 25 ? find_shape(&d, &s, dims[rng_int(&s, NDIMS)], k, &a, 1) : -1;
            if (r < 0)
                r = new_tensor(&d, dims[rng_int(&s, NDIMS)], k);
            d.type[o] = FT_OP_MATMUL;
            d.nin[o] = 2;
            d.in[o][0] = a;
            d.in[o][1] = r;
            d.out[o] = new_tensor(&d, d.w[r], hh);
            d.cost[o] = 500 + 100 * rng_int(&s, 36);
        } else {
            /* Pointwise: 1 to 3 inputs of a's shape (residuals, biases). */
            int extra = rng_int(&s, 100);
            extra = extra < 50 ? 0 : extra < 85 ? 1 : 2;
            d.type[o] = FT_OP_POINTWISE;
            d.nin[o] = 1;
            d.in[o][0] = a;
            for (int e = 0; e < extra; e++) {
                int t = rng_int(&s, 100) < 70 ? find_shape(&d, &s, d.w[a], d.h[a], d.in[o], d.nin[o]) : -1;
                if (t < 0)
                    t = new_tensor(&d, d.w[a], d.h[a]);
                d.in[o][d.nin[o]++] = t;
            }
            d.out[o] = new_tensor(&d, d.w[a], d.h[a]);
            d.cost[o] = 50 + 50 * rng_int(&s, 16);
        }
        d.produced[d.out[o]] = 1;
        d.nops++;
    }
    static const int bandwidths[] = { 5, 10, 20, 40, 80 };
    strbuf b = { NULL, 0, 0 };
    sb_printf(&b, "{\"widths\": [");
    for (int t = 0; t < d.ntensors; t++)
        sb_printf(&b, "%s%lld", t ? ", " : "", (long long)d.w[t]);
    sb_printf(&b, "], \"heights\": [");
    for (int t = 0; t < d.ntensors; t++)
        sb_printf(&b, "%s%lld", t ? ", " : "", (long long)d.h[t]);
    sb_printf(&b, "], \"inputs\": [");
    for (int o = 0; o < d.nops; o++) {
        sb_printf(&b, "%s[", o ? ", " : "");
        for (int j = 0; j < d.nin[o]; j++)
            sb_printf(&b, "%s%d", j ? ", " : "", d.in[o][j]);
        sb_printf(&b, "]");
    }
    sb_printf(&b, "], \"outputs\": [");
    for (int o = 0; o < d.nops; o++)
        sb_printf(&b, "%s[%d]", o ? ", " : "", d.out[o]);
    sb_printf(&b, "], \"base_costs\": [");
    for (int o = 0; o < d.nops; o++)
        sb_printf(&b, "%s%d", o ? ", " : "", d.cost[o]);
    sb_printf(&b, "], \"op_types\": [");
    for (int o = 0; o < d.nops; o++)
        sb_printf(&b, "%s\"%s\"", o ? ", " : "", d.type[o] == FT_OP_MATMUL ? "MatMul" : "Pointwise");
    sb_printf(&b, "], \"fast_memory_capacity\": %.0f, \"slow_memory_bandwidth\": %d, \"native_granularity\": [128, 128]}",
              capacity, bandwidths[rng_int(&s, 5)]);
    return b.s;
}

/* ------------------------------------------------------------ helpers */

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static long env_long(const char *name, long dflt)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return dflt;
    char *end;
    long x = strtol(v, &end, 10);
    return *end ? dflt : x;
}

static int slow(void)
{
    const char *v = getenv("FT_SLOW");
    return v && strcmp(v, "1") == 0;
}

/* What the on_improve callback saw; checked after the search returns (a
 * cmocka failure inside the search would skip its cleanup). */
typedef struct watch {
    const ft_problem *p;
    ft_compute_model model;
    long calls;
    double first, last;
    long evaluated;
    int failed;
    char why[512];
} watch;

static void watch_fail(watch *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void watch_fail(watch *w, const char *fmt, ...)
{
    if (w->failed++)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->why, sizeof w->why, fmt, ap);
    va_end(ap);
}

static int rel_eq(double a, double b)
{
    double s = fabs(b) > 1 ? fabs(b) : 1;
    return fabs(a - b) <= 1e-9 * s;
}

/* on_improve: totals never increase, latencies add up to the total, and a
 * few of the schedules (the first, then the 2nd, 4th, 8th ...) are valid
 * with exactly the reported latencies. */
static void on_improve(void *ctx, const ft_schedule *s, const double *lat, double total)
{
    watch *w = ctx;
    w->calls++;
    if (w->calls == 1)
        w->first = total;
    else if (total > w->last)
        watch_fail(w, "improvement %ld has total %.17g, above the previous %.17g", w->calls, total, w->last);
    w->last = total;
    if (!s || !lat) {
        watch_fail(w, "improvement %ld: NULL schedule or latencies", w->calls);
        return;
    }
    double sum = 0;
    for (int i = 0; i < s->nsubgraphs; i++)
        sum += lat[i];
    if (!rel_eq(sum, total))
        watch_fail(w, "improvement %ld: latencies add up to %.17g, total %.17g", w->calls, sum, total);
    if ((w->calls & (w->calls - 1)) != 0 || w->evaluated >= EVAL_CHECKS)
        return;
    w->evaluated++;
    ft_eval e;
    ft_status st;
    int rc = ft_evaluate(w->p, s, w->model, &e, &st);
    if (rc != FT_OK) {
        watch_fail(w, "improvement %ld is not valid: %s", w->calls, st.msg);
        return;
    }
    if (!rel_eq(e.total, total))
        watch_fail(w, "improvement %ld: total %.17g, evaluated %.17g", w->calls, total, e.total);
    for (int i = 0; i < e.nsubgraphs; i++)
        if (!rel_eq(lat[i], e.sg[i].latency))
            watch_fail(w, "improvement %ld: subgraph %d latency %.17g, evaluated %.17g", w->calls, i, lat[i],
                       e.sg[i].latency);
    ft_eval_free(&e);
}

/* ------------------------------------------------------------ tests */

typedef struct dag_case {
    int index;
    uint64_t seed;
    double capacity;
    ft_compute_model model;
    const char *kind;
} dag_case;

/* Capacities: roomy, a native MatMul tile plus a little, and tight (only
 * tiles of 64 x 64 and below fit a three-input Pointwise). */
static const struct {
    double capacity;
    const char *kind;
} capacities[] = {
    { 600000, "roomy" },
    { 3 * 128 * 128 + 1000, "native-fit" },
    { 20000, "tight" },
};

static void test_search_random_dag(void **state)
{
    const dag_case *c = *state;
    char *json = random_problem(c->seed, DAG_OPS, c->capacity);
    ft_problem *p = NULL;
    ft_status st;
    int rc = ft_problem_parse(json, "random.problem.json", &p, &st);
    free(json);
    if (rc != FT_OK)
        fail_msg("seed %llu: generated problem rejected: %s", (unsigned long long)c->seed, st.msg);
    assert_int_equal(p->nops, DAG_OPS);

    watch w;
    memset(&w, 0, sizeof w);
    w.p = p;
    w.model = c->model;
    ft_search_opts o;
    ft_search_opts_init(&o);
    o.model = c->model;
    o.time_limit = TIME_LIMIT;
    o.seed = c->seed;
    o.on_improve = on_improve;
    o.ctx = &w;
    ft_schedule *s = NULL;
    ft_eval ev;
    double t0 = now_seconds();
    rc = ft_search(p, &o, &s, &ev, &st);
    double wall = now_seconds() - t0;
    print_message("    DAG %d (seed %llu, %s capacity %.0f, %s model): rc %d, %.2f s, %ld improvements, total %.10g, "
                  "lower bound %.10g\n",
                  c->index, (unsigned long long)c->seed, c->kind, c->capacity, ft_compute_model_name(c->model), rc, wall,
                  w.calls, rc == FT_OK ? ev.total : 0.0, ft_lower_bound(p, c->model, NULL, NULL));
    if (rc != FT_OK) {
        ft_problem_free(p);
        fail_msg("seed %llu: ft_search returned %d: %s", (unsigned long long)c->seed, rc, st.msg);
    }

    /* Everything checked is gathered first, so that the frees run. */
    char why[1024] = "";
    double margin = slow() ? SLOW_MARGIN : MARGIN;
    if (wall > TIME_LIMIT + margin)
        snprintf(why, sizeof why, "search took %.2f s, limit %.1f s + %.1f s", wall, TIME_LIMIT, margin);
    ft_eval e;
    int erc = ft_evaluate(p, s, c->model, &e, &st);
    if (!*why && erc != FT_OK)
        snprintf(why, sizeof why, "result is not valid: %s", st.msg);
    if (!*why && !rel_eq(e.total, ev.total))
        snprintf(why, sizeof why, "ev->total %.17g, evaluated %.17g", ev.total, e.total);
    if (!*why && ev.nsubgraphs != s->nsubgraphs)
        snprintf(why, sizeof why, "ev has %d subgraphs, schedule %d", ev.nsubgraphs, s->nsubgraphs);
    if (!*why && ev.model != c->model)
        snprintf(why, sizeof why, "ev->model is %s", ft_compute_model_name(ev.model));
    for (int i = 0; !*why && i < s->nsubgraphs; i++) {
        const ft_subgraph *g = &s->sg[i];
        if (!g->has_reported || !rel_eq(g->reported, e.sg[i].latency) || !rel_eq(ev.sg[i].latency, e.sg[i].latency))
            snprintf(why, sizeof why, "subgraph %d: reported %s%.17g, ev %.17g, evaluated %.17g", i,
                     g->has_reported ? "" : "(none) ", g->reported, ev.sg[i].latency, e.sg[i].latency);
    }
    /* A note, not a failure: before SPEC 5's reduction flags the bound
     * padded every op's output to native tiles while an upstream op whose
     * output is a MatMul operand pays its reduction dimension
     * proportionally (SPEC 4), so fused schedules of odd sizes went below
     * it; test_exhaustive checks the corrected bound. */
    if (erc == FT_OK && ev.total < ft_lower_bound(p, c->model, NULL, NULL) * (1 - 1e-9))
        print_message("    note: total %.10g is below the lower bound %.10g\n", ev.total,
                      ft_lower_bound(p, c->model, NULL, NULL));
    if (!*why && w.failed)
        snprintf(why, sizeof why, "on_improve: %s", w.why);
    if (!*why && w.calls == 0)
        snprintf(why, sizeof why, "on_improve was never called");
    if (!*why && w.calls > 0 && ev.total > w.last * (1 + 1e-9))
        snprintf(why, sizeof why, "final total %.17g above the last improvement %.17g", ev.total, w.last);
    if (erc == FT_OK)
        ft_eval_free(&e);
    ft_eval_free(&ev);
    ft_schedule_free(s);
    ft_problem_free(p);
    if (*why)
        fail_msg("DAG %d, seed %llu (%s, %s model): %s", c->index, (unsigned long long)c->seed, c->kind,
                 ft_compute_model_name(c->model), why);
}

/* Same seed twice on a small problem: identical schedules. */
static void test_search_random_deterministic(void **state)
{
    (void)state;
    uint64_t seed = (uint64_t)env_long("FT_RANDOM_SEED", 20260101) + 1000;
    char *json = random_problem(seed, 6, 600000);
    ft_problem *p = NULL;
    ft_status st;
    int rc = ft_problem_parse(json, "small.problem.json", &p, &st);
    free(json);
    if (rc != FT_OK)
        fail_msg("seed %llu: generated problem rejected: %s", (unsigned long long)seed, st.msg);
    char *text[2] = { NULL, NULL };
    for (int run = 0; run < 2; run++) {
        ft_search_opts o;
        ft_search_opts_init(&o);
        /* the search must end before its limit (every ordered partition
         * of 6 ops), or the two runs may differ: minutes are ample under
         * valgrind too */
        o.time_limit = slow() ? 300 : 2;
        o.seed = 11;
        ft_schedule *s = NULL;
        ft_eval ev;
        rc = ft_search(p, &o, &s, &ev, &st);
        if (rc != FT_OK) {
            free(text[0]);
            ft_problem_free(p);
            fail_msg("run %d: ft_search returned %d: %s", run, rc, st.msg);
        }
        text[run] = ft_schedule_to_json(s, NULL);
        ft_eval_free(&ev);
        ft_schedule_free(s);
    }
    ft_problem_free(p);
    int same = text[0] && text[1] && strcmp(text[0], text[1]) == 0;
    if (!same)
        print_error("run 1:\n%s\nrun 2:\n%s\n", text[0] ? text[0] : "(null)", text[1] ? text[1] : "(null)");
    free(text[0]);
    free(text[1]);
    assert_true(same);
}

/* Self-check of the generator: every DAG parses, has the requested ops,
 * both op types, a Pointwise with three inputs and a tensor with several
 * consumers. */
static void test_search_random_generator(void **state)
{
    (void)state;
    for (int i = 0; i < 5; i++) {
        char *json = random_problem(77 + (uint64_t)i, DAG_OPS, 20000);
        ft_problem *p = NULL;
        ft_status st;
        int rc = ft_problem_parse(json, "gen.problem.json", &p, &st);
        free(json);
        if (rc != FT_OK)
            fail_msg("generated problem rejected: %s", st.msg);
        int mm = 0, pw3 = 0, multi = 0;
        for (int o = 0; o < p->nops; o++) {
            mm += p->ops[o].type == FT_OP_MATMUL;
            pw3 += p->ops[o].type == FT_OP_POINTWISE && p->ops[o].ninputs == 3;
        }
        for (int t = 0; t < p->ntensors; t++)
            multi += p->tensors[t].nconsumers > 1;
        int nops = p->nops;
        ft_problem_free(p);
        assert_int_equal(nops, DAG_OPS);
        assert_true(mm > 0 && mm < DAG_OPS);
        assert_true(pw3 > 0);
        assert_true(multi > 0);
    }
}

int main(void)
{
    long n = env_long("FT_RANDOM_DAGS", 3);
    uint64_t base = (uint64_t)env_long("FT_RANDOM_SEED", 20260101);
    if (n < 0)
        n = 0;
    if (n > 1000)
        n = 1000;
    struct CMUnitTest *list = calloc((size_t)n + 2, sizeof *list);
    dag_case *cases = calloc((size_t)n + 1, sizeof *cases);
    char (*names)[64] = calloc((size_t)n + 1, sizeof *names);
    if (!list || !cases || !names)
        return 1;
    int k = 0;
    list[k++] = (struct CMUnitTest){ "test_search_random_generator", test_search_random_generator, NULL, NULL, NULL };
    for (int i = 0; i < n; i++) {
        int c = i % 3;
        cases[i] = (dag_case){ i, base + (uint64_t)i, capacities[c].capacity,
                               i % 2 ? FT_COMPUTE_OP : FT_COMPUTE_NATIVE, capacities[c].kind };
        snprintf(names[i], sizeof names[i], "test_search_random_dag/%d", i);
        list[k++] = (struct CMUnitTest){ names[i], test_search_random_dag, NULL, NULL, &cases[i] };
    }
    list[k++] = (struct CMUnitTest){ "test_search_random_deterministic", test_search_random_deterministic, NULL, NULL,
                                     NULL };
    /* The list's length is only known at run time: call the function behind
     * cmocka_run_group_tests_name, which takes it explicitly. */
    int rc = _cmocka_run_group_tests("test_search_random", list, (size_t)k, NULL, NULL);
    free(list);
    free(cases);
    free(names);
    return rc;
}
