/* trace_json.c - the Chrome trace JSON (Perfetto) of the trace writer: one thread per unit and channel, spans written as they arrive, names escaped.
 *
 * Every event is written when it arrives (the JSON array has no order
 * requirement).  Spans go to "lanes": a lane is one tid whose X events
 * never overlap.  Each kind has a home lane (subgraphs: subgraphs, steps:
 * controller, loads: slow-memory channel or read channel, compute: compute
 * engine or compute unit N).  On a shared channel writes share the
 * slow-memory channel until the first time a transfer overlaps another
 * there; from then on (and from the start with separate channels) writes go
 * to a "write channel" lane.  A span that fits no existing lane of its
 * family opens an overflow lane ("compute engine #2", ...), so the
 * per-thread non-overlap holds whatever the simulator does.  Fit is
 * first-fit on the lane's latest end time.
 */
#include "trace_int.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Lane families, in display order (sort index = family x 1e6 + unit x 1000
 * + lane number, families counted from 1). */
enum { FAM_SG, FAM_CTRL, FAM_CHAN, FAM_WCHAN, FAM_COMP, FAM_COUNT };

/* ------------------------------------------------------------ strings */

/* Write s as a JSON string (quotes included): ", \ and control characters
 * escaped, invalid UTF-8 replaced by U+FFFD so the file stays valid JSON. */
static void emit_string(tfile *tf, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    char esc[8];

    ft__tfile_write(tf, "\"", 1);
    while (*p) {
        const unsigned char *run = p;
        while (*p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\')
            p++;
        ft__tfile_write(tf, (const char *)run, (size_t)(p - run));
        if (!*p)
            break;
        unsigned c = *p;
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            ft__tfile_write(tf, esc, 2);
            p++;
        } else if (c < 0x20) {
            const char *named = c == '\n' ? "\\n" : c == '\t' ? "\\t" : c == '\r' ? "\\r" : c == '\b' ? "\\b"
                                : c == '\f' ? "\\f" : NULL;
            if (named)
                ft__tfile_puts(tf, named);
            else {
                snprintf(esc, sizeof esc, "\\u%04x", c);
                ft__tfile_puts(tf, esc);
            }
            p++;
        } else {
            /* a UTF-8 sequence: copy it if well-formed, else U+FFFD */
            int n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 0;
            int ok = n > 0;
            uint32_t cp = n == 4 ? c & 7u : n == 3 ? c & 15u : c & 31u;
            for (int i = 1; ok && i < n; i++) {
                if ((p[i] & 0xC0) != 0x80)
                    ok = 0;
                else
                    cp = (cp << 6) | (p[i] & 0x3Fu);
            }
            if (ok && ((n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
                       (n == 4 && (cp < 0x10000 || cp > 0x10FFFF))))
                ok = 0;
            if (ok) {
                ft__tfile_write(tf, (const char *)p, (size_t)n);
                p += n;
            } else {
                ft__tfile_puts(tf, "\\ufffd");
                p++;
            }
        }
    }
    ft__tfile_write(tf, "\"", 1);
}

static void sep(ft_trace *t)
{
    ft__tfile_puts(&t->c.out, t->c.nevents++ ? ",\n" : "\n");
}

/* ------------------------------------------------------------ lanes */

static void lane_meta(ft_trace *t, const lane *l)
{
    char name[64];
    int n;
    switch (l->fam) {
    case FAM_SG: n = snprintf(name, sizeof name, "subgraphs"); break;
    case FAM_CTRL: n = snprintf(name, sizeof name, "controller"); break;
    case FAM_CHAN: n = snprintf(name, sizeof name, t->duplex ? "read channel" : "slow-memory channel"); break;
    case FAM_WCHAN: n = snprintf(name, sizeof name, "write channel"); break;
    default:
        n = t->units == 1 ? snprintf(name, sizeof name, "compute engine")
                          : snprintf(name, sizeof name, "compute unit %d", l->unit);
        break;
    }
    if (l->number > 1)
        snprintf(name + n, sizeof name - (size_t)n, " #%d", l->number);
    sep(t);
    ft__tfile_printf(&t->c.out, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"args\":{\"name\":", l->tid);
    emit_string(&t->c.out, name);
    ft__tfile_puts(&t->c.out, "}}");
    sep(t);
    ft__tfile_printf(&t->c.out,
                     "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"args\":{\"sort_index\":%ld}}",
                     l->tid, (long)(l->fam + 1) * 1000000L + (long)l->unit * 1000L + l->number);
}

/* Add a lane of family fam (and compute unit); returns its index or -1
 * (out of memory, t->failed set). */
static int lane_add(ft_trace *t, int fam, int unit)
{
    chrome *c = &t->c;
    int number = 1;
    if (c->nlanes == c->lanecap) {
        int cap = c->lanecap ? 2 * c->lanecap : 8;
        lane *nl = realloc(c->lanes, (size_t)cap * sizeof *nl);
        if (!nl) {
            ft__trace_fail(t, "%s: out of memory", ft__trace_name(t));
            return -1;
        }
        c->lanes = nl;
        c->lanecap = cap;
    }
    for (int i = 0; i < c->nlanes; i++)
        if (c->lanes[i].fam == fam && c->lanes[i].unit == unit)
            number++;
    lane *l = &c->lanes[c->nlanes];
    l->fam = fam;
    l->unit = unit;
    l->number = number;
    l->tid = c->next_tid++;
    l->end = -HUGE_VAL;
    lane_meta(t, l);
    return c->nlanes++;
}

/* The lane for a span of kind k (compute: on `unit`) starting at `start`:
 * first fit among the kind's lanes, else a new overflow lane.  On a shared
 * channel writes share the slow-memory channel until one overlaps it (or a
 * load finds no room there): from then on writes have lanes of their own. */
static int lane_pick(ft_trace *t, ft_trace_kind k, int unit, double start)
{
    chrome *c = &t->c;
    int fam = k == FT_TRACE_SUBGRAPH ? FAM_SG : k == FT_TRACE_STEP ? FAM_CTRL : k == FT_TRACE_COMPUTE ? FAM_COMP : FAM_CHAN;
    if (fam != FAM_COMP)
        unit = 0;
    if (k == FT_TRACE_WRITE && c->split_writes)
        fam = FAM_WCHAN;
    for (int i = 0; i < c->nlanes; i++)
        if (c->lanes[i].fam == fam && c->lanes[i].unit == unit && c->lanes[i].end <= start)
            return i;
    if (fam == FAM_CHAN && !c->split_writes) {
        c->split_writes = 1;
        if (k == FT_TRACE_WRITE)
            return lane_pick(t, k, unit, start);
    }
    return lane_add(t, fam, unit);
}

/* ------------------------------------------------------------ spans */

/* The start of an X event on lane li from start to end (cost units), up to
 * and including the opening brace of its args. */
static void open_x(ft_trace *t, const char *name, const char *cat, double start, double end, int li)
{
    chrome *c = &t->c;
    char a[40], b[40];
    lane *l = &c->lanes[li];
    if (end > l->end)
        l->end = end;
    sep(t);
    ft__tfile_puts(&c->out, "{\"name\":");
    emit_string(&c->out, name);
    ft__tfile_puts(&c->out, ",\"cat\":");
    emit_string(&c->out, cat);
    ft__tfile_printf(&c->out, ",\"ph\":\"X\",\"ts\":%s,\"dur\":%s,\"pid\":1,\"tid\":%d,\"args\":{",
                     ft__trace_num(a, sizeof a, start * t->us_per_unit),
                     ft__trace_num(b, sizeof b, (end - start) * t->us_per_unit), l->tid);
}

/* Add tensor x to list *v (n entries) unless it is there; 0 or -1 (OOM). */
static int acc_add(ft_trace *t, int **v, int *n, int x)
{
    chrome *c = &t->c;
    for (int i = 0; i < *n; i++)
        if ((*v)[i] == x)
            return 0;
    if (*n == c->acc_cap || !*v) {
        int cap = c->acc_cap ? 2 * c->acc_cap : 16;
        int *a = realloc(c->acc_load, (size_t)cap * sizeof *a);
        if (a)
            c->acc_load = a;
        int *b = realloc(c->acc_write, (size_t)cap * sizeof *b);
        if (b)
            c->acc_write = b;
        if (!a || !b) {
            ft__trace_fail(t, "%s: out of memory", ft__trace_name(t));
            return -1;
        }
        c->acc_cap = cap;
    }
    (*v)[(*n)++] = x;
    return 0;
}

/* ,"key":["name", ...] for the tensors of a step. */
static void tensor_list(ft_trace *t, const char *key, const int *v, int n)
{
    char num[32];
    ft__tfile_printf(&t->c.out, ",\"%s\":[", key);
    for (int i = 0; i < n; i++) {
        const char *name = ft__trace_tensor_name(t, v[i]);
        if (!name) {
            snprintf(num, sizeof num, "tensor %d", v[i]);
            name = num;
        }
        ft__tfile_puts(&t->c.out, i ? "," : "");
        emit_string(&t->c.out, name);
    }
    ft__tfile_puts(&t->c.out, "]");
}

/* Where a span of subgraph sg is, in its name: the subgraph's label when
 * the problem names its ops, else "sg 3". */
static void where_text(const ft_trace *t, int sg, char *where, size_t len)
{
    const char *label = ft__trace_sg_label(t, sg);
    if (label)
        snprintf(where, len, "%s", label);
    else
        snprintf(where, len, "sg %d", sg);
}

/* Contract: trace_int.h. */
void ft__json_span(ft_trace *t, const ft_trace_event *e, int64_t g)
{
    chrome *c = &t->c;
    char name[FT_LABEL_MAX + 160], where[FT_LABEL_MAX + 16], tname[40];
    const char *label = ft__trace_sg_label(t, e->sg), *tensor = ft__trace_tensor_name(t, e->tensor);

    /* the tensors of the current step, for its step span */
    if (e->sg != c->acc_sg || e->step != c->acc_step) {
        c->acc_sg = e->sg;
        c->acc_step = e->step;
        c->nacc_load = c->nacc_write = 0;
    }
    if (e->kind == FT_TRACE_LOAD && acc_add(t, &c->acc_load, &c->nacc_load, e->tensor) != 0)
        return;
    if (e->kind == FT_TRACE_WRITE && acc_add(t, &c->acc_write, &c->nacc_write, e->tensor) != 0)
        return;

    int li = lane_pick(t, e->kind, e->unit, e->start);
    if (li < 0)
        return;
    where_text(t, e->sg, where, sizeof where);
    switch (e->kind) {
    case FT_TRACE_STEP:
        snprintf(name, sizeof name, "step %" PRId64 " (%s tile %" PRId64 " k %" PRId64 ")", e->step, where, e->tile,
                 e->kstep);
        break;
    case FT_TRACE_LOAD:
    case FT_TRACE_WRITE:
        if (!tensor) {
            snprintf(tname, sizeof tname, "T%d", e->tensor);
            tensor = tname;
        }
        snprintf(name, sizeof name, "%s %.*s[%" PRId64 ":%" PRId64 ", %" PRId64 ":%" PRId64 "]",
                 ft__trace_kind_word(e->kind), FT_LABEL_MAX, tensor, e->region.r0, e->region.r1, e->region.c0,
                 e->region.c1);
        tensor = ft__trace_tensor_name(t, e->tensor);
        break;
    default:
        snprintf(name, sizeof name, "compute %s tile %" PRId64 " k %" PRId64, where, e->tile, e->kstep);
        break;
    }
    open_x(t, name, ft__trace_kind_word(e->kind), e->start, e->end, li);
    ft__tfile_printf(&c->out, "\"sg\":%d,\"tile\":%" PRId64 ",\"step\":%" PRId64 ",\"kstep\":%" PRId64, e->sg, e->tile,
                     e->step, e->kstep);
    if (e->kind == FT_TRACE_LOAD || e->kind == FT_TRACE_WRITE)
        ft__tfile_printf(&c->out,
                         ",\"tensor\":%d,\"region\":{\"r0\":%" PRId64 ",\"r1\":%" PRId64 ",\"c0\":%" PRId64
                         ",\"c1\":%" PRId64 "},\"elems\":%" PRId64,
                         e->tensor, e->region.r0, e->region.r1, e->region.c0, e->region.c1, e->elems);
    if (e->kind == FT_TRACE_COMPUTE && t->units > 1)
        ft__tfile_printf(&c->out, ",\"unit\":%d", e->unit);
    if (e->kind == FT_TRACE_STEP) {
        ft__tfile_printf(&c->out, ",\"replay_step\":%" PRId64, g);
        tensor_list(t, "loads", c->acc_load, c->nacc_load);
        tensor_list(t, "writes", c->acc_write, c->nacc_write);
        c->acc_sg = -1; /* later events of this step start a new list */
    }
    if (label) {
        ft__tfile_puts(&c->out, ",\"label\":");
        emit_string(&c->out, label);
    }
    if (tensor && (e->kind == FT_TRACE_LOAD || e->kind == FT_TRACE_WRITE)) {
        ft__tfile_puts(&c->out, ",\"tensor_name\":");
        emit_string(&c->out, tensor);
    }
    ft__tfile_puts(&c->out, "}}");
}

/* Contract: trace_int.h. */
void ft__json_subgraph(ft_trace *t, const ft_trace_event *e, int clipped, int64_t first_step, int64_t steps)
{
    chrome *c = &t->c;
    char name[32];
    const char *label = ft__trace_sg_label(t, e->sg);
    int named = t->sg_names && e->sg >= 0 && e->sg < t->nsg;
    int li = lane_pick(t, FT_TRACE_SUBGRAPH, 0, e->start);
    if (li < 0)
        return;
    snprintf(name, sizeof name, "sg %d", e->sg);
    open_x(t, named ? t->sg_names[e->sg] : name, "subgraph", e->start, e->end, li);
    ft__tfile_printf(&c->out, "\"sg\":%d", e->sg);
    if (steps > 0)
        ft__tfile_printf(&c->out, ",\"first_step\":%" PRId64 ",\"steps\":%" PRId64, first_step, steps);
    if (named) {
        ft__tfile_puts(&c->out, ",\"ops\":[");
        for (int i = t->op_off[e->sg]; i < t->op_off[e->sg + 1]; i++)
            ft__tfile_printf(&c->out, "%s%d", i > t->op_off[e->sg] ? "," : "", t->ops[i]);
        ft__tfile_puts(&c->out, "]");
        if (t->sg_sched[e->sg]) {
            ft__tfile_puts(&c->out, ",\"schedule_label\":");
            emit_string(&c->out, t->sg_sched[e->sg]);
        }
    }
    if (label) {
        ft__tfile_puts(&c->out, ",\"label\":");
        emit_string(&c->out, label);
    }
    if (clipped)
        ft__tfile_puts(&c->out, ",\"clipped_to_window\":true");
    ft__tfile_puts(&c->out, "}}");
}

/* Contract: trace_int.h. */
void ft__json_counter(ft_trace *t, double time, int64_t elems)
{
    char a[40];
    sep(t);
    ft__tfile_printf(&t->c.out,
                     "{\"name\":\"fast memory\",\"ph\":\"C\",\"ts\":%s,\"pid\":1,\"args\":{\"elements\":%" PRId64 "}}",
                     ft__trace_num(a, sizeof a, time * t->us_per_unit), elems);
}

/* Contract: trace_int.h. */
void ft__json_power(ft_trace *t, double time, double watts)
{
    char a[40], b[40];
    sep(t);
    ft__tfile_printf(&t->c.out, "{\"name\":\"power\",\"ph\":\"C\",\"ts\":%s,\"pid\":1,\"args\":{\"watts\":%s}}",
                     ft__trace_num(a, sizeof a, time * t->us_per_unit), ft__trace_num(b, sizeof b, watts));
}

/* Contract: trace_int.h. */
void ft__json_merged(ft_trace *t, const merged *m)
{
    chrome *c = &t->c;
    const ft_trace_event *e = &m->ev;
    char name[FT_LABEL_MAX + 96], where[FT_LABEL_MAX + 16], a[40], tiles[48];
    const char *label = ft__trace_sg_label(t, e->sg);
    int li = lane_pick(t, e->kind, e->unit, e->start);
    if (li < 0)
        return;
    where_text(t, e->sg, where, sizeof where);
    if (m->last_tile > e->tile)
        snprintf(tiles, sizeof tiles, "tiles %" PRId64 "-%" PRId64, e->tile, m->last_tile);
    else
        snprintf(tiles, sizeof tiles, "tile %" PRId64, e->tile);
    if (e->kind == FT_TRACE_STEP)
        snprintf(name, sizeof name, "%s (%s)", tiles, where);
    else
        snprintf(name, sizeof name, "compute %s %s", where, tiles);
    open_x(t, name, e->kind == FT_TRACE_STEP ? "tile" : "compute", e->start, e->end, li);
    ft__tfile_printf(&c->out, "\"sg\":%d,\"tile\":%" PRId64, e->sg, e->tile);
    if (m->last_tile > e->tile)
        ft__tfile_printf(&c->out, ",\"last_tile\":%" PRId64, m->last_tile);
    ft__tfile_printf(&c->out, ",\"first_step\":%" PRId64, m->first_g);
    if (e->kind == FT_TRACE_STEP)
        ft__tfile_printf(&c->out, ",\"steps\":%" PRId64, m->count);
    else
        ft__tfile_printf(&c->out, ",\"ksteps\":%" PRId64 ",\"busy_fraction\":%s", m->count,
                         ft__trace_num(a, sizeof a, e->end > e->start ? m->busy / (e->end - e->start) : 1));
    if (e->kind == FT_TRACE_COMPUTE && t->units > 1)
        ft__tfile_printf(&c->out, ",\"unit\":%d", e->unit);
    if (label) {
        ft__tfile_puts(&c->out, ",\"label\":");
        emit_string(&c->out, label);
    }
    ft__tfile_puts(&c->out, "}}");
}

/* Contract: trace_int.h. */
void ft__json_busy(ft_trace *t, double time, double load, double write)
{
    char a[40], b[40], d[40];
    sep(t);
    ft__tfile_printf(&t->c.out,
                     "{\"name\":\"channel busy\",\"ph\":\"C\",\"ts\":%s,\"pid\":1,\"args\":{\"load\":%s,\"write\":%s}}",
                     ft__trace_num(a, sizeof a, time * t->us_per_unit), ft__trace_num(b, sizeof b, load),
                     ft__trace_num(d, sizeof d, write));
}

/* Contract: trace_int.h. */
void ft__json_begin(ft_trace *t)
{
    chrome *c = &t->c;
    c->acc_sg = -1;
    ft__tfile_puts(&c->out, "{\"traceEvents\":[");
    sep(t);
    ft__tfile_puts(&c->out, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,\"args\":{\"name\":");
    emit_string(&c->out, t->target);
    ft__tfile_puts(&c->out, "}}");
    c->next_tid = 1;
    c->split_writes = t->duplex;
    lane_add(t, FAM_CTRL, 0);
    lane_add(t, FAM_CHAN, 0);
    for (int u = 0; u < t->units; u++)
        lane_add(t, FAM_COMP, u);
    lane_add(t, FAM_SG, 0);
    if (t->duplex)
        lane_add(t, FAM_WCHAN, 0);
}

/* Contract: trace_int.h. */
void ft__json_end(ft_trace *t, double end_time)
{
    chrome *c = &t->c;
    char a[40], b[40];
    ft__tfile_puts(&c->out, "\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"generator\":");
    emit_string(&c->out, "fusetile " FT_VERSION);
    ft__tfile_puts(&c->out, ",\"target\":");
    emit_string(&c->out, t->target);
    ft__tfile_printf(&c->out, ",\"clock_hz\":%s,\"time_unit\":",
                     t->clock_hz > 0 ? ft__trace_num(a, sizeof a, t->clock_hz) : "null");
    emit_string(&c->out, t->clock_hz > 0 ? "us of real time: 1 cost unit = 1 cycle = 1/clock_hz s"
                                         : "cost units (no clock): 1 cost unit = 1 us");
    ft__tfile_printf(&c->out, ",\"fast_memory_capacity\":%s,\"end_time\":%s,\"compute_units\":%d",
                     isfinite(t->capacity) ? ft__trace_num(a, sizeof a, t->capacity) : "null",
                     ft__trace_num(b, sizeof b, end_time * t->us_per_unit), t->units);
    if (t->waves) /* (the step detail's files read as they did before the default changed) */
        ft__tfile_printf(&c->out, ",\"detail\":\"waves\",\"counter_period_steps\":%" PRId64 ",\"span_steps\":%" PRId64,
                         t->per_len, t->span_len);
    if (t->windowed)
        ft__tfile_printf(&c->out, ",\"window\":{\"first_step\":%" PRId64 ",\"steps\":%" PRId64 "}", t->win_first,
                         t->win_count);
    if (t->labels) {
        ft__tfile_puts(&c->out, ",\"subgraph_labels\":[");
        for (int i = 0; i < t->nlabels; i++) {
            ft__tfile_puts(&c->out, i ? "," : "");
            emit_string(&c->out, t->labels[i]);
        }
        ft__tfile_puts(&c->out, "]");
    }
    ft__tfile_puts(&c->out, "}}\n");
}

/* Contract: trace_int.h. */
void ft__json_free(chrome *c)
{
    free(c->lanes);
    free(c->acc_load);
    free(c->acc_write);
    c->lanes = NULL;
    c->acc_load = c->acc_write = NULL;
}
