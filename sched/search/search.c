/* search.c - ft_search: the pass table and its driver, the clock and progress, the improvement threads, and the offer of better plans. */
#define _POSIX_C_SOURCE 200809L
#include "search/search.h"

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * The scheduler works on a partition of the ops into groups (gid[op] = the
 * op's group) and on plans (search/search.h: the groups in execution order with
 * their granularity, traversal, retained tensors and latency).  ft_search
 * runs the passes of this table in order, each when it applies:
 *
 *   pass        applies                     does                                   file
 *   strategy    o->strategy is a grouping   that strategy alone: its groups at     strategy_pass.c and the
 *               strategy (then no other     their best tilings with optimal        strategy's files
 *               pass runs)                  retention (docs/STRATEGIES.md)         (strategy.h)
 *   first       search                      the cheap start: one op per group,     plan.c, tiling.c
 *                                           each at the best of a few
 *                                           granularities (raster), costed once:
 *                                           a valid schedule first, never cut by
 *                                           the deadline (FT_FIRST_VALID_SHARE)
 *   one-op      search                      one op per group, each at its best     plan.c, tiling.c
 *                                           tiling (cut by the deadline)
 *   starts      search, o->start_from,      each strategy's groups offered; the    strategy_pass.c
 *               nops > 7                    best is where the later passes start
 *                                           when greedy's is not better
 *   greedy      search                      pairwise fusion by largest gain        partition.c
 *   merge       nops > 7                    each group with the next in the plan   partition.c
 *                                           that reads it, while merging pays
 *   exhaustive  nops <= 7                   every ordered partition, each with     exhaustive.c, retain.c
 *                                           its optimal retention
 *   exhaustive- nops <= 7                   the same with finer tile sizes: every  exhaustive.c, tiling.c
 *   fine                                    size when native <= 32, else every
 *                                           size that sets a tile count (after
 *                                           the coarse pass, so a short limit
 *                                           keeps the coarse result)
 *   local       nops > 7                    hill climbing on the partition, then   partition.c, retain.c,
 *                                           retention and recomputation            recompute.c
 *   restarts    nops > 7, best above the    until the deadline, in every thread:   partition.c, exhaustive.c,
 *               bound                       perturb the thread's best partition,   retain.c, recompute.c
 *                                           hill-climb it or re-partition a window
 *                                           of it exactly, retention and
 *                                           recomputation (iterated local search)
 *
 * Each group is costed by group.c (memo by ops and context), which picks a
 * granularity and traversal (tiling.c) scored exactly by the search's
 * scorer (S->sc, cost/score.h: ft_evaluate's figure, its steps added
 * through the same accumulator; tests/unit/test_search_score.c checks the
 * two agree, plan by plan).  The context a group is costed in (sctx:
 * written, retained, resident) is an argument of every pass, never state
 * shared between them.  Better plans go through ft__offer.
 *
 * Deadlines: passes stop at S->deadline, a little before the time limit
 * (reserve()); the first pass is never cut, so a valid schedule exists
 * whatever the limit, and it is cheap: each op is scored at a few
 * granularities in raster order (FT_SEARCH_QUICK_TRIES), not at every
 * candidate in four orders, so it comes within a small share of the limit
 * (FT_FIRST_VALID_SHARE, which `fusetile schedule` checks and reports).
 * A plan's figures come from ft_evaluate when its work (eval_work: the
 * steps it walks, the kinds of tile where it takes the closed form) fits
 * in the time left (the first plan's: in the first-valid share), else
 * from the scorer (equal, and ft_schedule_validate still checks the
 * rules), so a huge problem never overruns its limit.
 */

typedef struct pass {
    const char *name;
    int (*applies)(const search *S);
    void (*run)(search *S, sctx *x, int *gid);
} pass;

/* State shared by the threads of one search, under mu. */
struct shared {
    pthread_mutex_t mu;
    const ft_search_opts *o;
    double t0, limit, hard;   /* hard: t0 + limit */
    double best;              /* best total published */
    double last_progress;
    double figures_s;         /* the longest figures() of a published plan took */
    ft_schedule *pub;         /* the last schedule published, and its figures */
    ft_eval pub_ev;           /* (the final result when it is the best plan) */
    int64_t evals;
    int64_t closed, fallbacks; /* scores in closed form, and not (ft__scorer) */
    const char *pass;
    int threads;
    double bound;
    long improvements;
    ft__objective ob;         /* what the plans are valued by (cost.h) */
    ft_partition part;        /* a strategy run alone: its groups and labels */
    int strategy_rc;          /* a strategy's error (FT_OK: none) ... */
    ft_status strategy_st;    /* ... and its message */
    int oom;                  /* an allocation failed: every thread stops */
};

/* Label each subgraph of s by the group of the strategy run alone that
 * holds its first op (none when the search ran).  Returns 0, -1 on OOM. */
static int label_schedule(const shared *sh, ft_schedule *s)
{
    for (int i = 0; sh->part.label && i < s->nsubgraphs; i++) {
        const char *l = s->sg[i].nops ? sh->part.label[sh->part.gid[s->sg[i].ops[0]]] : NULL;
        if (l && !(s->sg[i].label = ft__strdup(l)))
            return -1;
    }
    return 0;
}

/* Seconds the passes leave for the final evaluation and the caller's write:
 * 5% of the limit, at least 20 ms and at most 1 s (on a loaded 2-core
 * machine the threads' last steps end up to 0.3 s past the deadline at a
 * 10-s limit, and writing a schedule of resnet18 took 0.1 s), or the
 * longest the figures of a published plan took when more (sh->figures_s:
 * a pass that publishes just before its deadline takes that much past it;
 * on 10 000 ops the first plan's took 0.25 to 0.5 s, and a 5-s search of
 * them ended 0.2 to 0.5 s past its limit before). */
static double reserve(const shared *sh)
{
    double r = 0.05 * sh->limit;
    r = r < 0.02 ? 0.02 : r > 1 ? 1 : r;
    return r > sh->figures_s ? r : sh->figures_s;
}

/* Steps ft_evaluate is assumed to walk per second when deciding whether a
 * walk fits in the time left (a quarter of what bench/bench_eval measures,
 * for slower machines). */
#define WALK_RATE 3e6

/* Report progress when due (thread 0 only; at least every 0.25 s). */
static void progress(search *S, double t)
{
    shared *sh = S->sh;
    if (!sh)
        return; /* a search state set up by hand (tests) */
    __atomic_fetch_add(&sh->evals, S->sc.evals, __ATOMIC_RELAXED);
    __atomic_fetch_add(&sh->closed, S->sc.closed, __ATOMIC_RELAXED);
    __atomic_fetch_add(&sh->fallbacks, S->sc.fallbacks, __ATOMIC_RELAXED);
    S->sc.evals = S->sc.closed = S->sc.fallbacks = 0;
    if (S->thread != 0 || !sh->o->on_progress || t - sh->last_progress < 0.25)
        return;
    pthread_mutex_lock(&sh->mu);
    sh->last_progress = t;
    ft_search_progress pr;
    pr.elapsed = t - sh->t0;
    pr.limit = sh->limit;
    pr.best = sh->best;
    pr.bound = sh->bound;
    pr.evals = __atomic_load_n(&sh->evals, __ATOMIC_RELAXED);
    pr.evals_per_s = pr.elapsed > 0 ? (double)pr.evals / pr.elapsed : 0;
    pr.closed = __atomic_load_n(&sh->closed, __ATOMIC_RELAXED);
    pr.fallbacks = __atomic_load_n(&sh->fallbacks, __ATOMIC_RELAXED);
    pr.pass = sh->pass;
    pr.threads = sh->threads;
    sh->o->on_progress(sh->o->ctx, &pr);
    pthread_mutex_unlock(&sh->mu);
}

/* Whether the caller asked the search to stop (ft_search_opts.stop). */
static int stop_asked(const ft_search_opts *o)
{
    return o && o->stop && *o->stop;
}

/* Whether the deadline has passed (or the caller asked to stop), whatever
 * S->first says. */
static int past_deadline(search *S)
{
    double t = ft__now_s();
    progress(S, t);
    return t > S->deadline || stop_asked(S->o);
}

int ft__out_of_time(search *S)
{
    /* out of memory: the search will fail with FT_ENOMEM, stop now */
    if (ft__alloc_failures() != S->failed0 || (S->sh && __atomic_load_n(&S->sh->oom, __ATOMIC_RELAXED))) {
        if (S->sh)
            __atomic_store_n(&S->sh->oom, 1, __ATOMIC_RELAXED);
        return S->timed_out = 1;
    }
    int past = past_deadline(S);
    if (S->first)
        return 0;
    if (past)
        S->timed_out = 1;
    return S->timed_out;
}

/* The scorer's stop hook: the deadline of the search that holds it. */
static int scorer_stop(ft__scorer *sc)
{
    return ft__out_of_time((search *)(void *)((char *)sc - offsetof(search, sc)));
}

int ft__search_scorer_init(search *S, ft_compute_model model)
{
    if (ft__scorer_init(&S->sc, S->p, model))
        return -1;
    S->sc.stop = scorer_stop;
    if (S->sh) /* (a state set up by hand, as the unit tests do: latency) */
        S->sc.ob = S->sh->ob;
    return 0;
}

uint64_t ft__rng(search *S)
{
    /* xorshift64* */
    uint64_t x = S->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    S->rng = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* Steps ft_evaluate walks for schedule s (saturating), about: every step
 * of a subgraph it walks; for one it takes in closed form (one unit, as
 * ft__eval_closed requires; the plans the search makes use the scorer's
 * traversal kinds), each kind of tile's k-steps, at most half the tile
 * memo's kinds (past that the closed form falls back to the walk). */
static int64_t eval_work(const ft_problem *p, const ft_schedule *s)
{
    int64_t n = 0;
    for (int i = 0; i < s->nsubgraphs; i++) {
        int64_t ntx, nty, nk, m;
        if (ft__sg_grid(p, &s->sg[i], NULL, &ntx, &nty, &nk) || __builtin_mul_overflow(ntx, nty, &m))
            return INT64_MAX;
        if (ft__units(p) == 1 && m > FT_SCORE_TILE_MEMO / 2)
            m = FT_SCORE_TILE_MEMO / 2;
        if (__builtin_mul_overflow(m, nk, &m) || __builtin_add_overflow(n, m, &n))
            return INT64_MAX;
    }
    return n;
}

/* When a walk of figures() must end: its deadline, or the caller's stop. */
typedef struct walk_until {
    double until;
    const ft_search_opts *o;
} walk_until;

static int stop_walk(void *ctx, int64_t done, int64_t total)
{
    (void)done, (void)total;
    const walk_until *w = ctx;
    return ft__now_s() > w->until || stop_asked(w->o);
}

/* Figures of schedule s (made from a plan whose latencies are in its
 * reported fields) into *ev: ft_evaluate's walk when it fits before `until`
 * (and o's stop is not asked) or when o's objective is not latency (its
 * joules need the walk's traffic: such a search may end past its limit by
 * its final evaluation), else the scorer's latencies after
 * ft_schedule_validate.  FT_OK, or the error of an invalid schedule. */
static int figures(const ft_problem *p, const ft_schedule *s, ft_compute_model model, double until,
                   const ft_search_opts *o, ft_eval *ev, ft_status *st)
{
    double left = until - ft__now_s();
    walk_until w = {until, o};
    if (o->objective != FT_OBJECTIVE_LATENCY) {
        return ft_evaluate(p, s, model, ev, st);
    } else if (!stop_asked(o) && (double)eval_work(p, s) < left * WALK_RATE) {
        int rc = ft_evaluate_progress(p, s, model, stop_walk, &w, ev, st);
        if (rc != FT_EINPUT)
            return rc; /* FT_OK, FT_EINVALID or FT_ENOMEM; FT_EINPUT: cut short */
    }
    memset(ev, 0, sizeof *ev);
    int rc = ft_schedule_validate(p, s, st);
    if (rc)
        return rc;
    ev->model = model;
    ev->scored = 1;
    ev->nsubgraphs = s->nsubgraphs;
    ev->sg = ft__calloc((size_t)s->nsubgraphs + 1, sizeof(ft_sg_result));
    if (!ev->sg)
        return ft__fail(st, FT_ENOMEM, 0, "out of memory");
    ksum k = {0, 0};
    for (int i = 0; i < s->nsubgraphs; i++) {
        ft_sg_result *r = &ev->sg[i];
        if (ft__sg_grid(p, &s->sg[i], NULL, &r->ntx, &r->nty, &r->nk)) {
            ft_eval_free(ev);
            return ft__fail(st, FT_ENOMEM, 0, "out of memory");
        }
        r->steps = r->ntx * r->nty * r->nk;
        r->latency = s->sg[i].reported;
        ksum_add(&k, r->latency);
    }
    return ft__eval_finish(p, model, &k, ev, st);
}

/* Tell the caller about a plan better than every one published so far. */
/* Whether a and b are the same schedule: subgraphs, ops, granularities,
 * retained tensors and traversal orders (labels and reported figures
 * aside). */
static int same_schedule(const ft_schedule *a, const ft_schedule *b)
{
    if (a->nsubgraphs != b->nsubgraphs)
        return 0;
    for (int i = 0; i < a->nsubgraphs; i++) {
        const ft_subgraph *x = &a->sg[i], *y = &b->sg[i];
        if (x->nops != y->nops || x->w != y->w || x->h != y->h || x->k != y->k || x->nretain != y->nretain ||
            x->norder != y->norder || memcmp(x->ops, y->ops, sizeof(int) * (size_t)x->nops) ||
            (x->nretain && memcmp(x->retain, y->retain, sizeof(int) * (size_t)x->nretain)) ||
            (x->norder && memcmp(x->order, y->order, sizeof(int64_t) * (size_t)x->norder)))
            return 0;
    }
    return 1;
}

/* The value of evaluation e under sh's objective: e->total itself for
 * latency (ft__objective_of). */
static double eval_value(const shared *sh, const ft_eval *e)
{
    if (sh->ob.kind == FT_OBJECTIVE_LATENCY)
        return e->total;
    return sh->ob.we * e->energy + sh->ob.wt * e->total;
}

static void publish(search *S, const plan *P, double total)
{
    shared *sh = S->sh;
    pthread_mutex_lock(&sh->mu);
    if (total < sh->best) {
        ft_schedule *s = ft__plan_schedule(S->p, P);
        ft_eval e;
        ft_status st;
        if (s && label_schedule(sh, s))
            ft_schedule_free(s), s = NULL;
        /* the first plan's figures within the first-valid share: a walk
         * that would not fit leaves them to the scorer */
        double until = sh->hard - reserve(sh);
        if (sh->best == INF && sh->t0 + FT_FIRST_VALID_SHARE * sh->limit < until)
            until = sh->t0 + FT_FIRST_VALID_SHARE * sh->limit;
        double f0 = ft__now_s();
        int frc = s ? figures(S->p, s, S->sc.model, until, sh->o, &e, &st) : FT_ENOMEM;
        if (ft__now_s() - f0 > sh->figures_s)
            sh->figures_s = ft__now_s() - f0;
        /* this thread's passes keep that reserve from now on (the others
         * took it at their start, after the first passes) */
        if (sh->hard - reserve(sh) < S->deadline)
            S->deadline = sh->hard - reserve(sh);
        if (frc == FT_OK) {
            double *lat = ft__malloc(sizeof(double) * (size_t)(e.nsubgraphs + 1));
            if (lat && eval_value(sh, &e) < sh->best) {
                for (int i = 0; i < e.nsubgraphs; i++) {
                    lat[i] = e.sg[i].latency;
                    s->sg[i].reported = lat[i];
                }
                sh->best = eval_value(sh, &e);
                sh->improvements++;
                if (sh->o->verbose && sh->o->on_message) {
                    char line[256];
                    snprintf(line, sizeof line, "fusetile schedule: %.2f s: total %.17g (%d subgraphs, %s pass, thread %d)",
                             ft__now_s() - sh->t0, e.total, P->ngroups, sh->pass, S->thread);
                    sh->o->on_message(sh->o->ctx, line);
                }
                if (sh->o->on_improve)
                    sh->o->on_improve(sh->o->ctx, s, lat, e.total);
                /* kept: the final result when no better plan follows */
                ft_schedule_free(sh->pub);
                ft_eval_free(&sh->pub_ev);
                sh->pub = s, sh->pub_ev = e;
                s = NULL;
                e.sg = NULL;
            }
            ft__free(lat);
            ft_eval_free(&e);
        }
        ft_schedule_free(s);
    }
    pthread_mutex_unlock(&sh->mu);
}

double ft__offer(search *S, const plan *P)
{
    ksum k = {0, 0};
    for (int i = 0; i < P->ngroups; i++)
        ksum_add(&k, P->g[i].lat);
    double total = ksum_value(&k);
    if (!(total < S->best))
        return total;
    plan C;
    if (ft__plan_copy(P, &C, 0))
        return total;
    ft__plan_free(&S->best_plan);
    S->best_plan = C;
    S->best = total;
    S->best_time = ft__now_s() - S->t0;
    publish(S, P, total);
    return total;
}

/* ------------------------------------------------------------ passes */

/* Plan of partition gid with its retention, offered (and, with
 * recompute, then tried with recomputation); returns its total. */
static double offer_partition(search *S, sctx *x, const int *gid, int recompute)
{
    int n = S->p->nops;
    int *g2 = ft__malloc(sizeof(int) * (size_t)(n + 1));
    double t = INF;
    plan P;
    if (!g2 || ft__out_of_time(S)) {
        ft__free(g2);
        return INF; /* no time left to cost it */
    }
    memcpy(g2, gid, sizeof(int) * (size_t)n);
    int ng = ft__compact_gids(g2, n);
    if (ft__plan_from_partition(S, g2, ng, &P) == 0) {
        t = ft__retention(S, &P, x);
        if (t < INF) {
            ft__offer(S, &P);
            if (recompute) {
                double t2 = ft__recompute(S, &P, x, t);
                if (t2 < t) {
                    ft__offer(S, &P);
                    t = t2;
                }
            }
        }
        ft__plan_free(&P);
    }
    ft__free(g2);
    return t;
}

/* The search runs (not a strategy alone). */
static int searching(const search *S) { return S->o->strategy == FT_STRATEGY_SEARCH; }
/* A grouping strategy runs alone. */
static int strategy_alone(const search *S) { return !searching(S); }
/* The search starts from some strategies' groupings too (above
 * FT_SEARCH_EXHAUSTIVE_OPS: the exhaustive pass tries every grouping of a
 * smaller problem, the strategies' included). */
static int has_starts(const search *S)
{
    return searching(S) && (S->o->start_from & FT_STRATEGY_ALL_STARTS) && S->p->nops > FT_SEARCH_EXHAUSTIVE_OPS;
}
static int small_problem(const search *S) { return searching(S) && S->p->nops <= FT_SEARCH_EXHAUSTIVE_OPS; }
/* A small native tile: every tile size can be tried. */
static int small_native(const search *S)
{
    return S->p->native_w <= FT_SEARCH_ALL_SIZES && S->p->native_h <= FT_SEARCH_ALL_SIZES && ft_native_k(S->p) <= FT_SEARCH_ALL_SIZES;
}
/* The finer candidate set: every size for a small native tile, else the
 * sizes that set a tile count. */
static int fine_mode(const search *S) { return small_native(S) ? FINE_ALL : FINE_COUNTS; }
static int large_problem(const search *S) { return searching(S) && S->p->nops > FT_SEARCH_EXHAUSTIVE_OPS; }

/* Offer partition gid (ng groups) costed as it is, nothing retained,
 * whatever the time (S->first): the schedule a pass that always runs
 * gives. */
static void offer_always(search *S, sctx *x, const int *gid, int ng)
{
    plan P;
    S->first = 1;
    if (ft__plan_from_partition(S, gid, ng, &P) == 0) {
        if (ft__plan_cost(S, &P, x) < INF)
            ft__offer(S, &P);
        ft__plan_free(&P);
    }
    S->first = 0;
}

/* The cheap start: one op per group, each scored at a few granularities
 * in raster order (S->quick), whatever the time (a valid schedule first,
 * due within FT_FIRST_VALID_SHARE of the limit). */
static void run_first(search *S, sctx *x, int *gid)
{
    for (int i = 0; i < S->p->nops; i++)
        gid[i] = i;
    S->quick = 1;
    offer_always(S, x, gid, S->p->nops);
    S->quick = 0;
}

/* One op per group, each at its best tiling, within the deadline (the
 * greedy pass starts from these costs, memoised): the first pass's plan
 * (one group per op, nothing retained, so each group's context is fixed)
 * with each group's configuration replaced by its best as it is found;
 * offered once every group is done or the deadline cuts the pass, so a
 * cut pass still improves the ops it reached. */
static void run_one_op(search *S, sctx *x, int *gid)
{
    int n = S->p->nops;
    for (int i = 0; i < n; i++)
        gid[i] = i;
    plan P;
    if (S->best_plan.ngroups == n ? ft__plan_copy(&S->best_plan, &P, 0) : ft__plan_from_partition(S, gid, n, &P))
        return;
    if (S->best_plan.ngroups != n)
        for (int i = 0; i < P.ngroups; i++)
            P.g[i].lat = INF;
    for (int i = 0; i < P.ngroups && !ft__out_of_time(S); i++) {
        group *G = &P.g[i];
        cfg c;
        ft__plan_context(S->p, &P, i, x);
        double lat = ft__group_cost(S, x, G->ops, G->nops, &c);
        if (lat < G->lat) {
            G->lat = lat;
            G->c = c;
        }
    }
    ft__offer(S, &P);
    ft__plan_free(&P);
}

/* The grouping strategy o->strategy alone (strategy_pass.c), costed
 * within the deadline; its groups and labels are kept for the schedule,
 * its error for ft_search's answer.  A group that fits only small tiles
 * walks many steps: strategy_pass.c splits one whose check runs past its
 * share of the time, and when the groups still cannot be costed with
 * retention in time, every group becomes single ops, costed whatever the
 * time as the first pass costs them, each label saying so. */
static void run_strategy(search *S, sctx *x, int *gid)
{
    shared *sh = S->sh;
    sh->strategy_rc = ft__strategy_groups(S, x, S->o->strategy, 0, gid, &sh->part, &sh->strategy_st);
    if (sh->strategy_rc != FT_OK || offer_partition(S, x, gid, 0) < INF || !ft__out_of_time(S))
        return;
    ft_partition_free(&sh->part);
    /* the strategy's run again, for its labels: its own exact checks cut
     * by the clock, every group split into single ops unchecked; then
     * each op costed as the cheap start costs it, whatever the time */
    sh->strategy_rc = ft__strategy_groups(S, x, S->o->strategy, 1, gid, &sh->part, &sh->strategy_st);
    if (sh->strategy_rc == FT_OK) {
        S->quick = 1;
        offer_always(S, x, gid, sh->part.ngroups);
        S->quick = 0;
    }
}

/* Each strategy of o->start_from (the quick ones first), its groups
 * offered; the best becomes the partition the later passes start from
 * (S->start_gid).  The pass has FT_SEARCH_STARTS_SHARE of the time left: a
 * strategy whose groups cannot be costed in it (a group that fits only
 * small tiles) is skipped, so that it never starves the search, and so
 * is one that fails (the bundled pattern libraries not found; named
 * pattern files were checked before the passes). */
static void run_starts(search *S, sctx *x, int *gid)
{
    static const ft_strategy order[] = {FT_STRATEGY_RULES, FT_STRATEGY_PATTERNS, FT_STRATEGY_SUPERTILE, FT_STRATEGY_PARTITION};
    int n = S->p->nops;
    double deadline = S->deadline, now = ft__now_s();
    S->deadline = now + FT_SEARCH_STARTS_SHARE * (deadline - now);
    S->start_t = INF;
    S->start_gid = ft__malloc(sizeof(int) * ((size_t)n + 1));
    int *g2 = ft__malloc(sizeof(int) * ((size_t)n + 1));
    for (size_t i = 0; S->start_gid && g2 && i < sizeof order / sizeof *order && !ft__out_of_time(S); i++) {
        int k = order[i];
        if (!(S->o->start_from & (1u << k)))
            continue;
        ft_partition part;
        ft_status st;
        int rc = ft__strategy_groups(S, x, (ft_strategy)k, 0, g2, &part, &st);
        ft_partition_free(&part);
        if (rc != FT_OK)
            continue;
        double t = offer_partition(S, x, g2, 0);
        if (t < S->start_t) {
            S->start_t = t;
            memcpy(S->start_gid, g2, sizeof(int) * (size_t)n);
        }
    }
    ft__free(g2);
    S->deadline = deadline;
    S->timed_out = 0;
    (void)gid;
}

/* Greedy fusion within 60% of the time left, so that its partition can
 * still be costed with retention and offered before the deadline; the
 * later passes start from the better of it and the starts' best. */
static void run_greedy(search *S, sctx *x, int *gid)
{
    double deadline = S->deadline, t = ft__now_s();
    S->deadline = t + 0.6 * (deadline - t);
    ft__greedy_fusion(S, x, gid);
    S->deadline = deadline;
    S->timed_out = 0;
    double tg = offer_partition(S, x, gid, 0);
    if (S->start_gid && S->start_t < tg)
        memcpy(gid, S->start_gid, sizeof(int) * (size_t)S->p->nops);
}

/* Neighbouring groups merged while it pays (partition.c), from where
 * greedy left the later passes: a greedy pass the deadline cut, or a
 * strategy's grouping that beat it, leaves merges that local search's
 * random moves find slowly. */
static void run_merge(search *S, sctx *x, int *gid)
{
    /* within 70% of the time left, so that the merged partition can still
     * be costed with retention and offered (as greedy's) */
    double deadline = S->deadline, t = ft__now_s();
    S->deadline = t + 0.7 * (deadline - t);
    int merged = ft__neighbour_merge(S, x, gid);
    S->deadline = deadline;
    S->timed_out = 0;
    if (merged > 0)
        offer_partition(S, x, gid, 0);
}

/* Every ordered partition, then recomputation on the best of them. */
static void run_exhaustive(search *S, sctx *x, int *gid)
{
    int *g2 = ft__malloc(sizeof(int) * ((size_t)S->p->nops + 1));
    if (g2)
        ft__exhaustive(S, x, g2);
    ft__free(g2);
    (void)gid;
    plan P;
    if (!ft__out_of_time(S) && S->best < INF && ft__plan_copy(&S->best_plan, &P, 0) == 0) {
        double t = ft__recompute(S, &P, x, S->best);
        if (t < S->best)
            ft__offer(S, &P);
        ft__plan_free(&P);
    }
}

static void run_local(search *S, sctx *x, int *gid)
{
    ft__local_search(S, x, gid, 400 * (int64_t)S->p->nops);
    offer_partition(S, x, gid, 1);
}

/* The exhaustive pass again, with the finer tile sizes (fine_mode). */
static void run_exhaustive_fine(search *S, sctx *x, int *gid)
{
    S->fine = fine_mode(S);
    run_exhaustive(S, x, gid);
}

/* Iterated local search from gid until the deadline, the bound, or
 * o->max_restarts restarts. */
static void run_restarts(search *S, sctx *x, int *gid)
{
    int n = S->p->nops;
    int *cur = ft__malloc(sizeof(int) * (size_t)(n + 1));
    if (!cur)
        return;
    S->fine = fine_mode(S);
    memcpy(cur, gid, sizeof(int) * (size_t)n);
    double cur_t = offer_partition(S, x, cur, 0);
    for (int64_t it = 0; !ft__out_of_time(S) && S->best > S->bound * (1 + 1e-12); it++) {
        if (S->o->max_restarts > 0 && it >= S->o->max_restarts)
            break;
        memcpy(gid, cur, sizeof(int) * (size_t)n);
        int kick = 1 + (int)(ft__rng(S) % (uint64_t)(n / 8 + 2));
        ft__perturb(S, gid, kick);
        if (ft__rng(S) % 3 == 0)
            ft__window_repartition(S, x, gid, 4);
        else
            ft__local_search(S, x, gid, 40 * (int64_t)n);
        double t = offer_partition(S, x, gid, 1);
        if (t < cur_t * (1 - 1e-12)) {
            memcpy(cur, gid, sizeof(int) * (size_t)n);
            cur_t = t;
        }
    }
    ft__free(cur);
}

static int above_bound(const search *S) { return large_problem(S) && S->best > S->bound * (1 + 1e-12); }

/* The passes, in order (see the top of this file). */
static const pass passes[] = {
    {"strategy", strategy_alone, run_strategy},
    {"first", searching, run_first},
    {"one-op", searching, run_one_op},
    {"starts", has_starts, run_starts},
    {"greedy", searching, run_greedy},
    {"merge", large_problem, run_merge},
    {"exhaustive", small_problem, run_exhaustive},
    {"exhaustive-fine", small_problem, run_exhaustive_fine},
    {"local", large_problem, run_local},
    {"restarts", above_bound, run_restarts},
};
#define NPASSES (sizeof passes / sizeof passes[0])
#define THREADED_PASS "restarts"

/* ------------------------------------------------------------ one search */

static void search_free(search *S)
{
    ft__plan_free(&S->best_plan);
    ft__free(S->start_gid);
    ft__memo_free(S);
    ft__scorer_free(&S->sc);
    ft__free(S->keybuf);
    ft__free(S->produced);
    ft__free(S->uses);
    ft__free(S->topo_pos);
}

/* Set up search S for thread `thread`; -1 on OOM. */
static int search_init(search *S, const ft_problem *p, const ft_search_opts *o, shared *sh, int thread, double bound)
{
    memset(S, 0, sizeof *S);
    S->p = p;
    S->o = o;
    S->thread = thread;
    S->sh = sh;
    S->t0 = sh->t0;
    S->deadline = sh->hard - reserve(sh);
    S->bound = bound;
    S->failed0 = ft__alloc_failures(); /* worker_main sets its thread's */
    uint64_t seed = o->seed + 0x9E3779B97F4A7C15ULL * (uint64_t)thread;
    S->rng = seed * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL;
    if (!S->rng)
        S->rng = 1;
    S->best = INF;
    S->produced = ft__calloc((size_t)p->ntensors + 1, 1);
    S->uses = ft__calloc((size_t)p->ntensors + 1, 1);
    S->topo_pos = ft__malloc(sizeof(int) * ((size_t)p->nops + 1));
    if (ft__search_scorer_init(S, o->model) || !S->produced || !S->uses || !S->topo_pos)
        return -1;
    for (int i = 0; i < p->nops; i++)
        S->topo_pos[p->topo[i]] = i;
    return 0;
}

typedef struct worker {
    search S;
    const int *gid0;
    int ok;
    unsigned long failed; /* allocations that failed in its thread */
} worker;

static void *worker_main(void *arg)
{
    worker *W = arg;
    unsigned long failed = ft__alloc_failures();
    W->S.failed0 = failed;
    sctx x;
    int n = W->S.p->nops;
    int *gid = ft__malloc(sizeof(int) * (size_t)(n + 1));
    if (gid && ft__sctx_alloc(&x, W->S.p->ntensors) == 0) {
        memcpy(gid, W->gid0, sizeof(int) * (size_t)n);
        run_restarts(&W->S, &x, gid);
        ft__sctx_free(&x);
        W->ok = 1;
    }
    ft__free(gid);
    W->failed = ft__alloc_failures() - failed;
    return NULL;
}

static int default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > FT_SEARCH_MAX_THREADS ? FT_SEARCH_MAX_THREADS : (int)n;
}

/* ft_search with the plans valued by ob (cost.h): one search. */
static int search_run(const ft_problem *p, const ft_search_opts *o, const ft__objective *ob, ft_schedule **out, ft_eval *ev,
                      ft_status *st)
{
    *out = NULL;
    memset(ev, 0, sizeof *ev);
    /* the passes skip what they cannot allocate; any failure is reported */
    unsigned long failed = ft__alloc_failures();
    shared sh;
    memset(&sh, 0, sizeof sh);
    pthread_mutex_init(&sh.mu, NULL);
    sh.o = o;
    sh.ob = *ob;
    sh.t0 = ft__now_s();
    sh.limit = o->time_limit > 0 ? o->time_limit : 1e9;
    sh.hard = sh.t0 + sh.limit;
    sh.best = INF;
    sh.threads = o->threads > 0 ? o->threads : default_threads();
    if (sh.threads > FT_SEARCH_MAX_THREADS)
        sh.threads = FT_SEARCH_MAX_THREADS;
    /* the best bound: the search stops early when it reaches it */
    sh.bound = ft_lower_bound_capacity(p, o->model, NULL, NULL);
    if (ob->kind != FT_OBJECTIVE_LATENCY) /* weights >= 0: a bound of each term */
        sh.bound = ob->we * ft_objective_bound(p, o->model, FT_OBJECTIVE_ENERGY) + ob->wt * sh.bound;
    sh.pass = passes[0].name;

    int nthreads = sh.threads;
    worker *W = ft__calloc((size_t)nthreads, sizeof(worker));
    int *gid = ft__malloc(sizeof(int) * ((size_t)p->nops + 1));
    sctx x = {0};
    int rc = FT_OK, started = 0;
    if (!W || !gid || ft__sctx_alloc(&x, p->ntensors) || search_init(&W[0].S, p, o, &sh, 0, sh.bound)) {
        rc = ft__fail(st, FT_ENOMEM, 0, "out of memory");
        goto done;
    }
    if ((rc = ft__strategy_check_files(o, st)) != FT_OK)
        goto done;
    search *S = &W[0].S;
    /* the first pass that applies (first, or a strategy alone) always
     * runs, whatever the time limit */
    for (size_t i = 0, ran = 0; i < NPASSES; i++) {
        if (strcmp(passes[i].name, THREADED_PASS) == 0)
            break;
        if (ran && ft__out_of_time(S))
            break;
        if (!passes[i].applies(S))
            continue;
        sh.pass = passes[i].name;
        passes[i].run(S, &x, gid);
        ran = 1;
    }
    /* the improvement pass, in every thread, from the partition so far;
     * its deadline keeps the reserve the first plan's figures showed */
    S->deadline = sh.hard - reserve(&sh);
    for (size_t i = 0; i < NPASSES && !ft__out_of_time(S); i++) {
        if (strcmp(passes[i].name, THREADED_PASS) != 0 || !passes[i].applies(S))
            continue;
        sh.pass = passes[i].name;
        pthread_t *tid = ft__malloc(sizeof(pthread_t) * (size_t)nthreads);
        for (int t = 1; tid && t < nthreads; t++) {
            W[t].gid0 = gid;
            if (search_init(&W[t].S, p, o, &sh, t, sh.bound) || pthread_create(&tid[t], NULL, worker_main, &W[t]) != 0) {
                search_free(&W[t].S);
                break;
            }
            started = t;
        }
        W[0].gid0 = gid;
        worker_main(&W[0]);
        for (int t = 1; t <= started; t++)
            pthread_join(tid[t], NULL);
        ft__free(tid);
    }
    /* the best of every thread; ties go to the lowest thread */
    int bt = 0;
    for (int t = 1; t <= started; t++)
        if (W[t].S.best < W[bt].S.best)
            bt = t;
    for (int t = 1; t <= started; t++)
        failed -= W[t].failed;
    if (ft__alloc_failures() != failed) {
        rc = ft__fail(st, FT_ENOMEM, 0, "out of memory");
        goto done;
    }
    if (sh.strategy_rc != FT_OK) {
        rc = sh.strategy_rc;
        *st = sh.strategy_st;
        goto done;
    }
    if (W[bt].S.best == INF) {
        rc = ft__fail(st, FT_EINVALID, FT_R_OOM, "%s: no valid schedule found: some op does not fit fast_memory_capacity %.17g even at the smallest granularity",
                      p->name ? p->name : "problem", p->capacity);
        goto done;
    }
    ft_schedule *s = ft__plan_schedule(p, &W[bt].S.best_plan);
    if (s && label_schedule(&sh, s))
        ft_schedule_free(s), s = NULL;
    if (!s) {
        rc = ft__fail(st, FT_ENOMEM, 0, "out of memory");
        goto done;
    }
    /* the final figures: those published with the same schedule (every
     * better plan is published, so it differs only on a tie between
     * threads, where the lowest thread's plan is kept: the same seed and
     * threads give the same schedule); else figured now, half the reserve
     * left for the caller's write */
    double until = sh.hard - 0.5 * reserve(&sh);
    if (sh.pub && same_schedule(s, sh.pub)) {
        ft_schedule_free(s);
        s = sh.pub, *ev = sh.pub_ev;
        sh.pub = NULL, sh.pub_ev.sg = NULL;
        rc = FT_OK;
    } else {
        rc = figures(p, s, o->model, until, o, ev, st);
    }
    if (rc == FT_OK) {
        for (int i = 0; i < ev->nsubgraphs; i++)
            s->sg[i].reported = ev->sg[i].latency;
        *out = s;
    } else {
        ft_schedule_free(s);
    }
done:
    for (int t = 0; W && t < nthreads; t++)
        if (t == 0 || t <= started)
            search_free(&W[t].S);
    ft__free(W);
    ft__free(gid);
    ft__sctx_free(&x);
    ft_partition_free(&sh.part);
    ft_schedule_free(sh.pub);
    ft_eval_free(&sh.pub_ev);
    pthread_mutex_destroy(&sh.mu);
    return rc;
}

int ft_search(const ft_problem *p, const ft_search_opts *o, ft_schedule **out, ft_eval *ev, ft_status *st)
{
    ft_status_clear(st);
    *out = NULL;
    memset(ev, 0, sizeof *ev);
    const char *name = ft_objective_name(o->objective);
    if (!name)
        return ft__fail(st, FT_EINPUT, 0, "search options: objective %d is none of latency, energy, edp", (int)o->objective);
    if (o->objective != FT_OBJECTIVE_LATENCY && !p->energy.on)
        return ft__fail(st, FT_EINPUT, 0,
                        "%s: objective %s needs the machine's energy model (a target with an `energy` group), and this machine has none",
                        p->name ? p->name : "problem", name);
    ft__objective ob;
    ft__objective_init(&ob, o->objective);
    if (o->objective != FT_OBJECTIVE_EDP)
        return search_run(p, o, &ob, out, ev, st);
    /* the energy-delay product is not additive over subgraphs: first the
     * latency-optimal schedule (E0, T0) in half the time, then a search of
     * its linearisation around that point, E / E0 + T / T0 (the gradient
     * of E x T there is (T0, E0)), scaled by E0: joules + (E0 / T0) x cost
     * units; the schedule of lower product is kept (the first on a tie) */
    double t0 = ft__now_s(), limit = o->time_limit > 0 ? o->time_limit : 0;
    ft_search_opts o1 = *o;
    o1.time_limit = limit > 0 ? 0.5 * limit : 0;
    ft__objective lat;
    ft__objective_init(&lat, FT_OBJECTIVE_LATENCY);
    int rc = search_run(p, &o1, &lat, out, ev, st);
    if (rc != FT_OK || !(ev->total > 0) || !(ev->energy > 0) || stop_asked(o))
        return rc;
    ft_search_opts o2 = *o;
    o2.on_improve = NULL; /* its improvements are of the linearised value, not the product */
    if (limit > 0) {
        o2.time_limit = limit - (ft__now_s() - t0);
        if (o2.time_limit < 0.05 * limit)
            return FT_OK; /* no time left for the second search */
    }
    ob.we = 1;
    ob.wt = ev->energy / ev->total;
    ft_schedule *s2;
    ft_eval e2;
    ft_status st2;
    if (search_run(p, &o2, &ob, &s2, &e2, &st2) != FT_OK)
        return FT_OK; /* the first result stands */
    if (ft_objective_value(p, FT_OBJECTIVE_EDP, &e2) < ft_objective_value(p, FT_OBJECTIVE_EDP, ev)) {
        ft_schedule_free(*out);
        ft_eval_free(ev);
        *out = s2, *ev = e2;
    } else {
        ft_schedule_free(s2);
        ft_eval_free(&e2);
    }
    return FT_OK;
}
