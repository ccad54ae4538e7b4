/* bench_sim.c - simulator throughput: replays a one-op schedule of at least 1 000 000 steps 5 times in one process (ft_sim_run) and prints simulated steps per second. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#endif

#include "fusetile/sim.h"
#include "bench.h"

#include <math.h>

#define DEFAULT_MIN_STEPS 1000000

static const char usage_text[] =
    "usage: bench_sim [PROBLEM.json] [--min-steps N] [--compute-model native|op]\n"
    "\n"
    "Builds the one-op-per-subgraph schedule of PROBLEM.json (default\n"
    BENCH_DEFAULT_PROBLEM ") at the largest granularity, halved from native,\n"
    "that gives at least N steps (default 1000000), replays it 5 times in one\n"
    "process with ft_sim_run (simulator only: no analytic evaluation, no\n"
    "trace), checks once that the simulated total equals ft_evaluate's, and\n"
    "prints the step count, the median time and the median rate in simulated\n"
    "steps per second, one `key value` pair a line.\n";

/* bench_sim [PROBLEM.json] [--min-steps N] [--compute-model M]: see
 * usage_text.  Exit status 0, 1 (schedule rejected or the simulator
 * disagrees with ft_evaluate), 2 (bad input or usage), 3 (out of memory). */
int main(int argc, char **argv)
{
    bench_job job;
    int rc = bench_setup(&job, "bench_sim", usage_text, DEFAULT_MIN_STEPS, argc, argv);
    if (rc >= 0)
        return rc;
    const char *path = job.path;
    ft_compute_model model = job.model;
    ft_problem *p = job.p;
    ft_schedule *s = job.s;
    ft_sim *sim = NULL;
    const char *err = NULL;
    rc = ft_sim_new(&sim, &err);
    if (rc != FT_OK)
        fprintf(stderr, "bench_sim: %s\n", err);

    /* One untimed replay with the cross-check, then the timed ones. */
    ft_sim_opts o;
    ft_sim_opts_init(&o);
    o.model = model;
    double secs[BENCH_REPEATS];
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
    for (int r = 0; rc == FT_OK && r < BENCH_REPEATS; r++) {
        ft_sim_result res;
        double t0 = bench_now();
        rc = ft_sim_run(sim, p, s, &o, &res);
        secs[r] = bench_now() - t0;
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
        bench_report_head(&job, steps);
        printf("total_simulated %.4f\n", total);
        printf("total_analytic %.4f\n", analytic);
        bench_report_tail(secs, BENCH_REPEATS, steps);
    }
    ft_sim_free(sim);
    bench_free(&job);
    return rc;
}
