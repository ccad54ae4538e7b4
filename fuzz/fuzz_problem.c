/* fuzz_problem.c - libFuzzer harness of the problem JSON reader (ft_problem_parse): any text loads or fails with one line; a loaded problem writes back to JSON that loads again to the same JSON, and its lower bounds are finite. */
#include <math.h>

#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fz_text(data, size);
    ft_problem *p = NULL;
    ft_status st;
    int rc = ft_problem_parse(text, "fuzz.json", &p, &st);
    free(text);
    if (rc != FT_OK) {
        fz_check_error(rc, &st, "ft_problem_parse");
        if (p)
            FZ_FAIL("ft_problem_parse failed but left a problem");
        return 0;
    }
    /* written back, it reads again, to the same text */
    char *json = ft_problem_to_json(p);
    if (!json)
        FZ_FAIL("ft_problem_to_json returned NULL");
    ft_problem *q = NULL;
    if (ft_problem_parse(json, "written.json", &q, &st) != FT_OK)
        FZ_FAIL("the problem written back does not load: %s\n%s", st.msg, json);
    char *again = ft_problem_to_json(q);
    if (!again || strcmp(json, again) != 0)
        FZ_FAIL("the problem written back changes when read and written again:\n%s\n%s", json, again ? again : "NULL");
    free(again);
    free(json);
    ft_problem_free(q);
    for (int m = FT_COMPUTE_NATIVE; m <= FT_COMPUTE_OP; m++) {
        double c, mem;
        double lb = ft_lower_bound(p, (ft_compute_model)m, &c, &mem);
        double cb = ft_lower_bound_capacity(p, (ft_compute_model)m, NULL, NULL);
        if (isnan(lb) || isnan(cb) || lb < 0 || cb < lb * (1 - 1e-12))
            FZ_FAIL("model %d: lower bound %g, capacity bound %g", m, lb, cb);
    }
    ft_problem_free(p);
    return 0;
}
