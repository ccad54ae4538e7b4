/* cmd_sweep.c - `fusetile sweep run|list|plot`: run a sweep file's runs on worker processes into SQLite, list its keys, plot its results. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fusetile/sweep.h"

static const char sweep_help[] =
    "usage: fusetile sweep run SWEEP.cfg [--jobs N] [--db OUT.db] [--slice K/M] [--quiet]\n"
    "       fusetile sweep list SWEEP.cfg\n"
    "       fusetile sweep plot DB --x AXIS --y METRIC [--group AXIS] [--where COLUMN=VALUE]... [--log-x] [--log-y] [--points] -o OUT.svg\n"
    "       fusetile sweep submit SWEEP.cfg --slurm [--array-size M] [--db OUT.db] [--sbatch-opt OPT]... [--dry-run]\n"
    "       fusetile sweep status SWEEP.cfg|OUT.db [--db OUT.db]\n"
    "       fusetile sweep gather SWEEP.cfg|OUT.db [--db OUT.db]\n"
    "\n"
    "Run every combination of a sweep file's axes (problems, targets, capacity,\n"
    "bandwidth, native, units, compute_model, strategy, time_limit, seed; or\n"
    "its explicit runs list) and keep the results in an SQLite database\n"
    "(docs/SWEEP.md: the file format, the keys, the tables).  'fusetile sweep\n"
    "COMMAND --help' describes each command.\n"
    "\n"
    "Exit status: 0 every run ok, 1 some run failed (recorded in the database)\n"
    "or the sweep was interrupted, 2 bad input or usage.\n";

static const char run_help[] =
    "usage: fusetile sweep run SWEEP.cfg [--jobs N] [--db OUT.db] [--slice K/M] [--quiet]\n"
    "\n"
    "Check SWEEP.cfg whole (a bad file is one line naming the file, line and\n"
    "setting, exit 2, before any run), then run its runs on N forked worker\n"
    "processes: each run schedules the problem (its strategy, time limit and\n"
    "seed, one search thread), evaluates it, computes both lower bounds and,\n"
    "with simulate = true, replays it in the simulator; each worker commits\n"
    "each run's row in its own transaction.  Runs whose row says ok are\n"
    "skipped (a rerun retries the failed and the missing ones).\n"
    "\n"
    "  --jobs N      worker processes (default: one per online core, at most 256)\n"
    "  --db FILE     results database (default: SWEEP with its extension\n"
    "                replaced by .db); created when absent\n"
    "  --slice K/M   only the runs whose index (position in the full\n"
    "                expansion, from 0) is K modulo M, 0 <= K < M (to split a\n"
    "                sweep between machines; docs/SWEEP.md)\n"
    "  -q, --quiet   print nothing but errors (no progress, no summary)\n"
    "  -h, --help    show this help\n"
    "\n"
    "On stderr: how many runs were selected and skipped; progress (runs done,\n"
    "failed, skipped, runs per second, time left): one line redrawn on a\n"
    "terminal, a plain line every 5 s otherwise; then a summary.  SIGINT or\n"
    "SIGTERM stops the workers: finished rows stay, the runs in progress are\n"
    "done by the next run of the command.\n"
    "\n"
    "Exit status: 0 every selected run ok, 1 some run failed or interrupted,\n"
    "2 bad input or usage.\n";

static const char list_help[] =
    "usage: fusetile sweep list SWEEP.cfg\n"
    "\n"
    "Check and expand SWEEP.cfg and print one line per run: its index, a tab\n"
    "and its key (the canonical text of its inputs, the database's primary\n"
    "key; docs/SWEEP.md).  Exit status: 0, or 2 for a bad file.\n";

/* Seconds between two plain progress lines (stderr not a terminal). */
#define PLAIN_PROGRESS_PERIOD 5.0

typedef struct run_ui {
    const char *sweep;
    const char *db;
    int quiet, tty;
    int announced;       /* the "selected, skipped" line is out */
    int shown;           /* a terminal progress line is on screen */
    double last_plain;
} run_ui;

static void fmt_eta(char *b, size_t n, double s)
{
    if (!(s >= 0) || s > 1e7)
        snprintf(b, n, "-");
    else if (s >= 3600)
        snprintf(b, n, "%dh%02dm", (int)(s / 3600), (int)(s / 60) % 60);
    else
        snprintf(b, n, "%dm%02ds", (int)(s / 60), (int)s % 60);
}

static void on_progress(void *ctx, const ft_sweep_counts *c, int final)
{
    run_ui *u = ctx;
    if (u->quiet)
        return;
    if (!u->announced) {
        u->announced = 1;
        fprintf(stderr, "%s: sweep: %s: %d runs selected, %d skipped (already ok in %s), %d to run\n", cli_progname, u->sweep,
                c->selected, c->skipped, u->db, c->selected - c->skipped);
    }
    int finished = c->done + c->failed;
    double rate = c->elapsed > 0 ? finished / c->elapsed : 0;
    char eta[32];
    fmt_eta(eta, sizeof eta, rate > 0 ? c->pending / rate : -1);
    if (!final && !u->tty && c->elapsed - u->last_plain < PLAIN_PROGRESS_PERIOD)
        return;
    u->last_plain = c->elapsed;
    if (u->tty)
        fputs("\r\033[K", stderr);
    if (final) {
        u->shown = 0;
        fprintf(stderr, "%s: sweep: %s: %d ok, %d failed, %d skipped, %d not run%s; %.1f s, %.2f runs/s; results in %s\n",
                cli_progname, u->sweep, c->done, c->failed, c->skipped, c->pending, c->interrupted ? " (interrupted)" : "",
                c->elapsed, rate, u->db);
        return;
    }
    fprintf(stderr, "%s: sweep: %d/%d runs  done %d  failed %d  skipped %d  %.2f runs/s  left %s%s", cli_progname,
            finished + c->skipped, c->selected, c->done, c->failed, c->skipped, rate, eta, u->tty ? "" : "\n");
    u->shown = u->tty;
    fflush(stderr);
}

/* "K/M" with 0 <= K < M: 0, or -1. */
static int parse_slice(const char *v, int *k, int *m)
{
    const char *slash = strchr(v, '/');
    char head[24];
    uint64_t a, b;
    if (!slash || (size_t)(slash - v) >= sizeof head)
        return -1;
    memcpy(head, v, (size_t)(slash - v));
    head[slash - v] = '\0';
    if (cli_parse_u64(head, &a) || cli_parse_u64(slash + 1, &b) || b < 1 || b > INT32_MAX || a >= b)
        return -1;
    *k = (int)a;
    *m = (int)b;
    return 0;
}


/* Load sweep file `file` for subcommand cmd: the sweep, or NULL after one
 * error line (no file given, or ft_sweep_load's message). */
static ft_sweep *load_sweep(const char *cmd, const char *file)
{
    if (!file) {
        cli_error("sweep %s: needs SWEEP.cfg (try 'fusetile sweep %s --help')", cmd, cmd);
        return NULL;
    }
    ft_status st;
    ft_sweep *sw;
    if (cli_input(file, "sweep") != EXIT_OK)
        return NULL;
    if (ft_sweep_load(file, &sw, &st) != FT_OK) {
        cli_error("%s", st.msg);
        return NULL;
    }
    return sw;
}

static int sweep_run(int argc, char **argv)
{
    cli_opts o;
    const char *arg, *file = NULL, *db = NULL;
    int is_opt;
    run_ui ui;
    memset(&ui, 0, sizeof ui);
    ft_sweep_exec_opts eo;
    ft_sweep_exec_opts_init(&eo);
    cli_opt_init(&o, argc, argv);
    o.cmd = "sweep run";
    while ((arg = cli_opt_next(&o, &is_opt))) {
        const char *v;
        if (!is_opt) {
            if (file) {
                cli_error("sweep run: unexpected argument '%s' (usage: fusetile sweep run SWEEP [options])", arg);
                return EXIT_USAGE;
            }
            file = arg;
        } else if (cli_opt_is(&o, arg, "--help") || cli_opt_is(&o, arg, "-h")) {
            fputs(run_help, stdout);
            return EXIT_OK;
        } else if (cli_opt_is(&o, arg, "--quiet") || cli_opt_is(&o, arg, "-q")) {
            ui.quiet = 1;
        } else if (cli_opt_is(&o, arg, "--db")) {
            if (!(db = cli_opt_file(&o, "--db")))
                return EXIT_USAGE;
        } else if (cli_opt_is(&o, arg, "--jobs") || cli_opt_is(&o, arg, "-j")) {
            uint64_t n;
            if (!(v = cli_opt_value(&o, "--jobs")))
                return EXIT_USAGE;
            if (cli_parse_u64(v, &n) || n < 1 || n > FT_SWEEP_MAX_JOBS) {
                cli_error("sweep run: --jobs is '%s', must be an integer from 1 to %d", v, FT_SWEEP_MAX_JOBS);
                return EXIT_USAGE;
            }
            eo.jobs = (int)n;
        } else if (cli_opt_is(&o, arg, "--slice")) {
            if (!(v = cli_opt_value(&o, "--slice")))
                return EXIT_USAGE;
            if (parse_slice(v, &eo.slice_k, &eo.slice_m)) {
                cli_error("sweep run: --slice is '%s', must be K/M with integers 0 <= K < M", v);
                return EXIT_USAGE;
            }
        } else {
            cli_error("sweep run: unknown option '%s' (try 'fusetile sweep run --help')", arg);
            return EXIT_USAGE;
        }
    }
    ft_sweep *sw = load_sweep("run", file);
    if (!sw)
        return EXIT_USAGE;
    char *dbdef = db ? NULL : ft_sweep_default_db(file);
    if (!db && !dbdef) {
        cli_error("sweep run: out of memory");
        ft_sweep_free(sw);
        return EXIT_USAGE;
    }
    ui.sweep = file;
    ui.db = db ? db : dbdef;
    ui.tty = isatty(fileno(stderr));
    eo.on_progress = on_progress;
    eo.ctx = &ui;
    ft_sweep_counts c;
    ft_status st;
    int rc = ft_sweep_execute(sw, ui.db, &eo, &c, &st);
    if (rc != FT_OK) {
        cli_error("sweep run: %s", st.msg);
        rc = EXIT_USAGE;
    } else {
        rc = c.failed || c.interrupted ? EXIT_INVALID : EXIT_OK;
    }
    free(dbdef);
    ft_sweep_free(sw);
    return rc;
}

static int sweep_list(int argc, char **argv)
{
    const char *file = NULL, *arg;
    cli_opts o;
    int is_opt;
    cli_opt_init(&o, argc, argv);
    o.cmd = "sweep list";
    while ((arg = cli_opt_next(&o, &is_opt))) {
        if (is_opt && (cli_opt_is(&o, arg, "--help") || cli_opt_is(&o, arg, "-h"))) {
            fputs(list_help, stdout);
            return EXIT_OK;
        }
        if (is_opt || file) {
            cli_error("sweep list: unexpected %s '%s' (usage: fusetile sweep list SWEEP)", is_opt ? "option" : "argument", arg);
            return EXIT_USAGE;
        }
        file = arg;
    }
    ft_sweep *sw = load_sweep("list", file);
    if (!sw)
        return EXIT_USAGE;
    for (int i = 0; i < sw->nruns; i++)
        printf("%d\t%s\n", sw->runs[i].idx, sw->runs[i].key);
    ft_sweep_free(sw);
    return EXIT_OK; /* a failed standard output: cli_finish_stdout */
}

int cmd_sweep(int argc, char **argv)
{
    if (argc < 2) {
        cli_error("sweep: needs a command: run, list, plot, submit, status or gather (try 'fusetile sweep --help')");
        return EXIT_USAGE;
    }
    const char *sub = argv[1];
    if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0 || strcmp(sub, "help") == 0) {
        fputs(sweep_help, stdout);
        return EXIT_OK;
    }
    if (strcmp(sub, "run") == 0)
        return sweep_run(argc - 1, argv + 1);
    if (strcmp(sub, "list") == 0)
        return sweep_list(argc - 1, argv + 1);
    if (strcmp(sub, "plot") == 0)
        return cli_sweep_plot(argc - 1, argv + 1);
    if (strcmp(sub, "submit") == 0)
        return cli_sweep_submit(argc - 1, argv + 1);
    if (strcmp(sub, "status") == 0)
        return cli_sweep_status(argc - 1, argv + 1);
    if (strcmp(sub, "gather") == 0)
        return cli_sweep_gather(argc - 1, argv + 1);
    cli_error("sweep: unknown command '%s': run, list, plot, submit, status or gather (try 'fusetile sweep --help')", sub);
    return EXIT_USAGE;
}
