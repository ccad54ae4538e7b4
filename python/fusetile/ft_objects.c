/* ft_objects.c - the Python types fusetile.Problem, fusetile.Schedule and fusetile.Target: read-only views of the library's models. */
#include "_fusetile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static PyObject *none_ref(void)
{
    Py_INCREF(Py_None);
    return Py_None;
}

/* ------------------------------------------------------------ problem */

PyObject *ftpy_problem_new(ft_problem *p)
{
    FtProblem *o = PyObject_New(FtProblem, &FtProblem_Type);
    if (!o) {
        ft_problem_free(p);
        return NULL;
    }
    o->p = p;
    return (PyObject *)o;
}

static void problem_dealloc(PyObject *self)
{
    ft_problem_free(((FtProblem *)self)->p);
    PyObject_Free(self);
}

static PyObject *problem_repr(PyObject *self)
{
    const ft_problem *p = ((FtProblem *)self)->p;
    return PyUnicode_FromFormat("<fusetile.Problem %s: %d ops, %d tensors>", p->name ? p->name : "?", p->nops,
                                p->ntensors);
}

/* Whether some op (which 0: name, 1: kind) or some tensor (2: name) is named. */
static int any_names(const ft_problem *p, int which)
{
    int n = which == 2 ? p->ntensors : p->nops;
    for (int i = 0; i < n; i++)
        if ((which == 2 ? p->tensors[i].name : which ? p->ops[i].kind : p->ops[i].name) != NULL)
            return 1;
    return 0;
}

/* op_names, op_kinds or tensor_names as a list (None entries for missing
 * ones), or None when the problem has none. */
static PyObject *names_list(const ft_problem *p, int which)
{
    if (!any_names(p, which))
        Py_RETURN_NONE;
    int n = which == 2 ? p->ntensors : p->nops;
    PyObject *l = PyList_New(n);
    for (int i = 0; l && i < n; i++) {
        PyObject *v = ftpy_str_or_none(which == 2 ? p->tensors[i].name : which ? p->ops[i].kind : p->ops[i].name);
        if (!v) {
            Py_CLEAR(l);
            break;
        }
        PyList_SET_ITEM(l, i, v);
    }
    return l;
}

static PyObject *op_dict(const ft_problem *p, int o)
{
    const ft_op *op = &p->ops[o];
    PyObject *d = PyDict_New();
    if (!d || ftpy_put(d, "index", PyLong_FromLong(o)) < 0 ||
        ftpy_put(d, "type", PyUnicode_FromString(op->type == FT_OP_MATMUL ? "MatMul" : "Pointwise")) < 0 ||
        ftpy_put(d, "inputs", ftpy_int_list(op->inputs, op->ninputs)) < 0 ||
        ftpy_put(d, "output", PyLong_FromLong(op->output)) < 0 ||
        ftpy_put(d, "base_cost", PyFloat_FromDouble(op->base_cost)) < 0 ||
        ftpy_put(d, "k", PyLong_FromLongLong((long long)op->k)) < 0 || ftpy_put(d, "name", ftpy_str_or_none(op->name)) < 0 ||
        ftpy_put(d, "kind", ftpy_str_or_none(op->kind)) < 0)
        Py_CLEAR(d);
    return d;
}

static PyObject *tensor_dict(const ft_problem *p, int t)
{
    const ft_tensor *x = &p->tensors[t];
    PyObject *d = PyDict_New();
    if (!d || ftpy_put(d, "index", PyLong_FromLong(t)) < 0 ||
        ftpy_put(d, "width", PyLong_FromLongLong((long long)x->width)) < 0 ||
        ftpy_put(d, "height", PyLong_FromLongLong((long long)x->height)) < 0 ||
        ftpy_put(d, "size", PyLong_FromLongLong((long long)ft_tensor_size(p, t))) < 0 ||
        ftpy_put(d, "producer", PyLong_FromLong(x->producer)) < 0 ||
        ftpy_put(d, "consumers", ftpy_int_list(x->consumers, x->nconsumers)) < 0 ||
        ftpy_put(d, "name", ftpy_str_or_none(x->name)) < 0)
        Py_CLEAR(d);
    return d;
}

/* A list of f(p, i) for i < n. */
static PyObject *dict_list(const ft_problem *p, int n, PyObject *(*f)(const ft_problem *, int))
{
    PyObject *l = PyList_New(n);
    for (int i = 0; l && i < n; i++) {
        PyObject *v = f(p, i);
        if (!v) {
            Py_CLEAR(l);
            break;
        }
        PyList_SET_ITEM(l, i, v);
    }
    return l;
}

static const char *const overlap_names[] = {"step", "none", "pipeline"};

static PyObject *problem_info(PyObject *self, PyObject *noargs)
{
    (void)noargs;
    const ft_problem *p = ((FtProblem *)self)->p;
    const ft_timing *tm = &p->timing;
    PyObject *d = PyDict_New(), *native = PyDict_New(), *timing = PyDict_New();
    if (!d || !native || !timing)
        goto fail;
    if (ftpy_put(native, "w", PyLong_FromLongLong((long long)p->native_w)) < 0 ||
        ftpy_put(native, "h", PyLong_FromLongLong((long long)p->native_h)) < 0 ||
        ftpy_put(native, "k", PyLong_FromLongLong((long long)ft_native_k(p))) < 0 ||
        ftpy_put(native, "larger", PyBool_FromLong(p->allow_larger)) < 0)
        goto fail;
    if (ftpy_put(timing, "write_bandwidth", PyFloat_FromDouble(tm->write_bandwidth)) < 0 ||
        ftpy_put(timing, "transfer_latency", PyFloat_FromDouble(tm->transfer_latency)) < 0 ||
        ftpy_put(timing, "launch_overhead", PyFloat_FromDouble(tm->launch_overhead)) < 0 ||
        ftpy_put(timing, "overlap", PyUnicode_FromString(overlap_names[(unsigned)tm->overlap % 3])) < 0 ||
        ftpy_put(timing, "duplex", PyBool_FromLong(tm->duplex)) < 0)
        goto fail;
    if (ftpy_put(d, "name", ftpy_str_or_none(p->name)) < 0 || ftpy_put(d, "nops", PyLong_FromLong(p->nops)) < 0 ||
        ftpy_put(d, "ntensors", PyLong_FromLong(p->ntensors)) < 0 ||
        ftpy_put(d, "capacity", PyFloat_FromDouble(p->capacity)) < 0 ||
        ftpy_put(d, "bandwidth", PyFloat_FromDouble(p->bandwidth)) < 0)
        goto fail;
    /* the dict takes these two: no goto fail after a failed put */
    int bad = ftpy_put(d, "native", native) < 0;
    native = NULL;
    bad |= ftpy_put(d, "timing", timing) < 0;
    timing = NULL;
    if (bad || ftpy_put(d, "inputs", ftpy_int_list(p->graph_inputs, p->ngraph_inputs)) < 0 ||
        ftpy_put(d, "outputs", ftpy_int_list(p->graph_outputs, p->ngraph_outputs)) < 0 ||
        ftpy_put(d, "topo", ftpy_int_list(p->topo, p->nops)) < 0 || ftpy_put(d, "ops", dict_list(p, p->nops, op_dict)) < 0 ||
        ftpy_put(d, "tensors", dict_list(p, p->ntensors, tensor_dict)) < 0 ||
        ftpy_put(d, "op_names", names_list(p, 0)) < 0 || ftpy_put(d, "op_kinds", names_list(p, 1)) < 0 ||
        ftpy_put(d, "tensor_names", names_list(p, 2)) < 0)
        goto fail;
    return d;
fail:
    Py_XDECREF(d);
    Py_XDECREF(native);
    Py_XDECREF(timing);
    return NULL;
}

static PyObject *problem_to_json(PyObject *self, PyObject *noargs)
{
    (void)noargs;
    char *text = ft_problem_to_json(((FtProblem *)self)->p);
    if (!text)
        return PyErr_NoMemory();
    PyObject *r = PyUnicode_FromString(text);
    free(text);
    return r;
}

static PyObject *problem_to_dict(PyObject *self, PyObject *noargs)
{
    (void)noargs;
    char *text = ft_problem_to_json(((FtProblem *)self)->p);
    if (!text)
        return PyErr_NoMemory();
    PyObject *r = ftpy_json_loads(text);
    free(text);
    return r;
}

static PyObject *problem_write(PyObject *self, PyObject *args)
{
    PyObject *path;
    if (!PyArg_ParseTuple(args, "O&:write", PyUnicode_FSConverter, &path))
        return NULL;
    ft_status st;
    int rc = ft_problem_write(((FtProblem *)self)->p, PyBytes_AS_STRING(path), &st);
    Py_DECREF(path);
    if (rc != FT_OK)
        return ftpy_raise_status(&st);
    Py_RETURN_NONE;
}

static PyObject *problem_clone(PyObject *self, PyObject *noargs)
{
    (void)noargs;
    ft_problem *c = ft_problem_clone(((FtProblem *)self)->p);
    if (!c)
        return PyErr_NoMemory();
    return ftpy_problem_new(c);
}

/* with_target(target, keep_costs=False): a copy with the target applied. */
static PyObject *problem_with_target(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"target", "keep_costs", NULL};
    PyObject *target;
    int keep = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!|p:with_target", kwlist, &FtTarget_Type, &target, &keep))
        return NULL;
    ft_problem *c = ftpy_target_apply((FtTarget *)target, ((FtProblem *)self)->p, keep);
    return c ? ftpy_problem_new(c) : NULL;
}

/* lower_bound / capacity_bound(compute_model='native') -> dict */
static PyObject *bound_dict(PyObject *self, PyObject *args, PyObject *kw, int capacity)
{
    static char *kwlist[] = {"compute_model", NULL};
    ft_compute_model model = FT_COMPUTE_NATIVE;
    if (!PyArg_ParseTupleAndKeywords(args, kw, capacity ? "|O&:capacity_bound" : "|O&:lower_bound", kwlist,
                                     ftpy_model_converter, &model))
        return NULL;
    const ft_problem *p = ((FtProblem *)self)->p;
    double c, m, b;
    Py_BEGIN_ALLOW_THREADS
    b = capacity ? ft_lower_bound_capacity(p, model, &c, &m) : ft_lower_bound(p, model, &c, &m);
    Py_END_ALLOW_THREADS
    PyObject *d = PyDict_New();
    if (!d || ftpy_put(d, "compute_model", PyUnicode_FromString(ft_compute_model_name(model))) < 0 ||
        ftpy_put(d, "bound", PyFloat_FromDouble(b)) < 0 || ftpy_put(d, "compute", PyFloat_FromDouble(c)) < 0 ||
        ftpy_put(d, "memory", PyFloat_FromDouble(m)) < 0)
        Py_CLEAR(d);
    return d;
}

static PyObject *problem_lower_bound(PyObject *self, PyObject *args, PyObject *kw)
{
    return bound_dict(self, args, kw, 0);
}

static PyObject *problem_capacity_bound(PyObject *self, PyObject *args, PyObject *kw)
{
    return bound_dict(self, args, kw, 1);
}

/* label(ops) -> str: ft_subgraph_label of an op list. */
static PyObject *problem_label(PyObject *self, PyObject *arg)
{
    PyObject *seq = PySequence_Fast(arg, "label() takes a sequence of op indices");
    if (!seq)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > INT32_MAX / 2) {
        Py_DECREF(seq);
        return ftpy_usage("label(): %zd ops is too many", n);
    }
    int *ops = PyMem_Malloc(sizeof(int) * (size_t)(n ? n : 1));
    if (!ops) {
        Py_DECREF(seq);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PySequence_Fast_GET_ITEM(seq, i);
        int overflow = 0;
        long long v = PyLong_Check(x) ? PyLong_AsLongLongAndOverflow(x, &overflow) : 0;
        if (!PyLong_Check(x) || overflow || v < INT32_MIN || v > INT32_MAX) {
            if (PyLong_Check(x))
                ftpy_usage("label(): ops[%zd] is out of range", i);
            else
                PyErr_Format(PyExc_TypeError, "label(): ops[%zd] must be an op index (int), not %.100s", i,
                             Py_TYPE(x)->tp_name);
            PyMem_Free(ops);
            Py_DECREF(seq);
            return NULL;
        }
        ops[i] = (int)v;
    }
    Py_DECREF(seq);
    ft_subgraph g;
    memset(&g, 0, sizeof g);
    g.ops = ops;
    g.nops = (int)n;
    char *label = ft_subgraph_label(((FtProblem *)self)->p, &g);
    PyMem_Free(ops);
    if (!label)
        return PyErr_NoMemory();
    PyObject *r = ftpy_str_or_none(label);
    free(label);
    return r;
}

static PyObject *problem_get_name(PyObject *self, void *c)
{
    (void)c;
    return ftpy_str_or_none(((FtProblem *)self)->p->name);
}

static PyObject *problem_get_nops(PyObject *self, void *c)
{
    (void)c;
    return PyLong_FromLong(((FtProblem *)self)->p->nops);
}

static PyObject *problem_get_ntensors(PyObject *self, void *c)
{
    (void)c;
    return PyLong_FromLong(((FtProblem *)self)->p->ntensors);
}

#define FN(f) ((PyCFunction)(void (*)(void))(f))

static PyMethodDef problem_methods[] = {
    {"info", FN(problem_info), METH_NOARGS,
     "info() -> dict: name, nops, ntensors, capacity, bandwidth, native {w h k larger}, timing, inputs, outputs "
     "(graph inputs and outputs), topo, ops (index type inputs output base_cost k name kind), tensors (index width "
     "height size producer consumers name), op_names, op_kinds, tensor_names (None when the file has none)."},
    {"to_json", FN(problem_to_json), METH_NOARGS, "to_json() -> str: the problem file's text (names included)."},
    {"to_dict", FN(problem_to_dict), METH_NOARGS, "to_dict() -> dict: json.loads(to_json())."},
    {"write", FN(problem_write), METH_VARARGS, "write(path): write the problem file atomically."},
    {"clone", FN(problem_clone), METH_NOARGS, "clone() -> Problem: a copy."},
    {"with_target", FN(problem_with_target), METH_VARARGS | METH_KEYWORDS,
     "with_target(target, keep_costs=False) -> Problem: a copy with the target's capacity, bandwidth, native "
     "granularity, timing and (unless keep_costs) base costs."},
    {"lower_bound", FN(problem_lower_bound), METH_VARARGS | METH_KEYWORDS,
     "lower_bound(compute_model='native') -> dict compute_model bound compute memory (SPEC.md section 5)."},
    {"capacity_bound", FN(problem_capacity_bound), METH_VARARGS | METH_KEYWORDS,
     "capacity_bound(compute_model='native') -> dict compute_model bound compute memory (SPEC.md section 7)."},
    {"label", FN(problem_label), METH_O,
     "label(ops) -> str: the label of a subgraph of these ops (op names joined by '+', shared dotted prefixes "
     "elided; the indices joined by ',' without names)."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef problem_getset[] = {
    {"name", problem_get_name, NULL, "the file the problem was loaded from (or the name given)", NULL},
    {"nops", problem_get_nops, NULL, "number of ops", NULL},
    {"ntensors", problem_get_ntensors, NULL, "number of tensors", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject FtProblem_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "fusetile.Problem",
    .tp_basicsize = sizeof(FtProblem),
    .tp_dealloc = problem_dealloc,
    .tp_repr = problem_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A scheduling problem (SPEC.md section 1); made by load_problem, problem_from_dict, ... (immutable).",
    .tp_methods = problem_methods,
    .tp_getset = problem_getset,
};

/* ------------------------------------------------------------ schedule */

PyObject *ftpy_schedule_new(ft_schedule *s)
{
    FtSchedule *o = PyObject_New(FtSchedule, &FtSchedule_Type);
    if (!o) {
        ft_schedule_free(s);
        return NULL;
    }
    o->s = s;
    return (PyObject *)o;
}

static void schedule_dealloc(PyObject *self)
{
    ft_schedule_free(((FtSchedule *)self)->s);
    PyObject_Free(self);
}

static PyObject *schedule_repr(PyObject *self)
{
    const ft_schedule *s = ((FtSchedule *)self)->s;
    return PyUnicode_FromFormat("<fusetile.Schedule %s: %d subgraphs>", s->name ? s->name : "(searched)", s->nsubgraphs);
}

static PyObject *schedule_to_json(PyObject *self, PyObject *noargs)
{
    (void)noargs;
    char *text = ft_schedule_to_json(((FtSchedule *)self)->s, NULL);
    if (!text)
        return PyErr_NoMemory();
    PyObject *r = PyUnicode_FromString(text);
    free(text);
    return r;
}

static PyObject *schedule_to_dict(PyObject *self, PyObject *noargs)
{
    (void)noargs;
    char *text = ft_schedule_to_json(((FtSchedule *)self)->s, NULL);
    if (!text)
        return PyErr_NoMemory();
    PyObject *r = ftpy_json_loads(text);
    free(text);
    return r;
}

static PyObject *schedule_write(PyObject *self, PyObject *args)
{
    PyObject *path;
    if (!PyArg_ParseTuple(args, "O&:write", PyUnicode_FSConverter, &path))
        return NULL;
    ft_status st;
    int rc = ft_schedule_write(((FtSchedule *)self)->s, NULL, PyBytes_AS_STRING(path), &st);
    Py_DECREF(path);
    if (rc != FT_OK)
        return ftpy_raise_status(&st);
    Py_RETURN_NONE;
}

static PyObject *schedule_subgraphs(PyObject *self, PyObject *noargs)
{
    (void)noargs;
    const ft_schedule *s = ((FtSchedule *)self)->s;
    PyObject *l = PyList_New(s->nsubgraphs);
    for (int i = 0; l && i < s->nsubgraphs; i++) {
        const ft_subgraph *g = &s->sg[i];
        PyObject *d = PyDict_New();
        if (!d || ftpy_put(d, "index", PyLong_FromLong(i)) < 0 || ftpy_put(d, "ops", ftpy_int_list(g->ops, g->nops)) < 0 ||
            ftpy_put(d, "granularity", Py_BuildValue("[LLL]", (long long)g->w, (long long)g->h, (long long)g->k)) < 0 ||
            ftpy_put(d, "retain", ftpy_int_list(g->retain, g->nretain)) < 0 ||
            ftpy_put(d, "order", g->order ? ftpy_wide_list(g->order, g->norder) : none_ref()) < 0 ||
            ftpy_put(d, "reported", g->has_reported ? PyFloat_FromDouble(g->reported) : none_ref()) < 0) {
            Py_XDECREF(d);
            Py_CLEAR(l);
            break;
        }
        PyList_SET_ITEM(l, i, d);
    }
    return l;
}

static PyObject *schedule_get_name(PyObject *self, void *c)
{
    (void)c;
    return ftpy_str_or_none(((FtSchedule *)self)->s->name);
}

static PyObject *schedule_get_n(PyObject *self, void *c)
{
    (void)c;
    return PyLong_FromLong(((FtSchedule *)self)->s->nsubgraphs);
}

static PyMethodDef schedule_methods[] = {
    {"to_json", FN(schedule_to_json), METH_NOARGS, "to_json() -> str: the schedule file's text."},
    {"to_dict", FN(schedule_to_dict), METH_NOARGS, "to_dict() -> dict: json.loads(to_json())."},
    {"write", FN(schedule_write), METH_VARARGS, "write(path): write the schedule file atomically."},
    {"subgraphs", FN(schedule_subgraphs), METH_NOARGS,
     "subgraphs() -> list of dicts index ops granularity [w, h, k] retain order (None: raster) reported (None: "
     "none)."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef schedule_getset[] = {
    {"name", schedule_get_name, NULL, "the file the schedule was loaded from (None for a searched one)", NULL},
    {"nsubgraphs", schedule_get_n, NULL, "number of subgraphs", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject FtSchedule_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "fusetile.Schedule",
    .tp_basicsize = sizeof(FtSchedule),
    .tp_dealloc = schedule_dealloc,
    .tp_repr = schedule_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A schedule (SPEC.md section 2); made by load_schedule, schedule_from_dict, ... (immutable).",
    .tp_methods = schedule_methods,
    .tp_getset = schedule_getset,
};

/* ------------------------------------------------------------ target */

static void tune_init(ftpy_tune *u)
{
    memset(u, 0, sizeof *u);
    u->larger = u->overlap = u->duplex = -1;
    u->write_bandwidth = u->latency = u->launch = NAN;
}

PyObject *ftpy_target_new(ft_target *t)
{
    FtTarget *o = PyObject_New(FtTarget, &FtTarget_Type);
    if (!o) {
        ft_target_free(t);
        return NULL;
    }
    o->t = t;
    o->base = NULL;
    tune_init(&o->tune);
    return (PyObject *)o;
}

static void target_dealloc(PyObject *self)
{
    FtTarget *o = (FtTarget *)self;
    if (o->base)
        Py_DECREF(o->base);
    else
        ft_target_free(o->t);
    PyObject_Free(self);
}

static PyObject *target_repr(PyObject *self)
{
    const FtTarget *o = (FtTarget *)self;
    const ft_target *t = o->t;
    return PyUnicode_FromFormat("<fusetile.Target %s (%s)%s>", t->name ? t->name : "?", t->path ? t->path : "?",
                                o->tune.any ? " with changed settings" : "");
}

ft_problem *ftpy_target_apply(const FtTarget *o, const ft_problem *p, int keep_costs)
{
    ft_problem *c = ft_problem_clone(p);
    if (!c) {
        PyErr_NoMemory();
        return NULL;
    }
    ft_status st;
    const ftpy_tune *u = &o->tune;
    int rc = ft_target_apply(o->t, c, keep_costs, &st);
    if (rc == FT_OK && u->any) {
        const ft_override *v = &u->ov;
        if (v->capacity || v->bandwidth || v->native_w || v->native_h || v->native_k || v->units)
            rc = ft_problem_override(c, v, &st);
        if (rc == FT_OK) { /* as Tcl's `p configure`: set, then ft_problem_finish */
            if (u->larger >= 0)
                c->allow_larger = u->larger;
            if (u->overlap >= 0)
                c->timing.overlap = (ft_overlap)u->overlap;
            if (u->duplex >= 0)
                c->timing.duplex = u->duplex;
            if (!isnan(u->write_bandwidth))
                c->timing.write_bandwidth = u->write_bandwidth;
            if (!isnan(u->latency))
                c->timing.transfer_latency = u->latency;
            if (!isnan(u->launch))
                c->timing.launch_overhead = u->launch;
            rc = ft_problem_finish(c, &st);
        }
    }
    if (rc != FT_OK) {
        ft_problem_free(c);
        ftpy_raise_status(&st);
        return NULL;
    }
    return c;
}

/* A number argument of with_() (int or float) into *out; -1 with an
 * exception. */
static int tune_number(PyObject *v, const char *name, double *out)
{
    if (!PyLong_Check(v) && !PyFloat_Check(v)) {
        PyErr_Format(PyExc_TypeError, "with_(): %s must be a number, not %.100s", name, Py_TYPE(v)->tp_name);
        return -1;
    }
    *out = PyFloat_AsDouble(v);
    if (*out == -1.0 && PyErr_Occurred())
        return -1;
    if (!isfinite(*out) || *out < 0) {
        ftpy_usage("with_(): %s is %g, must be a finite number, 0 or more", name, *out);
        return -1;
    }
    return 0;
}

/* A whole-number argument of with_() from 1 to max into *out. */
static int tune_int(PyObject *v, const char *name, long long max, int64_t *out)
{
    int overflow = 0;
    long long n = PyLong_Check(v) && !PyBool_Check(v) ? PyLong_AsLongLongAndOverflow(v, &overflow) : 0;
    if (!PyLong_Check(v) || PyBool_Check(v)) {
        PyErr_Format(PyExc_TypeError, "with_(): %s must be an int, not %.100s", name, Py_TYPE(v)->tp_name);
        return -1;
    }
    if (n == -1 && PyErr_Occurred())
        return -1;
    if (overflow || n < 1 || n > max) {
        ftpy_usage("with_(): %s is out of range, must be from 1 to %lld", name, max);
        return -1;
    }
    *out = (int64_t)n;
    return 0;
}

static int tune_bool(PyObject *v, const char *name, int *out)
{
    if (!PyBool_Check(v)) {
        PyErr_Format(PyExc_TypeError, "with_(): %s must be a bool, not %.100s", name, Py_TYPE(v)->tp_name);
        return -1;
    }
    *out = v == Py_True;
    return 0;
}

static const char *const overlap_modes[] = {"step", "none", "pipeline"};

/* One with_() setting into *u.  0, or -1 with an exception. */
static int tune_set(ftpy_tune *u, const char *k, PyObject *v)
{
    int64_t n;
    if (!strcmp(k, "capacity") || !strcmp(k, "bandwidth")) {
        double *d = k[0] == 'c' ? &u->ov.capacity : &u->ov.bandwidth;
        if (tune_number(v, k, d))
            return -1;
        if (!(*d > 0))
            return ftpy_usage("with_(): %s is %g, must be a positive number", k, *d), -1;
        return 0;
    }
    if (!strcmp(k, "native")) {
        PyObject *seq = PySequence_Check(v) && !PyUnicode_Check(v) ? PySequence_Fast(v, "") : NULL;
        if (!seq || PySequence_Fast_GET_SIZE(seq) != 2) {
            Py_XDECREF(seq);
            PyErr_Clear();
            return ftpy_usage("with_(): native must be a pair (w, h) of ints"), -1;
        }
        int rc = tune_int(PySequence_Fast_GET_ITEM(seq, 0), "native[0]", FT_OVERRIDE_MAX_NATIVE, &u->ov.native_w) ||
                 tune_int(PySequence_Fast_GET_ITEM(seq, 1), "native[1]", FT_OVERRIDE_MAX_NATIVE, &u->ov.native_h);
        Py_DECREF(seq);
        return rc ? -1 : 0;
    }
    if (!strcmp(k, "native_k"))
        return tune_int(v, k, FT_OVERRIDE_MAX_NATIVE, &u->ov.native_k);
    if (!strcmp(k, "units")) {
        if (tune_int(v, k, FT_MAX_UNITS, &n))
            return -1;
        u->ov.units = (int)n;
        return 0;
    }
    if (!strcmp(k, "larger"))
        return tune_bool(v, k, &u->larger);
    if (!strcmp(k, "duplex"))
        return tune_bool(v, k, &u->duplex);
    if (!strcmp(k, "write_bandwidth"))
        return tune_number(v, k, &u->write_bandwidth);
    if (!strcmp(k, "latency"))
        return tune_number(v, k, &u->latency);
    if (!strcmp(k, "launch"))
        return tune_number(v, k, &u->launch);
    if (!strcmp(k, "overlap")) {
        const char *m = PyUnicode_Check(v) ? PyUnicode_AsUTF8(v) : NULL;
        for (int i = 0; m && i < 3; i++)
            if (!strcmp(m, overlap_modes[i])) {
                u->overlap = i;
                return 0;
            }
        if (PyErr_Occurred())
            return -1;
        return ftpy_usage("with_(): overlap must be 'step', 'none' or 'pipeline'"), -1;
    }
    return ftpy_usage("with_(): unknown setting '%.100s' (capacity, bandwidth, native, native_k, units, larger, "
                      "write_bandwidth, latency, launch, overlap, duplex)", k), -1;
}

/* Target.from_dict(d, name='<dict>') -> Target: the target file's settings
 * as a dict (groups as dicts), written as libconfig text
 * (fusetile._notebook.cfg_text) and checked by ft_target_parse, as a file
 * is. */
static PyObject *target_from_dict(PyObject *cls, PyObject *args, PyObject *kw)
{
    (void)cls;
    static char *kwlist[] = {"d", "name", NULL};
    PyObject *d;
    const char *name = "<dict>";
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|s:from_dict", kwlist, &d, &name))
        return NULL;
    PyObject *mod = PyImport_ImportModule("fusetile._notebook");
    PyObject *text = mod ? PyObject_CallMethod(mod, "cfg_text", "Os", d, "target") : NULL;
    Py_XDECREF(mod);
    if (!text)
        return NULL;
    const char *t = PyUnicode_AsUTF8(text);
    ft_target *out = NULL;
    ft_status st;
    int rc = t ? ft_target_parse(t, name, &out, &st) : FT_EINPUT;
    Py_DECREF(text);
    if (!t)
        return NULL;
    if (rc != FT_OK)
        return ftpy_raise_status(&st);
    return ftpy_target_new(out);
}

/* with_(**settings) -> Target */
static PyObject *target_with(PyObject *self, PyObject *args, PyObject *kw)
{
    FtTarget *o = (FtTarget *)self;
    if (PyTuple_GET_SIZE(args) > 0)
        return PyErr_Format(PyExc_TypeError, "with_() takes keyword arguments only");
    ftpy_tune u = o->tune;
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (kw && PyDict_Next(kw, &pos, &k, &v)) {
        const char *name = PyUnicode_AsUTF8(k);
        if (!name || tune_set(&u, name, v) < 0)
            return NULL;
        u.any = 1;
    }
    FtTarget *n = PyObject_New(FtTarget, &FtTarget_Type);
    if (!n)
        return NULL;
    n->t = o->t;
    n->base = o->base ? o->base : self;
    Py_INCREF(n->base);
    n->tune = u;
    return (PyObject *)n;
}

/* The settings with_() changed, as a dict in the problem's units. */
static PyObject *tune_dict(const ftpy_tune *u)
{
    PyObject *d = PyDict_New();
    if (!d)
        return NULL;
    const ft_override *v = &u->ov;
    if ((v->capacity && ftpy_put(d, "capacity", PyFloat_FromDouble(v->capacity)) < 0) ||
        (v->bandwidth && ftpy_put(d, "bandwidth", PyFloat_FromDouble(v->bandwidth)) < 0) ||
        (v->native_w && ftpy_put(d, "native", Py_BuildValue("(LL)", (long long)v->native_w, (long long)v->native_h)) < 0) ||
        (v->native_k && ftpy_put(d, "native_k", PyLong_FromLongLong((long long)v->native_k)) < 0) ||
        (v->units && ftpy_put(d, "units", PyLong_FromLong(v->units)) < 0) ||
        (u->larger >= 0 && ftpy_put(d, "larger", PyBool_FromLong(u->larger)) < 0) ||
        (u->duplex >= 0 && ftpy_put(d, "duplex", PyBool_FromLong(u->duplex)) < 0) ||
        (u->overlap >= 0 && ftpy_put(d, "overlap", PyUnicode_FromString(overlap_modes[u->overlap])) < 0) ||
        (!isnan(u->write_bandwidth) && ftpy_put(d, "write_bandwidth", PyFloat_FromDouble(u->write_bandwidth)) < 0) ||
        (!isnan(u->latency) && ftpy_put(d, "latency", PyFloat_FromDouble(u->latency)) < 0) ||
        (!isnan(u->launch) && ftpy_put(d, "launch", PyFloat_FromDouble(u->launch)) < 0))
        Py_CLEAR(d);
    return d;
}

static PyObject *target_info(PyObject *self, PyObject *noargs)
{
    (void)noargs;
    const ft_target *t = ((FtTarget *)self)->t;
    PyObject *d = PyDict_New();
    if (!d || ftpy_put(d, "path", ftpy_str_or_none(t->path)) < 0 || ftpy_put(d, "name", ftpy_str_or_none(t->name)) < 0 ||
        ftpy_put(d, "description", ftpy_str_or_none(t->description)) < 0 ||
        ftpy_put(d, "contest", PyBool_FromLong(t->contest)) < 0)
        goto fail;
    if (t->contest)
        return d;
    double re, we; /* the slow memory's read and write shares as applied */
    ft_target_memory_efficiencies(t, &re, &we);
    if (ftpy_put(d, "clock_hz", PyFloat_FromDouble(t->clock_hz)) < 0 ||
        ftpy_put(d, "element_bytes", PyLong_FromLongLong((long long)t->element_bytes)) < 0 ||
        ftpy_put(d, "capacity_bytes", PyLong_FromLongLong((long long)t->capacity_bytes)) < 0 ||
        ftpy_put(d, "read_bandwidth", PyFloat_FromDouble(t->read_bandwidth)) < 0 ||
        ftpy_put(d, "write_bandwidth", PyFloat_FromDouble(t->write_bandwidth)) < 0 ||
        ftpy_put(d, "transfer_latency", PyFloat_FromDouble(t->transfer_latency)) < 0 ||
        ftpy_put(d, "separate_channels", PyBool_FromLong(t->separate_channels)) < 0 ||
        ftpy_put(d, "native_w", PyLong_FromLongLong((long long)t->native_w)) < 0 ||
        ftpy_put(d, "native_h", PyLong_FromLongLong((long long)t->native_h)) < 0 ||
        ftpy_put(d, "native_k", PyLong_FromLongLong((long long)t->native_k)) < 0 ||
        ftpy_put(d, "allow_larger_granularity", PyBool_FromLong(t->allow_larger_granularity)) < 0 ||
        ftpy_put(d, "pointwise_unpadded", PyBool_FromLong(t->pointwise_unpadded)) < 0 ||
        ftpy_put(d, "matmul_macs_per_cycle", PyFloat_FromDouble(t->matmul_macs_per_cycle)) < 0 ||
        ftpy_put(d, "pointwise_elements_per_cycle", PyFloat_FromDouble(t->pointwise_elements_per_cycle)) < 0 ||
        ftpy_put(d, "launch_overhead", PyFloat_FromDouble(t->launch_overhead)) < 0 ||
        ftpy_put(d, "double_buffering", PyBool_FromLong(t->double_buffering)) < 0 ||
        ftpy_put(d, "units", PyLong_FromLongLong((long long)t->units)) < 0 ||
        ftpy_put(d, "slow_memory_efficiency", PyFloat_FromDouble(t->memory_efficiency)) < 0 ||
        ftpy_put(d, "matmul_efficiency", PyFloat_FromDouble(t->matmul_efficiency)) < 0 ||
        ftpy_put(d, "pointwise_efficiency", PyFloat_FromDouble(t->pointwise_efficiency)) < 0 ||
        ftpy_put(d, "step_overhead", PyFloat_FromDouble(t->step_overhead)) < 0 ||
        ftpy_put(d, "tile_overhead", PyFloat_FromDouble(t->tile_overhead)) < 0 ||
        ftpy_put(d, "matmul_tile_overhead", PyFloat_FromDouble(t->matmul_tile_overhead)) < 0 ||
        ftpy_put(d, "shared_cache_capacity_bytes", PyLong_FromLongLong((long long)t->cache_capacity_bytes)) < 0 ||
        ftpy_put(d, "shared_cache_partitions", PyLong_FromLongLong((long long)t->cache_partitions)) < 0 ||
        ftpy_put(d, "shared_cache_bandwidth", PyFloat_FromDouble(t->cache_bandwidth)) < 0 ||
        ftpy_put(d, "shared_cache_resident_bytes", PyFloat_FromDouble(t->cache_resident_bytes)) < 0 ||
        ftpy_put(d, "register_file_bytes", PyLong_FromLongLong((long long)t->register_file_bytes)) < 0 ||
        ftpy_put(d, "accumulator_bytes", PyLong_FromLongLong((long long)t->accumulator_bytes)) < 0 ||
        ftpy_put(d, "misaligned_efficiency", PyFloat_FromDouble(t->misaligned_efficiency)) < 0 ||
        ftpy_put(d, "aligned_elements", PyLong_FromLongLong((long long)t->aligned_elements)) < 0 ||
        ftpy_put(d, "split_overhead", PyFloat_FromDouble(t->split_overhead)) < 0 ||
        ftpy_put(d, "conv_efficiency", PyFloat_FromDouble(t->conv_efficiency)) < 0 ||
        ftpy_put(d, "conv_small_channels", PyLong_FromLongLong((long long)t->conv_small_channels)) < 0 ||
        ftpy_put(d, "conv_small_efficiency", PyFloat_FromDouble(t->conv_small_efficiency)) < 0 ||
        ftpy_put(d, "streamk_overhead", PyFloat_FromDouble(t->streamk_overhead)) < 0 ||
        ftpy_put(d, "slow_memory_read_efficiency", PyFloat_FromDouble(re)) < 0 ||
        ftpy_put(d, "slow_memory_write_efficiency", PyFloat_FromDouble(we)) < 0 ||
        ftpy_put(d, "run_overhead", PyFloat_FromDouble(t->run_overhead)) < 0 ||
        ftpy_put(d, "replay_interval", PyFloat_FromDouble(t->replay_interval)) < 0)
        goto fail;
    PyObject *k = PyDict_New(); /* compute.kind_cost: kind -> factor */
    if (!k || ftpy_put(d, "kind_cost", k) < 0)
        goto fail;
    for (int i = 0; i < t->nkind_costs; i++)
        if (ftpy_put(k, t->kind_names[i], PyFloat_FromDouble(t->kind_costs[i])) < 0)
            goto fail;
    return d;
fail:
    Py_XDECREF(d);
    return NULL;
}

static PyObject *target_describe(PyObject *self, PyObject *noargs)
{
    (void)noargs;
    const ft_target *t = ((FtTarget *)self)->t;
    int n = ft_target_describe(t, NULL, 0);
    char *buf = PyMem_Malloc((size_t)(n > 0 ? n : 0) + 1);
    if (!buf)
        return PyErr_NoMemory();
    ft_target_describe(t, buf, (size_t)(n > 0 ? n : 0) + 1);
    PyObject *r = ftpy_str_or_none(buf);
    PyMem_Free(buf);
    return r;
}

static PyObject *target_get_name(PyObject *self, void *c)
{
    (void)c;
    return ftpy_str_or_none(((FtTarget *)self)->t->name);
}

static PyObject *target_get_path(PyObject *self, void *c)
{
    (void)c;
    return ftpy_str_or_none(((FtTarget *)self)->t->path);
}

static PyObject *target_get_contest(PyObject *self, void *c)
{
    (void)c;
    return PyBool_FromLong(((FtTarget *)self)->t->contest);
}

static PyObject *target_get_overrides(PyObject *self, void *c)
{
    (void)c;
    return tune_dict(&((FtTarget *)self)->tune);
}

static PyMethodDef target_methods[] = {
    {"info", FN(target_info), METH_NOARGS,
     "info() -> dict of every setting: path name description contest and, for a real machine, clock_hz "
     "element_bytes capacity_bytes read_bandwidth write_bandwidth transfer_latency separate_channels native_w "
     "native_h native_k allow_larger_granularity pointwise_unpadded matmul_macs_per_cycle pointwise_elements_per_cycle "
     "launch_overhead double_buffering units slow_memory_efficiency matmul_efficiency pointwise_efficiency "
     "step_overhead tile_overhead matmul_tile_overhead shared_cache_capacity_bytes shared_cache_partitions shared_cache_bandwidth shared_cache_resident_bytes (0 for no shared cache) register_file_bytes accumulator_bytes misaligned_efficiency aligned_elements split_overhead conv_efficiency conv_small_channels conv_small_efficiency streamk_overhead (-1: no stream-K form) slow_memory_read_efficiency slow_memory_write_efficiency (as applied) "
     "run_overhead replay_interval kind_cost (a dict: op kind -> factor)."},
    {"describe", FN(target_describe), METH_NOARGS, "describe() -> str: the one-line summary."},
    {"from_dict", FN(target_from_dict), METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     "Target.from_dict(d, name='<dict>') -> Target: a target from a dict of the target file's settings (groups as "
     "dicts: {'name': 'x', 'clock_hz': 1e9, 'fast_memory': {'capacity_bytes': 262144}, ...}), checked as a file is "
     "(InputError names the setting)."},
    {"with_", FN(target_with), METH_VARARGS | METH_KEYWORDS,
     "with_(capacity=, bandwidth=, native=(w, h), native_k=, units=, larger=, write_bandwidth=, latency=, launch=, "
     "overlap='step'|'none'|'pipeline', duplex=) -> Target: this target with the problem settings Tcl's `p configure` "
     "changes set after it is applied (capacity in elements, bandwidths in elements per cost unit, latency and launch in "
     "cost units: the problem's units; capacity, bandwidth, native and units through ft_problem_override, as a sweep's "
     "overrides).  .overrides lists them."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef target_getset[] = {
    {"name", target_get_name, NULL, "the target's short name", NULL},
    {"path", target_get_path, NULL, "the file it was loaded from", NULL},
    {"contest", target_get_contest, NULL, "True for the contest's abstract machine", NULL},
    {"overrides", target_get_overrides, NULL, "the settings with_() changed (a dict, empty for none)", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject FtTarget_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "fusetile.Target",
    .tp_basicsize = sizeof(FtTarget),
    .tp_dealloc = target_dealloc,
    .tp_repr = target_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A machine target (targets/*.cfg); made by load_target, target_from_dict or with_() (immutable).",
    .tp_methods = target_methods,
    .tp_getset = target_getset,
};
