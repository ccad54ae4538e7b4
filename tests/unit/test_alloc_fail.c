/* test_alloc_fail.c - allocation-failure sweep (ft_set_allocator), as SQLite's malloc tests: load, validate, evaluate (both compute models), bound and write back every public benchmark and some cost-model vectors, load a target, run the scheduler, with the Nth allocation failing for every N; each must give FT_ENOMEM with nothing leaked.
 *
 * A test allocator wraps the system's malloc, counts the calls, refuses the
 * Nth (or, "persistent", the Nth and every later one) and keeps the number
 * and bytes of live blocks, so a leak shows without valgrind.  A case runs
 * once with no failure to count its allocations A, then once for each
 * N = 1..A.  The scheduler's sweeps take a stride when A is large
 * (SEARCH_SWEEP_MAX runs at most); under FT_SLOW=1 (sanitizers, valgrind)
 * every sweep is strided to SLOW_SWEEP_MAX runs (a search's to
 * SLOW_SEARCH_SWEEP_MAX).  Each case prints its allocation count, the runs
 * made and the time taken; a failed check prints the stack of the refused
 * allocation. */
#include "ft_testutil.h"
#include "fusetile/target.h"

#include <execinfo.h>
#include <limits.h>
#include <malloc.h>
#include <stdatomic.h>

/* Most runs of one scheduler sweep (ft_search allocates per candidate). */
#define SEARCH_SWEEP_MAX 1000
/* Most runs of a persistent-failure sweep (the single-failure sweep
 * already refuses every allocation). */
#define PERSISTENT_SWEEP_MAX 300
/* Most runs of any sweep under FT_SLOW=1, and of a search's. */
#define SLOW_SWEEP_MAX 60
#define SLOW_SEARCH_SWEEP_MAX 20
/* Time limit of the searches that make the benchmarks' schedules under
 * FT_SLOW=1 (mlsys-2026-1's exhaustive search takes minutes under
 * valgrind). */
#define SLOW_SETUP_SECONDS 2.0
/* Time limit of the searches: never reached (max_restarts ends them), so
 * their allocations repeat run after run. */
#define SEARCH_SECONDS 120.0

/* ------------------------------------------------------------ allocator */

static struct {
    atomic_long calls;     /* malloc_fn and realloc_fn calls so far */
    long fail_at;          /* the call that fails, from 1; 0: none */
    int persistent;        /* 1: every call after fail_at fails too */
    atomic_long failed;    /* calls refused */
    atomic_long live;      /* blocks allocated and not yet freed */
    atomic_llong bytes;    /* their usable bytes */
    void *stack[24];       /* where the first refused call came from */
    int depth;
} T;

static int refuse(void)
{
    long n = atomic_fetch_add(&T.calls, 1) + 1;
    if (T.fail_at > 0 && (n == T.fail_at || (T.persistent && n > T.fail_at))) {
        if (n == T.fail_at)
            T.depth = backtrace(T.stack, 24);
        atomic_fetch_add(&T.failed, 1);
        return 1;
    }
    return 0;
}

static void *t_malloc(size_t n, void *ud)
{
    (void)ud;
    if (refuse())
        return NULL;
    void *p = malloc(n);
    if (p) {
        atomic_fetch_add(&T.live, 1);
        atomic_fetch_add(&T.bytes, (long long)malloc_usable_size(p));
    }
    return p;
}

static void *t_realloc(void *ptr, size_t n, void *ud)
{
    (void)ud;
    if (refuse())
        return NULL;
    long long old = (long long)malloc_usable_size(ptr);
    void *p = realloc(ptr, n);
    if (p)
        atomic_fetch_add(&T.bytes, (long long)malloc_usable_size(p) - old);
    return p;
}

static void t_free(void *ptr, void *ud)
{
    (void)ud;
    atomic_fetch_sub(&T.live, 1);
    atomic_fetch_sub(&T.bytes, (long long)malloc_usable_size(ptr));
    free(ptr);
}

/* Install the test allocator with fresh counts, failing call fail_at
 * (0: none). */
static void arm(long fail_at, int persistent)
{
    atomic_store(&T.calls, 0);
    atomic_store(&T.failed, 0);
    atomic_store(&T.live, 0);
    atomic_store(&T.bytes, 0);
    T.fail_at = fail_at;
    T.persistent = persistent;
    T.depth = 0;
    ft_allocator a = {t_malloc, t_realloc, t_free, NULL};
    assert_int_equal(ft_set_allocator(&a), FT_OK);
}

static void disarm(void) { assert_int_equal(ft_set_allocator(NULL), FT_OK); }

/* ------------------------------------------------------------ cases */

/* One case: a problem file, a schedule (file, or JSON text), an optional
 * target, or a search of the problem instead of the schedule. */
typedef struct job {
    char name[96];
    char problem[4096];
    char schedule_file[4096];
    char *schedule_text;   /* owned */
    char target[4096];
    char out[4200];        /* where the schedule is written back */
    int search_threads;    /* > 0: run ft_search instead */
    int generate;          /* > 0: ft_generate a problem of that many ops instead */
} job;

static char tmpdir[256];

/* FT_ENOMEM in *st, for the functions that return NULL when out of memory. */
static int set_oom(ft_status *st)
{
    st->code = FT_ENOMEM;
    snprintf(st->msg, sizeof st->msg, "out of memory");
    return FT_ENOMEM;
}

/* Load and check j, serialise it, evaluate it, write it back: everything
 * the job allocates is freed before it returns.  FT_OK or the first
 * error. */
static int run_eval(const job *j, ft_status *st)
{
    ft_problem *p = NULL, *q = NULL;
    ft_schedule *s = NULL;
    ft_target *t = NULL;
    ft_eval e1 = {0}, e2 = {0};
    char *js = NULL, *jp = NULL, *label = NULL;
    int rc = ft_problem_load(j->problem, &p, st);
    if (!rc && j->target[0] && !(rc = ft_target_load(j->target, &t, st)))
        rc = ft_target_apply(t, p, 0, st);
    if (!rc)
        rc = j->schedule_text ? ft_schedule_parse(j->schedule_text, j->name, &s, st) : ft_schedule_load(j->schedule_file, &s, st);
    if (!rc)
        rc = ft_schedule_validate(p, s, st);
    if (!rc && !(js = ft_schedule_to_json(s, NULL)))
        rc = set_oom(st);
    if (!rc && !(jp = ft_problem_to_json(p)))
        rc = set_oom(st);
    if (!rc && !(q = ft_problem_clone(p)))
        rc = set_oom(st);
    for (int i = 0; !rc && i < s->nsubgraphs; i++) {
        if (!(label = ft_subgraph_label(p, &s->sg[i])))
            rc = set_oom(st);
        ft_free(label);
    }
    /* then the costly parts, which the runs that fail earlier skip:
     * evaluation, and the write (fsync) */
    if (!rc)
        rc = ft_evaluate(p, s, FT_COMPUTE_NATIVE, &e1, st);
    if (!rc)
        rc = ft_evaluate(p, s, FT_COMPUTE_OP, &e2, st);
    if (!rc)
        rc = ft_schedule_write(s, NULL, j->out, st);
    ft_free(js);
    ft_free(jp);
    ft_eval_free(&e1);
    ft_eval_free(&e2);
    ft_schedule_free(s);
    ft_problem_free(q);
    ft_problem_free(p);
    ft_target_free(t);
    return rc;
}

/* Search j's problem (one or more threads, seed 1, one restart per
 * thread, within SEARCH_SECONDS) and write the schedule back. */
static int run_search(const job *j, ft_status *st)
{
    ft_problem *p = NULL;
    ft_schedule *s = NULL;
    ft_eval ev = {0};
    int rc = ft_problem_load(j->problem, &p, st);
    if (!rc) {
        ft_search_opts o;
        ft_search_opts_init(&o);
        o.threads = j->search_threads;
        o.seed = 1;
        o.max_restarts = 1;
        o.time_limit = SEARCH_SECONDS;
        rc = ft_search(p, &o, &s, &ev, st);
    }
    if (!rc)
        rc = ft_schedule_write(s, NULL, j->out, st);
    ft_eval_free(&ev);
    ft_schedule_free(s);
    ft_problem_free(p);
    return rc;
}

/* Generate a contest-like problem (ft_generate checks its one-op
 * schedule with ft_evaluate), its one-op schedule, and write it back. */
static int run_generate(const job *j, ft_status *st)
{
    ft_gen_opts o;
    ft_gen_opts_init(&o);
    o.nops = j->generate;
    ft_problem *p = NULL;
    ft_schedule *s = NULL;
    char *text = NULL;
    int rc = ft_generate(&o, &p, st);
    if (!rc)
        rc = ft_gen_oneop_schedule(p, &s, st);
    if (!rc && !(text = ft_problem_to_json(p)))
        rc = set_oom(st);
    ft_free(text);
    ft_schedule_free(s);
    ft_problem_free(p);
    return rc;
}

static int run_job(const job *j, ft_status *st)
{
    return j->generate > 0 ? run_generate(j, st) : j->search_threads > 0 ? run_search(j, st) : run_eval(j, st);
}

/* Print where the refused allocation came from (addresses: addr2line -f
 * -e tests/unit/test_alloc_fail ADDR names them), then fail. */
#define fail_at_alloc(...)                                                   \
    do {                                                                     \
        fflush(stdout);                                                      \
        backtrace_symbols_fd(T.stack, T.depth, 2);                           \
        fail_msg(__VA_ARGS__);                                               \
    } while (0)

/* The allocator's state after a run, checked: nothing live. */
static void check_clean(const job *j, long n, long total)
{
    long live = atomic_load(&T.live);
    long long bytes = atomic_load(&T.bytes);
    if (live != 0 || bytes != 0)
        fail_at_alloc("%s: allocation %ld of %ld refused: %ld blocks (%lld bytes) not freed", j->name, n, total, live, bytes);
}

/* Run j with no failure (it must succeed), then with allocation n failing
 * for n = 1..A (every stride-th); persistent: every later one fails too.
 * Returns A. */
static long sweep(const job *j, long max_runs, int persistent)
{
    ft_status st;
    double t0 = ftt_seconds();
    arm(0, 0);
    int rc = run_job(j, &st);
    disarm();
    if (rc != FT_OK)
        fail_msg("%s: %s", j->name, st.msg);
    long total = atomic_load(&T.calls);
    check_clean(j, 0, total);
    long slow_max = j->search_threads ? SLOW_SEARCH_SWEEP_MAX : SLOW_SWEEP_MAX;
    if (ftt_slow() && max_runs > slow_max)
        max_runs = slow_max;
    long stride = total <= max_runs ? 1 : (total + max_runs - 1) / max_runs, runs = 0;
    /* a threaded search allocates a varying amount: sweep its first half */
    long last = j->search_threads > 1 ? total / 2 : total;
    for (long n = 1; n <= last; n += stride, runs++) {
        ft_status_clear(&st);
        arm(n, persistent);
        double r0 = ftt_seconds();
        rc = run_job(j, &st);
        disarm();
        if (ftt_seconds() - r0 > 2)
            printf("%s: allocation %ld of %ld refused: the run took %.1f s\n", j->name, n, total, ftt_seconds() - r0);
        if (atomic_load(&T.failed) == 0)
            fail_msg("%s: allocation %ld of %ld never happened", j->name, n, total);
        if (rc != FT_ENOMEM)
            fail_at_alloc("%s: allocation %ld of %ld refused: got %d (%s), expected FT_ENOMEM", j->name, n, total, rc, rc ? st.msg : "success");
        if (!strstr(st.msg, "out of memory"))
            fail_at_alloc("%s: allocation %ld of %ld refused: message \"%s\" does not say out of memory", j->name, n, total, st.msg);
        check_clean(j, n, total);
    }
    printf("%s%s: %ld allocations, %ld runs (stride %ld), %.2f s\n", j->name, persistent ? " (persistent)" : "", total, runs, stride, ftt_seconds() - t0);
    return total;
}

/* ------------------------------------------------------------ set-up */

static job *new_job(const char *name, const char *problem)
{
    job *j = calloc(1, sizeof *j);
    assert_non_null(j);
    snprintf(j->name, sizeof j->name, "%s", name);
    snprintf(j->problem, sizeof j->problem, "%s", ftt_src_path(problem));
    snprintf(j->out, sizeof j->out, "%s/out.schedule.json", tmpdir);
    return j;
}

static void free_job(job *j)
{
    free(j->schedule_text);
    free(j);
}

/* The schedules ft_search finds for the benchmarks, by index (made once,
 * shared by the single and persistent sweeps). */
#define NBENCH 6
static char *bench_schedule[NBENCH];

/* A job evaluating the schedule ft_search finds for `problem` (one thread,
 * one restart), kept in *cache. */
static job *searched_job(const char *name, const char *problem, char **cache)
{
    job *j = new_job(name, problem);
    if (!*cache) {
        ft_status st;
        ft_problem *p = ftt_load(problem);
        ft_search_opts o;
        ft_search_opts_init(&o);
        o.threads = 1;
        o.max_restarts = 1;
        o.time_limit = ftt_slow() ? SLOW_SETUP_SECONDS : SEARCH_SECONDS;
        ft_schedule *s = NULL;
        ft_eval ev;
        if (ft_search(p, &o, &s, &ev, &st) != FT_OK)
            fail_msg("%s: %s", problem, st.msg);
        *cache = ft_schedule_to_json(s, NULL);
        assert_non_null(*cache);
        ft_eval_free(&ev);
        ft_schedule_free(s);
        ft_problem_free(p);
    }
    j->schedule_text = strdup(*cache);
    assert_non_null(j->schedule_text);
    return j;
}

static int setup(void **state)
{
    (void)state;
    return ftt_tmpdir(tmpdir, sizeof tmpdir, "ft-allocfail");
}

static int teardown(void **state)
{
    (void)state;
    for (int i = 0; i < NBENCH; i++)
        free(bench_schedule[i]);
    return ftt_rmtree(tmpdir);
}

/* ------------------------------------------------------------ tests */

static const char *const benchmarks[NBENCH] = {
    "benchmarks/example_problem.json", "benchmarks/mlsys-2026-1.json", "benchmarks/mlsys-2026-5.json",
    "benchmarks/mlsys-2026-9.json",    "benchmarks/mlsys-2026-13.json", "benchmarks/mlsys-2026-17.json",
};

/* Every public benchmark: load, validate, evaluate under both models,
 * bounds, label, clone, write back; every allocation refused in turn. */
static void test_benchmarks(void **state)
{
    (void)state;
    long all = 0;
    double t0 = ftt_seconds();
    for (size_t i = 0; i < NBENCH; i++) {
        job *j = searched_job(strrchr(benchmarks[i], '/') + 1, benchmarks[i], &bench_schedule[i]);
        all += sweep(j, LONG_MAX, 0);
        free_job(j);
    }
    printf("benchmarks: %ld allocations swept in %.2f s\n", all, ftt_seconds() - t0);
}

/* The same with every allocation from the Nth on refused. */
static void test_benchmarks_persistent(void **state)
{
    (void)state;
    for (size_t i = 0; i < NBENCH; i++) {
        job *j = searched_job(strrchr(benchmarks[i], '/') + 1, benchmarks[i], &bench_schedule[i]);
        sweep(j, PERSISTENT_SWEEP_MAX, 1);
        free_job(j);
    }
}

/* Cost-model vectors with their reference schedules (loaded from file):
 * partial k, traversal orders, retention, Layout ops, names. */
static void test_vectors(void **state)
{
    (void)state;
    static const char *const names[] = {"A2-partial-k-edge-snake", "B-prologue-splitk", "C-retain-and-write", "L-im2col-fused", "N-named-mlp", "ex5B"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char rel[256];
        snprintf(rel, sizeof rel, "tests/vectors/%s.problem.json", names[i]);
        job *j = new_job(names[i], rel);
        snprintf(rel, sizeof rel, "tests/vectors/%s.solution.json", names[i]);
        snprintf(j->schedule_file, sizeof j->schedule_file, "%s", ftt_src_path(rel));
        sweep(j, LONG_MAX, 0);
        free_job(j);
    }
}

/* A benchmark on a machine target: target load (libconfig's own
 * allocations are not hooked) and apply, then evaluation. */
static void test_target(void **state)
{
    (void)state;
    static const char *const targets[] = {"targets/kpu.cfg", "targets/gpu-h100.cfg"};
    for (size_t i = 0; i < sizeof targets / sizeof *targets; i++) {
        char name[96];
        snprintf(name, sizeof name, "mlsys-2026-5 on %s", strrchr(targets[i], '/') + 1);
        job *j = new_job(name, "benchmarks/mlsys-2026-5.json");
        /* the one-op schedule is valid on every target */
        ft_problem *p = ftt_load("benchmarks/mlsys-2026-5.json");
        ft_target *t = NULL;
        ft_status st;
        ft_schedule *s = NULL;
        if (ft_target_load(ftt_src_path(targets[i]), &t, &st) || ft_target_apply(t, p, 0, &st) || ft_gen_oneop_schedule(p, &s, &st))
            fail_msg("%s: %s", name, st.msg);
        j->schedule_text = ft_schedule_to_json(s, NULL);
        assert_non_null(j->schedule_text);
        snprintf(j->target, sizeof j->target, "%s", ftt_src_path(targets[i]));
        ft_schedule_free(s);
        ft_target_free(t);
        ft_problem_free(p);
        sweep(j, LONG_MAX, 0);
        free_job(j);
    }
}

/* The scheduler (every pass and the grouping strategies it starts from)
 * on small problems, one thread. */
static void test_search(void **state)
{
    (void)state;
    static const char *const problems[] = {"benchmarks/example_problem.json", "tests/vectors/E-mlp-fused.problem.json", "tests/vectors/L-im2col-fused.problem.json",
                                           "tests/vectors/C-retain-and-write.problem.json"};
    for (size_t i = 0; i < sizeof problems / sizeof *problems; i++) {
        char name[96];
        snprintf(name, sizeof name, "search %s", strrchr(problems[i], '/') + 1);
        job *j = new_job(name, problems[i]);
        j->search_threads = 1;
        sweep(j, SEARCH_SWEEP_MAX, 0);
        free_job(j);
    }
}

/* The scheduler with two threads on a generated problem of 8 ops (more
 * than 7: the threaded improvement pass runs): a failure in either thread
 * is reported (the hook counts atomically; the threads' allocations
 * interleave differently run by run, so only the first half is swept,
 * strided). */
static void test_search_threads(void **state)
{
    (void)state;
    ft_gen_opts go;
    ft_gen_opts_init(&go);
    go.family = FT_GEN_SMALL;
    go.nops = 8;
    ft_problem *p = NULL;
    ft_status st;
    job *j = new_job("search small-8, 2 threads", "");
    snprintf(j->problem, sizeof j->problem, "%s/small-8.json", tmpdir);
    if (ft_generate(&go, &p, &st) || ft_problem_write(p, j->problem, &st))
        fail_msg("%s", st.msg);
    ft_problem_free(p);
    j->search_threads = 2;
    sweep(j, 100, 0);
    j->search_threads = 1;
    snprintf(j->name, sizeof j->name, "search small-8, 1 thread");
    sweep(j, 150, 0);
    free_job(j);
}

/* The problem generator. */
static void test_generate(void **state)
{
    (void)state;
    job *j = new_job("generate 20 ops", "");
    j->generate = 20;
    sweep(j, LONG_MAX, 0);
    free_job(j);
}

/* The hook's own contract. */
static void test_allocator_api(void **state)
{
    (void)state;
    ft_allocator bad = {t_malloc, NULL, t_free, NULL};
    assert_int_equal(ft_set_allocator(&bad), FT_EINPUT);
    arm(1, 0);
    ft_problem *p = NULL;
    ft_status st;
    assert_int_equal(ft_problem_parse(PJ("[4, 4]", "[4, 4]", "[[0]]", "[[1]]", "[1]", "[" PW "]", "100", "1", "[4, 4]"), "tiny", &p, &st), FT_ENOMEM);
    assert_null(p);
    disarm();
    assert_int_equal(atomic_load(&T.live), 0);
    /* the default allocator again: the same parse succeeds */
    assert_int_equal(ft_problem_parse(PJ("[4, 4]", "[4, 4]", "[[0]]", "[[1]]", "[1]", "[" PW "]", "100", "1", "[4, 4]"), "tiny", &p, &st), FT_OK);
    ft_problem_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_allocator_api),
        cmocka_unit_test(test_benchmarks),
        cmocka_unit_test(test_benchmarks_persistent),
        cmocka_unit_test(test_vectors),
        cmocka_unit_test(test_target),
        cmocka_unit_test(test_search),
        cmocka_unit_test(test_search_threads),
        cmocka_unit_test(test_generate),
    };
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* FT_ALLOC_FILTER=test_search runs one test (a pattern, as cmocka's) */
    const char *only = getenv("FT_ALLOC_FILTER");
    if (only && *only)
        cmocka_set_test_filter(only);
    return cmocka_run_group_tests(tests, setup, teardown);
}
