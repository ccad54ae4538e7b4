/* rules.h - the steps of the rules and partition strategies (rule-based fusion, resource-constrained, layer-based and METIS partitioning) and the grouping helpers they share; not installed. */
#ifndef FT_RULES_H
#define FT_RULES_H

#include "strategy/strategy.h"

/* Named limits of these strategies.  Each is checked where it applies;
 * reaching one only leaves a merge undone, never makes a group invalid. */
enum {
    FT_RULES_MAX_CHAIN = 8,       /* elements of one fusion rule (rules.c's table) */
    FT_RULES_MAX_HORIZONTAL = 8,  /* groups one horizontal fusion joins (Q, K, V: 3) */
    FT_RULES_LABEL = 160,         /* bytes of a group label, NUL included (longer: cut) */
    FT_PART_MAX_GROUP_OPS = 32,   /* ops of one resource-constrained group: keeps the
                                     pass table's tiling choice per group tractable */
    FT_PART_MAX_PASSES = 8,       /* merge passes of the resource-constrained partition */
    FT_METIS_WEIGHT_SUM = 1 << 28, /* vertex and edge weights are scaled so that each
                                      kind sums to at most this (METIS's idx_t is 32-bit) */
    FT_METIS_MIN_PER_PART = 2,     /* groups per METIS part at least (fewer parts asked
                                      for are cut to this; partition_strategy.c says why) */
    FT_METIS_WEIGHTED_PER_PART = 4 /* groups per part from which vertices are weighted
                                      by compute (below: all alike) */
};

/* ------------------------------------------------------------ rules.c */

/* Rule-based fusion of p (rules.c's table): every op in exactly one group,
 * each labelled "RULE NAME" ("conv+bn+relu layer1.0.conv1") or, for a
 * source layer no rule took, "KIND NAME" ("max_pool2d maxpool").  Groups
 * are connected, the quotient acyclic, ids numbered by their first op in
 * p->topo.  FT_OK, or FT_ENOMEM with st set; *out is zeroed on failure and
 * owned by the caller (ft_partition_free) on success. */
int ft__rules_fuse(const ft_problem *p, ft_partition *out, ft_status *st);

/* Length of the block prefix of a source name: the name up to its first
 * all-digit component that follows another component, components split at
 * '.' and '/' ("layer1.0.conv1" -> 8, "layer1.0", "encoder.layers.3.fc" ->
 * "encoder.layers.3"); 0 when there is none ("conv1", "fc"). */
size_t ft__block_prefix(const char *name);

/* -------------------------------------------------- partition_strategy.c */

/* Resource-constrained partitioning: groups of `in` (a partition of p,
 * connected, acyclic) merged along producer-consumer tensors, largest
 * tensor first, while the merged group's footprint (ft__footprint) fits
 * p->capacity or exceeds neither group's own, it has at most
 * FT_PART_MAX_GROUP_OPS ops and the quotient stays acyclic.  A group of
 * `in` that does not fit on its own is kept whole.
 * *out: a new partition, labels "FIRST +N" (FIRST: the label in `in` of
 * its first group, N: the other groups merged into it).  FT_OK or
 * FT_ENOMEM; *out zeroed on failure. */
int ft__partition_fit(const ft_problem *p, const ft_partition *in, ft_partition *out, ft_status *st);

/* Layer-based partitioning: the groups of `in` by the block prefix
 * (ft__block_prefix) of their first op's source name, labelled "block
 * PREFIX"; groups without one, in runs between blocks (in the order of
 * their first ops), become "stem" (before the first block), "head" (after
 * the last), "between LABEL" (LABEL: the run's first group's) or, with no
 * block at all, "model"; then repaired keeping in's groups whole
 * (ft__grouping_repair).
 * *nblocks (may be NULL) gets the number of distinct prefixes.  FT_OK or
 * FT_ENOMEM; *out zeroed on failure. */
int ft__partition_layers(const ft_problem *p, const ft_partition *in, ft_partition *out, int *nblocks, ft_status *st);

/* Edge-cut partitioning with METIS (METIS_PartGraphKway) of the graph
 * whose vertices are the groups of `in`: vertex weight = the compute of
 * the group's ops (ft__rough_compute), edge weight = the elements of the tensors
 * between two groups; into `parts` parts (at least 1; in->ngroups or more:
 * a part per group; between in->ngroups / FT_METIS_MIN_PER_PART and
 * in->ngroups: cut to the former), then repaired keeping in's groups
 * whole (a part may become several groups; an empty part none).  Labels
 * "part K: FIRST +N" (FIRST: the label in `in` of its first group, N: the
 * others).  FT_OK, FT_ENOMEM, or FT_EINPUT naming METIS's error code. */
int ft__partition_metis(const ft_problem *p, const ft_partition *in, int parts, ft_partition *out, ft_status *st);

/* Working-set estimate of the ops ops[0..n-1] as one subgraph of p at
 * native granularity (w = nw, h = nh, k = native k), in elements: every
 * boundary input counted once at its largest slice (SPEC 4: a k-loop
 * MatMul's L[h, k] and R[k, w], an upstream MatMul's L[h, K] and R[K, w],
 * a Pointwise input's tile, a Layout input's proportional region), plus a
 * tile of each output that leaves the ops (ft__output_leaves).  `in` is
 * nops ints, zero, and is left zero; `best` is ntensors entries, zero,
 * and is left zero. */
int64_t ft__footprint(const ft_problem *p, const int *ops, int n, int *in, int64_t *best);

/* A heuristic estimate, not SPEC 4's compute (ft__op_compute): op o's
 * whole output at native granularity, every dimension padded to whole
 * native tiles (ft__dim_units), K included:
 *   base_cost x ceil(H / nh) x ceil(W / nw) [x ceil(K / native k)].
 * It differs from the rule (K / native k, an op's exact elements under
 * compute.pointwise_unpadded, the op compute model) on purpose: it is
 * only a vertex weight that METIS balances (ft__partition_metis), the
 * count of native steps an op takes, one figure per op whatever the
 * compute model or a target's pointwise setting; the exact rule would
 * move METIS's partitions. */
double ft__rough_compute(const ft_problem *p, int o);

/* ------------------------------------------------------------ grouping.c */

/* Scratch of ft__merge_cycles for p (ft__reach_init; ft__reach_free). */
typedef struct ft__reach {
    int *pos;        /* op -> position in p->topo */
    int *queue;      /* nops */
    unsigned *seen;  /* nops stamps */
    unsigned stamp;
} ft__reach;

int ft__reach_init(ft__reach *R, const ft_problem *p);
void ft__reach_free(ft__reach *R);

/* 1 if groups a and b of gid (ops[0..n-1]: all their ops) cannot be
 * merged without a cycle in the quotient graph: some path leaves them and
 * comes back; else 0. */
int ft__merge_cycles(ft__reach *R, const ft_problem *p, const int *gid, int a, int b, const int *ops, int n);

/* Make part valid for SPEC 2 and a schedule order: split every group into
 * its connected components (ops linked through tensors, SPEC 2), then, while
 * the quotient graph has a cycle, split one group of each strongly
 * connected component and split again (grouping.c says how); number the
 * groups by their first op in p->topo.  Splits keep the groups of `units`
 * whole (NULL: any op may part; units must be a valid partition, like
 * ft__rules_fuse's, and each group of part a union of its groups, else it
 * is ignored).  Labels follow their ops' group (pieces of one group share
 * its label).  FT_OK or FT_ENOMEM (part is then unchanged). */
int ft__grouping_repair(const ft_problem *p, ft_partition *part, const ft_partition *units, ft_status *st);

/* Free n labels and the array (either may be NULL). */
void ft__labels_free(char **label, int n);

#endif
