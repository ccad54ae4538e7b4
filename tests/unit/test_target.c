/* test_target.c - cmocka tests of target files: every file in targets/ loads, each rejection carries FILE:LINE, and ft_target_apply maps a target onto a problem as documented. */
#include "ft_testutil.h"
#include "fusetile/target.h"

#include <dirent.h>
#include <unistd.h>

/* ------------------------------------------------------------- fixtures */

/* A scratch directory per test (passed through *state) holding t.cfg. */
typedef struct fixture {
    char dir[256];
    char path[300];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    snprintf(f->dir, sizeof f->dir, "/tmp/ft-test-target.XXXXXX");
    if (!mkdtemp(f->dir)) {
        free(f);
        return -1;
    }
    snprintf(f->path, sizeof f->path, "%s/t.cfg", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    unlink(f->path);
    rmdir(f->dir);
    free(f);
    return 0;
}

/* A minimal real target, one setting per line so that tests can name the
 * line of each: line i + 1 is base_lines[i]. */
static const char *const base_lines[] = {
    "name = \"t\";",                                /* 1 */
    "clock_hz = 1e9;",                              /* 2 */
    "element_bytes = 2;",                           /* 3 */
    "fast_memory = {",                              /* 4 */
    "  capacity_bytes = 65536;",                    /* 5 */
    "};",                                           /* 6 */
    "slow_memory = {",                              /* 7 */
    "  read_bandwidth = 32;",                       /* 8 */
    "};",                                           /* 9 */
    "compute = {",                                  /* 10 */
    "  native_granularity = {",                     /* 11 */
    "    w = 64;",                                  /* 12 */
    "    h = 32;",                                  /* 13 */
    "  };",                                         /* 14 */
    "  matmul_macs_per_cycle = 256.0;",             /* 15 */
    "  pointwise_elements_per_cycle = 16;",         /* 16 */
    "};",                                           /* 17 */
};
#define NBASE ((int)(sizeof base_lines / sizeof base_lines[0]))

/* Write the base target to f->path with line `line` (1-based; 0: none)
 * replaced by `text` (NULL: an empty line, so later lines keep their
 * numbers). */
static void write_cfg(const fixture *f, int line, const char *text)
{
    FILE *o = fopen(f->path, "w");
    assert_non_null(o);
    for (int i = 0; i < NBASE; i++)
        fprintf(o, "%s\n", i + 1 == line ? (text ? text : "") : base_lines[i]);
    fclose(o);
}

static void write_text(const fixture *f, const char *text)
{
    FILE *o = fopen(f->path, "w");
    assert_non_null(o);
    fputs(text, o);
    fclose(o);
}

/* Load f->path, expect FT_EINPUT, a NULL target and exactly the message
 * "PATH:LINE: rest". */
static void expect_error(const fixture *f, int line, const char *rest)
{
    ft_target *t = (ft_target *)&t;   /* must be reset to NULL */
    ft_status st;
    int rc = ft_target_load(f->path, &t, &st);
    if (rc == FT_OK)
        ft_target_free(t);
    assert_int_equal(rc, FT_EINPUT);
    assert_null(t);
    assert_int_equal(st.code, FT_EINPUT);
    char want[1024];
    snprintf(want, sizeof want, "%s:%d: %s", f->path, line, rest);
    assert_string_equal(st.msg, want);
}

static ft_target *load_ok(const char *path)
{
    ft_target *t = NULL;
    ft_status st;
    int rc = ft_target_load(path, &t, &st);
    if (rc != FT_OK)
        fail_msg("%s: %s", path, st.msg);
    assert_non_null(t);
    return t;
}

/* Directory of the bundled targets. */
static const char *targets_dir(void)
{
    static char dir[1024];
    const char *src = getenv("FT_SRCDIR");
    struct stat sb;
    if (src && *src) {
        snprintf(dir, sizeof dir, "%s/targets", src);
        if (stat(dir, &sb) == 0)
            return dir;
    }
    snprintf(dir, sizeof dir, "%s/targets", FT_SRCDIR);
    if (stat(dir, &sb) == 0)
        return dir;
    return "targets";
}

/* ---------------------------------------------------------------- loading */

static void test_target_load_bundled(void **state)
{
    (void)state;
    const char *dir = targets_dir();
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    int n = 0, contest = 0, real = 0;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".cfg") != 0)
            continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        ft_target *t = load_ok(path);
        assert_string_equal(t->path, path);
        assert_true(t->name[0] != '\0');
        assert_non_null(t->description);
        if (t->contest) {
            contest++;
        } else {
            real++;
            assert_true(t->clock_hz > 0 && t->element_bytes > 0 && t->capacity_bytes >= t->element_bytes);
            assert_true(t->read_bandwidth > 0 && t->write_bandwidth > 0 && t->transfer_latency >= 0);
            assert_true(t->native_w > 0 && t->native_h > 0 && t->native_k > 0);
            assert_true(t->matmul_macs_per_cycle > 0 && t->pointwise_elements_per_cycle > 0);
            assert_true(t->launch_overhead >= 0);
        }
        char buf[1024];
        assert_true(ft_target_describe(t, buf, sizeof buf) > 0);
        assert_non_null(strstr(buf, t->name));
        /* the length as snprintf gives it, whole however many terms the
         * target has (a fixed buffer of the device's terms once ran over) */
        int full = ft_target_describe(t, NULL, 0);
        char *whole = malloc((size_t)full + 1);
        assert_non_null(whole);
        assert_int_equal(ft_target_describe(t, whole, (size_t)full + 1), full);
        assert_int_equal(strlen(whole), full);
        free(whole);
        ft_target_free(t);
        n++;
    }
    closedir(d);
    /* example, contest, kpu, kpu-chip, gpu-h100-sm, gpu-h100, tpu-v5e, tpu-v5e-chip */
    assert_true(n >= 8);
    assert_true(contest >= 1);
    assert_true(real >= 7);
}

static void test_target_load_defaults(void **state)
{
    fixture *f = *state;
    write_cfg(f, 0, NULL);
    ft_target *t = load_ok(f->path);
    assert_string_equal(t->name, "t");
    assert_string_equal(t->description, "");
    assert_int_equal(t->contest, 0);
    assert_true(t->clock_hz == 1e9);
    assert_int_equal(t->element_bytes, 2);
    assert_int_equal(t->capacity_bytes, 65536);
    assert_true(t->read_bandwidth == 32.0);
    assert_true(t->write_bandwidth == 32.0);   /* default: read_bandwidth */
    assert_true(t->transfer_latency == 0.0);
    /* whole-device terms: one unit, no cache, every efficiency 1 */
    assert_int_equal(t->units, 1);
    assert_int_equal(t->cache_capacity_bytes, 0);
    assert_true(t->matmul_efficiency == 1 && t->pointwise_efficiency == 1 && t->memory_efficiency == 1);
    assert_true(t->step_overhead == 0);
    assert_int_equal(t->native_w, 64);
    assert_int_equal(t->native_h, 32);
    assert_int_equal(t->native_k, 64);         /* default: w */
    assert_int_equal(t->allow_larger_granularity, 0);
    assert_true(t->matmul_macs_per_cycle == 256.0);
    assert_true(t->pointwise_elements_per_cycle == 16.0);  /* an integer where a number is expected */
    assert_true(t->launch_overhead == 0.0);
    assert_int_equal(t->double_buffering, 0);
    ft_target_free(t);
}

static void test_target_load_optional_settings(void **state)
{
    fixture *f = *state;
    write_text(f, "name = \"o\"; description = \"d\"; contest = false; clock_hz = 2; element_bytes = 4;\n"
                  "fast_memory = { capacity_bytes = 8589934592L; };\n"
                  "slow_memory = { read_bandwidth = 8.5; write_bandwidth = 4; transfer_latency = 12.5; };\n"
                  "compute = { native_granularity = { w = 16; h = 8; k = 4; }; allow_larger_granularity = true;\n"
                  "  matmul_macs_per_cycle = 1; pointwise_elements_per_cycle = 0.5; };\n"
                  "execution = { launch_overhead = 7; double_buffering = true; };\n");
    ft_target *t = load_ok(f->path);
    assert_string_equal(t->description, "d");
    assert_int_equal(t->capacity_bytes, 8589934592LL);
    assert_true(t->write_bandwidth == 4.0);
    assert_true(t->transfer_latency == 12.5);
    assert_int_equal(t->native_k, 4);
    assert_int_equal(t->allow_larger_granularity, 1);
    assert_true(t->pointwise_elements_per_cycle == 0.5);
    assert_true(t->launch_overhead == 7.0);
    assert_int_equal(t->double_buffering, 1);
    ft_target_free(t);
}

/* ------------------------------------------------------------- rejections */

static void test_target_reject_misspelt(void **state)
{
    fixture *f = *state;
    write_cfg(f, 5, "  capacity_byts = 65536;");
    expect_error(f, 5, "unknown setting fast_memory.capacity_byts (did you mean fast_memory.capacity_bytes?)");
    write_cfg(f, 16, "  pointwise_elements_per_cylce = 16;");
    expect_error(f, 16,
                 "unknown setting compute.pointwise_elements_per_cylce (did you mean "
                 "compute.pointwise_elements_per_cycle?)");
    write_cfg(f, 2, "clock_hz = 1e9; frobnicate = 3;");
    expect_error(f, 2, "unknown setting frobnicate");
    /* A known name in the wrong group says where it belongs. */
    write_cfg(f, 3, "element_bytes = 2; read_bandwidth = 32;");
    expect_error(f, 3, "unknown setting read_bandwidth (it belongs in slow_memory)");
    write_cfg(f, 1, "name = \"t\"; memory = { };");
    expect_error(f, 1, "unknown setting memory");
}

static void test_target_reject_wrong_type(void **state)
{
    fixture *f = *state;
    write_cfg(f, 2, "clock_hz = \"fast\";");
    expect_error(f, 2, "clock_hz must be a number, not a string");
    write_cfg(f, 3, "element_bytes = 2.0;");
    expect_error(f, 3, "element_bytes must be an integer, not a real number");
    write_cfg(f, 12, "    w = \"64\";");
    expect_error(f, 12, "compute.native_granularity.w must be an integer, not a string");
    write_cfg(f, 1, "name = 7;");
    expect_error(f, 1, "name must be a string, not an integer");
    write_cfg(f, 1, "name = \"t\"; contest = 0;");
    expect_error(f, 1, "contest must be true or false, not an integer");
    write_cfg(f, 4, "fast_memory = 65536; xx = {");
    expect_error(f, 4, "fast_memory must be a group { ... }, not an integer");
    write_cfg(f, 11, "  native_granularity = [64, 32]; xx = {");
    expect_error(f, 11, "compute.native_granularity must be a group { w = ...; h = ...; k = ...; }, not an array");
}

static void test_target_reject_range(void **state)
{
    fixture *f = *state;
    write_cfg(f, 5, "  capacity_bytes = -65536;");
    expect_error(f, 5, "fast_memory.capacity_bytes is -65536, must be positive");
    write_cfg(f, 3, "element_bytes = 0;");
    expect_error(f, 3, "element_bytes is 0, must be positive");
    write_cfg(f, 13, "    h = -32;");
    expect_error(f, 13, "compute.native_granularity.h is -32, must be positive");
    write_cfg(f, 12, "    w = 16777217;");
    expect_error(f, 12, "compute.native_granularity.w is 16777217, must be at most 16777216");
    write_cfg(f, 8, "  read_bandwidth = 0;");
    expect_error(f, 8, "slow_memory.read_bandwidth is 0, must be positive");
    write_cfg(f, 8, "  read_bandwidth = 32; write_bandwidth = -1.5;");
    expect_error(f, 8, "slow_memory.write_bandwidth is -1.5, must be positive");
    write_cfg(f, 8, "  read_bandwidth = 32; transfer_latency = -1;");
    expect_error(f, 8, "slow_memory.transfer_latency is -1, must be zero or positive");
    write_cfg(f, 15, "  matmul_macs_per_cycle = 0.0;");
    expect_error(f, 15, "compute.matmul_macs_per_cycle is 0, must be positive");
    /* libconfig wraps a 32-bit literal without L; the loader notices. */
    write_cfg(f, 5, "  capacity_bytes = 8589934592;");
    expect_error(f, 5, "fast_memory.capacity_bytes does not fit in 32 bits: add the suffix L (as in 4294967296L)");
    write_cfg(f, 2, "clock_hz = 3000000000;");
    expect_error(f, 2, "clock_hz does not fit in 32 bits: add the suffix L or write it as a real number (4.0e9)");
    write_cfg(f, 5, "  capacity_bytes = 0x10000; # hex, as libconfig reads it");
    ft_target *t = load_ok(f->path);
    assert_int_equal(t->capacity_bytes, 65536);
    ft_target_free(t);
    write_cfg(f, 1, "name = \"\";");
    expect_error(f, 1, "name must not be empty");
    write_cfg(f, 5, "  capacity_bytes = 1;");
    expect_error(f, 5, "fast_memory.capacity_bytes is 1, less than one element (element_bytes = 2)");
}

static void test_target_reject_missing(void **state)
{
    fixture *f = *state;
    /* Inside a group: the line of the group. */
    write_cfg(f, 15, NULL);
    expect_error(f, 10,
                 "missing required setting compute.matmul_macs_per_cycle (the compute group starts on this line)");
    write_cfg(f, 12, NULL);
    expect_error(f, 11,
                 "missing required setting compute.native_granularity.w (the compute.native_granularity group "
                 "starts on this line)");
    /* At the top level: line 0. */
    write_cfg(f, 2, NULL);
    expect_error(f, 0, "missing required setting clock_hz");
    /* A whole group missing is reported once, as the group. */
    write_text(f, "name = \"t\"; clock_hz = 1; element_bytes = 1;\n"
                  "slow_memory = { read_bandwidth = 1; };\n"
                  "compute = { native_granularity = { w = 1; h = 1; }; matmul_macs_per_cycle = 1;\n"
                  "  pointwise_elements_per_cycle = 1; };\n");
    expect_error(f, 0, "missing required setting fast_memory");
    write_text(f, "");
    expect_error(f, 0, "missing required setting name");
}

static void test_target_reject_syntax(void **state)
{
    fixture *f = *state;
    write_cfg(f, 8, "  read_bandwidth == 32;");
    expect_error(f, 8, "syntax error (not libconfig syntax)");
    write_text(f, "{\"name\": \"json is not libconfig\"}\n");
    expect_error(f, 1, "syntax error: unexpected string \"name\" (a string stands only as a value, in a list or in an "
                       "array) (not libconfig syntax)");
    /* A string left open, which libconfig alone would drop. */
    write_cfg(f, 1, "name = \"t");
    expect_error(f, 1, "unterminated string: no closing \" before the end of the file (not libconfig syntax)");
    /* A repeated setting is libconfig's own error. */
    write_cfg(f, 3, "element_bytes = 2; element_bytes = 4;");
    ft_target *t = NULL;
    ft_status st;
    assert_int_equal(ft_target_load(f->path, &t, &st), FT_EINPUT);
    assert_null(t);
    char want[512];
    snprintf(want, sizeof want, "%s:3: ", f->path);
    assert_true(strncmp(st.msg, want, strlen(want)) == 0);
}

static void test_target_reject_contest_settings(void **state)
{
    fixture *f = *state;
    write_text(f, "name = \"c\";\ncontest = true;\nfast_memory = { capacity_bytes = 1; };\n");
    expect_error(f, 3,
                 "fast_memory is not used by a contest target (the problem file gives capacity, bandwidth, native "
                 "granularity and base costs); remove it or set contest = false");
    /* contest is read first, wherever it is. */
    write_text(f, "name = \"c\";\nclock_hz = 1;\ncontest = true;\n");
    expect_error(f, 2,
                 "clock_hz is not used by a contest target (the problem file gives capacity, bandwidth, native "
                 "granularity and base costs); remove it or set contest = false");
    write_text(f, "contest = true;\n");
    expect_error(f, 0, "missing required setting name");
}

static void test_target_reject_unreadable(void **state)
{
    fixture *f = *state;
    ft_target *t = NULL;
    ft_status st;
    assert_int_equal(ft_target_load(f->path, &t, &st), FT_EINPUT);   /* not written yet */
    assert_null(t);
    char want[512];
    snprintf(want, sizeof want, "%s: cannot open: No such file or directory", f->path);
    assert_string_equal(st.msg, want);
    assert_int_equal(ft_target_load(f->dir, &t, &st), FT_EINPUT);
    snprintf(want, sizeof want, "%s: cannot read: Is a directory", f->dir);
    assert_string_equal(st.msg, want);
}

/* ------------------------------------------------------------------ apply */

/* MatMul T0 (64 x 32) x T1 (32 x 64) -> T2 (64 x 64); Pointwise T2 + T3 -> T4. */
static const char problem_json[] =
    "{\"widths\": [32, 64, 64, 64, 64], \"heights\": [64, 32, 64, 64, 64],"
    " \"inputs\": [[0, 1], [2, 3]], \"outputs\": [[2], [4]], \"base_costs\": [1000, 100],"
    " \"op_types\": [\"MatMul\", \"Pointwise\"], \"fast_memory_capacity\": 50000,"
    " \"slow_memory_bandwidth\": 10, \"native_granularity\": [128, 128]}";

static ft_problem *parse_problem(void)
{
    ft_problem *p = NULL;
    ft_status st;
    if (ft_problem_parse(problem_json, "inline.json", &p, &st) != FT_OK)
        fail_msg("%s", st.msg);
    return p;
}

static void test_target_apply_derives(void **state)
{
    fixture *f = *state;
    write_cfg(f, 5, "  capacity_bytes = 65537;");   /* an odd byte: capacity rounds down */
    ft_target *t = load_ok(f->path);
    ft_problem *p = parse_problem();
    ft_status st;
    assert_int_equal(ft_target_apply(t, p, 0, &st), FT_OK);
    assert_true(p->capacity == 32768.0);               /* 65537 B / 2 B */
    assert_true(p->bandwidth == 16.0);                 /* 32 B/cycle / 2 B */
    assert_int_equal(p->native_w, 64);
    assert_int_equal(p->native_h, 32);
    assert_true(p->ops[0].base_cost == 512.0);         /* 64 * 32 * 64 / 256 */
    assert_true(p->ops[1].base_cost == 256.0);         /* 64 * 32 * 2 inputs / 16 */
    assert_int_equal(p->ops[0].k, 32);                 /* derived fields recomputed */
    assert_int_equal(p->ngraph_outputs, 1);
    ft_problem_free(p);

    p = parse_problem();
    assert_int_equal(ft_target_apply(t, p, 1, &st), FT_OK);   /* keep_costs */
    assert_true(p->capacity == 32768.0);
    assert_true(p->bandwidth == 16.0);
    assert_int_equal(p->native_w, 64);
    assert_true(p->ops[0].base_cost == 1000.0);
    assert_true(p->ops[1].base_cost == 100.0);
    ft_problem_free(p);
    ft_target_free(t);
}

static void test_target_apply_contest_changes_nothing(void **state)
{
    (void)state;
    char path[2048];
    snprintf(path, sizeof path, "%s/contest.cfg", targets_dir());
    ft_target *t = load_ok(path);
    assert_int_equal(t->contest, 1);
    for (int keep = 0; keep <= 1; keep++) {
        ft_problem *p = parse_problem(), *q = parse_problem();
        ft_status st;
        assert_int_equal(ft_target_apply(t, p, keep, &st), FT_OK);
        assert_true(p->capacity == q->capacity);
        assert_true(p->bandwidth == q->bandwidth);
        assert_int_equal(p->native_w, q->native_w);
        assert_int_equal(p->native_h, q->native_h);
        for (int i = 0; i < p->nops; i++)
            assert_true(p->ops[i].base_cost == q->ops[i].base_cost);
        ft_problem_free(p);
        ft_problem_free(q);
    }
    char buf[16];
    int n = ft_target_describe(t, buf, sizeof buf);   /* truncates, reports the full length */
    assert_true(n > (int)sizeof buf);
    assert_int_equal(strlen(buf), sizeof buf - 1);
    ft_target_free(t);
}

/* On a bundled real target: the documented formulas with its own numbers. */
static void test_target_apply_gpu(void **state)
{
    (void)state;
    char path[2048];
    snprintf(path, sizeof path, "%s/gpu-h100-sm.cfg", targets_dir());
    ft_target *t = load_ok(path);
    ft_problem *p = parse_problem();
    ft_status st;
    assert_int_equal(ft_target_apply(t, p, 0, &st), FT_OK);
    assert_true(p->capacity == (double)(t->capacity_bytes / t->element_bytes));
    assert_true(p->bandwidth == t->read_bandwidth / (double)t->element_bytes);
    assert_true(p->ops[0].base_cost ==
                (double)t->native_w * (double)t->native_h * (double)t->native_w / t->matmul_macs_per_cycle);
    assert_true(p->ops[1].base_cost ==
                (double)t->native_w * (double)t->native_h * 2.0 / t->pointwise_elements_per_cycle);
    ft_problem_free(p);
    ft_target_free(t);
}

/* The KPU's timing terms, native k and granularity rule reach the problem
 * (ft_timing in cost units: bandwidths in elements per cycle). */
static void test_target_apply_timing(void **state)
{
    (void)state;
    char path[2048];
    snprintf(path, sizeof path, "%s/kpu.cfg", targets_dir());
    ft_target *t = load_ok(path);
    assert_int_equal(t->separate_channels, 1);
    ft_problem *p = parse_problem();
    ft_status st;
    assert_int_equal(ft_target_apply(t, p, 0, &st), FT_OK);
    assert_true(p->timing.write_bandwidth == t->write_bandwidth / (double)t->element_bytes);
    assert_true(p->timing.write_bandwidth == 8.0);    /* 16 B/cycle / 2 B */
    assert_true(p->timing.transfer_latency == 100.0);
    assert_true(p->timing.launch_overhead == 200.0);
    assert_int_equal(p->timing.overlap, FT_OVERLAP_PIPELINE);
    assert_int_equal(p->timing.duplex, 1);
    assert_int_equal(p->native_k, 32);
    assert_int_equal(p->allow_larger, 0);
    assert_true(p->ops[0].base_cost == 32.0 * 32.0 * 32.0 / 1024.0);
    ft_problem_free(p);
    ft_target_free(t);
}

/* The whole-chip files: each is its one-unit file's unit (same clock,
 * element size, fast memory, native granularity, peak throughput) plus the
 * whole-device terms, which reach the problem as documented. */
static void test_target_apply_chips(void **state)
{
    (void)state;
    static const struct {
        const char *chip, *unit;
        int64_t units;
        double cache_elems, cache_bw, step_overhead, mm_eff, mem_eff;
    } chips[] = {
        {"kpu-chip.cfg", "kpu.cfg", 16, 16777216 / 2, 1024.0 / 2, 64, 0.9, 0.8},
        {"tpu-v5e-chip.cfg", "tpu-v5e.cfg", 1, 0, 0, 526, 0.85, 0.9},
    };
    for (size_t i = 0; i < sizeof chips / sizeof *chips; i++) {
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", targets_dir(), chips[i].chip);
        ft_target *c = load_ok(path);
        snprintf(path, sizeof path, "%s/%s", targets_dir(), chips[i].unit);
        ft_target *u = load_ok(path);
        assert_true(c->clock_hz == u->clock_hz);
        assert_int_equal(c->element_bytes, u->element_bytes);
        assert_int_equal(c->capacity_bytes, u->capacity_bytes);
        assert_int_equal(c->native_w, u->native_w);
        assert_int_equal(c->native_h, u->native_h);
        assert_int_equal(c->native_k, u->native_k);
        assert_true(c->matmul_macs_per_cycle == u->matmul_macs_per_cycle);
        assert_true(c->pointwise_elements_per_cycle == u->pointwise_elements_per_cycle);
        assert_int_equal(c->units, chips[i].units);
        ft_problem *p = parse_problem();
        ft_status st;
        assert_int_equal(ft_target_apply(c, p, 0, &st), FT_OK);
        assert_int_equal(p->timing.units, (int)chips[i].units);
        assert_true(p->timing.cache_capacity == chips[i].cache_elems);
        assert_true(p->timing.cache_bandwidth == chips[i].cache_bw);
        assert_true(p->timing.step_overhead == chips[i].step_overhead);
        assert_true(p->bandwidth == c->read_bandwidth * chips[i].mem_eff / (double)c->element_bytes);
        assert_true(p->ops[0].base_cost == (double)c->native_w * (double)c->native_h * (double)c->native_k /
                                               (c->matmul_macs_per_cycle * chips[i].mm_eff));
        char buf[1024];
        ft_target_describe(c, buf, sizeof buf);
        printf("  %s\n", buf);
        ft_problem_free(p);
        ft_target_free(u);
        ft_target_free(c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_target_load_bundled),
        cmocka_unit_test_setup_teardown(test_target_load_defaults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_target_load_optional_settings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_target_reject_misspelt, setup, teardown),
        cmocka_unit_test_setup_teardown(test_target_reject_wrong_type, setup, teardown),
        cmocka_unit_test_setup_teardown(test_target_reject_range, setup, teardown),
        cmocka_unit_test_setup_teardown(test_target_reject_missing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_target_reject_syntax, setup, teardown),
        cmocka_unit_test_setup_teardown(test_target_reject_contest_settings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_target_reject_unreadable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_target_apply_derives, setup, teardown),
        cmocka_unit_test(test_target_apply_contest_changes_nothing),
        cmocka_unit_test(test_target_apply_gpu),
        cmocka_unit_test(test_target_apply_timing),
        cmocka_unit_test(test_target_apply_chips),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
