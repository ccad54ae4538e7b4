/* collect.c - the report's data: the schedule (given, or found by ft_search), its exact evaluation, its replay in the simulator, and the strategies beside it, gathered into the page's JSON document. */
#define _POSIX_C_SOURCE 200809L
#include "report_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* What each strategy is, for the page. */
static const char *const strategy_what[FT_STRATEGY_COUNT] = {
    "fusetile's search: fusion, exact enumeration, local search, recomputation",
    "pattern-library tiling",
    "rule-based fusion",
    "rule-based fusion, then the fused graph partitioned",
    "super tiling",
};

/* What a strategy's label says of a group split because it was not costed
 * in its share of the time limit (sched/search/strategy_pass.c). */
#define SPLIT_SLOW_LABEL "(split: not costed in its time share)"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A number member: null when x is not finite (JSON has no NaN). */
static json_t *num(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

static void say(const ft_report_opts *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const ft_report_opts *o, const char *fmt, ...)
{
    if (!o->on_message)
        return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    o->on_message(o->ctx, line);
}

/* A report's run: its options, the phase it is in of how many (the
 * search, the evaluation, the replay, each strategy), and the stop flag
 * its searches read once o->progress asked to stop. */
typedef struct rep_run {
    const ft_report_opts *o;
    int64_t phase, nphases;
    volatile int stop;
} rep_run;

/* Ask o->progress whether to go on; 1 once it said stop. */
static int poll(rep_run *x)
{
    if (!x->stop && x->o->progress && x->o->progress(x->o->progress_ctx, x->phase, x->nphases))
        x->stop = 1;
    return x->stop;
}

static void search_poll(void *ctx, const ft_search_progress *pr)
{
    (void)pr;
    poll(ctx);
}

static int steps_poll(void *ctx, int64_t done, int64_t total)
{
    (void)done;
    (void)total;
    return poll(ctx);
}

/* The end of a phase: 0, or -1 with st saying the run was interrupted. */
static int next_phase(rep_run *x, ft_status *st)
{
    x->phase++;
    if (!poll(x))
        return 0;
    ft_status_clear(st);
    st->code = FT_EINPUT;
    snprintf(st->msg, sizeof st->msg, "interrupted");
    return -1;
}

static void search_opts(rep_run *x, ft_strategy strategy, ft_search_opts *so)
{
    const ft_report_opts *o = x->o;
    ft_search_opts_init(so);
    so->on_progress = search_poll;
    so->ctx = x;
    so->stop = &x->stop;
    so->model = o->model;
    so->time_limit = o->time_limit;
    so->seed = o->seed;
    so->threads = o->threads;
    so->strategy = strategy;
    so->patterns_dir = o->patterns_dir;
}

/* The layers of subgraph g: each op's name from the problem, whole, or
 * "op N"; and each op's kind (null when it has none). */
static int put_layers(json_t *d, const ft_problem *p, const ft_subgraph *g)
{
    json_t *names = json_array(), *kinds = json_array(), *ops = json_array();
    int bad = json_object_set_new(d, "layers", names) | json_object_set_new(d, "kinds", kinds) |
              json_object_set_new(d, "ops", ops);
    for (int j = 0; !bad && j < g->nops; j++) {
        int op = g->ops[j];
        char buf[32];
        const char *name = p->ops[op].name && p->ops[op].name[0] ? p->ops[op].name : NULL;
        if (!name) {
            snprintf(buf, sizeof buf, "op %d", op);
            name = buf;
        }
        bad |= json_array_append_new(names, json_string(name)) | json_array_append_new(kinds, str_or_null(p->ops[op].kind)) |
               json_array_append_new(ops, json_integer(op));
    }
    return bad;
}

/* One subgraph's row: the evaluation's figures, the roofline's point and
 * the replay's span. */
static json_t *sg_row(const ft_problem *p, const ft_schedule *s, int i, const ft_sg_result *r, const ft_sim_sg *q,
                      double start)
{
    const ft_subgraph *g = &s->sg[i];
    json_t *d = json_object();
    if (!d)
        return NULL;
    char *label = ft_subgraph_label(p, g);
    int64_t moved = r->loaded + r->written;
    int bad = !label || put_layers(d, p, g);
    bad |= json_object_set_new(d, "index", json_integer(i)) | json_object_set_new(d, "label", str_or_null(label)) |
           json_object_set_new(d, "group", str_or_null(g->label)) |
           json_object_set_new(d, "granularity", json_pack("[III]", (json_int_t)g->w, (json_int_t)g->h, (json_int_t)g->k)) |
           json_object_set_new(d, "tiles", json_integer((json_int_t)(r->ntx * r->nty))) |
           json_object_set_new(d, "steps", json_integer((json_int_t)r->steps)) |
           json_object_set_new(d, "latency", num(r->latency)) |
           json_object_set_new(d, "compute_bound_steps", json_integer((json_int_t)r->compute_bound_steps)) |
           json_object_set_new(d, "memory_bound_steps", json_integer((json_int_t)r->memory_bound_steps)) |
           json_object_set_new(d, "bound", json_string(r->compute_bound_steps > r->memory_bound_steps ? "compute" : "memory")) |
           json_object_set_new(d, "peak_working_set", json_integer((json_int_t)r->peak_working_set)) |
           json_object_set_new(d, "loaded", json_integer((json_int_t)r->loaded)) |
           json_object_set_new(d, "written", json_integer((json_int_t)r->written)) |
           json_object_set_new(d, "compute_time", num(r->compute_time)) |
           json_object_set_new(d, "memory_time", num(r->memory_time)) |
           json_object_set_new(d, "intensity", moved > 0 ? num(r->compute_time / (double)moved) : json_null()) |
           json_object_set_new(d, "throughput", r->latency > 0 ? num(r->compute_time / r->latency) : json_null()) |
           json_object_set_new(d, "simulated", num(q->simulated)) | json_object_set_new(d, "start", num(start)) |
           json_object_set_new(d, "end", num(start + q->simulated)) |
           json_object_set_new(d, "compute_busy", num(q->compute_busy)) |
           json_object_set_new(d, "channel_busy", num(q->channel_busy)) |
           json_object_set_new(d, "peak_occupancy", json_integer((json_int_t)q->peak_occupancy));
    /* joules and average watts with an energy group (ft_evaluate's; the
     * replay's own account beside them), else null */
    int on = p->energy.on;
    bad |= json_object_set_new(d, "energy_j", on ? num(r->energy) : json_null()) |
           json_object_set_new(d, "power_w", on ? num(ft_energy_watts(p, r->energy, r->latency)) : json_null()) |
           json_object_set_new(d, "energy_simulated_j", on ? num(q->energy) : json_null());
    free(label);
    if (bad) {
        json_decref(d);
        return NULL;
    }
    return d;
}

/* A strategy's row. */
static json_t *strategy_row(int strategy, const char *source, int ok, double total, int nsubgraphs, double lower_bound,
                            double seconds, const char *message)
{
    json_t *d = json_pack("{s:s, s:s, s:s, s:b}", "name", ft_strategy_name((ft_strategy)strategy), "what",
                          strategy_what[strategy], "source", source, "ok", ok);
    if (!d)
        return NULL;
    int bad = json_object_set_new(d, "total", ok ? num(total) : json_null()) |
              json_object_set_new(d, "subgraphs", ok ? json_integer(nsubgraphs) : json_null()) |
              json_object_set_new(d, "ratio", ok && lower_bound > 0 ? num(total / lower_bound) : json_null()) |
              json_object_set_new(d, "seconds", num(seconds)) | json_object_set_new(d, "message", str_or_null(message));
    if (bad) {
        json_decref(d);
        return NULL;
    }
    return d;
}

/* Run the strategies of o->strategies into the array rows.  The search's
 * row reuses the report's own search when it made the schedule. */
static int run_strategies(const ft_problem *p, rep_run *x, json_t *rows, const ft_eval *own,
                          int own_nsubgraphs, double own_seconds, int searched, ft_status *st)
{
    const ft_report_opts *o = x->o;
    for (int k = 0; k < FT_STRATEGY_COUNT; k++) {
        if (!(o->strategies & (1u << k)))
            continue;
        json_t *row;
        if (k == FT_STRATEGY_SEARCH && searched) {
            row = strategy_row(k, "this schedule", 1, own->total, own_nsubgraphs, own->lower_bound, own_seconds, NULL);
        } else {
            say(o, "strategy %s: up to %.15g s", ft_strategy_name((ft_strategy)k), o->time_limit);
            ft_search_opts so;
            search_opts(x, (ft_strategy)k, &so);
            ft_schedule *out = NULL;
            ft_eval ev;
            ft_status sst;
            memset(&ev, 0, sizeof ev);
            double t0 = now_s();
            int rc = ft_search(p, &so, &out, &ev, &sst);
            double dt = now_s() - t0;
            if (rc == FT_ENOMEM) {
                ft_eval_free(&ev);
                ft_schedule_free(out);
                *st = sst;
                return -1;
            }
            row = strategy_row(k, "ft_search", rc == FT_OK, ev.total, out ? out->nsubgraphs : 0, ev.lower_bound, dt,
                               rc == FT_OK ? NULL : sst.msg);
            /* groups the strategy's pass split because they were not costed
             * in time (its labels say so: docs/STRATEGIES.md) */
            int slow = 0;
            for (int i = 0; rc == FT_OK && i < out->nsubgraphs; i++)
                slow += out->sg[i].label && strstr(out->sg[i].label, SPLIT_SLOW_LABEL) != NULL;
            if (row && json_object_set_new(row, "split_in_time", json_integer(slow))) {
                json_decref(row);
                row = NULL;
            }
            if (rc == FT_OK)
                say(o, "strategy %s: total %.15g, %d subgraphs, %.3g s", ft_strategy_name((ft_strategy)k), ev.total,
                    out->nsubgraphs, dt);
            else
                say(o, "strategy %s: %s", ft_strategy_name((ft_strategy)k), sst.msg);
            ft_eval_free(&ev);
            ft_schedule_free(out);
        }
        if (!row || json_array_append_new(rows, row)) {
            st->code = FT_ENOMEM;
            snprintf(st->msg, sizeof st->msg, "out of memory");
            return -1;
        }
        if (!(k == FT_STRATEGY_SEARCH && searched) && next_phase(x, st))
            return -1;
    }
    return 0;
}

static json_t *target_json(const ft_report_opts *o)
{
    const ft_target *t = o->target;
    if (!t)
        return json_null();
    json_t *d = json_pack("{s:s?, s:s?, s:s?, s:b}", "path", t->path, "name", t->name, "description", t->description,
                          "contest", t->contest);
    if (d && !t->contest &&
        (json_object_set_new(d, "clock_hz", num(t->clock_hz)) |
         json_object_set_new(d, "element_bytes", json_integer((json_int_t)t->element_bytes)))) {
        json_decref(d);
        return NULL;
    }
    return d;
}

static json_t *problem_json(const ft_problem *p, const ft_report_opts *o)
{
    double wb = p->timing.write_bandwidth > 0 ? p->timing.write_bandwidth : p->bandwidth;
    return json_pack("{s:s?, s:i, s:i, s:o, s:o, s:o, s:[III], s:i, s:b}", "path",
                     o->problem_path ? o->problem_path : p->name, "ops", p->nops, "tensors", p->ntensors, "capacity",
                     num(p->capacity), "bandwidth", num(p->bandwidth), "write_bandwidth", num(wb), "native",
                     (json_int_t)p->native_w, (json_int_t)p->native_h, (json_int_t)ft_native_k(p), "units",
                     p->timing.units > 1 ? p->timing.units : 1, "separate_channels", p->timing.duplex != 0);
}

/* Replay s into *r; FT_OK, or the simulator's code with st filled. */
static int replay(const ft_problem *p, const ft_schedule *s, rep_run *x, ft_sim_result *r, ft_status *st)
{
    const ft_report_opts *o = x->o;
    ft_sim *sim = o->sim;
    const char *err = NULL;
    memset(r, 0, sizeof *r);
    if (!sim) {
        int rc = ft_sim_new(&sim, &err);
        if (rc != FT_OK) {
            st->code = rc;
            snprintf(st->msg, sizeof st->msg, "the simulator: %s", err ? err : "cannot be made");
            return rc;
        }
    }
    ft_sim_opts so;
    ft_sim_opts_init(&so);
    so.model = o->model;
    so.analytic = 0; /* the report evaluates the schedule itself */
    so.progress = steps_poll;
    so.progress_ctx = x;
    int rc = ft_sim_run(sim, p, s, &so, r);
    if (rc != FT_OK) {
        st->code = rc;
        st->reason = rc == FT_EINVALID ? r->reason : FT_R_NONE;
        st->sg = r->fail_sg;
        snprintf(st->msg, sizeof st->msg, "the simulator's replay: %s", ft_sim_errmsg(sim));
    }
    if (!o->sim)
        ft_sim_free(sim);
    return rc;
}

json_t *ft__rep_collect(const ft_problem *p, const ft_schedule *given, const ft_report_opts *o, ft_status *st)
{
    ft_status_clear(st);
    ft_schedule *found = NULL;
    const ft_schedule *s = given;
    double search_seconds = NAN;
    ft_eval ev;
    memset(&ev, 0, sizeof ev);
    ft_sim_result r;
    memset(&r, 0, sizeof r);
    json_t *doc = NULL;
    rep_run x = {.o = o};
    x.nphases = (s ? 0 : 1) + 2;
    for (int k = 0; k < FT_STRATEGY_COUNT; k++)
        x.nphases += (o->strategies & (1u << k)) && !(k == FT_STRATEGY_SEARCH && !s);

    if (!s) {
        say(o, "search: up to %.15g s", o->time_limit);
        ft_search_opts so;
        search_opts(&x, FT_STRATEGY_SEARCH, &so);
        ft_eval sev;
        double t0 = now_s();
        int rc = ft_search(p, &so, &found, &sev, st);
        search_seconds = now_s() - t0;
        if (rc == FT_OK)
            ft_eval_free(&sev);
        if (rc != FT_OK || next_phase(&x, st)) {
            ft_schedule_free(found);
            return NULL;
        }
        s = found;
        say(o, "search: %d subgraphs in %.3g s", s->nsubgraphs, search_seconds);
    }
    if (ft_evaluate_progress(p, s, o->model, steps_poll, &x, &ev, st) != FT_OK || next_phase(&x, st))
        goto out;
    say(o, "evaluate: total %.15g", ev.total);
    if (replay(p, s, &x, &r, st) != FT_OK || next_phase(&x, st))
        goto out;
    say(o, "simulate: total %.15g", r.total_simulated);

    doc = json_object();
    json_t *sgs = json_array(), *rows = json_array();
    double lbc, lbm, seconds_per_unit = NAN;
    ft_lower_bound(p, o->model, &lbc, &lbm);
    const ft_target *t = o->target;
    int real = t && !t->contest && t->clock_hz > 0;
    if (real)
        seconds_per_unit = 1.0 / t->clock_hz;
    double croof, droof;
    ft_roofline_peaks(p, &croof, &droof);
    const char *spath = o->schedule_path ? o->schedule_path : given ? given->name : NULL;
    int bad = !doc || !sgs || !rows;
    if (!bad)
        bad = json_object_set_new(doc, "format", json_string("fusetile-report")) |
              json_object_set_new(doc, "version", json_integer(1)) |
              json_object_set_new(doc, "fusetile", json_string(FT_VERSION)) |
              json_object_set_new(doc, "problem", problem_json(p, o)) |
              json_object_set_new(doc, "target", target_json(o)) |
              json_object_set_new(doc, "keep_costs", json_boolean(o->keep_costs)) |
              json_object_set_new(doc, "time_unit", json_string(real ? "cycles" : "cost units")) |
              json_object_set_new(doc, "seconds_per_unit", num(seconds_per_unit)) |
              json_object_set_new(doc, "compute_model", json_string(ft_compute_model_name(o->model))) |
              json_object_set_new(doc, "schedule",
                                  json_pack("{s:s?, s:s, s:o, s:o, s:i}", "path", spath, "source", given ? "file" : "search",
                                            "search_seconds", num(search_seconds), "time_limit", num(o->time_limit),
                                            "subgraphs", s->nsubgraphs)) |
              json_object_set_new(doc, "total", num(ev.total)) |
              json_object_set_new(doc, "total_seconds", num(ev.total * seconds_per_unit)) |
              json_object_set_new(doc, "lower_bound", num(ev.lower_bound)) |
              json_object_set_new(doc, "lower_bound_compute", num(lbc)) |
              json_object_set_new(doc, "lower_bound_memory", num(lbm)) |
              json_object_set_new(doc, "capacity_bound", num(ev.capacity_bound)) |
              json_object_set_new(doc, "ratio", ev.lower_bound > 0 ? num(ev.total / ev.lower_bound) : json_null()) |
              json_object_set_new(doc, "roofline",
                                  json_pack("{s:o, s:o, s:o}", "compute_roof", num(croof), "data_roof", num(droof), "ridge",
                                            num(croof / droof))) |
              json_object_set_new(doc, "simulation",
                                  json_pack("{s:o, s:I}", "total_simulated", num(r.total_simulated), "steps",
                                            (json_int_t)r.steps)) |
              json_object_set_new(doc, "subgraphs", json_incref(sgs)) |
              json_object_set_new(doc, "strategies", json_incref(rows)) |
              json_object_set_new(doc, "fusion_headroom", json_null()) |
              json_object_set_new(doc, "energy",
                                  !p->energy.on ? json_null()
                                                : json_pack("{s:o, s:o, s:o, s:b}", "energy_j", num(ev.energy), "power_w",
                                                            num(ft_energy_watts(p, ev.energy, ev.total)),
                                                            "energy_simulated_j", num(r.energy_simulated), "energy_agree",
                                                            ft_sim_energy_agrees(&r, -1)));
    double start = 0;
    for (int i = 0; !bad && i < s->nsubgraphs; i++) {
        json_t *row = sg_row(p, s, i, &ev.sg[i], &r.sg[i], start);
        bad = !row || json_array_append_new(sgs, row);
        start += r.sg[i].simulated;
    }
    if (bad) {
        st->code = FT_ENOMEM;
        snprintf(st->msg, sizeof st->msg, "out of memory");
    } else if (run_strategies(p, &x, rows, &ev, s->nsubgraphs, search_seconds, given == NULL, st) == 0) {
        json_decref(sgs);
        json_decref(rows);
        goto done;
    }
    json_decref(sgs);
    json_decref(rows);
out:
    json_decref(doc);
    doc = NULL;
done:
    ft_sim_result_free(&r);
    ft_eval_free(&ev);
    ft_schedule_free(found);
    return doc;
}
