/* test_tiling.c - cmocka tests of granularity choice (sched/search/tiling.c): with a native tile past FT_SEARCH_ALL_SIZES, the search still finds tile sizes that are neither powers of two nor divisors, the ones that set a tile count. */
#include "ft_testutil.h"

/* A capacity-tight MLP chain (mlsys-2026-5's first three ops: a MatMul
 * with K = 128 fused upstream of a Pointwise and a MatMul with K = 512;
 * capacity 30000, native 128).  Under the op compute model the best
 * single-subgraph tiling found is 128 x 114 x 2: 114 = ceil(1024 / 9) is
 * the smallest height giving 9 row tiles, and at 9 rows the 114-row block
 * of the 1024 x 128 input plus the 114 x 128 output fit the capacity
 * where 128 rows do not.  Powers of two and divisors of the lengths give
 * at best 122333.87 (64 x 128 x 4, two column tiles recomputing the
 * upstream MatMul); the schedule found is checked by ft_evaluate. */
#define CHAIN3                                                                              \
    PJ("[128, 512, 128, 512, 512, 128]", "[1024, 128, 512, 1024, 1024, 1024]",              \
       "[[0, 1], [3], [4, 2]]", "[[3], [4], [5]]", "[1000, 200, 1000]", "[" MM ", " PW ", " MM "]", \
       "30000", "15", N128)
#define CHAIN3_FOUND 96119.4666666667  /* 128 x 114 x 2, one subgraph */
#define CHAIN3_COARSE 122333.866666667 /* the best with powers of two and divisors */

static void test_tiling_tile_count_sizes(void **state)
{
    (void)state;
    ft_problem *p = NULL;
    ft_status st;
    assert_int_equal(ft_problem_parse(CHAIN3, "chain3.json", &p, &st), FT_OK);
    ft_search_opts o;
    ft_search_opts_init(&o);
    o.model = FT_COMPUTE_OP;
    o.time_limit = 30; /* a small problem: the passes end long before */
    o.threads = 1;
    ft_schedule *s = NULL;
    ft_eval ev;
    int rc = ft_search(p, &o, &s, &ev, &st);
    if (rc != FT_OK)
        fail_msg("ft_search: %s", st.msg);
    ft_eval check;
    assert_int_equal(ft_evaluate(p, s, FT_COMPUTE_OP, &check, &st), FT_OK);
    assert_cost(check.total, ev.total);
    if (!(ev.total <= CHAIN3_FOUND * (1 + 1e-9)))
        fail_msg("total %.10g above %.10g (the coarse candidates give %.10g)", ev.total, CHAIN3_FOUND,
                 CHAIN3_COARSE);
    int odd = 0;
    for (int i = 0; i < s->nsubgraphs; i++) {
        int64_t h = s->sg[i].h, w = s->sg[i].w;
        odd |= (h & (h - 1)) != 0 || (w & (w - 1)) != 0;
    }
    assert_true(odd);
    ft_eval_free(&check);
    ft_eval_free(&ev);
    ft_schedule_free(s);
    ft_problem_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tiling_tile_count_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
