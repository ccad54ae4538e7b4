/* test_partition.c - cmocka tests of the partition moves' neighbour merge (sched/search/partition.c, ft__neighbour_merge): merges that pay are made, merges that do not pay, do not fit or would make a cycle are not, and the deadline stops it. */
#include "ft_testutil.h"

#include "ft_searchstate.h"

#include <stdlib.h>
#include <string.h>

/* A chain of four Pointwise ops on 256 x 256 tensors: t0 -> t1 -> t2 ->
 * t3 -> t4 (capacity `cap`). */
#define CHAIN4(cap)                                                                                   \
    PJ("[256, 256, 256, 256, 256]", "[256, 256, 256, 256, 256]", "[[0], [1], [2], [3]]",           \
       "[[1], [2], [3], [4]]", "[100, 100, 100, 100]", "[" PW ", " PW ", " PW ", " PW "]", cap, "10", \
       "[64, 64]")

/* A diamond: op 0 makes t1, read by ops 1 and 2 (t2, t3), both read by
 * op 3 (t4). */
#define DIAMOND                                                                                                \
    PJ("[256, 256, 256, 256, 256]", "[256, 256, 256, 256, 256]", "[[0], [1], [1], [2, 3]]",                   \
       "[[1], [2], [3], [4]]", "[100, 100, 100, 100]", "[" PW ", " PW ", " PW ", " PW "]", "100000", "10", \
       "[64, 64]")

/* A whole device whose tiles pay a large overhead (a GPU's): one subgraph
 * instead of two saves a wave of it. */
static void gpu_like(ft_problem *p)
{
    ft_status st;
    p->timing.units = 4;
    p->timing.tile_overhead = 5000;
    p->timing.step_overhead = 100;
    assert_int_equal(ft_problem_finish(p, &st), FT_OK);
}

/* The partition's total (each group in the partition context). */
static double partition_total(search *S, sctx *X, int *gid)
{
    int n = S->p->nops, ng = ft__compact_gids(gid, n);
    int *ops = malloc(sizeof(int) * (size_t)n);
    assert_non_null(ops);
    double total = 0;
    for (int g = 0; g < ng; g++) {
        int m = 0;
        for (int i = 0; i < n; i++)
            if (gid[S->p->topo[i]] == g)
                ops[m++] = S->p->topo[i];
        cfg c;
        total += ft__partition_group_cost(S, X, gid, g, ops, m, &c);
    }
    free(ops);
    return total;
}

/* A test's state: problem json on a GPU-like device and a search over it. */
typedef struct fix {
    ft_problem *p;
    ft_search_opts o;
    search S;
    sctx X;
} fix;

static void fix_init(fix *f, const char *json)
{
    ft_status st;
    f->p = NULL;
    if (ft_problem_parse(json, "partition.json", &f->p, &st) != FT_OK)
        fail_msg("parse: %s", st.msg);
    gpu_like(f->p);
    ftt_search_init(&f->S, &f->X, f->p, &f->o, FT_COMPUTE_NATIVE);
}

static void fix_free(fix *f)
{
    ftt_search_free(&f->S, &f->X);
    ft_problem_free(f->p);
}

/* Tile overheads make every merge pay: the chain ends as one group, its
 * total below the four ops apart. */
static void test_partition_merge_pays(void **state)
{
    (void)state;
    fix f;
    fix_init(&f, CHAIN4("100000"));
    int gid[4] = {0, 1, 2, 3};
    double before = partition_total(&f.S, &f.X, gid);
    assert_int_equal(ft__neighbour_merge(&f.S, &f.X, gid), 3);
    for (int i = 1; i < 4; i++)
        assert_int_equal(gid[i], gid[0]);
    double after = partition_total(&f.S, &f.X, gid);
    if (!(after < before))
        fail_msg("merged %.17g, apart %.17g", after, before);
    fix_free(&f);
}

/* Two MatMuls in a chain with a capacity that holds either alone at a
 * small tile but not the two together (the upstream one would compute a
 * whole K of 256 per tile): the merge does not fit, the partition stays
 * as it was. */
static void test_partition_merge_does_not_fit(void **state)
{
    (void)state;
    fix f;
    fix_init(&f, PJ("[256, 256, 256, 256, 256]", "[256, 256, 256, 256, 256]", "[[0, 1], [2, 3]]",
                             "[[2], [4]]", "[100, 100]", "[" MM ", " MM "]", "100", "10", "[64, 64]"));
    int gid[2] = {0, 1};
    cfg c;
    int ops[2] = {0, 1};
    for (int k = 0; k < 2; k++)
        assert_true(ft__partition_group_cost(&f.S, &f.X, gid, k, &ops[k], 1, &c) < INF); /* each alone fits */
    assert_true(ft__partition_group_cost(&f.S, &f.X, (int[]){0, 0}, 0, ops, 2, &c) >= INF);
    assert_int_equal(ft__neighbour_merge(&f.S, &f.X, gid), 0);
    assert_int_equal(gid[0], 0);
    assert_int_equal(gid[1], 1);
    fix_free(&f);
}

/* A diamond: whatever is merged, the quotient graph stays acyclic (the
 * plan of the partition exists) and no merge raises the total. */
static void test_partition_merge_keeps_acyclic(void **state)
{
    (void)state;
    fix f;
    fix_init(&f, DIAMOND);
    /* ops 0 and 3 together would cycle through 1 and 2 */
    int starts[][4] = {{0, 1, 2, 3}, {0, 1, 2, 0}, {0, 0, 1, 2}};
    for (size_t k = 0; k < sizeof starts / sizeof starts[0]; k++) {
        int gid[4];
        memcpy(gid, starts[k], sizeof gid);
        int ng = ft__compact_gids(gid, 4);
        plan P;
        if (ft__plan_from_partition(&f.S, gid, ng, &P) != 0)
            continue; /* a cyclic start: not a partition the search holds */
        ft__plan_free(&P);
        double before = partition_total(&f.S, &f.X, gid);
        int merges = ft__neighbour_merge(&f.S, &f.X, gid);
        ng = ft__compact_gids(gid, 4);
        assert_int_equal(ft__plan_from_partition(&f.S, gid, ng, &P), 0);
        ft__plan_free(&P);
        double after = partition_total(&f.S, &f.X, gid);
        if (after > before || (merges > 0 && !(after < before)))
            fail_msg("start %zu: %d merges, total %.17g from %.17g", k, merges, after, before);
    }
    fix_free(&f);
}

/* Past the deadline nothing is tried. */
static void test_partition_merge_deadline(void **state)
{
    (void)state;
    fix f;
    fix_init(&f, CHAIN4("100000"));
    f.S.deadline = 0; /* long past */
    int gid[4] = {0, 1, 2, 3};
    assert_int_equal(ft__neighbour_merge(&f.S, &f.X, gid), 0);
    for (int i = 0; i < 4; i++)
        assert_int_equal(gid[i], i);
    fix_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_partition_merge_pays),
        cmocka_unit_test(test_partition_merge_does_not_fit),
        cmocka_unit_test(test_partition_merge_keeps_acyclic),
        cmocka_unit_test(test_partition_merge_deadline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
