/* bench_eval.c - evaluator throughput: times ft_evaluate on a one-op schedule of at least 100 000 steps and prints evaluated steps per second. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#endif

#include "bench.h"

#include <math.h>

#define DEFAULT_MIN_STEPS 100000

static const char usage_text[] =
    "usage: bench_eval [PROBLEM.json] [--min-steps N] [--compute-model native|op]\n"
    "\n"
    "Builds the one-op-per-subgraph schedule of PROBLEM.json (default\n"
    BENCH_DEFAULT_PROBLEM ") at the largest granularity, halved from native,\n"
    "that gives at least N steps (default 100000), evaluates it 5 times with\n"
    "ft_evaluate and prints the step count, the median time and the median\n"
    "rate in evaluated steps per second, one `key value` pair a line.\n";

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
    bench_job job;
    int rc = bench_setup(&job, "bench_eval", usage_text, DEFAULT_MIN_STEPS, argc, argv);
    if (rc >= 0)
        return rc;
    const char *path = job.path;
    ft_compute_model model = job.model;
    ft_problem *p = job.p;
    ft_schedule *s = job.s;
    ft_status st;
    rc = ft_schedule_validate(p, s, &st);
    int64_t steps = rc == FT_OK ? walk_steps(p, s, model) : -1;
    if (rc != FT_OK)
        fprintf(stderr, "bench_eval: %s: schedule rejected: %s\n", path, st.msg);
    else if (steps < 0)
        rc = FT_ENOMEM;

    double secs[BENCH_REPEATS];
    double total = 0;
    for (int r = 0; rc == FT_OK && r < BENCH_REPEATS; r++) {
        ft_eval e;
        memset(&e, 0, sizeof e);
        double t0 = bench_now();
        rc = ft_evaluate(p, s, model, &e, &st);
        secs[r] = bench_now() - t0;
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
        bench_report_head(&job, steps);
        printf("total_latency %.4f\n", total);
        bench_report_tail(secs, BENCH_REPEATS, steps);
    }
    bench_free(&job);
    return rc;
}
