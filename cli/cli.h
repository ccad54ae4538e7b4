/* cli.h - shared pieces of the fusetile command-line program. */
#ifndef FT_CLI_H
#define FT_CLI_H

#include <stdio.h>
#include <time.h>

#include "fusetile/fusetile.h"
#include "fusetile/sim.h"
#include "fusetile/measured.h"
#include "fusetile/target.h"

/* Exit statuses (DESIGN.md): 0 success, 1 invalid schedule or failed check,
 * 2 bad input or usage. */
enum { EXIT_OK = 0, EXIT_INVALID = 1, EXIT_USAGE = 2 };

/* One subcommand: run(argc, argv) gets argv[0] = the command name. */
typedef struct cli_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *usage;   /* one-line synopsis after "fusetile " */
} cli_command;

/* Name that prefixes messages: "fusetile", or "mlsys" when the program
 * runs as the contest entry (main sets it from argv[0]). */
extern const char *cli_progname;

/* The program's argv[0] as main received it (NULL if there was none); the
 * shell gives it to Tcl_FindExecutable. */
extern const char *cli_argv0;

/* Print "PROGNAME: MESSAGE" on stderr (PROGNAME is cli_progname). */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print "PROGNAME: warning: MESSAGE" on stderr. */
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The output rules (include/fusetile/io.h, docs/OUTPUTS.md) on the command
 * line (outputs.c). */

/* Protect an input file the command reads (role: "problem", "schedule",
 * "target", ...) from its outputs: an output that is the same file, under
 * any name, is then refused.  EXIT_OK, or EXIT_USAGE after the message. */
int cli_input(const char *path, const char *role);

/* An output option's value: NULL (standard output) for "-", else v. */
const char *cli_out_or_stdout(const char *v);

/* Check an output path against the rules before a long run
 * (ft_out_check; regular_only for a database): EXIT_OK, or EXIT_USAGE
 * after one message "PROGNAME: CMD: PATH: ...". */
int cli_check_output(const char *cmd, const char *path, int regular_only);

/* Record errno e of a failed write to standard output that a command
 * saw (the first one is kept for cli_finish_stdout's message). */
void cli_stdout_failed(int e);

/* At the end of the program: forget the protected inputs (cli_input),
 * flush and close standard output; a failed
 * write or close anywhere on it ("> /dev/full", a closed pipe) prints
 * "PROGNAME: standard output: REASON" and gives EXIT_USAGE, else rc. */
int cli_finish_stdout(int rc);

/* Remove the temporary files of open outputs on SIGINT, SIGTERM and
 * SIGHUP (those not ignored), then die by the signal. */
void cli_signals(void);

/* Option scanner shared by the subcommands.  cli_opt_next walks argv from
 * index 1: it returns each positional argument with *is_opt = 0, and each
 * option ("--name", "--name=value" or "-x") with *is_opt = 1.  For options
 * taking a value call cli_opt_value, which consumes "=value" or the next
 * argument; NULL (after an error message) when it is missing.  Arguments
 * after "--" are positional. */
typedef struct cli_opts {
    int argc, i;
    char **argv;
    const char *cmd;
    const char *inline_value;
    int only_positional;
} cli_opts;

void cli_opt_init(cli_opts *o, int argc, char **argv);
const char *cli_opt_next(cli_opts *o, int *is_opt);
const char *cli_opt_value(cli_opts *o, const char *opt);

/* Match option text (without "=value") against a name. */
int cli_opt_is(const cli_opts *o, const char *arg, const char *name);

/* A figure for people: 15 significant digits into buf (FT_NUMBUF bytes),
 * enough for 1e-9 checks and free of binary noise (JSON output keeps every
 * digit).  Returns buf. */
const char *cli_fmt15(char *buf, double x);

/* Whether some op of p has a name or a kind (the problem file's op_names
 * or op_kinds): the reports then show subgraph labels and op names. */
int cli_has_names(const ft_problem *p);

/* Widest ops column of a report table, in characters. */
#define CLI_LABEL_COLUMNS 48

/* Width of the ops column of a report table of schedule s: 16 when p has
 * no names (cli_has_names), else the longest subgraph label
 * (ft_subgraph_label), at least 16 and at most CLI_LABEL_COLUMNS. */
int cli_ops_width(const ft_problem *p, const ft_schedule *s);

/* The first columns of a subgraph's row in a report table: its index, its
 * ops in `width` columns (cli_ops_width) and its granularity "WxHxK" (16
 * columns).  The ops are the op list ("0,3,1") when p has no names, else
 * the subgraph's label ("layer1.0.conv1+bn1+relu"); either ends in "..."
 * when it does not fit. */
void cli_print_sg_head(FILE *f, const ft_problem *p, int index, const ft_subgraph *g, int width);

/* When p has names (cli_has_names), write the JSON members
 * `, "label": ..., "op_names": [...], "op_kinds": [...]` of subgraph g
 * (null for an op without one); nothing otherwise. */
void cli_json_sg_names(FILE *f, const ft_problem *p, const ft_subgraph *g);

/* Write s as a JSON string literal (with quotes) to f. */
void cli_json_string(FILE *f, const char *s);

/* Write x as the shortest exact JSON number to f. */
void cli_json_number(FILE *f, double x);

/* Where the gap of schedule s of p (evaluated into *e) lies, with its
 * evidence (ft_gap_report, then ft_gap_alone within `seconds`, INFINITY:
 * whole) into *g: 0, or -1 when out of memory (nothing to print). */
int cli_gap(const ft_problem *p, const ft_schedule *s, const ft_eval *e, double seconds, ft_gap *g);

/* The gap line of a schedule's summary (cli_gap): its ratio to the bound
 * as the product of three parts (the search's configurations, the bound,
 * the grouping), the largest named with its evidence; one line. */
void cli_gap_line(FILE *f, const ft_gap *g);

/* The same as a JSON member: , "gap": {...} */
void cli_gap_json(FILE *f, const ft_gap *g);

/* One scheduling run, shared by `fusetile schedule` and the contest entry
 * `mlsys` (cmd_schedule.c). */
/* Most --patterns files one schedule command takes. */
#define CLI_MAX_PATTERN_FILES 16

typedef struct cli_sched_job {
    const char *cmd;          /* command name for messages: "schedule", "mlsys" */
    const char *problem;      /* problem file */
    const char *target;       /* target file (--target), NULL: none */
    int keep_costs;           /* 1: keep the problem file's base costs (--keep-costs) */
    int no_timing;            /* 1: score without the target's timing terms (--no-target-timing) */
    const char *output;       /* schedule file, written atomically; NULL: stdout */
    ft_compute_model model;
    double time_limit;        /* search wall time in seconds; 0: the contest limit */
    int contest;              /* 1: end the whole run (load, search, final write)
                                 a safety margin before time_limit, counted from
                                 `start` (cli_contest_margin) */
    uint64_t seed;
    int threads;              /* search threads; 0: one per core */
    int quiet;                /* 1: no progress lines and no summary, errors only */
    int verbose;              /* 1: the search's own progress lines too */
    double start;             /* cli_now() when the command started */
    ft_strategy strategy;     /* --strategy (default FT_STRATEGY_SEARCH) */
    unsigned start_from;      /* --start-from: ft_search_opts.start_from */
    const char *patterns[CLI_MAX_PATTERN_FILES]; /* --patterns FILE, in order */
    int npatterns;
    int parts;                /* --parts (0: the strategy's choice) */
    ft_partition_method partition; /* --partition (default FT_PARTITION_AUTO) */
    const char *csv;          /* --csv: the evaluation's table as CSV ("-": stdout); NULL: none */
    ft_objective objective;   /* --objective (default FT_OBJECTIVE_LATENCY) */
    int objective_set;        /* 1: --objective was given (the summary's objective line) */
} cli_sched_job;

/* Load job->problem, run ft_search with an on_improve callback that writes
 * every better schedule to job->output (atomically, so the file is valid
 * whenever it exists) and prints progress lines, then write the final
 * schedule (to stdout when output is NULL) and print the summary on stderr.
 * Returns the exit status: EXIT_OK, EXIT_INVALID (no valid schedule exists)
 * or EXIT_USAGE (unreadable or bad problem, unwritable output, out of
 * memory); every failure has one line on stderr. */
int cli_schedule_run(const cli_sched_job *job);

/* When problem p (loaded from problem_path) was imported for a target
 * (ft_problem_imported_for) and runs without one (t NULL) or with one of
 * another name (t loaded from target_path), say so on stderr, one warning
 * line naming both; nothing otherwise. */
void cli_warn_imported(const char *problem_path, const ft_problem *p, const char *target_path, const ft_target *t);

/* The path of the target `name` (--target's value: a path, or the name of
 * a shipped target, ft_target_find with $FUSETILE_TARGETS as the search
 * path) into out (n bytes): EXIT_OK, or EXIT_USAGE after one line
 * "PROGNAME: --target NAME: no such file or shipped target (looked in ...);
 * shipped targets: ...; give a path or a name". */
int cli_target_find(const char *name, char *out, size_t n);

/* t's clock in Hz when it is a machine target with one (one cost unit is
 * one cycle), else 0 (no target, the contest's). */
double cli_clock_hz(const ft_target *t);

/* --csv of schedule, evaluate and simulate (report_csv.c): the
 * per-subgraph table of evaluation e / replay r (with rep's accounting) to
 * path, "-" for standard output, under the output rules; the columns of
 * the Python binding's to_rows(), units in the header ("latency [cost
 * units]"), labels whole, and with clock_hz > 0 a column in seconds.
 * EXIT_OK, or EXIT_USAGE after one line naming cmd and the file. */
int cli_csv_eval(const char *cmd, const char *path, const ft_problem *p, const ft_schedule *s, const ft_eval *e,
                 double clock_hz);
int cli_csv_sim(const char *cmd, const char *path, const ft_problem *p, const ft_schedule *s, const ft_sim_result *r,
                const ft_sim_effects *rep, double clock_hz);

/* Load the problem file and, when target_name is not NULL, the target
 * (cli_target_find: a file or a shipped target's name), and apply the
 * target to the problem (ft_target_apply; keep_costs keeps the
 * problem's base costs).  On success returns EXIT_OK with the problem in *p
 * and the target (or NULL) in *t, both the caller's to free.  On failure
 * prints one line on stderr ("fusetile: FILE:LINE: ..."), frees what it
 * loaded, leaves both NULL and returns EXIT_USAGE; a problem file that
 * reads as a schedule is named so, with `usage` ("fusetile evaluate
 * PROBLEM SCHEDULE") after it. */
int cli_load_problem(const char *usage, const char *problem_path, const char *target_name,
                     int keep_costs, ft_problem **p, ft_target **t);

/* The value of option `opt` (just matched) as a file name: NULL after an
 * error message when it is missing or empty ("CMD: OPT needs a file
 * name"). */
const char *cli_opt_file(cli_opts *o, const char *opt);

/* The --target FILE and --keep-costs options: when arg (from cli_opt_next)
 * is one of them, consume it into *target or *keep_costs and return 1 (or
 * print the error and return -1); otherwise return 0. */
int cli_opt_target(cli_opts *o, const char *arg, const char **target, int *keep_costs);

/* The search's options --time-limit S, --threads N and --seed N of command
 * cmd ("schedule", "report"), with cli_opt_target's contract: the value
 * into *time_limit (a positive number of seconds), *threads (0, one per
 * core, to FT_SEARCH_MAX_THREADS) or *seed. */
int cli_opt_search(cli_opts *o, const char *arg, const char *cmd, double *time_limit, int *threads, uint64_t *seed);

/* The --compute-model native|op option, with cli_opt_target's contract. */
int cli_opt_model(cli_opts *o, const char *arg, ft_compute_model *model);

/* What `evaluate` and `simulate` share: PROBLEM SCHEDULE, --help, --json,
 * --compute-model, --target and --keep-costs. */
typedef struct cli_pair {
    const char *help;           /* printed by --help */
    const char *paths[2];       /* PROBLEM, SCHEDULE */
    int npos;
    int json;
    const char *csv;            /* --csv FILE ("-": standard output), NULL: none */
    const char *target;
    int keep_costs;
    ft_compute_model model;
} cli_pair;

/* Continue the option loop (cli_pair_opt's result when it took arg). */
#define CLI_NEXT (-1)
/* arg is none of the shared options (cli_pair_opt's result). */
#define CLI_OTHER (-2)

/* Take arg (is_opt from cli_opt_next) if it is one of the shared options
 * or a positional argument: returns CLI_NEXT when taken, EXIT_OK after
 * --help, EXIT_USAGE after an error message, CLI_OTHER otherwise. */
int cli_pair_opt(cli_opts *o, const char *arg, int is_opt, cli_pair *c);

/* After the options: check that both files were named and that
 * --keep-costs has --target, then load the problem (with the target
 * applied) and the schedule.  EXIT_OK with *p, *t (NULL without --target)
 * and *s the caller's to free, or EXIT_USAGE after an error message with
 * all three NULL. */
int cli_pair_load(cli_opts *o, const cli_pair *c, ft_problem **p, ft_target **t, ft_schedule **s);

/* What target t changed in problem p, as one line without a newline, as
 * long as it takes: "FILE (NAME): capacity ... elements ..., base costs
 * ..." or, for a contest target, that everything comes from the problem
 * file.  A malloc'd string the caller frees; NULL when out of memory. */
char *cli_target_summary(const ft_target *t, const ft_problem *p, int keep_costs);

/* The first lines of a report table on stdout: "problem ..." (sizes and
 * machine), "target ..." (cli_target_summary, when t is not NULL) and
 * "schedule ...". */
void cli_print_header(const ft_problem *p, const ft_schedule *s, const ft_target *t, int keep_costs);

/* Write ", \"target\": ..., \"target_settings\": {...}, \"base_costs\":
 * ..." (JSON members, with their leading comma) describing target t (NULL:
 * no target: null values and "problem"). */
void cli_target_json(FILE *f, const ft_target *t, int keep_costs);

/* Write ", \"NAME\": SECONDS" (a JSON member with its leading comma):
 * `cycles` cost units as seconds at target t's clock_hz (one cost unit is
 * one cycle on a real target).  Writes nothing without a target or on the
 * contest target, whose cost units are not cycles. */
void cli_json_seconds(FILE *f, const char *name, double cycles, const ft_target *t);

/* Write ", \"energy_j\": J, \"power_w\": W" (JSON members with their
 * leading comma): `joules` and the average power over `latency` cost
 * units (ft_energy_watts).  Writes nothing when p's energy model is off
 * (no target, the contest target, a target without an energy group). */
void cli_json_energy(FILE *f, const ft_problem *p, double joules, double latency);

/* Safety margin, in seconds, that the contest entry keeps before a time
 * limit of `limit` seconds: 5% of it, at least 0.15 s. */
double cli_contest_margin(double limit);

/* Parse an unsigned 64-bit decimal integer (digits only, no sign or
 * space): 0 with *out set, or -1. */
int cli_parse_u64(const char *v, uint64_t *out);

/* Parse a positive, finite number of seconds (strtod's syntax, nothing
 * after it): 0 with *out set, or -1. */
int cli_parse_seconds(const char *v, double *out);

/* Monotonic clock in seconds (arbitrary origin). */
double cli_now(void);

/* The subcommands: argv[0] is the command name; each returns the exit
 * status (EXIT_OK, EXIT_INVALID, EXIT_USAGE) after printing any error as
 * one line on stderr.  cmd_mlsys is also main's entry when the program runs
 * under the name mlsys. */
int cmd_evaluate(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_validate(int argc, char **argv);

/* validate_models.c.  When the measured file at meas_path is a models file
 * (its header has model and batch), make a temporary directory (under
 * $TMPDIR, else /tmp), name it in dir (n bytes) and import each row's
 * torchvision:MODEL into it as MODEL-bBATCH.json (`fusetile import --as
 * eager`, input BATCH x 3 x image x image, bf16) and, for the headroom, as
 * MODEL-bBATCH-compiler.json (the default lowering); dir is "" for another
 * format.  EXIT_OK, or EXIT_USAGE after one line naming the file, line and
 * model when an import fails (the importer's own line before it).  Rows
 * with bad fields are left to ft_measured_load. */
int cli_models_import(const char *meas_path, int image, char *dir, size_t n);

/* Remove dir (from cli_models_import) and the files in it; "" or NULL is a
 * no-op. */
void cli_models_cleanup(const char *dir);

/* The fusion-headroom report of models row r (its problem in dir,
 * predicted_us its eager prediction) to out: as PyTorch runs it (measured
 * and predicted), fusetile's best schedule (ft_search for limit_s seconds,
 * target_name applied) of DIR/MODEL-bBATCH-compiler.json when there is one
 * (the model as a compiler lowers it), else of the eager problem, and its
 * lower bound, both plus
 * the target's run_overhead, and the ratios; with json one object.
 * EXIT_OK, else EXIT_USAGE or EXIT_INVALID after one line. */
int cli_models_headroom(const ft_meas_row *r, const char *dir, const char *target_name, double predicted_us,
                        double limit_s, int json, FILE *out);
int cmd_calibrate(int argc, char **argv);
int cmd_schedule(int argc, char **argv);
/* `fusetile report`: a schedule's HTML report (cmd_report.c). */
int cmd_report(int argc, char **argv);
int cmd_mlsys(int argc, char **argv);
/* `fusetile generate`: a generated problem file (cmd_generate.c). */
int cmd_generate(int argc, char **argv);
/* `fusetile import`: runs the Python model importer (cmd_import.c) with the
 * configured Python that has torch (or FUSETILE_PYTHON); returns only on
 * failure (EXIT_USAGE after one line on stderr), else the importer's own
 * exit status is the program's. */
int cmd_import(int argc, char **argv);
/* `fusetile shell`: a Tcl interpreter with the fusetile package
 * (cmd_shell.c); without Tcl at build time it prints an error and returns
 * EXIT_USAGE. */
int cmd_shell(int argc, char **argv);
/* `fusetile sweep run|list|plot` (cmd_sweep.c): sweep files run on worker
 * processes into SQLite (docs/SWEEP.md). */
int cmd_sweep(int argc, char **argv);
/* `fusetile sweep plot` (sweep_plot.c): argv[0] is "plot". */
int cli_sweep_plot(int argc, char **argv);
/* `fusetile sweep submit|status|gather` (cmd_sweep_slurm.c): a sweep as a
 * Slurm job array with per-task databases; argv[0] is the subcommand. */
int cli_sweep_submit(int argc, char **argv);
int cli_sweep_status(int argc, char **argv);
int cli_sweep_gather(int argc, char **argv);

/* A progress printer for ft_evaluate_progress and ft_sim_opts.progress:
 * at most every CLI_PROGRESS_SECONDS (or the seconds that the environment
 * variable FUSETILE_PROGRESS_SECONDS gives, 0 to 3600: tests set 0),
 * "fusetile WHAT: DONE of TOTAL steps NOUN (P%)" on stderr.  A command of
 * several runs alike (simulate's replay, then its replays with effects
 * off) sets runs and calls cli_progress_phase before each call that
 * reports progress: the figures then count all the runs.  Initialise with cli_progress_init before the run; call
 * cli_progress_end after the last, which prints the 100% line when any
 * line was printed (a run short enough to print none stays quiet). */
#define CLI_PROGRESS_SECONDS 2.0
typedef struct cli_progress_state {
    const char *what; /* "evaluate", "simulate" */
    const char *noun; /* words after "steps", "" for none */
    int runs;         /* the runs alike in the figures (1) */
    int first, span;  /* the runs before the current call's (0), the runs its total counts (1) */
    int64_t done, total; /* the figures of the last call, over all runs */
    int printed;      /* a line was printed */
    int64_t printed_done; /* the done figure of the last line printed */
    double interval;  /* seconds between lines */
    struct timespec last;
} cli_progress_state;
void cli_progress_init(cli_progress_state *ps, const char *what, const char *noun);
/* Contract above; ctx is a cli_progress_state; always returns 0 (go on). */
int cli_progress(void *ctx, int64_t done, int64_t total);
/* The next call reports progress over `span` runs (its total counts them
 * all), which come after the `first` runs of ps->runs. */
void cli_progress_phase(cli_progress_state *ps, int first, int span);
/* The last run has ended: the 100% line, when a line was printed. */
void cli_progress_end(cli_progress_state *ps);

#endif
