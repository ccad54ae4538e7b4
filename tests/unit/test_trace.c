/* test_trace.c - unit tests of the trace writers (sim/trace*.c): Chrome trace JSON structure, VCD contents, escaping, errors, temporary files.
 *
 * The writer is compiled into this test (#include of sim/trace*.c) so that
 * the test can shrink its VCD buffer and drive the flush and spill paths
 * with small streams, and so the test needs no simulator library.
 * test_trace_targets.c tests what traces of real targets add (clock,
 * compute units, the GTKWave save file, names, the window).
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
    /* contest target: four threads only (controller, channel, compute, subgraphs) */
    json_t *root = load_json(f->json);
    assert_string_equal(thread_name(json_object_get(root, "traceEvents"), 4), "subgraphs");
    assert_null(thread_name(json_object_get(root, "traceEvents"), 5));
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
    assert_int_equal(trace_open_steps(&t, NULL, f->vcd, "silent", 10, err, sizeof err), FT_OK);
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
    assert_int_equal(trace_open_steps(&t, f->json, f->vcd, "x", 1000, err, sizeof err), FT_OK);
    assert_int_equal(ft_trace_set_names(t, p, sc), FT_OK);
    ft_trace_event e = {FT_TRACE_LOAD, 0, 1, 0, 0, 0, 0, 0, {0, 8, 0, 8}, 64, 0};
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
    assert_non_null(strstr(text, "$comment target x $end\n"
                                 "$comment time: cost units (no clock), 1 cost unit = 1e9 fs $end\n"
                                 "$comment subgraph 0 blk.a_end+b $end\n"
                                 "$comment subgraph 1 blk.b $end\n$timescale 1 fs $end\n"));
    vcdp_doc d;
    assert_int_equal(vcdp_parse(text, &d), 0);
    vcdp_free(&d);
    free(text);

    /* too late: after an event */
    assert_int_equal(trace_open_steps(&t, f->json, NULL, "x", 1000, err, sizeof err), FT_OK);
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
    assert_int_equal(trace_open_steps(&t, f->json, f->vcd, NULL, 64, err, sizeof err), FT_OK);
    assert_int_equal(ft_trace_close(t, 2.5, err, sizeof err), FT_OK);
    json_t *root = load_json(f->json);
    json_t *events = json_object_get(root, "traceEvents");
    assert_int_equal(json_array_size(events), 9); /* process name, 4 x (thread name, sort index) */
    assert_string_equal(thread_name(events, 1), "controller");
    assert_string_equal(thread_name(events, 2), "slow-memory channel");
    assert_string_equal(thread_name(events, 3), "compute engine");
    assert_string_equal(thread_name(events, 4), "subgraphs");
    assert_string_equal(jstr(json_object_get(root, "otherData"), "target"), "fusetile");
    json_decref(root);
    char *text = slurp(f->vcd);
    vcdp_doc d;
    assert_int_equal(vcdp_parse(text, &d), 0);
    assert_int_equal(d.last_time, 2500000000);
    assert_int_equal(d.vars[vcdp_find(&d, "occupancy")].n, 1);
    assert_non_null(strstr(text, "#0\n$dumpvars\nb0 !\nb0 \"\n0%\n0&\n0'\nb0 (\n$end\n#2500000000\n"));
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
    assert_string_equal(thread_name(events, 4), "subgraphs");
    assert_string_equal(thread_name(events, 5), "compute engine #2");
    assert_string_equal(thread_name(events, 6), "compute engine #3");
    assert_string_equal(thread_name(events, 7), "write channel");
    assert_null(thread_name(events, 8));
    json_decref(root);
    free(s.calls);
}

/* Nothing appears under the final names before close. */
static void test_trace_temporary_then_rename(void **state)
{
    fixture *f = *state;
    ft_trace *t;
    char err[256], files[512], want[512];
    struct ft_trace_event e = {FT_TRACE_COMPUTE, 0, 1, 0, 0, 0, 0, -1, {0, 0, 0, 0}, 0, 0};
    assert_int_equal(trace_open_steps(&t, f->json, f->vcd, "x", 1, err, sizeof err), FT_OK);
    ft_trace_span(t, &e);
    dir_listing(f, files, sizeof files);
    /* PATH.fusetile-tmp.PID.N (fusetile/io.h), N counting per process */
    unsigned long nj = 0, nv = 0;
    int used = 0;
    snprintf(want, sizeof want, "t.json.fusetile-tmp.%ld.%%lu t.vcd.fusetile-tmp.%ld.%%lu%%n", (long)getpid(), (long)getpid());
    assert_int_equal(sscanf(files, want, &nj, &nv, &used), 2);
    assert_int_equal(files[used], '\0');
    assert_true(nv > nj);
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
    assert_int_equal(trace_open_steps(&t, f->json, f->vcd, "x", 1, err, sizeof err), FT_OK);
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
    assert_int_equal(trace_open_steps(&t, NULL, NULL, "x", 1, err, sizeof err), FT_OK);
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
    assert_int_equal(trace_open_steps(&t, NULL, f->vcd, "x", 1, err, sizeof err), FT_OK);
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
    assert_int_equal(trace_open_steps(&t, bad, f->vcd, "x", 1, err, sizeof err), FT_EINPUT);
    assert_null(t);
    snprintf(want, sizeof want, "%s: cannot write: %s", bad, strerror(ENOENT));
    if (strncmp(err, want, strlen(want)) != 0)
        fail_msg("message '%s', want it to start with '%s'", err, want);

    snprintf(bad, sizeof bad, "%s/no-such-dir/t.vcd", f->dir);
    assert_int_equal(trace_open_steps(&t, f->json, bad, "x", 1, err, sizeof err), FT_EINPUT);
    snprintf(want, sizeof want, "%s: cannot write: %s", bad, strerror(ENOENT));
    assert_true(strncmp(err, want, strlen(want)) == 0);

    /* a directory */
    assert_int_equal(trace_open_steps(&t, f->dir, NULL, "x", 1, err, sizeof err), FT_EINPUT);
    snprintf(want, sizeof want, "%s: cannot write: %s", f->dir, strerror(EISDIR));
    assert_string_equal(err, want);

    /* the same file twice */
    assert_int_equal(trace_open_steps(&t, f->json, f->json, "x", 1, err, sizeof err), FT_EINPUT);
    assert_non_null(strstr(err, f->json));

    /* a read-only directory (root ignores permissions: skip that part) */
    if (geteuid() != 0) {
        char ro[300];
        snprintf(ro, sizeof ro, "%s/ro", f->dir);
        assert_int_equal(mkdir(ro, 0555), 0);
        snprintf(bad, sizeof bad, "%s/t.json", ro);
        assert_int_equal(trace_open_steps(&t, bad, NULL, "x", 1, err, sizeof err), FT_EINPUT);
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
    struct ft_trace_event e = {FT_TRACE_LOAD, 2, 1, 0, 4, 5, 0, 1, {0, 1, 0, 1}, 1, 0};

    /* end before start */
    assert_int_equal(trace_open_steps(&t, f->json, f->vcd, "x", 1, err, sizeof err), FT_OK);
    ft_trace_span(t, &e);
    assert_int_equal(ft_trace_close(t, 3, err, sizeof err), FT_EINPUT);
    assert_non_null(strstr(err, f->json));
    assert_non_null(strstr(err, "load span (sg 0 tile 4 step 5) has start 2 and end 1"));
    dir_listing(f, files, sizeof files);
    assert_string_equal(files, "");

    /* a unit going back in time (VCD) */
    assert_int_equal(trace_open_steps(&t, NULL, f->vcd, "x", 1, err, sizeof err), FT_OK);
    e.start = 2;
    e.end = 3;
    ft_trace_span(t, &e);
    e.start = 1;
    ft_trace_span(t, &e);
    assert_int_equal(ft_trace_close(t, 3, err, sizeof err), FT_EINPUT);
    assert_non_null(strstr(err, f->vcd));
    assert_non_null(strstr(err, "before the previous one"));

    /* NaN and negative times, negative occupancy, bad end time */
    assert_int_equal(trace_open_steps(&t, f->json, NULL, "x", 1, err, sizeof err), FT_OK);
    e.start = NAN;
    ft_trace_span(t, &e);
    assert_int_equal(ft_trace_close(t, 3, err, sizeof err), FT_EINPUT);
    assert_int_equal(trace_open_steps(&t, f->json, NULL, "x", 1, err, sizeof err), FT_OK);
    ft_trace_occupancy(t, 1, -5);
    assert_int_equal(ft_trace_close(t, 3, err, sizeof err), FT_EINPUT);
    assert_non_null(strstr(err, "occupancy -5"));
    assert_int_equal(trace_open_steps(&t, f->json, f->vcd, "x", 1, err, sizeof err), FT_OK);
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

/* The power track (ft_trace_config.power, ft_trace_power): levels cut to
 * the run, not repeated, 0 W in a gap and at the end, in the Chrome trace's
 * "power" counter and the VCD's power.watts (a real) at the same instants,
 * whatever the VCD buffer (the power holds every change until the close);
 * its errors fail the trace. */
static void test_trace_power(void **state)
{
    fixture *f = *state;
    stream s;
    make_stream(&s, 200, 1, 3);
    const double L = s.end;
    /* levels: 100 W over [0, L/4) and again over [L/4, L/2) (one level),
     * an empty one, a gap to 0.6 L, 50.5 W to past the end (cut there) */
    const double lv[][3] = {{0, L / 4, 100}, {L / 4, L / 4, 7}, {L / 4, L / 2, 100}, {0.6 * L, 2 * L, 50.5}};
    const double want_t[] = {0, L / 2, 0.6 * L, L}, want_w[] = {100, 0, 50.5, 0};
    static const size_t caps[] = {1u << 18, 4};
    for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++) {
        vcd_buffer_cap = caps[c];
        ft_trace_config cfg;
        config_init_steps(&cfg);
        cfg.json_path = f->json;
        cfg.vcd_path = f->vcd;
        cfg.capacity = 100000;
        cfg.power = 1;
        ft_trace *t;
        char err[512];
        assert_int_equal(ft_trace_open_config(&t, &cfg, err, sizeof err), FT_OK);
        replay(t, &s);
        for (size_t i = 0; i < 4; i++)
            ft_trace_power(t, lv[i][0], lv[i][1], lv[i][2]);
        if (ft_trace_close(t, L, err, sizeof err) != FT_OK)
            fail_msg("close: %s", err);
        check_json(f->json, &s, "fusetile", 0);
        check_vcd(f->vcd, &s);
        /* the Chrome counter */
        json_t *root = load_json(f->json), *ev;
        size_t i, k = 0;
        json_array_foreach(json_object_get(root, "traceEvents"), i, ev) {
            if (strcmp(json_string_value(json_object_get(ev, "name")), "power") != 0)
                continue;
            assert_string_equal(json_string_value(json_object_get(ev, "ph")), "C");
            assert_true(k < 4);
            assert_true(json_number_value(json_object_get(ev, "ts")) == want_t[k]);
            assert_true(json_number_value(json_object_get(json_object_get(ev, "args"), "watts")) == want_w[k]);
            k++;
        }
        assert_int_equal(k, 4);
        json_decref(root);
        /* the VCD's real, at the same instants (1e9 fs per cost unit) */
        vcdp_doc d;
        char *text = slurp(f->vcd);
        assert_non_null(text);
        if (vcdp_parse(text, &d) != 0)
            fail_msg("VCD: %s", d.err);
        int v = vcdp_find(&d, "watts");
        assert_true(v >= 0);
        assert_string_equal(d.vars[v].type, "real");
        assert_string_equal(d.vars[v].path, "fusetile.power");
        assert_int_equal(d.vars[v].n, 4);
        for (size_t j = 0; j < 4; j++) {
            assert_true(d.vars[v].time[j] == llround(want_t[j] * 1e9));
            assert_true(vcdp_real(d.vars[v].value[j]) == want_w[j]);
        }
        vcdp_free(&d);
        free(text);
    }
    vcd_buffer_cap = 64;
    remove(f->json);
    remove(f->vcd);
    /* errors: a level without the track, before the previous one's end,
     * negative or NaN watts */
    static const double bad[][3] = {{0, 1, 5}, {2, 1, 5}, {0, 1, -1}, {0, 1, NAN}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ft_trace_config cfg;
        config_init_steps(&cfg);
        cfg.json_path = f->json;
        cfg.power = i > 0;
        ft_trace *t;
        char err[512], files[512];
        assert_int_equal(ft_trace_open_config(&t, &cfg, err, sizeof err), FT_OK);
        replay(t, &s);
        if (i == 1)
            ft_trace_power(t, 0, 3, 5); /* the next starts at 2, before 3 */
        ft_trace_power(t, bad[i][0], bad[i][1], bad[i][2]);
        assert_int_equal(ft_trace_close(t, L, err, sizeof err), FT_EINPUT);
        assert_non_null(strstr(err, i == 0 ? "without a power track" : "out of range or before the previous one"));
        dir_listing(f, files, sizeof files);
        assert_string_equal(files, "");
    }
    ft_trace_power(NULL, 0, 1, 1); /* NULL: nothing */
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
        cmocka_unit_test_setup_teardown(test_trace_power, setup, teardown),
        cmocka_unit_test(test_trace_vcd_parser_rejects),
    };
    return cmocka_run_group_tests_name("trace", tests, NULL, NULL);
}
