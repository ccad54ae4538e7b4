/* test_trace.c - unit tests of the trace writers (sim/trace.c): Chrome trace JSON structure, VCD contents, escaping, errors, temporary files.
 *
 * The writer is compiled into this test (#include of sim/trace.c) so that
 * the test can shrink its VCD buffer and drive the flush and spill paths
 * with small streams, and so the test needs no simulator library.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "../../sim/trace.c" /* first: before cmocka's macros */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "vcd_parse.h"

/* ------------------------------------------------------------ fixtures */

typedef struct fixture {
    char dir[256];
    char json[320], vcd[320];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    const char *tmp = getenv("TMPDIR");
    if (!f)
        return -1;
    snprintf(f->dir, sizeof f->dir, "%s/ft-trace-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(f->dir)) {
        free(f);
        return -1;
    }
    snprintf(f->json, sizeof f->json, "%s/t.json", f->dir);
    snprintf(f->vcd, sizeof f->vcd, "%s/t.vcd", f->dir);
    vcd_buffer_cap = FT_TRACE_VCD_BUFFER;
    *state = f;
    return 0;
}

/* Names of the files in f->dir, sorted, space separated ("" if none). */
static void dir_listing(const fixture *f, char *out, size_t len)
{
    char names[64][256];
    int n = 0;
    DIR *d = opendir(f->dir);
    struct dirent *de;
    out[0] = '\0';
    if (!d)
        return;
    while ((de = readdir(d)) != NULL && n < 64)
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
            snprintf(names[n++], sizeof names[0], "%s", de->d_name);
    closedir(d);
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char tmp[256];
            memcpy(tmp, names[j], sizeof tmp);
            memcpy(names[j], names[j - 1], sizeof tmp);
            memcpy(names[j - 1], tmp, sizeof tmp);
        }
    for (int i = 0; i < n; i++) {
        size_t used = strlen(out);
        snprintf(out + used, len - used, "%s%s", i ? " " : "", names[i]);
    }
}

static int teardown(void **state)
{
    fixture *f = *state;
    DIR *d = opendir(f->dir);
    struct dirent *de;
    char path[512];
    if (d) {
        while ((de = readdir(d)) != NULL)
            if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
                snprintf(path, sizeof path, "%s/%s", f->dir, de->d_name);
                remove(path);
            }
        closedir(d);
    }
    rmdir(f->dir);
    free(f);
    vcd_buffer_cap = FT_TRACE_VCD_BUFFER;
    return 0;
}

static char *slurp(const char *path)
{
    FILE *fp = fopen(path, "rb");
    char *buf;
    long n;
    if (!fp)
        return NULL;
    fseek(fp, 0, SEEK_END);
    n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, fp) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf)
        buf[n] = '\0';
    fclose(fp);
    return buf;
}

/* ------------------------------------------------------------ a synthetic stream */

/* One call the simulator would make: a span or an occupancy change. */
typedef struct call {
    int is_occ;
    struct ft_trace_event e;
    double time;   /* occupancy */
    int64_t elems; /* occupancy */
} call;

typedef struct stream {
    call *calls;
    int n, cap;
    double end;
} stream;

static void add_call(stream *s, const call *c)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 256;
        s->calls = realloc(s->calls, (size_t)s->cap * sizeof *s->calls);
        assert_non_null(s->calls);
    }
    s->calls[s->n++] = *c;
}

static void add_span(stream *s, ft_trace_kind k, double start, double end, int sg, int64_t tile, int64_t step,
                     int64_t kstep, int tensor, int64_t r0, int64_t r1, int64_t c0, int64_t c1)
{
    call c;
    memset(&c, 0, sizeof c);
    c.e.kind = k;
    c.e.start = start;
    c.e.end = end;
    c.e.sg = sg;
    c.e.tile = tile;
    c.e.step = step;
    c.e.kstep = kstep;
    c.e.tensor = tensor;
    c.e.region.r0 = r0;
    c.e.region.r1 = r1;
    c.e.region.c0 = c0;
    c.e.region.c1 = c1;
    c.e.elems = tensor >= 0 ? (r1 - r0) * (c1 - c0) : 0;
    add_call(s, &c);
    if (end > s->end)
        s->end = end;
}

static void add_occ(stream *s, double time, int64_t elems)
{
    call c;
    memset(&c, 0, sizeof c);
    c.is_occ = 1;
    c.time = time;
    c.elems = elems;
    add_call(s, &c);
}

static uint64_t lcg_state;
static int rnd(int n)
{
    lcg_state = lcg_state * 6364136223846793005ull + 1442695040888963407ull;
    return (int)((lcg_state >> 33) % (uint64_t)n);
}

/* A stream of nsteps steps.  separate == 0: the contest target (loads then
 * writes on one channel from the step's start, compute from the start, the
 * step ends when both end).  separate == 1: writes on their own channel,
 * loads prefetched from the previous step's start, compute after its loads
 * (so events of different units arrive out of global time order).  Times
 * are multiples of 0.1 (not exact in binary). */
static void make_stream(stream *s, int nsteps, int separate, uint64_t seed)
{
    double t = 0, load_free = 0, write_free = 0, prev_start = 0;
    int64_t occ = 0;
    memset(s, 0, sizeof *s);
    lcg_state = seed;
    for (int i = 0; i < nsteps; i++) {
        int sg = i / 20, k = i % 2;
        int64_t tile = (i % 20) / 2;
        int nloads = rnd(4), nwrites = rnd(3);
        double compute = rnd(8) * 0.1; /* may be 0: an empty span */
        double chan = separate ? (load_free > prev_start ? load_free : prev_start) : t;
        int64_t loaded = 0;
        for (int j = 0; j < nloads; j++) {
            double d = (1 + rnd(40)) * 0.1;
            int64_t r0 = 64 * rnd(4), c0 = 128 * rnd(3);
            add_span(s, FT_TRACE_LOAD, chan, chan + d, sg, tile, i % 20, k, j, r0, r0 + 64, c0, c0 + 128);
            loaded += 64 * 128;
            chan += d;
        }
        if (separate)
            load_free = chan;
        occ += loaded;
        add_occ(s, t, occ);
        double cstart = separate && chan > t ? chan : t;
        add_span(s, FT_TRACE_COMPUTE, cstart, cstart + compute, sg, tile, i % 20, k, -1, 0, 0, 0, 0);
        double wchan = separate ? (write_free > cstart + compute ? write_free : cstart + compute) : chan;
        for (int j = 0; j < nwrites; j++) {
            double d = (1 + rnd(20)) * 0.1;
            add_span(s, FT_TRACE_WRITE, wchan, wchan + d, sg, tile, i % 20, k, 10 + j, 0, 32, 0, 16 * (j + 1));
            wchan += d;
        }
        if (separate)
            write_free = wchan;
        double end = cstart + compute;
        if (wchan > end)
            end = wchan;
        if (!separate && chan > end)
            end = chan;
        add_span(s, FT_TRACE_STEP, t, end, sg, tile, i % 20, k, -1, 0, 0, 0, 0);
        occ = 1024 * rnd(3); /* what stays resident; may repeat the value: written once */
        add_occ(s, end, occ);
        prev_start = t;
        t = end;
    }
    add_occ(s, t, 0);
}

static void replay(ft_trace *t, const stream *s)
{
    for (int i = 0; i < s->n; i++) {
        if (s->calls[i].is_occ)
            ft_trace_occupancy(t, s->calls[i].time, s->calls[i].elems);
        else
            ft_trace_span(t, &s->calls[i].e);
    }
}

/* Write s to the fixture's files (either may be skipped). */
static void write_trace(const fixture *f, const stream *s, const char *target, int json, int vcd)
{
    ft_trace *t = NULL;
    char err[512];
    int rc = ft_trace_open(&t, json ? f->json : NULL, vcd ? f->vcd : NULL, target, 100000, err, sizeof err);
    assert_int_equal(rc, FT_OK);
    assert_non_null(t);
    replay(t, s);
    rc = ft_trace_close(t, s->end, err, sizeof err);
    if (rc != FT_OK)
        fail_msg("close: %s", err);
}

/* ------------------------------------------------------------ JSON checks */

static json_t *load_json(const char *path)
{
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root)
        fail_msg("%s:%d:%d: %s", path, je.line, je.column, je.text);
    return root;
}

static const char *jstr(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static double jnum(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_number(v))
        fail_msg("field %s is not a number", key);
    return json_number_value(v);
}

static int64_t jint(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v))
        fail_msg("field %s is not an integer", key);
    return (int64_t)json_integer_value(v);
}

static int near(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fmax(1.0, fmax(fabs(a), fabs(b)));
}

typedef struct xev {
    double ts, dur;
    int tid;
} xev;

static int xev_cmp(const void *pa, const void *pb)
{
    const xev *a = pa, *b = pb;
    if (a->tid != b->tid)
        return a->tid - b->tid;
    return a->ts < b->ts ? -1 : a->ts > b->ts;
}

/* The name of thread tid from the M events, or NULL. */
static const char *thread_name(json_t *events, int tid)
{
    size_t i;
    json_t *ev;
    json_array_foreach(events, i, ev) {
        const char *ph = jstr(ev, "ph"), *name = jstr(ev, "name");
        if (ph && !strcmp(ph, "M") && name && !strcmp(name, "thread_name") && jint(ev, "tid") == tid)
            return jstr(json_object_get(ev, "args"), "name");
    }
    return NULL;
}

/* Does thread name `name` belong to the family `fam` ("fam" or "fam #N")? */
static int in_family(const char *name, const char *fam)
{
    size_t n = strlen(fam);
    return strncmp(name, fam, n) == 0 && (name[n] == '\0' || strncmp(name + n, " #", 2) == 0);
}

/* Check the Chrome trace at path against stream s written with `target`.
 * strict: every span is on its kind's first thread (no overlaps within a
 * kind and one shared channel); else on a thread of its family. */
static void check_json(const char *path, const stream *s, const char *target, int strict)
{
    json_t *root = load_json(path);
    json_t *events = json_object_get(root, "traceEvents");
    json_t *other = json_object_get(root, "otherData");
    size_t i, nx = 0;
    json_t *ev;
    int next_call[4] = {0, 0, 0, 0}, next_occ = 0, have_occ = 0, nproc = 0;
    int64_t last_occ = -1;
    double max_end = 0;
    static const char *const cats[] = {"step", "load", "write", "compute"};

    assert_true(json_is_array(events));
    assert_string_equal(jstr(root, "displayTimeUnit"), "ns");
    assert_true(json_is_object(other));
    assert_string_equal(jstr(other, "target"), target);
    assert_true(near(jnum(other, "fast_memory_capacity"), 100000));
    assert_true(near(jnum(other, "end_time"), s->end));

    xev *xs = calloc(json_array_size(events) + 1, sizeof *xs);
    assert_non_null(xs);
    json_array_foreach(events, i, ev) {
        const char *ph = jstr(ev, "ph");
        assert_non_null(ph);
        assert_int_equal(jint(ev, "pid"), 1);
        if (!strcmp(ph, "M")) {
            const char *name = jstr(ev, "name");
            json_t *args = json_object_get(ev, "args");
            assert_non_null(name);
            if (!strcmp(name, "process_name")) {
                assert_string_equal(jstr(args, "name"), target);
                nproc++;
            } else if (!strcmp(name, "thread_name"))
                assert_non_null(jstr(args, "name"));
            else if (!strcmp(name, "thread_sort_index"))
                (void)jint(args, "sort_index");
            else
                fail_msg("unexpected M event %s", name);
        } else if (!strcmp(ph, "X")) {
            const char *cat = jstr(ev, "cat");
            json_t *args = json_object_get(ev, "args");
            int kind = -1;
            char want[160];
            for (int k = 0; k < 4; k++)
                if (cat && !strcmp(cat, cats[k]))
                    kind = k;
            assert_true(kind >= 0);
            /* the next call of this kind in the stream */
            int c = next_call[kind];
            while (c < s->n && (s->calls[c].is_occ || (int)s->calls[c].e.kind != kind))
                c++;
            assert_true(c < s->n);
            next_call[kind] = c + 1;
            const struct ft_trace_event *e = &s->calls[c].e;
            xs[nx].ts = jnum(ev, "ts");
            xs[nx].dur = jnum(ev, "dur");
            xs[nx].tid = (int)jint(ev, "tid");
            assert_true(xs[nx].ts == e->start);   /* shortest round-trip text: exact */
            assert_true(near(xs[nx].ts + xs[nx].dur, e->end));
            assert_true(xs[nx].dur >= 0);
            if (e->end > max_end)
                max_end = e->end;
            assert_int_equal(jint(args, "sg"), e->sg);
            assert_int_equal(jint(args, "tile"), e->tile);
            assert_int_equal(jint(args, "step"), e->step);
            assert_int_equal(jint(args, "kstep"), e->kstep);
            const char *tname = thread_name(events, xs[nx].tid);
            assert_non_null(tname);
            switch (e->kind) {
            case FT_TRACE_STEP:
                snprintf(want, sizeof want, "step %" PRId64 " (sg %d tile %" PRId64 " k %" PRId64 ")", e->step,
                         e->sg, e->tile, e->kstep);
                assert_true(strict ? !strcmp(tname, "controller") : in_family(tname, "controller"));
                break;
            case FT_TRACE_COMPUTE:
                snprintf(want, sizeof want, "compute sg %d tile %" PRId64 " k %" PRId64, e->sg, e->tile, e->kstep);
                assert_true(strict ? !strcmp(tname, "compute engine") : in_family(tname, "compute engine"));
                break;
            default: {
                json_t *reg = json_object_get(args, "region");
                snprintf(want, sizeof want, "%s T%d[%" PRId64 ":%" PRId64 ", %" PRId64 ":%" PRId64 "]",
                         e->kind == FT_TRACE_LOAD ? "load" : "write", e->tensor, e->region.r0, e->region.r1,
                         e->region.c0, e->region.c1);
                assert_int_equal(jint(args, "tensor"), e->tensor);
                assert_int_equal(jint(args, "elems"), e->elems);
                assert_int_equal(jint(reg, "r0"), e->region.r0);
                assert_int_equal(jint(reg, "r1"), e->region.r1);
                assert_int_equal(jint(reg, "c0"), e->region.c0);
                assert_int_equal(jint(reg, "c1"), e->region.c1);
                if (strict)
                    assert_string_equal(tname, "slow-memory channel");
                else if (e->kind == FT_TRACE_LOAD)
                    assert_true(in_family(tname, "slow-memory channel"));
                else
                    assert_true(in_family(tname, "slow-memory channel") || in_family(tname, "write channel"));
                break;
            }
            }
            assert_string_equal(jstr(ev, "name"), want);
            nx++;
        } else if (!strcmp(ph, "C")) {
            assert_string_equal(jstr(ev, "name"), "fast memory");
            int64_t v = jint(json_object_get(ev, "args"), "elements");
            /* the next occupancy call that changes the value */
            while (next_occ < s->n &&
                   (!s->calls[next_occ].is_occ || (have_occ && s->calls[next_occ].elems == last_occ)))
                next_occ++;
            assert_true(next_occ < s->n);
            assert_int_equal(v, s->calls[next_occ].elems);
            assert_true(jnum(ev, "ts") == s->calls[next_occ].time);
            assert_true(v >= 0 && v <= 100000);
            last_occ = v;
            have_occ = 1;
            next_occ++;
        } else
            fail_msg("unexpected phase %s", ph);
    }
    assert_int_equal(nproc, 1);
    /* every span and every occupancy change was written */
    for (int k = 0; k < 4; k++)
        for (int c = next_call[k]; c < s->n; c++)
            assert_true(s->calls[c].is_occ || (int)s->calls[c].e.kind != k);
    for (; next_occ < s->n; next_occ++)
        assert_true(!s->calls[next_occ].is_occ || s->calls[next_occ].elems == last_occ);
    /* per thread, spans never overlap (end == next start is fine) */
    qsort(xs, nx, sizeof *xs, xev_cmp);
    for (size_t j = 1; j < nx; j++)
        if (xs[j].tid == xs[j - 1].tid)
            assert_true(xs[j - 1].ts + xs[j - 1].dur <= xs[j].ts + 1e-9 * fmax(1, xs[j].ts));
    assert_true(near(max_end, s->end));
    free(xs);
    json_decref(root);
}

/* ------------------------------------------------------------ VCD checks */

static int64_t fs(double t)
{
    return (int64_t)llround(t * 1e9);
}

typedef struct sigchange {
    int64_t t;
    uint64_t v;
} sigchange;

static int64_t cmp64(int64_t a, int64_t b)
{
    return a < b ? -1 : a > b;
}

/* Expected changes of signal sig (0 channel_busy, 1 compute_busy, 2
 * occupancy) from the stream, computed directly: the value at every
 * boundary time, kept where it differs from the previous one (time 0
 * always kept).  Small streams are evaluated by brute force at every
 * boundary; large ones by a sweep over sorted boundaries. */
typedef struct edge {
    int64_t t;
    int64_t order; /* arrival index: for occupancy, the last call at a time wins */
    int64_t v;     /* busy: +1/-1; occupancy: the value */
} edge;

static int edge_cmp(const void *pa, const void *pb)
{
    const edge *a = pa, *b = pb;
    if (a->t != b->t)
        return (int)cmp64(a->t, b->t);
    return (int)cmp64(a->order, b->order);
}

static int is_sig(const call *c, int sig)
{
    if (c->is_occ)
        return sig == 2;
    if (sig == 0)
        return c->e.kind == FT_TRACE_LOAD || c->e.kind == FT_TRACE_WRITE;
    return sig == 1 && c->e.kind == FT_TRACE_COMPUTE;
}

static sigchange *expected_signal(const stream *s, int sig, size_t *n_out)
{
    edge *ed = malloc(((size_t)s->n * 2 + 1) * sizeof *ed);
    size_t ne = 0, n = 0;
    assert_non_null(ed);
    ed[ne++] = (edge){0, -1, 0}; /* time 0 is always a boundary */
    for (int i = 0; i < s->n; i++) {
        const call *c = &s->calls[i];
        if (!is_sig(c, sig))
            continue;
        if (c->is_occ)
            ed[ne++] = (edge){fs(c->time), i, c->elems};
        else {
            ed[ne++] = (edge){fs(c->e.start), i, 1};
            ed[ne++] = (edge){fs(c->e.end), i, -1};
        }
    }
    qsort(ed, ne, sizeof *ed, edge_cmp);
    sigchange *out = malloc(ne * sizeof *out);
    assert_non_null(out);
    int64_t busy = 0, occ = 0;
    for (size_t j = 0; j < ne; j++) {
        if (ed[j].order >= 0) {
            if (sig == 2)
                occ = ed[j].v;
            else
                busy += ed[j].v;
        }
        if (j + 1 < ne && ed[j + 1].t == ed[j].t)
            continue; /* value at the end of the timestamp */
        int64_t T = ed[j].t;
        uint64_t v = sig == 2 ? (uint64_t)occ : busy > 0;
        if (s->n < 3000) { /* brute force cross-check */
            uint64_t bv = 0;
            for (int i = 0; i < s->n; i++) {
                const call *c = &s->calls[i];
                if (!is_sig(c, sig))
                    continue;
                if (c->is_occ && fs(c->time) <= T)
                    bv = (uint64_t)c->elems;
                else if (!c->is_occ && fs(c->e.start) <= T && T < fs(c->e.end))
                    bv = 1;
            }
            assert_true(bv == v);
        }
        if (n == 0 || out[n - 1].v != v) {
            out[n].t = T;
            out[n].v = v;
            n++;
        }
    }
    free(ed);
    *n_out = n;
    return out;
}

/* Parse the VCD at path and compare every signal with the stream. */
static void check_vcd(const char *path, const stream *s)
{
    static const char *const refs[] = {"channel_busy", "compute_busy", "occupancy"};
    static const int sizes[] = {1, 1, 64};
    char *text = slurp(path);
    vcdp_doc d;
    assert_non_null(text);
    if (vcdp_parse(text, &d) != 0)
        fail_msg("%s: %s", path, d.err);
    assert_string_equal(d.timescale, "1 fs");
    assert_int_equal(d.nvars, 3);
    assert_int_equal(d.last_time, fs(s->end));
    for (int sig = 0; sig < 3; sig++) {
        int v = vcdp_find(&d, refs[sig]);
        size_t n;
        assert_true(v >= 0);
        assert_int_equal(d.vars[v].size, sizes[sig]);
        assert_string_equal(d.vars[v].scope, "fusetile");
        sigchange *want = expected_signal(s, sig, &n);
        if (d.vars[v].n != n)
            fail_msg("%s: %s has %zu changes, want %zu", path, refs[sig], d.vars[v].n, n);
        for (size_t i = 0; i < n; i++) {
            if (d.vars[v].time[i] != want[i].t || d.vars[v].value[i] != want[i].v)
                fail_msg("%s: %s change %zu is %" PRIu64 " at %" PRId64 ", want %" PRIu64 " at %" PRId64, path,
                         refs[sig], i, d.vars[v].value[i], d.vars[v].time[i], want[i].v, want[i].t);
        }
        free(want);
    }
    vcdp_free(&d);
    free(text);
}

/* ------------------------------------------------------------ tests */

/* The contest-like stream: JSON structure, lanes, counters, end time; the
 * VCD's signals over time. */
static void test_trace_contest_stream(void **state)
{
    fixture *f = *state;
    stream s;
    char files[512];
    make_stream(&s, 200, 0, 1);
    write_trace(f, &s, "contest", 1, 1);
    check_json(f->json, &s, "contest", 1);
    check_vcd(f->vcd, &s);
    /* contest target: three threads only */
    json_t *root = load_json(f->json);
    assert_null(thread_name(json_object_get(root, "traceEvents"), 4));
    json_decref(root);
    dir_listing(f, files, sizeof files);
    assert_string_equal(files, "t.json t.vcd");
    free(s.calls);
}

/* Separate write channel and prefetched loads: units out of global time
 * order; writes overlapping loads go to a "write channel" thread. */
static void test_trace_separate_channels(void **state)
{
    fixture *f = *state;
    stream s;
    make_stream(&s, 300, 1, 7);
    write_trace(f, &s, "two channels", 1, 1);
    check_json(f->json, &s, "two channels", 0);
    check_vcd(f->vcd, &s);
    json_t *root = load_json(f->json);
    json_t *events = json_object_get(root, "traceEvents");
    int found = 0;
    for (int tid = 4; tid < 8; tid++)
        found |= thread_name(events, tid) && !strcmp(thread_name(events, tid), "write channel");
    assert_true(found);
    json_decref(root);
    free(s.calls);
}

/* The VCD is the same text whatever the buffer size: the watermark flush
 * (a medium buffer) and the spill-and-merge path (a tiny one) agree with
 * the all-in-memory path. */
static void test_trace_vcd_buffer_sizes_agree(void **state)
{
    fixture *f = *state;
    stream s;
    static const size_t caps[] = {4, 8, 64, 1000};
    make_stream(&s, 400, 1, 3);
    write_trace(f, &s, "ref", 0, 1);
    char *ref = slurp(f->vcd);
    assert_non_null(ref);
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
        vcd_buffer_cap = caps[i];
        write_trace(f, &s, "ref", 0, 1);
        char *text = slurp(f->vcd);
        assert_non_null(text);
        if (strcmp(text, ref) != 0)
            fail_msg("VCD with a %zu-entry buffer differs from the in-memory one", caps[i]);
        check_vcd(f->vcd, &s);
        free(text);
    }
    free(s.calls);
    make_stream(&s, 400, 0, 5); /* contest order: the watermark keeps up */
    vcd_buffer_cap = 64;
    write_trace(f, &s, "ref", 0, 1);
    check_vcd(f->vcd, &s);
    free(ref);
    free(s.calls);
}

/* A unit that stays silent holds the watermark back: the spill path with
 * the default buffer (no write until the very end). */
static void test_trace_vcd_spills_when_a_unit_is_silent(void **state)
{
    fixture *f = *state;
    stream s;
    ft_trace *t;
    char err[512];
    int n = 300000;
    memset(&s, 0, sizeof s);
    s.calls = malloc((size_t)(n + 3) * sizeof *s.calls);
    s.cap = n + 3;
    assert_non_null(s.calls);
    add_occ(&s, 0, 5);
    for (int i = 0; i < n; i++)
        add_span(&s, i % 2 ? FT_TRACE_COMPUTE : FT_TRACE_LOAD, i * 0.5, i * 0.5 + 0.7 * (i % 3) / 2, 0, i, i, 0,
                 i % 2 ? -1 : 0, 0, 1, 0, 1);
    add_span(&s, FT_TRACE_WRITE, n * 0.5, n * 0.5 + 1, 0, n, n, 0, 1, 0, 1, 0, 1);
    assert_int_equal(ft_trace_open(&t, NULL, f->vcd, "silent", 10, err, sizeof err), FT_OK);
    replay(t, &s);
    assert_true(t->v.nruns > 0);
    if (ft_trace_close(t, s.end, err, sizeof err) != FT_OK)
        fail_msg("close: %s", err);
    check_vcd(f->vcd, &s);
    free(s.calls);
}

/* Strings are escaped: quotes, backslashes, control characters and invalid
 * UTF-8 in the target name; the JSON still parses and reads back; the VCD
 * comment stays one header section. */
static void test_trace_escapes_target(void **state)
{
    fixture *f = *state;
    stream s;
    const char *nasty = "kpu \"v2\"\\ line1\nline2\ttab\x01 $end caf\xc3\xa9 bad\xff\xc3";
    const char *decoded = "kpu \"v2\"\\ line1\nline2\ttab\x01 $end caf\xc3\xa9 bad\xef\xbf\xbd\xef\xbf\xbd";
    make_stream(&s, 10, 0, 11);
    write_trace(f, &s, nasty, 1, 1);
    check_json(f->json, &s, decoded, 1);
    check_vcd(f->vcd, &s);
    char *text = slurp(f->json);
    assert_non_null(text);
    assert_non_null(strstr(text, "kpu \\\"v2\\\"\\\\ line1\\nline2\\ttab\\u0001 $end caf\xc3\xa9 bad\\ufffd\\ufffd"));
    free(text);
    text = slurp(f->vcd);
    assert_non_null(strstr(text, "$comment target kpu \"v2\"\\ line1?line2?tab? _end caf?? bad?? $end\n"));
    free(text);
    free(s.calls);
}

/* ft_trace_set_names: span names, args, otherData and the VCD header say
 * the subgraph labels and tensor names; a "$" in a label is kept out of the
 * VCD comment; names after the first event are an error at close. */
static void test_trace_names(void **state)
{
    fixture *f = *state;
    ft_problem *p = NULL;
    ft_schedule *sc = NULL;
    ft_status st;
    ft_trace *t;
    char err[512];
    assert_int_equal(ft_problem_parse("{\"widths\": [8, 8, 8], \"heights\": [8, 8, 8], \"inputs\": [[0], [1]],"
                                      " \"outputs\": [[1], [2]], \"base_costs\": [1, 1], \"op_types\": [\"Pointwise\","
                                      " \"Pointwise\"], \"fast_memory_capacity\": 1000, \"slow_memory_bandwidth\": 1,"
                                      " \"native_granularity\": [8, 8], \"op_names\": [\"blk.a$end\", \"blk.b\"],"
                                      " \"tensor_names\": [\"in\", \"blk.mid\", \"out\"]}",
                                      "names.json", &p, &st),
                     FT_OK);
    assert_int_equal(ft_schedule_parse("{\"subgraphs\": [[0, 1], [1]], \"granularities\": [[8, 8, 8], [8, 8, 8]],"
                                       " \"tensors_to_retain\": [[], []]}",
                                       "names.schedule.json", &sc, &st),
                     FT_OK);
    assert_int_equal(ft_trace_open(&t, f->json, f->vcd, "x", 1000, err, sizeof err), FT_OK);
    assert_int_equal(ft_trace_set_names(t, p, sc), FT_OK);
    ft_trace_event e = {FT_TRACE_LOAD, 0, 1, 0, 0, 0, 0, 0, {0, 8, 0, 8}, 64};
    ft_trace_span(t, &e);
    e.kind = FT_TRACE_COMPUTE;
    e.tensor = -1;
    ft_trace_span(t, &e);
    e.kind = FT_TRACE_WRITE;
    e.sg = 1;
    e.tensor = 2;
    ft_trace_span(t, &e);
    ft_trace_occupancy(t, 0, 128);
    assert_int_equal(ft_trace_close(t, 1, err, sizeof err), FT_OK);
    char *text = slurp(f->json);
    assert_non_null(strstr(text, "\"name\":\"load in[0:8, 0:8]\""));
    assert_non_null(strstr(text, "\"label\":\"blk.a$end+b\",\"tensor_name\":\"in\"}}"));
    assert_non_null(strstr(text, "\"name\":\"compute blk.a$end+b tile 0 k 0\""));
    assert_non_null(strstr(text, "\"name\":\"write out[0:8, 0:8]\""));
    assert_non_null(strstr(text, "\"label\":\"blk.b\",\"tensor_name\":\"out\"}}"));
    assert_non_null(strstr(text, "\"subgraph_labels\":[\"blk.a$end+b\",\"blk.b\"]}"));
    free(text);
    text = slurp(f->vcd);
    assert_non_null(strstr(text, "$comment target x $end\n$comment subgraph 0 blk.a_end+b $end\n"
                                 "$comment subgraph 1 blk.b $end\n$timescale 1 fs $end\n"));
    vcdp_doc d;
    assert_int_equal(vcdp_parse(text, &d), 0);
    vcdp_free(&d);
    free(text);

    /* too late: after an event */
    assert_int_equal(ft_trace_open(&t, f->json, NULL, "x", 1000, err, sizeof err), FT_OK);
    ft_trace_occupancy(t, 0, 1);
    assert_int_equal(ft_trace_set_names(t, p, sc), FT_EINPUT);
    assert_int_equal(ft_trace_close(t, 1, err, sizeof err), FT_EINPUT);
    assert_non_null(strstr(err, "ft_trace_set_names after the first event"));
    /* NULL arguments change nothing */
    assert_int_equal(ft_trace_set_names(NULL, p, sc), FT_OK);
    ft_schedule_free(sc);
    ft_problem_free(p);
}

/* No spans at all: valid JSON with the metadata, a VCD with the initial
 * values and the final timestamp. */
static void test_trace_empty(void **state)
{
    fixture *f = *state;
    ft_trace *t;
    char err[256];
    assert_int_equal(ft_trace_open(&t, f->json, f->vcd, NULL, 64, err, sizeof err), FT_OK);
    assert_int_equal(ft_trace_close(t, 2.5, err, sizeof err), FT_OK);
    json_t *root = load_json(f->json);
    json_t *events = json_object_get(root, "traceEvents");
    assert_int_equal(json_array_size(events), 7); /* process name, 3 x (thread name, sort index) */
    assert_string_equal(thread_name(events, 1), "controller");
    assert_string_equal(thread_name(events, 2), "slow-memory channel");
    assert_string_equal(thread_name(events, 3), "compute engine");
    assert_string_equal(jstr(json_object_get(root, "otherData"), "target"), "fusetile");
    json_decref(root);
    char *text = slurp(f->vcd);
    vcdp_doc d;
    assert_int_equal(vcdp_parse(text, &d), 0);
    assert_int_equal(d.last_time, 2500000000);
    assert_int_equal(d.vars[vcdp_find(&d, "occupancy")].n, 1);
    assert_non_null(strstr(text, "#0\n$dumpvars\n0!\n0\"\nb0 #\n$end\n#2500000000\n"));
    vcdp_free(&d);
    free(text);
}

/* Overlapping spans of one kind open overflow threads; no thread has
 * overlapping spans. */
static void test_trace_overlap_lanes(void **state)
{
    fixture *f = *state;
    stream s;
    memset(&s, 0, sizeof s);
    add_span(&s, FT_TRACE_COMPUTE, 0, 4, 0, 0, 0, 0, -1, 0, 0, 0, 0);
    add_span(&s, FT_TRACE_COMPUTE, 1, 2, 0, 1, 1, 0, -1, 0, 0, 0, 0);
    add_span(&s, FT_TRACE_COMPUTE, 1.5, 3, 0, 2, 2, 0, -1, 0, 0, 0, 0);
    add_span(&s, FT_TRACE_COMPUTE, 4, 5, 0, 3, 3, 0, -1, 0, 0, 0, 0);
    add_span(&s, FT_TRACE_LOAD, 0, 1, 0, 0, 0, 0, 2, 0, 8, 0, 8);
    add_span(&s, FT_TRACE_WRITE, 0.5, 1.5, 0, 0, 0, 0, 3, 0, 8, 0, 8);
    add_span(&s, FT_TRACE_WRITE, 1.5, 2, 0, 0, 0, 0, 3, 8, 16, 0, 8);
    add_span(&s, FT_TRACE_STEP, 0, 5, 0, 0, 0, 0, -1, 0, 0, 0, 0);
    add_occ(&s, 0, 100);
    add_occ(&s, 5, 0);
    write_trace(f, &s, "overlap", 1, 1);
    check_json(f->json, &s, "overlap", 0);
    check_vcd(f->vcd, &s);
    json_t *root = load_json(f->json);
    json_t *events = json_object_get(root, "traceEvents");
    assert_string_equal(thread_name(events, 4), "compute engine #2");
    assert_string_equal(thread_name(events, 5), "compute engine #3");
    assert_string_equal(thread_name(events, 6), "write channel");
    assert_null(thread_name(events, 7));
    json_decref(root);
    free(s.calls);
}

/* Nothing appears under the final names before close. */
static void test_trace_temporary_then_rename(void **state)
{
    fixture *f = *state;
    ft_trace *t;
    char err[256], files[512], want[512];
    struct ft_trace_event e = {FT_TRACE_COMPUTE, 0, 1, 0, 0, 0, 0, -1, {0, 0, 0, 0}, 0};
    assert_int_equal(ft_trace_open(&t, f->json, f->vcd, "x", 1, err, sizeof err), FT_OK);
    ft_trace_span(t, &e);
    dir_listing(f, files, sizeof files);
    snprintf(want, sizeof want, "t.json.tmp.%ld t.vcd.tmp.%ld", (long)getpid(), (long)getpid());
    assert_string_equal(files, want);
    assert_int_equal(ft_trace_close(t, 1, err, sizeof err), FT_OK);
    assert_string_equal(err, "");
    dir_listing(f, files, sizeof files);
    assert_string_equal(files, "t.json t.vcd");
}

/* Abort removes the temporary files, spilled or not. */
static void test_trace_abort_leaves_no_files(void **state)
{
    fixture *f = *state;
    stream s;
    ft_trace *t;
    char err[256], files[512];
    make_stream(&s, 50, 1, 2);
    vcd_buffer_cap = 4; /* spills */
    assert_int_equal(ft_trace_open(&t, f->json, f->vcd, "x", 1, err, sizeof err), FT_OK);
    replay(t, &s);
    assert_true(t->v.nruns > 0);
    ft_trace_abort(t);
    dir_listing(f, files, sizeof files);
    assert_string_equal(files, "");
    ft_trace_abort(NULL);
    free(s.calls);
}

/* Both paths NULL: a valid handle that records nothing and creates no
 * file; NULL handles are accepted. */
static void test_trace_null_paths_is_noop(void **state)
{
    fixture *f = *state;
    ft_trace *t = NULL;
    stream s;
    char err[256] = "junk", files[512];
    make_stream(&s, 20, 0, 9);
    assert_int_equal(ft_trace_open(&t, NULL, NULL, "x", 1, err, sizeof err), FT_OK);
    assert_non_null(t);
    replay(t, &s);
    assert_int_equal(ft_trace_close(t, s.end, err, sizeof err), FT_OK);
    assert_string_equal(err, "");
    ft_trace_span(NULL, &s.calls[0].e);
    ft_trace_occupancy(NULL, 0, 1);
    assert_int_equal(ft_trace_close(NULL, 0, err, sizeof err), FT_OK);
    dir_listing(f, files, sizeof files);
    assert_string_equal(files, "");
    /* one file only */
    assert_int_equal(ft_trace_open(&t, NULL, f->vcd, "x", 1, err, sizeof err), FT_OK);
    replay(t, &s);
    assert_int_equal(ft_trace_close(t, s.end, err, sizeof err), FT_OK);
    dir_listing(f, files, sizeof files);
    assert_string_equal(files, "t.vcd");
    check_vcd(f->vcd, &s);
    free(s.calls);
}

/* Unwritable paths fail at open with a message naming the path and the OS
 * error, and create nothing. */
static void test_trace_unwritable_paths(void **state)
{
    fixture *f = *state;
    ft_trace *t = (ft_trace *)&t;
    char err[512], bad[400], want[600], files[512];

    snprintf(bad, sizeof bad, "%s/no-such-dir/t.json", f->dir);
    assert_int_equal(ft_trace_open(&t, bad, f->vcd, "x", 1, err, sizeof err), FT_EINPUT);
    assert_null(t);
    snprintf(want, sizeof want, "%s: cannot write: %s", bad, strerror(ENOENT));
    if (strncmp(err, want, strlen(want)) != 0)
        fail_msg("message '%s', want it to start with '%s'", err, want);

    snprintf(bad, sizeof bad, "%s/no-such-dir/t.vcd", f->dir);
    assert_int_equal(ft_trace_open(&t, f->json, bad, "x", 1, err, sizeof err), FT_EINPUT);
    snprintf(want, sizeof want, "%s: cannot write: %s", bad, strerror(ENOENT));
    assert_true(strncmp(err, want, strlen(want)) == 0);

    /* a directory */
    assert_int_equal(ft_trace_open(&t, f->dir, NULL, "x", 1, err, sizeof err), FT_EINPUT);
    snprintf(want, sizeof want, "%s: cannot write: %s", f->dir, strerror(EISDIR));
    assert_string_equal(err, want);

    /* the same file twice */
    assert_int_equal(ft_trace_open(&t, f->json, f->json, "x", 1, err, sizeof err), FT_EINPUT);
    assert_non_null(strstr(err, f->json));

    /* a read-only directory (root ignores permissions: skip that part) */
    if (geteuid() != 0) {
        char ro[300];
        snprintf(ro, sizeof ro, "%s/ro", f->dir);
        assert_int_equal(mkdir(ro, 0555), 0);
        snprintf(bad, sizeof bad, "%s/t.json", ro);
        assert_int_equal(ft_trace_open(&t, bad, NULL, "x", 1, err, sizeof err), FT_EINPUT);
        snprintf(want, sizeof want, "%s: cannot write: %s", bad, strerror(EACCES));
        assert_true(strncmp(err, want, strlen(want)) == 0);
        rmdir(ro);
    }
    dir_listing(f, files, sizeof files);
    assert_string_equal(files, "");
}

/* Events that break the contract make close fail with a message and leave
 * no files. */
static void test_trace_bad_events_fail_at_close(void **state)
{
    fixture *f = *state;
    ft_trace *t;
    char err[512], files[512];
    struct ft_trace_event e = {FT_TRACE_LOAD, 2, 1, 0, 4, 5, 0, 1, {0, 1, 0, 1}, 1};

    /* end before start */
    assert_int_equal(ft_trace_open(&t, f->json, f->vcd, "x", 1, err, sizeof err), FT_OK);
    ft_trace_span(t, &e);
    assert_int_equal(ft_trace_close(t, 3, err, sizeof err), FT_EINPUT);
    assert_non_null(strstr(err, f->json));
    assert_non_null(strstr(err, "load span (sg 0 tile 4 step 5) has start 2 and end 1"));
    dir_listing(f, files, sizeof files);
    assert_string_equal(files, "");

    /* a unit going back in time (VCD) */
    assert_int_equal(ft_trace_open(&t, NULL, f->vcd, "x", 1, err, sizeof err), FT_OK);
    e.start = 2;
    e.end = 3;
    ft_trace_span(t, &e);
    e.start = 1;
    ft_trace_span(t, &e);
    assert_int_equal(ft_trace_close(t, 3, err, sizeof err), FT_EINPUT);
    assert_non_null(strstr(err, f->vcd));
    assert_non_null(strstr(err, "before the previous one"));

    /* NaN and negative times, negative occupancy, bad end time */
    assert_int_equal(ft_trace_open(&t, f->json, NULL, "x", 1, err, sizeof err), FT_OK);
    e.start = NAN;
    ft_trace_span(t, &e);
    assert_int_equal(ft_trace_close(t, 3, err, sizeof err), FT_EINPUT);
    assert_int_equal(ft_trace_open(&t, f->json, NULL, "x", 1, err, sizeof err), FT_OK);
    ft_trace_occupancy(t, 1, -5);
    assert_int_equal(ft_trace_close(t, 3, err, sizeof err), FT_EINPUT);
    assert_non_null(strstr(err, "occupancy -5"));
    assert_int_equal(ft_trace_open(&t, f->json, f->vcd, "x", 1, err, sizeof err), FT_OK);
    assert_int_equal(ft_trace_close(t, INFINITY, err, sizeof err), FT_EINPUT);
    assert_non_null(strstr(err, "end time"));
    dir_listing(f, files, sizeof files);
    assert_string_equal(files, "");
}

/* The output is a function of the calls only (no dates, no pids). */
static void test_trace_deterministic(void **state)
{
    fixture *f = *state;
    stream s;
    make_stream(&s, 100, 1, 4);
    write_trace(f, &s, "d", 1, 1);
    char *j1 = slurp(f->json), *v1 = slurp(f->vcd);
    write_trace(f, &s, "d", 1, 1);
    char *j2 = slurp(f->json), *v2 = slurp(f->vcd);
    assert_non_null(j1);
    assert_non_null(v1);
    assert_string_equal(j1, j2);
    assert_string_equal(v1, v2);
    free(j1);
    free(j2);
    free(v1);
    free(v2);
    free(s.calls);
}

/* The VCD reader itself rejects what it must. */
static void test_trace_vcd_parser_rejects(void **state)
{
    static const char *const bad[] = {
        "$timescale 1 fs $end $enddefinitions $end 1!",                                   /* no timestamp */
        "$timescale 1 fs $end $scope module m $end $var wire 1 ! a $end $upscope $end "
        "$enddefinitions $end #0 1\"",                                                    /* undeclared id */
        "$timescale 1 fs $end $scope module m $end $var wire 1 ! a $end $upscope $end "
        "$enddefinitions $end #5 1! #5 0!",                                               /* time not increasing */
        "$timescale 1 fs $end $scope module m $end $var wire 2 ! a $end $upscope $end "
        "$enddefinitions $end #0 b101 !",                                                 /* too wide */
        "$timescale 1 fs $end $scope module m $end $var wire 1 ! a $end $upscope $end",   /* no enddefinitions */
        "$scope module m $end $var wire 1 ! a $end $upscope $end $enddefinitions $end",   /* no timescale */
        "$timescale 1 fs $end $scope module m $end $var wire 4 ! a $end $upscope $end "
        "$enddefinitions $end #0 b102 !",                                                 /* not binary */
    };
    (void)state;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        vcdp_doc d;
        if (vcdp_parse(bad[i], &d) == 0)
            fail_msg("accepted bad VCD %zu", i);
        vcdp_free(&d);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_trace_contest_stream, setup, teardown),
        cmocka_unit_test_setup_teardown(test_trace_separate_channels, setup, teardown),
        cmocka_unit_test_setup_teardown(test_trace_vcd_buffer_sizes_agree, setup, teardown),
        cmocka_unit_test_setup_teardown(test_trace_vcd_spills_when_a_unit_is_silent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_trace_escapes_target, setup, teardown),
        cmocka_unit_test_setup_teardown(test_trace_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_trace_empty, setup, teardown),
        cmocka_unit_test_setup_teardown(test_trace_overlap_lanes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_trace_temporary_then_rename, setup, teardown),
        cmocka_unit_test_setup_teardown(test_trace_abort_leaves_no_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_trace_null_paths_is_noop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_trace_unwritable_paths, setup, teardown),
        cmocka_unit_test_setup_teardown(test_trace_bad_events_fail_at_close, setup, teardown),
        cmocka_unit_test_setup_teardown(test_trace_deterministic, setup, teardown),
        cmocka_unit_test(test_trace_vcd_parser_rejects),
    };
    return cmocka_run_group_tests_name("trace", tests, NULL, NULL);
}
