/* strategy.h - the interface every grouping strategy (pattern library, rule-based fusion and partitioning, super tiling) implements: a problem in, a partition of its ops out; not installed. */
#ifndef FT_STRATEGY_H
#define FT_STRATEGY_H

#include "internal.h"

/* What a strategy may be told besides the problem.  Zero-initialised
 * means: the built-in defaults. */
typedef struct ft_strategy_opts {
    /* pattern-library files (patterns strategy); NULL or an empty list:
     * the bundled libraries under the source tree's patterns/ */
    const char *const *pattern_files;
    int npattern_files;
    /* parts wanted from graph partitioning (partition strategy: the
     * target's units: SMs, KPU tiles, TPU cores); 0: chosen from the
     * problem (one per resource-constrained group) */
    int parts;
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

/* Release what a partition owns (not *part itself). */
void ft_partition_free(ft_partition *part);

/* Each strategy: FT_OK and *out filled, or an FT_E* code with st set (a
 * bad pattern file names the file and line; FT_ENOMEM).  None keeps
 * state between calls. */
int ft__strategy_patterns(const ft_problem *p, const ft_strategy_opts *o, ft_partition *out, ft_status *st);
int ft__strategy_rules(const ft_problem *p, const ft_strategy_opts *o, ft_partition *out, ft_status *st);
int ft__strategy_partition(const ft_problem *p, const ft_strategy_opts *o, ft_partition *out, ft_status *st);
int ft__strategy_supertile(const ft_problem *p, const ft_strategy_opts *o, ft_partition *out, ft_status *st);

#endif
