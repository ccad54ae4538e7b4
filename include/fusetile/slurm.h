/* slurm.h - public API of libfusetile_sweep's Slurm driver (sweep/slurm.c, sweep/slurm_submit.c): a sweep run as one Slurm job array, task K running the runs whose index is K modulo M into its own database; the files of such a submission, planning and making a (re)submission, counting and gathering its results, its last job's state, and running Slurm's programs with a time limit.
 *
 * `fusetile sweep submit|status|gather` is its user (docs/SWEEP.md, "On a
 * Slurm cluster").  Conventions: the functions that act on a sweep
 * return an int code (FT_OK, FT_EINPUT, FT_ENOMEM) and put one line in the
 * caller's ft_status, as sweep.h's do; the helpers for files and processes
 * return 0 or -1 with errno set, like the system calls they wrap.  Nothing
 * is printed.  The results themselves are counted and merged by
 * sweep_gather.h.
 */
#ifndef FT_SLURM_H
#define FT_SLURM_H

#include "fusetile/api.h"
FT_API_BEGIN

#include <stddef.h>

#include "fusetile/sweep.h"
#include "fusetile/sweep_gather.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Seconds a Slurm command may take before it is killed. */
#define FT_SLURM_TIMEOUT 60

/* Tasks of a submission when neither the caller nor an earlier submission
 * sets M: at most this many (never more than the runs). */
#define FT_SLURM_DEFAULT_ARRAY_SIZE 64

/* ------------------------------------------------------------- files */

/* The files of a sweep submitted against results database DB (absolute):
 * DB.slurm/ holds job.sh (the batch script), task-K.db (array task K's
 * results), jobK-taskN.out (the tasks' output) and jobs.tsv (one line per
 * submission, ft_slurm_record). */
typedef struct ft_slurm_layout {
    char *db;                 /* the main database, absolute */
    char *dir;                /* db + ".slurm" */
} ft_slurm_layout;

/* Fill *l from database path `db` (made absolute against the working
 * directory; the file need not exist).  0, or -1 when out of memory or the
 * working directory is unknown (l then holds NULLs). */
int ft_slurm_layout_init(ft_slurm_layout *l, const char *db);

/* Release l's strings. */
void ft_slurm_layout_free(ft_slurm_layout *l);

/* The path of task k's database, "DIR/task-K.db": malloc'd, NULL when out
 * of memory. */
char *ft_slurm_task_db(const ft_slurm_layout *l, int k);

/* The task databases present in l->dir ("task-K.db", K decimal), sorted by
 * K: *out is a malloc'd array of *n malloc'd paths (ft_slurm_free_list),
 * NULL with *n = 0 when the directory does not exist or has none.  0, or
 * -1 when out of memory or the directory cannot be read. */
int ft_slurm_task_dbs(const ft_slurm_layout *l, char ***out, int *n);

/* Free a list from ft_slurm_task_dbs. */
void ft_slurm_free_list(char **list, int n);

/* One submission as jobs.tsv records it. */
typedef struct ft_slurm_job {
    char id[32];              /* Slurm job id, digits; "" when none */
    int array_size;           /* M of the slices */
    char array[256];          /* the --array specification submitted */
    char sweep[4096];         /* the sweep file, absolute */
    char when[32];            /* UTC, ISO 8601 */
} ft_slurm_job;

/* Append *j to l->dir/jobs.tsv (tab-separated, one line).  0, or -1 with
 * errno set. */
int ft_slurm_record(const ft_slurm_layout *l, const ft_slurm_job *j);

/* The last line of l->dir/jobs.tsv into *j: 1 when found, 0 when there is
 * no such file or it has no valid line. */
int ft_slurm_last_job(const ft_slurm_layout *l, ft_slurm_job *j);

/* The batch script of one array task: a POSIX sh script that changes to
 * `workdir` and execs `fusetile` sweep run SWEEP --slice
 * $SLURM_ARRAY_TASK_ID/M --jobs ${SLURM_CPUS_PER_TASK:-1} --db
 * DIR/task-$SLURM_ARRAY_TASK_ID.db --quiet, every path single-quoted.
 * `sbatch_line` (may be NULL) is recorded in a comment.  Malloc'd, NULL
 * when out of memory. */
char *ft_slurm_script(const ft_slurm_layout *l, const char *fusetile, const char *sweep, const char *workdir,
                      int array_size, const char *sbatch_line);

/* The array specification of the tasks k in 0..m-1 with pending[k] > 0,
 * as ranges ("0-7", "1,3-5") into buf; returns the number of tasks (0:
 * buf is ""), or -1 when buf (n bytes) is too small. */
int ft_slurm_array_spec(const int *pending, int m, char *buf, size_t n);

/* argv (NULL-terminated) as one sh command line: words made only of
 * letters, digits and -_=./,:%+@ as they are, every other word
 * single-quoted.  Malloc'd, NULL when out of memory. */
char *ft_slurm_command_line(char *const *argv);

/* Whether `path` is an SQLite database (its 16-byte header says so): 1 or
 * 0 (also when it cannot be read). */
int ft_slurm_is_database(const char *path);

/* ----------------------------------------------------------- programs */

/* The absolute path of `prog` found on PATH (or prog itself when it has a
 * slash and is executable): malloc'd, NULL when not found. */
char *ft_slurm_which(const char *prog);

/* The running program, absolute: /proc/self/exe, else `argv0` (may be
 * NULL) found as ft_slurm_which does and resolved.  Malloc'd, NULL when
 * unknown. */
char *ft_slurm_self_path(const char *argv0);

/* Output of a command run by ft_slurm_run. */
typedef struct ft_slurm_run_result {
    int status;               /* exit status; -1 when killed by a signal
                                 or the time limit */
    int timed_out;            /* 1: killed after the time limit */
    char *out, *err;          /* its stdout and stderr, NUL-terminated
                                 (at most 1 MiB each kept), malloc'd */
} ft_slurm_run_result;

/* Run argv (argv[0] searched on PATH) with stdin from /dev/null, its
 * output captured, killed (SIGKILL) after timeout_s seconds; stdio
 * buffers are flushed before the fork.  0 with *r filled
 * (ft_slurm_run_free), or -1 with errno set when it could not start
 * (ENOENT: not found). */
int ft_slurm_run(char *const argv[], double timeout_s, ft_slurm_run_result *r);

/* Release r's buffers. */
void ft_slurm_run_free(ft_slurm_run_result *r);

/* The last non-empty line of s (up to n-1 bytes) into buf; "" if none.
 * Returns buf. */
const char *ft_slurm_last_line(const char *s, char *buf, size_t n);

/* ---------------------------------------------------- a submitted sweep */

/* The sweep file that goes with the database of l: the one the last
 * submission recorded in jobs.tsv, else the database's meta.sweep.  FT_OK
 * with *sweep malloc'd (NULL when neither names one), or FT_EINPUT /
 * FT_ENOMEM with "DB: ..." in st->msg and *sweep NULL. */
int ft_slurm_recorded_sweep(const ft_slurm_layout *l, char **sweep, ft_status *st);

/* Count the runs of sw over l's main database and every task database
 * (ft_sweep_tally_dbs, read-only; slice_m and pending_by_slice as there).
 * FT_OK with *t and *ntask (the task databases read) set, or FT_EINPUT
 * ("DIR: cannot read: ...", or the tally's message) / FT_ENOMEM. */
int ft_slurm_tally(const ft_sweep *sw, const ft_slurm_layout *l, int slice_m, int *pending_by_slice,
                   ft_sweep_tally *t, int *ntask, ft_status *st);

/* Merge every task database of l into its main database
 * (ft_sweep_gather).  FT_OK with *t and *ntask (the task databases
 * merged) set, or FT_EINPUT ("DIR: cannot read: ...", or the merge's
 * message) / FT_ENOMEM. */
int ft_slurm_gather(const ft_sweep *sw, const ft_slurm_layout *l, ft_sweep_tally *t, int *ntask, ft_status *st);

/* The state of job j as two lines without their newlines: what squeue
 * says into squeue (nq bytes) - "2 RUNNING, 1 PENDING", "not in the queue
 * (finished)", "not found (not a Slurm node?)", "failed: REASON" - and
 * what sacct says into sacct (na bytes) - the states counted likewise,
 * "no record of job J", "not found", "unavailable: REASON".  Runs each
 * for at most FT_SLURM_TIMEOUT seconds. */
void ft_slurm_job_state(const ft_slurm_job *j, char *squeue, size_t nq, char *sacct, size_t na);

/* -------------------------------------------------------- submitting */

/* How to submit (ft_slurm_plan). */
typedef struct ft_slurm_submit_opts {
    int array_size;           /* M; 0: the last submission's M, else
                                 FT_SLURM_DEFAULT_ARRAY_SIZE; never more
                                 than the sweep's runs */
    const char *const *sbatch_opts; /* more sbatch arguments, given after
                                 its own and before the script */
    int nsbatch_opts;
    int dry_run;              /* 1: plan only: sbatch need not exist,
                                 squeue is not asked, nothing is gathered,
                                 created or written */
    const char *argv0;        /* the running program's argv[0], for when
                                 /proc/self/exe cannot name it (may be NULL) */
} ft_slurm_submit_opts;

/* A submission: what ft_slurm_plan decides and ft_slurm_submit does.  The
 * caller zeroes it before ft_slurm_plan and releases it with
 * ft_slurm_submission_free. */
typedef struct ft_slurm_submission {
    int m;                    /* tasks of the job array (M) */
    int ntasks;               /* tasks with runs to do; 0: nothing to submit */
    char spec[256];           /* the --array specification of those tasks
                                 (every task when the list is too long) */
    int *pending;             /* m counts: runs of task k with no ok row */
    char *sweep_file;         /* the sweep file, absolute (recorded in jobs.tsv) */
    ft_sweep_tally tally;     /* the runs over the main and task databases */
    int gathered;             /* 1: the task databases were first gathered
                                 into the main one (not in a dry run);
                                 gather holds that merge's counts, also
                                 when planning failed later */
    ft_sweep_tally gather;
    char *sbatch;             /* sbatch's path (NULL in a dry run) */
    char **argv;              /* the sbatch command, NULL-terminated
                                 (argv[0] is "sbatch") */
    char *command;            /* argv as one sh line (ft_slurm_command_line) */
    char *script;             /* the batch script (ft_slurm_script) */
    char *script_path;        /* DIR/job.sh */
    ft_slurm_job job;         /* the job submitted (ft_slurm_submit) */
    int refused;              /* 1 when an error is Slurm's refusal rather
                                 than bad input: the sweep's last job is
                                 still in squeue, or sbatch failed */
    char queue_warning[512];  /* "" or a line for the user: squeue could
                                 not be run to check the last job */
    char record_warning[512]; /* "" or a line for the user: the job was
                                 submitted but jobs.tsv could not record it */
} ft_slurm_submission;

/* Plan the submission of sw (its file, absolute: `sweep_file`) against the
 * files of l: find sbatch (unless o->dry_run), refuse while the last
 * submission's job is still in squeue, gather the task databases into the
 * main one (unless o->dry_run), count the runs not ok anywhere by task of
 * M, and, when some task has runs to do, build the sbatch command (the
 * array of those tasks, --job-name=fusetile-sweep, --output into DIR,
 * o->sbatch_opts, DIR/job.sh) and the batch script, which runs this
 * program from the working directory.  FT_OK with *s filled (s->ntasks 0:
 * nothing to submit), or FT_EINPUT / FT_ENOMEM with st->msg (s->refused
 * when the last job is still queued). */
int ft_slurm_plan(const ft_sweep *sw, const char *sweep_file, const ft_slurm_layout *l,
                  const ft_slurm_submit_opts *o, ft_slurm_submission *s, ft_status *st);

/* Submit what ft_slurm_plan planned (s->ntasks > 0, not a dry run): give
 * each task with runs to do a database holding its runs already ok
 * anywhere (ft_sweep_seed_task), so that the task skips them; write
 * DIR/job.sh; run sbatch --parsable; record the job in jobs.tsv.  FT_OK
 * with s->job filled, or FT_EINPUT / FT_ENOMEM with st->msg (s->refused
 * when sbatch ran and failed, timed out or printed no job id).  A job that
 * jobs.tsv could not record is submitted all the same, with
 * s->record_warning saying so. */
int ft_slurm_submit(const ft_sweep *sw, const ft_slurm_layout *l, ft_slurm_submission *s, ft_status *st);

/* Release what ft_slurm_plan allocated in s (s itself is the caller's). */
void ft_slurm_submission_free(ft_slurm_submission *s);

#ifdef __cplusplus
}
#endif

FT_API_END

#endif /* FT_SLURM_H */
