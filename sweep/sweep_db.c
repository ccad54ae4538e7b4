/* sweep_db.c - the sweep results database (SQLite, WAL): schema, "already done" lookups, one transaction per run row. */
#define _POSIX_C_SOURCE 200809L
#include "fusetile/sweep.h"

#include "fusetile/io.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

/* How long a writer waits for another's transaction before failing (ms). */
#define BUSY_TIMEOUT_MS 60000

struct ft_sweep_db {
    sqlite3 *db;
    char *path;
    sqlite3_stmt *done;  /* SELECT status ... WHERE key = ? */
    sqlite3_stmt *put;   /* INSERT OR REPLACE INTO runs ... */
};

static const char schema[] =
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);\n"
    "CREATE TABLE IF NOT EXISTS runs(\n"
    "  key TEXT PRIMARY KEY, sweep TEXT, idx INTEGER, problem TEXT, target TEXT,\n"
    "  capacity REAL, bandwidth REAL, native TEXT, units INTEGER, compute_model TEXT, strategy TEXT,\n"
    "  time_limit REAL, seed INTEGER, simulate INTEGER, status TEXT, error TEXT,\n"
    "  total REAL, lower_bound REAL, capacity_bound REAL, ratio REAL, subgraphs INTEGER,\n"
    "  sim_total REAL, agreement TEXT, wall_s REAL, worker TEXT, finished_at TEXT,\n"
    "  energy_j REAL, power_w REAL);\n";

/* Schema 1 (before the energy columns) to 2: the columns added to a runs
 * table that lacks them; the rows already there keep NULL. */
static const char *const added_columns[][2] = {{"energy_j", "REAL"}, {"power_w", "REAL"}};

static const char put_sql[] =
    "INSERT OR REPLACE INTO runs(key, sweep, idx, problem, target, capacity, bandwidth, native, units, compute_model,"
    " strategy, time_limit, seed, simulate, status, error, total, lower_bound, capacity_bound, ratio, subgraphs,"
    " sim_total, agreement, wall_s, worker, finished_at, energy_j, power_w)"
    " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23,"
    " ?24, ?25, ?26, ?27, ?28)";

static int db_fail(ft_sweep_db *h, ft_status *st, const char *what)
{
    st->code = FT_EINPUT;
    snprintf(st->msg, sizeof st->msg, "%s: %s: %s", h->path, what, h->db ? sqlite3_errmsg(h->db) : "out of memory");
    return FT_EINPUT;
}

void ft_sweep_db_close(ft_sweep_db *db)
{
    if (!db)
        return;
    sqlite3_finalize(db->done);
    sqlite3_finalize(db->put);
    sqlite3_close(db->db);
    free(db->path);
    free(db);
}

/* Run sql (no results); FT_OK or the error in st. */
static int exec(ft_sweep_db *h, const char *sql, const char *what, ft_status *st)
{
    return sqlite3_exec(h->db, sql, NULL, NULL, NULL) == SQLITE_OK ? FT_OK : db_fail(h, st, what);
}

/* meta.schema_version: refuse a newer one. */
static int check_version(ft_sweep_db *h, ft_status *st)
{
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(h->db, "SELECT value FROM meta WHERE key = 'schema_version'", -1, &q, NULL) != SQLITE_OK)
        return db_fail(h, st, "reading meta");
    int rc = FT_OK;
    if (sqlite3_step(q) == SQLITE_ROW && atoi((const char *)sqlite3_column_text(q, 0)) > FT_SWEEP_SCHEMA_VERSION) {
        st->code = rc = FT_EINPUT;
        snprintf(st->msg, sizeof st->msg, "%s: schema version %s is newer than this fusetile's (%d)", h->path,
                 (const char *)sqlite3_column_text(q, 0), FT_SWEEP_SCHEMA_VERSION);
    }
    sqlite3_finalize(q);
    return rc;
}

/* Bring an older runs table up to this schema (added_columns); FT_OK or
 * the error in st. */
static int migrate(ft_sweep_db *h, ft_status *st)
{
    for (size_t i = 0; i < sizeof added_columns / sizeof added_columns[0]; i++) {
        sqlite3_stmt *q;
        if (sqlite3_prepare_v2(h->db, "SELECT count(*) FROM pragma_table_info('runs') WHERE name = ?1", -1, &q, NULL) !=
            SQLITE_OK)
            return db_fail(h, st, "reading the runs table's columns");
        sqlite3_bind_text(q, 1, added_columns[i][0], -1, SQLITE_STATIC);
        int have = sqlite3_step(q) == SQLITE_ROW && sqlite3_column_int(q, 0) > 0;
        sqlite3_finalize(q);
        if (have)
            continue;
        char *sql = sqlite3_mprintf("ALTER TABLE runs ADD COLUMN %s %s", added_columns[i][0], added_columns[i][1]);
        int rc = sql ? exec(h, sql, "cannot add a column to the runs table", st) : db_fail(h, st, "out of memory");
        sqlite3_free(sql);
        if (rc)
            return rc;
    }
    return FT_OK;
}

int ft_sweep_db_open(const char *path, const char *sweep_path, ft_sweep_db **out, ft_status *st)
{
    ft_status_clear(st);
    *out = NULL;
    /* the output rules (fusetile/io.h): a regular file, a link to one, or a
     * new name, and none of the command's inputs */
    int rc = ft_out_check(path, 1, st);
    if (rc != FT_OK)
        return rc;
    ft_sweep_db *h = calloc(1, sizeof *h);
    if (!h || !(h->path = malloc(strlen(path) + 1))) {
        free(h);
        st->code = FT_ENOMEM;
        snprintf(st->msg, sizeof st->msg, "%s: out of memory", path);
        return FT_ENOMEM;
    }
    strcpy(h->path, path);
    if (sqlite3_open_v2(path, &h->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
        rc = db_fail(h, st, "cannot open");
        goto out;
    }
    sqlite3_busy_timeout(h->db, BUSY_TIMEOUT_MS);
    if ((rc = exec(h, "PRAGMA journal_mode=WAL", "cannot use WAL mode (not a database?)", st)) ||
        (rc = exec(h, "PRAGMA synchronous=NORMAL", "cannot set synchronous", st)) ||
        (rc = exec(h, "BEGIN IMMEDIATE", "cannot write", st)))
        goto out;
    if ((rc = exec(h, schema, "cannot create the tables", st)) || (rc = check_version(h, st)) || (rc = migrate(h, st))) {
        sqlite3_exec(h->db, "ROLLBACK", NULL, NULL, NULL);
        goto out;
    }
    char *meta = sqlite3_mprintf("INSERT OR REPLACE INTO meta VALUES('schema_version', '%d');"
                                 "INSERT OR IGNORE INTO meta VALUES('sweep', %Q);",
                                 FT_SWEEP_SCHEMA_VERSION, sweep_path ? sweep_path : "");
    rc = meta ? exec(h, meta, "cannot write meta", st) : db_fail(h, st, "out of memory");
    sqlite3_free(meta);
    if (rc || (rc = exec(h, "COMMIT", "cannot commit", st))) {
        sqlite3_exec(h->db, "ROLLBACK", NULL, NULL, NULL);
        goto out;
    }
    if (sqlite3_prepare_v2(h->db, "SELECT status FROM runs WHERE key = ?1", -1, &h->done, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(h->db, put_sql, -1, &h->put, NULL) != SQLITE_OK)
        rc = db_fail(h, st, "cannot prepare");
out:
    if (rc != FT_OK) {
        ft_sweep_db_close(h);
        return rc;
    }
    *out = h;
    return FT_OK;
}

int ft_sweep_db_done(ft_sweep_db *h, const char *key, ft_status *st)
{
    sqlite3_reset(h->done);
    sqlite3_bind_text(h->done, 1, key, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(h->done), r = 0;
    if (rc == SQLITE_ROW) {
        const unsigned char *s = sqlite3_column_text(h->done, 0);
        r = s && strcmp((const char *)s, "ok") == 0;
    } else if (rc != SQLITE_DONE) {
        db_fail(h, st, "cannot read runs");
        r = -1;
    }
    sqlite3_reset(h->done);
    return r;
}

static void bind_real(sqlite3_stmt *q, int i, double x)
{
    if (isfinite(x))
        sqlite3_bind_double(q, i, x);
    else
        sqlite3_bind_null(q, i);
}

/* Now in UTC as "2026-01-31T12:34:56.789Z". */
static void timestamp(char buf[32])
{
    struct timeval tv;
    struct tm tm;
    gettimeofday(&tv, NULL);
    time_t secs = tv.tv_sec;
    gmtime_r(&secs, &tm);
    size_t n = strftime(buf, 32, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, 32 - n, ".%03dZ", (int)(tv.tv_usec / 1000));
}

int ft_sweep_db_put(ft_sweep_db *h, const char *sweep_path, const ft_sweep_run *r, const ft_sweep_result *res,
                    const char *worker, ft_status *st)
{
    sqlite3_stmt *q = h->put;
    char when[32], native[64];
    timestamp(when);
    sqlite3_reset(q);
    sqlite3_clear_bindings(q);
    sqlite3_bind_text(q, 1, r->key, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 2, sweep_path, -1, SQLITE_STATIC);
    sqlite3_bind_int(q, 3, r->idx);
    sqlite3_bind_text(q, 4, r->problem, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 5, r->target ? r->target : "none", -1, SQLITE_STATIC);
    /* what the run used; the run's own overrides when it failed before */
    bind_real(q, 6, isfinite(res->capacity) ? res->capacity : r->capacity > 0 ? r->capacity : NAN);
    bind_real(q, 7, isfinite(res->bandwidth) ? res->bandwidth : r->bandwidth > 0 ? r->bandwidth : NAN);
    if (res->native[0])
        snprintf(native, sizeof native, "%s", res->native);
    else if (r->native_w)
        snprintf(native, sizeof native, "%lldx%lldx%lld", (long long)r->native_w, (long long)r->native_h,
                 (long long)(r->native_k ? r->native_k : r->native_w));
    else
        native[0] = '\0';
    if (native[0])
        sqlite3_bind_text(q, 8, native, -1, SQLITE_TRANSIENT);
    if (res->units || r->units)
        sqlite3_bind_int(q, 9, res->units ? res->units : r->units);
    sqlite3_bind_text(q, 10, ft_compute_model_name(r->model), -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 11, ft_strategy_name(r->strategy), -1, SQLITE_STATIC);
    bind_real(q, 12, r->time_limit > 0 ? r->time_limit : NAN);
    sqlite3_bind_int64(q, 13, (sqlite3_int64)r->seed);
    sqlite3_bind_int(q, 14, r->simulate);
    sqlite3_bind_text(q, 15, res->ok ? "ok" : "failed", -1, SQLITE_STATIC);
    if (!res->ok)
        sqlite3_bind_text(q, 16, res->error, -1, SQLITE_STATIC);
    bind_real(q, 17, res->total);
    bind_real(q, 18, res->lower_bound);
    bind_real(q, 19, res->capacity_bound);
    bind_real(q, 20, res->ratio);
    if (res->ok)
        sqlite3_bind_int(q, 21, res->subgraphs);
    bind_real(q, 22, res->sim_total);
    if (res->agreement >= 0)
        sqlite3_bind_text(q, 23, res->agreement ? "yes" : "no", -1, SQLITE_STATIC);
    bind_real(q, 24, res->wall_s);
    sqlite3_bind_text(q, 25, worker, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 26, when, -1, SQLITE_STATIC);
    bind_real(q, 27, res->energy_j);
    bind_real(q, 28, res->power_w);
    /* one statement is its own transaction (autocommit) */
    int rc = sqlite3_step(q);
    sqlite3_reset(q);
    sqlite3_clear_bindings(q);
    return rc == SQLITE_DONE ? FT_OK : db_fail(h, st, "cannot write the run's row");
}
