/* bench_sim.c - simulator throughput: replays a one-op schedule of at least 1 000 000 steps 5 times in one process (ft_sim_run) and prints simulated steps per second. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#endif

#include "fusetile.h"
#include "sim.h"
#include "../tools/oneop.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_PROBLEM "benchmarks/mlsys-2026-1.json"
#define DEFAULT_MIN_STEPS 1000000
#define REPEATS 5

static const char usage_text[] =
    "usage: bench_sim [PROBLEM.json] [--min-steps N] [--compute-model native|op]\n"
    "\n"
    "Builds the one-op-per-subgraph schedule of PROBLEM.json (default\n"
    DEFAULT_PROBLEM ") at the largest granularity, halved from native,\n"
    "that gives at least N steps (default 1000000), replays it 5 times in one\n"
    "process with ft_sim_run (simulator only: no analytic evaluation, no\n"
    "trace), checks once that the simulated total equals ft_evaluate's, and\n"
    "prints the step count, the median time and the median rate in simulated\n"
    "steps per second, one `key value` pair a line.\n";

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

/* bench_sim [PROBLEM.json] [--min-steps N] [--compute-model M]: see
 * usage_text.  Exit status 0, 1 (schedule rejected or the simulator
 * disagrees with ft_evaluate), 2 (bad input or usage), 3 (out of memory). */
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
                fprintf(stderr, "bench_sim: --min-steps: '%s' is not a positive integer\n", argv[i]);
                return FT_EINPUT;
            }
        } else if (strcmp(argv[i], "--compute-model") == 0 && i + 1 < argc) {
            if (ft_compute_model_parse(argv[++i], &model) != 0) {
                fprintf(stderr, "bench_sim: --compute-model: '%s' is neither native nor op\n", argv[i]);
                return FT_EINPUT;
            }
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "bench_sim: unknown option or missing value '%s' (try --help)\n", argv[i]);
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
        fprintf(stderr, "bench_sim: %s\n", st.msg);
        return rc;
    }
    int64_t g[3];
    oneop_granularity_for_steps(p, min_steps, g);
    ft_schedule *s = oneop_schedule(p, g);
    ft_sim *sim = NULL;
    const char *err = NULL;
    if (!s) {
        fprintf(stderr, "bench_sim: out of memory\n");
        ft_problem_free(p);
        return FT_ENOMEM;
    }
    rc = ft_sim_new(&sim, &err);
    if (rc != FT_OK)
        fprintf(stderr, "bench_sim: %s\n", err);

    /* One untimed replay with the cross-check, then the timed ones. */
    ft_sim_opts o;
    ft_sim_opts_init(&o);
    o.model = model;
    double secs[REPEATS];
    double total = 0, analytic = NAN;
    int64_t steps = 0;
    if (rc == FT_OK) {
        ft_sim_result res;
        rc = ft_sim_run(sim, p, s, &o, &res);
        steps = res.steps;
        total = res.total_simulated;
        analytic = res.total_analytic;
        ft_sim_result_free(&res);
    }
    o.analytic = 0;
    for (int r = 0; rc == FT_OK && r < REPEATS; r++) {
        ft_sim_result res;
        double t0 = now_seconds();
        rc = ft_sim_run(sim, p, s, &o, &res);
        secs[r] = now_seconds() - t0;
        if (rc == FT_OK && (res.steps != steps || res.total_simulated != total)) {
            fprintf(stderr, "bench_sim: %s: replay %d gives %" PRId64 " steps, %.17g; the first gave %" PRId64 ", %.17g\n", path, r + 2,
                    res.steps, res.total_simulated, steps, total);
            rc = FT_EINVALID;
        }
        ft_sim_result_free(&res);
    }
    if (rc != FT_OK && sim)
        fprintf(stderr, "bench_sim: %s: %s\n", path, ft_sim_errmsg(sim));
    if (rc == FT_OK && !(fabs(total - analytic) <= 1e-9 * fabs(analytic))) {
        fprintf(stderr, "bench_sim: %s: simulated %.17g, analytic %.17g\n", path, total, analytic);
        rc = FT_EINVALID;
    }
    if (rc == FT_OK) {
        qsort(secs, REPEATS, sizeof secs[0], cmp_double);
        double median = secs[REPEATS / 2];
        printf("problem %s\n", path);
        printf("compute_model %s\n", ft_compute_model_name(model));
        printf("granularity %" PRId64 ",%" PRId64 ",%" PRId64 "\n", g[0], g[1], g[2]);
        printf("subgraphs %d\n", s->nsubgraphs);
        printf("steps %" PRId64 "\n", steps);
        printf("total_simulated %.4f\n", total);
        printf("total_analytic %.4f\n", analytic);
        printf("runs %d\n", REPEATS);
        printf("min_seconds %.6f\n", secs[0]);
        printf("median_seconds %.6f\n", median);
        printf("median_steps_per_second %.0f\n", median > 0 ? (double)steps / median : 0.0);
    }
    ft_sim_free(sim);
    ft_schedule_free(s);
    ft_problem_free(p);
    return rc;
}
