/* ft_testutil.h - helpers shared by the cmocka unit tests (test data lookup, inline fixtures, slice search, relative comparison); header-only, public API only. */
#ifndef FT_TESTUTIL_H
#define FT_TESTUTIL_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "fusetile/fusetile.h"

/* Seconds on the monotonic clock (for tests that report their speed). */
static inline double ftt_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Path of the source tree's file `rel` ($FT_SRCDIR/rel, else the build's
 * FT_SRCDIR/rel); a static buffer, valid until the next call. */
static inline const char *ftt_src_path(const char *rel)
{
    static char path[4096];
    const char *src = getenv("FT_SRCDIR");
#ifdef FT_SRCDIR
    if (!src || !*src)
        src = FT_SRCDIR;
#endif
    snprintf(path, sizeof path, "%s%s%s", src && *src ? src : "", src && *src ? "/" : "", rel);
    return path;
}

/* The problem in the source tree's file `rel`; fails the test when it does
 * not load.  The caller frees it (ft_problem_free). */
static inline ft_problem *ftt_load(const char *rel)
{
    ft_problem *p = NULL;
    ft_status st;
    if (ft_problem_load(ftt_src_path(rel), &p, &st) != FT_OK)
        fail_msg("%s", st.msg);
    return p;
}

/* The problem in the JSON text `json` (`name` in messages); fails the test
 * when it does not parse.  The caller frees it (ft_problem_free). */
static inline ft_problem *ftt_parse(const char *json, const char *name)
{
    ft_problem *p = NULL;
    ft_status st;
    if (ft_problem_parse(json, name, &p, &st) != FT_OK)
        fail_msg("%s: %s", name, st.msg);
    return p;
}

/* ------------------------------------------------------------ run speed */

/* 1 when the test runs under valgrind (make check-valgrind's FT_RUNNER, or
 * valgrind's preload library): the code runs tens of times slower there,
 * so tests with a fixed amount of heavy work do a smaller share of it. */
static inline int ftt_valgrind(void)
{
    const char *runner = getenv("FT_RUNNER"), *pre = getenv("LD_PRELOAD");
    return (runner && strstr(runner, "valgrind")) || (pre && strstr(pre, "vgpreload"));
}

/* 1 under a slow runner: valgrind, or FT_SLOW=1 (make check-sanitize and
 * check-valgrind set it): tests bounded by a time limit give more. */
static inline int ftt_slow(void)
{
    const char *v = getenv("FT_SLOW");
    return ftt_valgrind() || (v && *v && strcmp(v, "0") != 0);
}

/* ------------------------------------------------------------ test data */

static inline int ftt_has_vectors(const char *dir)
{
    char path[4096];
    struct stat sb;
    snprintf(path, sizeof path, "%s/expected.tsv", dir);
    return stat(path, &sb) == 0;
}

/* Make a fresh temporary directory $TMPDIR/STEM-XXXXXX (/tmp without
 * TMPDIR) in dir (n bytes): 0, or -1 (too long, or mkdtemp failed). */
static inline int ftt_tmpdir(char *dir, size_t n, const char *stem)
{
    const char *tmp = getenv("TMPDIR");
    if ((size_t)snprintf(dir, n, "%s/%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", stem) >= n)
        return -1;
    return mkdtemp(dir) ? 0 : -1;
}

/* Remove directory dir and everything under it (a test's temporary
 * directory; dir must not contain a single quote): 0, or -1. */
static inline int ftt_rmtree(const char *dir)
{
    char cmd[600];
    if (strchr(dir, '\'') || (size_t)snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir) >= sizeof cmd)
        return -1;
    return system(cmd) == 0 ? 0 : -1;
}

/* Directory of the cost-model vectors (NAME.problem.json, NAME.solution.json,
 * expected.tsv, bad/).  Looked up, in order: $FT_TESTDATA; $FT_SRCDIR/tests/
 * vectors (tests/run-checks sets FT_SRCDIR); tests/vectors relative to the
 * working directory; ../vectors relative to this header's source path.
 * Returns static storage, or NULL when none has expected.tsv. */
static inline const char *ftt_datadir(void)
{
    static char dir[1024];
    const char *env = getenv("FT_TESTDATA");
    const char *src = getenv("FT_SRCDIR");
    char here[512];
    char *slash;

    if (env && *env) {
        snprintf(dir, sizeof dir, "%s", env);
        if (ftt_has_vectors(dir))
            return dir;
    }
    if (src && *src) {
        snprintf(dir, sizeof dir, "%s/tests/vectors", src);
        if (ftt_has_vectors(dir))
            return dir;
    }
    snprintf(dir, sizeof dir, "tests/vectors");
    if (ftt_has_vectors(dir))
        return dir;
    snprintf(here, sizeof here, "%s", __FILE__);
    slash = strrchr(here, '/');
    if (slash) {
        *slash = '\0';
        snprintf(dir, sizeof dir, "%s/../vectors", here);
        if (ftt_has_vectors(dir))
            return dir;
    }
    return NULL;
}

/* The vectors directory, failing the current test when it cannot be found. */
#define FTT_DATADIR(var)                                                     \
    do {                                                                     \
        (var) = ftt_datadir();                                               \
        if (!(var))                                                          \
            fail_msg("test data not found: set FT_TESTDATA to the vectors "  \
                     "directory or run from the top of the tree");           \
    } while (0)

/* ------------------------------------------------------------ fixtures */

/* A problem in the contest format from its nine fields (JSON fragments). */
#define PJ(w, h, in, out, cost, ty, cap, bw, nat)                            \
    "{\"widths\": " w ", \"heights\": " h ", \"inputs\": " in                \
    ", \"outputs\": " out ", \"base_costs\": " cost ", \"op_types\": " ty    \
    ", \"fast_memory_capacity\": " cap ", \"slow_memory_bandwidth\": " bw    \
    ", \"native_granularity\": " nat "}"

/* A schedule with raster traversal orders omitted, and one with them. */
#define SJ(sg, gran, retain)                                                 \
    "{\"subgraphs\": " sg ", \"granularities\": " gran                       \
    ", \"tensors_to_retain\": " retain "}"
#define SJO(sg, gran, retain, orders)                                        \
    "{\"subgraphs\": " sg ", \"granularities\": " gran                       \
    ", \"tensors_to_retain\": " retain ", \"traversal_orders\": " orders "}"

/* Op type names and the usual native granularity, as JSON fragments. */
#define MM "\"MatMul\""
#define PW "\"Pointwise\""
#define N128 "[128, 128]"

/* ------------------------------------------------------------ comparison */

/* |got - want| <= rel * max(1, |want|), reporting both numbers on failure. */
#define assert_rel(got, want, rel)                                           \
    do {                                                                     \
        double ftt_g_ = (double)(got), ftt_w_ = (double)(want);              \
        double ftt_s_ = fabs(ftt_w_) > 1.0 ? fabs(ftt_w_) : 1.0;             \
        if (!(fabs(ftt_g_ - ftt_w_) <= (rel) * ftt_s_))                      \
            fail_msg("%s = %.10g, expected %.10g", #got, ftt_g_, ftt_w_);    \
    } while (0)

/* Exact-to-1e-9 comparison of cost-model figures. */
#define assert_cost(got, want) assert_rel(got, want, 1e-9)

/* ------------------------------------------------------------ steps */

/* A step copied out of the walker (its arrays are only valid until the next
 * ft_walk_next), so a test can look at every step of a subgraph. */
typedef struct ftt_step {
    ft_step st;
    ft_slice *slices;
    unsigned char *loaded;
    ft_slice *writes;
    int *active;
    ft_active *acts;
} ftt_step;

typedef struct ftt_steps {
    int64_t n;
    int64_t ntx, nty, nk, nsteps;
    ftt_step *v;
} ftt_steps;

static inline void *ftt_dup(const void *src, size_t n)
{
    void *d = malloc(n ? n : 1);
    if (d && n)
        memcpy(d, src, n);
    return d;
}

static inline void ftt_steps_free(ftt_steps *ss)
{
    int64_t i;
    if (!ss)
        return;
    for (i = 0; i < ss->n; i++) {
        free(ss->v[i].slices);
        free(ss->v[i].loaded);
        free(ss->v[i].writes);
        free(ss->v[i].active);
        free(ss->v[i].acts);
    }
    free(ss->v);
    memset(ss, 0, sizeof *ss);
}

/* Walk subgraph sg under `model` and copy every step into *ss (free with
 * ftt_steps_free).  Returns 0, or -1 if the walker could not start. */
static inline int ftt_walk_all(const ft_problem *p, const ft_schedule *s,
                               int sg, ft_compute_model model, ftt_steps *ss)
{
    ft_walk *w = NULL;
    ft_status st;
    ft_step step;
    int64_t cap = 0;

    memset(ss, 0, sizeof *ss);
    ft_status_clear(&st);
    if (ft_walk_begin(p, s, sg, model, &w, &st) != FT_OK) {
        print_error("ft_walk_begin: %s\n", st.msg);
        return -1;
    }
    ft_walk_grid(w, &ss->ntx, &ss->nty, &ss->nk, &ss->nsteps);
    memset(&step, 0, sizeof step);
    while (ft_walk_next(w, &step)) {
        ftt_step *c;
        if (ss->n == cap) {
            int64_t ncap = cap ? 2 * cap : 16;
            ftt_step *nv = realloc(ss->v, (size_t)ncap * sizeof *nv);
            if (!nv)
                break;
            ss->v = nv;
            cap = ncap;
        }
        c = &ss->v[ss->n++];
        c->st = step;
        c->slices = ftt_dup(step.slices, (size_t)step.nslices * sizeof *step.slices);
        c->loaded = ftt_dup(step.loaded, (size_t)step.nslices);
        c->writes = ftt_dup(step.writes, (size_t)step.nwrites * sizeof *step.writes);
        c->active = ftt_dup(step.active, (size_t)step.nactive * sizeof *step.active);
        c->acts = ftt_dup(step.acts, (size_t)step.nactive * sizeof *step.acts);
        c->st.slices = c->slices;
        c->st.loaded = c->loaded;
        c->st.writes = c->writes;
        c->st.active = c->active;
        c->st.acts = c->acts;
        if (ss->n > 100000)
            break; /* runaway walker: the step count assertion reports it */
    }
    ft_walk_free(w);
    return 0;
}

/* ------------------------------------------------------------ fixtures */

/* Problem and schedule parsed from inline JSON; the unit of most fixtures.
 * `eval` and `steps` are filled by tests that evaluate or walk (freed in
 * ftt_teardown, so a failing assertion leaks nothing). */
typedef struct ftt_fixture {
    ft_problem *p;
    ft_schedule *s;
    ft_eval eval;
    ftt_steps steps;
} ftt_fixture;

/* Setup helper: parse a problem and (if sjson is not NULL) a schedule into a
 * new fixture stored in *state.  Returns 0, or -1 (setup failure) with the
 * parser's message printed. */
static inline int ftt_fixture_new(void **state, const char *pjson,
                                  const char *sjson)
{
    ftt_fixture *f = calloc(1, sizeof *f);
    ft_status st;
    if (!f)
        return -1;
    *state = f;
    ft_status_clear(&st);
    if (ft_problem_parse(pjson, "fixture.problem.json", &f->p, &st) != FT_OK) {
        print_error("fixture problem: %s\n", st.msg);
        return -1;
    }
    if (sjson &&
        ft_schedule_parse(sjson, "fixture.solution.json", &f->s, &st) != FT_OK) {
        print_error("fixture schedule: %s\n", st.msg);
        return -1;
    }
    return 0;
}

/* Teardown for every ftt_fixture (tolerates a half-built one). */
static inline int ftt_teardown(void **state)
{
    ftt_fixture *f = *state;
    if (f) {
        ft_eval_free(&f->eval);
        ftt_steps_free(&f->steps);
        ft_schedule_free(f->s);
        ft_problem_free(f->p);
        free(f);
    }
    *state = NULL;
    return 0;
}

/* Load vector NAME (NAME.problem.json + NAME.solution.json) from the data
 * directory; fails the test when either does not load. */
static inline void ftt_load_vector(const char *dir, const char *name,
                                   ft_problem **p, ft_schedule **s)
{
    char path[4096];
    ft_status st;
    ft_status_clear(&st);
    snprintf(path, sizeof path, "%s/%s.problem.json", dir, name);
    if (ft_problem_load(path, p, &st) != FT_OK)
        fail_msg("%s: %s", path, st.msg);
    snprintf(path, sizeof path, "%s/%s.solution.json", dir, name);
    if (ft_schedule_load(path, s, &st) != FT_OK) {
        ft_problem_free(*p);
        *p = NULL;
        fail_msg("%s: %s", path, st.msg);
    }
}

/* Index of slice (tensor, rows [r0, r1) x cols [c0, c1)) in arr, or -1. */
static inline int ftt_find_slice(const ft_slice *arr, int n, int tensor,
                                 int64_t r0, int64_t r1, int64_t c0, int64_t c1)
{
    int i;
    for (i = 0; i < n; i++)
        if (arr[i].tensor == tensor && arr[i].region.r0 == r0 &&
            arr[i].region.r1 == r1 && arr[i].region.c0 == c0 &&
            arr[i].region.c1 == c1)
            return i;
    return -1;
}

/* Print a step's slices (for failure diagnostics). */
static inline void ftt_print_step(const ft_step *s)
{
    int i;
    print_error("step %lld (tile %lld, k-step %lld): %d slices:",
                (long long)s->index, (long long)s->tile, (long long)s->kstep,
                s->nslices);
    for (i = 0; i < s->nslices; i++)
        print_error(" T%d[%lld:%lld, %lld:%lld]%s", s->slices[i].tensor,
                    (long long)s->slices[i].region.r0,
                    (long long)s->slices[i].region.r1,
                    (long long)s->slices[i].region.c0,
                    (long long)s->slices[i].region.c1,
                    s->loaded[i] ? "" : "(reused)");
    print_error("; %d writes:", s->nwrites);
    for (i = 0; i < s->nwrites; i++)
        print_error(" T%d[%lld:%lld, %lld:%lld]", s->writes[i].tensor,
                    (long long)s->writes[i].region.r0,
                    (long long)s->writes[i].region.r1,
                    (long long)s->writes[i].region.c0,
                    (long long)s->writes[i].region.c1);
    print_error("\n");
}

/* Assert that the step has slice T[r0:r1, c0:c1] and that its loaded flag
 * is `loaded`. */
#define assert_slice(step, t, r0, r1, c0, c1, want_loaded)                   \
    do {                                                                     \
        const ft_step *ftt_st_ = (step);                                     \
        int ftt_i_ = ftt_find_slice(ftt_st_->slices, ftt_st_->nslices, (t),  \
                                    (r0), (r1), (c0), (c1));                 \
        if (ftt_i_ < 0) {                                                    \
            ftt_print_step(ftt_st_);                                         \
            fail_msg("missing slice T%d[%d:%d, %d:%d]", (int)(t), (int)(r0), \
                     (int)(r1), (int)(c0), (int)(c1));                       \
        }                                                                    \
        if (!!ftt_st_->loaded[ftt_i_] != !!(want_loaded)) {                  \
            ftt_print_step(ftt_st_);                                         \
            fail_msg("slice T%d[%d:%d, %d:%d]: loaded=%d, expected %d",      \
                     (int)(t), (int)(r0), (int)(r1), (int)(c0), (int)(c1),   \
                     ftt_st_->loaded[ftt_i_], (int)(want_loaded));           \
        }                                                                    \
    } while (0)

/* Assert that the step writes exactly region T[r0:r1, c0:c1] of tensor t. */
#define assert_write(step, t, r0, r1, c0, c1)                                \
    do {                                                                     \
        const ft_step *ftt_st_ = (step);                                     \
        if (ftt_find_slice(ftt_st_->writes, ftt_st_->nwrites, (t), (r0),     \
                           (r1), (c0), (c1)) < 0) {                          \
            ftt_print_step(ftt_st_);                                         \
            fail_msg("missing write T%d[%d:%d, %d:%d]", (int)(t), (int)(r0), \
                     (int)(r1), (int)(c0), (int)(c1));                       \
        }                                                                    \
    } while (0)

/* Assert that a message contains `needle`. */
#define assert_msg_has(msg, needle)                                          \
    do {                                                                     \
        if (!strstr((msg), (needle)))                                        \
            fail_msg("message \"%s\" does not mention \"%s\"", (msg),        \
                     (needle));                                              \
    } while (0)

#endif /* FT_TESTUTIL_H */
