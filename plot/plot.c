/* plot.c - libfusetile_plot's drawing (fusetile/plot.h): SVG scatter and line plots on linear or log axes, their axes and ticks, grid, series, legend, and the atomic write; the text helpers are in text.c. */
#include "plot_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fusetile/io.h" /* ft_write_atomic */

#define PLOT_W 800          /* default size, pixels */
#define PLOT_H 600
#define MIN_PW 160          /* smallest plot area, pixels */
#define MIN_PH 120
#define CHAR_W 6.5          /* estimated width of a character at 12 px sans-serif */
#define LEGEND_ROW 20       /* pixels between legend entries */
#define LEGEND_CHARS 40     /* longest legend text shown, in characters */
#define LABEL_CHARS 40      /* longest point label shown */
#define LABEL_LINE 12       /* pixels between stacked point labels */
#define LABEL_TRIES 8       /* places tried for a point label before it overlaps anyway */
#define LABEL_AVOID_MAX 256 /* point labels of a series kept apart; later ones go at their points */
#define MARK_R 3.5          /* marker radius */
#define MAX_TICKS 256
#define TARGET_STEPS 5      /* linear axes: about this many steps */
#define LOG_MINOR_SPAN 12.0 /* log axes wider than this many decades: no 2..9 ticks */
#define DIAG_SAMPLES 64     /* y = x between a log and a linear axis: polyline points */

/* Okabe and Ito's colour-blind-safe palette, without the yellow (too pale
 * on white); the series after the seventh reuse it with hollow markers. */
static const char *const palette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                      "#E69F00", "#56B4E9", "#000000"};
#define NCOLOURS ((int)(sizeof palette / sizeof palette[0]))


/* ------------------------------------------------------------ axes */

typedef struct tick {
    double t;      /* position on the axis' scale: the value, or its log10 */
    double v;      /* the value */
    int major;     /* a power of ten or a linear step (tick_major: or labelled) */
    int mant;      /* log axes: 2..9 for a tick at mant * 10^k, else 0 */
    int labelled;
    char label[40];
} tick;

typedef struct axis {
    int log;
    double t0, t1; /* the range on the axis' scale */
    tick ticks[MAX_TICKS];
    int n;
    int prec;      /* significant digits of the labels */
} axis;

static void add_tick(axis *a, double t, double v, int major, int mant, int labelled)
{
    if (a->n >= MAX_TICKS)
        return;
    tick *k = &a->ticks[a->n++];
    memset(k, 0, sizeof *k);
    k->t = t;
    k->v = v;
    k->major = major;
    k->mant = mant;
    k->labelled = labelled;
}

static int labelled_count(const axis *a)
{
    int n = 0;
    for (int i = 0; i < a->n; i++)
        n += a->ticks[i].labelled;
    return n;
}

/* 1, 2 or 5 times a power of ten, near raw (> 0). */
static double nice_step(double raw)
{
    double mag = pow(10, floor(log10(raw)));
    double f = raw / mag;
    return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
}

/* Significant digits that tell ticks `step` apart up to |maxabs|. */
static int label_prec(double maxabs, double step)
{
    int p = 6;
    if (maxabs > 0 && step > 0) {
        double need = ceil(log10(maxabs / step)) + 2;
        if (need > p)
            p = need > 15 ? 15 : (int)need;
    }
    return p;
}

/* Linear axis over [lo, hi] (have = 0: no data, [0, 1]): padded when the
 * range is one value, widened to whole 1-2-5 steps.  -1 when the range
 * does not fit in doubles. */
static int axis_linear(axis *a, double lo, double hi, int have)
{
    if (!have) {
        lo = 0;
        hi = 1;
    }
    if (!(hi > lo)) {
        double d = fabs(lo) * 0.1;
        lo -= d;
        hi += d;
        if (!(hi > lo)) { /* zero, or too small to pad by a tenth */
            lo -= 1;
            hi += 1;
        }
    }
    double span = hi - lo;
    if (!isfinite(span))
        return -1;
    double step = nice_step(span / TARGET_STEPS);
    if (!(step > 0) || !isfinite(step))
        return -1;
    double k0 = floor(lo / step + 1e-9), k1 = ceil(hi / step - 1e-9);
    if (!(k1 - k0 >= 1 && k1 - k0 <= 100))
        return -1;
    a->t0 = k0 * step;
    a->t1 = k1 * step;
    if (!isfinite(a->t0) || !isfinite(a->t1))
        return -1;
    for (double k = k0; k <= k1; k++) {
        double v = k * step;
        if (fabs(v) < step * 1e-9)
            v = 0;
        add_tick(a, v, v, 1, 0, 1);
    }
    a->prec = label_prec(fmax(fabs(a->t0), fabs(a->t1)), step);
    return 0;
}

/* Label the 2..9 ticks of a log axis: only the 2s and 5s, or all. */
static void label_minors(axis *a, int only_2_5)
{
    for (int i = 0; i < a->n; i++) {
        tick *k = &a->ticks[i];
        if (k->mant && (!only_2_5 || k->mant == 2 || k->mant == 5))
            k->labelled = 1;
    }
}

/* A log axis spanning less than a 2-to-5 step: labelled 1-2-5 steps of
 * the values instead (10^t0 .. 10^t1), the other ticks kept unlabelled. */
static void log_linear_ticks(axis *a)
{
    double lo = pow(10, a->t0), hi = pow(10, a->t1);
    double step = nice_step((hi - lo) / 4);
    for (int i = 0; i < a->n; i++)
        a->ticks[i].labelled = 0;
    if (!(step > 0) || !isfinite(step))
        return;
    double k0 = ceil(lo / step), k1 = floor(hi / step);
    for (double k = k0; k <= k1 && k - k0 < 100; k++) {
        double v = k * step, t = log10(v);
        int found = 0;
        for (int i = 0; i < a->n && !found; i++)
            if (fabs(a->ticks[i].t - t) < 1e-12) {
                a->ticks[i].labelled = a->ticks[i].major = found = 1;
            }
        if (!found)
            add_tick(a, t, v, 1, 0, 1);
    }
    a->prec = label_prec(hi, step);
}

static int tick_cmp(const void *pa, const void *pb)
{
    double a = ((const tick *)pa)->t, b = ((const tick *)pb)->t;
    return (a > b) - (a < b);
}

/* Log axis over [lo, hi] (> 0; have = 0: no data, [1, 10]), padded by 4%
 * of its decades (a single value: half a decade each side).  Ticks at the
 * powers of ten (every s-th labelled past ten of them) and, up to
 * LOG_MINOR_SPAN decades, at 2..9 times them; fewer than three labels: the
 * 2s and 5s labelled too; still fewer than two: all the 2..9, then 1-2-5
 * steps of the values instead. */
static int axis_log(axis *a, double lo, double hi, int have)
{
    double L = have ? log10(lo) : 0, H = have ? log10(hi) : 1;
    if (H - L < 1e-9) {
        L -= 0.5;
        H += 0.5;
    } else {
        double pad = 0.04 * (H - L);
        L -= pad;
        H += pad;
    }
    a->t0 = L;
    a->t1 = H;
    a->prec = 6;
    double kmin = ceil(L - 1e-9), kmax = floor(H + 1e-9);
    int ndec = kmax >= kmin ? (int)(kmax - kmin) + 1 : 0;
    int stride = ndec > 10 ? (ndec + 7) / 8 : 1;
    for (double k = kmin; k <= kmax; k++) {
        int ki = (int)k;
        add_tick(a, k, pow(10, k), 1, 0, ((ki % stride) + stride) % stride == 0);
    }
    if (H - L <= LOG_MINOR_SPAN)
        for (double k = floor(L); k <= floor(H); k++)
            for (int m = 2; m <= 9; m++) {
                double t = k + log10(m);
                if (t >= L && t <= H)
                    add_tick(a, t, m * pow(10, k), 0, m, 0);
            }
    if (labelled_count(a) < 3)
        label_minors(a, 1);
    if (labelled_count(a) < 2)
        label_minors(a, 0);
    if (labelled_count(a) < 2)
        log_linear_ticks(a);
    qsort(a->ticks, (size_t)a->n, sizeof a->ticks[0], tick_cmp);
    return 0;
}

/* Set up axis a over the data range [lo, hi] and write its labels. */
static int axis_setup(axis *a, int log, double lo, double hi, int have)
{
    memset(a, 0, sizeof *a);
    a->log = log;
    int rc = log ? axis_log(a, lo, hi, have) : axis_linear(a, lo, hi, have);
    if (rc != 0)
        return rc;
    for (int i = 0; i < a->n; i++) {
        tick *k = &a->ticks[i];
        if (k->labelled)
            ft__plot_fmt_value(k->label, sizeof k->label, k->v, a->prec);
    }
    return 0;
}

/* Keep every s-th label of a so that labels `width` pixels wide fit in
 * `room` pixels; on a log axis with two labelled powers of ten or more,
 * first drop the labels of the 2..9 ticks. */
static void thin_labels(axis *a, double room, double width)
{
    int n = labelled_count(a), decades = 0;
    if (n < 2 || width * n <= room)
        return;
    for (int i = 0; i < a->n; i++)
        decades += a->ticks[i].labelled && !a->ticks[i].mant;
    if (decades >= 2 && decades < n) {
        for (int i = 0; i < a->n; i++)
            if (a->ticks[i].mant)
                a->ticks[i].labelled = 0;
        n = decades;
        if (width * n <= room)
            return;
    }
    int s = (int)ceil(width * n / room), j = 0;
    for (int i = 0; i < a->n; i++)
        if (a->ticks[i].labelled && j++ % s != 0)
            a->ticks[i].labelled = 0;
}

static double widest_label(const axis *a)
{
    int w = 0;
    for (int i = 0; i < a->n; i++)
        if (a->ticks[i].labelled) {
            int c = ft__plot_text_chars(a->ticks[i].label, 0);
            w = c > w ? c : w;
        }
    return w * CHAR_W;
}

/* Whether tick k gets a full grid line and a long tick mark. */
static int tick_major(const tick *k) { return k->major || k->labelled; }

static double to_scale(int log, double v) { return log ? log10(v) : v; }
static double from_scale(int log, double t) { return log ? pow(10, t) : t; }

/* ------------------------------------------------------------ data */

enum { PT_OK, PT_NONFINITE, PT_NONPOS };

/* Whether (x, y) can be drawn on the axes of pl. */
static int point_kind(const ft_plot *pl, double x, double y)
{
    if (!isfinite(x) || !isfinite(y))
        return PT_NONFINITE;
    if ((pl->xlog && x <= 0) || (pl->ylog && y <= 0))
        return PT_NONPOS;
    return PT_OK;
}

/* Error message text for series i. */
static const char *series_name(const ft_plot_series *s, int i, char *buf, size_t len)
{
    if (svg_nonempty(s->name))
        return s->name;
    snprintf(buf, len, "series %d", i + 1);
    return buf;
}

static int check_plot(const ft_plot *pl, char *err, size_t errlen)
{
    char nb[32];
    if (!pl || !pl->series || pl->nseries <= 0) {
        ft__plot_err(err, errlen, "plot: no series to draw");
        return -1;
    }
    for (int i = 0; i < pl->nseries; i++) {
        const ft_plot_series *s = &pl->series[i];
        if (s->n < 0) {
            ft__plot_err(err, errlen, "plot: series '%s' has a negative number of points (%d)",
                    series_name(s, i, nb, sizeof nb), s->n);
            return -1;
        }
        if (s->n > 0 && (!s->x || !s->y)) {
            ft__plot_err(err, errlen, "plot: series '%s' has %d points but no %s values",
                    series_name(s, i, nb, sizeof nb), s->n, !s->x ? "x" : "y");
            return -1;
        }
    }
    return 0;
}

/* Contract: fusetile/plot.h. */
int ft_plot_count_skipped(const ft_plot *pl)
{
    int skipped = 0;
    if (check_plot(pl, NULL, 0) != 0)
        return 0;
    for (int i = 0; i < pl->nseries; i++) {
        const ft_plot_series *s = &pl->series[i];
        for (int j = 0; j < s->n; j++)
            skipped += point_kind(pl, s->x[j], s->y[j]) != PT_OK;
    }
    return skipped;
}

/* A point's index and x, to sort a series for its polyline. */
typedef struct xorder {
    double x;
    int i;
} xorder;

static int xorder_cmp(const void *pa, const void *pb)
{
    const xorder *a = pa, *b = pb;
    if (a->x != b->x)
        return (a->x > b->x) - (a->x < b->x);
    return (a->i > b->i) - (a->i < b->i);
}

/* ------------------------------------------------------------ drawing */

/* The plot area and the mapping from the axes' scales to pixels. */
typedef struct frame {
    double left, top, pw, ph;
    const axis *ax, *ay;
} frame;

static double px(const frame *f, double t)
{
    return f->left + (t - f->ax->t0) / (f->ax->t1 - f->ax->t0) * f->pw;
}

static double py(const frame *f, double t)
{
    return f->top + f->ph - (t - f->ay->t0) / (f->ay->t1 - f->ay->t0) * f->ph;
}

static void draw_grid(svg_buf *b, const frame *f)
{
    ft__plot_puts(b, "<g class=\"grid\" fill=\"none\" stroke-width=\"1\">\n");
    for (int pass = 0; pass < 2; pass++) { /* minor lines first, under the major ones */
        const char *colour = pass ? "#d0d0d0" : "#ececec";
        for (int i = 0; i < f->ax->n; i++)
            if (tick_major(&f->ax->ticks[i]) == pass) {
                double x = px(f, f->ax->ticks[i].t);
                ft__plot_emit(b, "<line x1=\"%p\" y1=\"%p\" x2=\"%p\" y2=\"%p\" stroke=\"%s\"/>\n", x, f->top, x,
                     f->top + f->ph, colour);
            }
        for (int i = 0; i < f->ay->n; i++)
            if (tick_major(&f->ay->ticks[i]) == pass) {
                double y = py(f, f->ay->ticks[i].t);
                ft__plot_emit(b, "<line x1=\"%p\" y1=\"%p\" x2=\"%p\" y2=\"%p\" stroke=\"%s\"/>\n", f->left, y,
                     f->left + f->pw, y, colour);
            }
    }
    ft__plot_puts(b, "</g>\n");
}

/* y = x across the range both axes cover: a straight line when the axes
 * have the same kind, else sampled along x. */
static void draw_diagonal(svg_buf *b, const frame *f)
{
    const axis *ax = f->ax, *ay = f->ay;
    if (ax->log == ay->log) {
        double t0 = fmax(ax->t0, ay->t0), t1 = fmin(ax->t1, ay->t1);
        if (!(t1 > t0))
            return;
        ft__plot_emit(b, "<polyline class=\"diagonal\" fill=\"none\" stroke=\"#666666\" stroke-width=\"1\" "
                "stroke-dasharray=\"6 4\" points=\"%p,%p %p,%p\"/>\n",
             px(f, t0), py(f, t0), px(f, t1), py(f, t1));
        return;
    }
    double v0 = fmax(from_scale(ax->log, ax->t0), from_scale(ay->log, ay->t0));
    double v1 = fmin(from_scale(ax->log, ax->t1), from_scale(ay->log, ay->t1));
    if (!(v1 > v0) || v0 <= 0) /* the log axis needs positive values */
        return;
    double t0 = to_scale(ax->log, v0), t1 = to_scale(ax->log, v1);
    ft__plot_puts(b, "<polyline class=\"diagonal\" fill=\"none\" stroke=\"#666666\" stroke-width=\"1\" "
               "stroke-dasharray=\"6 4\" points=\"");
    for (int i = 0; i <= DIAG_SAMPLES; i++) {
        double t = t0 + (t1 - t0) * i / DIAG_SAMPLES;
        double v = from_scale(ax->log, t);
        ft__plot_emit(b, "%s%p,%p", i ? " " : "", px(f, t), py(f, to_scale(ay->log, v)));
    }
    ft__plot_puts(b, "\"/>\n");
}

static void draw_axes(svg_buf *b, const frame *f, const ft_plot *pl, double width)
{
    double bottom = f->top + f->ph;
    ft__plot_emit(b, "<rect class=\"frame\" x=\"%p\" y=\"%p\" width=\"%p\" height=\"%p\" fill=\"none\" "
            "stroke=\"#333333\" stroke-width=\"1\"/>\n",
         f->left, f->top, f->pw, f->ph);
    ft__plot_puts(b, "<g class=\"ticks\" stroke=\"#333333\" stroke-width=\"1\">\n");
    for (int i = 0; i < f->ax->n; i++) {
        double x = px(f, f->ax->ticks[i].t), len = tick_major(&f->ax->ticks[i]) ? 6 : 3;
        ft__plot_emit(b, "<line x1=\"%p\" y1=\"%p\" x2=\"%p\" y2=\"%p\"/>\n", x, bottom, x, bottom + len);
    }
    for (int i = 0; i < f->ay->n; i++) {
        double y = py(f, f->ay->ticks[i].t), len = tick_major(&f->ay->ticks[i]) ? 6 : 3;
        ft__plot_emit(b, "<line x1=\"%p\" y1=\"%p\" x2=\"%p\" y2=\"%p\"/>\n", f->left - len, y, f->left, y);
    }
    ft__plot_puts(b, "</g>\n<g class=\"ticklabels\" fill=\"#222222\">\n");
    for (int i = 0; i < f->ax->n; i++)
        if (f->ax->ticks[i].labelled)
            ft__plot_emit(b, "<text class=\"xtick\" x=\"%p\" y=\"%p\" text-anchor=\"middle\">%x</text>\n",
                 px(f, f->ax->ticks[i].t), bottom + 20, f->ax->ticks[i].label);
    for (int i = 0; i < f->ay->n; i++)
        if (f->ay->ticks[i].labelled)
            ft__plot_emit(b, "<text class=\"ytick\" x=\"%p\" y=\"%p\" text-anchor=\"end\">%x</text>\n", f->left - 9,
                 py(f, f->ay->ticks[i].t) + 4, f->ay->ticks[i].label);
    ft__plot_puts(b, "</g>\n");
    if (svg_nonempty(pl->title))
        ft__plot_emit(b, "<text class=\"title\" x=\"%p\" y=\"26\" text-anchor=\"middle\" font-size=\"16\" "
                "font-weight=\"bold\">%x</text>\n",
             width / 2, pl->title);
    if (svg_nonempty(pl->xlabel))
        ft__plot_emit(b, "<text class=\"xlabel\" x=\"%p\" y=\"%p\" text-anchor=\"middle\">%x</text>\n",
             f->left + f->pw / 2, bottom + 42, pl->xlabel);
    if (svg_nonempty(pl->ylabel)) {
        double x = 20, y = f->top + f->ph / 2;
        ft__plot_emit(b, "<text class=\"ylabel\" x=\"%p\" y=\"%p\" text-anchor=\"middle\" "
                "transform=\"rotate(-90 %p %p)\">%x</text>\n",
             x, y, x, y, pl->ylabel);
    }
}

static const char *series_colour(int i) { return palette[i % NCOLOURS]; }
static int series_hollow(int i) { return (i / NCOLOURS) % 2 == 1; }

/* The marker style attributes of series i. */
static void marker_style(svg_buf *b, int i)
{
    if (series_hollow(i))
        ft__plot_emit(b, "fill=\"#ffffff\" stroke=\"%s\" stroke-width=\"1.5\"", series_colour(i));
    else
        ft__plot_emit(b, "fill=\"%s\" stroke=\"#ffffff\" stroke-width=\"0.75\"", series_colour(i));
}

/* A point label's box: left edge x, baseline y, width w (one line of
 * LABEL_LINE pixels above the baseline). */
typedef struct lbox {
    double x, y, w;
} lbox;

static int lbox_overlap(const lbox *a, const lbox *b)
{
    return a->x < b->x + b->w && b->x < a->x + a->w && a->y > b->y - LABEL_LINE && b->y > a->y - LABEL_LINE;
}

/* Where label `at` goes beside the n labels already placed: at itself if
 * it overlaps none of them, else the first of LABEL_TRIES lines below and
 * above it, alternately, inside the plot area that overlaps none (at
 * itself when every try overlaps). */
static lbox label_place(const lbox *placed, int n, lbox at, const frame *f)
{
    for (int t = 0; t < LABEL_TRIES; t++) {
        lbox c = at; /* t = 0: at; then a line below, a line above, two below... */
        c.y += (t % 2 ? 1 : -1) * LABEL_LINE * ((t + 1) / 2);
        if (t > 0 && (c.y > f->top + f->ph || c.y - LABEL_LINE < f->top))
            continue;
        int clash = 0;
        for (int i = 0; i < n && !clash; i++)
            clash = lbox_overlap(&c, &placed[i]);
        if (!clash)
            return c;
    }
    return at;
}

/* Series i: its polyline, its markers with tooltips, its point labels.
 * -1 when out of memory. */
static int draw_series(svg_buf *b, const frame *f, const ft_plot *pl, int i)
{
    const ft_plot_series *s = &pl->series[i];
    const char *xname = svg_nonempty(pl->xlabel) ? pl->xlabel : "x";
    const char *yname = svg_nonempty(pl->ylabel) ? pl->ylabel : "y";
    char nb[32];
    const char *name = series_name(s, i, nb, sizeof nb);
    ft__plot_emit(b, "<g class=\"series\">\n");
    if (s->lines && s->n > 1) {
        xorder *o = malloc((size_t)s->n * sizeof *o);
        int n = 0;
        if (!o)
            return -1;
        for (int j = 0; j < s->n; j++)
            if (point_kind(pl, s->x[j], s->y[j]) == PT_OK)
                o[n++] = (xorder){s->x[j], j};
        qsort(o, (size_t)n, sizeof *o, xorder_cmp);
        if (n > 1) {
            ft__plot_emit(b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", series_colour(i));
            for (int j = 0; j < n; j++)
                ft__plot_emit(b, "%s%p,%p", j ? " " : "", px(f, to_scale(f->ax->log, o[j].x)),
                     py(f, to_scale(f->ay->log, s->y[o[j].i])));
            ft__plot_puts(b, "\"/>\n");
        }
        free(o);
    }
    ft__plot_puts(b, "<g ");
    marker_style(b, i);
    ft__plot_puts(b, ">\n");
    for (int j = 0; j < s->n && !(s->lines && s->line_only); j++) {
        if (point_kind(pl, s->x[j], s->y[j]) != PT_OK)
            continue;
        const char *label = s->labels && svg_nonempty(s->labels[j]) ? s->labels[j] : NULL;
        ft__plot_emit(b, "<circle cx=\"%p\" cy=\"%p\" r=\"%p\"><title>%x%s%x: %x = %v, %x = %v</title></circle>\n",
             px(f, to_scale(f->ax->log, s->x[j])), py(f, to_scale(f->ay->log, s->y[j])), MARK_R, name,
             label ? " " : "", label ? label : "", xname, s->x[j], yname, s->y[j]);
    }
    ft__plot_puts(b, "</g>\n");
    if (s->labels) {
        ft__plot_puts(b, "<g class=\"pointlabels\" font-size=\"10\" fill=\"#222222\">\n");
        lbox placed[LABEL_AVOID_MAX];
        int np = 0;
        for (int j = 0; j < s->n; j++) {
            if (!svg_nonempty(s->labels[j]) || point_kind(pl, s->x[j], s->y[j]) != PT_OK)
                continue;
            double x = px(f, to_scale(f->ax->log, s->x[j])), y = py(f, to_scale(f->ay->log, s->y[j]));
            double w = ft__plot_text_chars(s->labels[j], LABEL_CHARS) * CHAR_W * 10 / 12;
            int left = x + 5 + w > f->left + f->pw;
            lbox at = {left ? x - 5 - w : x + 5, y - 5 < f->top + 10 ? y + 14 : y - 5, w};
            if (np < LABEL_AVOID_MAX) {
                at = label_place(placed, np, at, f);
                placed[np++] = at;
            }
            ft__plot_emit(b, "<text class=\"pointlabel\" x=\"%p\" y=\"%p\"%s>", left ? at.x + w : at.x, at.y,
                 left ? " text-anchor=\"end\"" : "");
            ft__plot_xml(b, s->labels[j], LABEL_CHARS);
            ft__plot_puts(b, "</text>\n");
        }
        ft__plot_puts(b, "</g>\n");
    }
    ft__plot_puts(b, "</g>\n");
    return 0;
}

/* Points of series s that can be drawn. */
static int shown_points(const ft_plot *pl, const ft_plot_series *s)
{
    int n = 0;
    for (int j = 0; j < s->n; j++)
        n += point_kind(pl, s->x[j], s->y[j]) == PT_OK;
    return n;
}

#define NO_POINTS " (no points)"

static void draw_legend(svg_buf *b, const ft_plot *pl, double x, double y)
{
    char nb[32];
    ft__plot_puts(b, "<g class=\"legend\">\n");
    for (int i = 0; i < pl->nseries; i++, y += LEGEND_ROW) {
        const ft_plot_series *s = &pl->series[i];
        if (s->lines)
            ft__plot_emit(b, "<line x1=\"%p\" y1=\"%p\" x2=\"%p\" y2=\"%p\" stroke=\"%s\" stroke-width=\"1.5\"/>\n",
                          x, y, x + 20, y, series_colour(i));
        if (!(s->lines && s->line_only)) {
            ft__plot_emit(b, "<circle cx=\"%p\" cy=\"%p\" r=\"%p\" ", x + 10, y, MARK_R + 0.5);
            marker_style(b, i);
            ft__plot_puts(b, "/>\n");
        }
        ft__plot_emit(b, "<text class=\"legend\" x=\"%p\" y=\"%p\">", x + 28, y + 4);
        ft__plot_xml(b, series_name(s, i, nb, sizeof nb), LEGEND_CHARS);
        if (shown_points(pl, s) == 0)
            ft__plot_puts(b, NO_POINTS);
        ft__plot_puts(b, "</text>\n");
    }
    ft__plot_puts(b, "</g>\n");
}

/* Contract: fusetile/plot.h. */
char *ft_plot_svg(const ft_plot *pl, char *err, size_t errlen)
{
    char nb[32];
    if (check_plot(pl, err, errlen) != 0)
        return NULL;

    /* the data's ranges and the points skipped */
    int nonfinite = 0, nonpos = 0, have = 0, total = 0;
    double xlo = 0, xhi = 0, ylo = 0, yhi = 0;
    for (int i = 0; i < pl->nseries; i++) {
        const ft_plot_series *s = &pl->series[i];
        total += s->n;
        for (int j = 0; j < s->n; j++) {
            double x = s->x[j], y = s->y[j];
            int kind = point_kind(pl, x, y);
            nonfinite += kind == PT_NONFINITE;
            nonpos += kind == PT_NONPOS;
            if (kind != PT_OK)
                continue;
            if (!have || x < xlo) xlo = x;
            if (!have || x > xhi) xhi = x;
            if (!have || y < ylo) ylo = y;
            if (!have || y > yhi) yhi = y;
            have = 1;
        }
    }
    int shared = pl->diagonal && !pl->xlog == !pl->ylog;
    if (shared && have) {
        xlo = ylo = fmin(xlo, ylo);
        xhi = yhi = fmax(xhi, yhi);
    }

    axis *axes = malloc(2 * sizeof *axes);
    if (!axes) {
        ft__plot_err(err, errlen, "plot: out of memory");
        return NULL;
    }
    axis *ax = &axes[0], *ay = &axes[1];
    int bad_x = axis_setup(ax, !!pl->xlog, xlo, xhi, have) != 0;
    if (bad_x || axis_setup(ay, !!pl->ylog, ylo, yhi, have) != 0) {
        ft__plot_err(err, errlen, "plot: the %s values span too wide a range to plot (%.6g to %.6g)",
                bad_x ? "x" : "y", bad_x ? xlo : ylo, bad_x ? xhi : yhi);
        free(axes);
        return NULL;
    }

    /* the captions under the x axis */
    char caption[3][96];
    int ncap = 0;
    if (nonpos)
        snprintf(caption[ncap++], sizeof caption[0], "%d point%s not shown: zero or negative on a log axis",
                 nonpos, nonpos == 1 ? "" : "s");
    if (nonfinite)
        snprintf(caption[ncap++], sizeof caption[0], "%d point%s not shown: NaN or infinite", nonfinite,
                 nonfinite == 1 ? "" : "s");
    if (total == 0)
        snprintf(caption[ncap++], sizeof caption[0], "no points to show");

    /* layout: title, y label and tick labels, plot area, legend */
    int legend_chars = 0;
    for (int i = 0; i < pl->nseries; i++) {
        const ft_plot_series *s = &pl->series[i];
        int c = ft__plot_text_chars(series_name(s, i, nb, sizeof nb), LEGEND_CHARS);
        if (shown_points(pl, s) == 0)
            c += (int)strlen(NO_POINTS);
        legend_chars = c > legend_chars ? c : legend_chars;
    }
    double width = pl->width > 0 ? pl->width : PLOT_W, height = pl->height > 0 ? pl->height : PLOT_H;
    double top = svg_nonempty(pl->title) ? 44 : 16;
    double left = 14 + (svg_nonempty(pl->ylabel) ? 24 : 0) + widest_label(ay) + 10;
    double bottom = 8 + 18 + (svg_nonempty(pl->xlabel) ? 24 : 0) + ncap * 16 + 10;
    double right = 20 + 28 + legend_chars * CHAR_W + 12;
    double pw = fmax(width - left - right, MIN_PW), ph = fmax(height - top - bottom, MIN_PH);
    if (shared)
        pw = ph = fmin(pw, ph);
    width = left + pw + right;
    height = fmax(top + ph + bottom, top + 8 + pl->nseries * LEGEND_ROW + 10);
    thin_labels(ax, pw, widest_label(ax) + 12);
    thin_labels(ay, ph, 20);
    frame f = {left, top, pw, ph, ax, ay};

    svg_buf b = {0};
    ft__plot_emit(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
             "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%p\" height=\"%p\" viewBox=\"0 0 %p %p\" "
             "font-family=\"sans-serif\" font-size=\"12\">\n",
         width, height, width, height);
    if (svg_nonempty(pl->title))
        ft__plot_emit(&b, "<title>%x</title>\n", pl->title);
    ft__plot_puts(&b, "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n");
    draw_grid(&b, &f);
    if (pl->diagonal)
        draw_diagonal(&b, &f);
    draw_axes(&b, &f, pl, width);
    int rc = 0;
    for (int i = 0; i < pl->nseries && rc == 0; i++)
        rc = draw_series(&b, &f, pl, i);
    draw_legend(&b, pl, left + pw + 20, top + 8);
    for (int i = 0; i < ncap; i++)
        ft__plot_emit(&b, "<text class=\"caption\" x=\"%p\" y=\"%p\" fill=\"#555555\">%x</text>\n", left,
             top + ph + 26 + (svg_nonempty(pl->xlabel) ? 24 : 0) + 16 * (i + 1), caption[i]);
    ft__plot_puts(&b, "</svg>\n");
    free(axes);
    if (rc != 0 || b.bad) {
        free(b.p);
        ft__plot_err(err, errlen, "plot: out of memory");
        return NULL;
    }
    return b.p;
}

/* Contract: fusetile/plot.h. */
int ft_plot_write_svg(const ft_plot *pl, const char *path, char *err, size_t errlen)
{
    ft_status st;
    if (!svg_nonempty(path)) {
        ft__plot_err(err, errlen, "plot: no output file named");
        return -1;
    }
    char *text = ft_plot_svg(pl, err, errlen);
    if (!text)
        return -1;
    int rc = ft_write_atomic(text, path, &st);
    free(text);
    if (rc != FT_OK) {
        ft__plot_err(err, errlen, "%s", st.msg);
        return -1;
    }
    return 0;
}
