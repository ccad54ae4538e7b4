/* gap.c - where a schedule's gap to the lower bound lies (ft_gap_report): the bound of its own grouping, each subgraph bounded alone with the target's terms (bound.c, tbound.c), against the total and the whole problem's bound; and its evidence (ft_gap_alone): each subgraph's best configuration alone, costed by the scorer (score.c). */
#include "cost/cost.h"
#include "cost/score.h"

#include <assert.h>
#include <math.h>
#include <string.h>

/* The bound of subgraph i of s alone: its ops' compute (SPEC 5's flags of
 * p, which only lower it), one tile's overheads, the busiest op's waves,
 * the traffic its grouping forces (each input neither produced in it nor
 * resident, and each written output, once), the shared cache's floor on
 * that footprint when it does not fit (walk.c's floor exactly), and its
 * launch.  Scratch: 4 x ntensors bytes in tb. */
static double sg_bound(const ft_problem *p, const ft_schedule *s, int i, ft_compute_model model, const unsigned char *rw,
                       const unsigned char *rh, unsigned char *tb)
{
    const ft_subgraph *g = &s->sg[i];
    int nt = p->ntensors;
    unsigned char *produced = tb, *written = tb + nt, *retained = tb + 2 * nt, *resident = tb + 3 * nt;
    ft__sg_tensors(p, s, i, produced, written, retained, resident);
    double c = 0;
    int mm = 0;
    for (int j = 0; j < g->nops; j++) {
        const ft_op *op = &p->ops[g->ops[j]];
        c += ft__op_least_compute(p, model, op, rw, rh);
        mm |= op->type == FT_OP_MATMUL;
    }
    c = (c + ft__tile_overheads(p, mm)) / (double)ft__units(p);
    double waves = ft__op_waves(p, model, rw, rh, g->ops, g->nops);
    /* retained doubles as "seen": each tensor counted once */
    memset(retained, 0, (size_t)nt);
    int64_t reads, writes;
    ft__sg_footprint(p, g->ops, g->nops, produced, written, resident, retained, &reads, &writes);
    ft__rates r;
    double m, floor_ = 0;
    ft__fastest_rates(p, &r);
    ft__step_time_at(p, &r, 0, reads, writes, &m);
    /* (not with double buffering: a configuration of one step pays none,
     * ft__cache_floor) */
    double miss = p->timing.overlap != FT_OVERLAP_PIPELINE ? ft__cache_miss_share(p, (double)(reads + writes)) : 0;
    if (miss > 0) {
        ft__rates own;
        ft__rates_init(p, &own);
        floor_ = miss * ((double)reads / own.rb + (double)writes / own.wb);
    }
    return ft__bound_target(p, c, m, waves, floor_);
}

/* ft_gap_report with the problem's bounds lb (ft_lower_bound) and cb
 * (ft_lower_bound_capacity) given. */
static int gap_report(const ft_problem *p, const ft_schedule *s, ft_compute_model model, double total, double lb, double cb,
                      ft_gap *out, ft_status *st)
{
    memset(out, 0, sizeof *out);
    int nt = p->ntensors;
    unsigned char *buf = ft__malloc(6 * (size_t)nt + 1);
    if (!buf)
        return ft__fail(st, FT_ENOMEM, 0, "out of memory");
    unsigned char *rw = buf, *rh = buf + nt;
    ft__reduction_flags(p, rw, rh);
    ksum g = {0, 0};
    for (int i = 0; i < s->nsubgraphs; i++)
        ksum_add(&g, sg_bound(p, s, i, model, rw, rh, buf + 2 * nt));
    ft__free(buf);
    out->total = total;
    out->bound = cb > lb ? cb : lb;
    out->grouping_bound = ksum_value(&g);
    out->nsubgraphs = s->nsubgraphs;
    double G = out->grouping_bound > out->bound ? out->grouping_bound : out->bound;
    out->ratio = out->bound > 0 ? total / out->bound : 0;
    out->within = G > 0 ? total / G : 0;
    out->between = out->bound > 0 ? G / out->bound : 0;
    out->in_bound = out->within >= out->between;
    /* no evidence yet: all of `within` is the bound's part */
    out->best_alone = total;
    out->search_part = 1;
    out->bound_part = out->within;
    out->gap_in = out->in_bound ? FT_GAP_IN_BOUND : FT_GAP_IN_GROUPING;
    return FT_OK;
}

/* Contract: fusetile.h. */
int ft_gap_report(const ft_problem *p, const ft_schedule *s, ft_compute_model model, double total, ft_gap *out,
                  ft_status *st)
{
    return gap_report(p, s, model, total, ft_lower_bound(p, model, NULL, NULL), ft_lower_bound_capacity(p, model, NULL, NULL),
                      out, st);
}

/* Contract: fusetile.h. */
int ft_gap_evidence(const ft_problem *p, const ft_schedule *s, const ft_eval *e, double seconds, ft_gap *g, ft_status *st)
{
    int rc = gap_report(p, s, e->model, e->total, e->lower_bound, e->capacity_bound, g, st);
    if (rc == FT_OK)
        ft_gap_alone(p, s, e, seconds, g, st); /* out of memory: no evidence, the report stands */
    return rc;
}

/* Most values of one granularity axis in the evidence's set: the native
 * size, the extent, the schedule's own and the powers of two up to 2^62. */
#define ALONE_AXIS_MAX 66

/* The evidence's set along one axis into v (distinct, largest first):
 * own, native, extent and the powers of two from 1 up to extent, each
 * within the target's limit (native unless it allows larger ones). */
static int axis_set(const ft_problem *p, int64_t own, int64_t native, int64_t extent, int64_t *v)
{
    int64_t c[ALONE_AXIS_MAX];
    int n = 0;
    c[n++] = own;
    c[n++] = native;
    c[n++] = extent;
    for (int64_t q = 1; q <= extent && n < ALONE_AXIS_MAX; q *= 2) {
        c[n++] = q;
        if (q > INT64_MAX / 2)
            break;
    }
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (c[i] < 1 || (c[i] > native && !p->allow_larger))
            continue;
        int dup = 0;
        for (int j = 0; j < m && !dup; j++)
            dup = v[j] == c[i];
        if (dup)
            continue;
        /* insertion, largest first: large tiles are cheap to score and
         * usually good, a low best cuts the rest early */
        int j = m++;
        for (; j > 0 && v[j - 1] < c[i]; j--)
            v[j] = v[j - 1];
        v[j] = c[i];
    }
    return m;
}

/* A scorer with the evidence's deadline (its stop hook). */
typedef struct alone_scorer {
    ft__scorer sc; /* first: the hook gets its address */
    double deadline;
    int cut;
} alone_scorer;

static int alone_stop(ft__scorer *sc)
{
    alone_scorer *a = (alone_scorer *)sc;
    if (!a->cut && ft__now_s() > a->deadline)
        a->cut = 1;
    return a->cut;
}

/* The least latency of subgraph i of s alone over the evidence's set
 * (ft_gap_alone), starting from `own` (its latency in s); *done 1 when
 * the whole set was scored before the deadline; *at (when not NULL) the
 * configuration of the least found below own (unchanged when none). */
static double sg_alone(alone_scorer *a, const ft_schedule *s, int i, sctx *x, unsigned char *produced, double own,
                       int *done, cfg *at)
{
    const ft_problem *p = a->sc.p;
    const ft_subgraph *G = &s->sg[i];
    ft__sg_tensors(p, s, i, produced, x->written, x->retained, x->resident);
    ft_subgraph g = *G;
    g.order = NULL;
    g.norder = 0;
    /* the extents: the grid at granularity 1 */
    int64_t W, H, K;
    g.w = g.h = g.k = 1;
    if (ft__sg_grid(p, &g, NULL, &W, &H, &K))
        return own;
    int mm = 0;
    for (int j = 0; j < g.nops; j++)
        mm |= p->ops[g.ops[j]].type == FT_OP_MATMUL;
    int64_t ws[ALONE_AXIS_MAX], hs[ALONE_AXIS_MAX], ks[ALONE_AXIS_MAX];
    int nw = axis_set(p, G->w, p->native_w, W, ws), nh = axis_set(p, G->h, p->native_h, H, hs);
    int nk = mm ? axis_set(p, G->k, ft_native_k(p), K, ks) : 1;
    if (!mm)
        ks[0] = G->k;
    mixinfo mx;
    ft__probe_mixed(&a->sc, x, &g, &mx);
    double best = own;
    for (int b = 0; b < nw; b++)
        for (int c = 0; c < nh; c++)
            for (int d = 0; d < nk; d++) {
                /* a single row or column: every order is the raster one */
                int no = ft__ceil_div(W, ws[b]) > 1 && ft__ceil_div(H, hs[c]) > 1 ? ORD_COUNT : 1;
                /* a configuration whose waves of overheads alone reach
                 * the best is not scored (on a GPU, most small tiles) */
                int64_t nt = ft__ceil_div(W, ws[b]) * ft__ceil_div(H, hs[c]), nks = mm ? ft__ceil_div(K, ks[d]) : 1;
                double least = ft__waves_overheads(p, nt, nks, mm);
                if (least >= best)
                    continue;
                for (int o = 0; o < no; o++) {
                    if (alone_stop(&a->sc))
                        return best;
                    cfg cf = {ws[b], hs[c], ks[d], o};
                    double lat = ft__score(&a->sc, x, &mx, &g, &cf, best);
                    /* the waves of overheads bound every configuration's
                     * latency (a whole score, or one cut past best) */
                    assert(a->cut || lat >= least * (1 - 1e-12));
                    if (lat < best && !a->cut) {
                        best = lat;
                        if (at)
                            *at = cf;
                    }
                }
            }
    *done = !a->cut;
    return best;
}

/* The grouping's evidence (ft_gap_alone): every two neighbouring subgraphs
 * i and i + 1 of s where i + 1 reads what i makes, merged into one (i's ops
 * then i + 1's, retaining what i + 1 retains) and costed at the best
 * configuration of the same set, in its context, against best[i] +
 * best[i + 1] (the budget: a merge costing more is cut early).  A merge
 * that costs less is kept only when the schedule it makes is valid.  Fills
 * pairs_tried, pairs_done, merge_at, merge_gain and merge_sum (each
 * saving merge's saving, summed); 0, or -1 on OOM. */
static int pairs_alone(alone_scorer *a, const ft_schedule *s, const double *best, sctx *x, unsigned char *produced,
                       ft_gap *g)
{
    const ft_problem *p = a->sc.p;
    int n = s->nsubgraphs;
    g->merge_at = -1;
    if (n < 2)
        return 0;
    ft_subgraph *sg = ft__malloc(sizeof(ft_subgraph) * (size_t)(n - 1));
    unsigned char *made = ft__calloc((size_t)p->ntensors + 1, 1), *in_a = ft__calloc((size_t)p->nops + 1, 1);
    int *ops = ft__malloc(sizeof(int) * (size_t)(2 * p->nops + 1));
    if (!sg || !made || !in_a || !ops) {
        ft__free(sg);
        ft__free(made);
        ft__free(in_a);
        ft__free(ops);
        return -1;
    }
    ksum sum = {0, 0};
    for (int i = 0; i + 1 < n && !a->cut; i++) {
        const ft_subgraph *A = &s->sg[i], *B = &s->sg[i + 1];
        /* an edge from A to B, and no op in both (a recomputed op: a merge
         * would hold it twice) */
        int edge = 0, shared = 0;
        for (int j = 0; j < A->nops; j++)
            made[p->ops[A->ops[j]].output] = 1, in_a[A->ops[j]] = 1;
        for (int j = 0; j < B->nops; j++) {
            shared |= in_a[B->ops[j]];
            for (int q = 0; q < p->ops[B->ops[j]].ninputs && !edge; q++)
                edge = made[p->ops[B->ops[j]].inputs[q]];
        }
        for (int j = 0; j < A->nops; j++)
            made[p->ops[A->ops[j]].output] = 0, in_a[A->ops[j]] = 0;
        if (!edge || shared)
            continue;
        /* the schedule with the two merged: the others shared with s */
        for (int j = 0, o = 0; j < n; j++)
            if (j != i + 1)
                sg[o++] = s->sg[j];
        memcpy(ops, A->ops, sizeof(int) * (size_t)A->nops);
        memcpy(ops + A->nops, B->ops, sizeof(int) * (size_t)B->nops);
        ft_subgraph *M = &sg[i];
        *M = *B;
        M->ops = ops;
        M->nops = A->nops + B->nops;
        M->order = NULL;
        M->norder = 0;
        M->label = NULL;
        ft_schedule t = {NULL, n - 1, sg, -1, -1, -1, -1};
        double pair = best[i] + best[i + 1];
        int done = 0;
        cfg at = {M->w, M->h, M->k, 0};
        double merged = sg_alone(a, &t, i, x, produced, pair, &done, &at);
        g->pairs_tried++;
        g->pairs_done += done;
        if (merged < pair * (1 - 1e-12)) {
            /* at the configuration found (its granularity; the traversal
             * order does not change what is valid): a valid schedule? */
            M->w = at.w, M->h = at.h, M->k = at.k;
            ft_status vs;
            if (ft_schedule_validate(p, &t, &vs) == FT_OK) {
                ksum_add(&sum, pair - merged);
                if (pair - merged > g->merge_gain) {
                    g->merge_gain = pair - merged;
                    g->merge_at = i;
                }
            }
        }
    }
    g->merge_sum = ksum_value(&sum);
    ft__free(sg);
    ft__free(made);
    ft__free(in_a);
    ft__free(ops);
    return 0;
}

/* Contract: fusetile.h. */
int ft_gap_alone(const ft_problem *p, const ft_schedule *s, const ft_eval *e, double seconds, ft_gap *g, ft_status *st)
{
    double t0 = ft__now_s();
    alone_scorer a;
    sctx x;
    int n = s->nsubgraphs < e->nsubgraphs ? s->nsubgraphs : e->nsubgraphs;
    unsigned char *produced = ft__calloc((size_t)p->ntensors + 1, 1);
    double *best = ft__malloc(sizeof(double) * (size_t)(n + 1));
    if (!produced || !best || ft__sctx_alloc(&x, p->ntensors) != 0) {
        ft__free(produced);
        ft__free(best);
        return ft__fail(st, FT_ENOMEM, 0, "out of memory");
    }
    if (ft__scorer_init(&a.sc, p, e->model) != 0) {
        ft__free(produced);
        ft__free(best);
        ft__sctx_free(&x);
        return ft__fail(st, FT_ENOMEM, 0, "out of memory");
    }
    a.sc.stop = alone_stop;
    a.deadline = isfinite(seconds) && seconds < 1e9 ? t0 + (seconds > 0 ? seconds : 0) : HUGE_VAL;
    a.cut = !(seconds > 0);
    ksum b = {0, 0};
    int done = 0;
    for (int i = 0; i < n; i++) {
        int d = 0;
        double own = e->sg[i].latency;
        best[i] = a.cut ? own : sg_alone(&a, s, i, &x, produced, own, &d, NULL);
        ksum_add(&b, best[i]);
        done += d;
    }
    g->alone_tried = a.sc.evals;
    /* then the grouping's, in what is left of the time, once every
     * subgraph's own is whole (without memory for it: none) */
    g->pairs_tried = g->pairs_done = 0;
    g->merge_gain = g->merge_sum = 0;
    g->merge_at = -1;
    g->grouping_in_bound = 0;
    if (done == s->nsubgraphs && pairs_alone(&a, s, best, &x, produced, g) != 0)
        g->pairs_tried = g->pairs_done = 0, g->merge_at = -1;
    g->pairs_configs = a.sc.evals - g->alone_tried;
    ft__free(best);
    ft__scorer_free(&a.sc);
    ft__sctx_free(&x);
    ft__free(produced);
    g->alone_done = done;
    g->best_alone = ksum_value(&b);
    /* never above the total (each subgraph's own latency is in the set;
     * the sum may differ in its last bit) */
    if (g->best_alone > g->total)
        g->best_alone = g->total;
    double G = g->grouping_bound > g->bound ? g->grouping_bound : g->bound;
    g->search_part = g->best_alone > 0 ? g->total / g->best_alone : 1;
    g->bound_part = G > 0 ? g->best_alone / G : 0;
    /* ties go to the bound, then the grouping: the search's part is named
     * only when a better configuration was found and it is the largest */
    g->gap_in = g->search_part > g->bound_part && g->search_part > g->between ? FT_GAP_IN_SEARCH
                : g->bound_part >= g->between                                 ? FT_GAP_IN_BOUND
                                                                              : FT_GAP_IN_GROUPING;
    g->in_bound = g->gap_in == FT_GAP_IN_BOUND;
    /* the grouping's part, largest, in the bound: every neighbouring pair
     * was costed whole, and what their merges save, pair by pair and
     * summed, is under half of what the grouping pays (the total less
     * total / between) */
    double pays = g->between > 0 ? g->total - g->total / g->between : 0;
    g->grouping_in_bound = g->gap_in == FT_GAP_IN_GROUPING && !a.cut && done == s->nsubgraphs && g->pairs_tried > 0 &&
                           g->pairs_done == g->pairs_tried && g->merge_sum < FT_GAP_GROUPING_SHARE * pays;
    g->alone_seconds = ft__now_s() - t0;
    return FT_OK;
}

/* Contract: fusetile.h. */
const char *ft_gap_in_name(int gap_in)
{
    return gap_in == FT_GAP_IN_SEARCH ? "search" : gap_in == FT_GAP_IN_BOUND ? "bound" : gap_in == FT_GAP_IN_GROUPING ? "grouping" : "?";
}
