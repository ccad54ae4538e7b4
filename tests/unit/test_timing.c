/* test_timing.c - cmocka tests of the machine terms of the cost model: ft_step_time in every overlap mode, the per-subgraph launch, fill and drain, the lower bound, native k, larger granularities and their validation. */
#include "ft_testutil.h"

#include "../../sched/cost/cost.h"

/* One Pointwise op on a 128 x 128 tensor (base cost 100) and one MatMul
 * 128 x 256 times 256 x 128 (base cost 64), bandwidth 10, native 128 x 128. */
static const char *PROBLEM =
    "{\"widths\": [128, 128, 256, 128, 128], \"heights\": [128, 128, 128, 256, 128],"
    " \"inputs\": [[0], [2, 3]], \"outputs\": [[1], [4]], \"base_costs\": [100, 64],"
    " \"op_types\": [\"Pointwise\", \"MatMul\"], \"fast_memory_capacity\": 1000000,"
    " \"slow_memory_bandwidth\": 10, \"native_granularity\": [128, 128]}";

static ft_problem *load(void)
{
    ft_problem *p;
    ft_status st;
    if (ft_problem_parse(PROBLEM, "timing.json", &p, &st) != FT_OK)
        fail_msg("%s", st.msg);
    return p;
}

static ft_schedule *sched(const char *json)
{
    ft_schedule *s;
    ft_status st;
    if (ft_schedule_parse(json, "timing.schedule.json", &s, &st) != FT_OK)
        fail_msg("%s", st.msg);
    return s;
}

/* All-zero timing is SPEC's step, bit for bit. */
static void test_step_time_spec(void **state)
{
    (void)state;
    ft_problem *p = load();
    double mem;
    assert_true(p->timing.overlap == FT_OVERLAP_STEP && p->timing.transfer_latency == 0);
    for (int64_t l = 0; l < 5000; l += 337)
        for (int64_t w = 0; w < 5000; w += 511) {
            double c = (double)(l * 7 % 1000) / 3;
            double want_m = (double)(l + w) / p->bandwidth;
            double got = ft_step_time(p, c, l, w, &mem);
            assert_true(mem == want_m);
            assert_true(got == (c > want_m ? c : want_m));
        }
    ft_problem_free(p);
}

/* Each overlap mode and channel arrangement, by hand: bandwidth 10, write
 * bandwidth 5, latency 7; a step loading 100, writing 50, computing c. */
static void test_step_time_modes(void **state)
{
    (void)state;
    ft_problem *p = load();
    double mem;
    p->timing.write_bandwidth = 5;
    p->timing.transfer_latency = 7;
    /* shared channel, SPEC overlap: 100/10 + 50/5 + 7 = 27 */
    assert_cost(ft_step_time(p, 20, 100, 50, &mem), 27);
    assert_cost(mem, 27);
    assert_cost(ft_step_time(p, 30, 100, 50, &mem), 30);
    /* nothing moves: no latency */
    assert_cost(ft_step_time(p, 3, 0, 0, &mem), 3);
    assert_cost(mem, 0);
    /* separate channels: max(7 + 10, 7 + 10) = 17; only writes: 7 + 10 */
    p->timing.duplex = 1;
    assert_cost(ft_step_time(p, 12, 100, 50, &mem), 17);
    assert_cost(ft_step_time(p, 12, 100, 20, &mem), 17);
    assert_cost(mem, 17);
    assert_cost(ft_step_time(p, 1, 0, 50, &mem), 17);
    /* no overlap: (7 + 10) + 12 + (7 + 10) = 46, whatever the channels */
    p->timing.overlap = FT_OVERLAP_NONE;
    assert_cost(ft_step_time(p, 12, 100, 50, &mem), 46);
    assert_cost(mem, 34);
    p->timing.duplex = 0;
    assert_cost(ft_step_time(p, 12, 100, 50, NULL), 46);
    assert_cost(ft_step_time(p, 12, 0, 50, NULL), 29);
    /* double buffering: latency hidden, max(c, 10 + 10, (7 + 10 + c) / 2) */
    p->timing.overlap = FT_OVERLAP_PIPELINE;
    assert_cost(ft_step_time(p, 12, 100, 50, &mem), 20);
    assert_cost(mem, 20);
    assert_cost(ft_step_time(p, 25, 100, 50, NULL), 25);
    p->timing.transfer_latency = 60; /* two-buffer period (60 + 10 + 12) / 2 = 41 */
    assert_cost(ft_step_time(p, 12, 100, 50, NULL), 41);
    assert_cost(ft_step_time(p, 12, 0, 50, NULL), 12 > 10 ? 12 : 10);
    ft_problem_free(p);
}

/* Per subgraph: launch overhead; with double buffering the fill and drain
 * L + L + min(first loads + last writes, last compute), and a subgraph of
 * one step that overlaps nothing. */
static void test_subgraph_terms(void **state)
{
    (void)state;
    ft_problem *p = load();
    ft_status st;
    /* op 0 alone at 128 x 128: one step, loads 16384, writes 16384,
     * compute 100; op 1 at 64 x 64 x 128: 2 x 2 tiles x 2 k-steps */
    ft_schedule *s = sched("{\"subgraphs\": [[0], [1]], \"granularities\": [[128, 128, 1], [64, 64, 128]],"
                           " \"tensors_to_retain\": [[], []], \"traversal_orders\": [null, null]}");
    ft_eval e0, e;
    assert_int_equal(ft_evaluate(p, s, FT_COMPUTE_NATIVE, &e0, &st), FT_OK);
    p->timing.launch_overhead = 1000;
    assert_int_equal(ft_evaluate(p, s, FT_COMPUTE_NATIVE, &e, &st), FT_OK);
    assert_cost(e.sg[0].latency, e0.sg[0].latency + 1000);
    assert_cost(e.sg[1].latency, e0.sg[1].latency + 1000);
    assert_cost(e.total, e0.total + 2000);
    ft_eval_free(&e);

    p->timing.overlap = FT_OVERLAP_PIPELINE;
    p->timing.transfer_latency = 30;
    assert_int_equal(ft_evaluate(p, s, FT_COMPUTE_NATIVE, &e, &st), FT_OK);
    /* one step: 1000 + 30 + 1638.4 + 100 + 30 + 1638.4 */
    assert_cost(e.sg[0].latency, 4436.8);
    assert_int_equal(e.sg[1].steps, 8);
    /* several steps: the steps, then 1000 + 30 + 30 + min(first loads +
     * last writes, last compute); last compute = 64 x (1 x 1 x 128/128) = 64 */
    ft_walk *w;
    assert_int_equal(ft_walk_begin(p, s, 1, FT_COMPUTE_NATIVE, &w, &st), FT_OK);
    ft_step stp;
    double sum = 0, first_loads = 0;
    while (ft_walk_next(w, &stp)) {
        if (stp.index == 0)
            first_loads = (double)stp.loaded_elems / 10;
        sum += stp.latency;
    }
    ft_walk_free(w);
    double last = (double)stp.written_elems / 10;
    assert_cost(stp.compute, 64);
    assert_cost(e.sg[1].latency, sum + 1060 + (first_loads + last < 64 ? first_loads + last : 64));
    ft__rates r;
    ft__rates_init(p, &r);
    assert_cost(ft__sg_extra(p, &r, 0, 0, 5), 1030);
    ft_eval_free(&e);
    ft_eval_free(&e0);
    ft_schedule_free(s);
    ft_problem_free(p);
}

/* The lower bound with timing terms stays below every evaluation, and adds
 * one launch overhead; without overlap it is compute + memory. */
static void test_lower_bound(void **state)
{
    (void)state;
    ft_problem *p = load();
    ft_status st;
    ft_schedule *s = sched("{\"subgraphs\": [[0], [1]], \"granularities\": [[128, 128, 1], [128, 128, 128]],"
                           " \"tensors_to_retain\": [[], []], \"traversal_orders\": [null, null]}");
    double c0, m0, c, m;
    double b0 = ft_lower_bound(p, FT_COMPUTE_NATIVE, &c0, &m0);
    assert_cost(b0, c0 > m0 ? c0 : m0);
    /* graph inputs 0, 2, 3: 16384 + 32768 + 32768; outputs 1, 4: 32768 */
    assert_cost(m0, (16384.0 + 65536 + 32768) / 10);
    static const struct {
        ft_overlap o;
        double lat, launch, wb;
        int duplex;
    } cases[] = {{FT_OVERLAP_STEP, 5, 100, 0, 0}, {FT_OVERLAP_NONE, 5, 100, 4, 0}, {FT_OVERLAP_PIPELINE, 50, 0, 20, 1},
                 {FT_OVERLAP_STEP, 0, 0, 2, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        p->timing.overlap = cases[i].o;
        p->timing.transfer_latency = cases[i].lat;
        p->timing.launch_overhead = cases[i].launch;
        p->timing.write_bandwidth = cases[i].wb;
        p->timing.duplex = cases[i].duplex;
        double b = ft_lower_bound(p, FT_COMPUTE_NATIVE, &c, &m);
        assert_cost(c, c0);
        ft_eval e;
        assert_int_equal(ft_evaluate(p, s, FT_COMPUTE_NATIVE, &e, &st), FT_OK);
        if (!(b <= e.total * (1 + 1e-12)))
            fail_msg("case %zu: bound %.17g above the evaluation %.17g", i, b, e.total);
        if (cases[i].o == FT_OVERLAP_NONE)
            assert_cost(b, c + m + cases[i].launch);
        ft_eval_free(&e);
    }
    ft_schedule_free(s);
    ft_problem_free(p);
}

/* A native k other than w: the MatMul's depth counts in native-k units
 * and k-slices may not exceed it; larger granularities pass validation
 * when allowed and pad to native tiles. */
static void test_native_k_and_larger(void **state)
{
    (void)state;
    ft_problem *p = load();
    ft_status st;
    assert_int_equal(ft_native_k(p), 128);
    ft_schedule *s = sched("{\"subgraphs\": [[0], [1]], \"granularities\": [[128, 128, 1], [128, 128, 64]],"
                           " \"tensors_to_retain\": [[], []], \"traversal_orders\": [null, null]}");
    ft_eval e;
    /* K = 256 over native k 128: 64 x 2; over native k 64: 64 x 4 */
    assert_int_equal(ft_evaluate(p, s, FT_COMPUTE_NATIVE, &e, &st), FT_OK);
    double c128 = e.sg[1].compute_time;
    assert_cost(c128, 128);
    ft_eval_free(&e);
    p->native_k = 64;
    assert_int_equal(ft_problem_finish(p, &st), FT_OK);
    assert_int_equal(ft_evaluate(p, s, FT_COMPUTE_NATIVE, &e, &st), FT_OK);
    assert_cost(e.sg[1].compute_time, 256);
    assert_cost(ft_lower_bound(p, FT_COMPUTE_NATIVE, NULL, NULL) >= 256 ? 1 : 0, 1);
    ft_eval_free(&e);
    ft_schedule_free(s);
    /* k = 128 is now above native k */
    s = sched("{\"subgraphs\": [[0], [1]], \"granularities\": [[128, 128, 1], [128, 128, 128]], \"tensors_to_retain\": [[], []],"
              " \"traversal_orders\": [null, null]}");
    assert_int_equal(ft_evaluate(p, s, FT_COMPUTE_NATIVE, &e, &st), FT_EINVALID);
    assert_int_equal(st.reason, FT_R_GRANULARITY_ABOVE_NATIVE);
    assert_msg_has(st.msg, "granularities[1][2]: k = 128 is above native 64");
    /* allowed larger: valid, same compute (whole native tiles) */
    p->allow_larger = 1;
    assert_int_equal(ft_evaluate(p, s, FT_COMPUTE_NATIVE, &e, &st), FT_OK);
    assert_cost(e.sg[1].compute_time, 256);
    ft_eval_free(&e);
    ft_schedule_free(s);
    s = sched("{\"subgraphs\": [[0], [1]], \"granularities\": [[256, 256, 1], [128, 128, 64]], \"tensors_to_retain\": [[], []],"
              " \"traversal_orders\": [null, null]}");
    assert_int_equal(ft_evaluate(p, s, FT_COMPUTE_NATIVE, &e, &st), FT_OK);
    assert_cost(e.sg[0].compute_time, 100); /* 128 x 128 clipped: one native tile */
    ft_eval_free(&e);
    ft_schedule_free(s);
    ft_problem_free(p);
}

/* ft_problem_finish rejects timing terms out of range, naming them. */
static void test_timing_validation(void **state)
{
    (void)state;
    static const struct {
        const char *field;
        double value;
        const char *msg;
    } bad[] = {
        {"write_bandwidth", -1, "timing.json: write bandwidth is -1, must be positive (or 0 for slow_memory_bandwidth)"},
        {"write_bandwidth", NAN, "timing.json: write bandwidth is nan"},
        {"transfer_latency", -0.5, "timing.json: transfer latency is -0.5, must be 0 or more"},
        {"launch_overhead", INFINITY, "timing.json: launch overhead is inf, must be 0 or more"},
        {"overlap", 7, "timing.json: overlap mode 7 is not one of ft_overlap"},
        {"native_k", -3, "timing.json: native k is -3, must be positive (or 0 for native_granularity[0])"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ft_problem *p = load();
        ft_status st;
        if (strcmp(bad[i].field, "write_bandwidth") == 0)
            p->timing.write_bandwidth = bad[i].value;
        else if (strcmp(bad[i].field, "transfer_latency") == 0)
            p->timing.transfer_latency = bad[i].value;
        else if (strcmp(bad[i].field, "launch_overhead") == 0)
            p->timing.launch_overhead = bad[i].value;
        else if (strcmp(bad[i].field, "overlap") == 0)
            p->timing.overlap = (ft_overlap)(int)bad[i].value;
        else
            p->native_k = (int64_t)bad[i].value;
        assert_int_equal(ft_problem_finish(p, &st), FT_EINPUT);
        assert_msg_has(st.msg, bad[i].msg);
        ft_problem_free(p);
    }
}

/* ft_search scores with the timing terms: what it reports is what
 * ft_evaluate gives, and a launch overhead makes it fuse. */
static void test_search_with_timing(void **state)
{
    (void)state;
    static const char *CHAIN =
        "{\"widths\": [128, 128, 128, 128], \"heights\": [128, 128, 128, 128], \"inputs\": [[0], [1], [2]],"
        " \"outputs\": [[1], [2], [3]], \"base_costs\": [100, 100, 100], \"op_types\": [\"Pointwise\", \"Pointwise\", \"Pointwise\"],"
        " \"fast_memory_capacity\": 100000, \"slow_memory_bandwidth\": 1000, \"native_granularity\": [128, 128]}";
    for (int mode = 0; mode < 3; mode++) {
        ft_problem *p;
        ft_status st;
        assert_int_equal(ft_problem_parse(CHAIN, "chain.json", &p, &st), FT_OK);
        p->timing.overlap = (ft_overlap)mode;
        p->timing.launch_overhead = 5000;
        p->timing.transfer_latency = 20;
        p->timing.write_bandwidth = 500;
        assert_int_equal(ft_problem_finish(p, &st), FT_OK);
        ft_search_opts o;
        ft_search_opts_init(&o);
        o.time_limit = 2;
        ft_schedule *s;
        ft_eval ev, e;
        assert_int_equal(ft_search(p, &o, &s, &ev, &st), FT_OK);
        assert_int_equal(ft_evaluate(p, s, FT_COMPUTE_NATIVE, &e, &st), FT_OK);
        assert_cost(ev.total, e.total);
        assert_int_equal(s->nsubgraphs, 1); /* one launch beats three */
        assert_true(e.total >= ft_lower_bound(p, FT_COMPUTE_NATIVE, NULL, NULL) * (1 - 1e-12));
        ft_eval_free(&e);
        ft_eval_free(&ev);
        ft_schedule_free(s);
        ft_problem_free(p);
    }
}

/* ft_roofline_peaks: the machine's compute units and fastest data rate,
 * and no subgraph of an evaluation above either roof, in every overlap
 * mode, with separate channels, a shared cache and several units. */
static void test_roofline_peaks(void **state)
{
    (void)state;
    double c, d;
    for (int v = 0; v < 8; v++) {
        ft_problem *p = load();
        ft_status st;
        p->timing.overlap = (ft_overlap)(v % 3);
        p->timing.write_bandwidth = 5;
        p->timing.transfer_latency = v & 1 ? 7 : 0;
        p->timing.duplex = v >= 4;
        p->timing.units = v & 2 ? 3 : 0;
        if (v == 6) {
            p->timing.cache_capacity = 1e9;
            p->timing.cache_bandwidth = 40;
        }
        assert_int_equal(ft_problem_finish(p, &st), FT_OK);
        ft_roofline_peaks(p, &c, &d);
        assert_cost(c, v & 2 ? 3 : 1);
        double rb = v == 6 ? 40 : 10, wb = v == 6 ? 40 : 5;
        assert_cost(d, p->timing.duplex ? rb + wb : rb);
        ft_schedule *s = sched("{\"subgraphs\": [[0], [1]], \"granularities\": [[64, 64, 64], [64, 64, 32]],"
                               " \"tensors_to_retain\": [[], []], \"traversal_orders\": [null, null]}");
        ft_eval e;
        assert_int_equal(ft_evaluate(p, s, FT_COMPUTE_NATIVE, &e, &st), FT_OK);
        for (int i = 0; i < e.nsubgraphs; i++) {
            const ft_sg_result *r = &e.sg[i];
            assert_true(r->compute_time / r->latency <= c * (1 + 1e-12));
            assert_true((double)(r->loaded + r->written) / r->latency <= d * (1 + 1e-12));
        }
        ft_eval_free(&e);
        ft_schedule_free(s);
        ft_problem_free(p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_step_time_spec),     cmocka_unit_test(test_step_time_modes),
        cmocka_unit_test(test_subgraph_terms),     cmocka_unit_test(test_lower_bound),
        cmocka_unit_test(test_native_k_and_larger), cmocka_unit_test(test_timing_validation),
        cmocka_unit_test(test_search_with_timing), cmocka_unit_test(test_roofline_peaks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
