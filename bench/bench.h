/* bench.h - what the bench programs share: options, the one-op schedule they time, and the median report (header-only). */
#ifndef FT_BENCH_H
#define FT_BENCH_H

#include "fusetile/fusetile.h"
#include "../tools/oneop.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BENCH_DEFAULT_PROBLEM "benchmarks/mlsys-2026-1.json"
#define BENCH_REPEATS 5

/* One bench run: its options and the schedule it times. */
typedef struct bench_job {
    const char *prog;
    const char *path;
    int64_t min_steps;
    ft_compute_model model;
    int64_t g[3];          /* the schedule's granularity */
    ft_problem *p;
    ft_schedule *s;
} bench_job;

/* Monotonic wall time in seconds. */
static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Parse `PROG [PROBLEM.json] [--min-steps N] [--compute-model M]`, load the
 * problem and build its one-op-per-subgraph schedule at the largest
 * granularity (halved from native) giving at least min_steps steps.
 * Returns -1 when j is ready (free it with bench_free), else the exit
 * status: 0 after --help (usage printed), FT_EINPUT or FT_ENOMEM after a
 * message on stderr. */
static inline int bench_setup(bench_job *j, const char *prog, const char *usage, int64_t default_min_steps, int argc,
                              char **argv)
{
    memset(j, 0, sizeof *j);
    j->prog = prog;
    j->path = BENCH_DEFAULT_PROBLEM;
    j->min_steps = default_min_steps;
    j->model = FT_COMPUTE_NATIVE;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage, stdout);
            return 0;
        } else if (strcmp(argv[i], "--min-steps") == 0 && i + 1 < argc) {
            char *end;
            errno = 0;
            j->min_steps = strtoll(argv[++i], &end, 10);
            if (errno || *end || j->min_steps < 1) {
                fprintf(stderr, "%s: --min-steps: '%s' is not a positive integer\n", prog, argv[i]);
                return FT_EINPUT;
            }
        } else if (strcmp(argv[i], "--compute-model") == 0 && i + 1 < argc) {
            if (ft_compute_model_parse(argv[++i], &j->model) != 0) {
                fprintf(stderr, "%s: --compute-model: '%s' is neither native nor op\n", prog, argv[i]);
                return FT_EINPUT;
            }
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "%s: unknown option or missing value '%s' (try --help)\n", prog, argv[i]);
            return FT_EINPUT;
        } else {
            j->path = argv[i];
        }
    }
    ft_status st;
    ft_status_clear(&st);
    int rc = ft_problem_load(j->path, &j->p, &st);
    if (rc != FT_OK) {
        fprintf(stderr, "%s: %s\n", prog, st.msg);
        return rc;
    }
    oneop_granularity_for_steps(j->p, j->min_steps, j->g);
    j->s = oneop_schedule(j->p, j->g);
    if (!j->s) {
        fprintf(stderr, "%s: out of memory\n", prog);
        ft_problem_free(j->p);
        j->p = NULL;
        return FT_ENOMEM;
    }
    return -1;
}

/* Release what bench_setup made. */
static inline void bench_free(bench_job *j)
{
    ft_schedule_free(j->s);
    ft_problem_free(j->p);
    j->s = NULL;
    j->p = NULL;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* First lines of the report: what was timed. */
static inline void bench_report_head(const bench_job *j, int64_t steps)
{
    printf("problem %s\n", j->path);
    printf("compute_model %s\n", ft_compute_model_name(j->model));
    printf("granularity %" PRId64 ",%" PRId64 ",%" PRId64 "\n", j->g[0], j->g[1], j->g[2]);
    printf("subgraphs %d\n", j->s->nsubgraphs);
    printf("steps %" PRId64 "\n", steps);
}

/* Last lines: runs, fastest and median time, median steps per second
 * (sorts secs). */
static inline void bench_report_tail(double *secs, int n, int64_t steps)
{
    qsort(secs, (size_t)n, sizeof secs[0], bench_cmp_double);
    double median = secs[n / 2];
    printf("runs %d\n", n);
    printf("min_seconds %.6f\n", secs[0]);
    printf("median_seconds %.6f\n", median);
    printf("median_steps_per_second %.0f\n", median > 0 ? (double)steps / median : 0.0);
}

#endif
