/* cmd_report.c - `fusetile report`: a schedule's HTML report, one self-contained page (libfusetile_report, fusetile/report.h). */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "fusetile/report.h"

static const char report_help[] =
    "usage: fusetile report PROBLEM.json [SCHEDULE.json] -o REPORT.html\n"
    "                       [--target TARGET.cfg [--keep-costs]] [--compute-model native|op]\n"
    "                       [--time-limit S] [--strategies LIST] [--threads N] [--seed N]\n"
    "\n"
    "Write one self-contained HTML page (inline style, script and SVG; it\n"
    "needs no network) about SCHEDULE for PROBLEM: the subgraphs' table\n"
    "(sortable by a click on a column's header, units in the headers, every\n"
    "layer's full name), a roofline chart of the subgraphs (arithmetic\n"
    "intensity against achieved throughput under the machine's compute roof\n"
    "and bandwidth slope, log axes), the timeline of the simulator's replay\n"
    "(a span per subgraph), the schedule beside fusetile's search and the\n"
    "classic strategies (patterns, rules, partition, supertile: `fusetile\n"
    "schedule --strategy`), and headings kept for later analyses (fusion\n"
    "headroom, energy: \"not yet computed for this target\").  The page holds\n"
    "its data as JSON (<script type=\"application/json\" id=\"report-data\">)\n"
    "and its script checks the numbers it shows against that JSON: <body\n"
    "data-checks=\"pass\"> and the line \"checks: N of N passed\" when they\n"
    "agree.  Without SCHEDULE the report schedules PROBLEM with the search\n"
    "first.  Progress lines go to stderr.\n"
    "\n"
    "  -o, --output FILE  the page (required; written atomically)\n"
    "  --target FILE      report on the machine of FILE (targets/*.cfg), as\n"
    "                     `fusetile evaluate --target` does; times are then\n"
    "                     in cycles (and microseconds at its clock)\n"
    "  --keep-costs       with --target: keep the problem file's base costs\n"
    "  --compute-model M  native (default) or op (SPEC.md section 4)\n"
    "  --time-limit S     seconds of the search when SCHEDULE is omitted, and\n"
    "                     of each strategy compared (default 10); a strategy\n"
    "                     that cannot cost its groups in time splits them and\n"
    "                     the page says how many (give it more time)\n"
    "  --strategies LIST  the strategies compared: names separated by commas\n"
    "                     (search, patterns, rules, partition, supertile),\n"
    "                     all (default) or none; search reuses the report's\n"
    "                     own search when SCHEDULE is omitted\n"
    "  --threads N        search threads (default: one per core)\n"
    "  --seed N           the search's seed (default 1)\n"
    "  -h, --help         show this help\n"
    "\n"
    "Exit status: 0 written, 1 invalid schedule (or no valid schedule\n"
    "exists), 2 bad input or usage (an unwritable -o included).\n";

static void on_message(void *ctx, const char *line)
{
    (void)ctx;
    fprintf(stderr, "%s: report: %s\n", cli_progname, line);
}

int cmd_report(int argc, char **argv)
{
    cli_opts o;
    const char *arg, *paths[2] = {NULL, NULL}, *target = NULL, *output = NULL;
    int r, is_opt, npos = 0, keep_costs = 0;
    ft_report_opts ro;
    ft_report_opts_init(&ro);
    cli_opt_init(&o, argc, argv);
    while ((arg = cli_opt_next(&o, &is_opt))) {
        if (!is_opt) {
            if (npos >= 2) {
                cli_error("report: unexpected argument '%s' (usage: fusetile report PROBLEM [SCHEDULE] -o REPORT.html)",
                          arg);
                return EXIT_USAGE;
            }
            paths[npos++] = arg;
        } else if (cli_opt_is(&o, arg, "--help") || cli_opt_is(&o, arg, "-h")) {
            fputs(report_help, stdout);
            return EXIT_OK;
        } else if ((r = cli_opt_target(&o, arg, &target, &keep_costs)) != 0 ||
                   (r = cli_opt_model(&o, arg, &ro.model)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
        } else if (cli_opt_is(&o, arg, "--output") || cli_opt_is(&o, arg, "-o")) {
            if (!(output = cli_opt_file(&o, arg[1] == '-' ? "--output" : "-o")))
                return EXIT_USAGE;
        } else if ((r = cli_opt_search(&o, arg, "report", &ro.time_limit, &ro.threads, &ro.seed)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
        } else if (cli_opt_is(&o, arg, "--strategies")) {
            const char *v = cli_opt_value(&o, "--strategies");
            ft_status st;
            if (!v)
                return EXIT_USAGE;
            if (ft_report_parse_strategies(v, &ro.strategies, &st) != FT_OK) {
                cli_error("report: --strategies: %s", st.msg);
                return EXIT_USAGE;
            }
        } else {
            cli_error("report: unknown option '%s' (try 'fusetile report --help')", arg);
            return EXIT_USAGE;
        }
    }
    if (npos < 1) {
        cli_error("report: needs PROBLEM.json (try 'fusetile report --help')");
        return EXIT_USAGE;
    }
    if (!output) {
        cli_error("report: needs -o REPORT.html (try 'fusetile report --help')");
        return EXIT_USAGE;
    }
    if (keep_costs && !target) {
        cli_error("report: --keep-costs needs --target");
        return EXIT_USAGE;
    }
    ft_problem *p = NULL;
    ft_target *t = NULL;
    ft_schedule *s = NULL;
    ft_status st;
    if (paths[1] && cli_input(paths[1], "schedule") != EXIT_OK)
        return EXIT_USAGE;
    if (cli_load_problem("fusetile report PROBLEM [SCHEDULE] -o REPORT.html", paths[0], target, keep_costs, &p, &t))
        return EXIT_USAGE;
    if (paths[1] && ft_schedule_load(paths[1], &s, &st) != FT_OK) {
        cli_error("%s", st.msg);
        ft_problem_free(p);
        ft_target_free(t);
        return EXIT_USAGE;
    }
    cli_warn_imported(paths[0], p, target, t);
    /* refuse an output that cannot be written before the long part */
    int rc = cli_check_output("report", output, 0);
    if (rc == EXIT_OK) {
        ro.target = t;
        ro.keep_costs = keep_costs;
        ro.problem_path = paths[0];
        ro.schedule_path = paths[1];
        ro.patterns_dir = getenv("FT_PATTERNS_DIR"); /* the library reads no environment */
        ro.on_message = on_message;
        rc = ft_report_write(p, s, &ro, output, &st);
        if (rc == FT_EINVALID) {
            cli_error("invalid schedule (%s): %s", ft_reason_name(st.reason), st.msg);
            rc = EXIT_INVALID;
        } else if (rc != FT_OK) {
            cli_error("report: %s", st.msg);
            rc = EXIT_USAGE;
        } else {
            fprintf(stderr, "%s: report: wrote %s\n", cli_progname, output);
            rc = EXIT_OK;
        }
    }
    ft_schedule_free(s);
    ft_problem_free(p);
    ft_target_free(t);
    return rc;
}
