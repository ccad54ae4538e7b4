/* test_svgplot.c - unit tests of the SVG plotter (libfusetile_plot, fusetile/plot.h): well-formed XML, tick placement on log and linear axes, escaping, skipped points, edge cases, determinism, atomic writes.
 *
 * The test links libfusetile_plot.a and calls only its public functions.
 * The axis rules (which ticks, which labels, how far the range is padded)
 * are checked on the SVG drawn for a plot whose x values span the range
 * under test: the labelled x ticks' texts, the tick marks (long for a
 * power of ten or a step, short for a 2..9 tick) and, from the labelled
 * ticks' pixel positions, the range the frame spans.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "fusetile/plot.h"
#include "ft_testutil.h"

/* What plot/plot.c draws, as the checks below need it: pixels between
 * stacked point labels and between legend rows, the characters of a
 * legend entry before its ellipsis, the points of y = x sampled between a
 * log and a linear axis, and the first two colours of its palette. */
#define LABEL_LINE 12
#define LEGEND_ROW 20
#define LEGEND_CHARS 40
#define DIAG_SAMPLES 64
static const char *const palette[] = {"#0072B2", "#D55E00"};

/* ------------------------------------------------------------ helpers */

/* Length of the UTF-8 sequence at s if it encodes a character XML allows
 * (tab, newline, carriage return, U+0020 and up, not a surrogate, U+FFFE
 * or U+FFFF), else 0. */
static size_t xml_char_len(const unsigned char *s)
{
    unsigned c = s[0];
    if (c < 0x80)
        return (c >= 0x20 || c == '\t' || c == '\n' || c == '\r') ? 1 : 0;
    if (c >= 0xC2 && c <= 0xDF)
        return (s[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        unsigned lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
        if (s[1] < lo || s[1] > hi || (s[2] & 0xC0) != 0x80)
            return 0;
        return c == 0xEF && s[1] == 0xBF && s[2] >= 0xBE ? 0 : 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        unsigned lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        if (s[1] < lo || s[1] > hi || (s[2] & 0xC0) != 0x80 || (s[3] & 0xC0) != 0x80)
            return 0;
        return 4;
    }
    return 0;
}

/* Whether s is well-formed XML as far as the plotter's output needs: the
 * XML declaration, then one root element; tags balanced, attribute values
 * quoted, entity references predefined or numeric, no '<' or stray '&' in
 * text or values, every byte part of a character XML allows.  NULL when
 * it is, else a message naming the offset. */
static const char *xml_check(const char *s)
{
    static char msg[160];
    char stack[64][64];
    int depth = 0, roots = 0;
    const char *p = s;
#define XML_BAD(what)                                                          \
    do {                                                                       \
        snprintf(msg, sizeof msg, "%s at offset %ld", what, (long)(p - s));   \
        return msg;                                                            \
    } while (0)

    for (const unsigned char *u = (const unsigned char *)s; *u;) {
        size_t n = xml_char_len(u);
        if (n == 0) {
            p = (const char *)u;
            XML_BAD("a byte that is not an XML character");
        }
        u += n;
    }
    if (strncmp(p, "<?xml ", 6) != 0)
        XML_BAD("no XML declaration");
    p = strstr(p, "?>");
    if (!p)
        XML_BAD("unterminated XML declaration");
    p += 2;
    while (*p) {
        if (*p == '&') {
            const char *semi = strchr(p, ';');
            size_t len = semi ? (size_t)(semi - p) : 0;
            if (!semi || len > 10)
                XML_BAD("unterminated entity reference");
            if (!((len == 4 && !strncmp(p, "&amp", 4)) || (len == 3 && !strncmp(p, "&lt", 3)) ||
                  (len == 3 && !strncmp(p, "&gt", 3)) || (len == 5 && !strncmp(p, "&quot", 5)) ||
                  (len == 5 && !strncmp(p, "&apos", 5)) || (len > 2 && p[1] == '#')))
                XML_BAD("unknown entity reference");
            p = semi + 1;
            continue;
        }
        if (*p != '<') {
            if (depth == 0 && !strchr(" \t\r\n", *p))
                XML_BAD("text outside the root element");
            p++;
            continue;
        }
        if (!strncmp(p, "<!--", 4)) {
            p = strstr(p, "-->");
            if (!p)
                XML_BAD("unterminated comment");
            p += 3;
            continue;
        }
        int closing = p[1] == '/';
        p += closing ? 2 : 1;
        const char *name = p;
        if (!(isalpha((unsigned char)*p) || *p == '_'))
            XML_BAD("a tag without a name");
        while (isalnum((unsigned char)*p) || strchr("_:.-", *p))
            p++;
        size_t nlen = (size_t)(p - name);
        if (nlen >= sizeof stack[0])
            XML_BAD("a tag name too long");
        if (closing) {
            while (*p == ' ')
                p++;
            if (*p != '>')
                XML_BAD("junk in a closing tag");
            p++;
            if (depth == 0 || strlen(stack[depth - 1]) != nlen || strncmp(stack[depth - 1], name, nlen))
                XML_BAD("a closing tag that does not match");
            depth--;
            continue;
        }
        for (;;) {
            int space = 0;
            while (strchr(" \t\r\n", *p) && *p) {
                p++;
                space = 1;
            }
            if (p[0] == '/' && p[1] == '>') {
                p += 2;
                roots += depth == 0;
                break;
            }
            if (*p == '>') {
                p++;
                if (depth == (int)(sizeof stack / sizeof stack[0]))
                    XML_BAD("elements nested too deep");
                roots += depth == 0;
                memcpy(stack[depth], name, nlen);
                stack[depth++][nlen] = '\0';
                break;
            }
            if (!space)
                XML_BAD("no space before an attribute");
            if (!(isalpha((unsigned char)*p) || *p == '_'))
                XML_BAD("a bad attribute name");
            while (isalnum((unsigned char)*p) || strchr("_:.-", *p))
                p++;
            if (*p++ != '=')
                XML_BAD("an attribute without '='");
            char q = *p++;
            if (q != '"' && q != '\'')
                XML_BAD("an unquoted attribute value");
            while (*p && *p != q) {
                if (*p == '<')
                    XML_BAD("'<' in an attribute value");
                if (*p == '&' && !(strchr(p, ';') && strchr(p, ';') - p <= 10))
                    XML_BAD("a stray '&' in an attribute value");
                p++;
            }
            if (*p++ != q)
                XML_BAD("an unterminated attribute value");
        }
    }
    if (depth != 0)
        XML_BAD("unclosed elements at the end");
    if (roots != 1)
        XML_BAD("not exactly one root element");
    return NULL;
#undef XML_BAD
}

#define assert_xml_ok(svg)                                                     \
    do {                                                                       \
        const char *xml_msg_ = xml_check(svg);                                 \
        if (xml_msg_)                                                          \
            fail_msg("not well-formed: %s", xml_msg_);                         \
    } while (0)

/* The texts of the <text class="cls" ...> elements of svg, in order,
 * joined by '|' into out. */
static const char *texts(const char *svg, const char *cls, char *out, size_t len)
{
    char key[64];
    size_t used = 0;
    snprintf(key, sizeof key, "<text class=\"%s\"", cls);
    out[0] = '\0';
    for (const char *p = strstr(svg, key); p; p = strstr(p + 1, key)) {
        const char *start = strchr(p, '>') + 1, *end = strstr(start, "</text>");
        int n = snprintf(out + used, len - used, "%s%.*s", used ? "|" : "", (int)(end - start), start);
        if (n < 0 || (size_t)n >= len - used)
            fail_msg("texts: buffer too small");
        used += (size_t)n;
    }
    return out;
}

static int count(const char *s, const char *what)
{
    int n = 0;
    for (const char *p = strstr(s, what); p; p = strstr(p + 1, what))
        n++;
    return n;
}

/* The x axis of a plot as drawn: the frame, every tick mark and the
 * labelled ticks, read back from the SVG. */
#define AXIS_MAX 256
typedef struct drawn_axis {
    int log;
    double left, top, width, height; /* the frame */
    int n;                           /* tick marks, in the order drawn */
    double px[AXIS_MAX], len[AXIS_MAX];
    int nlab;                        /* labelled ticks */
    double lab_px[AXIS_MAX];
    char labels[1024];               /* their texts, joined by '|' */
    double t0, t1;                   /* the range the frame spans, on the
                                        axis' scale (the value or its
                                        log10), from the first and last
                                        labelled ticks' positions */
} drawn_axis;

/* Draw a plot whose x values are lo and hi (have = 0: no points at all)
 * on a log or linear x axis, `width` pixels wide (0: the default), and
 * read its x axis into *a.  0, or -1 when ft_plot_svg refuses the plot. */
static int x_axis(int log, double lo, double hi, int have, int width, drawn_axis *a)
{
    const double x[] = {lo, hi}, y[] = {1, 1};
    ft_plot_series s = {"s", x, y, NULL, have ? (lo == hi ? 1 : 2) : 0, 0, 0};
    ft_plot pl = {NULL, NULL, NULL, log, 0, 0, &s, 1, width, 0};
    char err[256];
    memset(a, 0, sizeof *a);
    a->log = log;
    char *svg = ft_plot_svg(&pl, err, sizeof err);
    if (!svg)
        return -1;
    const char *fr = strstr(svg, "<rect class=\"frame\"");
    assert_non_null(fr);
    assert_int_equal(sscanf(fr, "<rect class=\"frame\" x=\"%lf\" y=\"%lf\" width=\"%lf\" height=\"%lf\"", &a->left,
                            &a->top, &a->width, &a->height),
                     4);
    /* tick marks: <line x1 y1 x2 y2/> in the ticks group; an x tick's
     * x1 equals its x2 */
    const char *g = strstr(svg, "<g class=\"ticks\"");
    assert_non_null(g);
    const char *end = strstr(g, "</g>");
    for (const char *p = strstr(g, "<line "); p && p < end; p = strstr(p + 1, "<line ")) {
        char x1[32], x2[32];
        double y1, y2;
        assert_int_equal(sscanf(p, "<line x1=\"%31[^\"]\" y1=\"%lf\" x2=\"%31[^\"]\" y2=\"%lf\"", x1, &y1, x2, &y2), 4);
        if (strcmp(x1, x2) != 0)
            continue; /* a y tick */
        assert_true(a->n < AXIS_MAX);
        a->px[a->n] = strtod(x1, NULL);
        a->len[a->n++] = y2 - y1;
    }
    /* labelled ticks: <text class="xtick" x="..." ...>LABEL</text> */
    size_t used = 0;
    for (const char *p = strstr(svg, "<text class=\"xtick\""); p; p = strstr(p + 1, "<text class=\"xtick\"")) {
        assert_true(a->nlab < AXIS_MAX);
        assert_int_equal(sscanf(p, "<text class=\"xtick\" x=\"%lf\"", &a->lab_px[a->nlab]), 1);
        const char *start = strchr(p, '>') + 1, *stop = strstr(start, "</text>");
        used += (size_t)snprintf(a->labels + used, sizeof a->labels - used, "%s%.*s", used ? "|" : "",
                                 (int)(stop - start), start);
        assert_true(used < sizeof a->labels);
        a->nlab++;
    }
    if (a->nlab >= 2) {
        const char *first = a->labels, *last = strrchr(a->labels, '|') + 1;
        double ta = strtod(first, NULL), tb = strtod(last, NULL);
        if (log) {
            ta = log10(ta);
            tb = log10(tb);
        }
        double per_px = (tb - ta) / (a->lab_px[a->nlab - 1] - a->lab_px[0]);
        a->t0 = ta + (a->left - a->lab_px[0]) * per_px;
        a->t1 = ta + (a->left + a->width - a->lab_px[0]) * per_px;
    }
    free(svg);
    return 0;
}

/* Tick i's position on the axis' scale. */
static double tick_t(const drawn_axis *a, int i)
{
    return a->t0 + (a->px[i] - a->left) / a->width * (a->t1 - a->t0);
}

/* Whether a has a short (2..9) tick at value v. */
static int has_minor_at(const drawn_axis *a, double v)
{
    for (int i = 0; i < a->n; i++)
        if (a->len[i] < 4.5 && fabs(tick_t(a, i) - log10(v)) < 1e-4)
            return 1;
    return 0;
}

/* Wide enough that no label is dropped for lack of room. */
#define WIDE 4000

/* Every data marker (a circle with a tooltip) lies inside the frame. */
static void assert_points_inside(const char *svg)
{
    double l, t, w, h;
    const char *fr = strstr(svg, "<rect class=\"frame\"");
    assert_non_null(fr);
    assert_int_equal(sscanf(fr, "<rect class=\"frame\" x=\"%lf\" y=\"%lf\" width=\"%lf\" height=\"%lf\"", &l, &t, &w, &h),
                     4);
    for (const char *p = strstr(svg, "<circle cx="); p; p = strstr(p + 1, "<circle cx=")) {
        double cx, cy;
        assert_int_equal(sscanf(p, "<circle cx=\"%lf\" cy=\"%lf\"", &cx, &cy), 2);
        if (!strstr(p, "<title>") || strstr(p, "<title>") > strchr(p, '>') + 1)
            continue; /* a legend marker */
        if (cx < l - 1e-6 || cx > l + w + 1e-6 || cy < t - 1e-6 || cy > t + h + 1e-6)
            fail_msg("marker (%g, %g) outside the frame %g,%g %gx%g", cx, cy, l, t, w, h);
    }
}

/* A fixture: a fresh temporary directory. */
typedef struct fixture {
    char dir[256];
    char path[512];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f || ftt_tmpdir(f->dir, sizeof f->dir, "ft-svgplot")) {
        free(f);
        return -1;
    }
    snprintf(f->path, sizeof f->path, "%s/plot.svg", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    int rc = ftt_rmtree(f->dir);
    free(f);
    return rc;
}

/* The validate-like sample: predicted against measured, two groups. */
static const double gemm_pred[] = {12.5, 40.1, 160.3, 640.9, 2600};
static const double gemm_meas[] = {20.2, 45.0, 150.2, 700.4, 2451};
static const char *const gemm_labels[] = {NULL, NULL, "1024^3", NULL, "bf16 4096"};
static const double pw_pred[] = {3.1, 8.2, 30.4, 120.7};
static const double pw_meas[] = {5.0, 9.9, 28.1, 111.0};

static ft_plot sample_plot(ft_plot_series *s)
{
    s[0] = (ft_plot_series){"gemm", gemm_pred, gemm_meas, gemm_labels, 5, 0, 0};
    s[1] = (ft_plot_series){"pointwise", pw_pred, pw_meas, NULL, 4, 0, 0};
    return (ft_plot){"Predicted against measured (H100)", "predicted (us)", "measured (us)", 1, 1, 1, s, 2, 0, 0};
}

/* ------------------------------------------------------------ tests */

/* The validate plot: well-formed, one tooltip per point, the diagonal,
 * the legend, the labels, the log axes sharing one range. */
static void test_svgplot_scatter_well_formed(void **state)
{
    (void)state;
    ft_plot_series s[2];
    ft_plot pl = sample_plot(s);
    char err[256] = "", buf[1024], buf2[1024];
    char *svg = ft_plot_svg(&pl, err, sizeof err);
    assert_non_null(svg);
    assert_xml_ok(svg);
    assert_int_equal(count(svg, "</circle>"), 9);
    assert_int_equal(count(svg, "class=\"diagonal\""), 1);
    assert_non_null(strstr(svg, "stroke-dasharray=\"6 4\""));
    assert_string_equal(texts(svg, "legend", buf, sizeof buf), "gemm|pointwise");
    assert_string_equal(texts(svg, "pointlabel", buf, sizeof buf), "1024^3|bf16 4096");
    assert_string_equal(texts(svg, "title", buf, sizeof buf), "Predicted against measured (H100)");
    assert_string_equal(texts(svg, "xlabel", buf, sizeof buf), "predicted (us)");
    assert_string_equal(texts(svg, "ylabel", buf, sizeof buf), "measured (us)");
    /* both axes: 3.1 .. 2600 padded, decades 10, 100, 1000 */
    assert_string_equal(texts(svg, "xtick", buf, sizeof buf), "10|100|1000");
    assert_string_equal(texts(svg, "ytick", buf2, sizeof buf2), "10|100|1000");
    assert_non_null(strstr(svg, "<title>gemm 1024^3: predicted (us) = 160.3, measured (us) = 150.2</title>"));
    assert_non_null(strstr(svg, "<title>pointwise: predicted (us) = 3.1, measured (us) = 5</title>"));
    assert_null(strstr(svg, "class=\"caption\""));
    assert_points_inside(svg);
    /* two colours, the first two of the palette */
    assert_non_null(strstr(svg, palette[0]));
    assert_non_null(strstr(svg, palette[1]));
    assert_int_equal(ft_plot_count_skipped(&pl), 0);
    free(svg);
}

/* Labels of points that coincide (validate's worst rows often do) are
 * stacked a line apart instead of drawn over each other: three labels at
 * one point get three baselines at least LABEL_LINE apart; a label of a
 * point elsewhere stays at its point. */
static void test_svgplot_labels_apart(void **state)
{
    (void)state;
    static const double x[] = {10, 10, 10, 1000, 1};
    static const double y[] = {12, 12, 12, 900, 1};
    static const char *const labels[] = {"gemm 128x128x128", "gemm 128x256x128", "gemm 256x256x128", "big", NULL};
    ft_plot_series s = {"gemm", x, y, labels, 5, 0, 0};
    ft_plot pl = {"labels", "x", "y", 1, 1, 1, &s, 1, 0, 0};
    char err[256] = "";
    char *svg = ft_plot_svg(&pl, err, sizeof err);
    assert_non_null(svg);
    assert_xml_ok(svg);
    double ys[4];
    int n = 0;
    for (const char *p = svg; (p = strstr(p, "<text class=\"pointlabel\"")) != NULL && n < 4; p++) {
        const char *q = strstr(p, " y=\"");
        assert_non_null(q);
        ys[n++] = strtod(q + 4, NULL);
    }
    assert_int_equal(n, 4);
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            assert_true(fabs(ys[i] - ys[j]) >= LABEL_LINE - 1e-9);
    /* the lone point's label stays 5 px above its marker */
    const char *t = strstr(svg, "x = 1000, y = 900</title>");
    assert_non_null(t);
    const char *c = t;
    while (c > svg && strncmp(c, "<circle ", 8) != 0)
        c--;
    const char *cy = strstr(c, " cy=\"");
    assert_true(cy && cy < t);
    assert_true(fabs(ys[3] - (strtod(cy + 5, NULL) - 5)) < 0.02);
    free(svg);
}

/* Log axes: decades inside the padded range labelled, 2..9 minor ticks;
 * wide ranges label every s-th decade and drop the minors; narrow ones
 * label 2s and 5s, or 1-2-5 steps of the values. */
static void test_svgplot_log_ticks(void **state)
{
    (void)state;
    drawn_axis a;
    assert_int_equal(x_axis(1, 3, 2000, 1, WIDE, &a), 0);
    assert_string_equal(a.labels, "10|100|1000");
    assert_true(a.t0 < log10(3) && a.t0 > 0);   /* 1 is outside */
    assert_true(a.t1 > log10(2000) && a.t1 < log10(3000));
    int minors = 0;
    for (int i = 0; i < a.n; i++) {
        minors += a.len[i] < 4.5;
        assert_true(a.px[i] >= a.left - 0.01 && a.px[i] <= a.left + a.width + 0.01);
        if (i)
            assert_true(a.px[i] > a.px[i - 1]);
    }
    assert_true(has_minor_at(&a, 3) && has_minor_at(&a, 2000));
    assert_int_equal(minors, 7 + 8 + 8 + 1); /* 3..9, 20..90, 200..900, 2000 */

    /* 1e-3 .. 1e9: 13 decades, every second one labelled, no minors */
    assert_int_equal(x_axis(1, 1e-3, 1e9, 1, WIDE, &a), 0);
    assert_string_equal(a.labels, "0.01|1|100|10000|1e6|1e8");
    assert_int_equal(a.n, 13);
    for (int i = 0; i < a.n; i++) {
        assert_true(a.len[i] > 4.5);
        assert_true(fabs(tick_t(&a, i) - round(tick_t(&a, i))) < 1e-4);
    }
    /* two powers of ten: the 2s and 5s too */
    assert_int_equal(x_axis(1, 16, 1024, 1, WIDE, &a), 0);
    assert_string_equal(a.labels, "20|50|100|200|500|1000");
    assert_int_equal(x_axis(1, 16, 1024, 1, 1, &a), 0); /* no room: back to the powers of ten */
    assert_string_equal(a.labels, "100|1000");
    /* less than a decade: the 2s and 5s */
    assert_int_equal(x_axis(1, 200, 600, 1, WIDE, &a), 0);
    assert_string_equal(a.labels, "200|500");
    /* no 2..9 tick inside: 1-2-5 steps of the values */
    assert_int_equal(x_axis(1, 120, 180, 1, WIDE, &a), 0);
    assert_string_equal(a.labels, "120|140|160|180");
    /* one value: half a decade each side (to the pixel positions' precision) */
    assert_int_equal(x_axis(1, 100, 100, 1, WIDE, &a), 0);
    assert_string_equal(a.labels, "50|100|200");
    assert_true(fabs(a.t0 - 1.5) < 1e-4);
    assert_true(fabs(a.t1 - 2.5) < 1e-4);
    /* tiny values: exponents without '+' or leading zeros */
    assert_int_equal(x_axis(1, 2e-9, 3e-6, 1, WIDE, &a), 0);
    assert_string_equal(a.labels, "1e-8|1e-7|1e-6");
}

/* Linear axes: 1-2-5 steps covering the data, labels free of binary
 * noise, "0" not "-0", equal values padded. */
static void test_svgplot_linear_ticks(void **state)
{
    (void)state;
    drawn_axis a;
    assert_int_equal(x_axis(0, 0.13, 0.87, 1, WIDE, &a), 0);
    assert_string_equal(a.labels, "0.1|0.2|0.3|0.4|0.5|0.6|0.7|0.8|0.9");
    assert_int_equal(x_axis(0, -3, 5, 1, WIDE, &a), 0);
    assert_string_equal(a.labels, "-4|-2|0|2|4|6");
    assert_int_equal(x_axis(0, 0, 7, 1, WIDE, &a), 0);
    assert_string_equal(a.labels, "0|1|2|3|4|5|6|7");
    assert_int_equal(x_axis(0, 7, 7, 1, WIDE, &a), 0); /* 6.3 .. 7.7 */
    assert_string_equal(a.labels, "6.2|6.4|6.6|6.8|7|7.2|7.4|7.6|7.8");
    assert_int_equal(x_axis(0, 0, 0, 1, WIDE, &a), 0); /* -1 .. 1 */
    assert_string_equal(a.labels, "-1|-0.5|0|0.5|1");
    assert_int_equal(x_axis(0, 0, 0, 0, WIDE, &a), 0); /* no data: 0 .. 1 */
    assert_string_equal(a.labels, "0|0.2|0.4|0.6|0.8|1");
    /* large offset, small span: enough digits to tell ticks apart */
    assert_int_equal(x_axis(0, 1000000.1, 1000000.5, 1, WIDE, &a), 0);
    assert_string_equal(a.labels, "1000000.1|1000000.2|1000000.3|1000000.4|1000000.5");
    assert_int_equal(x_axis(0, 2e6, 9e6, 1, WIDE, &a), 0);
    assert_string_equal(a.labels, "2e6|3e6|4e6|5e6|6e6|7e6|8e6|9e6");
    /* a range doubles cannot hold */
    assert_int_equal(x_axis(0, -1e308, 1e308, 1, WIDE, &a), -1);
}

/* Every text is escaped; bytes that are not XML characters become '?';
 * multibyte UTF-8 passes through. */
static void test_svgplot_escaping(void **state)
{
    (void)state;
    static const double x[] = {1, 2}, y[] = {3, 4};
    static const char *const labels[] = {"a&b <c>", "</text><script>alert(1)</script>"};
    ft_plot_series s[] = {{"a<b & \"c\" 'd'", x, y, labels, 2, 1, 0}, {"bad\x01\xff" "byte \xc3\xa9t\xc3\xa9 \xce\xbcs", x, y, NULL, 2, 0, 0}};
    ft_plot pl = {"<title> & \"quotes\"", "x <ms>", "y & z", 0, 0, 0, s, 2, 0, 0};
    char err[256] = "", buf[1024];
    char *svg = ft_plot_svg(&pl, err, sizeof err);
    assert_non_null(svg);
    assert_xml_ok(svg);
    assert_null(strstr(svg, "<script>"));
    assert_string_equal(texts(svg, "legend", buf, sizeof buf),
                        "a&lt;b &amp; &quot;c&quot; &#39;d&#39;|bad??byte \xc3\xa9t\xc3\xa9 \xce\xbcs");
    assert_string_equal(texts(svg, "pointlabel", buf, sizeof buf),
                        "a&amp;b &lt;c&gt;|&lt;/text&gt;&lt;script&gt;alert(1)&lt;/script&gt;");
    assert_string_equal(texts(svg, "title", buf, sizeof buf), "&lt;title&gt; &amp; &quot;quotes&quot;");
    assert_non_null(strstr(svg, "<title>&lt;title&gt; &amp; &quot;quotes&quot;</title>"));
    assert_string_equal(texts(svg, "xlabel", buf, sizeof buf), "x &lt;ms&gt;");
    assert_non_null(strstr(svg, "<title>a&lt;b &amp; &quot;c&quot; &#39;d&#39; a&amp;b &lt;c&gt;: x &lt;ms&gt; = 1, y &amp; z = 3</title>"));
    free(svg);

    /* a long legend name is cut at LEGEND_CHARS characters, never inside a
     * UTF-8 sequence */
    char longname[200] = "";
    for (int i = 0; i < 50; i++)
        strcat(longname, "\xce\xbc");
    ft_plot_series one = {longname, x, y, NULL, 2, 0, 0};
    ft_plot pl2 = {NULL, NULL, NULL, 0, 0, 0, &one, 1, 0, 0};
    svg = ft_plot_svg(&pl2, err, sizeof err);
    assert_non_null(svg);
    assert_xml_ok(svg);
    texts(svg, "legend", buf, sizeof buf);
    assert_int_equal(strlen(buf), 2 * LEGEND_CHARS + 3);
    assert_string_equal(buf + 2 * LEGEND_CHARS, "\xE2\x80\xA6");
    assert_null(strstr(svg, "class=\"title\"")); /* no title, no labels */
    assert_null(strstr(svg, "class=\"xlabel\""));
    free(svg);
}

/* Zero and negative values on a log axis and NaN or infinite ones are
 * skipped, counted and named in captions. */
static void test_svgplot_skips_points(void **state)
{
    (void)state;
    const double x[] = {1, 0, -5, NAN, 10, INFINITY, 100, 3};
    const double y[] = {2, 5, 5, 1, 20, 3, -1, 30};
    ft_plot_series s = {"g", x, y, NULL, 8, 1, 0};
    ft_plot pl = {"t", "x", "y", 1, 1, 0, &s, 1, 0, 0};
    char err[256] = "", buf[1024];
    assert_int_equal(ft_plot_count_skipped(&pl), 5);
    char *svg = ft_plot_svg(&pl, err, sizeof err);
    assert_non_null(svg);
    assert_xml_ok(svg);
    assert_string_equal(texts(svg, "caption", buf, sizeof buf),
                        "3 points not shown: zero or negative on a log axis|2 points not shown: NaN or infinite");
    assert_int_equal(count(svg, "</circle>"), 3);
    assert_null(strstr(svg, "nan"));
    assert_null(strstr(svg, "inf\""));
    assert_null(strstr(svg, "inf,"));
    assert_points_inside(svg);
    free(svg);

    /* the same points on linear axes: only NaN and inf skipped, one of each kind */
    pl.xlog = pl.ylog = 0;
    assert_int_equal(ft_plot_count_skipped(&pl), 2);
    svg = ft_plot_svg(&pl, err, sizeof err);
    assert_non_null(svg);
    assert_string_equal(texts(svg, "caption", buf, sizeof buf), "2 points not shown: NaN or infinite");
    assert_int_equal(count(svg, "</circle>"), 6);
    assert_points_inside(svg);
    free(svg);

    /* one skipped point: singular */
    const double x1[] = {1, 2}, y1[] = {0, 5};
    ft_plot_series s1 = {"g", x1, y1, NULL, 2, 0, 0};
    ft_plot pl1 = {NULL, NULL, NULL, 0, 1, 0, &s1, 1, 0, 0};
    svg = ft_plot_svg(&pl1, err, sizeof err);
    assert_non_null(svg);
    assert_string_equal(texts(svg, "caption", buf, sizeof buf), "1 point not shown: zero or negative on a log axis");
    free(svg);

    /* every point skipped: default axes, the legend says so */
    const double bad[] = {-1, 0};
    ft_plot_series s2 = {"none", bad, bad, NULL, 2, 1, 0};
    ft_plot pl2 = {NULL, NULL, NULL, 1, 1, 1, &s2, 1, 0, 0};
    svg = ft_plot_svg(&pl2, err, sizeof err);
    assert_non_null(svg);
    assert_xml_ok(svg);
    assert_string_equal(texts(svg, "legend", buf, sizeof buf), "none (no points)");
    assert_string_equal(texts(svg, "xtick", buf, sizeof buf), "1|2|5|10");
    assert_int_equal(count(svg, "</circle>"), 0);
    free(svg);
}

/* A series with line_only draws its polyline and a legend line, no
 * markers; lines off, line_only changes nothing. */
static void test_svgplot_line_only(void **state)
{
    (void)state;
    char err[256] = "", buf[1024];
    const double x[] = {1, 2, 4}, y[] = {1, 3, 3};
    ft_plot_series s[2] = {{"points", x, y, NULL, 3, 0, 0}, {"roof", x, y, NULL, 3, 1, 1}};
    ft_plot pl = {NULL, NULL, NULL, 1, 1, 0, s, 2, 0, 0};
    char *svg = ft_plot_svg(&pl, err, sizeof err);
    assert_non_null(svg);
    assert_xml_ok(svg);
    assert_int_equal(count(svg, "</circle>"), 3);        /* the first series' markers only */
    assert_int_equal(count(svg, "<circle"), 3 + 1);      /* and one legend marker */
    assert_int_equal(count(svg, "<polyline"), 1);
    assert_string_equal(texts(svg, "legend", buf, sizeof buf), "points|roof");
    free(svg);
    s[1].lines = 0; /* line_only needs lines */
    svg = ft_plot_svg(&pl, err, sizeof err);
    assert_non_null(svg);
    assert_int_equal(count(svg, "</circle>"), 6);
    assert_int_equal(count(svg, "<polyline"), 0);
    free(svg);
}

/* One point, all-equal values, empty series, many series: no crash, a
 * padded range, points inside the frame. */
static void test_svgplot_edge_cases(void **state)
{
    (void)state;
    char err[256] = "", buf[1024];
    const double one[] = {5};
    ft_plot_series s = {"one", one, one, NULL, 1, 1, 0};
    ft_plot pl = {NULL, NULL, NULL, 0, 0, 1, &s, 1, 0, 0};
    char *svg = ft_plot_svg(&pl, err, sizeof err);
    assert_non_null(svg);
    assert_xml_ok(svg);
    assert_int_equal(count(svg, "</circle>"), 1);
    assert_null(strstr(svg, "<polyline fill")); /* one point: no line */
    assert_points_inside(svg);
    free(svg);
    pl.xlog = pl.ylog = 1; /* one point, log axes */
    svg = ft_plot_svg(&pl, err, sizeof err);
    assert_non_null(svg);
    assert_xml_ok(svg);
    assert_points_inside(svg);
    free(svg);

    const double xs[] = {1, 2, 3}, ys[] = {7, 7, 7};
    ft_plot_series flat[] = {{"flat", xs, ys, NULL, 3, 1, 0}, {"empty", NULL, NULL, NULL, 0, 1, 0}};
    ft_plot pf = {"flat", NULL, NULL, 0, 0, 0, flat, 2, 0, 0};
    svg = ft_plot_svg(&pf, err, sizeof err);
    assert_non_null(svg);
    assert_xml_ok(svg);
    assert_string_equal(texts(svg, "ytick", buf, sizeof buf), "6.2|6.4|6.6|6.8|7|7.2|7.4|7.6|7.8");
    assert_string_equal(texts(svg, "legend", buf, sizeof buf), "flat|empty (no points)");
    assert_points_inside(svg);
    free(svg);

    ft_plot_series empty = {NULL, NULL, NULL, NULL, 0, 0, 0};
    ft_plot pe = {NULL, NULL, NULL, 1, 0, 0, &empty, 1, 0, 0};
    svg = ft_plot_svg(&pe, err, sizeof err);
    assert_non_null(svg);
    assert_xml_ok(svg);
    assert_string_equal(texts(svg, "legend", buf, sizeof buf), "series 1 (no points)");
    assert_string_equal(texts(svg, "caption", buf, sizeof buf), "no points to show");
    free(svg);

    /* twelve series: seven colours, then hollow markers; the legend fits */
    ft_plot_series many[12];
    char names[12][16];
    for (int i = 0; i < 12; i++) {
        snprintf(names[i], sizeof names[i], "g%d", i);
        many[i] = (ft_plot_series){names[i], xs, ys, NULL, 3, 0, 0};
    }
    ft_plot pm = {NULL, NULL, NULL, 0, 0, 0, many, 12, 300, 200};
    svg = ft_plot_svg(&pm, err, sizeof err);
    assert_non_null(svg);
    assert_xml_ok(svg);
    assert_int_equal(count(svg, "fill=\"#ffffff\" stroke=\"#0072B2\""), 2); /* series 8: its group and legend marker */
    double h;
    assert_int_equal(sscanf(strstr(svg, "height=\""), "height=\"%lf\"", &h), 1);
    assert_true(h >= 16 + 8 + 12 * LEGEND_ROW);
    free(svg);

    /* a log x axis and a linear y axis: y = x drawn as a sampled curve */
    const double px_[] = {1, 10, 100}, py_[] = {2, 20, 90};
    ft_plot_series ms = {"m", px_, py_, NULL, 3, 0, 0};
    ft_plot mixed = {NULL, NULL, NULL, 1, 0, 1, &ms, 1, 0, 0};
    svg = ft_plot_svg(&mixed, err, sizeof err);
    assert_non_null(svg);
    assert_xml_ok(svg);
    const char *d = strstr(svg, "class=\"diagonal\"");
    assert_non_null(d);
    d = strstr(d, "points=\"");
    assert_int_equal(count(d, ",") - count(strchr(d + 8, '"'), ","), DIAG_SAMPLES + 1);
    free(svg);
}

/* Bad plots: an error message, no output. */
static void test_svgplot_errors(void **state)
{
    (void)state;
    char err[256] = "";
    const double x[] = {1};
    ft_plot pl = {NULL, NULL, NULL, 0, 0, 0, NULL, 0, 0, 0};
    assert_null(ft_plot_svg(&pl, err, sizeof err));
    assert_string_equal(err, "plot: no series to draw");
    assert_null(ft_plot_svg(NULL, err, sizeof err));
    assert_string_equal(err, "plot: no series to draw");
    assert_null(ft_plot_svg(NULL, NULL, 0)); /* no room for a message */
    ft_plot_series s = {"gemm", x, NULL, NULL, 1, 0, 0};
    pl.series = &s;
    pl.nseries = 1;
    assert_null(ft_plot_svg(&pl, err, sizeof err));
    assert_string_equal(err, "plot: series 'gemm' has 1 points but no y values");
    assert_int_equal(ft_plot_count_skipped(&pl), 0);
    s.n = -2;
    assert_null(ft_plot_svg(&pl, err, sizeof err));
    assert_string_equal(err, "plot: series 'gemm' has a negative number of points (-2)");
    const double huge[] = {-1e308, 1e308};
    ft_plot_series h = {NULL, huge, huge, NULL, 2, 0, 0};
    pl.series = &h;
    assert_null(ft_plot_svg(&pl, err, sizeof err));
    assert_string_equal(err, "plot: the x values span too wide a range to plot (-1e+308 to 1e+308)");
    const double small[] = {1, 2};
    ft_plot_series h2 = {NULL, small, huge, NULL, 2, 0, 0};
    pl.series = &h2;
    assert_null(ft_plot_svg(&pl, err, sizeof err));
    assert_string_equal(err, "plot: the y values span too wide a range to plot (-1e+308 to 1e+308)");
}

/* A polyline joins a series' points in x order, ties in input order. */
static void test_svgplot_lines_in_x_order(void **state)
{
    (void)state;
    const double x[] = {4, 1, 3, 2, 3, 5}, y[] = {40, 10, 31, 20, 30, 50};
    ft_plot_series s = {"sweep", x, y, NULL, 6, 1, 0};
    ft_plot pl = {NULL, "tile", "latency", 0, 0, 0, &s, 1, 0, 0};
    char err[256] = "";
    char *svg = ft_plot_svg(&pl, err, sizeof err);
    assert_non_null(svg);
    assert_xml_ok(svg);
    const char *p = strstr(svg, "<polyline fill=\"none\"");
    assert_non_null(p);
    p = strstr(p, "points=\"") + 8;
    double px_prev = -1, ys[6];
    for (int i = 0; i < 6; i++) {
        double cx, cy;
        int used;
        assert_int_equal(sscanf(p, "%lf,%lf%n", &cx, &cy, &used), 2);
        assert_true(cx >= px_prev);
        px_prev = cx;
        ys[i] = cy;
        p += used;
    }
    assert_int_equal(*p, '"');
    assert_true(ys[2] < ys[3]); /* (3, 31) before (3, 30): pixel y grows downwards */
    free(svg);
}

/* The same plot gives the same bytes, also under a locale with a decimal
 * comma (when one is installed). */
static void test_svgplot_deterministic(void **state)
{
    (void)state;
    ft_plot_series s[2];
    ft_plot pl = sample_plot(s);
    pl.xlog = 0;
    char err[256] = "";
    char *a = ft_plot_svg(&pl, err, sizeof err), *b = ft_plot_svg(&pl, err, sizeof err);
    assert_non_null(a);
    assert_non_null(b);
    assert_string_equal(a, b);
    const char *locales[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8"};
    for (size_t i = 0; i < sizeof locales / sizeof locales[0]; i++)
        if (setlocale(LC_NUMERIC, locales[i])) {
            char *c = ft_plot_svg(&pl, err, sizeof err);
            setlocale(LC_NUMERIC, "C");
            assert_non_null(c);
            assert_string_equal(a, c);
            free(c);
            break;
        }
    free(a);
    free(b);
}

/* Writing: the file holds ft_plot_svg's text and nothing else is left in
 * the directory; an unwritable path gives -1 and a message naming it. */
static void test_svgplot_write_atomic(void **state)
{
    fixture *f = *state;
    ft_plot_series s[2];
    ft_plot pl = sample_plot(s);
    char err[512] = "", missing[600];
    assert_int_equal(ft_plot_write_svg(&pl, f->path, err, sizeof err), 0);
    char *want = ft_plot_svg(&pl, err, sizeof err);
    FILE *in = fopen(f->path, "rb");
    assert_non_null(in);
    size_t len = strlen(want);
    char *got = malloc(len + 2);
    assert_int_equal(fread(got, 1, len + 1, in), len);
    fclose(in);
    got[len] = '\0';
    assert_string_equal(got, want);
    free(got);
    free(want);
    DIR *d = opendir(f->dir);
    struct dirent *e;
    int files = 0;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            files++;
    closedir(d);
    assert_int_equal(files, 1);

    snprintf(missing, sizeof missing, "%s/no-such-dir/plot.svg", f->dir);
    assert_int_equal(ft_plot_write_svg(&pl, missing, err, sizeof err), -1);
    assert_non_null(strstr(err, missing));
    assert_non_null(strstr(err, strerror(ENOENT)));
    assert_null(strchr(err, '\n'));

    assert_int_equal(ft_plot_write_svg(&pl, f->dir, err, sizeof err), -1); /* a directory */
    assert_non_null(strstr(err, f->dir));
    struct stat sb;
    assert_int_equal(stat(f->dir, &sb), 0);
    assert_true(S_ISDIR(sb.st_mode));

    assert_int_equal(ft_plot_write_svg(&pl, "", err, sizeof err), -1);
    assert_string_equal(err, "plot: no output file named");
    pl.nseries = 0; /* a bad plot writes nothing */
    assert_int_equal(ft_plot_write_svg(&pl, missing, err, sizeof err), -1);
    assert_string_equal(err, "plot: no series to draw");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_svgplot_scatter_well_formed),
        cmocka_unit_test(test_svgplot_labels_apart),
        cmocka_unit_test(test_svgplot_log_ticks),
        cmocka_unit_test(test_svgplot_linear_ticks),
        cmocka_unit_test(test_svgplot_escaping),
        cmocka_unit_test(test_svgplot_skips_points),
        cmocka_unit_test(test_svgplot_edge_cases),
        cmocka_unit_test(test_svgplot_line_only),
        cmocka_unit_test(test_svgplot_errors),
        cmocka_unit_test(test_svgplot_lines_in_x_order),
        cmocka_unit_test(test_svgplot_deterministic),
        cmocka_unit_test_setup_teardown(test_svgplot_write_atomic, setup, teardown),
    };
    return cmocka_run_group_tests_name("svgplot", tests, NULL, NULL);
}
