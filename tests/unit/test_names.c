/* test_names.c - cmocka tests of the optional names of a problem (op_names, op_kinds, tensor_names: loading, clone, JSON round trip, rejections), of its imported_for and op_kernels, and of ft_subgraph_label. */
#include "ft_testutil.h"

/* Three ops on six tensors (the E-mlp graph): fc1 MatMul T0 x T1 -> T2,
 * act Pointwise T2 -> T3, fc2 MatMul T3 x T4 -> T5. */
#define MLP_FIELDS                                                                              \
    "\"widths\": [128, 512, 512, 512, 128, 128], \"heights\": [256, 128, 256, 256, 512, 256],"  \
    " \"inputs\": [[0, 1], [2], [3, 4]], \"outputs\": [[2], [3], [5]],"                         \
    " \"base_costs\": [1000, 200, 1000], \"op_types\": [\"MatMul\", \"Pointwise\", \"MatMul\"]," \
    " \"fast_memory_capacity\": 60000, \"slow_memory_bandwidth\": 40, \"native_granularity\": [128, 128]"
#define OP_NAMES "\"op_names\": [\"encoder.layer1.fc1\", \"encoder.layer1.act\", \"encoder.layer1.fc2\"]"
#define OP_KINDS "\"op_kinds\": [\"linear\", \"gelu\", \"linear\"]"
#define TENSOR_NAMES                                                                            \
    "\"tensor_names\": [\"x\", \"encoder.layer1.fc1.weight\", \"encoder.layer1.fc1\","          \
    " \"encoder.layer1.act\", \"encoder.layer1.fc2.weight\", \"y\"]"

static const char named_json[] = "{" MLP_FIELDS ", " OP_NAMES ", " OP_KINDS ", " TENSOR_NAMES "}";
static const char plain_json[] = "{" MLP_FIELDS "}";

#define NAME "names.json"

static ft_problem *parse_ok(const char *json)
{
    ft_problem *p = NULL;
    ft_status st;
    if (ft_problem_parse(json, NAME, &p, &st) != FT_OK)
        fail_msg("parse failed: %s", st.msg);
    return p;
}

/* Parse json, expect FT_EINPUT with the message "NAME: <needle>...". */
static void expect_reject(const char *json, const char *needle)
{
    ft_problem *p = (ft_problem *)&p;
    ft_status st;
    int rc = ft_problem_parse(json, NAME, &p, &st);
    if (rc == FT_OK)
        ft_problem_free(p);
    assert_int_equal(rc, FT_EINPUT);
    assert_null(p);
    assert_null(strchr(st.msg, '\n'));
    assert_msg_has(st.msg, NAME ": ");
    assert_msg_has(st.msg, needle);
}

/* A subgraph of the given ops (no copy: the array is the caller's). */
static ft_subgraph sg_of(int *ops, int n)
{
    ft_subgraph g;
    memset(&g, 0, sizeof g);
    g.ops = ops;
    g.nops = n;
    g.w = g.h = g.k = 1;
    return g;
}

static void expect_label(const ft_problem *p, int *ops, int n, const char *want)
{
    ft_subgraph g = sg_of(ops, n);
    char *l = ft_subgraph_label(p, &g);
    assert_non_null(l);
    assert_string_equal(l, want);
    free(l);
}

/* ------------------------------------------------------------ loading */

static void test_names_load_all_three(void **state)
{
    (void)state;
    ft_problem *p = parse_ok(named_json);
    assert_string_equal(p->ops[0].name, "encoder.layer1.fc1");
    assert_string_equal(p->ops[2].name, "encoder.layer1.fc2");
    assert_string_equal(p->ops[1].kind, "gelu");
    assert_string_equal(p->tensors[0].name, "x");
    assert_string_equal(p->tensors[5].name, "y");
    ft_problem_free(p);
}

static void test_names_absent_are_null(void **state)
{
    (void)state;
    ft_problem *p = parse_ok(plain_json);
    for (int o = 0; o < p->nops; o++) {
        assert_null(p->ops[o].name);
        assert_null(p->ops[o].kind);
    }
    for (int t = 0; t < p->ntensors; t++)
        assert_null(p->tensors[t].name);
    ft_problem_free(p);
    /* null is the same as absent; one list without the others is fine */
    p = parse_ok("{" MLP_FIELDS ", \"op_names\": null, " OP_KINDS "}");
    assert_null(p->ops[0].name);
    assert_string_equal(p->ops[0].kind, "linear");
    assert_null(p->tensors[0].name);
    ft_problem_free(p);
}

static void test_names_do_not_change_the_cost(void **state)
{
    (void)state;
    ft_problem *a = parse_ok(named_json), *b = parse_ok(plain_json);
    ft_schedule *s = NULL;
    ft_status st;
    assert_int_equal(ft_schedule_parse(SJ("[[0, 1, 2]]", "[[128, 128, 64]]", "[[]]"), "s.json", &s, &st), FT_OK);
    ft_eval ea, eb;
    assert_int_equal(ft_evaluate(a, s, FT_COMPUTE_NATIVE, &ea, &st), FT_OK);
    assert_int_equal(ft_evaluate(b, s, FT_COMPUTE_NATIVE, &eb, &st), FT_OK);
    assert_cost(ea.total, 17600);
    assert_true(ea.total == eb.total);
    ft_eval_free(&ea);
    ft_eval_free(&eb);
    ft_schedule_free(s);
    ft_problem_free(a);
    ft_problem_free(b);
}

/* ------------------------------------------------------------ rejections */

static void test_names_reject_entry_not_string(void **state)
{
    (void)state;
    expect_reject("{" MLP_FIELDS ", \"op_names\": [\"a\", \"b\", \"c\"], \"op_kinds\": [\"x\", 7, \"z\"]}",
                  "op_kinds[1]: expected a string, got an integer");
    expect_reject("{" MLP_FIELDS ", \"op_names\": [\"a\", null, \"c\"]}", "op_names[1]: expected a string, got null");
    expect_reject("{" MLP_FIELDS ", \"tensor_names\": [\"a\", \"b\", \"c\", \"d\", \"e\", [\"f\"]]}",
                  "tensor_names[5]: expected a string, got a list");
}

static void test_names_reject_wrong_length(void **state)
{
    (void)state;
    expect_reject("{" MLP_FIELDS ", \"op_names\": [\"a\", \"b\"]}", "op_names has 2 entries, expected 3 (one per op)");
    expect_reject("{" MLP_FIELDS ", \"op_kinds\": [\"a\", \"b\", \"c\", \"d\"]}", "op_kinds has 4 entries, expected 3");
    expect_reject("{" MLP_FIELDS ", \"tensor_names\": [\"a\", \"b\", \"c\"]}",
                  "tensor_names has 3 entries, expected 6 (one per tensor)");
}

static void test_names_reject_not_a_list(void **state)
{
    (void)state;
    expect_reject("{" MLP_FIELDS ", \"op_names\": \"fc1\"}", "op_names: expected a list of strings, got a string");
    expect_reject("{" MLP_FIELDS ", \"tensor_names\": {\"0\": \"x\"}}",
                  "tensor_names: expected a list of strings, got an object");
}

/* ------------------------------------------------------------ clone, JSON */

static void test_names_clone_is_deep(void **state)
{
    (void)state;
    ft_problem *p = parse_ok(named_json);
    ft_problem *c = ft_problem_clone(p);
    assert_non_null(c);
    for (int o = 0; o < p->nops; o++) {
        assert_string_equal(c->ops[o].name, p->ops[o].name);
        assert_string_equal(c->ops[o].kind, p->ops[o].kind);
        assert_ptr_not_equal(c->ops[o].name, p->ops[o].name);
    }
    for (int t = 0; t < p->ntensors; t++) {
        assert_string_equal(c->tensors[t].name, p->tensors[t].name);
        assert_ptr_not_equal(c->tensors[t].name, p->tensors[t].name);
    }
    ft_problem_free(p); /* the clone keeps its own copies */
    assert_string_equal(c->ops[1].name, "encoder.layer1.act");
    ft_problem_free(c);
}

static void test_names_json_roundtrip(void **state)
{
    (void)state;
    ft_problem *p = parse_ok(named_json);
    char *text = ft_problem_to_json(p);
    assert_non_null(text);
    assert_non_null(strstr(text, "\n  \"op_names\": [\"encoder.layer1.fc1\",\"encoder.layer1.act\",\"encoder.layer1.fc2\"],\n"));
    assert_non_null(strstr(text, "\n  \"op_kinds\": [\"linear\",\"gelu\",\"linear\"],\n"));
    assert_non_null(strstr(text, "\n  \"tensor_names\": [\"x\","));
    ft_problem *q = parse_ok(text);
    for (int o = 0; o < p->nops; o++) {
        assert_string_equal(q->ops[o].name, p->ops[o].name);
        assert_string_equal(q->ops[o].kind, p->ops[o].kind);
    }
    for (int t = 0; t < p->ntensors; t++)
        assert_string_equal(q->tensors[t].name, p->tensors[t].name);
    char *again = ft_problem_to_json(q);
    assert_string_equal(again, text);
    free(again);
    free(text);
    ft_problem_free(q);
    ft_problem_free(p);
}

static void test_names_json_without_names_unchanged(void **state)
{
    (void)state;
    ft_problem *p = parse_ok(plain_json);
    char *text = ft_problem_to_json(p);
    assert_non_null(text);
    assert_null(strstr(text, "names"));
    assert_null(strstr(text, "op_kinds"));
    /* the last field is still native_granularity, without a comma */
    assert_non_null(strstr(text, "\"native_granularity\": [128,128]\n}\n"));
    free(text);
    ft_problem_free(p);
}

static void test_names_json_partial_names(void **state)
{
    (void)state;
    ft_problem *p = parse_ok(plain_json);
    p->ops[1].name = strdup("act");   /* by hand: one op named */
    char *text = ft_problem_to_json(p);
    assert_non_null(strstr(text, "\"op_names\": [\"\",\"act\",\"\"]\n}\n"));
    assert_null(strstr(text, "op_kinds"));
    ft_problem *q = parse_ok(text);
    assert_string_equal(q->ops[0].name, "");
    assert_string_equal(q->ops[1].name, "act");
    free(text);
    ft_problem_free(q);
    ft_problem_free(p);
}

/* ------------------------------------------------------- imported_for */

#define IMPORTED "\"imported_for\": {\"target\": \"gpu-h100\", \"file\": \"targets/gpu-h100.cfg\"}"

/* imported_for is read, cloned and written back (issue 32: one machine per
 * problem); a problem without it has none. */
static void test_imported_for_kept(void **state)
{
    (void)state;
    ft_problem *p = parse_ok("{" MLP_FIELDS ", " IMPORTED "}");
    assert_string_equal(ft_problem_imported_for(p), "gpu-h100");
    assert_string_equal(ft_problem_imported_file(p), "targets/gpu-h100.cfg");
    ft_problem *c = ft_problem_clone(p);
    assert_non_null(c);
    assert_ptr_not_equal(ft_problem_imported_for(c), ft_problem_imported_for(p));
    ft_problem_free(p);
    assert_string_equal(ft_problem_imported_for(c), "gpu-h100");
    assert_string_equal(ft_problem_imported_file(c), "targets/gpu-h100.cfg");
    char *text = ft_problem_to_json(c);
    assert_non_null(text);
    assert_non_null(strstr(text, "\n  \"imported_for\": {\"target\":\"gpu-h100\",\"file\":\"targets/gpu-h100.cfg\"}\n}\n"));
    ft_problem *q = parse_ok(text);
    assert_string_equal(ft_problem_imported_for(q), "gpu-h100");
    assert_string_equal(ft_problem_imported_file(q), "targets/gpu-h100.cfg");
    free(text);
    ft_problem_free(q);
    ft_problem_free(c);
    p = parse_ok("{" MLP_FIELDS ", \"imported_for\": {\"target\": \"kpu\"}}");
    assert_string_equal(ft_problem_imported_for(p), "kpu");
    assert_null(ft_problem_imported_file(p));
    ft_problem_free(p);
    p = parse_ok(plain_json);
    assert_null(ft_problem_imported_for(p));
    assert_null(ft_problem_imported_file(p));
    text = ft_problem_to_json(p);
    assert_null(strstr(text, "imported_for"));
    free(text);
    ft_problem_free(p);
    p = parse_ok("{" MLP_FIELDS ", \"imported_for\": null}");
    assert_null(ft_problem_imported_for(p));
    ft_problem_free(p);
}

static void test_imported_for_rejects(void **state)
{
    (void)state;
    expect_reject("{" MLP_FIELDS ", \"imported_for\": \"gpu-h100\"}", "imported_for: expected an object");
    expect_reject("{" MLP_FIELDS ", \"imported_for\": {\"file\": \"x.cfg\"}}",
                  "imported_for.target: expected a non-empty string, got nothing");
    expect_reject("{" MLP_FIELDS ", \"imported_for\": {\"target\": 3}}", "imported_for.target: expected a non-empty string, got an integer");
    expect_reject("{" MLP_FIELDS ", \"imported_for\": {\"target\": \"\"}}", "imported_for.target: expected a non-empty string, got an empty string");
    expect_reject("{" MLP_FIELDS ", \"imported_for\": {\"target\": \"kpu\", \"file\": []}}", "imported_for.file: expected a string, got a list");
    expect_reject("{" MLP_FIELDS ", \"imported_for\": {\"target\": \"kpu\", \"dtype\": \"bf16\"}}", "imported_for.dtype: unknown member");
}

/* --------------------------------------------------------- op_kernels */

/* op_kernels (issue 34: the kernels PyTorch runs) is read, cloned and
 * written back; a problem without it has none; bad lists are refused. */
static void test_op_kernels_kept_and_checked(void **state)
{
    (void)state;
    ft_problem *p = parse_ok("{" MLP_FIELDS ", \"op_kernels\": [0, 0, 1]}");
    assert_non_null(p->op_kernels);
    assert_int_equal(p->op_kernels[1], 0);
    assert_int_equal(p->op_kernels[2], 1);
    ft_problem *c = ft_problem_clone(p);
    assert_non_null(c);
    assert_ptr_not_equal(c->op_kernels, p->op_kernels);
    ft_problem_free(p);
    char *text = ft_problem_to_json(c);
    assert_non_null(text);
    assert_non_null(strstr(text, "\n  \"op_kernels\": [0,0,1]\n}\n"));
    ft_problem *q = parse_ok(text);
    assert_int_equal(q->op_kernels[2], 1);
    free(text);
    ft_problem_free(q);
    ft_problem_free(c);
    p = parse_ok(plain_json);
    assert_null(p->op_kernels);
    text = ft_problem_to_json(p);
    assert_null(strstr(text, "op_kernels"));
    free(text);
    ft_problem_free(p);
    p = parse_ok("{" MLP_FIELDS ", \"op_kernels\": null}");
    assert_null(p->op_kernels);
    ft_problem_free(p);
    expect_reject("{" MLP_FIELDS ", \"op_kernels\": 0}", "op_kernels: expected a list of kernel indices, got an integer");
    expect_reject("{" MLP_FIELDS ", \"op_kernels\": [0, 1]}", "op_kernels has 2 entries, expected 3 (one per op)");
    expect_reject("{" MLP_FIELDS ", \"op_kernels\": [0, \"a\", 1]}", "op_kernels[1] is a string, must be a kernel index");
    expect_reject("{" MLP_FIELDS ", \"op_kernels\": [0, -1, 1]}", "op_kernels[1] is -1, out of range (0 to 2)");
    expect_reject("{" MLP_FIELDS ", \"op_kernels\": [0, 3, 1]}", "op_kernels[1] is 3, out of range (0 to 2)");
}

/* ------------------------------------------------------------ labels */

static void test_names_label_elides_common_prefix(void **state)
{
    (void)state;
    ft_problem *p = parse_ok(named_json);
    int all[] = {0, 1, 2}, one[] = {1}, back[] = {2, 0};
    expect_label(p, all, 3, "encoder.layer1.fc1+act+fc2");
    expect_label(p, one, 1, "encoder.layer1.act");
    expect_label(p, back, 2, "encoder.layer1.fc2+fc1");
    ft_problem_free(p);
}

static void test_names_label_resnet_block(void **state)
{
    (void)state;
    ft_problem *p = parse_ok(plain_json);
    const char *names[3][3] = {
        {"layer1.0.conv1", "layer1.0.bn1", "layer1.0.relu"},
        {"layer1.0.conv1/im2col", "layer1.0.conv1", "layer2.0.conv1"},
        {"layer1.0", "layer1.0.conv1", "layer1.0.conv1"}, /* a whole-component prefix; a repeated name */
    };
    const char *want[3] = {"layer1.0.conv1+bn1+relu", "layer1.0.conv1/im2col+conv1+layer2.0.conv1",
                           "layer1.0+conv1+conv1"};
    int ops[] = {0, 1, 2};
    for (int c = 0; c < 3; c++) {
        for (int o = 0; o < 3; o++) {
            free(p->ops[o].name);
            p->ops[o].name = strdup(names[c][o]);
        }
        expect_label(p, ops, 3, want[c]);
    }
    /* a name that ends in its shared prefix is not elided to nothing */
    free(p->ops[0].name);
    free(p->ops[1].name);
    p->ops[0].name = strdup("a.");
    p->ops[1].name = strdup("a.");
    expect_label(p, ops, 2, "a.+a.");
    ft_problem_free(p);
}

static void test_names_label_falls_back_to_indices(void **state)
{
    (void)state;
    ft_problem *p = parse_ok(plain_json);
    int ops[] = {2, 0, 1}, bad[] = {0, 7};
    expect_label(p, ops, 3, "2,0,1");
    expect_label(p, ops, 0, "");
    p->ops[0].name = strdup("fc1");
    p->ops[2].name = strdup("fc2");
    expect_label(p, ops, 3, "2,0,1");   /* op 1 has no name */
    int named[] = {0, 2};
    expect_label(p, named, 2, "fc1+fc2");
    p->ops[1].name = strdup("");
    expect_label(p, ops, 3, "2,0,1");   /* an empty name counts as none */
    expect_label(p, bad, 2, "0,7");     /* an op out of range */
    ft_problem_free(p);
}

static void test_names_label_length_limit(void **state)
{
    (void)state;
    ft_problem *p = parse_ok(plain_json);
    char big[400];
    int ops[] = {0, 1, 2};
    /* names whose last components differ: nothing to elide after the dots */
    for (int o = 0; o < 3; o++) {
        memset(big, 'a' + o, 150);
        big[150] = '\0';
        p->ops[o].name = strdup(big);
    }
    ft_subgraph g = sg_of(ops, 3);
    char *l = ft_subgraph_label(p, &g);
    assert_int_equal(strlen(l), FT_LABEL_MAX);
    assert_string_equal(l + FT_LABEL_MAX - 3, "...");
    assert_int_equal(strncmp(l, p->ops[0].name, 150), 0);
    assert_int_equal(l[150], '+');
    free(l);
    /* exactly FT_LABEL_MAX bytes: kept whole */
    free(p->ops[0].name);
    memset(big, 'x', FT_LABEL_MAX);
    big[FT_LABEL_MAX] = '\0';
    p->ops[0].name = strdup(big);
    g.nops = 1;
    l = ft_subgraph_label(p, &g);
    assert_string_equal(l, big);
    free(l);
    /* the cut never splits a UTF-8 character: 2-byte characters from
     * offset 2, so that byte FT_LABEL_MAX - 3 continues one */
    free(p->ops[0].name);
    big[0] = 'x';
    big[1] = 'y';
    for (int i = 2; i < 398; i += 2) {
        big[i] = (char)0xC3;
        big[i + 1] = (char)0xA9; /* e acute */
    }
    big[398] = '\0';
    p->ops[0].name = strdup(big);
    l = ft_subgraph_label(p, &g);
    size_t n = strlen(l);
    assert_int_equal(n, FT_LABEL_MAX - 1);   /* one byte short: the character did not fit */
    assert_string_equal(l + n - 3, "...");
    assert_int_equal((unsigned char)l[n - 4], 0xA9);   /* a whole character before the dots */
    free(l);
    /* the index fallback is limited too */
    int many[200];
    for (int i = 0; i < 200; i++)
        many[i] = i % 3;
    ft_problem *q = parse_ok(plain_json);
    g = sg_of(many, 200);
    l = ft_subgraph_label(q, &g);
    assert_int_equal(strlen(l), FT_LABEL_MAX);
    assert_string_equal(l + FT_LABEL_MAX - 3, "...");
    assert_int_equal(strncmp(l, "0,1,2,0,1,2", 11), 0);
    free(l);
    ft_problem_free(q);
    ft_problem_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_load_all_three),
        cmocka_unit_test(test_names_absent_are_null),
        cmocka_unit_test(test_names_do_not_change_the_cost),
        cmocka_unit_test(test_names_reject_entry_not_string),
        cmocka_unit_test(test_names_reject_wrong_length),
        cmocka_unit_test(test_names_reject_not_a_list),
        cmocka_unit_test(test_names_clone_is_deep),
        cmocka_unit_test(test_names_json_roundtrip),
        cmocka_unit_test(test_names_json_without_names_unchanged),
        cmocka_unit_test(test_names_json_partial_names),
        cmocka_unit_test(test_imported_for_kept),
        cmocka_unit_test(test_imported_for_rejects),
        cmocka_unit_test(test_op_kernels_kept_and_checked),
        cmocka_unit_test(test_names_label_elides_common_prefix),
        cmocka_unit_test(test_names_label_resnet_block),
        cmocka_unit_test(test_names_label_falls_back_to_indices),
        cmocka_unit_test(test_names_label_length_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
