/* report.h - public API of libfusetile_report (report/, installed as <fusetile/report.h>): a schedule's HTML report, one self-contained page (inline CSS, JavaScript and SVG, its data as JSON) that `fusetile report` and fusetile.report() write.
 *
 * The page has: the subgraphs' table (sortable, units in the headers,
 * every layer's full name), a roofline chart of the subgraphs (log axes,
 * the machine's compute roof and bandwidth slope: ft_roofline_peaks), the
 * timeline of the simulator's replay (fusetile/sim.h), the schedule beside
 * the classic strategies (ft_search with each ft_strategy), and headings
 * kept for later analyses (fusion headroom, energy).  Its data is a JSON
 * document inside <script type="application/json" id="report-data">
 * (docs/CLI.md, `fusetile report`, lists its members); the page's own
 * script checks the numbers it shows against that JSON and writes the
 * outcome as <body data-checks="pass|fail"> and a line "checks: N of M
 * passed".
 *
 * A program links libfusetile_report.a, libfusetile_plot.a,
 * libfusetile_sim.a (with SystemC) and libfusetile, in that order.
 */
#ifndef FT_REPORT_H
#define FT_REPORT_H

#include "fusetile/api.h"
FT_API_BEGIN

#include <stdint.h>

#include "fusetile/fusetile.h"
#include "fusetile/sim.h"
#include "fusetile/target.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Default seconds of the search (no schedule given) and of each strategy. */
#define FT_REPORT_TIME_LIMIT 10.0

/* Options of a report; ft_report_opts_init sets the defaults. */
typedef struct ft_report_opts {
    const ft_target *target;   /* the target applied to the problem (its name,
                                  clock and element size for the page), or
                                  NULL (default): none, figures in cost units */
    int keep_costs;            /* the problem kept its base costs (the page says so) */
    ft_compute_model model;    /* default FT_COMPUTE_NATIVE */
    double time_limit;         /* seconds, > 0: the search when no schedule is
                                  given, and each strategy compared; default
                                  FT_REPORT_TIME_LIMIT */
    unsigned strategies;       /* the strategies compared, a bit (1u << s) per
                                  ft_strategy: FT_STRATEGY_SEARCH's bit runs
                                  the search (reused, not run again, when it
                                  made the schedule); default all
                                  (FT_REPORT_ALL_STRATEGIES), 0: none */
    int threads;               /* search threads; 0 (default): one per core */
    uint64_t seed;             /* default 1 */
    const char *patterns_dir;  /* the patterns strategy's directory
                                  (ft_search_opts.patterns_dir); NULL: default */
    ft_sim *sim;               /* the simulator handle to replay with (the
                                  caller keeps it to one replay at a time);
                                  NULL (default): one is made and freed */
    const char *problem_path;  /* names shown on the page; NULL: p->name */
    const char *schedule_path; /* NULL: s->name, or "search" without s */
    /* Progress lines ("search: 10 s", "strategy rules: total ..."), one
     * line without its newline; NULL (default): none. */
    void (*on_message)(void *ctx, const char *line);
    void *ctx;
    /* Called about every 0.25 s while the report works (from the search's
     * threads, the evaluation or the replay, never two at once) with the
     * phases done and their number (the search when it runs, the
     * evaluation, the replay, each strategy); a nonzero return stops the
     * report, which then fails with FT_EINPUT ("interrupted") and writes
     * nothing.  NULL (default): none. */
    ft_progress_fn progress;
    void *progress_ctx;
} ft_report_opts;

#define FT_REPORT_ALL_STRATEGIES ((1u << FT_STRATEGY_COUNT) - 1u)

/* Fill *o with the defaults above. */
void ft_report_opts_init(ft_report_opts *o);

/* The strategies mask (ft_report_opts.strategies) of `list`: "all",
 * "none", or strategy names joined by commas ("search,rules").  FT_OK, or
 * FT_EINPUT with st naming the entry that is not a strategy. */
int ft_report_parse_strategies(const char *list, unsigned *mask, ft_status *st);

/* The page of schedule s of problem p (p with o->target applied already;
 * s NULL: the schedule ft_search finds in o->time_limit), into *html: a
 * NUL-terminated string the caller frees with free().  It evaluates the
 * schedule (ft_evaluate), replays it (ft_sim_run) and runs the
 * strategies of o->strategies (ft_search), so it takes up to about
 * o->time_limit seconds per strategy.  Returns FT_OK; FT_EINVALID when s
 * is invalid (ft_evaluate's or the simulator's reason in st) or no valid
 * schedule exists; FT_EINPUT for a NULL argument, a time limit that is not
 * a positive number, a schedule of more than FT_MAX_STEPS steps, a
 * simulator failure or a run o->progress stopped; FT_ENOMEM.  A strategy that fails is a row saying
 * why, not an error. */
int ft_report_html(const ft_problem *p, const ft_schedule *s, const ft_report_opts *o, char **html,
                   ft_status *st);

/* ft_report_html's page written to path under the output rules
 * (ft_write_atomic: the file is the previous one or the whole page at
 * every moment).  Its codes, and FT_EINPUT naming path when it cannot be
 * written. */
int ft_report_write(const ft_problem *p, const ft_schedule *s, const ft_report_opts *o, const char *path,
                    ft_status *st);

#ifdef __cplusplus
}
#endif

FT_API_END

#endif /* FT_REPORT_H */
