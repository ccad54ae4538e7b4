/* target.c - target files (libconfig): schema-checked loading, mapping onto a problem's cost-model parameters, summaries. */
#include "cost/cost.h"
#include "fusetile/target.h"

#include <ctype.h>
#include <errno.h>
#include <libconfig.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ------------------------------------------------------------------ schema */

enum kind { K_GROUP, K_STRING, K_BOOL, K_INT, K_REAL };

/* Range rules of numeric settings. */
enum range { R_ANY, R_POSITIVE, R_NONNEGATIVE, R_NATIVE, R_FRACTION /* (0, 1] */, R_UNITS /* 1..FT_MAX_UNITS */ };

/* Largest native granularity accepted: keeps tile products far from int64
 * overflow in the cost model. */
#define NATIVE_MAX ((int64_t)1 << 24)

/* One known setting: its group ("" for the top level), name, kind, whether a
 * real target must give it, whether a contest target may give it, its range
 * and where it is stored (offset into ft_target; -1 for groups). */
typedef struct setting {
    const char *group;
    const char *name;
    enum kind kind;
    int required;
    int contest_ok;
    enum range range;
    long offset;
} setting;

#define OFF(f) ((long)offsetof(ft_target, f))

static const setting schema[] = {
    {"", "name", K_STRING, 1, 1, R_ANY, OFF(name)},
    {"", "description", K_STRING, 0, 1, R_ANY, OFF(description)},
    {"", "contest", K_BOOL, 0, 1, R_ANY, OFF(contest)},
    {"", "clock_hz", K_REAL, 1, 0, R_POSITIVE, OFF(clock_hz)},
    {"", "element_bytes", K_INT, 1, 0, R_POSITIVE, OFF(element_bytes)},
    {"", "fast_memory", K_GROUP, 1, 0, R_ANY, -1},
    {"", "slow_memory", K_GROUP, 1, 0, R_ANY, -1},
    {"", "compute", K_GROUP, 1, 0, R_ANY, -1},
    {"", "execution", K_GROUP, 0, 0, R_ANY, -1},
    {"", "units", K_INT, 0, 0, R_UNITS, OFF(units)},
    {"", "shared_cache", K_GROUP, 0, 0, R_ANY, -1},
    {"shared_cache", "capacity_bytes", K_INT, 1, 0, R_POSITIVE, OFF(cache_capacity_bytes)},
    {"shared_cache", "bandwidth", K_REAL, 1, 0, R_POSITIVE, OFF(cache_bandwidth)},
    {"shared_cache", "partitions", K_INT, 0, 0, R_UNITS, OFF(cache_partitions)},
    {"shared_cache", "resident_bytes", K_REAL, 0, 0, R_NONNEGATIVE, OFF(cache_resident_bytes)},
    {"slow_memory", "efficiency", K_REAL, 0, 0, R_FRACTION, OFF(memory_efficiency)},
    {"slow_memory", "read_efficiency", K_REAL, 0, 0, R_FRACTION, OFF(read_efficiency)},
    {"slow_memory", "write_efficiency", K_REAL, 0, 0, R_FRACTION, OFF(write_efficiency)},
    {"compute", "matmul_efficiency", K_REAL, 0, 0, R_FRACTION, OFF(matmul_efficiency)},
    {"compute", "pointwise_efficiency", K_REAL, 0, 0, R_FRACTION, OFF(pointwise_efficiency)},
    {"compute", "register_file_bytes", K_INT, 0, 0, R_NONNEGATIVE, OFF(register_file_bytes)},
    {"compute", "accumulator_bytes", K_INT, 0, 0, R_POSITIVE, OFF(accumulator_bytes)},
    {"compute", "misaligned_efficiency", K_REAL, 0, 0, R_FRACTION, OFF(misaligned_efficiency)},
    {"compute", "aligned_elements", K_INT, 0, 0, R_POSITIVE, OFF(aligned_elements)},
    {"compute", "conv_efficiency", K_REAL, 0, 0, R_FRACTION, OFF(conv_efficiency)},
    {"compute", "conv_small_channels", K_INT, 0, 0, R_NONNEGATIVE, OFF(conv_small_channels)},
    {"compute", "conv_small_efficiency", K_REAL, 0, 0, R_FRACTION, OFF(conv_small_efficiency)},
    {"execution", "step_overhead", K_REAL, 0, 0, R_NONNEGATIVE, OFF(step_overhead)},
    {"execution", "tile_overhead", K_REAL, 0, 0, R_NONNEGATIVE, OFF(tile_overhead)},
    {"execution", "matmul_tile_overhead", K_REAL, 0, 0, R_NONNEGATIVE, OFF(matmul_tile_overhead)},
    {"execution", "split_overhead", K_REAL, 0, 0, R_NONNEGATIVE, OFF(split_overhead)},
    {"execution", "streamk_overhead", K_REAL, 0, 0, R_NONNEGATIVE, OFF(streamk_overhead)},
    {"fast_memory", "capacity_bytes", K_INT, 1, 0, R_POSITIVE, OFF(capacity_bytes)},
    {"slow_memory", "read_bandwidth", K_REAL, 1, 0, R_POSITIVE, OFF(read_bandwidth)},
    {"slow_memory", "write_bandwidth", K_REAL, 0, 0, R_POSITIVE, OFF(write_bandwidth)},
    {"slow_memory", "transfer_latency", K_REAL, 0, 0, R_NONNEGATIVE, OFF(transfer_latency)},
    {"slow_memory", "separate_channels", K_BOOL, 0, 0, R_ANY, OFF(separate_channels)},
    {"compute", "native_granularity", K_GROUP, 1, 0, R_ANY, -1},
    {"compute", "allow_larger_granularity", K_BOOL, 0, 0, R_ANY, OFF(allow_larger_granularity)},
    {"compute", "pointwise_unpadded", K_BOOL, 0, 0, R_ANY, OFF(pointwise_unpadded)},
    {"compute", "matmul_macs_per_cycle", K_REAL, 1, 0, R_POSITIVE, OFF(matmul_macs_per_cycle)},
    {"compute", "pointwise_elements_per_cycle", K_REAL, 1, 0, R_POSITIVE, OFF(pointwise_elements_per_cycle)},
    {"compute.native_granularity", "w", K_INT, 1, 0, R_NATIVE, OFF(native_w)},
    {"compute.native_granularity", "h", K_INT, 1, 0, R_NATIVE, OFF(native_h)},
    {"compute.native_granularity", "k", K_INT, 0, 0, R_NATIVE, OFF(native_k)},
    {"execution", "launch_overhead", K_REAL, 0, 0, R_NONNEGATIVE, OFF(launch_overhead)},
    {"execution", "double_buffering", K_BOOL, 0, 0, R_ANY, OFF(double_buffering)},
    {"execution", "run_overhead", K_REAL, 0, 0, R_NONNEGATIVE, OFF(run_overhead)},
    {"execution", "replay_interval", K_REAL, 0, 0, R_NONNEGATIVE, OFF(replay_interval)},
    {"compute", "kind_cost", K_GROUP, 0, 0, R_ANY, -1},
    {"", "energy", K_GROUP, 0, 0, R_ANY, -1},
    {"energy", "static_watts", K_REAL, 1, 0, R_NONNEGATIVE, OFF(energy_static_watts)},
    {"energy", "active_watts", K_REAL, 0, 0, R_NONNEGATIVE, OFF(energy_active_watts)},
    {"energy", "mac_pj", K_REAL, 1, 0, R_NONNEGATIVE, OFF(energy_mac_pj)},
    {"energy", "pointwise_pj", K_REAL, 0, 0, R_NONNEGATIVE, OFF(energy_pointwise_pj)},
    {"energy", "slow_read_pj", K_REAL, 1, 0, R_NONNEGATIVE, OFF(energy_slow_read_pj)},
    {"energy", "slow_write_pj", K_REAL, 0, 0, R_NONNEGATIVE, OFF(energy_slow_write_pj)},
    {"energy", "cache_pj", K_REAL, 0, 0, R_NONNEGATIVE, OFF(energy_cache_pj)},
    {"energy", "fast_pj", K_REAL, 0, 0, R_NONNEGATIVE, OFF(energy_fast_pj)},
    {"energy", "launch_pj", K_REAL, 0, 0, R_NONNEGATIVE, OFF(energy_launch_pj)},
    {"energy", "power_limit_watts", K_REAL, 0, 0, R_POSITIVE, OFF(energy_power_limit_watts)},
};
#define NSCHEMA ((int)(sizeof schema / sizeof schema[0]))

/* Index of the schema entry (group, name); the entry must exist. */
static int find(const char *group, const char *name)
{
    for (int i = 0; i < NSCHEMA; i++)
        if (strcmp(schema[i].group, group) == 0 && strcmp(schema[i].name, name) == 0)
            return i;
    return 0;
}

/* State of one load: the file, the target being filled and which settings
 * were seen. */
typedef struct loader {
    const char *path;
    const char *text;    /* the file's text, to check 32-bit integer literals */
    ft_target *t;
    ft_status *st;
    int seen[NSCHEMA];
} loader;

static const char *kind_name(enum kind k)
{
    switch (k) {
    case K_GROUP: return "a group";
    case K_STRING: return "a string";
    case K_BOOL: return "true or false";
    case K_INT: return "an integer";
    case K_REAL: return "a number";
    }
    return "?";
}

static const char *type_name(int type)
{
    switch (type) {
    case CONFIG_TYPE_GROUP: return "a group";
    case CONFIG_TYPE_INT:
    case CONFIG_TYPE_INT64: return "an integer";
    case CONFIG_TYPE_FLOAT: return "a real number";
    case CONFIG_TYPE_STRING: return "a string";
    case CONFIG_TYPE_BOOL: return "a boolean";
    case CONFIG_TYPE_ARRAY: return "an array";
    case CONFIG_TYPE_LIST: return "a list";
    }
    return "of no known type";
}

/* Dotted path of a setting in `group` ("" for the top level). */
static void join(char *buf, size_t n, const char *group, const char *name)
{
    snprintf(buf, n, "%s%s%s", group, *group ? "." : "", name);
}

/* File and line of a setting, for messages: the file libconfig recorded,
 * else (always, as texts are read from memory and @include is refused:
 * ft_cfg_read) the loaded path. */
static const char *where_file(const loader *L, const config_setting_t *s)
{
    const char *f = s ? config_setting_source_file(s) : NULL;
    return f ? f : L->path;
}

static int where_line(const config_setting_t *s)
{
    return s ? (int)config_setting_source_line(s) : 0;
}

/* Levenshtein distance of a and b (names are short; longer ones count as
 * far apart). */
static int distance(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    if (na > 63 || nb > 63)
        return 1000;
    int row[64];
    for (size_t j = 0; j <= nb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= na; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= nb; j++) {
            int up = row[j];
            int cost = a[i - 1] == b[j - 1] ? 0 : 1;
            int v = diag + cost;
            if (row[j] + 1 < v)
                v = row[j] + 1;
            if (row[j - 1] + 1 < v)
                v = row[j - 1] + 1;
            row[j] = v;
            diag = up;
        }
    }
    return row[nb];
}

/* Error for an unknown setting `name` in `group`: suggest the closest known
 * name of that group, or the group where the name belongs. */
static int unknown(loader *L, const config_setting_t *s, const char *group, const char *name)
{
    char full[256], hint[300] = "";
    join(full, sizeof full, group, name);
    int best = -1, bestd = 1000;
    for (int i = 0; i < NSCHEMA; i++) {
        if (strcmp(schema[i].group, group) != 0)
            continue;
        int d = distance(name, schema[i].name);
        if (d < bestd) {
            bestd = d;
            best = i;
        }
    }
    int limit = (int)strlen(name) / 4;
    if (limit < 2)
        limit = 2;
    if (best >= 0 && bestd <= limit) {
        char sugg[256];
        join(sugg, sizeof sugg, group, schema[best].name);
        snprintf(hint, sizeof hint, " (did you mean %s?)", sugg);
    } else {
        for (int i = 0; i < NSCHEMA; i++)
            if (strcmp(schema[i].name, name) == 0) {
                snprintf(hint, sizeof hint, " (it belongs in %s)", *schema[i].group ? schema[i].group : "the top level");
                break;
            }
    }
    return ft__fail(L->st, FT_EINPUT, 0, "%s:%d: unknown setting %s%s", where_file(L, s), where_line(s), full, hint);
}

/* libconfig reads an integer literal without the L suffix as 32 bits and
 * silently wraps larger ones (8589934592 reads as 0).  Find the literal of
 * the 32-bit setting s on its line of the loaded file and return 0 when it
 * is what libconfig stored (or cannot be found), -1 when it was wrapped. */
static int wrapped_int(const loader *L, const config_setting_t *s)
{
    const char *f = config_setting_source_file(s);
    const char *name = config_setting_name(s);
    int line = where_line(s);
    if (!L->text || !name || line <= 0 || (f && strcmp(f, L->path) != 0))
        return 0;
    const char *p = L->text;
    for (int i = 1; i < line && p; i++)
        if ((p = strchr(p, '\n')))
            p++;
    if (!p)
        return 0;
    const char *eol = strchr(p, '\n');
    size_t n = strlen(name);
    for (const char *q = p; (q = strstr(q, name)) && (!eol || q < eol); q++) {
        if (q > p && (isalnum((unsigned char)q[-1]) || q[-1] == '_'))
            continue;
        const char *v = q + n;
        while (*v == ' ' || *v == '\t')
            v++;
        if (*v != '=' && *v != ':')
            continue;
        v++;
        while (*v == ' ' || *v == '\t')
            v++;
        char *end;
        errno = 0;
        const char *digits = v + (*v == '-' || *v == '+');
        int base = digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X') ? 16 : 10;
        long long x = strtoll(v, &end, base);
        if (end == v)
            return 0;
        return errno == ERANGE || x != (long long)config_setting_get_int(s) ? -1 : 0;
    }
    return 0;
}

/* Check the type and range of setting s (schema entry e) and store it. */
static int store(loader *L, const config_setting_t *s, const setting *e)
{
    char full[256];
    join(full, sizeof full, e->group, e->name);
    const char *file = where_file(L, s);
    int line = where_line(s);
    int type = config_setting_type(s);
    char *base = (char *)L->t;
    switch (e->kind) {
    case K_GROUP:
        if (type != CONFIG_TYPE_GROUP) {
            if (strcmp(e->name, "native_granularity") == 0)
                return ft__fail(L->st, FT_EINPUT, 0, "%s:%d: %s must be a group { w = ...; h = ...; k = ...; }, not %s",
                                file, line, full, type_name(type));
            return ft__fail(L->st, FT_EINPUT, 0, "%s:%d: %s must be a group { ... }, not %s", file, line, full,
                            type_name(type));
        }
        return FT_OK;
    case K_STRING: {
        if (type != CONFIG_TYPE_STRING)
            return ft__fail(L->st, FT_EINPUT, 0, "%s:%d: %s must be a string, not %s", file, line, full, type_name(type));
        const char *v = config_setting_get_string(s);
        if (strcmp(e->name, "name") == 0 && (!v || !*v))
            return ft__fail(L->st, FT_EINPUT, 0, "%s:%d: %s must not be empty", file, line, full);
        char **slot = (char **)(base + e->offset);
        ft__free(*slot);
        *slot = ft__strdup(v ? v : "");   /* copied out before config_destroy */
        if (!*slot)
            return ft__fail(L->st, FT_ENOMEM, 0, "%s: out of memory", L->path);
        return FT_OK;
    }
    case K_BOOL:
        if (type != CONFIG_TYPE_BOOL)
            return ft__fail(L->st, FT_EINPUT, 0, "%s:%d: %s must be true or false, not %s", file, line, full,
                            type_name(type));
        *(int *)(base + e->offset) = config_setting_get_bool(s) ? 1 : 0;
        return FT_OK;
    case K_INT: {
        if (type != CONFIG_TYPE_INT && type != CONFIG_TYPE_INT64)
            return ft__fail(L->st, FT_EINPUT, 0, "%s:%d: %s must be %s, not %s", file, line, full, kind_name(e->kind),
                            type_name(type));
        if (type == CONFIG_TYPE_INT && wrapped_int(L, s))
            return ft__fail(L->st, FT_EINPUT, 0, "%s:%d: %s does not fit in 32 bits: add the suffix L (as in 4294967296L)",
                            file, line, full);
        long long v = config_setting_get_int64(s);
        if ((e->range == R_POSITIVE || e->range == R_NATIVE) && v <= 0)
            return ft__fail(L->st, FT_EINPUT, 0, "%s:%d: %s is %lld, must be positive", file, line, full, v);
        if (e->range == R_NATIVE && v > NATIVE_MAX)
            return ft__fail(L->st, FT_EINPUT, 0, "%s:%d: %s is %lld, must be at most %lld", file, line, full, v,
                            (long long)NATIVE_MAX);
        if (e->range == R_UNITS && (v < 1 || v > FT_MAX_UNITS))
            return ft__fail(L->st, FT_EINPUT, 0, "%s:%d: %s is %lld, must be 1 to %d", file, line, full, v, FT_MAX_UNITS);
        *(int64_t *)(base + e->offset) = (int64_t)v;
        return FT_OK;
    }
    case K_REAL: {
        double v;
        if (type == CONFIG_TYPE_INT && wrapped_int(L, s))
            return ft__fail(L->st, FT_EINPUT, 0,
                            "%s:%d: %s does not fit in 32 bits: add the suffix L or write it as a real number (4.0e9)",
                            file, line, full);
        if (type == CONFIG_TYPE_INT || type == CONFIG_TYPE_INT64)
            v = (double)config_setting_get_int64(s);
        else if (type == CONFIG_TYPE_FLOAT)
            v = config_setting_get_float(s);
        else
            return ft__fail(L->st, FT_EINPUT, 0, "%s:%d: %s must be %s, not %s", file, line, full, kind_name(e->kind),
                            type_name(type));
        if (!isfinite(v))
            return ft__fail(L->st, FT_EINPUT, 0, "%s:%d: %s is %g, must be finite", file, line, full, v);
        if (e->range == R_POSITIVE && !(v > 0))
            return ft__fail(L->st, FT_EINPUT, 0, "%s:%d: %s is %g, must be positive", file, line, full, v);
        if (e->range == R_NONNEGATIVE && v < 0)
            return ft__fail(L->st, FT_EINPUT, 0, "%s:%d: %s is %g, must be zero or positive", file, line, full, v);
        if (e->range == R_FRACTION && !(v > 0 && v <= 1))
            return ft__fail(L->st, FT_EINPUT, 0, "%s:%d: %s is %g, must be above 0 and at most 1", file, line, full, v);
        *(double *)(base + e->offset) = v;
        return FT_OK;
    }
    }
    return FT_OK;
}

/* Store compute.kind_cost.NAME (setting s): a factor > 0 on the base cost
 * of every op whose kind (op_kinds) is NAME. */
static int store_kind_cost(loader *L, const config_setting_t *s, const char *name)
{
    const char *file = where_file(L, s);
    int line = where_line(s);
    int type = config_setting_type(s);
    double v;
    if (type == CONFIG_TYPE_INT || type == CONFIG_TYPE_INT64)
        v = (double)config_setting_get_int64(s);
    else if (type == CONFIG_TYPE_FLOAT)
        v = config_setting_get_float(s);
    else
        return ft__fail(L->st, FT_EINPUT, 0, "%s:%d: compute.kind_cost.%s must be a number, not %s", file, line, name,
                        type_name(type));
    if (!isfinite(v) || !(v > 0))
        return ft__fail(L->st, FT_EINPUT, 0, "%s:%d: compute.kind_cost.%s is %g, must be positive", file, line, name, v);
    ft_target *t = L->t;
    if (t->nkind_costs >= FT_TARGET_MAX_KINDS)
        return ft__fail(L->st, FT_EINPUT, 0, "%s:%d: compute.kind_cost: more than %d op kinds", file, line,
                        FT_TARGET_MAX_KINDS);
    char *copy = ft__strdup(name);
    if (!copy)
        return ft__fail(L->st, FT_ENOMEM, 0, "%s: out of memory", L->path);
    t->kind_names[t->nkind_costs] = copy;
    t->kind_costs[t->nkind_costs++] = v;
    return FT_OK;
}

/* Check every setting of group g (dotted path `group`), in file order. */
static int walk(loader *L, const config_setting_t *g, const char *group)
{
    int n = config_setting_length(g);
    for (int i = 0; i < n; i++) {
        const config_setting_t *s = config_setting_get_elem(g, (unsigned)i);
        const char *name = config_setting_name(s);
        if (!name)
            name = "?";
        int idx = -1;
        for (int j = 0; j < NSCHEMA; j++)
            if (strcmp(schema[j].group, group) == 0 && strcmp(schema[j].name, name) == 0) {
                idx = j;
                break;
            }
        if (idx < 0 && strcmp(group, "compute.kind_cost") == 0) {
            int rc = store_kind_cost(L, s, name);
            if (rc)
                return rc;
            continue;
        }
        if (idx < 0)
            return unknown(L, s, group, name);
        const setting *e = &schema[idx];
        if (L->t->contest && !e->contest_ok) {
            char full[256];
            join(full, sizeof full, group, name);
            return ft__fail(L->st, FT_EINPUT, 0,
                            "%s:%d: %s is not used by a contest target (the problem file gives capacity, bandwidth, "
                            "native granularity and base costs); remove it or set contest = false",
                            where_file(L, s), where_line(s), full);
        }
        int rc = store(L, s, e);
        if (rc)
            return rc;
        L->seen[idx] = 1;
        if (e->kind == K_GROUP) {
            char sub[256];
            join(sub, sizeof sub, group, name);
            if ((rc = walk(L, s, sub)))
                return rc;
        }
    }
    return FT_OK;
}

/* The setting at dotted path `path` from the root, or NULL. */
static const config_setting_t *lookup(const config_t *cfg, const char *path)
{
    return path && *path ? config_lookup(cfg, path) : config_root_setting(cfg);
}

/* After the walk: every required setting present, defaults filled in,
 * relations between settings checked. */
static int finish(loader *L, const config_t *cfg)
{
    ft_target *t = L->t;
    for (int i = 0; i < NSCHEMA; i++) {
        const setting *e = &schema[i];
        if (L->seen[i] || !e->required || (t->contest && !e->contest_ok))
            continue;
        /* Report the outermost missing piece: a whole group if it is the
         * group that is absent. */
        if (*e->group) {
            int parent = -1;
            for (int j = 0; j < NSCHEMA; j++) {
                char full[256];
                join(full, sizeof full, schema[j].group, schema[j].name);
                if (schema[j].kind == K_GROUP && strcmp(full, e->group) == 0)
                    parent = j;
            }
            if (parent >= 0 && !L->seen[parent])
                continue;   /* the group itself is reported (required) or optional */
        }
        char full[256];
        join(full, sizeof full, e->group, e->name);
        const config_setting_t *g = lookup(cfg, e->group);
        return ft__fail(L->st, FT_EINPUT, 0, "%s:%d: missing required setting %s%s%s%s", where_file(L, g), where_line(g),
                        full, *e->group ? " (the " : "", e->group, *e->group ? " group starts on this line)" : "");
    }
    if (!t->description) {
        t->description = ft__strdup("");
        if (!t->description)
            return ft__fail(L->st, FT_ENOMEM, 0, "%s: out of memory", L->path);
    }
    if (t->contest)
        return FT_OK;
    if (!L->seen[find("slow_memory", "write_bandwidth")])
        t->write_bandwidth = t->read_bandwidth;
    if (!L->seen[find("compute.native_granularity", "k")])
        t->native_k = t->native_w;
    if (!L->seen[find("", "units")])
        t->units = 1;
    if (!L->seen[find("shared_cache", "partitions")])
        t->cache_partitions = 1;
    if (!L->seen[find("slow_memory", "efficiency")])
        t->memory_efficiency = 1;
    if (!L->seen[find("execution", "streamk_overhead")])
        t->streamk_overhead = -1;   /* no stream-K form */
    if (!L->seen[find("slow_memory", "read_efficiency")])
        t->read_efficiency = -1;   /* as efficiency, also when a fit moves that */
    if (!L->seen[find("slow_memory", "write_efficiency")])
        t->write_efficiency = -1;
    if (!L->seen[find("compute", "matmul_efficiency")])
        t->matmul_efficiency = 1;
    if (!L->seen[find("compute", "pointwise_efficiency")])
        t->pointwise_efficiency = 1;
    if (!L->seen[find("compute", "accumulator_bytes")])
        t->accumulator_bytes = 4;
    if (!L->seen[find("compute", "misaligned_efficiency")])
        t->misaligned_efficiency = 1;
    if (!L->seen[find("compute", "aligned_elements")])
        t->aligned_elements = 8;
    if (!L->seen[find("compute", "conv_efficiency")])
        t->conv_efficiency = 1;
    if (!L->seen[find("compute", "conv_small_efficiency")])
        t->conv_small_efficiency = 1;
    t->energy_on = L->seen[find("", "energy")];
    if (!L->seen[find("energy", "slow_write_pj")])
        t->energy_slow_write_pj = -1;   /* as slow_read_pj, also when a fit moves that */
    if (t->energy_power_limit_watts > 0 && !(t->energy_power_limit_watts > t->energy_static_watts + t->energy_active_watts)) {
        const config_setting_t *s = config_lookup(cfg, "energy.power_limit_watts");
        return ft__fail(L->st, FT_EINPUT, 0, "%s:%d: energy.power_limit_watts is %.15g W, not above static_watts + active_watts (%.15g W): "
                        "nothing would be left to run at",
                        where_file(L, s), where_line(s), t->energy_power_limit_watts, t->energy_static_watts + t->energy_active_watts);
    }
    if (t->capacity_bytes < t->element_bytes) {
        const config_setting_t *s = config_lookup(cfg, "fast_memory.capacity_bytes");
        return ft__fail(L->st, FT_EINPUT, 0, "%s:%d: fast_memory.capacity_bytes is %lld, less than one element (element_bytes = %lld)",
                        where_file(L, s), where_line(s), (long long)t->capacity_bytes, (long long)t->element_bytes);
    }
    return FT_OK;
}

/* ------------------------------------------------------------------- load */

int ft_target_load(const char *path, ft_target **out, ft_status *st)
{
    ft_status_clear(st);
    *out = NULL;
    struct stat sb;
    FILE *f = fopen(path, "r");
    if (!f)
        return ft__fail(st, FT_EINPUT, 0, "%s: cannot open: %s", path, strerror(errno));
    int isdir = fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode);
    fclose(f);
    if (isdir)
        return ft__fail(st, FT_EINPUT, 0, "%s: cannot read: %s", path, strerror(EISDIR));
    char *text;
    int rc = ft_read_file_max(path, FT_MAX_TARGET_BYTES, "FT_MAX_TARGET_BYTES", &text, st);
    if (rc)
        return rc;
    rc = ft_target_parse(text, path, out, st);
    ft__free(text);
    return rc;
}

int ft_target_parse(const char *text, const char *name, ft_target **out, ft_status *st)
{
    ft_status_clear(st);
    *out = NULL;
    config_t cfg;
    config_init(&cfg);
    int rc = ft_cfg_read(&cfg, text, name, st);
    if (rc) {
        config_destroy(&cfg);
        return rc;
    }

    ft_target *t = ft__calloc(1, sizeof *t);
    loader L;
    memset(&L, 0, sizeof L);
    L.path = name;
    L.text = text;
    L.t = t;
    L.st = st;
    if (!t || !(t->path = ft__strdup(name))) {
        rc = ft__fail(st, FT_ENOMEM, 0, "%s: out of memory", name);
        goto done;
    }
    /* `contest` first: it decides which settings are allowed. */
    const config_setting_t *c = config_lookup(&cfg, "contest");
    if (c && (rc = store(&L, c, &schema[find("", "contest")])))
        goto done;
    if ((rc = walk(&L, config_root_setting(&cfg), "")) || (rc = finish(&L, &cfg)))
        goto done;
done:
    config_destroy(&cfg);
    if (rc) {
        ft_target_free(t);
        return rc;
    }
    *out = t;
    return FT_OK;
}

void ft_target_free(ft_target *t)
{
    if (!t)
        return;
    ft__free(t->path);
    ft__free(t->name);
    ft__free(t->description);
    for (int i = 0; i < t->nkind_costs; i++)
        ft__free(t->kind_names[i]);
    ft__free(t);
}

/* ------------------------------------------------------------------ apply */

int ft_target_apply(const ft_target *t, ft_problem *p, int keep_costs, ft_status *st)
{
    ft_status_clear(st);
    if (t->contest)
        return FT_OK;
    double eb = (double)t->element_bytes;
    p->capacity = (double)(t->capacity_bytes / t->element_bytes);
    double read_eff, write_eff;
    ft_target_memory_efficiencies(t, &read_eff, &write_eff);
    p->bandwidth = t->read_bandwidth * read_eff / eb;
    p->native_w = t->native_w;
    p->native_h = t->native_h;
    p->native_k = t->native_k;
    p->allow_larger = t->allow_larger_granularity;
    p->pointwise_exact = t->pointwise_unpadded;
    p->timing.write_bandwidth = t->write_bandwidth * write_eff / eb;
    p->timing.transfer_latency = t->transfer_latency;
    p->timing.launch_overhead = t->launch_overhead;
    p->timing.overlap = t->double_buffering ? FT_OVERLAP_PIPELINE : FT_OVERLAP_NONE;
    p->timing.duplex = t->separate_channels;
    p->timing.units = (int)t->units;
    p->timing.step_overhead = t->step_overhead;
    p->timing.tile_overhead = t->tile_overhead;
    p->timing.matmul_tile_overhead = t->matmul_tile_overhead;
    p->timing.cache_capacity = ft_target_cache_elements(t);
    p->timing.cache_bandwidth = t->cache_bandwidth / eb;
    p->timing.cache_resident = t->cache_capacity_bytes > 0 ? t->cache_resident_bytes / eb : 0;
    memset(&p->energy, 0, sizeof p->energy);
    if (t->energy_on) {
        ft_energy *e = &p->energy;
        const double pj = 1e-12;
        e->on = 1;
        e->seconds_per_unit = 1 / t->clock_hz;
        e->static_watts = t->energy_static_watts;
        e->active_watts = t->energy_active_watts;
        e->mac = t->energy_mac_pj * pj;
        e->pointwise = t->energy_pointwise_pj * pj;
        e->slow_read = t->energy_slow_read_pj * pj * eb;
        e->slow_write = (t->energy_slow_write_pj >= 0 ? t->energy_slow_write_pj : t->energy_slow_read_pj) * pj * eb;
        e->cache = t->energy_cache_pj * pj * eb;
        e->fast = t->energy_fast_pj * pj * eb;
        e->launch = t->energy_launch_pj * pj;
        e->power_limit = t->energy_power_limit_watts;
    }
    if (!keep_costs) {
        double tile = (double)t->native_w * (double)t->native_h;
        for (int i = 0; i < p->nops; i++) {
            ft_op *o = &p->ops[i];
            if (o->type == FT_OP_MATMUL)
                o->base_cost = tile * (double)t->native_k / (t->matmul_macs_per_cycle * t->matmul_efficiency *
                                                              (ft_target_misaligned(t, p, o) ? t->misaligned_efficiency : 1) *
                                                              ft_target_conv_efficiency(t, p, o));
            else /* Pointwise, and Layout: a copy of its one input */
                o->base_cost = tile * (double)o->ninputs / (t->pointwise_elements_per_cycle * t->pointwise_efficiency);
            o->base_cost *= ft_target_kind_cost(t, o->kind);
        }
    }
    return ft_problem_finish(p, st);
}

double ft_target_cache_elements(const ft_target *t)
{
    /* a footprint stays in the cache when it fits one partition */
    return (double)(t->cache_capacity_bytes / t->element_bytes / t->cache_partitions);
}

int ft_target_misaligned(const ft_target *t, const ft_problem *p, const ft_op *op)
{
    if (t->contest || op->type != FT_OP_MATMUL || t->aligned_elements <= 0)
        return 0;
    return op->k % t->aligned_elements != 0 || p->tensors[op->output].width % t->aligned_elements != 0;
}

void ft_target_memory_efficiencies(const ft_target *t, double *read_eff, double *write_eff)
{
    *read_eff = t->read_efficiency > 0 ? t->read_efficiency : t->memory_efficiency;
    *write_eff = t->write_efficiency > 0 ? t->write_efficiency : t->memory_efficiency;
}

double ft_target_conv_efficiency(const ft_target *t, const ft_problem *p, const ft_op *op)
{
    if (t->contest || op->type != FT_OP_MATMUL || !op->kind || strcmp(op->kind, "conv2d") != 0)
        return 1;
    int made = p->tensors[op->inputs[0]].producer;
    if (made < 0 || p->ops[made].type != FT_OP_LAYOUT || !p->ops[made].kind || strcmp(p->ops[made].kind, "conv2d") != 0)
        return 1;   /* no im2col: a 1x1 convolution, a plain GEMM */
    int64_t channels = p->tensors[p->ops[made].inputs[0]].width;   /* the im2col's input: one row a pixel */
    return t->conv_small_channels > 0 && channels < t->conv_small_channels ? t->conv_small_efficiency : t->conv_efficiency;
}

int ft_target_tile_fits_registers(const ft_target *t, int64_t w, int64_t h)
{
    if (t->contest || t->register_file_bytes <= 0)
        return 1;
    /* w, h <= FT_MAX_DIM each: the product of three fits a double exactly enough */
    return (double)w * (double)h * (double)t->accumulator_bytes < (double)t->register_file_bytes;
}

double ft_target_kind_cost(const ft_target *t, const char *kind)
{
    for (int i = 0; kind && i < t->nkind_costs; i++)
        if (strcmp(t->kind_names[i], kind) == 0)
            return t->kind_costs[i];
    return 1.0;
}

double *ft_target_setting(ft_target *t, const char *name, int *fraction)
{
    if (fraction)
        *fraction = 0;
    if (t->contest || !name)
        return NULL;
    static const char kc[] = "compute.kind_cost.";
    if (strncmp(name, kc, sizeof kc - 1) == 0) {
        const char *kind = name + sizeof kc - 1;
        if (!*kind || strchr(kind, '.'))
            return NULL;
        for (int i = 0; i < t->nkind_costs; i++)
            if (strcmp(t->kind_names[i], kind) == 0)
                return &t->kind_costs[i];
        if (t->nkind_costs >= FT_TARGET_MAX_KINDS || !(t->kind_names[t->nkind_costs] = ft__strdup(kind)))
            return NULL;
        t->kind_costs[t->nkind_costs] = 1.0;
        return &t->kind_costs[t->nkind_costs++];
    }
    for (int i = 0; i < NSCHEMA; i++) {
        char full[256];
        join(full, sizeof full, schema[i].group, schema[i].name);
        if (schema[i].kind != K_REAL || strcmp(full, name) != 0)
            continue;
        if (fraction)
            *fraction = schema[i].range == R_FRACTION;
        return (double *)((char *)t + schema[i].offset);
    }
    return NULL;
}

/* ---------------------------------------------------------------- describe */

/* The whole-device terms of t that differ from one plain unit, appended
 * to the summary already in buf (n bytes); the length they take (as
 * snprintf). */
static int describe_device(const ft_target *t, char *buf, size_t n)
{
    char more[1024] = "";
    int len = 0;
    /* past the end of more, each term only counts (snprintf's length) */
#define ADD(...)                                                                                                     \
    len += (size_t)len < sizeof more ? snprintf(more + len, sizeof more - (size_t)len, __VA_ARGS__)                 \
                                     : snprintf(NULL, 0, __VA_ARGS__)
    if (t->units > 1)
        ADD(", %lld units", (long long)t->units);
    if (t->register_file_bytes > 0)
        ADD(", MatMul tiles within %lld B of registers", (long long)t->register_file_bytes);
    if (t->misaligned_efficiency < 1)
        ADD(", misaligned MatMul efficiency %g", t->misaligned_efficiency);
    if (t->conv_efficiency < 1)
        ADD(", convolution efficiency %g", t->conv_efficiency);
    if (t->conv_small_channels > 0)
        ADD(" (%g under %lld channels)", t->conv_small_efficiency, (long long)t->conv_small_channels);
    if (t->split_overhead > 0)
        ADD(", split-K overhead %g cycles", t->split_overhead);
    if (t->streamk_overhead >= 0)
        ADD(", stream-K overhead %g cycles", t->streamk_overhead);
    if (t->matmul_efficiency < 1)
        ADD(", MatMul efficiency %g", t->matmul_efficiency);
    if (t->pointwise_efficiency < 1)
        ADD(", Pointwise efficiency %g", t->pointwise_efficiency);
    double read_eff, write_eff;
    ft_target_memory_efficiencies(t, &read_eff, &write_eff);
    if (read_eff != write_eff)
        ADD(", slow memory efficiency %g read, %g write", read_eff, write_eff);
    else if (t->memory_efficiency < 1)
        ADD(", slow memory efficiency %g", t->memory_efficiency);
    if (t->step_overhead > 0)
        ADD(", step overhead %g cycles", t->step_overhead);
    if (t->tile_overhead > 0)
        ADD(", tile overhead %g cycles", t->tile_overhead);
    if (t->matmul_tile_overhead > 0)
        ADD(", MatMul tile overhead %g cycles", t->matmul_tile_overhead);
    if (t->pointwise_unpadded)
        ADD(", Pointwise ops unpadded");
    if (t->cache_capacity_bytes > 0)
        ADD(", shared cache %lld B%s at %g B/cycle", (long long)t->cache_capacity_bytes,
            t->cache_partitions > 1 ? " in partitions" : "", t->cache_bandwidth);
    if (t->cache_capacity_bytes > 0 && t->cache_resident_bytes > 0)
        ADD(", partial residency %g B", t->cache_resident_bytes);
    if (t->run_overhead > 0)
        ADD(", run overhead %g cycles", t->run_overhead);
    if (t->replay_interval > 0)
        ADD(", replay interval %g cycles", t->replay_interval);
    for (int i = 0; i < t->nkind_costs; i++)
        ADD(", %s cost x%g", t->kind_names[i], t->kind_costs[i]);
#undef ADD
    size_t used = buf && n ? strlen(buf) : 0;
    if (buf && used < n)
        snprintf(buf + used, n - used, "%s", more);
    return len;
}

int ft_target_describe(const ft_target *t, char *buf, size_t n)
{
    if (t->contest)
        return snprintf(buf, n,
                        "%s (contest): the abstract machine of SPEC; capacity, bandwidth, native granularity and "
                        "base costs from the problem file",
                        t->name);
    char lat[FT_NUMBUF], launch[FT_NUMBUF];
    return snprintf(buf, n,
                    "%s: clock %g Hz, %lld B per element, fast memory %lld B, slow memory read %g B/cycle, write %g "
                    "B/cycle%s, latency %s cycles, native %lldx%lldx%lld (larger %s), MatMul %g MAC/cycle, Pointwise "
                    "%g elements/cycle, launch overhead %s cycles, double buffering %s",
                    t->name, t->clock_hz, (long long)t->element_bytes, (long long)t->capacity_bytes,
                    t->read_bandwidth, t->write_bandwidth, t->separate_channels ? " (separate channels)" : "",
                    ft_format_cycles(lat, t->transfer_latency), (long long)t->native_w,
                    (long long)t->native_h, (long long)t->native_k, t->allow_larger_granularity ? "allowed" : "not allowed",
                    t->matmul_macs_per_cycle, t->pointwise_elements_per_cycle, ft_format_cycles(launch, t->launch_overhead),
                    t->double_buffering ? "yes" : "no") +
           describe_device(t, buf, n);
}
