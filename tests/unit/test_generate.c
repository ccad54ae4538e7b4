/* test_generate.c - cmocka tests of the problem generator (ft_generate) and the problem writer (ft_problem_to_json): determinism, op counts, sizes, tight capacity, valid one-op schedules, read-back, 10 000 ops (their speed: BENCH=scale). */
#include "ft_testutil.h"

static ft_problem *gen(ft_gen_family f, int nops, uint64_t seed)
{
    ft_gen_opts o;
    ft_status st;
    ft_problem *p = NULL;
    ft_gen_opts_init(&o);
    o.family = f;
    o.nops = nops;
    o.seed = seed;
    int rc = ft_generate(&o, &p, &st);
    if (rc != FT_OK)
        fail_msg("ft_generate(%s, %d, %llu): %s", ft_gen_family_name(f), nops, (unsigned long long)seed, st.msg);
    return p;
}

static void test_deterministic(void **state)
{
    (void)state;
    for (int f = 0; f < 3; f++)
        for (uint64_t seed = 1; seed <= (ftt_valgrind() ? 2u : 5u); seed++) {
            ft_problem *a = gen((ft_gen_family)f, f == 2 ? 300 : 0, seed), *b = gen((ft_gen_family)f, f == 2 ? 300 : 0, seed);
            char *ta = ft_problem_to_json(a), *tb = ft_problem_to_json(b);
            assert_non_null(ta);
            assert_non_null(tb);
            assert_string_equal(ta, tb);
            free(ta);
            free(tb);
            ft_problem_free(a);
            ft_problem_free(b);
        }
    /* another seed, another problem */
    ft_problem *a = gen(FT_GEN_CONTEST, 40, 1), *b = gen(FT_GEN_CONTEST, 40, 2);
    char *ta = ft_problem_to_json(a), *tb = ft_problem_to_json(b);
    assert_true(strcmp(ta, tb) != 0);
    free(ta);
    free(tb);
    ft_problem_free(a);
    ft_problem_free(b);
}

/* Sizes in [lo, hi], op count, tight capacity, a valid one-op schedule;
 * counts odd sizes (not multiples of `unit`) into *odd. */
static void check_problem(const ft_problem *p, int nops, int64_t lo, int64_t hi, int64_t unit, int *odd)
{
    ft_status st;
    if (nops)
        assert_int_equal(p->nops, nops);
    for (int t = 0; t < p->ntensors; t++) {
        const ft_tensor *T = &p->tensors[t];
        if (T->width < lo || T->width > hi || T->height < lo || T->height > hi)
            fail_msg("%s: tensor %d is %lldx%lld, outside %lld..%lld", p->name, t, (long long)T->width,
                     (long long)T->height, (long long)lo, (long long)hi);
        *odd += (T->width % unit != 0) + (T->height % unit != 0);
    }
    ft_schedule *s;
    assert_int_equal(ft_gen_oneop_schedule(p, &s, &st), FT_OK);
    ft_eval ev;
    if (ft_evaluate(p, s, FT_COMPUTE_NATIVE, &ev, &st) != FT_OK)
        fail_msg("%s: one-op schedule invalid: %s", p->name, st.msg);
    ft_eval_free(&ev);
    /* tight: some op's native tile does not fit */
    int smaller = 0;
    for (int i = 0; i < s->nsubgraphs; i++)
        smaller |= s->sg[i].w < p->native_w || s->sg[i].h < p->native_h || s->sg[i].k < ft_native_k(p);
    assert_true(smaller);
    ft_schedule_free(s);
}

static void test_contest_family(void **state)
{
    (void)state;
    int odd = 0, mm = 0, pw3 = 0, shared = 0;
    /* (three seeds under valgrind, where each takes seconds) */
    for (uint64_t seed = 1; seed <= (ftt_valgrind() ? 3u : 10u); seed++) {
        ft_problem *p = gen(FT_GEN_CONTEST, 0, seed);
        assert_in_range(p->nops, 10, 150);
        assert_int_equal(p->native_w, 128);
        assert_int_equal(p->native_h, 128);
        check_problem(p, 0, 100, 4096, 128, &odd);
        for (int o = 0; o < p->nops; o++) {
            mm += p->ops[o].type == FT_OP_MATMUL;
            pw3 += p->ops[o].type == FT_OP_POINTWISE && p->ops[o].ninputs == 3;
        }
        for (int t = 0; t < p->ntensors; t++) {
            int mms = 0;
            for (int c = 0; c < p->tensors[t].nconsumers; c++)
                mms += p->ops[p->tensors[t].consumers[c]].type == FT_OP_MATMUL &&
                       p->ops[p->tensors[t].consumers[c]].inputs[1] == t;
            shared += p->tensors[t].producer < 0 && mms > 1;
        }
        ft_problem_free(p);
    }
    assert_true(odd > 0);
    assert_true(mm > 0);
    assert_true(pw3 > 0);
    assert_true(shared > 0);
    for (int n = 10; n <= 150; n += 35) {
        ft_problem *p = gen(FT_GEN_CONTEST, n, 7);
        check_problem(p, n, 100, 4096, 128, &odd);
        ft_problem_free(p);
    }
}

static void test_small_family(void **state)
{
    (void)state;
    int odd = 0;
    for (uint64_t seed = 1; seed <= 40; seed++) {
        ft_problem *p = gen(FT_GEN_SMALL, 0, seed);
        assert_in_range(p->nops, 1, 8);
        assert_in_range(p->native_w, 4, 16);
        assert_in_range(p->native_h, 4, 16);
        check_problem(p, 0, 3, 64, 2, &odd);
        ft_problem_free(p);
    }
    assert_true(odd > 0);
    for (int n = 1; n <= 8; n++) {
        ft_problem *p = gen(FT_GEN_SMALL, n, 3);
        check_problem(p, n, 3, 64, 2, &odd);
        ft_problem_free(p);
    }
}

static void test_bad_options(void **state)
{
    (void)state;
    ft_gen_opts o;
    ft_status st;
    ft_problem *p = (ft_problem *)&o;
    ft_gen_opts_init(&o);
    o.family = FT_GEN_SMALL;
    o.nops = 9;
    assert_int_equal(ft_generate(&o, &p, &st), FT_EINPUT);
    assert_null(p);
    assert_non_null(strstr(st.msg, "nops is 9"));
    o.nops = -1;
    assert_int_equal(ft_generate(&o, &p, &st), FT_EINPUT);
    o.nops = 0;
    o.family = (ft_gen_family)7;
    assert_int_equal(ft_generate(&o, &p, &st), FT_EINPUT);
    assert_non_null(strstr(st.msg, "family 7"));
    ft_gen_family f;
    assert_int_equal(ft_gen_family_parse("scale", &f), 0);
    assert_int_equal(f, FT_GEN_SCALE);
    assert_int_equal(ft_gen_family_parse("big", &f), -1);
}

/* A written problem reads back equal, and writes the same text again. */
static void test_read_back(void **state)
{
    (void)state;
    for (int f = 0; f < 3; f++) {
        ft_problem *p = gen((ft_gen_family)f, f == 2 ? 200 : 0, 11), *q;
        ft_status st;
        char *text = ft_problem_to_json(p);
        assert_non_null(text);
        assert_int_equal(ft_problem_parse(text, "back", &q, &st), FT_OK);
        assert_int_equal(q->nops, p->nops);
        assert_int_equal(q->ntensors, p->ntensors);
        assert_true(q->capacity == p->capacity);
        assert_true(q->bandwidth == p->bandwidth);
        assert_int_equal(q->native_w, p->native_w);
        assert_int_equal(q->native_h, p->native_h);
        for (int t = 0; t < p->ntensors; t++) {
            assert_int_equal(q->tensors[t].width, p->tensors[t].width);
            assert_int_equal(q->tensors[t].height, p->tensors[t].height);
        }
        for (int o = 0; o < p->nops; o++) {
            assert_int_equal(q->ops[o].type, p->ops[o].type);
            assert_true(q->ops[o].base_cost == p->ops[o].base_cost);
            assert_int_equal(q->ops[o].output, p->ops[o].output);
            assert_int_equal(q->ops[o].ninputs, p->ops[o].ninputs);
            assert_memory_equal(q->ops[o].inputs, p->ops[o].inputs, sizeof(int) * (size_t)p->ops[o].ninputs);
        }
        char *again = ft_problem_to_json(q);
        assert_string_equal(again, text);
        free(again);
        free(text);
        ft_problem_free(q);
        ft_problem_free(p);
    }
    /* a cost that is not an integer survives exactly */
    ft_problem *p = gen(FT_GEN_SMALL, 3, 5), *q;
    ft_status st;
    p->ops[0].base_cost = 0.1 + 1e-9;
    p->capacity = 1234.5;
    char *text = ft_problem_to_json(p);
    assert_int_equal(ft_problem_parse(text, "back", &q, &st), FT_OK);
    assert_true(q->ops[0].base_cost == p->ops[0].base_cost);
    assert_true(q->capacity == 1234.5);
    free(text);
    ft_problem_free(q);
    ft_problem_free(p);
}

/* The scale family at 10 000 (2 000 under valgrind) and 1 000 ops: the op
 * counts asked for.  (How
 * fast it generates is bench/run's BENCH=scale table, goal under 1 s at
 * 10 000 ops, not a timed unit test.) */
static void test_scale_fast(void **state)
{
    (void)state;
    int n = ftt_valgrind() ? 2000 : 10000; /* minutes under valgrind */
    ft_problem *p = gen(FT_GEN_SCALE, n, 1);
    assert_int_equal(p->nops, n);
    ft_problem_free(p);
    p = gen(FT_GEN_SCALE, 1000, 2);
    assert_int_equal(p->nops, 1000);
    ft_problem_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_contest_family),
        cmocka_unit_test(test_small_family),
        cmocka_unit_test(test_bad_options),
        cmocka_unit_test(test_read_back),
        cmocka_unit_test(test_scale_fast),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
