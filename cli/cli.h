/* cli.h - shared pieces of the fusetile command-line program. */
#ifndef FT_CLI_H
#define FT_CLI_H

#include <stdio.h>

#include "fusetile.h"

/* Exit statuses (DESIGN.md): 0 success, 1 invalid schedule or failed check,
 * 2 bad input or usage. */
enum { EXIT_OK = 0, EXIT_INVALID = 1, EXIT_USAGE = 2 };

/* One subcommand: run(argc, argv) gets argv[0] = the command name. */
typedef struct cli_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *usage;   /* one-line synopsis after "fusetile " */
} cli_command;

/* Print "fusetile: MESSAGE" on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print "fusetile CMD: warning: MESSAGE" on stderr. */
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

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

/* Write s as a JSON string literal (with quotes) to f. */
void cli_json_string(FILE *f, const char *s);

/* Write x as the shortest exact JSON number to f. */
void cli_json_number(FILE *f, double x);

int cmd_evaluate(int argc, char **argv);

#endif
