/* slurm.h - what `fusetile sweep submit|status|gather` need from Slurm and the system: the layout of a submitted sweep's files, the array task's batch script, running sbatch/squeue/sacct with a time limit and their output, the record of submitted jobs. */
#ifndef FT_CLI_SLURM_H
#define FT_CLI_SLURM_H

#include <stddef.h>

/* Seconds a Slurm command may take before it is killed. */
#define CLI_SLURM_TIMEOUT 60

/* The files of a sweep submitted against results database DB (absolute):
 * DB.slurm/ holds job.sh (the batch script), task-K.db (array task K's
 * results), jobK-taskN.out (the tasks' output) and jobs.tsv (one line per
 * submission, cli_slurm_record). */
typedef struct cli_slurm_layout {
    char *db;                 /* the main database, absolute */
    char *dir;                /* db + ".slurm" */
} cli_slurm_layout;

/* Fill *l from database path `db` (made absolute against the working
 * directory; the file need not exist).  0, or -1 when out of memory or the
 * working directory is unknown (l then holds NULLs). */
int cli_slurm_layout_init(cli_slurm_layout *l, const char *db);

/* Release l's strings. */
void cli_slurm_layout_free(cli_slurm_layout *l);

/* The path of task k's database, "DIR/task-K.db": malloc'd, NULL when out
 * of memory. */
char *cli_slurm_task_db(const cli_slurm_layout *l, int k);

/* The task databases present in l->dir ("task-K.db", K decimal), sorted by
 * K: *out is a malloc'd array of *n malloc'd paths (cli_slurm_free_list),
 * NULL with *n = 0 when the directory does not exist or has none.  0, or
 * -1 when out of memory or the directory cannot be read. */
int cli_slurm_task_dbs(const cli_slurm_layout *l, char ***out, int *n);

/* Free a list from cli_slurm_task_dbs. */
void cli_slurm_free_list(char **list, int n);

/* One submission as jobs.tsv records it. */
typedef struct cli_slurm_job {
    char id[32];              /* Slurm job id, digits; "" when none */
    int array_size;           /* M of the slices */
    char array[256];          /* the --array specification submitted */
    char sweep[4096];         /* the sweep file, absolute */
    char when[32];            /* UTC, ISO 8601 */
} cli_slurm_job;

/* Append *j to l->dir/jobs.tsv (tab-separated, one line).  0, or -1 with
 * errno set. */
int cli_slurm_record(const cli_slurm_layout *l, const cli_slurm_job *j);

/* The last line of l->dir/jobs.tsv into *j: 1 when found, 0 when there is
 * no such file or it has no valid line. */
int cli_slurm_last_job(const cli_slurm_layout *l, cli_slurm_job *j);

/* The batch script of one array task: a POSIX sh script that changes to
 * `workdir` and execs `fusetile` sweep run SWEEP --slice
 * $SLURM_ARRAY_TASK_ID/M --jobs ${SLURM_CPUS_PER_TASK:-1} --db
 * DIR/task-$SLURM_ARRAY_TASK_ID.db --quiet, every path single-quoted.
 * `sbatch_line` (may be NULL) is recorded in a comment.  Malloc'd, NULL
 * when out of memory. */
char *cli_slurm_script(const cli_slurm_layout *l, const char *fusetile, const char *sweep, const char *workdir,
                       int array_size, const char *sbatch_line);

/* The array specification of the tasks k in 0..m-1 with pending[k] > 0,
 * as ranges ("0-7", "1,3-5") into buf; returns the number of tasks (0:
 * buf is ""), or -1 when buf (n bytes) is too small. */
int cli_slurm_array_spec(const int *pending, int m, char *buf, size_t n);

/* The absolute path of `prog` found on PATH (or prog itself when it has a
 * slash and is executable): malloc'd, NULL when not found. */
char *cli_slurm_which(const char *prog);

/* The running fusetile program, absolute (/proc/self/exe, else argv[0]
 * resolved): malloc'd, NULL when unknown. */
char *cli_self_path(void);

/* Output of a command run by cli_run. */
typedef struct cli_run_result {
    int status;               /* exit status; -1 when killed by a signal
                                 or the time limit */
    int timed_out;            /* 1: killed after the time limit */
    char *out, *err;          /* its stdout and stderr, NUL-terminated
                                 (at most 1 MiB each kept), malloc'd */
} cli_run_result;

/* Run argv (argv[0] searched on PATH) with stdin from /dev/null, its
 * output captured, killed (SIGKILL) after timeout_s seconds.  0 with *r
 * filled (cli_run_free), or -1 with errno set when it could not start
 * (ENOENT: not found). */
int cli_run(char *const argv[], double timeout_s, cli_run_result *r);

/* Release r's buffers. */
void cli_run_free(cli_run_result *r);

/* The last non-empty line of s (up to n-1 bytes) into buf; "" if none.
 * Returns buf. */
const char *cli_last_line(const char *s, char *buf, size_t n);

#endif
