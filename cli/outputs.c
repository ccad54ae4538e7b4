/* outputs.c - the command line's side of the output rules (include/fusetile/io.h): inputs protected from outputs, early output checks, "-" for standard output, a failed standard output reported at exit, temporary files removed on SIGINT, SIGTERM and SIGHUP. */
#include "cli.h"

#include "fusetile/io.h"

#include <errno.h>
#include <signal.h>
#include <string.h>

int cli_input(const char *path, const char *role)
{
    ft_status st;
    if (ft_out_protect(path, role, &st) != FT_OK) {
        cli_error("%s", st.msg);
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

const char *cli_out_or_stdout(const char *v)
{
    return v && strcmp(v, "-") == 0 ? NULL : v;
}

int cli_check_output(const char *cmd, const char *path, int regular_only)
{
    ft_status st;
    if (ft_out_check(path, regular_only, &st) != FT_OK) {
        cli_error("%s%s%s", cmd ? cmd : "", cmd ? ": " : "", st.msg);
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

/* errno of a failed write to standard output that a command saw first
 * (cli_stdout_failed), 0 if none. */
static int stdout_errno;

void cli_stdout_failed(int e)
{
    if (!stdout_errno)
        stdout_errno = e;
}

int cli_finish_stdout(int rc)
{
    ft_out_unprotect_all();
    int bad = ferror(stdout);
    int e = fflush(stdout) != 0 ? errno : 0;
    if (fclose(stdout) != 0 && !e)
        e = errno;
    if (!e && !bad && !stdout_errno)
        return rc;
    if (stdout_errno)
        e = stdout_errno;
    if (e)
        cli_error("standard output: %s", strerror(e));
    else /* stdio dropped the reason with the failed buffer */
        cli_error("standard output: write error");
    return EXIT_USAGE;
}

/* Remove the open outputs' temporary files, then die by the signal. */
static void on_signal(int sig)
{
    ft_out_signal_cleanup();
    signal(sig, SIG_DFL);
    raise(sig);
}

void cli_signals(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction sa, old;
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue; /* ignored on purpose (nohup, a background job) */
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESETHAND;
        sigaction(sigs[i], &sa, NULL);
    }
}
