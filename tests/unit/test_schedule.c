/* test_schedule.c - cmocka tests of the schedule model: JSON loading and writing, and one test per invalidity reason of SPEC section 2. */
#include "ft_testutil.h"

#include <unistd.h>

/* ------------------------------------------------------------ problems */

/* Example 3: op0 T0 -> T1, op1 T1 -> T2, op2 (T1, T2) -> T3, all Pointwise,
 * every tensor 128 x 128. */
static const char prob3[] =
    "{\"widths\": [128, 128, 128, 128], \"heights\": [128, 128, 128, 128],"
    " \"inputs\": [[0], [1], [1, 2]], \"outputs\": [[1], [2], [3]],"
    " \"base_costs\": [1500, 1500, 1500],"
    " \"op_types\": [\"Pointwise\", \"Pointwise\", \"Pointwise\"],"
    " \"fast_memory_capacity\": 50000, \"slow_memory_bandwidth\": 10,"
    " \"native_granularity\": [128, 128]}";

/* One MatMul T0 (256 wide, 128 high) x T1 (128 wide, 256 high) -> T2
 * (128 x 128), K = 256, with a non-square native granularity [128, 64]:
 * native w = native k = 128, native h = 64. */
static const char prob_mm[] =
    "{\"widths\": [256, 128, 128], \"heights\": [128, 256, 128],"
    " \"inputs\": [[0, 1]], \"outputs\": [[2]], \"base_costs\": [1000],"
    " \"op_types\": [\"MatMul\"], \"fast_memory_capacity\": 1000000,"
    " \"slow_memory_bandwidth\": 10, \"native_granularity\": [128, 64]}";

/* Example 4: one 128 x 128 x 128 MatMul (4 tiles at w = h = 64). */
static const char prob4[] =
    "{\"widths\": [128, 128, 128], \"heights\": [128, 128, 128],"
    " \"inputs\": [[0, 1]], \"outputs\": [[2]], \"base_costs\": [1500],"
    " \"op_types\": [\"MatMul\"], \"fast_memory_capacity\": 25000,"
    " \"slow_memory_bandwidth\": 10, \"native_granularity\": [128, 128]}";

/* Two unrelated Pointwise ops: op0 T0 -> T1, op1 T2 -> T3. */
static const char prob_split[] =
    "{\"widths\": [128, 128, 128, 128], \"heights\": [128, 128, 128, 128],"
    " \"inputs\": [[0], [2]], \"outputs\": [[1], [3]],"
    " \"base_costs\": [100, 100], \"op_types\": [\"Pointwise\", \"Pointwise\"],"
    " \"fast_memory_capacity\": 50000, \"slow_memory_bandwidth\": 10,"
    " \"native_granularity\": [128, 128]}";

/* The fused MLP of vector E plus op3 Pointwise T3 -> T6, so that a later
 * subgraph can load T3:
 *   op0 MatMul [T0, T1] -> T2, op1 Pointwise T2 -> T3,
 *   op2 MatMul [T3, T4] -> T5, op3 Pointwise T3 -> T6. */
static const char prob_e3[] =
    "{\"widths\": [128, 512, 512, 512, 128, 128, 512],"
    " \"heights\": [256, 128, 256, 256, 512, 256, 256],"
    " \"inputs\": [[0, 1], [2], [3, 4], [3]],"
    " \"outputs\": [[2], [3], [5], [6]],"
    " \"base_costs\": [1000, 200, 1000, 200],"
    " \"op_types\": [\"MatMul\", \"Pointwise\", \"MatMul\", \"Pointwise\"],"
    " \"fast_memory_capacity\": 60000, \"slow_memory_bandwidth\": 10,"
    " \"native_granularity\": [128, 128]}";

/* Example 5: op0 MatMul [T0, T1] -> T3, op1 MatMul [T3, T2] -> T4. */
static const char prob5[] =
    "{\"widths\": [128, 128, 128, 128, 128],"
    " \"heights\": [128, 128, 128, 128, 128],"
    " \"inputs\": [[0, 1], [3, 2]], \"outputs\": [[3], [4]],"
    " \"base_costs\": [2000, 2000], \"op_types\": [\"MatMul\", \"MatMul\"],"
    " \"fast_memory_capacity\": 45000, \"slow_memory_bandwidth\": 10,"
    " \"native_granularity\": [128, 128]}";

static int setup_prob3(void **state) { return ftt_fixture_new(state, prob3, NULL); }
static int setup_mm(void **state) { return ftt_fixture_new(state, prob_mm, NULL); }
static int setup_prob4(void **state) { return ftt_fixture_new(state, prob4, NULL); }
static int setup_split(void **state) { return ftt_fixture_new(state, prob_split, NULL); }
static int setup_e3(void **state) { return ftt_fixture_new(state, prob_e3, NULL); }
static int setup_prob5(void **state) { return ftt_fixture_new(state, prob5, NULL); }

/* A schedule with every field. */
#define SJ5(sg, gran, retain, orders, lat)                                   \
    "{\"subgraphs\": " sg ", \"granularities\": " gran                       \
    ", \"tensors_to_retain\": " retain ", \"traversal_orders\": " orders     \
    ", \"subgraph_latencies\": " lat "}"

#define G1 "[128, 128, 1]"

#define SNAME "inline.solution.json"

/* Parse sjson into f->s (replacing any previous schedule); fails the test if
 * it does not parse. */
static void parse_into(ftt_fixture *f, const char *sjson)
{
    ft_status st;
    ft_schedule_free(f->s);
    f->s = NULL;
    ft_status_clear(&st);
    if (ft_schedule_parse(sjson, SNAME, &f->s, &st) != FT_OK)
        fail_msg("schedule does not parse: %s (%s)", st.msg, sjson);
}

/* The schedule passes ft_schedule_validate. */
static void expect_valid(ftt_fixture *f, const char *sjson)
{
    ft_status st;
    int rc;
    parse_into(f, sjson);
    ft_status_clear(&st);
    rc = ft_schedule_validate(f->p, f->s, &st);
    if (rc != FT_OK)
        fail_msg("expected a valid schedule, got %d (%s): %s\n%s", rc,
                 ft_reason_name(st.reason), st.msg, sjson);
    assert_int_equal(st.reason, FT_R_NONE);
}

/* The schedule is rejected with `reason` by ft_schedule_validate and by
 * ft_evaluate (which leaves no allocations); the message is one line naming
 * the schedule and, when needle is not NULL, containing it. */
static void expect_invalid(ftt_fixture *f, const char *sjson, int reason,
                           const char *needle)
{
    ft_status st;
    ft_eval e;
    int rc;

    parse_into(f, sjson);
    ft_status_clear(&st);
    rc = ft_schedule_validate(f->p, f->s, &st);
    if (rc != FT_EINVALID || st.reason != reason)
        fail_msg("expected %s, got code %d reason %s: \"%s\"\n%s",
                 ft_reason_name(reason), rc, ft_reason_name(st.reason), st.msg,
                 sjson);
    assert_int_equal(st.code, FT_EINVALID);
    assert_true(st.msg[0] != '\0');
    assert_null(strchr(st.msg, '\n'));
    assert_msg_has(st.msg, SNAME);
    if (needle)
        assert_msg_has(st.msg, needle);

    memset(&e, 0, sizeof e);
    ft_status_clear(&st);
    rc = ft_evaluate(f->p, f->s, FT_COMPUTE_NATIVE, &e, &st);
    if (rc != FT_EINVALID || st.reason != reason)
        fail_msg("ft_evaluate: expected %s, got code %d reason %s: \"%s\"",
                 ft_reason_name(reason), rc, ft_reason_name(st.reason), st.msg);
    assert_null(e.sg);
    ft_eval_free(&e);
}

/* ------------------------------------------------------------ parsing */

static void test_schedule_parse_valid(void **state)
{
    ftt_fixture *f = *state;
    const ft_schedule *s;

    parse_into(f, SJ5("[[0], [1, 2]]", "[[128, 64, 1], [32, 16, 8]]",
                      "[[1], []]", "[null, [3, 2, 1, 0]]", "[1638.4, 3000]"));
    s = f->s;
    assert_non_null(s->name);
    assert_string_equal(s->name, SNAME);
    assert_int_equal(s->nsubgraphs, 2);
    assert_int_equal(s->sg[0].nops, 1);
    assert_int_equal(s->sg[0].ops[0], 0);
    assert_int_equal(s->sg[1].nops, 2);
    assert_int_equal(s->sg[1].ops[0], 1);
    assert_int_equal(s->sg[1].ops[1], 2);
    assert_int_equal(s->sg[0].w, 128);
    assert_int_equal(s->sg[0].h, 64);
    assert_int_equal(s->sg[0].k, 1);
    assert_int_equal(s->sg[1].w, 32);
    assert_int_equal(s->sg[1].h, 16);
    assert_int_equal(s->sg[1].k, 8);
    assert_int_equal(s->sg[0].nretain, 1);
    assert_int_equal(s->sg[0].retain[0], 1);
    assert_int_equal(s->sg[1].nretain, 0);
    assert_true(s->sg[0].has_reported);
    assert_cost(s->sg[0].reported, 1638.4);
    assert_true(s->sg[1].has_reported);
    assert_cost(s->sg[1].reported, 3000);
}

static void test_schedule_parse_traversal_null_vs_list(void **state)
{
    ftt_fixture *f = *state;

    parse_into(f, SJ5("[[0], [1, 2]]", "[[128, 64, 1], [32, 16, 8]]",
                      "[[1], []]", "[null, [3, 2, 1, 0]]", "[0, 0]"));
    /* null: raster order */
    assert_int_equal(f->s->sg[0].norder, 0);
    /* a list: kept as given */
    assert_int_equal(f->s->sg[1].norder, 4);
    assert_non_null(f->s->sg[1].order);
    assert_int_equal(f->s->sg[1].order[0], 3);
    assert_int_equal(f->s->sg[1].order[1], 2);
    assert_int_equal(f->s->sg[1].order[2], 1);
    assert_int_equal(f->s->sg[1].order[3], 0);
}

static void test_schedule_parse_optional_fields_missing(void **state)
{
    ftt_fixture *f = *state;

    parse_into(f, SJ("[[0], [1, 2]]", "[" G1 ", " G1 "]", "[[1], []]"));
    assert_int_equal(f->s->nsubgraphs, 2);
    assert_int_equal(f->s->sg[0].norder, 0);
    assert_int_equal(f->s->sg[1].norder, 0);
    assert_false(f->s->sg[0].has_reported);
    assert_false(f->s->sg[1].has_reported);
    /* and such a schedule is valid: raster order, nothing reported */
    expect_valid(f, SJ("[[0], [1, 2]]", "[" G1 ", " G1 "]", "[[1], []]"));
}

/* Parse must fail with FT_EINPUT, no schedule, and the needle in the
 * message. */
static void expect_parse_error(const char *json, const char *needle)
{
    ft_schedule *s = NULL;
    ft_status st;
    int rc;

    ft_status_clear(&st);
    rc = ft_schedule_parse(json, SNAME, &s, &st);
    if (rc != FT_EINPUT) {
        ft_schedule_free(s);
        fail_msg("expected FT_EINPUT, got %d for %s", rc, json);
    }
    assert_null(s);
    assert_int_equal(st.code, FT_EINPUT);
    assert_null(strchr(st.msg, '\n'));
    assert_msg_has(st.msg, SNAME);
    if (needle)
        assert_msg_has(st.msg, needle);
}

static void test_schedule_parse_reject_not_json(void **state)
{
    (void)state;
    expect_parse_error("subgraphs: [[0]]", NULL);
    expect_parse_error("{\"subgraphs\": [[0]], \"granularities\": [[128, 1",
                       NULL);
    expect_parse_error("", NULL);
    expect_parse_error("[[0]]", NULL);
}

static void test_schedule_parse_reject_wrong_types(void **state)
{
    (void)state;
    expect_parse_error(SJ("\"all\"", "[" G1 "]", "[[]]"), "subgraphs");
    expect_parse_error(SJ("[0]", "[" G1 "]", "[[]]"), "subgraphs");
    expect_parse_error(SJ("[[0, \"1\"]]", "[" G1 "]", "[[]]"), "subgraphs");
    expect_parse_error(SJ("[[0]]", "[[128, 128]]", "[[]]"), "granularities");
    expect_parse_error(SJ("[[0]]", "[[128, \"128\", 1]]", "[[]]"),
                       "granularities");
    expect_parse_error(SJ("[[0]]", "[[128, 128, 1.5]]", "[[]]"),
                       "granularities");
    expect_parse_error(SJ("[[0]]", "{\"w\": 128}", "[[]]"), "granularities");
    expect_parse_error(SJ("[[0]]", "[" G1 "]", "[[\"1\"]]"),
                       "tensors_to_retain");
    expect_parse_error(SJ("[[0]]", "[" G1 "]", "[1]"), "tensors_to_retain");
    expect_parse_error(SJ5("[[0]]", "[" G1 "]", "[[]]", "[\"snake\"]", "[0]"),
                       "traversal_orders");
    expect_parse_error(SJ5("[[0]]", "[" G1 "]", "[[]]", "[[0, \"1\"]]", "[0]"),
                       "traversal_orders");
    expect_parse_error(SJ5("[[0]]", "[" G1 "]", "[[]]", "[null]", "[\"fast\"]"),
                       "subgraph_latencies");
    expect_parse_error(SJ5("[[0]]", "[" G1 "]", "[[]]", "[null]", "7"),
                       "subgraph_latencies");
}

static void test_schedule_parse_reject_missing_required(void **state)
{
    (void)state;
    expect_parse_error("{\"granularities\": [[128, 128, 1]], "
                       "\"tensors_to_retain\": [[]]}",
                       "subgraphs");
    expect_parse_error("{\"subgraphs\": [[0]], \"tensors_to_retain\": [[]]}",
                       "granularities");
    expect_parse_error("{\"subgraphs\": [[0]], "
                       "\"granularities\": [[128, 128, 1]]}",
                       "tensors_to_retain");
}

/* ------------------------------------------------------------ writing */

/* Field-by-field equality of two schedules (names aside). */
static void assert_schedules_equal(const ft_schedule *a, const ft_schedule *b)
{
    int i, j;
    assert_int_equal(a->nsubgraphs, b->nsubgraphs);
    for (i = 0; i < a->nsubgraphs; i++) {
        const ft_subgraph *x = &a->sg[i], *y = &b->sg[i];
        assert_int_equal(x->nops, y->nops);
        for (j = 0; j < x->nops; j++)
            assert_int_equal(x->ops[j], y->ops[j]);
        assert_int_equal(x->w, y->w);
        assert_int_equal(x->h, y->h);
        assert_int_equal(x->k, y->k);
        assert_int_equal(x->nretain, y->nretain);
        for (j = 0; j < x->nretain; j++)
            assert_int_equal(x->retain[j], y->retain[j]);
        assert_int_equal(x->norder, y->norder);
        for (j = 0; j < (int)x->norder; j++)
            assert_int_equal(x->order[j], y->order[j]);
        assert_int_equal(!!x->has_reported, !!y->has_reported);
        if (x->has_reported)
            assert_true(x->reported == y->reported); /* exact round trip */
    }
}

static const char round_trip_json[] =
    SJ5("[[0], [1, 2], [0, 2]]",
        "[[128, 64, 1], [32, 16, 8], [1, 1, 1]]",
        "[[1], [2, 3], []]",
        "[null, [3, 2, 1, 0], null]",
        "[1638.4, 0.1, 123456789.125]");

static void test_schedule_to_json_round_trip(void **state)
{
    ftt_fixture *f = *state;
    ft_schedule *back = NULL;
    ft_status st;
    char *text;
    int rc;

    parse_into(f, round_trip_json);
    text = ft_schedule_to_json(f->s, NULL);
    assert_non_null(text);
    ft_status_clear(&st);
    rc = ft_schedule_parse(text, "round-trip", &back, &st);
    free(text);
    if (rc != FT_OK)
        fail_msg("to_json output does not parse: %s", st.msg);
    assert_schedules_equal(f->s, back);
    ft_schedule_free(back);
}

static void test_schedule_to_json_without_reported(void **state)
{
    ftt_fixture *f = *state;
    ft_schedule *back = NULL;
    ft_status st;
    char *text;
    int rc;

    /* no subgraph_latencies: the round trip must keep "nothing reported" */
    parse_into(f, SJ("[[0], [1, 2]]", "[" G1 ", " G1 "]", "[[1], []]"));
    text = ft_schedule_to_json(f->s, NULL);
    assert_non_null(text);
    ft_status_clear(&st);
    rc = ft_schedule_parse(text, "round-trip", &back, &st);
    free(text);
    if (rc != FT_OK)
        fail_msg("to_json output does not parse: %s", st.msg);
    assert_schedules_equal(f->s, back);
    ft_schedule_free(back);
}

static void test_schedule_to_json_latencies_override(void **state)
{
    ftt_fixture *f = *state;
    const double lat[3] = {1.5, 2.25, 4096.0625};
    ft_schedule *back = NULL;
    ft_status st;
    char *text;
    int rc, i;

    parse_into(f, round_trip_json);
    text = ft_schedule_to_json(f->s, lat);
    assert_non_null(text);
    ft_status_clear(&st);
    rc = ft_schedule_parse(text, "override", &back, &st);
    free(text);
    if (rc != FT_OK)
        fail_msg("to_json output does not parse: %s", st.msg);
    assert_int_equal(back->nsubgraphs, 3);
    for (i = 0; i < 3; i++) {
        assert_true(back->sg[i].has_reported);
        assert_true(back->sg[i].reported == lat[i]);
    }
    ft_schedule_free(back);
}

/* Fixture for the file tests: a private temporary directory. */
typedef struct tmpdir_fixture {
    ftt_fixture base; /* first, so ftt_fixture helpers work on it */
    char dir[256];
    char path[512];
} tmpdir_fixture;

static int setup_tmpdir(void **state)
{
    tmpdir_fixture *t = calloc(1, sizeof *t);
    const char *tmp = getenv("TMPDIR");
    ft_status st;

    if (!t)
        return -1;
    *state = t;
    snprintf(t->dir, sizeof t->dir, "%s/ft-test-schedule-XXXXXX",
             tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(t->dir))
        return -1;
    snprintf(t->path, sizeof t->path, "%s/out.solution.json", t->dir);
    ft_status_clear(&st);
    return ft_problem_parse(prob3, "prob3", &t->base.p, &st) == FT_OK ? 0 : -1;
}

static int teardown_tmpdir(void **state)
{
    tmpdir_fixture *t = *state;
    if (t) {
        unlink(t->path);
        rmdir(t->dir);
        ft_schedule_free(t->base.s);
        ft_problem_free(t->base.p);
        free(t);
    }
    *state = NULL;
    return 0;
}

static void test_schedule_write_then_load(void **state)
{
    tmpdir_fixture *t = *state;
    ft_schedule *back = NULL;
    ft_status st;
    int rc;

    parse_into(&t->base, round_trip_json);
    ft_status_clear(&st);
    rc = ft_schedule_write(t->base.s, NULL, t->path, &st);
    if (rc != FT_OK)
        fail_msg("ft_schedule_write: %s", st.msg);
    ft_status_clear(&st);
    rc = ft_schedule_load(t->path, &back, &st);
    if (rc != FT_OK)
        fail_msg("ft_schedule_load: %s", st.msg);
    assert_string_equal(back->name, t->path);
    assert_schedules_equal(t->base.s, back);
    ft_schedule_free(back);
    /* only the file itself is left: the temporary was renamed into place */
    assert_int_equal(unlink(t->path), 0);
    assert_int_equal(rmdir(t->dir), 0);
    assert_int_equal(mkdir(t->dir, 0700), 0); /* for the teardown */
}

static void test_schedule_write_bad_path(void **state)
{
    tmpdir_fixture *t = *state;
    char path[600];
    ft_status st;

    parse_into(&t->base, round_trip_json);
    snprintf(path, sizeof path, "%s/no-such-dir/out.json", t->dir);
    ft_status_clear(&st);
    assert_int_equal(ft_schedule_write(t->base.s, NULL, path, &st), FT_EINPUT);
    assert_true(st.msg[0] != '\0');
}

static void test_schedule_load_missing_file(void **state)
{
    ft_schedule *s = NULL;
    ft_status st;
    (void)state;
    ft_status_clear(&st);
    assert_int_equal(ft_schedule_load("no/such/file.solution.json", &s, &st),
                     FT_EINPUT);
    assert_null(s);
    assert_msg_has(st.msg, "no/such/file.solution.json");
}

static void test_schedule_new_and_setters(void **state)
{
    ftt_fixture *f = *state;
    static const int ops0[] = {0}, ops1[] = {1, 2}, keep[] = {1};
    ft_status st;
    int i;

    /* example 3C built by hand: [[0], [1, 2]], T1 retained */
    f->s = ft_schedule_new(2);
    assert_non_null(f->s);
    assert_int_equal(f->s->nsubgraphs, 2);
    assert_int_equal(ft_subgraph_set_ops(&f->s->sg[0], ops0, 1), FT_OK);
    assert_int_equal(ft_subgraph_set_ops(&f->s->sg[1], ops1, 2), FT_OK);
    assert_int_equal(ft_subgraph_set_retain(&f->s->sg[0], keep, 1), FT_OK);
    for (i = 0; i < 2; i++) {
        f->s->sg[i].w = 128;
        f->s->sg[i].h = 128;
        f->s->sg[i].k = 1;
    }
    ft_status_clear(&st);
    assert_int_equal(ft_schedule_validate(f->p, f->s, &st), FT_OK);
    /* setters copy: the caller's arrays are not kept */
    assert_ptr_not_equal(f->s->sg[1].ops, ops1);
    assert_int_equal(f->s->sg[1].ops[1], 2);
    /* replacing a list frees the old one (checked under valgrind) */
    assert_int_equal(ft_subgraph_set_retain(&f->s->sg[0], NULL, 0), FT_OK);
    assert_int_equal(f->s->sg[0].nretain, 0);
    ft_schedule_free(NULL);
}

/* ------------------------------------------------------------ reasons */

static void test_schedule_reason_names(void **state)
{
    int r, q;
    (void)state;
    assert_string_equal(ft_reason_name(FT_R_NONE), "none");
    assert_string_equal(ft_reason_name(FT_R_OOM), "oom");
    assert_string_equal(ft_reason_name(FT_R_GRANULARITY_ABOVE_NATIVE),
                        "granularity-above-native");
    assert_string_equal(ft_reason_name(FT_R_RETAIN_NOT_PRODUCED),
                        "retain-not-produced");
    assert_string_equal(ft_reason_name(FT_R_OP_BEFORE_PRODUCER),
                        "op-before-producer");
    assert_string_equal(ft_reason_name(FT_R_OP_NOT_COVERED), "op-not-covered");
    assert_string_equal(ft_reason_name(FT_R_FUSED_OPERAND_ESCAPES),
                        "fused-operand-escapes");
    assert_string_equal(ft_reason_name(FT_R_RETAIN_ON_UNITS), "retain-on-units");
    assert_string_equal(ft_reason_name(-1), "unknown");
    assert_string_equal(ft_reason_name(FT_R_COUNT), "unknown");
    /* every reason has its own lower-case name */
    for (r = FT_R_NONE; r < FT_R_COUNT; r++) {
        const char *n = ft_reason_name(r);
        const char *c;
        assert_non_null(n);
        assert_true(n[0] != '\0');
        assert_string_not_equal(n, "unknown");
        for (c = n; *c; c++)
            assert_true((*c >= 'a' && *c <= 'z') || *c == '-');
        for (q = FT_R_NONE; q < r; q++)
            assert_string_not_equal(n, ft_reason_name(q));
    }
}

/* ------------------------------------------------------------ validation */

static void test_schedule_validate_accepts_valid(void **state)
{
    ftt_fixture *f = *state;
    /* examples 3A, 3B (recomputation of op 0), 3C and vector C */
    expect_valid(f, SJ("[[0], [1], [2]]", "[" G1 ", " G1 ", " G1 "]",
                       "[[], [], []]"));
    expect_valid(f, SJ("[[0, 1], [0, 2]]", "[" G1 ", " G1 "]", "[[2], []]"));
    expect_valid(f, SJ("[[0], [1, 2]]", "[" G1 ", " G1 "]", "[[1], []]"));
    expect_valid(f, SJ("[[0], [1], [2]]", "[" G1 ", " G1 ", " G1 "]",
                       "[[1], [], []]"));
    /* k is irrelevant to Pointwise ops but any value in [1, native w] is
     * fine, and smaller tiles too */
    expect_valid(f, SJ("[[0, 1, 2]]", "[[1, 1, 128]]", "[[]]"));
}

static void test_schedule_validate_length_mismatch(void **state)
{
    ftt_fixture *f = *state;
    expect_invalid(f, SJ("[[0], [1], [2]]", "[" G1 ", " G1 "]", "[[], [], []]"),
                   FT_R_LENGTH_MISMATCH, "granularities");
    expect_invalid(f, SJ("[[0], [1], [2]]", "[" G1 ", " G1 ", " G1 "]",
                         "[[], [], [], []]"),
                   FT_R_LENGTH_MISMATCH, "tensors_to_retain");
    expect_invalid(f, SJ5("[[0], [1], [2]]", "[" G1 ", " G1 ", " G1 "]",
                          "[[], [], []]", "[null, null]", "[0, 0, 0]"),
                   FT_R_LENGTH_MISMATCH, "traversal_orders");
    expect_invalid(f, SJ5("[[0], [1], [2]]", "[" G1 ", " G1 ", " G1 "]",
                          "[[], [], []]", "[null, null, null]", "[0]"),
                   FT_R_LENGTH_MISMATCH, "subgraph_latencies");
}

static void test_schedule_validate_empty_subgraph(void **state)
{
    ftt_fixture *f = *state;
    expect_invalid(f, SJ("[[0, 1, 2], []]", "[" G1 ", " G1 "]", "[[], []]"),
                   FT_R_EMPTY_SUBGRAPH, "1");
}

static void test_schedule_validate_repeated_op(void **state)
{
    ftt_fixture *f = *state;
    expect_invalid(f, SJ("[[0, 0, 1, 2]]", "[" G1 "]", "[[]]"),
                   FT_R_REPEATED_OP, "0");
    expect_invalid(f, SJ("[[0], [1, 2, 2]]", "[" G1 ", " G1 "]", "[[], []]"),
                   FT_R_REPEATED_OP, "2");
}

static void test_schedule_validate_op_out_of_range(void **state)
{
    ftt_fixture *f = *state;
    expect_invalid(f, SJ("[[0, 1, 2, 3]]", "[" G1 "]", "[[]]"),
                   FT_R_OP_OUT_OF_RANGE, "3");
    expect_invalid(f, SJ("[[0, 1, 2], [-1]]", "[" G1 ", " G1 "]", "[[], []]"),
                   FT_R_OP_OUT_OF_RANGE, "-1");
}

static void test_schedule_validate_op_not_covered(void **state)
{
    ftt_fixture *f = *state;
    /* X-missing-op: op 2 in no subgraph */
    expect_invalid(f, SJ("[[0], [1]]", "[" G1 ", " G1 "]", "[[], []]"),
                   FT_R_OP_NOT_COVERED, "2");
    assert_string_equal(ft_reason_name(FT_R_OP_NOT_COVERED), "op-not-covered");
}

static void test_schedule_validate_op_before_producer(void **state)
{
    ftt_fixture *f = *state;
    /* X-order: op 1 listed before op 0, which produces its input T1 */
    expect_invalid(f, SJ("[[1, 0], [2]]", "[" G1 ", " G1 "]", "[[], []]"),
                   FT_R_OP_BEFORE_PRODUCER, NULL);
    /* op 2 reads T2, produced by op 1 listed after it */
    expect_invalid(f, SJ("[[0, 2, 1]]", "[" G1 "]", "[[]]"),
                   FT_R_OP_BEFORE_PRODUCER, NULL);
}

static void test_schedule_validate_not_connected(void **state)
{
    ftt_fixture *f = *state;
    expect_invalid(f, SJ("[[0, 1]]", "[" G1 "]", "[[]]"), FT_R_NOT_CONNECTED,
                   NULL);
    expect_valid(f, SJ("[[0], [1]]", "[" G1 ", " G1 "]", "[[], []]"));
}

static void test_schedule_validate_granularity_below_one(void **state)
{
    ftt_fixture *f = *state;
    expect_invalid(f, SJ("[[0, 1, 2]]", "[[0, 128, 1]]", "[[]]"),
                   FT_R_GRANULARITY_BELOW_ONE, NULL);
    expect_invalid(f, SJ("[[0, 1, 2]]", "[[128, 0, 1]]", "[[]]"),
                   FT_R_GRANULARITY_BELOW_ONE, NULL);
    expect_invalid(f, SJ("[[0, 1, 2]]", "[[128, 128, 0]]", "[[]]"),
                   FT_R_GRANULARITY_BELOW_ONE, NULL);
    expect_invalid(f, SJ("[[0], [1, 2]]", "[" G1 ", [-64, 128, 1]]",
                         "[[], []]"),
                   FT_R_GRANULARITY_BELOW_ONE, NULL);
}

static void test_schedule_validate_granularity_above_native(void **state)
{
    ftt_fixture *f = *state;
    /* native [128, 64]: w <= 128, h <= 64, k <= native w = 128 */
    expect_invalid(f, SJ("[[0]]", "[[129, 64, 128]]", "[[]]"),
                   FT_R_GRANULARITY_ABOVE_NATIVE, NULL);
    expect_invalid(f, SJ("[[0]]", "[[128, 65, 128]]", "[[]]"),
                   FT_R_GRANULARITY_ABOVE_NATIVE, NULL);
    expect_invalid(f, SJ("[[0]]", "[[128, 64, 129]]", "[[]]"),
                   FT_R_GRANULARITY_ABOVE_NATIVE, NULL);
    /* X-k-over-native: k = 256 > 128 */
    expect_invalid(f, SJ("[[0]]", "[[128, 64, 256]]", "[[]]"),
                   FT_R_GRANULARITY_ABOVE_NATIVE, NULL);
    /* k is bounded by native w, not native h: k = 128 > nh = 64 is fine */
    expect_valid(f, SJ("[[0]]", "[[128, 64, 128]]", "[[]]"));
    expect_valid(f, SJ("[[0]]", "[[100, 10, 100]]", "[[]]"));
    assert_string_equal(ft_reason_name(FT_R_GRANULARITY_ABOVE_NATIVE),
                        "granularity-above-native");
}

static void test_schedule_validate_retain_not_produced(void **state)
{
    ftt_fixture *f = *state;
    /* X-retain-foreign: T0 is a graph input */
    expect_invalid(f, SJ("[[0], [1], [2]]", "[" G1 ", " G1 ", " G1 "]",
                         "[[0], [], []]"),
                   FT_R_RETAIN_NOT_PRODUCED, NULL);
    /* T2 is produced, but by subgraph 1, not 0 */
    expect_invalid(f, SJ("[[0], [1], [2]]", "[" G1 ", " G1 ", " G1 "]",
                         "[[2], [], []]"),
                   FT_R_RETAIN_NOT_PRODUCED, NULL);
    /* a tensor index out of range is produced by no subgraph */
    expect_invalid(f, SJ("[[0], [1], [2]]", "[" G1 ", " G1 ", " G1 "]",
                         "[[], [7], []]"),
                   FT_R_RETAIN_NOT_PRODUCED, NULL);
}

static void test_schedule_validate_bad_traversal(void **state)
{
    ftt_fixture *f = *state;
    /* w = h = 64 on 128 x 128: 2 x 2 = 4 tiles */
#define G4 "[[64, 64, 128]]"
    expect_invalid(f, SJ5("[[0]]", G4, "[[]]", "[[0, 1, 2]]", "[0]"),
                   FT_R_BAD_TRAVERSAL, NULL);
    expect_invalid(f, SJ5("[[0]]", G4, "[[]]", "[[0, 1, 2, 3, 0]]", "[0]"),
                   FT_R_BAD_TRAVERSAL, NULL);
    expect_invalid(f, SJ5("[[0]]", G4, "[[]]", "[[]]", "[0]"),
                   FT_R_BAD_TRAVERSAL, NULL);
    expect_invalid(f, SJ5("[[0]]", G4, "[[]]", "[[0, 1, 1, 2]]", "[0]"),
                   FT_R_BAD_TRAVERSAL, NULL);
    expect_invalid(f, SJ5("[[0]]", G4, "[[]]", "[[0, 1, 2, 4]]", "[0]"),
                   FT_R_BAD_TRAVERSAL, NULL);
    expect_invalid(f, SJ5("[[0]]", G4, "[[]]", "[[0, -1, 2, 3]]", "[0]"),
                   FT_R_BAD_TRAVERSAL, NULL);
    /* permutations are fine, null is raster */
    expect_valid(f, SJ5("[[0]]", G4, "[[]]", "[[3, 2, 1, 0]]", "[0]"));
    expect_valid(f, SJ5("[[0]]", G4, "[[]]", "[[0, 1, 3, 2]]", "[0]"));
    expect_valid(f, SJ5("[[0]]", G4, "[[]]", "[null]", "[0]"));
    /* one tile: [0] is the only permutation */
    expect_valid(f, SJ5("[[0]]", "[[128, 128, 128]]", "[[]]", "[[0]]", "[0]"));
    expect_invalid(f, SJ5("[[0]]", "[[128, 128, 128]]", "[[]]", "[[1]]", "[0]"),
                   FT_R_BAD_TRAVERSAL, NULL);
#undef G4
}

static void test_schedule_validate_tensor_unavailable(void **state)
{
    ftt_fixture *f = *state;
    /* subgraph 0 = [op1] needs T1, produced only by the later subgraph 1 */
    expect_invalid(f, SJ("[[1], [0], [2]]", "[" G1 ", " G1 ", " G1 "]",
                         "[[], [], []]"),
                   FT_R_TENSOR_UNAVAILABLE, NULL);
    /* subgraph 1 = [op2] has T1 (written by subgraph 0) but T2 comes only
     * from subgraph 2 */
    expect_invalid(f, SJ("[[0], [2], [1]]", "[" G1 ", " G1 ", " G1 "]",
                         "[[], [], []]"),
                   FT_R_TENSOR_UNAVAILABLE, NULL);
}

static void test_schedule_validate_fused_operand_retained(void **state)
{
    ftt_fixture *f = *state;
    /* X-escape: T3 (output of upstream op1) feeds MatMul op2 and is
     * retained */
    expect_invalid(f, SJ("[[0, 1, 2, 3]]", "[[128, 128, 64]]", "[[3]]"),
                   FT_R_FUSED_OPERAND_ESCAPES, NULL);
    /* T2 (output of upstream op0) retained */
    expect_invalid(f, SJ("[[0, 1, 2, 3]]", "[[128, 128, 64]]", "[[2]]"),
                   FT_R_FUSED_OPERAND_ESCAPES, NULL);
    assert_string_equal(ft_reason_name(FT_R_FUSED_OPERAND_ESCAPES),
                        "fused-operand-escapes");
}

static void test_schedule_validate_fused_operand_written(void **state)
{
    ftt_fixture *f = *state;
    /* T3 feeds MatMul op2 inside subgraph 0 and is loaded by subgraph 1
     * (op3), so subgraph 0 would have to write it.  (A graph output cannot
     * feed a MatMul: it has no consumer; being loaded later is the only way
     * an upstream output gets written.) */
    expect_invalid(f, SJ("[[0, 1, 2], [3]]", "[[128, 128, 64], " G1 "]",
                         "[[], []]"),
                   FT_R_FUSED_OPERAND_ESCAPES, NULL);
    /* valid: op3 fused in too, or the later subgraph recomputes T3 */
    expect_valid(f, SJ("[[0, 1, 2, 3]]", "[[128, 128, 64]]", "[[]]"));
    expect_valid(f, SJ("[[0, 1, 2], [0, 1, 3]]",
                       "[[128, 128, 64], [128, 128, 128]]", "[[], []]"));
    /* valid: T3 not fused into a MatMul in subgraph 0 (op2 runs later) */
    expect_valid(f, SJ("[[0, 1], [2], [3]]", "[[128, 128, 128], [128, 128, 64],"
                       " " G1 "]", "[[], [], []]"));
}

static void test_schedule_validate_ignores_working_set(void **state)
{
    ftt_fixture *f = *state;
    ft_eval e;
    ft_status st;

    /* X-ex5A-oom fits no step (65536 > 45000), but that is ft_evaluate's
     * check, not ft_schedule_validate's */
    expect_valid(f, SJ("[[0, 1]]", "[[128, 128, 128]]", "[[]]"));
    memset(&e, 0, sizeof e);
    ft_status_clear(&st);
    assert_int_equal(ft_evaluate(f->p, f->s, FT_COMPUTE_NATIVE, &e, &st),
                     FT_EINVALID);
    assert_int_equal(st.reason, FT_R_OOM);
    assert_string_equal(ft_reason_name(st.reason), "oom");
    assert_null(e.sg);
    ft_eval_free(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_schedule_parse_valid, setup_prob3, ftt_teardown),
        cmocka_unit_test_setup_teardown(test_schedule_parse_traversal_null_vs_list, setup_prob3, ftt_teardown),
        cmocka_unit_test_setup_teardown(test_schedule_parse_optional_fields_missing, setup_prob3, ftt_teardown),
        cmocka_unit_test(test_schedule_parse_reject_not_json),
        cmocka_unit_test(test_schedule_parse_reject_wrong_types),
        cmocka_unit_test(test_schedule_parse_reject_missing_required),
        cmocka_unit_test_setup_teardown(test_schedule_to_json_round_trip, setup_prob3, ftt_teardown),
        cmocka_unit_test_setup_teardown(test_schedule_to_json_without_reported, setup_prob3, ftt_teardown),
        cmocka_unit_test_setup_teardown(test_schedule_to_json_latencies_override, setup_prob3, ftt_teardown),
        cmocka_unit_test_setup_teardown(test_schedule_write_then_load, setup_tmpdir, teardown_tmpdir),
        cmocka_unit_test_setup_teardown(test_schedule_write_bad_path, setup_tmpdir, teardown_tmpdir),
        cmocka_unit_test(test_schedule_load_missing_file),
        cmocka_unit_test_setup_teardown(test_schedule_new_and_setters, setup_prob3, ftt_teardown),
        cmocka_unit_test(test_schedule_reason_names),
        cmocka_unit_test_setup_teardown(test_schedule_validate_accepts_valid, setup_prob3, ftt_teardown),
        cmocka_unit_test_setup_teardown(test_schedule_validate_length_mismatch, setup_prob3, ftt_teardown),
        cmocka_unit_test_setup_teardown(test_schedule_validate_empty_subgraph, setup_prob3, ftt_teardown),
        cmocka_unit_test_setup_teardown(test_schedule_validate_repeated_op, setup_prob3, ftt_teardown),
        cmocka_unit_test_setup_teardown(test_schedule_validate_op_out_of_range, setup_prob3, ftt_teardown),
        cmocka_unit_test_setup_teardown(test_schedule_validate_op_not_covered, setup_prob3, ftt_teardown),
        cmocka_unit_test_setup_teardown(test_schedule_validate_op_before_producer, setup_prob3, ftt_teardown),
        cmocka_unit_test_setup_teardown(test_schedule_validate_not_connected, setup_split, ftt_teardown),
        cmocka_unit_test_setup_teardown(test_schedule_validate_granularity_below_one, setup_prob3, ftt_teardown),
        cmocka_unit_test_setup_teardown(test_schedule_validate_granularity_above_native, setup_mm, ftt_teardown),
        cmocka_unit_test_setup_teardown(test_schedule_validate_retain_not_produced, setup_prob3, ftt_teardown),
        cmocka_unit_test_setup_teardown(test_schedule_validate_bad_traversal, setup_prob4, ftt_teardown),
        cmocka_unit_test_setup_teardown(test_schedule_validate_tensor_unavailable, setup_prob3, ftt_teardown),
        cmocka_unit_test_setup_teardown(test_schedule_validate_fused_operand_retained, setup_e3, ftt_teardown),
        cmocka_unit_test_setup_teardown(test_schedule_validate_fused_operand_written, setup_e3, ftt_teardown),
        cmocka_unit_test_setup_teardown(test_schedule_validate_ignores_working_set, setup_prob5, ftt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
