/* test_sweep_db.c - the sweep database (insert, replace on the key, done only when ok, schema) and one run executed in-process (totals, bounds, overrides, failures). */
#include "ft_testutil.h"

#include <sqlite3.h>
#include <unistd.h>

#include "fusetile/sim.h"
#include "fusetile/sweep.h"

typedef struct fixture {
    char dir[64];
    char db[128];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f || ftt_tmpdir(f->dir, sizeof f->dir, "ft-sweepdb")) {
        free(f);
        return -1;
    }
    snprintf(f->db, sizeof f->db, "%s/r.db", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    int rc = ftt_rmtree(f->dir);
    free(f);
    return rc;
}

/* A run of vector ex1A with no overrides. */
static ft_sweep_run vector_run(char *key)
{
    ft_sweep_run r;
    memset(&r, 0, sizeof r);
    r.problem = r.problem_path = (char *)ftt_src_path("tests/vectors/ex1A.problem.json");
    r.model = FT_COMPUTE_NATIVE;
    r.strategy = FT_STRATEGY_SEARCH;
    r.time_limit = 2;
    r.seed = 1;
    r.key = key;
    return r;
}

/* One number of the database: SELECT ... (first column of the first row). */
static double scalar(const char *db, const char *sql)
{
    sqlite3 *h;
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &q, NULL), SQLITE_OK);
    double x = sqlite3_step(q) == SQLITE_ROW ? sqlite3_column_double(q, 0) : NAN;
    sqlite3_finalize(q);
    sqlite3_close(h);
    return x;
}

static void test_sweep_db_insert_replace_done(void **state)
{
    fixture *f = *state;
    ft_sweep_db *db;
    ft_status st;
    assert_int_equal(ft_sweep_db_open(f->db, "s.cfg", &db, &st), FT_OK);
    ft_sweep_run r = vector_run("k1");
    ft_sweep_result res;
    memset(&res, 0, sizeof res);
    res.capacity = res.bandwidth = res.total = res.lower_bound = res.capacity_bound = res.ratio = res.sim_total = NAN;
    res.agreement = -1;
    snprintf(res.error, sizeof res.error, "boom");
    assert_int_equal(ft_sweep_db_done(db, "k1", &st), 0);          /* no row */
    assert_int_equal(ft_sweep_db_put(db, "s.cfg", &r, &res, "h:1", &st), FT_OK);
    assert_int_equal(ft_sweep_db_done(db, "k1", &st), 0);          /* a failed row is not done */
    res.ok = 1;
    res.total = 10;
    res.error[0] = '\0';
    assert_int_equal(ft_sweep_db_put(db, "s.cfg", &r, &res, "h:1", &st), FT_OK);
    assert_int_equal(ft_sweep_db_done(db, "k1", &st), 1);
    assert_int_equal(ft_sweep_db_done(db, "k2", &st), 0);
    ft_sweep_db_close(db);
    assert_true(scalar(f->db, "SELECT count(*) FROM runs") == 1);   /* replaced, not added */
    assert_true(scalar(f->db, "SELECT total FROM runs WHERE key = 'k1' AND status = 'ok' AND error IS NULL") == 10);
    assert_true(scalar(f->db, "SELECT value FROM meta WHERE key = 'schema_version'") == FT_SWEEP_SCHEMA_VERSION);
    /* reopening keeps the rows */
    assert_int_equal(ft_sweep_db_open(f->db, "other.cfg", &db, &st), FT_OK);
    assert_int_equal(ft_sweep_db_done(db, "k1", &st), 1);
    ft_sweep_db_close(db);
}

static void test_sweep_db_open_errors(void **state)
{
    fixture *f = *state;
    ft_sweep_db *db = NULL;
    ft_status st;
    char path[160];
    snprintf(path, sizeof path, "%s/no/dir/x.db", f->dir);
    assert_int_equal(ft_sweep_db_open(path, NULL, &db, &st), FT_EINPUT);
    assert_null(db);
    assert_non_null(strstr(st.msg, "x.db"));
    snprintf(path, sizeof path, "%s/junk.db", f->dir);
    FILE *fp = fopen(path, "w");
    fputs("this is not an SQLite database, only text long enough for a header\n", fp);
    fclose(fp);
    assert_int_equal(ft_sweep_db_open(path, NULL, &db, &st), FT_EINPUT);
    assert_null(db);
    /* the output rules (include/fusetile/io.h): a database is a regular file */
    assert_int_equal(ft_sweep_db_open("/dev/null", NULL, &db, &st), FT_EINPUT);
    assert_null(db);
    assert_string_equal(st.msg, "/dev/null: is a character device; refusing to write to it (a database must be a regular file)");
    assert_int_equal(ft_sweep_db_open(f->dir, NULL, &db, &st), FT_EINPUT);
    assert_non_null(strstr(st.msg, "cannot write: Is a directory"));
}

static void test_sweep_run_exec_vector(void **state)
{
    (void)state;
    ft_sweep_run r = vector_run("k");
    ft_sweep_result res;
    ft_status st;
    ft_sim *sim = NULL;
    r.simulate = 1;
    assert_int_equal(ft_sweep_run_exec(&r, &sim, &res, &st), FT_OK);
    assert_true(res.ok);
    assert_true(res.total >= res.capacity_bound && res.capacity_bound >= res.lower_bound && res.lower_bound > 0);
    assert_true(fabs(res.ratio - res.total / res.lower_bound) < 1e-12);
    assert_true(res.subgraphs >= 1);
    assert_int_equal(res.agreement, 1);   /* the contest machine: exact */
    assert_true(res.sim_total == res.total);
    /* the same run again: the same total */
    ft_sweep_result again;
    assert_int_equal(ft_sweep_run_exec(&r, &sim, &again, &st), FT_OK);
    assert_true(again.total == res.total);
    ft_sim_free(sim);
}

static void test_sweep_run_exec_overrides_and_failure(void **state)
{
    (void)state;
    ft_sweep_run r = vector_run("k");
    ft_sweep_result res;
    ft_status st;
    r.capacity = 12345;
    r.bandwidth = 7;
    r.native_w = 64;
    r.native_h = 32;
    assert_int_equal(ft_sweep_run_exec(&r, NULL, &res, &st), FT_OK);
    assert_true(res.capacity == 12345 && res.bandwidth == 7);
    assert_string_equal(res.native, "64x32x64");   /* WxH: k = w */
    r.capacity = 1;                                /* nothing fits */
    assert_int_not_equal(ft_sweep_run_exec(&r, NULL, &res, &st), FT_OK);
    assert_false(res.ok);
    assert_non_null(strstr(res.error, "no valid schedule"));
    r.capacity = 0;
    r.problem_path = "/nonexistent/p.json";
    assert_int_equal(ft_sweep_run_exec(&r, NULL, &res, &st), FT_EINPUT);
    assert_non_null(strstr(res.error, "/nonexistent/p.json"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_sweep_db_insert_replace_done, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sweep_db_open_errors, setup, teardown),
        cmocka_unit_test(test_sweep_run_exec_vector),
        cmocka_unit_test(test_sweep_run_exec_overrides_and_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
