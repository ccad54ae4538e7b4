/* supertile.h - the super tiling strategy's own interface: the tile each group runs at and its footprint model (the schedule of its partition: search.h); not installed. */
#ifndef FT_SUPERTILE_H
#define FT_SUPERTILE_H

#include "cost/score.h"
#include "strategy/strategy.h"

/* Named limits of super tiling.  Each is checked where it applies; none
 * makes a result invalid, it only narrows what is tried. */
enum {
    FT_SUPERTILE_MAX_GROUP_OPS = 64, /* ops in one fused tile loop: a fusion past it is not tried */
    FT_SUPERTILE_K_FLOOR = 32,       /* tiling halves k first, down to this, before it halves w or h */
    FT_SUPERTILE_MIN_FUSE_K = 16     /* a fusion may halve the loop's k (no padding cost) down to this */
};

/* ft__supertile_footprint's answer for a loop that no tile makes valid: a
 * tensor that feeds a fused MatMul (an upstream op's output, SPEC 3) would
 * have to leave the loop, for a consumer outside it or as a graph output. */
#define FT_SUPERTILE_ESCAPES INT64_MAX

/* The tile one group of a super tiling runs at: granularity w x h x k
 * (each at least 1 and at most native unless the problem allows larger),
 * and whether the group was tiled (its whole footprint, every tensor it
 * touches at full size, did not fit the fast memory) or runs whole (at the
 * largest granularity the model allows). */
typedef struct ft_supertile_tile {
    int64_t w, h, k;
    int tiled;
} ft_supertile_tile;

/* Super tiling of p (the algorithm: supertile.c's top).  On FT_OK, *out
 * holds the partition (connected groups, acyclic quotient, a label per
 * group: "supertile NAME" for a tiled loop, "untiled NAME" for a group run
 * whole; release with ft_partition_free) and, when tiles is not NULL,
 * *tiles a malloc'd array of out->ngroups tiles the caller frees, each
 * checked over every step to fit the capacity in the partition's context
 * (outputs consumed outside the group written, nothing retained).
 * FT_EINVALID (FT_R_OOM) when some op fits no tile, naming it; FT_ENOMEM.
 * On failure *out and *tiles own nothing. */
int ft__supertile_run(const ft_problem *p, ft_partition *out, ft_supertile_tile **tiles, ft_status *st);

/* The footprint of ops[] (n ops, listed after their producers) run as one
 * fused tile loop at tile w x h x k: the largest working set (SPEC 4) of
 * the first tile's first and last k-steps, which is what the loop nest
 * holds at once: the boundary inputs' slices (a producer's tile inputs and
 * the consumers' other operands, the intermediates being ephemeral) plus a
 * tile of each output that leaves the loop (consumed by an op outside
 * ops[], or a graph output).  Tiles past the first have the same sizes or
 * smaller, but for a Layout's rounding: the exact check of every step is
 * ft__supertile_run's.  w, h, k may exceed native (w = W, h = H, k = K is
 * the loop run whole).  Stores it in *out, or FT_SUPERTILE_ESCAPES.  FT_OK
 * or FT_ENOMEM. */
int ft__supertile_footprint(const ft_problem *p, const int *ops, int n, int64_t w, int64_t h, int64_t k, int64_t *out, ft_status *st);

/* ---- shared by supertile.c and supertile_footprint.c ---- */

/* Scratch of the footprint model: the context of a loop (written flags of
 * its outputs, nothing retained or resident) and its members. */
typedef struct ft_st_scratch {
    sctx x;
    int *member;           /* nops flags: 1 = in the loop (ft__output_leaves) */
} ft_st_scratch;

/* Scratch for p, every flag 0: 0, or -1 on OOM with sc owning nothing.
 * Release with ft__st_scratch_free. */
int ft__st_scratch_init(ft_st_scratch *sc, const ft_problem *p);
/* Release what sc owns and clear it (a zeroed sc is fine). */
void ft__st_scratch_free(ft_st_scratch *sc);

/* ft__supertile_footprint with caller scratch: the footprint, or
 * FT_SUPERTILE_ESCAPES, or -1 on OOM. */
int64_t ft__st_footprint(const ft_problem *p, ft_st_scratch *sc, const int *ops, int n, const ft_supertile_tile *t);

/* The whole tile of ops[]: the extent of its tile grid (the largest output
 * of its k-loop and epilogue ops, SPEC 4) and the deepest K of its k-loop
 * MatMuls (0 when it has none), as *t (tiled 0). */
void ft__st_whole(const ft_problem *p, const int *ops, int n, ft_supertile_tile *t);

/* t clipped to the largest granularity the model allows (native, unless
 * the problem allows larger ones); a k of 0 (no k-loop) becomes native k,
 * where a MatMul fused later starts. */
void ft__st_clip(const ft_problem *p, ft_supertile_tile *t);

/* One refinement of t (K: the whole tile's, 0 without a k-loop): halve k
 * (min(k, K): what the walk uses) while above FT_SUPERTILE_K_FLOOR, then
 * the larger of w and h, then k down to 1.  Returns 0 when nothing is left
 * to halve. */
int ft__st_halve(ft_supertile_tile *t, int64_t K);

/* Refine t by ft__st_halve until the footprint of ops[] fits p's
 * capacity.  1: it fits (t set), 0: no tile fits, -1: OOM. */
int ft__st_refine(const ft_problem *p, ft_st_scratch *sc, const int *ops, int n, ft_supertile_tile *t);

/* Whether ops[] at tile t fits the capacity of scorer's problem in every
 * step, exactly as ft_evaluate walks it (outputs consumed outside
 * written): 1 or 0 (0 also on OOM).  scorer: ft__scorer_init's for the
 * problem under the native compute model, no stop hook.  Assumes no fused
 * operand escapes (ft__st_footprint refuses such loops before). */
int ft__st_fits_exactly(ft__scorer *scorer, ft_st_scratch *sc, const int *ops, int n, const ft_supertile_tile *t);

#endif
