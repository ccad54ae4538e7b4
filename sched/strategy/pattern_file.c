/* pattern_file.c - reader of pattern-library files (patterns/README.md): line-based pattern definitions into an ft_patlib, errors as "FILE:LINE: what is wrong". */
#include "strategy/patterns.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_WORDS = FT_PATTERNS_MAX_NODES + 8 }; /* words on one line */

/* The state of one file being read. */
typedef struct reader {
    ft_patlib *lib;
    const char *name;  /* file name for messages */
    int line;          /* current line, from 1 */
    int open;          /* index of the pattern being read, or -1 */
    ft_status *st;
} reader;

/* Fill st with "NAME:LINE: message" (FT_EINPUT); returns FT_EINPUT. */
static int bad(const reader *R, const char *fmt, ...) FT_PRINTF(2, 3);
static int bad(const reader *R, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ft__fail(R->st, FT_EINPUT, 0, "%s:%d: %s", R->name, R->line, msg);
}

/* FT_ENOMEM with the file named. */
static int oom(const reader *R)
{
    return ft__fail(R->st, FT_ENOMEM, 0, "%s:%d: out of memory", R->name, R->line);
}

/* Whether s is a name: one or more of [A-Za-z0-9_.-]. */
static int name_ok(const char *s, size_t n)
{
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
              c == '-'))
            return 0;
    }
    return 1;
}

/* Index of node `name` in pattern P, or -1. */
static int node_index(const ft_pattern *P, const char *name)
{
    for (int i = 0; i < P->nnodes; i++)
        if (strcmp(P->node[i].name, name) == 0)
            return i;
    return -1;
}

/* Node index of `name` in the open pattern, or -1 with st filled naming
 * the directive and the nodes declared so far. */
static int need_node(const reader *R, const ft_pattern *P, const char *dir, const char *name)
{
    int i = node_index(P, name);
    if (i < 0) {
        char known[256] = "";
        size_t len = 0;
        for (int k = 0; k < P->nnodes && len + 1 < sizeof known; k++)
            len += (size_t)snprintf(known + len, sizeof known - len, "%s%s", k ? ", " : "", P->node[k].name);
        bad(R, "%s: unknown node '%s' (pattern '%s' declares %s)", dir, name, P->name, P->nnodes ? known : "none yet");
    }
    return i;
}

/* `pattern NAME`: open a new pattern at the end of the library. */
static int do_pattern(reader *R, char **w, int nw)
{
    ft_patlib *L = R->lib;
    if (R->open >= 0)
        return bad(R, "pattern: '%s' (line %d) has no 'end' before this pattern", L->pat[R->open].name,
                   L->pat[R->open].line);
    if (nw != 2)
        return bad(R, "pattern: expected 'pattern NAME', got %d word%s", nw, nw == 1 ? "" : "s");
    if (!name_ok(w[1], strlen(w[1])))
        return bad(R, "pattern: '%s' is not a name (letters, digits, '_', '.', '-')", w[1]);
    for (int i = 0; i < L->npatterns; i++)
        if (strcmp(L->pat[i].name, w[1]) == 0)
            return bad(R, "pattern: '%s' is already defined at %s:%d", w[1], L->pat[i].file, L->pat[i].line);
    ft_pattern *np = ft__realloc(L->pat, sizeof *np * (size_t)(L->npatterns + 1));
    if (!np)
        return oom(R);
    L->pat = np;
    ft_pattern *P = &L->pat[L->npatterns++];
    memset(P, 0, sizeof *P);
    P->line = R->line;
    P->name = ft__strdup(w[1]);
    P->file = ft__strdup(R->name);
    R->open = L->npatterns - 1;
    return P->name && P->file ? FT_OK : oom(R);
}

/* `node NAME KIND[|KIND...]`. */
static int do_node(reader *R, ft_pattern *P, char **w, int nw)
{
    if (nw != 3)
        return bad(R, "node: expected 'node NAME KIND[|KIND...]', got %d word%s", nw, nw == 1 ? "" : "s");
    if (!name_ok(w[1], strlen(w[1])))
        return bad(R, "node: '%s' is not a name (letters, digits, '_', '.', '-')", w[1]);
    if (node_index(P, w[1]) >= 0)
        return bad(R, "node: '%s' is declared twice in pattern '%s'", w[1], P->name);
    if (P->nnodes == FT_PATTERNS_MAX_NODES)
        return bad(R, "node: pattern '%s' has more than %d nodes (FT_PATTERNS_MAX_NODES)", P->name,
                   FT_PATTERNS_MAX_NODES);
    int nalt = 1;
    for (const char *c = w[2]; *c; c++)
        nalt += *c == '|';
    ft_pat_node *N = &P->node[P->nnodes];
    N->name = ft__strdup(w[1]);
    N->alt = ft__calloc((size_t)nalt, sizeof *N->alt);
    P->nnodes++; /* counted now, so ft__patlib_free releases what was made */
    if (!N->name || !N->alt)
        return oom(R);
    const char *s = w[2];
    for (int a = 0; a < nalt; a++) {
        const char *bar = strchr(s, '|');
        size_t len = bar ? (size_t)(bar - s) : strlen(s);
        if (!name_ok(s, len))
            return bad(R, "node: kind '%s' of node '%s': alternative %d is empty or not a name", w[2], w[1], a + 1);
        N->alt[a] = ft__malloc(len + 1);
        if (!N->alt[a])
            return oom(R);
        memcpy(N->alt[a], s, len);
        N->alt[a][len] = '\0';
        N->nalt = a + 1;
        s += len + 1;
    }
    return FT_OK;
}

/* Append edge (from, to, slot) to P. */
static int add_edge(reader *R, ft_pattern *P, int from, int to, int slot)
{
    ft_pat_edge *ne = ft__realloc(P->edge, sizeof *ne * (size_t)(P->nedges + 1));
    if (!ne)
        return oom(R);
    P->edge = ne;
    P->edge[P->nedges++] = (ft_pat_edge){from, to, slot};
    return FT_OK;
}

/* `edge FROM TO [SLOT]` (slot 0 when left out) and `share A B`. */
static int do_edge(reader *R, ft_pattern *P, char **w, int nw, int share)
{
    const char *dir = share ? "share" : "edge";
    if (share ? nw != 3 : nw < 3 || nw > 4)
        return bad(R, "%s: expected '%s', got %d word%s", dir, share ? "share A B" : "edge FROM TO [SLOT]", nw,
                   nw == 1 ? "" : "s");
    int a = need_node(R, P, dir, w[1]);
    int b = a < 0 ? -1 : need_node(R, P, dir, w[2]);
    if (a < 0 || b < 0)
        return FT_EINPUT;
    if (a == b)
        return bad(R, "%s: node '%s' cannot be linked to itself", dir, w[1]);
    int slot = share ? -1 : 0;
    if (nw == 4) {
        const char *s = w[3];
        long v = 0;
        for (; *s >= '0' && *s <= '9' && v <= FT_PATTERNS_MAX_SLOT; s++)
            v = v * 10 + (*s - '0');
        if (*s || !w[3][0] || v > FT_PATTERNS_MAX_SLOT)
            return bad(R, "edge: slot '%s' is not an integer from 0 to %d", w[3], FT_PATTERNS_MAX_SLOT);
        slot = (int)v;
    }
    for (int e = 0; e < P->nedges; e++) {
        const ft_pat_edge *E = &P->edge[e];
        if (share && E->slot < 0 && ((E->from == a && E->to == b) || (E->from == b && E->to == a)))
            return bad(R, "share: '%s' and '%s' are already linked by a share line", w[1], w[2]);
        if (!share && E->slot >= 0 && E->to == b && E->slot == slot)
            return bad(R, "edge: input slot %d of '%s' is already fed by '%s'", slot, w[2], P->node[E->from].name);
    }
    return add_edge(R, P, a, b, slot);
}

/* `outputs NAME...`. */
static int do_outputs(reader *R, ft_pattern *P, char **w, int nw)
{
    if (nw < 2)
        return bad(R, "outputs: expected 'outputs NAME...', got no node");
    if (P->outputs)
        return bad(R, "outputs: pattern '%s' already has an outputs line", P->name);
    for (int i = 1; i < nw; i++) {
        int k = need_node(R, P, "outputs", w[i]);
        if (k < 0)
            return FT_EINPUT;
        if (P->outputs & (1u << k))
            return bad(R, "outputs: '%s' is listed twice", w[i]);
        P->outputs |= 1u << k;
    }
    return FT_OK;
}

/* `end`: check the open pattern (nodes, connected, no cycle) and give it
 * its default outputs (the nodes no flow edge leaves) when it has none. */
static int do_end(reader *R, ft_pattern *P, int nw)
{
    if (nw != 1)
        return bad(R, "end: expected 'end' alone on its line");
    if (P->nnodes == 0)
        return bad(R, "end: pattern '%s' has no node", P->name);
    int n = P->nnodes, comp[FT_PATTERNS_MAX_NODES], indeg[FT_PATTERNS_MAX_NODES] = {0};
    for (int i = 0; i < n; i++)
        comp[i] = i;
    for (int pass = 0; pass < n; pass++) /* label propagation: n passes reach every node */
        for (int e = 0; e < P->nedges; e++) {
            int a = P->edge[e].from, b = P->edge[e].to, m = comp[a] < comp[b] ? comp[a] : comp[b];
            comp[a] = comp[b] = m;
        }
    for (int i = 0; i < n; i++)
        if (comp[i] != 0)
            return bad(R, "end: pattern '%s' is not connected: node '%s' is linked to no path from '%s'", P->name,
                       P->node[i].name, P->node[0].name);
    uint32_t sources = 0;
    for (int e = 0; e < P->nedges; e++)
        if (P->edge[e].slot >= 0) {
            indeg[P->edge[e].to]++;
            sources |= 1u << P->edge[e].from;
        }
    int queue[FT_PATTERNS_MAX_NODES], nq = 0, seen = 0;
    for (int i = 0; i < n; i++)
        if (!indeg[i])
            queue[nq++] = i;
    while (seen < nq) {
        int a = queue[seen++];
        for (int e = 0; e < P->nedges; e++)
            if (P->edge[e].slot >= 0 && P->edge[e].from == a && --indeg[P->edge[e].to] == 0)
                queue[nq++] = P->edge[e].to;
    }
    if (nq < n)
        return bad(R, "end: the edges of pattern '%s' form a cycle", P->name);
    if (!P->outputs)
        P->outputs = ~sources & (n == 32 ? ~0u : (1u << n) - 1);
    R->open = -1;
    return FT_OK;
}

/* Split the line [s, e) (comment removed) into words in buf; returns the
 * word count, or -1 when there are more than MAX_WORDS. */
static int split_words(const char *s, const char *e, char *buf, char **w)
{
    size_t len = (size_t)(e - s);
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *hash = strchr(buf, '#');
    if (hash)
        *hash = '\0';
    int nw = 0;
    for (char *c = buf; *c;) {
        while (*c == ' ' || *c == '\t' || *c == '\r' || *c == '\v' || *c == '\f')
            *c++ = '\0';
        if (!*c)
            break;
        if (nw == MAX_WORDS)
            return -1;
        w[nw++] = c;
        while (*c && *c != ' ' && *c != '\t' && *c != '\r' && *c != '\v' && *c != '\f')
            c++;
    }
    return nw;
}

/* One line's directive. */
static int do_line(reader *R, char **w, int nw)
{
    if (strcmp(w[0], "pattern") == 0)
        return do_pattern(R, w, nw);
    static const char *const inside[] = {"node", "edge", "share", "outputs", "end"};
    for (size_t k = 0; k < sizeof inside / sizeof *inside; k++)
        if (strcmp(w[0], inside[k]) == 0 && R->open < 0)
            return bad(R, "%s: outside a pattern (no 'pattern NAME' line before it)", w[0]);
    ft_pattern *P = R->open >= 0 ? &R->lib->pat[R->open] : NULL;
    if (strcmp(w[0], "node") == 0)
        return do_node(R, P, w, nw);
    if (strcmp(w[0], "edge") == 0)
        return do_edge(R, P, w, nw, 0);
    if (strcmp(w[0], "share") == 0)
        return do_edge(R, P, w, nw, 1);
    if (strcmp(w[0], "outputs") == 0)
        return do_outputs(R, P, w, nw);
    if (strcmp(w[0], "end") == 0)
        return do_end(R, P, nw);
    return bad(R, "unknown directive '%.40s' (expected pattern, node, edge, share, outputs or end)", w[0]);
}

int ft__patlib_parse(ft_patlib *lib, const char *text, const char *name, ft_status *st)
{
    reader R = {lib, name ? name : "(patterns)", 0, -1, st};
    char *buf = ft__malloc(strlen(text) + 1), *w[MAX_WORDS];
    if (!buf)
        return oom(&R);
    int rc = FT_OK;
    for (const char *s = text; *s && rc == FT_OK;) {
        const char *e = strchr(s, '\n');
        if (!e)
            e = s + strlen(s);
        R.line++;
        int nw = split_words(s, e, buf, w);
        if (nw < 0)
            rc = bad(&R, "more than %d words on one line", MAX_WORDS);
        else if (nw > 0)
            rc = do_line(&R, w, nw);
        s = *e ? e + 1 : e;
    }
    ft__free(buf);
    if (rc == FT_OK && R.open >= 0) {
        R.line = lib->pat[R.open].line;
        rc = bad(&R, "pattern '%s' has no 'end' (the file ends inside it)", lib->pat[R.open].name);
    }
    return rc;
}

int ft__patlib_load(ft_patlib *lib, const char *path, ft_status *st)
{
    char *text = NULL;
    int rc = ft_read_file_max(path, FT_MAX_PATTERNS_BYTES, "FT_MAX_PATTERNS_BYTES", &text, st);
    if (rc == FT_OK)
        rc = ft__patlib_parse(lib, text, path, st);
    ft__free(text);
    return rc;
}

void ft__patlib_free(ft_patlib *lib)
{
    if (!lib)
        return;
    for (int i = 0; i < lib->npatterns; i++) {
        ft_pattern *P = &lib->pat[i];
        for (int k = 0; k < P->nnodes; k++) {
            for (int a = 0; a < P->node[k].nalt; a++)
                ft__free(P->node[k].alt[a]);
            ft__free(P->node[k].alt);
            ft__free(P->node[k].name);
        }
        ft__free(P->edge);
        ft__free(P->name);
        ft__free(P->file);
    }
    ft__free(lib->pat);
    lib->pat = NULL;
    lib->npatterns = 0;
}
