/* test_sim_progress.c - the simulator's progress callback and step limit (ft_sim_opts.progress, FT_MAX_STEPS): progress through the replay then the analytic check, a stop on request that leaves the simulator usable (in a run of like steps too), a schedule over FT_MAX_STEPS refused before its first step; the replays with effects off counted as one. */
#include "ft_testutil.h"

#include "fusetile/sim.h"

/* One Pointwise op on a 4096 x 1024 tensor at 4 x 4 tiles: 262 144 = 2^18
 * steps, one progress period (the callback comes every 2^18 steps) in the
 * replay and one in the analytic walk. */
#define PROBLEM                                                              \
    PJ("[4096, 4096]", "[1024, 1024]", "[[0]]", "[[1]]", "[100]", "[" PW "]", \
       "100000", "10", "[128, 128]")
#define STEPS 262144
#define SCHEDULE SJ("[[0]]", "[[4, 4, 1]]", "[[]]")

typedef struct calls {
    int n;
    int64_t last_done, total;
    int monotonic;
    int stop_at; /* return nonzero on this call (0: never) */
} calls;

static int on_progress(void *ctx, int64_t done, int64_t total)
{
    calls *c = ctx;
    c->n++;
    if (done <= c->last_done || done > total)
        c->monotonic = 0;
    c->last_done = done;
    c->total = total;
    return c->stop_at && c->n == c->stop_at;
}

typedef struct fixture {
    ft_problem *p;
    ft_schedule *s;
    ft_sim *sim;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    const char *err = NULL;
    ft_status st;
    if (!f)
        return -1;
    *state = f;
    if (ft_sim_new(&f->sim, &err) != FT_OK || ft_problem_parse(PROBLEM, "p.json", &f->p, &st) != FT_OK ||
        ft_schedule_parse(SCHEDULE, "s.json", &f->s, &st) != FT_OK)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    ft_sim_free(f->sim);
    ft_schedule_free(f->s);
    ft_problem_free(f->p);
    free(f);
    return 0;
}

/* The replay's steps, then the analytic evaluation's, counted on: the
 * total is twice the schedule's steps, done grows to it. */
static void test_progress(void **state)
{
    fixture *f = *state;
    calls c = {0, 0, 0, 1, 0};
    ft_sim_opts o;
    ft_sim_opts_init(&o);
    assert_null(o.progress);
    o.progress = on_progress;
    o.progress_ctx = &c;
    ft_sim_result r;
    assert_int_equal(ft_sim_run(f->sim, f->p, f->s, &o, &r), FT_OK);
    assert_int_equal(r.steps, STEPS);
    assert_true(fabs(r.total_simulated - r.total_analytic) <= 1e-9 * r.total_analytic);
    ft_sim_result_free(&r);
    /* one call at the end of the replay (2^18 steps), one at the end of
     * the analytic walk */
    assert_int_equal(c.n, 2);
    assert_true(c.monotonic);
    assert_int_equal(c.total, 2 * STEPS);
    assert_int_equal(c.last_done, 2 * STEPS);
    /* without the analytic side the total is the replay's */
    c = (calls){0, 0, 0, 1, 0};
    o.analytic = 0;
    assert_int_equal(ft_sim_run(f->sim, f->p, f->s, &o, &r), FT_OK);
    ft_sim_result_free(&r);
    assert_int_equal(c.n, 1);
    assert_int_equal(c.total, STEPS);
}

/* The replays with effects off count on as one (issue 32: simulate's
 * progress restarted per replay): with a transfer latency and a launch
 * overhead, three replays (each effect off, then both), done grows to
 * three times a replay's total. */
static void test_effects_progress(void **state)
{
    fixture *f = *state;
    f->p->timing.transfer_latency = 5;
    f->p->timing.launch_overhead = 7;
    assert_int_equal(ft_sim_effects_count(f->p), 3);
    calls c = {0, 0, 0, 1, 0};
    ft_sim_opts o;
    ft_sim_opts_init(&o);
    o.progress = on_progress;
    o.progress_ctx = &c;
    ft_sim_effects rep;
    assert_int_equal(ft_sim_effects_run(f->sim, f->p, f->s, &o, &rep), FT_OK);
    assert_int_equal(rep.nvar, 3);
    ft_sim_effects_free(&rep);
    assert_int_equal(c.n, 6);
    assert_true(c.monotonic);
    assert_int_equal(c.total, 3 * 2 * STEPS);
    assert_int_equal(c.last_done, 3 * 2 * STEPS);
    f->p->timing.transfer_latency = f->p->timing.launch_overhead = 0;
    assert_int_equal(ft_sim_effects_count(f->p), 0);
}

/* A nonzero return stops the run (in the replay, then in the analytic
 * check) with FT_EINPUT; the next run on the handle works. */
static void test_stop(void **state)
{
    fixture *f = *state;
    ft_sim_opts o;
    ft_sim_opts_init(&o);
    o.progress = on_progress;
    for (int at = 1; at <= 2; at++) {
        calls c = {0, 0, 0, 1, at};
        o.progress_ctx = &c;
        ft_sim_result r;
        assert_int_equal(ft_sim_run(f->sim, f->p, f->s, &o, &r), FT_EINPUT);
        ft_sim_result_free(&r);
        assert_non_null(strstr(ft_sim_errmsg(f->sim), "interrupted"));
        assert_int_equal(c.n, at);
    }
    ft_sim_result r;
    o.progress = NULL;
    assert_int_equal(ft_sim_run(f->sim, f->p, f->s, &o, &r), FT_OK);
    assert_int_equal(r.steps, STEPS);
    ft_sim_result_free(&r);
}

/* Parse problem pj (named pname) into *p and schedule sj (sname) into *s. */
static void parse_both(const char *pj, const char *pname, const char *sj, const char *sname, ft_problem **p, ft_schedule **s)
{
    ft_status st;
    assert_int_equal(ft_problem_parse(pj, pname, p, &st), FT_OK);
    assert_int_equal(ft_schedule_parse(sj, sname, s, &st), FT_OK);
}

/* A k-loop MatMul of 1 500 k-steps a tile (384 000 steps, 256 tiles of
 * 4 x 4, k-slices of 4): the replay runs its like k-steps in one go, and
 * still calls the progress callback at step 2^18, in the middle of a
 * tile's run, and stops there when asked, naming that step. */
static void test_progress_in_run(void **state)
{
    fixture *f = *state;
    ft_problem *p;
    ft_schedule *s;
    parse_both(PJ("[6000, 64, 64]", "[64, 6000, 64]", "[[0, 1]]", "[[2]]", "[100]", "[" MM "]", "100000", "10", "[128, 128]"),
               "kloop.json", SJ("[[0]]", "[[4, 4, 4]]", "[[]]"), "kloop.schedule.json", &p, &s);
    ft_sim_opts o;
    ft_sim_opts_init(&o);
    o.progress = on_progress;
    o.analytic = 0;
    for (int stop = 0; stop <= 1; stop++) {
        calls c = {0, 0, 0, 1, stop};
        o.progress_ctx = &c;
        ft_sim_result r;
        assert_int_equal(ft_sim_run(f->sim, p, s, &o, &r), stop ? FT_EINPUT : FT_OK);
        assert_int_equal(c.n, 1);
        assert_int_equal(c.last_done, 262144);
        assert_int_equal(c.total, 384000);
        if (stop)
            assert_non_null(strstr(ft_sim_errmsg(f->sim), "interrupted in subgraph 0 at step 262143"));
        else
            assert_int_equal(r.steps, 384000);
        ft_sim_result_free(&r);
    }
    ft_schedule_free(s);
    ft_problem_free(p);
}

/* A schedule over FT_MAX_STEPS: refused with ft_schedule_steps' message
 * before a step is replayed (no progress call). */
static void test_step_limit(void **state)
{
    fixture *f = *state;
    ft_problem *p;
    ft_schedule *s;
    parse_both(PJ("[100000, 100000]", "[100000, 100000]", "[[0]]", "[[1]]", "[100]", "[" PW "]", "100000", "10", "[128, 128]"),
               "wide.json", SJ("[[0]]", "[[10, 1, 1]]", "[[]]"), "s1e9.json", &p, &s);
    calls c = {0, 0, 0, 1, 0};
    ft_sim_opts o;
    ft_sim_opts_init(&o);
    o.progress = on_progress;
    o.progress_ctx = &c;
    ft_sim_result r;
    assert_int_equal(ft_sim_run(f->sim, p, s, &o, &r), FT_EINPUT);
    char want[300];
    snprintf(want, sizeof want,
             "s1e9.json: 1000000000 steps (the largest subgraph, 0: 10000 x 100000 tiles x 1 k-steps), the limit is %lld (FT_MAX_STEPS)",
             (long long)FT_MAX_STEPS);
    assert_string_equal(ft_sim_errmsg(f->sim), want);
    assert_int_equal(r.steps, 0);
    assert_int_equal(c.n, 0);
    ft_sim_result_free(&r);
    ft_schedule_free(s);
    ft_problem_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_progress, setup, teardown),
        cmocka_unit_test_setup_teardown(test_effects_progress, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_progress_in_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_step_limit, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
