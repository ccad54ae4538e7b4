/* test_layout.c - cmocka tests of the Layout op (SPEC 1, 3, 4, 5, 7): loading and rejection, hand-computed regions, reuse and totals of fused and unfused schedules, floor and ceil of the proportional mapping, and ft_search's schedules against both lower bounds. */
#include "ft_testutil.h"
#include "layout_problems.h"

/* ------------------------------------------------------------ fixtures */

static int setup_im_fused(void **state) { return ftt_fixture_new(state, IM_PROBLEM, IM_FUSED); }
static int setup_im_split(void **state) { return ftt_fixture_new(state, IM_PROBLEM, IM_SPLIT); }
static int setup_ep(void **state) { return ftt_fixture_new(state, EP_PROBLEM, EP_FUSED); }
static int setup_nd(void **state) { return ftt_fixture_new(state, ND_PROBLEM, ND_SCHEDULE); }
static int setup_up(void **state) { return ftt_fixture_new(state, UP_PROBLEM, UP_SCHEDULE); }
static int setup_big(void **state) { return ftt_fixture_new(state, BIG_PROBLEM, BIG_SCHEDULE); }

/* Walk subgraph sg of the fixture into f->steps and check its grid. */
static void walk_grid(ftt_fixture *f, int sg, int64_t ntx, int64_t nty, int64_t nk)
{
    ft_status st;
    assert_int_equal(ft_schedule_validate(f->p, f->s, &st), FT_OK);
    ftt_steps_free(&f->steps);
    assert_int_equal(ftt_walk_all(f->p, f->s, sg, FT_COMPUTE_NATIVE, &f->steps), 0);
    assert_int_equal(f->steps.ntx, ntx);
    assert_int_equal(f->steps.nty, nty);
    assert_int_equal(f->steps.nk, nk);
    assert_int_equal(f->steps.n, ntx * nty * nk);
}

/* Evaluate the fixture under model m into f->eval; the total must be want. */
static void eval_total(ftt_fixture *f, ft_compute_model m, double want)
{
    ft_status st;
    ft_eval_free(&f->eval);
    if (ft_evaluate(f->p, f->s, m, &f->eval, &st) != FT_OK)
        fail_msg("ft_evaluate: %s", st.msg);
    assert_cost(f->eval.total, want);
    assert_true(f->eval.lower_bound <= f->eval.total * (1 + 1e-12));
    assert_true(f->eval.capacity_bound <= f->eval.total * (1 + 1e-12));
}

/* Assert that active op a of step s is op `op` computing rows [r0, r1) x
 * cols [c0, c1) of its output with the given role and dimension kinds. */
static void assert_act(const ft_step *s, int a, int op, ft_role role, int64_t r0, int64_t r1, int64_t c0, int64_t c1,
                       int row_kind, int col_kind)
{
    assert_true(a < s->nactive);
    const ft_active *x = &s->acts[a];
    assert_int_equal(x->op, op);
    assert_int_equal(x->role, role);
    assert_int_equal(x->region.r0, r0);
    assert_int_equal(x->region.r1, r1);
    assert_int_equal(x->region.c0, c0);
    assert_int_equal(x->region.c1, c1);
    assert_int_equal(x->row_kind, row_kind);
    assert_int_equal(x->col_kind, col_kind);
}

/* ------------------------------------------------------------ loading */

static void test_layout_problem_load(void **state)
{
    ftt_fixture *f = *state;
    ft_problem *q = NULL;
    ft_status st;
    assert_int_equal(f->p->ops[0].type, FT_OP_LAYOUT);
    assert_int_equal(f->p->ops[0].k, 0);
    assert_int_equal(f->p->ops[1].type, FT_OP_MATMUL);
    assert_int_equal(f->p->ops[1].k, 144);
    assert_string_equal(ft_op_type_name(FT_OP_MATMUL), "MatMul");
    assert_string_equal(ft_op_type_name(FT_OP_POINTWISE), "Pointwise");
    assert_string_equal(ft_op_type_name(FT_OP_LAYOUT), "Layout");
    assert_string_equal(ft_op_type_name((ft_op_type)7), "unknown");
    /* the writer names the type and the text reads back the same */
    char *text = ft_problem_to_json(f->p);
    assert_non_null(text);
    assert_non_null(strstr(text, "\"op_types\": [\"Layout\",\"MatMul\"]"));
    int rc = ft_problem_parse(text, "round-trip", &q, &st);
    free(text);
    assert_int_equal(rc, FT_OK);
    assert_int_equal(q->ops[0].type, FT_OP_LAYOUT);
    assert_int_equal(q->ops[0].ninputs, 1);
    assert_int_equal(q->tensors[1].width, 144);
    ft_problem_free(q);
    /* any two shapes: a 1 x 1 input copied into a 1000 x 3 output */
    assert_int_equal(ft_problem_parse(PJ("[1, 1000]", "[1, 3]", "[[0]]", "[[1]]", "[1]", "[" LY "]", "100", "1", "[4, 4]"),
                                      "any-shape", &q, &st),
                     FT_OK);
    ft_problem_free(q);
}

/* A problem text that ft_problem_parse must reject with a one-line
 * message naming the file and containing `why`. */
static void expect_layout_reject(const char *json, const char *why)
{
    ft_problem *p = NULL;
    ft_status st;
    assert_int_equal(ft_problem_parse(json, "bad-layout.json", &p, &st), FT_EINPUT);
    assert_null(p);
    assert_msg_has(st.msg, "bad-layout.json");
    assert_msg_has(st.msg, why);
    assert_null(strchr(st.msg, '\n'));
}

#define IM_WITH_INPUTS(in0)                                                  \
    PJ("[16, 144, 8, 8]", "[128, 64, 144, 64]", "[" in0 ", [1, 2]]",         \
       "[[1], [3]]", "[50, 200]", "[" LY ", " MM "]", "20000", "4",          \
       "[48, 32]")

static void test_layout_reject_input_counts(void **state)
{
    (void)state;
    expect_layout_reject(IM_WITH_INPUTS("[]"), "inputs[0]: Layout op 0 has 0 inputs, needs exactly 1 [X]");
    expect_layout_reject(IM_WITH_INPUTS("[0, 2]"), "inputs[0]: Layout op 0 has 2 inputs, needs exactly 1 [X]");
    expect_layout_reject(IM_WITH_INPUTS("[0, 0, 2]"), "inputs[0]: Layout op 0 has 3 inputs, needs exactly 1 [X]");
    /* the type names in the messages */
    expect_layout_reject(PJ("[4, 4]", "[4, 4]", "[[0]]", "[[1]]", "[1]", "[\"layout\"]", "100", "1", "[4, 4]"),
                         "op_types[0] is \"layout\", an unknown op type (MatMul, Pointwise or Layout)");
    expect_layout_reject(PJ("[4, 4]", "[4, 4]", "[[0]]", "[[1]]", "[1]", "[3]", "100", "1", "[4, 4]"),
                         "op_types[0] is an integer, must be \"MatMul\", \"Pointwise\" or \"Layout\"");
}

/* A problem built or edited by hand with a type that is none of the three
 * is rejected by ft_problem_finish. */
static void test_layout_finish_rejects_unknown_type(void **state)
{
    ftt_fixture *f = *state;
    ft_status st;
    f->p->ops[0].type = (ft_op_type)7;
    assert_int_equal(ft_problem_finish(f->p, &st), FT_EINPUT);
    assert_msg_has(st.msg, "op_types[0] is type 7");
    f->p->ops[0].type = FT_OP_LAYOUT;
    assert_int_equal(ft_problem_finish(f->p, &st), FT_OK);
}

/* ------------------------------------------------------------ regions */

/* Columns of T0 (width 16) that k slice s (48 wide) of T1 (width 144)
 * maps to: [floor(48 s 16 / 144), ceil(48 (s + 1) 16 / 144)). */
static const int64_t im_c0[3] = {0, 5, 10}, im_c1[3] = {6, 11, 16};

/* Fused: the Layout op is upstream of the MatMul.  Tile t, k-step s:
 * the Layout computes T1[32t:32t+32, 48s:48s+48] (spatial x reduction),
 * which needs T0[64t:64t+64, im_c0[s]:im_c1[s]] (64 x 6 = 384, a column
 * shared by adjacent slices), and the MatMul T2[48s:48s+48, 0:8] (384).
 * Compute: 50 x 1 x 48/48 + 200 x 1 x 1 x 48/48 = 250; memory 768 / 4 =
 * 192, with the write of T3's 32 x 8 tile (256) at s = 2: 256. */
static void test_layout_im2col_fused_regions(void **state)
{
    ftt_fixture *f = *state;
    walk_grid(f, 0, 1, 2, 3);
    for (int t = 0; t < 2; t++)
        for (int s = 0; s < 3; s++) {
            const ft_step *st = &f->steps.v[t * 3 + s].st;
            assert_int_equal(st->tile, t);
            assert_int_equal(st->kstep, s);
            assert_int_equal(st->nactive, 2);
            assert_act(st, 0, 0, FT_ROLE_UPSTREAM, 32 * t, 32 * t + 32, 48 * s, 48 * s + 48, FT_DIM_SPATIAL, FT_DIM_REDUCTION);
            assert_act(st, 1, 1, FT_ROLE_KLOOP, 32 * t, 32 * t + 32, 0, 8, FT_DIM_SPATIAL, FT_DIM_SPATIAL);
            assert_int_equal(st->nslices, 2);
            assert_slice(st, 0, 64 * t, 64 * t + 64, im_c0[s], im_c1[s], 1);
            assert_slice(st, 2, 48 * s, 48 * s + 48, 0, 8, 1);
            assert_int_equal(st->loaded_elems, 768);
            assert_int_equal(st->nwrites, s == 2);
            if (s == 2)
                assert_write(st, 3, 32 * t, 32 * t + 32, 0, 8);
            assert_cost(st->compute, 250);
            assert_cost(st->latency, s == 2 ? 256 : 250);
            assert_int_equal(st->working_set, 768 + 256);
        }
    eval_total(f, FT_COMPUTE_NATIVE, 1512);
    assert_int_equal(f->eval.sg[0].loaded, 6 * 768);
    assert_int_equal(f->eval.sg[0].written, 512);
    /* op model: the MatMul's k-step costs 200 x 48/144; memory-bound */
    eval_total(f, FT_COMPUTE_OP, 1280);
}

/* Unfused: the Layout op alone is an epilogue over T1's 3 x 2 tiles of
 * 48 x 32, each reading 64 x 6 of T0 and writing 1536 of T1 (480 a step,
 * 2880); the MatMul reads T1 back, 1536 + 384 a step (480, 480, 544 with
 * the write: 3008).  The im2col traffic shows: 23552 elements moved, not
 * the 5120 of the fused schedule. */
static void test_layout_im2col_unfused_traffic(void **state)
{
    ftt_fixture *f = *state;
    walk_grid(f, 0, 3, 2, 1);
    for (int t = 0; t < 2; t++)
        for (int c = 0; c < 3; c++) {
            const ft_step *st = &f->steps.v[t * 3 + c].st;
            assert_int_equal(st->nactive, 1);
            assert_act(st, 0, 0, FT_ROLE_EPILOGUE, 32 * t, 32 * t + 32, 48 * c, 48 * c + 48, FT_DIM_SPATIAL, FT_DIM_SPATIAL);
            assert_int_equal(st->nslices, 1);
            assert_slice(st, 0, 64 * t, 64 * t + 64, im_c0[c], im_c1[c], 1);
            assert_write(st, 1, 32 * t, 32 * t + 32, 48 * c, 48 * c + 48);
            assert_cost(st->compute, 50);
            assert_cost(st->latency, 480);
        }
    walk_grid(f, 1, 1, 2, 3);
    assert_slice(&f->steps.v[4].st, 1, 32, 64, 48, 96, 1);
    assert_slice(&f->steps.v[4].st, 2, 48, 96, 0, 8, 1);
    for (int m = 0; m < 2; m++) {
        eval_total(f, (ft_compute_model)m, 5888);
        assert_cost(f->eval.sg[0].latency, 2880);
        assert_int_equal(f->eval.sg[0].loaded, 2304);
        assert_int_equal(f->eval.sg[0].written, 9216);
        assert_cost(f->eval.sg[1].latency, 3008);
        assert_int_equal(f->eval.sg[1].loaded, 11520);
        assert_int_equal(f->eval.sg[1].written, 512);
    }
    /* each subgraph's figures alone are the same */
    ft_sg_result r;
    ft_status st;
    assert_int_equal(ft_evaluate_subgraph(f->p, f->s, 0, FT_COMPUTE_NATIVE, &r, &st), FT_OK);
    assert_cost(r.latency, 2880);
    assert_true(ft_tensor_written(f->p, f->s, 0, 1));
}

/* A Layout epilogue after a MatMul: the grid covers T2 (32w x 64h) and T3
 * (16w x 128h): 1 x 4 tiles of 32 x 32, 2 k-steps.  Tiles 0 and 1 run the
 * MatMul (T0[32r:32r+32, 32s:32s+32] and T1[32s:32s+32, 0:32], 2048 a
 * step) and, at k-step 1, the Layout op, whose input regions are made in
 * the subgraph (ephemeral); tiles 2 and 3 lie outside T2: their first
 * k-step does nothing, their last only the Layout op and its write. */
static void test_layout_epilogue_after_matmul(void **state)
{
    ftt_fixture *f = *state;
    walk_grid(f, 0, 1, 4, 2);
    for (int r = 0; r < 2; r++) {
        const ft_step *a = &f->steps.v[2 * r].st, *b = &f->steps.v[2 * r + 1].st;
        assert_int_equal(a->nactive, 1);
        assert_act(a, 0, 0, FT_ROLE_KLOOP, 32 * r, 32 * r + 32, 0, 32, FT_DIM_SPATIAL, FT_DIM_SPATIAL);
        assert_slice(a, 0, 32 * r, 32 * r + 32, 0, 32, 1);
        assert_slice(a, 1, 0, 32, 0, 32, 1);
        assert_int_equal(b->nactive, 2);
        assert_act(b, 1, 1, FT_ROLE_EPILOGUE, 32 * r, 32 * r + 32, 0, 16, FT_DIM_SPATIAL, FT_DIM_SPATIAL);
        assert_int_equal(b->nslices, 2); /* T2 is made here: no slice */
        assert_int_equal(b->nwrites, 1);
        assert_write(b, 3, 32 * r, 32 * r + 32, 0, 16);
        assert_cost(a->latency, 400);        /* 400 x 32/32 against 2048 / 8 */
        assert_cost(b->latency, 430);        /* + 30 against 2560 / 8 */
    }
    for (int r = 2; r < 4; r++) {
        const ft_step *a = &f->steps.v[2 * r].st, *b = &f->steps.v[2 * r + 1].st;
        assert_int_equal(a->nactive, 0);
        assert_int_equal(a->nslices, 0);
        assert_cost(a->latency, 0);
        assert_int_equal(b->nactive, 1);
        assert_act(b, 0, 1, FT_ROLE_EPILOGUE, 32 * r, 32 * r + 32, 0, 16, FT_DIM_SPATIAL, FT_DIM_SPATIAL);
        assert_int_equal(b->nslices, 0);
        assert_write(b, 3, 32 * r, 32 * r + 32, 0, 16);
        assert_cost(b->latency, 64);         /* 512 / 8 against 30 */
    }
    eval_total(f, FT_COMPUTE_NATIVE, 2 * (400 + 430) + 2 * 64);
    /* op model: 400 x 32/64 = 200 a step; 256 and 320 of memory */
    eval_total(f, FT_COMPUTE_OP, 2 * (256 + 320) + 2 * 64);
}

/* Sizes that do not divide: T1 (4w x 3h) read from T0 (10w x 7h) at 2 x 2
 * tiles.  Rows [0, 2) need [0, ceil(14/3) = 5), rows [2, 3) need
 * [floor(14/3) = 4, 7); columns [0, 2) need [0, 5), [2, 4) need [5, 10).
 * 25 + 4, 25 + 4, 15 + 2, 15 + 2 elements moved: 92 at bandwidth 1. */
static void test_layout_nondiv_floor_ceil(void **state)
{
    ftt_fixture *f = *state;
    static const int64_t want[4][4] = {{0, 5, 0, 5}, {0, 5, 5, 10}, {4, 7, 0, 5}, {4, 7, 5, 10}};
    walk_grid(f, 0, 2, 2, 1);
    for (int t = 0; t < 4; t++) {
        const ft_step *st = &f->steps.v[t].st;
        assert_int_equal(st->nslices, 1);
        assert_slice(st, 0, want[t][0], want[t][1], want[t][2], want[t][3], 1);
        assert_int_equal(st->written_elems, t < 2 ? 4 : 2);
        assert_cost(st->compute, 10);
    }
    eval_total(f, FT_COMPUTE_NATIVE, 92);
    eval_total(f, FT_COMPUTE_OP, 92);
    /* the bound: compute 10 x 2 x 2 = 40 against (70 + 12) / 1 */
    assert_cost(f->eval.lower_bound, 82);
}

/* Upsampling: T1 (2w x 8h) from T0 (2w x 2h).  Rows [0, 2) and [2, 4)
 * both need row [0, 1) of T0, [4, 6) and [6, 8) row [1, 2): the second
 * tile of each pair reuses the slice of the first (SPEC 4's exact-match
 * reuse).  Steps: (2 + 4), 4, (2 + 4), 4 = 20. */
static void test_layout_upsample_reuse(void **state)
{
    ftt_fixture *f = *state;
    walk_grid(f, 0, 1, 4, 1);
    for (int t = 0; t < 4; t++) {
        const ft_step *st = &f->steps.v[t].st;
        assert_slice(st, 0, t / 2, t / 2 + 1, 0, 2, t % 2 == 0);
        assert_int_equal(st->loaded_elems, t % 2 == 0 ? 2 : 0);
    }
    eval_total(f, FT_COMPUTE_NATIVE, 20);
    eval_total(f, FT_COMPUTE_OP, 20);
}

/* The mapping is exact where r1 H(X) passes 64 bits: tile 2 of T1 (rows
 * [2e9, 3e9)) needs T0 rows [floor(8e18 / 3e9), ceil(1.2e19 / 3e9)) =
 * [2666666666, 4e9). */
static void test_layout_large_dims_exact(void **state)
{
    ftt_fixture *f = *state;
    static const int64_t want[3][2] = {{0, 1333333334}, {1333333333, 2666666667}, {2666666666, 4000000000}};
    walk_grid(f, 0, 1, 3, 1);
    for (int t = 0; t < 3; t++) {
        const ft_step *st = &f->steps.v[t].st;
        assert_slice(st, 0, want[t][0], want[t][1], 0, 1, 1);
        assert_int_equal(st->written_elems, 1000000000);
    }
    /* three steps of (1333333334 + 1e9) / 1000 */
    eval_total(f, FT_COMPUTE_NATIVE, 3 * 2333333.334);
}

/* ------------------------------------------------------------ search */

/* ft_search's schedules of problems with Layout ops are valid, evaluate
 * to what it reports, lie above both lower bounds and are no worse than a
 * known schedule (the vectors'). */
static void search_check(const char *json, const char *name, const double known[2])
{
    ft_problem *p = NULL;
    ft_status st;
    if (ft_problem_parse(json, name, &p, &st) != FT_OK)
        fail_msg("%s: %s", name, st.msg);
    for (int m = 0; m < 2; m++) {
        ft_search_opts o;
        ft_schedule *s = NULL;
        ft_eval ev, ev2;
        memset(&ev, 0, sizeof ev);
        memset(&ev2, 0, sizeof ev2);
        ft_search_opts_init(&o);
        o.model = (ft_compute_model)m;
        o.time_limit = 1.0;
        o.threads = 2;
        if (ft_search(p, &o, &s, &ev, &st) != FT_OK)
            fail_msg("%s (%s): ft_search: %s", name, ft_compute_model_name(o.model), st.msg);
        if (ft_evaluate(p, s, o.model, &ev2, &st) != FT_OK)
            fail_msg("%s (%s): ft_search's schedule is invalid: %s", name, ft_compute_model_name(o.model), st.msg);
        assert_cost(ev2.total, ev.total);
        double lb = ft_lower_bound(p, o.model, NULL, NULL), cb = ft_lower_bound_capacity(p, o.model, NULL, NULL);
        if (ev2.total < lb * (1 - 1e-9) || ev2.total < cb * (1 - 1e-9))
            fail_msg("%s (%s): total %.17g below a bound (SPEC 5: %.17g, capacity: %.17g)", name,
                     ft_compute_model_name(o.model), ev2.total, lb, cb);
        assert_true(cb >= lb);
        if (known && ev2.total > known[m] * (1 + 1e-9))
            fail_msg("%s (%s): ft_search %.17g, worse than the known %.17g", name, ft_compute_model_name(o.model),
                     ev2.total, known[m]);
        ft_eval_free(&ev);
        ft_eval_free(&ev2);
        ft_schedule_free(s);
    }
    ft_problem_free(p);
}

static void test_layout_search_valid_above_bounds(void **state)
{
    static const double im[2] = {1512, 1280}, ep[2] = {1788, 1280}, nd[2] = {92, 92}, up[2] = {20, 20};
    (void)state;
    search_check(IM_PROBLEM, "im2col", im);
    search_check(EP_PROBLEM, "epilogue", ep);
    search_check(ND_PROBLEM, "nondiv", nd);
    search_check(UP_PROBLEM, "upsample", up);
    search_check(CNN_PROBLEM, "cnn", NULL);
}

#define T(fn, setup) cmocka_unit_test_setup_teardown(fn, setup, ftt_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_layout_problem_load, setup_im_fused),
        cmocka_unit_test(test_layout_reject_input_counts),
        T(test_layout_finish_rejects_unknown_type, setup_im_fused),
        T(test_layout_im2col_fused_regions, setup_im_fused),
        T(test_layout_im2col_unfused_traffic, setup_im_split),
        T(test_layout_epilogue_after_matmul, setup_ep),
        T(test_layout_nondiv_floor_ceil, setup_nd),
        T(test_layout_upsample_reuse, setup_up),
        T(test_layout_large_dims_exact, setup_big),
        cmocka_unit_test(test_layout_search_valid_above_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
