/* search.h - the scheduler's internal interface: the plan, the search's state (its scorer included), and the passes ft_search drives (search.c). */
#ifndef FT_SEARCH_H
#define FT_SEARCH_H

#include "cost/score.h"
#include "strategy/strategy.h"
#include "strategy/supertile.h"

/* Named limits of the search.  Each is checked where it applies; none
 * makes a score wrong when it is reached, it only narrows what is tried. */
enum {
    FT_SEARCH_MAX_RETAIN = 6,          /* retention candidates per group in the DP (2^6 states) */
    FT_SEARCH_EXHAUSTIVE_OPS = 7,      /* every ordered partition up to this many ops */
    FT_SEARCH_OP_ORDER_OPS = 256,      /* random op orders tried only up to this many ops in a group */
    FT_SEARCH_MAX_CANDIDATES = 96,     /* tile sizes per dimension (powers of two first, then divisors) */
    FT_SEARCH_ALL_SIZES = 32,          /* every tile size is a candidate up to this native size */
    FT_SEARCH_CHECK_TILES = 256,       /* tiles of the largest configuration S->tiling_check scores */
    FT_SEARCH_TILING_PATIENCE = 48,    /* tilings tried past the last better one when every k-step is walked */
    FT_SEARCH_WINDOW_LINKS = 16,       /* outside groups a window op may join in a re-partition */
    FT_SEARCH_QUICK_TRIES = 3,         /* granularities the cheap start scores (raster), lowest bound first, once one fits */
    FINE_COUNTS_MIN = 8                /* FINE_COUNTS adds no size below this (powers of two cover them) */
};

/* Share of the time left that the starts pass (the strategies' groupings,
 * search.c) may take. */
#define FT_SEARCH_STARTS_SHARE 0.3

/* Tile-size candidate sets of the scheduler (search.fine, tiling.c). */
enum { FINE_NONE = 0, FINE_ALL, FINE_COUNTS };

/* One group of a plan: its ops (a topological order), configuration,
 * retained tensors and exact latency in its context. */
typedef struct group {
    int nops;
    int *ops;
    cfg c;
    int nret;
    int *ret;
    double lat;
} group;

/* A plan: the groups in execution order (a schedule in the making). */
typedef struct plan {
    int ngroups;
    group *g;
} plan;

typedef struct memo memo;
typedef struct shared shared;

/* The state of one search (one per thread): the problem, its scorer, the
 * clock, the random stream, the memo of subgraph costs, scratch buffers and
 * the best plan found.  Passes read and write only through their arguments
 * and these fields. */
typedef struct search {
    const ft_problem *p;
    const ft_search_opts *o;
    ft__scorer sc;         /* under o->model; its stop hook is the deadline
                              (ft__search_scorer_init); sc.kinds_differ:
                              another op order may change a group's cost */
    int thread;            /* 0 .. threads-1 */
    double t0, deadline;
    int timed_out;
    unsigned long failed0; /* ft__alloc_failures of its thread at the start:
                              ft__out_of_time stops the search after one */
    int tiling_all;        /* 1: ft__choose_tiling scores every candidate
                              (no bound or patience cut; tests compare) */
    int tiling_check;      /* 1 (with tiling_all): every candidate is
                              also scored whole (no budget) and compared
                              with its bound: bound_checked counts them,
                              bound_over those whose bound exceeds the
                              score by more than 1e-9 relative, the
                              first in bound_cfg, bound_lb, bound_exact
                              (tests: the bound is a lower bound);
                              configurations of more than
                              FT_SEARCH_CHECK_TILES tiles are skipped */
    int64_t bound_checked, bound_over;
    cfg bound_cfg;
    double bound_lb, bound_exact;
    int fine;              /* tile-size candidates (tiling.c): FINE_NONE,
                              FINE_ALL (every size up to a small native one,
                              FT_SEARCH_ALL_SIZES) or FINE_COUNTS (every
                              size that sets a tile count) */
    int first;             /* 1 while the first schedule is built: no
                              deadline cuts it, so a valid schedule exists
                              whatever the time limit */
    int quick;             /* 1 while the cheap start is built (search.c):
                              ft__choose_tiling scores a few candidates in
                              raster order only (FT_SEARCH_QUICK_TRIES),
                              ft__group_cost tries no other op order and
                              memoises nothing */
    uint64_t rng;
    int *topo_pos;         /* op -> position in p->topo */
    /* memo of subgraph costs by (ops, context) */
    memo **tab;
    size_t tabsize, nmemo;
    int *keybuf;
    int keycap;
    /* scratch of granularity choice, ntensors each */
    unsigned char *produced, *uses;
    /* the best plan of this search */
    double best;
    plan best_plan;
    double best_time;      /* seconds from t0 at which it was found */
    double bound;          /* the best lower bound: stop when best reaches it */
    int *start_gid;        /* the best strategy's partition (starts pass) */
    double start_t;        /* its total (INF: none) */
    shared *sh;            /* state shared between threads (search.c) */
} search;

/* ------------------------------------------------------------ search.c */

/* 1 once the deadline has passed (never while S->first); also reports
 * progress when it is due. */
int ft__out_of_time(search *S);
/* Set up S->sc for S->p under model with ft__out_of_time(S) as its stop
 * hook (S must not move while the scorer is in use).  0, or -1 on OOM;
 * release with ft__scorer_free(&S->sc). */
int ft__search_scorer_init(search *S, ft_compute_model model);
/* Next value of S's random stream. */
uint64_t ft__rng(search *S);
/* Offer plan P (groups, configurations, retained sets and latencies
 * filled): kept when it beats S's best.  Returns P's total. */
double ft__offer(search *S, const plan *P);

/* ------------------------------------------------------------ tiling.c */

/* Best configuration of subgraph g (ops set) in context x: granularities
 * ordered by a lower bound, each with every traversal kind, scored
 * exactly.  Returns its latency (INF if none fits) and sets *best_c. */
double ft__choose_tiling(search *S, const sctx *x, ft_subgraph *g, cfg *best_c);

/* ------------------------------------------------------------ group.c */

/* Best latency and configuration of the subgraph ops[] in context x,
 * memoised; ops[] is reordered in place into the best execution order
 * found (a topological order). */
double ft__group_cost(search *S, const sctx *x, int *ops, int nops, cfg *c);
/* Release S's memo. */
void ft__memo_free(search *S);
/* Sort ops by topological position. */
void ft__sort_topo(const search *S, int *ops, int n);

/* ------------------------------------------------------------ plan.c */

/* P with n groups, each zeroed (no ops, no retained set): 0, or -1 on
 * OOM with P empty.  Release with ft__plan_free. */
int ft__plan_alloc(plan *P, int n);
/* Release P's groups, their ops and retained sets, and clear P (an empty
 * or zeroed P is fine). */
void ft__plan_free(plan *P);
/* Deep copy of A's groups (ops and retained sets; room for `extra` more
 * ops in each group) into B; -1 on OOM. */
int ft__plan_copy(const plan *A, plan *B, int extra);
/* Schedule of plan P (NULL on OOM). */
ft_schedule *ft__plan_schedule(const ft_problem *p, const plan *P);
/* Context of group i of P (SPEC 3's rules with P's retained sets) into x;
 * x's buffers are ntensors each. */
void ft__plan_context(const ft_problem *p, const plan *P, int i, sctx *x);
/* Re-optimise every group of P in its context; returns the total. */
double ft__plan_cost(search *S, plan *P, sctx *x);
/* Plan with one group per group id of gid (ng ids) in a topological order
 * of the quotient graph; -1 if it has a cycle or on OOM. */
int ft__plan_from_partition(search *S, const int *gid, int ng, plan *P);

/* ------------------------------------------------------------ retain.c */

/* Optimal retained sets for the fixed ordered groups of P by dynamic
 * programming; fills every group's ret, c and lat and returns the total. */
double ft__retention(search *S, plan *P, sctx *x);

/* ------------------------------------------------------------ partition.c */

/* Cost of group g of partition gid (ops[] its n ops) in the partition's
 * context: outputs consumed outside are written, nothing retained. */
double ft__partition_group_cost(search *S, sctx *x, const int *gid, int g, int *ops, int n, cfg *c);
/* Renumber group ids 0..ng-1; returns ng. */
int ft__compact_gids(int *gid, int n);
/* Greedy pairwise fusion from one op per group; gid gets the partition. */
void ft__greedy_fusion(search *S, sctx *x, int *gid);
/* Merge neighbouring groups while it pays: in the order of the plan of
 * gid, each group with the next one when that reads what it makes, the
 * quotient graph stays acyclic and the merged group costs less than the
 * two (partition context, memoised); sweeps again until a sweep merges
 * nothing or the deadline.  Returns the merges made. */
int ft__neighbour_merge(search *S, sctx *x, int *gid);
/* Every ordered partition of a small problem, each offered. */
void ft__exhaustive(search *S, sctx *x, int *gid);
/* Hill climbing on partition gid: at most `moves` tries. */
void ft__local_search(search *S, sctx *x, int *gid, int64_t moves);
/* Apply `n` random valid moves to gid (a perturbation for a restart). */
void ft__perturb(search *S, int *gid, int n);
/* Large-neighbourhood move: re-partition exactly a window of up to
 * `span` ops consecutive in topological order, the rest fixed; keeps the
 * best.  Returns 1 when gid changed. */
int ft__window_repartition(search *S, sctx *x, int *gid, int span);

/* ------------------------------------------------------------ strategy_pass.c */

/* Run grouping strategy `which` (not FT_STRATEGY_SEARCH) on S->p with
 * S->o's options: *part gets its groups, each fitting the fast memory
 * alone (a group that fits no tiling, or whose check ran past its share
 * of the time left, FT_STRATEGY_CHECK_SHARE, split into chunks or single
 * ops), labelled by the strategy, why it was split, and its ops' source
 * layers; singles: every group split into single ops unchecked (the
 * fallback when the groups cannot be costed in time); gid (nops entries)
 * the same group ids.  FT_OK, or the strategy's error (a bad pattern file:
 * FT_EINPUT naming file and line; FT_ENOMEM) with *part empty.  The
 * caller frees *part (ft_partition_free). */
int ft__strategy_groups(search *S, sctx *x, ft_strategy which, int singles, int *gid, ft_partition *part, ft_status *st);

/* FT_OK when every pattern file o names (o->pattern_files) reads as a
 * pattern library; else FT_EINPUT naming the file and line (FT_ENOMEM).
 * ft_search checks them first, whether or not a pass will read them. */
int ft__strategy_check_files(const ft_search_opts *o, ft_status *st);

/* The schedule of super tiling's partition part with its tiles
 * (ft__supertile_run's), through a plan: the groups in a topological order
 * of the quotient graph, each group's ops in a topological order at its
 * tile, raster traversal, nothing retained, no reported latencies.  FT_OK
 * with *out (free with ft_schedule_free); FT_EINPUT when the quotient graph
 * has a cycle; FT_ENOMEM.  The schedule is not evaluated. */
int ft__supertile_schedule(const ft_problem *p, const ft_partition *part, const ft_supertile_tile *tiles, ft_schedule **out, ft_status *st);

/* ------------------------------------------------------------ recompute.c */

/* Recompute producers inside their consumers' groups where that lowers
 * P's total `cur`; returns the new total. */
double ft__recompute(search *S, plan *P, sctx *x, double cur);

#endif
