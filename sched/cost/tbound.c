/* tbound.c - what every schedule pays on a target beyond SPEC 5's compute and compulsory traffic (the per-unit waves of each op's work, the per-step and per-tile overheads of the fewest steps and tiles, the shared cache's floor on compulsory tensors that do not fit it), for the lower bound (bound.c) and the per-subgraph bound of the gap report (gap.c).
 *
 * Each term is a sum of what ft_evaluate charges (walk.c, rates.c,
 * shared_rules.h), taken at its least over every schedule:
 *
 * - Waves of one op.  A tile's latency is at least the sum of its k-steps'
 *   compute (every step takes at least its compute, ft_step_time), which
 *   includes step_overhead on every k-step and tile_overhead (plus
 *   matmul_tile_overhead in a subgraph with a MatMul) on the last.  A
 *   subgraph's time is the sum over its waves of u tiles of the slowest.
 *   Take an op o whose output pays whole native tiles along both
 *   dimensions in every schedule (o padded, neither reduction flag: SPEC 5)
 *   and let b be its compute over one native tile at its full depth (in
 *   every tile where o is active it covers its region's full depth: a
 *   k-loop over its k-steps, an upstream op at once).  Each tile i where o
 *   is active pays b s_i with s_i >= 1 an integer and sum s_i >= T, the
 *   native tiles of o's output.  Per wave the slowest pays at least
 *   ceil(sum / u), so the subgraph's waves add to at least
 *   b ceil(T / u) + x, x the overheads of one tile; the ops fused with o
 *   only add.  So every schedule takes at least max over o of that, besides
 *   its launch overheads.  An op with a dimension paid proportionally in
 *   some schedule (a reduction flag, or exact elements) counts the larger
 *   of its even share of the units and its least tile: along each
 *   dimension one native tile where spatial, the whole length (at most one
 *   native tile) where a reduction, since a tile's k-steps cover it, and
 *   one element where the op pays exact elements.
 * - The first tiles.  Every op of a subgraph is active in its tile at
 *   the grid's origin (every output starts there; an upstream op computes
 *   what its consumers there need, never nothing), and pays there at least
 *   its least tile (above) at its full depth.  That tile's latency is in
 *   its wave's, so every subgraph takes at least the sum over its ops of
 *   their least tiles plus one tile's overheads, and every schedule the
 *   sum over all ops (recomputed ones count again).  With one unit this is
 *   never above the compute; with many (a GPU's SMs at batch 1) it is the
 *   chain of layers no wave can run side by side.
 * - Overheads.  Every schedule has a step, a tile, and a tile with a
 *   MatMul when p has one: their compute overheads add to the compute that
 *   the units share.
 * - Shared cache floor.  A subgraph whose slow-memory footprint exceeds
 *   cache_capacity takes at least the share of that footprint beyond
 *   the cache's resident part at p's own bandwidths (walk.c's floor,
 *   ft__cache_miss_share).  A graph input or output larger than the cache
 *   is in the footprint of the subgraph that reads or writes it, and that
 *   footprint's uncached part is at least the tensor's (F - R >= n - R),
 *   so the floors add to at least the sum of those tensors' uncached
 *   times, whatever the grouping.
 *   Not with double buffering: there a subgraph of one step takes
 *   ft__sg_single, which no floor raises (eval.c), and nothing proves that
 *   a subgraph has two steps (test_bound.c: one below it).
 */
#include "cost/cost.h"

#include <math.h>

double ft__tile_overheads(const ft_problem *p, int matmul)
{
    const ft_timing *tm = &p->timing;
    return tm->step_overhead + tm->tile_overhead + (matmul ? tm->matmul_tile_overhead : 0);
}

double ft__op_waves(const ft_problem *p, ft_compute_model model, const unsigned char *rw, const unsigned char *rh,
                    const int *ops, int nops)
{
    double best = 0, first = 0;
    int64_t u = ft__units(p);
    int mm = 0;
    for (int j = 0; j < nops; j++) {
        const ft_op *op = &p->ops[ops ? ops[j] : j];
        const ft_tensor *O = &p->tensors[op->output];
        double x = ft__tile_overheads(p, op->type == FT_OP_MATMUL), w, least;
        int padded = ft__op_padded(p, op), fw = rw ? rw[op->output] : 1, fh = rh ? rh[op->output] : 1;
        mm |= op->type == FT_OP_MATMUL;
        if (padded && !fw && !fh) {
            double tiles = (double)ft__ceil_div(O->height, p->native_h) * (double)ft__ceil_div(O->width, p->native_w);
            w = ft__op_compute(p, model, op, ceil(tiles / (double)u), 1, (double)op->k) + x;
            least = ft__op_compute(p, model, op, 1, 1, (double)op->k);
        } else {
            /* a dimension paid proportionally somewhere: no whole units
             * to count; the busiest unit takes at least the even share,
             * and one tile at least its least region along each
             * dimension: a whole native tile where spatial, the whole
             * length where a reduction (its k-steps cover it), one
             * element where the op pays exact elements */
            double sh = ft__dim_units(O->height, p->native_h, padded && !fh ? FT_DIM_SPATIAL : FT_DIM_REDUCTION);
            double sw = ft__dim_units(O->width, p->native_w, padded && !fw ? FT_DIM_SPATIAL : FT_DIM_REDUCTION);
            double th = !padded ? 1.0 / (double)p->native_h : sh < 1 ? sh : 1;
            double tw = !padded ? 1.0 / (double)p->native_w : sw < 1 ? sw : 1;
            double share = sh * sw / (double)u;
            least = ft__op_compute(p, model, op, th * tw, 1, (double)op->k);
            w = ft__op_compute(p, model, op, share, 1, (double)op->k);
            w = (w > least ? w : least) + x;
        }
        if (w > best)
            best = w;
        first += least;
    }
    /* the first tile of each subgraph holds every op of it: all of them
     * add up there, whatever the grouping */
    if (nops > 0)
        first += ft__tile_overheads(p, mm);
    return first > best ? first : best;
}

double ft__cache_floor(const ft_problem *p)
{
    const ft_timing *tm = &p->timing;
    /* with double buffering a subgraph of one step pays no floor
     * (ft__sg_single, eval.c), and any subgraph may have one step */
    if (tm->cache_capacity <= 0 || tm->overlap == FT_OVERLAP_PIPELINE)
        return 0;
    ft__rates r;
    ft__rates_init(p, &r);
    double f = 0;
    for (int t = 0; t < p->ntensors; t++) {
        /* a subgraph's footprint holds the tensor, so its share of the
         * tensor beyond the resident part is at least this one's */
        double n = (double)ft_tensor_size(p, t), miss = ft__cache_miss_share(p, n);
        if (miss <= 0)
            continue;
        if (p->tensors[t].producer < 0 && p->tensors[t].nconsumers > 0)
            f += miss * n / r.rb;
        else if (p->tensors[t].producer >= 0 && p->tensors[t].nconsumers == 0)
            f += miss * n / r.wb;
    }
    return f;
}
