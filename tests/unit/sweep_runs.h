/* sweep_runs.h - a sweep of n keyed runs made in memory for the sweep tests (test_sweep_gather, test_sweep_slurm): keys "k0", "k1", ..., one problem "p.json", seed 1, the sweep file named "s.cfg". */
#ifndef FT_TEST_SWEEP_RUNS_H
#define FT_TEST_SWEEP_RUNS_H

#include <stdio.h>

#include "fusetile/sweep.h"

/* Length of a key ftt_sweep_runs writes ("k" and the run's index). */
#define FTT_SWEEP_KEY 16

/* Fill sw with the n runs runs[0..n-1], their keys written into keys
 * (n of them, each FTT_SWEEP_KEY bytes); runs, keys and sw must outlive
 * the sweep's use, and sw is neither loaded nor released (no ft_sweep_free). */
static inline void ftt_sweep_runs(ft_sweep *sw, ft_sweep_run *runs, char (*keys)[FTT_SWEEP_KEY], int n)
{
    for (int i = 0; i < n; i++) {
        snprintf(keys[i], FTT_SWEEP_KEY, "k%d", i);
        runs[i].idx = i;
        runs[i].key = keys[i];
        runs[i].problem = runs[i].problem_path = "p.json";
        runs[i].seed = 1;
    }
    sw->path = "s.cfg";
    sw->nruns = n;
    sw->runs = runs;
}

#endif
