/* eval.c - ft_evaluate: each subgraph in closed form where it applies (a cost per kind of tile, closed.c's ft__eval_closed), else every step walked (walk.c); latencies summed exactly (ft__sg_acc, cost.h), the working set checked. */
#include "cost/score.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct progress {
    ft_progress_fn fn;
    void *ctx;
    int64_t done, total;
} progress;

#define PROGRESS_EVERY (1 << 18)

/* Subgraph sg's energy into r->energy from its figures (ft__energy; 0
 * when p's energy model is off), its latency first lengthened under p's
 * power limit (ft__power_latency).  FT_OK or FT_ENOMEM. */
static int sg_energy(const ft_problem *p, const ft_schedule *s, int sg, ft_sg_result *r, ft_status *st)
{
    r->energy = 0;
    if (!p->energy.on)
        return FT_OK;
    ft__energy_counts c;
    if (ft__sg_energy_counts(p, s, sg, &c))
        return ft__fail(st, FT_ENOMEM, 0, "out of memory");
    c.loaded = (double)r->loaded;
    c.written = (double)r->written;
    c.latency = r->latency;
    c.latency = r->latency = ft__power_latency(p, &c);
    r->energy = ft__energy(p, &c);
    return FT_OK;
}

/* Subgraph sg's figures into *r: in closed form with sc (NULL: never),
 * else walking every step.  An allocation the closed form saw fail is
 * FT_ENOMEM, as the walk's. */
static int eval_sg(const ft_problem *p, const ft_schedule *s, int sg, ft_compute_model model, ft__scorer *sc, ft_sg_result *r,
                   progress *pr, ft_status *st)
{
    unsigned long failed = ft__alloc_failures();
    int closed = sc && ft__eval_closed(sc, s, sg, r);
    /* out of memory is said, not walked around */
    if (ft__alloc_failures() != failed)
        return ft__fail(st, FT_ENOMEM, 0, "out of memory");
    if (closed) {
        /* progress counts on once, at the subgraph's end, when the walk
         * would have called at least once */
        if (pr && pr->fn && r->steps >= PROGRESS_EVERY && pr->fn(pr->ctx, pr->done + r->steps, pr->total))
            return ft__fail(st, FT_EINPUT, 0, "%s: evaluation interrupted in subgraph %d at step %lld", s->name ? s->name : "schedule", sg,
                            (long long)(r->steps - 1));
        if (pr)
            pr->done += r->steps;
        return sg_energy(p, s, sg, r, st);
    }
    ft_walk *w;
    int rc = ft_walk_begin(p, s, sg, model, &w, st);
    if (rc)
        return rc;
    memset(r, 0, sizeof *r);
    ft_walk_grid(w, &r->ntx, &r->nty, &r->nk, &r->steps);
    ft_step stp;
    ksum comp = {0, 0}, mem = {0, 0};
    int64_t loaded0 = 0;
    /* the steps' latencies add up through the accumulator the scorer
     * uses too (cost.h: one unit, the steps; several, waves of tiles) */
    ft__sg_acc acc;
    ft__sg_acc_init(&acc, p);
    while (ft_walk_next(w, &stp)) {
        if (stp.index == 0)
            loaded0 = stp.loaded_elems;
        if ((double)stp.working_set > p->capacity) {
            st->sg = sg;
            st->tile = stp.tile;
            st->step = stp.index;
            rc = ft__fail(st, FT_EINVALID, FT_R_OOM,
                          "%s: subgraph %d, tile %lld (row %lld, col %lld), step %lld (k-step %lld): working set %lld exceeds "
                          "fast_memory_capacity %.17g",
                          s->name ? s->name : "schedule", sg, (long long)stp.tile, (long long)stp.tile_row, (long long)stp.tile_col,
                          (long long)stp.index, (long long)stp.kstep, (long long)stp.working_set, p->capacity);
            break;
        }
        ft__sg_acc_step(&acc, stp.index / r->nk, stp.kstep == r->nk - 1, stp.latency);
        ksum_add(&comp, stp.compute);
        ksum_add(&mem, stp.memory);
        if (stp.compute > stp.memory)
            r->compute_bound_steps++;
        else
            r->memory_bound_steps++;
        if (stp.working_set > r->peak_working_set)
            r->peak_working_set = stp.working_set;
        r->loaded += stp.loaded_elems;
        r->written += stp.written_elems;
        if (pr && pr->fn && ((stp.index + 1) & (PROGRESS_EVERY - 1)) == 0 && pr->fn(pr->ctx, pr->done + stp.index + 1, pr->total)) {
            rc = ft__fail(st, FT_EINPUT, 0, "%s: evaluation interrupted in subgraph %d at step %lld", s->name ? s->name : "schedule", sg,
                          (long long)stp.index);
            break;
        }
    }
    if (pr)
        pr->done += r->steps;
    ft__rates r0; /* the first wave's bandwidths */
    ft__rates_share(&w->rates, ft__wave_size(p, r->ntx * r->nty, 0), &r0);
    double extra = !rc && r->steps > 0 ? ft__sg_extra(p, &r0, loaded0, stp.written_elems, stp.compute) : 0;
    r->latency = ft__sg_acc_finish(&acc, w->floor, extra);
    if (!rc && r->steps == 1 && p->timing.overlap == FT_OVERLAP_PIPELINE)
        r->latency = ft__sg_single(p, &r0, stp.loaded_elems, stp.written_elems, stp.compute);
    r->compute_time = ksum_value(&comp);
    r->memory_time = ksum_value(&mem);
    ft_walk_free(w);
    return rc ? rc : sg_energy(p, s, sg, r, st);
}

/* Contract: cost.h. */
int ft__evaluate_walk(const ft_problem *p, const ft_schedule *s, int sg, ft_compute_model model, ft_sg_result *out, ft_status *st)
{
    ft_status_clear(st);
    return eval_sg(p, s, sg, model, NULL, out, NULL, st);
}

int ft_evaluate_subgraph(const ft_problem *p, const ft_schedule *s, int sg, ft_compute_model model, ft_sg_result *out, ft_status *st)
{
    ft_status_clear(st);
    ft__scorer sc;
    if (ft__scorer_init(&sc, p, model))
        return ft__fail(st, FT_ENOMEM, 0, "out of memory");
    int rc = eval_sg(p, s, sg, model, &sc, out, NULL, st);
    ft__scorer_free(&sc);
    return rc;
}

void ft_eval_free(ft_eval *e)
{
    if (!e)
        return;
    ft__free(e->sg);
    e->sg = NULL;
    e->nsubgraphs = 0;
}

int ft_schedule_steps(const ft_problem *p, const ft_schedule *s, int64_t *steps, ft_status *st)
{
    const char *n = s->name ? s->name : "schedule";
    int64_t total = 0, big = -1;
    int bsg = -1;
    int64_t bx = 0, by = 0, bk = 0;
    *steps = 0;
    for (int i = 0; i < s->nsubgraphs; i++) {
        int64_t ntx, nty, nk, m;
        if (ft__sg_grid(p, &s->sg[i], NULL, &ntx, &nty, &nk))
            return ft__fail(st, FT_ENOMEM, 0, "%s: out of memory", n);
        if (__builtin_mul_overflow(ntx, nty, &m) || __builtin_mul_overflow(m, nk, &m))
            return ft__fail(st, FT_EINPUT, 0,
                            "%s: subgraph %d: %lld x %lld tiles x %lld k-steps: the step count overflows 64 bits, the limit is %lld "
                            "(FT_MAX_STEPS)",
                            n, i, (long long)ntx, (long long)nty, (long long)nk, (long long)FT_MAX_STEPS);
        if (m > big) {
            big = m;
            bsg = i;
            bx = ntx, by = nty, bk = nk;
        }
        if (__builtin_add_overflow(total, m, &total))
            return ft__fail(st, FT_EINPUT, 0, "%s: the step count of the subgraphs overflows 64 bits, the limit is %lld (FT_MAX_STEPS)", n,
                            (long long)FT_MAX_STEPS);
    }
    *steps = total;
    if (total > FT_MAX_STEPS)
        return ft__fail(st, FT_EINPUT, 0,
                        "%s: %lld steps (the largest subgraph, %d: %lld x %lld tiles x %lld k-steps), the limit is %lld (FT_MAX_STEPS)", n,
                        (long long)total, bsg, (long long)bx, (long long)by, (long long)bk, (long long)FT_MAX_STEPS);
    return FT_OK;
}

int ft_evaluate(const ft_problem *p, const ft_schedule *s, ft_compute_model model, ft_eval *out, ft_status *st)
{
    return ft_evaluate_progress(p, s, model, NULL, NULL, out, st);
}

int ft_evaluate_progress(const ft_problem *p, const ft_schedule *s, ft_compute_model model, ft_progress_fn fn, void *ctx, ft_eval *out,
                         ft_status *st)
{
    progress pr = {fn, ctx, 0, 0};
    memset(out, 0, sizeof *out);
    out->model = model;
    int rc = ft_schedule_validate(p, s, st);
    if (rc)
        return rc;
    /* refused before the first step: the count is closed-form */
    if ((rc = ft_schedule_steps(p, s, &pr.total, st)))
        return rc;
    out->sg = ft__calloc((size_t)s->nsubgraphs + 1, sizeof(ft_sg_result));
    if (!out->sg)
        return ft__fail(st, FT_ENOMEM, 0, "out of memory");
    out->nsubgraphs = s->nsubgraphs;
    ksum total = {0, 0}, energy = {0, 0};
    /* the closed form's tile memo */
    ft__scorer sc;
    if (ft__scorer_init(&sc, p, model)) {
        ft_eval_free(out);
        return ft__fail(st, FT_ENOMEM, 0, "out of memory");
    }
    for (int i = 0; i < s->nsubgraphs; i++) {
        rc = eval_sg(p, s, i, model, &sc, &out->sg[i], &pr, st);
        if (rc) {
            ft__scorer_free(&sc);
            ft_eval_free(out);
            return rc;
        }
        if (!isfinite(out->sg[i].latency)) {
            /* finite inputs whose products overflow (base_costs near 1e308,
             * a bandwidth near 0): no latency to report
             * (fuzz/regress/schedule/overflowing-base-cost) */
            double lat = out->sg[i].latency;
            ft__scorer_free(&sc);
            ft_eval_free(out);
            return ft__fail(st, FT_EINPUT, 0,
                            "%s: subgraph %d: latency is %g, not a finite number: a base cost, a size or the "
                            "bandwidth of the problem is out of range",
                            s->name ? s->name : "schedule", i, lat);
        }
        ksum_add(&total, out->sg[i].latency);
        ksum_add(&energy, out->sg[i].energy);
    }
    ft__scorer_free(&sc);
    out->energy = ksum_value(&energy);
    return ft__eval_finish(p, model, &total, out, st);
}

/* Contract: cost.h. */
int ft__eval_finish(const ft_problem *p, ft_compute_model model, const ksum *total, ft_eval *ev, ft_status *st)
{
    ev->total = ksum_value(total);
    /* the bounds fall back to weaker ones when memory runs out: report it */
    unsigned long failed = ft__alloc_failures();
    ev->lower_bound = ft_lower_bound(p, model, NULL, NULL);
    ev->capacity_bound = ft_lower_bound_capacity(p, model, NULL, NULL);
    if (ft__alloc_failures() != failed) {
        ft_eval_free(ev);
        return ft__fail(st, FT_ENOMEM, 0, "out of memory");
    }
    return FT_OK;
}
