/* score.h - the scorer (score.c): a subgraph's latency at one configuration in an explicit context, equal to ft_evaluate's walk, in closed form or through a memo of like tiles; the search, super tiling, kernel timing and ft_evaluate's closed form use it; not installed. */
#ifndef FT_SCORE_H
#define FT_SCORE_H

#include "cost/walk.h"

#include <math.h>

/* Named limits of the scorer.  Neither makes a score wrong when it is
 * reached: the first sends a score to the step-by-step walk, the second
 * makes a configuration too large to walk that way infeasible. */
enum {
    FT_SCORE_TILE_MEMO = 1024 /* tile memo slots (a power of two); fuller: walk every step */
};
/* Largest period of like tiles along an axis a Layout scales (mixinfo);
 * a longer one keys tiles by their absolute index along it. */
#define FT_SCORE_PERIOD_MAX 64

/* Largest number of steps a subgraph's score may walk one by one (when the
 * tile memo cannot be used); a configuration past it is scored only
 * through the memo. */
#define FT_SCORE_STEP_CAP ((int64_t)1 << 26)

/* The latency of what does not fit or is not scored. */
#define INF HUGE_VAL

/* Tile traversal kinds of a configuration (ft__make_order). */
enum { ORD_RASTER = 0, ORD_SNAKE_ROW, ORD_COL, ORD_SNAKE_COL, ORD_COUNT };

/* A subgraph configuration: granularity and traversal order kind. */
typedef struct cfg {
    int64_t w, h, k;
    int order;
} cfg;

/* The context a subgraph is scored in (SPEC section 3), ntensors flags
 * each: which of its outputs are written to slow memory, which it retains,
 * and which tensors are resident (retained by the subgraph before it). */
typedef struct sctx {
    unsigned char *written, *retained, *resident;
} sctx;

/* Which axes of a subgraph mix range sources (ft__walk_mixed), found once
 * per subgraph and context before its configurations are scored. */
typedef struct mixinfo {
    int rows, cols, interior;
    /* The closed form's classes along a mixed axis (0 rows, 1 columns):
     * period[ax] 0 when a tensor's ranges along it come from two sources
     * (a tile's cost then depends on its absolute index); else the product
     * D of n / gcd(n, m) over the Layout ops that scale it from n to m
     * elements, so that tiles P = D / gcd(D, tile size) apart along it cost
     * the same away from the edges (every range shifts by whole elements). */
    int64_t period[2];
    /* The same along the k slices (0: none known): the least common
     * multiple D of the scales' denominators from the k slice to every
     * tensor axis it sets (score.c, ks_period), so that k-steps
     * D / gcd(D, k) apart cost alike away from the first, last and
     * finishing k-steps (ft__walk_tile's mode 4); kper_last the same
     * while only the deepest k-loop MatMuls run (the others finished). */
    int64_t kper, kper_last;
    /* period[] as the interior k-steps alone see it (no epilogue op: a
     * k-step neither first nor last), 0 where a tensor's ranges come from
     * two sources there too or two scales meet: the interior memo's
     * classes (score.c, ikey). */
    int64_t iperiod[2];
} mixinfo;

typedef struct tmemo tmemo;
typedef struct imemo imemo;

/* A scorer: the problem and compute model it scores under, its tile memo,
 * and what its scores saw.  One per thread; the caller owns it. */
typedef struct ft__scorer {
    const ft_problem *p;
    ft_compute_model model;
    tmemo *tm;          /* FT_SCORE_TILE_MEMO slots ... */
    uint64_t tmgen;     /* ... valid where their generation is this one, */
    uint64_t tmsig;     /* ... the signature of what their costs depend on
                           (score.c, ft__memo_gen) */
    int tmused;         /* entries of this generation */
    imemo *im;          /* FT_SCORE_TILE_MEMO slots: interior k-steps of a
                           kind of tile (score.c, imemo), of generation ... */
    uint64_t imgen;     /* ... this one (the tile memo's), */
    int imused;         /* ... imused of them */
    int64_t ihits;      /* kinds of tile costed from the interior memo (their
                           first and last k-steps only) */
    int tmkinds;        /* a walk of this generation saw kinds_differ */
    uint64_t tmcall;    /* the closed form's calls (a stamp per call) */
    int kinds_differ;   /* a walk scored since the caller cleared this saw
                           two needs of one upstream output with different
                           dimension kinds (walk.h): only then can another
                           op order change a subgraph's cost */
    int64_t evals;      /* configurations scored (the caller may reset it) */
    int walk_all;       /* 1: every step walked, the tile memo unused
                           (tests compare the two paths) */
    int no_closed;      /* 1: the closed form unused, every tile added
                           through the memo (tests compare the two) */
    int no_kper;        /* 1: no period of k-steps (mixinfo.kper 0; tests
                           compare the two) */
    int64_t kskipped;   /* k-steps its walks added from a period of k-steps
                           without deriving them (ft__walk_tile's mode 4) */
    int64_t closed, fallbacks; /* configurations scored in closed form, and
                           by the per-tile memo or the step walk instead
                           (the caller may reset them) */
    /* Nonzero: score nothing new (a deadline passed); asked before each
     * score and every few hundred tiles.  NULL: never stop. */
    int (*stop)(struct ft__scorer *sc);
    /* What ft__sg_objective values a configuration by (cost.h); latency
     * after ft__scorer_init. */
    ft__objective ob;
    /* p has a power limit (ft__power_limited): each score also counts the
     * elements its steps load and write (the tiles' figures) into loaded
     * and written, for the power rule (ft__power_latency); pflags: two
     * flags per tensor for its footprint */
    int power;
    int64_t loaded, written;
    unsigned char *pflags;
} ft__scorer;

/* Set up *sc for p under model: a fresh tile memo, no stop hook (the caller
 * may set sc->stop).  0, or -1 on OOM with *sc owning nothing.  Release
 * with ft__scorer_free. */
int ft__scorer_init(ft__scorer *sc, const ft_problem *p, ft_compute_model model);

/* Release what sc owns (its tile memo) and clear it; sc may be zeroed. */
void ft__scorer_free(ft__scorer *sc);

/* Context scratch of ntensors flags each, all 0: 0, or -1 on OOM.  Release
 * with ft__sctx_free. */
int ft__sctx_alloc(sctx *x, int ntensors);

/* Release x's flags and clear it (x may be zeroed). */
void ft__sctx_free(sctx *x);

/* Tile visiting order of kind `kind` (ORD_*) over an ntx x nty grid into
 * out (ntx * nty positions, each a tile index row * ntx + column). */
void ft__make_order(int kind, int64_t ntx, int64_t nty, int64_t *out);

/* The tile (row * ntx + column) at traversal position pos (0 <= pos <
 * ntx * nty) of order kind `kind` (ORD_*): ft__make_order's out[pos]. */
int64_t ft__order_tile(int kind, int64_t ntx, int64_t nty, int64_t pos);

/* Fill *mx for subgraph g (ops set; its granularity and order are
 * overwritten) in context x: which axes mix range sources, probed at the
 * native tile and k = 1 (when no walker can be made: rows and cols 0,
 * interior 2). */
void ft__probe_mixed(ft__scorer *sc, const sctx *x, ft_subgraph *g, mixinfo *mx);

/* Tile-memoised latency of the steps of walk w of g in order ord (NULL:
 * the order of kind `order`, ORD_*), each tile's k-steps summed once per distinct case and added to
 * *acc (initialised by the caller; may be NULL) as ft_evaluate adds them;
 * the sum so far.  -1 when the walk turns out irregular or the memo
 * overflows (the caller then walks every step), INF on a capacity
 * overflow or when sc->stop says so, any value > budget once the running
 * sum passes budget.  The subgraph's floor and extra are not included. */
double ft__score_tiles(ft__scorer *sc, const mixinfo *mx, ft_walk *w, const ft_subgraph *g, const int64_t *ord, int order,
                       double budget, ft__sg_acc *acc);

/* The closed form of ft__score_tiles: the latency of the steps of walk w
 * of g in traversal order kind `order` (ORD_*), costed per kind of tile
 * rather than per tile.  With one unit, a raster or snake traversal visits
 * few kinds of tile: per run of like rows and like columns (classes of
 * dim_class: interior, edges a tensor's length cuts, corners), the first
 * tile of a line after the last of the line before, the first tile of a
 * run after the run before it, and the rest after a like neighbour; each
 * kind is walked once (its k-steps fast-forwarded as ft__walk_tile does)
 * and added to *acc (initialised here; may be NULL) times its count
 * (ft__sg_acc_tiles), so the time grows with the kinds, not the tiles.
 * Returns the steps' total (floor and extra not included), INF when a
 * tile overflows the capacity, or -1 where the closed form does not apply
 * and the caller must fall back to ft__score_tiles: several units (waves
 * take each wave's slowest tile), the walk turned out irregular, a memo
 * overflow or out of memory, and both axes mixed (mx: ft__probe_mixed's;
 * on a mixed axis a tile's cost depends on its absolute row or column, so
 * each index along it is a kind of its own: the time grows with that
 * axis's length, and past half the memo it falls back too).  With one
 * unit, once the kinds counted so far pass budget the rest are not
 * costed: the sum of those counted (a value > budget) is returned, as
 * ft__score_tiles returns one (pass INF for the whole total). */
double ft__score_closed(ft__scorer *sc, const mixinfo *mx, ft_walk *w, const ft_subgraph *g, int order, double budget,
                        ft__sg_acc *acc);

/* ft_evaluate's figures of subgraph sg of valid schedule s (ft_sg_result:
 * latency, grid and steps, compute- and memory-bound steps, peak working
 * set, elements loaded and written, compute and memory time) in closed
 * form, with sc's tile memo and compute model: each kind of tile walked
 * once with its figures (ft__walk_tile) and counted.  1 with *r filled;
 * 0 where the closed form does not apply (ft__score_closed's cases, a
 * traversal order that is none of the scorer's kinds, a tile over the
 * capacity: the walk reports which step) or memory ran out: the caller
 * walks every step.  Integer figures equal the walk's; sums agree to the
 * last bit but for their rounding (ksum_add_n). */
int ft__eval_closed(ft__scorer *sc, const ft_schedule *s, int sg, ft_sg_result *r);

/* Exact latency of subgraph g (ops set) at configuration c in context x,
 * as ft_evaluate gives it (every target term included); INF when a step
 * overflows the capacity, on OOM, or when sc->stop says so; any value >
 * budget once the running sum passes budget.  mx: ft__probe_mixed's for g
 * and x.  g's granularity is left at c's, its order cleared.  Counts one
 * evaluation (sc->evals) and records sc->kinds_differ. */
double ft__score(ft__scorer *sc, const sctx *x, const mixinfo *mx, ft_subgraph *g, const cfg *c, double budget);

/* The counts of subgraph g (ops set) in context x that do not depend on
 * its configuration (ft__energy_counts: macs, pointwise, fp_read,
 * fp_write) into *c, loaded, written and latency 0.  0, or -1 on OOM. */
int ft__ctx_counts(const ft_problem *p, const sctx *x, const ft_subgraph *g, ft__energy_counts *c);

/* Elements subgraph g moves from (*loaded) and to (*written) slow memory
 * at configuration c in context x, as ft_evaluate counts them
 * (ft_sg_result): each kind of tile walked once through the tile memo,
 * else every step walked.  0, or -1 on OOM, past the step cap or when
 * sc->stop says so. */
int ft__score_traffic(ft__scorer *sc, const sctx *x, const mixinfo *mx, ft_subgraph *g, const cfg *c, int64_t *loaded,
                      int64_t *written);

/* The value of subgraph g (ops set) at configuration c in context x under
 * sc->ob (ft__objective_of, cost.h): ft__score's latency itself, the same
 * call, when the objective is latency; else the objective of its exact
 * latency, traffic (ft__score_traffic) and base counts (*base,
 * ft__ctx_counts').  INF as ft__score; any value > budget once it passes
 * budget (the latency is scored with the budget the objective leaves it). */
double ft__sg_objective(ft__scorer *sc, const sctx *x, const mixinfo *mx, ft_subgraph *g, const cfg *c, const ft__energy_counts *base,
                        double budget);

/* A lower bound of ft__sg_objective's value from a lower bound of the
 * latency (lat_lb) and of the elements loaded and written (reads_lb,
 * writes_lb) at a configuration, and the base counts: lat_lb itself for
 * latency, else ft__objective_of at those counts (a lower bound: it
 * grows with each of them). */
double ft__sg_objective_bound(const ft__scorer *sc, const ft__energy_counts *base, double lat_lb, double reads_lb, double writes_lb);

/* ------------------------------------------------------------ shared by score.c and closed.c */

/* A tile memo entry: the cost of a tile given the classes of its row and
 * column and of the tile before it. */
struct tmemo {
    int64_t key[7];
    double lat;
    int64_t ws;
    ft__tile_figs figs; /* with figures (ft__eval_closed) */
    int64_t n;     /* the closed form: tiles of this kind in call `call` */
    uint64_t call;
    uint64_t gen;  /* valid when equal to the scorer's generation */
};

/* The heights (hs) and widths (ws) of every tensor reference of g's ops,
 * outputs and inputs (1 + inputs per op of them, the count returned). */
int ft__sg_lengths(const ft_problem *p, const ft_subgraph *g, int64_t *hs, int64_t *ws);

/* Class of tile row (or column) i of size t among tensor lengths lens[n]:
 * the number of lengths covering it, or a class of its own when some
 * length cuts it. */
int64_t ft__dim_class(int64_t i, int64_t t, const int64_t *lens, int n);

/* The greatest common divisor of a and b (both >= 0; gcd(a, 0) = a). */
static inline int64_t ft__gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* ft__walk_tile's fast-forward mode for walk w of g under mx (it may set
 * w->kper, w->kper_last). */
int ft__ff_mode(const mixinfo *mx, ft_walk *w, const ft_subgraph *g);

/* The tile memo's generation for scoring g through w under mx (figs: with
 * figures): the current one when nothing a tile's cost depends on changed,
 * else a new one. */
uint64_t ft__memo_gen(ft__scorer *sc, const ft_walk *w, const mixinfo *mx, const ft_subgraph *g, int figs);

/* The memo entry of tile `tile` after `prev` (-1: none) at traversal
 * position pos, keyed by key: found, or costed once through w and added;
 * NULL when the memo is half full.  isc, ikey: the interior memo (ikey
 * NULL: none). */
tmemo *ft__tile_entry(tmemo *tm, uint64_t gen, const int64_t key[7], ft_walk *w, int64_t pos, int64_t prev, int64_t tile, int ff,
                      int figs, int *nused, ft__scorer *isc, const int64_t *ikey);

#endif
