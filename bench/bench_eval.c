/* bench_eval.c - evaluator throughput: times ft_evaluate on a one-op schedule of at least 100 000 steps and prints evaluated steps per second. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#endif

#include "fusetile.h"
#include "../tools/oneop.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_PROBLEM "benchmarks/mlsys-2026-1.json"
#define DEFAULT_MIN_STEPS 100000
#define REPEATS 5

static const char usage_text[] =
    "usage: bench_eval [PROBLEM.json] [--min-steps N] [--compute-model native|op]\n"
    "\n"
    "Builds the one-op-per-subgraph schedule of PROBLEM.json (default\n"
    DEFAULT_PROBLEM ") at the largest granularity, halved from native,\n"
    "that gives at least N steps (default 100000), evaluates it 5 times with\n"
    "ft_evaluate and prints the step count, the median time and the median\n"
    "rate in evaluated steps per second, one `key value` pair a line.\n";

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sum of ft_walk_grid's step counts over the subgraphs of a schedule that
 * passed ft_schedule_validate; -1 on failure (message printed). */
static int64_t walk_steps(const ft_problem *p, const ft_schedule *s,
                          ft_compute_model model)
{
    int64_t total = 0;
    for (int i = 0; i < s->nsubgraphs; i++) {
        ft_walk *w = NULL;
        ft_status st;
        ft_status_clear(&st);
        if (ft_walk_begin(p, s, i, model, &w, &st) != FT_OK) {
            fprintf(stderr, "bench_eval: %s\n", st.msg);
            return -1;
        }
        int64_t ntx, nty, nk, n;
        ft_walk_grid(w, &ntx, &nty, &nk, &n);
        ft_walk_free(w);
        total += n;
    }
    return total;
}

/* bench_eval [PROBLEM.json] [--min-steps N] [--compute-model M]: see
 * usage_text.  Exit status 0, 1 (schedule rejected), 2 (bad input or
 * usage), 3 (out of memory). */
int main(int argc, char **argv)
{
    const char *path = DEFAULT_PROBLEM;
    int64_t min_steps = DEFAULT_MIN_STEPS;
    ft_compute_model model = FT_COMPUTE_NATIVE;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage_text, stdout);
            return 0;
        } else if (strcmp(argv[i], "--min-steps") == 0 && i + 1 < argc) {
            char *end;
            errno = 0;
            min_steps = strtoll(argv[++i], &end, 10);
            if (errno || *end || min_steps < 1) {
                fprintf(stderr, "bench_eval: --min-steps: '%s' is not a "
                                "positive integer\n", argv[i]);
                return FT_EINPUT;
            }
        } else if (strcmp(argv[i], "--compute-model") == 0 && i + 1 < argc) {
            if (ft_compute_model_parse(argv[++i], &model) != 0) {
                fprintf(stderr, "bench_eval: --compute-model: '%s' is neither "
                                "native nor op\n", argv[i]);
                return FT_EINPUT;
            }
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "bench_eval: unknown option or missing value '%s' "
                            "(try --help)\n", argv[i]);
            return FT_EINPUT;
        } else {
            path = argv[i];
        }
    }

    ft_status st;
    ft_status_clear(&st);
    ft_problem *p = NULL;
    int rc = ft_problem_load(path, &p, &st);
    if (rc != FT_OK) {
        fprintf(stderr, "bench_eval: %s\n", st.msg);
        return rc;
    }
    int64_t g[3];
    oneop_granularity_for_steps(p, min_steps, g);
    ft_schedule *s = oneop_schedule(p, g);
    if (!s) {
        fprintf(stderr, "bench_eval: out of memory\n");
        ft_problem_free(p);
        return FT_ENOMEM;
    }
    rc = ft_schedule_validate(p, s, &st);
    int64_t steps = rc == FT_OK ? walk_steps(p, s, model) : -1;
    if (rc != FT_OK)
        fprintf(stderr, "bench_eval: %s: schedule rejected: %s\n", path, st.msg);
    else if (steps < 0)
        rc = FT_ENOMEM;

    double secs[REPEATS];
    double total = 0;
    for (int r = 0; rc == FT_OK && r < REPEATS; r++) {
        ft_eval e;
        memset(&e, 0, sizeof e);
        double t0 = now_seconds();
        rc = ft_evaluate(p, s, model, &e, &st);
        secs[r] = now_seconds() - t0;
        if (rc != FT_OK) {
            fprintf(stderr, "bench_eval: %s: evaluation failed: %s\n", path,
                    st.msg);
            break;
        }
        int64_t evaluated = 0;
        for (int i = 0; i < e.nsubgraphs; i++)
            evaluated += e.sg[i].steps;
        total = e.total;
        ft_eval_free(&e);
        if (evaluated != steps) {
            fprintf(stderr, "bench_eval: %s: ft_evaluate counted %" PRId64
                            " steps, ft_walk_grid %" PRId64 "\n",
                    path, evaluated, steps);
            rc = FT_EINVALID;
        }
    }
    if (rc == FT_OK) {
        qsort(secs, REPEATS, sizeof secs[0], cmp_double);
        double median = secs[REPEATS / 2];
        printf("problem %s\n", path);
        printf("compute_model %s\n", ft_compute_model_name(model));
        printf("granularity %" PRId64 ",%" PRId64 ",%" PRId64 "\n", g[0], g[1],
               g[2]);
        printf("subgraphs %d\n", s->nsubgraphs);
        printf("steps %" PRId64 "\n", steps);
        printf("total_latency %.4f\n", total);
        printf("runs %d\n", REPEATS);
        printf("min_seconds %.6f\n", secs[0]);
        printf("median_seconds %.6f\n", median);
        printf("median_steps_per_second %.0f\n",
               median > 0 ? (double)steps / median : 0.0);
    }
    ft_schedule_free(s);
    ft_problem_free(p);
    return rc;
}
