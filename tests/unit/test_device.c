/* test_device.c - cmocka tests of the whole-device terms of the cost model (ft_timing: units in waves sharing the slow memory, the shared cache, the step overhead), their closed forms, the bounds under them, their target settings, and the scheduler choosing by them. */
#include "ft_testutil.h"

#include "../../sched/cost/cost.h"
#include "fusetile/target.h"

#include <unistd.h>

/* One Pointwise op on a 512 x 512 tensor, bandwidth 10, native 128 x 128:
 * at 128 x 128 it runs 16 tiles of one step, each loading and writing
 * 16384 elements (memory 3276.8) and computing its base cost. */
static ft_problem *load(double base_cost)
{
    char json[512];
    snprintf(json, sizeof json,
             "{\"widths\": [512, 512], \"heights\": [512, 512], \"inputs\": [[0]], \"outputs\": [[1]], \"base_costs\": [%g],"
             " \"op_types\": [\"Pointwise\"], \"fast_memory_capacity\": 100000, \"slow_memory_bandwidth\": 10,"
             " \"native_granularity\": [128, 128]}",
             base_cost);
    return ftt_parse(json, "device.json");
}

static double total(const ft_problem *p, const char *sched_json)
{
    ft_schedule *s;
    ft_status st;
    if (ft_schedule_parse(sched_json, "device.schedule.json", &s, &st) != FT_OK)
        fail_msg("%s", st.msg);
    ft_eval e;
    if (ft_evaluate(p, s, FT_COMPUTE_NATIVE, &e, &st) != FT_OK)
        fail_msg("%s", st.msg);
    double t = e.total;
    ft_eval_free(&e);
    ft_schedule_free(s);
    return t;
}

/* A square MatMul of n x n x n on a native 128 x 128 tile (base cost 1000),
 * with the fast memory's capacity and the bandwidth given. */
static ft_problem *matmul(int n, double capacity, double bandwidth)
{
    char json[512];
    snprintf(json, sizeof json,
             "{\"widths\": [%d, %d, %d], \"heights\": [%d, %d, %d], \"inputs\": [[0, 1]], \"outputs\": [[2]],"
             " \"base_costs\": [1000], \"op_types\": [\"MatMul\"], \"fast_memory_capacity\": %.17g,"
             " \"slow_memory_bandwidth\": %.17g, \"native_granularity\": [128, 128]}",
             n, n, n, n, n, n, capacity, bandwidth);
    return ftt_parse(json, "mm.json");
}

/* A schedule of op 0 alone at a square tile of side `tile` and k-slice k
 * (the text is static: valid until the next call). */
static const char *one_subgraph(int tile, int k)
{
    static char json[256];
    snprintf(json, sizeof json,
             "{\"subgraphs\": [[0]], \"granularities\": [[%d, %d, %d]], \"tensors_to_retain\": [[]], \"traversal_orders\": [null]}",
             tile, tile, k);
    return json;
}

static const char *ONE = "{\"subgraphs\": [[0]], \"granularities\": [[128, 128, 1]], \"tensors_to_retain\": [[]], \"traversal_orders\": [null]}";

/* Waves: 16 compute-bound tiles (compute 10000).  One unit: 16 x 10000.
 * Four units: 4 waves, each tile at 10/4 of bandwidth, memory 13107.2 >
 * compute.  Three units: 5 waves of 3 (memory 9830.4 < compute: 10000
 * each) and one of 1 (10000). */
static void test_device_waves(void **state)
{
    (void)state;
    ft_problem *p = load(10000);
    assert_rel(total(p, ONE), 160000, 1e-12);
    p->timing.units = 4;
    assert_rel(total(p, ONE), 4 * 13107.2, 1e-12);
    p->timing.units = 3;
    assert_rel(total(p, ONE), 6 * 10000, 1e-12);
    /* more units than tiles: one wave of 16 at 10/16 */
    p->timing.units = 64;
    assert_rel(total(p, ONE), 32768 / (10.0 / 16), 1e-12);
    ft_problem_free(p);
    /* memory-bound tiles share the bandwidth: as fast as one unit */
    p = load(100);
    double one = total(p, ONE);
    p->timing.units = 3;
    assert_rel(total(p, ONE), one, 1e-12);
    ft_problem_free(p);
}

/* The shared cache: the subgraph moves 2 x 262144 elements; a cache of
 * that many serves them at its bandwidth; with one element less the steps
 * still move at the cache's bandwidth, but the subgraph takes at least its
 * footprint's time at the slow memory's. */
static void test_device_cache(void **state)
{
    (void)state;
    ft_problem *p = load(100);
    p->timing.cache_bandwidth = 100;
    p->timing.cache_capacity = 524288;
    assert_rel(total(p, ONE), 16 * 32768 / 100.0, 1e-12);
    p->timing.cache_capacity = 524287;
    assert_rel(total(p, ONE), 16 * 3276.8, 1e-12);
    ft_problem_free(p);
}

/* The step overhead adds to every step's compute. */
static void test_device_step_overhead(void **state)
{
    (void)state;
    ft_problem *p = load(10000);
    p->timing.step_overhead = 50;
    assert_rel(total(p, ONE), 16 * 10050, 1e-12);
    ft_problem_free(p);
}

/* The tile overhead adds to each tile's last k-step only: 16 one-step
 * tiles pay it 16 times; a MatMul of 4 tiles of 4 k-steps (compute-bound)
 * pays it 4 times, not 16.  The MatMul tile overhead adds to it on the
 * MatMul's tiles only: the Pointwise subgraph pays none of it.  The
 * candidate bound of kernel_time counts both (ft_kernel_time stays above
 * the bound, test_measured). */
static void test_device_tile_overhead(void **state)
{
    (void)state;
    ft_problem *p = load(10000);
    p->timing.tile_overhead = 70;
    assert_rel(total(p, ONE), 16 * 10070, 1e-12);
    p->timing.step_overhead = 50;
    assert_rel(total(p, ONE), 16 * 10120, 1e-12);
    p->timing.matmul_tile_overhead = 1000;
    assert_rel(total(p, ONE), 16 * 10120, 1e-12);
    ft_problem_free(p);
    p = matmul(256, 1000000, 1e12);
    double plain = total(p, one_subgraph(128, 64));
    p->timing.tile_overhead = 300;
    assert_rel(total(p, one_subgraph(128, 64)) - plain, 4 * 300, 1e-9);
    p->timing.matmul_tile_overhead = 200;
    assert_rel(total(p, one_subgraph(128, 64)) - plain, 4 * 500, 1e-9);
    ft_problem_free(p);
}

/* Unpadded Pointwise compute (ft_problem.pointwise_exact, a target's
 * compute.pointwise_unpadded): at 64 x 64 tiles, 64 tiles of a quarter of
 * a native tile each.  Padded, each pays a whole native tile: 64 x 10000;
 * unpadded 64 x 2500, as 16 native tiles do.  The lower bound is the
 * exact compute, and a MatMul keeps its padding. */
static void test_device_pointwise_unpadded(void **state)
{
    (void)state;
    static const char *QUARTER =
        "{\"subgraphs\": [[0]], \"granularities\": [[64, 64, 1]], \"tensors_to_retain\": [[]], \"traversal_orders\": [null]}";
    ft_problem *p = load(10000);
    p->bandwidth = 1e9; /* compute-bound: the totals are the compute */
    assert_rel(total(p, QUARTER), 64 * 10000, 1e-9);
    assert_rel(total(p, ONE), 16 * 10000, 1e-9);
    p->pointwise_exact = 1;
    assert_rel(total(p, QUARTER), 64 * 2500, 1e-9);
    assert_rel(total(p, ONE), 16 * 10000, 1e-9);
    double c;
    ft_lower_bound(p, FT_COMPUTE_NATIVE, &c, NULL);
    assert_rel(c, 16 * 10000, 1e-12);
    assert_true(ft_lower_bound_capacity(p, FT_COMPUTE_NATIVE, NULL, NULL) <= 64 * 2500 * (1 + 1e-12));
    ft_problem_free(p);
    /* a MatMul of a 64 x 64 output still pays its native tile */
    p = matmul(64, 100000, 1e9);
    double padded = total(p, one_subgraph(64, 64));
    p->pointwise_exact = 1;
    assert_rel(total(p, one_subgraph(64, 64)), padded, 1e-12);
    ft_problem_free(p);
}

/* The bounds stay below the evaluation with every term (unpadded Pointwise
 * compute too), and the search's
 * schedule on several units retains nothing (a retained tensor is refused
 * there). */
static void test_device_bounds_and_retention(void **state)
{
    (void)state;
    ft_gen_opts go;
    ft_gen_opts_init(&go);
    go.seed = 7;
    go.nops = 12;
    ft_problem *p;
    ft_status st;
    assert_int_equal(ft_generate(&go, &p, &st), FT_OK);
    p->timing.units = 8;
    p->timing.step_overhead = 3;
    p->timing.tile_overhead = 11;
    p->timing.cache_capacity = p->capacity * 4;
    p->timing.cache_bandwidth = p->bandwidth * 3;
    p->pointwise_exact = 1;
    assert_int_equal(ft_problem_finish(p, &st), FT_OK);
    ft_search_opts o;
    ft_search_opts_init(&o);
    o.time_limit = ftt_slow() ? 4 : 1;
    o.threads = 1;
    ft_schedule *s;
    ft_eval ev;
    assert_int_equal(ft_search(p, &o, &s, &ev, &st), FT_OK);
    printf("  8 units: total %.17g, bound %.17g, capacity bound %.17g\n", ev.total, ev.lower_bound, ev.capacity_bound);
    assert_true(ev.lower_bound <= ev.total * (1 + 1e-12));
    assert_true(ev.capacity_bound <= ev.total * (1 + 1e-12));
    for (int i = 0; i < s->nsubgraphs; i++)
        assert_int_equal(s->sg[i].nretain, 0);
    ft_eval_free(&ev);
    /* a retained tensor on 8 units: refused, naming the rule */
    int t = p->ops[s->sg[0].ops[0]].output;
    if (s->nsubgraphs > 1 && ft_subgraph_set_retain(&s->sg[0], &t, 1) == FT_OK) {
        assert_int_equal(ft_schedule_validate(p, s, &st), FT_EINVALID);
        assert_non_null(strstr(st.msg, "units"));
    }
    ft_schedule_free(s);
    ft_problem_free(p);
}

/* Target settings: units, shared_cache, efficiencies and step overhead
 * load, apply and describe; bad values name the setting. */
static void test_device_target_settings(void **state)
{
    (void)state;
    char path[] = "/tmp/ft-device-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    const char *good = "name = \"d\"; clock_hz = 1e9; element_bytes = 2; units = 4;\n"
                       "fast_memory = { capacity_bytes = 65536; };\n"
                       "slow_memory = { read_bandwidth = 64.0; efficiency = 0.5; };\n"
                       "shared_cache = { capacity_bytes = 1048576; bandwidth = 256.0; partitions = 2; };\n"
                       "compute = { native_granularity = { w = 32; h = 32; }; matmul_macs_per_cycle = 1024.0;\n"
                       "  pointwise_elements_per_cycle = 64.0; matmul_efficiency = 0.8; pointwise_efficiency = 0.5;\n"
                       "  pointwise_unpadded = true; };\n"
                       "execution = { step_overhead = 20.0; tile_overhead = 30.0; matmul_tile_overhead = 40.0; };\n";
    FILE *f = fopen(path, "w");
    fputs(good, f);
    fclose(f);
    ft_target *t;
    ft_status st;
    if (ft_target_load(path, &t, &st) != FT_OK)
        fail_msg("%s", st.msg);
    ft_problem *p = load(1);
    assert_int_equal(ft_target_apply(t, p, 0, &st), FT_OK);
    assert_int_equal(p->timing.units, 4);
    assert_rel(p->bandwidth, 64 * 0.5 / 2, 1e-12);
    assert_rel(p->timing.cache_capacity, 262144, 1e-12); /* one partition's */
    assert_rel(p->timing.cache_bandwidth, 128, 1e-12);
    assert_rel(p->timing.step_overhead, 20, 1e-12);
    assert_rel(p->timing.tile_overhead, 30, 1e-12);
    assert_rel(p->timing.matmul_tile_overhead, 40, 1e-12);
    assert_int_equal(p->pointwise_exact, 1);
    assert_rel(p->ops[0].base_cost, 32 * 32 / (64 * 0.5), 1e-12);
    char buf[1024];
    ft_target_describe(t, buf, sizeof buf);
    assert_non_null(strstr(buf, "4 units"));
    assert_non_null(strstr(buf, "shared cache 1048576 B in partitions"));
    assert_non_null(strstr(buf, "tile overhead 30 cycles"));
    assert_non_null(strstr(buf, "MatMul tile overhead 40 cycles"));
    assert_non_null(strstr(buf, "Pointwise ops unpadded"));
    ft_target_free(t);
    ft_problem_free(p);
    static const struct {
        const char *from, *to, *msg;
    } bad[] = {
        {"units = 4;", "units = 0;", "units is 0, must be 1 to"},
        {"efficiency = 0.5;", "efficiency = 1.5;", "slow_memory.efficiency is 1.5, must be above 0 and at most 1"},
        {"matmul_efficiency = 0.8;", "matmul_efficiency = 0.0;", "compute.matmul_efficiency is 0"},
        {"bandwidth = 256.0; partitions", "partitions", "missing required setting shared_cache.bandwidth"},
        {"step_overhead = 20.0;", "step_overhead = -1.0;", "execution.step_overhead is -1"},
        {"tile_overhead = 30.0;", "tile_overhead = -1.0;", "execution.tile_overhead is -1"},
        {"matmul_tile_overhead = 40.0;", "matmul_tile_overhead = -1.0;", "execution.matmul_tile_overhead is -1"},
        {"partitions = 2;", "partitions = 0;", "shared_cache.partitions is 0, must be 1 to"},
        {"pointwise_unpadded = true;", "pointwise_unpadded = 1.5;", "compute.pointwise_unpadded"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char text[2048];
        const char *at = strstr(good, bad[i].from);
        assert_non_null(at);
        snprintf(text, sizeof text, "%.*s%s%s", (int)(at - good), good, bad[i].to, at + strlen(bad[i].from));
        f = fopen(path, "w");
        fputs(text, f);
        fclose(f);
        assert_int_equal(ft_target_load(path, &t, &st), FT_EINPUT);
        if (!strstr(st.msg, bad[i].msg))
            fail_msg("expected '%s' in: %s", bad[i].msg, st.msg);
        printf("  %s\n", st.msg);
    }
    unlink(path);
}

/* ------------------------------------------------- the scheduler's choice */

/* One MatMul C = A x B of n x n x n on targets/gpu-h100.cfg (132 SMs, a
 * 50 MiB L2, efficiencies and step overhead), or on the same target cut to
 * one unit without the cache (whole = 0): the problem (caller frees). */
static ft_problem *gemm_on_h100(int n, int whole)
{
    char json[512];
    snprintf(json, sizeof json,
             "{\"widths\": [%d, %d, %d], \"heights\": [%d, %d, %d], \"inputs\": [[0, 1]], \"outputs\": [[2]],"
             " \"base_costs\": [1], \"op_types\": [\"MatMul\"], \"fast_memory_capacity\": 100000,"
             " \"slow_memory_bandwidth\": 10, \"native_granularity\": [128, 128]}",
             n, n, n, n, n, n);
    ft_problem *p = ftt_parse(json, "gemm.json");
    ft_target *t;
    ft_status st;
    if (ft_target_load(ftt_src_path("targets/gpu-h100.cfg"), &t, &st) != FT_OK)
        fail_msg("%s", st.msg);
    assert_int_equal(ft_target_apply(t, p, 0, &st), FT_OK);
    ft_target_free(t);
    assert_int_equal(p->timing.units, 132);
    if (!whole) {
        p->timing.units = 1;
        p->timing.cache_capacity = 0;
        p->timing.cache_bandwidth = 0;
        assert_int_equal(ft_problem_finish(p, &st), FT_OK);
    }
    return p;
}

/* ft_search on p, deterministic: one thread, a bounded number of restarts
 * and a time limit the search does not reach (one op: the exhaustive passes
 * end on their own).  Returns the schedule (caller frees) and its total. */
static ft_schedule *search_det(const ft_problem *p, double *total)
{
    ft_search_opts o;
    ft_search_opts_init(&o);
    o.threads = 1;
    o.seed = 1;
    o.max_restarts = 1;
    o.time_limit = 600;
    ft_schedule *s;
    ft_eval ev;
    ft_status st;
    assert_int_equal(ft_search(p, &o, &s, &ev, &st), FT_OK);
    *total = ev.total;
    ft_eval_free(&ev);
    return s;
}

/* Schedule s evaluated on p (it must be valid there). */
static double eval_on(const ft_problem *p, const ft_schedule *s)
{
    ft_eval e;
    ft_status st;
    if (ft_evaluate(p, s, FT_COMPUTE_NATIVE, &e, &st) != FT_OK)
        fail_msg("%s", st.msg);
    double t = e.total;
    ft_eval_free(&e);
    return t;
}

/* The scheduler uses the whole-device terms: on one unit a GEMM's best
 * tiles are large (few k-steps, each paying the step overhead; few re-reads
 * of A and B at the whole HBM bandwidth).  On 132 SMs with the L2 the
 * search picks a granularity that makes more tiles, to fill the units'
 * waves, and that schedule beats the one-unit schedule replayed on the
 * whole device.  Deterministic (one thread, bounded restarts). */
static void test_device_search_uses_units(void **state)
{
    (void)state;
    const int n = ftt_valgrind() ? 512 : 1024;
    ft_problem *one = gemm_on_h100(n, 0), *dev = gemm_on_h100(n, 1);
    double t_one, t_dev;
    ft_schedule *s_one = search_det(one, &t_one);
    ft_schedule *s_dev = search_det(dev, &t_dev);
    assert_int_equal(s_one->nsubgraphs, 1);
    assert_int_equal(s_dev->nsubgraphs, 1);
    const ft_subgraph *g1 = &s_one->sg[0], *gd = &s_dev->sg[0];
    long long tiles1 = ((n + g1->w - 1) / g1->w) * ((n + g1->h - 1) / g1->h);
    long long tilesd = ((n + gd->w - 1) / gd->w) * ((n + gd->h - 1) / gd->h);
    double one_on_dev = eval_on(dev, s_one);
    printf("  %d^3 GEMM: one unit chose %lld x %lld x %lld (%lld tiles), total %.17g there\n", n, (long long)g1->w,
           (long long)g1->h, (long long)g1->k, tiles1, t_one);
    printf("  132 SMs + L2 chose %lld x %lld x %lld (%lld tiles), total %.17g; the one-unit schedule there: %.17g\n",
           (long long)gd->w, (long long)gd->h, (long long)gd->k, tilesd, t_dev, one_on_dev);
    /* a different schedule, with more tiles to spread over the units */
    assert_true(g1->w != gd->w || g1->h != gd->h || g1->k != gd->k);
    assert_true(tilesd > tiles1);
    /* better on the whole device than the one-unit choice (by > 10%) */
    assert_rel(t_dev, eval_on(dev, s_dev), 1e-12);
    assert_true(t_dev < 0.9 * one_on_dev);
    /* and each search's choice is at least as good on its own machine */
    assert_true(t_one <= eval_on(one, s_dev) * (1 + 1e-12));
    ft_schedule_free(s_one);
    ft_schedule_free(s_dev);
    ft_problem_free(one);
    ft_problem_free(dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_device_waves),
        cmocka_unit_test(test_device_cache),
        cmocka_unit_test(test_device_step_overhead),
        cmocka_unit_test(test_device_tile_overhead),
        cmocka_unit_test(test_device_pointwise_unpadded),
        cmocka_unit_test(test_device_bounds_and_retention),
        cmocka_unit_test(test_device_target_settings),
        cmocka_unit_test(test_device_search_uses_units),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
