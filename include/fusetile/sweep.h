/* sweep.h - public API of libfusetile_sweep: sweep files (libconfig) expanded into runs with stable keys, one run
 * (schedule, evaluate, bounds, optional replay), the SQLite results database, and the pool of forked workers.
 *
 * docs/SWEEP.md describes the file format, the keys and the database.
 * Conventions are those of fusetile.h: functions that can fail return an int
 * code (FT_OK, FT_EINPUT, FT_ENOMEM, ...) and fill an ft_status the caller
 * owns; they never print and never exit; objects returned through an
 * out-parameter are the caller's, released with the matching *_free (NULL
 * accepted).  This library depends on libfusetile, libfusetile_sim (for
 * `simulate = true;`) and SQLite; the CLI (`fusetile sweep`) and the Tcl
 * package (`fusetile::sweep`) are its two users.
 */
#ifndef FT_SWEEP_H
#define FT_SWEEP_H

#include "fusetile/api.h"
FT_API_BEGIN

#include <stdint.h>

#include "fusetile/fusetile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* FT_SWEEP_MAX_RUNS, FT_SWEEP_MAX_VALUES, FT_SWEEP_MAX_JOBS
 * (fusetile/limits.h): most runs of a sweep file, values of an axis,
 * worker processes. */
/* Version of the database schema, stored in meta.schema_version (2: the
 * energy_j and power_w columns, added to an older database on open). */
#define FT_SWEEP_SCHEMA_VERSION 2

/* One run of a sweep: its inputs.  Numbers that are 0 (strings NULL) were
 * not set by the sweep file: the problem's or target's value is used. */
typedef struct ft_sweep_run {
    int idx;                  /* position in the full expansion, from 0 */
    char *problem;            /* problem file as named in the key (canonical,
                                 relative to the sweep file's directory when
                                 the file named it relatively) */
    char *problem_path;       /* the same file, openable from the working directory */
    char *target;             /* target file as in the key; NULL: no target */
    char *target_path;        /* openable path; NULL: no target */
    double capacity;          /* elements; 0: the problem's (after the target) */
    double bandwidth;         /* elements per cost unit; 0: as above */
    int64_t native_w, native_h, native_k; /* 0: as above (k 0 with w set: w) */
    int units;                /* 0: as above */
    ft_compute_model model;   /* compute_model (default native) */
    ft_strategy strategy;     /* strategy (default search) */
    double time_limit;        /* seconds; 0: the contest limit of the problem */
    uint64_t seed;            /* default 1 */
    int simulate;             /* 1: replay the schedule in the simulator */
    char *key;                /* canonical text of the inputs: the database key */
} ft_sweep_run;

/* A sweep file, loaded and expanded. */
typedef struct ft_sweep {
    char *path;               /* the file as named to ft_sweep_load */
    int nruns;
    ft_sweep_run *runs;       /* nruns runs, runs[i].idx == i */
} ft_sweep;

/* Load, check and expand the sweep file `path` (docs/SWEEP.md): every
 * setting's name and type, every value's range, every problem and target
 * file (loaded once each), the number of values per axis
 * (FT_SWEEP_MAX_VALUES) and of runs (FT_SWEEP_MAX_RUNS).  Runs are the cross
 * product of the axes in the order problems, targets, capacity, bandwidth,
 * native, units, compute_model, strategy, time_limit, seed (the last
 * varying fastest), or the `runs` list in its order.  FT_OK with *out set
 * (ft_sweep_free), or FT_EINPUT / FT_ENOMEM with *out NULL and one line in
 * st->msg: "FILE:LINE: SETTING: message" (LINE 0 when the file has no line
 * for it, "FILE: cannot open: ..." when unreadable). */
int ft_sweep_load(const char *path, ft_sweep **out, ft_status *st);

/* As ft_sweep_load, from the text of a sweep file (NUL-terminated); `path`
 * names the file in messages and keys, and its directory is the one the
 * text's relative file names are read from. */
int ft_sweep_parse(const char *text, const char *path, ft_sweep **out, ft_status *st);

/* Release a sweep and its runs.  NULL is a no-op. */
void ft_sweep_free(ft_sweep *sw);

/* Results of one run (ft_sweep_run_exec). */
typedef struct ft_sweep_result {
    int ok;                   /* 1: scheduled and evaluated (and replayed) */
    char error[512];          /* why not, one line; "" when ok */
    double capacity, bandwidth; /* the values the run used (NaN before the problem loaded) */
    char native[64];          /* "WxHxK" as used ("" before the problem loaded) */
    int units;                /* as used (0 before the problem loaded) */
    double total;             /* analytic total of the schedule (NaN when failed) */
    double lower_bound;       /* SPEC section 5 bound (ft_lower_bound) */
    double capacity_bound;    /* SPEC section 7 bound (ft_lower_bound_capacity) */
    double ratio;             /* total / lower_bound */
    int subgraphs;
    double sim_total;         /* simulated total (NaN when not simulated) */
    int agreement;            /* -1 not simulated, 1 simulated and analytic
                                 totals agree within 1e-9 (relative), 0 not */
    double wall_s;            /* seconds the run took */
    double energy_j;          /* the schedule's joules (ft_eval.energy) and average watts
                                 (ft_energy_watts of its total); NaN without an energy
                                 model (a target without an energy group, or failed) */
    double power_w;
} ft_sweep_result;

typedef struct ft_sim ft_sim;

/* Execute run r in this process: load the problem; load the target, set its
 * native granularity and units from r when r has them (so that its base
 * costs follow) and apply it; override the problem's capacity, bandwidth,
 * native granularity and units (ft_problem_override); ft_search with r's
 * strategy, time limit and seed on ONE thread; the bounds; with
 * r->simulate a replay through *sim (created on first use, the caller's to
 * free with ft_sim_free).  Always fills *res; returns FT_OK when the run
 * succeeded (res->ok), else its code with res->error (and st->msg) saying
 * why.  Reproducible: the same run gives the same total whenever the
 * search is not cut by its time limit (ft_search's seed rule) or the
 * strategy is not `search`. */
int ft_sweep_run_exec(const ft_sweep_run *r, ft_sim **sim, ft_sweep_result *res, ft_status *st);

/* ------------------------------------------------------------ database */

typedef struct ft_sweep_db ft_sweep_db;

/* Open (creating when absent) the results database `path` in WAL mode with
 * a busy timeout, create its tables (runs, meta) when missing and record
 * meta.schema_version and, when absent, meta.sweep = sweep_path (may be
 * NULL).  FT_OK with *out set, or FT_EINPUT with "PATH: ..." (not a
 * database, a newer schema, cannot create) / FT_ENOMEM. */
int ft_sweep_db_open(const char *path, const char *sweep_path, ft_sweep_db **out, ft_status *st);

/* Close the database.  NULL is a no-op. */
void ft_sweep_db_close(ft_sweep_db *db);

/* Whether the run with this key has a row with status ok: 1 yes, 0 no (no
 * row, or a failed one), -1 on a database error (message in st). */
int ft_sweep_db_done(ft_sweep_db *db, const char *key, ft_status *st);

/* Record run r's result in its own transaction (INSERT OR REPLACE on the
 * key, so a run has one row whatever happened before), with sweep =
 * sweep_path, worker = `worker` ("host:pid") and finished_at = now (UTC,
 * ISO 8601 with milliseconds).  FT_OK or FT_EINPUT with the SQLite error. */
int ft_sweep_db_put(ft_sweep_db *db, const char *sweep_path, const ft_sweep_run *r, const ft_sweep_result *res,
                    const char *worker, ft_status *st);

/* -------------------------------------------------------------- workers */

/* Counters of a pool run, given to the progress callback and returned. */
typedef struct ft_sweep_counts {
    int selected;             /* runs of the slice */
    int skipped;              /* of those, already ok in the database */
    int done;                 /* run now, ok */
    int failed;               /* run now, failed (recorded) */
    int pending;              /* not yet finished */
    double elapsed;           /* seconds since the pool started */
    int interrupted;          /* 1: stopped by SIGINT or SIGTERM */
} ft_sweep_counts;

/* Options of ft_sweep_execute; ft_sweep_exec_opts_init sets the defaults. */
typedef struct ft_sweep_exec_opts {
    int jobs;                 /* worker processes, 1 to FT_SWEEP_MAX_JOBS;
                                 0 (default): one per online core */
    int slice_k, slice_m;     /* run only the runs with idx % slice_m ==
                                 slice_k (default 0 and 1: all) */
    /* Called about 4 times a second and once at the end, in the parent
     * (may be NULL). */
    void (*on_progress)(void *ctx, const ft_sweep_counts *c, int final);
    void *ctx;
} ft_sweep_exec_opts;

/* Fill *o with the defaults above. */
void ft_sweep_exec_opts_init(ft_sweep_exec_opts *o);

/* Run the runs of sw selected by the slice and not already ok in the
 * database db_path, on o->jobs forked workers that each open the database
 * and commit each run's row in its own transaction; the parent hands out
 * run indices through pipes as workers become free.  A worker killed by a
 * signal (other than SIGINT/SIGTERM) gets its run recorded as failed
 * ("worker killed by signal N (NAME)") and is replaced.  SIGINT or SIGTERM
 * stops the pool: workers are stopped, their runs in progress are left
 * unrecorded (a rerun does them), and counts->interrupted is 1.  The
 * signal handlers are restored before returning.  Fills *counts.  Returns
 * FT_OK when the pool ran (runs may have failed: counts->failed), else
 * FT_EINPUT / FT_ENOMEM with st->msg (bad options, the database cannot be
 * opened, fork or pipe failed). */
int ft_sweep_execute(const ft_sweep *sw, const char *db_path, const ft_sweep_exec_opts *o, ft_sweep_counts *counts,
                     ft_status *st);

/* The default database path of sweep file `sweep_path`: its extension
 * replaced by ".db" ("a/b.cfg" -> "a/b.db", "a/b" -> "a/b.db").  A malloc'd
 * string the caller frees, or NULL when out of memory. */
char *ft_sweep_default_db(const char *sweep_path);

#ifdef __cplusplus
}
#endif

FT_API_END

#endif /* FT_SWEEP_H */
