/* fuzz_target.c - libFuzzer harness of the target reader (ft_target_parse, the text behind ft_target_load and sched/core/cfgtext.c): any text loads or fails with one line; a loaded target describes itself (whole or cut short), gives its settings by name, and applies to a small problem whose one-op-per-subgraph schedule then evaluates under both compute models. */
#include <math.h>

#include "fuzz.h"
#include "fusetile/target.h"

static ft_problem *small;   /* FZ_SMALL_PROBLEM, parsed once */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    ft_status st;
    if (ft_problem_parse(FZ_SMALL_PROBLEM, "small.json", &small, &st) != FT_OK)
        FZ_FAIL("the small problem does not load: %s", st.msg);
    return 0;
}

/* Every real-number setting's dotted name (targets/example.cfg). */
static const char *const settings[] = {
    "clock_hz", "slow_memory.read_bandwidth", "slow_memory.write_bandwidth", "slow_memory.transfer_latency",
    "slow_memory.efficiency", "compute.matmul_macs_per_cycle", "compute.pointwise_elements_per_cycle",
    "compute.matmul_efficiency", "compute.pointwise_efficiency", "execution.launch_overhead",
    "execution.step_overhead", "execution.run_overhead", "shared_cache.bandwidth", "compute.kind_cost.gelu",
    "compute.kind_cost.", "no.such.setting",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!small)
        LLVMFuzzerInitialize(NULL, NULL);
    char *text = fz_text(data, size);
    ft_target *t = NULL;
    ft_status st;
    int rc = ft_target_parse(text, "fuzz.cfg", &t, &st);
    free(text);
    if (rc != FT_OK) {
        fz_check_error(rc, &st, "ft_target_parse");
        if (t)
            FZ_FAIL("ft_target_parse failed but left a target");
        return 0;
    }
    /* describe: the whole line, and cut short as snprintf would */
    int n = ft_target_describe(t, NULL, 0);
    if (n <= 0)
        FZ_FAIL("ft_target_describe gives length %d", n);
    char *line = malloc((size_t)n + 1), cut[16];
    if (!line)
        FZ_FAIL("out of memory");
    if (ft_target_describe(t, line, (size_t)n + 1) != n || strlen(line) != (size_t)n)
        FZ_FAIL("ft_target_describe: length %d, wrote %zu: %s", n, strlen(line), line);
    if (ft_target_describe(t, cut, sizeof cut) != n || strncmp(cut, line, sizeof cut - 1) != 0)
        FZ_FAIL("ft_target_describe cut short differs: %s / %s", cut, line);
    free(line);
    for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++) {
        int fraction;
        double *v = ft_target_setting(t, settings[i], &fraction);
        if (v && !isfinite(*v))
            FZ_FAIL("setting %s is %g", settings[i], *v);
    }
    /* applied to a copy of the small problem, with and without its costs */
    for (int keep = 0; keep <= 1; keep++) {
        ft_problem *p = ft_problem_clone(small);
        if (!p)
            FZ_FAIL("out of memory");
        rc = ft_target_apply(t, p, keep, &st);
        if (rc != FT_OK) {
            fz_check_error(rc, &st, "ft_target_apply");
        } else {
            ft_schedule *s = NULL;
            rc = ft_gen_oneop_schedule(p, &s, &st);
            if (rc != FT_OK) {
                fz_check_error(rc, &st, "ft_gen_oneop_schedule");
            } else {
                for (int m = 0; m < 2; m++) {
                    ft_eval e;
                    if (fz_evaluate(p, s, (ft_compute_model)m, &e) != FT_OK)
                        continue;
                    if (!(e.total >= 0) || !isfinite(e.total))
                        FZ_FAIL("model %d: total %g on the target", m, e.total);
                    ft_eval_free(&e);
                }
            }
            ft_schedule_free(s);
        }
        ft_problem_free(p);
    }
    ft_target_free(t);
    return 0;
}
