/* test_eval.c - cmocka tests of the cost model (SPEC sections 3-4): vector totals, per-step regions, reuse, written rule, working set and per-subgraph figures. */
#include "ft_testutil.h"

/* ------------------------------------------------------------ fixtures */

/* Vector E-mlp-fused: op0 MatMul T0 (128w x 256h) x T1 (512w x 128h) -> T2
 * (512 x 256), K = 128; op1 Pointwise T2 -> T3; op2 MatMul T3 (512w x 256h)
 * x T4 (128w x 512h) -> T5 (128w x 256h), K = 512.  Bandwidth 40. */
#define E_PROBLEM                                                            \
    PJ("[128, 512, 512, 512, 128, 128]", "[256, 128, 256, 256, 512, 256]",   \
       "[[0, 1], [2], [3, 4]]", "[[2], [3], [5]]", "[1000, 200, 1000]",      \
       "[" MM ", " PW ", " MM "]", "60000", "40", N128)
#define E_FUSED SJ("[[0, 1, 2]]", "[[128, 128, 64]]", "[[]]")
#define E_SPLIT SJ("[[0, 1], [2]]", "[[128, 128, 128], [128, 128, 128]]",     \
                   "[[], []]")

/* Vector B-prologue-splitk: op0 Pointwise T0 -> T1, op1 MatMul T1 x T2 ->
 * T3, all 128 x 128, bandwidth 10. */
#define B_PROBLEM                                                            \
    PJ("[128, 128, 128, 128]", "[128, 128, 128, 128]", "[[0], [1, 2]]",      \
       "[[1], [3]]", "[400, 2000]", "[" PW ", " MM "]", "40000", "10", N128)
#define B_SCHEDULE SJ("[[0, 1]]", "[[128, 128, 32]]", "[[]]")

/* Vector A-partial-k-edge: T0 (200w x 100h) x T1 (100w x 200h) -> T2
 * (100 x 100), K = 200, bandwidth 10. */
#define A_PROBLEM                                                            \
    PJ("[200, 100, 100]", "[100, 200, 100]", "[[0, 1]]", "[[2]]", "[1000]",  \
       "[" MM "]", "50000", "10", N128)
#define A_SCHEDULE SJ("[[0]]", "[[64, 64, 64]]", "[[]]")

/* Example 4: one 128^3 MatMul, cost 1500, capacity 25000, bandwidth 10. */
#define EX4_PROBLEM                                                          \
    PJ("[128, 128, 128]", "[128, 128, 128]", "[[0, 1]]", "[[2]]", "[1500]",  \
       "[" MM "]", "25000", "10", N128)
#define EX4A SJ("[[0]]", "[[64, 64, 128]]", "[[]]")
#define EX4B SJO("[[0]]", "[[64, 64, 128]]", "[[]]", "[[0, 1, 3, 2]]")

/* Vector D-deep-k: T0 (512w x 128h) x T1 (128w x 512h), K = 512, cost 4000,
 * bandwidth 20. */
#define D_PROBLEM                                                            \
    PJ("[512, 128, 128]", "[128, 512, 128]", "[[0, 1]]", "[[2]]", "[4000]",  \
       "[" MM "]", "60000", "20", N128)
#define D_SCHEDULE SJ("[[0]]", "[[128, 128, 128]]", "[[]]")

/* Example 5: op0 MatMul T0 x T1 -> T3, op1 MatMul T3 x T2 -> T4, all
 * 128 x 128, capacity 45000, bandwidth 10. */
#define EX5_PROBLEM_CAP(cap)                                                 \
    PJ("[128, 128, 128, 128, 128]", "[128, 128, 128, 128, 128]",             \
       "[[0, 1], [3, 2]]", "[[3], [4]]", "[2000, 2000]",                     \
       "[" MM ", " MM "]", cap, "10", N128)
#define EX5_PROBLEM EX5_PROBLEM_CAP("45000")
#define EX5A SJ("[[0, 1]]", "[[128, 128, 128]]", "[[]]")
#define EX5B SJ("[[0, 1]]", "[[128, 128, 32]]", "[[]]")

/* Example 3: op0 T0 -> T1, op1 T1 -> T2, op2 (T1, T2) -> T3, Pointwise,
 * cost 1500 each, all 128 x 128, bandwidth 10. */
#define EX3_PROBLEM_CAP(cap)                                                 \
    PJ("[128, 128, 128, 128]", "[128, 128, 128, 128]",                       \
       "[[0], [1], [1, 2]]", "[[1], [2], [3]]", "[1500, 1500, 1500]",        \
       "[" PW ", " PW ", " PW "]", cap, "10", N128)
#define EX3_PROBLEM EX3_PROBLEM_CAP("50000")
#define G1 "[128, 128, 1]"
#define EX3A SJ("[[0], [1], [2]]", "[" G1 ", " G1 ", " G1 "]", "[[], [], []]")
#define EX3B SJ("[[0, 1], [0, 2]]", "[" G1 ", " G1 "]", "[[2], []]")
#define EX3C SJ("[[0], [1, 2]]", "[" G1 ", " G1 "]", "[[1], []]")
#define C_RETAIN_WRITE                                                       \
    SJ("[[0], [1], [2]]", "[" G1 ", " G1 ", " G1 "]", "[[1], [], []]")
/* op 0 recomputed by subgraph 1 before subgraph 2 loads T1 */
#define EX3_RECOMPUTE                                                        \
    SJ("[[0], [0, 1], [2]]", "[" G1 ", " G1 ", " G1 "]", "[[], [], []]")
/* example 3C with 64 x 64 tiles in subgraph 0 */
#define EX3C_SMALL                                                           \
    SJ("[[0], [1, 2]]", "[[64, 64, 1], " G1 "]", "[[1], []]")

/* op0 MatMul T0 x T1 -> T2, op1 Pointwise (T2, T0) -> T3: T0 is needed
 * with two different regions in each step. */
#define OVERLAP_PROBLEM                                                      \
    PJ("[128, 128, 128, 128]", "[128, 128, 128, 128]", "[[0, 1], [2, 0]]",   \
       "[[2], [3]]", "[1000, 100]", "[" MM ", " PW "]", "100000", "10", N128)
#define OVERLAP_SCHEDULE SJ("[[0, 1]]", "[[64, 64, 128]]", "[[]]")

/* op0 MatMul T0 x T0 -> T1: L and R are the same region of one tensor. */
#define SQUARE_PROBLEM                                                       \
    PJ("[128, 128]", "[128, 128]", "[[0, 0]]", "[[1]]", "[1000]", "[" MM "]", \
       "100000", "10", N128)
#define SQUARE_SCHEDULE SJ("[[0]]", "[[128, 128, 128]]", "[[]]")

/* Two k-loop MatMuls of different depth joined by an epilogue:
 *   op0 MatMul T0 (256w x 128h) x T1 (128w x 256h) -> T2, K = 256
 *   op1 MatMul T3 x T4 -> T5 (128 x 128), K = 128
 *   op2 Pointwise (T2, T5) -> T6;  op3 Pointwise T5 -> T7 (subgraph 1)
 * so T5 is written, when op1 finishes its tile. */
#define TWOK_PROBLEM                                                         \
    PJ("[256, 128, 128, 128, 128, 128, 128, 128]",                           \
       "[128, 256, 128, 128, 128, 128, 128, 128]",                           \
       "[[0, 1], [3, 4], [2, 5], [5]]", "[[2], [5], [6], [7]]",              \
       "[1000, 1000, 100, 100]", "[" MM ", " MM ", " PW ", " PW "]",         \
       "100000", "10", N128)
#define TWOK_SCHEDULE                                                        \
    SJ("[[0, 1, 2], [3]]", "[[128, 128, 64], " G1 "]", "[[], []]")

/* op0 MatMul T0 x T1 -> T2 (K = 128) and an epilogue op1 Pointwise
 * (T2, T3) -> T4, all 128 x 128; k = 64 gives two k-steps. */
#define EPI_PROBLEM_CAP(cap)                                                 \
    PJ("[128, 128, 128, 128, 128]", "[128, 128, 128, 128, 128]",             \
       "[[0, 1], [2, 3]]", "[[2], [4]]", "[1000, 100]", "[" MM ", " PW "]",  \
       cap, "10", N128)
#define EPI_SCHEDULE SJ("[[0, 1]]", "[[128, 128, 64]]", "[[]]")
/* two tiles (w = 64) visited in the order [1, 0] */
#define EPI_TWO_TILES SJO("[[0, 1]]", "[[64, 128, 64]]", "[[]]", "[[1, 0]]")

/* An upstream Pointwise op0 T0 -> T1 (64w x 128h) needed by a k-loop
 * MatMul (T1 x T2 -> T3, T2 64 x 64, K = 64) and by an epilogue.
 * KINDS_A: the epilogue op2 (T3, T1) -> T4 is listed last, so its
 *   spatial x spatial need of T1 is recorded first.
 * KINDS_B: the MatMul is listed last (op2), the epilogue op1 (T1, T4) -> T5
 *   before it, so the MatMul's spatial x reduction need comes first. */
#define KINDS_A_PROBLEM                                                      \
    PJ("[64, 64, 64, 64, 64]", "[128, 128, 64, 128, 128]",                   \
       "[[0], [1, 2], [3, 1]]", "[[1], [3], [4]]", "[400, 1000, 100]",       \
       "[" PW ", " MM ", " PW "]", "100000", "10", N128)
#define KINDS_B_PROBLEM                                                      \
    PJ("[64, 64, 64, 64, 64, 64]", "[128, 128, 64, 128, 128, 128]",          \
       "[[0], [1, 4], [1, 2]]", "[[1], [5], [3]]", "[400, 100, 1000]",       \
       "[" PW ", " PW ", " MM "]", "100000", "10", N128)
#define KINDS_SCHEDULE SJ("[[0, 1, 2]]", "[[128, 128, 32]]", "[[]]")

/* op0 T0 -> T1 and op1 T0 -> T2, Pointwise, 128 x 128; T1 is a graph
 * output that subgraph 0 also retains. */
#define GOUT_PROBLEM                                                         \
    PJ("[128, 128, 128]", "[128, 128, 128]", "[[0], [0]]", "[[1], [2]]",     \
       "[1000, 1000]", "[" PW ", " PW "]", "50000", "10", N128)
#define GOUT_SCHEDULE SJ("[[0], [1]]", "[" G1 ", " G1 "]", "[[1], []]")

/* One Pointwise op on a 100w x 50h tensor, tile 128 x 128. */
#define SMALL_PROBLEM                                                        \
    PJ("[100, 100]", "[50, 50]", "[[0]]", "[[1]]", "[300]", "[" PW "]",      \
       "100000", "10", N128)
#define SMALL_SCHEDULE SJ("[[0]]", "[" G1 "]", "[[]]")

/* The same op at cost 1000: compute 1000 x 1 x 1 = 1000 equals memory
 * (5000 + 5000) / 10 = 1000. */
#define TIE_PROBLEM                                                          \
    PJ("[100, 100]", "[50, 50]", "[[0]]", "[[1]]", "[1000]", "[" PW "]",     \
       "100000", "10", N128)

#define FIXTURE(name, problem, schedule)                                     \
    static int setup_##name(void **state)                                    \
    {                                                                        \
        return ftt_fixture_new(state, problem, schedule);                    \
    }

FIXTURE(e_fused, E_PROBLEM, E_FUSED)
FIXTURE(e_split, E_PROBLEM, E_SPLIT)
FIXTURE(b, B_PROBLEM, B_SCHEDULE)
FIXTURE(a, A_PROBLEM, A_SCHEDULE)
FIXTURE(ex4a, EX4_PROBLEM, EX4A)
FIXTURE(ex4b, EX4_PROBLEM, EX4B)
FIXTURE(d, D_PROBLEM, D_SCHEDULE)
FIXTURE(ex5a, EX5_PROBLEM, EX5A)
FIXTURE(ex5b, EX5_PROBLEM, EX5B)
FIXTURE(ex5b_cap40960, EX5_PROBLEM_CAP("40960"), EX5B)
FIXTURE(ex5b_cap40959, EX5_PROBLEM_CAP("40959"), EX5B)
FIXTURE(ex3a, EX3_PROBLEM, EX3A)
FIXTURE(ex3a_cap40000, EX3_PROBLEM_CAP("40000"), EX3A)
FIXTURE(ex3b, EX3_PROBLEM, EX3B)
FIXTURE(ex3c, EX3_PROBLEM, EX3C)
FIXTURE(c, EX3_PROBLEM, C_RETAIN_WRITE)
FIXTURE(recompute, EX3_PROBLEM, EX3_RECOMPUTE)
FIXTURE(ex3c_small, EX3_PROBLEM, EX3C_SMALL)
FIXTURE(overlap, OVERLAP_PROBLEM, OVERLAP_SCHEDULE)
FIXTURE(square, SQUARE_PROBLEM, SQUARE_SCHEDULE)
FIXTURE(twok, TWOK_PROBLEM, TWOK_SCHEDULE)
FIXTURE(epi, EPI_PROBLEM_CAP("60000"), EPI_SCHEDULE)
FIXTURE(epi_oom, EPI_PROBLEM_CAP("25000"), EPI_TWO_TILES)
FIXTURE(kinds_a, KINDS_A_PROBLEM, KINDS_SCHEDULE)
FIXTURE(kinds_b, KINDS_B_PROBLEM, KINDS_SCHEDULE)
FIXTURE(gout, GOUT_PROBLEM, GOUT_SCHEDULE)
FIXTURE(small, SMALL_PROBLEM, SMALL_SCHEDULE)
FIXTURE(tie, TIE_PROBLEM, SMALL_SCHEDULE)

/* Validate the fixture's schedule, walk subgraph sg and return its steps
 * (owned by the fixture). */
static const ftt_steps *walk(ftt_fixture *f, int sg, ft_compute_model m)
{
    ft_status st;
    ft_status_clear(&st);
    if (ft_schedule_validate(f->p, f->s, &st) != FT_OK)
        fail_msg("fixture schedule invalid: %s", st.msg);
    ftt_steps_free(&f->steps);
    assert_int_equal(ftt_walk_all(f->p, f->s, sg, m, &f->steps), 0);
    assert_int_equal(f->steps.n, f->steps.nsteps);
    return &f->steps;
}

/* Evaluate the fixture (result owned by the fixture); fails unless FT_OK. */
static const ft_eval *evaluate(ftt_fixture *f, ft_compute_model m)
{
    ft_status st;
    ft_eval_free(&f->eval);
    memset(&f->eval, 0, sizeof f->eval);
    ft_status_clear(&st);
    if (ft_evaluate(f->p, f->s, m, &f->eval, &st) != FT_OK)
        fail_msg("ft_evaluate: %s (%s)", st.msg, ft_reason_name(st.reason));
    assert_int_equal(f->eval.nsubgraphs, f->s->nsubgraphs);
    assert_int_equal(f->eval.model, m);
    return &f->eval;
}

#define STEP(ss, i) (&(ss)->v[(i)].st)

static void assert_active(const ft_step *s, int n, const int *ops)
{
    int i;
    if (s->nactive != n) {
        ftt_print_step(s);
        fail_msg("step %lld: %d active ops, expected %d", (long long)s->index,
                 s->nactive, n);
    }
    for (i = 0; i < n; i++)
        assert_int_equal(s->active[i], ops[i]);
}

/* ------------------------------------------------------------ (a) vectors */

static void test_eval_compute_model_names(void **state)
{
    ft_compute_model m = FT_COMPUTE_OP;
    (void)state;
    assert_string_equal(ft_compute_model_name(FT_COMPUTE_NATIVE), "native");
    assert_string_equal(ft_compute_model_name(FT_COMPUTE_OP), "op");
    assert_int_equal(ft_compute_model_parse("native", &m), 0);
    assert_int_equal(m, FT_COMPUTE_NATIVE);
    assert_int_equal(ft_compute_model_parse("op", &m), 0);
    assert_int_equal(m, FT_COMPUTE_OP);
    assert_int_equal(ft_compute_model_parse("fast", &m), -1);
}

/* Every row of expected.tsv: totals to 1e-9 relative, or FT_EINVALID with
 * the named reason.  All rows are tried; failures are listed, then the test
 * fails. */
static void test_eval_vectors_expected_tsv(void **state)
{
    const char *dir;
    char path[4096], line[512];
    FILE *tsv;
    int rows = 0, failures = 0;

    (void)state;
    FTT_DATADIR(dir);
    snprintf(path, sizeof path, "%s/expected.tsv", dir);
    tsv = fopen(path, "r");
    if (!tsv)
        fail_msg("cannot open %s", path);
    while (fgets(line, sizeof line, tsv)) {
        char name[256], mode[32], want[64];
        ft_problem *p = NULL;
        ft_schedule *s = NULL;
        ft_compute_model m;
        ft_status st;
        ft_eval e;
        int rc;

        if (line[0] == '#' || sscanf(line, "%255s %31s %63s", name, mode, want) != 3)
            continue;
        rows++;
        if (ft_compute_model_parse(mode, &m) != 0) {
            print_error("%s: unknown compute model %s\n", name, mode);
            failures++;
            continue;
        }
        snprintf(path, sizeof path, "%s/%s.problem.json", dir, name);
        ft_status_clear(&st);
        rc = ft_problem_load(path, &p, &st);
        if (rc == FT_OK) {
            snprintf(path, sizeof path, "%s/%s.solution.json", dir, name);
            rc = ft_schedule_load(path, &s, &st);
        }
        if (rc != FT_OK) {
            print_error("%s: does not load: %s\n", name, st.msg);
            failures++;
            ft_problem_free(p);
            continue;
        }
        memset(&e, 0, sizeof e);
        ft_status_clear(&st);
        rc = ft_evaluate(p, s, m, &e, &st);
        if (strncmp(want, "invalid:", 8) == 0) {
            if (rc != FT_EINVALID || st.code != FT_EINVALID ||
                strcmp(ft_reason_name(st.reason), want + 8) != 0) {
                print_error("%s %s: want %s, got code %d reason %s (%s)\n",
                            name, mode, want, rc, ft_reason_name(st.reason),
                            st.msg);
                failures++;
            } else if (e.sg != NULL) {
                print_error("%s %s: failed evaluation left allocations\n",
                            name, mode);
                failures++;
            }
        } else {
            double expect = strtod(want, NULL), sum = 0;
            int i;
            if (rc != FT_OK) {
                print_error("%s %s: want %s, got code %d (%s)\n", name, mode,
                            want, rc, st.msg);
                failures++;
            } else {
                for (i = 0; i < e.nsubgraphs; i++)
                    sum += e.sg[i].latency;
                if (fabs(e.total - expect) > 1e-9 * expect ||
                    fabs(sum - expect) > 1e-9 * expect ||
                    e.nsubgraphs != s->nsubgraphs || e.model != m ||
                    e.lower_bound > e.total * (1 + 1e-12) ||
                    fabs(e.lower_bound - ft_lower_bound(p, m, NULL, NULL)) >
                        1e-9 * e.lower_bound) {
                    print_error("%s %s: want %s, got total %.10g (sum of "
                                "subgraphs %.10g, lower bound %.10g)\n",
                                name, mode, want, e.total, sum, e.lower_bound);
                    failures++;
                }
            }
        }
        ft_eval_free(&e);
        ft_schedule_free(s);
        ft_problem_free(p);
    }
    fclose(tsv);
    assert_true(rows >= 52);
    assert_int_equal(failures, 0);
}

/* ------------------------------------------------------------ (b) regions */

static void test_eval_walk_emlp_roles_grid(void **state)
{
    ftt_fixture *f = *state;
    ft_walk *w = NULL;
    ft_status st;
    int64_t ntx, nty, nk, n;

    ft_status_clear(&st);
    assert_int_equal(ft_schedule_validate(f->p, f->s, &st), FT_OK);
    assert_int_equal(ft_walk_begin(f->p, f->s, 0, FT_COMPUTE_NATIVE, &w, &st),
                     FT_OK);
    /* op2's output T5 feeds nothing: k-loop; T2 -> op1 -> T3 -> op2, so
     * op0 and op1 feed the MatMul: upstream */
    assert_int_equal(ft_walk_role(w, 2), FT_ROLE_KLOOP);
    assert_int_equal(ft_walk_role(w, 0), FT_ROLE_UPSTREAM);
    assert_int_equal(ft_walk_role(w, 1), FT_ROLE_UPSTREAM);
    /* grid over T5 (128w x 256h) at 128 x 128: ntx = 1, nty = 2;
     * nk = ceil(512 / 64) = 8; 2 tiles x 8 = 16 steps */
    ft_walk_grid(w, &ntx, &nty, &nk, &n);
    assert_int_equal(ntx, 1);
    assert_int_equal(nty, 2);
    assert_int_equal(nk, 8);
    assert_int_equal(n, 16);
    ft_walk_free(w);
}

/* Step b has step a's place and data flow: index, tile, k-step, the
 * active ops with their regions, kinds and k slices. */
static void same_flow(const ft_step *a, const ft_step *b)
{
    assert_int_equal(b->index, a->index);
    assert_int_equal(b->tile, a->tile);
    assert_int_equal(b->tile_row, a->tile_row);
    assert_int_equal(b->tile_col, a->tile_col);
    assert_int_equal(b->kstep, a->kstep);
    assert_int_equal(b->nactive, a->nactive);
    for (int i = 0; i < a->nactive; i++) {
        const ft_active *x = &a->acts[i], *y = &b->acts[i];
        assert_int_equal(b->active[i], a->active[i]);
        assert_int_equal(y->op, x->op);
        assert_int_equal(y->role, x->role);
        assert_true(y->region.r0 == x->region.r0 && y->region.r1 == x->region.r1 && y->region.c0 == x->region.c0 &&
                    y->region.c1 == x->region.c1);
        assert_int_equal(y->row_kind, x->row_kind);
        assert_int_equal(y->col_kind, x->col_kind);
        assert_int_equal(y->ks0, x->ks0);
        assert_int_equal(y->ks1, x->ks1);
    }
}

/* ft_walk_flow_only: the same steps, the same active ops with the same
 * regions, kinds and k slices as the full walk (upstream ops' regions
 * come from needs inside the subgraph), and no slices, writes nor costs. */
static void test_eval_walk_flow_only(void **state)
{
    ftt_fixture *f = *state;
    ft_walk *full = NULL, *flow = NULL;
    ft_status st;
    ft_step a, b;
    int64_t steps = 0;

    ft_status_clear(&st);
    assert_int_equal(ft_schedule_validate(f->p, f->s, &st), FT_OK);
    assert_int_equal(ft_walk_begin(f->p, f->s, 0, FT_COMPUTE_NATIVE, &full, &st), FT_OK);
    assert_int_equal(ft_walk_begin(f->p, f->s, 0, FT_COMPUTE_NATIVE, &flow, &st), FT_OK);
    ft_walk_flow_only(flow);
    while (ft_walk_next(full, &a)) {
        assert_int_equal(ft_walk_next(flow, &b), 1);
        same_flow(&a, &b);
        assert_true(a.nslices > 0 && a.compute > 0);
        assert_int_equal(b.nslices, 0);
        assert_int_equal(b.nwrites, 0);
        assert_true(b.compute == 0 && b.memory == 0 && b.latency == 0);
        assert_int_equal(b.loaded_elems + b.written_elems + b.working_set, 0);
        steps++;
    }
    assert_int_equal(ft_walk_next(flow, &b), 0);
    assert_int_equal(steps, 16);
    ft_walk_free(full);
    ft_walk_free(flow);
}

/* ft_walk_skip: a flow-only walker that walks a step, skips n and walks
 * on gives the full walk's step 1 + n (none past the last); it skips at
 * most the steps left; a full walker skips nothing. */
static void test_eval_walk_skip(void **state)
{
    ftt_fixture *f = *state;
    static const int64_t skips[] = {0, 1, 5, 6, 7, 8, 9, 14, 15, 16, 40};
    ft_walk *full = NULL, *flow = NULL;
    ft_status st;
    ft_step a, b;

    ft_status_clear(&st);
    assert_int_equal(ft_schedule_validate(f->p, f->s, &st), FT_OK);
    for (size_t i = 0; i < sizeof skips / sizeof skips[0]; i++) {
        const int64_t n = skips[i], want = n < 15 ? n : 15; /* 16 steps, one walked */
        assert_int_equal(ft_walk_begin(f->p, f->s, 0, FT_COMPUTE_NATIVE, &full, &st), FT_OK);
        assert_int_equal(ft_walk_begin(f->p, f->s, 0, FT_COMPUTE_NATIVE, &flow, &st), FT_OK);
        assert_int_equal(ft_walk_skip(full, n), 0);
        ft_walk_flow_only(flow);
        assert_int_equal(ft_walk_next(flow, &b), 1);
        assert_int_equal(ft_walk_skip(flow, n), want);
        assert_int_equal(ft_walk_skip(flow, -1), 0);
        for (int64_t j = 0; j <= 1 + want && ft_walk_next(full, &a); j++)
            ;
        if (1 + want < 16) {
            assert_int_equal(ft_walk_next(flow, &b), 1);
            same_flow(&a, &b);
        } else {
            assert_int_equal(ft_walk_next(flow, &b), 0);
        }
        ft_walk_free(full);
        ft_walk_free(flow);
    }
}

static void test_eval_walk_emlp_first_steps(void **state)
{
    ftt_fixture *f = *state;
    const ftt_steps *ss = walk(f, 0, FT_COMPUTE_NATIVE);
    const ft_step *s0 = STEP(ss, 0), *s1 = STEP(ss, 1), *s7 = STEP(ss, 7);
    static const int all[] = {0, 1, 2};

    /* step 0 = tile 0 (rows 0:128 of T5), k-step 0, ks = [0, 64):
     *   op2 (k-loop) needs T3[0:128, 0:64] (produced) and T4[0:64, 0:128];
     *   op1 (upstream) outputs T3[0:128, 0:64], needs T2[0:128, 0:64];
     *   op0 (upstream MatMul, full K = 128) needs T0[0:128, 0:128] and
     *   T1[0:128, 0:64]. */
    assert_int_equal(s0->index, 0);
    assert_int_equal(s0->tile, 0);
    assert_int_equal(s0->tile_row, 0);
    assert_int_equal(s0->tile_col, 0);
    assert_int_equal(s0->kstep, 0);
    assert_int_equal(s0->nslices, 3);
    assert_slice(s0, 4, 0, 64, 0, 128, 1);
    assert_slice(s0, 0, 0, 128, 0, 128, 1);
    assert_slice(s0, 1, 0, 128, 0, 64, 1);
    assert_active(s0, 3, all);
    assert_int_equal(s0->nwrites, 0);
    /* compute (native): op2 1000 x ceil(128/128) x ceil(128/128) x 64/128
     * = 500; op1 200 x ceil(128/128) x (64/128 reduction) = 100; op0 1000 x
     * 1 x (64/128) x (128/128) = 500; total 1100.  memory: 8192 + 16384 +
     * 8192 = 32768 loaded / 40 = 819.2 */
    assert_cost(s0->compute, 1100);
    assert_int_equal(s0->loaded_elems, 32768);
    assert_int_equal(s0->written_elems, 0);
    assert_cost(s0->memory, 819.2);
    assert_cost(s0->latency, 1100);
    /* working set: 32768 of slices + written T5 at 128 x 128 = 49152 */
    assert_int_equal(s0->working_set, 49152);

    /* step 1: ks = [64, 128): T0[0:128, 0:128] is the same slice again */
    assert_int_equal(s1->kstep, 1);
    assert_int_equal(s1->tile, 0);
    assert_int_equal(s1->nslices, 3);
    assert_slice(s1, 4, 64, 128, 0, 128, 1);
    assert_slice(s1, 0, 0, 128, 0, 128, 0);
    assert_slice(s1, 1, 0, 128, 64, 128, 1);
    assert_int_equal(s1->loaded_elems, 16384);
    assert_cost(s1->memory, 409.6);
    assert_cost(s1->compute, 1100);
    assert_int_equal(s1->working_set, 49152);

    /* step 7, the tile's last k-step (ks = [448, 512)): op2 writes its tile
     * T5[0:128, 0:128]; (16384 loaded + 16384 written) / 40 = 819.2 */
    assert_int_equal(s7->kstep, 7);
    assert_slice(s7, 4, 448, 512, 0, 128, 1);
    assert_slice(s7, 1, 0, 128, 448, 512, 1);
    assert_slice(s7, 0, 0, 128, 0, 128, 0);
    assert_int_equal(s7->nwrites, 1);
    assert_write(s7, 5, 0, 128, 0, 128);
    assert_int_equal(s7->written_elems, 16384);
    assert_cost(s7->memory, 819.2);
    assert_cost(s7->latency, 1100);
}

static void test_eval_walk_emlp_tile_change(void **state)
{
    ftt_fixture *f = *state;
    const ftt_steps *ss = walk(f, 0, FT_COMPUTE_NATIVE);
    const ft_step *s8 = STEP(ss, 8);

    /* step 8 = tile 1 (row 1: rows 128:256), k-step 0; no slice matches
     * step 7's (T4[448:512, ..], T1[.., 448:512], T0[0:128, ..]) */
    assert_int_equal(s8->tile, 1);
    assert_int_equal(s8->tile_row, 1);
    assert_int_equal(s8->tile_col, 0);
    assert_int_equal(s8->kstep, 0);
    assert_int_equal(s8->nslices, 3);
    assert_slice(s8, 4, 0, 64, 0, 128, 1);
    assert_slice(s8, 0, 128, 256, 0, 128, 1);
    assert_slice(s8, 1, 0, 128, 0, 64, 1);
    assert_int_equal(s8->loaded_elems, 32768);
    assert_write(STEP(ss, 15), 5, 128, 256, 0, 128);
}

static void test_eval_walk_emlp_op_model(void **state)
{
    ftt_fixture *f = *state;
    const ftt_steps *ss = walk(f, 0, FT_COMPUTE_OP);

    /* kref = the op's own K: op2 1000 x 64/512 = 125; op1 200 x 64/128 =
     * 100 (no depth for Pointwise); op0 1000 x 64/128 x 128/128 = 500 */
    assert_cost(STEP(ss, 0)->compute, 725);
    assert_cost(STEP(ss, 0)->latency, 819.2);
    assert_cost(STEP(ss, 1)->compute, 725);
    assert_cost(STEP(ss, 1)->latency, 725);
    assert_cost(STEP(ss, 7)->latency, 819.2);
}

static void test_eval_walk_prologue_splitk(void **state)
{
    ftt_fixture *f = *state;
    const ftt_steps *ss;
    ft_walk *w = NULL;
    ft_status st;
    int s, m;
    static const int both[] = {0, 1};

    ft_status_clear(&st);
    assert_int_equal(ft_walk_begin(f->p, f->s, 0, FT_COMPUTE_NATIVE, &w, &st),
                     FT_OK);
    assert_int_equal(ft_walk_role(w, 0), FT_ROLE_UPSTREAM);
    assert_int_equal(ft_walk_role(w, 1), FT_ROLE_KLOOP);
    ft_walk_free(w);

    for (m = 0; m < 2; m++) {
        ss = walk(f, 0, m ? FT_COMPUTE_OP : FT_COMPUTE_NATIVE);
        assert_int_equal(ss->ntx, 1);
        assert_int_equal(ss->nty, 1);
        assert_int_equal(ss->nk, 4);
        for (s = 0; s < 4; s++) {
            const ft_step *st4 = STEP(ss, s);
            /* op1 needs T1[0:128, 32s:32s+32] (spatial x reduction) and
             * T2[32s:32s+32, 0:128]; the prologue op0 computes that region
             * of T1 from T0[0:128, 32s:32s+32].
             * compute: op1 2000 x 1 x 1 x 32/128 = 500 (K = 128 = native k,
             * so both models agree); op0 400 x ceil(128/128) x 32/128 = 100 */
            assert_int_equal(st4->nslices, 2);
            assert_slice(st4, 0, 0, 128, 32 * s, 32 * s + 32, 1);
            assert_slice(st4, 2, 32 * s, 32 * s + 32, 0, 128, 1);
            assert_active(st4, 2, both);
            assert_cost(st4->compute, 600);
            /* 4096 + 4096 loaded; T3 written (128 x 128) in the last step */
            assert_int_equal(st4->loaded_elems, 8192);
            assert_int_equal(st4->written_elems, s == 3 ? 16384 : 0);
            assert_int_equal(st4->nwrites, s == 3 ? 1 : 0);
            assert_cost(st4->latency, s == 3 ? 2457.6 : 819.2);
            /* 8192 + written T3 at 128 x 128 */
            assert_int_equal(st4->working_set, 24576);
        }
        assert_write(STEP(ss, 3), 3, 0, 128, 0, 128);
    }
}

static void test_eval_walk_partial_k_edge(void **state)
{
    ftt_fixture *f = *state;
    const ftt_steps *ss = walk(f, 0, FT_COMPUTE_NATIVE);
    const ft_step *s;
    int i;

    /* grid over T2 (100 x 100) at 64: 2 x 2 tiles; nk = ceil(200/64) = 4
     * with ks = [0,64) [64,128) [128,192) [192,200) */
    assert_int_equal(ss->ntx, 2);
    assert_int_equal(ss->nty, 2);
    assert_int_equal(ss->nk, 4);
    assert_int_equal(ss->n, 16);

    /* step 3: tile 0, the partial last k-step [192, 200) */
    s = STEP(ss, 3);
    assert_int_equal(s->kstep, 3);
    assert_int_equal(s->nslices, 2);
    assert_slice(s, 0, 0, 64, 192, 200, 1);
    assert_slice(s, 1, 192, 200, 0, 64, 1);
    assert_write(s, 2, 0, 64, 0, 64);
    /* 1000 x 1 x 1 x 8/128 = 62.5; (512 + 512 + 4096) / 10 = 512 */
    assert_cost(s->compute, 62.5);
    assert_cost(s->memory, 512);
    assert_cost(s->latency, 512);
    /* full steps of tile 0: 1000 x 64/128 = 500 vs (4096 + 4096) / 10 */
    for (i = 0; i < 3; i++) {
        assert_cost(STEP(ss, i)->compute, 500);
        assert_cost(STEP(ss, i)->latency, 819.2);
    }

    /* step 4: tile 1 (row 0, columns 64:100 clipped), k-step 0 */
    s = STEP(ss, 4);
    assert_int_equal(s->tile, 1);
    assert_int_equal(s->tile_col, 1);
    assert_slice(s, 0, 0, 64, 0, 64, 1);
    assert_slice(s, 1, 0, 64, 64, 100, 1);
    /* padding: 36 columns pay a whole native tile: 500; (4096 + 64 x 36)
     * / 10 = 640 */
    assert_cost(s->compute, 500);
    assert_cost(s->memory, 640);
    assert_cost(s->latency, 640);

    /* step 12: tile 3 (rows 64:100, columns 64:100), k-step 0 */
    s = STEP(ss, 12);
    assert_int_equal(s->tile, 3);
    assert_int_equal(s->tile_row, 1);
    assert_int_equal(s->tile_col, 1);
    assert_slice(s, 0, 64, 100, 0, 64, 1);
    assert_slice(s, 1, 0, 64, 64, 100, 1);
    /* (36 x 64 + 64 x 36) / 10 = 460.8 < 500 */
    assert_cost(s->latency, 500);
    /* working set: 4608 of slices + written T2 at min(64,100) x min(64,100)
     * = 4096 (not the clipped 36 x 36) = 8704 */
    assert_int_equal(s->working_set, 8704);

    /* step 15: the corner's partial k-step */
    s = STEP(ss, 15);
    assert_slice(s, 0, 64, 100, 192, 200, 1);
    assert_slice(s, 1, 192, 200, 64, 100, 1);
    assert_write(s, 2, 64, 100, 64, 100);
    assert_int_equal(s->written_elems, 36 * 36);
    /* (288 + 288 + 1296) / 10 = 187.2 */
    assert_cost(s->memory, 187.2);
    assert_cost(s->latency, 187.2);
    assert_int_equal(s->working_set, 288 + 288 + 4096);

    /* op model, kref = K = 200: 1000 x 64/200 = 320 and 1000 x 8/200 = 40 */
    ss = walk(f, 0, FT_COMPUTE_OP);
    assert_cost(STEP(ss, 0)->compute, 320);
    assert_cost(STEP(ss, 3)->compute, 40);
}

static void test_eval_walk_upstream_kinds_a(void **state)
{
    ftt_fixture *f = *state;
    const ftt_steps *ss = walk(f, 0, FT_COMPUTE_NATIVE);
    static const int first[] = {0, 1}, last[] = {0, 1, 2};

    /* nk = ceil(64 / 32) = 2, one tile.
     * step 0: op2 (epilogue) inactive; op1 needs T1[0:128, 0:32] (s x r),
     * T2[0:32, 0:64]; op0: 400 x ceil(128/128) x 32/128 = 100; op1: 1000
     * x 1 x ceil(64/128) x 32/128 = 250 */
    assert_active(STEP(ss, 0), 2, first);
    assert_cost(STEP(ss, 0)->compute, 350);
    assert_slice(STEP(ss, 0), 0, 0, 128, 0, 32, 1);
    /* step 1: reverse walk meets op2 first: T1[0:128, 0:64] spatial x
     * spatial; then op1's T1[0:128, 32:64]; bounding box [0:128, 0:64]
     * with op2's kinds: op0 = 400 x 1 x ceil(64/128) = 400; op1 250; op2
     * 100 x 1 x 1 = 100 */
    assert_active(STEP(ss, 1), 3, last);
    assert_slice(STEP(ss, 1), 0, 0, 128, 0, 64, 1);
    assert_slice(STEP(ss, 1), 2, 32, 64, 0, 64, 1);
    assert_cost(STEP(ss, 1)->compute, 750);
}

static void test_eval_walk_upstream_kinds_b(void **state)
{
    ftt_fixture *f = *state;
    const ftt_steps *ss = walk(f, 0, FT_COMPUTE_NATIVE);
    static const int first[] = {0, 2}, last[] = {0, 1, 2};

    /* step 0 as in kinds_a: op0 100 + MatMul 250 */
    assert_active(STEP(ss, 0), 2, first);
    assert_cost(STEP(ss, 0)->compute, 350);
    /* step 1: reverse walk meets the MatMul (op2) first: T1[0:128, 32:64]
     * spatial x reduction; the epilogue op1 adds T1[0:128, 0:64]; bounding
     * box [0:128, 0:64] with the MatMul's kinds: op0 = 400 x 1 x 64/128 =
     * 200; op1 = 100 x 1 x ceil(64/128) = 100; op2 250; total 550 */
    assert_active(STEP(ss, 1), 3, last);
    assert_slice(STEP(ss, 1), 0, 0, 128, 0, 64, 1);
    assert_slice(STEP(ss, 1), 4, 0, 128, 0, 64, 1);
    assert_cost(STEP(ss, 1)->compute, 550);
}

static void test_eval_walk_kloop_active_while_k_left(void **state)
{
    ftt_fixture *f = *state;
    const ftt_steps *ss = walk(f, 0, FT_COMPUTE_NATIVE);
    static const int s01[] = {0, 1}, s2[] = {0}, s3[] = {0, 2};

    /* nk = max(ceil(256/64), ceil(128/64)) = 4; op1 (K = 128) is active
     * while s x 64 < 128: steps 0 and 1; the epilogue op2 only in step 3 */
    assert_int_equal(ss->nk, 4);
    assert_active(STEP(ss, 0), 2, s01);
    assert_active(STEP(ss, 1), 2, s01);
    assert_active(STEP(ss, 2), 1, s2);
    assert_active(STEP(ss, 3), 2, s3);
    assert_int_equal(STEP(ss, 0)->nslices, 4);
    assert_int_equal(STEP(ss, 2)->nslices, 2);
    assert_slice(STEP(ss, 2), 0, 0, 128, 128, 192, 1);
    assert_slice(STEP(ss, 2), 1, 128, 192, 0, 128, 1);
    /* T5 (needed by subgraph 1) is written when op1 finishes: step 1; the
     * graph output T6 in step 3 */
    assert_int_equal(STEP(ss, 0)->nwrites, 0);
    assert_int_equal(STEP(ss, 1)->nwrites, 1);
    assert_write(STEP(ss, 1), 5, 0, 128, 0, 128);
    assert_int_equal(STEP(ss, 2)->nwrites, 0);
    assert_int_equal(STEP(ss, 3)->nwrites, 1);
    assert_write(STEP(ss, 3), 6, 0, 128, 0, 128);
    /* compute: 500 + 500, 500 + 500, 500, 500 + 100;
     * memory: 32768/10, (32768 + 16384)/10, 16384/10, (16384 + 16384)/10 */
    assert_cost(STEP(ss, 0)->compute, 1000);
    assert_cost(STEP(ss, 2)->compute, 500);
    assert_cost(STEP(ss, 3)->compute, 600);
    assert_cost(STEP(ss, 0)->latency, 3276.8);
    assert_cost(STEP(ss, 1)->latency, 4915.2);
    assert_cost(STEP(ss, 2)->latency, 1638.4);
    assert_cost(STEP(ss, 3)->latency, 3276.8);
    /* working set: slices + T5 and T6 at 128 x 128 */
    assert_int_equal(STEP(ss, 0)->working_set, 32768 + 32768);
    assert_int_equal(STEP(ss, 2)->working_set, 16384 + 32768);
    /* op model: op0 1000 x 64/256 = 250, op1 1000 x 64/128 = 500 */
    ss = walk(f, 0, FT_COMPUTE_OP);
    assert_cost(STEP(ss, 0)->compute, 750);
    assert_cost(STEP(ss, 2)->compute, 250);
    assert_cost(STEP(ss, 3)->compute, 350);
    /* total: 3276.8 + 4915.2 + 1638.4 + 3276.8 = 13107.2, then subgraph 1
     * loads T5 and writes T7: 32768 / 10 = 3276.8 */
    assert_cost(evaluate(f, FT_COMPUTE_NATIVE)->total, 16384);
    assert_cost(f->eval.sg[0].latency, 13107.2);
}

static void test_eval_walk_epilogue_last_kstep(void **state)
{
    ftt_fixture *f = *state;
    const ftt_steps *ss = walk(f, 0, FT_COMPUTE_NATIVE);
    static const int s0[] = {0}, s1[] = {0, 1};

    /* step 0: only the MatMul: T0[0:128, 0:64], T1[0:64, 0:128];
     * 1000 x 64/128 = 500; 16384 / 10 = 1638.4 */
    assert_active(STEP(ss, 0), 1, s0);
    assert_int_equal(STEP(ss, 0)->nslices, 2);
    assert_cost(STEP(ss, 0)->compute, 500);
    assert_cost(STEP(ss, 0)->latency, 1638.4);
    assert_int_equal(STEP(ss, 0)->working_set, 16384 + 16384);
    /* step 1: the epilogue joins and needs T3[0:128, 0:128];
     * 500 + 100 = 600; (8192 + 8192 + 16384 + 16384 written) / 10 */
    assert_active(STEP(ss, 1), 2, s1);
    assert_int_equal(STEP(ss, 1)->nslices, 3);
    assert_slice(STEP(ss, 1), 3, 0, 128, 0, 128, 1);
    assert_cost(STEP(ss, 1)->compute, 600);
    assert_cost(STEP(ss, 1)->latency, 4915.2);
    assert_write(STEP(ss, 1), 4, 0, 128, 0, 128);
    assert_int_equal(STEP(ss, 1)->working_set, 32768 + 16384);
    assert_cost(evaluate(f, FT_COMPUTE_NATIVE)->total, 6553.6);
}

/* ------------------------------------------------------------ (c) reuse */

static void test_eval_reuse_raster(void **state)
{
    ftt_fixture *f = *state;
    const ftt_steps *ss = walk(f, 0, FT_COMPUTE_NATIVE);
    static const double lat[4] = {2048, 1500, 2048, 1500};
    int i;

    /* tiles 0 1 2 3: L = T0[rows, 0:128], R = T1[0:128, cols];
     * compute 1500 x ceil(64/128)^2 x 128/128 = 1500 every step.
     * step 0: both loaded, (8192 + 8192 + 4096 written) / 10 = 2048
     * step 1: same rows, L reused: (8192 + 4096) / 10 = 1228.8 -> 1500
     * step 2: new rows, R changed back: 2048;  step 3: L reused: 1500 */
    assert_int_equal(ss->n, 4);
    for (i = 0; i < 4; i++) {
        assert_int_equal(STEP(ss, i)->tile, i);
        assert_cost(STEP(ss, i)->latency, lat[i]);
        assert_cost(STEP(ss, i)->compute, 1500);
        assert_int_equal(STEP(ss, i)->nslices, 2);
    }
    assert_slice(STEP(ss, 0), 0, 0, 64, 0, 128, 1);
    assert_slice(STEP(ss, 0), 1, 0, 128, 0, 64, 1);
    assert_slice(STEP(ss, 1), 0, 0, 64, 0, 128, 0);
    assert_slice(STEP(ss, 1), 1, 0, 128, 64, 128, 1);
    assert_slice(STEP(ss, 2), 0, 64, 128, 0, 128, 1);
    assert_slice(STEP(ss, 2), 1, 0, 128, 0, 64, 1);
    assert_slice(STEP(ss, 3), 0, 64, 128, 0, 128, 0);
    assert_slice(STEP(ss, 3), 1, 0, 128, 64, 128, 1);
    assert_int_equal(STEP(ss, 1)->loaded_elems, 8192);
    assert_cost(STEP(ss, 1)->memory, 1228.8);
}

static void test_eval_reuse_snake(void **state)
{
    ftt_fixture *f = *state;
    const ftt_steps *ss = walk(f, 0, FT_COMPUTE_NATIVE);
    static const double lat[4] = {2048, 1500, 1500, 1500};
    static const int64_t tiles[4] = {0, 1, 3, 2};
    int i;

    /* order 0 1 3 2: step 2 (tile 3) keeps R = T1[0:128, 64:128] of tile
     * 1; step 3 (tile 2) keeps L = T0[64:128, ..] of tile 3 */
    for (i = 0; i < 4; i++) {
        assert_int_equal(STEP(ss, i)->tile, tiles[i]);
        assert_cost(STEP(ss, i)->latency, lat[i]);
    }
    assert_int_equal(STEP(ss, 2)->tile_row, 1);
    assert_int_equal(STEP(ss, 2)->tile_col, 1);
    assert_slice(STEP(ss, 2), 0, 64, 128, 0, 128, 1);
    assert_slice(STEP(ss, 2), 1, 0, 128, 64, 128, 0);
    assert_slice(STEP(ss, 3), 0, 64, 128, 0, 128, 0);
    assert_slice(STEP(ss, 3), 1, 0, 128, 0, 64, 1);
    assert_cost(evaluate(f, FT_COMPUTE_NATIVE)->total, 6548);
}

static void test_eval_reuse_exact_match_only(void **state)
{
    ftt_fixture *f = *state;
    const ftt_steps *ss = walk(f, 0, FT_COMPUTE_NATIVE);
    static const double lat[4] = {2457.6, 1638.4, 2457.6, 1638.4};
    int i;

    /* 2 x 2 tiles of 64; per step op1 (epilogue) needs T0[tile] and op0
     * (k-loop, K = 128 in one k-step) needs T0[rows, 0:128] and
     * T1[0:128, cols]: two different regions of T0 are two slices */
    assert_int_equal(STEP(ss, 0)->nslices, 3);
    assert_slice(STEP(ss, 0), 0, 0, 64, 0, 64, 1);
    assert_slice(STEP(ss, 0), 0, 0, 64, 0, 128, 1);
    assert_slice(STEP(ss, 0), 1, 0, 128, 0, 64, 1);
    /* step 1: T0[0:64, 64:128] lies inside step 0's T0[0:64, 0:128] but is
     * not the same region: loaded.  T0[0:64, 0:128] itself is reused. */
    assert_int_equal(STEP(ss, 1)->nslices, 3);
    assert_slice(STEP(ss, 1), 0, 0, 64, 64, 128, 1);
    assert_slice(STEP(ss, 1), 0, 0, 64, 0, 128, 0);
    assert_slice(STEP(ss, 1), 1, 0, 128, 64, 128, 1);
    /* latencies: compute 1000 + 100 = 1100 each;
     * step 0: (4096 + 8192 + 8192 + 4096 written) / 10 = 2457.6
     * step 1: (4096 + 8192 + 4096) / 10 = 1638.4; likewise row 1 */
    for (i = 0; i < 4; i++) {
        assert_cost(STEP(ss, i)->compute, 1100);
        assert_cost(STEP(ss, i)->latency, lat[i]);
        /* 20480 of slices + written T3 at 64 x 64 */
        assert_int_equal(STEP(ss, i)->working_set, 24576);
    }
    assert_cost(evaluate(f, FT_COMPUTE_NATIVE)->total, 8192);
}

static void test_eval_slices_identical_regions_once(void **state)
{
    ftt_fixture *f = *state;
    const ftt_steps *ss = walk(f, 0, FT_COMPUTE_NATIVE);

    /* L = T0[0:128, 0:128] and R = T0[0:128, 0:128]: one slice */
    assert_int_equal(ss->n, 1);
    assert_int_equal(STEP(ss, 0)->nslices, 1);
    assert_slice(STEP(ss, 0), 0, 0, 128, 0, 128, 1);
    assert_int_equal(STEP(ss, 0)->loaded_elems, 16384);
    /* (16384 + 16384 written) / 10 = 3276.8 > compute 1000 */
    assert_cost(STEP(ss, 0)->latency, 3276.8);
    assert_int_equal(STEP(ss, 0)->working_set, 32768);
}

static void test_eval_resident_never_loaded(void **state)
{
    ftt_fixture *f = *state;
    const ftt_steps *ss = walk(f, 1, FT_COMPUTE_NATIVE);

    /* vector C, subgraph 1 = [op1]: T1 is resident (retained by subgraph
     * 0): no slice, nothing loaded; T2 is written (subgraph 2 loads it):
     * 16384 / 10 = 1638.4 > 1500 */
    assert_int_equal(ss->n, 1);
    assert_int_equal(STEP(ss, 0)->nslices, 0);
    assert_int_equal(STEP(ss, 0)->loaded_elems, 0);
    assert_int_equal(STEP(ss, 0)->written_elems, 16384);
    assert_cost(STEP(ss, 0)->latency, 1638.4);
    /* resident T1 at full size + written T2 */
    assert_int_equal(STEP(ss, 0)->working_set, 32768);
    /* subgraph 2 = [op2] loads T1 (written by subgraph 0) and T2 */
    ss = walk(f, 2, FT_COMPUTE_NATIVE);
    assert_int_equal(STEP(ss, 0)->nslices, 2);
    assert_slice(STEP(ss, 0), 1, 0, 128, 0, 128, 1);
    assert_slice(STEP(ss, 0), 2, 0, 128, 0, 128, 1);
    /* (32768 + 16384) / 10 */
    assert_cost(STEP(ss, 0)->latency, 4915.2);
}

/* ------------------------------------------------------------ (d) written */

static void test_eval_written_retain_and_write(void **state)
{
    ftt_fixture *f = *state;

    /* vector C: T1 retained by subgraph 0 for subgraph 1, but subgraph 2
     * needs it too (j = i + 2): written */
    assert_true(ft_tensor_written(f->p, f->s, 0, 1));
    assert_true(ft_tensor_written(f->p, f->s, 1, 2));
    assert_true(ft_tensor_written(f->p, f->s, 2, 3)); /* graph output */
    /* tensors a subgraph does not produce */
    assert_false(ft_tensor_written(f->p, f->s, 0, 0));
    assert_false(ft_tensor_written(f->p, f->s, 0, 2));
    assert_false(ft_tensor_written(f->p, f->s, 1, 1));
    /* subgraph 0: (16384 loaded + 16384 written) / 10 = 3276.8;
     * total 3276.8 + 1638.4 + 4915.2 = 9830.4 */
    evaluate(f, FT_COMPUTE_NATIVE);
    assert_int_equal(f->eval.sg[0].written, 16384);
    assert_cost(f->eval.sg[0].latency, 3276.8);
    assert_cost(f->eval.total, 9830.4);
}

static void test_eval_written_ex3a(void **state)
{
    ftt_fixture *f = *state;
    /* nothing retained: every intermediate is loaded by the next subgraph */
    assert_true(ft_tensor_written(f->p, f->s, 0, 1));
    assert_true(ft_tensor_written(f->p, f->s, 1, 2));
    assert_true(ft_tensor_written(f->p, f->s, 2, 3));
}

static void test_eval_written_ex3b(void **state)
{
    ftt_fixture *f = *state;
    /* [[0, 1], [0, 2]] retaining T2: subgraph 1 recomputes T1 (not a
     * boundary input there) and finds T2 resident: neither is written */
    assert_false(ft_tensor_written(f->p, f->s, 0, 1));
    assert_false(ft_tensor_written(f->p, f->s, 0, 2));
    assert_false(ft_tensor_written(f->p, f->s, 1, 1));
    assert_true(ft_tensor_written(f->p, f->s, 1, 3));
    /* subgraph 0: 16384 / 10 = 1638.4 < compute 3000; subgraph 1: T0
     * loaded, T3 written: 3276.8 > 3000 */
    evaluate(f, FT_COMPUTE_NATIVE);
    assert_int_equal(f->eval.sg[0].written, 0);
    assert_cost(f->eval.sg[0].latency, 3000);
    assert_cost(f->eval.sg[1].latency, 3276.8);
}

static void test_eval_written_ex3c(void **state)
{
    ftt_fixture *f = *state;
    /* T1 retained and needed only by the next subgraph: not written */
    assert_false(ft_tensor_written(f->p, f->s, 0, 1));
    assert_false(ft_tensor_written(f->p, f->s, 1, 2)); /* consumed inside */
    assert_true(ft_tensor_written(f->p, f->s, 1, 3));
    evaluate(f, FT_COMPUTE_NATIVE);
    assert_int_equal(f->eval.sg[0].written, 0);
    assert_int_equal(f->eval.sg[1].loaded, 0);
    /* 16384 / 10 = 1638.4 > 1500; then max(3000, 1638.4) */
    assert_cost(f->eval.sg[0].latency, 1638.4);
    assert_cost(f->eval.sg[1].latency, 3000);
}

static void test_eval_written_recompute_between(void **state)
{
    ftt_fixture *f = *state;
    /* [[0], [0, 1], [2]]: subgraph 2 loads T1, but subgraph 1 produces T1
     * in between, so subgraph 0's T1 is not written; subgraph 1's is */
    assert_false(ft_tensor_written(f->p, f->s, 0, 1));
    assert_true(ft_tensor_written(f->p, f->s, 1, 1));
    assert_true(ft_tensor_written(f->p, f->s, 1, 2));
    /* subgraph 0: 16384 / 10 = 1638.4 > 1500
     * subgraph 1: (16384 + 32768 written) / 10 = 4915.2 > 3000
     * subgraph 2: (32768 + 16384) / 10 = 4915.2; total 11468.8 */
    evaluate(f, FT_COMPUTE_NATIVE);
    assert_int_equal(f->eval.sg[0].written, 0);
    assert_int_equal(f->eval.sg[1].written, 32768);
    assert_cost(f->eval.sg[0].latency, 1638.4);
    assert_cost(f->eval.sg[1].latency, 4915.2);
    assert_cost(f->eval.total, 11468.8);
}

static void test_eval_written_graph_output_retained(void **state)
{
    ftt_fixture *f = *state;
    const ftt_steps *ss;

    /* T1 has no consumer: a graph output is always written, retained or
     * not */
    assert_true(ft_tensor_written(f->p, f->s, 0, 1));
    assert_true(ft_tensor_written(f->p, f->s, 1, 2));
    ss = walk(f, 0, FT_COMPUTE_NATIVE);
    assert_int_equal(STEP(ss, 0)->written_elems, 16384);
    /* T0 slice + retained T1 at full size (counted once though also
     * written) */
    assert_int_equal(STEP(ss, 0)->working_set, 32768);
    /* subgraph 1 does not use resident T1, which still occupies fast
     * memory: T0 slice 16384 + T1 16384 + written T2 16384 */
    ss = walk(f, 1, FT_COMPUTE_NATIVE);
    assert_int_equal(STEP(ss, 0)->working_set, 49152);
    assert_cost(evaluate(f, FT_COMPUTE_NATIVE)->total, 6553.6);
}

/* ------------------------------------------------------------ (e) working set */

static void test_eval_working_set_ex5b(void **state)
{
    ftt_fixture *f = *state;
    const ftt_steps *ss = walk(f, 0, FT_COMPUTE_NATIVE);
    int i;

    /* every step: T2 slice 32 x 128 = 4096, T0[0:128, 0:128] = 16384
     * (reused after step 0, still in fast memory), T1 slice 128 x 32 =
     * 4096, + written T4 at 128 x 128 = 16384: 40960 <= 45000 */
    for (i = 0; i < 4; i++) {
        assert_int_equal(STEP(ss, i)->nslices, 3);
        assert_int_equal(STEP(ss, i)->working_set, 40960);
    }
    evaluate(f, FT_COMPUTE_NATIVE);
    assert_int_equal(f->eval.sg[0].peak_working_set, 40960);
    /* 2457.6 + 1000 + 1000 + 2457.6 */
    assert_cost(f->eval.total, 6915.2);
}

static void test_eval_working_set_equal_capacity_fits(void **state)
{
    ftt_fixture *f = *state;
    /* example 5B needs 40960 in every step: a capacity of exactly 40960 is
     * not exceeded */
    assert_cost(evaluate(f, FT_COMPUTE_NATIVE)->total, 6915.2);
    assert_int_equal(f->eval.sg[0].peak_working_set, 40960);
}

/* Evaluate f's schedule (native model) expecting an oom at subgraph sg,
 * tile and step; *st keeps the status for checks of the message. */
static void expect_oom(ftt_fixture *f, ft_status *st, int sg, int64_t tile,
                       int64_t step)
{
    memset(&f->eval, 0, sizeof f->eval);
    ft_status_clear(st);
    assert_int_equal(ft_evaluate(f->p, f->s, FT_COMPUTE_NATIVE, &f->eval, st),
                     FT_EINVALID);
    assert_int_equal(st->code, FT_EINVALID);
    assert_int_equal(st->reason, FT_R_OOM);
    assert_int_equal(st->sg, sg);
    assert_int_equal(st->tile, tile);
    assert_int_equal(st->step, step);
}

static void test_eval_working_set_one_over_capacity(void **state)
{
    ftt_fixture *f = *state;
    ft_status st;

    /* 40960 > 40959 already in step 0 */
    expect_oom(f, &st, 0, 0, 0);
    assert_msg_has(st.msg, "40960");
    assert_msg_has(st.msg, "40959");
}

static void test_eval_oom_names_step(void **state)
{
    ftt_fixture *f = *state;
    ft_status st;

    /* X-ex5A-oom: 16384 x 3 slices + written T4 16384 = 65536 > 45000 at
     * subgraph 0, tile 0, step 0 */
    expect_oom(f, &st, 0, 0, 0);
    assert_msg_has(st.msg, "65536");
    assert_msg_has(st.msg, "45000");
    assert_null(f->eval.sg);
    /* ft_evaluate_subgraph reports it too */
    {
        ft_sg_result r;
        memset(&r, 0, sizeof r);
        ft_status_clear(&st);
        assert_int_equal(ft_evaluate_subgraph(f->p, f->s, 0, FT_COMPUTE_OP, &r,
                                              &st),
                         FT_EINVALID);
        assert_int_equal(st.reason, FT_R_OOM);
    }
}

static void test_eval_oom_later_subgraph(void **state)
{
    ftt_fixture *f = *state;
    ft_status st;

    /* example 3A at capacity 40000: subgraphs 0 and 1 need 16384 + 16384
     * (slice + written tile); subgraph 2 loads T1 and T2 and writes T3:
     * 49152 > 40000 */
    expect_oom(f, &st, 2, 0, 0);
    assert_msg_has(st.msg, "49152");
    assert_msg_has(st.msg, "40000");
}

static void test_eval_oom_later_tile_step(void **state)
{
    ftt_fixture *f = *state;
    ft_status st;

    /* tiles of 64 x 128 visited 1 then 0, two k-steps each.  Step 0
     * (tile 1, k 0): T0[0:128, 0:64] 8192 + T1[0:64, 64:128] 4096 +
     * written T4 at 64 x 128 = 8192: 20480.  Step 1 (tile 1, k 1) adds the
     * epilogue's T3[0:128, 64:128] 8192: 8192 + 4096 + 8192 + 8192 = 28672
     * > 25000 */
    expect_oom(f, &st, 0, 1, 1);
    assert_msg_has(st.msg, "28672");
    assert_msg_has(st.msg, "25000");
}

static void test_eval_working_set_resident_retained_full(void **state)
{
    ftt_fixture *f = *state;
    const ftt_steps *ss = walk(f, 0, FT_COMPUTE_NATIVE);
    int i;

    /* subgraph 0 at 64 x 64: T0 slice 4096 + retained T1 at its full
     * 128 x 128 = 16384 -> 20480 in each of the 4 steps */
    assert_int_equal(ss->n, 4);
    for (i = 0; i < 4; i++) {
        assert_int_equal(STEP(ss, i)->working_set, 20480);
        /* compute 1500 x ceil(64/128)^2 = 1500 (padding) > 409.6 */
        assert_cost(STEP(ss, i)->latency, 1500);
    }
    /* subgraph 1: resident T1 16384 + written T3 16384 */
    ss = walk(f, 1, FT_COMPUTE_NATIVE);
    assert_int_equal(STEP(ss, 0)->working_set, 32768);
    /* 4 x 1500 + 3000 */
    assert_cost(evaluate(f, FT_COMPUTE_NATIVE)->total, 9000);
}

static void test_eval_working_set_written_clamped(void **state)
{
    ftt_fixture *f = *state;
    const ftt_steps *ss = walk(f, 0, FT_COMPUTE_NATIVE);

    /* T0 is 100w x 50h, tile 128 x 128: slice T0[0:50, 0:100] = 5000 +
     * written T1 at min(128, 100) x min(128, 50) = 5000 */
    assert_int_equal(ss->n, 1);
    assert_slice(STEP(ss, 0), 0, 0, 50, 0, 100, 1);
    assert_int_equal(STEP(ss, 0)->working_set, 10000);
    assert_write(STEP(ss, 0), 1, 0, 50, 0, 100);
    /* compute 300 x ceil(50/128) x ceil(100/128) = 300;
     * memory (5000 + 5000) / 10 = 1000 */
    assert_cost(STEP(ss, 0)->compute, 300);
    assert_cost(STEP(ss, 0)->latency, 1000);
}

/* ------------------------------------------------------------ (f) results */

static void test_eval_sg_results_ex4a(void **state)
{
    ftt_fixture *f = *state;
    const ft_sg_result *r = &evaluate(f, FT_COMPUTE_NATIVE)->sg[0];

    assert_cost(r->latency, 7096);
    assert_int_equal(r->steps, 4);
    assert_int_equal(r->ntx, 2);
    assert_int_equal(r->nty, 2);
    assert_int_equal(r->nk, 1);
    /* 2048 >= 1500 twice (memory-bound), 1500 > 1228.8 twice */
    assert_int_equal(r->compute_bound_steps, 2);
    assert_int_equal(r->memory_bound_steps, 2);
    /* 16384 + 8192 + 16384 + 8192 */
    assert_int_equal(r->loaded, 49152);
    assert_int_equal(r->written, 4 * 4096);
    /* 8192 + 8192 + 4096 */
    assert_int_equal(r->peak_working_set, 20480);
    assert_cost(r->compute_time, 6000);
    /* 2048 + 1228.8 + 2048 + 1228.8 */
    assert_cost(r->memory_time, 6553.6);
    assert_cost(f->eval.total, 7096);
}

static void test_eval_sg_results_emlp(void **state)
{
    ftt_fixture *f = *state;
    const ft_sg_result *r = &evaluate(f, FT_COMPUTE_NATIVE)->sg[0];

    /* native: 16 steps of 1100, all compute-bound */
    assert_cost(r->latency, 17600);
    assert_int_equal(r->steps, 16);
    assert_int_equal(r->compute_bound_steps, 16);
    assert_int_equal(r->memory_bound_steps, 0);
    /* per tile: T4 512 x 128 + T0 128 x 128 (once) + T1 128 x 512 =
     * 147456; two tiles */
    assert_int_equal(r->loaded, 294912);
    assert_int_equal(r->written, 2 * 16384);
    assert_int_equal(r->peak_working_set, 49152);
    assert_cost(r->compute_time, 17600);
    /* per tile 819.2 + 6 x 409.6 + 819.2 = 4096 */
    assert_cost(r->memory_time, 8192);

    /* op: compute 725 per step; steps 0, 7, 8, 15 are memory-bound at
     * 819.2: 2 x (2 x 819.2 + 6 x 725) = 11976.8 */
    r = &evaluate(f, FT_COMPUTE_OP)->sg[0];
    assert_cost(r->latency, 11976.8);
    assert_int_equal(r->compute_bound_steps, 12);
    assert_int_equal(r->memory_bound_steps, 4);
    assert_cost(r->compute_time, 16 * 725);
    assert_cost(r->memory_time, 8192);
}

static void test_eval_sg_results_e2(void **state)
{
    ftt_fixture *f = *state;
    const ft_eval *e = evaluate(f, FT_COMPUTE_NATIVE);

    /* subgraph 0 = [op0 k-loop, op1 epilogue] over T3 (512w x 256h):
     * 4 x 2 tiles, nk = 1; compute 1000 + 200 = 1200; first tile of each
     * row loads T0 rows + T1 cols and writes T3 (subgraph 1 needs it):
     * (32768 + 16384) / 40 = 1228.8; other tiles reuse T0 rows:
     * 32768 / 40 = 819.2 -> 1200.  2 x 1228.8 + 6 x 1200 = 9657.6 */
    assert_int_equal(e->sg[0].ntx, 4);
    assert_int_equal(e->sg[0].nty, 2);
    assert_int_equal(e->sg[0].nk, 1);
    assert_cost(e->sg[0].latency, 9657.6);
    assert_int_equal(e->sg[0].compute_bound_steps, 6);
    assert_int_equal(e->sg[0].memory_bound_steps, 2);
    assert_int_equal(e->sg[0].loaded, 2 * (32768 + 3 * 16384));
    assert_int_equal(e->sg[0].written, 8 * 16384);
    assert_int_equal(e->sg[0].peak_working_set, 32768 + 16384);
    /* subgraph 1 = [op2]: 1 x 2 tiles, nk = 4, compute 1000 per step,
     * memory 32768 / 40 = 819.2, last k-step + 16384 written: 1228.8;
     * 2 x (3 x 1000 + 1228.8) = 8457.6 */
    assert_int_equal(e->sg[1].steps, 8);
    assert_cost(e->sg[1].latency, 8457.6);
    assert_int_equal(e->sg[1].loaded, 8 * 32768);
    assert_int_equal(e->sg[1].written, 2 * 16384);
    assert_int_equal(e->sg[1].compute_bound_steps, 6);
    assert_int_equal(e->sg[1].memory_bound_steps, 2);
    assert_cost(e->total, 18115.2);
    /* op model: subgraph 1 compute 1000 x 128/512 = 250, all memory-bound:
     * 2 x (3 x 819.2 + 1228.8) = 7372.8 */
    e = evaluate(f, FT_COMPUTE_OP);
    assert_cost(e->sg[0].latency, 9657.6);
    assert_cost(e->sg[1].latency, 7372.8);
    assert_int_equal(e->sg[1].memory_bound_steps, 8);
    assert_cost(e->total, 17030.4);
}

static void test_eval_subgraph_matches_evaluate(void **state)
{
    ftt_fixture *f = *state;
    int m, i;

    for (m = 0; m < 2; m++) {
        const ft_eval *e = evaluate(f, m ? FT_COMPUTE_OP : FT_COMPUTE_NATIVE);
        for (i = 0; i < e->nsubgraphs; i++) {
            ft_sg_result r;
            ft_status st;
            memset(&r, 0, sizeof r);
            ft_status_clear(&st);
            assert_int_equal(ft_evaluate_subgraph(f->p, f->s, i, e->model, &r,
                                                  &st),
                             FT_OK);
            assert_cost(r.latency, e->sg[i].latency);
            assert_int_equal(r.steps, e->sg[i].steps);
            assert_int_equal(r.loaded, e->sg[i].loaded);
            assert_int_equal(r.written, e->sg[i].written);
            assert_int_equal(r.peak_working_set, e->sg[i].peak_working_set);
            assert_int_equal(r.compute_bound_steps,
                             e->sg[i].compute_bound_steps);
            assert_cost(r.compute_time, e->sg[i].compute_time);
            assert_cost(r.memory_time, e->sg[i].memory_time);
        }
    }
}

static void test_eval_sg_results_tie_is_memory_bound(void **state)
{
    ftt_fixture *f = *state;
    const ft_sg_result *r = &evaluate(f, FT_COMPUTE_NATIVE)->sg[0];

    /* compute 1000 = memory 1000: "memory time >= compute" is memory-bound */
    assert_cost(r->latency, 1000);
    assert_cost(r->compute_time, 1000);
    assert_cost(r->memory_time, 1000);
    assert_int_equal(r->memory_bound_steps, 1);
    assert_int_equal(r->compute_bound_steps, 0);
}

/* ------------------------------------------------------------ (g) models */

static void test_eval_compute_models_deep_k(void **state)
{
    ftt_fixture *f = *state;
    const ftt_steps *ss;
    const ft_eval *e;
    int i;

    /* K = 512 in 4 k-steps of 128.  native: 4000 x 128/128 = 4000 a step;
     * op: 4000 x 128/512 = 1000.  memory: 32768 / 20 = 1638.4, last step
     * + 16384 written: 2457.6 */
    ss = walk(f, 0, FT_COMPUTE_NATIVE);
    for (i = 0; i < 4; i++)
        assert_cost(STEP(ss, i)->compute, 4000);
    ss = walk(f, 0, FT_COMPUTE_OP);
    for (i = 0; i < 4; i++) {
        assert_cost(STEP(ss, i)->compute, 1000);
        assert_cost(STEP(ss, i)->latency, i == 3 ? 2457.6 : 1638.4);
    }
    e = evaluate(f, FT_COMPUTE_NATIVE);
    assert_cost(e->total, 16000);
    assert_cost(e->sg[0].compute_time, 16000);
    assert_int_equal(e->sg[0].compute_bound_steps, 4);
    e = evaluate(f, FT_COMPUTE_OP);
    /* 3 x 1638.4 + 2457.6 */
    assert_cost(e->total, 7372.8);
    assert_cost(e->sg[0].compute_time, 4000);
    assert_int_equal(e->sg[0].memory_bound_steps, 4);
}

#define T(fn, setup) cmocka_unit_test_setup_teardown(fn, setup, ftt_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eval_compute_model_names),
        cmocka_unit_test(test_eval_vectors_expected_tsv),
        T(test_eval_walk_emlp_roles_grid, setup_e_fused),
        T(test_eval_walk_flow_only, setup_e_fused),
        T(test_eval_walk_skip, setup_e_fused),
        T(test_eval_walk_emlp_first_steps, setup_e_fused),
        T(test_eval_walk_emlp_tile_change, setup_e_fused),
        T(test_eval_walk_emlp_op_model, setup_e_fused),
        T(test_eval_walk_prologue_splitk, setup_b),
        T(test_eval_walk_partial_k_edge, setup_a),
        T(test_eval_walk_upstream_kinds_a, setup_kinds_a),
        T(test_eval_walk_upstream_kinds_b, setup_kinds_b),
        T(test_eval_walk_kloop_active_while_k_left, setup_twok),
        T(test_eval_walk_epilogue_last_kstep, setup_epi),
        T(test_eval_reuse_raster, setup_ex4a),
        T(test_eval_reuse_snake, setup_ex4b),
        T(test_eval_reuse_exact_match_only, setup_overlap),
        T(test_eval_slices_identical_regions_once, setup_square),
        T(test_eval_resident_never_loaded, setup_c),
        T(test_eval_written_retain_and_write, setup_c),
        T(test_eval_written_ex3a, setup_ex3a),
        T(test_eval_written_ex3b, setup_ex3b),
        T(test_eval_written_ex3c, setup_ex3c),
        T(test_eval_written_recompute_between, setup_recompute),
        T(test_eval_written_graph_output_retained, setup_gout),
        T(test_eval_working_set_ex5b, setup_ex5b),
        T(test_eval_working_set_equal_capacity_fits, setup_ex5b_cap40960),
        T(test_eval_working_set_one_over_capacity, setup_ex5b_cap40959),
        T(test_eval_oom_names_step, setup_ex5a),
        T(test_eval_oom_later_subgraph, setup_ex3a_cap40000),
        T(test_eval_oom_later_tile_step, setup_epi_oom),
        T(test_eval_working_set_resident_retained_full, setup_ex3c_small),
        T(test_eval_working_set_written_clamped, setup_small),
        T(test_eval_sg_results_ex4a, setup_ex4a),
        T(test_eval_sg_results_emlp, setup_e_fused),
        T(test_eval_sg_results_e2, setup_e_split),
        T(test_eval_sg_results_tie_is_memory_bound, setup_tie),
        T(test_eval_subgraph_matches_evaluate, setup_e_split),
        T(test_eval_compute_models_deep_k, setup_d),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
