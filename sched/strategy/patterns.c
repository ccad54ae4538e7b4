/* patterns.c - the pattern-library tiler (strategy "patterns"): groups a problem's ops into tiles that match the patterns of a library (the files under patterns/) by subgraph isomorphism, chosen by a memoised set cover. */
#include "strategy/patterns.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Algorithm (issue 12, "pattern-library tiler"; the pattern files are
 * read by pattern_file.c, patterns/README.md gives their format).  The
 * matcher extends a partial match from matched neighbours as VF2 does
 * (Cordella et al., "A (sub)graph isomorphism algorithm for matching
 * large graphs", 2004); the cover keeps per-node counts of live
 * candidate sets as Knuth's Dancing Links does for exact cover (2000).
 *
 * 1. Source nodes (pattern_graph.c).  The ops that lowering made from
 *    one source layer (a conv2d's im2col Layout and its MatMul, a folded
 *    matmul's right-operand Layout) are collapsed into one node: op a
 *    joins op b when b reads a's output, both have the same kind, and
 *    both names have the same layer (the name less a trailing lowering
 *    suffix such as "/im2col", "/rhs", "/layout", "/group2").  A node's
 *    kind is its ops' kind, or for a problem without kinds its op type
 *    ("matmul", "pointwise", "layout").  A node's input slots are the
 *    tensors it reads from outside, in the operand order of its last op,
 *    an inner producer's operands in place of the tensor it makes (so a
 *    conv2d is [x, weight] with or without its im2col).  If the
 *    collapsed graph has a cycle, every op is its own node.
 * 2. Matching, per pattern: the pattern's nodes in BFS order from the
 *    one whose kind is rarest in the problem; the root tried on every
 *    node of its kind, every later pattern node only on neighbours of
 *    the node its BFS parent matched (consumers, producers, or readers
 *    of a shared input).  Each placement checks every pattern edge whose
 *    two ends are placed: a flow edge names TO's input slot, matched by
 *    position for a non-commutative kind and as a multiset for a
 *    commutative one (is_commutative in pattern_graph.c); a share edge
 *    needs a tensor both read.  A complete match is kept when no value
 *    escapes the tile (is read outside it or is a graph output) unless
 *    its node is a declared output, when no escaping value feeds a
 *    MatMul inside the tile (SPEC 2, fused-operand-escapes), when the
 *    tile is convex (no path leaves it and comes back: such a tile could
 *    never be scheduled), and when no earlier match covers the same
 *    nodes.
 * 3. Cover (pattern_cover.c): matches are linked into blocks (connected
 *    components of the nodes that matches share); a block's structure
 *    signature (its matches as pattern and local node lists) is solved
 *    once and the answer reused for every block with the same signature
 *    (identical residual blocks, transformer layers).  A block is solved
 *    by memoised backtracking over the set R of nodes still free: take
 *    the most constrained node v (the fewest live matches; 0: no tile
 *    can take it, drop it), try its live matches largest first, then
 *    leaving v uncovered (unless a match already covered R whole); keep
 *    the most covered nodes, then the fewest tiles; stop at full
 *    coverage of R by as few tiles as any cover could use (|R| over the
 *    block's largest match); memoise by R.  The search is exact; past
 *    FT_PATTERNS_MAX_STATES states a block is finished greedily (the
 *    first live match of each most constrained node).
 * 4. Output: one group per chosen match, labelled "pattern NAME", every
 *    uncovered op a group of its own ("unmatched").  If the groups'
 *    quotient graph has a cycle, matches are added one at a time in
 *    topological order and each one that would close a cycle is undone
 *    (its ops go back to singleton groups).
 */

/* ------------------------------------------------------------ matching */

/* The matches found: match k covers nodes nodes.v[moff[k] .. moff[k+1])
 * (ascending) and comes from pattern mpat[k]. */
typedef struct matches {
    int n, cap;
    int *mpat, *moff;
    ft_ivec nodes;       /* the matches' nodes, one after another */
    int *hash;           /* open addressing over match indices (-1: empty) */
    int hashcap;
} matches;

/* Release what M owns and zero it. */
static void matches_free(matches *M)
{
    ft__free(M->mpat);
    ft__free(M->moff);
    ft__free(M->nodes.v);
    ft__free(M->hash);
    memset(M, 0, sizeof *M);
}

/* Index of the match covering exactly nodes[0..n) (ascending), or -1. */
static int matches_find(const matches *M, const int *nodes, int n, uint64_t h)
{
    if (!M->hashcap)
        return -1;
    for (size_t i = (size_t)h & (size_t)(M->hashcap - 1);; i = (i + 1) & (size_t)(M->hashcap - 1)) {
        int k = M->hash[i];
        if (k < 0)
            return -1;
        if (M->moff[k + 1] - M->moff[k] == n && memcmp(M->nodes.v + M->moff[k], nodes, sizeof(int) * (size_t)n) == 0)
            return k;
    }
}

/* Rebuild M's hash with room for twice its matches; -1 on OOM. */
static int matches_rehash(matches *M)
{
    int cap = M->hashcap ? 2 * M->hashcap : 256;
    int *h = ft__malloc(sizeof(int) * (size_t)cap);
    if (!h)
        return -1;
    for (int i = 0; i < cap; i++)
        h[i] = -1;
    for (int k = 0; k < M->n; k++) {
        uint64_t hv = ft__hash_ints(M->nodes.v + M->moff[k], M->moff[k + 1] - M->moff[k], 0);
        size_t i = (size_t)hv & (size_t)(cap - 1);
        while (h[i] >= 0)
            i = (i + 1) & (size_t)(cap - 1);
        h[i] = k;
    }
    ft__free(M->hash);
    M->hash = h;
    M->hashcap = cap;
    return 0;
}

/* Add a match of pattern pid covering nodes[0..n) (ascending) unless one
 * covers the same nodes.  0, or -1 on OOM. */
static int matches_add(matches *M, int pid, const int *nodes, int n)
{
    uint64_t h = ft__hash_ints(nodes, n, 0);
    if (matches_find(M, nodes, n, h) >= 0)
        return 0;
    if (M->n + 1 >= M->cap) {
        int cap = M->cap ? 2 * M->cap : 256;
        int *mp = ft__realloc(M->mpat, sizeof(int) * (size_t)cap);
        if (mp)
            M->mpat = mp;
        int *mo = ft__realloc(M->moff, sizeof(int) * (size_t)(cap + 1));
        if (mo)
            M->moff = mo;
        if (!mp || !mo)
            return -1;
        M->cap = cap;
    }
    if (ft__ivec_reserve(&M->nodes, n))
        return -1;
    if (M->n == 0)
        M->moff[0] = 0;
    memcpy(M->nodes.v + M->nodes.n, nodes, sizeof(int) * (size_t)n);
    M->nodes.n += n;
    M->mpat[M->n] = pid;
    M->moff[++M->n] = M->nodes.n;
    if (2 * M->n >= M->hashcap)
        return matches_rehash(M);
    size_t i = (size_t)h & (size_t)(M->hashcap - 1);
    while (M->hash[i] >= 0)
        i = (i + 1) & (size_t)(M->hashcap - 1);
    M->hash[i] = M->n - 1;
    return 0;
}

/* How a pattern node reaches its BFS parent's match: it consumes the
 * parent's output, the parent consumes its output, or both read a tensor. */
enum { REL_CONSUMER, REL_PRODUCER, REL_SHARE };

/* The state of matching one pattern. */
typedef struct matcher {
    const ft_pgraph *G;
    const ft_pattern *P;
    int pid;
    unsigned char *fit;     /* fit[u * n + v]: pattern node u may match node v */
    int order[FT_PATTERNS_MAX_NODES], via[FT_PATTERNS_MAX_NODES], rel[FT_PATTERNS_MAX_NODES];
    int assign[FT_PATTERNS_MAX_NODES];
    unsigned char *used;    /* n: node taken by the partial match */
    int *cand, *seen;       /* FT_PATTERNS_MAX_NODES x n: candidate lists, their stamps */
    int *mark, gen;         /* n: escape and convexity stamps */
    int *opmark, opgen;     /* per op: in the tile (opgen) */
    int *tile, *feeds;      /* per op: the tile's ops by topological position; feeds a MatMul in the tile */
    int *stack;             /* n */
    matches *out;
    long tries;             /* partial matches extended, against FT_PATTERNS_MAX_TRIES */
    int oom;
} matcher;

/* Whether pattern-node kind alternative `alt` accepts node V. */
static int alt_fits(const ft_snode *V, const char *alt)
{
    if (strcmp(alt, "any") == 0)
        return 1;
    if (strcmp(alt, "mm") == 0)
        return V->has_mm;
    if (strcmp(alt, "ew") == 0)
        return V->all_pw;
    if (strcmp(alt, "mov") == 0)
        return V->all_layout;
    return strcmp(alt, V->kind) == 0;
}

/* Whether the placed ends of every flow edge into pattern node b agree
 * with the inputs of its match: by slot, or as a multiset when the
 * match's kind is commutative. */
static int inputs_ok(const matcher *X, int b)
{
    const ft_pgraph *G = X->G;
    const ft_snode *B = &G->v[X->assign[b]];
    const int *src = G->in_src + B->in0;
    for (int e = 0; e < X->P->nedges; e++) {
        const ft_pat_edge *E = &X->P->edge[e];
        if (E->slot < 0 || E->to != b || X->assign[E->from] < 0)
            continue;
        int x = X->assign[E->from];
        if (!B->comm) {
            if (E->slot >= B->nin || src[E->slot] != x)
                return 0;
            continue;
        }
        int want = 0, have = 0;
        for (int f = 0; f < X->P->nedges; f++) {
            const ft_pat_edge *F = &X->P->edge[f];
            want += F->slot >= 0 && F->to == b && X->assign[F->from] == x;
        }
        for (int s = 0; s < B->nin; s++)
            have += src[s] == x;
        if (want > have)
            return 0;
    }
    return 1;
}

/* Whether nodes a and b read a common tensor. */
static int shares_input(const ft_pgraph *G, int a, int b)
{
    const ft_snode *A = &G->v[a], *B = &G->v[b];
    for (int i = 0; i < A->nin; i++)
        for (int j = 0; j < B->nin; j++)
            if (G->in_t[A->in0 + i] == G->in_t[B->in0 + j])
                return 1;
    return 0;
}

/* Whether every pattern edge at pattern node u whose ends are both placed
 * holds. */
static int edges_ok(const matcher *X, int u)
{
    if (!inputs_ok(X, u))
        return 0;
    for (int e = 0; e < X->P->nedges; e++) {
        const ft_pat_edge *E = &X->P->edge[e];
        if ((E->from != u && E->to != u) || X->assign[E->from] < 0 || X->assign[E->to] < 0)
            continue;
        if (E->slot < 0 ? !shares_input(X->G, X->assign[E->from], X->assign[E->to]) : E->from == u && !inputs_ok(X, E->to))
            return 0;
    }
    return 1;
}

/* Whether the nodes marked X->gen form a convex set: no path from one of
 * them leaves the set and comes back.  Only nodes ranked below the
 * highest-ranked member can lead back. */
static int convex(matcher *X, const int *nodes, int n)
{
    const ft_pgraph *G = X->G;
    int top = 0, maxrank = 0, gen = X->gen;
    for (int i = 0; i < n; i++)
        if (G->rank[nodes[i]] > maxrank)
            maxrank = G->rank[nodes[i]];
    for (int i = 0; i < n; i++) {
        const ft_snode *V = &G->v[nodes[i]];
        for (int s = 0; s < V->nsucc; s++) {
            int w = G->succ[V->succ0 + s];
            if (X->mark[w] != gen && X->mark[w] != -gen && G->rank[w] < maxrank) {
                X->mark[w] = -gen;
                X->stack[top++] = w;
            }
        }
    }
    while (top) {
        const ft_snode *V = &G->v[X->stack[--top]];
        for (int s = 0; s < V->nsucc; s++) {
            int w = G->succ[V->succ0 + s];
            if (X->mark[w] == gen)
                return 0;
            if (X->mark[w] != -gen && G->rank[w] < maxrank) {
                X->mark[w] = -gen;
                X->stack[top++] = w;
            }
        }
    }
    return 1;
}

/* Whether a value of the tile nodes[0..n) that leaves it (read outside,
 * or a graph output) also feeds a MatMul inside it (SPEC 2 and 3: such a
 * tile is invalid, fused-operand-escapes; only slices of a fused operand
 * ever exist).  Walks the tile's ops in reverse topological order. */
static int fused_operand_escapes(matcher *X, const int *nodes, int n)
{
    const ft_pgraph *G = X->G;
    const ft_problem *p = G->p;
    int m = 0, gen = ++X->opgen;
    for (int i = 0; i < n; i++) {
        const ft_snode *V = &G->v[nodes[i]];
        for (int k = 0; k < V->nops; k++) {
            int o = G->node_ops[V->op0 + k], j = m++;
            X->opmark[o] = gen;
            for (; j > 0 && G->pos[X->tile[j - 1]] > G->pos[o]; j--)
                X->tile[j] = X->tile[j - 1];
            X->tile[j] = o;
        }
    }
    for (int j = m - 1; j >= 0; j--) {
        int o = X->tile[j], feeds = 0;
        const ft_tensor *T = &p->tensors[p->ops[o].output];
        for (int c = 0; c < T->nconsumers; c++) {
            int q = T->consumers[c];
            if (X->opmark[q] == gen)
                feeds |= p->ops[q].type == FT_OP_MATMUL || X->feeds[q];
        }
        X->feeds[o] = feeds;
        if (feeds && ft__output_leaves(p, o, X->opmark, gen))
            return 1;
    }
    return 0;
}

/* A complete assignment: keep it when no undeclared value escapes and the
 * tile is convex. */
static void finish(matcher *X)
{
    const ft_pgraph *G = X->G;
    int k = X->P->nnodes, nodes[FT_PATTERNS_MAX_NODES];
    X->gen++;
    for (int i = 0; i < k; i++)
        X->mark[X->assign[i]] = X->gen;
    for (int i = 0; i < k; i++) {
        if (X->P->outputs & (1u << i))
            continue;
        const ft_snode *V = &G->v[X->assign[i]];
        if (V->gout)
            return;
        for (int s = 0; s < V->nsucc; s++)
            if (X->mark[G->succ[V->succ0 + s]] != X->gen)
                return;
    }
    for (int i = 0; i < k; i++) { /* insertion sort: at most 16 */
        int v = X->assign[i], j = i;
        for (; j > 0 && nodes[j - 1] > v; j--)
            nodes[j] = nodes[j - 1];
        nodes[j] = v;
    }
    if (!convex(X, nodes, k) || fused_operand_escapes(X, nodes, k))
        return;
    if (matches_add(X->out, X->pid, nodes, k))
        X->oom = 1;
}

/* Candidates for the pattern node at BFS position d, from the node its
 * parent matched; returns their count (in X->cand[d * n ..]). */
static int candidates(matcher *X, int d)
{
    const ft_pgraph *G = X->G;
    int n = G->n, *c = X->cand + (size_t)d * (size_t)n, *seen = X->seen + (size_t)d * (size_t)n, nc = 0;
    const ft_snode *W = &G->v[X->assign[X->via[d]]];
    int stamp = ++X->gen;
#define FT_CAND(node)                                                                                                  \
    do {                                                                                                               \
        int c_ = (node);                                                                                               \
        if (c_ >= 0 && seen[c_] != stamp) {                                                                            \
            seen[c_] = stamp;                                                                                          \
            c[nc++] = c_;                                                                                              \
        }                                                                                                              \
    } while (0)
    if (X->rel[d] == REL_CONSUMER)
        for (int s = 0; s < W->nsucc; s++)
            FT_CAND(G->succ[W->succ0 + s]);
    else if (X->rel[d] == REL_PRODUCER)
        for (int s = 0; s < W->nin; s++)
            FT_CAND(G->in_src[W->in0 + s]);
    else
        for (int s = 0; s < W->nin; s++) {
            const ft_tensor *T = &G->p->tensors[G->in_t[W->in0 + s]];
            for (int q = 0; q < T->nconsumers; q++)
                FT_CAND(G->of[T->consumers[q]]);
        }
#undef FT_CAND
    return nc;
}

/* Extend the partial match at BFS position d. */
static void extend(matcher *X, int d)
{
    if (X->oom || X->out->n >= FT_PATTERNS_MAX_MATCHES || ++X->tries > FT_PATTERNS_MAX_TRIES)
        return;
    if (d == X->P->nnodes) {
        finish(X);
        return;
    }
    int u = X->order[d], n = X->G->n;
    int nc = candidates(X, d);
    const int *c = X->cand + (size_t)d * (size_t)n;
    for (int i = 0; i < nc; i++) {
        int y = c[i];
        if (X->used[y] || !X->fit[(size_t)u * (size_t)n + (size_t)y])
            continue;
        X->assign[u] = y;
        X->used[y] = 1;
        if (edges_ok(X, u))
            extend(X, d + 1);
        X->used[y] = 0;
        X->assign[u] = -1;
    }
}

/* Match pattern pid of lib against G into X->out. */
static void match_pattern(matcher *X, const ft_patlib *lib, int pid)
{
    const ft_pattern *P = &lib->pat[pid];
    const ft_pgraph *G = X->G;
    int n = G->n, k = P->nnodes, count[FT_PATTERNS_MAX_NODES] = {0};
    X->P = P;
    X->pid = pid;
    for (int u = 0; u < k; u++)
        for (int v = 0; v < n; v++) {
            int ok = 0;
            for (int a = 0; a < P->node[u].nalt && !ok; a++)
                ok = alt_fits(&G->v[v], P->node[u].alt[a]);
            X->fit[(size_t)u * (size_t)n + (size_t)v] = (unsigned char)ok;
            count[u] += ok;
        }
    int root = 0;
    for (int u = 1; u < k; u++)
        if (count[u] < count[root])
            root = u;
    if (count[root] == 0)
        return;
    /* BFS order from the root over flow and share edges */
    uint32_t placed = 1u << root;
    int nq = 1;
    X->order[0] = root;
    for (int h = 0; h < nq; h++) {
        int a = X->order[h];
        for (int e = 0; e < P->nedges; e++) {
            const ft_pat_edge *E = &P->edge[e];
            int b = E->from == a ? E->to : E->to == a ? E->from : -1;
            if (b < 0 || (placed & (1u << b)))
                continue;
            placed |= 1u << b;
            X->via[nq] = a;
            X->rel[nq] = E->slot < 0 ? REL_SHARE : E->from == a ? REL_CONSUMER : REL_PRODUCER;
            X->order[nq++] = b;
        }
    }
    for (int u = 0; u < k; u++)
        X->assign[u] = -1;
    for (int v = 0; v < n && !X->oom; v++) {
        if (!X->fit[(size_t)root * (size_t)n + (size_t)v])
            continue;
        X->assign[root] = v;
        X->used[v] = 1;
        extend(X, 1);
        X->used[v] = 0;
        X->assign[root] = -1;
    }
}

/* Every match of lib in G into *M (deduplicated); 0 or -1 on OOM. */
static int match_all(const ft_pgraph *G, const ft_patlib *lib, matches *M)
{
    matcher X;
    memset(&X, 0, sizeof X);
    memset(M, 0, sizeof *M);
    size_t n = (size_t)G->n + 1;
    X.G = G;
    X.out = M;
    X.fit = ft__malloc(FT_PATTERNS_MAX_NODES * n);
    X.used = ft__calloc(n, 1);
    X.cand = ft__malloc(sizeof(int) * FT_PATTERNS_MAX_NODES * n);
    X.seen = ft__calloc(FT_PATTERNS_MAX_NODES * n, sizeof(int));
    X.mark = ft__calloc(n, sizeof(int));
    X.opmark = ft__calloc((size_t)G->p->nops + 1, sizeof(int));
    X.tile = ft__malloc(sizeof(int) * ((size_t)G->p->nops + 1));
    X.feeds = ft__malloc(sizeof(int) * ((size_t)G->p->nops + 1));
    X.stack = ft__malloc(sizeof(int) * n);
    int rc = -1;
    if (X.fit && X.used && X.cand && X.seen && X.mark && X.stack && X.opmark && X.tile && X.feeds) {
        for (int pid = 0; pid < lib->npatterns && !X.oom; pid++)
            match_pattern(&X, lib, pid);
        rc = X.oom ? -1 : 0;
    }
    ft__free(X.fit);
    ft__free(X.used);
    ft__free(X.cand);
    ft__free(X.seen);
    ft__free(X.mark);
    ft__free(X.opmark);
    ft__free(X.tile);
    ft__free(X.feeds);
    ft__free(X.stack);
    return rc;
}

/* ------------------------------------------------------------ matches in cover order */

/* The matches sorted for the cover: largest first, then pattern order,
 * then by their nodes. */
typedef struct sorted {
    int n;
    int *moff, *mnodes, *mpat;
} sorted;

/* A match as qsort sees it (no shared context: the strategy is reentrant). */
typedef struct mref {
    int len, pat;
    const int *nodes;
} mref;

/* qsort order of mrefs: larger first, then pattern order, then nodes. */
static int cmp_match(const void *pa, const void *pb)
{
    const mref *a = pa, *b = pb;
    if (a->len != b->len)
        return b->len - a->len;
    if (a->pat != b->pat)
        return a->pat - b->pat;
    for (int i = 0; i < a->len; i++)
        if (a->nodes[i] != b->nodes[i])
            return a->nodes[i] - b->nodes[i];
    return 0;
}

/* Release what S owns and zero it. */
static void sorted_free(sorted *S)
{
    ft__free(S->moff);
    ft__free(S->mnodes);
    ft__free(S->mpat);
    memset(S, 0, sizeof *S);
}

/* *S = M's matches in cover order; 0 or -1 on OOM. */
static int sort_matches(const matches *M, sorted *S)
{
    memset(S, 0, sizeof *S);
    mref *idx = ft__malloc(sizeof *idx * ((size_t)M->n + 1));
    S->moff = ft__malloc(sizeof(int) * ((size_t)M->n + 1));
    S->mnodes = ft__malloc(sizeof(int) * ((size_t)M->nodes.n + 1));
    S->mpat = ft__malloc(sizeof(int) * ((size_t)M->n + 1));
    if (!idx || !S->moff || !S->mnodes || !S->mpat) {
        ft__free(idx);
        sorted_free(S);
        return -1;
    }
    for (int k = 0; k < M->n; k++)
        idx[k] = (mref){M->moff[k + 1] - M->moff[k], M->mpat[k], M->nodes.v + M->moff[k]};
    qsort(idx, (size_t)M->n, sizeof *idx, cmp_match);
    S->n = M->n;
    S->moff[0] = 0;
    for (int j = 0; j < M->n; j++) {
        memcpy(S->mnodes + S->moff[j], idx[j].nodes, sizeof(int) * (size_t)idx[j].len);
        S->moff[j + 1] = S->moff[j] + idx[j].len;
        S->mpat[j] = idx[j].pat;
    }
    ft__free(idx);
    return 0;
}

/* ------------------------------------------------------------ partition */

/* Give every op of match j (sorted S) group id g. */
static void set_tile(const ft_pgraph *G, const sorted *S, int j, int g, int *gid)
{
    for (int i = S->moff[j]; i < S->moff[j + 1]; i++) {
        const ft_snode *V = &G->v[S->mnodes[i]];
        for (int k = 0; k < V->nops; k++)
            gid[G->node_ops[V->op0 + k]] = g;
    }
}

/* gid from the tiles (tile[t]: a match of S; tile t is group t, every
 * other op o group ntiles + o), keeping a tile only while the quotient
 * graph stays acyclic; keep[t] says which stayed.  Returns the groups
 * (ntiles + nops, some empty), or -1 on OOM. */
static int place_tiles(const ft_pgraph *G, const sorted *S, const int *tile, int ntiles, int *gid, unsigned char *keep)
{
    const ft_problem *p = G->p;
    int ng = ntiles + p->nops;
    for (int o = 0; o < p->nops; o++)
        gid[o] = ntiles + o;
    for (int t = 0; t < ntiles; t++) {
        set_tile(G, S, tile[t], t, gid);
        keep[t] = 1;
    }
    int a = ft__partition_acyclic(p, gid, ng);
    if (a != 0)
        return a < 0 ? -1 : ng;
    /* a cycle: add the tiles one at a time, undoing each that closes one */
    for (int o = 0; o < p->nops; o++)
        gid[o] = ntiles + o;
    for (int t = 0; t < ntiles; t++) {
        set_tile(G, S, tile[t], t, gid);
        a = ft__partition_acyclic(p, gid, ng);
        if (a < 0)
            return -1;
        if (!a) {
            for (int i = S->moff[tile[t]]; i < S->moff[tile[t] + 1]; i++) {
                const ft_snode *V = &G->v[S->mnodes[i]];
                for (int k = 0; k < V->nops; k++)
                    gid[G->node_ops[V->op0 + k]] = ntiles + G->node_ops[V->op0 + k];
            }
            keep[t] = 0;
        }
    }
    return ng;
}

/* Fill *out from gid (ng ids, some empty): groups renumbered by their
 * first op in p->topo, labelled "pattern NAME" (tile t of pattern
 * pat[t], t < ntiles) or "unmatched".  FT_OK or FT_ENOMEM. */
static int emit(const ft_problem *p, const ft_patlib *lib, const int *gid, int ng, const int *pat, int ntiles,
                ft_partition *out, ft_status *st)
{
    int n = p->nops, *renum = ft__malloc(sizeof(int) * ((size_t)ng + 1)), *back = ft__malloc(sizeof(int) * ((size_t)ng + 1));
    out->nops = n;
    out->gid = ft__malloc(sizeof(int) * ((size_t)n + 1));
    if (!renum || !back || !out->gid)
        goto oom;
    for (int g = 0; g < ng; g++)
        renum[g] = -1;
    out->ngroups = 0;
    for (int i = 0; i < n; i++) {
        int g = gid[p->topo[i]];
        if (renum[g] < 0) {
            back[out->ngroups] = g;
            renum[g] = out->ngroups++;
        }
    }
    for (int o = 0; o < n; o++)
        out->gid[o] = renum[gid[o]];
    out->label = ft__calloc((size_t)out->ngroups + 1, sizeof(char *));
    if (!out->label)
        goto oom;
    for (int g = 0; g < out->ngroups; g++) {
        const char *name = back[g] < ntiles ? lib->pat[pat[back[g]]].name : NULL;
        size_t len = name ? strlen(name) + 9 : 10;
        if (!(out->label[g] = ft__malloc(len)))
            goto oom;
        if (name)
            snprintf(out->label[g], len, "pattern %s", name);
        else
            memcpy(out->label[g], "unmatched", 10);
    }
    ft__free(renum);
    ft__free(back);
    return FT_OK;
oom:
    ft__free(renum);
    ft__free(back);
    ft_partition_free(out);
    return ft__fail(st, FT_ENOMEM, 0, "patterns: out of memory");
}

int ft__patterns_partition(const ft_problem *p, const ft_patlib *lib, ft_partition *out, ft_pat_stats *stats,
                           ft_status *st)
{
    ft_pgraph G;
    matches M;
    sorted S = {0};
    ft_pat_stats local;
    int rc = FT_ENOMEM, *tile = NULL, *pat = NULL, *gid = NULL, *key = NULL;
    unsigned char *chosen = NULL, *keep = NULL;
    memset(out, 0, sizeof *out);
    memset(&M, 0, sizeof M);
    if (!stats)
        stats = &local;
    memset(stats, 0, sizeof *stats);
    if (ft__pgraph_build(&G, p))
        return ft__fail(st, FT_ENOMEM, 0, "patterns: out of memory");
    stats->nodes = G.n;
    if (match_all(&G, lib, &M) || sort_matches(&M, &S))
        goto done;
    stats->matches = S.n;
    chosen = ft__malloc((size_t)S.n + 1);
    tile = ft__malloc(sizeof(int) * ((size_t)S.n + 1));
    key = ft__malloc(sizeof(int) * ((size_t)S.n + 1));
    gid = ft__malloc(sizeof(int) * ((size_t)p->nops + 1));
    if (!chosen || !tile || !key || !gid || ft__pattern_cover(G.n, S.n, S.moff, S.mnodes, S.mpat, chosen, stats))
        goto done;
    /* the chosen matches in topological order of their first node */
    int ntiles = 0;
    for (int j = 0; j < S.n; j++)
        if (chosen[j]) {
            int r = G.n, t = ntiles++;
            for (int i = S.moff[j]; i < S.moff[j + 1]; i++)
                r = G.rank[S.mnodes[i]] < r ? G.rank[S.mnodes[i]] : r;
            for (; t > 0 && key[t - 1] > r; t--) {
                key[t] = key[t - 1];
                tile[t] = tile[t - 1];
            }
            key[t] = r;
            tile[t] = j;
        }
    pat = ft__malloc(sizeof(int) * ((size_t)ntiles + 1));
    keep = ft__malloc((size_t)ntiles + 1);
    if (!pat || !keep)
        goto done;
    int ng = place_tiles(&G, &S, tile, ntiles, gid, keep);
    if (ng < 0)
        goto done;
    for (int t = 0; t < ntiles; t++) {
        pat[t] = S.mpat[tile[t]];
        stats->tiles += keep[t];
        stats->undone += !keep[t];
    }
    rc = emit(p, lib, gid, ng, pat, ntiles, out, st);
done:
    if (rc == FT_ENOMEM && !out->gid)
        ft__fail(st, FT_ENOMEM, 0, "patterns: out of memory");
    ft__pgraph_free(&G);
    matches_free(&M);
    sorted_free(&S);
    ft__free(chosen);
    ft__free(tile);
    ft__free(key);
    ft__free(gid);
    ft__free(pat);
    ft__free(keep);
    return rc;
}

int ft__patterns_count_matches(const ft_problem *p, const ft_patlib *lib)
{
    ft_pgraph G;
    matches M;
    if (ft__pgraph_build(&G, p))
        return -1;
    int n = match_all(&G, lib, &M) ? -1 : M.n;
    ft__pgraph_free(&G);
    matches_free(&M);
    return n;
}
