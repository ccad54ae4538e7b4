/* trace_check.h - helpers of the trace writer's unit tests (test_trace.c, test_trace_targets.c): a scratch directory, synthetic event streams, and checks of the Chrome JSON and the VCD against a stream; header-only.
 *
 * Include it after the writer's sources (sim/trace*.c) and cmocka.h.  A
 * stream is the list of calls the simulator would make; the checks compute
 * what the files must hold from the stream alone (the VCD's signals by a
 * sweep over the spans' boundaries, cross-checked by brute force on small
 * streams) and compare.
 */
#ifndef TRACE_CHECK_H
#define TRACE_CHECK_H

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "ft_testutil.h"

#include <jansson.h>

#include "vcd_parse.h"

/* ------------------------------------------------------------ fixtures */

typedef struct fixture {
    char dir[256];
    char json[320], vcd[320], gtkw[320];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f || ftt_tmpdir(f->dir, sizeof f->dir, "ft-trace")) {
        free(f);
        return -1;
    }
    snprintf(f->json, sizeof f->json, "%s/t.json", f->dir);
    snprintf(f->vcd, sizeof f->vcd, "%s/t.vcd", f->dir);
    snprintf(f->gtkw, sizeof f->gtkw, "%s/t.gtkw", f->dir);
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
    int rc = ftt_rmtree(f->dir);
    free(f);
    vcd_buffer_cap = FT_TRACE_VCD_BUFFER;
    return rc;
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
    int64_t g;     /* spans but subgraphs: the step in the whole replay */
    double time;   /* occupancy */
    int64_t elems; /* occupancy */
} call;

typedef struct stream {
    call *calls;
    int n, cap;
    double end;
    int cur_sg;          /* replay step numbering, as the writer's */
    int64_t base, steps;
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

/* Add a span (compute spans on unit 0: set .e.unit of the last call to
 * move it). */
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
    if (k != FT_TRACE_SUBGRAPH) {
        if (sg != s->cur_sg && s->n > 0) {
            s->base += s->steps;
            s->steps = 0;
        }
        s->cur_sg = sg;
        if (step + 1 > s->steps)
            s->steps = step + 1;
        c.g = s->base + step;
    }
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

/* A stream of nsteps steps, 20 to a subgraph (each ends with its subgraph
 * span).  separate == 0: the contest target (loads then writes on one
 * channel from the step's start, compute from the start, the step ends when
 * both end).  separate == 1: writes on their own channel, loads prefetched
 * from the previous step's start, compute after its loads (so events of
 * different units arrive out of global time order).  Compute goes to unit
 * i % units.  Times are multiples of 0.1 (not exact in binary). */
static void make_stream_units(stream *s, int nsteps, int separate, uint64_t seed, int units)
{
    double t = 0, load_free = 0, write_free = 0, prev_start = 0, sg_start = 0;
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
        if (i % 20 == 0)
            sg_start = t;
        occ += 0; /* the step's occupancy is reported at its start, before its spans */
        int64_t step_occ = occ + 64 * 128 * nloads;
        add_occ(s, t, step_occ);
        for (int j = 0; j < nloads; j++) {
            double d = (1 + rnd(40)) * 0.1;
            int64_t r0 = 64 * rnd(4), c0 = 128 * rnd(3);
            add_span(s, FT_TRACE_LOAD, chan, chan + d, sg, tile, i % 20, k, j, r0, r0 + 64, c0, c0 + 128);
            loaded += 64 * 128;
            chan += d;
        }
        if (separate)
            load_free = chan;
        double cstart = separate && chan > t ? chan : t;
        add_span(s, FT_TRACE_COMPUTE, cstart, cstart + compute, sg, tile, i % 20, k, -1, 0, 0, 0, 0);
        s->calls[s->n - 1].e.unit = i % units;
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
        assert_int_equal(s->calls[s->n - 1].g, i);
        occ = 1024 * rnd(3); /* what stays resident; may repeat the value: written once */
        prev_start = t;
        t = end;
        if (i % 20 == 19 || i == nsteps - 1) {
            double sg_end = separate && write_free > t ? write_free : t;
            add_span(s, FT_TRACE_SUBGRAPH, sg_start, sg_end, sg, -1, -1, -1, -1, 0, 0, 0, 0);
            t = sg_end;
        }
    }
    add_occ(s, t, 0);
}

static inline void make_stream(stream *s, int nsteps, int separate, uint64_t seed)
{
    make_stream_units(s, nsteps, separate, seed, 1);
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

/* Write s as configured by c (its paths from the fixture where c has
 * none: json/vcd say which). */
static void write_trace_config(const fixture *f, const stream *s, ft_trace_config *c, int json, int vcd)
{
    ft_trace *t = NULL;
    char err[512];
    if (json && !c->json_path)
        c->json_path = f->json;
    if (vcd && !c->vcd_path)
        c->vcd_path = f->vcd;
    int rc = ft_trace_open_config(&t, c, err, sizeof err);
    if (rc != FT_OK)
        fail_msg("open: %s", err);
    assert_non_null(t);
    replay(t, s);
    rc = ft_trace_close(t, s->end, err, sizeof err);
    if (rc != FT_OK)
        fail_msg("close: %s", err);
}

/* ft_trace_open with every step written (FT_TRACE_DETAIL_STEPS): the
 * synthetic streams check the writer's step detail. */
static int trace_open_steps(ft_trace **out, const char *json_path, const char *vcd_path, const char *target,
                            double capacity, char *err, size_t errlen)
{
    ft_trace_config c = {.json_path = json_path, .vcd_path = vcd_path, .target = target, .capacity = capacity,
                         .units = 1, .detail = FT_TRACE_DETAIL_STEPS}; /* ft_trace_config_init's but these */
    return ft_trace_open_config(out, &c, err, errlen);
}

/* ft_trace_config_init with every step written. */
static void config_init_steps(ft_trace_config *c)
{
    ft_trace_config_init(c);
    c->detail = FT_TRACE_DETAIL_STEPS;
}

/* Write s to the fixture's files (either may be skipped), contest-style. */
static void write_trace(const fixture *f, const stream *s, const char *target, int json, int vcd)
{
    ft_trace_config c;
    config_init_steps(&c);
    c.target = target;
    c.capacity = 100000;
    write_trace_config(f, s, &c, json, vcd);
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

/* The tensors (distinct, in order) that the spans of kind k of step call c
 * (its own step, since the step before's span) move, as names. */
static void step_tensors(const stream *s, int c, ft_trace_kind k, char out[][32], int *n)
{
    int from = c;
    *n = 0;
    while (from > 0 && (s->calls[from - 1].is_occ || s->calls[from - 1].e.kind != FT_TRACE_STEP))
        from--;
    for (int i = from; i < c; i++) {
        const call *x = &s->calls[i];
        if (x->is_occ || x->e.kind != k || x->e.sg != s->calls[c].e.sg || x->e.step != s->calls[c].e.step)
            continue;
        char name[32];
        snprintf(name, sizeof name, "tensor %d", x->e.tensor);
        int seen = 0;
        for (int j = 0; j < *n; j++)
            seen |= !strcmp(out[j], name);
        if (!seen)
            snprintf(out[(*n)++], 32, "%s", name);
    }
}

static void check_tensor_list(json_t *arr, char want[][32], int n)
{
    assert_true(json_is_array(arr));
    assert_int_equal(json_array_size(arr), n);
    for (int i = 0; i < n; i++)
        assert_string_equal(json_string_value(json_array_get(arr, (size_t)i)), want[i]);
}

/* Check the Chrome trace at path against stream s written with `target`
 * (no names set), `us` microseconds per cost unit and `units` compute
 * units.  strict: every span is on its kind's first thread (no overlaps
 * within a kind and one shared channel); else on a thread of its family. */
static void check_json_scaled(const char *path, const stream *s, const char *target, int strict, double us, int units)
{
    json_t *root = load_json(path);
    json_t *events = json_object_get(root, "traceEvents");
    json_t *other = json_object_get(root, "otherData");
    size_t i, nx = 0;
    json_t *ev;
    int next_call[5] = {0, 0, 0, 0, 0}, next_occ = 0, have_occ = 0, nproc = 0;
    int64_t last_occ = -1;
    double max_end = 0;
    static const char *const cats[] = {"step", "load", "write", "compute", "subgraph"};

    assert_true(json_is_array(events));
    assert_string_equal(jstr(root, "displayTimeUnit"), "ns");
    assert_true(json_is_object(other));
    assert_string_equal(jstr(other, "target"), target);
    assert_true(near(jnum(other, "fast_memory_capacity"), 100000));
    assert_true(near(jnum(other, "end_time"), s->end * us));
    assert_int_equal(jint(other, "compute_units"), units);

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
            char want[160], unit_lane[40];
            for (int k = 0; k < 5; k++)
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
            assert_true(xs[nx].ts == e->start * us); /* shortest round-trip text: exact */
            assert_true(near(xs[nx].ts + xs[nx].dur, e->end * us));
            assert_true(xs[nx].dur >= 0);
            if (e->end > max_end)
                max_end = e->end;
            assert_int_equal(jint(args, "sg"), e->sg);
            const char *tname = thread_name(events, xs[nx].tid);
            assert_non_null(tname);
            if (e->kind == FT_TRACE_SUBGRAPH) {
                snprintf(want, sizeof want, "sg %d", e->sg);
                assert_string_equal(jstr(ev, "name"), want);
                assert_true(strict ? !strcmp(tname, "subgraphs") : in_family(tname, "subgraphs"));
                /* the steps of the subgraph: those of the spans before it */
                assert_int_equal(jint(args, "first_step"), s->calls[c - 1].g - s->calls[c - 1].e.step);
                assert_int_equal(jint(args, "steps"), s->calls[c - 1].e.step + 1);
                nx++;
                continue;
            }
            assert_int_equal(jint(args, "tile"), e->tile);
            assert_int_equal(jint(args, "step"), e->step);
            assert_int_equal(jint(args, "kstep"), e->kstep);
            switch (e->kind) {
            case FT_TRACE_STEP: {
                char names[16][32];
                int n;
                snprintf(want, sizeof want, "step %" PRId64 " (sg %d tile %" PRId64 " k %" PRId64 ")", e->step,
                         e->sg, e->tile, e->kstep);
                assert_true(strict ? !strcmp(tname, "controller") : in_family(tname, "controller"));
                assert_int_equal(jint(args, "replay_step"), s->calls[c].g);
                step_tensors(s, c, FT_TRACE_LOAD, names, &n);
                check_tensor_list(json_object_get(args, "loads"), names, n);
                step_tensors(s, c, FT_TRACE_WRITE, names, &n);
                check_tensor_list(json_object_get(args, "writes"), names, n);
                break;
            }
            case FT_TRACE_COMPUTE:
                snprintf(want, sizeof want, "compute sg %d tile %" PRId64 " k %" PRId64, e->sg, e->tile, e->kstep);
                snprintf(unit_lane, sizeof unit_lane, "compute unit %d", e->unit);
                if (units == 1)
                    assert_true(strict ? !strcmp(tname, "compute engine") : in_family(tname, "compute engine"));
                else {
                    assert_true(in_family(tname, unit_lane));
                    assert_int_equal(jint(args, "unit"), e->unit);
                }
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
                    assert_true(in_family(tname, "slow-memory channel") || in_family(tname, "read channel"));
                else
                    assert_true(in_family(tname, "slow-memory channel") || in_family(tname, "write channel"));
                break;
            }
            }
            assert_string_equal(jstr(ev, "name"), want);
            nx++;
        } else if (!strcmp(ph, "C") && !strcmp(jstr(ev, "name"), "power")) {
            /* the power track: test_trace_power checks it */
        } else if (!strcmp(ph, "C")) {
            assert_string_equal(jstr(ev, "name"), "fast memory");
            int64_t v = jint(json_object_get(ev, "args"), "elements");
            /* the next occupancy call that changes the value */
            while (next_occ < s->n &&
                   (!s->calls[next_occ].is_occ || (have_occ && s->calls[next_occ].elems == last_occ)))
                next_occ++;
            assert_true(next_occ < s->n);
            assert_int_equal(v, s->calls[next_occ].elems);
            assert_true(jnum(ev, "ts") == s->calls[next_occ].time * us);
            assert_true(v >= 0 && v <= 100000);
            last_occ = v;
            have_occ = 1;
            next_occ++;
        } else
            fail_msg("unexpected phase %s", ph);
    }
    assert_int_equal(nproc, 1);
    /* every span and every occupancy change was written */
    for (int k = 0; k < 5; k++)
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

static inline void check_json(const char *path, const stream *s, const char *target, int strict)
{
    check_json_scaled(path, s, target, strict, 1, 1);
}

/* ------------------------------------------------------------ VCD checks */

typedef struct sigchange {
    int64_t t;
    uint64_t v;
} sigchange;

static int64_t cmp64(int64_t a, int64_t b)
{
    return a < b ? -1 : a > b;
}

/* The VCD's signals in the test's numbering: 0 subgraph, 1 step, 2
 * read_busy, 3 write_busy, 4 .. 4+units-1 the compute units, then
 * occupancy. */
typedef struct sigspec {
    int units;
    double ticks; /* ticks per cost unit */
} sigspec;

static int64_t ticks(const sigspec *sp, double t)
{
    return (int64_t)llround(t * sp->ticks);
}

/* Whether call c changes signal sig; *value receives what a value signal
 * takes (busy signals: 0). */
static int is_sig(const sigspec *sp, const call *c, int sig, int64_t *value)
{
    *value = 0;
    if (c->is_occ) {
        *value = c->elems;
        return sig == 4 + sp->units;
    }
    switch (c->e.kind) {
    case FT_TRACE_STEP:
        *value = sig == 0 ? c->e.sg : c->g;
        return sig == 0 || sig == 1;
    case FT_TRACE_LOAD:
        return sig == 2;
    case FT_TRACE_WRITE:
        return sig == 3;
    case FT_TRACE_COMPUTE:
        return sig == 4 + c->e.unit;
    default:
        return 0;
    }
}

static int is_value_sig(const sigspec *sp, int sig)
{
    return sig == 0 || sig == 1 || sig == 4 + sp->units;
}

typedef struct edge {
    int64_t t;
    int64_t order; /* arrival index: for value signals, the last call at a time wins */
    int64_t v;     /* busy: +1/-1; value signals: the value */
} edge;

static int edge_cmp(const void *pa, const void *pb)
{
    const edge *a = pa, *b = pb;
    if (a->t != b->t)
        return (int)cmp64(a->t, b->t);
    return (int)cmp64(a->order, b->order);
}

/* Expected changes of signal sig from the stream, computed directly: the
 * value at every boundary time, kept where it differs from the previous
 * one (time 0 always kept).  Small streams are also evaluated by brute
 * force at every boundary. */
static sigchange *expected_signal(const sigspec *sp, const stream *s, int sig, size_t *n_out)
{
    edge *ed = malloc(((size_t)s->n * 2 + 1) * sizeof *ed);
    size_t ne = 0, n = 0;
    int value_sig = is_value_sig(sp, sig);
    int64_t x;
    assert_non_null(ed);
    ed[ne++] = (edge){0, -1, 0}; /* time 0 is always a boundary */
    for (int i = 0; i < s->n; i++) {
        const call *c = &s->calls[i];
        if (!is_sig(sp, c, sig, &x))
            continue;
        if (c->is_occ)
            ed[ne++] = (edge){ticks(sp, c->time), i, x};
        else if (value_sig)
            ed[ne++] = (edge){ticks(sp, c->e.start), i, x};
        else {
            ed[ne++] = (edge){ticks(sp, c->e.start), i, 1};
            ed[ne++] = (edge){ticks(sp, c->e.end), i, -1};
        }
    }
    qsort(ed, ne, sizeof *ed, edge_cmp);
    sigchange *out = malloc(ne * sizeof *out);
    assert_non_null(out);
    int64_t busy = 0, val = 0;
    for (size_t j = 0; j < ne; j++) {
        if (ed[j].order >= 0) {
            if (value_sig)
                val = ed[j].v;
            else
                busy += ed[j].v;
        }
        if (j + 1 < ne && ed[j + 1].t == ed[j].t)
            continue; /* value at the end of the timestamp */
        int64_t T = ed[j].t;
        uint64_t v = value_sig ? (uint64_t)val : busy > 0;
        if (s->n < 3000) { /* brute force cross-check */
            uint64_t bv = 0;
            for (int i = 0; i < s->n; i++) {
                const call *c = &s->calls[i];
                if (!is_sig(sp, c, sig, &x))
                    continue;
                if (c->is_occ && ticks(sp, c->time) <= T)
                    bv = (uint64_t)x;
                else if (!c->is_occ && value_sig && ticks(sp, c->e.start) <= T)
                    bv = (uint64_t)x;
                else if (!c->is_occ && !value_sig && ticks(sp, c->e.start) <= T && T < ticks(sp, c->e.end))
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

/* Parse the VCD at path and compare every signal with the stream: names,
 * scopes, sizes, timescale, the last timestamp, every change. */
static void check_vcd_scaled(const char *path, const stream *s, const char *timescale, double tpu, int units)
{
    sigspec sp = {units, tpu};
    char *text = slurp(path);
    vcdp_doc d;
    assert_non_null(text);
    if (vcdp_parse(text, &d) != 0)
        fail_msg("%s: %s", path, d.err);
    assert_string_equal(d.timescale, timescale);
    assert_int_equal(d.nvars, 5 + units + (vcdp_find(&d, "watts") >= 0)); /* the power: test_trace_power */
    assert_int_equal(d.last_time, ticks(&sp, s->end));
    for (int sig = 0; sig < 5 + units; sig++) {
        char ref[32];
        const char *scope = sig < 2 ? "fusetile.controller" : sig < 4 ? "fusetile.channel"
                            : sig < 4 + units ? "fusetile.compute" : "fusetile.fast_memory";
        int size = sig == 0 ? 32 : sig == 1 || sig == 4 + units ? 64 : 1;
        if (sig < 4)
            snprintf(ref, sizeof ref, "%s", (const char *[]){"subgraph", "step", "read_busy", "write_busy"}[sig]);
        else if (sig < 4 + units)
            snprintf(ref, sizeof ref, "unit%d_busy", sig - 4);
        else
            snprintf(ref, sizeof ref, "occupancy");
        int v = vcdp_find(&d, ref);
        size_t n;
        if (v < 0)
            fail_msg("%s: no signal %s", path, ref);
        assert_int_equal(d.vars[v].size, size);
        assert_string_equal(d.vars[v].path, scope);
        sigchange *want = expected_signal(&sp, s, sig, &n);
        if (d.vars[v].n != n)
            fail_msg("%s: %s has %zu changes, want %zu", path, ref, d.vars[v].n, n);
        for (size_t i = 0; i < n; i++) {
            if (d.vars[v].time[i] != want[i].t || d.vars[v].value[i] != want[i].v)
                fail_msg("%s: %s change %zu is %" PRIu64 " at %" PRId64 ", want %" PRIu64 " at %" PRId64, path, ref,
                         i, d.vars[v].value[i], d.vars[v].time[i], want[i].v, want[i].t);
        }
        free(want);
    }
    vcdp_free(&d);
    free(text);
}

static inline void check_vcd(const char *path, const stream *s)
{
    check_vcd_scaled(path, s, "1 fs", 1e9, 1);
}

#endif /* TRACE_CHECK_H */
