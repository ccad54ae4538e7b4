/* _fusetile.c - the Python extension module fusetile._fusetile: its exceptions, loaders and shared helpers (the objects are in ft_objects.c, the computations in ft_run.c). */
#include "_fusetile.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

PyObject *FtError;
PyObject *FtInputError;
PyObject *FtInvalidError;
PyObject *FtUsageError;

/* ------------------------------------------------------------ errors */

static int set_attr(PyObject *o, const char *name, PyObject *v)
{
    if (!v)
        return -1;
    int rc = PyObject_SetAttrString(o, name, v);
    Py_DECREF(v);
    return rc;
}

static PyObject *int_or_none(int64_t v)
{
    if (v < 0)
        Py_RETURN_NONE;
    return PyLong_FromLongLong((long long)v);
}

PyObject *ftpy_raise(PyObject *type, const char *kind, int code, const char *reason, int sg, int64_t tile,
                     int64_t step, const char *msg)
{
    PyObject *text = PyUnicode_DecodeUTF8(msg, (Py_ssize_t)strlen(msg), "replace");
    if (!text)
        return NULL;
    PyObject *exc = PyObject_CallFunctionObjArgs(type, text, NULL);
    if (exc && (PyObject_SetAttrString(exc, "message", text) < 0 || set_attr(exc, "kind", PyUnicode_FromString(kind)) < 0 ||
                set_attr(exc, "code", PyLong_FromLong(code)) < 0 || set_attr(exc, "reason", ftpy_str_or_none(reason)) < 0 ||
                set_attr(exc, "subgraph", int_or_none(sg)) < 0 || set_attr(exc, "tile", int_or_none(tile)) < 0 ||
                set_attr(exc, "step", int_or_none(step)) < 0))
        Py_CLEAR(exc);
    Py_DECREF(text);
    if (!exc)
        return NULL;
    PyErr_SetObject(type, exc);
    Py_DECREF(exc);
    return NULL;
}

PyObject *ftpy_raise_status(const ft_status *st)
{
    switch (st->code) {
    case FT_ENOMEM:
        return PyErr_NoMemory();
    case FT_EINVALID:
        return ftpy_raise(FtInvalidError, "invalid", st->code, ft_reason_name(st->reason), st->sg, st->tile, st->step,
                          st->msg);
    default:
        return ftpy_raise(FtInputError, "input", st->code, NULL, -1, -1, -1, st->msg[0] ? st->msg : "input error");
    }
}

PyObject *ftpy_usage(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ftpy_raise(FtUsageError, "usage", FT_EINPUT, NULL, -1, -1, -1, msg);
}

/* ------------------------------------------------------------ helpers */

int ftpy_put(PyObject *d, const char *key, PyObject *v)
{
    if (!v)
        return -1;
    int rc = PyDict_SetItemString(d, key, v);
    Py_DECREF(v);
    return rc;
}

PyObject *ftpy_str_or_none(const char *s)
{
    if (!s)
        Py_RETURN_NONE;
    return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "replace");
}

PyObject *ftpy_int_list(const int *a, int n)
{
    PyObject *l = PyList_New(n);
    for (int i = 0; l && i < n; i++) {
        PyObject *v = PyLong_FromLong(a[i]);
        if (!v) {
            Py_CLEAR(l);
            break;
        }
        PyList_SET_ITEM(l, i, v);
    }
    return l;
}

PyObject *ftpy_wide_list(const int64_t *a, int64_t n)
{
    PyObject *l = PyList_New((Py_ssize_t)n);
    for (int64_t i = 0; l && i < n; i++) {
        PyObject *v = PyLong_FromLongLong((long long)a[i]);
        if (!v) {
            Py_CLEAR(l);
            break;
        }
        PyList_SET_ITEM(l, (Py_ssize_t)i, v);
    }
    return l;
}

PyObject *ftpy_json_loads(const char *text)
{
    PyObject *json = PyImport_ImportModule("json");
    if (!json)
        return NULL;
    PyObject *r = PyObject_CallMethod(json, "loads", "s", text);
    Py_DECREF(json);
    return r;
}

int ftpy_model_converter(PyObject *o, void *out)
{
    if (o == Py_None)
        return 1;
    if (!PyUnicode_Check(o)) {
        PyErr_Format(PyExc_TypeError, "compute_model must be a str ('native' or 'op'), not %.100s", Py_TYPE(o)->tp_name);
        return 0;
    }
    const char *name = PyUnicode_AsUTF8(o);
    if (!name)
        return 0;
    if (ft_compute_model_parse(name, out) != 0) {
        ftpy_usage("compute_model is '%.100s', must be native or op", name);
        return 0;
    }
    return 1;
}

/* ------------------------------------------------------------ loaders */

/* load_problem(path) */
static PyObject *py_load_problem(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *path;
    if (!PyArg_ParseTuple(args, "O&:load_problem", PyUnicode_FSConverter, &path))
        return NULL;
    ft_problem *p = NULL;
    ft_status st;
    int rc = ft_problem_load(PyBytes_AS_STRING(path), &p, &st);
    Py_DECREF(path);
    if (rc != FT_OK)
        return ftpy_raise_status(&st);
    return ftpy_problem_new(p);
}

/* The arguments (text, name='<text>') of parse_WHAT into *text and *name:
 * 0, or -1 with an exception (InputError for a text with a NUL). */
static int text_args(PyObject *args, PyObject *kw, const char *what, const char **text, const char **name)
{
    static char *kwlist[] = {"text", "name", NULL};
    char fmt[64], nul[64];
    Py_ssize_t len;
    snprintf(fmt, sizeof fmt, "s#|s:parse_%s", what);
    *name = "<text>";
    if (!PyArg_ParseTupleAndKeywords(args, kw, fmt, kwlist, text, &len, name))
        return -1;
    if ((size_t)len != strlen(*text)) {
        snprintf(nul, sizeof nul, "%s text contains a NUL character", what);
        ftpy_raise(FtInputError, "input", FT_EINPUT, NULL, -1, -1, -1, nul);
        return -1;
    }
    return 0;
}

/* parse_problem(text, name='<text>') */
static PyObject *py_parse_problem(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    const char *text, *name;
    if (text_args(args, kw, "problem", &text, &name))
        return NULL;
    ft_problem *p = NULL;
    ft_status st;
    if (ft_problem_parse(text, name, &p, &st) != FT_OK)
        return ftpy_raise_status(&st);
    return ftpy_problem_new(p);
}

/* load_schedule(path) */
static PyObject *py_load_schedule(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *path;
    if (!PyArg_ParseTuple(args, "O&:load_schedule", PyUnicode_FSConverter, &path))
        return NULL;
    ft_schedule *s = NULL;
    ft_status st;
    int rc = ft_schedule_load(PyBytes_AS_STRING(path), &s, &st);
    Py_DECREF(path);
    if (rc != FT_OK)
        return ftpy_raise_status(&st);
    return ftpy_schedule_new(s);
}

/* parse_schedule(text, name='<text>') */
static PyObject *py_parse_schedule(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    const char *text, *name;
    if (text_args(args, kw, "schedule", &text, &name))
        return NULL;
    ft_schedule *s = NULL;
    ft_status st;
    if (ft_schedule_parse(text, name, &s, &st) != FT_OK)
        return ftpy_raise_status(&st);
    return ftpy_schedule_new(s);
}

/* load_target(path): a target file, or a shipped target's name
 * (ft_target_find, with $FUSETILE_TARGETS as the search path) */
static PyObject *py_load_target(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *path;
    if (!PyArg_ParseTuple(args, "O&:load_target", PyUnicode_FSConverter, &path))
        return NULL;
    ft_target *t = NULL;
    ft_status st;
    char found[PATH_MAX];
    int rc = ft_target_find(PyBytes_AS_STRING(path), getenv("FUSETILE_TARGETS"), found, sizeof found, &st);
    if (rc == FT_OK)
        rc = ft_target_load(found, &t, &st);
    Py_DECREF(path);
    if (rc != FT_OK)
        return ftpy_raise_status(&st);
    return ftpy_target_new(t);
}

/* parse_target(text, name='<text>') */
static PyObject *py_parse_target(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    const char *text, *name;
    if (text_args(args, kw, "target", &text, &name))
        return NULL;
    ft_target *t = NULL;
    ft_status st;
    if (ft_target_parse(text, name, &t, &st) != FT_OK)
        return ftpy_raise_status(&st);
    return ftpy_target_new(t);
}

/* contest_time_limit(nops) */
static PyObject *py_contest_time_limit(PyObject *self, PyObject *args)
{
    (void)self;
    int nops;
    if (!PyArg_ParseTuple(args, "i:contest_time_limit", &nops))
        return NULL;
    return PyFloat_FromDouble(ft_contest_time_limit(nops));
}

/* ------------------------------------------------------------ module */

#define FN(f) ((PyCFunction)(void (*)(void))(f))

static PyMethodDef module_methods[] = {
    {"load_problem", FN(py_load_problem), METH_VARARGS,
     "load_problem(path) -> Problem\n\nLoad and check a problem file (SPEC.md section 1)."},
    {"parse_problem", FN(py_parse_problem), METH_VARARGS | METH_KEYWORDS,
     "parse_problem(text, name='<text>') -> Problem\n\nA problem from JSON text; name is used in messages."},
    {"load_schedule", FN(py_load_schedule), METH_VARARGS,
     "load_schedule(path) -> Schedule\n\nLoad a schedule file (SPEC.md section 2; checked against a problem later)."},
    {"parse_schedule", FN(py_parse_schedule), METH_VARARGS | METH_KEYWORDS,
     "parse_schedule(text, name='<text>') -> Schedule\n\nA schedule from JSON text."},
    {"load_target", FN(py_load_target), METH_VARARGS,
     "load_target(path) -> Target\n\nLoad and check a target file (targets/*.cfg)."},
    {"parse_target", FN(py_parse_target), METH_VARARGS | METH_KEYWORDS,
     "parse_target(text, name='<text>') -> Target\n\nA target from the text of a target file (libconfig); name is used in "
     "messages."},
    {"contest_time_limit", FN(py_contest_time_limit), METH_VARARGS,
     "contest_time_limit(nops) -> float\n\nThe contest's time limit in seconds for a problem of nops ops."},
    {"search", FN(ftpy_search), METH_VARARGS | METH_KEYWORDS,
     "search(problem, time_limit, compute_model='native', seed=1, threads=0, max_restarts=0, strategy='search',\n"
     "       start_from='all', patterns=None, partition='auto', parts=0, progress=None) -> (Schedule, dict)\n\n"
     "Run the scheduler (ft_search) with the GIL released; returns the schedule and its evaluation.  progress(dict) is "
     "called about every 0.25 s; Ctrl-C (or an exception from progress) ends the search with its best schedule so far, "
     "attached to the exception as .schedule and .evaluation."},
    {"evaluate", FN(ftpy_evaluate), METH_VARARGS | METH_KEYWORDS,
     "evaluate(problem, schedule, compute_model='native', progress=None) -> dict\n\nExact cost-model evaluation "
     "(ft_evaluate); Ctrl-C stops a long one."},
    {"simulate", FN(ftpy_simulate), METH_VARARGS | METH_KEYWORDS,
     "simulate(problem, schedule, compute_model='native', trace=None, vcd=None, progress=None, effects=True,\n"
     "         target_name=None, clock_hz=0) -> dict\n\n"
     "Replay in the SystemC simulator, with the analytic figures beside and (effects) the replays with each timing "
     "effect off, as `fusetile simulate --json` (one replay at a time per process; Ctrl-C stops it)."},
    {"sweep_run", FN(ftpy_sweep), METH_VARARGS | METH_KEYWORDS,
     "sweep_run(path, text=None, db=None, jobs=0, progress=None) -> dict db selected skipped ok failed interrupted "
     "seconds keys\n\nRun a sweep file (or text, read as if it were the file path) on forked workers into its SQLite "
     "database (ft_sweep_execute); Ctrl-C stops the pool (interrupted True)."},
    {"report", FN(ftpy_report), METH_VARARGS | METH_KEYWORDS,
     "report(problem, schedule=None, target=None, path=None, keep_costs=False, compute_model='native',\n"
     "       time_limit=10, strategies='all', threads=0, seed=1) -> str\n\n"
     "The HTML report (ft_report_html); written to path when given.  The GIL is released while it runs."},
    {NULL, NULL, 0, NULL}};

static void module_free(void *m)
{
    (void)m;
    ftpy_run_free();
}

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "fusetile._fusetile",
    .m_doc = "The C core of the fusetile package: problems, schedules, targets, the scheduler, the exact cost model "
             "and the simulator (libfusetile's public API).",
    .m_size = -1,
    .m_methods = module_methods,
    .m_free = module_free,
};

/* m.name = v, v's reference kept by the caller (PyModule_AddObjectRef of
 * Python 3.10, for older ones too). */
static int add_ref(PyObject *m, const char *name, PyObject *v)
{
    Py_INCREF(v);
    if (PyModule_AddObject(m, name, v) < 0) {
        Py_DECREF(v);
        return -1;
    }
    return 0;
}

/* An exception class fusetile.NAME with the given bases and doc. */
static PyObject *new_error(PyObject *m, const char *name, PyObject *bases, const char *doc)
{
    char qual[64];
    snprintf(qual, sizeof qual, "fusetile.%s", name);
    /* class attributes: what an instance raised from Python (without
     * ftpy_raise) reads */
    PyObject *dict = Py_BuildValue("{sOsOsOsOsOsOsO}", "message", Py_None, "kind", Py_None, "code", Py_None, "reason",
                                   Py_None, "subgraph", Py_None, "tile", Py_None, "step", Py_None);
    if (!dict)
        return NULL;
    PyObject *e = PyErr_NewExceptionWithDoc(qual, doc, bases, dict);
    Py_DECREF(dict);
    if (e && add_ref(m, name, e) < 0)
        Py_CLEAR(e);
    return e;
}

PyMODINIT_FUNC PyInit__fusetile(void)
{
    PyObject *m = PyModule_Create(&module_def);
    if (!m)
        return NULL;
    PyTypeObject *types[] = {&FtProblem_Type, &FtSchedule_Type, &FtTarget_Type};
    const char *type_names[] = {"Problem", "Schedule", "Target"};
    for (int i = 0; i < 3; i++)
        if (PyType_Ready(types[i]) < 0 || add_ref(m, type_names[i], (PyObject *)types[i]) < 0)
            goto fail;
    if (!(FtError = new_error(m, "Error", NULL,
                              "A fusetile error: .message (the library's one-line message, naming the file, field and "
                              "index), .kind ('input', 'invalid', 'usage'), .code (the library's ft_code), and for an "
                              "invalid schedule .reason (ft_reason_name: 'oom', 'op-not-covered', ...) and where: "
                              ".subgraph, .tile, .step (None when not applicable).")))
        goto fail;
    if (!(FtInputError = new_error(m, "InputError", FtError,
                                   "A file or text that cannot be read or is not a valid problem, schedule or target "
                                   "(FT_EINPUT).")))
        goto fail;
    if (!(FtInvalidError = new_error(m, "InvalidScheduleError", FtError,
                                     "A schedule that breaks SPEC.md section 2, or no valid schedule (FT_EINVALID); "
                                     ".reason names why.")))
        goto fail;
    PyObject *bases = PyTuple_Pack(2, FtError, PyExc_ValueError);
    if (!bases)
        goto fail;
    FtUsageError = new_error(m, "UsageError", bases,
                             "A bad argument value (compute model, time limit, ...); also a ValueError.");
    Py_DECREF(bases);
    if (!FtUsageError || PyModule_AddStringConstant(m, "__version__", FT_VERSION) < 0 ||
        PyModule_AddIntConstant(m, "LABEL_MAX", FT_LABEL_MAX) < 0 || ftpy_run_init() < 0)
        goto fail;
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
