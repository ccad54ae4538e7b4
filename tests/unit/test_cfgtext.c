/* test_cfgtext.c - cmocka tests of ft_cfg_read (sched/core/cfgtext.c): libconfig texts refused before libconfig 1.5 leaks on them or drops part of them, each with its FILE:LINE message, and valid texts read unchanged (run under valgrind and the sanitizers, the refusals also show that nothing leaks). */
#include "ft_testutil.h"
#include "cost/cost.h"
#include "fusetile/target.h"

#include <libconfig.h>

/* Read text as file "t.cfg"; returns the code, with the message in msg. */
static int cfg_read(const char *text, char *msg, size_t n)
{
    config_t cfg;
    config_init(&cfg);
    ft_status st;
    ft_status_clear(&st);
    int rc = ft_cfg_read(&cfg, text, "t.cfg", &st);
    config_destroy(&cfg);
    snprintf(msg, n, "%s", st.msg);
    return rc;
}

/* Expect text refused with exactly "t.cfg:LINE: rest". */
static void expect_refused(const char *text, int line, const char *rest)
{
    char msg[1024], want[1024];
    int rc = cfg_read(text, msg, sizeof msg);
    if (rc != FT_EINPUT)
        fail_msg("accepted (rc %d): %s", rc, text);
    snprintf(want, sizeof want, "t.cfg:%d: %s", line, rest);
    assert_string_equal(msg, want);
}

static void expect_read(const char *text)
{
    char msg[1024];
    int rc = cfg_read(text, msg, sizeof msg);
    if (rc != FT_OK)
        fail_msg("refused: %s: %s", text, msg);
}

#define MISPLACED(s) "syntax error: unexpected string \"" s "\" (a string stands only as a value, in a list or in an " \
                     "array) (not libconfig syntax)"

/* Every place libconfig's grammar has no string: each is refused with the
 * line of the string (libconfig 1.5 would leak the string's buffer). */
static void test_cfgtext_misplaced_strings(void **state)
{
    (void)state;
    expect_refused("\"x\" = 1;\n", 1, MISPLACED("x"));
    expect_refused("a \"x\";\n", 1, MISPLACED("x"));
    expect_refused("a = 1 \"x\";\n", 1, MISPLACED("x"));
    expect_refused("a = 1;\n\"x\"\n", 2, MISPLACED("x"));
    expect_refused("a = {\n  \"x\" };\n", 2, MISPLACED("x"));
    expect_refused("a = { b = 1, \"x\" };\n", 1, MISPLACED("x"));
    expect_refused("a = 1, \"x\" = 2;\n", 1, MISPLACED("x"));
    expect_refused("a = (1) \"x\";\n", 1, MISPLACED("x"));
    expect_refused("a = [1] \"x\";\n", 1, MISPLACED("x"));
    expect_refused("a = { b = 1; } \"x\";\n", 1, MISPLACED("x"));
    expect_refused("a = ( { b = 1; \"x\" } );\n", 1, MISPLACED("x"));
    /* JSON is the usual way to get there */
    expect_refused("{\"name\": \"json\"}\n", 1, MISPLACED("name"));
    /* the literal is quoted short and printable */
    expect_refused("a b\"0123456789012345678901234567890123456789\";\n", 1,
                   MISPLACED("01234567890123456789012345678901..."));
    expect_refused("a \"t\\\"ab\tc\";\n", 1, MISPLACED("t??ab?c"));
}

/* Everywhere a string may stand, with escapes and concatenation, the text
 * reads as libconfig reads it. */
static void test_cfgtext_strings_read(void **state)
{
    (void)state;
    const char *text = "a = \"x\"; b : \"y\"\n"
                       "c = [\"p\", \"q\"]; d = (\"r\", 1, { e = \"s\"; }, (\"t\"));\n"
                       "f = \"a\" \"b\"\n   \"c\"; g = \"q\\\"x\\\\\"; h = \"\\x41#//\";\n"
                       "i = \"/* no comment */\";\n";
    config_t cfg;
    config_init(&cfg);
    ft_status st;
    assert_int_equal(ft_cfg_read(&cfg, text, "t.cfg", &st), FT_OK);
    const char *v = NULL;
    assert_true(config_lookup_string(&cfg, "f", &v));
    assert_string_equal(v, "abc");
    assert_true(config_lookup_string(&cfg, "g", &v));
    assert_string_equal(v, "q\"x\\");
    assert_true(config_lookup_string(&cfg, "h", &v));
    assert_string_equal(v, "A#//");
    assert_true(config_lookup_string(&cfg, "i", &v));
    assert_string_equal(v, "/* no comment */");
    assert_true(config_lookup_string(&cfg, "d.[2].e", &v));
    assert_string_equal(v, "s");
    config_destroy(&cfg);
    /* quotes inside comments are no strings */
    expect_read("# \"x\n// \"y\n/* \"z\n */ a = 1;\n");
}

/* What libconfig would drop without a word: a string or a block comment
 * left open at the end of the text. */
static void test_cfgtext_unterminated(void **state)
{
    (void)state;
    expect_refused("a = \"x\"\n  \"y;\n", 2,
                   "unterminated string: no closing \" before the end of the file (not libconfig syntax)");
    expect_refused("a = \"x\\\"", 1,
                   "unterminated string: no closing \" before the end of the file (not libconfig syntax)");
    expect_refused("a = 1;\n\n/* b = 2;\n", 3,
                   "unterminated comment: no closing */ before the end of the file (not libconfig syntax)");
}

/* @include at the start of a line (after blanks) is refused; elsewhere it
 * is no directive (in a string) or libconfig's syntax error. */
static void test_cfgtext_include(void **state)
{
    (void)state;
    expect_refused("@include \"/dev/zero\"\n", 1, "@include is not supported: write the settings in this file");
    expect_refused("a = 1;\n \t@include \"x.cfg\"\n", 2, "@include is not supported: write the settings in this file");
    expect_read("a = \"@include \\\"x\\\"\";\n");
    expect_refused("a = 1; @include \"x.cfg\"\n", 1, "syntax error (not libconfig syntax)");
}

/* FT_CFG_MAX_DEPTH levels of nesting read; one more is refused. */
static void test_cfgtext_depth(void **state)
{
    (void)state;
    char text[4 * FT_CFG_MAX_DEPTH + 64];
    for (int extra = 0; extra <= 1; extra++) {
        int d = FT_CFG_MAX_DEPTH + extra, n = 0;
        n += sprintf(text + n, "a = ");
        for (int i = 0; i < d; i++)
            text[n++] = '(';
        n += sprintf(text + n, "\"x\"");
        for (int i = 0; i < d; i++)
            text[n++] = ')';
        sprintf(text + n, ";\n");
        if (!extra) {
            expect_read(text);
        } else {
            char want[128];
            snprintf(want, sizeof want, "groups, lists and arrays nested more than %d deep", FT_CFG_MAX_DEPTH);
            expect_refused(text, 1, want);
        }
    }
}

/* libconfig's own errors keep their message; a comment that ends the text
 * without a newline reads (libconfig alone calls it a syntax error). */
static void test_cfgtext_libconfig_errors(void **state)
{
    (void)state;
    expect_refused("a = 1;\nb = = 2;\n", 2, "syntax error (not libconfig syntax)");
    expect_refused("a = 1;\nb = ?\"x\";\n", 2, "syntax error (not libconfig syntax)");
    expect_refused("a = 1;\na = 2;\n", 2, "duplicate setting name (not libconfig syntax)");
    expect_read("a = 1; # the end");
    expect_read("a = 1; // the end");
    expect_read("");
}

/* Target and sweep files go through it: the loaders' messages name the
 * file. */
static void test_cfgtext_target_parse(void **state)
{
    (void)state;
    ft_target *t = (ft_target *)&t;
    ft_status st;
    assert_int_equal(ft_target_parse("name = \"x\";\ncontest = = true;\n", "mem.cfg", &t, &st), FT_EINPUT);
    assert_null(t);
    assert_string_equal(st.msg, "mem.cfg:2: syntax error (not libconfig syntax)");
    assert_int_equal(ft_target_parse("name = \"x\";\ncontest = true \"y\";\n", "mem.cfg", &t, &st), FT_EINPUT);
    assert_string_equal(st.msg, "mem.cfg:2: " MISPLACED("y"));
    assert_int_equal(ft_target_parse("name = \"x\"; contest = true; # no newline", "mem.cfg", &t, &st), FT_OK);
    assert_non_null(t);
    assert_string_equal(t->path, "mem.cfg");
    assert_string_equal(t->name, "x");
    assert_true(t->contest);
    ft_target_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cfgtext_misplaced_strings),
        cmocka_unit_test(test_cfgtext_strings_read),
        cmocka_unit_test(test_cfgtext_unterminated),
        cmocka_unit_test(test_cfgtext_include),
        cmocka_unit_test(test_cfgtext_depth),
        cmocka_unit_test(test_cfgtext_libconfig_errors),
        cmocka_unit_test(test_cfgtext_target_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
