/* test_power.c - the power rule (ft__power_latency, ft__energy under energy.power_limit_watts; sched/cost/energy.c): the latency at the clock a power limit allows and the energy there, by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>

#include "../../sched/cost/cost.h"
#include "fusetile/measured.h"
#include "fusetile/target.h"
#include "ft_testutil.h"

/* A one-MatMul problem with gpu-h100's energy group, its terms then set
 * by hand: 1 ns a cost unit, 10 W static, 5 W active, 1 pJ a MAC and no
 * other dynamic term, a limit of `limit` W. */
static ft_problem *problem(double limit)
{
    ft_target *t;
    ft_status st;
    if (ft_target_load(ftt_src_path("targets/gpu-h100.cfg"), &t, &st) != FT_OK)
        fail_msg("%s", st.msg);
    int64_t w[3] = {64, 64, 64}, h[3] = {64, 64, 64};
    ft_problem *p;
    assert_int_equal(ft_kernel_new(&p, "MatMul", "matmul", 2, w, h, &st), FT_OK);
    assert_int_equal(ft_target_apply(t, p, 0, &st), FT_OK);
    ft_energy *e = &p->energy;
    assert_true(e->on && e->power_limit == t->energy_power_limit_watts && e->power_limit > 0);
    ft_target_free(t);
    *e = (ft_energy){.on = 1, .seconds_per_unit = 1e-9, .static_watts = 10, .active_watts = 5, .mac = 1e-12, .power_limit = limit};
    return p;
}

/* 1e9 MACs (1 mJ) in 1e6 units (1 ms): 1 W of dynamic power at the full
 * clock.  Under 15.4 W (0.4 W left) the clock falls to s = cbrt(0.4 / 1)
 * of it: the latency T / s, the dynamic joules 1 mJ x s^2 = 0.4 W x T / s,
 * the whole 15.4 W x T / s.  Under 20 W it fits: nothing changes. */
static void test_power_rule(void **state)
{
    (void)state;
    ft__energy_counts c = {.macs = 1e9, .latency = 1e6};
    ft_problem *p = problem(15.4);
    double s = cbrt(0.4), t = ft__power_latency(p, &c);
    printf("  1 W over 0.4 W left: %.6g units (clock x %.6g)\n", t, 1e6 / t);
    assert_true(fabs(t - 1e6 / s) <= 1e-12 * t);
    ft__energy_counts at = c;
    at.latency = t;
    double j = ft__energy(p, &at);
    assert_true(fabs(j - 15.4 * t * 1e-9) <= 1e-12 * j);
    assert_true(fabs((j - 15 * t * 1e-9) - 1e-3 * s * s) <= 1e-12 * j);
    assert_true(fabs(ft_energy_watts(p, j, t) - 15.4) <= 1e-12 * 15.4);
    /* the dynamic power at the lowered clock: D s^2 over T / s is A */
    assert_true(fabs(1e-3 * s * s / (t * 1e-9) - 0.4) <= 1e-12);
    ft_problem_free(p);

    /* a limit that fits, none, no energy group: the full clock */
    p = problem(20);
    assert_true(ft__power_latency(p, &c) == 1e6);
    assert_true(fabs(ft__energy(p, &c) - (1e-3 + 15e-3)) <= 1e-15);
    p->energy.power_limit = 0;
    assert_true(ft__power_latency(p, &c) == 1e6);
    p->energy.on = 0;
    p->energy.power_limit = 15.4;
    assert_true(ft__power_latency(p, &c) == 1e6 && ft__energy(p, &c) == 0);
    ft_problem_free(p);

    /* exactly at the limit: unchanged; a zero or infinite latency too */
    p = problem(16);
    assert_true(ft__power_latency(p, &c) == 1e6);
    c.latency = 0;
    assert_true(ft__power_latency(p, &c) == 0);
    c.latency = INFINITY;
    assert_true(ft__power_latency(p, &c) == INFINITY);
    ft_problem_free(p);

    /* a limit a fit moved under static + active (the loader refuses one):
     * a finite, longer latency, not a failure */
    p = problem(12);
    c.latency = 1e6;
    t = ft__power_latency(p, &c);
    assert_true(isfinite(t) && t > 1e6);
    ft_problem_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_power_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
