/* vcd_parse.h - a small strict VCD (IEEE 1364 value change dump) reader for the tests; header-only.
 *
 * vcdp_parse() checks the header ($timescale, $scope/$upscope, $var
 * declarations, $enddefinitions), then the body: timestamps strictly
 * increasing, every value change naming a declared id, scalars only for
 * 1-bit variables, binary vectors no wider than their declaration, x and z
 * rejected (fusetile never writes them), real changes (rVALUE ID) only for
 * real variables, their value recorded as the double's bits
 * (vcdp_real).  It records every variable's value
 * changes as (time, value) pairs, the $dumpvars values counting as changes
 * at their timestamp, and the scope path it is declared in.
 */
#ifndef VCD_PARSE_H
#define VCD_PARSE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VCDP_MAXVARS 32

typedef struct vcdp_var {
    char type[24];
    int size;
    char id[24];
    char ref[64];
    char scope[64];   /* innermost scope */
    char path[160];   /* every enclosing scope, outermost first, joined by '.' ("top.sub") */
    size_t n, cap;
    int64_t *time;
    uint64_t *value;
} vcdp_var;

typedef struct vcdp_doc {
    char timescale[72];  /* e.g. "1 fs" (number and unit joined by a space) */
    int nvars;
    vcdp_var vars[VCDP_MAXVARS];
    int64_t last_time;   /* last timestamp, -1 if none */
    int64_t ntimes;      /* timestamps seen */
    char err[256];       /* why vcdp_parse failed */
} vcdp_doc;

/* Index of the variable named ref, or -1. */
static inline int vcdp_find(const vcdp_doc *d, const char *ref)
{
    for (int i = 0; i < d->nvars; i++)
        if (strcmp(d->vars[i].ref, ref) == 0)
            return i;
    return -1;
}

static inline void vcdp_free(vcdp_doc *d)
{
    for (int i = 0; i < d->nvars; i++) {
        free(d->vars[i].time);
        free(d->vars[i].value);
    }
    memset(d, 0, sizeof *d);
}

/* Next whitespace-separated token of *p into tok (at most cap-1 bytes);
 * 0 at the end of the text, -1 if a token is too long. */
static inline int vcdp_token(const char **p, char *tok, size_t cap)
{
    const char *s = *p;
    size_t n = 0;
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    if (!*s) {
        *p = s;
        return 0;
    }
    while (*s && *s != ' ' && *s != '\t' && *s != '\n' && *s != '\r') {
        if (n + 1 >= cap)
            return -1;
        tok[n++] = *s++;
    }
    tok[n] = '\0';
    *p = s;
    return 1;
}

static inline int vcdp_fail(vcdp_doc *d, const char *what, const char *tok)
{
    snprintf(d->err, sizeof d->err, "%s%s%.160s%s", what, tok ? " '" : "", tok ? tok : "", tok ? "'" : "");
    return -1;
}

/* Skip to the $end closing a section; -1 at the end of the text. */
static inline int vcdp_skip(const char **p, char *tok, size_t cap)
{
    int r;
    while ((r = vcdp_token(p, tok, cap)) == 1)
        if (strcmp(tok, "$end") == 0)
            return 0;
    return -1;
}

static inline int vcdp_record(vcdp_doc *d, int v, int64_t t, uint64_t value)
{
    vcdp_var *x = &d->vars[v];
    if (x->n == x->cap) {
        size_t cap = x->cap ? 2 * x->cap : 16;
        int64_t *nt = realloc(x->time, cap * sizeof *nt);
        if (nt)
            x->time = nt;
        uint64_t *nv = realloc(x->value, cap * sizeof *nv);
        if (nv)
            x->value = nv;
        if (!nt || !nv)
            return vcdp_fail(d, "out of memory", NULL);
        x->cap = cap;
    }
    x->time[x->n] = t;
    x->value[x->n] = value;
    x->n++;
    return 0;
}

static inline int vcdp_lookup(const vcdp_doc *d, const char *id)
{
    for (int i = 0; i < d->nvars; i++)
        if (strcmp(d->vars[i].id, id) == 0)
            return i;
    return -1;
}

/* Parse a NUL-terminated VCD text into *d (zeroed here).  0, or -1 with
 * d->err set.  Release with vcdp_free either way. */
static inline int vcdp_parse(const char *text, vcdp_doc *d)
{
    const char *p = text;
    char tok[256], scope[64] = "", path[160] = "";
    int r, depth = 0, defs_done = 0;

    memset(d, 0, sizeof *d);
    d->last_time = -1;
    while ((r = vcdp_token(&p, tok, sizeof tok)) == 1) {
        if (!defs_done) {
            if (!strcmp(tok, "$date") || !strcmp(tok, "$version") || !strcmp(tok, "$comment")) {
                if (vcdp_skip(&p, tok, sizeof tok) != 0)
                    return vcdp_fail(d, "unterminated header section", NULL);
            } else if (!strcmp(tok, "$timescale")) {
                char a[32] = "", b[32] = "";
                if (vcdp_token(&p, a, sizeof a) != 1)
                    return vcdp_fail(d, "bad $timescale", NULL);
                if (vcdp_token(&p, b, sizeof b) != 1)
                    return vcdp_fail(d, "bad $timescale", NULL);
                if (strcmp(b, "$end") == 0)
                    snprintf(d->timescale, sizeof d->timescale, "%s", a);
                else {
                    snprintf(d->timescale, sizeof d->timescale, "%s %s", a, b);
                    if (vcdp_token(&p, tok, sizeof tok) != 1 || strcmp(tok, "$end") != 0)
                        return vcdp_fail(d, "$timescale without $end", NULL);
                }
            } else if (!strcmp(tok, "$scope")) {
                char type[32], name[64];
                if (vcdp_token(&p, type, sizeof type) != 1 || vcdp_token(&p, name, sizeof name) != 1 ||
                    vcdp_token(&p, tok, sizeof tok) != 1 || strcmp(tok, "$end") != 0)
                    return vcdp_fail(d, "bad $scope", NULL);
                if (strcmp(type, "module") && strcmp(type, "task") && strcmp(type, "function") &&
                    strcmp(type, "begin") && strcmp(type, "fork"))
                    return vcdp_fail(d, "bad scope type", type);
                snprintf(scope, sizeof scope, "%s", name);
                size_t used = strlen(path);
                if (used + strlen(name) + 2 > sizeof path)
                    return vcdp_fail(d, "scope path too long", name);
                snprintf(path + used, sizeof path - used, "%s%s", used ? "." : "", name);
                depth++;
            } else if (!strcmp(tok, "$upscope")) {
                if (depth == 0 || vcdp_token(&p, tok, sizeof tok) != 1 || strcmp(tok, "$end") != 0)
                    return vcdp_fail(d, "bad $upscope", NULL);
                depth--;
                char *dot = strrchr(path, '.');
                *(dot ? dot : path) = '\0';
                dot = strrchr(path, '.');
                snprintf(scope, sizeof scope, "%.63s", dot ? dot + 1 : path);
            } else if (!strcmp(tok, "$var")) {
                vcdp_var *v;
                char size[32];
                if (d->nvars == VCDP_MAXVARS)
                    return vcdp_fail(d, "too many variables", NULL);
                if (depth == 0)
                    return vcdp_fail(d, "$var outside a scope", NULL);
                v = &d->vars[d->nvars];
                if (vcdp_token(&p, v->type, sizeof v->type) != 1 || vcdp_token(&p, size, sizeof size) != 1 ||
                    vcdp_token(&p, v->id, sizeof v->id) != 1 || vcdp_token(&p, v->ref, sizeof v->ref) != 1)
                    return vcdp_fail(d, "bad $var", NULL);
                if (vcdp_token(&p, tok, sizeof tok) != 1)
                    return vcdp_fail(d, "bad $var", NULL);
                if (strcmp(tok, "$end") != 0 && (tok[0] != '[' || vcdp_token(&p, tok, sizeof tok) != 1 ||
                                                 strcmp(tok, "$end") != 0))
                    return vcdp_fail(d, "$var without $end", NULL);
                static const char *const types[] = {"event",   "integer", "parameter", "real",    "realtime",
                                                    "reg",     "supply0", "supply1",   "time",    "tri",
                                                    "triand",  "trior",   "trireg",    "tri0",    "tri1",
                                                    "wand",    "wire",    "wor"};
                int known = 0;
                for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
                    known |= strcmp(v->type, types[i]) == 0;
                if (!known)
                    return vcdp_fail(d, "unknown var type", v->type);
                char *end;
                long sz = strtol(size, &end, 10);
                if (*end || sz < 1 || sz > 64)
                    return vcdp_fail(d, "bad var size", size);
                v->size = (int)sz;
                if (vcdp_lookup(d, v->id) >= 0)
                    return vcdp_fail(d, "id declared twice", v->id);
                snprintf(v->scope, sizeof v->scope, "%s", scope);
                snprintf(v->path, sizeof v->path, "%s", path);
                d->nvars++;
            } else if (!strcmp(tok, "$enddefinitions")) {
                if (vcdp_token(&p, tok, sizeof tok) != 1 || strcmp(tok, "$end") != 0)
                    return vcdp_fail(d, "bad $enddefinitions", NULL);
                if (depth != 0)
                    return vcdp_fail(d, "unclosed $scope", NULL);
                if (d->timescale[0] == '\0')
                    return vcdp_fail(d, "no $timescale", NULL);
                defs_done = 1;
            } else
                return vcdp_fail(d, "unexpected token in the header", tok);
            continue;
        }
        /* body */
        if (tok[0] == '#') {
            char *end;
            long long t = strtoll(tok + 1, &end, 10);
            if (tok[1] == '\0' || *end || t < 0)
                return vcdp_fail(d, "bad timestamp", tok);
            if ((int64_t)t <= d->last_time)
                return vcdp_fail(d, "timestamp not increasing", tok);
            d->last_time = t;
            d->ntimes++;
        } else if (!strcmp(tok, "$dumpvars") || !strcmp(tok, "$dumpall") || !strcmp(tok, "$dumpon") ||
                   !strcmp(tok, "$dumpoff") || !strcmp(tok, "$end")) {
            if (d->last_time < 0)
                return vcdp_fail(d, "keyword before the first timestamp", tok);
        } else if (!strcmp(tok, "$comment")) {
            if (vcdp_skip(&p, tok, sizeof tok) != 0)
                return vcdp_fail(d, "unterminated $comment", NULL);
        } else if (tok[0] == '0' || tok[0] == '1') {
            int v = vcdp_lookup(d, tok + 1);
            if (d->last_time < 0)
                return vcdp_fail(d, "value change before the first timestamp", tok);
            if (v < 0)
                return vcdp_fail(d, "undeclared id", tok + 1);
            if (d->vars[v].size != 1)
                return vcdp_fail(d, "scalar change of a vector", tok);
            if (vcdp_record(d, v, d->last_time, (uint64_t)(tok[0] - '0')) != 0)
                return -1;
        } else if (tok[0] == 'r' || tok[0] == 'R') {
            char id[64], *end;
            double x = strtod(tok + 1, &end);
            uint64_t bits;
            if (d->last_time < 0)
                return vcdp_fail(d, "value change before the first timestamp", tok);
            if (tok[1] == '\0' || *end)
                return vcdp_fail(d, "not a real number in", tok);
            if (vcdp_token(&p, id, sizeof id) != 1)
                return vcdp_fail(d, "real change without an id", tok);
            int v = vcdp_lookup(d, id);
            if (v < 0)
                return vcdp_fail(d, "undeclared id", id);
            if (strcmp(d->vars[v].type, "real") != 0)
                return vcdp_fail(d, "real change of a variable not real", tok);
            memcpy(&bits, &x, sizeof bits);
            if (vcdp_record(d, v, d->last_time, bits) != 0)
                return -1;
        } else if (tok[0] == 'b' || tok[0] == 'B') {
            char id[64];
            uint64_t value = 0;
            size_t nbits = strlen(tok + 1);
            if (d->last_time < 0)
                return vcdp_fail(d, "value change before the first timestamp", tok);
            if (nbits == 0)
                return vcdp_fail(d, "empty vector", tok);
            for (const char *b = tok + 1; *b; b++) {
                if (*b != '0' && *b != '1')
                    return vcdp_fail(d, "not a binary digit in", tok);
                value = value << 1 | (uint64_t)(*b - '0');
            }
            if (vcdp_token(&p, id, sizeof id) != 1)
                return vcdp_fail(d, "vector change without an id", tok);
            int v = vcdp_lookup(d, id);
            if (v < 0)
                return vcdp_fail(d, "undeclared id", id);
            if (nbits > (size_t)d->vars[v].size)
                return vcdp_fail(d, "vector wider than its variable", tok);
            if (vcdp_record(d, v, d->last_time, value) != 0)
                return -1;
        } else
            return vcdp_fail(d, "unexpected token in the body", tok);
    }
    if (r < 0)
        return vcdp_fail(d, "token too long", NULL);
    if (!defs_done)
        return vcdp_fail(d, "no $enddefinitions", NULL);
    return 0;
}

/* A real variable's recorded value (its double's bits) as the double. */
static inline double vcdp_real(uint64_t bits)
{
    double x;
    memcpy(&x, &bits, sizeof x);
    return x;
}

/* Value of variable v at time t (the last change at or before t); 0 before
 * its first change. */
static inline uint64_t vcdp_value_at(const vcdp_doc *d, int v, int64_t t)
{
    const vcdp_var *x = &d->vars[v];
    uint64_t val = 0;
    for (size_t i = 0; i < x->n && x->time[i] <= t; i++)
        val = x->value[i];
    return val;
}

#endif /* VCD_PARSE_H */
