/* ft_run.c - the computations of fusetile._fusetile: search (ft_search), evaluate (ft_evaluate) and simulate (the SystemC simulator), each with the GIL released, and their results as dicts. */
#include "_fusetile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pythread.h"

/* Largest relative difference between simulated and analytic latencies
 * that counts as agreement (SPEC.md: 1e-9), as `fusetile simulate`. */
#define AGREE_REL 1e-9

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
        ftpy_put(d, "memory_time", PyFloat_FromDouble(r->memory_time)) < 0)
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

/* The evaluation e of schedule s of p, as `fusetile evaluate --json`. */
static PyObject *eval_dict(const ft_problem *p, const ft_schedule *s, const ft_eval *e)
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
        ftpy_put(d, "scored", PyBool_FromLong(e->scored)) < 0)
        goto fail;
    return with_subgraphs(d, sgs);
fail:
    Py_XDECREF(d);
    Py_XDECREF(sgs);
    return NULL;
}

static double rel_diff(double sim, double ana)
{
    if (isnan(sim) || isnan(ana))
        return INFINITY;
    double d = fabs(sim - ana), m = fabs(ana);
    return d == 0 ? 0 : m > 0 ? d / m : INFINITY;
}

/* A float, or None for NaN (an analytic figure that was not computed). */
static PyObject *num_or_none(double x)
{
    if (isnan(x))
        Py_RETURN_NONE;
    return PyFloat_FromDouble(x);
}

/* The replay r of schedule s of p, as `fusetile simulate --json` (without
 * the target-effect replays). */
static PyObject *sim_dict(const ft_problem *p, const ft_schedule *s, const ft_sim_result *r, ft_compute_model model)
{
    int agree = r->analytic_reason == FT_R_NONE && rel_diff(r->total_simulated, r->total_analytic) <= AGREE_REL;
    PyObject *d = PyDict_New(), *sgs = PyList_New(r->nsubgraphs);
    if (!d || !sgs)
        goto fail;
    for (int i = 0; i < r->nsubgraphs; i++) {
        const ft_sim_sg *q = &r->sg[i];
        PyObject *g = PyDict_New();
        if (!g || put_sg_head(g, p, &s->sg[i], i) < 0 || ftpy_put(g, "steps", PyLong_FromLongLong((long long)q->steps)) < 0 ||
            ftpy_put(g, "simulated", PyFloat_FromDouble(q->simulated)) < 0 ||
            ftpy_put(g, "analytic", num_or_none(q->analytic)) < 0 ||
            ftpy_put(g, "difference", num_or_none(q->simulated - q->analytic)) < 0 ||
            ftpy_put(g, "peak_occupancy", PyLong_FromLongLong((long long)q->peak_occupancy)) < 0 ||
            ftpy_put(g, "channel_busy", PyFloat_FromDouble(q->channel_busy)) < 0 ||
            ftpy_put(g, "compute_busy", PyFloat_FromDouble(q->compute_busy)) < 0) {
            Py_XDECREF(g);
            goto fail;
        }
        PyList_SET_ITEM(sgs, i, g);
        if (rel_diff(q->simulated, q->analytic) > AGREE_REL)
            agree = 0;
    }
    if (ftpy_put(d, "compute_model", PyUnicode_FromString(ft_compute_model_name(model))) < 0 ||
        ftpy_put(d, "total_simulated", PyFloat_FromDouble(r->total_simulated)) < 0 ||
        ftpy_put(d, "total_analytic", num_or_none(r->total_analytic)) < 0 ||
        ftpy_put(d, "difference", num_or_none(r->total_simulated - r->total_analytic)) < 0 ||
        ftpy_put(d, "relative_difference", num_or_none(rel_diff(r->total_simulated, r->total_analytic))) < 0 ||
        ftpy_put(d, "agree", PyBool_FromLong(agree)) < 0 || ftpy_put(d, "steps", PyLong_FromLongLong((long long)r->steps)) < 0 ||
        ftpy_put(d, "analytic_reason", ftpy_str_or_none(r->analytic_reason ? ft_reason_name(r->analytic_reason) : NULL)) < 0)
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

/* search(problem, time_limit, compute_model='native', seed=1, threads=0,
 * max_restarts=0, strategy='search', start_from='all', patterns=None,
 * partition='auto', parts=0) -> (Schedule, evaluation dict) */
PyObject *ftpy_search(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"problem", "time_limit", "compute_model", "seed",      "threads", "max_restarts",
                             "strategy", "start_from", "patterns",     "partition", "parts",   NULL};
    PyObject *pobj, *limit = Py_None, *patterns = Py_None, *files = NULL;
    ft_search_opts o;
    ft_search_opts_init(&o);
    long long seed = 1, restarts = 0;
    int threads = 0, parts = 0;
    const char *strategy = NULL, *starts = NULL, *method = NULL, *paths[FTPY_MAX_PATTERN_FILES];
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!|OO&LiLzzOzi:search", kwlist, &FtProblem_Type, &pobj, &limit,
                                     ftpy_model_converter, &o.model, &seed, &threads, &restarts, &strategy, &starts,
                                     &patterns, &method, &parts))
        return NULL;
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
    ft_schedule *s = NULL;
    ft_eval ev;
    ft_status st;
    int rc;
    memset(&ev, 0, sizeof ev);
    Py_BEGIN_ALLOW_THREADS
    rc = ft_search(p, &o, &s, &ev, &st);
    Py_END_ALLOW_THREADS
    Py_XDECREF(files);
    if (rc != FT_OK)
        return ftpy_raise_status(&st);
    PyObject *e = eval_dict(p, s, &ev);
    ft_eval_free(&ev);
    if (!e) {
        ft_schedule_free(s);
        return NULL;
    }
    PyObject *so = ftpy_schedule_new(s);
    if (!so) {
        Py_DECREF(e);
        return NULL;
    }
    PyObject *r = PyTuple_Pack(2, so, e);
    Py_DECREF(so);
    Py_DECREF(e);
    return r;
}

/* evaluate(problem, schedule, compute_model='native') -> dict */
PyObject *ftpy_evaluate(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"problem", "schedule", "compute_model", NULL};
    PyObject *pobj, *sobj;
    ft_compute_model model = FT_COMPUTE_NATIVE;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!O!|O&:evaluate", kwlist, &FtProblem_Type, &pobj, &FtSchedule_Type, &sobj,
                                     ftpy_model_converter, &model))
        return NULL;
    const ft_problem *p = ((FtProblem *)pobj)->p;
    const ft_schedule *s = ((FtSchedule *)sobj)->s;
    ft_eval e;
    ft_status st;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = ft_evaluate(p, s, model, &e, &st);
    Py_END_ALLOW_THREADS
    if (rc == FT_EINVALID) {
        /* as `fusetile evaluate` and the Tcl binding say it */
        char full[600];
        snprintf(full, sizeof full, "invalid schedule (%s): %s", ft_reason_name(st.reason), st.msg);
        return ftpy_raise(FtInvalidError, "invalid", rc, ft_reason_name(st.reason), st.sg, st.tile, st.step, full);
    }
    if (rc != FT_OK)
        return ftpy_raise_status(&st);
    PyObject *d = eval_dict(p, s, &e);
    ft_eval_free(&e);
    return d;
}

/* PyArg converter: a path (str, bytes, os.PathLike) into bytes, or None
 * into NULL (with PyUnicode_FSConverter's cleanup). */
int ftpy_path_or_none(PyObject *o, void *out)
{
    if (o == Py_None) {
        *(PyObject **)out = NULL;
        return 1;
    }
    return PyUnicode_FSConverter(o, out);
}

/* simulate(problem, schedule, compute_model='native', trace=None, vcd=None) -> dict */
PyObject *ftpy_simulate(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"problem", "schedule", "compute_model", "trace", "vcd", NULL};
    PyObject *pobj, *sobj, *trace = NULL, *vcd = NULL;
    ft_sim_opts so;
    ft_sim_opts_init(&so);
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!O!|O&O&O&:simulate", kwlist, &FtProblem_Type, &pobj, &FtSchedule_Type,
                                     &sobj, ftpy_model_converter, &so.model, ftpy_path_or_none, &trace, ftpy_path_or_none, &vcd))
        return NULL;
    so.trace_json = trace ? PyBytes_AS_STRING(trace) : NULL;
    so.trace_vcd = vcd ? PyBytes_AS_STRING(vcd) : NULL;
    const ft_problem *p = ((FtProblem *)pobj)->p;
    const ft_schedule *s = ((FtSchedule *)sobj)->s;
    ft_sim_result r;
    char msg[512] = "";
    ft_sim *sim;
    int rc;
    memset(&r, 0, sizeof r);
    Py_BEGIN_ALLOW_THREADS
    rc = ftpy_sim_acquire(&sim, msg, sizeof msg);
    if (rc == FT_OK) {
        rc = ft_sim_run(sim, p, s, &so, &r);
        if (rc != FT_OK)
            snprintf(msg, sizeof msg, "%s", ft_sim_errmsg(sim));
        ftpy_sim_release();
    }
    Py_END_ALLOW_THREADS
    Py_XDECREF(trace);
    Py_XDECREF(vcd);
    PyObject *d = NULL;
    if (rc == FT_EINVALID) {
        char full[600];
        snprintf(full, sizeof full, "invalid schedule (%s): simulator: %s", ft_reason_name(r.reason), msg);
        ftpy_raise(FtInvalidError, "invalid", rc, ft_reason_name(r.reason), r.fail_sg, r.fail_tile, r.fail_step, full);
    } else if (rc == FT_ENOMEM)
        PyErr_NoMemory();
    else if (rc != FT_OK)
        ftpy_raise(FtInputError, "input", rc, NULL, -1, -1, -1, msg);
    else
        d = sim_dict(p, s, &r, so.model);
    ft_sim_result_free(&r);
    return d;
}
