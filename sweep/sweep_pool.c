/* sweep_pool.c - run a sweep's pending runs on forked worker processes fed through pipes; replace dead workers; stop on SIGINT/SIGTERM; workers die with the parent. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE   /* gethostname */
#include "fusetile/sweep.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <time.h>
#include <unistd.h>

#include "fusetile/sim.h"

/* Simulated cost units after which a worker retires and is replaced (a
 * bound on a worker's life, from when the simulator's clock was the
 * process's; each replay now has the whole clock, sim.h). */
#define WORKER_SIM_BUDGET 4e9
/* Seconds between two progress callbacks. */
#define PROGRESS_PERIOD 0.25

/* What a worker says after each run (one write, below PIPE_BUF: atomic). */
typedef struct report {
    int idx;
    int status;          /* 0 ok, 1 failed (recorded), 2 could not record it */
    char msg[248];       /* status 2: the database error */
} report;

typedef struct worker {
    pid_t pid;           /* 0: none */
    int to, from;        /* the parent's ends of its two pipes */
    int run;             /* run index it works on; -1 idle */
} worker;

static volatile sig_atomic_t stop_signal;

static void on_stop(int sig)
{
    stop_signal = sig;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void ft_sweep_exec_opts_init(ft_sweep_exec_opts *o)
{
    memset(o, 0, sizeof *o);
    o->slice_k = 0;
    o->slice_m = 1;
}

/* Read or write exactly n bytes (retrying on EINTR); 0, or -1 (EOF, error). */
static int full_io(int fd, void *buf, size_t n, int writing)
{
    char *p = buf;
    while (n) {
        ssize_t k = writing ? write(fd, p, n) : read(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* The worker process: runs the indices it reads until EOF or -1, records
 * each run, reports it; never returns. */
static void worker_main(const ft_sweep *sw, const char *db_path, int in, int out)
{
    char host[128] = "localhost", name[160];
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = '\0';
    snprintf(name, sizeof name, "%s:%ld", host, (long)getpid());
    ft_sweep_db *db = NULL;
    ft_sim *sim = NULL;
    ft_status st;
    double simulated = 0;
    int idx, code = 0;
    while (simulated < WORKER_SIM_BUDGET && full_io(in, &idx, sizeof idx, 0) == 0 && idx >= 0 && idx < sw->nruns) {
        const ft_sweep_run *r = &sw->runs[idx];
        ft_sweep_result res;
        report rep;
        memset(&rep, 0, sizeof rep);
        rep.idx = idx;
        ft_sweep_run_exec(r, &sim, &res, &st);
        if (isfinite(res.sim_total))
            simulated += res.sim_total;
        if (!db && ft_sweep_db_open(db_path, sw->path, &db, &st) != FT_OK)
            db = NULL;
        if (db && ft_sweep_db_put(db, sw->path, r, &res, name, &st) == FT_OK) {
            rep.status = res.ok ? 0 : 1;
        } else {
            rep.status = 2;
            snprintf(rep.msg, sizeof rep.msg, "%.*s", (int)sizeof rep.msg - 1, st.msg);
        }
        if (full_io(out, &rep, sizeof rep, 1) || rep.status == 2) {
            code = 1;
            break;
        }
    }
    ft_sweep_db_close(db);
    ft_sim_free(sim);
    _exit(code);
}

typedef struct pool {
    const ft_sweep *sw;
    const char *db_path;
    worker *w;
    int nw;
    int *queue;          /* run indices still to hand out */
    int nqueue, head;
    int *back;           /* indices taken back from a worker that could not get them */
    int nback;
    struct pollfd *fds;  /* the parent's poll set and its workers */
    int *which;
    ft_sweep_counts c;
    char db_error[sizeof ((ft_status *)0)->msg];
} pool;

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* Start worker i: 0, or -1 (fork or pipe failed). */
static int spawn(pool *P, int i)
{
    int to[2], from[2];
    if (pipe(to))
        return -1;
    if (pipe(from)) {
        close(to[0]);
        close(to[1]);
        return -1;
    }
    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        close(to[0]), close(to[1]), close(from[0]), close(from[1]);
        return -1;
    }
    if (pid == 0) {
#ifdef __linux__
        /* A parent killed outright (SIGKILL) would leave this worker to
         * finish its run and write the database after the parent's caller
         * believes the sweep gone: die with it instead (SQLite rolls the
         * unfinished transaction back).  Elsewhere the worker finishes its
         * run and exits on the pipe's EOF. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)   /* the parent died before prctl */
            _exit(1);
#else
        (void)parent;
#endif
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGPIPE, SIG_DFL);
        for (int j = 0; j < P->nw; j++)   /* the other workers' pipes: theirs to close */
            if (j != i) {
                close_fd(&P->w[j].to);
                close_fd(&P->w[j].from);
            }
        close(to[1]);
        close(from[0]);
        free(P->queue);   /* the parent's, copied by the fork */
        free(P->back);
        free(P->w);
        free(P->fds);
        free(P->which);
        worker_main(P->sw, P->db_path, to[0], from[1]);
    }
    close(to[0]);
    close(from[1]);
    P->w[i] = (worker){.pid = pid, .to = to[1], .from = from[0], .run = -1};
    return 0;
}

static int has_work(const pool *P)
{
    return !stop_signal && !P->db_error[0] && (P->nback > 0 || P->head < P->nqueue);
}

/* Hand a run to idle worker i. */
static void assign(pool *P, int i)
{
    int idx = P->nback ? P->back[--P->nback] : P->queue[P->head++];
    P->w[i].run = idx;
    if (full_io(P->w[i].to, &idx, sizeof idx, 1)) {   /* it died: its EOF comes next */
        P->back[P->nback++] = idx;
        P->w[i].run = -1;
    }
}

/* Record the run of a worker that died (status from waitpid). */
static void record_death(pool *P, int idx, int status)
{
    ft_sweep_result res;
    memset(&res, 0, sizeof res);
    res.capacity = res.bandwidth = res.total = res.lower_bound = res.capacity_bound = res.ratio = res.sim_total = NAN;
    res.energy_j = res.power_w = NAN;
    res.agreement = -1;
    if (WIFSIGNALED(status))
        snprintf(res.error, sizeof res.error, "worker killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
        snprintf(res.error, sizeof res.error, "worker exited with status %d without recording the run",
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    ft_sweep_db *db;
    ft_status st;
    char name[64];
    snprintf(name, sizeof name, "parent:%ld", (long)getpid());
    if (ft_sweep_db_open(P->db_path, P->sw->path, &db, &st) != FT_OK ||
        ft_sweep_db_put(db, P->sw->path, &P->sw->runs[idx], &res, name, &st) != FT_OK)
        snprintf(P->db_error, sizeof P->db_error, "%s", st.msg);
    ft_sweep_db_close(db);
    P->c.failed++;
}

/* Worker i's pipe is readable: a report, or its end. */
static void on_readable(pool *P, int i)
{
    worker *w = &P->w[i];
    report rep;
    if (full_io(w->from, &rep, sizeof rep, 0) == 0) {
        if (rep.status == 0)
            P->c.done++;
        else
            P->c.failed++;
        if (rep.status == 2 && !P->db_error[0])
            snprintf(P->db_error, sizeof P->db_error, "%s", rep.msg);
        w->run = -1;
        return;
    }
    int status = 0;
    close_fd(&w->from);
    close_fd(&w->to);
    while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR)
        ;
    w->pid = 0;
    int stopped = WIFSIGNALED(status) && (WTERMSIG(status) == SIGINT || WTERMSIG(status) == SIGTERM);
    if (w->run >= 0) {
        if (stopped || stop_signal)
            P->back[P->nback++] = w->run;   /* interrupted, not failed: a rerun does it */
        else
            record_death(P, w->run, status);
    }
    w->run = -1;
}

static void progress(pool *P, const ft_sweep_exec_opts *o, double t0, int final)
{
    P->c.elapsed = now() - t0;
    P->c.pending = P->c.selected - P->c.skipped - P->c.done - P->c.failed;
    P->c.interrupted = stop_signal != 0;
    if (o->on_progress)
        o->on_progress(o->ctx, &P->c, final);
}

/* The runs of the slice not yet ok in the database, into P->queue. */
static int pending_runs(pool *P, const ft_sweep_exec_opts *o, ft_status *st)
{
    ft_sweep_db *db;
    int rc = ft_sweep_db_open(P->db_path, P->sw->path, &db, st);
    if (rc != FT_OK)
        return rc;
    for (int i = 0; i < P->sw->nruns; i++) {
        if (i % o->slice_m != o->slice_k)
            continue;
        P->c.selected++;
        int d = ft_sweep_db_done(db, P->sw->runs[i].key, st);
        if (d < 0) {
            ft_sweep_db_close(db);
            return FT_EINPUT;
        }
        if (d)
            P->c.skipped++;
        else
            P->queue[P->nqueue++] = i;
    }
    ft_sweep_db_close(db);   /* the workers open their own: no connection crosses a fork */
    return FT_OK;
}

int ft_sweep_execute(const ft_sweep *sw, const char *db_path, const ft_sweep_exec_opts *o, ft_sweep_counts *counts,
                     ft_status *st)
{
    ft_status_clear(st);
    memset(counts, 0, sizeof *counts);
    int jobs = o->jobs;
    if (jobs == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        jobs = n < 1 ? 1 : n > FT_SWEEP_MAX_JOBS ? FT_SWEEP_MAX_JOBS : (int)n;
    }
    if (jobs < 1 || jobs > FT_SWEEP_MAX_JOBS || o->slice_m < 1 || o->slice_k < 0 || o->slice_k >= o->slice_m) {
        st->code = FT_EINPUT;
        snprintf(st->msg, sizeof st->msg, "bad options: jobs %d (1 to %d), slice %d/%d (0 <= K < M)", jobs, FT_SWEEP_MAX_JOBS,
                 o->slice_k, o->slice_m);
        return FT_EINPUT;
    }
    pool P;
    memset(&P, 0, sizeof P);
    P.sw = sw;
    P.db_path = db_path;
    P.queue = malloc(((size_t)sw->nruns + 1) * sizeof *P.queue);
    P.back = malloc(((size_t)sw->nruns + 1) * sizeof *P.back);
    P.w = calloc((size_t)jobs, sizeof *P.w);
    struct pollfd *fds = P.fds = calloc((size_t)jobs, sizeof *fds);
    int *which = P.which = calloc((size_t)jobs, sizeof *which);
    int rc = FT_OK;
    if (!P.queue || !P.back || !P.w || !fds || !which) {
        st->code = rc = FT_ENOMEM;
        snprintf(st->msg, sizeof st->msg, "%s: out of memory", sw->path);
        goto out;
    }
    if ((rc = pending_runs(&P, o, st)) != FT_OK)
        goto out;
    P.nw = jobs < P.nqueue ? jobs : P.nqueue;
    for (int i = 0; i < P.nw; i++)
        P.w[i] = (worker){.pid = 0, .to = -1, .from = -1, .run = -1};

    struct sigaction sa, old_int, old_term, old_pipe;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_stop;
    stop_signal = 0;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, &old_pipe);

    double t0 = now(), last = t0;
    progress(&P, o, t0, 0);
    for (;;) {
        int live = 0, nf = 0;
        for (int i = 0; i < P.nw; i++) {
            worker *w = &P.w[i];
            if (!w->pid && has_work(&P) && spawn(&P, i)) {
                st->code = rc = FT_EINPUT;
                snprintf(st->msg, sizeof st->msg, "cannot start a worker: %s", strerror(errno));
                stop_signal = SIGTERM;
            }
            if (w->pid && w->run < 0 && has_work(&P))
                assign(&P, i);
            if (w->pid && w->run < 0 && !has_work(&P))
                close_fd(&w->to);   /* no more work: it exits */
            if (w->pid) {
                live++;
                fds[nf] = (struct pollfd){.fd = w->from, .events = POLLIN};
                which[nf++] = i;
            }
        }
        if (!live)
            break;
        if (stop_signal) {   /* stop the workers; their runs stay pending */
            for (int i = 0; i < P.nw; i++)
                if (P.w[i].pid)
                    kill(P.w[i].pid, SIGTERM);
        }
        int n = poll(fds, (nfds_t)nf, (int)(PROGRESS_PERIOD * 1000));
        for (int k = 0; n > 0 && k < nf; k++)
            if (fds[k].revents)
                on_readable(&P, which[k]);
        if (now() - last >= PROGRESS_PERIOD) {
            last = now();
            progress(&P, o, t0, 0);
        }
    }
    progress(&P, o, t0, 1);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGPIPE, &old_pipe, NULL);
    if (rc == FT_OK && P.db_error[0]) {
        st->code = rc = FT_EINPUT;
        snprintf(st->msg, sizeof st->msg, "%s", P.db_error);
    }
    stop_signal = 0;
out:
    *counts = P.c;
    free(P.queue);
    free(P.back);
    free(P.w);
    free(fds);
    free(which);
    return rc;
}
