/* plot.h - public API of libfusetile_plot (plot/, installed as <fusetile/plot.h>): scatter and line plots on linear or log axes written as SVG text, with no library beyond libc (plot/README.md says why).
 *
 * `fusetile validate --svg` (predicted against measured) and `fusetile
 * sweep plot` (a metric against a sweep axis) draw with it; other programs
 * may too.  The plot is a plain struct the caller fills; nothing is
 * printed.  Writing a file uses ft_write_atomic, so a program links
 * libfusetile_plot.a before libfusetile (pkg-config fusetile-plot).
 */
#ifndef FT_PLOT_H
#define FT_PLOT_H

#include "fusetile/api.h"
FT_API_BEGIN

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One series: n points (x[i], y[i]), drawn as small circles in the
 * series' colour, with one legend entry.  Nothing is copied: the arrays
 * and strings stay the caller's and need only outlive the call. */
typedef struct ft_plot_series {
    const char *name;          /* legend text; NULL or "": "series N" (from 1) */
    const double *x, *y;       /* n values each (may be NULL when n is 0) */
    const char *const *labels; /* NULL, or n entries: text drawn beside the
                                  point, NULL or "" for none */
    int n;                     /* points; 0 draws only the legend entry */
    int lines;                 /* 1: also join the points in x order with a
                                  polyline (ties keep their input order) */
    int line_only;             /* with lines: 1 draws the polyline alone, no
                                  markers (a bound, a roof); 0: markers too */
} ft_plot_series;

/* A plot: its texts, its axes and its series. */
typedef struct ft_plot {
    const char *title;  /* NULL or "": none */
    const char *xlabel; /* NULL or "": none */
    const char *ylabel; /* NULL or "": none */
    int xlog, ylog;     /* 1: log10 axis (decade ticks 1, 10, 100, ... with
                           minor ticks at 2..9), 0: linear (1-2-5 steps) */
    int diagonal;       /* 1: draw y = x, dashed, across the range the axes
                           share; when both axes are log or both linear they
                           get one common range and a square plot area, so
                           the line runs corner to corner */
    const ft_plot_series *series;
    int nseries;        /* at least 1 */
    int width, height;  /* largest size in pixels; 0: 800 x 600 (the plot
                           grows when a long legend needs it) */
} ft_plot;

/* Points that cannot be drawn are skipped, never an error: a NaN or
 * infinite coordinate, or a zero or negative value on a log axis.  The
 * plot says how many in a caption under the x axis (one line per kind);
 * ft_plot_count_skipped gives the total, for a warning. */

/* The SVG text of plot pl: a malloc'd NUL-terminated string the caller
 * frees, the same bytes for the same input whatever the locale.  Every
 * text (title, labels, names) is XML-escaped; bytes that are not valid
 * UTF-8 or not allowed in XML become '?'.  NULL on failure, with a
 * one-line message in err (errlen bytes, may be NULL/0): no series, a
 * negative point count, a series with points but no x or y array, a range
 * too wide for double arithmetic, or out of memory. */
char *ft_plot_svg(const ft_plot *pl, char *err, size_t errlen);

/* Write plot pl (ft_plot_svg's text) to path atomically: a temporary file
 * beside it, then rename; a path that exists and is not a regular file
 * (/dev/null, a FIFO) is written in place.  0, or -1 with a one-line
 * message in err (errlen bytes) that names path: ft_plot_svg's errors, or
 * the OS error when the file cannot be written. */
int ft_plot_write_svg(const ft_plot *pl, const char *path, char *err, size_t errlen);

/* How many points of pl ft_plot_svg skips (see above); 0 when pl is NULL
 * or invalid. */
int ft_plot_count_skipped(const ft_plot *pl);

#ifdef __cplusplus
}
#endif

FT_API_END

#endif /* FT_PLOT_H */
