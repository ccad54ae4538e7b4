/* strategy.h - the interface every grouping strategy (pattern library, rule-based fusion and partitioning, super tiling) implements: a problem in, a partition of its ops out; not installed. */
#ifndef FT_STRATEGY_H
#define FT_STRATEGY_H

#include "cost/cost.h"

/* What a strategy may be told besides the problem.  Zero-initialised
 * means: the built-in defaults. */
typedef struct ft_strategy_opts {
    /* pattern-library files (patterns strategy); NULL or an empty list:
     * the bundled libraries (patterns_dir below) */
    const char *const *pattern_files;
    int npattern_files;
    /* parts wanted from graph partitioning (partition strategy: the
     * target's units: SMs, KPU tiles, TPU cores); 0: chosen from the
     * problem (one per resource-constrained group) */
    int parts;
    /* how the partition strategy cuts (FT_PARTITION_AUTO: see fusetile.h) */
    ft_partition_method method;
    /* the bundled pattern libraries' directory, tried first
     * (ft_search_opts.patterns_dir); NULL: the built-in lookup */
    const char *patterns_dir;
    /* the caller's clock (the search's deadline): when stop(stop_ctx)
     * returns 1 a strategy ends soon with the grouping it has, leaving
     * its exact checks to the caller (which splits a group it cannot cost
     * in time); NULL: never */
    int (*stop)(void *stop_ctx);
    void *stop_ctx;
} ft_strategy_opts;

/* A strategy's answer: a group id per op (gid[o] in 0..ngroups-1) and,
 * optionally, a label per group naming what made it ("conv+bn+relu",
 * "pattern mm->relu", "block layer1.0").  Every group must be connected
 * (SPEC 2, ft__connected) and the quotient graph of the groups acyclic;
 * the caller (the pass table) picks each group's granularity, traversal
 * and retained tensors, and splits a group that fits no tiling. */
typedef struct ft_partition {
    int nops;
    int *gid;       /* nops entries */
    int ngroups;
    char **label;   /* ngroups entries, each NULL or malloc'd; or NULL */
} ft_partition;

/* Bytes of a group's label in a schedule (strategy_pass.c: the strategy's
 * label and its source layers), NUL included; longer lists end in
 * ", ... (+N)". */
enum {
    FT_STRATEGY_LABEL_MAX = 240,
    FT_STRATEGY_HEAD_MAX = 64 /* bytes of the strategy's own label kept at its head */
};

/* Share of the time left that the checks of whether a strategy's groups
 * fit some tiling may take (strategy_pass.c), split equally among the
 * groups still to check; a group whose check runs past its slice is split
 * as one that fits none. */
#define FT_STRATEGY_CHECK_SHARE 0.5

/* Release what a partition owns (not *part itself) and zero it. */
void ft_partition_free(ft_partition *part);

/* Whether the quotient graph of the partition gid (ng groups, every
 * gid[o] in 0..ng-1, empty groups allowed) is acyclic: 1, 0 when it has a
 * cycle, -1 on OOM. */
int ft__partition_acyclic(const ft_problem *p, const int *gid, int ng);

/* FT_OK when part is a partition of p's ops that a schedule can follow:
 * every gid in range, no group empty, every group connected (SPEC 2) and
 * the quotient graph acyclic.  Otherwise FT_EINVALID with st naming the
 * first fault (or FT_ENOMEM). */
int ft__partition_check(const ft_problem *p, const ft_partition *part, ft_status *st);

/* Each strategy: FT_OK and *out filled, or an FT_E* code with st set (a
 * bad pattern file names the file and line; FT_ENOMEM).  None keeps
 * state between calls. */
int ft__strategy_patterns(const ft_problem *p, const ft_strategy_opts *o, ft_partition *out, ft_status *st);
int ft__strategy_rules(const ft_problem *p, const ft_strategy_opts *o, ft_partition *out, ft_status *st);
int ft__strategy_partition(const ft_problem *p, const ft_strategy_opts *o, ft_partition *out, ft_status *st);
int ft__strategy_supertile(const ft_problem *p, const ft_strategy_opts *o, ft_partition *out, ft_status *st);

#endif
