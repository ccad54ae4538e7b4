/* cmd_sweep_slurm.c - `fusetile sweep submit|status|gather`: a sweep run as a Slurm job array with one results database per task, its progress, and the merge of the task databases into the main one. */
#define _XOPEN_SOURCE 700
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fusetile/io.h" /* ft_write_atomic */
#include "slurm.h"
#include "fusetile/sweep.h"
#include "fusetile/sweep_gather.h"

/* Default --array-size: at most this many tasks (never more than runs). */
#define DEFAULT_ARRAY_SIZE 64
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
    cli_slurm_layout l;
} sweep_files;

static void files_free(sweep_files *f)
{
    ft_sweep_free(f->sw);
    free(f->sweep_abs);
    cli_slurm_layout_free(&f->l);
    memset(f, 0, sizeof *f);
}

/* Whether path is an SQLite database (its 16-byte header). */
static int is_database(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    char h[16];
    size_t n = fread(h, 1, sizeof h, f);
    fclose(f);
    return n == sizeof h && memcmp(h, "SQLite format 3", 16) == 0;
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
    if (is_database(arg)) {
        if (db_opt) {
            cli_error("%s: --db is for a sweep file argument; %s is a database", cmd, arg);
            return EXIT_USAGE;
        }
        db = arg;
    } else if (!db && !(db = db_own = ft_sweep_default_db(arg))) {
        cli_error("%s: out of memory", cmd);
        return EXIT_USAGE;
    }
    if (cli_slurm_layout_init(&f->l, db)) {
        cli_error("%s: %s: cannot make the path absolute: %s", cmd, db, strerror(errno));
        free(db_own);
        return EXIT_USAGE;
    }
    free(db_own);
    if (db == arg) {
        cli_slurm_job j;
        if (cli_slurm_last_job(&f->l, &j) && j.sweep[0]) {
            sweep = sweep_own = strdup(j.sweep);
        } else if (ft_sweep_meta_get(f->l.db, "sweep", &sweep_own, &st) != FT_OK) {
            cli_error("%s: %s", cmd, st.msg);
            files_free(f);
            return EXIT_USAGE;
        } else {
            sweep = sweep_own;
        }
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

static void utc_now(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* ------------------------------------------------------------- gather */

/* Gather the task databases of f into its main one; *t gets the counts.
 * EXIT_OK or EXIT_USAGE after one line. */
static int do_gather(const char *cmd, sweep_files *f, ft_sweep_tally *t, int *ntask)
{
    char **tasks = NULL;
    int n = 0;
    if (cli_slurm_task_dbs(&f->l, &tasks, &n)) {
        cli_error("%s: %s: cannot read: %s", cmd, f->l.dir, strerror(errno));
        return EXIT_USAGE;
    }
    ft_status st;
    int rc = ft_sweep_gather(f->sw, f->l.db, (const char *const *)tasks, n, t, &st);
    cli_slurm_free_list(tasks, n);
    if (rc != FT_OK) {
        cli_error("%s: %s", cmd, st.msg);
        return EXIT_USAGE;
    }
    *ntask = n;
    return EXIT_OK;
}

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
    int ntask = 0;
    if (!(rc = do_gather("sweep gather", &f, &t, &ntask))) {
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

/* Count the second word of each line of `text` (a state, its first word)
 * into "N STATE, M STATE" in buf. */
static void summarize_states(const char *text, int state_field, char *buf, size_t n)
{
    struct {
        char name[32];
        int count;
    } s[16];
    int ns = 0, other = 0;
    const char *p = text;
    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        char line[256];
        snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), p);
        p += len + (eol ? 1 : 0);
        char *save = NULL, *w = strtok_r(line, " |\t", &save);
        for (int i = 0; w && i < state_field; i++)
            w = strtok_r(NULL, " |\t", &save);
        if (!w)
            continue;
        int i;
        for (i = 0; i < ns && strcmp(s[i].name, w) != 0; i++)
            ;
        if (i == ns) {
            if (ns == 16) {
                other++;
                continue;
            }
            snprintf(s[ns].name, sizeof s[ns].name, "%s", w);
            s[ns++].count = 0;
        }
        s[i].count++;
    }
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < ns && len < n; i++)
        len += (size_t)snprintf(buf + len, n - len, "%s%d %s", i ? ", " : "", s[i].count, s[i].name);
    if (other && len < n)
        snprintf(buf + len, n - len, ", %d other", other);
}

static void job_state(const cli_slurm_job *j)
{
    char id[40];
    snprintf(id, sizeof id, "%s", j->id);
    char *sq[] = {"squeue", "-h", "-r", "-j", id, "-o", "%i %T", NULL};
    cli_run_result r;
    char line[512], states[512];
    if (cli_run(sq, CLI_SLURM_TIMEOUT, &r) != 0) {
        printf("squeue   %s\n", errno == ENOENT ? "not found (not a Slurm node?)" : strerror(errno));
    } else {
        if (r.status == 0 && r.out[0]) {
            summarize_states(r.out, 1, states, sizeof states);
            printf("squeue   %s\n", states);
        } else if (r.status == 0 || strstr(r.err, "Invalid job id")) {
            printf("squeue   not in the queue (finished)\n");
        } else {
            printf("squeue   failed: %s\n", r.timed_out ? "timed out" : cli_last_line(r.err, line, sizeof line));
        }
        cli_run_free(&r);
    }
    char *sa[] = {"sacct", "-n", "-X", "-P", "-j", id, "-o", "JobID,State", NULL};
    if (cli_run(sa, CLI_SLURM_TIMEOUT, &r) != 0) {
        printf("sacct    %s\n", errno == ENOENT ? "not found" : strerror(errno));
        return;
    }
    if (r.status == 0 && r.out[0]) {
        summarize_states(r.out, 1, states, sizeof states);
        printf("sacct    %s\n", states);
    } else if (r.status == 0) {
        printf("sacct    no record of job %s\n", j->id);
    } else {
        printf("sacct    unavailable: %s\n", r.timed_out ? "timed out" : cli_last_line(r.err, line, sizeof line));
    }
    cli_run_free(&r);
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
    char **tasks = NULL;
    int n = 0;
    ft_status st;
    ft_sweep_tally t;
    if (cli_slurm_task_dbs(&f.l, &tasks, &n)) {
        cli_error("sweep status: %s: cannot read: %s", f.l.dir, strerror(errno));
        files_free(&f);
        return EXIT_USAGE;
    }
    if (ft_sweep_tally_dbs(f.sw, f.l.db, (const char *const *)tasks, n, 0, NULL, &t, &st) != FT_OK) {
        cli_error("sweep status: %s", st.msg);
        cli_slurm_free_list(tasks, n);
        files_free(&f);
        return EXIT_USAGE;
    }
    cli_slurm_free_list(tasks, n);
    printf("sweep    %s: %d runs\n", f.sweep_abs, t.total);
    printf("results  %s%s and %d task database%s in %s\n", f.l.db, access(f.l.db, F_OK) == 0 ? "" : " (not yet)", n,
           n == 1 ? "" : "s", f.l.dir);
    printf("runs     %d total, %d ok, %d failed, %d pending\n", t.total, t.ok, t.failed, t.pending);
    if (t.foreign)
        printf("foreign  %d keys not in the sweep (first: %s)\n", t.foreign, t.foreign_key);
    cli_slurm_job j;
    if (cli_slurm_last_job(&f.l, &j)) {
        printf("job      %s: array %s of %d, submitted %s\n", j.id, j.array, j.array_size, j.when);
        fflush(stdout);
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

/* The sbatch argument vector (NULL-terminated, pointers into the strings
 * given and into `array_arg`, `out_arg`; the caller frees the vector). */
static char **sbatch_argv(const submit_opts *s, char *array_arg, char *out_arg, char *script)
{
    char **v = calloc((size_t)s->nsbatch + 8, sizeof *v);
    if (!v)
        return NULL;
    int n = 0;
    v[n++] = "sbatch";
    v[n++] = "--parsable";
    v[n++] = array_arg;
    v[n++] = "--job-name=fusetile-sweep";
    v[n++] = out_arg;
    for (int i = 0; i < s->nsbatch; i++)
        v[n++] = (char *)s->sbatch[i];
    v[n++] = script;
    v[n] = NULL;
    return v;
}

/* argv as one line of single-quoted words where needed (malloc'd). */
static char *command_line(char *const *argv)
{
    size_t n = 1;
    for (int i = 0; argv[i]; i++)
        n += 4 * strlen(argv[i]) + 3;
    char *s = malloc(n), *q = s;
    if (!s)
        return NULL;
    for (int i = 0; argv[i]; i++) {
        const char *a = argv[i];
        if (i)
            *q++ = ' ';
        int plain = *a != '\0';
        for (const char *p = a; *p; p++)
            if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=./,:%+@", *p))
                plain = 0;
        if (plain) {
            q += sprintf(q, "%s", a);
            continue;
        }
        *q++ = '\'';
        for (const char *p = a; *p; p++) {
            if (*p == '\'') {
                memcpy(q, "'\\''", 4);
                q += 4;
            } else {
                *q++ = *p;
            }
        }
        *q++ = '\'';
    }
    *q = '\0';
    return s;
}

/* Write the batch script text to path atomically (the library's
 * ft_write_atomic), then make it executable: FT_OK, or an error with the
 * message in *st. */
static int write_script(const char *path, const char *text, ft_status *st)
{
    int rc = ft_write_atomic(text, path, st);
    if (rc == FT_OK && chmod(path, 0755) != 0) {
        st->code = rc = FT_EINPUT;
        snprintf(st->msg, sizeof st->msg, "%s: cannot make it executable: %s", path, strerror(errno));
    }
    return rc;
}

/* Whether job `id` still has tasks in squeue: 1 yes, 0 no or unknown. */
static int still_queued(const char *id)
{
    char idbuf[40];
    snprintf(idbuf, sizeof idbuf, "%s", id);
    char *sq[] = {"squeue", "-h", "-j", idbuf, "-o", "%i", NULL};
    cli_run_result r;
    if (cli_run(sq, CLI_SLURM_TIMEOUT, &r) != 0) {
        cli_warn("sweep submit: cannot run squeue to check job %s: %s", id, strerror(errno));
        return 0;
    }
    int queued = r.status == 0 && r.out[strspn(r.out, " \n")] != '\0';
    cli_run_free(&r);
    return queued;
}

/* Prepare and submit (or print, with --dry-run).  f is resolved. */
static int submit(const submit_opts *s, sweep_files *f)
{
    const char *cmd = "sweep submit";
    char *sbatch = NULL, *self = NULL, *script = NULL, *line = NULL, **argv = NULL, *script_path = NULL;
    int *pending = NULL, rc = EXIT_USAGE;
    char array_arg[300], out_arg[4200], spec[256], cwd[4096];
    cli_slurm_job last;
    int have_last = cli_slurm_last_job(&f->l, &last);
    ft_status st;
    ft_sweep_tally t;

    if (!s->dry_run && !(sbatch = cli_slurm_which("sbatch"))) {
        cli_error("%s: sbatch not found on PATH (not a Slurm login node? install slurm-client)", cmd);
        return EXIT_USAGE;
    }
    if (!getcwd(cwd, sizeof cwd)) {
        cli_error("%s: cannot get the working directory: %s", cmd, strerror(errno));
        goto out;
    }
    if (strpbrk(f->sweep_abs, "\t\n") || strpbrk(f->l.db, "\t\n")) {
        cli_error("%s: %s: a tab or newline in the sweep or database path cannot be recorded in jobs.tsv", cmd,
                  f->sweep_abs);
        goto out;
    }
    if (!(self = cli_self_path())) {
        cli_error("%s: cannot find the fusetile program's own path", cmd);
        goto out;
    }
    if (have_last && !s->dry_run && still_queued(last.id)) {
        cli_error("%s: job %s of this sweep is still in squeue; wait for it or scancel %s, then submit again", cmd,
                  last.id, last.id);
        rc = EXIT_INVALID;
        goto out;
    }
    int m = s->array_size ? s->array_size : have_last ? last.array_size : DEFAULT_ARRAY_SIZE;
    if (m > f->sw->nruns)
        m = f->sw->nruns;
    if (m < 1) {
        cli_error("%s: %s has no runs", cmd, f->sweep_abs);
        goto out;
    }
    if (!(pending = calloc((size_t)m, sizeof *pending))) {
        cli_error("%s: out of memory", cmd);
        goto out;
    }
    char **tasks = NULL;
    int ntask = 0;
    if (!s->dry_run) {
        if (mkdir(f->l.dir, 0777) != 0 && errno != EEXIST) {
            cli_error("%s: %s: cannot create: %s", cmd, f->l.dir, strerror(errno));
            goto out;
        }
        if ((rc = do_gather(cmd, f, &t, &ntask)))
            goto out;
        rc = EXIT_USAGE;
        report_foreign(cmd, f, &t);
    }
    if (cli_slurm_task_dbs(&f->l, &tasks, &ntask)) {
        cli_error("%s: %s: cannot read: %s", cmd, f->l.dir, strerror(errno));
        goto out;
    }
    int trc = ft_sweep_tally_dbs(f->sw, f->l.db, (const char *const *)tasks, ntask, m, pending, &t, &st);
    cli_slurm_free_list(tasks, ntask);
    if (trc != FT_OK) {
        cli_error("%s: %s", cmd, st.msg);
        goto out;
    }
    int ntasks = cli_slurm_array_spec(pending, m, spec, sizeof spec);
    if (ntasks < 0) {
        /* too many ranges to list: submit every task, the done ones exit at once */
        snprintf(spec, sizeof spec, "0-%d", m - 1);
        ntasks = m;
    }
    if (ntasks == 0) {
        printf("nothing to submit: all %d runs of %s are ok in %s\n", t.total, f->sweep_abs, f->l.db);
        rc = EXIT_OK;
        goto out;
    }
    if (!(script_path = malloc(strlen(f->l.dir) + 8))) {
        cli_error("%s: out of memory", cmd);
        goto out;
    }
    sprintf(script_path, "%s/job.sh", f->l.dir);
    snprintf(array_arg, sizeof array_arg, "--array=%s", spec);
    snprintf(out_arg, sizeof out_arg, "--output=%s/job%%A-task%%a.out", f->l.dir);
    if (!(argv = sbatch_argv(s, array_arg, out_arg, script_path)) || !(line = command_line(argv)) ||
        !(script = cli_slurm_script(&f->l, self, f->sweep_abs, cwd, m, line))) {
        cli_error("%s: out of memory", cmd);
        goto out;
    }
    if (s->dry_run) {
        printf("# %s\n# %d runs: %d ok, %d failed, %d pending; %d of %d tasks to run\n%s", line, t.total, t.ok, t.failed,
               t.pending, ntasks, m, script);
        rc = EXIT_OK;
        goto out;
    }
    /* each task's database holds the runs of its slice already ok anywhere */
    for (int k = 0; k < m; k++) {
        if (!pending[k])
            continue;
        char *tdb = cli_slurm_task_db(&f->l, k);
        int copied = 0;
        if (!tdb || ft_sweep_seed_task(f->sw, f->l.db, tdb, k, m, &copied, &st) != FT_OK) {
            cli_error("%s: %s", cmd, tdb ? st.msg : "out of memory");
            free(tdb);
            goto out;
        }
        free(tdb);
    }
    if (write_script(script_path, script, &st) != FT_OK) {
        cli_error("%s: %s", cmd, st.msg);
        goto out;
    }
    cli_run_result r;
    argv[0] = sbatch;
    if (cli_run(argv, CLI_SLURM_TIMEOUT, &r) != 0) {
        cli_error("%s: cannot run %s: %s", cmd, sbatch, strerror(errno));
        goto out;
    }
    char msg[512];
    size_t idlen = strspn(r.out, "0123456789");
    if (r.status != 0 || idlen == 0 || idlen >= sizeof last.id) {
        cli_error("%s: sbatch %s: %s", cmd,
                  r.timed_out ? "timed out" : r.status != 0 ? "failed" : "printed no job id",
                  cli_last_line(r.status != 0 ? r.err : r.out, msg, sizeof msg));
        cli_run_free(&r);
        rc = EXIT_INVALID;
        goto out;
    }
    cli_slurm_job j;
    memset(&j, 0, sizeof j);
    memcpy(j.id, r.out, idlen);
    cli_run_free(&r);
    j.array_size = m;
    snprintf(j.array, sizeof j.array, "%s", spec);
    snprintf(j.sweep, sizeof j.sweep, "%s", f->sweep_abs);
    utc_now(j.when, sizeof j.when);
    if (cli_slurm_record(&f->l, &j))
        cli_warn("%s: %s/jobs.tsv: cannot record job %s: %s", cmd, f->l.dir, j.id, strerror(errno));
    printf("submitted job %s: array %s (%d of %d tasks), %d runs pending of %d (%d ok, %d failed); results in %s\n", j.id,
           spec, ntasks, m, t.total - t.ok, t.total, t.ok, t.failed, f->l.dir);
    rc = EXIT_OK;
out:
    free(sbatch);
    free(self);
    free(script);
    free(script_path);
    free(line);
    free(argv);
    free(pending);
    return rc;
}

int cli_sweep_submit(int argc, char **argv)
{
    submit_opts s;
    int rc = parse_submit(argc, argv, &s);
    if (rc != CLI_NEXT)
        return rc;
    if (is_database(s.sweep)) {
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
