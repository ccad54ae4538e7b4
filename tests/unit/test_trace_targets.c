/* test_trace_targets.c - unit tests of what traces of real targets add (sim/trace*.c): real time from clock_hz, compute units, separate read and write signals, the GTKWave save file, subgraph spans named after their ops, tensor names on steps, the step window, configuration errors.
 *
 * Like test_trace.c, the writer is compiled into the test (#include of
 * sim/trace*.c); trace_check.h holds the streams and the checks.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "../../sim/trace.c" /* first: before cmocka's macros */
#include "../../sim/trace_file.c"
#include "../../sim/trace_json.c"
#include "../../sim/trace_vcd.c"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "trace_check.h"

/* The X event of category cat and args.sg == sg, or NULL. */
static json_t *find_span(json_t *events, const char *cat, int sg)
{
    size_t i;
    json_t *ev;
    json_array_foreach(events, i, ev) {
        const char *c = jstr(ev, "cat");
        if (c && !strcmp(c, cat) && jint(json_object_get(ev, "args"), "sg") == sg)
            return ev;
    }
    return NULL;
}

/* The line of text that equals line exactly, or NULL. */
static const char *find_line(const char *text, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = text; (p = strstr(p, line)) != NULL; p++)
        if ((p == text || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0'))
            return p;
    return NULL;
}

/* ------------------------------------------------------------ time */

/* With a clock, the Chrome trace's microseconds are cycles / clock_hz x
 * 1e6 and the VCD's ticks real time; the target names the process; a
 * target with separate channels has read and write channel threads. */
static void test_trace_clock_real_time(void **state)
{
    fixture *f = *state;
    stream s;
    ft_trace_config c;
    make_stream(&s, 60, 1, 21);
    config_init_steps(&c);
    c.target = "kpu";
    c.capacity = 100000;
    c.clock_hz = 2e9;
    c.duplex = 1;
    write_trace_config(f, &s, &c, 1, 1);
    check_json_scaled(f->json, &s, "kpu", 0, 1e6 / 2e9, 1);
    check_vcd_scaled(f->vcd, &s, "1 ps", 500, 1); /* 1 cycle = 0.5 ns = 500 ps */
    json_t *root = load_json(f->json);
    json_t *other = json_object_get(root, "otherData"), *events = json_object_get(root, "traceEvents");
    assert_true(jnum(other, "clock_hz") == 2e9);
    assert_non_null(strstr(jstr(other, "time_unit"), "real time"));
    assert_true(near(jnum(other, "end_time"), s.end / 2e9 * 1e6));
    assert_string_equal(thread_name(events, 2), "read channel");
    assert_string_equal(thread_name(events, 5), "write channel");
    json_decref(root);
    char *text = slurp(f->vcd);
    assert_non_null(strstr(text, "$comment target kpu $end\n$comment time: real, 1 cycle = 1/clock_hz s, clock_hz 2000000000 $end\n"));
    free(text);

    /* timestamps scale with the clock: half the clock, twice the time */
    double ts2[64];
    size_t i, n2 = 0;
    json_t *ev;
    root = load_json(f->json);
    json_array_foreach(json_object_get(root, "traceEvents"), i, ev)
        if (!strcmp(jstr(ev, "ph"), "X") && n2 < 64)
            ts2[n2++] = jnum(ev, "ts");
    json_decref(root);
    c.clock_hz = 1e9;
    write_trace_config(f, &s, &c, 1, 0);
    check_json_scaled(f->json, &s, "kpu", 0, 1e6 / 1e9, 1);
    root = load_json(f->json);
    size_t n1 = 0;
    json_array_foreach(json_object_get(root, "traceEvents"), i, ev)
        if (!strcmp(jstr(ev, "ph"), "X") && n1 < n2) {
            assert_true(near(jnum(ev, "ts"), 2 * ts2[n1]));
            n1++;
        }
    assert_int_equal(n1, n2);
    assert_true(n2 > 10);
    json_decref(root);

    /* the timescale is the coarsest in which a cycle lasts 100 ticks */
    static const struct {
        double hz;
        const char *scale;
        double tpu;
    } clocks[] = {{1.5e9, "1 ps", 1e12 / 1.5e9}, {1e6, "1 ns", 1e9 / 1e6}, {3e4, "1 ns", 1e9 / 3e4}, {1e3, "1 us", 1e6 / 1e3}, {1e14, "1 fs", 1e15 / 1e14}};
    for (size_t k = 0; k < sizeof clocks / sizeof clocks[0]; k++) {
        c.clock_hz = clocks[k].hz;
        c.json_path = NULL;
        write_trace_config(f, &s, &c, 0, 1);
        check_vcd_scaled(f->vcd, &s, clocks[k].scale, clocks[k].tpu, 1);
    }
    free(s.calls);
}

/* Without a clock the files say they are in cost units. */
static void test_trace_contest_says_cost_units(void **state)
{
    fixture *f = *state;
    stream s;
    make_stream(&s, 10, 0, 3);
    write_trace(f, &s, "contest", 1, 1);
    json_t *root = load_json(f->json);
    json_t *other = json_object_get(root, "otherData");
    assert_true(json_is_null(json_object_get(other, "clock_hz")));
    assert_non_null(strstr(jstr(other, "time_unit"), "cost units"));
    json_decref(root);
    char *text = slurp(f->vcd);
    assert_non_null(strstr(text, "$comment time: cost units (no clock), 1 cost unit = 1e9 fs $end\n"));
    free(text);
    free(s.calls);
}

/* ------------------------------------------------------------ units and channels */

/* N compute units: unit0_busy .. unitN-1_busy, a thread per unit; a span on
 * a unit the trace does not have fails at close. */
static void test_trace_compute_units(void **state)
{
    fixture *f = *state;
    stream s;
    ft_trace_config c;
    make_stream_units(&s, 60, 0, 5, 3);
    config_init_steps(&c);
    c.target = "three";
    c.capacity = 100000;
    c.units = 3;
    write_trace_config(f, &s, &c, 1, 1);
    check_json_scaled(f->json, &s, "three", 0, 1, 3);
    check_vcd_scaled(f->vcd, &s, "1 fs", 1e9, 3);
    json_t *root = load_json(f->json);
    json_t *events = json_object_get(root, "traceEvents");
    assert_string_equal(thread_name(events, 3), "compute unit 0");
    assert_string_equal(thread_name(events, 4), "compute unit 1");
    assert_string_equal(thread_name(events, 5), "compute unit 2");
    assert_string_equal(thread_name(events, 6), "subgraphs");
    json_decref(root);

    ft_trace *t;
    char err[512];
    c.units = 2;
    c.json_path = NULL;
    assert_int_equal(ft_trace_open_config(&t, &c, err, sizeof err), FT_OK);
    replay(t, &s);
    assert_int_equal(ft_trace_close(t, s.end, err, sizeof err), FT_EINPUT);
    assert_non_null(strstr(err, "on unit 2 of a trace with 2"));
    free(s.calls);
}

/* Loads and writes have signals of their own: a stream with writes only
 * leaves read_busy at 0, and the other way round. */
static void test_trace_read_write_signals(void **state)
{
    fixture *f = *state;
    stream s;
    memset(&s, 0, sizeof s);
    add_occ(&s, 0, 10);
    add_span(&s, FT_TRACE_LOAD, 0, 2, 0, 0, 0, 0, 1, 0, 8, 0, 8);
    add_span(&s, FT_TRACE_WRITE, 1, 3, 0, 0, 0, 0, 2, 0, 8, 0, 8);
    add_span(&s, FT_TRACE_COMPUTE, 0, 1, 0, 0, 0, 0, -1, 0, 0, 0, 0);
    add_span(&s, FT_TRACE_STEP, 0, 3, 0, 0, 0, 0, -1, 0, 0, 0, 0);
    add_span(&s, FT_TRACE_LOAD, 3, 4, 0, 0, 1, 1, 1, 0, 8, 0, 8);
    add_span(&s, FT_TRACE_COMPUTE, 3, 5, 0, 0, 1, 1, -1, 0, 0, 0, 0);
    add_span(&s, FT_TRACE_STEP, 3, 5, 0, 0, 1, 1, -1, 0, 0, 0, 0);
    add_occ(&s, 5, 0);
    write_trace(f, &s, "rw", 0, 1);
    check_vcd(f->vcd, &s);
    char *text = slurp(f->vcd);
    vcdp_doc d;
    assert_int_equal(vcdp_parse(text, &d), 0);
    int r = vcdp_find(&d, "read_busy"), w = vcdp_find(&d, "write_busy");
    assert_true(r >= 0 && w >= 0 && r != w);
    assert_int_equal(vcdp_value_at(&d, r, 1500000000), 1);
    assert_int_equal(vcdp_value_at(&d, w, 500000000), 0);
    assert_int_equal(vcdp_value_at(&d, w, 2500000000), 1);
    assert_int_equal(vcdp_value_at(&d, r, 2500000000), 0);
    assert_int_equal(vcdp_value_at(&d, vcdp_find(&d, "step"), 4000000000), 1);
    vcdp_free(&d);
    free(text);
    free(s.calls);
}

/* ------------------------------------------------------------ GTKWave save file */

/* The save file names the VCD and lists every $var of it, with its full
 * path, under [treeopen] lines for every scope; paths in another directory
 * are kept as given. */
static void test_trace_gtkw_lists_every_signal(void **state)
{
    fixture *f = *state;
    stream s;
    ft_trace_config c;
    make_stream_units(&s, 30, 0, 8, 2);
    config_init_steps(&c);
    c.target = "k$pu";
    c.capacity = 100000;
    c.units = 2;
    c.gtkw_path = f->gtkw;
    write_trace_config(f, &s, &c, 0, 1);
    char *vcdtext = slurp(f->vcd), *g = slurp(f->gtkw), files[512];
    vcdp_doc d;
    assert_non_null(g);
    assert_int_equal(vcdp_parse(vcdtext, &d), 0);
    assert_int_equal(d.nvars, 7);
    assert_non_null(find_line(g, "[dumpfile] \"t.vcd\""));
    assert_non_null(find_line(g, "[savefile] \"t.gtkw\""));
    assert_non_null(find_line(g, "[timestart] 0"));
    assert_non_null(find_line(g, "[treeopen] fusetile."));
    assert_non_null(strstr(g, "(target k_pu)"));
    for (int i = 0; i < d.nvars; i++) {
        char line[256];
        snprintf(line, sizeof line, "%s.%s", d.vars[i].path, d.vars[i].ref);
        if (!find_line(g, line))
            fail_msg("the save file does not list %s", line);
        snprintf(line, sizeof line, "[treeopen] %s.", d.vars[i].path);
        assert_non_null(find_line(g, line));
    }
    /* the signals in order, one-bit ones binary, integers decimal, the
     * subgraph through the translate file beside the save file */
    assert_non_null(strstr(g, "^1 t.subgraphs.txt\n@2024\nfusetile.controller.subgraph\n@24\nfusetile.controller.step\n@28\n"
                              "fusetile.channel.read_busy\nfusetile.channel.write_busy\nfusetile.compute.unit0_busy\n"
                              "fusetile.compute.unit1_busy\n@24\nfusetile.fast_memory.occupancy\n"));
    /* zoomed so that the run (d.last_time ticks) fills 1400 - 260 - 70
     * pixels at 2^-zoom ticks per 200 */
    const char *z = strstr(g, "\n*");
    assert_non_null(z);
    double zoom = strtod(z + 2, NULL), shown = pow(2, -zoom) / 200 * (1400 - 260 - 70);
    if (!(fabs(shown - (double)d.last_time) <= 1e-5 * (double)d.last_time))
        fail_msg("zoom %g shows %g ticks of %lld", zoom, shown, (long long)d.last_time);
    assert_non_null(find_line(g, "[size] 1400 900"));
    dir_listing(f, files, sizeof files);
    assert_string_equal(files, "t.gtkw t.subgraphs.txt t.vcd");
    vcdp_free(&d);
    free(vcdtext);
    free(g);

    /* a save file in another directory keeps both paths as given */
    char sub[300], gpath[400];
    snprintf(sub, sizeof sub, "%s/sub", f->dir);
    assert_int_equal(mkdir(sub, 0755), 0);
    snprintf(gpath, sizeof gpath, "%s/v.gtkw", sub);
    c.gtkw_path = gpath;
    write_trace_config(f, &s, &c, 0, 1);
    g = slurp(gpath);
    char want[800];
    snprintf(want, sizeof want, "[dumpfile] \"%s\"", f->vcd);
    assert_non_null(find_line(g, want));
    snprintf(want, sizeof want, "[savefile] \"%s\"", gpath);
    assert_non_null(find_line(g, want));
    snprintf(want, sizeof want, "^1 %s/v.subgraphs.txt", sub);
    assert_non_null(find_line(g, want));
    free(g);
    remove(gpath);
    snprintf(want, sizeof want, "%s/v.subgraphs.txt", sub);
    remove(want);
    rmdir(sub);
    free(s.calls);
}

static void test_trace_gtkw_path(void **state)
{
    static const char *const cases[][2] = {
        {"out.vcd", "out.gtkw"}, {"dir/run.vcd", "dir/run.gtkw"}, {"out", "out.gtkw"},
        {"out.VCD", "out.VCD.gtkw"}, {"a.vcd.vcd", "a.vcd.gtkw"}, {".vcd", ".gtkw"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *p = ft_trace_gtkw_path(cases[i][0]);
        assert_non_null(p);
        assert_string_equal(p, cases[i][1]);
        free(p);
    }
    static const char *const xl[][2] = {
        {"out.gtkw", "out.subgraphs.txt"}, {"dir/run.gtkw", "dir/run.subgraphs.txt"}, {"out", "out.subgraphs.txt"},
        {".gtkw", ".subgraphs.txt"},
    };
    for (size_t i = 0; i < sizeof xl / sizeof xl[0]; i++) {
        char *p = ft_trace_translate_path(xl[i][0]);
        assert_non_null(p);
        assert_string_equal(p, xl[i][1]);
        free(p);
    }
}

/* ------------------------------------------------------------ the default detail */

/* Write stream s as c says, told that `steps` steps are to come, with
 * ft_trace_sync after each call at later[i + 1] (the earliest start from
 * the next call on). */
static void write_synced(const ft_trace_config *c, const stream *s, const double *later, int64_t steps)
{
    ft_trace *t = NULL;
    char err[512];
    assert_int_equal(ft_trace_open_config(&t, c, err, sizeof err), FT_OK);
    ft_trace_expect_steps(t, steps);
    for (int i = 0; i < s->n; i++) {
        if (s->calls[i].is_occ)
            ft_trace_occupancy(t, s->calls[i].time, s->calls[i].elems);
        else
            ft_trace_span(t, &s->calls[i].e);
        ft_trace_sync(t, later[i + 1]);
    }
    if (ft_trace_close(t, s->end, err, sizeof err) != FT_OK)
        fail_msg("close: %s", err);
}

/* The default detail on a stream of two units whose events arrive out of
 * global time order, with the promises a replay makes (ft_trace_sync at
 * the earliest start still to come) and a small VCD buffer: it closes
 * cleanly; the JSON has one controller span per tile (its steps' extent
 * and count), one compute span per tile and unit, no step, load or write
 * spans, and counters sampled per period (10 steps here: at most 11
 * samples a track over 100 steps, the last one included); the VCD is
 * valid, its step signal at each tile's first step.  With a long run
 * expected, spans cover runs of tiles. */
static void test_trace_waves_default(void **state)
{
    fixture *f = *state;
    stream s;
    ft_trace_config c;
    make_stream_units(&s, 100, 1, 11, 2);
    double *later = malloc(((size_t)s.n + 1) * sizeof *later); /* earliest start from call i on */
    assert_non_null(later);
    later[s.n] = s.end;
    for (int i = s.n - 1; i >= 0; i--) {
        double st = s.calls[i].is_occ ? s.calls[i].time : s.calls[i].e.start;
        later[i] = s.calls[i].e.kind == FT_TRACE_SUBGRAPH && !s.calls[i].is_occ ? later[i + 1]
                   : st < later[i + 1] ? st : later[i + 1];
    }
    ft_trace_config_init(&c);
    assert_int_equal(c.detail, FT_TRACE_DETAIL_WAVES);
    c.json_path = f->json;
    c.vcd_path = f->vcd;
    c.capacity = 100000;
    c.units = 2;
    c.duplex = 1;
    vcd_buffer_cap = 16;
    write_synced(&c, &s, later, 100 * FT_TRACE_COUNTER_SAMPLES / 10); /* periods of 10 steps */
    vcd_buffer_cap = FT_TRACE_VCD_BUFFER;

    /* the tiles of the stream: (sg, tile) -> extent and steps */
    enum { MAXT = 64 };
    double t0[MAXT], t1[MAXT];
    int nsteps[MAXT] = {0}, ntiles = 0;
    for (int i = 0; i < s.n; i++) {
        const ft_trace_event *e = &s.calls[i].e;
        if (s.calls[i].is_occ || e->kind != FT_TRACE_STEP)
            continue;
        int k = e->sg * 10 + (int)e->tile;
        assert_true(k < MAXT);
        if (!nsteps[k]) {
            t0[k] = e->start;
            t1[k] = e->end;
            ntiles++;
        }
        t0[k] = e->start < t0[k] ? e->start : t0[k];
        t1[k] = e->end > t1[k] ? e->end : t1[k];
        nsteps[k]++;
    }
    json_t *doc = load_json(f->json), *evs = json_object_get(doc, "traceEvents");
    int tiles = 0, computes = 0, occ = 0, busy = 0;
    size_t i;
    json_t *ev;
    json_array_foreach(evs, i, ev) {
        const char *ph = jstr(ev, "ph"), *cat = json_object_get(ev, "cat") ? jstr(ev, "cat") : "";
        json_t *args = json_object_get(ev, "args");
        if (strcmp(ph, "C") == 0) {
            occ += strcmp(jstr(ev, "name"), "fast memory") == 0;
            busy += strcmp(jstr(ev, "name"), "channel busy") == 0;
            continue;
        }
        if (strcmp(ph, "X") != 0 || strcmp(cat, "subgraph") == 0)
            continue;
        if (strcmp(cat, "compute") == 0) {
            computes++;
            continue;
        }
        if (strcmp(cat, "tile") != 0)
            fail_msg("a %s span in the default detail", cat);
        int k = (int)jint(args, "sg") * 10 + (int)jint(args, "tile");
        assert_true(k < MAXT && nsteps[k] > 0);
        assert_true(near(jnum(ev, "ts"), t0[k]) && near(jnum(ev, "ts") + jnum(ev, "dur"), t1[k]));
        assert_int_equal(jint(args, "steps"), nsteps[k]);
        tiles++;
    }
    assert_int_equal(tiles, ntiles);
    assert_int_equal(computes, 2 * ntiles); /* a tile's two k-steps run on units 0 and 1 */
    if (occ < 2 || occ > 11 || busy < 2 || busy > 11)
        fail_msg("%d occupancy and %d busy samples, want 2 to 11 each", occ, busy);
    json_t *od = json_object_get(doc, "otherData");
    assert_string_equal(jstr(od, "detail"), "waves");
    assert_int_equal(jint(od, "counter_period_steps"), 10);
    json_decref(doc);

    char *text = slurp(f->vcd);
    vcdp_doc d;
    assert_int_equal(vcdp_parse(text, &d), 0);
    int st = vcdp_find(&d, "step");
    assert_true(st >= 0);
    assert_true(d.vars[st].n > 1);
    for (size_t j = 0; j < d.vars[st].n; j++)
        if (d.vars[st].value[j] % 2 != 0) /* tiles are two steps: the first is even */
            fail_msg("the step signal shows step %llu", (unsigned long long)d.vars[st].value[j]);
    vcdp_free(&d);
    free(text);

    /* a long run (80 000 steps expected): a span covers 4 steps or more,
     * whole tiles (two tiles of two steps; a unit's compute span 8 steps,
     * the units taking turns), within a subgraph (ten tiles) */
    c.vcd_path = NULL;
    write_synced(&c, &s, later, 4 * FT_TRACE_WAVE_SPANS);
    doc = load_json(f->json);
    evs = json_object_get(doc, "traceEvents");
    tiles = computes = 0;
    json_array_foreach(evs, i, ev) {
        json_t *cat = json_object_get(ev, "cat"), *args = json_object_get(ev, "args");
        if (!cat || strcmp(jstr(ev, "ph"), "X") != 0)
            continue;
        if (strcmp(json_string_value(cat), "tile") == 0) {
            int64_t first = jint(args, "tile");
            assert_int_equal(jint(args, "last_tile"), first + 1);
            assert_int_equal(jint(args, "steps"), 4);
            int k = (int)jint(args, "sg") * 10 + (int)first;
            assert_true(near(jnum(ev, "ts"), t0[k]) && near(jnum(ev, "ts") + jnum(ev, "dur"), t1[k + 1]));
            tiles++;
        }
        computes += strcmp(json_string_value(cat), "compute") == 0;
    }
    assert_int_equal(tiles, ntiles / 2);
    assert_int_equal(computes, 2 * 5 * 3); /* per unit and subgraph: tiles 0-3, 4-7, 8-9 */
    assert_int_equal(jint(json_object_get(doc, "otherData"), "span_steps"), 4);
    json_decref(doc);
    free(later);
    free(s.calls);
}

/* ------------------------------------------------------------ names */

/* Subgraph spans are named after their ops' source names (the importer's
 * lowering suffix stripped, each once, shared dotted prefixes elided),
 * else "op N"; a long list is cut with a count; the schedule's label is in
 * the args; steps list their tensors by name or as "tensor N". */
static void test_trace_subgraph_names(void **state)
{
    fixture *f = *state;
    ft_problem *p = NULL, *q = NULL, *big = NULL;
    ft_schedule *sc = NULL, *sq = NULL, *sbig = NULL;
    ft_status st;
    ft_trace *t;
    char err[512];
    assert_int_equal(ft_problem_parse("{\"widths\": [8, 8, 8, 8, 8], \"heights\": [8, 8, 8, 8, 8],"
                                      " \"inputs\": [[0], [1], [2], [3]], \"outputs\": [[1], [2], [3], [4]],"
                                      " \"base_costs\": [1, 1, 1, 1], \"op_types\": [\"Pointwise\", \"Pointwise\","
                                      " \"Pointwise\", \"Pointwise\"], \"fast_memory_capacity\": 1000,"
                                      " \"slow_memory_bandwidth\": 1, \"native_granularity\": [8, 8],"
                                      " \"op_names\": [\"enc.l1.conv/im2col\", \"enc.l1.conv\", \"enc.l1.bn\", \"enc.l2.fc/rhs\"],"
                                      " \"tensor_names\": [\"x\", \"enc.l1.conv/im2col\", \"enc.l1.conv\", \"enc.l1.bn\", \"y\"]}",
                                      "names.json", &p, &st),
                     FT_OK);
    assert_int_equal(ft_schedule_parse("{\"subgraphs\": [[0, 1, 2], [3]], \"granularities\": [[8, 8, 8], [8, 8, 8]],"
                                       " \"tensors_to_retain\": [[], []], \"subgraph_labels\": [\"conv+bn enc.l1.conv\", null]}",
                                       "names.schedule.json", &sc, &st),
                     FT_OK);
    assert_int_equal(trace_open_steps(&t, f->json, NULL, "x", 1000, err, sizeof err), FT_OK);
    assert_int_equal(ft_trace_set_names(t, p, sc), FT_OK);
    ft_trace_event e = {FT_TRACE_LOAD, 0, 1, 0, 0, 0, 0, 0, {0, 8, 0, 8}, 64, 0};
    ft_trace_span(t, &e);
    e.kind = FT_TRACE_WRITE;
    e.tensor = 3;
    ft_trace_span(t, &e);
    e.kind = FT_TRACE_STEP;
    e.tensor = -1;
    e.elems = 0;
    ft_trace_span(t, &e);
    e.kind = FT_TRACE_SUBGRAPH;
    e.tile = e.step = e.kstep = -1;
    ft_trace_span(t, &e);
    e = (ft_trace_event){FT_TRACE_STEP, 1, 2, 1, 0, 0, 0, -1, {0, 0, 0, 0}, 0, 0};
    ft_trace_span(t, &e);
    e = (ft_trace_event){FT_TRACE_SUBGRAPH, 1, 2, 1, -1, -1, -1, -1, {0, 0, 0, 0}, 0, 0};
    ft_trace_span(t, &e);
    assert_int_equal(ft_trace_close(t, 2, err, sizeof err), FT_OK);
    json_t *root = load_json(f->json);
    json_t *events = json_object_get(root, "traceEvents");
    json_t *sg0 = find_span(events, "subgraph", 0), *sg1 = find_span(events, "subgraph", 1);
    assert_non_null(sg0);
    assert_non_null(sg1);
    assert_string_equal(jstr(sg0, "name"), "enc.l1.conv+bn");
    assert_string_equal(jstr(sg1, "name"), "enc.l2.fc");
    json_t *a0 = json_object_get(sg0, "args");
    assert_string_equal(jstr(a0, "schedule_label"), "conv+bn enc.l1.conv");
    assert_int_equal(json_array_size(json_object_get(a0, "ops")), 3);
    assert_int_equal(json_integer_value(json_array_get(json_object_get(a0, "ops"), 2)), 2);
    assert_int_equal(jint(a0, "first_step"), 0);
    assert_int_equal(jint(a0, "steps"), 1);
    assert_int_equal(jint(json_object_get(sg1, "args"), "first_step"), 1);
    assert_null(json_object_get(json_object_get(sg1, "args"), "schedule_label"));
    json_t *step = find_span(events, "step", 0);
    json_t *sa = json_object_get(step, "args");
    assert_string_equal(json_string_value(json_array_get(json_object_get(sa, "loads"), 0)), "x");
    assert_string_equal(json_string_value(json_array_get(json_object_get(sa, "writes"), 0)), "enc.l1.bn");
    assert_int_equal(json_array_size(json_object_get(json_object_get(find_span(events, "step", 1), "args"), "loads")), 0);
    json_decref(root);

    /* no names: "op N", tensors as "tensor N" */
    assert_int_equal(ft_problem_parse("{\"widths\": [8, 8, 8], \"heights\": [8, 8, 8], \"inputs\": [[0], [1]],"
                                      " \"outputs\": [[1], [2]], \"base_costs\": [1, 1], \"op_types\": [\"Pointwise\","
                                      " \"Pointwise\"], \"fast_memory_capacity\": 1000, \"slow_memory_bandwidth\": 1,"
                                      " \"native_granularity\": [8, 8]}",
                                      "plain.json", &q, &st),
                     FT_OK);
    assert_int_equal(ft_schedule_parse("{\"subgraphs\": [[0, 1]], \"granularities\": [[8, 8, 8]], \"tensors_to_retain\": [[]]}",
                                       "plain.schedule.json", &sq, &st),
                     FT_OK);
    assert_int_equal(trace_open_steps(&t, f->json, NULL, "x", 1000, err, sizeof err), FT_OK);
    assert_int_equal(ft_trace_set_names(t, q, sq), FT_OK);
    e = (ft_trace_event){FT_TRACE_LOAD, 0, 1, 0, 0, 0, 0, 0, {0, 8, 0, 8}, 64, 0};
    ft_trace_span(t, &e);
    e = (ft_trace_event){FT_TRACE_STEP, 0, 1, 0, 0, 0, 0, -1, {0, 0, 0, 0}, 0, 0};
    ft_trace_span(t, &e);
    e = (ft_trace_event){FT_TRACE_SUBGRAPH, 0, 1, 0, -1, -1, -1, -1, {0, 0, 0, 0}, 0, 0};
    ft_trace_span(t, &e);
    assert_int_equal(ft_trace_close(t, 1, err, sizeof err), FT_OK);
    root = load_json(f->json);
    events = json_object_get(root, "traceEvents");
    assert_string_equal(jstr(find_span(events, "subgraph", 0), "name"), "op 0+op 1");
    sa = json_object_get(find_span(events, "step", 0), "args");
    assert_string_equal(json_string_value(json_array_get(json_object_get(sa, "loads"), 0)), "tensor 0");
    json_decref(root);

    /* a long list: cut, with the count of ops left out */
    char pj[8192], sj[1024];
    int n = 40, len = 0, sl = 0;
    len += snprintf(pj + len, sizeof pj - (size_t)len, "{\"widths\": [8");
    for (int i = 0; i < n; i++)
        len += snprintf(pj + len, sizeof pj - (size_t)len, ", 8");
    len += snprintf(pj + len, sizeof pj - (size_t)len, "], \"heights\": [8");
    for (int i = 0; i < n; i++)
        len += snprintf(pj + len, sizeof pj - (size_t)len, ", 8");
    len += snprintf(pj + len, sizeof pj - (size_t)len, "], \"inputs\": [");
    for (int i = 0; i < n; i++)
        len += snprintf(pj + len, sizeof pj - (size_t)len, "%s[%d]", i ? ", " : "", i);
    len += snprintf(pj + len, sizeof pj - (size_t)len, "], \"outputs\": [");
    for (int i = 0; i < n; i++)
        len += snprintf(pj + len, sizeof pj - (size_t)len, "%s[%d]", i ? ", " : "", i + 1);
    len += snprintf(pj + len, sizeof pj - (size_t)len, "], \"base_costs\": [");
    for (int i = 0; i < n; i++)
        len += snprintf(pj + len, sizeof pj - (size_t)len, "%s1", i ? ", " : "");
    len += snprintf(pj + len, sizeof pj - (size_t)len, "], \"op_types\": [");
    for (int i = 0; i < n; i++)
        len += snprintf(pj + len, sizeof pj - (size_t)len, "%s\"Pointwise\"", i ? ", " : "");
    len += snprintf(pj + len, sizeof pj - (size_t)len, "], \"op_names\": [");
    for (int i = 0; i < n; i++)
        len += snprintf(pj + len, sizeof pj - (size_t)len, "%s\"block%02d.layer\"", i ? ", " : "", i);
    snprintf(pj + len, sizeof pj - (size_t)len,
             "], \"fast_memory_capacity\": 100000, \"slow_memory_bandwidth\": 1, \"native_granularity\": [8, 8]}");
    sl += snprintf(sj + sl, sizeof sj - (size_t)sl, "{\"subgraphs\": [[");
    for (int i = 0; i < n; i++)
        sl += snprintf(sj + sl, sizeof sj - (size_t)sl, "%s%d", i ? ", " : "", i);
    snprintf(sj + sl, sizeof sj - (size_t)sl, "]], \"granularities\": [[8, 8, 8]], \"tensors_to_retain\": [[]]}");
    assert_int_equal(ft_problem_parse(pj, "big.json", &big, &st), FT_OK);
    assert_int_equal(ft_schedule_parse(sj, "big.schedule.json", &sbig, &st), FT_OK);
    assert_int_equal(trace_open_steps(&t, f->json, NULL, "x", 1000, err, sizeof err), FT_OK);
    assert_int_equal(ft_trace_set_names(t, big, sbig), FT_OK);
    ft_trace_span(t, &e);
    assert_int_equal(ft_trace_close(t, 1, err, sizeof err), FT_OK);
    root = load_json(f->json);
    const char *name = jstr(find_span(json_object_get(root, "traceEvents"), "subgraph", 0), "name");
    /* "block00.layer" is 13 bytes, each further one "+block01.layer" 14:
     * 11 names fit in 160 bytes, the 29 other ops are counted */
    assert_non_null(name);
    assert_true(strncmp(name, "block00.layer+block01.layer+", 28) == 0);
    const char *cut = strstr(name, "+... (+29 ops)");
    assert_non_null(cut);
    assert_int_equal(strlen(cut), strlen("+... (+29 ops)"));
    assert_true(strlen(name) <= 160 + strlen("+... (+29 ops)"));
    json_decref(root);
    ft_schedule_free(sbig);
    ft_problem_free(big);
    ft_schedule_free(sq);
    ft_problem_free(q);
    ft_schedule_free(sc);
    ft_problem_free(p);
}

/* ------------------------------------------------------------ the window */

/* A window of steps: only their spans, their occupancy from the first
 * step's start and the subgraph spans they touch (cut to the window) are
 * written; the VCD starts at the window with the step's values. */
static void test_trace_window_limits_events(void **state)
{
    fixture *f = *state;
    stream s;
    ft_trace_config c;
    const int64_t first = 30, count = 25;
    make_stream(&s, 100, 0, 17);
    config_init_steps(&c);
    c.target = "w";
    c.capacity = 100000;
    c.window_first = first;
    c.window_count = count;
    c.gtkw_path = f->gtkw;
    write_trace_config(f, &s, &c, 1, 1);

    /* what the window holds, from the stream */
    int nin = 0, first_occ = -1, first_step_call = -1;
    double t0 = INFINITY, t1 = 0;
    for (int i = 0; i < s.n; i++) {
        const call *x = &s.calls[i];
        if (x->is_occ || x->e.kind == FT_TRACE_SUBGRAPH || x->g < first || x->g >= first + count)
            continue;
        if (first_step_call < 0) {
            first_step_call = i;
            first_occ = i - 1; /* the step's occupancy comes right before its spans */
            assert_true(s.calls[first_occ].is_occ);
        }
        nin++;
        if (x->e.end > t1)
            t1 = x->e.end;
    }
    t0 = s.calls[first_occ].time;
    json_t *root = load_json(f->json);
    json_t *events = json_object_get(root, "traceEvents"), *other = json_object_get(root, "otherData");
    size_t i;
    json_t *ev;
    int nx = 0, nsub = 0, ncounter = 0;
    json_array_foreach(events, i, ev) {
        const char *ph = jstr(ev, "ph");
        json_t *args = json_object_get(ev, "args");
        if (!strcmp(ph, "C")) {
            if (ncounter++ == 0) {
                assert_true(jnum(ev, "ts") == t0);
                assert_int_equal(jint(args, "elements"), s.calls[first_occ].elems);
            }
            assert_true(jnum(ev, "ts") >= t0 && jnum(ev, "ts") <= t1);
            continue;
        }
        if (strcmp(ph, "X"))
            continue;
        assert_true(jnum(ev, "ts") >= t0);
        assert_true(jnum(ev, "ts") + jnum(ev, "dur") <= t1 + 1e-9 * t1);
        if (!strcmp(jstr(ev, "cat"), "subgraph")) {
            int sg = (int)jint(args, "sg");
            assert_true(sg == 1 || sg == 2); /* steps 30..54: subgraphs 1 (20..39) and 2 (40..59) */
            assert_true(json_is_true(json_object_get(args, "clipped_to_window")));
            nsub++;
            continue;
        }
        if (!strcmp(jstr(ev, "cat"), "step")) {
            int64_t g = jint(args, "replay_step");
            assert_true(g >= first && g < first + count);
        }
        nx++;
    }
    assert_int_equal(nx, nin);
    assert_int_equal(nsub, 2);
    assert_true(ncounter >= 1);
    json_t *w = json_object_get(other, "window");
    assert_int_equal(jint(w, "first_step"), first);
    assert_int_equal(jint(w, "steps"), count);
    assert_true(near(jnum(other, "end_time"), t1));
    json_decref(root);

    /* the VCD: from the window's start, with its first step's values */
    char *text = slurp(f->vcd), *g = slurp(f->gtkw), line[64];
    vcdp_doc d;
    assert_non_null(strstr(text, "$comment window: steps 30 to 54 $end\n"));
    assert_int_equal(vcdp_parse(text, &d), 0);
    int64_t o = (int64_t)llround(t0 * 1e9);
    int vstep = vcdp_find(&d, "step"), vsg = vcdp_find(&d, "subgraph"), vocc = vcdp_find(&d, "occupancy");
    for (int v = 0; v < d.nvars; v++)
        assert_true(d.vars[v].n >= 1 && d.vars[v].time[0] == o); /* $dumpvars at the window's start */
    assert_int_equal(d.vars[vstep].value[0], first);
    assert_int_equal(d.vars[vsg].value[0], 1);
    assert_int_equal(d.vars[vocc].value[0], s.calls[first_occ].elems);
    assert_int_equal(d.last_time, (int64_t)llround(t1 * 1e9));
    for (int k = first_step_call; k < s.n; k++) { /* every step of the window shows */
        const call *x = &s.calls[k];
        if (!x->is_occ && x->e.kind == FT_TRACE_STEP && x->g < first + count)
            assert_int_equal(vcdp_value_at(&d, vstep, (int64_t)llround(x->e.start * 1e9)), x->g);
    }
    snprintf(line, sizeof line, "[timestart] %" PRId64, o);
    assert_non_null(find_line(g, line));
    vcdp_free(&d);
    free(text);
    free(g);

    /* a window over every step writes every span */
    c.window_first = 0;
    c.window_count = 1000;
    c.gtkw_path = NULL;
    write_trace_config(f, &s, &c, 1, 0);
    root = load_json(f->json);
    nx = 0;
    json_array_foreach(json_object_get(root, "traceEvents"), i, ev)
        nx += !strcmp(jstr(ev, "ph"), "X");
    int nspans = 0;
    for (int k = 0; k < s.n; k++)
        nspans += !s.calls[k].is_occ;
    assert_int_equal(nx, nspans);
    json_decref(root);
    free(s.calls);
}

/* ------------------------------------------------------------ errors */

/* Bad configurations fail at open with one line naming the field or the
 * path; spans that go back to an earlier subgraph fail at close. */
static void test_trace_config_errors(void **state)
{
    fixture *f = *state;
    ft_trace *t = (ft_trace *)&t;
    ft_trace_config c;
    char err[512], files[512];
    static const struct {
        int units;
        double clock;
        int64_t first, count;
        const char *want;
    } bad[] = {
        {0, 0, 0, 0, "units 0 is out of range (1 to 1024)"},
        {1025, 0, 0, 0, "units 1025 is out of range"},
        {1, -1, 0, 0, "clock_hz -1 must be a finite number"},
        {1, NAN, 0, 0, "clock_hz nan must be a finite number"},
        {1, 0, -1, 5, "window of 5 steps from step -1 is out of range"},
        {1, 0, 5, -2, "window of -2 steps from step 5 is out of range"},
        {1, 0, INT64_MAX, 2, "is out of range"},
        {1, 0, 0, 0, "detail 2 is not one of 0 (waves) and 1 (steps)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        config_init_steps(&c);
        c.json_path = f->json;
        c.units = bad[i].units;
        c.clock_hz = bad[i].clock;
        c.window_first = bad[i].first;
        c.window_count = bad[i].count;
        if (strstr(bad[i].want, "detail"))
            c.detail = 2;
        assert_int_equal(ft_trace_open_config(&t, &c, err, sizeof err), FT_EINPUT);
        assert_null(t);
        if (!strstr(err, bad[i].want))
            fail_msg("case %zu: message '%s', want '%s'", i, err, bad[i].want);
    }
    config_init_steps(&c);
    c.gtkw_path = f->gtkw;
    assert_int_equal(ft_trace_open_config(&t, &c, err, sizeof err), FT_EINPUT);
    assert_non_null(strstr(err, "a GTKWave save file needs a VCD"));
    c.vcd_path = f->vcd;
    c.json_path = f->gtkw;
    assert_int_equal(ft_trace_open_config(&t, &c, err, sizeof err), FT_EINPUT);
    assert_non_null(strstr(err, "would be the same file"));
    dir_listing(f, files, sizeof files);
    assert_string_equal(files, "");

    /* subgraph by subgraph */
    ft_trace_event e = {FT_TRACE_COMPUTE, 0, 1, 1, 0, 0, 0, -1, {0, 0, 0, 0}, 0, 0};
    assert_int_equal(trace_open_steps(&t, f->json, NULL, "x", 1, err, sizeof err), FT_OK);
    ft_trace_span(t, &e);
    e.sg = 0;
    ft_trace_span(t, &e);
    assert_int_equal(ft_trace_close(t, 1, err, sizeof err), FT_EINPUT);
    assert_non_null(strstr(err, "compute span of subgraph 0 after spans of subgraph 1"));
    dir_listing(f, files, sizeof files);
    assert_string_equal(files, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_trace_clock_real_time, setup, teardown),
        cmocka_unit_test_setup_teardown(test_trace_contest_says_cost_units, setup, teardown),
        cmocka_unit_test_setup_teardown(test_trace_compute_units, setup, teardown),
        cmocka_unit_test_setup_teardown(test_trace_read_write_signals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_trace_gtkw_lists_every_signal, setup, teardown),
        cmocka_unit_test(test_trace_gtkw_path),
        cmocka_unit_test_setup_teardown(test_trace_waves_default, setup, teardown),
        cmocka_unit_test_setup_teardown(test_trace_subgraph_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_trace_window_limits_events, setup, teardown),
        cmocka_unit_test_setup_teardown(test_trace_config_errors, setup, teardown),
    };
    return cmocka_run_group_tests_name("trace targets", tests, NULL, NULL);
}
