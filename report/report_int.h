/* report_int.h - what the report library's files share (collect.c gathers the data, render.c writes the page, page.c holds its style and script); private to report/, not installed. */
#ifndef FT_REPORT_INT_H
#define FT_REPORT_INT_H

#include <stddef.h>

#include <jansson.h>

#include "fusetile/report.h"

/* The helpers below are linked by name into libfusetile_report.a, which
 * is installed: their names carry the internal prefix ft__rep_. */

/* A growing string; bad is set (and sticks) when memory runs out. */
typedef struct rep_buf {
    char *p;
    size_t len, cap;
    int bad;
} rep_buf;

/* Append the NUL-terminated s. */
void ft__rep_puts(rep_buf *b, const char *s);

/* Append printf-style text (numbers with '.', whatever the locale: the
 * library never sets one, and callers format doubles with ft__rep_num). */
void ft__rep_printf(rep_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Append s escaped for HTML text and attribute values (& < > " '). */
void ft__rep_html(rep_buf *b, const char *s);

/* ft__rep_html, and with wrap a line-break opportunity (<wbr>, no text)
 * before each '/', '.' and '_' after the first character: long layer
 * names then wrap at their parts, whole. */
void ft__rep_html_wrap(rep_buf *b, const char *s, int wrap);

/* Append x as the shortest text that reads back as exactly x
 * (ft_format_double); "NaN" for a non-finite x. */
void ft__rep_num(rep_buf *b, double x);

/* The report's data (its JSON document, docs/CLI.md): evaluation, replay
 * and strategies of schedule s (NULL: searched) of p.  NULL on failure,
 * with st filled (ft_report_html's codes). */
json_t *ft__rep_collect(const ft_problem *p, const ft_schedule *s, const ft_report_opts *o, ft_status *st);

/* The page of doc (ft__rep_collect's): a malloc'd string, or NULL with st
 * filled (out of memory, or a plot that cannot be drawn). */
char *ft__rep_render(const json_t *doc, ft_status *st);

/* The page's style sheet and script (page.c). */
extern const char ft__rep_css[];
extern const char ft__rep_js[];

#endif /* FT_REPORT_INT_H */
