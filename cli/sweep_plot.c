/* sweep_plot.c - `fusetile sweep plot`: one line per group of a sweep database's runs, mean y at each x, as SVG. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "fusetile/plot.h"

/* Most lines (group values) one plot draws. */
#define SWEEP_PLOT_MAX_GROUPS 64
/* Most --where filters of one plot. */
#define SWEEP_PLOT_MAX_WHERE 8

static const char plot_help[] =
    "usage: fusetile sweep plot DB --x AXIS --y METRIC [--group AXIS] [--where COLUMN=VALUE]...\n"
    "                          [--log-x] [--log-y] [--points] -o OUT.svg\n"
    "\n"
    "Plot the ok runs of a sweep database (fusetile sweep run): one line per\n"
    "value of --group (one line without it), x an input column, y a result\n"
    "column.  Runs with the same x within a group (other axes that vary:\n"
    "seeds, problems, ...) are aggregated by their mean, and the y label\n"
    "says so.\n"
    "\n"
    "  --x COLUMN      a number column: capacity, bandwidth, units, time_limit,\n"
    "                  seed, idx, or a result column below\n"
    "  --y COLUMN      a number column: total, lower_bound, capacity_bound,\n"
    "                  ratio, subgraphs, sim_total, wall_s, energy_j, power_w\n"
    "                  (joules and average watts: a target with an energy group;\n"
    "                  --x total --y energy_j plots energy against latency),\n"
    "                  or an input above\n"
    "  --group COLUMN  any column: problem, target, native, compute_model,\n"
    "                  strategy, agreement, or a number column (at most 64 values)\n"
    "  --where COLUMN=VALUE  only the runs whose COLUMN is VALUE (a problem or\n"
    "                  target also matches by its file name: problem=resnet18.problem.json);\n"
    "                  repeatable (at most 8), all must hold\n"
    "  --log-x, --log-y  log10 axes (points at or below 0 are left out)\n"
    "  --points        the points alone, not joined (a scatter: energy_j\n"
    "                  against total, where x is not an input)\n"
    "  -o, --output FILE  the SVG file (written atomically)\n"
    "  -h, --help      show this help\n"
    "\n"
    "Exit status: 0 written, 1 no ok run has both values, 2 bad input or usage\n"
    "(an unknown column, a text column on an axis, not a sweep database).\n";

static const char *const number_columns[] = {"capacity", "bandwidth", "units", "time_limit", "seed", "idx", "simulate",
                                             "total", "lower_bound", "capacity_bound", "ratio", "subgraphs", "sim_total",
                                             "wall_s", "energy_j", "power_w"};
static const char *const text_columns[] = {"problem", "target", "native", "compute_model", "strategy", "agreement",
                                           "status", "worker", "error", "sweep", "key", "finished_at"};
#define COUNT(a) (sizeof a / sizeof a[0])

static int is_in(const char *name, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(name, list[i]) == 0)
            return 1;
    return 0;
}

/* Check a column option: 0, or -1 after the error line. */
static int check_column(const char *opt, const char *name, int numeric)
{
    if (is_in(name, number_columns, COUNT(number_columns)))
        return 0;
    if (!numeric && is_in(name, text_columns, COUNT(text_columns)))
        return 0;
    if (is_in(name, text_columns, COUNT(text_columns)))
        cli_error("sweep plot: %s %s: a text column, an axis needs a number column (capacity, bandwidth, units, "
                  "time_limit, seed, idx, total, lower_bound, capacity_bound, ratio, subgraphs, sim_total, wall_s, "
                  "energy_j, power_w)",
                  opt, name);
    else
        cli_error("sweep plot: %s %s: no such column (numbers: capacity, bandwidth, units, time_limit, seed, idx, total, "
                  "lower_bound, capacity_bound, ratio, subgraphs, sim_total, wall_s, energy_j, power_w; text: problem, "
                  "target, native, "
                  "compute_model, strategy, agreement)", opt, name);
    return -1;
}

/* One line of the plot. */
typedef struct line {
    char *name;
    double *x, *y;
    int n, cap;
} line;

static int push(line *l, double x, double y)
{
    if (l->n == l->cap) {
        int nc = l->cap ? 2 * l->cap : 16;
        double *nx = realloc(l->x, (size_t)nc * sizeof *nx);
        if (!nx)
            return -1;
        l->x = nx;
        double *ny = realloc(l->y, (size_t)nc * sizeof *ny);
        if (!ny)
            return -1;
        l->y = ny;
        l->cap = nc;
    }
    l->x[l->n] = x;
    l->y[l->n++] = y;
    return 0;
}

/* The legend text of a group value: "COLUMN=VALUE", a path by its file name. */
static char *group_name(const char *col, const char *value)
{
    const char *v = value ? value : "NULL";
    if (strcmp(col, "problem") == 0 || strcmp(col, "target") == 0) {
        const char *slash = strrchr(v, '/');
        v = slash ? slash + 1 : v;
    }
    size_t n = strlen(col) + strlen(v) + 2;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s=%s", col, v);
    return s;
}

/* Query the database and write the plot; the exit status. */
/* A --where filter: COLUMN=VALUE split at the '='. */
typedef struct where {
    char col[32];
    const char *value;
} where;

/* Parse --where's argument into *w: 0, or -1 after the error line. */
static int parse_where(const char *arg, where *w)
{
    const char *eq = strchr(arg, '=');
    size_t n = eq ? (size_t)(eq - arg) : 0;
    if (!eq || n == 0 || n >= sizeof w->col) {
        cli_error("sweep plot: --where %s: expected COLUMN=VALUE", arg);
        return -1;
    }
    memcpy(w->col, arg, n);
    w->col[n] = '\0';
    w->value = eq + 1;
    return check_column("--where", w->col, 0);
}

/* When db has a runs table lacking one of the columns named (an older
 * schema): that column's name; else NULL. */
static const char *has_runs_without(sqlite3 *db, const char *xc, const char *yc, const char *gc, const where *wh, int nwh)
{
    const char *cols[3 + SWEEP_PLOT_MAX_WHERE] = {xc, yc, gc};
    for (int i = 0; i < nwh; i++)
        cols[3 + i] = wh[i].col;
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(db, "SELECT count(*), sum(name = ?1) FROM pragma_table_info('runs')", -1, &q, NULL) != SQLITE_OK)
        return NULL;
    const char *missing = NULL;
    for (int i = 0; i < 3 + nwh && !missing; i++) {
        if (!cols[i])
            continue;
        sqlite3_reset(q);
        sqlite3_bind_text(q, 1, cols[i], -1, SQLITE_STATIC);
        if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_int(q, 0) > 0 && sqlite3_column_int(q, 1) == 0)
            missing = cols[i];
    }
    sqlite3_finalize(q);
    return missing;
}

static int plot(const char *dbpath, const char *xc, const char *yc, const char *gc, const where *wh, int nwh, int logx,
                int logy, int points, const char *out)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *q = NULL;
    line lines[SWEEP_PLOT_MAX_GROUPS];
    int nlines = 0, rc = EXIT_USAGE, maxn = 0;
    memset(lines, 0, sizeof lines);
    if (sqlite3_open_v2(dbpath, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        cli_error("sweep plot: %s: cannot open: %s", dbpath, db ? sqlite3_errmsg(db) : "out of memory");
        goto out;
    }
    /* the filters: "col" = ?N, or a path ending in /?N */
    char *filter = sqlite3_mprintf("");
    for (int i = 0; i < nwh && filter; i++) {
        char *f = sqlite3_mprintf("%s AND (\"%w\" = ?%d OR \"%w\" LIKE '%%/' || ?%d ESCAPE '\\')", filter, wh[i].col,
                                  2 * i + 1, wh[i].col, 2 * i + 2);
        sqlite3_free(filter);
        filter = f;
    }
    char *sql = !filter ? NULL
                        : sqlite3_mprintf("SELECT %s, \"%w\", AVG(\"%w\"), COUNT(*) FROM runs WHERE status = 'ok' AND \"%w\" IS NOT NULL"
                                          " AND \"%w\" IS NOT NULL%s GROUP BY 1, 2 ORDER BY 1, 2",
                                          gc ? gc : "''", xc, yc, xc, yc, filter);
    sqlite3_free(filter);
    /* a column the runs table lacks (a database of schema 1, before the
     * energy columns): SQLite would read "name" as a string */
    const char *missing = has_runs_without(db, xc, yc, gc, wh, nwh);
    if (missing) {
        cli_error("sweep plot: %s: no column %s (a database of an older fusetile: its runs have no energy; "
                  "`fusetile sweep run` on it adds the column, which the runs it records from then on fill)",
                  dbpath, missing);
        sqlite3_free(sql);
        goto out;
    }
    if (!sql || sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK) {
        cli_error("sweep plot: %s: not a sweep database (%s)", dbpath, sql ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_free(sql);
        goto out;
    }
    sqlite3_free(sql);
    for (int i = 0; i < nwh; i++) {
        /* the LIKE pattern's own wildcards in the value are escaped */
        char esc[512];
        size_t k = 0;
        for (const char *c = wh[i].value; *c && k + 2 < sizeof esc; c++) {
            if (*c == '%' || *c == '_' || *c == '\\')
                esc[k++] = '\\';
            esc[k++] = *c;
        }
        esc[k] = '\0';
        sqlite3_bind_text(q, 2 * i + 1, wh[i].value, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(q, 2 * i + 2, esc, -1, SQLITE_TRANSIENT);
    }
    char *prev = NULL;
    int first = 1, s;
    while ((s = sqlite3_step(q)) == SQLITE_ROW) {
        const char *g = (const char *)sqlite3_column_text(q, 0);
        if (first || (g && !prev) || (!g && prev) || (g && prev && strcmp(g, prev) != 0)) {
            if (nlines == SWEEP_PLOT_MAX_GROUPS) {
                cli_error("sweep plot: --group %s has more than %d values (SWEEP_PLOT_MAX_GROUPS)", gc, SWEEP_PLOT_MAX_GROUPS);
                free(prev);
                goto out;
            }
            free(prev);
            prev = g ? strdup(g) : NULL;
            lines[nlines].name = gc ? group_name(gc, g) : strdup(yc);
            if (!lines[nlines++].name || (g && !prev)) {
                cli_error("sweep plot: out of memory");
                free(prev);
                goto out;
            }
            first = 0;
        }
        if (sqlite3_column_int(q, 3) > maxn)
            maxn = sqlite3_column_int(q, 3);
        if (push(&lines[nlines - 1], sqlite3_column_double(q, 1), sqlite3_column_double(q, 2))) {
            cli_error("sweep plot: out of memory");
            free(prev);
            goto out;
        }
    }
    free(prev);
    if (s != SQLITE_DONE) {
        cli_error("sweep plot: %s: %s", dbpath, sqlite3_errmsg(db));
        goto out;
    }
    if (!nlines) {
        cli_error("sweep plot: %s: no ok run has both %s and %s%s", dbpath, xc, yc, nwh ? " (with the --where filters)" : "");
        rc = EXIT_INVALID;
        goto out;
    }
    ft_plot_series series[SWEEP_PLOT_MAX_GROUPS];
    for (int i = 0; i < nlines; i++)
        series[i] = (ft_plot_series){.name = lines[i].name, .x = lines[i].x, .y = lines[i].y, .n = lines[i].n, .lines = !points};
    char title[512], ylabel[128], filters[256] = "";
    for (int i = 0, k = 0; i < nwh && k < (int)sizeof filters; i++)
        k += snprintf(filters + k, sizeof filters - (size_t)k, "%s%s=%s", i ? ", " : "; ", wh[i].col, wh[i].value);
    snprintf(title, sizeof title, "%s against %s%s%s (%s%s)", yc, xc, gc ? " by " : "", gc ? gc : "", dbpath, filters);
    snprintf(ylabel, sizeof ylabel, maxn > 1 ? "%s (mean of the runs at each x)" : "%s", yc);
    ft_plot pl = {.title = title, .xlabel = xc, .ylabel = ylabel, .xlog = logx, .ylog = logy, .series = series,
                  .nseries = nlines};
    char err[512];
    if (ft_plot_write_svg(&pl, out, err, sizeof err)) {
        cli_error("sweep plot: %s", err);
        goto out;
    }
    int skipped = ft_plot_count_skipped(&pl);
    if (skipped)
        cli_warn("sweep plot: %d points left out (not positive on a log axis)", skipped);
    rc = EXIT_OK;
out:
    for (int i = 0; i < nlines; i++) {
        free(lines[i].name);
        free(lines[i].x);
        free(lines[i].y);
    }
    sqlite3_finalize(q);
    sqlite3_close(db);
    return rc;
}

int cli_sweep_plot(int argc, char **argv)
{
    cli_opts o;
    const char *arg, *db = NULL, *xc = NULL, *yc = NULL, *gc = NULL, *out = NULL;
    int is_opt, logx = 0, logy = 0, points = 0, nwh = 0;
    where wh[SWEEP_PLOT_MAX_WHERE];
    cli_opt_init(&o, argc, argv);
    o.cmd = "sweep plot";
    while ((arg = cli_opt_next(&o, &is_opt))) {
        if (!is_opt) {
            if (db) {
                cli_error("sweep plot: unexpected argument '%s' (usage: fusetile sweep plot DB --x AXIS --y METRIC -o OUT.svg)", arg);
                return EXIT_USAGE;
            }
            db = arg;
        } else if (cli_opt_is(&o, arg, "--help") || cli_opt_is(&o, arg, "-h")) {
            fputs(plot_help, stdout);
            return EXIT_OK;
        } else if (cli_opt_is(&o, arg, "--x")) {
            if (!(xc = cli_opt_value(&o, "--x")) || check_column("--x", xc, 1))
                return EXIT_USAGE;
        } else if (cli_opt_is(&o, arg, "--y")) {
            if (!(yc = cli_opt_value(&o, "--y")) || check_column("--y", yc, 1))
                return EXIT_USAGE;
        } else if (cli_opt_is(&o, arg, "--group")) {
            if (!(gc = cli_opt_value(&o, "--group")) || check_column("--group", gc, 0))
                return EXIT_USAGE;
        } else if (cli_opt_is(&o, arg, "--where")) {
            const char *v = cli_opt_value(&o, "--where");
            if (!v)
                return EXIT_USAGE;
            if (nwh == SWEEP_PLOT_MAX_WHERE) {
                cli_error("sweep plot: more than %d --where filters (SWEEP_PLOT_MAX_WHERE)", SWEEP_PLOT_MAX_WHERE);
                return EXIT_USAGE;
            }
            if (parse_where(v, &wh[nwh++]))
                return EXIT_USAGE;
        } else if (cli_opt_is(&o, arg, "--log-x")) {
            logx = 1;
        } else if (cli_opt_is(&o, arg, "--log-y")) {
            logy = 1;
        } else if (cli_opt_is(&o, arg, "--points")) {
            points = 1;
        } else if (cli_opt_is(&o, arg, "--output") || cli_opt_is(&o, arg, "-o")) {
            if (!(out = cli_opt_file(&o, arg[1] == '-' ? "--output" : "-o")))
                return EXIT_USAGE;
        } else {
            cli_error("sweep plot: unknown option '%s' (try 'fusetile sweep plot --help')", arg);
            return EXIT_USAGE;
        }
    }
    if (!db || !xc || !yc || !out) {
        cli_error("sweep plot: needs DB, --x, --y and -o (try 'fusetile sweep plot --help')");
        return EXIT_USAGE;
    }
    if (cli_input(db, "database") != EXIT_OK || cli_check_output("sweep plot", out, 0) != EXIT_OK)
        return EXIT_USAGE;
    return plot(db, xc, yc, gc, wh, nwh, logx, logy, points, out);
}
