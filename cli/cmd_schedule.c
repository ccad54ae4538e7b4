/* cmd_schedule.c - `fusetile schedule`: run the scheduler on a problem, writing each better schedule as it is found. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char schedule_help[] =
    "usage: fusetile schedule PROBLEM.json [-o SCHEDULE.json] [--compute-model native|op]\n"
    "                         [--time-limit SECONDS] [--seed N] [--threads N] [--quiet] [--verbose]\n"
    "                         [--target TARGET.cfg [--keep-costs] [--no-target-timing]]\n"
    "                         [--strategy NAME] [--start-from LIST] [--patterns FILE]...\n"
    "                         [--partition auto|fit|layers|metis] [--parts N] [--csv FILE]\n"
    "                         [--objective latency|energy|edp]\n"
    "\n"
    "Search for the lowest-latency schedule of PROBLEM under the cost model\n"
    "(SPEC.md): fusion, recomputation, granularities, traversal orders,\n"
    "retention and subgraph order, every candidate evaluated exactly.  Or\n"
    "group the ops by one of the classic strategies instead (--strategy),\n"
    "each group then at its best granularity and traversal with optimal\n"
    "retention (docs/STRATEGIES.md).\n"
    "\n"
    "  -o, --output FILE     write the schedule to FILE (default: stdout); each\n"
    "                        better schedule found replaces it atomically, so\n"
    "                        FILE is a valid schedule whenever it exists\n"
    "  --compute-model M     native (default: MatMul depth in native-k units) or\n"
    "                        op (a full reduction costs the op's base cost)\n"
    "  --objective OBJ       what the search minimises: latency (default), energy\n"
    "                        (joules, the target's `energy` group: static power\n"
    "                        x latency included) or edp (energy-delay product,\n"
    "                        J s: the latency-optimal schedule in half the time,\n"
    "                        then a search of the product linearised around it;\n"
    "                        the lower product is kept).  energy and edp need\n"
    "                        --target with an `energy` group (gpu-h100, kpu,\n"
    "                        tpu-*; exit 2 otherwise).  Given, a summary line\n"
    "                        says the objective, its value, bound and ratio\n"
    "  --time-limit SECONDS  wall time of the search (default: the contest's\n"
    "                        limit for the problem's size, 2 s up to 5 ops ...\n"
    "                        120 s above 110 ops)\n"
    "  --seed N              seed of the search (default 1); the same seed and\n"
    "                        thread count give the same schedule when the time\n"
    "                        limit does not cut the search (problems of up to 7\n"
    "                        ops, or a search that reaches the lower bound);\n"
    "                        larger ones search until the time limit\n"
    "  --threads N           search threads, 0 to 256 (default 0: one per core, as\n"
    "                        Python's threads=0)\n"
    "  --csv FILE            write the final schedule's per-subgraph evaluation as\n"
    "                        CSV to FILE ('-': standard output, with -o): the\n"
    "                        columns of `evaluate --csv` and Python's to_rows(),\n"
    "                        units in the header, whole labels\n"
    "  --target FILE         schedule for the machine of FILE, a target file or a\n"
    "                        shipped target's name (kpu, gpu-h100; docs/TARGETS.md):\n"
    "                        its capacity, bandwidth and native granularity\n"
    "                        replace the problem's, base costs are derived from\n"
    "                        its throughput, candidates are scored with its\n"
    "                        timing terms (targets/README.md) and one cost unit\n"
    "                        is one cycle; the contest target\n"
    "                        (targets/contest.cfg) changes nothing\n"
    "  --keep-costs          with --target: keep the problem file's base costs\n"
    "  --no-target-timing    with --target: score candidates without the target's\n"
    "                        timing terms (transfer latency, write bandwidth,\n"
    "                        separate channels, launch overhead, double\n"
    "                        buffering: SPEC's roofline instead); capacity,\n"
    "                        bandwidth, granularity and costs still come from\n"
    "                        the target.  For comparisons: evaluate the result\n"
    "                        with --target to see what the terms are worth\n"
    "  --strategy NAME       search (default): fusetile's search; patterns:\n"
    "                        pattern-library tiling (patterns/*.patterns);\n"
    "                        rules: rule-based fusion (Conv+BN+ReLU, QKV, ...)\n"
    "                        then groups that fit the fast memory; partition:\n"
    "                        rule-based fusion then a residual block or layer\n"
    "                        per group, or METIS parts; supertile: super\n"
    "                        tiling (tile-and-fuse from each op that does not\n"
    "                        fit).  A strategy runs once, its groups costed\n"
    "                        within --time-limit (exit 2 when they cannot be:\n"
    "                        give it more time), and its groups are listed on\n"
    "                        stderr by the model's source layer names\n"
    "  --start-from LIST     search: the strategies whose groupings it also\n"
    "                        starts from, comma-separated, 'all' (default) or\n"
    "                        'none'; with all, its result is never worse than\n"
    "                        theirs when the time limit lets it cost them\n"
    "  --patterns FILE       patterns: a pattern library (patterns/README.md),\n"
    "                        repeatable (at most 16), instead of the bundled\n"
    "                        cnn, transformer and contest libraries\n"
    "  --partition METHOD    partition: fit (fused groups merged while their\n"
    "                        working set fits the fast memory), layers (a\n"
    "                        residual block or transformer layer per group),\n"
    "                        metis (edge-cut minimisation into --parts parts)\n"
    "                        or auto (default: metis with --parts, else\n"
    "                        layers when the model has them, else metis)\n"
    "  --parts N             partition: METIS parts (a target's SMs, tiles or\n"
    "                        cores), a positive integer; default: one per\n"
    "                        group of the fit method\n"
    "  -q, --quiet           print nothing on stderr but errors (no progress)\n"
    "  -v, --verbose         also print the search's own progress lines, and\n"
    "                        on each progress line the share of configurations\n"
    "                        scored in closed form\n"
    "  -h, --help            show this help\n"
    "\n"
    "On stderr: with --target, a line saying which values came from it; a\n"
    "line per better schedule (elapsed seconds, total, ratio to\n"
    "the lower bound); progress at least once a second (elapsed and limit,\n"
    "best total, ratio to the best lower bound, evaluations per second, the\n"
    "pass running): one line kept up to date on a terminal, a plain line a\n"
    "second otherwise; then a summary (compute model, total, lower bound,\n"
    "ratio, subgraphs, wall time, when the last improvement was found, the\n"
    "capacity bound and the ratio to it, the strategy, when the first valid\n"
    "schedule came and whether that was within its share of the limit,\n"
    "FT_FIRST_VALID_SHARE: 10%), and with a grouping\n"
    "strategy a line per subgraph: its group's label and source layers.\n"
    "\n"
    "Exit status: 0 written, 1 no valid schedule exists (an op whose smallest\n"
    "tile does not fit in fast memory), 2 bad input or usage.\n";

static const char mlsys_help[] =
    "usage: mlsys INPUT.json OUTPUT.json\n"
    "       fusetile mlsys INPUT.json OUTPUT.json\n"
    "\n"
    "The MLSys 2026 contest entry: schedule the problem INPUT.json under the\n"
    "native compute model within the contest's time limit for its size (2 s\n"
    "up to 5 ops, 5 s up to 20, 15 s up to 40, 30 s up to 70, 60 s up to 110,\n"
    "120 s above), less a safety margin (5%, at least 0.15 s) so that the\n"
    "final write lands in time, and write the schedule to OUTPUT.json.  The\n"
    "first valid schedule found is written at once and each better one\n"
    "replaces it atomically: OUTPUT.json is valid whenever it exists.  Prints\n"
    "nothing but errors.\n"
    "\n"
    "Exit status: 0 written, 1 no valid schedule exists, 2 bad input or usage.\n";

double cli_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

double cli_contest_margin(double limit)
{
    double m = 0.05 * limit;
    return m > 0.15 ? m : 0.15;
}

/* "CMD: " before a message, or "" when the program itself is named CMD
 * (mlsys run as `mlsys`), so that messages read "mlsys: ..." once. */
static const char *pfx(const char *cmd)
{
    static char buf[64];
    if (strcmp(cmd, cli_progname) == 0)
        return "";
    snprintf(buf, sizeof buf, "%s: ", cmd);
    return buf;
}

/* State of a run, shared with the on_improve callback. */
struct run {
    const cli_sched_job *job;
    double lower_bound;
    long improvements;
    double write_seconds;     /* spent in ft_schedule_write */
    int write_failed;         /* a progress write failed (warned once) */
    double last_improvement;  /* seconds from the start */
    double first_valid;       /* seconds from the start to the first valid schedule (-1: none yet) */
    double limit;             /* the user's time limit, for the whole command */
    double last_progress;     /* when the last plain progress line was printed */
    int tty;                  /* stderr is a terminal: one progress line, redrawn */
    int progress_shown;       /* a terminal progress line is on screen */
};

/* Erase the terminal progress line, if one is shown. */
static void clear_progress(struct run *r)
{
    if (r->progress_shown) {
        fputs("\r\033[K", stderr);
        r->progress_shown = 0;
    }
}

static void on_progress(void *ctx, const ft_search_progress *pr)
{
    struct run *r = ctx;
    const cli_sched_job *job = r->job;
    if (job->quiet || (!r->tty && pr->elapsed - r->last_progress < 0.9))
        return;
    r->last_progress = pr->elapsed;
    char best[FT_NUMBUF], ratio[32];
    if (pr->best < HUGE_VAL) {
        snprintf(best, sizeof best, "%.15g", pr->best);
        snprintf(ratio, sizeof ratio, "%.4f", pr->bound > 0 ? pr->best / pr->bound : 0.0);
    } else {
        strcpy(best, "-");
        strcpy(ratio, "-");
    }
    if (r->tty)
        fputs("\r\033[K", stderr);
    /* --verbose: the share of scores in closed form (docs/SCHEDULER.md) */
    char share[48] = "";
    if (job->verbose && pr->closed + pr->fallbacks > 0)
        snprintf(share, sizeof share, "  closed form %.1f%%", 100.0 * (double)pr->closed / (double)(pr->closed + pr->fallbacks));
    fprintf(stderr, "%s: %sprogress %.1f/%g s  best %s  ratio %s  %.0f evaluations/s%s  pass %s  %d thread%s%s", cli_progname,
            pfx(job->cmd), cli_now() - job->start, r->limit, best, ratio, pr->evals_per_s, share, pr->pass, pr->threads, pr->threads == 1 ? "" : "s",
            r->tty ? "" : "\n");
    r->progress_shown = r->tty;
    fflush(stderr);
}

static void on_improve(void *ctx, const ft_schedule *s, const double *latencies, double total)
{
    struct run *r = ctx;
    const cli_sched_job *job = r->job;
    r->improvements++;
    if (r->first_valid < 0)
        r->first_valid = cli_now() - job->start;
    if (job->output && !r->write_failed) {
        ft_status st;
        double t0 = cli_now();
        if (ft_schedule_write(s, latencies, job->output, &st) != FT_OK) {
            r->write_failed = 1;
            if (!job->quiet)
                cli_warn("%s%s (the final schedule is written at the end)", pfx(job->cmd), st.msg);
        }
        r->write_seconds += cli_now() - t0;
    }
    r->last_improvement = cli_now() - job->start;
    if (!job->quiet) {
        char a[FT_NUMBUF];
        clear_progress(r);
        snprintf(a, sizeof a, "%.15g", total);
        fprintf(stderr, "%s: %s%7.2f s  total %s  ratio %.4f\n", cli_progname, pfx(job->cmd), cli_now() - job->start, a,
                r->lower_bound > 0 ? total / r->lower_bound : 0.0);
    }
}

/* The search's own progress lines (--verbose), as they come. */
static void on_message(void *ctx, const char *line)
{
    (void)ctx;
    fprintf(stderr, "%s\n", line);
}

/* Fail early, before a long search, when the output cannot be written:
 * the output rules (cli_check_output: not a directory, FIFO, socket, nor
 * an input), and its directory must exist and be writable. */
static int check_output(const cli_sched_job *job)
{
    if (cli_check_output(strcmp(job->cmd, cli_progname) ? job->cmd : NULL, job->output, 0) != EXIT_OK)
        return -1;
    size_t n = strlen(job->output);
    char *dir = malloc(n + 2);
    if (!dir) {
        cli_error("%sout of memory", pfx(job->cmd));
        return -1;
    }
    memcpy(dir, job->output, n + 1);
    char *slash = strrchr(dir, '/');
    if (!slash)
        strcpy(dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    int ok = access(dir, W_OK | X_OK) == 0;
    int e = errno;
    if (!ok)
        cli_error("%s%s: cannot write: %s", pfx(job->cmd), job->output, strerror(e));
    free(dir);
    return ok ? 0 : -1;
}

/* Final schedule to job->output (atomically) or stdout; 0 or -1 after a
 * message. */
static int write_final(const cli_sched_job *job, const ft_schedule *s, const ft_eval *ev)
{
    double *lat = malloc(((size_t)ev->nsubgraphs + 1) * sizeof *lat);
    if (!lat) {
        cli_error("%sout of memory", pfx(job->cmd));
        return -1;
    }
    for (int i = 0; i < ev->nsubgraphs; i++)
        lat[i] = ev->sg[i].latency;
    int rc = 0;
    if (job->output) {
        ft_status st;
        if (ft_schedule_write(s, lat, job->output, &st) != FT_OK) {
            cli_error("%s%s", pfx(job->cmd), st.msg);
            rc = -1;
        }
    } else {
        char *text = ft_schedule_to_json(s, lat);
        if (!text) {
            cli_error("%sout of memory", pfx(job->cmd));
            rc = -1;
        } else {
            fputs(text, stdout);
            if (text[0] && text[strlen(text) - 1] != '\n')
                fputc('\n', stdout);
            if (fflush(stdout) != 0 || ferror(stdout)) {
                cli_stdout_failed(errno);
                rc = -1; /* reported once, by cli_finish_stdout */
            }
            free(text);
        }
    }
    free(lat);
    return rc;
}

/* The summary's objective line: the objective, its value, its lower bound
 * (ft_objective_bound) and their ratio, then the schedule's latency and
 * energy. */
static void objective_line(const cli_sched_job *job, const ft_problem *p, const ft_eval *ev)
{
    static const char *const unit[FT_OBJECTIVE_COUNT] = {"", " J", " J s"};
    double v = ft_objective_value(p, job->objective, ev), b = ft_objective_bound(p, ev->model, job->objective);
    fprintf(stderr, "%s: %sobjective %s: %.15g%s, bound %.15g%s, ratio %.4f; latency %.15g, energy %.6g J\n", cli_progname,
            pfx(job->cmd), ft_objective_name(job->objective), v, unit[job->objective], b, unit[job->objective], b > 0 ? v / b : 0.0,
            ev->total, ev->energy);
}

int cli_schedule_run(const cli_sched_job *job)
{
    ft_status st;
    ft_problem *p = NULL;
    ft_target *t = NULL;
    for (int i = 0; i < job->npatterns; i++)
        if (cli_input(job->patterns[i], "patterns") != EXIT_OK)
            return EXIT_USAGE;
    if (cli_load_problem(strcmp(job->cmd, "mlsys") == 0 ? "mlsys INPUT.json OUTPUT.json" : "fusetile schedule PROBLEM",
                         job->problem, job->target, job->keep_costs, &p, &t))
        return EXIT_USAGE;
    if ((job->output && check_output(job)) ||
        (job->csv && strcmp(job->csv, "-") && cli_check_output(job->cmd, job->csv, 0) != EXIT_OK)) {
        ft_problem_free(p);
        ft_target_free(t);
        return EXIT_USAGE;
    }
    if (job->csv && !strcmp(job->csv, "-") && !job->output) {
        cli_error("%s--csv - and the schedule both go to standard output: give -o FILE or a --csv file", pfx(job->cmd));
        ft_problem_free(p);
        ft_target_free(t);
        return EXIT_USAGE;
    }
    const double clock_hz = cli_clock_hz(t); /* for --csv's seconds */
    if (!job->contest) /* the contest entry prints nothing but errors */
        cli_warn_imported(job->problem, p, job->target, t);
    if (t && !job->quiet) {
        char *line = cli_target_summary(t, p, job->keep_costs);
        fprintf(stderr, "%s: %starget %s\n", cli_progname, pfx(job->cmd), line ? line : "(out of memory)");
        free(line);
        if (job->no_timing)
            fprintf(stderr, "%s: %sthe target's timing terms are ignored while scoring (--no-target-timing)\n", cli_progname,
                    pfx(job->cmd));
    }
    if (job->objective != FT_OBJECTIVE_LATENCY && !p->energy.on) {
        if (job->target)
            cli_error("%s--objective %s: the target %s has no `energy` group (the energy model; targets with one: gpu-h100, kpu, "
                      "tpu-*, docs/DEVICE.md \"Energy\")",
                      pfx(job->cmd), ft_objective_name(job->objective), t && t->path ? t->path : job->target);
        else
            cli_error("%s--objective %s needs --target with an `energy` group (the problem file has no energy model; e.g. --target "
                      "gpu-h100)",
                      pfx(job->cmd), ft_objective_name(job->objective));
        ft_problem_free(p);
        ft_target_free(t);
        return EXIT_USAGE;
    }
    ft_target_free(t);   /* everything the search uses is now in p */
    if (job->no_timing)
        memset(&p->timing, 0, sizeof p->timing);

    struct run r;
    memset(&r, 0, sizeof r);
    r.job = job;
    r.first_valid = -1;
    r.lower_bound = ft_lower_bound(p, job->model, NULL, NULL);

    ft_search_opts o;
    ft_search_opts_init(&o);
    o.model = job->model;
    o.seed = job->seed;
    o.verbose = job->verbose && !job->quiet;
    o.threads = job->threads;
    o.strategy = job->strategy;
    o.start_from = job->start_from;
    o.pattern_files = job->npatterns ? job->patterns : NULL;
    o.npattern_files = job->npatterns;
    o.patterns_dir = getenv("FT_PATTERNS_DIR"); /* the library reads no environment */
    o.parts = job->parts;
    o.partition = job->partition;
    o.objective = job->objective;
    o.on_improve = on_improve;
    o.on_progress = on_progress;
    o.on_message = on_message;
    o.ctx = &r;
    r.tty = isatty(fileno(stderr));
    double limit = job->time_limit > 0 ? job->time_limit : ft_contest_time_limit(p->nops);
    o.time_limit = limit;
    if (job->contest) {
        /* What is left of the limit once the margin and the time already
         * spent (loading) are taken off; never less than a token amount, so
         * that the search still returns its first valid schedule. */
        o.time_limit = limit - cli_contest_margin(limit) - (cli_now() - job->start);
        if (o.time_limit < 0.01)
            o.time_limit = 0.01;
    } else {
        /* the whole command within the limit: loading, the target and the
         * bounds came out of it already (the search keeps a reserve for its
         * final evaluation and the write) */
        o.time_limit = limit - (cli_now() - job->start);
        if (o.time_limit < 0.001)
            o.time_limit = 0.001;
    }
    r.limit = limit;

    ft_schedule *s = NULL;
    ft_eval ev;
    int rc = ft_search(p, &o, &s, &ev, &st);
    clear_progress(&r);
    if (r.first_valid < 0) /* none was published: the final one is the first */
        r.first_valid = cli_now() - job->start;
    if (rc == FT_EINVALID) {
        cli_error("%s%s: no valid schedule: %s", pfx(job->cmd), job->problem, st.msg);
        ft_problem_free(p);
        return EXIT_INVALID;
    }
    if (rc != FT_OK) {
        cli_error("%s%s: %s", pfx(job->cmd), job->problem, st.msg[0] ? st.msg : "search failed");
        ft_problem_free(p);
        return EXIT_USAGE;
    }
    rc = write_final(job, s, &ev) ? EXIT_USAGE : EXIT_OK;
    if (rc == EXIT_OK && job->csv)
        rc = cli_csv_eval(job->cmd, job->csv, p, s, &ev, clock_hz);
    if (rc == EXIT_OK && !job->quiet) {
        char a[FT_NUMBUF], b[FT_NUMBUF], c[FT_NUMBUF], d[FT_NUMBUF];
        double cb = ev.capacity_bound; /* ft_lower_bound_capacity, from the search's figures */
        snprintf(a, sizeof a, "%.15g", ev.total);
        snprintf(b, sizeof b, "%.15g", ev.lower_bound);
        snprintf(c, sizeof c, "%g", limit);
        snprintf(d, sizeof d, "%.15g", cb);
        fprintf(stderr,
                "%s: %s%s: compute model %s, total %s, lower bound %s, ratio %.4f, %d subgraphs, "
                "wall time %.2f s (limit %s s), %ld improvements, the last at %.2f s",
                cli_progname, pfx(job->cmd), job->problem, ft_compute_model_name(ev.model), a, b,
                ev.lower_bound > 0 ? ev.total / ev.lower_bound : 0.0, s->nsubgraphs, cli_now() - job->start, c,
                r.improvements, r.last_improvement);
        if (job->output)
            fprintf(stderr, " (written in %.3f s)", r.write_seconds);
        /* last, so that the fields before keep their places (tests and
         * scripts parse them) */
        fprintf(stderr, ", capacity bound %s, ratio to capacity bound %.4f, strategy %s", d, cb > 0 ? ev.total / cb : 0.0,
                ft_strategy_name(job->strategy));
        /* the first valid schedule against its share of the limit
         * (FT_FIRST_VALID_SHARE, docs/LIMITS.md) */
        double due = FT_FIRST_VALID_SHARE * limit;
        fprintf(stderr, ", first valid at %.3f s (due within %.3g s, %g%% of the limit%s)", r.first_valid, due,
                100 * FT_FIRST_VALID_SHARE, r.first_valid > due ? ": missed" : "");
        fputc('\n', stderr);
        /* the gap's evidence within what the limit leaves, at most its
         * share (FT_GAP_EVIDENCE_SHARE): half of what is left, so that the
         * command still ends within the limit */
        ft_gap g;
        double left = 0.5 * (limit - (cli_now() - job->start)), share = FT_GAP_EVIDENCE_SHARE * limit;
        if (cli_gap(p, s, &ev, left < share ? left : share, &g) == 0) {
            /* the evidence is the latency's; under another objective the
             * line says so (the objective's own bound is the line below) */
            fprintf(stderr, "%s: %s%s", cli_progname, pfx(job->cmd),
                    job->objective != FT_OBJECTIVE_LATENCY ? "latency " : "");
            cli_gap_line(stderr, &g);
        }
        if (job->objective_set || job->objective != FT_OBJECTIVE_LATENCY)
            objective_line(job, p, &ev);
        for (int i = 0; i < s->nsubgraphs && job->strategy != FT_STRATEGY_SEARCH; i++)
            fprintf(stderr, "%s: %ssubgraph %d: %s\n", cli_progname, pfx(job->cmd), i, s->sg[i].label ? s->sg[i].label : "-");
    }
    ft_eval_free(&ev);
    ft_schedule_free(s);
    ft_problem_free(p);
    return rc;
}

/* The strategy options (--strategy, --start-from, --patterns, --partition,
 * --parts) of
 * `fusetile schedule`: 1 taken, 0 not one of them, -1 after a message. */
static int strategy_option(cli_opts *o, const char *arg, cli_sched_job *job)
{
    const char *v;
    ft_status st;
    if (cli_opt_is(o, arg, "--strategy")) {
        if (!(v = cli_opt_value(o, "--strategy")))
            return -1;
        if (ft_strategy_parse(v, &job->strategy, &st) != FT_OK) {
            cli_error("schedule: --strategy: %s", st.msg);
            return -1;
        }
    } else if (cli_opt_is(o, arg, "--start-from")) {
        if (!(v = cli_opt_value(o, "--start-from")))
            return -1;
        if (ft_strategy_parse_starts(v, &job->start_from, &st) != FT_OK) {
            cli_error("schedule: --%s", st.msg);
            return -1;
        }
    } else if (cli_opt_is(o, arg, "--patterns")) {
        if (!(v = cli_opt_file(o, "--patterns")))
            return -1;
        if (job->npatterns >= CLI_MAX_PATTERN_FILES) {
            cli_error("schedule: more than %d --patterns files", CLI_MAX_PATTERN_FILES);
            return -1;
        }
        job->patterns[job->npatterns++] = v;
    } else if (cli_opt_is(o, arg, "--partition")) {
        if (!(v = cli_opt_value(o, "--partition")))
            return -1;
        if (ft_partition_method_parse(v, &job->partition, &st) != FT_OK) {
            cli_error("schedule: --partition: %s", st.msg);
            return -1;
        }
    } else if (cli_opt_is(o, arg, "--parts")) {
        uint64_t n;
        if (!(v = cli_opt_value(o, "--parts")))
            return -1;
        if (cli_parse_u64(v, &n) || n < 1 || n > INT32_MAX) {
            cli_error("schedule: --parts is '%s', must be a positive integer", v);
            return -1;
        }
        job->parts = (int)n;
    } else {
        return 0;
    }
    return 1;
}

int cmd_schedule(int argc, char **argv)
{
    cli_opts o;
    const char *arg;
    int r, is_opt;
    cli_sched_job job;
    memset(&job, 0, sizeof job);
    job.start = cli_now();
    job.cmd = "schedule";
    job.model = FT_COMPUTE_NATIVE;
    job.seed = 1;
    job.strategy = FT_STRATEGY_SEARCH;
    job.start_from = FT_STRATEGY_ALL_STARTS;
    cli_opt_init(&o, argc, argv);
    while ((arg = cli_opt_next(&o, &is_opt))) {
        if (!is_opt) {
            if (job.problem) {
                cli_error("schedule: unexpected argument '%s' (usage: fusetile schedule PROBLEM [options])", arg);
                return EXIT_USAGE;
            }
            job.problem = arg;
        } else if (cli_opt_is(&o, arg, "--help") || cli_opt_is(&o, arg, "-h")) {
            fputs(schedule_help, stdout);
            return EXIT_OK;
        } else if ((r = cli_opt_target(&o, arg, &job.target, &job.keep_costs)) != 0 ||
                   (r = cli_opt_model(&o, arg, &job.model)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
        } else if (cli_opt_is(&o, arg, "--no-target-timing")) {
            job.no_timing = 1;
        } else if (cli_opt_is(&o, arg, "--quiet") || cli_opt_is(&o, arg, "-q")) {
            job.quiet = 1;
        } else if (cli_opt_is(&o, arg, "--verbose") || cli_opt_is(&o, arg, "-v")) {
            job.verbose = 1;
        } else if (cli_opt_is(&o, arg, "--output") || cli_opt_is(&o, arg, "-o")) {
            if (!(job.output = cli_opt_file(&o, arg[1] == '-' ? "--output" : "-o")))
                return EXIT_USAGE;
            job.output = cli_out_or_stdout(job.output);
        } else if ((r = cli_opt_search(&o, arg, "schedule", &job.time_limit, &job.threads, &job.seed)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
        } else if (cli_opt_is(&o, arg, "--objective")) {
            const char *v = cli_opt_value(&o, "--objective");
            if (!v)
                return EXIT_USAGE;
            if (ft_objective_parse(v, &job.objective)) {
                cli_error("schedule: --objective is '%s', must be latency, energy or edp", v);
                return EXIT_USAGE;
            }
            job.objective_set = 1;
        } else if (cli_opt_is(&o, arg, "--csv")) {
            if (!(job.csv = cli_opt_file(&o, "--csv")))
                return EXIT_USAGE;
        } else if ((r = strategy_option(&o, arg, &job)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
        } else {
            cli_error("schedule: unknown option '%s' (try 'fusetile schedule --help')", arg);
            return EXIT_USAGE;
        }
    }
    if (!job.problem) {
        cli_error("schedule: needs PROBLEM.json (try 'fusetile schedule --help')");
        return EXIT_USAGE;
    }
    if (job.keep_costs && !job.target) {
        cli_error("schedule: --keep-costs needs --target");
        return EXIT_USAGE;
    }
    if (job.no_timing && !job.target) {
        cli_error("schedule: --no-target-timing needs --target");
        return EXIT_USAGE;
    }
    return cli_schedule_run(&job);
}

int cmd_mlsys(int argc, char **argv)
{
    cli_opts o;
    const char *arg, *paths[2] = {NULL, NULL};
    int is_opt, npos = 0;
    cli_sched_job job;
    memset(&job, 0, sizeof job);
    job.start = cli_now();
    job.cmd = "mlsys";
    cli_opt_init(&o, argc, argv);
    while ((arg = cli_opt_next(&o, &is_opt))) {
        if (!is_opt) {
            if (npos >= 2) {
                cli_error("%sunexpected argument '%s' (usage: mlsys INPUT.json OUTPUT.json)", pfx("mlsys"), arg);
                return EXIT_USAGE;
            }
            paths[npos++] = arg;
        } else if (cli_opt_is(&o, arg, "--help") || cli_opt_is(&o, arg, "-h")) {
            fputs(mlsys_help, stdout);
            return EXIT_OK;
        } else {
            cli_error("%sunknown option '%s' (usage: mlsys INPUT.json OUTPUT.json)", pfx("mlsys"), arg);
            return EXIT_USAGE;
        }
    }
    if (npos < 2) {
        cli_error("%sneeds INPUT.json and OUTPUT.json (usage: mlsys INPUT.json OUTPUT.json)", pfx("mlsys"));
        return EXIT_USAGE;
    }
    job.problem = paths[0];
    job.output = paths[1];
    if (!*job.output) {
        cli_error("%sOUTPUT.json is an empty file name", pfx("mlsys"));
        return EXIT_USAGE;
    }
    job.model = FT_COMPUTE_NATIVE;
    job.time_limit = 0;   /* the contest limit of the problem */
    job.contest = 1;
    job.seed = 1;
    job.quiet = 1;
    return cli_schedule_run(&job);
}
