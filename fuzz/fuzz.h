/* fuzz.h - helpers shared by the libFuzzer harnesses in fuzz/ (one reader each): the input as text, the checks every reader's result must pass, the step cap on evaluations, the small problem the harnesses apply things to. */
#ifndef FT_FUZZ_H
#define FT_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fusetile/fusetile.h"

/* The libFuzzer entry points (fuzz/replay.c calls them too, without
 * libFuzzer). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* Most steps a harness lets one evaluation walk: a larger schedule is
 * stopped through the progress callback (after at most 2^18 steps), so
 * that one input costs milliseconds, not hours.  A cap of the harnesses,
 * not of fusetile (whose own limits are checked at load). */
#define FZ_MAX_STEPS ((int64_t)1 << 20)

/* A finding: print what was wrong and abort, which libFuzzer (and
 * fuzz/replay) reports as a crash with the input that caused it. */
#define FZ_FAIL(...)                                                                                                  \
    do {                                                                                                              \
        fprintf(stderr, "fuzz: %s:%d: ", __FILE__, __LINE__);                                                        \
        fprintf(stderr, __VA_ARGS__);                                                                                 \
        fputc('\n', stderr);                                                                                          \
        abort();                                                                                                      \
    } while (0)

/* The input as a NUL-terminated string (it ends at its first NUL byte, as
 * the readers' text entry points see it); free it. */
static inline char *fz_text(const uint8_t *data, size_t size)
{
    char *t = malloc(size + 1);
    if (!t)
        FZ_FAIL("out of memory copying %zu bytes", size);
    memcpy(t, data, size);
    t[size] = '\0';
    return t;
}

/* The contract of every failing reader: a known code and one line of
 * message, not empty. */
static inline void fz_check_error(int rc, const ft_status *st, const char *what)
{
    if (rc != FT_EINPUT && rc != FT_EINVALID && rc != FT_ENOMEM)
        FZ_FAIL("%s: unexpected code %d (%s)", what, rc, st->msg);
    if (st->code != rc)
        FZ_FAIL("%s: returned %d but st->code is %d", what, rc, st->code);
    if (!st->msg[0])
        FZ_FAIL("%s: failed (%d) with an empty message", what, rc);
    if (strchr(st->msg, '\n'))
        FZ_FAIL("%s: message of more than one line: %s", what, st->msg);
}

/* The progress callback of ft_evaluate_progress that stops an evaluation
 * of more than FZ_MAX_STEPS steps. */
static inline int fz_step_cap(void *ctx, int64_t done, int64_t total)
{
    (void)ctx;
    (void)done;
    return total > FZ_MAX_STEPS;
}

/* Evaluate s on p under model through the step cap.  Returns FT_OK with
 * *e filled (ft_eval_free it), 1 when the cap stopped it, or a failure
 * code after checking its message. */
static inline int fz_evaluate(const ft_problem *p, const ft_schedule *s, ft_compute_model model, ft_eval *e)
{
    ft_status st;
    int stop = 0;
    int rc = ft_evaluate_progress(p, s, model, fz_step_cap, &stop, e, &st);
    if (rc == FT_OK)
        return FT_OK;
    if (rc == FT_EINPUT && strstr(st.msg, "interrupted"))
        return 1;
    fz_check_error(rc, &st, "ft_evaluate");
    return rc;
}

/* A small valid problem (tests/vectors/ex1A): two Pointwise ops on 128x128
 * tensors, which targets are applied to and schedules evaluated on. */
#define FZ_SMALL_PROBLEM                                                                                              \
    "{\"widths\": [128, 128, 128], \"heights\": [128, 128, 128], \"inputs\": [[0], [1]], \"outputs\": [[1], [2]], " \
    "\"base_costs\": [1000, 100], \"op_types\": [\"Pointwise\", \"Pointwise\"], \"fast_memory_capacity\": 35000, "  \
    "\"slow_memory_bandwidth\": 10, \"native_granularity\": [128, 128]}"

#endif /* FT_FUZZ_H */
