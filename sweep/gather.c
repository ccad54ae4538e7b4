/* gather.c - a sweep's results over several databases: counting runs across them, merging task databases into the main one, seeding a task's database with runs already done. */
#include "fusetile/sweep_gather.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

/* Milliseconds a statement waits for another process's lock. */
#define BUSY_MS 30000

static int fail(ft_status *st, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(ft_status *st, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->msg, sizeof st->msg, fmt, ap);
    va_end(ap);
    st->code = code;
    return code;
}

/* An SQLite failure on file `path` (NULL: none) as FT_ENOMEM or FT_EINPUT. */
static int db_fail(ft_status *st, sqlite3 *c, const char *path, int rc)
{
    if (rc == SQLITE_NOMEM)
        return fail(st, FT_ENOMEM, "out of memory");
    const char *m = c ? sqlite3_errmsg(c) : sqlite3_errstr(rc);
    if (path)
        return fail(st, FT_EINPUT, "%s: %s", path, m);
    return fail(st, FT_EINPUT, "%s", m);
}

static int exec(sqlite3 *c, const char *sql, const char *path, ft_status *st)
{
    int rc = sqlite3_exec(c, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? FT_OK : db_fail(st, c, path, rc);
}

/* A "file:" URI naming path with ?mode=MODE: characters other than
 * [A-Za-z0-9/._~-] percent-escaped.  Malloc'd, NULL when out of memory. */
static char *file_uri(const char *path, const char *mode)
{
    size_t n = strlen(path);
    char *u = malloc(3 * n + strlen(mode) + 16);
    if (!u)
        return NULL;
    char *q = u + sprintf(u, "file:");
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || strchr("/._~-", *p))
            *q++ = (char)*p;
        else
            q += sprintf(q, "%%%02X", *p);
    }
    sprintf(q, "?mode=%s", mode);
    return u;
}

static int open_memory(sqlite3 **c, ft_status *st)
{
    int rc = sqlite3_open_v2(":memory:", c, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI, NULL);
    if (rc != SQLITE_OK) {
        rc = db_fail(st, *c, NULL, rc);
        sqlite3_close(*c);
        *c = NULL;
        return rc;
    }
    sqlite3_busy_timeout(*c, BUSY_MS);
    return FT_OK;
}

/* attach()'s result for a database without any table (not attached). */
#define ATTACHED_EMPTY (-1)

/* Attach `path` as schema `alias` (mode "ro" or "rw") and check that it is
 * a database with a runs table; ATTACHED_EMPTY (and not attached) when it
 * has no table at all.  A file only read is still attached
 * read-write when it is writable: a read-only connection to a WAL database
 * creates its -wal and -shm files and cannot remove them when it closes. */
static int attach(sqlite3 *c, const char *path, const char *alias, const char *mode, ft_status *st)
{
    if (strcmp(mode, "ro") == 0 && access(path, W_OK) == 0)
        mode = "rw";
    char *uri = file_uri(path, mode);
    if (!uri)
        return fail(st, FT_ENOMEM, "out of memory");
    char sql[128];
    snprintf(sql, sizeof sql, "ATTACH ?1 AS %s", alias);
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(c, sql, -1, &s, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(s, 1, uri, -1, SQLITE_STATIC);
        rc = sqlite3_step(s);
        rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
    }
    sqlite3_finalize(s);
    free(uri);
    if (rc != SQLITE_OK)
        return db_fail(st, c, path, rc);
    snprintf(sql, sizeof sql, "SELECT count(*) FROM %s.sqlite_master WHERE type = 'table' AND name = 'runs'", alias);
    rc = sqlite3_prepare_v2(c, sql, -1, &s, NULL);
    int found = 0;
    if (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        found = sqlite3_column_int(s, 0);
        rc = SQLITE_OK;
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_OK) {
        int code = db_fail(st, c, path, rc);
        snprintf(sql, sizeof sql, "DETACH %s", alias);
        sqlite3_exec(c, sql, NULL, NULL, NULL);
        return code;
    }
    if (!found) {
        /* no tables at all: a database its task created and never wrote */
        long long tables = -1;
        snprintf(sql, sizeof sql, "SELECT count(*) FROM %s.sqlite_master", alias);
        if (sqlite3_prepare_v2(c, sql, -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
            tables = sqlite3_column_int64(s, 0);
        sqlite3_finalize(s);
        snprintf(sql, sizeof sql, "DETACH %s", alias);
        sqlite3_exec(c, sql, NULL, NULL, NULL);
        if (tables == 0)
            return ATTACHED_EMPTY;
        return fail(st, FT_EINPUT, "%s: no runs table (not a sweep results database)", path);
    }
    return FT_OK;
}

static void detach(sqlite3 *c, const char *alias)
{
    char sql[64];
    snprintf(sql, sizeof sql, "DETACH %s", alias);
    sqlite3_exec(c, sql, NULL, NULL, NULL);
}

/* temp.exp(key, idx): the keys of sw's expansion (a key listed twice
 * keeps its first idx). */
static int load_expansion(sqlite3 *c, const ft_sweep *sw, ft_status *st)
{
    int rc = exec(c, "DROP TABLE IF EXISTS temp.exp; CREATE TEMP TABLE exp(key TEXT PRIMARY KEY, idx INTEGER NOT NULL);"
                     "BEGIN", NULL, st);
    if (rc)
        return rc;
    sqlite3_stmt *s = NULL;
    int r = sqlite3_prepare_v2(c, "INSERT OR IGNORE INTO temp.exp(key, idx) VALUES (?1, ?2)", -1, &s, NULL);
    for (int i = 0; r == SQLITE_OK && i < sw->nruns; i++) {
        sqlite3_bind_text(s, 1, sw->runs[i].key, -1, SQLITE_STATIC);
        sqlite3_bind_int(s, 2, sw->runs[i].idx);
        r = sqlite3_step(s);
        r = r == SQLITE_DONE ? SQLITE_OK : r;
        sqlite3_reset(s);
    }
    sqlite3_finalize(s);
    if (r != SQLITE_OK) {
        rc = db_fail(st, c, NULL, r);
        sqlite3_exec(c, "ROLLBACK", NULL, NULL, NULL);
        return rc;
    }
    return exec(c, "COMMIT", NULL, st);
}

/* One integer (or 64-bit count) from a query; text, when not NULL, gets
 * the second column (up to n bytes, "" for NULL). */
static int query_int(sqlite3 *c, const char *sql, long long *out, char *text, size_t n, ft_status *st)
{
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(c, sql, -1, &s, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        *out = sqlite3_column_int64(s, 0);
        if (text) {
            const unsigned char *t = sqlite3_column_text(s, 1);
            snprintf(text, n, "%s", t ? (const char *)t : "");
        }
        rc = SQLITE_OK;
    }
    sqlite3_finalize(s);
    return rc == SQLITE_OK ? FT_OK : db_fail(st, c, NULL, rc);
}

/* Add the keys of schema `alias`'s runs table to temp.seen(key, ok). */
static int see(sqlite3 *c, const char *alias, const char *path, ft_status *st)
{
    char sql[256];
    snprintf(sql, sizeof sql,
             "INSERT INTO temp.seen(key, ok) SELECT key, max(status = 'ok') FROM %s.runs WHERE key IS NOT NULL "
             "GROUP BY key ON CONFLICT(key) DO UPDATE SET ok = max(ok, excluded.ok)",
             alias);
    return exec(c, sql, path, st);
}

/* The counts of *t from temp.exp and temp.seen, with pending_by_slice. */
static int count(sqlite3 *c, int slice_m, int *pending_by_slice, ft_sweep_tally *t, ft_status *st)
{
    long long v;
    int rc;
    if ((rc = query_int(c, "SELECT count(*) FROM temp.exp", &v, NULL, 0, st)))
        return rc;
    t->total = (int)v;
    if ((rc = query_int(c, "SELECT count(*) FROM temp.exp JOIN temp.seen USING (key) WHERE ok", &v, NULL, 0, st)))
        return rc;
    t->ok = (int)v;
    if ((rc = query_int(c, "SELECT count(*) FROM temp.exp JOIN temp.seen USING (key) WHERE NOT ok", &v, NULL, 0, st)))
        return rc;
    t->failed = (int)v;
    t->pending = t->total - t->ok - t->failed;
    if ((rc = query_int(c, "SELECT count(*), min(key) FROM temp.seen WHERE key NOT IN (SELECT key FROM temp.exp)", &v,
                        t->foreign_key, sizeof t->foreign_key, st)))
        return rc;
    t->foreign = (int)v;
    if (slice_m <= 0 || !pending_by_slice)
        return FT_OK;
    for (int k = 0; k < slice_m; k++)
        pending_by_slice[k] = 0;
    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT idx %% %d, count(*) FROM temp.exp LEFT JOIN temp.seen USING (key) WHERE coalesce(ok, 0) = 0 "
             "GROUP BY 1",
             slice_m);
    sqlite3_stmt *s = NULL;
    int r = sqlite3_prepare_v2(c, sql, -1, &s, NULL);
    while (r == SQLITE_OK && (r = sqlite3_step(s)) == SQLITE_ROW) {
        int k = sqlite3_column_int(s, 0);
        if (k >= 0 && k < slice_m)
            pending_by_slice[k] = sqlite3_column_int(s, 1);
        r = SQLITE_OK;
    }
    sqlite3_finalize(s);
    return r == SQLITE_DONE ? FT_OK : db_fail(st, c, NULL, r);
}

/* temp.seen over the task databases (each attached read-only as "t"). */
static int see_tasks(sqlite3 *c, const char *const *task_dbs, int ntask, ft_sweep_tally *t, ft_status *st)
{
    for (int i = 0; i < ntask; i++) {
        int rc = attach(c, task_dbs[i], "t", "ro", st);
        if (rc == ATTACHED_EMPTY)
            continue;
        if (rc)
            return rc;
        rc = see(c, "t", task_dbs[i], st);
        detach(c, "t");
        if (rc)
            return rc;
        t->ndbs++;
    }
    return FT_OK;
}

static int main_exists(const char *main_db)
{
    return main_db && access(main_db, F_OK) == 0;
}

int ft_sweep_tally_dbs(const ft_sweep *sw, const char *main_db, const char *const *task_dbs, int ntask,
                       int slice_m, int *pending_by_slice, ft_sweep_tally *t, ft_status *st)
{
    ft_status_clear(st);
    memset(t, 0, sizeof *t);
    sqlite3 *c = NULL;
    int rc = open_memory(&c, st);
    if (rc)
        return rc;
    if (!(rc = load_expansion(c, sw, st)) &&
        !(rc = exec(c, "CREATE TEMP TABLE seen(key TEXT PRIMARY KEY, ok INTEGER NOT NULL)", NULL, st))) {
        if (main_exists(main_db) && (rc = attach(c, main_db, "m", "ro", st)) == ATTACHED_EMPTY) {
            rc = FT_OK;
        } else if (main_exists(main_db) && !rc) {
            long long v = 0;
            rc = see(c, "m", main_db, st);
            if (!rc)
                rc = query_int(c, "SELECT count(*) FROM m.runs", &v, NULL, 0, st);
            t->main_rows = t->main_rows_before = v;
            t->ndbs++;
            detach(c, "m");
        }
        if (!rc)
            rc = see_tasks(c, task_dbs, ntask, t, st);
        if (!rc)
            rc = count(c, slice_m, pending_by_slice, t, st);
    }
    sqlite3_close(c);
    return rc;
}

/* The columns that runs tables in schemas a and b share, as a quoted,
 * comma-separated list (malloc'd); FT_EINPUT when key or status is not
 * among them. */
static int shared_columns(sqlite3 *c, const char *a, const char *b, const char *path, char **out, ft_status *st)
{
    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT x.name FROM pragma_table_info('runs', '%s') AS x JOIN pragma_table_info('runs', '%s') AS y "
             "USING (name) ORDER BY x.cid",
             a, b);
    sqlite3_stmt *s = NULL;
    size_t len = 0, cap = 256;
    char *list = malloc(cap);
    int have_key = 0, have_status = 0;
    int r = list ? sqlite3_prepare_v2(c, sql, -1, &s, NULL) : SQLITE_NOMEM;
    if (list)
        list[0] = '\0';
    while (r == SQLITE_OK && (r = sqlite3_step(s)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(s, 0);
        r = SQLITE_OK;
        if (!name)
            continue;
        have_key |= strcmp(name, "key") == 0;
        have_status |= strcmp(name, "status") == 0;
        size_t need = len + 2 * strlen(name) + 4;
        if (need > cap) {
            while (need > cap)
                cap *= 2;
            char *grown = realloc(list, cap);
            if (!grown) {
                r = SQLITE_NOMEM;
                break;
            }
            list = grown;
        }
        if (len)
            list[len++] = ',';
        list[len++] = '"';
        for (const char *p = name; *p; p++) {
            if (*p == '"')
                list[len++] = '"';
            list[len++] = *p;
        }
        list[len++] = '"';
        list[len] = '\0';
    }
    sqlite3_finalize(s);
    if (r != SQLITE_DONE) {
        free(list);
        return db_fail(st, c, path, r);
    }
    if (!have_key || !have_status) {
        free(list);
        return fail(st, FT_EINPUT, "%s: its runs table has no %s column", path, have_key ? "status" : "key");
    }
    *out = list;
    return FT_OK;
}

/* Run `sql` (a printf format with %s for the column list twice) inside one
 * immediate transaction; *changes gets the rows it changed. */
static int copy_rows(sqlite3 *c, const char *fmt, const char *cols, const char *path, int *changes, ft_status *st)
{
    size_t n = strlen(fmt) + 2 * strlen(cols) + 1;
    char *sql = malloc(n);
    if (!sql)
        return fail(st, FT_ENOMEM, "out of memory");
    snprintf(sql, n, fmt, cols, cols);
    int rc = exec(c, "BEGIN IMMEDIATE", path, st);
    if (!rc) {
        rc = exec(c, sql, path, st);
        if (!rc && changes)
            *changes = sqlite3_changes(c);
        if (!rc)
            rc = exec(c, "COMMIT", path, st);
        else
            sqlite3_exec(c, "ROLLBACK", NULL, NULL, NULL);
    }
    free(sql);
    return rc;
}

/* Create `path` with the sweep schema when it does not exist or is empty
 * (0 bytes: created, never written). */
static int ensure_db(const char *path, const char *sweep_path, ft_status *st)
{
    struct stat sb;
    if (stat(path, &sb) == 0 && sb.st_size > 0)
        return FT_OK;
    ft_sweep_db *db = NULL;
    int rc = ft_sweep_db_open(path, sweep_path, &db, st);
    ft_sweep_db_close(db);
    return rc;
}

int ft_sweep_gather(const ft_sweep *sw, const char *main_db, const char *const *task_dbs, int ntask,
                    ft_sweep_tally *t, ft_status *st)
{
    ft_status_clear(st);
    memset(t, 0, sizeof *t);
    int rc = ensure_db(main_db, sw->path, st);
    if (rc)
        return rc;
    sqlite3 *c = NULL;
    char *uri = file_uri(main_db, "rw");
    if (!uri)
        return fail(st, FT_ENOMEM, "out of memory");
    int r = sqlite3_open_v2(uri, &c, SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI, NULL);
    free(uri);
    if (r != SQLITE_OK) {
        rc = db_fail(st, c, main_db, r);
        sqlite3_close(c);
        return rc;
    }
    sqlite3_busy_timeout(c, BUSY_MS);
    long long before = 0;
    if ((rc = query_int(c, "SELECT count(*) FROM main.runs", &before, NULL, 0, st))) {
        snprintf(st->msg, sizeof st->msg, "%s: %s", main_db, sqlite3_errmsg(c));
        goto out;
    }
    if ((rc = load_expansion(c, sw, st)))
        goto out;
    for (int i = 0; i < ntask && !rc; i++) {
        char *cols = NULL;
        if ((rc = attach(c, task_dbs[i], "t", "ro", st)) == ATTACHED_EMPTY) {
            rc = FT_OK;
            continue;
        }
        if (rc)
            break;
        rc = shared_columns(c, "main", "t", task_dbs[i], &cols, st);
        if (!rc)
            rc = copy_rows(c,
                           "INSERT OR REPLACE INTO main.runs(%s) SELECT %s FROM t.runs AS n "
                           "WHERE n.key IN (SELECT key FROM temp.exp) AND NOT EXISTS "
                           "(SELECT 1 FROM main.runs AS m WHERE m.key = n.key AND m.status = 'ok')",
                           cols, task_dbs[i], NULL, st);
        free(cols);
        detach(c, "t");
    }
    if (rc)
        goto out;
    /* the counts over everything, as ft_sweep_tally_dbs gives them */
    if ((rc = exec(c, "DROP TABLE IF EXISTS temp.seen; CREATE TEMP TABLE seen(key TEXT PRIMARY KEY, ok INTEGER NOT NULL)",
                   NULL, st)) ||
        (rc = see(c, "main", main_db, st)))
        goto out;
    t->ndbs = 1;
    if ((rc = see_tasks(c, task_dbs, ntask, t, st)) || (rc = count(c, 0, NULL, t, st)))
        goto out;
    t->main_rows_before = before;
    rc = query_int(c, "SELECT count(*) FROM main.runs", &t->main_rows, NULL, 0, st);
out:
    sqlite3_close(c);
    return rc;
}

int ft_sweep_seed_task(const ft_sweep *sw, const char *main_db, const char *task_db, int k, int slice_m,
                       int *copied, ft_status *st)
{
    ft_status_clear(st);
    if (copied)
        *copied = 0;
    if (slice_m < 1 || k < 0 || k >= slice_m)
        return fail(st, FT_EINPUT, "slice %d/%d: K must be from 0 to M-1", k, slice_m);
    int rc = ensure_db(task_db, sw->path, st);
    if (rc || !main_exists(main_db))
        return rc;
    sqlite3 *c = NULL;
    if ((rc = open_memory(&c, st)))
        return rc;
    char *cols = NULL;
    if (!(rc = load_expansion(c, sw, st)) && (rc = attach(c, main_db, "m", "ro", st)) == ATTACHED_EMPTY) {
        rc = FT_OK;
    } else if (!rc) {
        if (!(rc = attach(c, task_db, "t", "rw", st))) {
            if (!(rc = shared_columns(c, "t", "m", task_db, &cols, st))) {
                char fmt[512];
                snprintf(fmt, sizeof fmt,
                         "INSERT OR REPLACE INTO t.runs(%%s) SELECT %%s FROM m.runs AS n WHERE n.status = 'ok' "
                         "AND n.key IN (SELECT key FROM temp.exp WHERE idx %%%% %d = %d) AND NOT EXISTS "
                         "(SELECT 1 FROM t.runs AS x WHERE x.key = n.key AND x.status = 'ok')",
                         slice_m, k);
                rc = copy_rows(c, fmt, cols, task_db, copied, st);
            }
            detach(c, "t");
        } else if (rc == ATTACHED_EMPTY) {
            rc = fail(st, FT_EINPUT, "%s: no runs table (not a sweep results database)", task_db);
        }
        detach(c, "m");
    }
    free(cols);
    sqlite3_close(c);
    return rc;
}

int ft_sweep_meta_get(const char *db_path, const char *name, char **value, ft_status *st)
{
    ft_status_clear(st);
    *value = NULL;
    sqlite3 *c = NULL;
    char *uri = file_uri(db_path, "ro");
    if (!uri)
        return fail(st, FT_ENOMEM, "out of memory");
    int r = sqlite3_open_v2(uri, &c, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
    free(uri);
    sqlite3_stmt *s = NULL;
    if (r == SQLITE_OK)
        r = sqlite3_prepare_v2(c, "SELECT value FROM meta WHERE key = ?1", -1, &s, NULL);
    if (r == SQLITE_OK) {
        sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
        r = sqlite3_step(s);
        if (r == SQLITE_ROW) {
            const unsigned char *t = sqlite3_column_text(s, 0);
            if (t && !(*value = strdup((const char *)t)))
                r = SQLITE_NOMEM;
            else
                r = SQLITE_DONE;
        }
    }
    int rc = r == SQLITE_DONE ? FT_OK : db_fail(st, c, db_path, r);
    sqlite3_finalize(s);
    sqlite3_close(c);
    return rc;
}
