/* internal.h - helpers shared by the sched/ sources; not installed. */
#ifndef FT_INTERNAL_H
#define FT_INTERNAL_H

#include "fusetile.h"

#if defined(__GNUC__)
#define FT_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define FT_PRINTF(a, b)
#endif

/* Fill *st (may be NULL) with code, reason and a formatted message; returns
 * code so callers can write `return ft__fail(st, FT_EINPUT, 0, ...)`. */
int ft__fail(ft_status *st, int code, int reason, const char *fmt, ...)
    FT_PRINTF(4, 5);

/* Read a NUL-terminated file into a malloc'd buffer.  FT_OK, FT_EINPUT (with
 * the OS error naming the path) or FT_ENOMEM. */
int ft__read_file(const char *path, char **out, ft_status *st);

/* Parse a JSON text into *root (json_t *, decref when done); on failure
 * FT_EINPUT with "NAME: empty file" or "NAME:LINE:COL: not valid JSON". */
int ft__json_parse(const char *text, const char *name, void **root, ft_status *st);

/* strdup that tolerates NULL (returns NULL) */
char *ft__strdup(const char *s);

/* Division rounding up for positive operands. */
static inline int64_t ft__ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Cost units a subgraph of p pays besides its steps' latencies (ft_timing):
 * the launch overhead and, with double buffering, the pipeline's fill and
 * drain, from the subgraph's first step (loaded0 elements loaded) and last
 * step (written_last elements written, compute_last of compute):
 *   L + (written_last > 0 ? L : 0) + min(loaded0 / bandwidth +
 *   written_last / write_bandwidth, compute_last)
 * (the first loads and the last write-backs cannot overlap compute; when
 * the steps are memory-bound the last compute shows instead). */
double ft__sg_extra(const ft_problem *p, int64_t loaded0, int64_t written_last, double compute_last);

/* Latency of a subgraph of p whose only step loads `loaded`, writes
 * `written` and computes for `compute`, with double buffering: nothing
 * overlaps, so launch overhead + L + loaded / bandwidth + compute + L +
 * written / write_bandwidth (the latencies only for transfers that
 * happen). */
double ft__sg_single(const ft_problem *p, int64_t loaded, int64_t written, double compute);

/* The smallest ft__sg_extra of p (no transfer time). */
static inline double ft__sg_fixed(const ft_problem *p)
{
    return p->timing.launch_overhead + (p->timing.overlap == FT_OVERLAP_PIPELINE ? p->timing.transfer_latency : 0);
}

/* The bound's combination (SPEC sections 5 and 7): a total compute and a
 * memory time that no schedule of p can beat give max(compute, memory), or
 * compute + memory when steps do not overlap (ft_timing.overlap NONE), plus
 * the launch overhead (and the pipeline's fill) of the one subgraph every
 * schedule has.  Shared by ft_lower_bound and ft_lower_bound_capacity
 * (sched/search.c's candidate bound has the same expression). */
static inline double ft__bound_combine(const ft_problem *p, double compute, double memory)
{
    double b = p->timing.overlap == FT_OVERLAP_NONE ? compute + memory : compute > memory ? compute : memory;
    return b + ft__sg_fixed(p);
}

/* The compulsory traffic of every schedule of p (SPEC section 5): *reads
 * gets the elements of the graph inputs, *writes those of the outputs. */
void ft__compulsory(const ft_problem *p, int64_t *reads, int64_t *writes);

/* Per-tensor reduction flags of SPEC section 5 (rw[t], rh[t]: a dimension
 * of t may be a reduction dimension of some region, so the op computing t
 * may pay it proportionally); rw and rh are ntensors bytes each, filled. */
void ft__reduction_flags(const ft_problem *p, unsigned char *rw, unsigned char *rh);

/* Roles of the ops of subgraph g (roles[j] for g->ops[j], may be NULL) and
 * its tile grid: ntx x nty tiles of nk k-steps.  Assumes ops are in range,
 * distinct and listed after their producers, and w, h, k >= 1. */
void ft__sg_grid(const ft_problem *p, const ft_subgraph *g, ft_role *roles,
                 int64_t *ntx, int64_t *nty, int64_t *nk);

/* Per-tensor facts of subgraph sg, each array ntensors long (caller
 * allocates): produced[t] = 1 if an op of sg outputs t; written[t] = 1 if
 * that output is written to slow memory (SPEC 3); retained[t] = 1 if sg
 * retains it; resident[t] = 1 if sg-1 retained it. */
void ft__sg_tensors(const ft_problem *p, const ft_schedule *s, int sg,
                    unsigned char *produced, unsigned char *written,
                    unsigned char *retained, unsigned char *resident);

/* A walker for subgraph g under explicit tensor sets (ntensors bytes each:
 * written, retained and resident flags; "produced" is derived from g), for
 * the scheduler's what-if scoring.  g must satisfy ft_schedule_validate's
 * per-subgraph rules and outlive the walker.  FT_OK, FT_ENOMEM or FT_EINPUT
 * (step count overflow). */
int ft__walk_new(const ft_problem *p, const ft_subgraph *g, ft_compute_model model, const unsigned char *written,
                 const unsigned char *retained, const unsigned char *resident, ft_walk **out, ft_status *st);

/* Latency of the nk steps of `tile` when the step before it is the last
 * step of tile `prev` (-1: the tile starts the subgraph); *ws_max gets the
 * largest working set of those steps.  Walks derived this way are exact
 * only while ft__walk_irregular() is 0: then a tile's cost depends only on
 * the clipped sizes of its rows and columns and of prev's and on whether
 * prev shares its row or column (every tensor axis takes its ranges from
 * one source: tile rows, tile columns, the k slice or a whole reduction). */
double ft__walk_tile(ft_walk *w, int64_t prev, int64_t tile, int64_t *ws_max, int allow_ff);
int ft__walk_irregular(const ft_walk *w);

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
 * column range (interior mixing of boundary tensors only). */
void ft__walk_mixed(ft_walk *w, int *rows, int *cols, int *interior);

#endif
