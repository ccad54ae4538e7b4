/* plot_int.h - what the plot library's two files share (plot.c draws, text.c writes the text); private to plot/, not installed. */
#ifndef FT_PLOT_INT_H
#define FT_PLOT_INT_H

#include <stddef.h>

#include "fusetile/plot.h"

/* The helpers below are shared by two files, so they are linked by name
 * into libfusetile_plot.a, which is installed: their names carry the
 * internal prefix ft__plot_ so that they cannot clash with a program's
 * own. */

/* A growing string; bad is set (and sticks) when memory runs out. */
typedef struct svg_buf {
    char *p;
    size_t len, cap;
    int bad;
} svg_buf;

/* Append n bytes of s, or the NUL-terminated s. */
void ft__plot_put(svg_buf *b, const char *s, size_t n);
void ft__plot_puts(svg_buf *b, const char *s);

/* Append s XML-escaped; bytes that are not an allowed character become
 * '?'.  maxchars > 0: at most that many characters, then an ellipsis. */
void ft__plot_xml(svg_buf *b, const char *s, int maxchars);

/* Characters ft__plot_xml(s, maxchars) shows (the ellipsis counts as one). */
int ft__plot_text_chars(const char *s, int maxchars);

/* v with prec significant digits (%g, '.' whatever the locale), into buf
 * (len bytes); returns buf. */
const char *ft__plot_fmt_value(char *buf, size_t len, double v, int prec);

/* A pixel coordinate: two decimals at most, trailing zeros dropped. */
const char *ft__plot_fmt_px(char *buf, size_t len, double v);

/* Append fmt to b, with these conversions only: %s a string as is, %x a
 * string XML-escaped, %p a pixel coordinate (double), %v a value (double,
 * 6 significant digits), %d an int, %% a '%'. */
void ft__plot_emit(svg_buf *b, const char *fmt, ...);

/* Format a message into err (errlen bytes; nothing when err is NULL). */
void ft__plot_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Whether s is a string with something in it. */
static inline int svg_nonempty(const char *s) { return s && *s; }

#endif /* FT_PLOT_INT_H */
