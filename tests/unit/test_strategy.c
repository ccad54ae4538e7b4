/* test_strategy.c - cmocka tests of the grouping strategies as passes of ft_search: names, each strategy alone giving a valid labelled schedule, unfit groups split, the search never worse than the strategies it starts from, errors of pattern files, and subgraph_labels in schedule files. */
#include "ft_testutil.h"

#include <unistd.h>

/* ft_search with `strategy` (and start_from for the search) on p: FT_OK
 * expected; the schedule, its total in *total. */
static ft_schedule *run(const ft_problem *p, ft_strategy strategy, unsigned start_from, double limit, double *total)
{
    ft_search_opts o;
    ft_search_opts_init(&o);
    o.strategy = strategy;
    o.start_from = start_from;
    o.time_limit = limit;
    o.threads = 1;
    ft_schedule *s = NULL;
    ft_eval ev;
    ft_status st;
    int rc = ft_search(p, &o, &s, &ev, &st);
    if (rc != FT_OK)
        fail_msg("%s: strategy %s: %s", p->name, ft_strategy_name(strategy), st.msg);
    *total = ev.total;
    ft_eval_free(&ev);
    return s;
}

/* s is valid for p and its evaluation gives `total`. */
static void assert_evaluates(const ft_problem *p, const ft_schedule *s, double total)
{
    ft_eval ev;
    ft_status st;
    if (ft_evaluate(p, s, FT_COMPUTE_NATIVE, &ev, &st) != FT_OK)
        fail_msg("%s: invalid schedule: %s", p->name, st.msg);
    assert_rel(ev.total, total, 1e-9);
    ft_eval_free(&ev);
}

/* ------------------------------------------------------------ names */

static void test_strategy_names(void **state)
{
    (void)state;
    ft_status st;
    for (int i = 0; i < FT_STRATEGY_COUNT; i++) {
        ft_strategy s = (ft_strategy)-1;
        assert_non_null(ft_strategy_name((ft_strategy)i));
        assert_int_equal(ft_strategy_parse(ft_strategy_name((ft_strategy)i), &s, &st), FT_OK);
        assert_int_equal(s, i);
    }
    assert_null(ft_strategy_name((ft_strategy)FT_STRATEGY_COUNT));
    ft_strategy s;
    assert_int_equal(ft_strategy_parse("tiles", &s, &st), FT_EINPUT);
    assert_non_null(strstr(st.msg, "'tiles'"));
    assert_non_null(strstr(st.msg, "supertile"));
    ft_partition_method m;
    for (int i = 0; i < 4; i++) {
        assert_int_equal(ft_partition_method_parse(ft_partition_method_name((ft_partition_method)i), &m, &st), FT_OK);
        assert_int_equal(m, i);
    }
    assert_int_equal(ft_partition_method_parse("kway", &m, &st), FT_EINPUT);
    assert_non_null(strstr(st.msg, "metis"));
}

/* ------------------------------------------------------------ alone */

/* Every grouping strategy on p: a valid schedule whose every subgraph is
 * labelled, the label naming its first op's source layer; totals into
 * tot[] (by strategy). */
static void strategies_alone(const ft_problem *p, double *tot, double limit)
{
    for (int k = 1; k < FT_STRATEGY_COUNT; k++) {
        ft_schedule *s = run(p, (ft_strategy)k, 0, limit, &tot[k]);
        assert_evaluates(p, s, tot[k]);
        for (int i = 0; i < s->nsubgraphs; i++) {
            const char *label = s->sg[i].label, *name = p->ops[s->sg[i].ops[0]].name;
            if (!label)
                fail_msg("%s: %s: subgraph %d has no label", p->name, ft_strategy_name((ft_strategy)k), i);
            /* the source layer: the name up to a lowering suffix */
            char layer[128];
            snprintf(layer, sizeof layer, "%s", name ? name : "op ");
            char *slash = strchr(layer, '/');
            if (slash)
                *slash = '\0';
            if (!strstr(label, layer))
                fail_msg("%s: %s: subgraph %d's label '%s' does not name '%s'", p->name, ft_strategy_name((ft_strategy)k), i,
                         label, layer);
        }
        printf("  %s: %-9s total %.17g, %d subgraphs; subgraph 0: %s\n", p->name, ft_strategy_name((ft_strategy)k), tot[k],
               s->nsubgraphs, s->sg[0].label);
        ft_schedule_free(s);
    }
}

static void test_strategy_alone_resnet18(void **state)
{
    (void)state;
    double tot[FT_STRATEGY_COUNT];
    ft_problem *p = ftt_load("examples/resnet18.problem.json");
    strategies_alone(p, tot, 60);
    ft_problem_free(p);
}

/* The partition strategy's fit method judges fit by an estimate: on
 * ResNet-18 some of its groups fit no tiling and are split into chunks
 * that do (strategy_pass.c), so the schedule has more subgraphs than the
 * method's groups and is valid. */
static void test_strategy_unfit_groups_split(void **state)
{
    (void)state;
    if (ftt_valgrind()) {
        printf("  under valgrind: the same code as test_strategy_alone_resnet18, skipped\n");
        return;
    }
    ft_problem *p = ftt_load("examples/resnet18.problem.json");
    ft_search_opts o;
    ft_search_opts_init(&o);
    o.strategy = FT_STRATEGY_PARTITION;
    o.partition = FT_PARTITION_FIT;
    o.threads = 1;
    ft_schedule *s;
    ft_eval ev;
    ft_status st;
    assert_int_equal(ft_search(p, &o, &s, &ev, &st), FT_OK);
    assert_evaluates(p, s, ev.total);
    /* the method alone: 7 groups (test_rules) */
    printf("  resnet18: fit method: %d subgraphs after the split of 7 groups\n", s->nsubgraphs);
    assert_true(s->nsubgraphs > 7);
    ft_eval_free(&ev);
    ft_schedule_free(s);
    ft_problem_free(p);
}

/* Labels of s that contain `note`. */
static int labels_with(const ft_schedule *s, const char *note)
{
    int n = 0;
    for (int i = 0; i < s->nsubgraphs; i++)
        n += s->sg[i].label && strstr(s->sg[i].label, note) != NULL;
    return n;
}

/* GPT-2's block is one group of the partition strategy (a transformer
 * layer, auto method), and checking that it fits a tiling takes longer
 * than a share of a 0.02-s limit (about 0.1 s since the scorer's closed
 * form stops at the capacity, seconds before): past its share it is split,
 * and its labels say so; with no time at all every strategy still gives
 * a valid schedule, each group split into single ops. */
static void test_strategy_costing_cut(void **state)
{
    (void)state;
    ft_problem *p = ftt_load("examples/gpt2_block.problem.json");
    double total;
    ft_schedule *s = run(p, FT_STRATEGY_PARTITION, 0, 0.02, &total);
    assert_evaluates(p, s, total);
    int cut = labels_with(s, "(split: not costed in its time share)");
    printf("  gpt2_block: partition in 0.02 s: %d subgraphs, %d labelled as split for time, total %.17g\n", s->nsubgraphs, cut, total);
    assert_true(cut > 0);
    ft_schedule_free(s);
    for (int k = 1; k < FT_STRATEGY_COUNT; k++) {
        s = run(p, (ft_strategy)k, 0, 1e-6, &total);
        assert_evaluates(p, s, total);
        assert_int_equal(s->nsubgraphs, p->nops);
        printf("  gpt2_block: %s in 1e-6 s: %d subgraphs, %d labelled as split for time\n", ft_strategy_name((ft_strategy)k),
               s->nsubgraphs, labels_with(s, "(split: not costed in its time share)"));
        ft_schedule_free(s);
    }
    ft_problem_free(p);
}

/* ------------------------------------------------------------ search */

/* The search, starting from every strategy, is at least as good as each of
 * them (it offers their groupings itself); with no starts it still runs. */
static void search_beats(const ft_problem *p, double limit)
{
    double tot[FT_STRATEGY_COUNT], best;
    strategies_alone(p, tot, limit);
    ft_schedule *s = run(p, FT_STRATEGY_SEARCH, FT_STRATEGY_ALL_STARTS, limit, &best);
    assert_evaluates(p, s, best);
    for (int i = 0; i < s->nsubgraphs; i++)
        assert_null(s->sg[i].label); /* the search's groups are its own */
    ft_schedule_free(s);
    printf("  %s: search %.17g\n", p->name, best);
    for (int k = 1; k < FT_STRATEGY_COUNT; k++)
        if (best > tot[k] * (1 + 1e-12))
            fail_msg("%s: search %.17g is worse than %s's %.17g", p->name, best, ft_strategy_name((ft_strategy)k), tot[k]);
    s = run(p, FT_STRATEGY_SEARCH, 0, limit / 4, &best);
    assert_evaluates(p, s, best);
    ft_schedule_free(s);
}

static void test_strategy_search_at_least_as_good(void **state)
{
    (void)state;
    /* four generated problems and ResNet-18 natively; the same code on
     * fewer under the slow runners (two under the sanitizers, one under
     * valgrind), where each search runs to its widened limit */
    int n = ftt_valgrind() ? 1 : ftt_slow() ? 2 : 4;
    for (int seed = 1; seed <= n; seed++) {
        ft_gen_opts go;
        ft_gen_opts_init(&go);
        go.seed = (uint64_t)seed;
        go.nops = 10 + 6 * seed;
        ft_problem *p;
        ft_status st;
        assert_int_equal(ft_generate(&go, &p, &st), FT_OK);
        /* the search's starts pass has 30 % of the limit to cost every
         * strategy's groups, a strategy alone the whole of it: a slow
         * runner needs more for the search to reach them all */
        search_beats(p, ftt_valgrind() ? 30 : ftt_slow() ? 12 : 3);
        ft_problem_free(p);
    }
    if (!ftt_slow()) {
        ft_problem *p = ftt_load("examples/resnet18.problem.json");
        search_beats(p, 4);
        ft_problem_free(p);
    }
}

/* ------------------------------------------------------------ errors */

static void test_strategy_pattern_file_errors(void **state)
{
    (void)state;
    char path[] = "/tmp/ft-strategy-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *text = "pattern broken\n  node a mm\n  edge a b 0\nend\n";
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    ft_problem *p = ftt_load("examples/resnet18.problem.json");
    const char *files[] = {path}, *missing[] = {"/nonexistent/x.patterns"};
    for (int c = 0; c < 4; c++) {
        ft_search_opts o;
        ft_search_opts_init(&o);
        o.strategy = c < 2 ? FT_STRATEGY_PATTERNS : FT_STRATEGY_SEARCH;
        o.pattern_files = c % 2 ? missing : files;
        o.npattern_files = 1;
        o.time_limit = 2;
        o.threads = 1;
        ft_schedule *s = NULL;
        ft_eval ev;
        ft_status st;
        assert_int_equal(ft_search(p, &o, &s, &ev, &st), FT_EINPUT);
        assert_null(s);
        printf("  %s, %s: %s\n", ft_strategy_name(o.strategy), c % 2 ? "missing" : "broken", st.msg);
        assert_non_null(strstr(st.msg, c % 2 ? missing[0] : path));
        if (c % 2 == 0)
            assert_non_null(strstr(st.msg, ":3")); /* the line of the bad edge */
    }
    unlink(path);
    ft_problem_free(p);
}

/* ------------------------------------------------------------ files */

static void test_strategy_labels_round_trip(void **state)
{
    (void)state;
    const char *json = "{\"subgraphs\": [[0], [1]], \"granularities\": [[1, 1, 1], [1, 1, 1]],"
                       " \"tensors_to_retain\": [[], []], \"subgraph_labels\": [\"conv+bn \\\"a\\\"\\u00e9\", null]}";
    ft_schedule *s, *t;
    ft_status st;
    assert_int_equal(ft_schedule_parse(json, "l.json", &s, &st), FT_OK);
    assert_string_equal(s->sg[0].label, "conv+bn \"a\"\xc3\xa9");
    assert_null(s->sg[1].label);
    char *text = ft_schedule_to_json(s, NULL);
    assert_non_null(strstr(text, "\"subgraph_labels\": [\"conv+bn \\\"a\\\"\\u00E9\", null]"));
    assert_int_equal(ft_schedule_parse(text, "again.json", &t, &st), FT_OK);
    assert_string_equal(t->sg[0].label, s->sg[0].label);
    free(text);
    ft_schedule_free(t);
    /* no label: no list */
    free(s->sg[0].label);
    s->sg[0].label = NULL;
    text = ft_schedule_to_json(s, NULL);
    assert_null(strstr(text, "subgraph_labels"));
    free(text);
    ft_schedule_free(s);
    const char *bad = "{\"subgraphs\": [[0]], \"granularities\": [[1, 1, 1]], \"tensors_to_retain\": [[]],"
                      " \"subgraph_labels\": [3]}";
    assert_int_equal(ft_schedule_parse(bad, "bad.json", &s, &st), FT_EINPUT);
    assert_string_equal(st.msg, "bad.json: subgraph_labels[0] must be a string or null");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strategy_names),
        cmocka_unit_test(test_strategy_alone_resnet18),
        cmocka_unit_test(test_strategy_unfit_groups_split),
        cmocka_unit_test(test_strategy_costing_cut),
        cmocka_unit_test(test_strategy_search_at_least_as_good),
        cmocka_unit_test(test_strategy_pattern_file_errors),
        cmocka_unit_test(test_strategy_labels_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
