/* test_patterns.c - cmocka tests of the pattern-library tiler (strategy "patterns"): the worked example, escaping values, commutative and positional slots, deduplication, cycles undone, pattern-file errors, ResNet-18 with the bundled CNN library, a 1 000-op problem. */
#include "ft_testutil.h"

#include <time.h>
#include <unistd.h>

#include "../../sched/strategy/patterns.h"

/* ------------------------------------------------------------ helpers */

/* A problem with op_kinds, native 128 x 128, roomy memory. */
#define PK(w, h, in, out, cost, ty, kinds)                                                                             \
    "{\"widths\": " w ", \"heights\": " h ", \"inputs\": " in ", \"outputs\": " out ", \"base_costs\": " cost          \
    ", \"op_types\": " ty ", \"op_kinds\": " kinds                                                                    \
    ", \"fast_memory_capacity\": 100000, \"slow_memory_bandwidth\": 10, \"native_granularity\": [128, 128]}"

static ft_problem *problem(const char *json)
{
    ft_problem *p = NULL;
    ft_status st;
    ft_status_clear(&st);
    if (ft_problem_parse(json, "test.problem.json", &p, &st) != FT_OK)
        fail_msg("problem: %s", st.msg);
    return p;
}

/* The library of `text`, failing the test when it does not read. */
static ft_patlib library(const char *text)
{
    ft_patlib lib = {0};
    ft_status st;
    ft_status_clear(&st);
    if (ft__patlib_parse(&lib, text, "test.patterns", &st) != FT_OK) {
        ft__patlib_free(&lib);
        fail_msg("library: %s", st.msg);
    }
    return lib;
}

/* Partition of p by lib, checked valid (connected groups, acyclic). */
static ft_partition tile(const ft_problem *p, const ft_patlib *lib, ft_pat_stats *stats)
{
    ft_partition part;
    ft_status st;
    ft_status_clear(&st);
    if (ft__patterns_partition(p, lib, &part, stats, &st) != FT_OK)
        fail_msg("patterns: %s", st.msg);
    if (ft__partition_check(p, &part, &st) != FT_OK)
        fail_msg("partition: %s", st.msg);
    return part;
}

/* Matches of the library `text` in p. */
static int count(const ft_problem *p, const char *text)
{
    ft_patlib lib = library(text);
    int n = ft__patterns_count_matches(p, &lib);
    ft__patlib_free(&lib);
    return n;
}

/* ------------------------------------------------------------ matching and cover */

/* mm -> relu -> mm -> relu */
#define CHAIN                                                                                                          \
    PK("[64, 64, 64, 64, 64, 64, 64]", "[64, 64, 64, 64, 64, 64, 64]", "[[0, 1], [2], [3, 4], [5]]", "[[2], [3], [5], [6]]", \
       "[1000, 100, 1000, 100]", "[" MM ", " PW ", " MM ", " PW "]", "[\"matmul\", \"relu\", \"matmul\", \"relu\"]")

static const char *const worked_lib = "pattern mm\n  node a mm\nend\n"
                                      "pattern relu\n  node a relu\nend\n"
                                      "pattern mm_relu\n  node m mm\n  node r relu\n  edge m r\nend\n";

/* The worked example: library [mm], [relu], [mm -> relu] on mm -> relu ->
 * mm -> relu gives two mm -> relu tiles. */
static void test_patterns_worked_example(void **state)
{
    (void)state;
    ft_problem *p = problem(CHAIN);
    ft_patlib lib = library(worked_lib);
    ft_pat_stats stats;
    ft_partition part = tile(p, &lib, &stats);
    print_message("worked example: %d groups: %s, %s (%d matches, %d blocks, %ld states)\n", part.ngroups,
                  part.label[0], part.ngroups > 1 ? part.label[1] : "-", stats.matches, stats.blocks, stats.states);
    assert_int_equal(part.ngroups, 2);
    assert_int_equal(part.gid[0], part.gid[1]);
    assert_int_equal(part.gid[2], part.gid[3]);
    assert_int_not_equal(part.gid[0], part.gid[2]);
    assert_string_equal(part.label[0], "pattern mm_relu");
    assert_string_equal(part.label[1], "pattern mm_relu");
    assert_int_equal(stats.matches, 6); /* 2 mm, 2 relu, 2 mm_relu */
    ft_partition_free(&part);
    ft__patlib_free(&lib);
    ft_problem_free(p);
}

/* op0 = mm(x, w), op1 = relu(op0), op2 = add(op1, op0) */
#define ESCAPE                                                                                                         \
    PK("[64, 64, 64, 64, 64]", "[64, 64, 64, 64, 64]", "[[0, 1], [2], [3, 2]]", "[[2], [3], [4]]", "[1000, 100, 100]",    \
       "[" MM ", " PW ", " PW "]", "[\"matmul\", \"relu\", \"add\"]")

/* The escaping value: mm's output also feeds the add, so [mm -> relu] is
 * rejected with outputs = [relu] and accepted with outputs = [mm, relu]. */
static void test_patterns_escaping_value(void **state)
{
    (void)state;
    ft_problem *p = problem(ESCAPE);
    const char *only_relu = "pattern mm_relu\n node m mm\n node r relu\n edge m r\n outputs r\nend\n";
    const char *both = "pattern mm_relu\n node m mm\n node r relu\n edge m r\n outputs m r\nend\n";
    assert_int_equal(count(p, only_relu), 0);
    assert_int_equal(count(p, both), 1);

    ft_patlib lib = library(only_relu);
    ft_partition part = tile(p, &lib, NULL);
    print_message("outputs = [relu]: %d groups (rejected)\n", part.ngroups);
    assert_int_equal(part.ngroups, 3);
    ft_partition_free(&part);
    ft__patlib_free(&lib);

    lib = library(both);
    part = tile(p, &lib, NULL);
    print_message("outputs = [mm, relu]: %d groups, %s\n", part.ngroups, part.label[0]);
    assert_int_equal(part.ngroups, 2);
    assert_int_equal(part.gid[0], part.gid[1]);
    assert_int_not_equal(part.gid[0], part.gid[2]);
    assert_string_equal(part.label[part.gid[0]], "pattern mm_relu");
    ft_partition_free(&part);
    ft__patlib_free(&lib);

    /* [mm -> add] around the relu: a path leaves the tile and comes back */
    assert_int_equal(count(p, "pattern mm_add\n node m mm\n node a add\n edge m a 1\n outputs m a\nend\n"), 0);
    ft_problem_free(p);
}

/* op0 = mm(x, w), op1 = relu(y), op2 = KIND(op1, op0): the relu in slot 0,
 * the mm in slot 1. */
#define SWAPPED(kind)                                                                                                  \
    PK("[64, 64, 64, 64, 64, 64]", "[64, 64, 64, 64, 64, 64]", "[[0, 1], [3], [4, 2]]", "[[2], [4], [5]]",               \
       "[1000, 100, 100]", "[" MM ", " PW ", " PW "]", "[\"matmul\", \"relu\", \"" kind "\"]")
#define IN_ORDER(kind)                                                                                                 \
    PK("[64, 64, 64, 64, 64, 64]", "[64, 64, 64, 64, 64, 64]", "[[0, 1], [3], [2, 4]]", "[[2], [4], [5]]",               \
       "[1000, 100, 100]", "[" MM ", " PW ", " PW "]", "[\"matmul\", \"relu\", \"" kind "\"]")

/* A pattern with the mm in slot 0 and the relu in slot 1. */
#define MERGE(kind) "pattern merge\n node m mm\n node r relu\n node a " kind "\n edge m a 0\n edge r a 1\nend\n"

/* add is commutative: the pattern matches with its inputs swapped. */
static void test_patterns_commutative(void **state)
{
    (void)state;
    ft_problem *p = problem(SWAPPED("add"));
    assert_int_equal(count(p, MERGE("add")), 1);
    ft_patlib lib = library(MERGE("add"));
    ft_partition part = tile(p, &lib, NULL);
    print_message("add(relu, mm) against add(mm, relu): %d group, %s\n", part.ngroups, part.label[0]);
    assert_int_equal(part.ngroups, 1);
    ft_partition_free(&part);
    ft__patlib_free(&lib);
    ft_problem_free(p);
    /* a Pointwise op without a kind is commutative too */
    p = problem(PK("[64, 64, 64, 64, 64, 64]", "[64, 64, 64, 64, 64, 64]", "[[0, 1], [3], [4, 2]]", "[[2], [4], [5]]",
                   "[1000, 100, 100]", "[" MM ", " PW ", " PW "]", "[\"\", \"\", \"\"]"));
    assert_int_equal(count(p, "pattern m\n node m matmul\n node r pointwise\n node a pointwise\n edge m a 0\n"
                              " edge r a 1\nend\n"),
                     1);
    ft_problem_free(p);
}

/* sub is positional: swapped inputs do not match, inputs in order do. */
static void test_patterns_positional(void **state)
{
    (void)state;
    ft_problem *p = problem(SWAPPED("sub"));
    int swapped = count(p, MERGE("sub"));
    ft_problem_free(p);
    p = problem(IN_ORDER("sub"));
    int in_order = count(p, MERGE("sub"));
    ft_problem_free(p);
    print_message("sub(relu, mm): %d matches; sub(mm, relu): %d\n", swapped, in_order);
    assert_int_equal(swapped, 0);
    assert_int_equal(in_order, 1);
    /* the MatMul's operands are positional: relu(y) as R (slot 1), not L */
    p = problem(PK("[64, 64, 64, 64]", "[64, 64, 64, 64]", "[[0], [2, 1]]", "[[1], [3]]", "[100, 1000]",
                   "[" PW ", " MM "]", "[\"relu\", \"matmul\"]"));
    assert_int_equal(count(p, "pattern r\n node r relu\n node m mm\n edge r m 1\nend\n"), 1);
    assert_int_equal(count(p, "pattern r\n node r relu\n node m mm\n edge r m 0\nend\n"), 0);
    ft_problem_free(p);
}

/* Matches covering the same nodes count once: an automorphic pattern
 * (two mm into an add), and the same pattern twice. */
static void test_patterns_dedup(void **state)
{
    (void)state;
    ft_problem *p = problem(PK("[64, 64, 64, 64, 64, 64, 64]", "[64, 64, 64, 64, 64, 64, 64]",
                               "[[0, 1], [2, 3], [4, 5]]", "[[4], [5], [6]]", "[1000, 1000, 100]",
                               "[" MM ", " MM ", " PW "]", "[\"linear\", \"linear\", \"add\"]"));
    const char *two = "pattern a\n node a mm\n node b mm\n node c add\n edge a c 0\n edge b c 1\nend\n"
                      "pattern b\n node x linear\n node y linear\n node z add\n edge x z\n edge y z 1\nend\n";
    assert_int_equal(count(p, two), 1);
    ft_patlib lib = library(two);
    ft_partition part = tile(p, &lib, NULL);
    assert_int_equal(part.ngroups, 1);
    assert_string_equal(part.label[0], "pattern a"); /* the first pattern read names the tile */
    ft_partition_free(&part);
    ft__patlib_free(&lib);
    ft_problem_free(p);
}

/* x = relu(i0), u = relu(i1), y = add(x, u), v = add(u, x): every cover
 * by two [relu -> add] tiles makes a cycle between them; one is undone. */
static void test_patterns_cycle_undone(void **state)
{
    (void)state;
    ft_problem *p = problem(PK("[64, 64, 64, 64, 64, 64]", "[64, 64, 64, 64, 64, 64]", "[[0], [1], [2, 3], [3, 2]]",
                               "[[2], [3], [4], [5]]", "[100, 100, 100, 100]", "[" PW ", " PW ", " PW ", " PW "]",
                               "[\"relu\", \"relu\", \"add\", \"add\"]"));
    ft_patlib lib = library("pattern relu_add\n node r relu\n node a add\n edge r a\n outputs r a\nend\n");
    ft_pat_stats stats;
    ft_partition part = tile(p, &lib, &stats);
    print_message("crossed tiles: %d chosen, %d undone, %d groups\n", stats.tiles + stats.undone, stats.undone,
                  part.ngroups);
    assert_int_equal(stats.undone, 1);
    assert_int_equal(stats.tiles, 1);
    assert_int_equal(part.ngroups, 3);
    ft_partition_free(&part);
    ft__patlib_free(&lib);
    ft_problem_free(p);
}

/* A layer whose ops would not be convex: conv c's im2col feeds a relu
 * that feeds c's MatMul.  Collapsing c would make a cycle, so every op is
 * its own node. */
static void test_patterns_layer_not_convex(void **state)
{
    (void)state;
    ft_problem *p = problem(PK("[64, 64, 64, 64]", "[64, 64, 64, 64]", "[[0], [1], [1, 2]]", "[[1], [2], [3]]",
                               "[100, 100, 1000]", "[\"Layout\", " PW ", " MM "]",
                               "[\"conv2d\", \"relu\", \"conv2d\"]"));
    for (int o = 0; o < 3; o++) {
        free(p->ops[o].name);
        p->ops[o].name = ft__strdup(o == 0 ? "c/im2col" : o == 1 ? "r" : "c");
    }
    ft_patlib lib = library(worked_lib);
    ft_pat_stats stats;
    ft_partition part = tile(p, &lib, &stats);
    print_message("non-convex layer: %d source nodes for %d ops, %d groups\n", stats.nodes, p->nops, part.ngroups);
    assert_int_equal(stats.nodes, 3);
    ft_partition_free(&part);
    ft__patlib_free(&lib);
    ft_problem_free(p);
}

/* ------------------------------------------------------------ pattern files */

/* Each bad text gives FT_EINPUT with "bad.patterns:LINE: ..." and leaks
 * nothing. */
static void test_patterns_file_errors(void **state)
{
    (void)state;
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"pattern a\n node x relu\n edge x y\nend\n", "bad.patterns:3: edge: unknown node 'y' (pattern 'a' declares x)"},
        {"# c\npattern a\n node x relu\n", "bad.patterns:2: pattern 'a' has no 'end'"},
        {"node x relu\n", "bad.patterns:1: node: outside a pattern"},
        {"pattern a\n node x relu\n frobnicate\nend\n", "bad.patterns:3: unknown directive 'frobnicate'"},
        {"pattern a\n node x relu\n node y add\n edge x y 1x\nend\n", "bad.patterns:4: edge: slot '1x' is not an integer"},
        {"pattern a\n node x relu\n node y add\n edge x y 64\nend\n", "bad.patterns:4: edge: slot '64'"},
        {"pattern a\n node x relu\n node y add\nend\n", "bad.patterns:4: end: pattern 'a' is not connected"},
        {"pattern a\n node x relu\n node y add\n edge x y\n edge y x 1\nend\n", "bad.patterns:6: end: the edges of pattern 'a' form a cycle"},
        {"pattern a\n node x relu|\nend\n", "bad.patterns:2: node: kind 'relu|' of node 'x'"},
        {"pattern a\n node x relu\n node x add\nend\n", "bad.patterns:3: node: 'x' is declared twice"},
        {"pattern a\n node x relu\n outputs z\nend\n", "bad.patterns:3: outputs: unknown node 'z'"},
        {"pattern a\n node x relu\nend\npattern a\n node y add\nend\n", "bad.patterns:4: pattern: 'a' is already defined at bad.patterns:1"},
        {"pattern a\n node x relu\n node y add\n edge x y\n edge x y\nend\n", "bad.patterns:5: edge: input slot 0 of 'y' is already fed by 'x'"},
        {"pattern a\nend\n", "bad.patterns:2: end: pattern 'a' has no node"},
        {"pattern a\n node x relu\npattern b\n", "bad.patterns:3: pattern: 'a' (line 1) has no 'end'"},
        {"pattern a b\n", "bad.patterns:1: pattern: expected 'pattern NAME'"},
        {"pattern a\n node x relu\n share x x\nend\n", "bad.patterns:3: share: node 'x' cannot be linked to itself"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ft_patlib lib = {0};
        ft_status st;
        ft_status_clear(&st);
        int rc = ft__patlib_parse(&lib, cases[i].text, "bad.patterns", &st);
        ft__patlib_free(&lib);
        if (rc != FT_EINPUT)
            fail_msg("case %zu: rc %d, expected FT_EINPUT (%s)", i, rc, st.msg);
        assert_msg_has(st.msg, cases[i].want);
    }
    /* through the strategy: a file on disk, and a missing one */
    char path[] = "/tmp/ft_patterns_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *text = "pattern ok\n node x relu\nend\npattern bad\n node y gelu\n edge y z\nend\n";
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    ft_problem *p = problem(CHAIN);
    const char *files[] = {path};
    ft_strategy_opts o = {.pattern_files = files, .npattern_files = 1};
    ft_partition part;
    ft_status st;
    assert_int_equal(ft__strategy_patterns(p, &o, &part, &st), FT_EINPUT);
    char want[64];
    snprintf(want, sizeof want, "%s:6: edge: unknown node 'z'", path);
    print_message("file error: %s\n", st.msg);
    assert_msg_has(st.msg, want);
    unlink(path);
    assert_int_equal(ft__strategy_patterns(p, &o, &part, &st), FT_EINPUT);
    assert_msg_has(st.msg, path);
    assert_msg_has(st.msg, "cannot open");
    ft_problem_free(p);
}

/* The bundled libraries read without error. */
static void test_patterns_bundled_libraries(void **state)
{
    (void)state;
    ft_problem *p = problem(CHAIN);
    ft_partition part;
    ft_status st;
    ft_status_clear(&st);
    if (ft__strategy_patterns(p, NULL, &part, &st) != FT_OK)
        fail_msg("bundled libraries: %s", st.msg);
    assert_int_equal(ft__partition_check(p, &part, &st), FT_OK);
    ft_partition_free(&part);
    ft_problem_free(p);
}

/* ------------------------------------------------------------ models */

/* Load the bundled library `name` (patterns/NAME). */
static ft_patlib bundled(const char *name)
{
    char rel[256];
    ft_patlib lib = {0};
    ft_status st;
    snprintf(rel, sizeof rel, "patterns/%s", name);
    if (ft__patlib_load(&lib, ftt_src_path(rel), &st) != FT_OK) {
        ft__patlib_free(&lib);
        fail_msg("%s", st.msg);
    }
    return lib;
}

/* tile() of p by the bundled library `name`, its wall time in *ms. */
static ft_partition timed_tile(const ft_problem *p, const char *name, ft_pat_stats *stats, double *ms)
{
    ft_patlib lib = bundled(name);
    double t0 = ftt_seconds();
    ft_partition part = tile(p, &lib, stats);
    *ms = 1e3 * (ftt_seconds() - t0);
    ft__patlib_free(&lib);
    return part;
}

/* ResNet-18 (imported) with the CNN library: the stem, two tiles per
 * basic block, the head; connected groups, acyclic quotient; the eight
 * blocks are solved as few distinct blocks. */
static void test_patterns_resnet18(void **state)
{
    (void)state;
    ft_problem *p = NULL;
    ft_status st;
    if (ft_problem_load(ftt_src_path("examples/resnet18.problem.json"), &p, &st) != FT_OK)
        fail_msg("%s", st.msg);
    ft_pat_stats stats;
    double ms;
    ft_partition part = timed_tile(p, "cnn.patterns", &stats, &ms);
    print_message("resnet18: %d ops, %d source nodes, %d matches, %d blocks (%d solved, %d reused), %ld states, "
                  "%d groups in %.2f ms\n",
                  p->nops, stats.nodes, stats.matches, stats.blocks, stats.solved, stats.blocks - stats.solved,
                  stats.states, part.ngroups, ms);
    int per[16] = {0};
    const char *names[16] = {0};
    int nn = 0;
    for (int g = 0; g < part.ngroups; g++) {
        int k = 0;
        while (k < nn && strcmp(names[k], part.label[g]) != 0)
            k++;
        if (k == nn && nn < 16)
            names[nn++] = part.label[g];
        if (k < 16)
            per[k]++;
    }
    for (int k = 0; k < nn; k++)
        print_message("  %2d x %s\n", per[k], names[k]);
    /* stem (conv_relu_pool), 8 x conv_relu, 5 x conv_add_relu, 3 x
     * conv_ds_add_relu, head (pool_linear) */
    assert_int_equal(stats.nodes, 48);
    assert_int_equal(part.ngroups, 18);
    for (int g = 0; g < part.ngroups; g++)
        assert_true(strncmp(part.label[g], "pattern ", 8) == 0);
    assert_true(stats.solved < stats.blocks);
    ft_partition_free(&part);

    /* all bundled libraries together give the same groups */
    if (ft__strategy_patterns(p, NULL, &part, &st) != FT_OK)
        fail_msg("%s", st.msg);
    assert_int_equal(ft__partition_check(p, &part, &st), FT_OK);
    assert_int_equal(part.ngroups, 18);
    ft_partition_free(&part);
    ft_problem_free(p);
}

/* The transformer library on the imported BERT-style encoder layer and
 * GPT-2-style block (examples/, from tests/python/models.py): the Q, K, V
 * projections as one tile (BERT), the scaled attention core with its
 * softmax (with GPT-2's causal mask), the output projection with its
 * residual add and layer norm, the MLP's linear and GELU; every group
 * valid. */
static void test_patterns_imported_transformers(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        const char *want[4];
    } cases[] = {
        {"examples/bert_layer.problem.json",
         {"pattern qkv_projection", "pattern attention_scale", "pattern linear_add_layernorm", "pattern linear_act"}},
        {"examples/gpt2_block.problem.json",
         {"pattern attention_scale_mask", "pattern linear_add_layernorm", "pattern linear_act", "pattern linear_add"}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        ft_problem *p = ftt_load(cases[c].file);
        ft_pat_stats stats;
        ft_status st;
        double ms;
        ft_partition part = timed_tile(p, "transformer.patterns", &stats, &ms);
        assert_int_equal(ft__partition_check(p, &part, &st), FT_OK);
        int covered = 0;
        for (int g = 0; g < part.ngroups; g++)
            if (strncmp(part.label[g], "pattern ", 8) == 0)
                for (int o = 0; o < p->nops; o++)
                    covered += part.gid[o] == g;
        print_message("%s: %d ops, %d groups, %d ops in pattern tiles, %.2f ms\n", cases[c].file, p->nops, part.ngroups,
                      covered, ms);
        for (int w = 0; w < 4; w++) {
            int found = 0;
            for (int g = 0; g < part.ngroups; g++)
                found |= strcmp(part.label[g], cases[c].want[w]) == 0;
            if (!found)
                fail_msg("%s: no tile '%s'", cases[c].file, cases[c].want[w]);
        }
        ft_partition_free(&part);
        ft_problem_free(p);
    }
}

/* A problem built op by op (JSON text, then ft_problem_parse). */
typedef struct builder {
    char t[64][40], ins[64][24], types[64][16], kinds[64][24], names[64][48];
    int nt, no, outs[64];
} builder;

/* A new graph input of w columns and h rows; returns its tensor. */
static int tensor(builder *b, int w, int h)
{
    snprintf(b->t[b->nt], sizeof b->t[0], "%d %d", w, h);
    return b->nt++;
}

/* A new op (type "MatMul", "Pointwise" or "Layout") reading i0 (and i1
 * when >= 0) into a new w x h tensor; returns that tensor. */
static int op(builder *b, const char *type, const char *kind, const char *name, int w, int h, int i0, int i1)
{
    int o = b->no++;
    snprintf(b->types[o], sizeof b->types[0], "%s", type);
    snprintf(b->kinds[o], sizeof b->kinds[0], "%s", kind);
    snprintf(b->names[o], sizeof b->names[0], "%s", name);
    if (i1 >= 0)
        snprintf(b->ins[o], sizeof b->ins[0], "[%d, %d]", i0, i1);
    else
        snprintf(b->ins[o], sizeof b->ins[0], "[%d]", i0);
    return b->outs[o] = tensor(b, w, h);
}

/* The builder's problem. */
static ft_problem *built(const builder *b)
{
    static char json[32768];
    size_t n = 0;
#define FTT_LIST(field, count, fmt, ...)                                                                               \
    do {                                                                                                               \
        n += (size_t)snprintf(json + n, sizeof json - n, "%s\"" field "\": [", n ? ", " : "{");                     \
        for (int i_ = 0; i_ < (count); i_++)                                                                           \
            n += (size_t)snprintf(json + n, sizeof json - n, "%s" fmt, i_ ? ", " : "", __VA_ARGS__);                  \
        n += (size_t)snprintf(json + n, sizeof json - n, "]");                                                         \
    } while (0)
    FTT_LIST("widths", b->nt, "%d", atoi(b->t[i_]));
    FTT_LIST("heights", b->nt, "%d", atoi(strchr(b->t[i_], ' ') + 1));
    FTT_LIST("inputs", b->no, "%s", b->ins[i_]);
    FTT_LIST("outputs", b->no, "[%d]", b->outs[i_]);
    FTT_LIST("base_costs", b->no, "%d", b->types[i_][0] == 'M' ? 4096 : 128);
    FTT_LIST("op_types", b->no, "\"%s\"", b->types[i_]);
    FTT_LIST("op_kinds", b->no, "\"%s\"", b->kinds[i_]);
    FTT_LIST("op_names", b->no, "\"%s\"", b->names[i_]);
#undef FTT_LIST
    snprintf(json + n, sizeof json - n,
             ", \"fast_memory_capacity\": 600000, \"slow_memory_bandwidth\": 50, \"native_granularity\": [128, 128]}");
    return problem(json);
}

/* One BERT-style encoder layer as the importer lowers it (docs/LOWERING.md:
 * a batched matmul's right operand through a Layout named NAME/rhs);
 * returns the layer's output tensor. */
static int bert_layer(builder *b, int x, int layer)
{
    char n[17][48];
    static const char *const what[] = {"query", "key", "value", "/matmul/rhs", "/matmul", "/truediv", "/softmax",
                                       "/matmul_1/rhs", "/matmul_1", "attn_out", "/add", "attn_norm", "intermediate",
                                       "/gelu", "output", "/add_1", "out_norm"};
    for (int i = 0; i < 17; i++)
        snprintf(n[i], sizeof n[0], "l%d%s%s", layer, what[i][0] == '/' ? "" : ".", what[i]);
    int E = 256, F = 1024, S = 128;
    int q = op(b, "MatMul", "linear", n[0], E, S, x, tensor(b, E, E));
    int k = op(b, "MatMul", "linear", n[1], E, S, x, tensor(b, E, E));
    int v = op(b, "MatMul", "linear", n[2], E, S, x, tensor(b, E, E));
    int kt = op(b, "Layout", "matmul", n[3], S, E, k, -1);
    int sc = op(b, "MatMul", "matmul", n[4], S, S, q, kt);
    int dv = op(b, "Pointwise", "div", n[5], S, S, sc, -1);
    int pr = op(b, "Pointwise", "softmax", n[6], S, S, dv, -1);
    int vr = op(b, "Layout", "matmul", n[7], E, S, v, -1);
    int cx = op(b, "MatMul", "matmul", n[8], E, S, pr, vr);
    int ao = op(b, "MatMul", "linear", n[9], E, S, cx, tensor(b, E, E));
    int a1 = op(b, "Pointwise", "add", n[10], E, S, ao, x);
    int l1 = op(b, "Pointwise", "layer_norm", n[11], E, S, a1, -1);
    int up = op(b, "MatMul", "linear", n[12], F, S, l1, tensor(b, F, E));
    int ge = op(b, "Pointwise", "gelu", n[13], F, S, up, -1);
    int dn = op(b, "MatMul", "linear", n[14], E, S, ge, tensor(b, E, F));
    int a2 = op(b, "Pointwise", "add", n[15], E, S, dn, l1);
    return op(b, "Pointwise", "layer_norm", n[16], E, S, a2, -1);
}

/* Two identical BERT-style layers with the transformer library: per
 * layer the Q/K/V projections, the attention core, two linear + add +
 * LayerNorm tiles and linear + GELU; the second layer reuses the first
 * one's blocks. */
static void test_patterns_transformer_layers(void **state)
{
    (void)state;
    builder b;
    memset(&b, 0, sizeof b);
    int x = tensor(&b, 256, 128);
    for (int l = 0; l < 2; l++)
        x = bert_layer(&b, x, l);
    ft_problem *p = built(&b);
    ft_pat_stats stats;
    double ms;
    ft_partition part = timed_tile(p, "transformer.patterns", &stats, &ms);
    print_message("two BERT layers: %d ops, %d source nodes, %d matches, %d blocks (%d solved), %d groups in %.2f ms:\n",
                  p->nops, stats.nodes, stats.matches, stats.blocks, stats.solved, part.ngroups, ms);
    for (int g = 0; g < part.ngroups; g++)
        print_message("  %s\n", part.label[g]);
    assert_int_equal(p->nops, 34);
    assert_int_equal(stats.nodes, 30); /* the two matmuls' /rhs Layouts joined them */
    assert_int_equal(part.ngroups, 10);
    static const char *const want[5] = {"pattern qkv_projection", "pattern attention_scale",
                                        "pattern linear_add_layernorm", "pattern linear_act",
                                        "pattern linear_add_layernorm"};
    for (int g = 0; g < part.ngroups; g++)
        assert_string_equal(part.label[g], want[g % 5]);
    assert_int_equal(stats.blocks, 10);
    assert_int_equal(stats.solved, 4); /* the two linear + add + LayerNorm blocks are alike too */
    ft_partition_free(&part);
    ft_problem_free(p);
}

/* A generated 1 000-op problem (family scale) with the bundled libraries:
 * valid, and fast (the time is printed, not asserted). */
static void test_patterns_scale_1000(void **state)
{
    (void)state;
    ft_gen_opts o;
    ft_problem *p = NULL;
    ft_status st;
    ft_gen_opts_init(&o);
    o.family = FT_GEN_SCALE;
    o.nops = 1000;
    o.seed = 1;
    if (ft_generate(&o, &p, &st) != FT_OK)
        fail_msg("%s", st.msg);
    ft_pat_stats stats;
    double ms;
    ft_partition part = timed_tile(p, "contest.patterns", &stats, &ms);
    int single = 0;
    for (int g = 0; g < part.ngroups; g++)
        single += strcmp(part.label[g], "unmatched") == 0;
    print_message("scale 1000: %d matches, %d blocks (%d solved, %d greedy), %ld states, %d tiles (%d undone), "
                  "%d groups (%d unmatched ops) in %.1f ms\n",
                  stats.matches, stats.blocks, stats.solved, stats.greedy, stats.states, stats.tiles, stats.undone,
                  part.ngroups, single, ms);
    assert_true(part.ngroups < p->nops);
    ft_partition_free(&part);
    /* the whole strategy, files read included */
    double t0 = ftt_seconds();
    if (ft__strategy_patterns(p, NULL, &part, &st) != FT_OK)
        fail_msg("%s", st.msg);
    print_message("scale 1000, bundled libraries, strategy call: %d groups in %.1f ms\n", part.ngroups,
                  1e3 * (ftt_seconds() - t0));
    assert_int_equal(ft__partition_check(p, &part, &st), FT_OK);
    ft_partition_free(&part);
    ft_problem_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_patterns_worked_example),
        cmocka_unit_test(test_patterns_escaping_value),
        cmocka_unit_test(test_patterns_commutative),
        cmocka_unit_test(test_patterns_positional),
        cmocka_unit_test(test_patterns_dedup),
        cmocka_unit_test(test_patterns_cycle_undone),
        cmocka_unit_test(test_patterns_layer_not_convex),
        cmocka_unit_test(test_patterns_file_errors),
        cmocka_unit_test(test_patterns_bundled_libraries),
        cmocka_unit_test(test_patterns_resnet18),
        cmocka_unit_test(test_patterns_transformer_layers),
        cmocka_unit_test(test_patterns_imported_transformers),
        cmocka_unit_test(test_patterns_scale_1000),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
