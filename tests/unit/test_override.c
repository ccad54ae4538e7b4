/* test_override.c - ft_problem_override: each machine parameter replaced, 0 keeping the problem's, a write bandwidth keeping its ratio, out-of-range values refused with the problem unchanged. */
#include "ft_testutil.h"

static void test_override_replaces_and_keeps(void **state)
{
    (void)state;
    ft_problem *p = ftt_load("tests/vectors/ex1A.problem.json");
    double cap = p->capacity, bw = p->bandwidth;
    int64_t w = p->native_w;
    ft_status st;
    ft_override o = {0};
    assert_int_equal(ft_problem_override(p, &o, &st), FT_OK);   /* all 0: nothing changes */
    assert_true(p->capacity == cap && p->bandwidth == bw && p->native_w == w);
    o.capacity = 777;
    o.native_w = 16;
    o.native_h = 8;
    o.native_k = 4;
    o.units = 3;
    assert_int_equal(ft_problem_override(p, &o, &st), FT_OK);
    assert_true(p->capacity == 777 && p->bandwidth == bw);
    assert_int_equal(p->native_w, 16);
    assert_int_equal(p->native_h, 8);
    assert_int_equal(ft_native_k(p), 4);
    assert_int_equal(p->timing.units, 3);
    /* a separate write bandwidth keeps its ratio to the read bandwidth */
    p->timing.write_bandwidth = 2 * p->bandwidth;
    ft_override b = {.bandwidth = 3 * bw};
    assert_int_equal(ft_problem_override(p, &b, &st), FT_OK);
    assert_true(p->bandwidth == 3 * bw);
    assert_true(fabs(p->timing.write_bandwidth - 6 * bw) < 1e-9 * bw);
    ft_problem_free(p);
}

static void test_override_refuses_bad_values(void **state)
{
    (void)state;
    ft_problem *p = ftt_load("tests/vectors/ex1A.problem.json");
    double cap = p->capacity;
    ft_status st;
    const ft_override bad[] = {{.capacity = -1}, {.capacity = NAN}, {.bandwidth = INFINITY}, {.native_w = -2},
                               {.native_h = FT_OVERRIDE_MAX_NATIVE + 1}, {.units = FT_MAX_UNITS + 1}, {.units = -1}};
    const char *want[] = {"capacity is -1", "capacity is", "bandwidth is", "native width is -2", "native height is",
                          "units is 65537", "units is -1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ft_override o = bad[i];
        o.capacity = o.capacity != 0 ? o.capacity : 0;
        if (i > 1)
            o.capacity = 5;   /* a valid change alongside: must not be applied */
        assert_int_equal(ft_problem_override(p, &o, &st), FT_EINPUT);
        if (!strstr(st.msg, want[i]))
            fail_msg("case %zu: '%s' lacks '%s'", i, st.msg, want[i]);
        assert_true(p->capacity == cap);
    }
    ft_problem_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_override_replaces_and_keeps),
        cmocka_unit_test(test_override_refuses_bad_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
