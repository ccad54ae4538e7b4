/* label.c - subgraph labels for reports and traces, each rule once: op names joined by '+' with shared dotted prefixes elided (ft_subgraph_label), an op's source layer without the importer's lowering suffix (ft_op_source_name), and a subgraph named by its source layers (ft_subgraph_source_label, the simulator's trace names). */
#include "core/core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A growing string, cut at FT_LABEL_MAX bytes. */
typedef struct label_buf {
    char *s;
    size_t len, cap;
    int oom;
} label_buf;

static void put(label_buf *b, const char *text, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *ns = ft__realloc(b->s, cap);
        if (!ns) {
            b->oom = 1;
            return;
        }
        b->s = ns;
        b->cap = cap;
    }
    memcpy(b->s + b->len, text, n);
    b->len += n;
    b->s[b->len] = '\0';
}

/* Offset in name of the first of name's characters that are not dotted
 * components it shares with prev: "layer1.0.bn1" after "layer1.0.conv1"
 * gives 9 ("bn1"); never the whole name. */
static size_t elided(const char *prev, const char *name)
{
    size_t i = 0, cut = 0;
    while (prev[i] && prev[i] == name[i]) {
        if (name[i] == '.')
            cut = i + 1;
        i++;
    }
    if (prev[i] == '\0' && name[i] == '.') /* prev is a whole-component prefix */
        cut = i + 1;
    return name[cut] ? cut : 0;
}

/* Cut b to FT_LABEL_MAX bytes ending in "...", at a UTF-8 boundary. */
static void cut_long(label_buf *b)
{
    if (b->oom || b->len <= FT_LABEL_MAX)
        return;
    size_t n = FT_LABEL_MAX - 3;
    while (n > 0 && ((unsigned char)b->s[n] & 0xC0) == 0x80) /* b->s[n] continues a character */
        n--;
    memcpy(b->s + n, "...", 4);
    b->len = n + 3;
}

char *ft_subgraph_label(const ft_problem *p, const ft_subgraph *g)
{
    label_buf b = {NULL, 0, 0, 0};
    int named = g->nops > 0;
    for (int j = 0; j < g->nops && named; j++) {
        int o = g->ops[j];
        named = o >= 0 && o < p->nops && p->ops[o].name && p->ops[o].name[0];
    }
    put(&b, "", 0);
    for (int j = 0; j < g->nops && b.len <= FT_LABEL_MAX && !b.oom; j++) {
        if (named) {
            const char *name = p->ops[g->ops[j]].name;
            size_t from = j ? elided(p->ops[g->ops[j - 1]].name, name) : 0;
            if (j)
                put(&b, "+", 1);
            put(&b, name + from, strlen(name + from));
        } else {
            char num[16];
            int n = snprintf(num, sizeof num, "%s%d", j ? "," : "", g->ops[j]);
            put(&b, num, (size_t)n);
        }
    }
    cut_long(&b);
    if (b.oom) {
        ft__free(b.s);
        return NULL;
    }
    return b.s;
}

/* The suffixes the importer's lowering adds to an op's name after a '/',
 * each possibly followed by digits (docs/LOWERING.md). */
static const char *const LOWERING_TAGS[] = {"im2col", "window", "group", "groups", "weights", "place", "batch",
                                            "lhs", "rhs", "broadcast", "layout"};

char *ft_op_source_name(const char *name, char *buf, size_t n)
{
    snprintf(buf, n, "%s", name ? name : "");
    char *slash = strrchr(buf, '/');
    if (!slash)
        return buf;
    size_t len = strlen(slash + 1);
    while (len > 0 && slash[len] >= '0' && slash[len] <= '9') /* slash[len]: the tag's last character */
        len--;
    for (size_t i = 0; i < sizeof LOWERING_TAGS / sizeof LOWERING_TAGS[0]; i++)
        if (strlen(LOWERING_TAGS[i]) == len && strncmp(slash + 1, LOWERING_TAGS[i], len) == 0) {
            *slash = '\0';
            break;
        }
    return buf;
}

/* Source layer of op o of p into src (n bytes): ft_op_source_name, or
 * "op N" for an op without a name or out of range. */
static const char *op_source(const ft_problem *p, int o, char *src, size_t n)
{
    if (o >= 0 && o < p->nops && p->ops[o].name)
        ft_op_source_name(p->ops[o].name, src, n);
    else
        src[0] = '\0';
    if (!src[0])
        snprintf(src, n, "op %d", o);
    return src;
}

/* Longest source layer name ft_subgraph_source_label compares; a longer
 * one is compared and shown cut to this length. */
#define SOURCE_NAME_MAX 256

char *ft_subgraph_source_label(const ft_problem *p, const ft_subgraph *g, size_t max)
{
    label_buf b = {NULL, 0, 0, 0};
    char prev[SOURCE_NAME_MAX] = "", src[SOURCE_NAME_MAX], other[SOURCE_NAME_MAX];
    int shown = 0;
    put(&b, "", 0);
    for (int j = 0; j < g->nops && !b.oom; j++) {
        op_source(p, g->ops[j], src, sizeof src);
        if (strcmp(src, prev) == 0)
            continue; /* lowered pieces of one source op */
        int seen = 0;
        for (int i = 0; i < j && !seen; i++) /* named already (ops of one layer apart) */
            seen = strcmp(op_source(p, g->ops[i], other, sizeof other), src) == 0;
        if (seen)
            continue;
        const char *part = src + (shown ? elided(prev, src) : 0);
        size_t n = strlen(part);
        if (shown && b.len + 1 + n > max) {
            char more[48];
            int m = snprintf(more, sizeof more, "+... (+%d ops)", g->nops - j);
            put(&b, more, (size_t)m);
            break;
        }
        if (shown)
            put(&b, "+", 1);
        put(&b, part, n < max ? n : max);
        shown++;
        snprintf(prev, sizeof prev, "%s", src);
    }
    if (b.oom) {
        ft__free(b.s);
        return NULL;
    }
    return b.s;
}
