/* calibrate.h - fit a target's free settings (overheads, efficiencies,
 * cache bandwidth, op-kind costs) to measured times by least squares on
 * log time (Levenberg-Marquardt), and write the fitted target file with
 * each fitted value marked.  Installed as fusetile_calibrate.h.
 */
#ifndef FUSETILE_CALIBRATE_H
#define FUSETILE_CALIBRATE_H

#include "fusetile/api.h"
FT_API_BEGIN

#include "fusetile/measured.h"
#include "fusetile/target.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Longest setting name; FT_CALIB_MAX_FREE and FT_CALIB_MAX_FILES
 * (fusetile/limits.h): most settings one fit moves, most measured files it
 * reads. */
#define FT_CALIB_NAME 96

/* The settings a fit moves when none are named: those of the H100
 * measurements' effects (docs/DEVICE.md, "Calibration"). */
extern const char *const ft_calib_default_free[];
extern const int ft_calib_ndefault_free;

/* The settings a fit moves when none are named and every file is an
 * energy file (FT_MEAS_ENERGY): the energy group's per-operation and
 * per-byte figures and its active power (docs/DEVICE.md, "Energy"); an
 * energy row's residual is log(predicted / measured joules), its kernels
 * timed as the time settings say. */
extern const char *const ft_calib_energy_free[];
extern const int ft_calib_nenergy_free;

typedef struct ft_calib_opts {
    const char *const *free;  /* setting names (ft_target_setting); NULL:
                                 ft_calib_default_free */
    int nfree;
    int all_rows;             /* 1: fit the held-out rows too (ft_meas_held_out) */
    int max_iter;             /* Levenberg-Marquardt steps; default 200 */
    /* Called after every accepted step (may be NULL). */
    void (*on_step)(void *ctx, int iter, double cost);
    void *ctx;
} ft_calib_opts;

/* Fill *o with the defaults above. */
void ft_calib_opts_init(ft_calib_opts *o);

typedef struct ft_calib_result {
    int nfree;
    char names[FT_CALIB_MAX_FREE][FT_CALIB_NAME];
    double before[FT_CALIB_MAX_FREE];
    double after[FT_CALIB_MAX_FREE];
    int rows;                 /* rows fitted */
    int iterations;           /* steps taken */
    double cost_before;       /* mean over files of the mean squared log error */
    double cost_after;
} ft_calib_result;

/* The starting value a fit gives setting `name` when the user resets it
 * (calibrate --reset): efficiencies 0.5, overheads and latencies 1000
 * cycles, a cache bandwidth twice the slow memory's read bandwidth, kind
 * costs 1, and an interval the shortest measured time among the rows of
 * files[0..nfiles-1] that a fit uses (the held-out rows only when
 * all_rows), in t's cycles (1000 cycles without rows): there the interval
 * binds on the shortest rows, where below every row it has no effect and
 * so no slope for the fit to follow. */
double ft_calib_reset_value(const ft_target *t, ft_measured *const *files, int nfiles, int all_rows, const char *name);

/* Fit the free settings of machine target t (changed in place) to the
 * rows of files[0..nfiles-1] (held-out rows left out unless all_rows):
 * minimise the mean over files of the mean squared log(predicted /
 * measured) of their rows (each file weighs the same).  Settings move in
 * log space (efficiencies at most 1);
 * kernels keep their form (ft_kernel_choice) during a run of steps and are
 * chosen again between runs, until the choice settles.  Returns FT_OK
 * with *r filled; FT_EINPUT (one line: an unknown setting, a contest
 * target, no rows to fit, a kernel that fits nothing, a shared_cache
 * setting on a target without one, compute.misaligned_efficiency with no
 * misaligned MatMul among the rows fitted); FT_ENOMEM. */
int ft_calibrate(ft_target *t, ft_measured *const *files, int nfiles,
                 const ft_calib_opts *o, ft_calib_result *r, ft_status *st);

/* Write target file `in_path` to `out_path` (atomically) with the settings
 * names[i] set to values[i]: each setting's line gets the value and the
 * comment `note` in place of its own; a setting the file lacks is added
 * to its group (the group too when missing); a negative value is a
 * setting left at its "off" default (execution.streamk_overhead -1, a
 * read or write efficiency as slow_memory.efficiency) and is not
 * written.  The written file is loaded
 * back and every value checked.  FT_OK, FT_EINPUT (a file that cannot be
 * read or written, a layout the writer cannot edit), FT_ENOMEM. */
int ft_target_write_fitted(const char *in_path, const char *out_path,
                           const char *const *names, const double *values,
                           int n, const char *note, ft_status *st);

#ifdef __cplusplus
}
#endif

FT_API_END

#endif
