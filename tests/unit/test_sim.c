/* test_sim.c - cmocka tests of the simulator (sim.h): simulated = analytic on every vector and on ft_search's schedules, invalid schedules rejected by the simulator for the vectors' reasons, many replays in one process, each with the whole simulated clock, error paths. */
#include "ft_testutil.h"

#include <dirent.h>
#include <unistd.h>

#include "layout_problems.h"
#include "fusetile/sim.h"

/* ------------------------------------------------------------ fixtures */

/* One Pointwise op on a 200 x 200 tensor at 128 x 128 tiles: the corner tile
 * 3 needs 72 x 72, the edges 72 x 128, tile 0 128 x 128 (plus the 128 x 128
 * output buffer).  Capacity 30000: started at the corner, the replay
 * overflows only at step 3 (tile 0: 16384 + 16384 = 32768). */
#define LATE_OOM_PROBLEM                                                     \
    PJ("[200, 200]", "[200, 200]", "[[0]]", "[[1]]", "[100]", "[" PW "]",     \
       "30000", "10", "[128, 128]")
#define LATE_OOM_SCHEDULE SJO("[[0]]", "[[128, 128, 1]]", "[[]]", "[[3, 1, 2, 0]]")

/* Example 3's chain of three Pointwise ops (128 x 128, bandwidth 10). */
#define EX3_PROBLEM                                                          \
    PJ("[128, 128, 128, 128]", "[128, 128, 128, 128]",                       \
       "[[0], [1], [1, 2]]", "[[1], [2], [3]]", "[1500, 1500, 1500]",        \
       "[" PW ", " PW ", " PW "]", "50000", "10", "[128, 128]")

/* A problem and a schedule, a simulator handle and a result; freed by
 * teardown whatever a test's assertions do. */
typedef struct sim_fixture {
    ft_problem *p;
    ft_schedule *s;
    ft_sim *sim;
    ft_sim_result r;
    ft_eval e;
    char dir[256];   /* temporary directory, or "" */
} sim_fixture;

static int setup(void **state)
{
    sim_fixture *f = calloc(1, sizeof *f);
    const char *err = NULL;
    if (!f)
        return -1;
    *state = f;
    if (ft_sim_new(&f->sim, &err) != FT_OK) {
        print_error("ft_sim_new: %s\n", err);
        return -1;
    }
    return 0;
}

static void rm_tree(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char path[600];
    if (!d)
        return;
    while ((de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

static int teardown(void **state)
{
    sim_fixture *f = *state;
    if (f) {
        ft_sim_result_free(&f->r);
        ft_eval_free(&f->e);
        ft_sim_free(f->sim);
        ft_schedule_free(f->s);
        ft_problem_free(f->p);
        if (f->dir[0])
            rm_tree(f->dir);
        free(f);
    }
    *state = NULL;
    return 0;
}

/* Parse inline JSON into the fixture's problem and schedule. */
static void parse(sim_fixture *f, const char *pjson, const char *sjson)
{
    ft_status st;
    ft_schedule_free(f->s);
    ft_problem_free(f->p);
    f->s = NULL;
    f->p = NULL;
    if (ft_problem_parse(pjson, "test.problem.json", &f->p, &st) != FT_OK)
        fail_msg("problem: %s", st.msg);
    if (ft_schedule_parse(sjson, "test.solution.json", &f->s, &st) != FT_OK)
        fail_msg("schedule: %s", st.msg);
}

/* Replay with default options under `model`; returns ft_sim_run's code. */
static int run(sim_fixture *f, ft_compute_model model)
{
    ft_sim_opts o;
    ft_sim_opts_init(&o);
    o.model = model;
    ft_sim_result_free(&f->r);
    return ft_sim_run(f->sim, f->p, f->s, &o, &f->r);
}

static int slow(void)
{
    const char *v = getenv("FT_SLOW");
    return v && strcmp(v, "1") == 0;
}

/* A replay that the simulator accepts must match ft_evaluate subgraph by
 * subgraph: latency (1e-9), steps, peak occupancy = peak working set, and
 * busy time = the sums of step compute and memory times. */
static void assert_matches_eval(sim_fixture *f, ft_compute_model model, const char *what)
{
    ft_status st;
    ft_eval_free(&f->e);
    if (ft_evaluate(f->p, f->s, model, &f->e, &st) != FT_OK)
        fail_msg("%s: ft_evaluate rejects what the simulator accepts: %s", what, st.msg);
    assert_int_equal(f->r.nsubgraphs, f->e.nsubgraphs);
    assert_int_equal(f->r.analytic_reason, FT_R_NONE);
    int64_t steps = 0;
    for (int i = 0; i < f->e.nsubgraphs; i++) {
        const ft_sim_sg *q = &f->r.sg[i];
        const ft_sg_result *a = &f->e.sg[i];
        if (fabs(q->simulated - a->latency) > 1e-9 * fabs(a->latency))
            fail_msg("%s (%s): subgraph %d simulated %.17g, analytic %.17g", what, ft_compute_model_name(model), i, q->simulated,
                     a->latency);
        assert_rel(q->analytic, a->latency, 1e-15);
        assert_int_equal(q->steps, a->steps);
        assert_int_equal(q->peak_occupancy, a->peak_working_set);
        assert_true(q->channel_busy >= 0 && q->channel_busy <= 1 + 1e-12);
        assert_true(q->compute_busy >= 0 && q->compute_busy <= 1 + 1e-12);
        assert_rel(q->channel_busy * q->simulated, a->memory_time, 1e-9);
        assert_rel(q->compute_busy * q->simulated, a->compute_time, 1e-9);
        steps += q->steps;
    }
    assert_int_equal(f->r.steps, steps);
    if (fabs(f->r.total_simulated - f->e.total) > 1e-9 * fabs(f->e.total))
        fail_msg("%s (%s): simulated %.17g, analytic %.17g", what, ft_compute_model_name(model), f->r.total_simulated, f->e.total);
    assert_rel(f->r.total_analytic, f->e.total, 1e-15);
}

/* ------------------------------------------------------------ vectors */

typedef struct vec_line {
    char name[128], mode[16], want[64];
} vec_line;

/* Lines of expected.tsv (comment lines skipped); returns the count. */
static int read_expected(const char *dir, vec_line *v, int cap)
{
    char path[4096], line[512];
    snprintf(path, sizeof path, "%s/expected.tsv", dir);
    FILE *fp = fopen(path, "r");
    if (!fp)
        fail_msg("cannot open %s", path);
    int n = 0;
    while (n < cap && fgets(line, sizeof line, fp)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        if (sscanf(line, "%127s %15s %63s", v[n].name, v[n].mode, v[n].want) == 3)
            n++;
    }
    fclose(fp);
    return n;
}

/* Load vector line v into f's problem and schedule; *model gets its
 * compute model. */
static void load_line(sim_fixture *f, const char *dir, const vec_line *v, ft_compute_model *model)
{
    assert_int_equal(ft_compute_model_parse(v->mode, model), 0);
    char name[sizeof v->name];
    memcpy(name, v->name, sizeof name);
    ft_schedule_free(f->s);
    ft_problem_free(f->p);
    f->s = NULL;
    f->p = NULL;
    ftt_load_vector(dir, name, &f->p, &f->s);
}

/* Replay every vector of expected.tsv under its compute model; return the
 * simulated totals (NaN for invalid ones) in totals[] if not NULL. */
static int replay_vectors(sim_fixture *f, double *totals, int cap)
{
    const char *dir;
    vec_line v[128];
    FTT_DATADIR(dir);
    int n = read_expected(dir, v, 128);
    assert_true(n >= 50);
    assert_true(n <= cap);
    for (int i = 0; i < n; i++) {
        ft_compute_model model;
        load_line(f, dir, &v[i], &model);
        int rc = run(f, model);
        if (strncmp(v[i].want, "invalid:", 8) == 0) {
            const char *kind = v[i].want + 8;
            if (rc != FT_EINVALID)
                fail_msg("%s (%s): ft_sim_run returns %d, expected FT_EINVALID (%s)", v[i].name, v[i].mode, rc, kind);
            if (strcmp(ft_reason_name(f->r.reason), kind) != 0)
                fail_msg("%s (%s): the simulator says %s (%s), expected %s", v[i].name, v[i].mode, ft_reason_name(f->r.reason),
                         ft_sim_errmsg(f->sim), kind);
            assert_string_equal(ft_reason_name(f->r.analytic_reason), kind);
            assert_true(ft_sim_errmsg(f->sim)[0] != '\0');
            if (totals)
                totals[i] = NAN;
        } else {
            if (rc != FT_OK)
                fail_msg("%s (%s): ft_sim_run returns %d: %s", v[i].name, v[i].mode, rc, ft_sim_errmsg(f->sim));
            assert_string_equal(ft_sim_errmsg(f->sim), "");
            assert_cost(f->r.total_simulated, atof(v[i].want));
            assert_matches_eval(f, model, v[i].name);
            if (totals)
                totals[i] = f->r.total_simulated;
        }
    }
    return n;
}

/* Every vector, both compute models: simulated = expected = analytic, and
 * invalid ones rejected for the expected reason. */
static void test_sim_vectors(void **state)
{
    replay_vectors(*state, NULL, 128);
}

/* Replays share one process-wide model: the vectors twice (the second time
 * through a new handle) give the same totals, to the last bit. */
static void test_sim_many_replays(void **state)
{
    sim_fixture *f = *state;
    double a[128], b[128];
    const char *err;
    int n = replay_vectors(f, a, 128);
    ft_sim_free(f->sim);
    f->sim = NULL;
    assert_int_equal(ft_sim_new(&f->sim, &err), FT_OK);
    assert_int_equal(replay_vectors(f, b, 128), n);
    for (int i = 0; i < n; i++)
        if (!(isnan(a[i]) && isnan(b[i])) && a[i] != b[i])
            fail_msg("vector line %d: first replay %.17g, second %.17g", i, a[i], b[i]);
}

/* Each replay has the whole simulated clock (2^64 fs, about 1.8e10 cost
 * units; sim/clock.h): six replays of a 4e9-unit MatMul in one process,
 * 2.4e10 units in all, each exact; a chain of five (2e10 units in one
 * replay) fails with the limit, and the replay after it runs again. */
static void test_sim_clock_per_replay(void **state)
{
    sim_fixture *f = *state;
    for (int i = 0; i < 6; i++) {
        parse(f, PJ("[32, 32, 32]", "[32, 32, 32]", "[[0, 1]]", "[[2]]", "[4000000000]", "[" MM "]", "10000", "10", "[32, 32]"),
              SJ("[[0]]", "[[32, 32, 32]]", "[[]]"));
        if (run(f, FT_COMPUTE_NATIVE) != FT_OK)
            fail_msg("replay %d: %s", i, ft_sim_errmsg(f->sim));
        assert_true(ft_sim_agrees(&f->r, -1));
        assert_true(f->r.total_simulated >= 4e9 && f->r.total_simulated < 4e9 + 1e3);
    }
    parse(f,
          PJ("[32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32]", "[32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32]",
             "[[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]]", "[[2], [4], [6], [8], [10]]",
             "[4e9, 4e9, 4e9, 4e9, 4e9]", "[" MM ", " MM ", " MM ", " MM ", " MM "]", "10000", "10", "[32, 32]"),
          SJ("[[0], [1], [2], [3], [4]]", "[[32, 32, 32], [32, 32, 32], [32, 32, 32], [32, 32, 32], [32, 32, 32]]",
             "[[], [], [], [], []]"));
    assert_int_equal(run(f, FT_COMPUTE_NATIVE), FT_EINPUT);
    assert_non_null(strstr(ft_sim_errmsg(f->sim), "about 1.8e10 cost units for one replay"));
    parse(f, PJ("[32, 32, 32]", "[32, 32, 32]", "[[0, 1]]", "[[2]]", "[4000000000]", "[" MM "]", "10000", "10", "[32, 32]"),
          SJ("[[0]]", "[[32, 32, 32]]", "[[]]"));
    assert_int_equal(run(f, FT_COMPUTE_NATIVE), FT_OK);
    assert_true(ft_sim_agrees(&f->r, -1));
}

/* Timing terms (ft_timing) with a closed form: for every valid vector,
 * both compute models, and timings that add transfer latency, a write
 * bandwidth of its own, separate channels and launch overhead, with steps
 * overlapping as SPEC says or not at all, the simulator's mechanisms give
 * the analytic latency per subgraph and in total (1e-9).  With double
 * buffering the closed form is exact for subgraphs of one step, which
 * cannot overlap anything; the others must at least run. */
static void test_sim_timing_closed_forms(void **state)
{
    sim_fixture *f = *state;
    const char *dir;
    vec_line v[128];
    FTT_DATADIR(dir);
    int n = read_expected(dir, v, 128);
    /* write bandwidth as a multiple of the read bandwidth (0: the same) */
    static const struct {
        ft_overlap overlap;
        double latency, launch, wfactor;
        int duplex;
    } tm[] = {
        {FT_OVERLAP_STEP, 3.5, 7, 0, 0},   {FT_OVERLAP_STEP, 0, 0, 0.5, 0},  {FT_OVERLAP_STEP, 1, 0, 2, 1},
        {FT_OVERLAP_NONE, 5, 11, 0.75, 0}, {FT_OVERLAP_NONE, 2, 0, 3, 1},    {FT_OVERLAP_PIPELINE, 0, 0, 0, 0},
        {FT_OVERLAP_PIPELINE, 4, 9, 0.5, 1}, {FT_OVERLAP_PIPELINE, 40, 0, 0, 0},
    };
    int exact_pipeline = 0;
    for (int i = 0; i < n; i++) {
        if (strncmp(v[i].want, "invalid:", 8) == 0)
            continue;
        ft_compute_model model;
        const char *name = v[i].name;
        load_line(f, dir, &v[i], &model);
        for (size_t c = 0; c < sizeof tm / sizeof tm[0]; c++) {
            ft_status st;
            f->p->timing.overlap = tm[c].overlap;
            f->p->timing.transfer_latency = tm[c].latency;
            f->p->timing.launch_overhead = tm[c].launch;
            f->p->timing.write_bandwidth = tm[c].wfactor * f->p->bandwidth;
            f->p->timing.duplex = tm[c].duplex;
            assert_int_equal(ft_problem_finish(f->p, &st), FT_OK);
            if (run(f, model) != FT_OK)
                fail_msg("%s (%s), timing %zu: %s", name, v[i].mode, c, ft_sim_errmsg(f->sim));
            ft_eval_free(&f->e);
            assert_int_equal(ft_evaluate(f->p, f->s, model, &f->e, &st), FT_OK);
            double sum = 0;
            for (int g = 0; g < f->e.nsubgraphs; g++) {
                double sim = f->r.sg[g].simulated, ana = f->e.sg[g].latency;
                sum += sim;
                assert_rel(f->r.sg[g].analytic, ana, 1e-15);
                assert_true(sim >= tm[c].launch);
                if (tm[c].overlap == FT_OVERLAP_PIPELINE && f->e.sg[g].steps > 1)
                    continue;
                exact_pipeline += tm[c].overlap == FT_OVERLAP_PIPELINE;
                if (fabs(sim - ana) > 1e-9 * fabs(ana))
                    fail_msg("%s (%s), timing %zu: subgraph %d simulated %.17g, analytic %.17g", name, v[i].mode, c, g, sim, ana);
            }
            assert_rel(f->r.total_simulated, sum, 1e-12);
        }
    }
    assert_true(exact_pipeline > 10);
}

/* ft_search's schedule of every public benchmark, both compute models. */
static void test_sim_benchmark_schedules(void **state)
{
    sim_fixture *f = *state;
    const char *src = getenv("FT_SRCDIR");
    char dir[2048], path[4096];
    snprintf(dir, sizeof dir, "%s/benchmarks", src && *src ? src : FT_SRCDIR);
    DIR *d = opendir(dir);
    if (!d)
        fail_msg("cannot open %s", dir);
    struct dirent *de;
    int nbench = 0;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len < 6 || strcmp(de->d_name + len - 5, ".json") != 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        ft_status st;
        ft_problem_free(f->p);
        f->p = NULL;
        if (ft_problem_load(path, &f->p, &st) != FT_OK) {
            closedir(d);
            fail_msg("%s", st.msg);
        }
        for (int m = 0; m < 2; m++) {
            ft_search_opts o;
            ft_search_opts_init(&o);
            o.model = m ? FT_COMPUTE_OP : FT_COMPUTE_NATIVE;
            o.time_limit = slow() ? 2.0 : 1.0;
            ft_schedule_free(f->s);
            f->s = NULL;
            ft_eval_free(&f->e);
            if (ft_search(f->p, &o, &f->s, &f->e, &st) != FT_OK) {
                closedir(d);
                fail_msg("%s: ft_search: %s", path, st.msg);
            }
            if (run(f, o.model) != FT_OK) {
                closedir(d);
                fail_msg("%s (%s): %s", path, ft_compute_model_name(o.model), ft_sim_errmsg(f->sim));
            }
            assert_matches_eval(f, o.model, de->d_name);
        }
        nbench++;
    }
    closedir(d);
    assert_true(nbench >= 5);
}

/* The fast memory overflows at step 3 only: the failure names subgraph 0,
 * tile 0, step 3, at a simulated time after the first three steps; the
 * analytic evaluator agrees on the place. */
static void test_sim_oom_later_step(void **state)
{
    sim_fixture *f = *state;
    parse(f, LATE_OOM_PROBLEM, LATE_OOM_SCHEDULE);
    assert_int_equal(run(f, FT_COMPUTE_NATIVE), FT_EINVALID);
    assert_int_equal(f->r.reason, FT_R_OOM);
    assert_int_equal(f->r.fail_sg, 0);
    assert_int_equal(f->r.fail_tile, 0);
    assert_int_equal(f->r.fail_step, 3);
    assert_true(f->r.fail_time > 0);
    assert_int_equal(f->r.steps, 3);
    /* steps 0-2 are memory-bound: (5184 + 5184), (9216 + 9216) twice, / 10 */
    assert_cost(f->r.fail_time, (2 * 5184 + 4 * 9216) / 10.0);
    assert_cost(f->r.total_simulated, f->r.fail_time);
    assert_cost(f->r.sg[0].simulated, f->r.fail_time);
    assert_int_equal(f->r.sg[0].steps, 3);
    assert_cost(f->r.sg[0].channel_busy, 1);
    assert_msg_has(ft_sim_errmsg(f->sim), "step 3");
    assert_msg_has(ft_sim_errmsg(f->sim), "occupancy 32768");
    assert_int_equal(f->r.analytic_reason, FT_R_OOM);
    ft_status st;
    ft_eval_free(&f->e);
    assert_int_equal(ft_evaluate(f->p, f->s, FT_COMPUTE_NATIVE, &f->e, &st), FT_EINVALID);
    assert_int_equal(st.step, f->r.fail_step);
    assert_int_equal(st.tile, f->r.fail_tile);
}

/* Overflow in a second subgraph: T1 made at 64 x 64 tiles and retained
 * (20480 elements at most), then resident with the 128 x 128 output buffer
 * of T2 (32768): at capacity 30000 the replay fails at the start of
 * subgraph 1, after subgraph 0's four compute-bound steps of 1000. */
static void test_sim_oom_second_subgraph(void **state)
{
    sim_fixture *f = *state;
    parse(f, PJ("[128, 128, 128]", "[128, 128, 128]", "[[0], [1]]", "[[1], [2]]", "[1000, 1000]", "[" PW ", " PW "]", "30000", "10",
                "[128, 128]"),
          SJ("[[0], [1]]", "[[64, 64, 1], [128, 128, 1]]", "[[1], []]"));
    assert_int_equal(run(f, FT_COMPUTE_NATIVE), FT_EINVALID);
    assert_int_equal(f->r.reason, FT_R_OOM);
    assert_int_equal(f->r.fail_sg, 1);
    assert_int_equal(f->r.fail_tile, 0);
    assert_int_equal(f->r.fail_step, 0);
    assert_cost(f->r.fail_time, 4000);
    assert_cost(f->r.sg[0].simulated, 4000);
    assert_int_equal(f->r.sg[0].steps, 4);
    assert_int_equal(f->r.sg[0].peak_occupancy, 4096 + 16384);
    assert_msg_has(ft_sim_errmsg(f->sim), "resident 16384, output buffers 16384, slices 0");

    f->p->capacity = 32768;
    assert_int_equal(run(f, FT_COMPUTE_NATIVE), FT_OK);
    assert_matches_eval(f, FT_COMPUTE_NATIVE, "retained chain");
    assert_int_equal(f->r.sg[1].peak_occupancy, 32768);
    /* T1 is resident: subgraph 1 only writes T2 (1638.4), while computing 1000 */
    assert_cost(f->r.sg[1].simulated, 1638.4);
    assert_cost(f->r.sg[1].channel_busy, 1);
    assert_cost(f->r.sg[1].compute_busy, 1000 / 1638.4);
}

/* ------------------------------------------------------------ Layout ops */

/* The vectors with Layout ops (L-*), both compute models: the simulator,
 * which maps a Layout op's regions with its own copy of SPEC 4's rule,
 * gives the expected total to the last digit. */
static void test_sim_layout_vectors_exact(void **state)
{
    sim_fixture *f = *state;
    const char *dir;
    vec_line v[128];
    FTT_DATADIR(dir);
    int n = read_expected(dir, v, 128), seen = 0;
    for (int i = 0; i < n; i++) {
        if (strncmp(v[i].name, "L-", 2) != 0)
            continue;
        ft_compute_model model;
        load_line(f, dir, &v[i], &model);
        if (run(f, model) != FT_OK)
            fail_msg("%s (%s): %s", v[i].name, v[i].mode, ft_sim_errmsg(f->sim));
        char a[FT_NUMBUF], b[FT_NUMBUF], c[FT_NUMBUF];
        ft_format_double(a, f->r.total_simulated);
        ft_format_double(b, f->r.total_analytic);
        ft_format_double(c, atof(v[i].want));
        if (strcmp(a, b) != 0 || strcmp(a, c) != 0)
            fail_msg("%s (%s): simulated %s, analytic %s, expected %s", v[i].name, v[i].mode, a, b, c);
        assert_matches_eval(f, model, v[i].name);
        seen++;
    }
    assert_true(seen >= 10);
}

/* ft_search's schedules of problems with Layout ops, both compute models,
 * replay as ft_evaluate scores them; and a Layout op whose products of
 * lengths pass 64 bits maps the same regions in both. */
static void test_sim_layout_search_schedules(void **state)
{
    sim_fixture *f = *state;
    static const struct {
        const char *name, *json;
    } probs[] = {{"im2col", IM_PROBLEM}, {"epilogue", EP_PROBLEM}, {"nondiv", ND_PROBLEM}, {"upsample", UP_PROBLEM}, {"cnn", CNN_PROBLEM}};
    for (size_t i = 0; i < sizeof probs / sizeof probs[0]; i++)
        for (int m = 0; m < 2; m++) {
            ft_search_opts o;
            ft_status st;
            ft_schedule_free(f->s);
            ft_problem_free(f->p);
            f->s = NULL;
            f->p = NULL;
            if (ft_problem_parse(probs[i].json, probs[i].name, &f->p, &st) != FT_OK)
                fail_msg("%s: %s", probs[i].name, st.msg);
            ft_eval_free(&f->e);
            ft_search_opts_init(&o);
            o.model = m ? FT_COMPUTE_OP : FT_COMPUTE_NATIVE;
            o.time_limit = 0.5;
            if (ft_search(f->p, &o, &f->s, &f->e, &st) != FT_OK)
                fail_msg("%s: ft_search: %s", probs[i].name, st.msg);
            if (run(f, o.model) != FT_OK)
                fail_msg("%s (%s): %s", probs[i].name, ft_compute_model_name(o.model), ft_sim_errmsg(f->sim));
            assert_matches_eval(f, o.model, probs[i].name);
        }
    parse(f, BIG_PROBLEM, BIG_SCHEDULE);
    assert_int_equal(run(f, FT_COMPUTE_NATIVE), FT_OK);
    assert_matches_eval(f, FT_COMPUTE_NATIVE, "big");
    assert_cost(f->r.total_simulated, 3 * 2333333.334);
}

/* Structural faults come back with the validator's reasons, found by the
 * simulator's own checks. */
static void test_sim_structural(void **state)
{
    sim_fixture *f = *state;
    static const struct {
        const char *schedule;
        int reason;
    } cases[] = {
        {SJ("[[0], [1], [2]]", "[[128, 128, 1], [128, 128, 1]]", "[[], [], []]"), FT_R_LENGTH_MISMATCH},
        {SJ("[[0], [1], []]", "[[128, 128, 1], [128, 128, 1], [128, 128, 1]]", "[[], [], []]"), FT_R_EMPTY_SUBGRAPH},
        {SJ("[[0], [1], [2, 2]]", "[[128, 128, 1], [128, 128, 1], [128, 128, 1]]", "[[], [], []]"), FT_R_REPEATED_OP},
        {SJ("[[0], [1], [7]]", "[[128, 128, 1], [128, 128, 1], [128, 128, 1]]", "[[], [], []]"), FT_R_OP_OUT_OF_RANGE},
        {SJ("[[0], [1], [2]]", "[[128, 128, 1], [0, 128, 1], [128, 128, 1]]", "[[], [], []]"), FT_R_GRANULARITY_BELOW_ONE},
        {SJ("[[0], [1], [2]]", "[[128, 129, 1], [128, 128, 1], [128, 128, 1]]", "[[], [], []]"), FT_R_GRANULARITY_ABOVE_NATIVE},
        {SJO("[[0], [1], [2]]", "[[64, 64, 1], [128, 128, 1], [128, 128, 1]]", "[[], [], []]", "[[0, 1, 2, 2], null, null]"),
         FT_R_BAD_TRAVERSAL},
        {SJO("[[0], [1], [2]]", "[[64, 64, 1], [128, 128, 1], [128, 128, 1]]", "[[], [], []]", "[[0, 1, 2], null, null]"),
         FT_R_BAD_TRAVERSAL},
        {SJ("[[1], [0], [2]]", "[[128, 128, 1], [128, 128, 1], [128, 128, 1]]", "[[], [], []]"), FT_R_TENSOR_UNAVAILABLE},
        {SJ("[[0], [1], [2]]", "[[128, 128, 1], [128, 128, 1], [128, 128, 1]]", "[[], [3], []]"), FT_R_RETAIN_NOT_PRODUCED},
        {SJ("[[0], [1, 2]]", "[[128, 128, 1], [128, 128, 1]]", "[[1], []]"), FT_R_NONE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        parse(f, EX3_PROBLEM, cases[i].schedule);
        int rc = run(f, FT_COMPUTE_NATIVE);
        if (cases[i].reason == FT_R_NONE) {
            assert_int_equal(rc, FT_OK);
            assert_matches_eval(f, FT_COMPUTE_NATIVE, "ex3 retained");
            continue;
        }
        if (rc != FT_EINVALID || f->r.reason != cases[i].reason)
            fail_msg("case %zu: rc %d, reason %s (%s), expected %s", i, rc, ft_reason_name(f->r.reason), ft_sim_errmsg(f->sim),
                     ft_reason_name(cases[i].reason));
        assert_int_equal(f->r.analytic_reason, cases[i].reason);
        assert_true(f->r.fail_time == 0);
        assert_int_equal(f->r.steps, 0);
    }
    /* Not connected: ops 0 and 1 of ex3 share T1 only through op 2 */
    parse(f,
          PJ("[128, 128, 128, 128]", "[128, 128, 128, 128]", "[[0], [2]]", "[[1], [3]]", "[1500, 1500]", "[" PW ", " PW "]", "50000",
             "10", "[128, 128]"),
          SJ("[[0, 1]]", "[[128, 128, 1]]", "[[]]"));
    assert_int_equal(run(f, FT_COMPUTE_NATIVE), FT_EINVALID);
    assert_int_equal(f->r.reason, FT_R_NOT_CONNECTED);
}

/* Bad calls and files fail with FT_EINPUT and a message; the model stays
 * usable after a failure. */
static void test_sim_errors(void **state)
{
    sim_fixture *f = *state;
    ft_sim_opts o;
    parse(f, EX3_PROBLEM, SJ("[[0], [1], [2]]", "[[128, 128, 1], [128, 128, 1], [128, 128, 1]]", "[[], [], []]"));
    assert_int_equal(ft_sim_run(NULL, f->p, f->s, NULL, &f->r), FT_EINPUT);
    assert_int_equal(ft_sim_run(f->sim, NULL, f->s, NULL, &f->r), FT_EINPUT);
    assert_msg_has(ft_sim_errmsg(f->sim), "no problem");
    assert_string_equal(ft_sim_errmsg(NULL), "no simulator handle");

    ft_sim_opts_init(&o);
    o.trace_json = "/nonexistent-dir/trace.json";
    assert_int_equal(ft_sim_run(f->sim, f->p, f->s, &o, &f->r), FT_EINPUT);
    assert_msg_has(ft_sim_errmsg(f->sim), "/nonexistent-dir/trace.json");

    /* a step longer than the clock can count */
    ft_problem *p = f->p;
    p->ops[1].base_cost = 1e10;
    assert_int_equal(run(f, FT_COMPUTE_NATIVE), FT_EINPUT);
    assert_msg_has(ft_sim_errmsg(f->sim), "clock");
    p->ops[1].base_cost = 1500;
    assert_int_equal(run(f, FT_COMPUTE_NATIVE), FT_OK);
    assert_string_equal(ft_sim_errmsg(f->sim), "");
    assert_cost(f->r.total_simulated, 11468.8); /* example 3A */
    assert_matches_eval(f, FT_COMPUTE_NATIVE, "ex3 split");

    /* without the analytic side */
    ft_sim_opts_init(&o);
    o.analytic = 0;
    ft_sim_result_free(&f->r);
    assert_int_equal(ft_sim_run(f->sim, f->p, f->s, &o, &f->r), FT_OK);
    assert_true(isnan(f->r.total_analytic));
    assert_true(isnan(f->r.sg[0].analytic));
    assert_cost(f->r.total_simulated, 11468.8);
}

/* Traces: written on success, nothing left behind on failure. */
static void test_sim_trace_files(void **state)
{
    sim_fixture *f = *state;
    char json[512], vcd[512];
    struct stat sb;
    snprintf(f->dir, sizeof f->dir, "/tmp/ft-test-sim.XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(json, sizeof json, "%s/t.json", f->dir);
    snprintf(vcd, sizeof vcd, "%s/t.vcd", f->dir);
    ft_sim_opts o;
    ft_sim_opts_init(&o);
    o.trace_json = json;
    o.trace_vcd = vcd;

    parse(f, LATE_OOM_PROBLEM, LATE_OOM_SCHEDULE);
    assert_int_equal(ft_sim_run(f->sim, f->p, f->s, &o, &f->r), FT_EINVALID);
    assert_int_not_equal(stat(json, &sb), 0);
    assert_int_not_equal(stat(vcd, &sb), 0);

    f->p->capacity = 40000;
    ft_sim_result_free(&f->r);
    assert_int_equal(ft_sim_run(f->sim, f->p, f->s, &o, &f->r), FT_OK);
    assert_int_equal(stat(json, &sb), 0);
    assert_true(sb.st_size > 0);
    assert_int_equal(stat(vcd, &sb), 0);
    assert_true(sb.st_size > 0);
    assert_matches_eval(f, FT_COMPUTE_NATIVE, "late-oom at 40000");
}

/* The trace options: the target's name and clock reach the files, the
 * save file is written, a window limits the trace but not the replay; a
 * window past the last step fails and leaves nothing. */
static void test_sim_trace_target(void **state)
{
    sim_fixture *f = *state;
    char json[512], vcd[512], gtkw[512];
    struct stat sb;
    snprintf(f->dir, sizeof f->dir, "/tmp/ft-test-sim.XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(json, sizeof json, "%s/t.json", f->dir);
    snprintf(vcd, sizeof vcd, "%s/t.vcd", f->dir);
    snprintf(gtkw, sizeof gtkw, "%s/t.gtkw", f->dir);
    ft_sim_opts o;
    ft_sim_opts_init(&o);
    assert_null(o.target);
    assert_true(o.clock_hz == 0 && o.window_count == 0 && !o.trace_gtkw);
    o.trace_json = json;
    o.trace_vcd = vcd;
    o.trace_gtkw = gtkw;
    o.target = "machine-x";
    o.clock_hz = 2e9;
    o.window_first = 1;
    o.window_count = 1;
    parse(f, EX3_PROBLEM, SJ("[[0], [1], [2]]", "[[128, 128, 1], [128, 128, 1], [128, 128, 1]]", "[[], [], []]"));
    assert_int_equal(ft_sim_run(f->sim, f->p, f->s, &o, &f->r), FT_OK);
    assert_int_equal(f->r.steps, 3); /* the replay is whole */
    assert_cost(f->r.total_simulated, 11468.8);
    FILE *fp = fopen(json, "r");
    char buf[1 << 14];
    assert_non_null(fp);
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    buf[n] = '\0';
    fclose(fp);
    assert_non_null(strstr(buf, "\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,\"args\":{\"name\":\"machine-x\"}"));
    assert_non_null(strstr(buf, "\"clock_hz\":2000000000"));
    assert_non_null(strstr(buf, "\"window\":{\"first_step\":1,\"steps\":1}"));
    assert_null(strstr(buf, "\"replay_step\":0"));
    assert_non_null(strstr(buf, "\"replay_step\":1"));
    assert_null(strstr(buf, "\"replay_step\":2"));
    assert_int_equal(stat(gtkw, &sb), 0);
    fp = fopen(vcd, "r");
    assert_non_null(fp);
    n = fread(buf, 1, sizeof buf - 1, fp);
    buf[n] = '\0';
    fclose(fp);
    assert_non_null(strstr(buf, "$timescale 1 ps $end"));

    o.window_first = 3;
    ft_sim_result_free(&f->r);
    unlink(json);
    unlink(vcd);
    unlink(gtkw);
    assert_int_equal(ft_sim_run(f->sim, f->p, f->s, &o, &f->r), FT_EINPUT);
    assert_msg_has(ft_sim_errmsg(f->sim), "trace window: step 3 is past the replay's last step (3 steps: 0 to 2)");
    assert_int_not_equal(stat(json, &sb), 0);
    assert_int_not_equal(stat(vcd, &sb), 0);
    assert_int_not_equal(stat(gtkw, &sb), 0);
    o.window_first = 0;
    o.clock_hz = -1;
    ft_sim_result_free(&f->r);
    assert_int_equal(ft_sim_run(f->sim, f->p, f->s, &o, &f->r), FT_EINPUT);
    assert_msg_has(ft_sim_errmsg(f->sim), "clock_hz -1");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_sim_vectors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sim_many_replays, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sim_clock_per_replay, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sim_timing_closed_forms, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sim_oom_later_step, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sim_oom_second_subgraph, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sim_structural, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sim_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sim_trace_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sim_trace_target, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sim_benchmark_schedules, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sim_layout_vectors_exact, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sim_layout_search_schedules, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
