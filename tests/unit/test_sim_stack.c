/* test_sim_stack.c - after a replay the sanitizers know the calling thread's stack again (sim/stack_bounds.cc): LeakSanitizer, run right after ft_sim_run, finds every block that only this thread's stack points to and reports nothing lost.  A build without AddressSanitizer checks the replays only. */
#include "ft_testutil.h"

#include "fusetile/sim.h"

#if defined(__SANITIZE_ADDRESS__)
#define FT_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FT_TEST_ASAN 1
#endif
#endif
#ifdef FT_TEST_ASAN
#include <sanitizer/lsan_interface.h>
#endif

/* One Pointwise op in a few tiles: a short replay. */
#define PROBLEM PJ("[64, 64]", "[32, 32]", "[[0]]", "[[1]]", "[10]", "[" PW "]", "1000", "10", "[16, 16]")
#define SCHEDULE SJ("[[0]]", "[[16, 16, 1]]", "[[]]")

/* Replays twice (the first elaborates the SystemC model, the second reuses
 * it), each followed by a leak check that must find the block below: it is
 * pointed to from this function's frame only. */
static void test_stack_known_after_replay(void **state)
{
    (void)state;
    const char *err = NULL;
    ft_status st;
    ft_sim *sim = NULL;
    ft_problem *p = NULL;
    ft_schedule *s = NULL;
    assert_int_equal(ft_sim_new(&sim, &err), FT_OK);
    assert_int_equal(ft_problem_parse(PROBLEM, "p.json", &p, &st), FT_OK);
    assert_int_equal(ft_schedule_parse(SCHEDULE, "s.json", &s, &st), FT_OK);
    char *volatile only_on_stack = malloc(64);
    assert_non_null(only_on_stack);
    for (int run = 0; run < 2; run++) {
        ft_sim_opts o;
        ft_sim_opts_init(&o);
        ft_sim_result r;
        assert_int_equal(ft_sim_run(sim, p, s, &o, &r), FT_OK);
        assert_true(r.steps > 0);
        ft_sim_result_free(&r);
#ifdef FT_TEST_ASAN
        /* 0: every block is reachable, this thread's stack scanned */
        assert_int_equal(__lsan_do_recoverable_leak_check(), 0);
#endif
    }
    free(only_on_stack);
    ft_schedule_free(s);
    ft_problem_free(p);
    ft_sim_free(sim);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stack_known_after_replay),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
