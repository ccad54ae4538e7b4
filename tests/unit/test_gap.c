/* test_gap.c - cmocka tests of the evidence of where a schedule's gap lies (ft_gap_alone): on random small problems with every target term drawn at random, each subgraph's best configuration alone stays between the grouping's bound and the schedule's total; a worse configuration given is found and named the search's; the deadline cuts the work and says how much it covered; ft_gap_evidence gives the same figures in one call; a merge of two neighbouring subgraphs that saves is found. */
#include "ft_testutil.h"

/* Example 1: op0 T0 -> T1 (1000), op1 T1 -> T2 (100), 128 x 128,
 * bandwidth 10 (SPEC's worked example; test_bound.c). */
static const char ex1[] =
    PJ("[128, 128, 128]", "[128, 128, 128]", "[[0], [1]]", "[[1], [2]]",
       "[1000, 100]", "[" PW ", " PW "]", "35000", "10", "[128, 128]");

static int setup_ex1(void **state) { return ftt_fixture_new(state, ex1, NULL); }

/* A small deterministic generator (xorshift64*). */
static uint64_t rnd(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

static int64_t below(uint64_t *s, int64_t n) { return (int64_t)(rnd(s) % (uint64_t)n); }

/* Draw every target term of p at random (as test_exhaustive's
 * random_timing), then finish it again. */
static void random_terms(ft_problem *p, uint64_t *r)
{
    static const double lats[] = {0, 5, 50, 500};
    static const int units[] = {0, 1, 2, 4};
    ft_timing *t = &p->timing;
    t->overlap = (ft_overlap)below(r, 3);
    t->transfer_latency = lats[below(r, 4)];
    t->launch_overhead = (double)below(r, 3) * 100;
    t->write_bandwidth = below(r, 2) ? 0 : p->bandwidth * (0.25 + 0.25 * (double)below(r, 8));
    t->duplex = (int)below(r, 2);
    t->units = units[below(r, 4)];
    t->step_overhead = below(r, 2) ? 0 : 13;
    t->tile_overhead = (double[]){0, 29, 2623}[below(r, 3)]; /* 2623: a GPU's, most of a small tile */
    t->matmul_tile_overhead = below(r, 2) ? 0 : 41;
    t->cache_capacity = below(r, 2) ? 0 : (double)(16 << below(r, 6));
    t->cache_resident = below(r, 2) ? 0 : t->cache_capacity * (double)(1 + below(r, 3)) / 2;
    t->cache_bandwidth = p->bandwidth * 4;
    p->allow_larger = (int)below(r, 2);
    p->pointwise_exact = (int)below(r, 2);
    ft_status st;
    assert_int_equal(ft_problem_finish(p, &st), FT_OK);
}

/* The gap of valid schedule s of p with its whole evidence into *g; the
 * evaluation's total into *total.  0, or -1 when s is not valid. */
static int gap_of(const ft_problem *p, const ft_schedule *s, ft_gap *g, double *total)
{
    ft_eval ev;
    ft_status st;
    memset(&ev, 0, sizeof ev);
    if (ft_evaluate(p, s, FT_COMPUTE_NATIVE, &ev, &st) != FT_OK)
        return -1;
    *total = ev.total;
    assert_int_equal(ft_gap_report(p, s, ev.model, ev.total, g, &st), FT_OK);
    assert_int_equal(ft_gap_alone(p, s, &ev, HUGE_VAL, g, &st), FT_OK);
    /* the one call the command line and the binding make (the bounds taken
     * from the evaluation) gives the same figures */
    ft_gap h;
    assert_int_equal(ft_gap_evidence(p, s, &ev, HUGE_VAL, &h, &st), FT_OK);
    assert_true(h.bound == g->bound && h.grouping_bound == g->grouping_bound && h.best_alone == g->best_alone &&
                h.ratio == g->ratio && h.gap_in == g->gap_in && h.alone_tried == g->alone_tried &&
                h.pairs_tried == g->pairs_tried && h.merge_at == g->merge_at && h.merge_gain == g->merge_gain);
    ft_eval_free(&ev);
    return 0;
}

/* The evidence's invariants on g (a schedule of total `total`): the best
 * configurations alone total at most the schedule's and at least its
 * grouping's bound (the bound stays a bound), every subgraph covered, and
 * the three parts multiply to the ratio. */
static void check_gap(const ft_problem *p, const ft_gap *g, double total, const char *who)
{
    if (g->best_alone > total * (1 + 1e-12) || g->best_alone < g->grouping_bound * (1 - 1e-9) ||
        g->best_alone < g->bound * (1 - 1e-9))
        fail_msg("%s (%s): best alone %.17g, total %.17g, grouping bound %.17g, bound %.17g", who, p->name,
                 g->best_alone, total, g->grouping_bound, g->bound);
    assert_int_equal(g->alone_done, g->nsubgraphs);
    assert_true(g->alone_tried >= g->nsubgraphs);
    assert_rel(g->search_part * g->bound_part * g->between, g->ratio, 1e-12);
    assert_true(g->gap_in == FT_GAP_IN_SEARCH || g->gap_in == FT_GAP_IN_BOUND || g->gap_in == FT_GAP_IN_GROUPING);
    assert_int_equal(g->in_bound, g->gap_in == FT_GAP_IN_BOUND);
    /* the grouping's evidence: every pair tried when every subgraph was
     * done; a merge found saves something, at most what the two cost */
    assert_true(g->pairs_tried <= g->nsubgraphs - 1 && g->pairs_done <= g->pairs_tried);
    assert_true(g->merge_at < g->nsubgraphs - 1);
    if (g->merge_at >= 0)
        assert_true(g->merge_gain > 0 && g->merge_gain < g->best_alone);
    else
        assert_true(g->merge_gain == 0);
    /* the savings summed: at least the largest, none without it */
    assert_true(g->merge_sum >= g->merge_gain * (1 - 1e-12) && (g->merge_sum == 0) == (g->merge_at < 0));
    /* the grouping's part left to the bound only when it is the largest,
     * every pair was costed whole, and the merges save (summed) under
     * FT_GAP_GROUPING_SHARE of what the grouping pays */
    double pays = g->between > 0 ? g->total - g->total / g->between : 0;
    assert_int_equal(g->grouping_in_bound, g->gap_in == FT_GAP_IN_GROUPING && g->pairs_tried > 0 &&
                                               g->pairs_done == g->pairs_tried &&
                                               g->merge_sum < FT_GAP_GROUPING_SHARE * pays);
}

/* gap_of for the schedule text `json` (valid) of p. */
static void gap_of_text(const ft_problem *p, const char *json, ft_gap *g, double *total)
{
    ft_status st;
    ft_schedule *s;
    assert_int_equal(ft_schedule_parse(json, "t.json", &s, &st), FT_OK);
    assert_int_equal(gap_of(p, s, g, total), 0);
    ft_schedule_free(s);
}

/* Random small problems (ft_generate's small family), every target term
 * drawn: their one-op schedule at random granularities (1 to native, or
 * above it where the target allows), and on every fourth problem the
 * search's schedule (fused subgraphs, retention). */
static void test_gap_random(void **state)
{
    (void)state;
    int n = ftt_slow() ? 12 : 80, checked = 0;
    for (int i = 0; i < n; i++) {
        uint64_t r = 0x9e3779b97f4a7c15ull ^ (uint64_t)(i + 1);
        ft_gen_opts o;
        ft_gen_opts_init(&o);
        o.family = FT_GEN_SMALL;
        o.seed = (uint64_t)(7000 + i);
        ft_problem *p;
        ft_status st;
        assert_int_equal(ft_generate(&o, &p, &st), FT_OK);
        random_terms(p, &r);
        ft_schedule *s;
        assert_int_equal(ft_gen_oneop_schedule(p, &s, &st), FT_OK);
        for (int j = 0; j < s->nsubgraphs; j++) {
            int64_t lim = p->allow_larger ? 2 : 1;
            s->sg[j].w = 1 + below(&r, lim * p->native_w);
            s->sg[j].h = 1 + below(&r, lim * p->native_h);
            s->sg[j].k = 1 + below(&r, lim * ft_native_k(p));
        }
        ft_gap g;
        double total;
        if (gap_of(p, s, &g, &total) == 0) {
            check_gap(p, &g, total, "one-op schedule");
            checked++;
        }
        ft_schedule_free(s);
        if (i % 4 == 0) {
            ft_search_opts so;
            ft_search_opts_init(&so);
            so.time_limit = 0.05;
            so.threads = 1;
            ft_eval ev;
            if (ft_search(p, &so, &s, &ev, &st) == FT_OK) {
                ft_eval_free(&ev);
                if (gap_of(p, s, &g, &total) == 0) {
                    check_gap(p, &g, total, "searched schedule");
                    checked++;
                }
                ft_schedule_free(s);
            }
        }
        ft_problem_free(p);
    }
    print_message("%d schedules checked\n", checked);
    /* most one-op schedules at random granularities are valid */
    assert_true(checked >= n / 2);
}

/* Example 1 fused at 32 x 32 rather than the native 128 x 128: the
 * evidence finds the native tile (the bound, 3276.8), so the gap is the
 * search's configurations'; fused at the native tile there is none. */
static void test_gap_worse_configuration(void **state)
{
    ftt_fixture *f = *state;
    ft_gap g;
    double total;
    gap_of_text(f->p, SJ("[[0, 1]]", "[[32, 32, 1]]", "[[]]"), &g, &total);
    check_gap(f->p, &g, total, "32 x 32");
    assert_true(total > 3276.8 * 2);
    assert_rel(g.best_alone, 3276.8, 1e-12);
    assert_true(g.search_part > 1);
    assert_rel(g.search_part, total / 3276.8, 1e-12);
    assert_int_equal(g.gap_in, FT_GAP_IN_SEARCH);
    assert_string_equal(ft_gap_in_name(g.gap_in), "search");
    gap_of_text(f->p, SJ("[[0, 1]]", "[[128, 128, 1]]", "[[]]"), &g, &total);
    assert_rel(g.best_alone, 3276.8, 1e-12);
    assert_rel(g.search_part, 1, 1e-12);
    assert_int_equal(g.gap_in, FT_GAP_IN_BOUND);
}

/* The grouping's evidence on example 1 split in two (each op alone): the
 * two merged cost 3276.8 (the bound), so the one pair is merged and found
 * to save what the two cost at their best alone above it; fused already,
 * there is no pair to try. */
static void test_gap_merge(void **state)
{
    ftt_fixture *f = *state;
    ft_gap g;
    double total;
    gap_of_text(f->p, SJ("[[0], [1]]", "[[128, 128, 1], [128, 128, 1]]", "[[], []]"), &g, &total);
    check_gap(f->p, &g, total, "split");
    assert_int_equal(g.pairs_tried, 1);
    assert_int_equal(g.pairs_done, 1);
    assert_true(g.pairs_configs > 0);
    assert_int_equal(g.merge_at, 0);
    assert_rel(g.merge_gain, g.best_alone - 3276.8, 1e-12);
    assert_true(g.merge_gain > 0);
    /* one pair: its saving is the sum, all the grouping pays, so none of
     * it is left to the bound */
    assert_true(g.merge_sum == g.merge_gain);
    assert_int_equal(g.grouping_in_bound, 0);
    gap_of_text(f->p, SJ("[[0, 1]]", "[[128, 128, 1]]", "[[]]"), &g, &total);
    assert_int_equal(g.pairs_tried, 0);
    assert_int_equal(g.merge_at, -1);
    assert_true(g.merge_gain == 0);
}

/* The deadline: 0 scores nothing (every subgraph keeps its own latency,
 * none counted done); a deadline that passes during the work on a problem
 * of many subgraphs covers fewer than all, and what it found is still
 * between the grouping's bound and the total. */
static void test_gap_deadline(void **state)
{
    (void)state;
    ft_gen_opts o;
    ft_gen_opts_init(&o);
    o.family = FT_GEN_CONTEST;
    o.nops = 60;
    o.seed = 33;
    ft_problem *p;
    ft_status st;
    assert_int_equal(ft_generate(&o, &p, &st), FT_OK);
    ft_schedule *s;
    assert_int_equal(ft_gen_oneop_schedule(p, &s, &st), FT_OK);
    ft_eval ev;
    assert_int_equal(ft_evaluate(p, s, FT_COMPUTE_NATIVE, &ev, &st), FT_OK);
    ft_gap g;
    assert_int_equal(ft_gap_report(p, s, ev.model, ev.total, &g, &st), FT_OK);
    assert_int_equal(ft_gap_alone(p, s, &ev, 0, &g, &st), FT_OK);
    assert_int_equal(g.alone_done, 0);
    assert_true(g.alone_tried == 0);
    assert_rel(g.best_alone, ev.total, 1e-12);
    assert_rel(g.search_part, 1, 1e-12);
    /* 1 ms: not enough for 60 subgraphs' sets */
    assert_int_equal(ft_gap_report(p, s, ev.model, ev.total, &g, &st), FT_OK);
    assert_int_equal(ft_gap_alone(p, s, &ev, 1e-3, &g, &st), FT_OK);
    assert_true(g.alone_done < g.nsubgraphs);
    assert_true(g.best_alone <= ev.total * (1 + 1e-12));
    assert_true(g.best_alone >= g.grouping_bound * (1 - 1e-9));
    /* whole: every subgraph */
    assert_int_equal(ft_gap_alone(p, s, &ev, HUGE_VAL, &g, &st), FT_OK);
    assert_int_equal(g.alone_done, g.nsubgraphs);
    assert_true(g.best_alone >= g.grouping_bound * (1 - 1e-9));
    ft_eval_free(&ev);
    ft_schedule_free(s);
    ft_problem_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gap_random),
        cmocka_unit_test_setup_teardown(test_gap_worse_configuration, setup_ex1, ftt_teardown),
        cmocka_unit_test_setup_teardown(test_gap_merge, setup_ex1, ftt_teardown),
        cmocka_unit_test(test_gap_deadline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
