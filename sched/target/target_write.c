/* target_write.c - write a target file with some number settings replaced (calibrate's fitted values), keeping its layout and comments. */
#include "fusetile/calibrate.h"

#include "cost/cost.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Most lines a target file may have, and deepest group nesting. */
#define MAX_LINES 100000
#define MAX_DEPTH 8
#define MAX_PATH 256

/* The file as lines (each malloc'd, no newline). */
typedef struct lines {
    int n, cap;
    char **l;
} lines;

static void lines_free(lines *L)
{
    for (int i = 0; i < L->n; i++)
        ft__free(L->l[i]);
    ft__free(L->l);
}

/* Insert a copy of s before line `at`; -1 on OOM or too many lines. */
static int lines_insert(lines *L, int at, const char *s)
{
    if (L->n >= MAX_LINES)
        return -1;
    if (L->n == L->cap) {
        int cap = L->cap ? 2 * L->cap : 64;
        char **nl = ft__realloc(L->l, sizeof *nl * (size_t)cap);
        if (!nl)
            return -1;
        L->l = nl;
        L->cap = cap;
    }
    char *c = ft__strdup(s);
    if (!c)
        return -1;
    memmove(L->l + at + 1, L->l + at, sizeof *L->l * (size_t)(L->n - at));
    L->l[at] = c;
    L->n++;
    return 0;
}

/* The identifier a line starts a setting with ("name =" or "name :"),
 * copied to name (n bytes); its indentation in *indent.  0 when the line
 * starts no setting. */
static int setting_name(const char *line, char *name, size_t n, int *indent)
{
    const char *p = line;
    while (*p == ' ' || *p == '\t')
        p++;
    *indent = (int)(p - line);
    size_t k = 0;
    while ((isalnum((unsigned char)p[k]) || p[k] == '_' || p[k] == '-' || p[k] == '*') && k + 1 < n) {
        name[k] = p[k];
        k++;
    }
    name[k] = 0;
    if (k == 0 || isdigit((unsigned char)name[0]))
        return 0;
    const char *q = p + k;
    while (*q == ' ' || *q == '\t')
        q++;
    return *q == '=' || *q == ':';
}

/* Braces a line opens minus those it closes, outside strings and
 * comments. */
static int brace_delta(const char *line)
{
    int d = 0, instr = 0;
    for (const char *p = line; *p; p++) {
        if (instr) {
            if (*p == '\\' && p[1])
                p++;
            else if (*p == '"')
                instr = 0;
            continue;
        }
        if (*p == '"')
            instr = 1;
        else if (*p == '#' || (*p == '/' && (p[1] == '/' || p[1] == '*')))
            break;
        else if (*p == '{')
            d++;
        else if (*p == '}')
            d--;
    }
    return d;
}

/* Find setting `path` (dotted): the line it is on (*line) or -1; the line
 * of its deepest existing enclosing group (*group, -1: the top level) and
 * that group's depth in path components (*depth). */
static void find(const lines *L, const char *path, int *line, int *group, int *depth)
{
    char stack[MAX_DEPTH][MAX_PATH];
    int sp = 0;
    *line = -1;
    *group = -1;
    *depth = 0;
    for (int i = 0; i < L->n; i++) {
        char name[MAX_PATH], full[MAX_PATH * 2] = "";
        int indent;
        int d = brace_delta(L->l[i]);
        if (setting_name(L->l[i], name, sizeof name, &indent)) {
            for (int s = 0; s < sp; s++) {
                strncat(full, stack[s], sizeof full - strlen(full) - 1);
                strncat(full, ".", sizeof full - strlen(full) - 1);
            }
            strncat(full, name, sizeof full - strlen(full) - 1);
            if (strcmp(full, path) == 0 && d == 0) {
                *line = i;
                return;
            }
            size_t fl = strlen(full);
            if (d > 0 && strncmp(path, full, fl) == 0 && path[fl] == '.' && sp + 1 > *depth) {
                *group = i;
                *depth = sp + 1;
            }
            if (d > 0 && sp < MAX_DEPTH)
                snprintf(stack[sp++], MAX_PATH, "%s", name);
            continue;
        }
        for (; d < 0 && sp > 0; d++)
            sp--;
    }
}

/* The line `indent` spaces, "name = value;" and the note as a comment. */
static void format_line(char *buf, size_t n, int indent, const char *name, const char *value, const char *note)
{
    int len = snprintf(buf, n, "%*s%s = %s;", indent, "", name, value);
    if (note && *note && len >= 0 && (size_t)len < n)
        snprintf(buf + len, n - (size_t)len, "%*s# %s", len < 35 ? 35 - len : 1, "", note);
}

/* Set `path` to `value` in L: its own line rewritten, or a new line (and
 * new groups) under its deepest existing group.  0, or -1 on OOM. */
static int set_one(lines *L, const char *path, const char *value, const char *note)
{
    int line, group, depth;
    find(L, path, &line, &group, &depth);
    char buf[1024];
    const char *leaf = strrchr(path, '.');
    leaf = leaf ? leaf + 1 : path;
    if (line >= 0) {
        char name[MAX_PATH];
        int indent;
        setting_name(L->l[line], name, sizeof name, &indent);
        format_line(buf, sizeof buf, indent, name, value, note);
        char *c = ft__strdup(buf);
        if (!c)
            return -1;
        ft__free(L->l[line]);
        L->l[line] = c;
        return 0;
    }
    /* the components below the deepest existing group: groups to open */
    const char *p = path;
    for (int i = 0; i < depth; i++)
        p = strchr(p, '.') + 1;
    int at = group >= 0 ? group + 1 : L->n;
    int indent = depth * 2;
    int opened = 0;
    while (strchr(p, '.')) {
        const char *dot = strchr(p, '.');
        snprintf(buf, sizeof buf, "%*s%.*s = {", indent, "", (int)(dot - p), p);
        if (lines_insert(L, at++, buf))
            return -1;
        opened++;
        indent += 2;
        p = dot + 1;
    }
    format_line(buf, sizeof buf, indent, leaf, value, note);
    if (lines_insert(L, at++, buf))
        return -1;
    while (opened-- > 0) {
        indent -= 2;
        snprintf(buf, sizeof buf, "%*s};", indent, "");
        if (lines_insert(L, at++, buf))
            return -1;
    }
    return 0;
}

int ft_target_write_fitted(const char *in_path, const char *out_path, const char *const *names, const double *values,
                           int n, const char *note, ft_status *st)
{
    ft_status_clear(st);
    char *text;
    int rc = ft__read_file(in_path, &text, st);
    if (rc)
        return rc;
    lines L = {0, 0, NULL};
    char *s = text;
    while (s && rc == FT_OK) {
        char *nl = strchr(s, '\n');
        if (nl)
            *nl = 0;
        if (*s || nl)
            if (lines_insert(&L, L.n, s))
                rc = ft__fail(st, FT_ENOMEM, 0, "%s: out of memory or more than %d lines", in_path, MAX_LINES);
        s = nl ? nl + 1 : NULL;
    }
    ft__free(text);
    char vals[FT_CALIB_MAX_FREE][40];
    for (int i = 0; i < n && rc == FT_OK; i++) {
        if (i >= FT_CALIB_MAX_FREE || !isfinite(values[i]) || strlen(names[i]) >= MAX_PATH) {
            rc = ft__fail(st, FT_EINPUT, 0, "%s: cannot write setting %s", out_path, names[i]);
            break;
        }
        if (values[i] < 0)
            continue;   /* left at its "off" default (ft_calibrate) */
        snprintf(vals[i], sizeof vals[i], "%.6g", values[i]);
        if (!strpbrk(vals[i], ".e"))
            strcat(vals[i], ".0");   /* a real number, as the schema reads it */
        if (set_one(&L, names[i], vals[i], note))
            rc = ft__fail(st, FT_ENOMEM, 0, "%s: out of memory", out_path);
    }
    size_t len = 1;
    for (int i = 0; i < L.n; i++)
        len += strlen(L.l[i]) + 1;
    char *out = rc ? NULL : ft__malloc(len);
    if (!rc && !out)
        rc = ft__fail(st, FT_ENOMEM, 0, "out of memory");
    if (!rc) {
        size_t k = 0;
        for (int i = 0; i < L.n; i++) {
            size_t l = strlen(L.l[i]);
            memcpy(out + k, L.l[i], l);
            k += l;
            out[k++] = '\n';
        }
        out[k] = 0;
        rc = ft_write_atomic(out, out_path, st);
    }
    ft__free(out);
    lines_free(&L);
    if (rc)
        return rc;
    /* read it back: every value where it belongs */
    ft_target *t;
    if ((rc = ft_target_load(out_path, &t, st)))
        return rc;
    for (int i = 0; i < n; i++) {
        double *v = ft_target_setting(t, names[i], NULL);
        if (values[i] < 0 ? !v || *v != values[i] : !v || *v != strtod(vals[i], NULL)) {
            rc = ft__fail(st, FT_EINPUT, 0, "%s: %s did not read back as %s (a layout the writer cannot edit)", out_path,
                          names[i], vals[i]);
            break;
        }
    }
    ft_target_free(t);
    return rc;
}
