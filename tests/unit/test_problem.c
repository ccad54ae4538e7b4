/* test_problem.c - cmocka tests of the problem loader: parsing, derived fields and every rejection class of SPEC section 1. */
#include "ft_testutil.h"

#include <dirent.h>

/* The default fields: two chained Pointwise ops T0 -> T1 -> T2 (example 1). */
#define W3 "[128, 128, 128]"
#define H3 "[128, 128, 128]"
#define IN2 "[[0], [1]]"
#define OUT2 "[[1], [2]]"
#define COST2 "[1000, 100]"
#define PW2 "[\"Pointwise\", \"Pointwise\"]"
#define CAP "35000"
#define BW "10"
#define NAT "[128, 128]"

/* The name passed to ft_problem_parse; every message must carry it. */
#define NAME "inline.json"

/* Parse `json`, expect FT_EINPUT, a NULL problem, a one-line message naming
 * the input, and each non-NULL needle (field name, index) in the message. */
static void expect_reject(const char *json, const char *needle1,
                          const char *needle2)
{
    ft_problem *p = (ft_problem *)&p; /* must be reset to NULL */
    ft_status st;
    int rc;

    ft_status_clear(&st);
    rc = ft_problem_parse(json, NAME, &p, &st);
    if (rc != FT_EINPUT) {
        if (rc == FT_OK)
            ft_problem_free(p);
        fail_msg("expected FT_EINPUT (%d), got %d for %s", FT_EINPUT, rc, json);
    }
    assert_null(p);
    assert_int_equal(st.code, FT_EINPUT);
    assert_true(st.msg[0] != '\0');
    assert_null(strchr(st.msg, '\n'));
    assert_msg_has(st.msg, NAME);
    if (needle1)
        assert_msg_has(st.msg, needle1);
    if (needle2)
        assert_msg_has(st.msg, needle2);
}

/* Like expect_reject, but the message must name at least one of the fields
 * (where SPEC leaves open which list carries the fault) and the index. */
static void expect_reject_any(const char *json, const char *const *fields,
                              const char *index)
{
    ft_problem *p = NULL;
    ft_status st;
    int i, found = 0;

    ft_status_clear(&st);
    assert_int_equal(ft_problem_parse(json, NAME, &p, &st), FT_EINPUT);
    assert_null(p);
    assert_msg_has(st.msg, NAME);
    for (i = 0; fields[i]; i++)
        if (strstr(st.msg, fields[i]))
            found = 1;
    if (!found)
        fail_msg("message \"%s\" names none of the expected fields", st.msg);
    if (index)
        assert_msg_has(st.msg, index);
}

/* Fixture: a valid problem parsed once for the derived-field tests.  The
 * E-mlp graph with its ops listed out of topological order, one more
 * consumer of T2, non-square native granularity and unknown fields:
 *   op0 MatMul    [T3, T4] -> T5   (K = W(T3) = 512)
 *   op1 Pointwise [T2, T6] -> T3
 *   op2 MatMul    [T0, T1] -> T2   (K = W(T0) = 128)
 *   op3 Pointwise [T2]     -> T7
 * tensors (w x h): T0 128x256, T1 512x128, T2 512x256, T3 512x256,
 * T4 128x512, T5 128x256, T6 512x256, T7 512x256. */
static const char valid_json[] =
    "{\"name\": \"unknown fields are ignored\", \"comment\": {\"x\": [1, 2]},"
    " \"widths\": [128, 512, 512, 512, 128, 128, 512, 512],"
    " \"heights\": [256, 128, 256, 256, 512, 256, 256, 256],"
    " \"inputs\": [[3, 4], [2, 6], [0, 1], [2]],"
    " \"outputs\": [[5], [3], [2], [7]],"
    " \"base_costs\": [1000, 200.5, 900, 50],"
    " \"op_types\": [\"MatMul\", \"Pointwise\", \"MatMul\", \"Pointwise\"],"
    " \"fast_memory_capacity\": 60000, \"slow_memory_bandwidth\": 40.5,"
    " \"native_granularity\": [128, 64]}";

static int setup_valid(void **state)
{
    return ftt_fixture_new(state, valid_json, NULL);
}

static void test_problem_parse_valid_fields(void **state)
{
    ftt_fixture *f = *state;
    const ft_problem *p = f->p;

    assert_int_equal(p->ntensors, 8);
    assert_int_equal(p->nops, 4);
    assert_non_null(p->name);
    assert_string_equal(p->name, "fixture.problem.json");
    assert_int_equal(p->tensors[0].width, 128);
    assert_int_equal(p->tensors[0].height, 256);
    assert_int_equal(p->tensors[4].width, 128);
    assert_int_equal(p->tensors[4].height, 512);
    assert_int_equal(ft_tensor_size(p, 1), 512 * 128);
    assert_int_equal(ft_tensor_size(p, 5), 128 * 256);
    assert_cost(p->capacity, 60000);
    assert_cost(p->bandwidth, 40.5);
    assert_int_equal(p->native_w, 128);
    assert_int_equal(p->native_h, 64);
    assert_int_equal(p->ops[0].type, FT_OP_MATMUL);
    assert_int_equal(p->ops[1].type, FT_OP_POINTWISE);
    assert_int_equal(p->ops[0].ninputs, 2);
    assert_int_equal(p->ops[0].inputs[0], 3);
    assert_int_equal(p->ops[0].inputs[1], 4);
    assert_int_equal(p->ops[0].output, 5);
    assert_int_equal(p->ops[1].ninputs, 2);
    assert_int_equal(p->ops[3].ninputs, 1);
    assert_cost(p->ops[1].base_cost, 200.5);
    assert_cost(p->ops[2].base_cost, 900);
}

static void test_problem_parse_matmul_k(void **state)
{
    ftt_fixture *f = *state;
    /* K is the width of L: op0's L is T3 (width 512), op2's L is T0 (128). */
    assert_int_equal(f->p->ops[0].k, 512);
    assert_int_equal(f->p->ops[2].k, 128);
    assert_int_equal(f->p->ops[1].k, 0);
    assert_int_equal(f->p->ops[3].k, 0);
}

static void test_problem_parse_producers_consumers(void **state)
{
    ftt_fixture *f = *state;
    const ft_tensor *t = f->p->tensors;
    static const int producer[8] = {-1, -1, 2, 1, -1, 0, -1, 3};
    int i;

    for (i = 0; i < 8; i++)
        assert_int_equal(t[i].producer, producer[i]);
    /* consumers, ascending op indices */
    assert_int_equal(t[0].nconsumers, 1);
    assert_int_equal(t[0].consumers[0], 2);
    assert_int_equal(t[1].nconsumers, 1);
    assert_int_equal(t[1].consumers[0], 2);
    assert_int_equal(t[2].nconsumers, 2);
    assert_int_equal(t[2].consumers[0], 1);
    assert_int_equal(t[2].consumers[1], 3);
    assert_int_equal(t[3].nconsumers, 1);
    assert_int_equal(t[3].consumers[0], 0);
    assert_int_equal(t[4].nconsumers, 1);
    assert_int_equal(t[4].consumers[0], 0);
    assert_int_equal(t[5].nconsumers, 0);
    assert_int_equal(t[6].nconsumers, 1);
    assert_int_equal(t[6].consumers[0], 1);
    assert_int_equal(t[7].nconsumers, 0);
}

static void test_problem_parse_graph_inputs_outputs(void **state)
{
    ftt_fixture *f = *state;
    const ft_problem *p = f->p;

    /* no producer: T0, T1, T4, T6; no consumer: T5, T7 */
    assert_int_equal(p->ngraph_inputs, 4);
    assert_int_equal(p->graph_inputs[0], 0);
    assert_int_equal(p->graph_inputs[1], 1);
    assert_int_equal(p->graph_inputs[2], 4);
    assert_int_equal(p->graph_inputs[3], 6);
    assert_int_equal(p->ngraph_outputs, 2);
    assert_int_equal(p->graph_outputs[0], 5);
    assert_int_equal(p->graph_outputs[1], 7);
}

static void test_problem_parse_topological_order(void **state)
{
    ftt_fixture *f = *state;
    const ft_problem *p = f->p;
    int pos[4] = {-1, -1, -1, -1};
    int i, j;

    for (i = 0; i < p->nops; i++) {
        assert_in_range(p->topo[i], 0, p->nops - 1);
        assert_int_equal(pos[p->topo[i]], -1); /* a permutation */
        pos[p->topo[i]] = i;
    }
    /* every op comes after the producers of its inputs */
    for (i = 0; i < p->nops; i++)
        for (j = 0; j < p->ops[i].ninputs; j++) {
            int prod = p->tensors[p->ops[i].inputs[j]].producer;
            if (prod >= 0)
                assert_true(pos[prod] < pos[i]);
        }
    /* here that forces op2 first and op0 after op1 */
    assert_int_equal(p->topo[0], 2);
    assert_true(pos[1] < pos[0]);
}

static void test_problem_clone_is_deep(void **state)
{
    ftt_fixture *f = *state;
    ft_problem *c = ft_problem_clone(f->p);
    ft_status st;

    assert_non_null(c);
    assert_int_equal(c->ntensors, f->p->ntensors);
    assert_int_equal(c->nops, f->p->nops);
    assert_ptr_not_equal(c->tensors, f->p->tensors);
    assert_ptr_not_equal(c->ops, f->p->ops);
    assert_ptr_not_equal(c->ops[0].inputs, f->p->ops[0].inputs);
    assert_int_equal(c->ops[0].k, 512);
    assert_int_equal(c->tensors[2].nconsumers, 2);
    /* an edit made invalid is caught by ft_problem_finish on the clone only */
    c->tensors[1].width = -5;
    ft_status_clear(&st);
    assert_int_equal(ft_problem_finish(c, &st), FT_EINPUT);
    assert_msg_has(st.msg, "widths");
    assert_int_equal(f->p->tensors[1].width, 512);
    ft_problem_free(c);
    ft_problem_free(NULL);
}

static void test_problem_finish_recomputes_derived(void **state)
{
    ftt_fixture *f = *state;
    ft_problem *c = ft_problem_clone(f->p);
    ft_status st;

    assert_non_null(c);
    /* widen T3 and T4 consistently: K of op0 becomes 1024 */
    c->tensors[3].width = 1024;
    c->tensors[4].height = 1024;
    /* make op1 Pointwise again consistent: T2, T6 must match T3 */
    c->tensors[2].width = 1024;
    c->tensors[6].width = 1024;
    c->tensors[1].width = 1024;
    c->tensors[7].width = 1024;
    ft_status_clear(&st);
    assert_int_equal(ft_problem_finish(c, &st), FT_OK);
    assert_int_equal(c->ops[0].k, 1024);
    assert_int_equal(c->ops[2].k, 128);
    ft_problem_free(c);
}

/* --------------------------------------------------------------- rejection */

static void test_problem_reject_not_json(void **state)
{
    (void)state;
    expect_reject("widths: [128]\n", NULL, NULL);
    expect_reject("{\"widths\": [128, 128,, 128]}", NULL, NULL);
    /* JSON, but not an object */
    expect_reject("[1, 2, 3]", NULL, NULL);
}

static void test_problem_reject_truncated(void **state)
{
    (void)state;
    expect_reject("{\"widths\": [128, 128, 128], \"heights\": [128, 128, 128], "
                  "\"inputs\": [[0], [1]], \"outputs\": [[1], [2",
                  NULL, NULL);
}

static void test_problem_reject_empty(void **state)
{
    (void)state;
    expect_reject("", NULL, NULL);
    expect_reject("  \n\t ", NULL, NULL);
}

static void test_problem_reject_missing_field(void **state)
{
    static const char *const fields[] = {
        "widths", "heights", "inputs", "outputs", "base_costs", "op_types",
        "fast_memory_capacity", "slow_memory_bandwidth", "native_granularity"};
    static const char *const values[] = {W3, H3, IN2, OUT2, COST2, PW2, CAP,
                                         BW, NAT};
    char json[1024];
    size_t i, j;

    (void)state;
    for (i = 0; i < 9; i++) {
        size_t len = 0;
        len += (size_t)snprintf(json + len, sizeof json - len, "{");
        for (j = 0; j < 9; j++) {
            if (j == i)
                continue;
            len += (size_t)snprintf(json + len, sizeof json - len, "%s\"%s\": %s",
                                    len > 1 ? ", " : "", fields[j], values[j]);
        }
        snprintf(json + len, sizeof json - len, "}");
        expect_reject(json, fields[i], NULL);
    }
    /* bad/missing-field.json lacks slow_memory_bandwidth */
    expect_reject("{\"widths\": [128, 128, 128], \"heights\": [128, 128, 128], "
                  "\"inputs\": [[0], [1]], \"outputs\": [[1], [2]], "
                  "\"base_costs\": [1000, 100], \"op_types\": [\"Pointwise\", "
                  "\"Pointwise\"], \"fast_memory_capacity\": 35000, "
                  "\"native_granularity\": [128, 128]}",
                  "slow_memory_bandwidth", NULL);
}

static void test_problem_reject_wrong_type(void **state)
{
    (void)state;
    /* a list given as a string, a number, an object */
    expect_reject(PJ(W3, H3, IN2, OUT2, "\"1000\"", PW2, CAP, BW, NAT),
                  "base_costs", NULL);
    expect_reject(PJ("128", H3, IN2, OUT2, COST2, PW2, CAP, BW, NAT),
                  "widths", NULL);
    expect_reject(PJ(W3, "{\"h\": 1}", IN2, OUT2, COST2, PW2, CAP, BW, NAT),
                  "heights", NULL);
    /* a number given as a string or a list */
    expect_reject(PJ(W3, H3, IN2, OUT2, COST2, PW2, "\"35000\"", BW, NAT),
                  "fast_memory_capacity", NULL);
    expect_reject(PJ(W3, H3, IN2, OUT2, COST2, PW2, CAP, "[10]", NAT),
                  "slow_memory_bandwidth", NULL);
    expect_reject(PJ(W3, H3, IN2, OUT2, COST2, PW2, CAP, BW, "128"),
                  "native_granularity", NULL);
    /* wrong element types, named with their index */
    expect_reject(PJ("[128, \"128\", 128]", H3, IN2, OUT2, COST2, PW2, CAP, BW,
                     NAT),
                  "widths", "1");
    expect_reject(PJ(W3, "[128, 128, 128.5]", IN2, OUT2, COST2, PW2, CAP, BW,
                     NAT),
                  "heights", "2");
    expect_reject(PJ(W3, H3, IN2, OUT2, "[1000, null]", PW2, CAP, BW, NAT),
                  "base_costs", "1");
    expect_reject(PJ(W3, H3, IN2, OUT2, COST2, "[\"Pointwise\", 7]", CAP, BW,
                     NAT),
                  "op_types", "1");
    expect_reject(PJ(W3, H3, "[[0], 1]", OUT2, COST2, PW2, CAP, BW, NAT),
                  "inputs", "1");
    expect_reject(PJ(W3, H3, IN2, "[[1], [\"2\"]]", COST2, PW2, CAP, BW, NAT),
                  "outputs", "1");
    expect_reject(PJ(W3, H3, "[[0.5], [1]]", OUT2, COST2, PW2, CAP, BW, NAT),
                  "inputs", "0");
}

static void test_problem_reject_length_mismatch(void **state)
{
    (void)state;
    /* per-tensor lists */
    expect_reject(PJ(W3, "[128, 128]", IN2, OUT2, COST2, PW2, CAP, BW, NAT),
                  "heights", NULL);
    /* per-op lists: base_costs, inputs, outputs, op_types each the odd one */
    expect_reject(PJ(W3, H3, IN2, OUT2, "[1000]", PW2, CAP, BW, NAT),
                  "base_costs", NULL);
    expect_reject(PJ(W3, H3, "[[0], [1], [2]]", OUT2, COST2, PW2, CAP, BW, NAT),
                  "inputs", NULL);
    expect_reject(PJ(W3, H3, IN2, "[[1]]", COST2, PW2, CAP, BW, NAT),
                  "outputs", NULL);
    expect_reject(PJ(W3, H3, IN2, OUT2, "[1000, 100, 10]",
                     "[\"Pointwise\", \"Pointwise\", \"Pointwise\"]", CAP, BW,
                     NAT),
                  NULL, NULL);
    /* native_granularity is [nw, nh] */
    expect_reject(PJ(W3, H3, IN2, OUT2, COST2, PW2, CAP, BW, "[128, 128, 128]"),
                  "native_granularity", NULL);
    expect_reject(PJ(W3, H3, IN2, OUT2, COST2, PW2, CAP, BW, "[128]"),
                  "native_granularity", NULL);
}

static void test_problem_reject_tensor_index_out_of_range(void **state)
{
    (void)state;
    /* bad/tensor-index-out-of-range.json: op 1 reads tensor 7 of 3 */
    expect_reject(PJ(W3, H3, "[[0], [7]]", OUT2, COST2, PW2, CAP, BW, NAT),
                  "inputs", "1");
    expect_reject(PJ(W3, H3, "[[0], [-1]]", OUT2, COST2, PW2, CAP, BW, NAT),
                  "inputs", "1");
    expect_reject(PJ(W3, H3, "[[0], [3]]", OUT2, COST2, PW2, CAP, BW, NAT),
                  "inputs", "3");
    expect_reject(PJ(W3, H3, IN2, "[[1], [9]]", COST2, PW2, CAP, BW, NAT),
                  "outputs", "9");
}

static void test_problem_reject_two_producers(void **state)
{
    (void)state;
    /* ops 0 and 1 both output T1 */
    expect_reject(PJ(W3, H3, "[[0], [0]]", "[[1], [1]]", COST2, PW2, CAP, BW,
                     NAT),
                  "outputs", "1");
}

static void test_problem_reject_self_consumption(void **state)
{
    static const char *const fields[] = {"inputs", "outputs", NULL};
    (void)state;
    /* bad/self-loop.json: op 1 reads T2 and writes T2 */
    expect_reject_any(PJ(W3, H3, "[[0], [2]]", OUT2, COST2, PW2, CAP, BW, NAT),
                      fields, "1");
}

static void test_problem_reject_cycle(void **state)
{
    static const char *const fields[] = {"inputs", "outputs", "cycle", NULL};
    (void)state;
    /* op0: T2 -> T1, op1: T1 -> T2 */
    expect_reject_any(PJ(W3, H3, "[[2], [1]]", OUT2, COST2, PW2, CAP, BW, NAT),
                      fields, NULL);
    /* a longer cycle behind a valid op: op0 T0 -> T1, op1 (T1, T4) -> T2,
     * op2 T2 -> T3, op3 T3 -> T4 */
    expect_reject_any(PJ("[8, 8, 8, 8, 8]", "[8, 8, 8, 8, 8]",
                         "[[0], [1, 4], [2], [3]]", "[[1], [2], [3], [4]]",
                         "[1, 1, 1, 1]",
                         "[\"Pointwise\", \"Pointwise\", \"Pointwise\", "
                         "\"Pointwise\"]",
                         CAP, BW, NAT),
                      fields, NULL);
}

static void test_problem_reject_unknown_op_type(void **state)
{
    (void)state;
    expect_reject(PJ(W3, H3, IN2, OUT2, COST2, "[\"Pointwise\", \"Conv\"]", CAP,
                     BW, NAT),
                  "op_types", "1");
    /* names are case-sensitive */
    expect_reject(PJ(W3, H3, IN2, OUT2, COST2, "[\"matmul\", \"Pointwise\"]",
                     CAP, BW, NAT),
                  "op_types", "0");
}

/* MatMul fixtures: op0 Pointwise T0 -> T1 (shape of T1), op1 MatMul
 * [L, R] -> O, so the MatMul fault is at index 1. */
#define MM_IN "[[0], [1, 2]]"
#define MM_OUT "[[1], [3]]"
#define MM_TY "[\"Pointwise\", \"MatMul\"]"
#define MM_COST "[10, 1000]"

static void test_problem_reject_matmul_l_height(void **state)
{
    static const char *const fields[] = {"inputs", "heights", NULL};
    (void)state;
    /* L = T1 is 64 wide (K = 64) and 100 high, O = T3 is 128 x 128:
     * H(L) = 100 != H(O) = 128 */
    expect_reject_any(PJ("[64, 64, 128, 128]", "[100, 100, 64, 128]", MM_IN,
                         MM_OUT, MM_COST, MM_TY, CAP, BW, NAT),
                      fields, "1");
}

static void test_problem_reject_matmul_r_width(void **state)
{
    static const char *const fields[] = {"inputs", "widths", NULL};
    (void)state;
    /* L = T1 64 x 128 (w x h), R = T2 96 wide, 64 high; O = T3 128 x 128:
     * W(R) = 96 != W(O) = 128 */
    expect_reject_any(PJ("[64, 64, 96, 128]", "[128, 128, 64, 128]", MM_IN,
                         MM_OUT, MM_COST, MM_TY, CAP, BW, NAT),
                      fields, "1");
}

static void test_problem_reject_matmul_inner_dims(void **state)
{
    static const char *const fields[] = {"inputs", "widths", "heights", NULL};
    (void)state;
    /* L = T1 64 wide, R = T2 32 high: W(L) = 64 != H(R) = 32 */
    expect_reject_any(PJ("[64, 64, 128, 128]", "[128, 128, 32, 128]", MM_IN,
                         MM_OUT, MM_COST, MM_TY, CAP, BW, NAT),
                      fields, "1");
    /* bad/matmul-shape-mismatch.json: L 128 x 128, R 64 x 128, O 128 x 128 */
    expect_reject_any(PJ("[128, 64, 128]", "[128, 128, 128]", "[[0, 1]]",
                         "[[2]]", "[1000]", "[\"MatMul\"]", CAP, BW, NAT),
                      fields, "0");
}

static void test_problem_reject_matmul_input_count(void **state)
{
    (void)state;
    /* bad/old-example-matmul-one-input.json: a MatMul with one input */
    expect_reject(PJ(W3, H3, "[[0], [1]]", OUT2, "[100, 10]",
                     "[\"MatMul\", \"Pointwise\"]", "20000", BW, NAT),
                  "inputs", "0");
    /* three inputs, square shapes otherwise consistent */
    expect_reject(PJ("[128, 128, 128, 128]", "[128, 128, 128, 128]",
                     "[[0], [0, 1, 1]]", "[[1], [2]]", COST2, MM_TY, CAP, BW,
                     NAT),
                  "inputs", "1");
    /* no inputs */
    expect_reject(PJ(W3, H3, "[[0], []]", OUT2, COST2,
                     "[\"Pointwise\", \"MatMul\"]", CAP, BW, NAT),
                  "inputs", "1");
}

static void test_problem_reject_pointwise_shape(void **state)
{
    static const char *const fields[] = {"inputs", "widths", "heights", NULL};
    (void)state;
    /* op1 Pointwise (T1, T3) -> T2 with T3 128 wide, 64 high */
    expect_reject_any(PJ("[128, 128, 128, 128]", "[128, 128, 128, 64]",
                         "[[0], [1, 3]]", OUT2, COST2, PW2, CAP, BW, NAT),
                      fields, "1");
    /* width differs: T1 64 x 128 feeds op1 whose output T2 is 128 x 128 */
    expect_reject_any(PJ("[64, 64, 128]", H3, IN2, OUT2, COST2, PW2, CAP, BW,
                         NAT),
                      fields, "1");
    /* a Pointwise op needs at least one input */
    expect_reject(PJ(W3, H3, "[[0], []]", OUT2, COST2, PW2, CAP, BW, NAT),
                  "inputs", "1");
}

static void test_problem_reject_nonpositive_width(void **state)
{
    (void)state;
    /* bad/negative-width.json */
    expect_reject(PJ("[128, -128, 128]", H3, IN2, OUT2, COST2, PW2, CAP, BW,
                     NAT),
                  "widths", "1");
    expect_reject(PJ("[128, 128, 0]", H3, IN2, OUT2, COST2, PW2, CAP, BW, NAT),
                  "widths", "2");
}

static void test_problem_reject_nonpositive_height(void **state)
{
    (void)state;
    expect_reject(PJ(W3, "[0, 128, 128]", IN2, OUT2, COST2, PW2, CAP, BW, NAT),
                  "heights", "0");
    expect_reject(PJ(W3, "[128, 128, -1]", IN2, OUT2, COST2, PW2, CAP, BW, NAT),
                  "heights", "2");
}

static void test_problem_reject_nonpositive_cost(void **state)
{
    (void)state;
    expect_reject(PJ(W3, H3, IN2, OUT2, "[1000, 0]", PW2, CAP, BW, NAT),
                  "base_costs", "1");
    expect_reject(PJ(W3, H3, IN2, OUT2, "[-3.5, 100]", PW2, CAP, BW, NAT),
                  "base_costs", "0");
}

static void test_problem_reject_nonpositive_capacity(void **state)
{
    (void)state;
    expect_reject(PJ(W3, H3, IN2, OUT2, COST2, PW2, "0", BW, NAT),
                  "fast_memory_capacity", NULL);
    expect_reject(PJ(W3, H3, IN2, OUT2, COST2, PW2, "-35000", BW, NAT),
                  "fast_memory_capacity", NULL);
}

static void test_problem_reject_nonpositive_bandwidth(void **state)
{
    (void)state;
    /* bad/zero-bandwidth.json */
    expect_reject(PJ(W3, H3, IN2, OUT2, COST2, PW2, CAP, "0", NAT),
                  "slow_memory_bandwidth", NULL);
    expect_reject(PJ(W3, H3, IN2, OUT2, COST2, PW2, CAP, "-0.5", NAT),
                  "slow_memory_bandwidth", NULL);
}

static void test_problem_reject_nonpositive_native(void **state)
{
    (void)state;
    expect_reject(PJ(W3, H3, IN2, OUT2, COST2, PW2, CAP, BW, "[0, 128]"),
                  "native_granularity", "0");
    expect_reject(PJ(W3, H3, IN2, OUT2, COST2, PW2, CAP, BW, "[128, -1]"),
                  "native_granularity", "1");
}

static void test_problem_reject_size_overflow(void **state)
{
    static const char *const fields[] = {"widths", "heights", NULL};
    (void)state;
    /* bad/huge-dims-overflow.json: 2^40 x 2^40 = 2^80 elements */
    expect_reject_any(PJ("[1099511627776, 1099511627776, 1099511627776]",
                         "[1099511627776, 1099511627776, 1099511627776]", IN2,
                         OUT2, COST2, PW2, CAP, BW, NAT),
                      fields, "0");
    /* 2^32 x 2^31 = 2^63 > INT64_MAX: ft_tensor_size returns int64_t and is
     * documented never to overflow, so this must be rejected too (tensor 1;
     * T0 and T2 share its shape as a Pointwise chain requires, so the first
     * fault is at index 0) */
    expect_reject_any(PJ("[4294967296, 4294967296, 4294967296]",
                         "[2147483648, 2147483648, 2147483648]", IN2, OUT2,
                         COST2, PW2, CAP, BW, NAT),
                      fields, "0");
}

static void test_problem_reject_output_count(void **state)
{
    (void)state;
    /* op 1 with no output */
    expect_reject(PJ(W3, H3, IN2, "[[1], []]", COST2, PW2, CAP, BW, NAT),
                  "outputs", "1");
    /* op 1 with two outputs */
    expect_reject(PJ("[128, 128, 128, 128]", "[128, 128, 128, 128]", IN2,
                     "[[1], [2, 3]]", COST2, PW2, CAP, BW, NAT),
                  "outputs", "1");
}

/* --------------------------------------------------------------- files */

static void test_problem_load_missing_file(void **state)
{
    const char *path = "no/such/dir/missing.problem.json";
    ft_problem *p = NULL;
    ft_status st;

    (void)state;
    ft_status_clear(&st);
    assert_int_equal(ft_problem_load(path, &p, &st), FT_EINPUT);
    assert_null(p);
    assert_int_equal(st.code, FT_EINPUT);
    assert_msg_has(st.msg, path);
}

static void test_problem_load_valid_vector(void **state)
{
    const char *dir;
    char path[4096];
    ft_problem *p = NULL;
    ft_status st;

    (void)state;
    FTT_DATADIR(dir);
    snprintf(path, sizeof path, "%s/ex1A.problem.json", dir);
    ft_status_clear(&st);
    assert_int_equal(ft_problem_load(path, &p, &st), FT_OK);
    assert_int_equal(st.code, FT_OK);
    assert_string_equal(p->name, path);
    assert_int_equal(p->ntensors, 3);
    assert_int_equal(p->nops, 2);
    assert_cost(p->capacity, 35000);
    ft_problem_free(p);
}

/* Expected needles for the files of vectors/bad/ (NULL: any message). */
static const struct {
    const char *file;
    const char *field;
    const char *index;
} bad_files[] = {
    {"cycle.json", NULL, NULL},
    {"empty.json", NULL, NULL},
    {"huge-dims-overflow.json", NULL, NULL},
    {"layout-no-input.json", "inputs[0]", "0 inputs"},
    {"layout-two-inputs.json", "inputs[0]", "2 inputs"},
    {"matmul-shape-mismatch.json", NULL, "0"},
    {"missing-field.json", "slow_memory_bandwidth", NULL},
    {"negative-width.json", "widths", "1"},
    {"not-json.json", NULL, NULL},
    {"old-b13-pointwise-shape-mismatch.json", NULL, "48"},
    {"old-b17-misaligned-inputs.json", NULL, NULL},
    {"old-example-matmul-one-input.json", "inputs", "0"},
    {"self-loop.json", NULL, "1"},
    {"tensor-index-out-of-range.json", "inputs", "1"},
    {"truncated.json", NULL, NULL},
    {"two-producers.json", "outputs", "1"},
    {"unknown-op-type.json", "op_types", "1"},
    {"wrong-type-field.json", "base_costs", NULL},
    {"zero-bandwidth.json", "slow_memory_bandwidth", NULL},
};

static void test_problem_load_bad_vectors(void **state)
{
    const char *dir;
    char bad[4096], path[8192];
    DIR *d;
    struct dirent *e;
    int seen = 0, failures = 0;
    size_t i;

    (void)state;
    FTT_DATADIR(dir);
    snprintf(bad, sizeof bad, "%s/bad", dir);
    d = opendir(bad);
    if (!d)
        fail_msg("cannot open %s", bad);
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        ft_problem *p = NULL;
        ft_status st;
        int rc;

        if (len < 5 || strcmp(e->d_name + len - 5, ".json") != 0)
            continue;
        seen++;
        snprintf(path, sizeof path, "%s/%s", bad, e->d_name);
        ft_status_clear(&st);
        rc = ft_problem_load(path, &p, &st);
        if (rc != FT_EINPUT || p != NULL || !strstr(st.msg, e->d_name) ||
            strchr(st.msg, '\n')) {
            print_error("%s: rc %d (want %d), message \"%s\"\n", e->d_name, rc,
                        FT_EINPUT, st.msg);
            failures++;
        }
        for (i = 0; i < sizeof bad_files / sizeof bad_files[0]; i++) {
            if (strcmp(bad_files[i].file, e->d_name) != 0)
                continue;
            if ((bad_files[i].field && !strstr(st.msg, bad_files[i].field)) ||
                (bad_files[i].index && !strstr(st.msg, bad_files[i].index))) {
                print_error("%s: message \"%s\" should name %s %s\n",
                            e->d_name, st.msg,
                            bad_files[i].field ? bad_files[i].field : "",
                            bad_files[i].index ? bad_files[i].index : "");
                failures++;
            }
        }
        ft_problem_free(p);
    }
    closedir(d);
    assert_true(seen >= (int)(sizeof bad_files / sizeof bad_files[0]));
    assert_int_equal(failures, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_problem_parse_valid_fields,
                                        setup_valid, ftt_teardown),
        cmocka_unit_test_setup_teardown(test_problem_parse_matmul_k,
                                        setup_valid, ftt_teardown),
        cmocka_unit_test_setup_teardown(test_problem_parse_producers_consumers,
                                        setup_valid, ftt_teardown),
        cmocka_unit_test_setup_teardown(test_problem_parse_graph_inputs_outputs,
                                        setup_valid, ftt_teardown),
        cmocka_unit_test_setup_teardown(test_problem_parse_topological_order,
                                        setup_valid, ftt_teardown),
        cmocka_unit_test_setup_teardown(test_problem_clone_is_deep,
                                        setup_valid, ftt_teardown),
        cmocka_unit_test_setup_teardown(test_problem_finish_recomputes_derived,
                                        setup_valid, ftt_teardown),
        cmocka_unit_test(test_problem_reject_not_json),
        cmocka_unit_test(test_problem_reject_truncated),
        cmocka_unit_test(test_problem_reject_empty),
        cmocka_unit_test(test_problem_reject_missing_field),
        cmocka_unit_test(test_problem_reject_wrong_type),
        cmocka_unit_test(test_problem_reject_length_mismatch),
        cmocka_unit_test(test_problem_reject_tensor_index_out_of_range),
        cmocka_unit_test(test_problem_reject_two_producers),
        cmocka_unit_test(test_problem_reject_self_consumption),
        cmocka_unit_test(test_problem_reject_cycle),
        cmocka_unit_test(test_problem_reject_unknown_op_type),
        cmocka_unit_test(test_problem_reject_matmul_l_height),
        cmocka_unit_test(test_problem_reject_matmul_r_width),
        cmocka_unit_test(test_problem_reject_matmul_inner_dims),
        cmocka_unit_test(test_problem_reject_matmul_input_count),
        cmocka_unit_test(test_problem_reject_pointwise_shape),
        cmocka_unit_test(test_problem_reject_nonpositive_width),
        cmocka_unit_test(test_problem_reject_nonpositive_height),
        cmocka_unit_test(test_problem_reject_nonpositive_cost),
        cmocka_unit_test(test_problem_reject_nonpositive_capacity),
        cmocka_unit_test(test_problem_reject_nonpositive_bandwidth),
        cmocka_unit_test(test_problem_reject_nonpositive_native),
        cmocka_unit_test(test_problem_reject_size_overflow),
        cmocka_unit_test(test_problem_reject_output_count),
        cmocka_unit_test(test_problem_load_missing_file),
        cmocka_unit_test(test_problem_load_valid_vector),
        cmocka_unit_test(test_problem_load_bad_vectors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
