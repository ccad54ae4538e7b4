/* fuzz_schedule.c - libFuzzer harness of a problem with a schedule: the input is a problem's JSON, a NUL byte, then a schedule's JSON; both load or fail with one line, the schedule validates or not, is evaluated under both compute models (at most FZ_MAX_STEPS steps), written back to JSON, read again and evaluated to the same totals, never below the lower bounds. */
#include <math.h>

#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return 0;
}

/* The schedule's totals under both models (NAN: not evaluated: invalid, or
 * past the step cap). */
static void evaluate_both(const ft_problem *p, const ft_schedule *s, double total[2], double **latencies)
{
    for (int m = 0; m < 2; m++) {
        ft_eval e;
        total[m] = NAN;
        if (fz_evaluate(p, s, (ft_compute_model)m, &e) != FT_OK)
            continue;
        total[m] = e.total;
        if (!(e.total >= 0) || !isfinite(e.total))
            FZ_FAIL("model %d: total %g", m, e.total);
        double lb = ft_lower_bound(p, (ft_compute_model)m, NULL, NULL);
        double cb = ft_lower_bound_capacity(p, (ft_compute_model)m, NULL, NULL);
        if (lb > e.total * (1 + 1e-9) || cb > e.total * (1 + 1e-9))
            FZ_FAIL("model %d: total %.17g below the lower bound %.17g or the capacity bound %.17g", m, e.total, lb, cb);
        if (latencies && !*latencies && e.nsubgraphs > 0) {
            *latencies = malloc(sizeof(double) * (size_t)e.nsubgraphs);
            if (!*latencies)
                FZ_FAIL("out of memory");
            for (int i = 0; i < e.nsubgraphs; i++)
                (*latencies)[i] = e.sg[i].latency;
        }
        ft_eval_free(&e);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    if (!nul)
        return 0;   /* no schedule part */
    char *ptext = fz_text(data, (size_t)(nul - data));
    char *stext = fz_text(nul + 1, size - (size_t)(nul - data) - 1);
    ft_problem *p = NULL;
    ft_schedule *s = NULL;
    ft_status st;
    int rc = ft_problem_parse(ptext, "fuzz.json", &p, &st);
    if (rc != FT_OK) {
        fz_check_error(rc, &st, "ft_problem_parse");
        goto done;
    }
    rc = ft_schedule_parse(stext, "fuzz.schedule.json", &s, &st);
    if (rc != FT_OK) {
        fz_check_error(rc, &st, "ft_schedule_parse");
        if (s)
            FZ_FAIL("ft_schedule_parse failed but left a schedule");
        goto done;
    }
    rc = ft_schedule_validate(p, s, &st);
    if (rc != FT_OK) {
        fz_check_error(rc, &st, "ft_schedule_validate");
        /* ft_evaluate validates first: the same verdict */
        ft_eval e;
        ft_status st2;
        int rc2 = ft_evaluate(p, s, FT_COMPUTE_NATIVE, &e, &st2);
        if (rc2 == FT_OK)
            FZ_FAIL("ft_schedule_validate says %s but ft_evaluate accepts it", st.msg);
        goto done;
    }
    double total[2], again[2];
    double *lat = NULL;
    evaluate_both(p, s, total, &lat);
    /* written back, it reads again and evaluates to the same totals */
    char *json = ft_schedule_to_json(s, lat);
    free(lat);
    if (!json)
        FZ_FAIL("ft_schedule_to_json returned NULL");
    ft_schedule *s2 = NULL;
    if (ft_schedule_parse(json, "written.json", &s2, &st) != FT_OK)
        FZ_FAIL("the schedule written back does not load: %s\n%s", st.msg, json);
    if (ft_schedule_validate(p, s2, &st) != FT_OK)
        FZ_FAIL("the schedule written back is not valid: %s\n%s", st.msg, json);
    evaluate_both(p, s2, again, NULL);
    for (int m = 0; m < 2; m++)
        if (!isnan(total[m]) && !isnan(again[m]) && total[m] != again[m])
            FZ_FAIL("model %d: total %.17g, %.17g once written and read back:\n%s", m, total[m], again[m], json);
    free(json);
    ft_schedule_free(s2);
done:
    ft_schedule_free(s);
    ft_problem_free(p);
    free(ptext);
    free(stext);
    return 0;
}
