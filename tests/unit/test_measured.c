/* test_measured.c - cmocka tests of measured files (sched/target/measured.c: formats, errors, held-out rows, error figures), kernel timing (sched/target/kernel_time.c: the fastest form against every candidate evaluated exactly), calibration (sched/target/calibrate.c: a known target's settings recovered from data made with it) and the fitted-target writer (sched/target/target_write.c). */
#include "ft_testutil.h"

#include "fusetile/calibrate.h"
#include "fusetile/measured.h"

#include <sys/stat.h>
#include <unistd.h>

static char dir[256];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/ft_measured_%d", (int)getpid());
    return mkdir(dir, 0700) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return ftt_rmtree(dir);
}

/* Write text to dir/name; returns the path (static buffer). */
static const char *put(const char *name, const char *text)
{
    static char path[2][400];
    static int which;
    which ^= 1;
    snprintf(path[which], sizeof path[which], "%s/%s", dir, name);
    FILE *f = fopen(path[which], "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path[which];
}

/* The text of file path (malloc'd), or NULL. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *b = calloc(1 << 20, 1);
    if (b)
        fread(b, 1, (1 << 20) - 1, f);
    fclose(f);
    return b;
}

static ft_target *h100(void)
{
    ft_target *t;
    ft_status st;
    if (ft_target_load(ftt_src_path("targets/gpu-h100.cfg"), &t, &st) != FT_OK)
        fail_msg("%s", st.msg);
    return t;
}

/* Loading fails with a message containing want. */
static void load_fails(const char *text, const char *pdir, const char *want)
{
    ft_measured *m = (ft_measured *)1;
    ft_status st;
    const char *path = put("bad.tsv", text);
    assert_int_equal(ft_measured_load(path, pdir, &m, &st), FT_EINPUT);
    assert_null(m);
    if (!strstr(st.msg, want))
        fail_msg("message '%s' lacks '%s'", st.msg, want);
    printf("  %s\n", st.msg);
}

static void test_measured_formats_and_errors(void **state)
{
    (void)state;
    ft_measured *m;
    ft_status st;
    const char *g = put("g.tsv", "M\tN\tK\tus_stream\tus_graph\n128\t256\t64\t9\t5.5\n# a comment\n\n512\t512\t512\t9\t4.25\n"
                                 "1024\t1024\t1024\t9\t6.6\n");
    assert_int_equal(ft_measured_load(g, NULL, &m, &st), FT_OK);
    assert_int_equal(m->format, FT_MEAS_GEMM);
    assert_int_equal(m->nrows, 3);
    assert_string_equal(m->rows[0].label, "gemm 128x256x64");
    assert_int_equal(m->rows[1].line, 5);
    assert_rel(m->rows[1].measured_us, 4.25, 1e-15);
    assert_int_equal(m->rows[0].nkernels, 1);
    const ft_problem *k = m->rows[0].kernels[0];
    assert_int_equal(k->ops[0].type, FT_OP_MATMUL);
    assert_int_equal(k->tensors[k->ops[0].output].height, 128);
    assert_int_equal(k->tensors[k->ops[0].output].width, 256);
    assert_int_equal(k->ops[0].k, 64);
    /* every third row held out */
    assert_false(ft_meas_held_out(m, 0));
    assert_false(ft_meas_held_out(m, 1));
    assert_true(ft_meas_held_out(m, 2));
    ft_measured_free(m);

    const char *p = put("p.tsv", "op\tninputs\telements\tus_graph\nadd3\t3\t4096\t4.5\ngelu\t1\t100\t3.5\n");
    assert_int_equal(ft_measured_load(p, NULL, &m, &st), FT_OK);
    assert_int_equal(m->format, FT_MEAS_POINTWISE);
    assert_int_equal(m->rows[0].nkernels, 2);   /* add3: two adds */
    assert_string_equal(m->rows[0].kernels[0]->ops[0].kind, "add");
    assert_int_equal(m->rows[0].kernels[0]->ops[0].ninputs, 2);
    assert_string_equal(m->rows[1].kernels[0]->ops[0].kind, "gelu");
    /* 100 elements: a 16-wide matrix of 7 rows */
    const ft_problem *q = m->rows[1].kernels[0];
    assert_int_equal(q->tensors[0].width, 16);
    assert_int_equal(q->tensors[0].height, 7);
    ft_measured_free(m);

    /* graph_ops and graphs name the bundled benchmarks */
    const char *bench = ftt_src_path("benchmarks");
    char bdir[4200];
    snprintf(bdir, sizeof bdir, "%s", bench);
    const char *go = put("go.tsv", "problem\top\ttype\tout_w\tout_h\tK\tninputs\tus_graph\n"
                                   "mlsys-2026-5\t0\tMatMul\t512\t1024\t128\t2\t3.6\n"
                                   "mlsys-2026-5\t4\tPointwise\t128\t1024\t0\t2\t4.6\n");
    assert_int_equal(ft_measured_load(go, bdir, &m, &st), FT_OK);
    assert_int_equal(m->format, FT_MEAS_GRAPH_OPS);
    assert_string_equal(m->rows[0].label, "mlsys-2026-5 op 0");
    assert_int_equal(m->rows[1].nkernels, 1);
    ft_measured_free(m);
    const char *gr = put("gr.tsv", "problem\tops\tus_cudagraph\nmlsys-2026-1\t5\t14.6\nexample_problem\t2\t3.77\n");
    assert_int_equal(ft_measured_load(gr, bdir, &m, &st), FT_OK);
    assert_int_equal(m->format, FT_MEAS_GRAPHS);
    assert_true(m->rows[0].nkernels >= 5);
    ft_measured_free(m);

    /* errors name the file, line and column */
    load_fails("", NULL, "empty file");
    load_fails("M\tN\tK\tus_graph\n", NULL, "no rows");
    load_fails("a\tb\n1\t2\n", NULL, "bad.tsv:1: header names no known format");
    load_fails("M\tN\tK\tus_stream\n1\t1\t1\t1\n", NULL, "bad.tsv:1: no us_graph column");
    load_fails("M\tN\tK\tus_graph\n1\tx\t1\t1\n", NULL, "bad.tsv:2: N: \"x\" is not an integer");
    load_fails("M\tN\tK\tus_graph\n1\t0\t1\t1\n", NULL, "bad.tsv:2: N: 0 is out of range");
    load_fails("M\tN\tK\tus_graph\n1\t1\t1\t-3\n", NULL, "bad.tsv:2: us_graph: \"-3\" is not a positive time");
    load_fails("M\tN\tK\tus_graph\n1\t1\t1\tnan\n", NULL, "us_graph");
    load_fails("M\tN\tK\tus_graph\n1\t1\n", NULL, "bad.tsv:2: us_graph: missing (the line has 2 fields)");
    load_fails("M\tN\tK\tus_graph\n1\t1\t\t2\n", NULL, "bad.tsv:2: K: \"\" is not an integer");
    load_fails("op\tninputs\telements\tus_graph\nsilu\t1\t5\t1\n", NULL, "op: \"silu\" is not one of");
    load_fails("op\tninputs\telements\tus_graph\nadd\t1\t5\t1\n", NULL, "ninputs: add has 2 inputs, not 1");
    load_fails("problem\tops\tus_cudagraph\nmlsys-2026-1\t5\t1\n", NULL, "no problems directory given");
    load_fails("problem\tops\tus_cudagraph\nnosuch\t5\t1\n", bdir, "bad.tsv:2: problem: problem nosuch:");
    load_fails("problem\tops\tus_cudagraph\n../x\t5\t1\n", bdir, "is not a problem name");
    load_fails("problem\tops\tus_cudagraph\nmlsys-2026-1\t6\t1\n", bdir, "ops: 6, but problem mlsys-2026-1 has 5 ops");
    load_fails("problem\top\ttype\tout_w\tout_h\tK\tninputs\tus_graph\nmlsys-2026-5\t0\tPointwise\t512\t1024\t128\t2\t3\n",
               bdir, "type: \"Pointwise\", but op 0 of mlsys-2026-5 is MatMul");
    load_fails("problem\top\ttype\tout_w\tout_h\tK\tninputs\tus_graph\nmlsys-2026-5\t0\tMatMul\t512\t999\t128\t2\t3\n",
               bdir, "out_w: 512x999, but op 0 of mlsys-2026-5 writes 512x1024");
    load_fails("problem\top\ttype\tout_w\tout_h\tK\tninputs\tus_graph\nmlsys-2026-5\t99\tMatMul\t512\t999\t128\t2\t3\n",
               bdir, "op: 99 is out of range");
    ft_measured *none = (ft_measured *)1;
    assert_int_equal(ft_measured_load("/nonexistent/x.tsv", NULL, &none, &st), FT_EINPUT);
    assert_null(none);
}

/* The held-out problems: every third in name order. */
static void test_measured_held_out_problems(void **state)
{
    (void)state;
    ft_measured *m;
    ft_status st;
    char bdir[4200];
    snprintf(bdir, sizeof bdir, "%s", ftt_src_path("benchmarks"));
    const char *gr = put("gr.tsv", "problem\tops\tus_cudagraph\nmlsys-2026-9\t32\t1\nexample_problem\t2\t1\nmlsys-2026-1\t5\t1\n"
                                   "mlsys-2026-13\t63\t1\nmlsys-2026-17\t103\t1\nmlsys-2026-5\t19\t1\n");
    assert_int_equal(ft_measured_load(gr, bdir, &m, &st), FT_OK);
    /* name order: example_problem, mlsys-2026-1, mlsys-2026-13 (held),
     * mlsys-2026-17, mlsys-2026-5, mlsys-2026-9 (held) */
    int held[6] = {1, 0, 0, 1, 0, 0};
    for (int i = 0; i < 6; i++)
        assert_int_equal(ft_meas_held_out(m, i), held[i]);
    ft_measured_free(m);
}

static void test_measured_stats(void **state)
{
    (void)state;
    double pred[3] = {11, 9, 20}, meas[3] = {10, 10, 10};
    ft_meas_stats s;
    ft_meas_stats_of(pred, meas, 3, &s);
    assert_rel(s.mape, 100.0 * (0.1 + 0.1 + 1.0) / 3, 1e-12);
    assert_rel(s.gmean, cbrt(1.1 * 0.9 * 2.0), 1e-12);
    assert_int_equal(s.worst, 2);
    ft_meas_stats_of(pred, meas, 0, &s);
    assert_int_equal(s.worst, -1);
}

/* The exact time of one-op problem k on t at granularity w x h x kk, or
 * INFINITY when it does not fit. */
static double exact(const ft_problem *k, const ft_target *t, int64_t w, int64_t h, int64_t kk)
{
    ft_problem *p = ft_problem_clone(k);
    ft_status st;
    assert_int_equal(ft_target_apply(t, p, 0, &st), FT_OK);
    ft_schedule *s = ft_schedule_new(1);
    int zero = 0;
    assert_int_equal(ft_subgraph_set_ops(&s->sg[0], &zero, 1), FT_OK);
    s->len_granularities = s->len_retain = s->len_orders = s->len_latencies = -1;
    s->sg[0].w = w;
    s->sg[0].h = h;
    s->sg[0].k = kk;
    ft_eval e;
    double r = INFINITY;
    if (ft_evaluate(p, s, FT_COMPUTE_NATIVE, &e, &st) == FT_OK) {
        r = e.total;
        ft_eval_free(&e);
    }
    ft_schedule_free(s);
    ft_problem_free(p);
    return r;
}

/* ft_kernel_time's choice is timed exactly (as ft_evaluate), and no
 * candidate it could have taken (every power-of-two tile) is faster. */
static void test_kernel_time_is_exact_and_fastest(void **state)
{
    (void)state;
    ft_target *t = h100();
    static const int64_t shapes[][3] = {{128, 128, 128}, {1024, 512, 256}, {384, 8192, 64}, {2048, 2048, 2048}};
    int nshapes = ftt_slow() ? 2 : 4;
    for (int i = 0; i < nshapes; i++) {
        int64_t m = shapes[i][0], n = shapes[i][1], kk = shapes[i][2];
        int64_t w[3] = {kk, n, n}, h[3] = {m, kk, m};
        ft_problem *k;
        ft_status st;
        assert_int_equal(ft_kernel_new(&k, "MatMul", "matmul", 2, w, h, &st), FT_OK);
        ft_kernel_choice fixed = {0, 0, 0, 1, 0, 0, 0, 0}, c;
        double tiled, best;
        assert_int_equal(ft_kernel_time(k, t, NULL, &best, &c, &st), FT_OK);
        /* the unsplit form at its own best */
        double brute = INFINITY;
        int64_t bw = 0, bh = 0, bk = 0;
        for (int64_t a = 16; a <= 1024; a *= 2)
            for (int64_t b = 16; b <= 1024; b *= 2)
                for (int64_t q = 16; q <= 512; q *= 2) {
                    int64_t aw = a < n ? a : n, bh2 = b < m ? b : m, qk = q < kk ? q : kk;
                    double e = exact(k, t, aw, bh2, qk);
                    if (e < brute) {
                        brute = e;
                        bw = aw, bh = bh2, bk = qk;
                    }
                }
        fixed.w = bw, fixed.h = bh, fixed.k = bk;
        assert_int_equal(ft_kernel_time(k, t, &fixed, &tiled, NULL, &st), FT_OK);
        assert_rel(tiled, brute, 1e-12);   /* a fixed form is timed exactly */
        assert_true(best <= brute * (1 + 1e-12));
        if (c.split == 1)
            assert_rel(best, exact(k, t, c.w, c.h, c.k), 1e-12);
        printf("  %lldx%lldx%lld: %.1f cycles at %lldx%lldx%lld split %d (best power-of-two tile unsplit: %.1f)\n",
               (long long)m, (long long)n, (long long)kk, best, (long long)c.w, (long long)c.h, (long long)c.k, c.split,
               brute);
        /* the choice given back is timed the same */
        double again;
        assert_int_equal(ft_kernel_time(k, t, &c, &again, NULL, &st), FT_OK);
        assert_rel(again, best, 1e-12);
        ft_problem_free(k);
    }
    /* a skinny GEMM with deep K fills the units only split */
    int64_t w[3] = {8192, 128, 128}, h[3] = {128, 8192, 128};
    ft_problem *k;
    ft_status st;
    assert_int_equal(ft_kernel_new(&k, "MatMul", "matmul", 2, w, h, &st), FT_OK);
    ft_kernel_choice c;
    double best;
    assert_int_equal(ft_kernel_time(k, t, NULL, &best, &c, &st), FT_OK);
    assert_true(c.split > 1);
    ft_problem_free(k);
    ft_target_free(t);
}

/* A replayed row's kernels share the cache: add3 ((a + b) + c) keeps
 * five tensors in its replay, so on the H100 (25 MiB a partition) it is
 * warm at 1 Mi elements (10 MiB) and cold at 4 Mi (40 MiB) though each of
 * its adds (24 MiB) would be warm alone; a one-kernel row is as before. */
static void test_meas_replay_shares_cache(void **state)
{
    (void)state;
    ft_target *t = h100();
    ft_measured *m;
    ft_status st;
    const char *p = put("add3.tsv", "op\tninputs\telements\tus_graph\nadd3\t3\t1048576\t5\nadd3\t3\t4194304\t15\n"
                                    "add\t2\t4194304\t5\n");
    assert_int_equal(ft_measured_load(p, NULL, &m, &st), FT_OK);
    /* the row's tensor ids: t = a + b (t is the new tensor 4), o = t + c */
    const ft_meas_row *r = &m->rows[1];
    assert_int_equal(r->ntensors, 5);
    static const int want[2][3] = {{0, 1, 4}, {4, 2, 3}};
    for (int i = 0; i < 2; i++)
        for (int q = 0; q < 3; q++)
            assert_int_equal(r->tensors[i][q], want[i][q]);
    for (int row = 0; row < 3; row++) {
        r = &m->rows[row];
        int64_t e = ft_tensor_size(r->kernels[0], 0);
        /* each add's reuse window holds the other two tensors: a's last
         * touch was the add before, in the previous replay */
        double held = r->nkernels == 2 ? 2.0 * (double)e : 0, sum = t->run_overhead, alone = t->run_overhead;
        for (int i = 0; i < r->nkernels; i++) {
            double c, c0;
            assert_int_equal(ft_kernel_time_shared(r->kernels[i], t, NULL, held, &c, NULL, &st), FT_OK);
            assert_int_equal(ft_kernel_time(r->kernels[i], t, NULL, &c0, NULL, &st), FT_OK);
            sum += c;
            alone += c0;
            printf("  %s kernel %d: %.1f cycles sharing the cache with %.0f elements, %.1f alone\n", r->label, i, c, held, c0);
            if (row == 1)
                assert_true(c > 1.2 * c0);   /* cold: from the slow memory */
            else
                assert_rel(c, c0, 1e-12);    /* warm either way */
        }
        double us;
        assert_int_equal(ft_meas_predict(r, t, NULL, NULL, &us, &st), FT_OK);
        assert_rel(us, sum / t->clock_hz * 1e6, 1e-12);
        if (row != 1)
            assert_rel(us, alone / t->clock_hz * 1e6, 1e-12);
    }
    ft_measured_free(m);

    /* a whole problem: its kernels carry the problem's tensor indices */
    const char *bench = ftt_src_path("benchmarks");
    char bdir[4200];
    snprintf(bdir, sizeof bdir, "%s", bench);
    const char *gr = put("gr1.tsv", "problem\tops\tus_cudagraph\nmlsys-2026-1\t5\t14.6\n");
    assert_int_equal(ft_measured_load(gr, bdir, &m, &st), FT_OK);
    ft_problem *prob;
    char path[4300];
    snprintf(path, sizeof path, "%s/mlsys-2026-1.json", bdir);
    assert_int_equal(ft_problem_load(path, &prob, &st), FT_OK);
    r = &m->rows[0];
    assert_true(r->ntensors >= prob->ntensors);
    int k = 0;
    for (int i = 0; i < prob->nops; i++) {
        const ft_op *op = &prob->ops[prob->topo[i]];
        int nk = op->type == FT_OP_POINTWISE && op->ninputs >= 2 ? op->ninputs - 1 : 1;
        k += nk;
        assert_int_equal(r->tensors[k - 1][r->kernels[k - 1]->ops[0].ninputs], op->output);
        if (nk == 1)
            assert_int_equal(r->tensors[k - 1][0], op->inputs[0]);
    }
    assert_int_equal(k, r->nkernels);
    ft_problem_free(prob);
    ft_measured_free(m);
    ft_target_free(t);
}

/* Back-to-back replays: a row takes at least the target's replay
 * interval (the host launches the next replay while this one runs); a row
 * whose kernels take longer is as before, and 0 is no floor. */
static void test_meas_replay_interval(void **state)
{
    (void)state;
    ft_target *t = h100();
    ft_measured *m;
    ft_status st;
    const char *p = put("floor.tsv", "op\tninputs\telements\tus_graph\nrelu\t1\t4096\t3\nrelu\t1\t268435456\t350\n");
    assert_int_equal(ft_measured_load(p, NULL, &m, &st), FT_OK);
    double small0, large0, small, large;
    t->replay_interval = 0;
    assert_int_equal(ft_meas_predict(&m->rows[0], t, NULL, NULL, &small0, &st), FT_OK);
    assert_int_equal(ft_meas_predict(&m->rows[1], t, NULL, NULL, &large0, &st), FT_OK);
    /* 10 us: above the small row, far below the large one */
    t->replay_interval = 10e-6 * t->clock_hz;
    assert_int_equal(ft_meas_predict(&m->rows[0], t, NULL, NULL, &small, &st), FT_OK);
    assert_int_equal(ft_meas_predict(&m->rows[1], t, NULL, NULL, &large, &st), FT_OK);
    printf("  relu 4096: %.3f us, %.3f us with a 10 us replay interval; relu 2^28: %.3f us either way\n", small0, small,
           large);
    assert_true(small0 < 10.0 && large0 > 10.0);
    assert_rel(small, 10.0, 1e-12);
    assert_rel(large, large0, 1e-12);
    ft_measured_free(m);
    ft_target_free(t);
}

/* The reset start of an interval is the shortest row a fit uses, in the
 * target's cycles: relu 4096 at 2 us, the third row, is held out (every
 * third pointwise row), so the start is gelu's 3 us; with all rows, 2 us.  Without rows, and for other settings, the fixed neutral values. */
static void test_calib_reset_interval(void **state)
{
    (void)state;
    ft_measured *m;
    ft_status st;
    assert_int_equal(ft_measured_load(put("reset.tsv", "op\tninputs\telements\tus_stream\tus_graph\tgbps_stream\n"
                                                       "relu\t1\t16384\t9\t4\t1\n"
                                                       "gelu\t1\t16384\t9\t3\t1\n"
                                                       "relu\t1\t4096\t9\t2\t1\n"
                                                       "add\t2\t4096\t9\t5\t1\n"),
                                      NULL, &m, &st),
                     FT_OK);
    assert_true(ft_meas_held_out(m, 2) && !ft_meas_held_out(m, 1));
    ft_target *t = h100();
    assert_rel(ft_calib_reset_value(t, &m, 1, 0, "execution.replay_interval"), 3e-6 * t->clock_hz, 1e-12);
    assert_rel(ft_calib_reset_value(t, &m, 1, 1, "execution.replay_interval"), 2e-6 * t->clock_hz, 1e-12);
    assert_rel(ft_calib_reset_value(t, NULL, 0, 0, "execution.replay_interval"), 1000, 1e-12);
    assert_rel(ft_calib_reset_value(t, &m, 1, 0, "execution.matmul_tile_overhead"), 1000, 1e-12);
    assert_rel(ft_calib_reset_value(t, &m, 1, 0, "compute.matmul_efficiency"), 0.5, 1e-12);
    ft_target_free(t);
    ft_measured_free(m);
}

/* A models file: the problem of each row (MODEL-bBATCH.json) run one
 * kernel per op_kernels group; a convolution's im2col and MatMul fused in
 * one kernel never move the patch matrix, so the kernel is faster than the
 * two apart; op_kernels is written back by ft_problem_to_json. */
static void test_meas_models_fused_kernels(void **state)
{
    (void)state;
    static const char tiny[] =
        "{\"widths\":[64,576,64,64,64],\"heights\":[4096,4096,576,4096,4096],\"inputs\":[[0],[1,2],[3]],"
        "\"outputs\":[[1],[3],[4]],\"base_costs\":[1,1,1],\"op_types\":[\"Layout\",\"MatMul\",\"Pointwise\"],"
        "\"fast_memory_capacity\":600000,\"slow_memory_bandwidth\":50,\"native_granularity\":[128,128],"
        "\"op_names\":[\"conv/im2col\",\"conv\",\"bn\"],\"op_kinds\":[\"conv2d\",\"conv2d\",\"batch_norm\"],"
        "\"op_kernels\":[0,0,1]}\n";
    put("tiny-b4.json", tiny);
    char pdir[400];
    snprintf(pdir, sizeof pdir, "%s", dir);
    ft_measured *m;
    ft_status st;
    assert_int_equal(ft_measured_load(put("models.tsv", "model\tbatch\tus_eager\tus_cudagraph\ntiny\t4\t90\n"), pdir, &m, &st),
                     FT_EINPUT);   /* no time */
    assert_non_null(strstr(st.msg, "us_cudagraph: missing"));
    assert_int_equal(ft_measured_load(put("models.tsv", "model\tbatch\tus_eager\tus_cudagraph\ntiny\t4\t90\t20\n"), pdir, &m, &st),
                     FT_OK);
    assert_int_equal(m->format, FT_MEAS_MODELS);
    assert_string_equal(m->rows[0].label, "tiny b4");
    assert_int_equal(m->rows[0].batch, 4);
    assert_true(ft_meas_held_out(m, 0));
    const ft_meas_row *r = &m->rows[0];
    assert_int_equal(r->nkernels, 2);
    assert_int_equal(r->kernels[0]->nops, 2);   /* im2col + MatMul */
    assert_int_equal(r->kernels[0]->ops[1].type, FT_OP_MATMUL);
    assert_int_equal(r->kernels[0]->ngraph_inputs, 2);   /* the feature map and the weight, not the patch matrix */
    assert_int_equal(r->tensors[0][0], 0);
    assert_int_equal(r->tensors[0][1], 2);
    assert_int_equal(r->tensors[0][2], 3);
    ft_target *t = h100();
    double fused, kus[2], us;
    assert_int_equal(ft_meas_predict_kernels(r, t, NULL, NULL, kus, &us, &st), FT_OK);
    assert_true(kus[0] > 0 && kus[1] > 0 && us >= kus[0] + kus[1]);
    assert_int_equal(ft_kernel_time(r->kernels[0], t, NULL, &fused, NULL, &st), FT_OK);
    /* the same two ops as two kernels: the patch matrix written and read */
    ft_problem *p;
    assert_int_equal(ft_problem_parse(tiny, "tiny", &p, &st), FT_OK);
    int one[1] = {0}, two[1] = {1}, ids[FT_KERNEL_MAX_OPS * (FT_KERNEL_MAX_INPUTS + 1) + 1];
    ft_problem *k0, *k1;
    assert_int_equal(ft_kernel_of_ops(p, one, 1, &k0, ids, &st), FT_OK);
    assert_int_equal(ft_kernel_of_ops(p, two, 1, &k1, ids, &st), FT_OK);
    double c0, c1;
    assert_int_equal(ft_kernel_time(k0, t, NULL, &c0, NULL, &st), FT_OK);
    assert_int_equal(ft_kernel_time(k1, t, NULL, &c1, NULL, &st), FT_OK);
    printf("  conv as one kernel %.0f cycles, as im2col and MatMul apart %.0f + %.0f\n", fused, c0, c1);
    assert_true(fused < c0 + c1);
    ft_problem_free(k0);
    /* two outputs in one kernel are refused */
    int both[2] = {0, 2};
    assert_int_equal(ft_kernel_of_ops(p, both, 2, &k0, ids, &st), FT_EINPUT);
    assert_non_null(strstr(st.msg, "two outputs"));
    /* op_kernels written back */
    char *text = ft_problem_to_json(p);
    assert_non_null(text);
    assert_non_null(strstr(text, "\"op_kernels\": [0,0,1]") ? text : strstr(text, "\"op_kernels\":[0,0,1]"));
    ft_problem *q;
    assert_int_equal(ft_problem_parse(text, "again", &q, &st), FT_OK);
    assert_non_null(q->op_kernels);
    assert_int_equal(q->op_kernels[2], 1);
    ft_problem *c = ft_problem_clone(q);
    assert_non_null(c);
    assert_int_equal(c->op_kernels[0], 0);
    ft_free(text);
    ft_problem_free(c);
    ft_problem_free(q);
    ft_problem_free(k1);
    ft_problem_free(p);
    ft_target_free(t);
    ft_measured_free(m);
}

/* A gemm file's row for M x N x K at the time target t predicts for it
 * (a replay of the one MatMul), written at out; its length. */
static size_t gemm_row(char *out, const ft_target *t, int64_t m, int64_t n, int64_t k)
{
    int64_t w[3] = {k, n, n}, h[3] = {m, k, m};
    ft_problem *kp;
    ft_status st;
    assert_int_equal(ft_kernel_new(&kp, "MatMul", "matmul", 2, w, h, &st), FT_OK);
    int gids[3] = {0, 1, 2}, *gid[1] = {gids};
    ft_meas_row r = {0, "g", NULL, 1, 1, &kp, gid, 3, 0, 0, 0};
    double us;
    assert_int_equal(ft_meas_predict(&r, t, NULL, NULL, &us, &st), FT_OK);
    ft_problem_free(kp);
    return (size_t)sprintf(out, "%lld\t%lld\t%lld\t%.17g\n", (long long)m, (long long)n, (long long)k, us);
}

/* Calibration recovers the settings of a known target from times
 * predicted with it, starting from other values. */
static void test_calibrate_recovers_synthetic(void **state)
{
    (void)state;
    ft_target *truth = h100();
    /* the known settings */
    static const char *const names[] = {"execution.run_overhead", "execution.launch_overhead", "compute.matmul_efficiency",
                                        "slow_memory.efficiency", "compute.kind_cost.gelu"};
    const double want[] = {5000, 1500, 0.8, 0.85, 40};
    const int np = ftt_slow() ? 3 : 5;   /* light under valgrind */
    for (int i = 0; i < np; i++)
        *ft_target_setting(truth, names[i], NULL) = want[i];
    /* synthetic measurements: a grid of GEMMs and the pointwise ops */
    char *text = malloc(1 << 16), *ptext = malloc(1 << 16);
    size_t len = (size_t)sprintf(text, "M\tN\tK\tus_graph\n"), plen = (size_t)sprintf(ptext, "op\tninputs\telements\tus_graph\n");
    int step = ftt_slow() ? 8 : 4;
    for (int64_t m = 128; m <= 8192; m *= step)
        for (int64_t n = 256; n <= 8192; n *= step)
            for (int64_t k = 128; k <= 8192; k *= step) {
                len += gemm_row(text + len, truth, m, n, k);
            }
    const char *ops[] = {"relu", "gelu", "add", "add3"};
    for (int64_t e = 4096; e <= ((int64_t)1 << 28); e *= 4 * step)
        for (int o = 0; o < 4; o++) {
            int nin = o >= 2 ? 2 : 1;
            int64_t w = 1;
            while (w * w < e)
                w *= 2;
            int64_t ws[3] = {w, w, w}, hs[3] = {(e + w - 1) / w, (e + w - 1) / w, (e + w - 1) / w};
            ft_problem *kp;
            ft_status st;
            assert_int_equal(ft_kernel_new(&kp, "Pointwise", ops[o], nin, ws, hs, &st), FT_OK);
            ft_problem *two[2] = {kp, kp};   /* add3: two adds, (a + b) + c */
            int add1[3] = {0, 1, o == 3 ? 4 : 2}, add2[3] = {4, 2, 3}, one[2] = {0, 1};
            int *ids[2] = {nin == 1 ? one : add1, add2};
            ft_meas_row r = {0, "p", NULL, 1, o == 3 ? 2 : 1, two, ids, o == 3 ? 5 : nin + 1, 0, 0, 0};
            double us;
            assert_int_equal(ft_meas_predict(&r, truth, NULL, NULL, &us, &st), FT_OK);
            plen += (size_t)sprintf(ptext + plen, "%s\t%d\t%lld\t%.17g\n", ops[o], o == 3 ? 3 : nin, (long long)e, us);
            ft_problem_free(kp);
        }
    ft_measured *files[2];
    ft_status st;
    assert_int_equal(ft_measured_load(put("syn_gemm.tsv", text), NULL, &files[0], &st), FT_OK);
    assert_int_equal(ft_measured_load(put("syn_pw.tsv", ptext), NULL, &files[1], &st), FT_OK);
    free(text);
    free(ptext);
    /* start elsewhere */
    ft_target *t = h100();
    for (int i = 0; i < np; i++)
        *ft_target_setting(t, names[i], NULL) = ft_calib_reset_value(t, files, 2, 0, names[i]);
    ft_calib_opts o;
    ft_calib_opts_init(&o);
    o.free = names;
    o.nfree = np;
    ft_calib_result r;
    assert_int_equal(ft_calibrate(t, files, 2, &o, &r, &st), FT_OK);
    printf("  %d rows, %d steps, cost %.3g -> %.3g\n", r.rows, r.iterations, r.cost_before, r.cost_after);
    for (int i = 0; i < np; i++)
        printf("  %-28s start %-8g fitted %-12.6g known %g\n", names[i], r.before[i], r.after[i], want[i]);
    for (int i = 0; i < np; i++)
        assert_rel(r.after[i], want[i], 0.01);
    assert_true(r.cost_after < 1e-6);
    /* the fit keeps the lowest true cost it saw (forms chosen again): from
     * its own result it never ends higher than it started */
    ft_calib_result again;
    assert_int_equal(ft_calibrate(t, files, 2, &o, &again, &st), FT_OK);
    assert_true(again.cost_after <= again.cost_before);

    /* the fitted file: values in place, a missing group added, comments kept */
    const char *out = put("fitted.cfg", "");
    double vals[5];
    for (int i = 0; i < np; i++)
        vals[i] = r.after[i];
    assert_int_equal(ft_target_write_fitted(ftt_src_path("targets/gpu-h100.cfg"), out, names, vals, np, "fitted (test)", &st),
                     FT_OK);
    ft_target *back;
    assert_int_equal(ft_target_load(out, &back, &st), FT_OK);
    for (int i = 0; i < np; i++)
        assert_rel(*ft_target_setting(back, names[i], NULL), vals[i], 1e-5 * vals[i]);
    assert_string_equal(back->description, t->description);
    ft_target_free(back);
    char *ftext = slurp(out);
    assert_non_null(ftext);
    assert_non_null(strstr(ftext, "# Sources: NVIDIA H100"));
    assert_non_null(strstr(ftext, "fitted (test)"));
    free(ftext);
    /* errors */
    const char *bad[] = {"execution.nosuch"};
    o.free = bad;
    o.nfree = 1;
    assert_int_equal(ft_calibrate(t, files, 2, &o, &r, &st), FT_EINPUT);
    assert_non_null(strstr(st.msg, "execution.nosuch is not a number setting"));
    ft_measured_free(files[0]);
    ft_measured_free(files[1]);
    ft_target_free(t);
    ft_target_free(truth);
}

/* An energy file (FT_MEAS_ENERGY): read by its header, each row's joules
 * predicted by the energy rule; calibration recovers known energy
 * settings from synthetic joules (the time settings fixed). */
static void test_calibrate_recovers_energy(void **state)
{
    (void)state;
    ft_target *truth = h100();
    static const char *const names[] = {"energy.mac_pj", "energy.pointwise_pj", "energy.slow_read_pj",
                                        "energy.cache_pj", "energy.launch_pj", "energy.active_watts"};
    const double want[] = {1.2, 90, 60, 4, 2e6, 30};
    const int np = 6;
    truth->energy_power_limit_watts = 0; /* the full clock (the limit: test_calibrate_recovers_power_limit) */
    assert_int_equal(ft_calib_nenergy_free, np);
    for (int i = 0; i < np; i++) {
        assert_string_equal(ft_calib_energy_free[i], names[i]);
        *ft_target_setting(truth, names[i], NULL) = want[i];
    }
    char *text = malloc(1 << 16);
    size_t len = (size_t)sprintf(text, "kind\tM_or_op\tN_or_elements\tK\tus_per_op\tJ_per_op\n");
    int step = ftt_slow() ? 16 : 4;
    for (int64_t m = 128; m <= 8192; m *= step)
        for (int64_t k = 256; k <= 8192; k *= step)
            len += (size_t)sprintf(text + len, "gemm\t%lld\t4096\t%lld\t1\t1\n", (long long)m, (long long)k);
    const char *ops[] = {"copy", "add", "relu", "add3"};
    /* (under the slow runners up to 2^26 elements: the kernel timing of
     * 2^28 was most of this test's time under valgrind) */
    const int64_t emax = (int64_t)1 << (ftt_slow() ? 26 : 28);
    for (int64_t e = 1 << 20; e <= emax; e *= 4)
        for (int o = 0; o < 4; o++)
            len += (size_t)sprintf(text + len, "pointwise\t%s\t%lld\t0\t1\t1\n", ops[o], (long long)e);
    ft_measured *m;
    ft_status st;
    assert_int_equal(ft_measured_load(put("syn_energy.tsv", text), NULL, &m, &st), FT_OK);
    free(text);
    assert_int_equal(m->format, FT_MEAS_ENERGY);
    assert_string_equal(ft_meas_format_name(m->format), "energy");
    assert_true(ft_meas_held_out(m, 2) && !ft_meas_held_out(m, 0));
    /* the joules the known settings give, as measured */
    for (int i = 0; i < m->nrows; i++) {
        double j, meas;
        assert_int_equal(ft_meas_predict_figure(&m->rows[i], truth, &j, &meas, &st), FT_OK);
        assert_true(meas == 1 && j > 0);
        m->rows[i].measured_j = j;
    }
    /* start at the file's fitted values; every row fitted */
    ft_target *t = h100();
    t->energy_power_limit_watts = 0;
    t->energy_cache_pj = 10; /* (the file's is near 0: a start the fit's stopping rule leaves short of 4) */
    ft_calib_opts o;
    ft_calib_opts_init(&o);
    o.all_rows = 1;
    ft_calib_result r;
    int crc = ft_calibrate(t, &m, 1, &o, &r, &st);
    if (crc) printf("  calibrate: %s\n", st.msg);
    assert_int_equal(crc, FT_OK);
    printf("  %d rows, %d steps, cost %.3g -> %.3g\n", r.rows, r.iterations, r.cost_before, r.cost_after);
    for (int i = 0; i < np; i++) {
        printf("  %-22s start %-10g fitted %-12.6g known %g\n", r.names[i], r.before[i], r.after[i], want[i]);
        assert_string_equal(r.names[i], names[i]);
        assert_rel(r.after[i], want[i], 0.01);
    }
    assert_true(r.cost_after < 1e-6);
    /* a target without the group: refused */
    ft_target *plain = h100();
    plain->energy_on = 0;
    assert_int_equal(ft_calibrate(plain, &m, 1, &o, &r, &st), FT_EINPUT);
    assert_non_null(strstr(st.msg, "has no energy group"));
    double j, meas;
    assert_int_equal(ft_meas_predict_figure(&m->rows[0], plain, &j, &meas, &st), FT_EINPUT);
    ft_target_free(plain);
    ft_measured_free(m);
    ft_target_free(t);
    ft_target_free(truth);
}

/* The power limit (energy.power_limit_watts): calibration recovers a known
 * limit from the joules it gives (its big GEMMs run slower at a lower
 * clock, drawing the limit); the kernel times the scorer gives are those
 * ft_evaluate gives the same kernel at the same form. */
static void test_calibrate_recovers_power_limit(void **state)
{
    (void)state;
    ft_target *truth = h100();
    assert_true(truth->energy_power_limit_watts > 560);
    truth->energy_power_limit_watts = 560;
    char *text = malloc(1 << 14);
    size_t len = (size_t)sprintf(text, "kind\tM_or_op\tN_or_elements\tK\tus_per_op\tJ_per_op\n");
    for (int64_t m = 512; m <= 8192; m *= 4)
        for (int64_t k = 512; k <= 8192; k *= 4)
            len += (size_t)sprintf(text + len, "gemm\t%lld\t4096\t%lld\t1\t1\n", (long long)m, (long long)k);
    len += (size_t)sprintf(text + len, "pointwise\tcopy\t16777216\t0\t1\t1\n");
    ft_measured *m;
    ft_status st;
    assert_int_equal(ft_measured_load(put("syn_power.tsv", text), NULL, &m, &st), FT_OK);
    free(text);
    int limited = 0;
    for (int i = 0; i < m->nrows; i++) {
        double j, meas, us, us_full;
        ft_kernel_choice form;
        assert_int_equal(ft_meas_predict_figure(&m->rows[i], truth, &j, &meas, &st), FT_OK);
        m->rows[i].measured_j = j;
        /* a limited row draws the limit: its joules are 560 W x its time */
        assert_int_equal(ft_meas_predict_kernels(&m->rows[i], truth, NULL, &form, &us, &j, &st), FT_OK);
        truth->energy_power_limit_watts = 0;
        assert_int_equal(ft_meas_predict_kernels(&m->rows[i], truth, &form, NULL, &us_full, &j, &st), FT_OK);
        truth->energy_power_limit_watts = 560;
        if (us > us_full * (1 + 1e-9)) {
            limited++;
            assert_rel(m->rows[i].measured_j, 560 * us * 1e-6, 1e-9 * m->rows[i].measured_j);
        }
    }
    printf("  %d of %d rows at the limit\n", limited, m->nrows);
    assert_true(limited >= 2 && limited < m->nrows);
    ft_target *t = h100();
    static const char *const names[] = {"energy.power_limit_watts"};
    ft_calib_opts o;
    ft_calib_opts_init(&o);
    o.all_rows = 1;
    o.free = names;
    o.nfree = 1;
    ft_calib_result r;
    assert_int_equal(ft_calibrate(t, &m, 1, &o, &r, &st), FT_OK);
    printf("  %s start %g fitted %.6g known 560 (cost %.3g -> %.3g)\n", r.names[0], r.before[0], r.after[0], r.cost_before,
           r.cost_after);
    assert_rel(r.after[0], 560, 0.01 * 560);
    assert_true(r.cost_after < 1e-8);

    /* the scorer's kernel time (ft_kernel_time) equals ft_evaluate's
     * latency of the kernel at the same form, both at the limited clock */
    int64_t w[3] = {8192, 8192, 8192}, h[3] = {8192, 8192, 8192};
    ft_problem *kp;
    assert_int_equal(ft_kernel_new(&kp, "MatMul", "matmul", 2, w, h, &st), FT_OK);
    double cyc, full;
    ft_kernel_choice c = {128, 256, 128, 1, 0, 0, 0, 0};
    assert_int_equal(ft_kernel_time(kp, truth, &c, &cyc, NULL, &st), FT_OK);
    ft_problem *p = ft_problem_clone(kp);
    assert_non_null(p);
    assert_int_equal(ft_target_apply(truth, p, 0, &st), FT_OK);
    int all[1] = {0};
    ft_subgraph one = {.nops = 1, .ops = all, .w = 128, .h = 256, .k = 128};
    ft_schedule s = {.name = "kernel", .nsubgraphs = 1, .sg = &one, .len_granularities = -1, .len_retain = -1,
                     .len_orders = -1, .len_latencies = -1};
    ft_eval ev;
    assert_int_equal(ft_evaluate(p, &s, FT_COMPUTE_NATIVE, &ev, &st), FT_OK);
    truth->energy_power_limit_watts = 0;
    assert_int_equal(ft_kernel_time(kp, truth, &c, &full, NULL, &st), FT_OK);
    printf("  8192^3 at 128x256x128: %.0f cycles at the full clock, %.0f at 560 W (evaluate %.0f)\n", full, cyc, ev.total);
    assert_true(cyc > 1.1 * full);
    assert_rel(ev.sg[0].latency, cyc, 1e-9 * cyc);
    ft_eval_free(&ev);
    ft_problem_free(p);
    ft_problem_free(kp);
    ft_measured_free(m);
    ft_target_free(t);
    ft_target_free(truth);
}

/* The time of a one-MatMul kernel M x N x K on t (split-K allowed), and
 * its chosen form in *c. */
static double gemm_time(const ft_target *t, int64_t m, int64_t n, int64_t k, ft_kernel_choice *c)
{
    int64_t w[3] = {k, n, n}, h[3] = {m, k, m};
    ft_problem *kp;
    ft_status st;
    assert_int_equal(ft_kernel_new(&kp, "MatMul", "matmul", 2, w, h, &st), FT_OK);
    double cyc;
    if (ft_kernel_time(kp, t, NULL, &cyc, c, &st) != FT_OK)
        fail_msg("%s", st.msg);
    ft_problem_free(kp);
    return cyc;
}

/* Partial residency: a copy whose footprint (two 32 MiB tensors) passes a
 * 25 MiB partition is memory-bound at the slow memory's speed; with R =
 * 5/8 F resident, 2 R - F = F / 4 stays cached, so it takes exactly F / 4
 * / read_bandwidth less (the cache's own speed is far above: the floor
 * binds either way); with R = F / 2 nothing stays; with R = F all of it.
 * Out of range values refused. */
static void test_partial_residency(void **state)
{
    (void)state;
    ft_target *t = h100();
    int64_t w[2] = {4096, 4096}, h[2] = {4096, 4096};
    ft_problem *kp;
    ft_status st;
    assert_int_equal(ft_kernel_new(&kp, "Pointwise", "copy", 1, w, h, &st), FT_OK);
    double all, part, most;
    t->cache_resident_bytes = 0;
    assert_int_equal(ft_kernel_time(kp, t, NULL, &all, NULL, &st), FT_OK);
    double fbytes = 2.0 * 4096 * 4096 * (double)t->element_bytes, bw = t->read_bandwidth * t->memory_efficiency;
    t->cache_resident_bytes = fbytes / 2;
    assert_int_equal(ft_kernel_time(kp, t, NULL, &part, NULL, &st), FT_OK);
    assert_rel(part, all, 1e-12);
    t->cache_resident_bytes = fbytes * 5 / 8;
    assert_int_equal(ft_kernel_time(kp, t, NULL, &part, NULL, &st), FT_OK);
    printf("  copy of 32 MiB: %.0f cycles all or nothing, %.0f with a quarter kept\n", all, part);
    assert_rel(all - part, fbytes / 4 / bw, 1e-9);
    /* the whole footprint resident: as warm as a cache that fits it */
    t->cache_resident_bytes = fbytes;
    assert_int_equal(ft_kernel_time(kp, t, NULL, &most, NULL, &st), FT_OK);
    ft_target *big = h100();
    big->cache_partitions = 1;
    big->cache_capacity_bytes = (int64_t)fbytes;
    double warm;
    assert_int_equal(ft_kernel_time(kp, big, NULL, &warm, NULL, &st), FT_OK);
    assert_rel(most, warm, 1e-12);
    assert_true(most < part);
    ft_target_free(big);
    /* a problem's resident part must be 0 or more */
    ft_problem *c = ft_problem_clone(kp);
    assert_non_null(c);
    c->timing.cache_resident = -1;
    assert_int_equal(ft_problem_finish(c, &st), FT_EINPUT);
    assert_non_null(strstr(st.msg, "cache resident part is -1"));
    ft_problem_free(c);
    ft_problem_free(kp);
    ft_target_free(t);
}

/* The tile menu bounded by the register file: with 256 KiB of registers
 * and 4-byte accumulators no MatMul tile of 256 x 256 or more (65536
 * accumulators) is chosen, and a bound no tile fits is an error naming
 * the setting; without the setting (KPU, TPU) any tile fits. */
static void test_register_file_menu(void **state)
{
    (void)state;
    ft_target *t = h100();
    assert_int_equal(t->accumulator_bytes, 4);
    t->register_file_bytes = 262144;
    assert_true(ft_target_tile_fits_registers(t, 128, 256));
    assert_false(ft_target_tile_fits_registers(t, 256, 256));
    assert_false(ft_target_tile_fits_registers(t, 512, 128));
    ft_kernel_choice c;
    static const int64_t shapes[][3] = {{8192, 8192, 8192}, {4096, 4096, 128}, {512, 16384, 1024}};
    for (int i = 0; i < 3; i++) {
        gemm_time(t, shapes[i][0], shapes[i][1], shapes[i][2], &c);
        printf("  %lldx%lldx%lld: tile %lldx%lld\n", (long long)shapes[i][0], (long long)shapes[i][1],
               (long long)shapes[i][2], (long long)c.w, (long long)c.h);
        assert_true(c.w * c.h * 4 < 262144);
    }
    /* none fits */
    t->register_file_bytes = 4;
    int64_t w[3] = {64, 64, 64}, h[3] = {64, 64, 64};
    ft_problem *kp;
    ft_status st;
    double cyc;
    assert_int_equal(ft_kernel_new(&kp, "MatMul", "matmul", 2, w, h, &st), FT_OK);
    assert_int_equal(ft_kernel_time(kp, t, NULL, &cyc, NULL, &st), FT_EINPUT);
    assert_non_null(strstr(st.msg, "compute.register_file_bytes (4)"));
    ft_problem_free(kp);
    /* absent: every tile fits */
    t->register_file_bytes = 0;
    assert_true(ft_target_tile_fits_registers(t, 1 << 20, 1 << 20));
    ft_target_free(t);
}

/* The alignment rule: a MatMul whose K or N is not a multiple of 8 runs
 * at misaligned_efficiency; an aligned one is untouched; M does not
 * count.  A compute-bound shape at efficiency 0.5 takes close to twice
 * as long. */
static void test_misaligned_matmul(void **state)
{
    (void)state;
    ft_target *t = h100();
    assert_int_equal(t->aligned_elements, 8);
    t->energy_power_limit_watts = 0; /* the full clock: the rule alone */
    t->misaligned_efficiency = 1;
    double a1 = gemm_time(t, 8192, 8192, 4096, NULL), m1 = gemm_time(t, 8192, 8192, 4095, NULL);
    double n1 = gemm_time(t, 8192, 8190, 4096, NULL), r1 = gemm_time(t, 8190, 8192, 4096, NULL);
    t->misaligned_efficiency = 0.5;
    double a2 = gemm_time(t, 8192, 8192, 4096, NULL), m2 = gemm_time(t, 8192, 8192, 4095, NULL);
    double n2 = gemm_time(t, 8192, 8190, 4096, NULL), r2 = gemm_time(t, 8190, 8192, 4096, NULL);
    printf("  misaligned K: %.0f -> %.0f cycles, N: %.0f -> %.0f\n", m1, m2, n1, n2);
    assert_rel(a2, a1, 1e-12);
    assert_rel(r2, r1, 1e-12);
    assert_true(m2 > 1.8 * m1 && m2 <= 2 * m1);
    assert_true(n2 > 1.8 * n1 && n2 <= 2 * n1);
    ft_target_free(t);
}

/* The split overhead: a GEMM of few tiles and a long K runs split along
 * K, and its time at that form rises by exactly the overhead; one that
 * runs whole does not change; a large overhead makes the split lose. */
static void test_split_overhead(void **state)
{
    (void)state;
    ft_target *t = h100();
    t->split_overhead = 0;
    ft_kernel_choice c, c2, big;
    double t0 = gemm_time(t, 128, 128, 16384, &c), w0 = gemm_time(t, 4096, 4096, 4096, NULL);
    assert_true(c.split > 1);
    t->split_overhead = 500;
    double t1 = gemm_time(t, 128, 128, 16384, &c2), w1 = gemm_time(t, 4096, 4096, 4096, NULL);
    assert_int_equal(c2.split, c.split);
    assert_rel(t1 - t0, 500, 1e-9);
    assert_rel(w1, w0, 1e-12);
    t->split_overhead = 1e9;
    gemm_time(t, 128, 128, 16384, &big);
    printf("  128x128x16384: split %d, %d with a huge split overhead\n", c.split, big.split);
    assert_int_equal(big.split, 1);
    ft_target_free(t);
}

/* Fit the n settings names of t to m's rows (all of them) from where t
 * has them and check each lands within 1 % of want; o and r keep the
 * fit's options and result. */
static void fit_recovers(ft_target *t, ft_measured *m, const char *const *names, const double *want, int n, ft_calib_opts *o,
                         ft_calib_result *r)
{
    ft_status st;
    ft_calib_opts_init(o);
    o->free = names;
    o->nfree = n;
    o->all_rows = 1;
    assert_int_equal(ft_calibrate(t, &m, 1, o, r, &st), FT_OK);
    for (int i = 0; i < n; i++)
        printf("  %-36s start %-10g fitted %-12.6g known %g\n", names[i], r->before[i], r->after[i], want[i]);
    for (int i = 0; i < n; i++)
        assert_rel(r->after[i], want[i], 0.01);
}

/* Calibration recovers the new settings from data made by a known
 * target: the resident part of the shared cache from GEMMs whose
 * footprints pass a partition, the misaligned efficiency from misaligned
 * GEMMs, the split overhead from GEMMs of few tiles and a long K. */
static void test_calibrate_recovers_gpu_rules(void **state)
{
    (void)state;
    ft_target *truth = h100();
    static const char *const names[] = {"shared_cache.resident_bytes", "compute.misaligned_efficiency",
                                        "execution.split_overhead"};
    const double want[] = {30.0 * 1048576, 0.6, 3000};
    for (int i = 0; i < 3; i++)
        *ft_target_setting(truth, names[i], NULL) = want[i];
    char *text = malloc(1 << 16);
    size_t len = (size_t)sprintf(text, "M\tN\tK\tus_graph\n");
    /* GEMV-like shapes of 48 to 130 MiB (memory-bound, past a partition)
     * and misaligned ones */
    static const int64_t shapes[][3] = {{8192, 128, 3072}, {128, 8192, 3072}, {16384, 128, 2048}, {4096, 4096, 1000},
                                        {2048, 2050, 2048}, {8192, 8192, 1001}, {1024, 1030, 4096}, {512, 8192, 3000},
                                        {8192, 128, 4096}, {12288, 128, 4096}, {8192, 4100, 1024}, {16384, 128, 4096},
                                        {128, 128, 16384}, {256, 128, 8192}, {128, 512, 8192}, {512, 256, 16384}};
    for (int i = 0; i < 16; i++)
        len += gemm_row(text + len, truth, shapes[i][0], shapes[i][1], shapes[i][2]);
    ft_measured *m;
    ft_status st;
    assert_int_equal(ft_measured_load(put("syn_gpu.tsv", text), NULL, &m, &st), FT_OK);
    free(text);
    ft_target *t = h100();
    ft_calib_opts o;
    ft_calib_result r;
    fit_recovers(t, m, names, want, 3, &o, &r);
    /* a target without a shared cache has no resident part to fit */
    t->cache_capacity_bytes = 0;
    o.nfree = 1;
    assert_int_equal(ft_calibrate(t, &m, 1, &o, &r, &st), FT_EINPUT);
    assert_non_null(strstr(st.msg, "has no shared_cache group"));
    ft_measured_free(m);
    ft_target_free(t);
    ft_target_free(truth);
}

/* fit_recovers on the rows of `text` (freed), written to file `name`,
 * from the shipped H100's settings. */
static void fit_text_recovers(const char *name, char *text, const char *const *names, const double *want, int n)
{
    ft_measured *m;
    ft_status st;
    assert_int_equal(ft_measured_load(put(name, text), NULL, &m, &st), FT_OK);
    free(text);
    ft_target *t = h100();
    ft_calib_opts o;
    ft_calib_result r;
    fit_recovers(t, m, names, want, n, &o, &r);
    ft_measured_free(m);
    ft_target_free(t);
}

/* The read and write efficiencies of slow memory: each defaults to
 * slow_memory.efficiency (and follows it when a fit moves it), each scales
 * its own bandwidth, and calibration recovers both from GEMMs that mostly
 * read (GEMV-like) or mostly write (a short K) made by a known target. */
static void test_calibrate_recovers_memory_efficiencies(void **state)
{
    (void)state;
    ft_target *truth = h100();
    double re, we;
    assert_true(truth->read_efficiency < 0 && truth->write_efficiency < 0);
    ft_target_memory_efficiencies(truth, &re, &we);
    assert_true(re == truth->memory_efficiency && we == truth->memory_efficiency);
    static const char *const names[] = {"slow_memory.read_efficiency", "slow_memory.write_efficiency"};
    const double want[] = {0.9, 0.55};
    for (int i = 0; i < 2; i++)
        *ft_target_setting(truth, names[i], NULL) = want[i];
    /* each scales its own bandwidth only */
    int64_t w[3] = {64, 64, 64}, h[3] = {64, 64, 64};
    ft_problem *kp;
    ft_status st;
    assert_int_equal(ft_kernel_new(&kp, "MatMul", "matmul", 2, w, h, &st), FT_OK);
    assert_int_equal(ft_target_apply(truth, kp, 0, &st), FT_OK);
    double eb = (double)truth->element_bytes;
    assert_rel(kp->bandwidth, truth->read_bandwidth * 0.9 / eb, 1e-12);
    assert_rel(kp->timing.write_bandwidth, truth->write_bandwidth * 0.55 / eb, 1e-12);
    ft_problem_free(kp);
    char *text = malloc(1 << 16);
    size_t len = (size_t)sprintf(text, "M\tN\tK\tus_graph\n");
    static const int64_t shapes[][3] = {{8192, 128, 8192}, {128, 16384, 4096}, {16384, 128, 4096}, {256, 8192, 8192},
                                        {8192, 8192, 16},  {16384, 8192, 32},  {8192, 16384, 64},  {12288, 12288, 16}};
    for (int i = 0; i < 8; i++)
        len += gemm_row(text + len, truth, shapes[i][0], shapes[i][1], shapes[i][2]);
    fit_text_recovers("syn_mem.tsv", text, names, want, 2);
    ft_target_free(truth);
}

/* Stream-K (execution.streamk_overhead): absent, no kernel runs it; with
 * it, a GEMM of a few partial waves runs stream-K, faster than its
 * data-parallel form by about the idle part of its last wave, and one of
 * whole waves does not; a fixed stream-K form that no longer applies is an
 * error; calibration recovers the overhead from GEMMs made by a known
 * target. */
static void test_streamk_form_and_recovery(void **state)
{
    (void)state;
    ft_target *truth = h100();
    assert_true(truth->streamk_overhead < 0);
    int64_t w[3] = {4096, 4224, 4224}, h[3] = {2304, 4096, 2304};   /* 2304 x 4224 x 4096 */
    ft_problem *kp;
    ft_status st;
    assert_int_equal(ft_kernel_new(&kp, "MatMul", "matmul", 2, w, h, &st), FT_OK);
    double dp, sk;
    ft_kernel_choice c, cs;
    assert_int_equal(ft_kernel_time(kp, truth, NULL, &dp, &c, &st), FT_OK);
    assert_int_equal(c.streamk, 0);
    truth->streamk_overhead = 0;
    assert_int_equal(ft_kernel_time(kp, truth, NULL, &sk, &cs, &st), FT_OK);
    printf("  2304 x 4224 x 4096: data-parallel %g cycles (%lldx%lld), stream-K %g (%lldx%lld, streamk %d)\n", dp,
           (long long)c.w, (long long)c.h, sk, (long long)cs.w, (long long)cs.h, cs.streamk);
    assert_int_equal(cs.streamk, 1);
    assert_true(sk < 0.95 * dp);
    /* the same form fixed: the same time; its overhead added */
    double again;
    truth->streamk_overhead = 500;
    assert_int_equal(ft_kernel_time(kp, truth, &cs, &again, NULL, &st), FT_OK);
    assert_rel(again, sk + 500, 1e-12);
    ft_problem_free(kp);
    /* 2048 x 4224 (16 x 33 tiles of 128 x 256: 4 whole waves) has no partial wave */
    int64_t w2[3] = {4096, 4224, 4224}, h2[3] = {2048, 4096, 2048};
    assert_int_equal(ft_kernel_new(&kp, "MatMul", "matmul", 2, w2, h2, &st), FT_OK);
    ft_kernel_choice f = {128, 256, 64, 1, 0, 0, 0, 1};
    assert_int_equal(ft_kernel_time(kp, truth, &f, &again, NULL, &st), FT_EINPUT);
    assert_non_null(strstr(st.msg, "stream-K form given no longer applies"));
    ft_problem_free(kp);
    /* recovery */
    truth->streamk_overhead = 3000;
    static const char *const names[] = {"execution.streamk_overhead"};
    const double want[] = {3000};
    char *text = malloc(1 << 16);
    size_t len = (size_t)sprintf(text, "M\tN\tK\tus_graph\n");
    static const int64_t shapes[][3] = {{2304, 4224, 4096}, {2560, 4096, 8192}, {4352, 4096, 4096}, {1152, 8192, 8192},
                                        {3072, 3072, 8192},  {2176, 4096, 4096}, {6400, 4096, 2048}, {1536, 6144, 8192}};
    int used = 0;
    for (int i = 0; i < 8; i++) {
        int64_t gw[3] = {shapes[i][2], shapes[i][1], shapes[i][1]}, gh[3] = {shapes[i][0], shapes[i][2], shapes[i][0]};
        assert_int_equal(ft_kernel_new(&kp, "MatMul", "matmul", 2, gw, gh, &st), FT_OK);
        assert_int_equal(ft_kernel_time(kp, truth, NULL, &again, &c, &st), FT_OK);
        used += c.streamk;
        ft_problem_free(kp);
        len += gemm_row(text + len, truth, shapes[i][0], shapes[i][1], shapes[i][2]);
    }
    printf("  %d of 8 rows run stream-K\n", used);
    assert_true(used >= 3);
    fit_text_recovers("syn_sk.tsv", text, names, want, 1);
    ft_target_free(truth);
}

/* conv.tsv's rows (model layer batch in_ch out_ch kh kw stride pad
 * groups in_h in_w out_h out_w ... us_graph), each convolution as `--as
 * eager` lowers it; n rows of geometry g, times us (NULL: 10 us each). */
static char *conv_text(int n, const int (*g)[12], const double *us)
{
    char *text = malloc(1 << 16);
    size_t len = (size_t)sprintf(text, "model\tlayer\tuses\tbatch\tin_ch\tout_ch\tkh\tkw\tstride\tpad\tdilation\tgroups\tbias\t"
                                       "in_h\tin_w\tout_h\tout_w\tus_stream\tus_graph\n");
    for (int i = 0; i < n; i++)
        len += (size_t)sprintf(text + len, "net\tl%d\t1\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t1\t%d\t0\t%d\t%d\t%d\t%d\t1\t%.9g\n", i, g[i][0],
                               g[i][1], g[i][2], g[i][3], g[i][4], g[i][5], g[i][6], g[i][7], g[i][8], g[i][9], g[i][10],
                               g[i][11], us ? us[i] : 10.0);
    return text;
}

/* A conv file's rows are the eager lowering's kernels (transposes around
 * the implicit GEMM; a 1x1 GEMM alone; a depthwise kernel alone), the
 * convolution rule slows only an implicit GEMM, the small-channel path
 * only under conv_small_channels; and calibration recovers the conv
 * settings and the kernel classes' costs from rows made by a known
 * target. */
static void test_conv_rows_and_recovery(void **state)
{
    (void)state;
    /* batch in out kh kw stride pad groups h w ho wo */
    static const int g[][12] = {
        {32, 3, 64, 7, 7, 2, 3, 1, 224, 224, 112, 112},  {1, 3, 64, 7, 7, 2, 3, 1, 224, 224, 112, 112},
        {32, 64, 64, 3, 3, 1, 1, 1, 56, 56, 56, 56},     {8, 128, 128, 3, 3, 1, 1, 1, 28, 28, 28, 28},
        {32, 256, 256, 3, 3, 1, 1, 1, 14, 14, 14, 14},   {32, 64, 256, 1, 1, 1, 0, 1, 56, 56, 56, 56},
        {32, 144, 144, 3, 3, 1, 1, 144, 56, 56, 56, 56}, {32, 96, 96, 3, 3, 2, 1, 96, 112, 112, 56, 56},
        {16, 4, 32, 3, 3, 1, 1, 1, 64, 64, 64, 64},      {32, 512, 512, 3, 3, 1, 1, 1, 7, 7, 7, 7},
    };
    enum { N = sizeof g / sizeof g[0] };
    char *text = conv_text(N, g, NULL);
    ft_measured *m;
    ft_status st;
    assert_int_equal(ft_measured_load(put("conv.tsv", text), NULL, &m, &st), FT_OK);
    free(text);
    assert_int_equal(m->format, FT_MEAS_CONV);
    assert_string_equal(ft_meas_format_name(m->format), "conv");
    assert_int_equal(m->rows[0].nkernels, 4);   /* to_nhwc, weight_to_nhwc, im2col + MatMul, to_nchw */
    assert_int_equal(m->rows[5].nkernels, 1);   /* 1x1: the GEMM alone */
    assert_int_equal(m->rows[6].nkernels, 1);   /* depthwise, stride 1: one Pointwise */
    assert_int_equal(m->rows[7].nkernels, 1);   /* depthwise, stride 2: window and Pointwise, one kernel */
    assert_int_equal(m->rows[7].kernels[0]->nops, 2);
    assert_string_equal(m->rows[0].kernels[0]->ops[0].kind, "nchw_to_nhwc");
    assert_string_equal(m->rows[0].kernels[3]->ops[0].kind, "nhwc_to_nchw");
    /* the rule: an implicit GEMM at conv_efficiency, under 8 channels at
     * conv_small_efficiency, a 1x1 convolution at the GEMM's speed */
    ft_target *truth = h100();
    const ft_problem *k2 = m->rows[2].kernels[2], *k0 = m->rows[0].kernels[2], *k5 = m->rows[5].kernels[0];
    assert_int_equal(k2->nops, 2);
    truth->conv_efficiency = 0.5;
    truth->conv_small_efficiency = 0.1;
    truth->conv_small_channels = 8;
    assert_rel(ft_target_conv_efficiency(truth, k2, &k2->ops[1]), 0.5, 0);
    assert_rel(ft_target_conv_efficiency(truth, k0, &k0->ops[1]), 0.1, 0);
    assert_rel(ft_target_conv_efficiency(truth, k5, &k5->ops[0]), 1, 0);
    assert_rel(ft_target_conv_efficiency(truth, k2, &k2->ops[0]), 1, 0);   /* the im2col itself */
    static const char *const names[] = {"compute.conv_efficiency", "compute.conv_small_efficiency",
                                        "compute.kind_cost.nchw_to_nhwc", "compute.kind_cost.nhwc_to_nchw",
                                        "compute.kind_cost.depthwise_conv2d"};
    const double want[] = {0.55, 0.08, 40, 12, 300};
    for (int i = 0; i < 5; i++)
        *ft_target_setting(truth, names[i], NULL) = want[i];
    double us[N];
    for (int i = 0; i < N; i++)
        assert_int_equal(ft_meas_predict(&m->rows[i], truth, NULL, NULL, &us[i], &st), FT_OK);
    ft_measured_free(m);
    text = conv_text(N, g, us);
    assert_int_equal(ft_measured_load(put("conv.tsv", text), NULL, &m, &st), FT_OK);
    free(text);
    ft_target *t = h100();   /* conv efficiencies 1 there unless the file sets them: start apart from truth */
    t->conv_small_channels = 8;
    *ft_target_setting(t, names[0], NULL) = 0.8;
    *ft_target_setting(t, names[1], NULL) = 0.3;
    for (int i = 2; i < 5; i++)
        *ft_target_setting(t, names[i], NULL) = 1.5 * want[i];
    ft_calib_opts o;
    ft_calib_result r;
    fit_recovers(t, m, names, want, 5, &o, &r);
    ft_measured_free(m);
    ft_target_free(t);
    ft_target_free(truth);
    /* a grouped convolution that is not depthwise is refused, by its field */
    static const int grouped[][12] = {{1, 64, 64, 3, 3, 1, 1, 4, 8, 8, 8, 8}};
    text = conv_text(1, grouped, NULL);
    load_fails(text, NULL, "groups: 4 groups of 64 channels: only 1 group and depthwise");
    free(text);
    static const int odd[][12] = {{1, 64, 60, 3, 3, 1, 1, 8, 8, 8, 8, 8}};
    text = conv_text(1, odd, NULL);
    load_fails(text, NULL, "groups: 8 does not divide in_ch 64 and out_ch 60");
    free(text);
    load_fails("model\tlayer\tbatch\tin_ch\tout_ch\tkh\tkw\tstride\tpad\tgroups\tin_h\tin_w\tout_h\tout_w\n", NULL,
               "a conv file (model layer batch in_ch out_ch kh kw stride pad groups in_h in_w out_h out_w) without a us_graph column");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_measured_formats_and_errors),
        cmocka_unit_test(test_measured_held_out_problems),
        cmocka_unit_test(test_measured_stats),
        cmocka_unit_test(test_kernel_time_is_exact_and_fastest),
        cmocka_unit_test(test_meas_replay_shares_cache),
        cmocka_unit_test(test_meas_replay_interval),
        cmocka_unit_test(test_calib_reset_interval),
        cmocka_unit_test(test_meas_models_fused_kernels),
        cmocka_unit_test(test_calibrate_recovers_synthetic),
        cmocka_unit_test(test_partial_residency),
        cmocka_unit_test(test_register_file_menu),
        cmocka_unit_test(test_misaligned_matmul),
        cmocka_unit_test(test_split_overhead),
        cmocka_unit_test(test_calibrate_recovers_gpu_rules),
        cmocka_unit_test(test_calibrate_recovers_memory_efficiencies),
        cmocka_unit_test(test_streamk_form_and_recovery),
        cmocka_unit_test(test_calibrate_recovers_energy),
        cmocka_unit_test(test_conv_rows_and_recovery),
        cmocka_unit_test(test_calibrate_recovers_power_limit),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
