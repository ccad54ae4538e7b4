/* report.c - libfusetile_report's entry points (fusetile/report.h): the options' defaults, the page as text, and the page written under the output rules. */
#include "report_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fusetile/io.h" /* ft_write_atomic */

/* Contract: fusetile/report.h. */
void ft_report_opts_init(ft_report_opts *o)
{
    *o = (ft_report_opts){0};
    o->model = FT_COMPUTE_NATIVE;
    o->time_limit = FT_REPORT_TIME_LIMIT;
    o->strategies = FT_REPORT_ALL_STRATEGIES;
    o->seed = 1;
}

/* Contract: fusetile/report.h. */
int ft_report_parse_strategies(const char *list, unsigned *mask, ft_status *st)
{
    ft_status_clear(st);
    *mask = 0;
    if (strcmp(list, "all") == 0 || strcmp(list, "none") == 0) {
        *mask = list[0] == 'a' ? FT_REPORT_ALL_STRATEGIES : 0;
        return FT_OK;
    }
    for (const char *q = list;; q++) {
        size_t n = strcspn(q, ",");
        char name[32];
        ft_strategy s;
        if (n == 0 || n >= sizeof name) {
            st->code = FT_EINPUT;
            snprintf(st->msg, sizeof st->msg, "strategies '%s': an empty or overlong name (names: search, patterns, "
                     "rules, partition, supertile, joined by commas; or all, none)", list);
            return FT_EINPUT;
        }
        memcpy(name, q, n);
        name[n] = '\0';
        if (ft_strategy_parse(name, &s, st) != FT_OK)
            return st->code = FT_EINPUT;
        *mask |= 1u << s;
        q += n;
        if (!*q)
            return FT_OK;
    }
}

/* Contract: fusetile/report.h. */
int ft_report_html(const ft_problem *p, const ft_schedule *s, const ft_report_opts *o, char **html, ft_status *st)
{
    ft_status_clear(st);
    if (html)
        *html = NULL;
    if (!p || !o || !html) {
        st->code = FT_EINPUT;
        snprintf(st->msg, sizeof st->msg, "ft_report_html: no problem, options or output");
        return FT_EINPUT;
    }
    if (!(o->time_limit > 0) || !isfinite(o->time_limit)) {
        st->code = FT_EINPUT;
        snprintf(st->msg, sizeof st->msg, "the time limit is %g s, must be a positive number of seconds",
                 o->time_limit);
        return FT_EINPUT;
    }
    if (o->strategies & ~FT_REPORT_ALL_STRATEGIES) {
        st->code = FT_EINPUT;
        snprintf(st->msg, sizeof st->msg, "strategies mask 0x%x names no strategy beyond 0x%x", o->strategies,
                 FT_REPORT_ALL_STRATEGIES);
        return FT_EINPUT;
    }
    json_t *doc = ft__rep_collect(p, s, o, st);
    if (!doc)
        return st->code ? st->code : FT_ENOMEM;
    *html = ft__rep_render(doc, st);
    json_decref(doc);
    return *html ? FT_OK : st->code;
}

/* Contract: fusetile/report.h. */
int ft_report_write(const ft_problem *p, const ft_schedule *s, const ft_report_opts *o, const char *path, ft_status *st)
{
    char *html = NULL;
    if (!path || !*path) {
        ft_status_clear(st);
        st->code = FT_EINPUT;
        snprintf(st->msg, sizeof st->msg, "no output file named");
        return FT_EINPUT;
    }
    int rc = ft_report_html(p, s, o, &html, st);
    if (rc != FT_OK)
        return rc;
    rc = ft_write_atomic(html, path, st);
    free(html);
    return rc;
}
