/* test_supertile.c - cmocka tests of the super tiling strategy: a producer shared by a tiled and an untiled consumer, the nesting footprint, fuse groups, valid schedules on ResNet-18 and the public benchmarks, a 1 000-op problem. */
#include "ft_testutil.h"

#include <time.h>

/* The strategy's internal interface (supertile.h) and the search's
 * (search.h: plans, ft__supertile_schedule); the functions come from
 * libfusetile.a. */
#include "../../sched/search/search.h"

/* Super tiling of p, failing the test on an error. */
static void run(const ft_problem *p, ft_partition *part, ft_supertile_tile **tiles)
{
    ft_status st;
    if (ft__supertile_run(p, part, tiles, &st) != FT_OK)
        fail_msg("ft__supertile_run(%s): %s", p->name, st.msg);
}

/* Evaluate schedule s of p: FT_OK expected, total into *total. */
static void evaluate_ok(const ft_problem *p, const ft_schedule *s, double *total)
{
    ft_eval e;
    ft_status st;
    int rc = ft_evaluate(p, s, FT_COMPUTE_NATIVE, &e, &st);
    if (rc != FT_OK)
        fail_msg("%s: the supertile schedule is invalid: %s", p->name, st.msg);
    if (total)
        *total = e.total;
    ft_eval_free(&e);
}

/* The schedule of the partition with its tiles, evaluated: valid. */
static double schedule_ok(const ft_problem *p, const ft_partition *part, const ft_supertile_tile *tiles)
{
    ft_schedule *s;
    ft_status st;
    double total = 0;
    if (ft__supertile_schedule(p, part, tiles, &s, &st) != FT_OK)
        fail_msg("ft__supertile_schedule(%s): %s", p->name, st.msg);
    evaluate_ok(p, s, &total);
    ft_schedule_free(s);
    return total;
}

/* schedule_ok, then release the partition, its tiles and the problem. */
static void schedule_ok_free(ft_problem *p, ft_partition *part, ft_supertile_tile *tiles)
{
    schedule_ok(p, part, tiles);
    ft_partition_free(part);
    free(tiles);
    ft_problem_free(p);
}

/* Evaluate a hand-made one-line schedule: the reason it is invalid
 * (FT_R_NONE when it is valid). */
static int hand_schedule_reason(const ft_problem *p, const char *json)
{
    ft_schedule *s;
    ft_eval e;
    ft_status st;
    if (ft_schedule_parse(json, "hand.json", &s, &st) != FT_OK)
        fail_msg("schedule: %s", st.msg);
    int rc = ft_evaluate(p, s, FT_COMPUTE_NATIVE, &e, &st);
    if (rc == FT_OK)
        ft_eval_free(&e);
    ft_schedule_free(s);
    return rc == FT_OK ? FT_R_NONE : st.reason;
}

static int64_t footprint(const ft_problem *p, const int *ops, int n, int64_t w, int64_t h, int64_t k)
{
    int64_t fp;
    ft_status st;
    assert_int_equal(ft__supertile_footprint(p, ops, n, w, h, k, &fp, &st), FT_OK);
    return fp;
}

/* ------------------------------------------------------------ flaw (a) */

/* a -> b (a MatMul: a's output is b's fused operand) and a -> c.  a and b
 * do not fit whole (tiled), c does (untiled).  Fusing a into b's loop
 * would leave c without a: SPEC forbids writing a fused MatMul's operand,
 * so a keeps its own tiled loop, which writes its output for b and c. */
static const char *const SHARED_MM = PJ("[2048, 128, 128, 2048, 2048, 128]", "[128, 2048, 128, 128, 128, 128]",
                                        "[[0, 1], [2, 3], [2]]", "[[2], [4], [5]]", "[1000, 1000, 500]", "[" MM ", " MM ", " PW "]",
                                        "60000", "10", N128);

/* The same with b a Pointwise op of four operands: a in b's loop is a
 * k-loop MatMul, so the loop writes a's output tile by tile for c. */
static const char *const SHARED_PW = PJ("[2048, 128, 128, 128, 128, 128, 128, 128]", "[128, 2048, 128, 128, 128, 128, 128, 128]",
                                        "[[0, 1], [2, 3, 4, 5], [2]]", "[[2], [6], [7]]", "[1000, 500, 500]",
                                        "[" MM ", " PW ", " PW "]", "60000", "10", N128);

static void test_supertile_shared_producer(void **state)
{
    (void)state;
    enum { A = 0, B = 1, C = 2 };
    ft_problem *p = ftt_parse(SHARED_MM, "supertile.problem.json");
    int a = A, b = B, c = C;
    /* a and b need tiling, c does not: whole footprints */
    assert_true((double)footprint(p, &a, 1, 128, 2048, 2048) > p->capacity);
    assert_true((double)footprint(p, &b, 1, 2048, 128, 128) > p->capacity);
    assert_true((double)footprint(p, &c, 1, 128, 128, 128) <= p->capacity);
    /* the flawed design's group: a fused into b only */
    int ab[2] = {A, B};
    assert_int_equal(footprint(p, ab, 2, 128, 128, 128), FT_SUPERTILE_ESCAPES);
    assert_int_equal(hand_schedule_reason(p, SJ("[[0, 1], [2]]", "[[128, 128, 128], [128, 128, 128]]", "[[], []]")),
                     FT_R_FUSED_OPERAND_ESCAPES);

    ft_partition part;
    ft_supertile_tile *tiles;
    run(p, &part, &tiles);
    assert_int_not_equal(part.gid[A], part.gid[B]);
    /* a computed for c: in c's group or its own, and tiled */
    int alone = 1;
    for (int o = 0; o < p->nops; o++)
        if (o != A && o != C && part.gid[o] == part.gid[A])
            alone = 0;
    assert_true(alone);
    assert_true(tiles[part.gid[A]].tiled);
    assert_true(tiles[part.gid[B]].tiled);
    if (part.gid[C] != part.gid[A])
        assert_false(tiles[part.gid[C]].tiled);
    print_message("[a] -> [b], [c]: %d groups: %s | %s | %s\n", part.ngroups, part.label[part.gid[A]], part.label[part.gid[B]],
                  part.label[part.gid[C]]);
    schedule_ok_free(p, &part, tiles);

    /* b Pointwise: a may be tiled for c inside b's loop, which writes it */
    p = ftt_parse(SHARED_PW, "supertile.problem.json");
    run(p, &part, &tiles);
    ft_schedule *s;
    ft_status st;
    assert_int_equal(ft__supertile_schedule(p, &part, tiles, &s, &st), FT_OK);
    evaluate_ok(p, s, NULL);
    int sa = -1;
    for (int i = 0; i < s->nsubgraphs; i++)
        for (int j = 0; j < s->sg[i].nops; j++)
            if (s->sg[i].ops[j] == A)
                sa = i;
    assert_true(sa >= 0);
    assert_true(ft_tensor_written(p, s, sa, p->ops[A].output));
    print_message("b Pointwise: a in \"%s\" (%lldx%lldx%lld), its output written for c\n", part.label[part.gid[A]],
                  (long long)tiles[part.gid[A]].w, (long long)tiles[part.gid[A]].h, (long long)tiles[part.gid[A]].k);
    ft_schedule_free(s);
    ft_partition_free(&part);
    free(tiles);
    ft_problem_free(p);
}

/* ------------------------------------------------------------ flaw (b) */

/* p1 = X + W1, z = p1 + Y, all 256 x 256, capacity 50 000: at a 128 x 128
 * tile each op alone holds three tiles (49 152, fits), the fused nest four
 * (X, W1, Y, Z: 65 536, does not). */
static const char *const NEST_OVER = PJ("[256, 256, 256, 256, 256]", "[256, 256, 256, 256, 256]", "[[0, 1], [2, 3]]", "[[2], [4]]",
                                        "[500, 500]", "[" PW ", " PW "]", "50000", "10", N128);

/* q = f(X), O = q R, X and q 128 x 1024, R 1024 x 128, capacity 25 000: the
 * MatMul's loop at 128 x 128 x 32 holds 24 576; f alone at that tile holds
 * two 128 x 128 tiles (32 768, does not fit), but under the k-loop it
 * computes a 128 x 32 slice: the fused nest holds 24 576 (fits). */
static const char *const NEST_UNDER = PJ("[1024, 1024, 128, 128]", "[128, 128, 1024, 128]", "[[0], [1, 2]]", "[[1], [3]]", "[500, 1000]",
                                         "[" PW ", " MM "]", "25000", "10", N128);

static void test_supertile_footprint_nesting(void **state)
{
    (void)state;
    ft_problem *p = ftt_parse(NEST_OVER, "supertile.problem.json");
    int one[1] = {0}, two[1] = {1}, both[2] = {0, 1};
    int64_t f1 = footprint(p, one, 1, 128, 128, 128), f2 = footprint(p, two, 1, 128, 128, 128);
    int64_t nest = footprint(p, both, 2, 128, 128, 128);
    int64_t maxop = f1 > f2 ? f1 : f2;
    print_message("over: max over ops %lld, nest %lld, capacity %.0f\n", (long long)maxop, (long long)nest, p->capacity);
    assert_int_equal(maxop, 49152);
    assert_int_equal(nest, 65536);
    assert_true((double)maxop <= p->capacity && (double)nest > p->capacity);
    /* the one-by-one measure's fusion overflows */
    assert_int_equal(hand_schedule_reason(p, SJ("[[0, 1]]", "[[128, 128, 128]]", "[[]]")), FT_R_OOM);
    ft_partition part;
    ft_supertile_tile *tiles;
    run(p, &part, &tiles);
    if (part.gid[0] == part.gid[1]) /* fused only at a smaller tile */
        assert_true(tiles[part.gid[0]].w * tiles[part.gid[0]].h < 128 * 128);
    schedule_ok_free(p, &part, tiles);

    p = ftt_parse(NEST_UNDER, "supertile.problem.json");
    run(p, &part, &tiles);
    assert_int_equal(part.ngroups, 1);
    const ft_supertile_tile *t = &tiles[0];
    f1 = footprint(p, one, 1, t->w, t->h, t->k);
    f2 = footprint(p, two, 1, t->w, t->h, t->k);
    nest = footprint(p, both, 2, t->w, t->h, t->k);
    maxop = f1 > f2 ? f1 : f2;
    print_message("under: tile %lldx%lldx%lld: max over ops %lld, nest %lld, capacity %.0f\n", (long long)t->w, (long long)t->h,
                  (long long)t->k, (long long)maxop, (long long)nest, p->capacity);
    assert_true((double)maxop > p->capacity && (double)nest <= p->capacity);
    schedule_ok_free(p, &part, tiles);
}

/* ------------------------------------------------------------ models */

/* Every group non-empty and connected (SPEC 2), the quotient graph
 * acyclic, labels and tiles in range, the schedule valid; returns the
 * groups' count and prints the figures. */
static void check_partition(const ft_problem *p, const ft_partition *part, const ft_supertile_tile *tiles, double seconds)
{
    assert_int_equal(part->nops, p->nops);
    assert_true(part->ngroups >= 1 && part->ngroups <= p->nops);
    int *ops = malloc(sizeof(int) * (size_t)p->nops), ntiled = 0;
    for (int g = 0; g < part->ngroups; g++) {
        int n = 0;
        for (int i = 0; i < p->nops; i++)
            if (part->gid[p->topo[i]] == g)
                ops[n++] = p->topo[i];
        if (n == 0 || !ft__connected(p, ops, n))
            fail_msg("%s: group %d (%s) is %s", p->name, g, part->label[g], n ? "not connected" : "empty");
        assert_non_null(part->label[g]);
        assert_true(strncmp(part->label[g], "supertile ", 10) == 0 || strncmp(part->label[g], "untiled ", 8) == 0);
        const ft_supertile_tile *t = &tiles[g];
        assert_true(t->w >= 1 && t->h >= 1 && t->k >= 1);
        assert_true(t->w <= p->native_w && t->h <= p->native_h && t->k <= ft_native_k(p));
        ntiled += t->tiled;
    }
    free(ops);
    /* acyclic: the plan of the partition exists */
    search S;
    plan P;
    memset(&S, 0, sizeof S);
    S.p = p;
    assert_int_equal(ft__plan_from_partition(&S, part->gid, part->ngroups, &P), 0);
    ft__plan_free(&P);
    double total = schedule_ok(p, part, tiles);
    double lb = ft_lower_bound(p, FT_COMPUTE_NATIVE, NULL, NULL);
    print_message("%-40s %4d ops %4d groups (%d tiled)  total %.6g  x%.3f of the bound  %.3f s\n", p->name, p->nops, part->ngroups, ntiled,
                  total, total / lb, seconds);
}

/* The schedule the pass table would make of the partition: the plan in a
 * topological order, its retention by dynamic programming, each group at
 * its best tiling (ft__retention), evaluated. */
static void check_pass_table_route(const ft_problem *p, const ft_partition *part)
{
    ft_search_opts o;
    search S;
    sctx X;
    plan P;
    ft_search_opts_init(&o);
    memset(&S, 0, sizeof S);
    S.p = p;
    S.o = &o;
    S.deadline = 1e300;
    S.best = INF;
    S.rng = 1;
    assert_int_equal(ft__search_scorer_init(&S, FT_COMPUTE_NATIVE), 0);
    S.produced = calloc((size_t)p->ntensors + 1, 1);
    S.uses = calloc((size_t)p->ntensors + 1, 1);
    S.topo_pos = malloc(sizeof(int) * (size_t)p->nops);
    assert_true(S.produced && S.uses && S.topo_pos);
    for (int i = 0; i < p->nops; i++)
        S.topo_pos[p->topo[i]] = i;
    assert_int_equal(ft__sctx_alloc(&X, p->ntensors), 0);
    assert_int_equal(ft__plan_from_partition(&S, part->gid, part->ngroups, &P), 0);
    double t = ft__retention(&S, &P, &X);
    assert_true(t < INF);
    ft_schedule *s = ft__plan_schedule(p, &P);
    assert_non_null(s);
    double total;
    evaluate_ok(p, s, &total);
    assert_rel(total, t, 1e-9);
    print_message("%-40s pass-table route (best tiling, retention): total %.6g\n", p->name, total);
    ft_schedule_free(s);
    ft__plan_free(&P);
    ft__sctx_free(&X);
    ft__memo_free(&S);
    free(S.keybuf);
    ft__scorer_free(&S.sc);
    free(S.produced);
    free(S.uses);
    free(S.topo_pos);
}

static void check_file(const char *rel, int pass_table)
{
    ft_problem *p;
    ft_status st;
    const char *path = ftt_src_path(rel);
    if (ft_problem_load(path, &p, &st) != FT_OK)
        fail_msg("%s", st.msg);
    ft_partition part;
    ft_supertile_tile *tiles;
    double t0 = ftt_seconds();
    run(p, &part, &tiles);
    check_partition(p, &part, tiles, ftt_seconds() - t0);
    if (pass_table)
        check_pass_table_route(p, &part);
    ft_partition_free(&part);
    free(tiles);
    ft_problem_free(p);
}

static void test_supertile_benchmarks(void **state)
{
    (void)state;
    static const char *const files[] = {"benchmarks/example_problem.json", "benchmarks/mlsys-2026-1.json",
                                        "benchmarks/mlsys-2026-5.json",     "benchmarks/mlsys-2026-9.json",
                                        "benchmarks/mlsys-2026-13.json",    "benchmarks/mlsys-2026-17.json"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        check_file(files[i], !ftt_valgrind() || i < 3);
}

/* ResNet-18 as imported: valid groups, and each conv's im2col Layout in
 * its conv's group (a fuse group: one source layer). */
static void test_supertile_resnet18(void **state)
{
    (void)state;
    check_file("examples/resnet18.problem.json", !ftt_valgrind());
    ft_problem *p;
    ft_status st;
    assert_int_equal(ft_problem_load(ftt_src_path("examples/resnet18.problem.json"), &p, &st), FT_OK);
    ft_partition part;
    run(p, &part, NULL);
    int pairs = 0;
    for (int o = 0; o < p->nops; o++) {
        const char *name = p->ops[o].name;
        const char *cut = name ? strstr(name, "/im2col") : NULL;
        if (!cut)
            continue;
        const ft_tensor *T = &p->tensors[p->ops[o].output];
        for (int q = 0; q < T->nconsumers; q++) {
            const char *cn = p->ops[T->consumers[q]].name;
            if (cn && strlen(cn) == (size_t)(cut - name) && strncmp(cn, name, (size_t)(cut - name)) == 0) {
                if (part.gid[o] != part.gid[T->consumers[q]])
                    fail_msg("%s and %s are in groups %s and %s", name, cn, part.label[part.gid[o]], part.label[part.gid[T->consumers[q]]]);
                pairs++;
            }
        }
    }
    print_message("resnet18: %d im2col+conv fuse groups kept whole; first groups: %s | %s | %s\n", pairs, part.label[0],
                  part.ngroups > 1 ? part.label[1] : "", part.ngroups > 2 ? part.label[2] : "");
    assert_true(pairs >= 17);
    ft_partition_free(&part);
    ft_problem_free(p);
}

/* A generated 1 000-op problem (FT_GEN_SCALE) finishes; its time printed. */
static void test_supertile_scale(void **state)
{
    (void)state;
    ft_gen_opts o;
    ft_status st;
    ft_problem *p;
    ft_gen_opts_init(&o);
    o.family = FT_GEN_SCALE;
    o.nops = ftt_valgrind() ? 200 : 1000;
    assert_int_equal(ft_generate(&o, &p, &st), FT_OK);
    ft_partition part;
    ft_supertile_tile *tiles;
    double t0 = ftt_seconds();
    run(p, &part, &tiles);
    double secs = ftt_seconds() - t0;
    check_partition(p, &part, tiles, secs);
    print_message("supertile on %d generated ops: %.3f s\n", p->nops, secs);
    ft_partition_free(&part);
    free(tiles);
    ft_problem_free(p);
}

/* Generated problems of every family: valid partitions and schedules. */
static void test_supertile_generated(void **state)
{
    (void)state;
    int seeds = ftt_valgrind() ? 3 : 25, groups = 0, ops = 0;
    for (int f = 0; f < 3; f++)
        for (int seed = 1; seed <= seeds; seed++) {
            ft_gen_opts o;
            ft_status st;
            ft_problem *p;
            ft_gen_opts_init(&o);
            o.family = (ft_gen_family)f;
            o.seed = (uint64_t)seed;
            o.nops = f == FT_GEN_SCALE ? 100 : 0;
            assert_int_equal(ft_generate(&o, &p, &st), FT_OK);
            ft_partition part;
            ft_supertile_tile *tiles;
            run(p, &part, &tiles);
            for (int g = 0; g < part.ngroups; g++) {
                int n = 0, *members = malloc(sizeof(int) * (size_t)p->nops);
                for (int i = 0; i < p->nops; i++)
                    if (part.gid[p->topo[i]] == g)
                        members[n++] = p->topo[i];
                assert_true(n > 0 && ft__connected(p, members, n));
                free(members);
            }
            groups += part.ngroups;
            ops += p->nops;
            schedule_ok_free(p, &part, tiles);
        }
    print_message("%d generated problems: %d ops in %d groups, every schedule valid\n", 3 * seeds, ops, groups);
}

/* An op that fits no tile: FT_EINVALID naming it. */
static void test_supertile_op_too_big(void **state)
{
    (void)state;
    ft_problem *p = ftt_parse(PJ("[128, 128]", "[128, 128]", "[[0]]", "[[1]]", "[100]", "[" PW "]", "1", "10", N128), "supertile.problem.json");
    ft_partition part;
    ft_status st;
    assert_int_equal(ft__supertile_run(p, &part, NULL, &st), FT_EINVALID);
    assert_int_equal(st.reason, FT_R_OOM);
    assert_msg_has(st.msg, "op 0");
    assert_null(part.gid);
    ft_problem_free(p);
}

/* A Layout's rounding: 4 rows to 5 rows.  At a 1 x 2 tile the first tile
 * needs input rows 0..1 (4 elements with its output tile, the capacity),
 * the second rows 1..3 (5): step 5's exact check refines the tile to
 * 1 x 1.  5 rows to 3, capacity 3: the first 1 x 1 tile fits, the second
 * does not, no tile does: FT_EINVALID. */
#define LAYOUT_ROWS(hin, hout, cap) PJ("[1, 1]", "[" hin ", " hout "]", "[[0]]", "[[1]]", "[100]", "[\"Layout\"]", cap, "10", "[8, 8]")

static void test_supertile_exact_check(void **state)
{
    (void)state;
    ft_problem *p = ftt_parse(LAYOUT_ROWS("4", "5", "4"), "supertile.problem.json");
    int op = 0;
    assert_int_equal(footprint(p, &op, 1, 1, 2, 1), 4);
    assert_int_equal(hand_schedule_reason(p, SJ("[[0]]", "[[1, 2, 1]]", "[[]]")), FT_R_OOM);
    ft_partition part;
    ft_supertile_tile *tiles;
    run(p, &part, &tiles);
    assert_true(tiles[0].tiled);
    assert_int_equal(tiles[0].h, 1);
    schedule_ok_free(p, &part, tiles);

    p = ftt_parse(LAYOUT_ROWS("5", "3", "3"), "supertile.problem.json");
    assert_int_equal(footprint(p, &op, 1, 1, 1, 1), 3);
    ft_status st;
    assert_int_equal(ft__supertile_run(p, &part, &tiles, &st), FT_EINVALID);
    assert_msg_has(st.msg, "op 0");
    ft_problem_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_supertile_shared_producer),
        cmocka_unit_test(test_supertile_footprint_nesting),
        cmocka_unit_test(test_supertile_benchmarks),
        cmocka_unit_test(test_supertile_resnet18),
        cmocka_unit_test(test_supertile_scale),
        cmocka_unit_test(test_supertile_generated),
        cmocka_unit_test(test_supertile_op_too_big),
        cmocka_unit_test(test_supertile_exact_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
