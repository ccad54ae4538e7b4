/* cmd_shell.c - `fusetile shell`: a Tcl interpreter with the fusetile package loaded, running a script or an interactive prompt. */
#include "cli.h"

#include <string.h>

static const char shell_help[] =
    "usage: fusetile shell [SCRIPT.tcl [ARGS...]]\n"
    "\n"
    "Run a Tcl 8.6 interpreter with the fusetile package already loaded\n"
    "(`package require fusetile` is done; the commands are fusetile::problem,\n"
    "fusetile::target, fusetile::schedule and fusetile::handles; tcl/README.md\n"
    "describes them).  The package is built into this program: nothing needs\n"
    "to be installed.\n"
    "\n"
    "With SCRIPT, run it with argv0 = SCRIPT, argv = ARGS and argc = their\n"
    "count (ARGS may start with '-'; they are the script's).  Without SCRIPT,\n"
    "read commands from standard input: an interactive prompt (fusetile%) when\n"
    "it is a terminal, with line editing and history when the tclreadline\n"
    "package is installed (Debian: tcl-tclreadline), else a plain prompt that\n"
    "reads lines until a command is complete; results are printed, errors too,\n"
    "and end of input ends the shell.\n"
    "\n"
    "  -h, --help  show this help\n"
    "\n"
    "Exit status: 0 when the script or the input ends, N after `exit N`, 1 when\n"
    "the script raises an error (its errorInfo goes to stderr), 2 on a usage\n"
    "error or when Tcl cannot start.\n";

#ifndef HAVE_TCL

int cmd_shell(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(shell_help, stdout);
        return EXIT_OK;
    }
    cli_error("shell: this fusetile was built without Tcl: install tcl-dev (Tcl 8.6), rerun ./configure and make");
    return EXIT_USAGE;
}

#else

#include <tcl.h>
#include <unistd.h>

#include "tclfusetile.h"

/* Set argv0, argv, argc and tcl_interactive as tclsh does. */
static void set_args(Tcl_Interp *interp, const char *argv0, int argc, char **argv, int interactive)
{
    Tcl_Obj *l = Tcl_NewListObj(0, NULL);
    for (int i = 0; i < argc; i++)
        Tcl_ListObjAppendElement(NULL, l, Tcl_NewStringObj(argv[i], -1));
    Tcl_SetVar2Ex(interp, "argv0", NULL, Tcl_NewStringObj(argv0, -1), TCL_GLOBAL_ONLY);
    Tcl_SetVar2Ex(interp, "argv", NULL, l, TCL_GLOBAL_ONLY);
    Tcl_SetVar2Ex(interp, "argc", NULL, Tcl_NewIntObj(argc), TCL_GLOBAL_ONLY);
    Tcl_SetVar2Ex(interp, "tcl_interactive", NULL, Tcl_NewIntObj(interactive), TCL_GLOBAL_ONLY);
}

/* Print the interp's errorInfo (or result) on stderr. */
static void print_error(Tcl_Interp *interp)
{
    Tcl_Obj *info = Tcl_GetVar2Ex(interp, "errorInfo", NULL, TCL_GLOBAL_ONLY);
    fprintf(stderr, "%s\n", Tcl_GetString(info ? info : Tcl_GetObjResult(interp)));
}

/* The tclreadline loop, when the package is there: the result is 0 when
 * it is not (the loop itself ends the process with `exit` at end of
 * input). */
static const char readline_script[] =
    "if {[catch {package require tclreadline}]} {\n"
    "    concat 0\n"
    "} else {\n"
    "    proc ::tclreadline::prompt1 {} { return \"fusetile% \" }\n"
    "    ::tclreadline::Loop\n"
    "    concat 1\n"
    "}\n";

/* A plain read-eval-print loop over stdin: lines are gathered until
 * `info complete`, evaluated at global level; results go to stdout and
 * error messages to stderr (results only when interactive).  Returns at
 * end of input. */
static void plain_loop(Tcl_Interp *interp, int interactive)
{
    Tcl_Channel in = Tcl_GetStdChannel(TCL_STDIN);
    Tcl_Obj *cmd = Tcl_NewObj();
    Tcl_IncrRefCount(cmd);
    if (!in) {
        Tcl_DecrRefCount(cmd);
        return;
    }
    for (;;) {
        if (interactive) {
            fputs(Tcl_GetCharLength(cmd) ? "> " : "fusetile% ", stdout);
            fflush(stdout);
        }
        if (Tcl_GetsObj(in, cmd) < 0) {
            if (interactive)
                fputc('\n', stdout);
            break;
        }
        Tcl_AppendToObj(cmd, "\n", 1);
        if (!Tcl_CommandComplete(Tcl_GetString(cmd)))
            continue;
        int rc = Tcl_RecordAndEvalObj(interp, cmd, TCL_EVAL_GLOBAL);
        Tcl_DecrRefCount(cmd);
        cmd = Tcl_NewObj();
        Tcl_IncrRefCount(cmd);
        const char *res = Tcl_GetStringResult(interp);
        if (rc != TCL_OK)
            fprintf(stderr, "%s\n", res);
        else if (interactive && *res)
            printf("%s\n", res);
        fflush(stdout);
    }
    Tcl_DecrRefCount(cmd);
}

int cmd_shell(int argc, char **argv)
{
    int first = 1;
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(shell_help, stdout);
        return EXIT_OK;
    }
    if (argc > 1 && strcmp(argv[1], "--") == 0)
        first = 2;
    else if (argc > 1 && argv[1][0] == '-' && argv[1][1]) {
        cli_error("shell: unknown option '%s' (try 'fusetile shell --help')", argv[1]);
        return EXIT_USAGE;
    }
    const char *script = first < argc ? argv[first] : NULL;
    int interactive = !script && isatty(0);

    Tcl_FindExecutable(cli_argv0);
    Tcl_Interp *interp = Tcl_CreateInterp();
    int rc = EXIT_OK;
    if (Tcl_Init(interp) != TCL_OK) {
        cli_error("shell: Tcl cannot start: %s", Tcl_GetStringResult(interp));
        rc = EXIT_USAGE;
        goto done;
    }
    Tcl_StaticPackage(NULL, "Fusetile", Fusetile_Init, NULL);
    if (Tcl_EvalEx(interp, "package ifneeded fusetile " FT_VERSION " {load {} Fusetile}; package require fusetile", -1,
                   TCL_EVAL_GLOBAL) != TCL_OK) {
        cli_error("shell: cannot load the fusetile package: %s", Tcl_GetStringResult(interp));
        rc = EXIT_USAGE;
        goto done;
    }
    if (script) {
        set_args(interp, script, argc - first - 1, argv + first + 1, 0);
        if (Tcl_EvalFile(interp, script) != TCL_OK) {
            print_error(interp);
            rc = EXIT_INVALID;
        }
    } else {
        set_args(interp, cli_argv0 ? cli_argv0 : "fusetile", 0, NULL, interactive);
        if (interactive && Tcl_EvalEx(interp, readline_script, -1, TCL_EVAL_GLOBAL) == TCL_OK &&
            strcmp(Tcl_GetStringResult(interp), "1") == 0)
            goto done;
        plain_loop(interp, interactive);
    }
done:;
    /* what the script left in Tcl's stdout buffer: a failed write of it
     * is a failed standard output (exit 2), not lost at Tcl_Finalize */
    Tcl_Channel out = Tcl_GetStdChannel(TCL_STDOUT);
    if (out && Tcl_Flush(out) != TCL_OK) {
        cli_error("standard output: %s", Tcl_ErrnoMsg(Tcl_GetErrno()));
        rc = EXIT_USAGE;
    }
    Tcl_DeleteInterp(interp);
    Tcl_Finalize();
    return rc;
}

#endif /* HAVE_TCL */
