/* walk.h - the step walker's state (walk.c), shared with the fast scorer (score.c, score.h); not installed. */
#ifndef FT_WALK_H
#define FT_WALK_H

#include "cost/cost.h"

/* Source of a region's row or column range: the tile's rows, the tile's
 * columns, the k slice, or a whole reduction depth. */
enum { TAG_NONE = 0, TAG_TY, TAG_TX, TAG_KS, TAG_FULL };

/* Largest period of ft__walk_tile's mode 4 (k-steps); a longer one is
 * not used (every k-step derived). */
#define FT_WALK_KPER_MAX 64

struct ft_walk {
    const ft_problem *p;
    const ft_subgraph *g;
    ft_compute_model model;
    int nops;
    int matmul;                 /* the subgraph has a MatMul (ft__sg_matmul) */
    ft_role *role;              /* per position */
    unsigned char *tbits;       /* produced | written | retained | resident, ntensors each */
    unsigned char *produced, *written, *retained, *resident;
    int64_t ntx, nty, nk, nsteps, next;
    int64_t next_pos, next_ks;  /* next's traversal position and k-step (ft_walk_next) */
    int64_t row_tile, row_r, row_c;  /* the last tile derived and its row and column (-1: none) */
    int64_t ws_fixed;           /* resident tensors + written/retained outputs */
    /* needs on tensors produced inside the subgraph, per tensor */
    int64_t stamp;              /* one per derived step */
    int64_t *need_stamp;
    ft_region *need;
    unsigned char (*need_kind)[2];
    unsigned char (*need_tag)[2];
    /* per tensor and axis, where its ranges come from (TAG_*); a tensor
     * whose axis mixes sources makes the walk irregular (ft__walk_tile) */
    unsigned char (*tag_seen)[2];
    int irregular;
    int mixed[2];               /* some tensor's rows (0) / columns (1) mix sources,
                                   or a Layout op scales them (walk.c, need_layout) */
    int mixed_tag[2];           /* ... because a tensor's rows / columns take ranges
                                   from two sources (not only a Layout's scaling) */
    int mixed_tag0[2];          /* ... seen by the first k-step alone (ft__walk_mixed: no epilogue) */
    int mixed_internal;         /* ... and one of them is made inside the subgraph,
                                   or is a Layout's scaled input */
    int kinds_differ;           /* two needs of one upstream output had different
                                   dimension kinds: the op order can change a cost */
    int have_prev;              /* the previous derived step counts for reuse */
    int flow_only;              /* ft_walk_flow_only: regions only, no slices nor costs */
    int64_t kper;               /* ft__walk_tile's mode 4: k-steps this many apart cost alike
                                   away from the first, last and finishing k-steps (set by the
                                   scorer, which proves it: score.c, ks_period); 0: unknown */
    int64_t kper_last;          /* ... the same while only the deepest k-loop MatMuls run */
    int64_t kskipped;           /* k-steps mode 4 added from a period, not derived */
    int order_kind;             /* g->order NULL: the tiles in the order of this kind (ORD_*,
                                   score.h; ft__order_tile), 0 raster */
    ft__rates rates;            /* the subgraph's bandwidths (ft__step_rates) */
    ft__rates tile_rates;       /* ... shared by the current tile's wave (ft__walk_at) */
    int64_t wave;               /* tiles of the current tile's wave */
    double floor;               /* least latency of the steps together: with a shared cache
                                   the subgraph does not fit, its slow-memory footprint at
                                   p's own bandwidths (walk.c, sg_rates); else 0 */
    /* per-step output */
    int cap;                    /* slice capacity */
    ft_slice *slices, *prev;
    int nslices, nprev;
    unsigned char *loaded;
    ft_slice *writes;
    int nwrites;
    int *active;
    ft_active *acts;
    int nactive;
};


/* The tile (row * ntx + column) at traversal position pos of the
 * scorer's order kind `kind` (ORD_*, score.h; score.c). */
int64_t ft__order_tile(int kind, int64_t ntx, int64_t nty, int64_t pos);

/* The tile derived next is at traversal position pos: its steps move data
 * at its wave's share of the subgraph's bandwidths (ft_timing's units). */
void ft__walk_at(ft_walk *w, int64_t pos);

/* Derive step (tile, k-step ks) of w into *step: regions, slices (loaded
 * unless in the previously derived step), writes, compute and memory. */
void ft__walk_derive(ft_walk *w, int64_t tile, int64_t ks, ft_step *step);

/* What ft_evaluate reports of a tile's k-steps (ft_sg_result), summed
 * over them: latency, compute and memory time (compensated sums, a
 * repeated k-step's product added exactly), compute- and memory-bound
 * steps, elements loaded and written. */
typedef struct ft__tile_figs {
    ksum lat, comp, mem;
    int64_t cbound, mbound, loaded, written;
} ft__tile_figs;

/* Latency of the nk steps of `tile` when the step before it is the last
 * step of tile `prev` (-1: the tile starts the subgraph); *ws_max gets the
 * largest working set of those steps.  Walks derived this way are exact
 * only while ft__walk_irregular() is 0: then a tile's cost depends only on
 * the clipped sizes of its rows and columns and of prev's and on whether
 * prev shares its row or column (every tensor axis takes its ranges from
 * one source: tile rows, tile columns, the k slice or a whole reduction).
 * figs (may be NULL) gets the tile's figures for ft_evaluate. */
double ft__walk_tile(ft_walk *w, int64_t prev, int64_t tile, int64_t *ws_max, int allow_ff, ft__tile_figs *figs);
int ft__walk_irregular(const ft_walk *w);

/* ft__walk_tile, with the figures of the tile's interior k-steps (neither
 * the first nor the last) also summed into *mid (may be NULL) and their
 * largest working set into *mid_ws. */
double ft__walk_tile_split(ft_walk *w, int64_t prev, int64_t tile, int64_t *ws_max, int allow_ff, ft__tile_figs *figs, ft__tile_figs *mid,
                           int64_t *mid_ws);

/* ft__walk_tile of a tile of at least 3 k-steps whose interior k-steps
 * cost *mid (largest working set mid_ws) as ft__walk_tile_split found them
 * on a like tile: only its first and last k-steps derived (and the step
 * before the last, for the slices the last one's reuse compares with).
 * Exact where the interior k-steps depend on the tile's place only through
 * what the caller keyed *mid by (score.c: ikey). */
double ft__walk_tile_ends(ft_walk *w, int64_t prev, int64_t tile, const ft__tile_figs *mid, int64_t mid_ws, int64_t *ws_max,
                          ft__tile_figs *figs);

/* The figures ft__sg_extra needs from a walk whose traversal starts at tile
 * `first` and ends at tile `last`: elements loaded by the first step,
 * elements written and compute of the last.  Leaves the walker's reuse
 * state reset (the next ft__walk_tile must pass prev = -1 or a tile). */
void ft__walk_edges(ft_walk *w, int64_t first, int64_t last, int64_t *loaded0, int64_t *written_last, double *compute_last);

/* For a walker at k = 1, derive k-steps 0 and last of tile 0 to learn which
 * axes mix range sources:
 * *rows / *cols = 1 when some tensor's rows / columns come from more than
 * one source; *interior = 0 when the interior k-steps (neither first nor
 * last) alone mix no axis at any k, 1 when they mix only axes of boundary
 * tensors (slices of fixed size), 2 when a tensor made inside mixes (its
 * bounding box changes size from step to step).  A subgraph's sources do
 * not depend on its granularity, and tile 0 activates every op.  With a mixed axis, a
 * tile's cost is still a function of the absolute index of its row (mixed
 * rows) or column (mixed columns) in place of its class.  ft__walk_tile's
 * allow_ff: 0 derives every k-step; 1 skips interior k-steps that repeat
 * the two before them unless the walk turned out irregular; 2 skips them
 * regardless (for a caller that knows the interior steps are not mixed);
 * 3 skips them too, except near a k slice that overlaps the tile's row or
 * column range (interior mixing of boundary tensors only); 4 (w->kper or
 * w->kper_last > 0) derives k-steps until one period of w->kper k-steps
 * (w->kper_last once only the deepest k-loop MatMuls run) and the step before
 * it lie past the tile's first k-step and past every k-loop op's finishing
 * k-step, then adds the k-steps up to the next finishing (or the last)
 * k-step from that period's figures, without deriving them: k-steps a
 * period apart cost alike there when every range a k slice sets shifts by
 * whole elements over a period (Layout ops scaling the k slices, score.c's
 * ks_period). */
void ft__walk_mixed(ft_walk *w, int *rows, int *cols, int *interior);

#endif
