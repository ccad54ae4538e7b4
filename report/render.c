/* render.c - the report's page from its JSON document: header and summary, the replay's timeline, the roofline (drawn by libfusetile_plot), the strategies side by side, the subgraphs' table, the sections kept for later analyses, then the data and the script that checks the page against it. */
#include "report_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fusetile/plot.h"

#define TL_WIDTH 1300      /* timeline, pixels */
#define TL_LEFT 130        /* room for the lanes' names */
#define TL_RIGHT 20
#define TL_LANE 28         /* a lane's height */
#define TL_GAP 8
#define TL_TICKS 8         /* about this many time ticks */
#define BAR_WIDTH 900      /* strategies' bars, pixels */
#define BAR_LEFT 110
#define BAR_ROW 26
#define ROOF_WIDTH 960     /* roofline, pixels */
#define ROOF_HEIGHT 560
#define ROOF_MARGIN 4.0    /* the roofline's x range reaches this factor past the points and the ridge */

/* ------------------------------------------------------------ reading */

/* Release text jansson allocated (json_dumps), through its allocator
 * (ft_set_allocator may have replaced it). */
static void jfree(void *ptr)
{
    json_free_t f = NULL;
    json_get_alloc_funcs(NULL, &f);
    if (ptr)
        (f ? f : free)(ptr);
}

static double jd(const json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *jstr(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* ------------------------------------------------------------ numbers */

/* A number for people: "7,862,262" from 10 000 up (rounded), else 4
 * significant digits; "-" for NaN. */
static void disp(rep_buf *b, double v)
{
    if (!isfinite(v)) {
        ft__rep_puts(b, "&#8211;");
        return;
    }
    if (fabs(v) < 1e4 || fabs(v) >= 1e18) {
        ft__rep_printf(b, "%.4g", v);
        return;
    }
    char digits[32], out[48];
    snprintf(digits, sizeof digits, "%.0f", fabs(v));
    size_t n = strlen(digits), o = 0;
    if (v < 0)
        out[o++] = '-';
    for (size_t i = 0; i < n; i++) {
        if (i && (n - i) % 3 == 0)
            out[o++] = ',';
        out[o++] = digits[i];
    }
    out[o] = '\0';
    ft__rep_puts(b, out);
}

/* A numeric cell: its exact value in data-v (sorting and the checks read
 * it), shown as disp() does. */
static void num_cell(rep_buf *b, const char *key, double v)
{
    ft__rep_printf(b, "<td class=\"num\" data-key=\"%s\" data-v=\"", key);
    ft__rep_num(b, v);
    ft__rep_puts(b, "\">");
    disp(b, v);
    ft__rep_puts(b, "</td>");
}

/* 1, 2 or 5 times a power of ten near raw (> 0). */
static double nice_step(double raw)
{
    double mag = pow(10, floor(log10(raw)));
    double f = raw / mag;
    return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
}

/* ------------------------------------------------------------ header */

static void header(rep_buf *b, const json_t *doc, const char *unit)
{
    const json_t *p = json_object_get(doc, "problem"), *t = json_object_get(doc, "target"),
                 *s = json_object_get(doc, "schedule");
    ft__rep_puts(b, "<header>\n<h1>fusetile report: ");
    ft__rep_html(b, jstr(p, "path"));
    ft__rep_puts(b, "</h1>\n<p class=\"meta\">problem <code>");
    ft__rep_html(b, jstr(p, "path"));
    ft__rep_printf(b, "</code> (%lld ops, %lld tensors) &middot; target ", (long long)jd(p, "ops"), (long long)jd(p, "tensors"));
    if (json_is_object(t)) {
        ft__rep_puts(b, "<code>");
        ft__rep_html(b, jstr(t, "name"));
        ft__rep_puts(b, "</code> (");
        ft__rep_html(b, jstr(t, "path"));
        ft__rep_puts(b, json_is_true(json_object_get(doc, "keep_costs")) ? "; base costs kept from the problem" : "");
        ft__rep_puts(b, ")");
    } else {
        ft__rep_puts(b, "none (the problem file's machine)");
    }
    ft__rep_puts(b, " &middot; schedule ");
    if (strcmp(jstr(s, "source"), "file") == 0) {
        ft__rep_puts(b, "<code>");
        ft__rep_html(b, jstr(s, "path") ? jstr(s, "path") : "(given)");
        ft__rep_puts(b, "</code>");
    } else {
        ft__rep_printf(b, "found by the search in %.3g s (limit %.15g s)", jd(s, "search_seconds"), jd(s, "time_limit"));
    }
    ft__rep_printf(b, " &middot; compute model %s &middot; times in %s &middot; fusetile %s</p>\n", jstr(doc, "compute_model"),
                   unit, jstr(doc, "fusetile"));
    if (json_is_object(t) && jstr(t, "description") && *jstr(t, "description")) {
        ft__rep_puts(b, "<p class=\"meta\">");
        ft__rep_html(b, jstr(t, "description"));
        ft__rep_puts(b, "</p>\n");
    }
    ft__rep_puts(b, "<p id=\"checks\" class=\"checks pending\">checks: not run (the page's script did not run)</p>\n"
                    "<ul id=\"check-list\"></ul>\n</header>\n");
}

static void card(rep_buf *b, const char *id, const char *what, double v, const char *note)
{
    ft__rep_printf(b, "<div><dt>%s</dt><dd id=\"%s\" data-v=\"", what, id);
    ft__rep_num(b, v);
    ft__rep_puts(b, "\">");
    disp(b, v);
    ft__rep_puts(b, note ? note : "");
    ft__rep_puts(b, "</dd></div>\n");
}

static void summary(rep_buf *b, const json_t *doc, const char *unit)
{
    char what[96], note[64];
    ft__rep_puts(b, "<section id=\"summary\">\n<h2>Summary</h2>\n<dl class=\"cards\">\n");
    snprintf(what, sizeof what, "total latency (%s)", unit);
    card(b, "sum-total", what, jd(doc, "total"), NULL);
    double sec = jd(doc, "total_seconds");
    if (isfinite(sec)) {
        ft__rep_printf(b, "<div><dt>total time (ms)</dt><dd>%.6g</dd></div>\n", sec * 1e3);
    }
    snprintf(what, sizeof what, "simulated total (%s)", unit);
    card(b, "sum-simulated", what, jd(json_object_get(doc, "simulation"), "total_simulated"), NULL);
    snprintf(what, sizeof what, "lower bound (%s)", unit);
    snprintf(note, sizeof note, " <small>(ratio %.4f)</small>", jd(doc, "ratio"));
    card(b, "sum-bound", what, jd(doc, "lower_bound"), note);
    card(b, "sum-subgraphs", "subgraphs", (double)json_array_size(json_object_get(doc, "subgraphs")), NULL);
    const json_t *e = json_object_get(doc, "energy");
    if (json_is_object(e)) { /* a target with an energy group */
        card(b, "sum-energy", "energy (J)", jd(e, "energy_j"), NULL);
        card(b, "sum-power", "average power (W)", jd(e, "power_w"), NULL);
    }
    ft__rep_puts(b, "</dl>\n</section>\n");
}

/* ------------------------------------------------------------ the table */

static void th(rep_buf *b, const char *key, const char *type, const char *name, const char *unit, const char *title)
{
    ft__rep_printf(b, "<th data-key=\"%s\" data-type=\"%s\" title=\"%s (click to sort)\">%s", key, type, title, name);
    if (unit)
        ft__rep_printf(b, "<br><span class=\"unit\">(%s)</span>", unit);
    ft__rep_puts(b, "</th>");
}

static void sg_table(rep_buf *b, const json_t *doc, const char *unit)
{
    const json_t *sgs = json_object_get(doc, "subgraphs");
    double spu = jd(doc, "seconds_per_unit"), total = jd(doc, "total");
    int real = isfinite(spu);
    const json_t *energy = json_object_get(doc, "energy");
    int joules = json_is_object(energy); /* a target with an energy group: two more columns */
    char work[64], rate[64];
    snprintf(work, sizeof work, "%s of compute per element", unit);
    snprintf(rate, sizeof rate, "%s of compute per %s", unit, strcmp(unit, "cycles") == 0 ? "cycle" : "cost unit");
    ft__rep_puts(b, "<section id=\"subgraphs\">\n<h2>Subgraphs</h2>\n<p class=\"note\">One row per subgraph in "
                    "schedule order, with every layer's name from the problem; click a column's header to sort. "
                    "Latencies are the exact cost model's (<code>fusetile evaluate</code>), simulated ones the "
                    "simulator's replay (<code>fusetile simulate</code>).</p>\n"
                    "<div class=\"scroll\"><table id=\"sg-table\" class=\"sortable\">\n<thead><tr>");
    th(b, "index", "num", "#", NULL, "subgraph index, in schedule order");
    th(b, "layers", "text", "layers", NULL, "the layers (ops) of the subgraph, by their names in the problem");
    th(b, "ops", "num", "ops", "count", "ops in the subgraph");
    th(b, "granularity", "num", "granularity", "w&#215;h&#215;k elements", "tile width, height and k-slice");
    th(b, "tiles", "num", "tiles", "count", "tiles of the subgraph's grid");
    th(b, "steps", "num", "steps", "count", "k-steps of all tiles");
    th(b, "latency", "num", "latency", unit, "the cost model's latency");
    if (real)
        th(b, "latency_us", "num", "latency", "&#181;s", "the latency at the target's clock");
    th(b, "share", "num", "share", "% of total", "the latency's share of the total");
    th(b, "simulated", "num", "simulated", unit, "the simulator's latency");
    th(b, "compute_time", "num", "compute", unit, "sum of the steps' compute times");
    th(b, "memory_time", "num", "memory", unit, "sum of the steps' memory times");
    th(b, "loaded", "num", "loaded", "elements", "elements loaded from slow memory");
    th(b, "written", "num", "written", "elements", "elements written to slow memory");
    th(b, "peak_working_set", "num", "peak working set", "elements", "largest working set of a step");
    th(b, "bound", "text", "bound", NULL, "compute: more compute-bound steps than memory-bound ones");
    th(b, "intensity", "num", "intensity", work, "arithmetic intensity: compute over elements moved");
    th(b, "throughput", "num", "throughput", rate, "compute over latency");
    if (joules) {
        th(b, "energy_j", "num", "energy", "J", "the energy model's joules (the target's energy group)");
        th(b, "power_w", "num", "power", "W", "average power: joules over the latency's seconds");
    }
    ft__rep_puts(b, "</tr></thead>\n<tbody>\n");
    size_t i;
    json_t *g;
    json_array_foreach(sgs, i, g) {
        ft__rep_printf(b, "<tr data-sg=\"%zu\">", i);
        num_cell(b, "index", (double)i);
        ft__rep_puts(b, "<td class=\"layers\" data-key=\"layers\">");
        size_t j;
        json_t *name;
        json_array_foreach(json_object_get(g, "layers"), j, name) {
            ft__rep_puts(b, j ? ", " : "");
            ft__rep_html_wrap(b, json_string_value(name), 1);
        }
        if (jstr(g, "group")) {
            ft__rep_puts(b, "<div class=\"group\">");
            ft__rep_html(b, jstr(g, "group"));
            ft__rep_puts(b, "</div>");
        }
        ft__rep_puts(b, "</td>");
        num_cell(b, "ops", (double)json_array_size(json_object_get(g, "ops")));
        const json_t *gr = json_object_get(g, "granularity");
        double w = json_number_value(json_array_get(gr, 0)), h = json_number_value(json_array_get(gr, 1)),
               k = json_number_value(json_array_get(gr, 2));
        ft__rep_puts(b, "<td class=\"num\" data-key=\"granularity\" data-v=\"");
        ft__rep_num(b, w * h * k);
        ft__rep_printf(b, "\">%.0f&#215;%.0f&#215;%.0f</td>", w, h, k);
        num_cell(b, "tiles", jd(g, "tiles"));
        num_cell(b, "steps", jd(g, "steps"));
        num_cell(b, "latency", jd(g, "latency"));
        if (real)
            num_cell(b, "latency_us", jd(g, "latency") * spu * 1e6);
        num_cell(b, "share", total > 0 ? 100 * jd(g, "latency") / total : NAN);
        num_cell(b, "simulated", jd(g, "simulated"));
        num_cell(b, "compute_time", jd(g, "compute_time"));
        num_cell(b, "memory_time", jd(g, "memory_time"));
        num_cell(b, "loaded", jd(g, "loaded"));
        num_cell(b, "written", jd(g, "written"));
        num_cell(b, "peak_working_set", jd(g, "peak_working_set"));
        ft__rep_printf(b, "<td class=\"bound %s\" data-key=\"bound\">%s</td>", jstr(g, "bound"), jstr(g, "bound"));
        num_cell(b, "intensity", jd(g, "intensity"));
        num_cell(b, "throughput", jd(g, "throughput"));
        if (joules) {
            num_cell(b, "energy_j", jd(g, "energy_j"));
            num_cell(b, "power_w", jd(g, "power_w"));
        }
        ft__rep_puts(b, "</tr>\n");
    }
    ft__rep_puts(b, "</tbody>\n<tfoot><tr><th colspan=\"6\" scope=\"row\">total</th>");
    num_cell(b, "latency", total);
    if (real)
        num_cell(b, "latency_us", total * spu * 1e6);
    num_cell(b, "share", 100);
    num_cell(b, "simulated", jd(json_object_get(doc, "simulation"), "total_simulated"));
    ft__rep_puts(b, "<td colspan=\"8\"></td>");
    if (joules) {
        num_cell(b, "energy_j", jd(energy, "energy_j"));
        num_cell(b, "power_w", jd(energy, "power_w"));
    }
    ft__rep_puts(b, "</tr></tfoot>\n</table></div>\n</section>\n");
}

/* ------------------------------------------------------------ roofline */

static int roofline(rep_buf *b, const json_t *doc, const char *unit, ft_status *st)
{
    const json_t *sgs = json_object_get(doc, "subgraphs"), *rf = json_object_get(doc, "roofline");
    size_t n = json_array_size(sgs);
    double *x = calloc(n + 1, sizeof *x), *y = calloc(n + 1, sizeof *y);
    char **names = calloc(n + 1, sizeof *names);
    char labels[FT_NUMBUF * 2];
    int rc = -1;
    if (!x || !y || !names)
        goto out;
    double croof = jd(rf, "compute_roof"), droof = jd(rf, "data_roof"), ridge = croof / droof;
    const char *per = strcmp(unit, "cycles") == 0 ? "cycle" : "cost unit";
    double lo = ridge, hi = ridge;
    for (size_t i = 0; i < n; i++) {
        const json_t *g = json_array_get(sgs, i);
        x[i] = jd(g, "intensity");
        y[i] = jd(g, "throughput");
        snprintf(labels, sizeof labels, "#%zu", i);
        if (!(names[i] = strdup(labels)))
            goto out;
        if (isfinite(x[i]) && x[i] > 0 && isfinite(y[i]) && y[i] > 0) {
            lo = fmin(lo, x[i]);
            hi = fmax(hi, x[i]);
        }
    }
    lo /= ROOF_MARGIN;
    hi *= ROOF_MARGIN;
    double rx[3] = {lo, ridge, hi}, ry[3] = {droof * lo, croof, croof};
    char xl[128], yl[128];
    snprintf(xl, sizeof xl, "arithmetic intensity (%s of compute per element moved)", unit);
    snprintf(yl, sizeof yl, "achieved throughput (%s of compute per %s)", unit,
             strcmp(unit, "cycles") == 0 ? "cycle" : "cost unit");
    ft_plot_series ser[2] = {
        {.name = "subgraphs (#index)", .x = x, .y = y, .labels = (const char *const *)names, .n = (int)n},
        {.name = "roof: compute units, bandwidth", .x = rx, .y = ry, .n = 3, .lines = 1, .line_only = 1},
    };
    ft_plot pl = {.xlabel = xl, .ylabel = yl, .xlog = 1, .ylog = 1, .series = ser, .nseries = 2, .width = ROOF_WIDTH,
                  .height = ROOF_HEIGHT};
    char err[256];
    char *svg = ft_plot_svg(&pl, err, sizeof err);
    if (!svg) {
        st->code = strstr(err, "memory") ? FT_ENOMEM : FT_EINPUT;
        snprintf(st->msg, sizeof st->msg, "roofline: %s", err);
        goto out;
    }
    const char *body = svg;
    if (strncmp(body, "<?xml", 5) == 0 && strchr(body, '\n'))
        body = strchr(body, '\n') + 1;   /* inline SVG takes no XML declaration */
    ft__rep_puts(b, "<section id=\"roofline\">\n<h2>Roofline</h2>\n<p class=\"note\">Each subgraph at its arithmetic "
                    "intensity (its compute, in time at the compute units' peak, over the elements it loads and "
                    "writes) and its achieved throughput (that compute over its latency), under the machine's roof: "
                    "its compute units and the fastest rate its memory moves data at. Points far under the roof "
                    "lose time to overheads (launch, latency, pipeline fill).");
    ft__rep_printf(b, " Here the roof is %.6g %s of compute per %s, the slope %.6g elements per %s (the ridge at "
                      "intensity %.6g).</p>\n<div id=\"roofline-chart\">\n",
                   croof, unit, per, droof, per, ridge);
    ft__rep_puts(b, body);
    ft__rep_puts(b, "</div>\n</section>\n");
    free(svg);
    rc = 0;
out:
    if (rc && st->code == FT_OK) {
        st->code = FT_ENOMEM;
        snprintf(st->msg, sizeof st->msg, "out of memory");
    }
    for (size_t i = 0; names && i < n; i++)
        free(names[i]);
    free(names);
    free(x);
    free(y);
    return rc;
}

/* ------------------------------------------------------------ timeline */

static void timeline(rep_buf *b, const json_t *doc, const char *unit)
{
    const json_t *sgs = json_object_get(doc, "subgraphs");
    double total = jd(json_object_get(doc, "simulation"), "total_simulated"), spu = jd(doc, "seconds_per_unit");
    int real = isfinite(spu);
    double pw = TL_WIDTH - TL_LEFT - TL_RIGHT, top = 10;
    double height = top + 3 * (TL_LANE + TL_GAP) + 40;
    double scale = total > 0 ? pw / total : 0;
    static const char *const lane[3] = {"subgraphs", "compute busy", "channel busy"};
    ft__rep_puts(b, "<section id=\"timeline\">\n<h2>Timeline of the replay</h2>\n<p class=\"note\">The simulator's "
                    "replay of the schedule (<code>fusetile simulate</code>): one span per subgraph, back to back, "
                    "orange when most of its steps are compute-bound, blue when memory-bound; below, the share of "
                    "each span the compute units and the slow-memory channel were busy. Hover a span for its "
                    "figures.</p>\n");
    ft__rep_printf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%.0f\" viewBox=\"0 0 %d %.0f\" "
                      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n",
                   TL_WIDTH, height, TL_WIDTH, height);
    for (int l = 0; l < 3; l++) {
        double ly = top + l * (TL_LANE + TL_GAP);
        ft__rep_printf(b, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", TL_LEFT - 8, ly + TL_LANE / 2.0 + 4,
                       lane[l]);
        ft__rep_printf(b, "<rect x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"#f3f3f3\"/>\n", TL_LEFT, ly, pw,
                       TL_LANE);
    }
    size_t i;
    json_t *g;
    json_array_foreach(sgs, i, g) {
        double s0 = jd(g, "start"), s1 = jd(g, "end");
        double x = TL_LEFT + s0 * scale, w = (s1 - s0) * scale;
        int compute = strcmp(jstr(g, "bound"), "compute") == 0;
        const char *fill = compute ? (i % 2 ? "#E69F00" : "#D55E00") : (i % 2 ? "#56B4E9" : "#0072B2");
        ft__rep_printf(b, "<rect class=\"span\" data-sg=\"%zu\" data-start=\"", i);
        ft__rep_num(b, s0);
        ft__rep_puts(b, "\" data-end=\"");
        ft__rep_num(b, s1);
        ft__rep_printf(b, "\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" fill=\"%s\"><title>#%zu ", x, top,
                       w > 0 ? w : 0, TL_LANE, fill, i);
        size_t j;
        json_t *name;
        json_array_foreach(json_object_get(g, "layers"), j, name) {
            ft__rep_puts(b, j ? ", " : "");
            ft__rep_html(b, json_string_value(name));
        }
        ft__rep_printf(b, "\n%s-bound; from %.10g to %.10g %s (simulated %.10g, cost model %.10g)</title></rect>\n",
                       jstr(g, "bound"), s0, s1, unit, jd(g, "simulated"), jd(g, "latency"));
        for (int l = 1; l < 3; l++) {
            double f = jd(g, l == 1 ? "compute_busy" : "channel_busy");
            f = isfinite(f) ? fmin(fmax(f, 0), 1) : 0;
            double ly = top + l * (TL_LANE + TL_GAP);
            ft__rep_printf(b, "<rect class=\"busy\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\">"
                              "<title>#%zu %s %.1f%%</title></rect>\n",
                           x, ly + TL_LANE * (1 - f), w > 0 ? w : 0, TL_LANE * f, l == 1 ? "#D55E00" : "#0072B2", i, lane[l],
                           100 * f);
        }
    }
    /* the time axis: ticks in microseconds on a real target, else in the cost unit */
    double axis_y = top + 3 * (TL_LANE + TL_GAP);
    double shown = real ? total * spu * 1e6 : total;
    ft__rep_printf(b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333333\"/>\n", TL_LEFT, axis_y,
                   TL_LEFT + pw, axis_y);
    if (shown > 0) {
        double step = nice_step(shown / TL_TICKS);
        for (int k = 0; k * step <= shown * (1 + 1e-12) && k <= 4 * TL_TICKS; k++) {
            double xx = TL_LEFT + pw * (k * step / shown);
            ft__rep_printf(b, "<line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" stroke=\"#333333\"/>"
                              "<text class=\"ttick\" x=\"%.2f\" y=\"%.1f\" text-anchor=\"middle\">%.6g</text>\n",
                           xx, axis_y, xx, axis_y + 5, xx, axis_y + 18, k * step);
        }
    }
    ft__rep_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">time (%s)</text>\n", TL_LEFT + pw / 2,
                   axis_y + 34, real ? "&#181;s" : unit);
    ft__rep_puts(b, "</svg>\n</section>\n");
}

/* ------------------------------------------------------------ strategies */

static void strategies(rep_buf *b, const json_t *doc, const char *unit)
{
    const json_t *rows = json_object_get(doc, "strategies"), *sch = json_object_get(doc, "schedule");
    int given = strcmp(jstr(sch, "source"), "file") == 0;
    double best = given ? jd(doc, "total") : INFINITY, worst = given ? jd(doc, "total") : 0;
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r) {
        if (json_is_true(json_object_get(r, "ok"))) {
            best = fmin(best, jd(r, "total"));
            worst = fmax(worst, jd(r, "total"));
        }
    }
    ft__rep_puts(b, "<section id=\"strategies\">\n<h2>Strategies side by side</h2>\n");
    if (json_array_size(rows) == 0) {
        ft__rep_puts(b, "<p class=\"na\">No strategies compared (--strategies none).</p>\n");
    } else {
        ft__rep_printf(b, "<p class=\"note\">This schedule beside fusetile's search and the classic grouping "
                          "strategies (<code>fusetile schedule --strategy NAME</code>), each run here for up to %.15g s "
                          "and scored by the same cost model.</p>\n",
                       jd(sch, "time_limit"));
    }
    ft__rep_printf(b, "<div class=\"scroll\"><table id=\"strategy-table\">\n<thead><tr><th>strategy</th><th>what groups "
                      "the ops</th><th>total<br><span class=\"unit\">(%s)</span></th><th>vs. best<br><span "
                      "class=\"unit\">(&#215;)</span></th><th>ratio to lower bound<br><span class=\"unit\">(&#215;)"
                      "</span></th><th>subgraphs<br><span class=\"unit\">(count)</span></th><th>wall time<br><span "
                      "class=\"unit\">(s)</span></th><th>note</th></tr></thead>\n<tbody>\n",
                   unit);
    double lb = jd(doc, "lower_bound");
    if (given) {
        ft__rep_puts(b, "<tr data-this=\"1\" class=\"this\"><td>this schedule</td><td><code>");
        ft__rep_html(b, jstr(sch, "path") ? jstr(sch, "path") : "(given)");
        ft__rep_puts(b, "</code></td>");
        num_cell(b, "total", jd(doc, "total"));
        num_cell(b, "vs_best", jd(doc, "total") / best);
        num_cell(b, "ratio", lb > 0 ? jd(doc, "total") / lb : NAN);
        num_cell(b, "subgraphs", jd(sch, "subgraphs"));
        ft__rep_puts(b, "<td></td><td>the schedule the report is about</td></tr>\n");
    }
    json_array_foreach(rows, i, r) {
        int ok = json_is_true(json_object_get(r, "ok"));
        int self = strcmp(jstr(r, "source"), "this schedule") == 0;
        ft__rep_printf(b, "<tr data-strategy=\"%zu\"%s><td>%s</td><td>", i, self ? " data-this=\"1\" class=\"this\"" : "",
                       jstr(r, "name"));
        ft__rep_html(b, jstr(r, "what"));
        ft__rep_puts(b, "</td>");
        num_cell(b, "total", ok ? jd(r, "total") : NAN);
        num_cell(b, "vs_best", ok ? jd(r, "total") / best : NAN);
        num_cell(b, "ratio", jd(r, "ratio"));
        num_cell(b, "subgraphs", ok ? jd(r, "subgraphs") : NAN);
        ft__rep_printf(b, "<td class=\"num\">%.3g</td><td>", jd(r, "seconds"));
        if (!ok) {
            ft__rep_puts(b, "failed: ");
            ft__rep_html(b, jstr(r, "message"));
        } else {
            ft__rep_puts(b, self ? "this schedule" : jd(r, "total") == best ? "best" : "");
            double slow = jd(r, "split_in_time");
            if (slow > 0)
                ft__rep_printf(b, "%s%.0f subgraphs split: not costed within the time limit (a longer "
                                  "--time-limit keeps the strategy's groups)",
                               self || jd(r, "total") == best ? "; " : "", slow);
        }
        ft__rep_puts(b, "</td></tr>\n");
    }
    ft__rep_puts(b, "</tbody></table></div>\n");
    /* bars: each total against the worst */
    size_t nbars = json_array_size(rows) + (given ? 1 : 0);
    if (nbars > 0 && worst > 0) {
        double pw = BAR_WIDTH - BAR_LEFT - 130;
        ft__rep_printf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"bars\" width=\"%d\" height=\"%zu\" "
                          "viewBox=\"0 0 %d %zu\" font-family=\"sans-serif\" font-size=\"12\">\n",
                       BAR_WIDTH, nbars * BAR_ROW + 10, BAR_WIDTH, nbars * BAR_ROW + 10);
        size_t row = 0;
        if (given) {
            double w = pw * jd(doc, "total") / worst;
            ft__rep_printf(b, "<text x=\"%d\" y=\"%zu\" text-anchor=\"end\">this schedule</text><rect x=\"%d\" y=\"%zu\" "
                              "width=\"%.2f\" height=\"16\" fill=\"#009E73\"/><text x=\"%.2f\" y=\"%zu\">",
                           BAR_LEFT - 8, 5 + row * BAR_ROW + 13, BAR_LEFT, 5 + row * BAR_ROW, w, BAR_LEFT + w + 6,
                           5 + row * BAR_ROW + 13);
            disp(b, jd(doc, "total"));
            ft__rep_puts(b, "</text>\n");
            row++;
        }
        json_array_foreach(rows, i, r) {
            int ok = json_is_true(json_object_get(r, "ok"));
            double w = ok ? pw * jd(r, "total") / worst : 0;
            int self = strcmp(jstr(r, "source"), "this schedule") == 0;
            ft__rep_printf(b, "<text x=\"%d\" y=\"%zu\" text-anchor=\"end\">%s</text><rect x=\"%d\" y=\"%zu\" width=\"%.2f\" "
                              "height=\"16\" fill=\"%s\"/><text x=\"%.2f\" y=\"%zu\">",
                           BAR_LEFT - 8, 5 + row * BAR_ROW + 13, jstr(r, "name"), BAR_LEFT, 5 + row * BAR_ROW, w,
                           self ? "#009E73" : "#999999", BAR_LEFT + w + 6, 5 + row * BAR_ROW + 13);
            if (ok)
                disp(b, jd(r, "total"));
            else
                ft__rep_puts(b, "failed");
            ft__rep_puts(b, "</text>\n");
            row++;
        }
        ft__rep_puts(b, "</svg>\n");
    }
    ft__rep_puts(b, "</section>\n");
}

/* ------------------------------------------------------------ later */

static void later_one(rep_buf *b, const json_t *doc, const char *key, const char *title)
{
    const json_t *d = json_object_get(doc, key);
    ft__rep_printf(b, "<h3>%s</h3>\n", title);
    if (!json_is_object(d) || json_object_size(d) == 0) {
        ft__rep_printf(b, "<p class=\"na\" data-later=\"%s\">not yet computed for this target</p>\n", key);
        return;
    }
    ft__rep_printf(b, "<table class=\"kv\" data-later=\"%s\"><tbody>\n", key);
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)d, k, v) {
        ft__rep_puts(b, "<tr><th>");
        ft__rep_html(b, k);
        ft__rep_puts(b, "</th><td>");
        char *text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
        ft__rep_html(b, text ? text : "");
        jfree(text);
        ft__rep_puts(b, "</td></tr>\n");
    }
    ft__rep_puts(b, "</tbody></table>\n");
}

static void later(rep_buf *b, const json_t *doc)
{
    ft__rep_puts(b, "<section id=\"later\">\n<h2>Later analyses</h2>\n");
    later_one(b, doc, "fusion_headroom", "Fusion headroom");
    later_one(b, doc, "energy", "Energy");
    ft__rep_puts(b, "</section>\n");
}

/* ------------------------------------------------------------ the page */

char *ft__rep_render(const json_t *doc, ft_status *st)
{
    rep_buf b = {0};
    const char *unit = jstr(doc, "time_unit");
    const json_t *p = json_object_get(doc, "problem"), *t = json_object_get(doc, "target");
    ft__rep_puts(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                     "<meta name=\"generator\" content=\"fusetile report\">\n<title>fusetile report: ");
    ft__rep_html(&b, jstr(p, "path"));
    if (json_is_object(t)) {
        ft__rep_puts(&b, " on ");
        ft__rep_html(&b, jstr(t, "name"));
    }
    ft__rep_puts(&b, "</title>\n<style>\n");
    ft__rep_puts(&b, ft__rep_css);
    ft__rep_puts(&b, "</style>\n</head>\n<body data-checks=\"pending\">\n");
    header(&b, doc, unit);
    /* the pictures first, then the table of every subgraph (long for a
     * whole model) */
    summary(&b, doc, unit);
    timeline(&b, doc, unit);
    if (roofline(&b, doc, unit, st)) {
        free(b.p);
        return NULL;
    }
    strategies(&b, doc, unit);
    sg_table(&b, doc, unit);
    later(&b, doc);
    /* the data: '/' escaped, so that no "</script>" can end the block early */
    char *json = json_dumps(doc, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_ESCAPE_SLASH | JSON_REAL_PRECISION(17));
    ft__rep_puts(&b, "<script type=\"application/json\" id=\"report-data\">");
    /* '<' only stands inside JSON strings: as \u003c no "</script" or
     * "<!--" there can change how the HTML parser reads the block */
    for (const char *q = json ? json : ""; *q; q++) {
        size_t n = strcspn(q, "<");
        char *run = strndup(q, n);
        ft__rep_puts(&b, run ? run : "");
        b.bad |= !run;
        free(run);
        q += n;
        if (!*q)
            break;
        ft__rep_puts(&b, "\\u003c");
    }
    ft__rep_puts(&b, "</script>\n<script>\n");
    ft__rep_puts(&b, ft__rep_js);
    ft__rep_puts(&b, "</script>\n</body>\n</html>\n");
    if (!json || b.bad) {
        jfree(json);
        free(b.p);
        st->code = FT_ENOMEM;
        snprintf(st->msg, sizeof st->msg, "out of memory");
        return NULL;
    }
    jfree(json);
    return b.p;
}
