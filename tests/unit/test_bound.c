/* test_bound.c - cmocka tests of the lower bound of SPEC section 5 (C, M and max(C, M), both compute models) on hand-computed problems and every vector. */
#include "ft_testutil.h"

/* Example 1: op0 T0 -> T1 (1000), op1 T1 -> T2 (100), 128 x 128,
 * bandwidth 10. */
static const char ex1[] =
    PJ("[128, 128, 128]", "[128, 128, 128]", "[[0], [1]]", "[[1], [2]]",
       "[1000, 100]", "[" PW ", " PW "]", "35000", "10", "[128, 128]");

/* Example 3: intermediates T1, T2 are neither graph inputs nor outputs. */
static const char ex3[] =
    PJ("[128, 128, 128, 128]", "[128, 128, 128, 128]", "[[0], [1], [1, 2]]",
       "[[1], [2], [3]]", "[1500, 1500, 1500]", "[" PW ", " PW ", " PW "]",
       "50000", "10", "[128, 128]");

/* Vector D-deep-k: one MatMul, K = 512, cost 4000, bandwidth 20. */
static const char deep_k[] =
    PJ("[512, 128, 128]", "[128, 512, 128]", "[[0, 1]]", "[[2]]", "[4000]",
       "[" MM "]", "60000", "20", "[128, 128]");

/* Vector A-partial-k-edge: 100 x 100 output, K = 200, bandwidth 10. */
static const char partial[] =
    PJ("[200, 100, 100]", "[100, 200, 100]", "[[0, 1]]", "[[2]]", "[1000]",
       "[" MM "]", "50000", "10", "[128, 128]");

/* Sizes that are not multiples of a non-square native granularity
 * [nw, nh] = [128, 32]:
 *   op0 MatMul T0 (300w x 100h) x T1 (200w x 300h) -> T2 (200w x 100h),
 *   K = 300;  op1 Pointwise T2 -> T3 (200w x 100h).  Bandwidth 10. */
static const char odd[] =
    PJ("[300, 200, 200, 200]", "[100, 300, 100, 100]", "[[0, 1], [2]]",
       "[[2], [3]]", "[1000, 10]", "[" MM ", " PW "]", "100000", "10",
       "[128, 32]");

static int setup_ex1(void **state) { return ftt_fixture_new(state, ex1, NULL); }
static int setup_ex3(void **state) { return ftt_fixture_new(state, ex3, NULL); }
static int setup_deep_k(void **state) { return ftt_fixture_new(state, deep_k, NULL); }
static int setup_partial(void **state) { return ftt_fixture_new(state, partial, NULL); }
static int setup_odd(void **state) { return ftt_fixture_new(state, odd, NULL); }

/* Check C, M and LB = max(C, M) under model m. */
static void check_bound(const ft_problem *p, ft_compute_model m, double c,
                        double mem)
{
    double gc = -1, gm = -1, lb;
    lb = ft_lower_bound(p, m, &gc, &gm);
    assert_cost(gc, c);
    assert_cost(gm, mem);
    assert_cost(lb, c > mem ? c : mem);
    /* the out-parameters are optional */
    assert_cost(ft_lower_bound(p, m, NULL, NULL), lb);
    assert_cost(ft_lower_bound(p, m, &gc, NULL), lb);
    assert_cost(ft_lower_bound(p, m, NULL, &gm), lb);
}

static void test_bound_pointwise_chain(void **state)
{
    ftt_fixture *f = *state;
    /* C = 1000 x 1 x 1 + 100 x 1 x 1 = 1100;
     * M = (T0 16384 + T2 16384) / 10 = 3276.8; LB = M */
    check_bound(f->p, FT_COMPUTE_NATIVE, 1100, 3276.8);
    check_bound(f->p, FT_COMPUTE_OP, 1100, 3276.8);
}

static void test_bound_counts_only_graph_inputs_outputs(void **state)
{
    ftt_fixture *f = *state;
    /* C = 3 x 1500 = 4500; M = (T0 + T3) / 10 = 32768 / 10 = 3276.8
     * (T1 and T2 are intermediates); LB = C */
    check_bound(f->p, FT_COMPUTE_NATIVE, 4500, 3276.8);
    check_bound(f->p, FT_COMPUTE_OP, 4500, 3276.8);
}

static void test_bound_matmul_models_differ(void **state)
{
    ftt_fixture *f = *state;
    /* native: C = 4000 x 1 x 1 x 512/128 = 16000; op: 4000 x 512/512 =
     * 4000.  M = (65536 + 65536 + 16384) / 20 = 7372.8 */
    check_bound(f->p, FT_COMPUTE_NATIVE, 16000, 7372.8);
    check_bound(f->p, FT_COMPUTE_OP, 4000, 7372.8);
}

static void test_bound_partial_native_tile(void **state)
{
    ftt_fixture *f = *state;
    /* output 100 x 100: ceil(100/128) = 1 each way.
     * native: 1000 x 1 x 1 x 200/128 = 1562.5; op: 1000.
     * M = (20000 + 20000 + 10000) / 10 = 5000 */
    check_bound(f->p, FT_COMPUTE_NATIVE, 1562.5, 5000);
    check_bound(f->p, FT_COMPUTE_OP, 1000, 5000);
}

static void test_bound_non_multiple_sizes(void **state)
{
    ftt_fixture *f = *state;
    /* output tiles: ceil(W/nw) x ceil(H/nh) = ceil(200/128) x ceil(100/32)
     * = 2 x 4 = 8 (swapping nw and nh would give 7 x 1).
     * native: MatMul 1000 x 8 x 300/128 = 18750, Pointwise 10 x 8 = 80,
     * C = 18830; op: 1000 x 8 + 80 = 8080.
     * M = (T0 30000 + T1 60000 + T3 20000) / 10 = 11000 */
    check_bound(f->p, FT_COMPUTE_NATIVE, 18830, 11000);
    check_bound(f->p, FT_COMPUTE_OP, 8080, 11000);
    /* at bandwidth 20, M = 5500 */
    f->p->bandwidth = 20;
    check_bound(f->p, FT_COMPUTE_NATIVE, 18830, 5500);
    check_bound(f->p, FT_COMPUTE_OP, 8080, 5500);
}

/* LB <= the total of every valid vector is checked with the vectors in
 * test_eval.c (test_eval_vectors_expected_tsv). */

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_bound_pointwise_chain, setup_ex1, ftt_teardown),
        cmocka_unit_test_setup_teardown(test_bound_counts_only_graph_inputs_outputs, setup_ex3, ftt_teardown),
        cmocka_unit_test_setup_teardown(test_bound_matmul_models_differ, setup_deep_k, ftt_teardown),
        cmocka_unit_test_setup_teardown(test_bound_partial_native_tile, setup_partial, ftt_teardown),
        cmocka_unit_test_setup_teardown(test_bound_non_multiple_sizes, setup_odd, ftt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
