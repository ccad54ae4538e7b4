/* ft_run.c - the computations of fusetile._fusetile: search (ft_search), evaluate (ft_evaluate) and simulate (the SystemC simulator, with the replays with effects off), each with the GIL released, Ctrl-C and a progress callback, and their results as dicts.
 *
 * Ctrl-C: the library calls back while it runs (ft_search_opts.on_progress
 * about every 0.25 s, the progress functions of ft_evaluate_progress and
 * ft_sim_opts every 2^18 steps); each callback takes the GIL, runs
 * PyErr_CheckSignals (Python's SIGINT handler raises KeyboardInterrupt
 * there, on the main thread) and the caller's progress callable.  An
 * exception from either is kept and stops the run (the search through
 * ft_search_opts.stop, ending with its best schedule so far, which is
 * attached to the exception as .schedule and .evaluation); it is raised
 * when the call returns. */
#include "_fusetile.h"

#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "fusetile/sweep.h"
#include "fusetile/trace.h"
#include "pythread.h"

#include <unistd.h>


/* The simulator is one SystemC model per process and runs one replay at a
 * time: one handle, made on first use, behind this lock (taken with the
 * GIL released). */
static PyThread_type_lock sim_lock;
static ft_sim *sim_handle;

int ftpy_run_init(void)
{
    if (!sim_lock && !(sim_lock = PyThread_allocate_lock())) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

void ftpy_run_free(void)
{
    ft_sim_free(sim_handle);
    sim_handle = NULL;
    if (sim_lock)
        PyThread_free_lock(sim_lock);
    sim_lock = NULL;
}

int ftpy_sim_acquire(ft_sim **out, char *msg, size_t n)
{
    const char *err = NULL;
    PyThread_acquire_lock(sim_lock, WAIT_LOCK);
    int rc = sim_handle ? FT_OK : ft_sim_new(&sim_handle, &err);
    if (rc != FT_OK) {
        snprintf(msg, n, "simulator: %s", err ? err : "cannot start");
        PyThread_release_lock(sim_lock);
        *out = NULL;
        return rc;
    }
    *out = sim_handle;
    return FT_OK;
}

void ftpy_sim_release(void)
{
    PyThread_release_lock(sim_lock);
}

const char *ftpy_patterns_dir(char *buf, size_t n)
{
    const char *env = getenv("FT_PATTERNS_DIR");
    if (!env || !*env || strlen(env) >= n)
        return NULL;
    memcpy(buf, env, strlen(env) + 1);
    return buf;
}

/* ------------------------------------------------------------ watching */


/* From a library callback (GIL released): take the GIL, check for signals
 * and call w->progress(make(arg)) (when both are set).  Returns 0, or 1
 * after an exception (kept in *w, w->stop set; later calls return 1). */
static int watch_poll(watch *w, PyObject *(*make)(const void *), const void *arg)
{
    if (w->stop)
        return 1;
    PyGILState_STATE g = PyGILState_Ensure();
    int stop = PyErr_CheckSignals() < 0;
    if (!stop && w->progress && make) {
        PyObject *d = make(arg);
        PyObject *r = d ? PyObject_CallFunctionObjArgs(w->progress, d, NULL) : NULL;
        Py_XDECREF(d);
        stop = !r;
        Py_XDECREF(r);
    }
    if (stop) {
        PyErr_Fetch(&w->exc_type, &w->exc_value, &w->exc_tb);
        PyErr_NormalizeException(&w->exc_type, &w->exc_value, &w->exc_tb);
        w->stop = 1;
    }
    PyGILState_Release(g);
    return stop;
}

/* Raise the exception that stopped the run (w->stop set), with `name` =
 * value attached for each non-NULL pair of attrs (name, value, ..., NULL;
 * the values are borrowed).  Returns NULL. */
PyObject *ftpy_watch_raise(watch *w, ...)
{
    va_list ap;
    va_start(ap, w);
    const char *name;
    while (w->exc_value && (name = va_arg(ap, const char *))) {
        PyObject *v = va_arg(ap, PyObject *);
        if (v && PyObject_SetAttrString(w->exc_value, name, v) < 0)
            PyErr_Clear(); /* an exception type without a __dict__: raise it bare */
    }
    va_end(ap);
    PyErr_Restore(w->exc_type, w->exc_value, w->exc_tb);
    w->exc_type = w->exc_value = w->exc_tb = NULL;
    return NULL;
}

/* PyArg converter for progress=: None or a callable (borrowed into
 * *(PyObject **)out; None gives NULL). */
int ftpy_progress_converter(PyObject *o, void *out)
{
    if (o == Py_None) {
        *(PyObject **)out = NULL;
        return 1;
    }
    if (!PyCallable_Check(o)) {
        PyErr_Format(PyExc_TypeError, "progress must be a callable or None, not %.100s", Py_TYPE(o)->tp_name);
        return 0;
    }
    *(PyObject **)out = o;
    return 1;
}

/* What a step-counting progress function (ft_progress_fn) reports. */
typedef struct steps_done {
    const char *what;
    int64_t done, total;
} steps_done;

static PyObject *steps_dict(const void *arg)
{
    const steps_done *s = arg;
    return Py_BuildValue("{sssLsLsd}", "what", s->what, "done", (long long)s->done, "total", (long long)s->total,
                         "fraction", s->total > 0 ? (double)s->done / (double)s->total : 0.0);
}


int ftpy_steps_progress(void *ctx, int64_t done, int64_t total)
{
    const watch_steps *ws = ctx;
    steps_done sd = {ws->what, done, total};
    return watch_poll(ws->w, steps_dict, &sd);
}

static PyObject *search_progress_dict(const void *arg)
{
    const ft_search_progress *pr = arg;
    PyObject *best = pr->best < HUGE_VAL ? PyFloat_FromDouble(pr->best) : (Py_INCREF(Py_None), Py_None);
    if (!best)
        return NULL;
    return Py_BuildValue("{sssdsdsdsNsdsLsdszsisd}", "what", "schedule", "elapsed", pr->elapsed, "limit", pr->limit,
                         "fraction", pr->limit > 0 ? fmin(1.0, pr->elapsed / pr->limit) : 0.0, "best", best, "bound",
                         pr->bound, "evals", (long long)pr->evals, "evals_per_s", pr->evals_per_s, "pass", pr->pass,
                         "threads", pr->threads, "ratio", pr->best < HUGE_VAL && pr->bound > 0 ? pr->best / pr->bound : 0.0);
}

static void search_on_progress(void *ctx, const ft_search_progress *pr)
{
    watch_poll(ctx, search_progress_dict, pr);
}

/* ------------------------------------------------------------ results */

/* Per-subgraph members shared by evaluate and simulate: index, ops, label,
 * op_names, op_kinds, granularity. */
static int put_sg_head(PyObject *d, const ft_problem *p, const ft_subgraph *g, int i)
{
    char *label = ft_subgraph_label(p, g);
    if (!label) {
        PyErr_NoMemory();
        return -1;
    }
    int rc = ftpy_put(d, "index", PyLong_FromLong(i)) < 0 || ftpy_put(d, "ops", ftpy_int_list(g->ops, g->nops)) < 0 ||
             ftpy_put(d, "label", ftpy_str_or_none(label)) < 0;
    free(label);
    if (rc)
        return -1;
    PyObject *names = PyList_New(g->nops), *kinds = PyList_New(g->nops);
    for (int j = 0; names && kinds && j < g->nops; j++) {
        int o = g->ops[j];
        int ok = o >= 0 && o < p->nops;
        PyObject *n = ftpy_str_or_none(ok ? p->ops[o].name : NULL), *k = ftpy_str_or_none(ok ? p->ops[o].kind : NULL);
        if (!n || !k) {
            Py_XDECREF(n);
            Py_XDECREF(k);
            Py_CLEAR(names);
            break;
        }
        PyList_SET_ITEM(names, j, n);
        PyList_SET_ITEM(kinds, j, k);
    }
    if (!names || !kinds) {
        Py_XDECREF(names);
        Py_XDECREF(kinds);
        return -1;
    }
    /* ftpy_put takes its value whatever happens: both puts run */
    int bad = ftpy_put(d, "op_names", names) < 0;
    bad |= ftpy_put(d, "op_kinds", kinds) < 0;
    if (bad ||
        ftpy_put(d, "granularity", Py_BuildValue("[LLL]", (long long)g->w, (long long)g->h, (long long)g->k)) < 0)
        return -1;
    return 0;
}

/* d["energy_j"] and d["power_w"] (ft_energy_watts over `latency`) when
 * p's energy model is on (a target's energy group); 0, or -1 with the
 * Python error set. */
static int put_energy(PyObject *d, const ft_problem *p, double joules, double latency)
{
    if (!p->energy.on)
        return 0;
    if (ftpy_put(d, "energy_j", PyFloat_FromDouble(joules)) < 0 ||
        ftpy_put(d, "power_w", PyFloat_FromDouble(ft_energy_watts(p, joules, latency))) < 0)
        return -1;
    return 0;
}

static PyObject *eval_sg_dict(const ft_problem *p, const ft_schedule *s, const ft_sg_result *r, int i)
{
    const ft_subgraph *g = &s->sg[i];
    PyObject *d = PyDict_New();
    if (!d || put_sg_head(d, p, g, i) < 0 || ftpy_put(d, "latency", PyFloat_FromDouble(r->latency)) < 0 ||
        ftpy_put(d, "reported_latency", g->has_reported ? PyFloat_FromDouble(g->reported) : (Py_INCREF(Py_None), Py_None)) < 0 ||
        ftpy_put(d, "tiles", PyLong_FromLongLong((long long)(r->ntx * r->nty))) < 0 ||
        ftpy_put(d, "tiles_x", PyLong_FromLongLong((long long)r->ntx)) < 0 ||
        ftpy_put(d, "tiles_y", PyLong_FromLongLong((long long)r->nty)) < 0 ||
        ftpy_put(d, "k_steps", PyLong_FromLongLong((long long)r->nk)) < 0 ||
        ftpy_put(d, "steps", PyLong_FromLongLong((long long)r->steps)) < 0 ||
        ftpy_put(d, "compute_bound_steps", PyLong_FromLongLong((long long)r->compute_bound_steps)) < 0 ||
        ftpy_put(d, "memory_bound_steps", PyLong_FromLongLong((long long)r->memory_bound_steps)) < 0 ||
        ftpy_put(d, "peak_working_set", PyLong_FromLongLong((long long)r->peak_working_set)) < 0 ||
        ftpy_put(d, "loaded", PyLong_FromLongLong((long long)r->loaded)) < 0 ||
        ftpy_put(d, "written", PyLong_FromLongLong((long long)r->written)) < 0 ||
        ftpy_put(d, "compute_time", PyFloat_FromDouble(r->compute_time)) < 0 ||
        ftpy_put(d, "memory_time", PyFloat_FromDouble(r->memory_time)) < 0 || put_energy(d, p, r->energy, r->latency) < 0)
        Py_CLEAR(d);
    return d;
}

/* d with its "subgraphs" list sgs put in (both references stolen), or
 * NULL with both released and the Python error set. */
static PyObject *with_subgraphs(PyObject *d, PyObject *sgs)
{
    if (ftpy_put(d, "subgraphs", sgs) < 0) {
        Py_DECREF(d);
        return NULL;
    }
    return d;
}

/* Where the gap of schedule s of p lies with its evidence
 * (ft_gap_evidence: the evidence within `seconds`, HUGE_VAL: whole), as
 * `fusetile evaluate --json`'s "gap"; None when out of memory. */
static PyObject *gap_dict(const ft_problem *p, const ft_schedule *s, const ft_eval *e, double seconds)
{
    ft_gap g;
    ft_status st;
    if (ft_gap_evidence(p, s, e, seconds, &g, &st) != FT_OK)
        Py_RETURN_NONE;
    PyObject *d = PyDict_New();
    if (!d || ftpy_put(d, "bound", PyFloat_FromDouble(g.bound)) < 0 || ftpy_put(d, "ratio", PyFloat_FromDouble(g.ratio)) < 0 ||
        ftpy_put(d, "grouping_bound", PyFloat_FromDouble(g.grouping_bound)) < 0 ||
        ftpy_put(d, "subgraphs", PyLong_FromLong(g.nsubgraphs)) < 0 || ftpy_put(d, "between", PyFloat_FromDouble(g.between)) < 0 ||
        ftpy_put(d, "within", PyFloat_FromDouble(g.within)) < 0 ||
        ftpy_put(d, "best_alone", PyFloat_FromDouble(g.best_alone)) < 0 ||
        ftpy_put(d, "search_part", PyFloat_FromDouble(g.search_part)) < 0 ||
        ftpy_put(d, "bound_part", PyFloat_FromDouble(g.bound_part)) < 0 ||
        ftpy_put(d, "alone_tried", PyLong_FromLongLong(g.alone_tried)) < 0 ||
        ftpy_put(d, "alone_done", PyLong_FromLong(g.alone_done)) < 0 ||
        ftpy_put(d, "pairs_tried", PyLong_FromLong(g.pairs_tried)) < 0 ||
        ftpy_put(d, "pairs_done", PyLong_FromLong(g.pairs_done)) < 0 ||
        ftpy_put(d, "pairs_configs", PyLong_FromLongLong(g.pairs_configs)) < 0 ||
        ftpy_put(d, "merge_at", PyLong_FromLong(g.merge_at)) < 0 ||
        ftpy_put(d, "merge_gain", PyFloat_FromDouble(g.merge_gain)) < 0 ||
        ftpy_put(d, "merge_sum", PyFloat_FromDouble(g.merge_sum)) < 0 ||
        ftpy_put(d, "grouping_in_bound", PyBool_FromLong(g.grouping_in_bound)) < 0 ||
        ftpy_put(d, "gap_in", PyUnicode_FromString(ft_gap_in_name(g.gap_in))) < 0) {
        Py_XDECREF(d);
        return NULL;
    }
    return d;
}

/* The evaluation e of schedule s of p, as `fusetile evaluate --json`; the
 * gap's evidence within gap_seconds (HUGE_VAL: whole). */
static PyObject *eval_dict(const ft_problem *p, const ft_schedule *s, const ft_eval *e, double gap_seconds)
{
    double lbc, lbm, cbm;
    ft_lower_bound(p, e->model, &lbc, &lbm);
    ft_lower_bound_capacity(p, e->model, NULL, &cbm);
    PyObject *d = PyDict_New(), *sgs = PyList_New(e->nsubgraphs);
    if (!d || !sgs)
        goto fail;
    for (int i = 0; i < e->nsubgraphs; i++) {
        PyObject *g = eval_sg_dict(p, s, &e->sg[i], i);
        if (!g)
            goto fail;
        PyList_SET_ITEM(sgs, i, g);
    }
    if (ftpy_put(d, "compute_model", PyUnicode_FromString(ft_compute_model_name(e->model))) < 0 ||
        ftpy_put(d, "total", PyFloat_FromDouble(e->total)) < 0 ||
        ftpy_put(d, "lower_bound", PyFloat_FromDouble(e->lower_bound)) < 0 ||
        ftpy_put(d, "lower_bound_compute", PyFloat_FromDouble(lbc)) < 0 ||
        ftpy_put(d, "lower_bound_memory", PyFloat_FromDouble(lbm)) < 0 ||
        ftpy_put(d, "ratio", PyFloat_FromDouble(e->lower_bound > 0 ? e->total / e->lower_bound : 0.0)) < 0 ||
        ftpy_put(d, "capacity_bound", PyFloat_FromDouble(e->capacity_bound)) < 0 ||
        ftpy_put(d, "capacity_bound_memory", PyFloat_FromDouble(cbm)) < 0 ||
        ftpy_put(d, "capacity_ratio", PyFloat_FromDouble(e->capacity_bound > 0 ? e->total / e->capacity_bound : 0.0)) < 0 ||
        ftpy_put(d, "scored", PyBool_FromLong(e->scored)) < 0 || ftpy_put(d, "gap", gap_dict(p, s, e, gap_seconds)) < 0 ||
        put_energy(d, p, e->energy, e->total) < 0)
        goto fail;
    return with_subgraphs(d, sgs);
fail:
    Py_XDECREF(d);
    Py_XDECREF(sgs);
    return NULL;
}

/* A float, or None for NaN (an analytic figure that was not computed). */
static PyObject *num_or_none(double x)
{
    if (isnan(x))
        Py_RETURN_NONE;
    return PyFloat_FromDouble(x);
}

/* The replay's energy account in d with an energy model: put_energy's
 * members for the replay's joules over its latency, and energy_analytic_j
 * (None when not run); 0, or -1 with the Python error set. */
static int put_sim_energy(PyObject *d, const ft_problem *p, double joules, double simulated, double analytic)
{
    if (!p->energy.on)
        return 0;
    if (put_energy(d, p, joules, simulated) < 0 || ftpy_put(d, "energy_analytic_j", num_or_none(analytic)) < 0)
        return -1;
    return 0;
}

/* A list of the n figures at a (stride bytes apart), None for NaN. */
static PyObject *num_list(const double *a, int n, size_t stride)
{
    PyObject *l = PyList_New(n);
    for (int i = 0; l && i < n; i++) {
        PyObject *v = num_or_none(*(const double *)(const void *)((const char *)a + (size_t)i * stride));
        if (!v) {
            Py_CLEAR(l);
            break;
        }
        PyList_SET_ITEM(l, i, v);
    }
    return l;
}

/* The replays with effects off, as `fusetile simulate --json`'s
 * effects_off. */
static PyObject *effects_list(const ft_sim_effects *rep)
{
    PyObject *l = PyList_New(rep->nvar);
    for (int v = 0; l && v < rep->nvar; v++) {
        const ft_sim_variant *x = &rep->var[v];
        PyObject *d = PyDict_New();
        int bad = !d || ftpy_put(d, "turned_off", PyUnicode_FromString(x->turned_off)) < 0 ||
                  ftpy_put(d, "ok", PyBool_FromLong(x->ok)) < 0;
        if (!bad && x->ok)
            bad = ftpy_put(d, "total_simulated", PyFloat_FromDouble(x->r.total_simulated)) < 0 ||
                  ftpy_put(d, "total_analytic", num_or_none(x->r.total_analytic)) < 0 ||
                  ftpy_put(d, "relative_difference", num_or_none(ft_sim_rel_diff(x->r.total_simulated, x->r.total_analytic))) < 0 ||
                  ftpy_put(d, "agree", PyBool_FromLong(ft_sim_agrees(&x->r, -1))) < 0 ||
                  ftpy_put(d, "subgraphs_simulated", num_list(&x->r.sg[0].simulated, x->r.nsubgraphs, sizeof(ft_sim_sg))) < 0 ||
                  ftpy_put(d, "subgraphs_analytic", num_list(&x->r.sg[0].analytic, x->r.nsubgraphs, sizeof(ft_sim_sg))) < 0;
        else if (!bad)
            bad = ftpy_put(d, "error", ftpy_str_or_none(x->error)) < 0;
        if (bad) {
            Py_XDECREF(d);
            Py_CLEAR(l);
            break;
        }
        PyList_SET_ITEM(l, v, d);
    }
    return l;
}

/* The replay r of schedule s of p, as `fusetile simulate --json`: the
 * per-subgraph and total figures, agree (within FT_SIM_AGREE_REL
 * everywhere), what accounts for each difference (ft_sim_accounted over
 * the replays with effects off, rep) and those replays. */
static PyObject *sim_dict(const ft_problem *p, const ft_schedule *s, const ft_sim_result *r, ft_compute_model model,
                          const ft_sim_effects *rep)
{
    char why[160];
    int agree = ft_sim_agrees(r, -1), accounted = r->analytic_reason == FT_R_NONE;
    PyObject *d = PyDict_New(), *sgs = PyList_New(r->nsubgraphs);
    if (!d || !sgs)
        goto fail;
    for (int i = 0; i < r->nsubgraphs; i++) {
        const ft_sim_sg *q = &r->sg[i];
        PyObject *g = PyDict_New();
        int acc = ft_sim_accounted(r, rep, i, why, sizeof why);
        if (!g || put_sg_head(g, p, &s->sg[i], i) < 0 || ftpy_put(g, "steps", PyLong_FromLongLong((long long)q->steps)) < 0 ||
            ftpy_put(g, "simulated", PyFloat_FromDouble(q->simulated)) < 0 ||
            ftpy_put(g, "analytic", num_or_none(q->analytic)) < 0 ||
            ftpy_put(g, "difference", num_or_none(q->simulated - q->analytic)) < 0 ||
            ftpy_put(g, "relative_difference", num_or_none(ft_sim_rel_diff(q->simulated, q->analytic))) < 0 ||
            ftpy_put(g, "peak_occupancy", PyLong_FromLongLong((long long)q->peak_occupancy)) < 0 ||
            ftpy_put(g, "channel_busy", PyFloat_FromDouble(q->channel_busy)) < 0 ||
            ftpy_put(g, "compute_busy", PyFloat_FromDouble(q->compute_busy)) < 0 ||
            ftpy_put(g, "accounted_for_by", PyUnicode_FromString(why)) < 0 ||
            put_sim_energy(g, p, q->energy, q->simulated, q->energy_analytic) < 0) {
            Py_XDECREF(g);
            goto fail;
        }
        PyList_SET_ITEM(sgs, i, g);
        if (!ft_sim_agrees(r, i))
            agree = 0;
        accounted &= acc;
    }
    accounted &= ft_sim_accounted(r, rep, -1, why, sizeof why);
    if (ftpy_put(d, "compute_model", PyUnicode_FromString(ft_compute_model_name(model))) < 0 ||
        ftpy_put(d, "total_simulated", PyFloat_FromDouble(r->total_simulated)) < 0 ||
        ftpy_put(d, "total_analytic", num_or_none(r->total_analytic)) < 0 ||
        ftpy_put(d, "difference", num_or_none(r->total_simulated - r->total_analytic)) < 0 ||
        ftpy_put(d, "relative_difference", num_or_none(ft_sim_rel_diff(r->total_simulated, r->total_analytic))) < 0 ||
        ftpy_put(d, "agree", PyBool_FromLong(agree)) < 0 || ftpy_put(d, "accounted", PyBool_FromLong(accounted)) < 0 ||
        ftpy_put(d, "accounted_for_by", PyUnicode_FromString(why)) < 0 ||
        ftpy_put(d, "steps", PyLong_FromLongLong((long long)r->steps)) < 0 ||
        ftpy_put(d, "analytic_reason", ftpy_str_or_none(r->analytic_reason ? ft_reason_name(r->analytic_reason) : NULL)) < 0 ||
        ftpy_put(d, "effects_off", effects_list(rep)) < 0 ||
        put_sim_energy(d, p, r->energy_simulated, r->total_simulated, r->energy_analytic) < 0)
        goto fail;
    return with_subgraphs(d, sgs);
fail:
    Py_XDECREF(d);
    Py_XDECREF(sgs);
    return NULL;
}

/* ------------------------------------------------------------ functions */

/* Most pattern files search() takes (patterns=). */
#define FTPY_MAX_PATTERN_FILES 16

/* The strategy options of search() into *o: strategy and start_from
 * names, a partition method, parts, and the pattern files (kept in
 * *files, a list of str the caller releases).  0, or -1 with an
 * exception set. */
static int strategy_opts(ft_search_opts *o, const char *strategy, const char *starts, const char *method, int parts,
                         PyObject *patterns, PyObject **files, const char **paths)
{
    ft_status st;
    *files = NULL;
    if ((strategy && ft_strategy_parse(strategy, &o->strategy, &st) != FT_OK) ||
        (starts && ft_strategy_parse_starts(starts, &o->start_from, &st) != FT_OK) ||
        (method && ft_partition_method_parse(method, &o->partition, &st) != FT_OK)) {
        ftpy_usage("%s", st.msg);
        return -1;
    }
    if (parts < 0) {
        ftpy_usage("parts is %d, must be 0 (the method's choice) or more", parts);
        return -1;
    }
    o->parts = parts;
    if (patterns == Py_None)
        return 0;
    if (!(*files = PySequence_List(patterns)))
        return -1;
    Py_ssize_t n = PyList_GET_SIZE(*files);
    if (n < 1 || n > FTPY_MAX_PATTERN_FILES) {
        ftpy_usage("patterns has %zd files, must have 1 to %d", n, FTPY_MAX_PATTERN_FILES);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *f = PyOS_FSPath(PyList_GET_ITEM(*files, i));
        if (!f || !PyUnicode_Check(f)) {
            Py_XDECREF(f);
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "patterns must be paths (str)");
            return -1;
        }
        if (PyList_SetItem(*files, i, f)) /* steals f; the list keeps its text alive */
            return -1;
        if (!(paths[i] = PyUnicode_AsUTF8(f)))
            return -1;
    }
    o->pattern_files = paths;
    o->npattern_files = (int)n;
    return 0;
}

/* Add the objective the search minimised to its evaluation dict e: its
 * name, value, bound and their ratio (`fusetile schedule`'s objective
 * line).  0, or -1 with a Python error set. */
static int objective_keys(PyObject *e, const ft_problem *p, ft_objective ob, const ft_eval *ev)
{
    double v = ft_objective_value(p, ob, ev), b = ft_objective_bound(p, ev->model, ob);
    PyObject *items[4] = {PyUnicode_FromString(ft_objective_name(ob)), PyFloat_FromDouble(v), PyFloat_FromDouble(b),
                          PyFloat_FromDouble(b > 0 ? v / b : 0.0)};
    static const char *const keys[4] = {"objective", "objective_value", "objective_bound", "objective_ratio"};
    int rc = 0;
    for (int i = 0; i < 4; i++) {
        if (!items[i] || (rc == 0 && PyDict_SetItemString(e, keys[i], items[i])))
            rc = -1;
        Py_XDECREF(items[i]);
    }
    return rc;
}

/* search(problem, time_limit, compute_model='native', seed=1, threads=0,
 * max_restarts=0, strategy='search', start_from='all', patterns=None,
 * partition='auto', parts=0, progress=None, objective='latency') -> (Schedule,
 * evaluation dict, with objective, objective_value, objective_bound and
 * objective_ratio added);
 * interrupted (Ctrl-C, or an exception from progress): that exception with
 * .schedule (Schedule) and .evaluation (dict), the best found so far */
PyObject *ftpy_search(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"problem",  "time_limit", "compute_model", "seed",  "threads",  "max_restarts",
                             "strategy", "start_from", "patterns",      "partition", "parts", "progress", "objective", NULL};
    PyObject *pobj, *limit = Py_None, *patterns = Py_None, *files = NULL, *progress = NULL;
    ft_search_opts o;
    ft_search_opts_init(&o);
    long long seed = 1, restarts = 0;
    int threads = 0, parts = 0;
    const char *strategy = NULL, *starts = NULL, *method = NULL, *objective = NULL, *paths[FTPY_MAX_PATTERN_FILES];
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!|OO&LiLzzOziO&z:search", kwlist, &FtProblem_Type, &pobj, &limit,
                                     ftpy_model_converter, &o.model, &seed, &threads, &restarts, &strategy, &starts,
                                     &patterns, &method, &parts, ftpy_progress_converter, &progress, &objective))
        return NULL;
    if (objective && ft_objective_parse(objective, &o.objective))
        return ftpy_usage("objective is '%s', must be 'latency', 'energy' or 'edp'", objective);
    if (strategy_opts(&o, strategy, starts, method, parts, patterns, &files, paths)) {
        Py_XDECREF(files);
        return NULL;
    }
    const ft_problem *p = ((FtProblem *)pobj)->p;
    if (limit == Py_None)
        o.time_limit = ft_contest_time_limit(p->nops);
    else {
        if (!PyLong_Check(limit) && !PyFloat_Check(limit))
            return PyErr_Format(PyExc_TypeError, "time_limit must be a number of seconds or None, not %.100s",
                                Py_TYPE(limit)->tp_name);
        o.time_limit = PyFloat_AsDouble(limit);
        if (o.time_limit == -1.0 && PyErr_Occurred())
            return NULL;
        if (!(o.time_limit > 0) || !isfinite(o.time_limit))
            return ftpy_usage("time_limit is %g, must be a positive number of seconds", o.time_limit);
    }
    if (seed < 0)
        return ftpy_usage("seed is %lld, must be 0 or more", seed);
    if (threads < 0)
        return ftpy_usage("threads is %d, must be 0 (one per core) or more", threads);
    if (restarts < 0)
        return ftpy_usage("max_restarts is %lld, must be 0 (no limit) or more", restarts);
    o.seed = (uint64_t)seed;
    o.threads = threads;
    o.max_restarts = restarts;
    char pdir[4096];
    o.patterns_dir = ftpy_patterns_dir(pdir, sizeof pdir);
    /* Ctrl-C and progress: on_progress polls (watch_poll); an exception
     * there sets w.stop, which ends the search with its best so far */
    watch w = {progress, 0, NULL, NULL, NULL};
    o.on_progress = search_on_progress;
    o.ctx = &w;
    o.stop = &w.stop;
    ft_schedule *s = NULL;
    ft_eval ev;
    ft_status st;
    int rc;
    memset(&ev, 0, sizeof ev);
    Py_BEGIN_ALLOW_THREADS
    rc = ft_search(p, &o, &s, &ev, &st);
    Py_END_ALLOW_THREADS
    Py_XDECREF(files);
    PyObject *e = NULL, *so = NULL, *r = NULL;
    if (rc != FT_OK) {
        if (w.stop) /* the interrupt, not the failure it caused */
            return ftpy_watch_raise(&w, NULL);
        return ftpy_raise_status(&st);
    }
    /* the gap's evidence after the search: its share of the limit, as
     * `fusetile schedule` (FT_GAP_EVIDENCE_SHARE) */
    e = eval_dict(p, s, &ev, FT_GAP_EVIDENCE_SHARE * o.time_limit);
    if (e && objective_keys(e, p, o.objective, &ev)) {
        Py_CLEAR(e);
    }
    ft_eval_free(&ev);
    if (!e) {
        ft_schedule_free(s);
        goto out;
    }
    if (!(so = ftpy_schedule_new(s)))
        goto out;
    if (w.stop)
        ftpy_watch_raise(&w, "schedule", so, "evaluation", e, NULL);
    else
        r = PyTuple_Pack(2, so, e);
out:
    if (!r && w.stop && w.exc_type) { /* failed before raising the interrupt */
        Py_CLEAR(w.exc_type);
        Py_CLEAR(w.exc_value);
        Py_CLEAR(w.exc_tb);
    }
    Py_XDECREF(so);
    Py_XDECREF(e);
    return r;
}

/* evaluate(problem, schedule, compute_model='native', progress=None,
 * gap_time=FT_GAP_EVALUATE_SECONDS) -> dict; gap_time: the seconds the
 * gap's evidence may take, 0 for none (as evaluate's --gap-time). */
PyObject *ftpy_evaluate(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"problem", "schedule", "compute_model", "progress", "gap_time", NULL};
    PyObject *pobj, *sobj, *progress = NULL;
    ft_compute_model model = FT_COMPUTE_NATIVE;
    double gap_time = FT_GAP_EVALUATE_SECONDS;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!O!|O&O&d:evaluate", kwlist, &FtProblem_Type, &pobj, &FtSchedule_Type, &sobj,
                                     ftpy_model_converter, &model, ftpy_progress_converter, &progress, &gap_time))
        return NULL;
    if (!(gap_time >= 0) || !isfinite(gap_time))
        return ftpy_usage("gap_time is %g, must be a number of seconds of at least 0", gap_time);
    const ft_problem *p = ((FtProblem *)pobj)->p;
    const ft_schedule *s = ((FtSchedule *)sobj)->s;
    ft_eval e;
    ft_status st;
    int rc;
    watch w = {progress, 0, NULL, NULL, NULL};
    watch_steps ws = {&w, "evaluate"};
    Py_BEGIN_ALLOW_THREADS
    rc = ft_evaluate_progress(p, s, model, ftpy_steps_progress, &ws, &e, &st);
    Py_END_ALLOW_THREADS
    if (w.stop) {
        if (rc == FT_OK)
            ft_eval_free(&e);
        return ftpy_watch_raise(&w, NULL);
    }
    if (rc == FT_EINVALID) {
        /* as `fusetile evaluate` and the Tcl binding say it */
        char full[600];
        snprintf(full, sizeof full, "invalid schedule (%s): %s", ft_reason_name(st.reason), st.msg);
        return ftpy_raise(FtInvalidError, "invalid", rc, ft_reason_name(st.reason), st.sg, st.tile, st.step, full);
    }
    if (rc != FT_OK)
        return ftpy_raise_status(&st);
    PyObject *d = eval_dict(p, s, &e, gap_time);
    ft_eval_free(&e);
    return d;
}

int ftpy_path_or_none(PyObject *o, void *out)
{
    if (o == Py_None) {
        *(PyObject **)out = NULL;
        return 1;
    }
    return PyUnicode_FSConverter(o, out);
}

/* simulate(problem, schedule, compute_model='native', trace=None, vcd=None,
 * progress=None, effects=True, target_name=None, clock_hz=0, detail='waves') -> dict */
PyObject *ftpy_simulate(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"problem", "schedule", "compute_model", "trace", "vcd", "progress", "effects", "target_name",
                             "clock_hz", "detail", NULL};
    PyObject *pobj, *sobj, *trace = NULL, *vcd = NULL, *progress = NULL;
    const char *detail = "waves";
    int effects = 1;
    ft_sim_opts so;
    ft_sim_opts_init(&so);
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!O!|O&O&O&O&pzds:simulate", kwlist, &FtProblem_Type, &pobj, &FtSchedule_Type,
                                     &sobj, ftpy_model_converter, &so.model, ftpy_path_or_none, &trace, ftpy_path_or_none, &vcd,
                                     ftpy_progress_converter, &progress, &effects, &so.target, &so.clock_hz, &detail))
        return NULL;
    if (strcmp(detail, "waves") != 0 && strcmp(detail, "steps") != 0) {
        Py_XDECREF(trace);
        Py_XDECREF(vcd);
        return ftpy_usage("detail is '%s', must be 'waves' (a span per subgraph and tile) or 'steps' (every step)", detail);
    }
    so.trace_detail = strcmp(detail, "steps") == 0 ? FT_TRACE_DETAIL_STEPS : FT_TRACE_DETAIL_WAVES;
    if (!(so.clock_hz >= 0) || !isfinite(so.clock_hz)) {
        Py_XDECREF(trace);
        Py_XDECREF(vcd);
        return ftpy_usage("clock_hz is %g, must be 0 (cost units) or a positive frequency", so.clock_hz);
    }
    watch w = {progress, 0, NULL, NULL, NULL};
    watch_steps wsr = {&w, "simulate"}, wse = {&w, "simulate effects off"};
    so.progress = ftpy_steps_progress;
    so.progress_ctx = &wsr;
    so.trace_json = trace ? PyBytes_AS_STRING(trace) : NULL;
    so.trace_vcd = vcd ? PyBytes_AS_STRING(vcd) : NULL;
    const ft_problem *p = ((FtProblem *)pobj)->p;
    const ft_schedule *s = ((FtSchedule *)sobj)->s;
    ft_sim_result r;
    ft_sim_effects rep;
    char msg[512] = "";
    ft_sim *sim;
    int rc;
    memset(&r, 0, sizeof r);
    memset(&rep, 0, sizeof rep);
    Py_BEGIN_ALLOW_THREADS
    rc = ftpy_sim_acquire(&sim, msg, sizeof msg);
    if (rc == FT_OK) {
        rc = ft_sim_run(sim, p, s, &so, &r);
        if (rc != FT_OK)
            snprintf(msg, sizeof msg, "%s", ft_sim_errmsg(sim));
        else if (effects) {
            /* the same replay with each effect of the target off, as
             * `fusetile simulate` (the library's ft_sim_effects_run) */
            so.progress_ctx = &wse;
            rc = ft_sim_effects_run(sim, p, s, &so, &rep);
            if (rc != FT_OK)
                snprintf(msg, sizeof msg, "simulator: %s",
                         rc == FT_ENOMEM ? "out of memory" : "the replays with effects off were interrupted");
        }
        ftpy_sim_release();
    }
    Py_END_ALLOW_THREADS
    Py_XDECREF(trace);
    Py_XDECREF(vcd);
    PyObject *d = NULL;
    if (w.stop)
        ftpy_watch_raise(&w, NULL);
    else if (rc == FT_EINVALID) {
        char full[600];
        snprintf(full, sizeof full, "invalid schedule (%s): simulator: %s", ft_reason_name(r.reason), msg);
        ftpy_raise(FtInvalidError, "invalid", rc, ft_reason_name(r.reason), r.fail_sg, r.fail_tile, r.fail_step, full);
    } else if (rc == FT_ENOMEM)
        PyErr_NoMemory();
    else if (rc != FT_OK)
        ftpy_raise(FtInputError, "input", rc, NULL, -1, -1, -1, msg);
    else
        d = sim_dict(p, s, &r, so.model, &rep);
    ft_sim_effects_free(&rep);
    ft_sim_result_free(&r);
    return d;
}

/* ------------------------------------------------------------ sweeps */

static PyObject *sweep_progress_dict(const void *arg)
{
    const ft_sweep_counts *c = arg;
    int finished = c->skipped + c->done + c->failed;
    return Py_BuildValue("{sssisisisisisdsd}", "what", "sweep", "selected", c->selected, "skipped", c->skipped, "ok",
                         c->done, "failed", c->failed, "pending", c->pending, "elapsed", c->elapsed, "fraction",
                         c->selected > 0 ? (double)finished / c->selected : 1.0);
}

/* The pool's progress callback (in this process, about 4 times a second):
 * the caller's progress callable; an exception from it stops the pool as
 * Ctrl-C does (SIGINT to this process, which the pool's handler takes). */
static void sweep_on_progress(void *ctx, const ft_sweep_counts *c, int final)
{
    watch *w = ctx;
    if (w->stop || final)
        return;
    if (watch_poll(w, sweep_progress_dict, c))
        kill(getpid(), SIGINT);
}

/* sweep_run(path, text=None, db=None, jobs=0, progress=None) -> dict db,
 * selected, skipped, ok, failed, interrupted, seconds, keys (the runs'
 * keys, in order) */
PyObject *ftpy_sweep(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"path", "text", "db", "jobs", "progress", NULL};
    PyObject *path = NULL, *db = NULL, *progress = NULL;
    const char *text = NULL;
    ft_sweep_exec_opts o;
    ft_sweep_exec_opts_init(&o);
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|zO&iO&:sweep_run", kwlist, PyUnicode_FSConverter, &path, &text,
                                     ftpy_path_or_none, &db, &o.jobs, ftpy_progress_converter, &progress))
        return NULL;
    PyObject *r = NULL;
    ft_sweep *sw = NULL;
    char *dbdef = NULL;
    ft_status st;
    if (o.jobs < 0 || o.jobs > FT_SWEEP_MAX_JOBS) {
        ftpy_usage("jobs is %d, must be 0 (one per core) to %d", o.jobs, FT_SWEEP_MAX_JOBS);
        goto out;
    }
    if ((text ? ft_sweep_parse(text, PyBytes_AS_STRING(path), &sw, &st) : ft_sweep_load(PyBytes_AS_STRING(path), &sw, &st)) !=
        FT_OK) {
        ftpy_raise_status(&st);
        goto out;
    }
    if (!db && !(dbdef = ft_sweep_default_db(sw->path))) {
        PyErr_NoMemory();
        goto out;
    }
    const char *dbpath = db ? PyBytes_AS_STRING(db) : dbdef;
    watch w = {progress, 0, NULL, NULL, NULL};
    o.on_progress = sweep_on_progress;
    o.ctx = &w;
    ft_sweep_counts c;
    int rc;
    memset(&c, 0, sizeof c);
    Py_BEGIN_ALLOW_THREADS
    rc = ft_sweep_execute(sw, dbpath, &o, &c, &st);
    Py_END_ALLOW_THREADS
    if (w.stop) {
        /* the progress callable's exception, rather than KeyboardInterrupt */
        PyErr_Restore(w.exc_type, w.exc_value, w.exc_tb);
        goto out;
    }
    if (rc != FT_OK) {
        ftpy_raise_status(&st);
        goto out;
    }
    PyObject *keys = PyList_New(sw->nruns);
    for (int i = 0; keys && i < sw->nruns; i++) {
        PyObject *k = ftpy_str_or_none(sw->runs[i].key);
        if (!k) {
            Py_CLEAR(keys);
            break;
        }
        PyList_SET_ITEM(keys, i, k);
    }
    if (!keys)
        goto out;
    r = Py_BuildValue("{sssisisisisOsdsN}", "db", dbpath, "selected", c.selected, "skipped", c.skipped, "ok", c.done,
                      "failed", c.failed, "interrupted", c.interrupted ? Py_True : Py_False, "seconds", c.elapsed, "keys",
                      keys);
out:
    free(dbdef);
    ft_sweep_free(sw);
    Py_XDECREF(path);
    Py_XDECREF(db);
    return r;
}
