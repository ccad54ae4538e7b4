/* slurm_submit.c - a sweep submitted to Slurm (fusetile/slurm.h): the sweep file a database goes with, counting and gathering the task databases, the last job's state from squeue and sacct, and planning and making a (re)submission. */
#define _XOPEN_SOURCE 700
#include "fusetile/slurm.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fusetile/io.h" /* ft_write_atomic */

/* Fill st with code and a formatted one-line message; returns code. */
static int fail(ft_status *st, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(ft_status *st, int code, const char *fmt, ...)
{
    va_list ap;
    ft_status_clear(st);
    st->code = code;
    va_start(ap, fmt);
    vsnprintf(st->msg, sizeof st->msg, fmt, ap);
    va_end(ap);
    return code;
}

/* ---------------------------------------------------- a submitted sweep */

/* Contract: fusetile/slurm.h. */
int ft_slurm_recorded_sweep(const ft_slurm_layout *l, char **sweep, ft_status *st)
{
    ft_slurm_job j;
    *sweep = NULL;
    ft_status_clear(st);
    if (ft_slurm_last_job(l, &j) && j.sweep[0])
        return (*sweep = strdup(j.sweep)) ? FT_OK : fail(st, FT_ENOMEM, "out of memory");
    return ft_sweep_meta_get(l->db, "sweep", sweep, st);
}

/* Contract: fusetile/slurm.h. */
int ft_slurm_tally(const ft_sweep *sw, const ft_slurm_layout *l, int slice_m, int *pending_by_slice,
                   ft_sweep_tally *t, int *ntask, ft_status *st)
{
    char **tasks = NULL;
    int n = 0;
    if (ft_slurm_task_dbs(l, &tasks, &n))
        return fail(st, errno == ENOMEM ? FT_ENOMEM : FT_EINPUT, "%s: cannot read: %s", l->dir, strerror(errno));
    int rc = ft_sweep_tally_dbs(sw, l->db, (const char *const *)tasks, n, slice_m, pending_by_slice, t, st);
    ft_slurm_free_list(tasks, n);
    if (rc == FT_OK)
        *ntask = n;
    return rc;
}

/* Contract: fusetile/slurm.h. */
int ft_slurm_gather(const ft_sweep *sw, const ft_slurm_layout *l, ft_sweep_tally *t, int *ntask, ft_status *st)
{
    char **tasks = NULL;
    int n = 0;
    if (ft_slurm_task_dbs(l, &tasks, &n))
        return fail(st, errno == ENOMEM ? FT_ENOMEM : FT_EINPUT, "%s: cannot read: %s", l->dir, strerror(errno));
    int rc = ft_sweep_gather(sw, l->db, (const char *const *)tasks, n, t, st);
    ft_slurm_free_list(tasks, n);
    if (rc == FT_OK)
        *ntask = n;
    return rc;
}

/* Count the word in field `state_field` (from 0) of each line of `text`
 * (words split at spaces, tabs and '|') into "N STATE, M STATE" in buf (n
 * bytes), in the order the states first occur; states past the sixteenth
 * are counted as ", K other". */
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

/* Contract: fusetile/slurm.h. */
void ft_slurm_job_state(const ft_slurm_job *j, char *squeue, size_t nq, char *sacct, size_t na)
{
    char id[40];
    snprintf(id, sizeof id, "%s", j->id);
    char *sq[] = {"squeue", "-h", "-r", "-j", id, "-o", "%i %T", NULL};
    ft_slurm_run_result r;
    char line[512];
    if (ft_slurm_run(sq, FT_SLURM_TIMEOUT, &r) != 0) {
        snprintf(squeue, nq, "%s", errno == ENOENT ? "not found (not a Slurm node?)" : strerror(errno));
    } else {
        if (r.status == 0 && r.out[0])
            summarize_states(r.out, 1, squeue, nq);
        else if (r.status == 0 || strstr(r.err, "Invalid job id"))
            snprintf(squeue, nq, "not in the queue (finished)");
        else
            snprintf(squeue, nq, "failed: %s", r.timed_out ? "timed out" : ft_slurm_last_line(r.err, line, sizeof line));
        ft_slurm_run_free(&r);
    }
    char *sa[] = {"sacct", "-n", "-X", "-P", "-j", id, "-o", "JobID,State", NULL};
    if (ft_slurm_run(sa, FT_SLURM_TIMEOUT, &r) != 0) {
        snprintf(sacct, na, "%s", errno == ENOENT ? "not found" : strerror(errno));
        return;
    }
    if (r.status == 0 && r.out[0])
        summarize_states(r.out, 1, sacct, na);
    else if (r.status == 0)
        snprintf(sacct, na, "no record of job %s", j->id);
    else
        snprintf(sacct, na, "unavailable: %s", r.timed_out ? "timed out" : ft_slurm_last_line(r.err, line, sizeof line));
    ft_slurm_run_free(&r);
}

/* -------------------------------------------------------- submitting */

/* The time now, UTC, ISO 8601, into buf (n bytes). */
static void utc_now(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Whether job `id` still has tasks in squeue: 1 yes, 0 no or unknown
 * (then, when squeue could not be run, a line in warn, n bytes). */
static int still_queued(const char *id, char *warn, size_t n)
{
    char idbuf[40];
    snprintf(idbuf, sizeof idbuf, "%s", id);
    char *sq[] = {"squeue", "-h", "-j", idbuf, "-o", "%i", NULL};
    ft_slurm_run_result r;
    if (ft_slurm_run(sq, FT_SLURM_TIMEOUT, &r) != 0) {
        snprintf(warn, n, "cannot run squeue to check job %s: %s", id, strerror(errno));
        return 0;
    }
    int queued = r.status == 0 && r.out[strspn(r.out, " \n")] != '\0';
    ft_slurm_run_free(&r);
    return queued;
}

/* The sbatch argument vector of a submission, every string malloc'd:
 * sbatch --parsable --array=SPEC --job-name=fusetile-sweep
 * --output=DIR/job%A-task%a.out OPTS... SCRIPT.  NULL when out of memory. */
static char **sbatch_argv(const ft_slurm_submit_opts *o, const char *spec, const char *dir, const char *script)
{
    int n = 0, max = o->nsbatch_opts + 6;
    char **v = calloc((size_t)max + 1, sizeof *v);
    if (!v)
        return NULL;
    size_t alen = strlen(spec) + 9, olen = strlen(dir) + 32;
    v[n++] = strdup("sbatch");
    v[n++] = strdup("--parsable");
    if ((v[n++] = malloc(alen)))
        snprintf(v[n - 1], alen, "--array=%s", spec);
    v[n++] = strdup("--job-name=fusetile-sweep");
    if ((v[n++] = malloc(olen)))
        snprintf(v[n - 1], olen, "--output=%s/job%%A-task%%a.out", dir);
    for (int i = 0; i < o->nsbatch_opts; i++)
        v[n++] = strdup(o->sbatch_opts[i]);
    v[n++] = strdup(script);
    for (int i = 0; i < n; i++)
        if (!v[i]) {
            for (int k = 0; k < n; k++)
                free(v[k]);
            free(v);
            return NULL;
        }
    return v;
}

/* Contract: fusetile/slurm.h. */
int ft_slurm_plan(const ft_sweep *sw, const char *sweep_file, const ft_slurm_layout *l,
                  const ft_slurm_submit_opts *o, ft_slurm_submission *s, ft_status *st)
{
    char cwd[4096];
    ft_slurm_job last;
    int have_last = ft_slurm_last_job(l, &last);
    char *self = NULL;
    int rc = FT_EINPUT;
    ft_status_clear(st);

    if (!o->dry_run && !(s->sbatch = ft_slurm_which("sbatch")))
        return fail(st, FT_EINPUT, "sbatch not found on PATH (not a Slurm login node? install slurm-client)");
    if (!getcwd(cwd, sizeof cwd))
        return fail(st, FT_EINPUT, "cannot get the working directory: %s", strerror(errno));
    if (strpbrk(sweep_file, "\t\n") || strpbrk(l->db, "\t\n"))
        return fail(st, FT_EINPUT, "%s: a tab or newline in the sweep or database path cannot be recorded in jobs.tsv",
                    sweep_file);
    if (!(self = ft_slurm_self_path(o->argv0)))
        return fail(st, FT_EINPUT, "cannot find the fusetile program's own path");
    if (have_last && !o->dry_run && still_queued(last.id, s->queue_warning, sizeof s->queue_warning)) {
        s->refused = 1;
        rc = fail(st, FT_EINPUT, "job %s of this sweep is still in squeue; wait for it or scancel %s, then submit again",
                  last.id, last.id);
        goto out;
    }
    int m = o->array_size ? o->array_size : have_last ? last.array_size : FT_SLURM_DEFAULT_ARRAY_SIZE;
    if (m > sw->nruns)
        m = sw->nruns;
    if (m < 1) {
        rc = fail(st, FT_EINPUT, "%s has no runs", sweep_file);
        goto out;
    }
    s->m = m;
    if (!(s->sweep_file = strdup(sweep_file))) {
        rc = fail(st, FT_ENOMEM, "out of memory");
        goto out;
    }
    if (!(s->pending = calloc((size_t)m, sizeof *s->pending))) {
        rc = fail(st, FT_ENOMEM, "out of memory");
        goto out;
    }
    int ntask = 0;
    if (!o->dry_run) {
        if (mkdir(l->dir, 0777) != 0 && errno != EEXIST) {
            rc = fail(st, FT_EINPUT, "%s: cannot create: %s", l->dir, strerror(errno));
            goto out;
        }
        if ((rc = ft_slurm_gather(sw, l, &s->gather, &ntask, st)) != FT_OK)
            goto out;
        s->gathered = 1;
    }
    if ((rc = ft_slurm_tally(sw, l, m, s->pending, &s->tally, &ntask, st)) != FT_OK)
        goto out;
    s->ntasks = ft_slurm_array_spec(s->pending, m, s->spec, sizeof s->spec);
    if (s->ntasks < 0) {
        /* too many ranges to list: submit every task, the done ones exit at once */
        snprintf(s->spec, sizeof s->spec, "0-%d", m - 1);
        s->ntasks = m;
    }
    if (s->ntasks == 0) {
        rc = FT_OK;
        goto out;
    }
    size_t plen = strlen(l->dir) + 8;
    if ((s->script_path = malloc(plen)))
        snprintf(s->script_path, plen, "%s/job.sh", l->dir);
    if (!s->script_path || !(s->argv = sbatch_argv(o, s->spec, l->dir, s->script_path)) ||
        !(s->command = ft_slurm_command_line(s->argv)) ||
        !(s->script = ft_slurm_script(l, self, sweep_file, cwd, m, s->command))) {
        rc = fail(st, FT_ENOMEM, "out of memory");
        goto out;
    }
    rc = FT_OK;
out:
    free(self);
    return rc;
}

/* Write the batch script text to path atomically (ft_write_atomic), then
 * make it executable: FT_OK, or an error with the message in *st. */
static int write_script(const char *path, const char *text, ft_status *st)
{
    int rc = ft_write_atomic(text, path, st);
    if (rc == FT_OK && chmod(path, 0755) != 0)
        rc = fail(st, FT_EINPUT, "%s: cannot make it executable: %s", path, strerror(errno));
    return rc;
}

/* Contract: fusetile/slurm.h. */
int ft_slurm_submit(const ft_sweep *sw, const ft_slurm_layout *l, ft_slurm_submission *s, ft_status *st)
{
    ft_status_clear(st);
    if (!s->sbatch || !s->argv || !s->script || !s->sweep_file || s->ntasks <= 0)
        return fail(st, FT_EINPUT, "nothing planned to submit");
    /* each task's database holds the runs of its slice already ok anywhere */
    for (int k = 0; k < s->m; k++) {
        if (!s->pending[k])
            continue;
        char *tdb = ft_slurm_task_db(l, k);
        if (!tdb)
            return fail(st, FT_ENOMEM, "out of memory");
        int rc = ft_sweep_seed_task(sw, l->db, tdb, k, s->m, NULL, st);
        free(tdb);
        if (rc != FT_OK)
            return rc;
    }
    int rc = write_script(s->script_path, s->script, st);
    if (rc != FT_OK)
        return rc;
    /* run sbatch by its path; the command line keeps the name "sbatch" */
    char *name = s->argv[0];
    s->argv[0] = s->sbatch;
    ft_slurm_run_result r;
    int started = ft_slurm_run(s->argv, FT_SLURM_TIMEOUT, &r);
    s->argv[0] = name;
    if (started != 0)
        return fail(st, FT_EINPUT, "cannot run %s: %s", s->sbatch, strerror(errno));
    char msg[512];
    size_t idlen = strspn(r.out, "0123456789");
    if (r.status != 0 || idlen == 0 || idlen >= sizeof s->job.id) {
        s->refused = 1;
        fail(st, FT_EINPUT, "sbatch %s: %s", r.timed_out ? "timed out" : r.status != 0 ? "failed" : "printed no job id",
             ft_slurm_last_line(r.status != 0 ? r.err : r.out, msg, sizeof msg));
        ft_slurm_run_free(&r);
        return FT_EINPUT;
    }
    memset(&s->job, 0, sizeof s->job);
    memcpy(s->job.id, r.out, idlen);
    ft_slurm_run_free(&r);
    s->job.array_size = s->m;
    snprintf(s->job.array, sizeof s->job.array, "%s", s->spec);
    snprintf(s->job.sweep, sizeof s->job.sweep, "%s", s->sweep_file);
    utc_now(s->job.when, sizeof s->job.when);
    if (ft_slurm_record(l, &s->job))
        snprintf(s->record_warning, sizeof s->record_warning, "%s/jobs.tsv: cannot record job %s: %s", l->dir,
                 s->job.id, strerror(errno));
    return FT_OK;
}

/* Contract: fusetile/slurm.h. */
void ft_slurm_submission_free(ft_slurm_submission *s)
{
    if (!s)
        return;
    free(s->pending);
    free(s->sweep_file);
    free(s->sbatch);
    if (s->argv)
        for (int i = 0; s->argv[i]; i++)
            free(s->argv[i]);
    free(s->argv);
    free(s->command);
    free(s->script);
    free(s->script_path);
    s->pending = NULL;
    s->argv = NULL;
    s->sweep_file = s->sbatch = s->command = s->script = s->script_path = NULL;
}
