/* test_sweep_file.c - sweep files: cross-product counts and order, linear and geometric ranges, explicit runs lists, globs, stable and distinct keys, errors naming file, line and setting. */
#include "ft_testutil.h"

#include <sys/stat.h>
#include <unistd.h>

#include "fusetile/sweep.h"

/* A scratch directory holding p.json (a copy of vector ex1A) and q.json. */
typedef struct fixture {
    char dir[64];
    char cfg[128];
} fixture;

static void copy_file(const char *from, const char *to)
{
    FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
    assert_non_null(a);
    assert_non_null(b);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, a)) > 0)
        assert_int_equal(fwrite(buf, 1, n, b), n);
    fclose(a);
    fclose(b);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f || ftt_tmpdir(f->dir, sizeof f->dir, "ft-sweep")) {
        free(f);
        return -1;
    }
    char p[160];
    snprintf(p, sizeof p, "%s/p.json", f->dir);
    copy_file(ftt_src_path("tests/vectors/ex1A.problem.json"), p);
    snprintf(p, sizeof p, "%s/q.json", f->dir);
    copy_file(ftt_src_path("tests/vectors/ex2A.problem.json"), p);
    snprintf(f->cfg, sizeof f->cfg, "%s/s.cfg", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    int rc = ftt_rmtree(f->dir);
    free(f);
    return rc;
}

/* Write text to the fixture's s.cfg and load it: the code, *out set on FT_OK. */
static int load(fixture *f, const char *text, ft_sweep **out, ft_status *st)
{
    FILE *fp = fopen(f->cfg, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
    return ft_sweep_load(f->cfg, out, st);
}

static ft_sweep *load_ok(fixture *f, const char *text)
{
    ft_sweep *sw = NULL;
    ft_status st;
    if (load(f, text, &sw, &st) != FT_OK)
        fail_msg("%s", st.msg);
    return sw;
}

/* Expect a load error whose message contains "s.cfg:LINE: want". */
static void load_bad(fixture *f, const char *text, int line, const char *want)
{
    ft_sweep *sw = NULL;
    ft_status st;
    assert_int_equal(load(f, text, &sw, &st), FT_EINPUT);
    assert_null(sw);
    char head[600];
    snprintf(head, sizeof head, "s.cfg:%d: %s", line, want);
    if (!strstr(st.msg, head))
        fail_msg("message '%s' lacks '%s'", st.msg, head);
}

static void test_sweep_cross_product_count_and_order(void **state)
{
    fixture *f = *state;
    ft_sweep *sw = load_ok(f, "problems = [\"p.json\", \"q.json\"];\n"
                              "capacity = [1000.0, 2000.0, 3000.0];\n"
                              "strategy = [\"search\", \"rules\"];\n"
                              "seed = 7;\n");
    assert_int_equal(sw->nruns, 2 * 3 * 2);
    for (int i = 0; i < sw->nruns; i++)
        assert_int_equal(sw->runs[i].idx, i);
    /* the last axis varies fastest */
    assert_int_equal(sw->runs[0].strategy, FT_STRATEGY_SEARCH);
    assert_int_equal(sw->runs[1].strategy, FT_STRATEGY_RULES);
    assert_true(sw->runs[2].capacity == 2000);
    assert_string_equal(sw->runs[6].problem, "q.json");
    assert_int_equal(sw->runs[11].seed, 7);
    assert_null(sw->runs[0].target);
    assert_int_equal(sw->runs[0].model, FT_COMPUTE_NATIVE);
    ft_sweep_free(sw);
}

static void test_sweep_ranges(void **state)
{
    fixture *f = *state;
    ft_sweep *sw = load_ok(f, "problems = \"p.json\";\n"
                              "capacity = { from = 1000; to = 2000; step = 250; };\n");
    assert_int_equal(sw->nruns, 5);
    assert_true(sw->runs[4].capacity == 2000);
    ft_sweep_free(sw);
    sw = load_ok(f, "problems = \"p.json\";\n"
                    "bandwidth = { from = 1; to = 100; times = 2; };\n");   /* 1 2 4 ... 64 */
    assert_int_equal(sw->nruns, 7);
    assert_true(sw->runs[6].bandwidth == 64);
    ft_sweep_free(sw);
    sw = load_ok(f, "problems = \"p.json\";\n"
                    "units = ( { from = 1; to = 4; times = 2; }, 16 );\n"
                    "native = [\"64x64\", \"128x128x32\"];\n");
    assert_int_equal(sw->nruns, 4 * 2);
    assert_int_equal(sw->runs[3].units, 16);   /* native before units in the order */
    assert_int_equal(sw->runs[4].native_w, 128);
    assert_int_equal(sw->runs[4].native_k, 32);
    assert_int_equal(sw->runs[0].native_k, 0);
    ft_sweep_free(sw);
}

static void test_sweep_runs_list(void **state)
{
    fixture *f = *state;
    ft_sweep *sw = load_ok(f, "targets = \"none\";\n"
                              "time_limit = 1.5;\n"
                              "runs = ( { problem = \"p.json\"; capacity = 5000.0; },\n"
                              "         { problems = [\"q.json\"]; capacity = [6000.0, 7000.0]; simulate = true; } );\n");
    assert_int_equal(sw->nruns, 3);
    assert_string_equal(sw->runs[0].problem, "p.json");
    assert_true(sw->runs[0].time_limit == 1.5);
    assert_false(sw->runs[0].simulate);
    assert_true(sw->runs[2].capacity == 7000 && sw->runs[2].simulate);
    ft_sweep_free(sw);
}

static void test_sweep_glob_and_paths(void **state)
{
    fixture *f = *state;
    ft_sweep *sw = load_ok(f, "problems = [\"./*.json\"];\n");
    assert_int_equal(sw->nruns, 2);
    assert_string_equal(sw->runs[0].problem, "p.json");   /* sorted, relative to the sweep file */
    assert_string_equal(sw->runs[1].problem, "q.json");
    char want[160];
    snprintf(want, sizeof want, "%s/q.json", f->dir);
    assert_string_equal(sw->runs[1].problem_path, want);
    ft_sweep_free(sw);
}

static void test_sweep_keys_stable_and_distinct(void **state)
{
    fixture *f = *state;
    const char *text = "problems = [\"p.json\", \"./sub/../q.json\"];\n"
                       "capacity = [1000.0, 2000.0];\n"
                       "seed = [1, 2];\n";
    ft_sweep *a = load_ok(f, text), *b = load_ok(f, text);
    assert_int_equal(a->nruns, 8);
    for (int i = 0; i < a->nruns; i++) {
        assert_string_equal(a->runs[i].key, b->runs[i].key);
        for (int j = 0; j < i; j++)
            assert_string_not_equal(a->runs[i].key, a->runs[j].key);
    }
    assert_string_equal(a->runs[0].key, "problem=p.json;target=none;capacity=1000;bandwidth=-;native=-;units=-;"
                                        "compute_model=native;strategy=search;time_limit=-;seed=1;simulate=0");
    assert_non_null(strstr(a->runs[4].key, "problem=q.json;"));   /* canonical path */
    ft_sweep_free(b);
    /* the defaults written out give the same key as left out */
    b = load_ok(f, "problems = \"p.json\"; capacity = 1000.0; compute_model = \"native\"; strategy = \"search\"; seed = 1;"
                   " targets = \"none\"; simulate = false;\n");
    assert_string_equal(a->runs[0].key, b->runs[0].key);
    ft_sweep_free(a);
    ft_sweep_free(b);
}

static void test_sweep_errors(void **state)
{
    fixture *f = *state;
    load_bad(f, "problems = [\"p.json\"];\n\ncapacty = 5;\n", 3, "capacty: unknown setting");
    load_bad(f, "problems = [\"p.json\"];\ncapacity = [];\n", 2, "capacity: empty list");
    load_bad(f, "problems = [\"p.json\", \"nosuch.json\"];\n", 1, "problems: ");
    load_bad(f, "problems = [\"p.json\"];\ncapacity = { from = 5; to = 1; step = 1; };\n", 2, "capacity: from (5) is above to (1)");
    load_bad(f, "problems = [\"p.json\"];\ncapacity = { from = 1; to = 5; step = -1; };\n", 2, "capacity.step: step is -1");
    load_bad(f, "problems = [\"p.json\"];\ncapacity = { from = 1; to = 5; times = 0.5; };\n", 2, "capacity.times: times is 0.5");
    load_bad(f, "problems = [\"p.json\"];\nseed = \"one\";\n", 2, "seed: expected an integer");
    load_bad(f, "problems = [\"p.json\"];\ntargets = [\"nosuch.cfg\"];\n", 2, "targets: ");
    load_bad(f, "problems = [\"p.json\"];\ncapacity = { from = 1.0; to = 1e9; step = 1.0; };\n", 2,
             "capacity: the range has 1000000000 values, more than 4096");
    load_bad(f, "capacity = 5.0;\n", 0, "problems: missing");
    /* one value past FT_SWEEP_MAX_VALUES in a list, and in a glob's
     * matches: one line naming the setting (the glob once crashed here,
     * found by the sweep fuzz harness) */
    size_t cap = 16 * (FT_SWEEP_MAX_VALUES + 2);
    char *text = malloc(cap);
    assert_non_null(text);
    int n = snprintf(text, cap, "problems = [\"p.json\"];\nseed = [");
    for (int i = 0; i <= FT_SWEEP_MAX_VALUES; i++)
        n += snprintf(text + n, cap - (size_t)n, "%s%d", i ? ", " : "", i);
    snprintf(text + n, cap - (size_t)n, "];\n");
    load_bad(f, text, 2, "seed: more than 4096 values (FT_SWEEP_MAX_VALUES)");
    free(text);
    char sub[160], name[200];
    snprintf(sub, sizeof sub, "%s/many", f->dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    for (int i = 0; i <= FT_SWEEP_MAX_VALUES; i++) {
        snprintf(name, sizeof name, "%s/g%05d.json", sub, i);
        FILE *fp = fopen(name, "w");
        assert_non_null(fp);
        fclose(fp);
    }
    load_bad(f, "problems = [\"many/*.json\"];\n", 1, "problems: more than 4096 values (FT_SWEEP_MAX_VALUES)");
}

static void test_sweep_default_db(void **state)
{
    (void)state;
    const char *cases[][2] = {{"a/b.cfg", "a/b.db"}, {"b", "b.db"}, {"x.y/b", "x.y/b.db"}, {".hidden", ".hidden.db"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *d = ft_sweep_default_db(cases[i][0]);
        assert_string_equal(d, cases[i][1]);
        free(d);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_sweep_cross_product_count_and_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sweep_ranges, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sweep_runs_list, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sweep_glob_and_paths, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sweep_keys_stable_and_distinct, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sweep_errors, setup, teardown),
        cmocka_unit_test(test_sweep_default_db),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
