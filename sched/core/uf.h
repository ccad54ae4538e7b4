/* uf.h - the library's one union-find (disjoint sets over 0..n-1 in a caller's int array, path halving, the smaller root kept), used by the connectivity rule (cost/validate.c), the grouping repair (strategy/grouping.c), the layer finder (strategy/rules.c) and the pattern matcher's components and blocks (strategy/pattern_graph.c, pattern_cover.c); not installed. */
#ifndef FT_UF_H
#define FT_UF_H

/* Make x its own set: par[x] = x.  Only the elements a caller touches need
 * it (a set over a few of many slots costs only those). */
static inline void ft__uf_make(int *par, int x) { par[x] = x; }

/* The root of x's set, halving the path on the way. */
static inline int ft__uf_find(int *par, int x)
{
    while (par[x] != x) {
        par[x] = par[par[x]];
        x = par[x];
    }
    return x;
}

/* Join the sets of x and y under the smaller of their two roots; returns
 * that root. */
static inline int ft__uf_union(int *par, int x, int y)
{
    x = ft__uf_find(par, x);
    y = ft__uf_find(par, y);
    if (x == y)
        return x;
    if (x > y) {
        int t = x;
        x = y;
        y = t;
    }
    par[y] = x;
    return x;
}

#endif
