/* label.c - subgraph labels for reports and traces: op names joined by '+', shared dotted prefixes elided (ft_subgraph_label). */
#include "internal.h"

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
