/* test_target_find.c - cmocka tests of ft_target_find and ft_target_names: a shipped target by name from this build tree (the source tree's targets/), the caller's search path first, and the error paths: an empty name, an unknown one, an output buffer too small, a names list cut with ", ...". */
#include "ft_testutil.h"
#include "fusetile/target.h"

#include <limits.h>
#include <unistd.h>

/* The source tree's targets/NAME into buf. */
static const char *shipped(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/targets/%s", FT_SRCDIR, name);
    return buf;
}

static void test_find_by_name(void **state)
{
    (void)state;
    char out[PATH_MAX], want[PATH_MAX];
    ft_status st;
    assert_int_equal(ft_target_find("kpu", NULL, out, sizeof out, &st), FT_OK);
    assert_string_equal(out, shipped(want, sizeof want, "kpu.cfg"));
    assert_int_equal(ft_target_find("gpu-h100.cfg", "", out, sizeof out, &st), FT_OK);
    assert_string_equal(out, shipped(want, sizeof want, "gpu-h100.cfg"));
    /* a path is taken as given */
    assert_int_equal(ft_target_find(want, NULL, out, sizeof out, &st), FT_OK);
    assert_string_equal(out, want);
}

static void test_find_search_path_first(void **state)
{
    (void)state;
    char dir[] = "/tmp/ft-test-find.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[PATH_MAX], sp[PATH_MAX + 32], out[PATH_MAX];
    snprintf(path, sizeof path, "%s/kpu", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("name = \"x\";\ncontest = true;\n", f);
    fclose(f);
    snprintf(sp, sizeof sp, "/nonexistent::%s", dir);
    ft_status st;
    assert_int_equal(ft_target_find("kpu", sp, out, sizeof out, &st), FT_OK);
    assert_string_equal(out, path);
    unlink(path);
    rmdir(dir);
}

static void test_find_errors(void **state)
{
    (void)state;
    char out[PATH_MAX];
    ft_status st;
    assert_int_equal(ft_target_find("", NULL, out, sizeof out, &st), FT_EINPUT);
    assert_string_equal(st.msg, "target: the name is empty; give a path or a name");
    assert_int_equal(ft_target_find(NULL, NULL, out, sizeof out, &st), FT_EINPUT);
    assert_int_equal(ft_target_find("kpu2", "/nonexistent", out, sizeof out, &st), FT_EINPUT);
    char want[PATH_MAX + 512];
    snprintf(want, sizeof want,
             "kpu2: no such file or shipped target (looked in ./, /nonexistent, %s/targets); shipped targets: contest, "
             "example, gpu-h100, gpu-h100-sm, gpu-h200, kpu, kpu-chip, tpu-v5e, tpu-v5e-chip; give a path or a name",
             FT_SRCDIR);
    assert_string_equal(st.msg, want);
    assert_string_equal(out, "");
    /* found, but the path does not fit: an error, not a cut path */
    char small[8];
    assert_int_equal(ft_target_find("kpu", NULL, small, sizeof small, &st), FT_EINPUT);
    assert_string_equal(st.msg, "kpu: the path of the target is longer than 7 bytes");
    assert_string_equal(small, "");
}

static void test_names(void **state)
{
    (void)state;
    char all[512];
    assert_int_equal(ft_target_names(all, sizeof all), 0);
    assert_string_equal(all, "contest, example, gpu-h100, gpu-h100-sm, gpu-h200, kpu, kpu-chip, tpu-v5e, tpu-v5e-chip");
    /* a list that does not fit ends in ", ..." */
    char cut[24];
    assert_int_equal(ft_target_names(cut, sizeof cut), -1);
    assert_string_equal(cut, "contest, example, ...");
    char none[1];
    assert_int_equal(ft_target_names(none, sizeof none), -1);
    assert_string_equal(none, "");
    assert_int_equal(ft_target_names(none, 0), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_find_by_name),
        cmocka_unit_test(test_find_search_path_first),
        cmocka_unit_test(test_find_errors),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
