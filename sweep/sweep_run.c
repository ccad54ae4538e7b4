/* sweep_run.c - one run of a sweep, in this process: load and override the problem, schedule, evaluate, bound, replay. */
#define _POSIX_C_SOURCE 200809L
#include "fusetile/sweep.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fusetile/sim.h"
#include "fusetile/target.h"

/* Largest relative difference between the simulated and analytic totals
 * that counts as agreement (SPEC.md, as `fusetile simulate`). */
#define AGREE_REL 1e-9

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int failed(ft_sweep_result *res, ft_status *st, int code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int failed(ft_sweep_result *res, ft_status *st, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->error, sizeof res->error, fmt, ap);
    va_end(ap);
    res->ok = 0;
    st->code = code;
    snprintf(st->msg, sizeof st->msg, "%s", res->error);
    return code;
}

/* The run's problem: loaded, its target applied (with the run's native
 * granularity and units set on a machine target first, so that the base
 * costs follow them), then the run's overrides.  FT_OK with *out, or the
 * failure recorded in res. */
static int load(const ft_sweep_run *r, ft_problem **out, ft_sweep_result *res, ft_status *st)
{
    ft_problem *p = NULL;
    ft_target *t = NULL;
    int rc;
    *out = NULL;
    if ((rc = ft_problem_load(r->problem_path, &p, st)) != FT_OK)
        return failed(res, st, rc, "%s", st->msg);
    ft_override ov = {.capacity = r->capacity, .bandwidth = r->bandwidth, .native_w = r->native_w,
                      .native_h = r->native_h, .native_k = r->native_k, .units = r->units};
    if (r->target_path) {
        if ((rc = ft_target_load(r->target_path, &t, st)) != FT_OK) {
            ft_problem_free(p);
            return failed(res, st, rc, "%s", st->msg);
        }
        if (!t->contest) {
            if (r->native_w) {
                t->native_w = r->native_w;
                t->native_h = r->native_h;
                t->native_k = r->native_k ? r->native_k : r->native_w;
                ov.native_w = ov.native_h = ov.native_k = 0;
            }
            if (r->units) {
                t->units = r->units;
                ov.units = 0;
            }
        }
        rc = ft_target_apply(t, p, 0, st);
        ft_target_free(t);
        if (rc != FT_OK) {
            ft_problem_free(p);
            return failed(res, st, rc, "%s: with target %s: %s", r->problem, r->target, st->msg);
        }
    }
    if (r->native_w && !r->native_k && ov.native_w)
        ov.native_k = r->native_w;   /* "WxH": k = w, as a problem file's */
    if ((rc = ft_problem_override(p, &ov, st)) != FT_OK) {
        ft_problem_free(p);
        return failed(res, st, rc, "%s: override: %s", r->problem, st->msg);
    }
    *out = p;
    return FT_OK;
}

static int simulate(const ft_sweep_run *r, ft_sim **sim, const ft_problem *p, const ft_schedule *s, ft_sweep_result *res,
                    ft_status *st)
{
    const char *err = NULL;
    if (!*sim && ft_sim_new(sim, &err) != FT_OK)
        return failed(res, st, FT_EINPUT, "simulator: %s", err ? err : "cannot start");
    ft_sim_opts so;
    ft_sim_opts_init(&so);
    so.model = r->model;
    ft_sim_result sr;
    int rc = ft_sim_run(*sim, p, s, &so, &sr);
    if (rc == FT_OK) {
        res->sim_total = sr.total_simulated;
        double d = fabs(sr.total_simulated - sr.total_analytic), m = fabs(sr.total_analytic);
        res->agreement = !sr.analytic_reason && (d == 0 || (m > 0 && d / m <= AGREE_REL));
    } else {
        failed(res, st, rc, "simulator (%s): %s", ft_reason_name(sr.reason), ft_sim_errmsg(*sim));
    }
    ft_sim_result_free(&sr);
    return rc;
}

int ft_sweep_run_exec(const ft_sweep_run *r, ft_sim **sim, ft_sweep_result *res, ft_status *st)
{
    double t0 = now();
    ft_status_clear(st);
    memset(res, 0, sizeof *res);
    res->capacity = res->bandwidth = NAN;
    res->total = res->lower_bound = res->capacity_bound = res->ratio = res->sim_total = NAN;
    res->energy_j = res->power_w = NAN;
    res->agreement = -1;
    ft_problem *p = NULL;
    int rc = load(r, &p, res, st);
    if (rc == FT_OK) {
        res->capacity = p->capacity;
        res->bandwidth = p->bandwidth;
        res->units = p->timing.units > 1 ? p->timing.units : 1;
        snprintf(res->native, sizeof res->native, "%lldx%lldx%lld", (long long)p->native_w, (long long)p->native_h,
                 (long long)ft_native_k(p));
        res->lower_bound = ft_lower_bound(p, r->model, NULL, NULL);
        res->capacity_bound = ft_lower_bound_capacity(p, r->model, NULL, NULL);
        ft_search_opts o;
        ft_search_opts_init(&o);
        o.model = r->model;
        o.seed = r->seed;
        o.threads = 1;   /* the pool's workers run side by side */
        o.strategy = r->strategy;
        o.time_limit = r->time_limit > 0 ? r->time_limit : ft_contest_time_limit(p->nops);
        o.patterns_dir = getenv("FT_PATTERNS_DIR"); /* as `fusetile schedule`: libfusetile reads no environment */
        ft_schedule *s = NULL;
        ft_eval ev;
        rc = ft_search(p, &o, &s, &ev, st);
        if (rc == FT_EINVALID) {
            failed(res, st, rc, "%s: no valid schedule: %s", r->problem, st->msg);
        } else if (rc != FT_OK) {
            failed(res, st, rc, "%s: %s", r->problem, st->msg[0] ? st->msg : "search failed");
        } else {
            res->total = ev.total;
            res->lower_bound = ev.lower_bound;
            res->ratio = ev.lower_bound > 0 ? ev.total / ev.lower_bound : NAN;
            res->subgraphs = s->nsubgraphs;
            if (p->energy.on) {
                /* the search's figures came from its scorer (ev.scored: its
                 * walk did not fit the time left) without the traffic the
                 * joules need: the walk, past the limit, for them */
                ft_eval full;
                ft_status fst;
                int whole = ev.scored && ft_evaluate(p, s, r->model, &full, &fst) == FT_OK;
                double j = whole ? full.energy : ev.energy, t = whole ? full.total : ev.total;
                if (whole)
                    ft_eval_free(&full);
                if (isfinite(j)) {
                    res->energy_j = j;
                    res->power_w = ft_energy_watts(p, j, t);
                }
            }
            res->ok = 1;
            if (r->simulate)
                rc = simulate(r, sim, p, s, res, st);
            ft_eval_free(&ev);
            ft_schedule_free(s);
        }
        ft_problem_free(p);
    }
    res->wall_s = now() - t0;
    return rc;
}
