/* ft_objects.c - the Python types fusetile.Problem, fusetile.Schedule and fusetile.Target: read-only views of the library's models. */
#include "_fusetile.h"

#include <stdlib.h>

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
    ft_problem *c = ft_problem_clone(((FtProblem *)self)->p);
    if (!c)
        return PyErr_NoMemory();
    ft_status st;
    if (ft_target_apply(((FtTarget *)target)->t, c, keep, &st) != FT_OK) {
        ft_problem_free(c);
        return ftpy_raise_status(&st);
    }
    return ftpy_problem_new(c);
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

PyObject *ftpy_target_new(ft_target *t)
{
    FtTarget *o = PyObject_New(FtTarget, &FtTarget_Type);
    if (!o) {
        ft_target_free(t);
        return NULL;
    }
    o->t = t;
    return (PyObject *)o;
}

static void target_dealloc(PyObject *self)
{
    ft_target_free(((FtTarget *)self)->t);
    PyObject_Free(self);
}

static PyObject *target_repr(PyObject *self)
{
    const ft_target *t = ((FtTarget *)self)->t;
    return PyUnicode_FromFormat("<fusetile.Target %s (%s)>", t->name ? t->name : "?", t->path ? t->path : "?");
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

static PyMethodDef target_methods[] = {
    {"info", FN(target_info), METH_NOARGS,
     "info() -> dict of every setting: path name description contest and, for a real machine, clock_hz "
     "element_bytes capacity_bytes read_bandwidth write_bandwidth transfer_latency separate_channels native_w "
     "native_h native_k allow_larger_granularity pointwise_unpadded matmul_macs_per_cycle pointwise_elements_per_cycle "
     "launch_overhead double_buffering units slow_memory_efficiency matmul_efficiency pointwise_efficiency "
     "step_overhead tile_overhead matmul_tile_overhead shared_cache_capacity_bytes shared_cache_partitions shared_cache_bandwidth (0 for no shared cache) "
     "run_overhead replay_interval kind_cost (a dict: op kind -> factor)."},
    {"describe", FN(target_describe), METH_NOARGS, "describe() -> str: the one-line summary."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef target_getset[] = {
    {"name", target_get_name, NULL, "the target's short name", NULL},
    {"path", target_get_path, NULL, "the file it was loaded from", NULL},
    {"contest", target_get_contest, NULL, "True for the contest's abstract machine", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject FtTarget_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "fusetile.Target",
    .tp_basicsize = sizeof(FtTarget),
    .tp_dealloc = target_dealloc,
    .tp_repr = target_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A machine target (targets/*.cfg); made by load_target (immutable).",
    .tp_methods = target_methods,
    .tp_getset = target_getset,
};
