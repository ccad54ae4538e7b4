/* cmd_sweep_slurm.c - `fusetile sweep submit|status|gather`: the arguments and the output of a sweep run as a Slurm job array with one results database per task, its progress, and the merge of the task databases into the main one; the driver itself is libfusetile_sweep's (fusetile/slurm.h). */
#define _XOPEN_SOURCE 700
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fusetile/slurm.h"
#include "fusetile/sweep.h"
#include "fusetile/sweep_gather.h"

/* Largest --array-size (Slurm's MaxArraySize is 1001 by default; sites raise it). */
#define MAX_ARRAY_SIZE 100000
/* Most --sbatch-opt options. */
#define MAX_SBATCH_OPTS 64

static const char submit_help[] =
    "usage: fusetile sweep submit SWEEP.cfg --slurm [--array-size M] [--db OUT.db] [--sbatch-opt OPT]... [--dry-run]\n"
    "\n"
    "Run a sweep as one Slurm job array of M tasks: task K runs the runs whose\n"
    "index is K modulo M ('fusetile sweep run SWEEP --slice K/M --jobs\n"
    "$SLURM_CPUS_PER_TASK') into its own database, OUT.db.slurm/task-K.db (one\n"
    "writer per file, so no SQLite writers share a cluster file system);\n"
    "'fusetile sweep gather' merges them into OUT.db.  The batch script is\n"
    "OUT.db.slurm/job.sh, the tasks' output OUT.db.slurm/jobJ-taskK.out, and\n"
    "each submission is a line of OUT.db.slurm/jobs.tsv.\n"
    "\n"
    "Submit gathers first, then gives each task's database the runs already ok\n"
    "anywhere (in OUT.db or any task database), so a resubmission runs only\n"
    "the failed and missing runs, and only the tasks that have some; with\n"
    "nothing left it submits nothing.  It refuses while the sweep's last job\n"
    "is still in squeue.\n"
    "\n"
    "  --slurm            submit to Slurm with sbatch (required: the only scheduler)\n"
    "  --array-size M     tasks (default: the last submission's M, else the\n"
    "                     smaller of the run count and 64)\n"
    "  --db FILE          main results database (default: SWEEP with its\n"
    "                     extension replaced by .db)\n"
    "  --sbatch-opt OPT   one more sbatch argument, e.g. --sbatch-opt\n"
    "                     --time=02:00:00 or --sbatch-opt=--cpus-per-task=4\n"
    "                     (each task's --jobs); repeatable\n"
    "  --dry-run          print the sbatch command and the script; write and\n"
    "                     submit nothing\n"
    "  -h, --help         show this help\n"
    "\n"
    "On stdout: 'submitted job J: ...' with the job id.  Exit status: 0\n"
    "submitted (or nothing left to run), 1 sbatch failed or the last job is\n"
    "still queued, 2 bad input or usage, or sbatch not found.\n";

static const char status_help[] =
    "usage: fusetile sweep status SWEEP.cfg|OUT.db [--db OUT.db]\n"
    "\n"
    "How far a submitted sweep is: its runs total, ok, failed and pending\n"
    "over the main database and the task databases (read-only, so it is safe\n"
    "while the tasks write), and the state of its last job from squeue and,\n"
    "where accounting is enabled, sacct (either may be missing).  Given the\n"
    "database, the sweep file is the one the last submission recorded (or\n"
    "the database's meta.sweep).\n"
    "\n"
    "  --db FILE     main results database, with a SWEEP argument (default:\n"
    "                SWEEP with its extension replaced by .db)\n"
    "  -h, --help    show this help\n"
    "\n"
    "Exit status: 0, or 2 bad input or usage.\n";

static const char gather_help[] =
    "usage: fusetile sweep gather SWEEP.cfg|OUT.db [--db OUT.db]\n"
    "\n"
    "Merge every task database (OUT.db.slurm/task-K.db) into OUT.db: INSERT\n"
    "OR REPLACE by key, except that an ok row is never replaced by a failed\n"
    "one; one transaction per task database, so gathering again changes\n"
    "nothing.  Rows whose key is not a run of the sweep's expansion (an\n"
    "edited sweep file) are left out and reported.  Prints the rows and the\n"
    "runs ok, failed and pending.\n"
    "\n"
    "  --db FILE     main results database, with a SWEEP argument (default:\n"
    "                SWEEP with its extension replaced by .db)\n"
    "  -h, --help    show this help\n"
    "\n"
    "Exit status: 0 merged, 1 some key is not a run of the sweep, 2 bad input\n"
    "or usage.\n";

/* ----------------------------------------------------------- arguments */

/* What all three commands resolve: the sweep (loaded), its database and
 * the Slurm directory next to it. */
typedef struct sweep_files {
    ft_sweep *sw;
    char *sweep_abs;          /* the sweep file, absolute */
    ft_slurm_layout l;
} sweep_files;

static void files_free(sweep_files *f)
{
    ft_sweep_free(f->sw);
    free(f->sweep_abs);
    ft_slurm_layout_free(&f->l);
    memset(f, 0, sizeof *f);
}

/* Resolve ARG (a sweep file or a database) and --db into *f, loading the
 * sweep.  EXIT_OK, or EXIT_USAGE after one line on stderr. */
static int resolve(const char *cmd, const char *arg, const char *db_opt, sweep_files *f)
{
    memset(f, 0, sizeof *f);
    const char *sweep = arg;
    char *sweep_own = NULL, *db_own = NULL;
    const char *db = db_opt;
    ft_status st;
    if (ft_slurm_is_database(arg)) {
        if (db_opt) {
            cli_error("%s: --db is for a sweep file argument; %s is a database", cmd, arg);
            return EXIT_USAGE;
        }
        db = arg;
    } else if (!db && !(db = db_own = ft_sweep_default_db(arg))) {
        cli_error("%s: out of memory", cmd);
        return EXIT_USAGE;
    }
    if (ft_slurm_layout_init(&f->l, db)) {
        cli_error("%s: %s: cannot make the path absolute: %s", cmd, db, strerror(errno));
        free(db_own);
        return EXIT_USAGE;
    }
    free(db_own);
    if (db == arg) {
        if (ft_slurm_recorded_sweep(&f->l, &sweep_own, &st) != FT_OK) {
            cli_error("%s: %s", cmd, st.msg);
            files_free(f);
            return EXIT_USAGE;
        }
        sweep = sweep_own;
        if (!sweep || !*sweep) {
            cli_error("%s: %s: no sweep file recorded in it; name the sweep file (fusetile sweep %s SWEEP --db %s)",
                      cmd, arg, strchr(cmd, ' ') + 1, arg);
            free(sweep_own);
            files_free(f);
            return EXIT_USAGE;
        }
    }
    if (cli_input(sweep, "sweep") != EXIT_OK) {
        free(sweep_own);
        files_free(f);
        return EXIT_USAGE;
    }
    int rc = ft_sweep_load(sweep, &f->sw, &st);
    if (rc == FT_OK && !(f->sweep_abs = realpath(sweep, NULL)))
        f->sweep_abs = strdup(sweep);
    free(sweep_own);
    if (rc != FT_OK) {
        cli_error("%s", st.msg);
        files_free(f);
        return EXIT_USAGE;
    }
    if (!f->sweep_abs) {
        cli_error("%s: out of memory", cmd);
        files_free(f);
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

/* The common option loop of status and gather: ARG and --db. */
static int parse_simple(int argc, char **argv, const char *cmd, const char *help, const char **arg,
                        const char **db)
{
    cli_opts o;
    const char *a;
    int is_opt;
    *arg = *db = NULL;
    cli_opt_init(&o, argc, argv);
    o.cmd = cmd;
    while ((a = cli_opt_next(&o, &is_opt))) {
        if (!is_opt) {
            if (*arg) {
                cli_error("%s: unexpected argument '%s' (try 'fusetile %s --help')", cmd, a, cmd);
                return EXIT_USAGE;
            }
            *arg = a;
        } else if (cli_opt_is(&o, a, "--help") || cli_opt_is(&o, a, "-h")) {
            fputs(help, stdout);
            return EXIT_OK;
        } else if (cli_opt_is(&o, a, "--db")) {
            if (!(*db = cli_opt_file(&o, "--db")))
                return EXIT_USAGE;
        } else {
            cli_error("%s: unknown option '%s' (try 'fusetile %s --help')", cmd, a, cmd);
            return EXIT_USAGE;
        }
    }
    if (!*arg) {
        cli_error("%s: needs SWEEP.cfg or its database (try 'fusetile %s --help')", cmd, cmd);
        return EXIT_USAGE;
    }
    return CLI_NEXT;
}

/* ------------------------------------------------------------- gather */

/* "N keys ... are not runs of SWEEP" when t has foreign keys. */
static void report_foreign(const char *cmd, const sweep_files *f, const ft_sweep_tally *t)
{
    if (t->foreign)
        cli_error("%s: %d key%s in the databases %s not a run of %s (first: %s); left out of %s", cmd, t->foreign,
                  t->foreign == 1 ? "" : "s", t->foreign == 1 ? "is" : "are", f->sweep_abs, t->foreign_key, f->l.db);
}

int cli_sweep_gather(int argc, char **argv)
{
    const char *arg, *db;
    int rc = parse_simple(argc, argv, "sweep gather", gather_help, &arg, &db);
    if (rc != CLI_NEXT)
        return rc;
    sweep_files f;
    if ((rc = resolve("sweep gather", arg, db, &f)))
        return rc;
    ft_sweep_tally t;
    ft_status st;
    int ntask = 0;
    if (ft_slurm_gather(f.sw, &f.l, &t, &ntask, &st) != FT_OK) {
        cli_error("sweep gather: %s", st.msg);
        rc = EXIT_USAGE;
    } else {
        printf("gathered %d task database%s into %s: %lld rows (%lld before)\n", ntask, ntask == 1 ? "" : "s", f.l.db,
               t.main_rows, t.main_rows_before);
        printf("runs %d: %d ok, %d failed, %d pending\n", t.total, t.ok, t.failed, t.pending);
        report_foreign("sweep gather", &f, &t);
        rc = t.foreign ? EXIT_INVALID : EXIT_OK;
    }
    files_free(&f);
    return rc;
}

/* ------------------------------------------------------------- status */

/* The state of job j from squeue and sacct, a line each. */
static void job_state(const ft_slurm_job *j)
{
    char squeue[512], sacct[512];
    fflush(stdout);
    ft_slurm_job_state(j, squeue, sizeof squeue, sacct, sizeof sacct);
    printf("squeue   %s\n", squeue);
    printf("sacct    %s\n", sacct);
}

int cli_sweep_status(int argc, char **argv)
{
    const char *arg, *db;
    int rc = parse_simple(argc, argv, "sweep status", status_help, &arg, &db);
    if (rc != CLI_NEXT)
        return rc;
    sweep_files f;
    if ((rc = resolve("sweep status", arg, db, &f)))
        return rc;
    int n = 0;
    ft_status st;
    ft_sweep_tally t;
    if (ft_slurm_tally(f.sw, &f.l, 0, NULL, &t, &n, &st) != FT_OK) {
        cli_error("sweep status: %s", st.msg);
        files_free(&f);
        return EXIT_USAGE;
    }
    printf("sweep    %s: %d runs\n", f.sweep_abs, t.total);
    printf("results  %s%s and %d task database%s in %s\n", f.l.db, access(f.l.db, F_OK) == 0 ? "" : " (not yet)", n,
           n == 1 ? "" : "s", f.l.dir);
    printf("runs     %d total, %d ok, %d failed, %d pending\n", t.total, t.ok, t.failed, t.pending);
    if (t.foreign)
        printf("foreign  %d keys not in the sweep (first: %s)\n", t.foreign, t.foreign_key);
    ft_slurm_job j;
    if (ft_slurm_last_job(&f.l, &j)) {
        printf("job      %s: array %s of %d, submitted %s\n", j.id, j.array, j.array_size, j.when);
        job_state(&j);
    } else {
        printf("job      none submitted\n");
    }
    files_free(&f);
    return EXIT_OK;
}

/* ------------------------------------------------------------- submit */

typedef struct submit_opts {
    const char *sweep, *db;
    int slurm, dry_run;
    int array_size;                       /* 0: default */
    const char *sbatch[MAX_SBATCH_OPTS];
    int nsbatch;
} submit_opts;

static int parse_submit(int argc, char **argv, submit_opts *s)
{
    cli_opts o;
    const char *a, *v;
    int is_opt;
    memset(s, 0, sizeof *s);
    cli_opt_init(&o, argc, argv);
    o.cmd = "sweep submit";
    while ((a = cli_opt_next(&o, &is_opt))) {
        if (!is_opt) {
            if (s->sweep) {
                cli_error("sweep submit: unexpected argument '%s' (try 'fusetile sweep submit --help')", a);
                return EXIT_USAGE;
            }
            s->sweep = a;
        } else if (cli_opt_is(&o, a, "--help") || cli_opt_is(&o, a, "-h")) {
            fputs(submit_help, stdout);
            return EXIT_OK;
        } else if (cli_opt_is(&o, a, "--slurm")) {
            s->slurm = 1;
        } else if (cli_opt_is(&o, a, "--dry-run")) {
            s->dry_run = 1;
        } else if (cli_opt_is(&o, a, "--db")) {
            if (!(s->db = cli_opt_file(&o, "--db")))
                return EXIT_USAGE;
        } else if (cli_opt_is(&o, a, "--array-size")) {
            uint64_t m;
            if (!(v = cli_opt_value(&o, "--array-size")))
                return EXIT_USAGE;
            if (cli_parse_u64(v, &m) || m < 1 || m > MAX_ARRAY_SIZE) {
                cli_error("sweep submit: --array-size is '%s', must be an integer from 1 to %d", v, MAX_ARRAY_SIZE);
                return EXIT_USAGE;
            }
            s->array_size = (int)m;
        } else if (cli_opt_is(&o, a, "--sbatch-opt")) {
            if (!(v = cli_opt_value(&o, "--sbatch-opt")))
                return EXIT_USAGE;
            if (!*v) {
                cli_error("sweep submit: --sbatch-opt needs a value");
                return EXIT_USAGE;
            }
            if (s->nsbatch == MAX_SBATCH_OPTS) {
                cli_error("sweep submit: more than %d --sbatch-opt options", MAX_SBATCH_OPTS);
                return EXIT_USAGE;
            }
            s->sbatch[s->nsbatch++] = v;
        } else {
            cli_error("sweep submit: unknown option '%s' (try 'fusetile sweep submit --help')", a);
            return EXIT_USAGE;
        }
    }
    if (!s->sweep) {
        cli_error("sweep submit: needs SWEEP.cfg (try 'fusetile sweep submit --help')");
        return EXIT_USAGE;
    }
    if (!s->slurm) {
        cli_error("sweep submit: --slurm is required (Slurm is the only scheduler; try 'fusetile sweep submit --help')");
        return EXIT_USAGE;
    }
    return CLI_NEXT;
}

/* Plan and submit (or print, with --dry-run).  f is resolved. */
static int submit(const submit_opts *o, sweep_files *f)
{
    const char *cmd = "sweep submit";
    ft_slurm_submit_opts so = {o->array_size, o->sbatch, o->nsbatch, o->dry_run, cli_argv0};
    ft_slurm_submission s;
    ft_status st;
    memset(&s, 0, sizeof s);
    int rc = ft_slurm_plan(f->sw, f->sweep_abs, &f->l, &so, &s, &st);
    if (s.queue_warning[0])
        cli_warn("%s: %s", cmd, s.queue_warning);
    if (s.gathered)
        report_foreign(cmd, f, &s.gather);
    if (rc != FT_OK) {
        cli_error("%s: %s", cmd, st.msg);
        rc = s.refused ? EXIT_INVALID : EXIT_USAGE;
        goto out;
    }
    rc = EXIT_OK;
    const ft_sweep_tally *t = &s.tally;
    if (s.ntasks == 0) {
        printf("nothing to submit: all %d runs of %s are ok in %s\n", t->total, f->sweep_abs, f->l.db);
        goto out;
    }
    if (o->dry_run) {
        printf("# %s\n# %d runs: %d ok, %d failed, %d pending; %d of %d tasks to run\n%s", s.command, t->total, t->ok,
               t->failed, t->pending, s.ntasks, s.m, s.script);
        goto out;
    }
    rc = ft_slurm_submit(f->sw, &f->l, &s, &st);
    if (s.record_warning[0])
        cli_warn("%s: %s", cmd, s.record_warning);
    if (rc != FT_OK) {
        cli_error("%s: %s", cmd, st.msg);
        rc = s.refused ? EXIT_INVALID : EXIT_USAGE;
        goto out;
    }
    rc = EXIT_OK;
    printf("submitted job %s: array %s (%d of %d tasks), %d runs pending of %d (%d ok, %d failed); results in %s\n",
           s.job.id, s.spec, s.ntasks, s.m, t->total - t->ok, t->total, t->ok, t->failed, f->l.dir);
out:
    ft_slurm_submission_free(&s);
    return rc;
}

int cli_sweep_submit(int argc, char **argv)
{
    submit_opts s;
    int rc = parse_submit(argc, argv, &s);
    if (rc != CLI_NEXT)
        return rc;
    if (ft_slurm_is_database(s.sweep)) {
        cli_error("sweep submit: %s is a database; name the sweep file", s.sweep);
        return EXIT_USAGE;
    }
    sweep_files f;
    if ((rc = resolve("sweep submit", s.sweep, s.db, &f)))
        return rc;
    rc = submit(&s, &f);
    files_free(&f);
    return rc;
}
