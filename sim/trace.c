/* trace.c - the simulator's trace sinks (trace.h): opening and closing the files, names, the replay's step numbering and the window; the formats are in trace_json.c and trace_vcd.c.
 *
 * Every file is written through the safe writer (fusetile/io.h: a
 * temporary file beside it) as events arrive and renamed into place by
 * ft_trace_close; traces/README.md documents the formats.  Spans
 * come subgraph by subgraph, so a span's step in the whole replay is its
 * step in the subgraph plus the steps of the subgraphs before it.  With a
 * window, an occupancy change waits for the next span (the first of its
 * step) to learn whether its step is in the window; the window's first
 * step thus starts with its occupancy and, in the VCD, its subgraph and
 * step.
 */
#include "trace_int.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* Longest name of a subgraph span before it is cut with a count. */
#define SG_NAME_MAX 160

/* Merge slots of the default detail: one per track (trace_int.h). */
enum { SLOT_STEP, SLOT_LOAD, SLOT_WRITE, SLOT_UNIT0 };

/* Replay steps between two checks of the trace's size. */
#define SIZE_CHECK_STEPS 4096

/* The size warning extrapolates once this fraction (1/N) of the steps is done. */
#define SIZE_EXTRAPOLATE_AFTER 32

/* ------------------------------------------------------------ helpers */

/* Contract: trace_int.h. */
void ft__trace_fail(ft_trace *t, const char *fmt, ...)
{
    va_list ap;
    if (t->failed)
        return;
    t->failed = 1;
    va_start(ap, fmt);
    vsnprintf(t->msg, sizeof t->msg, fmt, ap);
    va_end(ap);
}

/* Contract: trace_int.h. */
const char *ft__trace_name(const ft_trace *t)
{
    return t->has_json ? t->c.out.o.path : t->v.out.o.path;
}

/* Contract: trace_int.h. */
const char *ft__trace_kind_word(ft_trace_kind k)
{
    switch (k) {
    case FT_TRACE_STEP:
        return "step";
    case FT_TRACE_LOAD:
        return "load";
    case FT_TRACE_WRITE:
        return "write";
    case FT_TRACE_COMPUTE:
        return "compute";
    case FT_TRACE_SUBGRAPH:
        return "subgraph";
    }
    return "?";
}

/* Contract: trace_int.h. */
const char *ft__trace_sg_label(const ft_trace *t, int sg)
{
    return t->labels && sg >= 0 && sg < t->nlabels ? t->labels[sg] : NULL;
}

/* Contract: trace_int.h. */
const char *ft__trace_tensor_name(const ft_trace *t, int x)
{
    return t->tensor_names && x >= 0 && x < t->ntensor_names ? t->tensor_names[x] : NULL;
}

/* ------------------------------------------------------------ open, close */

static void trace_free(ft_trace *t)
{
    ft__tfile_discard(&t->c.out);
    ft__tfile_discard(&t->v.out);
    ft__tfile_discard(&t->gtkw);
    ft__tfile_discard(&t->xlate);
    ft__json_free(&t->c);
    free(t->slot);
    free(t->pw);
    ft__vcd_free(&t->v);
    free(t->target);
    for (int i = 0; t->labels && i < t->nlabels; i++)
        free(t->labels[i]);
    free(t->labels);
    for (int i = 0; t->tensor_names && i < t->ntensor_names; i++)
        free(t->tensor_names[i]);
    free(t->tensor_names);
    for (int i = 0; i < t->nsg; i++) {
        ft_free(t->sg_names[i]); /* ft_subgraph_source_label's */
        free(t->sg_sched[i]);
    }
    free(t->sg_names);
    free(t->sg_sched);
    free(t->ops);
    free(t->op_off);
    free(t);
}

/* Contract: trace.h. */
void ft_trace_config_init(ft_trace_config *c)
{
    memset(c, 0, sizeof *c);
    c->units = 1;
}

/* Whether two optional paths name the same file (the same text). */
static int same(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

/* Contract: trace.h. */
int ft_trace_open_config(ft_trace **out, const ft_trace_config *c, char *err, size_t errlen)
{
    int rc;
    *out = NULL;
    ft__trace_put_err(err, errlen, "%s", "");
    if (same(c->json_path, c->vcd_path) || same(c->json_path, c->gtkw_path) || same(c->vcd_path, c->gtkw_path)) {
        const char *p = same(c->json_path, c->vcd_path) || same(c->json_path, c->gtkw_path) ? c->json_path : c->vcd_path;
        ft__trace_put_err(err, errlen, "%s: two of the trace files (JSON, VCD, GTKWave save file) would be the same file", p);
        return FT_EINPUT;
    }
    if (c->gtkw_path && !c->vcd_path) {
        ft__trace_put_err(err, errlen, "%s: a GTKWave save file needs a VCD", c->gtkw_path);
        return FT_EINPUT;
    }
    if (c->units < 1 || c->units > FT_TRACE_MAX_UNITS) {
        ft__trace_put_err(err, errlen, "trace: units %d is out of range (1 to %d)", c->units, FT_TRACE_MAX_UNITS);
        return FT_EINPUT;
    }
    if (!(c->clock_hz >= 0) || !isfinite(c->clock_hz)) {
        ft__trace_put_err(err, errlen, "trace: clock_hz %g must be a finite number, 0 or more", c->clock_hz);
        return FT_EINPUT;
    }
    if (c->detail != FT_TRACE_DETAIL_WAVES && c->detail != FT_TRACE_DETAIL_STEPS) {
        ft__trace_put_err(err, errlen, "trace: detail %d is not one of %d (waves) and %d (steps)", c->detail,
                          FT_TRACE_DETAIL_WAVES, FT_TRACE_DETAIL_STEPS);
        return FT_EINPUT;
    }
    if (c->window_first < 0 || c->window_count < 0 || c->window_count > INT64_MAX - c->window_first) {
        ft__trace_put_err(err, errlen, "trace: window of %" PRId64 " steps from step %" PRId64 " is out of range",
                          c->window_count, c->window_first);
        return FT_EINPUT;
    }
    ft_trace *t = calloc(1, sizeof *t);
    if (!t) {
        ft__trace_put_err(err, errlen, "trace: out of memory");
        return FT_ENOMEM;
    }
    t->target = ft__trace_strdup(c->target ? c->target : "fusetile");
    t->capacity = c->capacity;
    t->clock_hz = c->clock_hz;
    t->us_per_unit = c->clock_hz > 0 ? 1e6 / c->clock_hz : 1;
    t->units = c->units;
    t->duplex = c->duplex != 0;
    t->cur_sg = -1;
    t->windowed = c->window_count > 0;
    t->win_first = c->window_first;
    t->win_count = c->window_count;
    t->waves = c->detail == FT_TRACE_DETAIL_WAVES && !t->windowed;
    t->nslot = SLOT_UNIT0 + t->units;
    t->slot = calloc((size_t)t->nslot, sizeof *t->slot);
    t->per_len = 1;
    t->span_len = 1;
    t->warn_bytes = c->warn_bytes ? c->warn_bytes : FT_TRACE_WARN_BYTES;
    t->power = c->power != 0;
    if (!t->target || !t->slot) {
        free(t->slot);
        free(t->target);
        free(t);
        ft__trace_put_err(err, errlen, "trace: out of memory");
        return FT_ENOMEM;
    }
    if (c->json_path) {
        if ((rc = ft__tfile_open(&t->c.out, c->json_path, err, errlen)) != FT_OK)
            goto fail;
        t->has_json = 1;
    }
    if (c->vcd_path) {
        if ((rc = ft__tfile_open(&t->v.out, c->vcd_path, err, errlen)) != FT_OK)
            goto fail;
        t->has_vcd = 1;
        if (ft__vcd_init(t) != FT_OK) {
            ft__trace_put_err(err, errlen, "%s: out of memory", c->vcd_path);
            rc = FT_ENOMEM;
            goto fail;
        }
    }
    if (c->gtkw_path) {
        if ((rc = ft__tfile_open(&t->gtkw, c->gtkw_path, err, errlen)) != FT_OK)
            goto fail;
        t->has_gtkw = 1;
        char *xp = ft_trace_translate_path(c->gtkw_path);
        if (!xp) {
            ft__trace_put_err(err, errlen, "%s: out of memory", c->gtkw_path);
            rc = FT_ENOMEM;
            goto fail;
        }
        if (same(xp, c->json_path) || same(xp, c->vcd_path)) {
            ft__trace_put_err(err, errlen, "%s: the trace would overwrite it with the GTKWave translate file", xp);
            free(xp);
            rc = FT_EINPUT;
            goto fail;
        }
        rc = ft__tfile_open(&t->xlate, xp, err, errlen);
        free(xp);
        if (rc != FT_OK)
            goto fail;
        t->has_xlate = 1;
    }
    if (t->has_json)
        ft__json_begin(t);
    if (t->failed) {
        ft__trace_put_err(err, errlen, "%s", t->msg);
        rc = FT_ENOMEM;
        goto fail;
    }
    *out = t;
    return FT_OK;
fail:
    trace_free(t);
    return rc;
}

/* Contract: trace.h. */
int ft_trace_open(ft_trace **out, const char *json_path, const char *vcd_path, const char *target, double capacity,
                  char *err, size_t errlen)
{
    ft_trace_config c;
    ft_trace_config_init(&c);
    c.json_path = json_path;
    c.vcd_path = vcd_path;
    c.target = target;
    c.capacity = capacity;
    return ft_trace_open_config(out, &c, err, errlen);
}

/* Contract: trace.h. */
char *ft_trace_gtkw_path(const char *vcd_path)
{
    size_t n = strlen(vcd_path);
    if (n >= 4 && strcmp(vcd_path + n - 4, ".vcd") == 0)
        n -= 4;
    char *s = malloc(n + 6);
    if (s) {
        memcpy(s, vcd_path, n);
        memcpy(s + n, ".gtkw", 6);
    }
    return s;
}

/* Contract: trace.h. */
char *ft_trace_translate_path(const char *gtkw_path)
{
    static const char ext[] = ".subgraphs.txt";
    size_t n = strlen(gtkw_path);
    if (n >= 5 && strcmp(gtkw_path + n - 5, ".gtkw") == 0)
        n -= 5;
    char *s = malloc(n + sizeof ext);
    if (s) {
        memcpy(s, gtkw_path, n);
        memcpy(s + n, ext, sizeof ext);
    }
    return s;
}

/* Contract: trace.h. */
void ft_trace_expect_steps(ft_trace *t, int64_t steps)
{
    if (!t || steps <= 0)
        return;
    t->expect_steps = steps;
    t->per_len = (steps + FT_TRACE_COUNTER_SAMPLES - 1) / FT_TRACE_COUNTER_SAMPLES;
    if (t->per_len < 1)
        t->per_len = 1;
    t->span_len = (steps + FT_TRACE_WAVE_SPANS - 1) / FT_TRACE_WAVE_SPANS;
    if (t->span_len < 1)
        t->span_len = 1;
}

/* ------------------------------------------------------------ names */

/* Contract: trace.h. */
int ft_trace_set_names(ft_trace *t, const ft_problem *p, const ft_schedule *s)
{
    if (!t || !p || !s)
        return FT_OK;
    if (t->started || t->labels || t->tensor_names || t->sg_names) {
        ft__trace_fail(t, "%s: ft_trace_set_names after the first event or twice", ft__trace_name(t));
        return FT_EINPUT;
    }
    int named = 0, tnamed = 0, nops = 0;
    for (int o = 0; o < p->nops; o++)
        named |= p->ops[o].name != NULL;
    for (int x = 0; x < p->ntensors; x++)
        tnamed |= p->tensors[x].name != NULL;
    if (named && s->nsubgraphs > 0) {
        if (!(t->labels = calloc((size_t)s->nsubgraphs, sizeof *t->labels)))
            goto oom;
        t->nlabels = s->nsubgraphs;
        for (int i = 0; i < s->nsubgraphs; i++)
            if (!(t->labels[i] = ft_subgraph_label(p, &s->sg[i])))
                goto oom;
    }
    if (tnamed) {
        if (!(t->tensor_names = calloc((size_t)p->ntensors, sizeof *t->tensor_names)))
            goto oom;
        t->ntensor_names = p->ntensors;
        for (int x = 0; x < p->ntensors; x++)
            if (p->tensors[x].name && !(t->tensor_names[x] = ft__trace_strdup(p->tensors[x].name)))
                goto oom;
    }
    for (int i = 0; i < s->nsubgraphs; i++)
        nops += s->sg[i].nops;
    t->sg_names = calloc((size_t)s->nsubgraphs + 1, sizeof *t->sg_names);
    t->sg_sched = calloc((size_t)s->nsubgraphs + 1, sizeof *t->sg_sched);
    t->op_off = calloc((size_t)s->nsubgraphs + 1, sizeof *t->op_off);
    t->ops = calloc((size_t)nops + 1, sizeof *t->ops);
    if (!t->sg_names || !t->sg_sched || !t->op_off || !t->ops)
        goto oom;
    t->nsg = s->nsubgraphs;
    for (int i = 0; i < s->nsubgraphs; i++) {
        const ft_subgraph *g = &s->sg[i];
        if (!(t->sg_names[i] = ft_subgraph_source_label(p, g, SG_NAME_MAX)) || (g->label && !(t->sg_sched[i] = ft__trace_strdup(g->label))))
            goto oom;
        t->op_off[i + 1] = t->op_off[i] + g->nops;
        if (g->nops > 0)
            memcpy(t->ops + t->op_off[i], g->ops, (size_t)g->nops * sizeof *g->ops);
    }
    return FT_OK;
oom:
    ft__trace_fail(t, "%s: out of memory", ft__trace_name(t));
    return FT_ENOMEM;
}

/* ------------------------------------------------------------ events */

/* Write an occupancy change (a repeated value is not). */
static void occupancy_out(ft_trace *t, double time, int64_t elems)
{
    if (t->have_occ && elems == t->last_occ)
        return;
    t->have_occ = 1;
    t->last_occ = elems;
    if (t->has_json)
        ft__json_counter(t, time, elems);
    if (t->has_vcd)
        ft__vcd_occupancy(t, time, elems);
    if (time > t->win_t1)
        t->win_t1 = time;
}

/* The replay step of span e (spans come subgraph by subgraph), or -1 with
 * t->failed set. */
static int64_t replay_step(ft_trace *t, const ft_trace_event *e)
{
    if (e->sg != t->cur_sg) {
        if (e->sg < t->cur_sg) {
            ft__trace_fail(t, "%s: %s span of subgraph %d after spans of subgraph %d (spans come subgraph by subgraph)",
                           ft__trace_name(t), ft__trace_kind_word(e->kind), e->sg, t->cur_sg);
            return -1;
        }
        if (t->cur_sg >= 0)
            t->sg_base += t->cur_steps;
        t->cur_sg = e->sg;
        t->cur_steps = 0;
    }
    if (e->step < 0) {
        ft__trace_fail(t, "%s: %s span (sg %d) has step %" PRId64, ft__trace_name(t), ft__trace_kind_word(e->kind),
                       e->sg, e->step);
        return -1;
    }
    if (e->step >= t->cur_steps)
        t->cur_steps = e->step + 1;
    return t->sg_base + e->step;
}

/* ------------------------------------------------------------ size warning */

/* Say on stderr, once, that file f is (final) or is bound to be about
 * `bytes` long, past the warning size, and how to trace less. */
static void size_warn(ft_trace *t, const tfile *f, double bytes, int final)
{
    char a[32], b[32];
    double mb[2] = {bytes / 1e6, (double)t->warn_bytes / 1e6};
    char *s[2] = {a, b};
    for (int i = 0; i < 2; i++)
        snprintf(s[i], sizeof a, mb[i] >= 10 ? "%.0f" : "%.3g", mb[i]);
    t->warned = 1;
    fprintf(stderr,
            "fusetile: warning: trace %s %s %s MB, past the warning size of %s MB (--trace-warn): Perfetto and GTKWave "
            "may not load it; trace part of the run with --window FIRST:COUNT%s\n",
            f->o.path, final ? "has" : "is on course for about", a, b,
            t->waves ? "" : " or leave out --detail steps (the default keeps a span per subgraph and per tile or run of tiles)");
}

/* Check the files' sizes at replay step g (every SIZE_CHECK_STEPS steps;
 * final: at close, the sizes as written). */
static void size_check(ft_trace *t, int64_t g, int final)
{
    if (t->warned || t->warn_bytes < 0 || (!final && g < t->warn_next))
        return;
    t->warn_next = g + SIZE_CHECK_STEPS;
    const tfile *f[2] = {t->has_json ? &t->c.out : NULL, t->has_vcd ? &t->v.out : NULL};
    for (int i = 0; i < 2; i++) {
        if (!f[i])
            continue;
        double have = (double)f[i]->bytes + (i == 1 && !final ? 12.0 * (double)t->v.npend : 0.0);
        double est = have;
        if (!final && !t->windowed && t->expect_steps > g && g > 0 && g * SIZE_EXTRAPOLATE_AFTER >= t->expect_steps)
            est = have * (double)t->expect_steps / (double)g;
        if (est > (double)t->warn_bytes) {
            size_warn(t, f[i], est, final || est == have);
            return;
        }
    }
}

/* ------------------------------------------------------------ the default detail */

/* Write the merged spans of slot m. */
static void merged_out(ft_trace *t, merged *m)
{
    if (!m->open)
        return;
    m->open = 0;
    if (t->has_vcd && ft__vcd_order(t, m->ev.kind, m->ev.unit, m->ev.start, &m->ev) != 0)
        return;
    if (m->ev.end > t->win_t1)
        t->win_t1 = m->ev.end;
    if (t->has_json && (m->ev.kind == FT_TRACE_STEP || m->ev.kind == FT_TRACE_COMPUTE))
        ft__json_merged(t, m);
    if (t->has_vcd)
        ft__vcd_span(t, &m->ev, m->first_g);
}

/* Write an occupancy change (a repeated value is not). */
static void occupancy_out(ft_trace *t, double time, int64_t elems);

/* Write the counters' samples of the current period and start the next. */
static void period_flush(ft_trace *t)
{
    period *p = &t->per;
    if (p->has_occ && !(t->have_occ && p->occ_max == t->last_occ) &&
        !(t->has_vcd && ft__vcd_order(t, -1, 0, p->occ_time, NULL) != 0))
        occupancy_out(t, p->occ_time, p->occ_max);
    if (p->has_span && t->has_json && !t->failed) {
        double d = p->t1 - p->t0;
        ft__json_busy(t, p->t0, d > 0 ? p->busy[0] / d : 0, d > 0 ? p->busy[1] / d : 0);
        t->busy_end = p->t1 > t->busy_end ? p->t1 : t->busy_end;
        t->busy_shown = 1;
    }
    p->has_occ = p->has_span = 0;
    p->busy[0] = p->busy[1] = 0;
}

/* Move the counters to the period of replay step g. */
static void period_at(ft_trace *t, int64_t g)
{
    int64_t i = g / t->per_len;
    if (i > t->per.index) {
        period_flush(t);
        t->per.index = i;
    }
}

/* Flush every slot (a subgraph ended, or the trace closes). */
static void slots_flush(ft_trace *t)
{
    for (int i = 0; i < t->nslot; i++)
        merged_out(t, &t->slot[i]);
}

/* A step, transfer or compute span in the default detail: merged into its
 * track's slot, counted in the period. */
static void waves_span(ft_trace *t, const ft_trace_event *e, int64_t g)
{
    size_check(t, g, 0);
    period_at(t, g);
    if (e->kind == FT_TRACE_LOAD || e->kind == FT_TRACE_WRITE) {
        period *p = &t->per;
        if (!p->has_span || e->start < p->t0)
            p->t0 = e->start;
        if (!p->has_span || e->end > p->t1)
            p->t1 = e->end;
        p->has_span = 1;
        p->busy[e->kind == FT_TRACE_WRITE] += e->end - e->start;
    }
    int si = e->kind == FT_TRACE_STEP ? SLOT_STEP : e->kind == FT_TRACE_LOAD ? SLOT_LOAD
             : e->kind == FT_TRACE_WRITE ? SLOT_WRITE : SLOT_UNIT0 + e->unit;
    merged *m = &t->slot[si];
    /* a new tile closes the span once it covers span_len steps (a compute
     * unit's span: its share of them, steps going to the units in turn) */
    int64_t covers = si >= SLOT_UNIT0 ? t->span_len * t->units : t->span_len;
    if (m->open && (m->ev.sg != e->sg || (e->tile != m->ev.tile && e->tile != m->last_tile && g - m->first_g >= covers)))
        merged_out(t, m);
    if (!m->open) {
        m->open = 1;
        m->ev = *e;
        m->ev.elems = 0;
        m->first_g = g;
        m->last_tile = e->tile;
        m->count = 0;
        m->busy = 0;
    }
    if (e->tile > m->last_tile)
        m->last_tile = e->tile;
    if (e->tile < m->ev.tile)
        m->ev.tile = e->tile;
    m->count++;
    m->busy += e->end - e->start;
    m->ev.elems += e->elems;
    if (e->end > m->ev.end)
        m->ev.end = e->end;
}

/* The earliest time a held slot or sample will be written at (+inf: none). */
static double waves_hold(const ft_trace *t)
{
    double h = HUGE_VAL;
    for (int i = 0; i < t->nslot; i++)
        if (t->slot[i].open && t->slot[i].ev.start < h)
            h = t->slot[i].ev.start;
    if (t->per.has_occ && t->per.occ_time < h)
        h = t->per.occ_time;
    return h;
}

/* A subgraph span: written when a step of it was, cut to the window. */
static void subgraph_span(ft_trace *t, const ft_trace_event *e)
{
    ft_trace_event c = *e;
    int clipped = 0;
    if (!t->has_json)
        return;
    if (t->windowed) {
        if (!t->win_open || e->sg != t->win_sg)
            return;
        if (c.start < t->win_t0)
            c.start = t->win_t0;
        if (c.end > t->win_t1)
            c.end = t->win_t1;
        if (c.end < c.start)
            c.end = c.start;
        clipped = c.start != e->start || c.end != e->end;
    }
    if (e->sg == t->cur_sg)
        ft__json_subgraph(t, &c, clipped, t->sg_base, t->cur_steps);
    else
        ft__json_subgraph(t, &c, clipped, 0, 0);
}

/* Contract: trace.h. */
void ft_trace_span(ft_trace *t, const ft_trace_event *e)
{
    if (!t || t->failed || !(t->has_json || t->has_vcd))
        return;
    t->started = 1;
    if (e->kind < FT_TRACE_STEP || e->kind > FT_TRACE_SUBGRAPH) {
        ft__trace_fail(t, "%s: span of unknown kind %d", ft__trace_name(t), (int)e->kind);
        return;
    }
    if (!(e->start >= 0) || !isfinite(e->end) || !(e->end >= e->start)) {
        ft__trace_fail(t, "%s: %s span (sg %d tile %" PRId64 " step %" PRId64 ") has start %.17g and end %.17g",
                       ft__trace_name(t), ft__trace_kind_word(e->kind), e->sg, e->tile, e->step, e->start, e->end);
        return;
    }
    if (e->kind == FT_TRACE_SUBGRAPH) {
        if (t->waves)
            slots_flush(t);
        subgraph_span(t, e);
        return;
    }
    if (e->kind == FT_TRACE_COMPUTE && (e->unit < 0 || e->unit >= t->units)) {
        ft__trace_fail(t, "%s: compute span (sg %d tile %" PRId64 " step %" PRId64 ") on unit %d of a trace with %d",
                       ft__trace_name(t), e->sg, e->tile, e->step, e->unit, t->units);
        return;
    }
    int64_t g = replay_step(t, e);
    if (g < 0)
        return;
    if (t->waves) {
        waves_span(t, e, g);
        return;
    }
    size_check(t, g, 0);
    if (t->has_vcd && ft__vcd_order(t, e->kind, e->unit, e->start, e) != 0)
        return;
    t->last_in = !t->windowed || (g >= t->win_first && g - t->win_first < t->win_count);
    if (!t->last_in) {
        t->pend_occ = 0; /* the change belonged to this step */
        return;
    }
    if (!t->win_open) {
        t->win_open = 1;
        t->win_t0 = t->win_t1 = t->pend_occ && t->pend_time < e->start ? t->pend_time : e->start;
        if (t->windowed && t->pend_occ && t->has_vcd)
            ft__vcd_position(t, t->pend_time, e->sg, g);
    }
    if (t->pend_occ) {
        t->pend_occ = 0;
        occupancy_out(t, t->pend_time, t->pend_elems);
    }
    t->win_sg = e->sg;
    if (e->end > t->win_t1)
        t->win_t1 = e->end;
    if (t->has_json)
        ft__json_span(t, e, g);
    if (t->has_vcd)
        ft__vcd_span(t, e, g);
}

/* Contract: trace.h. */
void ft_trace_occupancy(ft_trace *t, double time, int64_t elems)
{
    if (!t || t->failed || !(t->has_json || t->has_vcd))
        return;
    t->started = 1;
    if (!(time >= 0) || !isfinite(time) || elems < 0) {
        ft__trace_fail(t, "%s: occupancy %" PRId64 " at time %.17g is out of range", ft__trace_name(t), elems, time);
        return;
    }
    if (t->waves) {
        period *p = &t->per;
        period_at(t, t->sg_base + t->cur_steps);
        if (!p->has_occ || elems > p->occ_max)
            p->occ_max = elems;
        if (!p->has_occ)
            p->occ_time = time;
        p->has_occ = 1;
        t->raw_occ_seen = 1;
        t->raw_occ_time = time;
        t->raw_occ = elems;
        return;
    }
    if (t->has_vcd && ft__vcd_order(t, -1, 0, time, NULL) != 0)
        return;
    if (!t->windowed) {
        occupancy_out(t, time, elems);
        return;
    }
    t->pend_occ = 1;
    t->pend_time = time;
    t->pend_elems = elems;
}

/* Contract: trace.h. */
void ft_trace_sync(ft_trace *t, double time)
{
    if (!t || t->failed || !t->has_vcd)
        return;
    if (!(time >= 0) || !isfinite(time)) {
        ft__trace_fail(t, "%s: sync time %.17g is out of range", ft__trace_name(t), time);
        return;
    }
    if (t->waves) { /* what is held is written later at its own time */
        double h = waves_hold(t);
        if (time > h)
            time = h;
    }
    ft__vcd_sync(t, time);
}

/* Contract: trace.h. */
void ft_trace_power(ft_trace *t, double start, double end, double watts)
{
    if (!t || t->failed || !(t->has_json || t->has_vcd))
        return;
    if (!t->power) {
        ft__trace_fail(t, "%s: a power level without a power track (ft_trace_config.power is 0)", ft__trace_name(t));
        return;
    }
    double prev = t->npw ? t->pw[3 * t->npw - 2] : 0;
    if (!isfinite(start) || !isfinite(end) || !(start >= prev) || !(end >= start) || !isfinite(watts) || !(watts >= 0)) {
        ft__trace_fail(t, "%s: power level %.17g W from %.17g to %.17g is out of range or before the previous one's end %.17g",
                       ft__trace_name(t), watts, start, end, prev);
        return;
    }
    if (t->npw == t->pwcap) {
        size_t cap = t->pwcap ? 2 * t->pwcap : 64;
        double *n = realloc(t->pw, 3 * cap * sizeof *n);
        if (!n) {
            ft__trace_fail(t, "%s: out of memory", ft__trace_name(t));
            return;
        }
        t->pw = n;
        t->pwcap = cap;
    }
    double *l = &t->pw[3 * t->npw++];
    l[0] = start;
    l[1] = end;
    l[2] = watts;
}

/* Write the power track: each level cut to [lo, hi] (the run, or the
 * window), 0 W in the gaps between levels and after the last; a level equal
 * to the one before is not repeated. */
static void power_out(ft_trace *t, double lo, double hi)
{
    int shown = 0;
    double last = 0, at = lo;
    for (size_t i = 0; i < t->npw && !t->failed; i++) {
        double a = t->pw[3 * i] > lo ? t->pw[3 * i] : lo, b = t->pw[3 * i + 1] < hi ? t->pw[3 * i + 1] : hi;
        double w = t->pw[3 * i + 2];
        if (!(b > a))
            continue;
        if (shown && a > at && last != 0) { /* a gap: nothing drawn */
            if (t->has_json)
                ft__json_power(t, at, 0);
            if (t->has_vcd)
                ft__vcd_power(t, at, 0);
            last = 0;
        }
        if (!shown || w != last) {
            if (t->has_json)
                ft__json_power(t, a, w);
            if (t->has_vcd)
                ft__vcd_power(t, a, w);
        }
        shown = 1;
        last = w;
        at = b;
    }
    if (shown && last != 0 && !t->failed) {
        if (t->has_json)
            ft__json_power(t, at, 0);
        if (t->has_vcd)
            ft__vcd_power(t, at, 0);
    }
    t->v.hold = 0;
}

/* Contract: trace.h. */
int ft_trace_close(ft_trace *t, double end_time, char *err, size_t errlen)
{
    int rc = FT_OK;
    ft__trace_put_err(err, errlen, "%s", "");
    if (!t)
        return FT_OK;
    if (!t->failed && (t->has_json || t->has_vcd) && (!isfinite(end_time) || end_time < 0))
        ft__trace_fail(t, "%s: end time %.17g is out of range", ft__trace_name(t), end_time);
    if (t->waves && !t->failed && (t->has_json || t->has_vcd)) {
        slots_flush(t);
        period_flush(t);
        /* the latest occupancy (0 at the end of a replay) */
        if (!t->failed && t->raw_occ_seen && !(t->have_occ && t->raw_occ == t->last_occ) &&
            !(t->has_vcd && ft__vcd_order(t, -1, 0, t->raw_occ_time, NULL) != 0))
            occupancy_out(t, t->raw_occ_time, t->raw_occ);
        if (!t->failed && t->has_json && t->busy_shown) /* the channel idle after its last transfer */
            ft__json_busy(t, t->busy_end, 0, 0);
    }
    if (t->windowed && !t->failed) {
        /* the change at the replay's end belongs to its last step */
        if (t->pend_occ && t->last_in)
            occupancy_out(t, t->pend_time, t->pend_elems);
        if (t->win_open)
            end_time = t->win_t1;
    }
    if (t->power && !t->failed && (t->has_json || t->has_vcd) && (!t->windowed || t->win_open))
        power_out(t, t->windowed ? t->win_t0 : 0, end_time);
    if (!t->failed && t->has_vcd)
        ft__vcd_end(t, end_time);
    if (!t->failed && t->has_json)
        ft__json_end(t, end_time);
    if (!t->failed && t->has_gtkw)
        ft__vcd_gtkw(t);
    if (!t->failed && t->has_xlate)
        ft__vcd_translate(t);
    if (!t->failed)
        size_check(t, 0, 1);
    if (t->failed) {
        ft__trace_put_err(err, errlen, "%s", t->msg);
        rc = FT_EINPUT;
    }
    tfile *files[] = {&t->c.out, &t->v.out, &t->gtkw, &t->xlate};
    int has[] = {t->has_json, t->has_vcd, t->has_gtkw, t->has_xlate};
    for (int i = 0; i < 4 && rc == FT_OK; i++)
        if (has[i])
            rc = ft__tfile_close(files[i], err, errlen);
    for (int i = 0; i < 4 && rc == FT_OK; i++)
        if (has[i])
            rc = ft__tfile_commit(files[i], err, errlen);
    trace_free(t); /* removes whatever temporary is left */
    return rc;
}

/* Contract: trace.h. */
void ft_trace_abort(ft_trace *t)
{
    if (t)
        trace_free(t);
}
