/* main.c - the fusetile program: dispatches to subcommands; run as `mlsys`, it is the contest entry. */
#include "cli.h"

#include <string.h>

static const cli_command commands[] = {
    {"schedule", cmd_schedule, "schedule PROBLEM.json [-o SCHEDULE.json] [--compute-model native|op] [--time-limit S] [--seed N] [--threads N] [--quiet] [--verbose] [--target T.cfg [--keep-costs] [--no-target-timing]] [--strategy NAME] [--start-from LIST] [--patterns FILE]... [--partition auto|fit|layers|metis] [--parts N] [--objective latency|energy|edp] [--csv FILE]"},
    {"evaluate", cmd_evaluate, "evaluate PROBLEM.json SCHEDULE.json [--compute-model native|op] [--json] [--csv FILE] [--target T.cfg [--keep-costs]] [--gap-time S]"},
    {"simulate", cmd_simulate, "simulate PROBLEM.json SCHEDULE.json [--compute-model native|op] [--target T.cfg [--keep-costs]] [--trace OUT.json] [--vcd OUT.vcd] [--window FIRST:COUNT] [--detail waves|steps] [--trace-warn BYTES] [--json] [--csv FILE]"},
    {"report", cmd_report, "report PROBLEM.json [SCHEDULE.json] -o REPORT.html [--target T.cfg [--keep-costs]] [--compute-model native|op] [--time-limit S] [--strategies LIST] [--threads N] [--seed N]"},
    {"validate", cmd_validate, "validate --target T.cfg --measured FILE.tsv [--problems DIR] [--part all|fit|held-out] [--worst N] [--max-error PCT] [--json] [--svg OUT.svg] [--headroom] [--headroom-limit S] [--kernels N]"},
    {"calibrate", cmd_calibrate, "calibrate --target T.cfg --measured FILE.tsv... [--problems DIR] [--free LIST] [--reset] [--all-rows] [-o FITTED.cfg] [--quiet]"},
    {"generate", cmd_generate, "generate [--ops N] [--seed S] [--family contest|small|scale] [-o PROBLEM.json]"},
    {"import", cmd_import, "import MODEL [--input-shape 1x3x224x224]... [--as compiler|eager] [--dtype bf16|fp16|fp32|int8] [--target T.cfg] [--graph-only] [--frontend auto|fx|onnx] [--batch-split N] [--group-split N] [-o PROBLEM.json] [--quiet]"},
    {"sweep", cmd_sweep, "sweep run SWEEP.cfg [--jobs N] [--db OUT.db] [--slice K/M] [--quiet] | list SWEEP.cfg | plot DB --x AXIS --y METRIC [--group AXIS] [--where COLUMN=VALUE]... [--log-x] [--log-y] [--points] -o OUT.svg | submit SWEEP.cfg --slurm [--array-size M] [--db OUT.db] [--sbatch-opt OPT]... [--dry-run] | status SWEEP.cfg|DB [--db OUT.db] | gather SWEEP.cfg|DB [--db OUT.db]"},
    {"shell", cmd_shell, "shell [SCRIPT.tcl [ARGS...]]   (Tcl with the fusetile package; a prompt without SCRIPT)"},
    {"mlsys", cmd_mlsys, "mlsys INPUT.json OUTPUT.json   (the contest entry; also run as `mlsys`)"},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f)
{
    fprintf(f, "usage: fusetile COMMAND [ARGS]\n\n"
               "Schedule DAGs of tensor operations onto a three-tier memory machine,\n"
               "evaluate schedules exactly under the fusetile cost model and replay them\n"
               "in a SystemC simulator.\n\ncommands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  fusetile %s\n", commands[i].usage);
    fprintf(f, "\n'fusetile COMMAND --help' describes a command.  Exit status: 0 success,\n"
               "1 invalid schedule or failed check, 2 bad input or usage (also a\n"
               "failed write to standard output).\n");
}

int main(int argc, char **argv)
{
    cli_argv0 = argc > 0 ? argv[0] : NULL;
    cli_signals();
    const char *base = argc > 0 && argv[0] ? strrchr(argv[0], '/') : NULL;
    base = base ? base + 1 : argc > 0 && argv[0] ? argv[0] : "";
    if (strcmp(base, "mlsys") == 0) {
        cli_progname = "mlsys";
        return cli_finish_stdout(cmd_mlsys(argc, argv));
    }
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        if (argc > 2 && strcmp(cmd, "help") == 0) {
            for (size_t i = 0; i < NCOMMANDS; i++)
                if (strcmp(argv[2], commands[i].name) == 0) {
                    char *hargv[] = {argv[2], "--help", NULL};
                    return cli_finish_stdout(commands[i].run(2, hargv));
                }
            cli_error("unknown command '%s' (try 'fusetile --help')", argv[2]);
            return EXIT_USAGE;
        }
        usage(stdout);
        return cli_finish_stdout(EXIT_OK);
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("fusetile %s\n", FT_VERSION);
        return cli_finish_stdout(EXIT_OK);
    }
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(cmd, commands[i].name) == 0)
            return cli_finish_stdout(commands[i].run(argc - 1, argv + 1));
    cli_error("unknown command '%s' (try 'fusetile --help')", cmd);
    return EXIT_USAGE;
}
