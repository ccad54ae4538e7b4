/* strategy/patterns.h - the pattern library shared by its reader (pattern_file.c) the pattern-library tiler (patterns.c) and the strategy entry (pattern_strategy.c); not installed. */
#ifndef FT_PATTERNSINT_H
#define FT_PATTERNSINT_H

#include "strategy/strategy.h"
#include "core/uf.h"

#include <stdint.h>

/* Named limits of the pattern-library tiler.  Each is checked where it
 * applies; reaching one never makes a partition invalid, it only narrows
 * what is tried. */
enum {
    FT_PATTERNS_MAX_NODES = 16,       /* nodes in one pattern (the reader rejects more) */
    FT_PATTERNS_MAX_SLOT = 63,        /* highest input slot an edge may name */
    FT_PATTERNS_MAX_MATCHES = 100000, /* matches kept over all patterns; enumeration stops there */
    FT_PATTERNS_MAX_TRIES = 4000000,  /* partial matches extended over all patterns; then it stops */
    FT_PATTERNS_MAX_STATES = 20000    /* set-cover states one block may branch in; past it the
                                         cover goes greedy (largest tile of the most constrained
                                         node, no backtracking) */
};

/* A pattern node: its name in the file and the kinds it matches (one or
 * more alternatives, written `relu|relu6`; a kind is an op kind, an op
 * type of a problem without kinds, or an alias: see patterns/README.md). */
typedef struct ft_pat_node {
    char *name;
    int nalt;
    char **alt;
} ft_pat_node;

/* An edge of a pattern.  A flow edge `edge FROM TO SLOT`: TO's input slot
 * SLOT is FROM's output.  A share edge `share A B` (from = A, to = B,
 * slot = -1): A and B read one tensor (horizontal fusion). */
typedef struct ft_pat_edge {
    int from, to, slot;
} ft_pat_edge;

typedef struct ft_pattern {
    char *name;
    char *file;           /* where it was read, for messages */
    int line;             /* its `pattern` line */
    int nnodes;
    ft_pat_node node[FT_PATTERNS_MAX_NODES];
    int nedges;
    ft_pat_edge *edge;
    uint32_t outputs;     /* bit i: node i is a declared output */
} ft_pattern;

/* A library: the patterns of one or more files, in reading order (the
 * first of two patterns that cover the same ops names the tile). */
typedef struct ft_patlib {
    int npatterns;
    ft_pattern *pat;
} ft_patlib;

/* ------------------------------------------------------------ shared helpers */

/* Hash of the ints a[0..n), chained from h. */
static inline uint64_t ft__hash_ints(const int *a, int n, uint64_t h)
{
    for (int i = 0; i < n; i++) {
        h ^= (uint64_t)(uint32_t)a[i] + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
        h *= 0xbf58476d1ce4e5b9ULL;
    }
    return h ^ (h >> 31);
}

/* A growable array of ints (zero-initialised: empty). */
typedef struct ft_ivec {
    int *v;
    int n, cap;
} ft_ivec;

/* Room for `more` ints after a->n (pattern_cover.c); 0, or -1 on OOM
 * (a unchanged). */
int ft__ivec_reserve(ft_ivec *a, int more);

/* ------------------------------------------------------------ pattern_file.c */

/* Append the patterns of `text` (a pattern file's contents, NUL-terminated;
 * `name` is used in messages) to *lib.  FT_OK; FT_EINPUT with one line
 * "NAME:LINE: what is wrong" in st; or FT_ENOMEM.  On failure *lib may
 * hold a partial pattern: the caller still releases it with
 * ft__patlib_free, which frees everything. */
int ft__patlib_parse(ft_patlib *lib, const char *text, const char *name, ft_status *st);

/* ft__patlib_parse of the file at `path` (FT_EINPUT "PATH: cannot open:
 * ..." when it cannot be read). */
int ft__patlib_load(ft_patlib *lib, const char *path, ft_status *st);

/* Release what *lib owns and zero it; a zeroed lib is a no-op. */
void ft__patlib_free(ft_patlib *lib);

/* ------------------------------------------------------------ pattern_graph.c */

/* A source node: the ops lowering made from one source layer (patterns.c,
 * step 1), or one op. */
typedef struct ft_snode {
    int op0, nops;      /* its ops: G->node_ops[op0 .. op0 + nops), topological order */
    const char *kind;   /* its ops' kind, or their type ("matmul", ...) without one */
    unsigned char has_mm, all_pw, all_layout; /* a MatMul op; Pointwise ops only; Layout ops only */
    unsigned char comm; /* its kind is commutative */
    unsigned char gout; /* it makes a graph output */
    int in0, nin;       /* input slots: G->in_t[in0 ..] tensors, G->in_src[in0 ..] producer nodes or -1 */
    int succ0, nsucc;   /* consumer nodes: G->succ[succ0 ..] */
} ft_snode;

/* The source nodes of a problem and their links; nodes are numbered by
 * their first op in p->topo. */
typedef struct ft_pgraph {
    const ft_problem *p;
    int n;
    ft_snode *v;
    int *node_ops, *of;  /* of[op]: its node */
    int *in_t, *in_src, *succ;
    int *rank;           /* node -> position in a topological order of the nodes */
    int *pos;            /* op -> position in p->topo */
} ft_pgraph;

/* Build the source nodes of p into *G (free with ft__pgraph_free): ops
 * collapsed by layer, or one node per op when that collapse would make a
 * cycle.  0, or -1 on OOM (G left zeroed). */
int ft__pgraph_build(ft_pgraph *G, const ft_problem *p);

/* Release what G owns and zero it. */
void ft__pgraph_free(ft_pgraph *G);

/* ------------------------------------------------------------ pattern_cover.c */

/* What a tiling did, for tests and reports. */
typedef struct ft_pat_stats {
    int nodes;     /* source nodes (ops collapsed by layer) */
    int matches;   /* matches kept after deduplication */
    int blocks;    /* blocks (components of overlapping matches) */
    int solved;    /* blocks solved; the others reused a solved block's answer */
    int greedy;    /* blocks that reached FT_PATTERNS_MAX_STATES */
    long states;   /* cover states visited, over all blocks solved */
    int tiles;     /* matches chosen */
    int undone;    /* chosen matches undone because they closed a cycle */
} ft_pat_stats;

/* Cover of nodes 0..nnodes-1 by a subset of nmatches disjoint matches:
 * match k covers mnodes[moff[k] .. moff[k+1]) (ascending), comes from
 * pattern mpat[k]; matches are sorted largest first.  Sets chosen[k] (1:
 * match k is a tile; nmatches bytes).  Most covered nodes first, then
 * fewest tiles, per block (patterns.c's top comment); fills the cover
 * fields of *stats when not NULL.  0, or -1 on OOM. */
int ft__pattern_cover(int nnodes, int nmatches, const int *moff, const int *mnodes, const int *mpat,
                      unsigned char *chosen, ft_pat_stats *stats);

/* ------------------------------------------------------------ patterns.c */

/* Matches of lib in p (no undeclared escaping value, convex), after
 * deduplication by covered nodes; -1 on OOM.  For tests. */
int ft__patterns_count_matches(const ft_problem *p, const ft_patlib *lib);

/* The tiler with an already-read library (ft__strategy_patterns reads the
 * files, then calls this); stats (may be NULL) gets what it did.  Same
 * contract as ft__strategy_patterns. */
int ft__patterns_partition(const ft_problem *p, const ft_patlib *lib, ft_partition *out, ft_pat_stats *stats,
                           ft_status *st);

#endif
