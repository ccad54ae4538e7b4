/* sweep_file.c - sweep files (libconfig): check every setting, expand the axes into runs, give each run its canonical key. */
#define _POSIX_C_SOURCE 200809L
#include "fusetile/sweep.h"

#include <errno.h>
#include <glob.h>
#include <libconfig.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fusetile/io.h"
#include "fusetile/target.h"

/* ------------------------------------------------------------------ axes */

enum axis_kind { A_PATH, A_REAL, A_INT, A_NATIVE, A_MODEL, A_STRATEGY, A_BOOL };

/* The axes in key order; `name` is the key's and the file's (plural for
 * the two file axes, which also accept the singular). */
enum { AX_PROBLEM, AX_TARGET, AX_CAPACITY, AX_BANDWIDTH, AX_NATIVE, AX_UNITS, AX_MODEL, AX_STRATEGY, AX_TIME, AX_SEED,
       AX_SIMULATE, NAXES };

static const struct {
    const char *name, *alias, *keyname;
    enum axis_kind kind;
} axes[NAXES] = {
    {"problems", "problem", "problem", A_PATH},     {"targets", "target", "target", A_PATH},
    {"capacity", NULL, "capacity", A_REAL},         {"bandwidth", NULL, "bandwidth", A_REAL},
    {"native", NULL, "native", A_NATIVE},           {"units", NULL, "units", A_INT},
    {"compute_model", NULL, "compute_model", A_MODEL}, {"strategy", NULL, "strategy", A_STRATEGY},
    {"time_limit", NULL, "time_limit", A_REAL},     {"seed", NULL, "seed", A_INT},
    {"simulate", NULL, "simulate", A_BOOL},
};

/* One value of an axis. */
typedef struct value {
    double num;          /* A_REAL, A_INT (exact up to 2^53), A_BOOL, A_MODEL, A_STRATEGY */
    int64_t n3[3];       /* A_NATIVE: w, h, k (k 0: not given) */
    char *key;           /* its text in the key: the canonical path, "none", a number */
    char *path;          /* A_PATH: the openable path (NULL for "none") */
    int line;
} value;

typedef struct axis_vals {
    int n;               /* 0: not set here */
    value *v;
} axis_vals;

/* Loader state: the file, its directory and the first error. */
typedef struct loader {
    const char *path;
    char *dir;           /* the sweep file's directory ("" for the working one) */
    ft_status *st;
    int failed;
} loader;

static int fail(loader *L, int line, const char *setting, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int fail(loader *L, int line, const char *setting, const char *fmt, ...)
{
    if (L->failed)
        return -1;
    L->failed = 1;
    char m[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    for (char *c = m; *c; c++)   /* a value quoted from the file stays on one line */
        if ((unsigned char)*c < ' ')
            *c = '?';
    L->st->code = FT_EINPUT;
    snprintf(L->st->msg, sizeof L->st->msg, "%s:%d: %s: %s", L->path, line, setting, m);
    return -1;
}

static int nomem(loader *L)
{
    if (!L->failed) {
        L->failed = 1;
        L->st->code = FT_ENOMEM;
        snprintf(L->st->msg, sizeof L->st->msg, "%s: out of memory", L->path);
    }
    return -1;
}

static char *dupstr(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    return d ? memcpy(d, s, n) : NULL;
}

static void vals_free(axis_vals *a)
{
    for (int i = 0; i < a->n; i++) {
        free(a->v[i].key);
        free(a->v[i].path);
    }
    free(a->v);
    a->v = NULL;
    a->n = 0;
}

static int line_of(const config_setting_t *s)
{
    return s ? (int)config_setting_source_line(s) : 0;
}

/* ----------------------------------------------------------------- paths */

/* Lexically normalised path: no "." or empty components, "x/.." removed
 * where x is not "..".  A malloc'd string ("." for nothing). */
static char *normalize(const char *p)
{
    size_t n = strlen(p);
    char *out = malloc(n + 2), *tmp = dupstr(p);
    if (!out || !tmp) {
        free(out);
        free(tmp);
        return NULL;
    }
    int abs = p[0] == '/';
    size_t len = 0;
    out[0] = '\0';
    char *save = NULL;
    for (char *c = strtok_r(tmp, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
        if (strcmp(c, ".") == 0)
            continue;
        if (strcmp(c, "..") == 0) {
            char *last = len ? strrchr(out, '/') : NULL;
            const char *tail = last ? last + 1 : out;
            if (len && strcmp(tail, "..") != 0) {
                len = last ? (size_t)(last - out) : 0;
                out[len] = '\0';
                continue;
            }
            if (abs && !len)
                continue;   /* "/.." is "/" */
        }
        len += (size_t)sprintf(out + len, "%s%s", len ? "/" : "", c);
    }
    free(tmp);
    if (abs) {
        memmove(out + 1, out, len + 1);
        out[0] = '/';
    } else if (!len) {
        strcpy(out, ".");
    }
    return out;
}

/* dir joined with rel (rel itself when absolute or dir is empty), normalised. */
static char *join(const char *dir, const char *rel)
{
    if (rel[0] == '/' || !*dir)
        return normalize(rel);
    size_t n = strlen(dir) + strlen(rel) + 2;
    char *j = malloc(n);
    if (!j)
        return NULL;
    snprintf(j, n, "%s/%s", dir, rel);
    char *r = normalize(j);
    free(j);
    return r;
}

/* Append v (its line in v.line) to a, the values of setting sname; one
 * past FT_SWEEP_MAX_VALUES fails naming both. */
static int add_value(loader *L, axis_vals *a, const char *sname, value v)
{
    if (a->n >= FT_SWEEP_MAX_VALUES) {
        free(v.key);
        free(v.path);
        return fail(L, v.line, sname, "more than %d values (FT_SWEEP_MAX_VALUES)", FT_SWEEP_MAX_VALUES);
    }
    value *nv = realloc(a->v, (size_t)(a->n + 1) * sizeof *nv);
    if (!nv) {
        free(v.key);
        free(v.path);
        return nomem(L);
    }
    a->v = nv;
    a->v[a->n++] = v;
    return 0;
}

/* A file value (a problem or target path, or a glob of problems). */
static int add_path(loader *L, axis_vals *a, int ax, const char *text, int line, const char *sname)
{
    value v;
    memset(&v, 0, sizeof v);
    v.line = line;
    if (!*text)
        return fail(L, line, sname, "empty file name");
    if (ax == AX_TARGET && strcmp(text, "none") == 0) {
        if (!(v.key = dupstr("none")))
            return nomem(L);
        return add_value(L, a, sname, v);
    }
    if (ax == AX_PROBLEM && strpbrk(text, "*?[")) {
        char *pat = join(L->dir, text);
        if (!pat)
            return nomem(L);
        glob_t g;
        int rc = glob(pat, 0, NULL, &g);
        free(pat);
        if (rc == GLOB_NOMATCH)
            return fail(L, line, sname, "no file matches \"%s\"", text);
        if (rc != 0)
            return fail(L, line, sname, "cannot expand \"%s\"", text);
        size_t skip = *L->dir && text[0] != '/' ? strlen(L->dir) + 1 : 0;
        for (size_t i = 0; i < g.gl_pathc && !L->failed; i++) {
            char *rel = normalize(g.gl_pathv[i] + (strlen(g.gl_pathv[i]) >= skip ? skip : 0));
            value m = {.line = line, .key = rel, .path = rel ? dupstr(g.gl_pathv[i]) : NULL};
            if (!m.key || !m.path) {
                free(m.key);
                globfree(&g);
                return nomem(L);
            }
            add_value(L, a, sname, m);
        }
        globfree(&g);
        return L->failed ? -1 : 0;
    }
    v.key = normalize(text);
    v.path = join(L->dir, text);
    if (!v.key || !v.path) {
        free(v.key);
        free(v.path);
        return nomem(L);
    }
    return add_value(L, a, sname, v);
}

/* --------------------------------------------------------------- numbers */

static int get_number(const config_setting_t *s, double *x)
{
    switch (config_setting_type(s)) {
    case CONFIG_TYPE_INT: *x = config_setting_get_int(s); return 0;
    case CONFIG_TYPE_INT64: *x = (double)config_setting_get_int64(s); return 0;
    case CONFIG_TYPE_FLOAT: *x = config_setting_get_float(s); return 0;
    default: return -1;
    }
}

static const char *type_name(const config_setting_t *s)
{
    switch (config_setting_type(s)) {
    case CONFIG_TYPE_GROUP: return "a group";
    case CONFIG_TYPE_INT: case CONFIG_TYPE_INT64: return "an integer";
    case CONFIG_TYPE_FLOAT: return "a number";
    case CONFIG_TYPE_STRING: return "a string";
    case CONFIG_TYPE_BOOL: return "a boolean";
    case CONFIG_TYPE_ARRAY: return "an array";
    case CONFIG_TYPE_LIST: return "a list";
    default: return "nothing";
    }
}

/* Check number x for axis ax: 0, or -1 after the error. */
static int check_number(loader *L, int ax, double x, int line, const char *sname)
{
    char b[FT_NUMBUF];
    if (!isfinite(x) || x <= 0) {
        if (ax == AX_SEED && x == 0)
            return 0;
        return fail(L, line, sname, "%s is %s, must be %s", axes[ax].keyname, ft_format_double(b, x),
                    ax == AX_SEED ? "a non-negative integer" : "a positive number");
    }
    if (axes[ax].kind == A_INT) {
        double hi = ax == AX_UNITS ? FT_MAX_UNITS : 9007199254740992.0;
        if (x != floor(x) || x > hi)
            return fail(L, line, sname, "%s is %s, must be an integer from %d to %.0f", axes[ax].keyname,
                        ft_format_double(b, x), ax == AX_UNITS ? 1 : 0, hi);
    }
    return 0;
}

static int add_number(loader *L, axis_vals *a, int ax, double x, int line, const char *sname)
{
    if (check_number(L, ax, x, line, sname))
        return -1;
    char b[FT_NUMBUF];
    value v = {.num = x, .line = line, .key = dupstr(ft_format_double(b, x))};
    if (!v.key)
        return nomem(L);
    return add_value(L, a, sname, v);
}

/* A range group { from; to; step | times; } of a number axis. */
static int add_range(loader *L, axis_vals *a, int ax, const config_setting_t *g, const char *sname)
{
    double from = 0, to = 0, step = 0, times = 0;
    int have[4] = {0, 0, 0, 0};
    static const char *const names[4] = {"from", "to", "step", "times"};
    double *dst[4] = {&from, &to, &step, &times};
    char full[128];
    for (int i = 0; i < config_setting_length(g); i++) {
        const config_setting_t *m = config_setting_get_elem(g, (unsigned)i);
        const char *mn = config_setting_name(m);
        int j = 0;
        while (j < 4 && strcmp(mn, names[j]) != 0)
            j++;
        snprintf(full, sizeof full, "%s.%s", sname, mn);
        if (j == 4)
            return fail(L, line_of(m), full, "unknown setting (a range has from, to and step or times)");
        if (get_number(m, dst[j]))
            return fail(L, line_of(m), full, "expected a number, got %s", type_name(m));
        if (!isfinite(*dst[j]))
            return fail(L, line_of(m), full, "must be a finite number");
        have[j] = 1;
    }
    int line = line_of(g);
    if (!have[0] || !have[1])
        return fail(L, line, sname, "a range needs from and to");
    if (have[2] == have[3])
        return fail(L, line, sname, "a range needs exactly one of step (linear) or times (geometric)");
    char b1[FT_NUMBUF], b2[FT_NUMBUF];
    if (from > to)
        return fail(L, line, sname, "from (%s) is above to (%s)", ft_format_double(b1, from), ft_format_double(b2, to));
    if (have[2] && !(step > 0))
        snprintf(full, sizeof full, "%s.step", sname);
    if (have[2] && !(step > 0))
        return fail(L, line, full, "step is %s, must be positive", ft_format_double(b1, step));
    snprintf(full, sizeof full, "%s.times", sname);
    if (have[3] && !(times > 1))
        return fail(L, line, full, "times is %s, must be above 1", ft_format_double(b1, times));
    if (have[3] && !(from > 0))
        return fail(L, line, sname, "a geometric range needs from above 0, not %s", ft_format_double(b1, from));
    double count = have[2] ? floor((to - from) / step + 1e-9) + 1 : floor(log(to / from) / log(times) + 1e-9) + 1;
    if (!(count <= FT_SWEEP_MAX_VALUES))
        return fail(L, line, sname, "the range has %.0f values, more than %d (FT_SWEEP_MAX_VALUES)", count,
                    FT_SWEEP_MAX_VALUES);
    for (int i = 0; i < (int)count; i++) {
        double x = have[2] ? from + step * i : from * pow(times, i);
        if (axes[ax].kind == A_INT && fabs(x - nearbyint(x)) < 1e-9 * fmax(1, fabs(x)))
            x = nearbyint(x);
        if (add_number(L, a, ax, x, line, sname))
            return -1;
    }
    return 0;
}

/* "WxH" or "WxHxK", each an integer from 1 to FT_OVERRIDE_MAX_NATIVE. */
static int parse_native(const char *s, int64_t n3[3])
{
    n3[2] = 0;
    const char *p = s;
    for (int i = 0; i < 3; i++) {
        char *end;
        if (*p < '0' || *p > '9')
            return -1;
        errno = 0;
        long long x = strtoll(p, &end, 10);
        if (errno || x < 1 || x > FT_OVERRIDE_MAX_NATIVE)
            return -1;
        n3[i] = x;
        if (!*end)
            return i >= 1 ? 0 : -1;
        if (*end != 'x' || i == 2)
            return -1;
        p = end + 1;
    }
    return -1;
}

/* One scalar element of axis ax. */
static int add_scalar(loader *L, axis_vals *a, int ax, const config_setting_t *e, const char *sname)
{
    int line = line_of(e);
    enum axis_kind k = axes[ax].kind;
    double x;
    if (k == A_REAL || k == A_INT) {
        if (config_setting_type(e) == CONFIG_TYPE_GROUP)
            return add_range(L, a, ax, e, sname);
        int ok = k == A_INT ? config_setting_type(e) == CONFIG_TYPE_INT || config_setting_type(e) == CONFIG_TYPE_INT64
                            : get_number(e, &x) == 0;
        if (!ok)
            return fail(L, line, sname, "expected %s, a list of them or a range group, got %s",
                        k == A_INT ? "an integer" : "a number", type_name(e));
        get_number(e, &x);
        return add_number(L, a, ax, x, line, sname);
    }
    if (k == A_BOOL) {
        if (config_setting_type(e) != CONFIG_TYPE_BOOL)
            return fail(L, line, sname, "expected true or false, got %s", type_name(e));
        value v = {.num = config_setting_get_bool(e), .line = line, .key = dupstr(config_setting_get_bool(e) ? "1" : "0")};
        return v.key ? add_value(L, a, sname, v) : nomem(L);
    }
    if (config_setting_type(e) != CONFIG_TYPE_STRING)
        return fail(L, line, sname, "expected a string or a list of them, got %s", type_name(e));
    const char *s = config_setting_get_string(e);
    if (k == A_PATH)
        return add_path(L, a, ax, s, line, sname);
    value v = {.line = line};
    if (k == A_NATIVE) {
        if (parse_native(s, v.n3))
            return fail(L, line, sname, "\"%s\" is not WxH or WxHxK (integers from 1 to %lld)", s,
                        (long long)FT_OVERRIDE_MAX_NATIVE);
    } else if (k == A_MODEL) {
        ft_compute_model m;
        if (ft_compute_model_parse(s, &m))
            return fail(L, line, sname, "\"%s\" is not native or op", s);
        v.num = m;
    } else {
        ft_strategy sg;
        ft_status st2;
        if (ft_strategy_parse(s, &sg, &st2) != FT_OK)
            return fail(L, line, sname, "%s", st2.msg);
        v.num = sg;
    }
    if (!(v.key = dupstr(s)))
        return nomem(L);
    return add_value(L, a, sname, v);
}

/* The values of setting s for axis ax: a scalar, a list/array of scalars
 * (or of range groups), or a range group. */
static int parse_axis(loader *L, int ax, const config_setting_t *s, const char *sname, axis_vals *a)
{
    int t = config_setting_type(s);
    if (t == CONFIG_TYPE_LIST || t == CONFIG_TYPE_ARRAY) {
        if (ax == AX_SIMULATE)
            return fail(L, line_of(s), sname, "expected true or false, got %s", type_name(s));
        if (config_setting_length(s) == 0)
            return fail(L, line_of(s), sname, "empty list");
        for (int i = 0; i < config_setting_length(s); i++) {
            const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
            if (config_setting_type(e) == CONFIG_TYPE_LIST || config_setting_type(e) == CONFIG_TYPE_ARRAY)
                return fail(L, line_of(e) ? line_of(e) : line_of(s), sname, "a list inside a list");
            if (add_scalar(L, a, ax, e, sname))
                return -1;
        }
    } else if (t == CONFIG_TYPE_GROUP && axes[ax].kind != A_REAL && axes[ax].kind != A_INT) {
        return fail(L, line_of(s), sname, "a range group is only for number settings, got %s", type_name(s));
    } else if (add_scalar(L, a, ax, s, sname)) {
        return -1;
    }
    for (int i = 0; i < a->n; i++)
        for (int j = 0; j < i; j++)
            if (strcmp(a->v[i].key, a->v[j].key) == 0)
                return fail(L, a->v[i].line ? a->v[i].line : line_of(s), sname, "value %s given twice", a->v[i].key);
    return 0;
}

static int axis_index(const char *name)
{
    for (int i = 0; i < NAXES; i++)
        if (strcmp(name, axes[i].name) == 0 || (axes[i].alias && strcmp(name, axes[i].alias) == 0))
            return i;
    return -1;
}

static const char known_names[] =
    "problems, targets, capacity, bandwidth, native, units, compute_model, strategy, time_limit, seed, simulate";

/* The axes of group g (the top level, or a runs entry named `where`). */
static int parse_group(loader *L, const config_setting_t *g, const char *where, axis_vals av[NAXES],
                       const config_setting_t **runs)
{
    for (int i = 0; i < config_setting_length(g) && !L->failed; i++) {
        const config_setting_t *s = config_setting_get_elem(g, (unsigned)i);
        const char *name = config_setting_name(s);
        char sname[160];
        snprintf(sname, sizeof sname, "%s%s", where, name);
        if (runs && strcmp(name, "runs") == 0) {
            if (config_setting_type(s) != CONFIG_TYPE_LIST)
                return fail(L, line_of(s), sname, "expected a list of groups ( { problem = ...; }, ... ), got %s",
                            type_name(s));
            if (config_setting_length(s) == 0)
                return fail(L, line_of(s), sname, "empty list");
            *runs = s;
            continue;
        }
        int ax = axis_index(name);
        if (ax < 0)
            return fail(L, line_of(s), sname, "unknown setting (known: %s%s)", known_names, runs ? ", runs" : "");
        if (av[ax].n)
            return fail(L, line_of(s), sname, "given twice (as %s and %s)", axes[ax].name, axes[ax].alias);
        if (parse_axis(L, ax, s, sname, &av[ax]))
            return -1;
    }
    return L->failed ? -1 : 0;
}

/* --------------------------------------------------------------- expand */

typedef struct expander {
    loader *L;
    ft_sweep *sw;
    int cap;
    int line;            /* of the runs entry (0: top level) */
} expander;

static int emit(expander *E, value *const pick[NAXES])
{
    loader *L = E->L;
    if (E->sw->nruns >= FT_SWEEP_MAX_RUNS)
        return fail(L, E->line, E->line ? "runs" : "problems", "more than %d runs (FT_SWEEP_MAX_RUNS)", FT_SWEEP_MAX_RUNS);
    if (E->sw->nruns == E->cap) {
        int nc = E->cap ? 2 * E->cap : 64;
        ft_sweep_run *nr = realloc(E->sw->runs, (size_t)nc * sizeof *nr);
        if (!nr)
            return nomem(L);
        E->sw->runs = nr;
        E->cap = nc;
    }
    ft_sweep_run *r = &E->sw->runs[E->sw->nruns];
    memset(r, 0, sizeof *r);
    r->idx = E->sw->nruns++;
    r->model = FT_COMPUTE_NATIVE;
    r->strategy = FT_STRATEGY_SEARCH;
    r->seed = 1;
    const value *v;
    if ((v = pick[AX_PROBLEM])) {
        r->problem = dupstr(v->key);
        r->problem_path = dupstr(v->path);
    }
    if ((v = pick[AX_TARGET]) && v->path) {
        r->target = dupstr(v->key);
        r->target_path = dupstr(v->path);
    }
    if ((v = pick[AX_CAPACITY]))
        r->capacity = v->num;
    if ((v = pick[AX_BANDWIDTH]))
        r->bandwidth = v->num;
    if ((v = pick[AX_NATIVE])) {
        r->native_w = v->n3[0];
        r->native_h = v->n3[1];
        r->native_k = v->n3[2];
    }
    if ((v = pick[AX_UNITS]))
        r->units = (int)v->num;
    if ((v = pick[AX_MODEL]))
        r->model = (ft_compute_model)v->num;
    if ((v = pick[AX_STRATEGY]))
        r->strategy = (ft_strategy)v->num;
    if ((v = pick[AX_TIME]))
        r->time_limit = v->num;
    if ((v = pick[AX_SEED]))
        r->seed = (uint64_t)v->num;
    if ((v = pick[AX_SIMULATE]))
        r->simulate = v->num != 0;
    /* the key: every axis in order, defaults written out */
    char seedb[32];
    snprintf(seedb, sizeof seedb, "%llu", (unsigned long long)r->seed);
    const char *text[NAXES];
    for (int a = 0; a < NAXES; a++)
        text[a] = pick[a] ? pick[a]->key : "-";
    text[AX_TARGET] = r->target ? r->target : "none";
    text[AX_MODEL] = ft_compute_model_name(r->model);
    text[AX_STRATEGY] = ft_strategy_name(r->strategy);
    text[AX_SEED] = seedb;
    text[AX_SIMULATE] = r->simulate ? "1" : "0";
    size_t n = 1;
    for (int a = 0; a < NAXES; a++)
        n += strlen(axes[a].keyname) + strlen(text[a]) + 2;
    r->key = malloc(n);
    if (!r->problem || !r->problem_path || (r->target_path && !r->target) || (pick[AX_TARGET] && pick[AX_TARGET]->path && !r->target_path) ||
        !r->key)
        return nomem(L);
    size_t len = 0;
    for (int a = 0; a < NAXES; a++)
        len += (size_t)snprintf(r->key + len, n - len, "%s%s=%s", a ? ";" : "", axes[a].keyname, text[a]);
    return 0;
}

/* The cross product of av (axes with no value: unset), last axis fastest. */
static int cross(expander *E, axis_vals av[NAXES], value *pick[NAXES], int a)
{
    if (a == NAXES)
        return emit(E, pick);
    if (!av[a].n) {
        pick[a] = NULL;
        return cross(E, av, pick, a + 1);
    }
    for (int i = 0; i < av[a].n; i++) {
        pick[a] = &av[a].v[i];
        if (cross(E, av, pick, a + 1))
            return -1;
    }
    return 0;
}

/* Load every distinct problem and target file once, so that a bad one
 * stops the sweep before it starts. */
static int check_files(loader *L, const ft_sweep *sw, const int *line_of_run)
{
    for (int i = 0; i < sw->nruns; i++) {
        const ft_sweep_run *r = &sw->runs[i];
        int seenp = 0, seent = !r->target_path;
        for (int j = 0; j < i && !(seenp && seent); j++) {
            seenp |= strcmp(sw->runs[j].problem_path, r->problem_path) == 0;
            seent |= r->target_path && sw->runs[j].target_path && strcmp(sw->runs[j].target_path, r->target_path) == 0;
        }
        ft_status st;
        if (!seenp) {
            ft_problem *p = NULL;
            if (ft_problem_load(r->problem_path, &p, &st) != FT_OK)
                return fail(L, line_of_run[2 * i], "problems", "%s", st.msg);
            ft_problem_free(p);
        }
        if (!seent) {
            ft_target *t = NULL;
            if (ft_target_load(r->target_path, &t, &st) != FT_OK)
                return fail(L, line_of_run[2 * i + 1], "targets", "%s", st.msg);
            ft_target_free(t);
        }
    }
    return 0;
}

static int cmp_key(const void *a, const void *b, void *ctx)
{
    const ft_sweep *sw = ctx;
    int x = *(const int *)a, y = *(const int *)b;
    int c = strcmp(sw->runs[x].key, sw->runs[y].key);
    return c ? c : (x > y) - (x < y);
}

/* qsort_r is a GNU extension: a small merge sort instead. */
static void sort_idx(int *v, int *tmp, int n, const ft_sweep *sw)
{
    if (n < 2)
        return;
    int h = n / 2;
    sort_idx(v, tmp, h, sw);
    sort_idx(v + h, tmp, n - h, sw);
    int i = 0, j = h, k = 0;
    while (i < h || j < n)
        tmp[k++] = j >= n || (i < h && cmp_key(&v[i], &v[j], (void *)sw) <= 0) ? v[i++] : v[j++];
    memcpy(v, tmp, (size_t)n * sizeof *v);
}

/* --------------------------------------------------------------- public */

void ft_sweep_free(ft_sweep *sw)
{
    if (!sw)
        return;
    for (int i = 0; i < sw->nruns; i++) {
        ft_sweep_run *r = &sw->runs[i];
        free(r->problem);
        free(r->problem_path);
        free(r->target);
        free(r->target_path);
        free(r->key);
    }
    free(sw->runs);
    free(sw->path);
    free(sw);
}

int ft_sweep_load(const char *path, ft_sweep **out, ft_status *st)
{
    ft_status_clear(st);
    *out = NULL;
    char *text;
    int rc = ft_read_file_max(path, FT_MAX_SWEEP_BYTES, "FT_MAX_SWEEP_BYTES", &text, st);
    if (rc)
        return rc;
    rc = ft_sweep_parse(text, path, out, st);
    free(text);
    return rc;
}

int ft_sweep_parse(const char *text, const char *path, ft_sweep **out, ft_status *st)
{
    ft_status_clear(st);
    *out = NULL;
    loader L = {.path = path, .st = st};
    config_t cfg;
    config_init(&cfg);
    if (ft_cfg_read(&cfg, text, path, st) != FT_OK) {
        config_destroy(&cfg);
        return st->code;
    }
    const char *slash = strrchr(path, '/');
    L.dir = slash ? malloc((size_t)(slash - path) + 2) : dupstr("");
    ft_sweep *sw = calloc(1, sizeof *sw);
    axis_vals top[NAXES], ent[NAXES];
    memset(top, 0, sizeof top);
    memset(ent, 0, sizeof ent);
    int *lines = NULL;
    if (!L.dir || !sw || !(sw->path = dupstr(path))) {
        nomem(&L);
        goto done;
    }
    if (slash) {
        size_t n = slash == path ? 1 : (size_t)(slash - path);
        memcpy(L.dir, path, n);
        L.dir[n] = '\0';
    }
    const config_setting_t *runs = NULL;
    if (parse_group(&L, config_root_setting(&cfg), "", top, &runs))
        goto done;
    expander E = {.L = &L, .sw = sw};
    int nentries = runs ? config_setting_length(runs) : 1;
    int lcap = 0;
    for (int e = 0; e < nentries && !L.failed; e++) {
        axis_vals use[NAXES];
        const config_setting_t *g = runs ? config_setting_get_elem(runs, (unsigned)e) : NULL;
        char where[48];
        snprintf(where, sizeof where, "runs[%d].", e);
        if (g && config_setting_type(g) != CONFIG_TYPE_GROUP) {
            fail(&L, line_of(g) ? line_of(g) : line_of(runs), "runs", "entry %d: expected a group { problem = ...; }, got %s", e,
                 type_name(g));
            break;
        }
        if (g && parse_group(&L, g, where, ent, NULL))
            break;
        for (int a = 0; a < NAXES; a++)
            use[a] = ent[a].n ? ent[a] : top[a];
        if (!use[AX_PROBLEM].n) {
            if (g)
                fail(&L, line_of(g), "runs", "entry %d names no problem (and the file has no top-level problems)", e);
            else
                fail(&L, 0, "problems", "missing: the file names no problems");
            break;
        }
        value *pick[NAXES];
        int before = sw->nruns;
        E.line = g ? line_of(g) : 0;
        if (cross(&E, use, pick, 0))
            break;
        if (sw->nruns > lcap) {
            lcap = sw->nruns + 64;
            int *nl = realloc(lines, (size_t)lcap * 2 * sizeof *nl);
            if (!nl) {
                nomem(&L);
                break;
            }
            lines = nl;
        }
        for (int i = before; i < sw->nruns; i++) {   /* where each run's files were named */
            int pl = use[AX_PROBLEM].n ? use[AX_PROBLEM].v[0].line : 0, tl = use[AX_TARGET].n ? use[AX_TARGET].v[0].line : 0;
            for (int k = 0; k < use[AX_PROBLEM].n; k++)
                if (strcmp(use[AX_PROBLEM].v[k].key, sw->runs[i].problem) == 0)
                    pl = use[AX_PROBLEM].v[k].line;
            for (int k = 0; k < use[AX_TARGET].n; k++)
                if (sw->runs[i].target && strcmp(use[AX_TARGET].v[k].key, sw->runs[i].target) == 0)
                    tl = use[AX_TARGET].v[k].line;
            lines[2 * i] = pl;
            lines[2 * i + 1] = tl;
        }
        for (int a = 0; a < NAXES; a++)
            vals_free(&ent[a]);
    }
    if (L.failed)
        goto done;
    /* two runs with one key would share a row: refuse */
    int *idx = malloc((size_t)sw->nruns * sizeof *idx), *tmp = malloc((size_t)sw->nruns * sizeof *tmp);
    if (!idx || !tmp) {
        free(idx);
        free(tmp);
        nomem(&L);
        goto done;
    }
    for (int i = 0; i < sw->nruns; i++)
        idx[i] = i;
    sort_idx(idx, tmp, sw->nruns, sw);
    for (int i = 1; i < sw->nruns && !L.failed; i++)
        if (strcmp(sw->runs[idx[i]].key, sw->runs[idx[i - 1]].key) == 0)
            fail(&L, runs ? line_of(runs) : 0, "runs", "runs %d and %d have the same inputs (%s)", idx[i - 1], idx[i],
                 sw->runs[idx[i]].key);
    free(idx);
    free(tmp);
    if (!L.failed)
        check_files(&L, sw, lines);
done:
    for (int a = 0; a < NAXES; a++) {
        vals_free(&top[a]);
        vals_free(&ent[a]);
    }
    free(lines);
    free(L.dir);
    config_destroy(&cfg);
    if (L.failed) {
        ft_sweep_free(sw);
        return st->code;
    }
    *out = sw;
    return FT_OK;
}

char *ft_sweep_default_db(const char *sweep_path)
{
    const char *slash = strrchr(sweep_path, '/');
    const char *dot = strrchr(slash ? slash + 1 : sweep_path, '.');
    size_t base = dot && dot != (slash ? slash + 1 : sweep_path) ? (size_t)(dot - sweep_path) : strlen(sweep_path);
    char *db = malloc(base + 4);
    if (!db)
        return NULL;
    memcpy(db, sweep_path, base);
    memcpy(db + base, ".db", 4);
    return db;
}
