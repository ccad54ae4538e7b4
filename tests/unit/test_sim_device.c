/* test_sim_device.c - cmocka tests of the simulator on whole-device machines (ft_timing: units in waves sharing the bandwidth, the shared cache and its footprint floor, the step overhead): docs/DEVICE.md's closed forms replayed step by step, the traces' units, simulate = ft_evaluate on random problems with random device terms, and the runs of like steps replayed as step by step. */
#include "ft_testutil.h"

#include <unistd.h>

#include "fusetile/sim.h"
#include "vcd_parse.h"

/* ------------------------------------------------------------ fixtures */

typedef struct fixture {
    ft_problem *p;
    ft_schedule *s;
    ft_sim *sim;
    ft_sim_result r;
    ft_eval e;
    char dir[64];   /* temporary directory for traces, or "" */
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
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

static int teardown(void **state)
{
    fixture *f = *state;
    if (f) {
        ft_sim_result_free(&f->r);
        ft_eval_free(&f->e);
        ft_sim_free(f->sim);
        ft_schedule_free(f->s);
        ft_problem_free(f->p);
        if (f->dir[0])
            ftt_rmtree(f->dir);
        free(f);
    }
    *state = NULL;
    return 0;
}

/* One Pointwise op on a 512 x 512 tensor, bandwidth 10, native 128 x 128
 * (tests/unit/test_device.c's): at 128 x 128 it runs 16 tiles of one step,
 * each loading and writing 16384 elements (32768 moved: 3276.8 at the
 * whole bandwidth) and computing base_cost. */
static void load16(fixture *f, double base_cost)
{
    char json[512];
    ft_status st;
    snprintf(json, sizeof json,
             "{\"widths\": [512, 512], \"heights\": [512, 512], \"inputs\": [[0]], \"outputs\": [[1]], \"base_costs\": [%g],"
             " \"op_types\": [\"Pointwise\"], \"fast_memory_capacity\": 100000, \"slow_memory_bandwidth\": 10,"
             " \"native_granularity\": [128, 128]}",
             base_cost);
    ft_problem_free(f->p);
    ft_schedule_free(f->s);
    f->p = ftt_parse(json, "device.json");
    if (ft_schedule_parse("{\"subgraphs\": [[0]], \"granularities\": [[128, 128, 1]], \"tensors_to_retain\": [[]], "
                          "\"traversal_orders\": [null]}",
                          "device.schedule.json", &f->s, &st) != FT_OK)
        fail_msg("%s", st.msg);
}

/* Replay f's schedule (traces in f->dir when `traced`) and evaluate it;
 * returns ft_sim_run's code. */
static int replay(fixture *f, int traced)
{
    ft_sim_opts o;
    ft_status st;
    char json[128], vcd[128];
    ft_sim_opts_init(&o);
    if (traced) {
        snprintf(json, sizeof json, "%s/t.json", f->dir);
        snprintf(vcd, sizeof vcd, "%s/t.vcd", f->dir);
        o.trace_json = json;
        o.trace_vcd = vcd;
    }
    ft_sim_result_free(&f->r);
    ft_eval_free(&f->e);
    int rc = ft_sim_run(f->sim, f->p, f->s, &o, &f->r);
    if (rc == FT_OK && ft_evaluate(f->p, f->s, FT_COMPUTE_NATIVE, &f->e, &st) != FT_OK)
        fail_msg("ft_evaluate: %s", st.msg);
    return rc;
}

/* Whether simulated and analytic agree to 1e-9, as `fusetile simulate`
 * counts agreement. */
static int agree(double sim, double ana)
{
    return fabs(sim - ana) <= 1e-9 * fabs(ana);
}

/* Replay f's schedule: it must succeed and agree with ft_evaluate subgraph
 * by subgraph (latency, steps, peak occupancy) and in total; returns the
 * simulated total. */
static double simulated(fixture *f)
{
    if (replay(f, 0) != FT_OK)
        fail_msg("ft_sim_run: %s", ft_sim_errmsg(f->sim));
    assert_int_equal(f->r.nsubgraphs, f->e.nsubgraphs);
    for (int i = 0; i < f->r.nsubgraphs; i++) {
        if (!agree(f->r.sg[i].simulated, f->e.sg[i].latency))
            fail_msg("subgraph %d: simulated %.17g, analytic %.17g", i, f->r.sg[i].simulated, f->e.sg[i].latency);
        assert_int_equal(f->r.sg[i].steps, f->e.sg[i].steps);
        assert_int_equal(f->r.sg[i].peak_occupancy, f->e.sg[i].peak_working_set);
    }
    if (!agree(f->r.total_simulated, f->e.total))
        fail_msg("total: simulated %.17g, analytic %.17g", f->r.total_simulated, f->e.total);
    assert_rel(f->r.total_analytic, f->e.total, 1e-15);
    return f->r.total_simulated;
}

/* ------------------------------------------------------------ closed forms */

/* Waves: 16 compute-bound tiles (compute 10000).  One unit: 16 x 10000.
 * Four units: 4 waves, each tile moving its 32768 elements at 10/4:
 * 13107.2 > compute.  Three units: 5 waves of 3 (32768 / (10/3) = 9830.4
 * < compute: 10000 each) and one of 1 (10000).  64 units: one wave of 16
 * at 10/16.  The whole channel is busy all the time (each lane's transfers
 * weighted by its share), each unit computes 16 x 10000 / units of it. */
static void test_sim_device_waves(void **state)
{
    fixture *f = *state;
    load16(f, 10000);
    assert_rel(simulated(f), 160000, 1e-12);
    f->p->timing.units = 4;
    assert_rel(simulated(f), 4 * 13107.2, 1e-12);
    assert_rel(f->r.sg[0].channel_busy, 1, 1e-9);
    assert_rel(f->r.sg[0].compute_busy * f->r.sg[0].simulated * 4, 160000, 1e-9);
    f->p->timing.units = 3;
    assert_rel(simulated(f), 6 * 10000, 1e-12);
    f->p->timing.units = 64;
    assert_rel(simulated(f), 32768 / (10.0 / 16), 1e-12);
    /* 64 units, 16 of them busy */
    assert_rel(f->r.sg[0].compute_busy * f->r.sg[0].simulated * 64, 160000, 1e-9);
}

/* A wave ends when its slowest tile ends.  A 200 x 200 Pointwise at 128 x
 * 128 has tiles of 128 x 128 (tile 0), 128 x 72 (1, 2) and 72 x 72 (3),
 * each loading and writing its region.  On 3 units in the order 1, 0, 2,
 * 3 the first wave lasts as long as tile 0 (32768 / (10/3) = 9830.4), on
 * unit 1; tile 3 goes to unit 0, free since 18432 / (10/3), but starts
 * with the second wave: 9830.4 + 10368 / 10. */
static void test_sim_device_wave_barrier(void **state)
{
    fixture *f = *state;
    ft_status st;
    f->p = ftt_parse("{\"widths\": [200, 200], \"heights\": [200, 200], \"inputs\": [[0]], \"outputs\": [[1]], \"base_costs\": [100],"
                     " \"op_types\": [\"Pointwise\"], \"fast_memory_capacity\": 100000, \"slow_memory_bandwidth\": 10,"
                     " \"native_granularity\": [128, 128]}",
                     "ragged.json");
    assert_int_equal(ft_schedule_parse("{\"subgraphs\": [[0]], \"granularities\": [[128, 128, 1]], \"tensors_to_retain\": [[]],"
                                       " \"traversal_orders\": [[1, 0, 2, 3]]}",
                                       "ragged.schedule.json", &f->s, &st),
                     FT_OK);
    f->p->timing.units = 3;
    assert_rel(simulated(f), 9830.4 + 1036.8, 1e-12);
    /* with double buffering the units keep their pipelines across waves,
     * but no compute of a wave starts before the last of the one before */
    f->p->timing.overlap = FT_OVERLAP_PIPELINE;
    assert_int_equal(replay(f, 0), FT_OK);
    assert_true(f->r.total_simulated >= 9830.4 + 100);
}

/* The slow memory's bandwidth is shared: 16 units run one wave whose tiles
 * each move data at 10/16 (52428.8), not at the whole bandwidth (10000,
 * their compute); 2 units run 8 waves at 10/2 (6553.6 < 10000: 80000).
 * Memory-bound tiles (compute 100) take what one unit takes, whatever the
 * units, with a write bandwidth of its own and with separate channels too. */
static void test_sim_device_shared_bandwidth(void **state)
{
    fixture *f = *state;
    load16(f, 10000);
    f->p->timing.units = 16;
    assert_rel(simulated(f), 52428.8, 1e-12);
    f->p->timing.units = 2;
    assert_rel(simulated(f), 80000, 1e-12);
    load16(f, 100);
    double one = simulated(f);
    assert_rel(one, 16 * 3276.8, 1e-12);
    static const int units[] = {2, 3, 5, 16};
    for (size_t i = 0; i < sizeof units / sizeof *units; i++) {
        f->p->timing.units = units[i];
        assert_rel(simulated(f), one, 1e-12);
    }
    /* writes at 20: a tile moves 16384 / (10/u) + 16384 / (20/u) */
    f->p->timing.write_bandwidth = 20;
    f->p->timing.units = 4;
    assert_rel(simulated(f), 16 * (1638.4 + 819.2), 1e-12);
    /* separate channels: the reads take longest, per lane */
    f->p->timing.duplex = 1;
    assert_rel(simulated(f), 4 * 16384 / 2.5, 1e-12);
}

/* The shared cache: every step moves data at the cache's bandwidth (100);
 * a subgraph whose footprint (2 x 262144 elements) fits the capacity is
 * warm; with one element less it takes at least its footprint at the slow
 * memory's bandwidth (52428.8); with 327680 elements resident (partial
 * residency: 2 x 327680 - 524288 = 131072 of it stay cached) only the
 * other three quarters (39321.6); its
 * launch overhead on top.  On 4 units
 * the lanes share the cache's bandwidth the same way. */
static void test_sim_device_cache(void **state)
{
    fixture *f = *state;
    load16(f, 100);
    f->p->timing.cache_bandwidth = 100;
    f->p->timing.cache_capacity = 524288;
    assert_rel(simulated(f), 16 * 32768 / 100.0, 1e-12);
    f->p->timing.cache_capacity = 524287;
    assert_rel(simulated(f), 16 * 3276.8, 1e-12);
    f->p->timing.cache_resident = 327680;
    assert_rel(simulated(f), 0.75 * 16 * 3276.8, 1e-12);
    f->p->timing.cache_resident = 524288;   /* all of it: as warm */
    assert_rel(simulated(f), 16 * 32768 / 100.0, 1e-12);
    f->p->timing.cache_resident = 0;
    f->p->timing.launch_overhead = 7;
    assert_rel(simulated(f), 16 * 3276.8 + 7, 1e-12);
    f->p->timing.units = 4;
    assert_rel(simulated(f), 16 * 3276.8 + 7, 1e-12);
    f->p->timing.cache_capacity = 524288;
    assert_rel(simulated(f), 4 * 32768 / 25.0 + 7, 1e-12);
    /* no overlap: load, compute, write back per step, at the cache's
     * bandwidth shared by 4 */
    f->p->timing.overlap = FT_OVERLAP_NONE;
    assert_rel(simulated(f), 4 * (16384 / 25.0 + 100 + 16384 / 25.0) + 7, 1e-12);
    /* ... and above the floor still */
    f->p->timing.cache_capacity = 1000;
    f->p->timing.cache_bandwidth = 1000;
    assert_rel(simulated(f), 16 * 3276.8 + 7, 1e-12);
}

/* The step overhead adds to every step's compute: 16 x 10050 on one unit,
 * 4 waves of max(13107.2, 10050) on four; the engine is busy for it. */
static void test_sim_device_step_overhead(void **state)
{
    fixture *f = *state;
    load16(f, 10000);
    f->p->timing.step_overhead = 50;
    assert_rel(simulated(f), 16 * 10050, 1e-12);
    assert_rel(f->r.sg[0].compute_busy, 1, 1e-12);
    f->p->timing.units = 4;
    assert_rel(simulated(f), 4 * 13107.2, 1e-12);
    f->p->timing.step_overhead = 5000;
    assert_rel(simulated(f), 4 * 15000, 1e-12);
    assert_rel(f->r.sg[0].compute_busy, 1, 1e-12);
}

/* The tile overhead adds to each tile's last step: 16 x 10070 on one
 * unit; 4 waves of max(13107.2, 10070 + 20) on four with both overheads,
 * then 4 x (10000 + 20 + 5000). */
static void test_sim_device_tile_overhead(void **state)
{
    fixture *f = *state;
    load16(f, 10000);
    f->p->timing.tile_overhead = 70;
    assert_rel(simulated(f), 16 * 10070, 1e-12);
    f->p->timing.units = 4;
    f->p->timing.step_overhead = 20;
    assert_rel(simulated(f), 4 * 13107.2, 1e-12);
    f->p->timing.tile_overhead = 5000;
    assert_rel(simulated(f), 4 * 15020, 1e-12);
    assert_rel(f->r.sg[0].compute_busy, 1, 1e-12);
    /* a Pointwise subgraph pays no MatMul tile overhead */
    f->p->timing.matmul_tile_overhead = 3000;
    assert_rel(simulated(f), 4 * 15020, 1e-12);
}

/* The MatMul tile overhead: a 256 x 256 MatMul of K 512 at 128 x 128 x 128
 * (4 tiles of 4 k-steps, each step computing base cost 1000, bandwidth
 * 1e9: compute-bound) on one unit is 16 x 1000 + 4 x 70 with the tile
 * overhead; the MatMul tile overhead adds 4 x 30 more.  Both are paid on
 * each tile's last k-step, so on 4 units one wave: 4000 + 70 + 30. */
static void test_sim_device_matmul_tile_overhead(void **state)
{
    fixture *f = *state;
    ft_status st;
    ft_problem_free(f->p);
    ft_schedule_free(f->s);
    f->p = ftt_parse("{\"widths\": [512, 256, 256], \"heights\": [256, 512, 256], \"inputs\": [[0, 1]],"
                     " \"outputs\": [[2]], \"base_costs\": [1000], \"op_types\": [\"MatMul\"],"
                     " \"fast_memory_capacity\": 1000000, \"slow_memory_bandwidth\": 1e9,"
                     " \"native_granularity\": [128, 128]}",
                     "matmul.json");
    if (ft_schedule_parse("{\"subgraphs\": [[0]], \"granularities\": [[128, 128, 128]], \"tensors_to_retain\": [[]], "
                          "\"traversal_orders\": [null]}",
                          "matmul.schedule.json", &f->s, &st) != FT_OK)
        fail_msg("%s", st.msg);
    double plain = simulated(f);
    f->p->timing.tile_overhead = 70;
    assert_rel(simulated(f) - plain, 4 * 70, 1e-9);
    f->p->timing.matmul_tile_overhead = 30;
    assert_rel(simulated(f) - plain, 4 * 100, 1e-9);
    f->p->timing.units = 4;
    assert_rel(simulated(f), plain / 4 + 100, 1e-9);
}

/* Double buffering on a subgraph of one step: nothing overlaps, the
 * analytic model's closed form (ft__sg_single) is exact.  A 128 x 128
 * Pointwise on 4 units (a wave of one tile, at the whole bandwidth): launch
 * 7 + latency 5 + 16384 / 10 + compute 100 + step overhead 3 + latency 5 +
 * 16384 / 20.  Behind a cache (bandwidth 40) that it overflows, the
 * simulator waits for its footprint at the slow memory's bandwidths:
 * launch + 16384 / 10 + 16384 / 20.  (ft_evaluate keeps ft__sg_single
 * there, 939.2, without the floor that it applies to subgraphs of several
 * steps: `simulate` names the difference "double buffering, cache floor".) */
static void test_sim_device_pipeline_single_step(void **state)
{
    fixture *f = *state;
    ft_status st;
    f->p = ftt_parse("{\"widths\": [128, 128], \"heights\": [128, 128], \"inputs\": [[0]], \"outputs\": [[1]], \"base_costs\": [100],"
                     " \"op_types\": [\"Pointwise\"], \"fast_memory_capacity\": 100000, \"slow_memory_bandwidth\": 10,"
                     " \"native_granularity\": [128, 128]}",
                     "one.json");
    assert_int_equal(ft_schedule_parse("{\"subgraphs\": [[0]], \"granularities\": [[128, 128, 1]], \"tensors_to_retain\": [[]],"
                                       " \"traversal_orders\": [null]}",
                                       "one.schedule.json", &f->s, &st),
                     FT_OK);
    ft_timing *t = &f->p->timing;
    t->overlap = FT_OVERLAP_PIPELINE;
    t->transfer_latency = 5;
    t->launch_overhead = 7;
    t->write_bandwidth = 20;
    t->step_overhead = 3;
    t->units = 4;
    assert_rel(simulated(f), 7 + 5 + 1638.4 + 103 + 5 + 819.2, 1e-12);
    t->cache_capacity = 1000;
    t->cache_bandwidth = 40;
    assert_int_equal(replay(f, 0), FT_OK);
    assert_rel(f->r.total_simulated, 7 + 1638.4 + 819.2, 1e-12);
    t->cache_capacity = 1e9; /* fits: warm */
    assert_rel(simulated(f), 7 + 5 + 409.6 + 103 + 5 + 409.6, 1e-12);
}

/* A tensor retained on several units: the simulator refuses it on its own,
 * for the reason ft_schedule_validate gives, naming the units. */
static void test_sim_device_retain_refused(void **state)
{
    fixture *f = *state;
    ft_status st;
    f->p = ftt_parse("{\"widths\": [128, 128, 128], \"heights\": [128, 128, 128], \"inputs\": [[0], [1]], \"outputs\": [[1], [2]],"
                     " \"base_costs\": [100, 100], \"op_types\": [\"Pointwise\", \"Pointwise\"], \"fast_memory_capacity\": 100000,"
                     " \"slow_memory_bandwidth\": 10, \"native_granularity\": [128, 128]}",
                     "chain.json");
    assert_int_equal(ft_schedule_parse("{\"subgraphs\": [[0], [1]], \"granularities\": [[128, 128, 1], [128, 128, 1]],"
                                       " \"tensors_to_retain\": [[1], []], \"traversal_orders\": [null, null]}",
                                       "chain.schedule.json", &f->s, &st),
                     FT_OK);
    simulated(f); /* one unit: retained, as SPEC says */
    f->p->timing.units = 2;
    assert_int_equal(replay(f, 0), FT_EINVALID);
    /* the tensor is produced: the cause is the units (issue 32) */
    assert_int_equal(f->r.reason, FT_R_RETAIN_ON_UNITS);
    assert_non_null(strstr(ft_sim_errmsg(f->sim), "this machine has 2 units"));
    assert_non_null(strstr(ft_sim_errmsg(f->sim), "made for a machine of one unit"));
    assert_int_equal(f->r.analytic_reason, FT_R_RETAIN_ON_UNITS);
}

/* ------------------------------------------------------------ traces */

/* A trace of 4 units: a busy signal per unit, each busy during its tile's
 * compute in every wave (0 to 10000, then from 13107.2 on), idle while the
 * lanes finish (11000: the write-backs, after the loads); a Chrome trace
 * thread per unit; the files come out
 * in time order although the units of a wave are replayed one by one. */
static void test_sim_device_trace_units(void **state)
{
    fixture *f = *state;
    assert_int_equal(ftt_tmpdir(f->dir, sizeof f->dir, "ft-simdev"), 0);
    load16(f, 10000);
    f->p->timing.units = 4;
    assert_int_equal(replay(f, 1), FT_OK);
    assert_rel(f->r.total_simulated, 4 * 13107.2, 1e-12);
    char path[128];
    snprintf(path, sizeof path, "%s/t.vcd", f->dir);
    FILE *in = fopen(path, "rb");
    assert_non_null(in);
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, in);
    fclose(in);
    text[n] = '\0';
    vcdp_doc d;
    if (vcdp_parse(text, &d) != 0)
        fail_msg("VCD: %s", d.err);
    const int64_t unit = 1000000000; /* ticks per cost unit (1e9 fs) */
    for (int u = 0; u < 4; u++) {
        char ref[32];
        snprintf(ref, sizeof ref, "unit%d_busy", u);
        int v = vcdp_find(&d, ref);
        assert_true(v >= 0);
        assert_int_equal(vcdp_value_at(&d, v, 5000 * unit), 1);
        assert_int_equal(vcdp_value_at(&d, v, 11000 * unit), 0);
        assert_int_equal(vcdp_value_at(&d, v, 14000 * unit), 1);
        assert_int_equal(vcdp_value_at(&d, v, 53000 * unit), 0);
    }
    assert_true(vcdp_find(&d, "unit4_busy") < 0);
    /* a lane loads its tile's input, then writes its output back */
    assert_int_equal(vcdp_value_at(&d, vcdp_find(&d, "read_busy"), 3000 * unit), 1);
    assert_int_equal(vcdp_value_at(&d, vcdp_find(&d, "read_busy"), 12000 * unit), 0);
    assert_int_equal(vcdp_value_at(&d, vcdp_find(&d, "write_busy"), 12000 * unit), 1);
    vcdp_free(&d);
    snprintf(path, sizeof path, "%s/t.json", f->dir);
    in = fopen(path, "rb");
    assert_non_null(in);
    n = fread(text, 1, sizeof text - 1, in);
    fclose(in);
    text[n] = '\0';
    assert_non_null(strstr(text, "\"compute unit 3\""));
    assert_null(strstr(text, "\"compute unit 4\""));
}

/* ------------------------------------------------------------ random parity */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

/* Draw the machine's timing terms into p, the whole-device ones included:
 * units (ragged last waves among them), a step overhead, a shared cache
 * that some subgraphs fit and some do not; Pointwise compute padded to
 * native tiles or exact (ft_problem.pointwise_exact); overlap STEP or NONE (the two
 * with an exact closed form) or, with `pipeline`, double buffering (and a
 * cache that every subgraph fits). */
static void draw_timing(ft_problem *p, int pipeline)
{
    static const double lats[] = {0, 1, 50, 400};
    static const int units[] = {1, 2, 3, 4, 7, 16, 132};
    ft_timing *t = &p->timing;
    t->overlap = pipeline ? FT_OVERLAP_PIPELINE : (ft_overlap)(rnd() % 2);
    t->transfer_latency = lats[rnd() % 4];
    t->launch_overhead = (double)(rnd() % 3) * 100;
    t->write_bandwidth = rnd() % 2 ? 0 : p->bandwidth * (0.25 + 0.25 * (double)(rnd() % 8));
    t->duplex = (int)(rnd() % 2);
    t->units = units[rnd() % 7];
    t->step_overhead = rnd() % 2 ? 0 : (double)(1 + rnd() % 40);
    t->tile_overhead = rnd() % 2 ? 0 : (double)(1 + rnd() % 400);
    t->matmul_tile_overhead = rnd() % 2 ? 0 : (double)(1 + rnd() % 400);
    t->cache_capacity = rnd() % 3 == 0 ? 0 : (double)(1 << (12 + rnd() % 10));
    t->cache_bandwidth = p->bandwidth * (0.5 + (double)(rnd() % 8));
    p->pointwise_exact = (int)(rnd() % 2);
    if (pipeline && t->cache_capacity > 0)
        t->cache_capacity = 1e12; /* warm: ft_evaluate keeps no floor on a pipelined single step
                                     (test_sim_device_pipeline_single_step) */
    ft_status st;
    if (ft_problem_finish(p, &st) != FT_OK)
        fail_msg("%s", st.msg);
}

/* Make f->s the one-op schedule of f->p with, at random, tiles halved (more
 * tiles: more and raggeder waves) and random traversal orders; 0 when
 * ft_evaluate rejects it (the halving can make a Layout tile overflow). */
static int draw_schedule(fixture *f)
{
    ft_status st;
    ft_schedule_free(f->s);
    f->s = NULL;
    assert_int_equal(ft_gen_oneop_schedule(f->p, &f->s, &st), FT_OK);
    for (int i = 0; i < f->s->nsubgraphs; i++) {
        ft_subgraph *g = &f->s->sg[i];
        if (rnd() % 2 && g->w > 1)
            g->w /= 2;
        if (rnd() % 2 && g->h > 1)
            g->h /= 2;
    }
    ft_eval_free(&f->e);
    if (ft_evaluate(f->p, f->s, FT_COMPUTE_NATIVE, &f->e, &st) != FT_OK)
        return 0;
    for (int i = 0; i < f->s->nsubgraphs; i++) {
        int64_t n = f->e.sg[i].ntx * f->e.sg[i].nty;
        if (rnd() % 2 || n < 2)
            continue;
        ft_subgraph *g = &f->s->sg[i];
        g->order = malloc(sizeof *g->order * (size_t)n);
        assert_non_null(g->order);
        g->norder = n;
        for (int64_t j = 0; j < n; j++)
            g->order[j] = j;
        for (int64_t j = n - 1; j > 0; j--) {
            int64_t k = (int64_t)(rnd() % (uint64_t)(j + 1)), x = g->order[j];
            g->order[j] = g->order[k];
            g->order[k] = x;
        }
    }
    return 1;
}

/* Make f->p a random problem (ft_generate) of `family` from `seed`, of 2 to
 * 8 ops. */
static void draw_problem(fixture *f, uint64_t seed, ft_gen_family family)
{
    ft_gen_opts go;
    ft_status st;
    ft_gen_opts_init(&go);
    go.seed = seed;
    go.family = family;
    go.nops = 2 + (int)(rnd() % 7);
    ft_problem_free(f->p);
    f->p = NULL;
    assert_int_equal(ft_generate(&go, &f->p, &st), FT_OK);
}

/* Make f->s ft_search's schedule of f->p under its terms (a short search),
 * f->e its evaluation. */
static void search_schedule(fixture *f)
{
    ft_search_opts o;
    ft_status st;
    ft_search_opts_init(&o);
    o.time_limit = ftt_slow() ? 1.0 : 0.2;
    o.threads = 1;
    ft_schedule_free(f->s);
    f->s = NULL;
    ft_eval_free(&f->e);
    if (ft_search(f->p, &o, &f->s, &f->e, &st) != FT_OK)
        fail_msg("%s: ft_search: %s", f->p->name, st.msg);
}

/* Subgraphs of f's schedule whose footprint floor binds: ft_evaluate's
 * latency drops with a cache that every subgraph fits. */
static int floor_bound(fixture *f)
{
    ft_problem *q = ft_problem_clone(f->p);
    ft_eval e;
    ft_status st;
    int n = 0;
    assert_non_null(q);
    q->timing.cache_capacity = 1e300;
    assert_int_equal(ft_evaluate(q, f->s, FT_COMPUTE_NATIVE, &e, &st), FT_OK);
    for (int i = 0; i < e.nsubgraphs; i++)
        n += f->e.sg[i].latency > e.sg[i].latency * (1 + 1e-12);
    ft_eval_free(&e);
    ft_problem_free(q);
    return n;
}

/* Random problems (ft_generate), each with random device terms and a
 * random one-op schedule, and ft_search's schedule for some: the simulator
 * gives ft_evaluate's latency in every subgraph and in total (relative
 * 1e-9, the agreement of `fusetile simulate`), its step counts and peak
 * working sets.  With double buffering, whose closed form the analytic
 * model keeps only for subgraphs of one step, those agree and the others
 * run. */
static void test_sim_device_random_parity(void **state)
{
    fixture *f = *state;
    const int nprob = ftt_valgrind() ? 6 : 40;
    int compared = 0, several = 0, floored = 0, exact_pipeline = 0;
    for (int prob = 0; prob < nprob; prob++) {
        draw_problem(f, 100 + (uint64_t)prob, prob % 3 == 2 ? FT_GEN_SMALL : FT_GEN_CONTEST);
        for (int draw = 0; draw < 4; draw++) {
            int pipeline = draw == 3;
            draw_timing(f->p, pipeline);
            if (draw == 2 && prob % 4 == 0) {
                search_schedule(f); /* the search's schedule under these terms */
            } else if (!draw_schedule(f)) {
                /* an invalid schedule: the simulator finds it invalid too */
                assert_int_equal(replay(f, 0), FT_EINVALID);
                continue;
            }
            if (replay(f, 0) != FT_OK)
                fail_msg("%s, draw %d: %s", f->p->name, draw, ft_sim_errmsg(f->sim));
            for (int i = 0; i < f->e.nsubgraphs; i++) {
                double sim = f->r.sg[i].simulated, ana = f->e.sg[i].latency;
                assert_int_equal(f->r.sg[i].steps, f->e.sg[i].steps);
                assert_int_equal(f->r.sg[i].peak_occupancy, f->e.sg[i].peak_working_set);
                if (pipeline && f->e.sg[i].steps > 1)
                    continue;
                exact_pipeline += pipeline;
                if (!agree(sim, ana))
                    fail_msg("%s, draw %d (units %d, overlap %d, cache %g, overhead %g): subgraph %d simulated %.17g, analytic %.17g",
                             f->p->name, draw, f->p->timing.units, (int)f->p->timing.overlap, f->p->timing.cache_capacity,
                             f->p->timing.step_overhead, i, sim, ana);
                compared++;
                several += f->p->timing.units > 1 && f->e.sg[i].ntx * f->e.sg[i].nty > 1;
            }
            if (!pipeline && !agree(f->r.total_simulated, f->e.total))
                fail_msg("%s, draw %d: total simulated %.17g, analytic %.17g", f->p->name, draw, f->r.total_simulated, f->e.total);
            if (f->p->timing.cache_capacity > 0)
                floored += floor_bound(f);
        }
    }
    printf("  %d subgraphs agree (%d on several units of a multi-tile grid, %d single-step pipelines); the cache floor binds in %d\n",
           compared, several, exact_pipeline, floored);
    assert_true(several > 20);
    assert_true(floored > 0);
}

/* ------------------------------------------------------------ like steps */

/* Replay f's schedule under `model` step by step (with a trace of its first
 * step: the controller's runs of like steps and the modules' repeats are
 * for replays without a trace, sim/README.md "Speed"), then without a
 * trace: the same outcome, every figure to the fs (==), the same message
 * on failure.  Returns the outcome. */
static int same_without_trace(fixture *f, ft_compute_model model)
{
    ft_sim_opts o;
    ft_sim_result a, b;
    char json[128], msg[1024];
    if (!f->dir[0])
        assert_int_equal(ftt_tmpdir(f->dir, sizeof f->dir, "simruns"), 0);
    snprintf(json, sizeof json, "%s/w.json", f->dir);
    ft_sim_opts_init(&o);
    o.model = model;
    o.analytic = 0;
    o.trace_json = json;
    o.window_count = 1;
    int ra = ft_sim_run(f->sim, f->p, f->s, &o, &a);
    snprintf(msg, sizeof msg, "%s", ra == FT_OK ? "" : ft_sim_errmsg(f->sim));
    o.trace_json = NULL;
    o.window_count = 0;
    int rb = ft_sim_run(f->sim, f->p, f->s, &o, &b);
    if (ra != rb)
        fail_msg("%s: step by step %d (%s), without a trace %d (%s)", f->p->name, ra, msg, rb, ft_sim_errmsg(f->sim));
    if (ra != FT_OK)
        assert_string_equal(ft_sim_errmsg(f->sim), msg);
    if (ra == FT_OK || ra == FT_EINVALID) {
        assert_int_equal(a.steps, b.steps);
        assert_int_equal(a.reason, b.reason);
        assert_int_equal(a.fail_sg, b.fail_sg);
        assert_int_equal(a.fail_step, b.fail_step);
        assert_true(a.fail_time == b.fail_time);
        if (a.total_simulated != b.total_simulated)
            fail_msg("%s: total step by step %.17g, without a trace %.17g", f->p->name, a.total_simulated, b.total_simulated);
        for (int i = 0; i < a.nsubgraphs; i++) {
            const ft_sim_sg *x = &a.sg[i], *y = &b.sg[i];
            if (x->simulated != y->simulated || x->steps != y->steps || x->peak_occupancy != y->peak_occupancy ||
                x->channel_busy != y->channel_busy || x->compute_busy != y->compute_busy)
                fail_msg("%s (units %d, overlap %d), subgraph %d: step by step %.17g, %lld steps, peak %lld, busy %.17g %.17g; "
                         "without a trace %.17g, %lld, %lld, %.17g %.17g",
                         f->p->name, f->p->timing.units, (int)f->p->timing.overlap, i, x->simulated, (long long)x->steps,
                         (long long)x->peak_occupancy, x->channel_busy, x->compute_busy, y->simulated, (long long)y->steps,
                         (long long)y->peak_occupancy, y->channel_busy, y->compute_busy);
        }
    }
    ft_sim_result_free(&a);
    ft_sim_result_free(&b);
    return ra;
}

/* Random problems with random device terms (every overlap mode), their
 * one-op schedules with k-slices cut at random (long k-loops: runs of like
 * steps) and the search's fused ones: replayed without a trace, every
 * figure is the step-by-step replay's, to the fs, under both compute
 * models; and it agrees with ft_evaluate (overlap STEP and NONE). */
static void test_sim_device_like_steps_random(void **state)
{
    fixture *f = *state;
    const int nprob = ftt_valgrind() ? 4 : 24;
    int replays = 0, long_loops = 0, skipped = 0;
    for (int prob = 0; prob < nprob; prob++) {
        ft_status st;
        draw_problem(f, 700 + (uint64_t)prob, prob % 3 == 2 ? FT_GEN_CONTEST : FT_GEN_SMALL);
        for (int draw = 0; draw < 3; draw++) {
            draw_timing(f->p, draw == 2);
            if (draw == 1 && prob % 3 == 0) {
                search_schedule(f);
            } else if (draw_schedule(f)) {
                /* k-slices cut to a half, a quarter ... (some not dividing K) */
                for (int i = 0; i < f->s->nsubgraphs; i++) {
                    ft_subgraph *g = &f->s->sg[i];
                    g->k = g->k >> (rnd() % 5);
                    if (g->k > 2 && rnd() % 3 == 0)
                        g->k--;
                    if (g->k < 1)
                        g->k = 1;
                }
                ft_eval_free(&f->e);
                if (ft_evaluate(f->p, f->s, FT_COMPUTE_NATIVE, &f->e, &st) != FT_OK)
                    continue;
            } else {
                continue;
            }
            /* the process's clock (2^64 fs, sim/README.md "Time") and the
             * test's time: schedules of a few steps and units */
            int64_t steps = 0;
            for (int i = 0; i < f->e.nsubgraphs; i++)
                steps += f->e.sg[i].steps;
            if (steps > 40000 || f->e.total > 2e6) {
                skipped++;
                continue;
            }
            for (int i = 0; i < f->e.nsubgraphs; i++)
                long_loops += f->e.sg[i].nk >= 4;
            for (int m = 0; m < 2; m++)
                assert_int_equal(same_without_trace(f, m ? FT_COMPUTE_OP : FT_COMPUTE_NATIVE), FT_OK);
            if (draw != 2) {
                if (replay(f, 0) != FT_OK)
                    fail_msg("%s: %s", f->p->name, ft_sim_errmsg(f->sim));
                if (!agree(f->r.total_simulated, f->e.total))
                    fail_msg("%s, draw %d: simulated %.17g, analytic %.17g", f->p->name, draw, f->r.total_simulated, f->e.total);
            }
            replays++;
        }
    }
    printf("  %d schedules replayed alike with and without runs of like steps (%d subgraphs of 4 k-steps or more), %d too long\n",
           replays, long_loops, skipped);
    assert_true(replays > nprob);
    assert_true(long_loops > nprob);
}

/* Subgraphs whose runs of like steps end early or cannot move the fast
 * memory's slices in one go, replayed alike with and without a trace, and
 * as ft_evaluate says, under random device terms:
 *  - two k-loop MatMuls of different depths (K = 96 and 40) summed by an
 *    epilogue, at k-slices dividing neither (7: the shorter loop ends, its
 *    last slice partial, in the middle of the longer);
 *  - two MatMuls sharing their left operand (the same slices, needed
 *    twice);
 *  - X x X (one tensor's slices moving down and right at once);
 *  - a MatMul whose left operand the subgraph before retained whole. */
static void test_sim_device_like_steps_cases(void **state)
{
    fixture *f = *state;
    static const struct {
        const char *problem, *schedule;
    } cases[] = {
        {PJ("[96, 64, 40, 64, 64, 64, 64]", "[64, 96, 64, 40, 64, 64, 64]", "[[0, 1], [2, 3], [4, 5]]", "[[4], [5], [6]]",
            "[300, 200, 50]", "[" MM ", " MM ", " PW "]", "100000", "10", "[32, 32]"),
         SJ("[[0, 1, 2]]", "[[16, 16, 7]]", "[[]]")},
        {PJ("[96, 64, 40, 64, 64, 64, 64]", "[64, 96, 64, 40, 64, 64, 64]", "[[0, 1], [2, 3], [4, 5]]", "[[4], [5], [6]]",
            "[300, 200, 50]", "[" MM ", " MM ", " PW "]", "100000", "10", "[32, 32]"),
         SJ("[[0, 1, 2]]", "[[8, 32, 8]]", "[[]]")},
        {PJ("[64, 32, 32, 32, 32, 32]", "[32, 64, 64, 32, 32, 32]", "[[0, 1], [0, 2], [3, 4]]", "[[3], [4], [5]]",
            "[300, 300, 50]", "[" MM ", " MM ", " PW "]", "100000", "10", "[32, 32]"),
         SJ("[[0, 1, 2]]", "[[8, 8, 4]]", "[[]]")},
        {PJ("[64, 64]", "[64, 64]", "[[0, 0]]", "[[1]]", "[400]", "[" MM "]", "100000", "10", "[32, 32]"),
         SJ("[[0]]", "[[8, 8, 4]]", "[[]]")},
        {PJ("[64, 64, 48, 48]", "[32, 32, 64, 32]", "[[0], [1, 2]]", "[[1], [3]]", "[50, 300]", "[" PW ", " MM "]", "100000", "10",
            "[32, 32]"),
         SJ("[[0], [1]]", "[[32, 32, 1], [16, 8, 4]]", "[[1], []]")},
    };
    const int ncases = (int)(sizeof cases / sizeof cases[0]);
    for (int c = 0; c < ncases; c++) {
        ft_status st;
        ft_problem_free(f->p);
        ft_schedule_free(f->s);
        f->s = NULL;
        f->p = ftt_parse(cases[c].problem, "runs.json");
        if (ft_schedule_parse(cases[c].schedule, "runs.schedule.json", &f->s, &st) != FT_OK)
            fail_msg("case %d: %s", c, st.msg);
        for (int draw = 0; draw < (ftt_valgrind() ? 3 : 12); draw++) {
            draw_timing(f->p, draw % 3 == 2);
            if (c == 4 && f->p->timing.units != 1) { /* retention: one unit */
                f->p->timing.units = 1;
                if (ft_problem_finish(f->p, &st) != FT_OK)
                    fail_msg("%s", st.msg);
            }
            for (int m = 0; m < 2; m++)
                if (same_without_trace(f, m ? FT_COMPUTE_OP : FT_COMPUTE_NATIVE) != FT_OK)
                    fail_msg("case %d, draw %d: %s", c, draw, ft_sim_errmsg(f->sim));
            if (f->p->timing.overlap != FT_OVERLAP_PIPELINE)
                simulated(f);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_sim_device_waves, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sim_device_wave_barrier, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sim_device_shared_bandwidth, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sim_device_cache, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sim_device_step_overhead, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sim_device_tile_overhead, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sim_device_matmul_tile_overhead, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sim_device_pipeline_single_step, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sim_device_retain_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sim_device_trace_units, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sim_device_random_parity, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sim_device_like_steps_random, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sim_device_like_steps_cases, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
