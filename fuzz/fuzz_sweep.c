/* fuzz_sweep.c - libFuzzer harness of the sweep file reader (ft_sweep_parse, through sched/core/cfgtext.c): any text loads or fails with one line; a loaded sweep has keyed runs with readable files.  The text is read as a file of a scratch directory that holds small problems and targets (p.json, q.json, t.cfg, contest.cfg), so that runs can name them; nothing is run. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <unistd.h>

#include "fuzz.h"
#include "fusetile/sweep.h"

static char dir[64];
static char path[128];

static void put(const char *name, const char *text)
{
    char f[160];
    snprintf(f, sizeof f, "%s/%s", dir, name);
    FILE *o = fopen(f, "w");
    if (!o || fputs(text, o) == EOF || fclose(o) != 0)
        FZ_FAIL("cannot write %s", f);
}

static void remove_dir(void)
{
    static const char *const names[] = {"p.json", "q.json", "t.cfg", "contest.cfg"};
    char f[160];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(f, sizeof f, "%s/%s", dir, names[i]);
        unlink(f);
    }
    rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    if (dir[0])
        return 0;
    snprintf(dir, sizeof dir, "/tmp/ft-fuzz-sweep.XXXXXX");
    if (!mkdtemp(dir))
        FZ_FAIL("cannot make a scratch directory");
    snprintf(path, sizeof path, "%s/fuzz.cfg", dir);
    put("p.json", FZ_SMALL_PROBLEM);
    put("q.json", "{\"widths\": [64, 64], \"heights\": [64, 64], \"inputs\": [[0]], \"outputs\": [[1]], "
                  "\"base_costs\": [10], \"op_types\": [\"Pointwise\"], \"fast_memory_capacity\": 9000, "
                  "\"slow_memory_bandwidth\": 4, \"native_granularity\": [64, 64]}");
    put("t.cfg", "name = \"t\"; clock_hz = 1e9; element_bytes = 2;\n"
                 "fast_memory = { capacity_bytes = 65536; };\nslow_memory = { read_bandwidth = 32; };\n"
                 "compute = { native_granularity = { w = 64; h = 32; }; matmul_macs_per_cycle = 256.0;\n"
                 "  pointwise_elements_per_cycle = 16; };\n");
    put("contest.cfg", "name = \"contest\";\ncontest = true;\n");
    atexit(remove_dir);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir[0])
        LLVMFuzzerInitialize(NULL, NULL);
    char *text = fz_text(data, size);
    ft_sweep *sw = NULL;
    ft_status st;
    int rc = ft_sweep_parse(text, path, &sw, &st);
    free(text);
    if (rc != FT_OK) {
        fz_check_error(rc, &st, "ft_sweep_parse");
        if (sw)
            FZ_FAIL("ft_sweep_parse failed but left a sweep");
        return 0;
    }
    if (sw->nruns < 1 || sw->nruns > FT_SWEEP_MAX_RUNS)
        FZ_FAIL("%d runs", sw->nruns);
    for (int i = 0; i < sw->nruns; i++) {
        const ft_sweep_run *r = &sw->runs[i];
        if (r->idx != i || !r->key || !r->key[0] || !r->problem || !r->problem_path)
            FZ_FAIL("run %d: idx %d, key %s", i, r->idx, r->key ? r->key : "NULL");
        if (access(r->problem_path, R_OK) != 0)
            FZ_FAIL("run %d: problem %s not readable", i, r->problem_path);
        if (i > 0 && strcmp(r->key, sw->runs[i - 1].key) == 0)
            FZ_FAIL("runs %d and %d share the key %s", i - 1, i, r->key);
    }
    char *db = ft_sweep_default_db(sw->path);
    if (!db || strcmp(db + strlen(db) - 3, ".db") != 0)
        FZ_FAIL("default database %s", db ? db : "NULL");
    free(db);
    ft_sweep_free(sw);
    return 0;
}
