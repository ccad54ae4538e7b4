/* trace_vcd.c - the VCD (GTKWave) of the trace writer: a signal per channel, compute unit and controller field, written in time order from events that arrive out of it, and the GTKWave save file that lists them.
 *
 * Signals (scope fusetile): controller.subgraph and controller.step (the
 * step the controller is on, counted over the replay), channel.read_busy
 * and channel.write_busy (a load, a write-back in progress),
 * compute.unitN_busy per compute unit, fast_memory.occupancy.  A span
 * contributes +1 at its start and -1 at its end to its busy count; a step
 * span sets subgraph and step at its start; occupancy sets its new value.
 *
 * The simulator promises non-decreasing start times per unit (steps,
 * loads, writes, occupancy, each compute unit), but not across units, and
 * an end lies in the future of its arrival, so changes are kept in a
 * pending buffer.  The watermark W is the smallest latest start over the
 * units (nothing is final before each unit has reported once): no future
 * change can be earlier than W, so when the buffer fills, every pending
 * change before W is sorted and written out.  If the buffer is still more
 * than half full after that (a unit that stays silent holds W back), its
 * contents are sorted and spilled as a run to an unlinked scratch file next
 * to the VCD, and the rest of the trace is merged from the runs at close
 * (an external merge sort).  Memory stays bounded either way.  Changes at
 * one timestamp are netted: a signal is written only if its value at the
 * end of the timestamp differs from the last value written.
 */
#include "trace_int.h"

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/* Pending VCD changes held in memory before a flush or a spill (entries of
 * 24 bytes).  A variable so that the unit test can shrink it. */
#ifndef FT_TRACE_VCD_BUFFER
#define FT_TRACE_VCD_BUFFER (1u << 18)
#endif
static size_t vcd_buffer_cap = FT_TRACE_VCD_BUFFER;

#define MERGE_MEMORY (1u << 20) /* entries read ahead by all runs together at close */
#define FS_PER_UNIT 1e9         /* without a clock: one cost unit = 1e9 fs (1 us) */
#define MIN_TICKS_PER_CYCLE 100 /* with a clock: the coarsest timescale with this many ticks per cycle */
#define GTKW_WIDTH 1400          /* the save file's window, pixels wide ... */
#define GTKW_HEIGHT 900          /* ... and high */
#define GTKW_SIGNALS_WIDTH 260   /* its signal-name pane; the waves get the rest */
#define GTKW_MARGIN 70           /* the window's borders and scroll bar */
#define GTKW_FRAME_PX 200.0      /* GTKWave's zoom z shows 2^-z ticks per frame of this many pixels */
#define GTKW_ZOOM_MIN (-62.0)    /* GTKWave's most zoomed-out zoom */

/* Signal indices: the controller's two, the channel's two, one per compute
 * unit, occupancy, and (a target with an energy model) power last. */
enum { SIG_SG, SIG_STEP, SIG_READ, SIG_WRITE, SIG_UNIT0 };
#define SIG_OCC(v) ((v)->nsig - 1 - (v)->power)
#define SIG_POWER(v) ((v)->nsig - 1)

/* ------------------------------------------------------------ signals */

/* Identifier code of signal i: printable ASCII without '#' and '$' (which
 * start timestamps and keywords), base 92, least significant first. */
static void vcd_id(char *id, int i)
{
    int n = 0;
    do {
        int d = i % 92;
        id[n++] = (char)(d < 2 ? 33 + d : 35 + d); /* 33, 34, then 37 .. 126 */
        i /= 92;
    } while (i > 0);
    id[n] = '\0';
}

/* Contract: trace_int.h. */
int ft__vcd_init(ft_trace *t)
{
    vcd *v = &t->v;
    v->power = t->power;
    v->hold = t->power; /* the power changes come after the replay (ft_trace_power) */
    v->nsig = SIG_UNIT0 + t->units + 1 + v->power;
    v->nwm = WM_UNIT0 + t->units;
    v->sig = calloc((size_t)v->nsig, sizeof *v->sig);
    v->cur = calloc((size_t)v->nsig, sizeof *v->cur);
    v->outv = calloc((size_t)v->nsig, sizeof *v->outv);
    v->dirty = calloc((size_t)v->nsig, 1);
    v->dirty_list = calloc((size_t)v->nsig, sizeof *v->dirty_list);
    v->unit_last = malloc((size_t)v->nwm * sizeof *v->unit_last);
    v->pend = malloc(vcd_buffer_cap * sizeof *v->pend);
    if (!v->sig || !v->cur || !v->outv || !v->dirty || !v->dirty_list || !v->unit_last || !v->pend)
        return FT_ENOMEM;
    for (int u = 0; u < v->nwm; u++)
        v->unit_last[u] = -1;
    for (int i = 0; i < v->nsig; i++) {
        vsig *s = &v->sig[i];
        vcd_id(s->id, i);
        s->width = 1;
        s->busy = 1;
        if (i == SIG_SG || i == SIG_STEP) {
            s->scope = "controller";
            snprintf(s->ref, sizeof s->ref, i == SIG_SG ? "subgraph" : "step");
            s->width = i == SIG_SG ? 32 : 64;
            s->busy = 0;
        } else if (i == SIG_READ || i == SIG_WRITE) {
            s->scope = "channel";
            snprintf(s->ref, sizeof s->ref, i == SIG_READ ? "read_busy" : "write_busy");
        } else if (i < SIG_OCC(v)) {
            s->scope = "compute";
            snprintf(s->ref, sizeof s->ref, "unit%d_busy", i - SIG_UNIT0);
        } else if (i == SIG_OCC(v)) {
            s->scope = "fast_memory";
            snprintf(s->ref, sizeof s->ref, "occupancy");
            s->width = 64;
            s->busy = 0;
        } else {
            s->scope = "power";
            snprintf(s->ref, sizeof s->ref, "watts");
            s->width = 64;
            s->busy = 0;
            s->real = 1; /* the value is a double's bits */
        }
    }
    /* time: cost units shown as us (1e9 fs), or real time at the clock */
    v->ticks_per_unit = FS_PER_UNIT;
    v->timescale = "1 fs";
    if (t->clock_hz > 0) {
        static const char *const scales[] = {"1 s", "1 ms", "1 us", "1 ns", "1 ps", "1 fs"};
        double per_s = 1;
        for (int k = 0; k < 6; k++, per_s *= 1000) {
            v->ticks_per_unit = per_s / t->clock_hz;
            v->timescale = scales[k];
            if (v->ticks_per_unit >= MIN_TICKS_PER_CYCLE)
                break;
        }
    }
    return FT_OK;
}

/* Contract: trace_int.h. */
int64_t ft__vcd_ticks(const vcd *v, double units)
{
    double x = units * v->ticks_per_unit;
    if (!(units >= 0) || !(x < 9.2e18))
        return -1;
    return (int64_t)llround(x);
}

/* ------------------------------------------------------------ writing */

static void vcd_begin(ft_trace *t);

static int vchange_cmp(const void *pa, const void *pb)
{
    const vchange *a = pa, *b = pb;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    return a->key < b->key ? -1 : a->key > b->key;
}

/* Write signal i's value x. */
static void vcd_value(vcd *v, int i, int64_t x)
{
    char s[80];
    const vsig *g = &v->sig[i];
    size_t n = 0;
    if (g->real) {
        double d;
        char num[40];
        memcpy(&d, &x, sizeof d);
        n = (size_t)snprintf(s, sizeof s, "r%s ", ft__trace_num(num, sizeof num, d));
    } else if (g->width == 1) {
        s[n++] = x ? '1' : '0';
    } else {
        char digits[64];
        uint64_t u = (uint64_t)x;
        int nd = 0;
        do {
            digits[nd++] = (char)('0' + (u & 1));
            u >>= 1;
        } while (u);
        s[n++] = 'b';
        while (nd > 0)
            s[n++] = digits[--nd];
        s[n++] = ' ';
    }
    for (const char *p = g->id; *p; p++)
        s[n++] = *p;
    s[n++] = '\n';
    ft__tfile_write(&v->out, s, n);
}

/* The value signal i shows in the open group. */
static int64_t shown(const vcd *v, int i)
{
    return v->sig[i].busy ? v->cur[i] > 0 : v->cur[i];
}

/* Write the group at v->group_t: $dumpvars first if not yet written (at
 * time 0, or with a window at the first change). */
static void vcd_close_group(ft_trace *t)
{
    vcd *v = &t->v;
    if (!v->group_open)
        return;
    v->group_open = 0;
    if (!v->dumped) {
        v->origin = t->windowed ? v->group_t : 0;
        int here = v->group_t == v->origin;
        ft__tfile_printf(&v->out, "#%" PRId64 "\n$dumpvars\n", v->origin);
        for (int i = 0; i < v->nsig; i++) {
            v->outv[i] = here ? shown(v, i) : 0;
            vcd_value(v, i, v->outv[i]);
        }
        ft__tfile_puts(&v->out, "$end\n");
        v->dumped = 1;
        v->last_time = v->origin;
        if (here) {
            for (int j = 0; j < v->ndirty; j++)
                v->dirty[v->dirty_list[j]] = 0;
            v->ndirty = 0;
            return;
        }
    }
    /* the signals that changed, in signal order */
    for (int a = 1; a < v->ndirty; a++)
        for (int b = a; b > 0 && v->dirty_list[b - 1] > v->dirty_list[b]; b--) {
            int x = v->dirty_list[b];
            v->dirty_list[b] = v->dirty_list[b - 1];
            v->dirty_list[b - 1] = x;
        }
    int stamped = 0;
    for (int j = 0; j < v->ndirty; j++) {
        int i = v->dirty_list[j];
        v->dirty[i] = 0;
        int64_t x = shown(v, i);
        if (x == v->outv[i])
            continue;
        if (!stamped) {
            ft__tfile_printf(&v->out, "#%" PRId64 "\n", v->group_t);
            v->last_time = v->group_t;
            stamped = 1;
        }
        vcd_value(v, i, x);
        v->outv[i] = x;
    }
    v->ndirty = 0;
}

/* Apply one change in time order. */
static void vcd_apply(ft_trace *t, const vchange *c)
{
    vcd *v = &t->v;
    int i = (int)(c->key & ((1u << VCD_SIG_BITS) - 1));
    if (v->group_open && c->t != v->group_t)
        vcd_close_group(t);
    v->group_open = 1;
    v->group_t = c->t;
    if (v->sig[i].busy)
        v->cur[i] += c->v;
    else
        v->cur[i] = c->v;
    if (!v->dirty[i]) {
        v->dirty[i] = 1;
        v->dirty_list[v->ndirty++] = i;
    }
}

static int64_t vcd_watermark(const vcd *v)
{
    int64_t w = INT64_MAX;
    if (v->hold) /* nothing is final before the power changes arrive */
        return -1;
    for (int u = 0; u < v->nwm; u++)
        if (v->unit_last[u] < w)
            w = v->unit_last[u];
    return w;
}

/* Append the sorted pending buffer to the spill file as a run. */
static void vcd_spill(ft_trace *t)
{
    vcd *v = &t->v;
    if (!v->spill) {
        /* beside the VCD's temporary file, or (a VCD written in place to a
         * device) an anonymous tmpfile() */
        const char *near = v->out.o.dest;
        size_t n = (near ? strlen(near) : 0) + 48;
        v->spill_path = malloc(n);
        if (!v->spill_path) {
            ft__trace_fail(t, "%s: out of memory", v->out.o.path);
            return;
        }
        snprintf(v->spill_path, n, "%s.fusetile-spill.%ld", near ? near : "tmpfile()", (long)getpid());
        int fd = near ? open(v->spill_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600) : -1;
        v->spill = fd >= 0 ? fdopen(fd, "w+b") : near ? NULL : tmpfile();
        if (!v->spill) {
            ft__trace_fail(t, "%s: cannot create scratch file %s: %s", v->out.o.path, v->spill_path, strerror(errno));
            if (fd >= 0) {
                close(fd);
                remove(v->spill_path);
            }
            return;
        }
        if (near)
            remove(v->spill_path); /* unlinked: it vanishes with the process */
    }
    if (v->nruns == v->runcap) {
        size_t cap = v->runcap ? 2 * v->runcap : 16;
        int64_t *no = realloc(v->run_off, cap * sizeof *no);
        if (no)
            v->run_off = no;
        size_t *nl = realloc(v->run_len, cap * sizeof *nl);
        if (nl)
            v->run_len = nl;
        if (!no || !nl) {
            ft__trace_fail(t, "%s: out of memory", v->out.o.path);
            return;
        }
        v->runcap = cap;
    }
    if (fseeko(v->spill, (off_t)v->spill_end, SEEK_SET) != 0 ||
        fwrite(v->pend, sizeof *v->pend, v->npend, v->spill) != v->npend) {
        ft__trace_fail(t, "%s: cannot write scratch file %s: %s", v->out.o.path, v->spill_path, strerror(errno));
        return;
    }
    v->run_off[v->nruns] = v->spill_end;
    v->run_len[v->nruns] = v->npend;
    v->nruns++;
    v->spill_end += (int64_t)(v->npend * sizeof *v->pend);
    v->npend = 0;
}

/* The buffer is full: write out what precedes the watermark; spill if that
 * frees less than half. */
static void vcd_make_room(ft_trace *t)
{
    vcd *v = &t->v;
    qsort(v->pend, v->npend, sizeof *v->pend, vchange_cmp);
    if (v->nruns == 0) {
        int64_t w = vcd_watermark(v);
        size_t i = 0;
        while (i < v->npend && v->pend[i].t < w)
            vcd_apply(t, &v->pend[i++]);
        vcd_close_group(t); /* nothing later can share its timestamp */
        memmove(v->pend, v->pend + i, (v->npend - i) * sizeof *v->pend);
        v->npend -= i;
        if (v->npend <= vcd_buffer_cap / 2)
            return;
    }
    vcd_spill(t);
}

static void vcd_push(ft_trace *t, int64_t time, int sig, int64_t value)
{
    vcd *v = &t->v;
    if (t->failed)
        return;
    if (v->dumped && time <= v->last_time) {
        ft__trace_fail(t, "%s: event at %.17g out of time order (time %.17g was already written)", v->out.o.path,
                       (double)time / v->ticks_per_unit, (double)v->last_time / v->ticks_per_unit);
        return;
    }
    if (v->npend == vcd_buffer_cap) {
        vcd_begin(t);
        vcd_make_room(t);
        if (t->failed)
            return;
    }
    vchange *c = &v->pend[v->npend++];
    c->t = time;
    c->key = v->seq++ << VCD_SIG_BITS | (uint64_t)sig;
    c->v = value;
}

/* Contract: trace_int.h. */
int ft__vcd_order(ft_trace *t, int kind, int unit, double start, const ft_trace_event *e)
{
    vcd *v = &t->v;
    int u = kind < 0 ? WM_OCC : kind == FT_TRACE_STEP ? WM_STEP : kind == FT_TRACE_LOAD ? WM_LOAD
            : kind == FT_TRACE_WRITE ? WM_WRITE : WM_UNIT0 + unit;
    int64_t s = ft__vcd_ticks(v, start), f = e ? ft__vcd_ticks(v, e->end) : s;
    if (s < 0 || f < 0) {
        ft__trace_fail(t, "%s: time %.17g is beyond the VCD time range", v->out.o.path, e ? e->end : start);
        return -1;
    }
    if (s < v->unit_last[u]) {
        if (e)
            ft__trace_fail(t, "%s: %s span (sg %d tile %" PRId64 " step %" PRId64 ") starts at %.17g, before the previous one",
                           v->out.o.path, ft__trace_kind_word(e->kind), e->sg, e->tile, e->step, e->start);
        else
            ft__trace_fail(t, "%s: occupancy change at %.17g arrives after one at %.17g", v->out.o.path, start,
                           (double)v->unit_last[u] / v->ticks_per_unit);
        return -1;
    }
    v->unit_last[u] = s;
    return 0;
}

/* Contract: trace_int.h. */
void ft__vcd_sync(ft_trace *t, double time)
{
    vcd *v = &t->v;
    int64_t s = ft__vcd_ticks(v, time);
    for (int u = 0; s >= 0 && u < v->nwm; u++)
        if (v->unit_last[u] < s)
            v->unit_last[u] = s;
}

/* Contract: trace_int.h. */
void ft__vcd_span(ft_trace *t, const ft_trace_event *e, int64_t g)
{
    int64_t s = ft__vcd_ticks(&t->v, e->start), f = ft__vcd_ticks(&t->v, e->end);
    if (e->kind == FT_TRACE_STEP) {
        vcd_push(t, s, SIG_SG, e->sg);
        vcd_push(t, s, SIG_STEP, g);
        return;
    }
    int sig = e->kind == FT_TRACE_LOAD ? SIG_READ : e->kind == FT_TRACE_WRITE ? SIG_WRITE : SIG_UNIT0 + e->unit;
    if (s != f) { /* an empty span changes nothing */
        vcd_push(t, s, sig, 1);
        vcd_push(t, f, sig, -1);
    }
}

/* Contract: trace_int.h. */
void ft__vcd_occupancy(ft_trace *t, double time, int64_t elems)
{
    vcd_push(t, ft__vcd_ticks(&t->v, time), SIG_OCC(&t->v), elems);
}

/* Contract: trace_int.h. */
void ft__vcd_position(ft_trace *t, double time, int sg, int64_t g)
{
    int64_t s = ft__vcd_ticks(&t->v, time);
    vcd_push(t, s, SIG_SG, sg);
    vcd_push(t, s, SIG_STEP, g);
}

/* Contract: trace_int.h. */
void ft__vcd_power(ft_trace *t, double time, double watts)
{
    int64_t bits;
    memcpy(&bits, &watts, sizeof bits);
    vcd_push(t, ft__vcd_ticks(&t->v, time), SIG_POWER(&t->v), bits);
}

/* ------------------------------------------------------------ close */

typedef struct vrun {
    int64_t off;  /* next file offset to read */
    size_t left;  /* entries not yet read */
    vchange *buf; /* read-ahead */
    size_t n, i;
} vrun;

/* Read the next chunk of run r.  0 or -1 (t->failed set). */
static int vrun_fill(ft_trace *t, vrun *r, size_t chunk)
{
    vcd *v = &t->v;
    size_t n = r->left < chunk ? r->left : chunk;
    if (fseeko(v->spill, (off_t)r->off, SEEK_SET) != 0 || fread(r->buf, sizeof *r->buf, n, v->spill) != n) {
        ft__trace_fail(t, "%s: cannot read scratch file %s: %s", v->out.o.path, v->spill_path,
                       errno ? strerror(errno) : "short read");
        return -1;
    }
    r->off += (int64_t)(n * sizeof *r->buf);
    r->left -= n;
    r->n = n;
    r->i = 0;
    return 0;
}

static int vrun_less(const vrun *a, const vrun *b)
{
    return vchange_cmp(&a->buf[a->i], &b->buf[b->i]) < 0;
}

static void heap_down(vrun **h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && vrun_less(h[l], h[m]))
            m = l;
        if (l + 1 < n && vrun_less(h[l + 1], h[m]))
            m = l + 1;
        if (m == i)
            return;
        vrun *x = h[i];
        h[i] = h[m];
        h[m] = x;
        i = m;
    }
}

/* Write every pending change in time order (merging spilled runs). */
static void vcd_drain(ft_trace *t)
{
    vcd *v = &t->v;
    qsort(v->pend, v->npend, sizeof *v->pend, vchange_cmp);
    if (v->nruns == 0) {
        for (size_t i = 0; i < v->npend; i++)
            vcd_apply(t, &v->pend[i]);
        v->npend = 0;
        vcd_close_group(t);
        return;
    }
    vcd_spill(t);
    if (t->failed)
        return;
    size_t k = v->nruns, chunk = MERGE_MEMORY / k;
    if (chunk < 64)
        chunk = 64;
    if (chunk > 8192)
        chunk = 8192;
    vrun *runs = calloc(k, sizeof *runs);
    vrun **heap = calloc(k, sizeof *heap);
    size_t nh = 0;
    if (!runs || !heap) {
        ft__trace_fail(t, "%s: out of memory", v->out.o.path);
        goto out;
    }
    for (size_t i = 0; i < k; i++) {
        runs[i].off = v->run_off[i];
        runs[i].left = v->run_len[i];
        runs[i].buf = malloc(chunk * sizeof *runs[i].buf);
        if (!runs[i].buf) {
            ft__trace_fail(t, "%s: out of memory", v->out.o.path);
            goto out;
        }
        if (runs[i].left == 0)
            continue;
        if (vrun_fill(t, &runs[i], chunk) != 0)
            goto out;
        heap[nh++] = &runs[i];
    }
    for (size_t i = nh; i-- > 0;)
        heap_down(heap, nh, i);
    while (nh > 0) {
        vrun *r = heap[0];
        vcd_apply(t, &r->buf[r->i++]);
        if (r->i == r->n) {
            if (r->left == 0) {
                heap[0] = heap[--nh];
            } else if (vrun_fill(t, r, chunk) != 0)
                goto out;
        }
        heap_down(heap, nh, 0);
    }
    vcd_close_group(t);
out:
    if (runs)
        for (size_t i = 0; i < k; i++)
            free(runs[i].buf);
    free(runs);
    free(heap);
}

/* s inside a VCD $comment or a save file's comment line: printable ASCII
 * without '$' ('$' becomes '_', other bytes '?'), so a comment ends at its
 * own $end. */
static void comment_text(tfile *tf, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char c = *p < 0x20 || *p >= 0x7F ? '?' : *p == '$' ? '_' : (char)*p;
        ft__tfile_write(tf, &c, 1);
    }
}

/* The header, written when the first change or the close arrives (so that
 * ft_trace_set_names can add the subgraph labels). */
static void vcd_begin(ft_trace *t)
{
    vcd *v = &t->v;
    tfile *tf = &v->out;
    char a[40];
    if (v->header)
        return;
    v->header = 1;
    ft__tfile_puts(tf, "$version fusetile " FT_VERSION " $end\n$comment target ");
    comment_text(tf, t->target);
    ft__tfile_puts(tf, " $end\n");
    if (t->clock_hz > 0)
        ft__tfile_printf(tf, "$comment time: real, 1 cycle = 1/clock_hz s, clock_hz %s $end\n",
                         ft__trace_num(a, sizeof a, t->clock_hz));
    else
        ft__tfile_puts(tf, "$comment time: cost units (no clock), 1 cost unit = 1e9 fs $end\n");
    if (t->windowed)
        ft__tfile_printf(tf, "$comment window: steps %" PRId64 " to %" PRId64 " $end\n", t->win_first,
                         t->win_first + t->win_count - 1);
    for (int i = 0; t->labels && i < t->nlabels; i++) {
        ft__tfile_printf(tf, "$comment subgraph %d ", i);
        comment_text(tf, t->labels[i]);
        ft__tfile_puts(tf, " $end\n");
    }
    ft__tfile_printf(tf, "$timescale %s $end\n$scope module fusetile $end\n", v->timescale);
    for (int i = 0; i < v->nsig; i++) {
        const vsig *s = &v->sig[i];
        if (i == 0 || s->scope != v->sig[i - 1].scope)
            ft__tfile_printf(tf, "$scope module %s $end\n", s->scope);
        ft__tfile_printf(tf, "$var %s %d %s %s $end\n", s->real ? "real" : s->width == 1 ? "wire" : "integer", s->width,
                         s->id, s->ref);
        if (i == v->nsig - 1 || s->scope != v->sig[i + 1].scope)
            ft__tfile_puts(tf, "$upscope $end\n");
    }
    ft__tfile_puts(tf, "$upscope $end\n$enddefinitions $end\n");
}

/* Contract: trace_int.h. */
void ft__vcd_end(ft_trace *t, double end_time)
{
    vcd *v = &t->v;
    int64_t end = ft__vcd_ticks(v, end_time);
    if (end < 0) {
        ft__trace_fail(t, "%s: time %.17g is beyond the VCD time range", v->out.o.path, end_time);
        return;
    }
    vcd_begin(t);
    vcd_drain(t);
    if (t->failed)
        return;
    if (!v->dumped) { /* no change at all: the initial values */
        v->group_open = 1;
        v->group_t = 0;
        vcd_close_group(t);
    }
    if (end > v->last_time)
        ft__tfile_printf(&v->out, "#%" PRId64 "\n", end);
    v->end_ticks = end > v->last_time ? end : v->last_time;
}

/* The name save files and the translate file give subgraph sg. */
static const char *sg_text(const ft_trace *t, int sg)
{
    const char *l = ft__trace_sg_label(t, sg);
    return l ? l : t->sg_names && sg < t->nsg ? t->sg_names[sg] : NULL;
}

/* Contract: trace_int.h. */
void ft__vcd_translate(ft_trace *t)
{
    tfile *tf = &t->xlate;
    ft__tfile_puts(tf, "# GTKWave translate filter file written by fusetile " FT_VERSION ": subgraph index, label\n");
    for (int i = 0; i < t->nsg; i++) {
        const char *l = sg_text(t, i);
        ft__tfile_printf(tf, "%d ", i);
        if (l && *l)
            comment_text(tf, l);
        else
            ft__tfile_printf(tf, "sg %d", i);
        ft__tfile_puts(tf, "\n");
    }
}

/* The file name in path: after its last '/'. */
static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* Contract: trace_int.h.  The VCD and the save file are named by their
 * base names when they share a directory (GTKWave then finds the VCD next
 * to the save file wherever both are moved), else as given: GTKWave reads
 * [dumpfile] relative to the directory of [savefile]. */
void ft__vcd_gtkw(ft_trace *t)
{
    vcd *v = &t->v;
    tfile *tf = &t->gtkw;
    const char *vcd = v->out.o.path, *sav = tf->o.path;
    size_t dv = (size_t)(base_name(vcd) - vcd), ds = (size_t)(base_name(sav) - sav);
    if (dv == ds && strncmp(vcd, sav, dv) == 0) {
        vcd = base_name(vcd);
        sav = base_name(sav);
    }
    ft__tfile_puts(tf, "[*]\n[*] GTKWave save file written by fusetile " FT_VERSION ": every signal of ");
    comment_text(tf, base_name(v->out.o.path));
    ft__tfile_puts(tf, " (target ");
    comment_text(tf, t->target);
    ft__tfile_puts(tf, ")\n[*]\n[dumpfile] \"");
    ft__tfile_puts(tf, vcd);
    ft__tfile_puts(tf, "\"\n[savefile] \"");
    ft__tfile_puts(tf, sav);
    /* zoomed so that the whole run fills the waves' pane (the signal tree
     * folded away): GTKWave shows 2^-zoom ticks per GTKW_FRAME_PX pixels,
     * and zooms no further in than 1 tick per frame (zoom 0) */
    double span = (double)(v->end_ticks - v->origin), zoom = 0;
    double px = GTKW_WIDTH - GTKW_SIGNALS_WIDTH - GTKW_MARGIN, frame = span / px * GTKW_FRAME_PX;
    if (frame > 1)
        zoom = -log2(frame);
    if (zoom < GTKW_ZOOM_MIN)
        zoom = GTKW_ZOOM_MIN;
    ft__tfile_printf(tf,
                     "\"\n[timestart] %" PRId64 "\n[size] %d %d\n[pos] -1 -1\n[sst_expanded] 0\n[signals_width] %d\n*%.6f -1\n"
                     "[treeopen] fusetile.\n",
                     v->origin, GTKW_WIDTH, GTKW_HEIGHT, GTKW_SIGNALS_WIDTH, zoom);
    for (int i = 0; i < v->nsig; i++)
        if (i == 0 || v->sig[i].scope != v->sig[i - 1].scope)
            ft__tfile_printf(tf, "[treeopen] fusetile.%s.\n", v->sig[i].scope);
    /* flags: 0x28 = right-justified binary (one bit), 0x24 = decimal,
     * 0x2000 = through a translate filter file (the subgraph, by name),
     * 0x8000 = drawn as a step curve (analog; the power) */
    int flags = 0;
    for (int i = 0; i < v->nsig; i++) {
        int named = i == SIG_SG && t->has_xlate;
        int want = v->sig[i].width == 1 ? 0x28 : named ? 0x2024 : v->sig[i].real ? 0x8024 : 0x24;
        if (named) {
            ft__tfile_puts(tf, "^1 ");
            const char *x = t->xlate.o.path;
            comment_text(tf, sav == base_name(sav) ? base_name(x) : x); /* beside the save file */
            ft__tfile_puts(tf, "\n");
        }
        if (want != flags)
            ft__tfile_printf(tf, "@%x\n", flags = want);
        ft__tfile_printf(tf, "fusetile.%s.%s\n", v->sig[i].scope, v->sig[i].ref);
    }
    ft__tfile_puts(tf, "[pattern_trace] 1\n[pattern_trace] 0\n");
}

/* Contract: trace_int.h. */
void ft__vcd_free(vcd *v)
{
    if (v->spill)
        fclose(v->spill);
    free(v->spill_path);
    free(v->pend);
    free(v->run_off);
    free(v->run_len);
    free(v->sig);
    free(v->cur);
    free(v->outv);
    free(v->dirty);
    free(v->dirty_list);
    free(v->unit_last);
    v->spill = NULL;
    v->spill_path = NULL;
    v->pend = NULL;
    v->run_off = NULL;
    v->run_len = NULL;
    v->sig = NULL;
    v->cur = v->outv = NULL;
    v->dirty = NULL;
    v->dirty_list = NULL;
    v->unit_last = NULL;
}
