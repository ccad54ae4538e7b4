/* sweep_gather.h - a sweep's results spread over several databases (a main one and per-task ones, as `fusetile sweep submit --slurm` writes them): counting the runs across them, merging them into the main one, and seeding a task's database with the runs already done.
 *
 * Conventions are sweep.h's: an int code (FT_OK, FT_EINPUT, FT_ENOMEM) and
 * one line in the caller's ft_status; nothing printed.  Task databases are
 * only read, except by ft_sweep_seed_task, so counting is safe while tasks
 * are writing them (a writable file is opened read-write all the same, so
 * that SQLite removes the WAL files it makes when the last connection
 * closes).  A key's rows are merged with one rule
 * everywhere: an ok row wins over a failed one, and among rows of the same
 * status the database named later wins.
 */
#ifndef FT_SWEEP_GATHER_H
#define FT_SWEEP_GATHER_H

#include "fusetile/api.h"
FT_API_BEGIN

#include "fusetile/sweep.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Counts of a sweep's runs over a set of databases. */
typedef struct ft_sweep_tally {
    int total;                /* runs of the sweep's expansion */
    int ok;                   /* of those, with an ok row in some database */
    int failed;               /* with rows, none ok */
    int pending;              /* with no row at all */
    int foreign;              /* keys found in the databases that the
                                 expansion does not have */
    char foreign_key[256];    /* the smallest such key (truncated), "" if none */
    int ndbs;                 /* databases read (an absent main one is not) */
    long long main_rows_before; /* rows of the main database's runs table
                                   before ft_sweep_gather (0 when absent) */
    long long main_rows;      /* its rows after (ft_sweep_tally_dbs: now) */
} ft_sweep_tally;

/* Count the runs of sw across the main database `main_db` (may be NULL or
 * not exist yet) and the task databases task_dbs[0..ntask-1] (each must
 * exist and have a runs table), all opened read-only.  When slice_m > 0,
 * pending_by_slice[k] (an array of slice_m ints the caller owns) receives
 * the number of runs with idx % slice_m == k that have no ok row anywhere.
 * FT_OK with *t filled, or FT_EINPUT ("PATH: file is not a database", "PATH:
 * no runs table") / FT_ENOMEM with st->msg. */
int ft_sweep_tally_dbs(const ft_sweep *sw, const char *main_db, const char *const *task_dbs, int ntask,
                       int slice_m, int *pending_by_slice, ft_sweep_tally *t, ft_status *st);

/* Merge the rows of task_dbs[0..ntask-1], in order, into main_db (created
 * with ft_sweep_db_open(main_db, sw->path) when absent): for each key of
 * sw's expansion, INSERT OR REPLACE the task's row unless the main database
 * already has an ok row for it (an ok row is never replaced by a failed
 * one); rows whose key is not in the expansion are left out (counted in
 * t->foreign).  One transaction per task database, so an interrupted gather
 * leaves every row whole, and gathering twice changes nothing.  Columns
 * are matched by name.  Fills *t as ft_sweep_tally_dbs does afterwards
 * (over the main database and the task databases), with main_rows_before.
 * FT_OK, or FT_EINPUT / FT_ENOMEM with st->msg naming the file. */
int ft_sweep_gather(const ft_sweep *sw, const char *main_db, const char *const *task_dbs, int ntask,
                    ft_sweep_tally *t, ft_status *st);

/* Prepare task k of slice_m (0 <= k < slice_m) for a (re)submission:
 * create task_db when absent (ft_sweep_db_open) and copy into it the ok
 * rows of main_db (may be NULL or absent: nothing to copy) for the runs
 * with idx % slice_m == k that it lacks, so that `sweep run --slice
 * k/slice_m --db task_db` skips them.  *copied (may be NULL) receives the
 * number of rows copied.  FT_OK, or FT_EINPUT / FT_ENOMEM with st->msg. */
int ft_sweep_seed_task(const ft_sweep *sw, const char *main_db, const char *task_db, int k, int slice_m,
                       int *copied, ft_status *st);

/* The value of meta.`name` in database `db_path`, opened read-only: FT_OK
 * with *value a malloc'd string (the caller frees it; NULL when the
 * database has no such entry), or FT_EINPUT ("PATH: ...") / FT_ENOMEM with
 * *value NULL. */
int ft_sweep_meta_get(const char *db_path, const char *name, char **value, ft_status *st);

#ifdef __cplusplus
}
#endif

FT_API_END

#endif /* FT_SWEEP_GATHER_H */
