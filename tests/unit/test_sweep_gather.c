/* test_sweep_gather.c - results over a main and per-task databases (sweep/gather.c): counts across them, the merge (ok never replaced by failed, idempotent, keys outside the sweep left out), seeding a task's database, empty and foreign files. */
#include "ft_testutil.h"
#include "sweep_runs.h"

#include <sqlite3.h>
#include <unistd.h>

#include "fusetile/sweep.h"
#include "fusetile/sweep_gather.h"

#define NKEYS 4

typedef struct fixture {
    char dir[64];
    char main_db[128], a[128], b[128];
    ft_sweep sw;
    ft_sweep_run runs[NKEYS];
    char keys[NKEYS][FTT_SWEEP_KEY];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f || ftt_tmpdir(f->dir, sizeof f->dir, "ft-gather")) {
        free(f);
        return -1;
    }
    snprintf(f->main_db, sizeof f->main_db, "%s/main.db", f->dir);
    snprintf(f->a, sizeof f->a, "%s/task-0.db", f->dir);
    snprintf(f->b, sizeof f->b, "%s/task-1.db", f->dir);
    ftt_sweep_runs(&f->sw, f->runs, f->keys, NKEYS);
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

/* Write run `key` (an extra key when not in the sweep) to database path:
 * ok with this total, or failed when total < 0. */
static void put(fixture *f, const char *path, const char *key, double total)
{
    ft_sweep_db *db;
    ft_status st;
    assert_int_equal(ft_sweep_db_open(path, "s.cfg", &db, &st), FT_OK);
    ft_sweep_run r = f->runs[0];
    r.key = (char *)key;
    ft_sweep_result res;
    memset(&res, 0, sizeof res);
    res.capacity = res.bandwidth = res.lower_bound = res.capacity_bound = res.ratio = res.sim_total = NAN;
    res.agreement = -1;
    res.ok = total >= 0;
    res.total = total >= 0 ? total : NAN;
    if (!res.ok)
        snprintf(res.error, sizeof res.error, "boom");
    assert_int_equal(ft_sweep_db_put(db, "s.cfg", &r, &res, "h:1", &st), FT_OK);
    ft_sweep_db_close(db);
}

/* One text value of the database (first column of the first row), into buf. */
static const char *text(const char *db, const char *sql, char *buf, size_t n)
{
    sqlite3 *h;
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &q, NULL), SQLITE_OK);
    buf[0] = '\0';
    if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_text(q, 0))
        snprintf(buf, n, "%s", (const char *)sqlite3_column_text(q, 0));
    sqlite3_finalize(q);
    sqlite3_close(h);
    return buf;
}

static void test_sweep_gather_ok_wins_idempotent(void **state)
{
    fixture *f = *state;
    put(f, f->main_db, "k0", -1);   /* failed earlier, done since in task 0 */
    put(f, f->a, "k0", 1);
    put(f, f->a, "k2", -1);
    put(f, f->b, "k1", 2);
    put(f, f->b, "k2", 3);
    const char *tasks[] = {f->a, f->b};
    ft_sweep_tally t;
    ft_status st;
    for (int pass = 0; pass < 2; pass++) {
        assert_int_equal(ft_sweep_gather(&f->sw, f->main_db, tasks, 2, &t, &st), FT_OK);
        assert_int_equal(t.total, 4);
        assert_int_equal(t.ok, 3);
        assert_int_equal(t.failed, 0);
        assert_int_equal(t.pending, 1);
        assert_int_equal(t.foreign, 0);
        assert_int_equal(t.main_rows, 3);
        assert_int_equal(t.main_rows_before, pass ? 3 : 1);
        char b[64];
        assert_string_equal(text(f->main_db, "SELECT group_concat(key || '=' || status || ':' || total) FROM "
                                             "(SELECT * FROM runs ORDER BY key)", b, sizeof b),
                            "k0=ok:1.0,k1=ok:2.0,k2=ok:3.0");
    }
    /* the other order: task 1's ok k2 first, then task 0's failed one does not replace it */
    const char *reversed[] = {f->b, f->a};
    assert_int_equal(ft_sweep_gather(&f->sw, f->main_db, reversed, 2, &t, &st), FT_OK);
    assert_int_equal(t.ok, 3);
}

static void test_sweep_gather_failed_counts_and_slices(void **state)
{
    fixture *f = *state;
    put(f, f->a, "k0", 1);
    put(f, f->a, "k2", -1);
    put(f, f->b, "k1", 2);
    const char *tasks[] = {f->a, f->b};
    ft_sweep_tally t;
    ft_status st;
    int pending[2] = {-1, -1};
    /* no main database yet: counted without it, nothing created */
    assert_int_equal(ft_sweep_tally_dbs(&f->sw, f->main_db, tasks, 2, 2, pending, &t, &st), FT_OK);
    assert_int_equal(access(f->main_db, F_OK), -1);
    assert_int_equal(t.ndbs, 2);
    assert_int_equal(t.ok, 2);
    assert_int_equal(t.failed, 1);
    assert_int_equal(t.pending, 1);
    assert_int_equal(pending[0], 1);   /* k2 failed */
    assert_int_equal(pending[1], 1);   /* k3 missing */
}

static void test_sweep_gather_foreign_left_out(void **state)
{
    fixture *f = *state;
    put(f, f->a, "k0", 1);
    put(f, f->a, "old", 5);
    const char *tasks[] = {f->a};
    ft_sweep_tally t;
    ft_status st;
    assert_int_equal(ft_sweep_gather(&f->sw, f->main_db, tasks, 1, &t, &st), FT_OK);
    assert_int_equal(t.foreign, 1);
    assert_string_equal(t.foreign_key, "old");
    assert_int_equal(t.main_rows, 1);
}

static void test_sweep_seed_task_copies_slice(void **state)
{
    fixture *f = *state;
    for (int i = 0; i < NKEYS; i++)
        put(f, f->main_db, f->keys[i], i + 1);
    put(f, f->main_db, "k2", -1);
    ft_status st;
    int copied = -1;
    assert_int_equal(ft_sweep_seed_task(&f->sw, f->main_db, f->b, 1, 2, &copied, &st), FT_OK);
    assert_int_equal(copied, 2);   /* k1 and k3 */
    assert_int_equal(ft_sweep_seed_task(&f->sw, f->main_db, f->b, 1, 2, &copied, &st), FT_OK);
    assert_int_equal(copied, 0);
    assert_int_equal(ft_sweep_seed_task(&f->sw, f->main_db, f->a, 0, 2, &copied, &st), FT_OK);
    assert_int_equal(copied, 1);   /* k0; k2 failed */
    char b[64];
    assert_string_equal(text(f->a, "SELECT group_concat(key) FROM runs", b, sizeof b), "k0");
    /* no main database: the task's database is created, nothing copied */
    char c[160];
    snprintf(c, sizeof c, "%s/task-5.db", f->dir);
    assert_int_equal(ft_sweep_seed_task(&f->sw, NULL, c, 0, 1, &copied, &st), FT_OK);
    assert_int_equal(copied, 0);
    assert_int_equal(access(c, F_OK), 0);
    assert_int_equal(ft_sweep_seed_task(&f->sw, NULL, c, 2, 2, &copied, &st), FT_EINPUT);
}

static void test_sweep_gather_bad_files(void **state)
{
    fixture *f = *state;
    ft_sweep_tally t;
    ft_status st;
    const char *tasks[] = {f->a};
    /* an empty file: a database with no table, counted as empty */
    FILE *fp = fopen(f->a, "w");
    assert_non_null(fp);
    fclose(fp);
    assert_int_equal(ft_sweep_tally_dbs(&f->sw, NULL, tasks, 1, 0, NULL, &t, &st), FT_OK);
    assert_int_equal(t.pending, 4);
    assert_int_equal(ft_sweep_gather(&f->sw, f->main_db, tasks, 1, &t, &st), FT_OK);
    /* text: not a database */
    fp = fopen(f->a, "w");
    assert_non_null(fp);
    fputs("not a database, not at all, no\n", fp);
    fclose(fp);
    assert_int_equal(ft_sweep_tally_dbs(&f->sw, NULL, tasks, 1, 0, NULL, &t, &st), FT_EINPUT);
    assert_non_null(strstr(st.msg, "task-0.db: file is not a database"));
    assert_int_equal(ft_sweep_gather(&f->sw, f->main_db, tasks, 1, &t, &st), FT_EINPUT);
    assert_non_null(strstr(st.msg, "task-0.db: file is not a database"));
    /* a database of something else */
    unlink(f->a);
    sqlite3 *h;
    assert_int_equal(sqlite3_open(f->a, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, "CREATE TABLE x(a)", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(h);
    assert_int_equal(ft_sweep_tally_dbs(&f->sw, NULL, tasks, 1, 0, NULL, &t, &st), FT_EINPUT);
    assert_non_null(strstr(st.msg, "task-0.db: no runs table"));
    /* a missing task database */
    unlink(f->a);
    assert_int_equal(ft_sweep_gather(&f->sw, f->main_db, tasks, 1, &t, &st), FT_EINPUT);
    assert_non_null(strstr(st.msg, "task-0.db: unable to open"));
    /* meta: the sweep recorded, a missing entry */
    char *v = NULL;
    assert_int_equal(ft_sweep_meta_get(f->main_db, "sweep", &v, &st), FT_OK);
    assert_string_equal(v, "s.cfg");
    free(v);
    assert_int_equal(ft_sweep_meta_get(f->main_db, "nosuch", &v, &st), FT_OK);
    assert_null(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_sweep_gather_ok_wins_idempotent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sweep_gather_failed_counts_and_slices, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sweep_gather_foreign_left_out, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sweep_seed_task_copies_slice, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sweep_gather_bad_files, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
