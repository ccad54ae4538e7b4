/* test_limits.c - the named limits of fusetile/limits.h: each input just over a limit is refused at load with one message naming the file, the field, the value and the limit; inputs at a limit load; step counts are computed in closed form and refused before any walk. */
#include "ft_testutil.h"

#include <fcntl.h>
#include <unistd.h>

#include "fusetile/measured.h"
#include "../../sched/strategy/patterns.h"
#include "fusetile/target.h"

/* ------------------------------------------------------------ utilities */

/* A growing text buffer; fails the test when out of memory. */
typedef struct text {
    char *p;
    size_t len, cap;
} text;

static void add(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(text *t, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(t->p ? t->p + t->len : NULL, t->p ? t->cap - t->len : 0, fmt, ap);
        va_end(ap);
        assert_true(n >= 0);
        if (t->p && (size_t)n < t->cap - t->len) {
            t->len += (size_t)n;
            return;
        }
        size_t nc = (t->cap ? 2 * t->cap : 4096) + (size_t)n;
        char *np = realloc(t->p, nc);
        assert_non_null(np);
        t->p = np;
        t->cap = nc;
    }
}

/* "[x, x, ..., x]" of n copies of the integer x. */
static void add_list(text *t, long long n, long long x)
{
    add(t, "[");
    for (long long i = 0; i < n; i++)
        add(t, "%s%lld", i ? "," : "", x);
    add(t, "]");
}

/* A chain of nops Pointwise ops (op i: tensor i -> tensor i+1) with
 * ntensors tensors of w x h elements (ntensors >= nops + 1; the extra ones
 * are unused inputs), native granularity nw x nh. */
static char *chain_json(long long nops, long long ntensors, long long w, long long h, long long nw, long long nh)
{
    text t = {0};
    add(&t, "{\"widths\": ");
    add_list(&t, ntensors, w);
    add(&t, ", \"heights\": ");
    add_list(&t, ntensors, h);
    add(&t, ", \"inputs\": [");
    for (long long i = 0; i < nops; i++)
        add(&t, "%s[%lld]", i ? "," : "", i);
    add(&t, "], \"outputs\": [");
    for (long long i = 0; i < nops; i++)
        add(&t, "%s[%lld]", i ? "," : "", i + 1);
    add(&t, "], \"base_costs\": ");
    add_list(&t, nops, 1);
    add(&t, ", \"op_types\": [");
    for (long long i = 0; i < nops; i++)
        add(&t, "%s\"Pointwise\"", i ? "," : "");
    add(&t, "], \"fast_memory_capacity\": 1000000, \"slow_memory_bandwidth\": 10, \"native_granularity\": [%lld, %lld]}", nw, nh);
    return t.p;
}

/* Parse text as a problem named `name`; return the code, message in st. */
static int parse_problem(const char *json, const char *name, ft_status *st)
{
    ft_problem *p = NULL;
    int rc = ft_problem_parse(json, name, &p, st);
    ft_problem_free(p);
    return rc;
}

static int parse_schedule(const char *json, const char *name, ft_status *st)
{
    ft_schedule *s = NULL;
    int rc = ft_schedule_parse(json, name, &s, st);
    ft_schedule_free(s);
    return rc;
}

/* Assert code FT_EINPUT and a message equal to want. */
static void expect_msg(int rc, const ft_status *st, const char *want)
{
    assert_int_equal(rc, FT_EINPUT);
    if (strcmp(st->msg, want) != 0)
        fail_msg("message\n  got:  %s\n  want: %s", st->msg, want);
}

/* A sparse file of n bytes (zeros) at dir/name; its path in buf. */
static const char *sparse_file(const char *dir, const char *name, long long n, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s", dir, name);
    int fd = open(buf, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)n), 0);
    assert_int_equal(close(fd), 0);
    return buf;
}


/* ------------------------------------------------------------ problems */

static void test_ops_limit(void **state)
{
    (void)state;
    ft_status st;
    char *at = chain_json(FT_MAX_OPS, FT_MAX_OPS + 1, 8, 8, 8, 8);
    assert_int_equal(parse_problem(at, "at.json", &st), FT_OK);
    free(at);
    char *over = chain_json(FT_MAX_OPS + 1, FT_MAX_OPS + 2, 8, 8, 8, 8);
    char want[200];
    snprintf(want, sizeof want, "over.json: op_types: %d ops, the limit is %d (FT_MAX_OPS)", FT_MAX_OPS + 1, FT_MAX_OPS);
    expect_msg(parse_problem(over, "over.json", &st), &st, want);
    free(over);
}

static void test_tensors_limit(void **state)
{
    (void)state;
    ft_status st;
    char *at = chain_json(1, FT_MAX_TENSORS, 8, 8, 8, 8);
    assert_int_equal(parse_problem(at, "at.json", &st), FT_OK);
    free(at);
    char *over = chain_json(1, FT_MAX_TENSORS + 1, 8, 8, 8, 8);
    char want[200];
    snprintf(want, sizeof want, "over.json: widths: %d tensors, the limit is %d (FT_MAX_TENSORS)", FT_MAX_TENSORS + 1,
             FT_MAX_TENSORS);
    expect_msg(parse_problem(over, "over.json", &st), &st, want);
    free(over);
}

static void test_dim_limit(void **state)
{
    (void)state;
    ft_status st;
    const long long M = FT_MAX_DIM;
    char want[200];
    char *at = chain_json(1, 2, M, 1, 8, 8);
    assert_int_equal(parse_problem(at, "at.json", &st), FT_OK);
    free(at);
    char *w = chain_json(1, 2, M + 1, 1, 8, 8);
    snprintf(want, sizeof want, "w.json: widths[0]: %lld elements, the limit is %lld (FT_MAX_DIM)", M + 1, M);
    expect_msg(parse_problem(w, "w.json", &st), &st, want);
    free(w);
    char *h = chain_json(1, 2, 1, M + 1, 8, 8);
    snprintf(want, sizeof want, "h.json: heights[0]: %lld elements, the limit is %lld (FT_MAX_DIM)", M + 1, M);
    expect_msg(parse_problem(h, "h.json", &st), &st, want);
    free(h);
    char *n = chain_json(1, 2, 8, 8, 8, M + 1);
    snprintf(want, sizeof want, "n.json: native_granularity[1]: %lld, the limit is %lld (FT_MAX_DIM)", M + 1, M);
    expect_msg(parse_problem(n, "n.json", &st), &st, want);
    free(n);
}

/* A problem changed in code (as the bindings do) meets the same checks in
 * ft_problem_finish. */
static void test_finish_checks(void **state)
{
    (void)state;
    ft_status st;
    char *json = chain_json(2, 3, 8, 8, 8, 8);
    ft_problem *p = NULL;
    assert_int_equal(ft_problem_parse(json, "code", &p, &st), FT_OK);
    free(json);
    p->tensors[2].height = FT_MAX_DIM + 1;
    char want[200];
    snprintf(want, sizeof want, "code: heights[2]: %lld elements, the limit is %lld (FT_MAX_DIM)", (long long)FT_MAX_DIM + 1,
             (long long)FT_MAX_DIM);
    expect_msg(ft_problem_finish(p, &st), &st, want);
    ft_problem_free(p);
}

/* Files over their byte limit are refused at once, before reading (the
 * files are sparse: no disk is used, and reading them would take long). */
static void test_file_bytes(void **state)
{
    (void)state;
    char dir[512], path[700], want[900];
    ft_status st;
    assert_int_equal(ftt_tmpdir(dir, sizeof dir, "ft-limits"), 0);
    const struct {
        const char *name;
        long long limit;
        const char *limit_name;
    } cases[] = {
        {"p.json", FT_MAX_PROBLEM_BYTES, "FT_MAX_PROBLEM_BYTES"}, {"s.json", FT_MAX_SCHEDULE_BYTES, "FT_MAX_SCHEDULE_BYTES"},
        {"t.cfg", FT_MAX_TARGET_BYTES, "FT_MAX_TARGET_BYTES"},   {"l.patterns", FT_MAX_PATTERNS_BYTES, "FT_MAX_PATTERNS_BYTES"},
        {"m.tsv", FT_MAX_MEASURED_BYTES, "FT_MAX_MEASURED_BYTES"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sparse_file(dir, cases[i].name, cases[i].limit + 1, path, sizeof path);
        int rc;
        if (i == 0) {
            ft_problem *p;
            rc = ft_problem_load(path, &p, &st);
        } else if (i == 1) {
            ft_schedule *s;
            rc = ft_schedule_load(path, &s, &st);
        } else if (i == 2) {
            ft_target *t;
            rc = ft_target_load(path, &t, &st);
        } else if (i == 3) {
            ft_patlib lib = {0};
            rc = ft__patlib_load(&lib, path, &st);
            ft__patlib_free(&lib);
        } else {
            ft_measured *m;
            rc = ft_measured_load(path, dir, &m, &st);
        }
        snprintf(want, sizeof want, "%s: %lld bytes, the limit is %lld (%s)", path, cases[i].limit + 1, cases[i].limit,
                 cases[i].limit_name);
        expect_msg(rc, &st, want);
        unlink(path);
    }
    /* at the limit the size passes (the zeros then fail as not JSON) */
    sparse_file(dir, "p.json", FT_MAX_PROBLEM_BYTES, path, sizeof path);
    ft_problem *p;
    assert_int_equal(ft_problem_load(path, &p, &st), FT_EINPUT);
    assert_non_null(strstr(st.msg, "NUL byte"));
    unlink(path);
    assert_int_equal(ftt_rmtree(dir), 0);
}

/* ----------------------------------------------------------- schedules */

static void test_schedule_lists(void **state)
{
    (void)state;
    ft_status st;
    char want[300];
    text t = {0};
    /* subgraphs */
    add(&t, "{\"subgraphs\": [");
    for (int i = 0; i < FT_MAX_SUBGRAPHS + 1; i++)
        add(&t, "%s[0]", i ? "," : "");
    add(&t, "], \"granularities\": [], \"tensors_to_retain\": []}");
    snprintf(want, sizeof want, "s.json: subgraphs: %d entries (one per subgraph), the limit is %d (FT_MAX_SUBGRAPHS)",
             FT_MAX_SUBGRAPHS + 1, FT_MAX_SUBGRAPHS);
    expect_msg(parse_schedule(t.p, "s.json", &st), &st, want);
    /* the same count in a per-subgraph list */
    t.len = 0;
    add(&t, "{\"subgraphs\": [[0]], \"granularities\": [[1,1,1]], \"tensors_to_retain\": [[]], \"subgraph_latencies\": ");
    add_list(&t, FT_MAX_SUBGRAPHS + 1, 0);
    add(&t, "}");
    snprintf(want, sizeof want,
             "s.json: subgraph_latencies: %d entries (one per subgraph), the limit is %d (FT_MAX_SUBGRAPHS)", FT_MAX_SUBGRAPHS + 1,
             FT_MAX_SUBGRAPHS);
    expect_msg(parse_schedule(t.p, "s.json", &st), &st, want);
    /* ops of a subgraph: at the limit, then over */
    for (int over = 0; over <= 1; over++) {
        t.len = 0;
        add(&t, "{\"subgraphs\": [[0], ");
        add_list(&t, FT_MAX_SUBGRAPH_OPS + over, 0);
        add(&t, "], \"granularities\": [[1,1,1],[1,1,1]], \"tensors_to_retain\": [[],[]]}");
        if (!over) {
            assert_int_equal(parse_schedule(t.p, "s.json", &st), FT_OK);
            continue;
        }
        snprintf(want, sizeof want, "s.json: subgraphs[1]: %d ops, the limit is %d (FT_MAX_SUBGRAPH_OPS)", FT_MAX_SUBGRAPH_OPS + 1,
                 FT_MAX_SUBGRAPH_OPS);
        expect_msg(parse_schedule(t.p, "s.json", &st), &st, want);
    }
    /* tensors retained */
    t.len = 0;
    add(&t, "{\"subgraphs\": [[0]], \"granularities\": [[1,1,1]], \"tensors_to_retain\": [");
    add_list(&t, FT_MAX_RETAIN + 1, 0);
    add(&t, "]}");
    snprintf(want, sizeof want, "s.json: tensors_to_retain[0]: %d tensors, the limit is %d (FT_MAX_RETAIN)", FT_MAX_RETAIN + 1,
             FT_MAX_RETAIN);
    expect_msg(parse_schedule(t.p, "s.json", &st), &st, want);
    free(t.p);
}

static void test_traversal_limit(void **state)
{
    (void)state;
    /* 2^22 + 1 entries: 8 MiB of text and as many JSON values, minutes
     * under valgrind; the check itself is the same one line as the lists' */
    if (ftt_valgrind()) {
        printf("[  SKIPPED ] the traversal-order limit (4 million JSON values) under valgrind\n");
        return;
    }
    ft_status st;
    char want[300];
    text t = {0};
    add(&t, "{\"subgraphs\": [[0]], \"granularities\": [[1,1,1]], \"tensors_to_retain\": [[]], \"traversal_orders\": [");
    add_list(&t, FT_MAX_TRAVERSAL + 1, 0);
    add(&t, "]}");
    snprintf(want, sizeof want, "s.json: traversal_orders[0]: %lld tiles, the limit is %lld (FT_MAX_TRAVERSAL)",
             (long long)FT_MAX_TRAVERSAL + 1, (long long)FT_MAX_TRAVERSAL);
    expect_msg(parse_schedule(t.p, "s.json", &st), &st, want);
    free(t.p);
}

/* ---------------------------------------------------------------- steps */

/* One Pointwise op on w x h tensors, native 128 x 128, scheduled at
 * granularity [gw, gh, 1]: its evaluation's code and message. */
static int eval_steps(long long w, long long h, long long gw, long long gh, int64_t *steps, ft_status *st)
{
    char *pj = chain_json(1, 2, w, h, 128, 128);
    ft_problem *p = NULL;
    assert_int_equal(ft_problem_parse(pj, "p.json", &p, st), FT_OK);
    free(pj);
    char sj[200];
    snprintf(sj, sizeof sj, "{\"subgraphs\": [[0]], \"granularities\": [[%lld, %lld, 1]], \"tensors_to_retain\": [[]]}", gw, gh);
    ft_schedule *s = NULL;
    assert_int_equal(ft_schedule_parse(sj, "s.json", &s, st), FT_OK);
    assert_int_equal(ft_schedule_validate(p, s, st), FT_OK);
    int rc = ft_schedule_steps(p, s, steps, st);
    if (rc == FT_OK) {
        ft_schedule_free(s);
        ft_problem_free(p);
        return rc;
    }
    /* ft_evaluate refuses with the same message, before walking */
    char msg[sizeof st->msg];
    memcpy(msg, st->msg, sizeof msg);
    ft_eval e;
    assert_int_equal(ft_evaluate(p, s, FT_COMPUTE_NATIVE, &e, st), rc);
    assert_string_equal(st->msg, msg);
    ft_schedule_free(s);
    ft_problem_free(p);
    return rc;
}

static void test_steps_limit(void **state)
{
    (void)state;
    ft_status st;
    int64_t steps;
    char want[300];
    /* 10^9 steps: 10 000 x 100 000 tiles of 10 x 1 */
    int rc = eval_steps(100000, 100000, 10, 1, &steps, &st);
    assert_int_equal(steps, 1000000000);
    snprintf(want, sizeof want,
             "s.json: 1000000000 steps (the largest subgraph, 0: 10000 x 100000 tiles x 1 k-steps), the limit is %lld (FT_MAX_STEPS)",
             (long long)FT_MAX_STEPS);
    expect_msg(rc, &st, want);
    /* just over the limit, and at it (counted, not walked) */
    long long h = FT_MAX_STEPS / 1000;
    rc = eval_steps(1000, h + 1, 1, 1, &steps, &st);
    assert_int_equal(steps, FT_MAX_STEPS + 1000);
    assert_int_equal(rc, FT_EINPUT);
    assert_non_null(strstr(st.msg, "(FT_MAX_STEPS)"));
    assert_int_equal(eval_steps(1000, h, 1, 1, &steps, &st), FT_OK);
    assert_int_equal(steps, FT_MAX_STEPS);
    /* a count that overflows 64 bits: 2^24 x 2^24 tiles of a MatMul with
     * 2^24 k-steps */
    char pj[600];
    long long M = 1LL << 24;
    snprintf(pj, sizeof pj,
             "{\"widths\": [%lld, %lld, %lld], \"heights\": [%lld, %lld, %lld], \"inputs\": [[0, 1]], \"outputs\": [[2]], "
             "\"base_costs\": [1], \"op_types\": [\"MatMul\"], \"fast_memory_capacity\": 100, \"slow_memory_bandwidth\": 1, "
             "\"native_granularity\": [1, 1]}",
             M, M, M, M, M, M);
    ft_problem *p = NULL;
    assert_int_equal(ft_problem_parse(pj, "p.json", &p, &st), FT_OK);
    ft_schedule *s = NULL;
    assert_int_equal(
        ft_schedule_parse("{\"subgraphs\": [[0]], \"granularities\": [[1, 1, 1]], \"tensors_to_retain\": [[]]}", "s.json", &s, &st),
        FT_OK);
    ft_eval e;
    snprintf(want, sizeof want,
             "s.json: subgraph 0: %lld x %lld tiles x %lld k-steps: the step count overflows 64 bits, the limit is %lld (FT_MAX_STEPS)",
             M, M, M, (long long)FT_MAX_STEPS);
    expect_msg(ft_evaluate(p, s, FT_COMPUTE_NATIVE, &e, &st), &st, want);
    ft_schedule_free(s);
    ft_problem_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ops_limit),       cmocka_unit_test(test_tensors_limit),  cmocka_unit_test(test_dim_limit),
        cmocka_unit_test(test_finish_checks),   cmocka_unit_test(test_file_bytes),     cmocka_unit_test(test_schedule_lists),
        cmocka_unit_test(test_traversal_limit), cmocka_unit_test(test_steps_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
