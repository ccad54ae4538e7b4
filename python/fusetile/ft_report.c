/* ft_report.c - fusetile._fusetile.report: the HTML report of a schedule (libfusetile_report, ft_report_html), made with the GIL released and the process's simulator handle held. */
#include "_fusetile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fusetile/io.h" /* ft_write_atomic */

/* report(problem, schedule=None, target=None, path=None, keep_costs=False,
 *        compute_model='native', time_limit=10, strategies='all', threads=0,
 *        seed=1, problem_name=None, schedule_name=None, progress=None) -> str */
PyObject *ftpy_report(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"problem",  "schedule", "target", "path",         "keep_costs",    "compute_model", "time_limit",
                             "strategies", "threads", "seed",  "problem_name", "schedule_name", "progress", NULL};
    PyObject *pobj, *sobj = Py_None, *tobj = Py_None, *path = NULL, *progress = NULL;
    int keep_costs = 0, threads = 0;
    long long seed = 1;
    const char *strategies = "all", *pname = NULL, *sname = NULL;
    ft_report_opts o;
    ft_report_opts_init(&o);
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!|OOO&pO&dziLzzO&:report", kwlist, &FtProblem_Type, &pobj, &sobj, &tobj,
                                     ftpy_path_or_none, &path, &keep_costs, ftpy_model_converter, &o.model, &o.time_limit,
                                     &strategies, &threads, &seed, &pname, &sname,
                                     ftpy_progress_converter, &progress))
        return NULL;
    PyObject *result = NULL;
    if (sobj != Py_None && !PyObject_TypeCheck(sobj, &FtSchedule_Type)) {
        PyErr_Format(PyExc_TypeError, "schedule must be a fusetile.Schedule or None, not %.100s", Py_TYPE(sobj)->tp_name);
        goto out;
    }
    if (tobj != Py_None && !PyObject_TypeCheck(tobj, &FtTarget_Type)) {
        PyErr_Format(PyExc_TypeError, "target must be a fusetile.Target or None, not %.100s", Py_TYPE(tobj)->tp_name);
        goto out;
    }
    if (!(o.time_limit > 0) || !isfinite(o.time_limit)) {
        ftpy_usage("time_limit is %g, must be a positive number of seconds", o.time_limit);
        goto out;
    }
    if (threads < 0 || seed < 0) {
        ftpy_usage("threads is %d and seed %lld: both must be 0 or more", threads, seed);
        goto out;
    }
    ft_status st;
    if (ft_report_parse_strategies(strategies ? strategies : "all", &o.strategies, &st) != FT_OK) {
        ftpy_usage("%s", st.msg);
        goto out;
    }
    const ft_problem *p = ((FtProblem *)pobj)->p;
    const ft_schedule *s = sobj == Py_None ? NULL : ((FtSchedule *)sobj)->s;
    o.target = tobj == Py_None ? NULL : ((FtTarget *)tobj)->t;
    o.keep_costs = keep_costs;
    o.threads = threads;
    o.seed = (uint64_t)seed;
    o.problem_path = pname;
    o.schedule_path = sname;
    char pdir[4096];
    o.patterns_dir = ftpy_patterns_dir(pdir, sizeof pdir);
    char *html = NULL, msg[512] = "";
    int rc;
    /* Ctrl-C and progress, as evaluate and simulate: phases done of all */
    watch w = {progress, 0, NULL, NULL, NULL};
    watch_steps ws = {&w, "report"};
    o.progress = ftpy_steps_progress;
    o.progress_ctx = &ws;
    Py_BEGIN_ALLOW_THREADS
    rc = ftpy_sim_acquire(&o.sim, msg, sizeof msg);
    if (rc == FT_OK) {
        rc = ft_report_html(p, s, &o, &html, &st);
        ftpy_sim_release();
        if (rc == FT_OK && path && ft_write_atomic(html, PyBytes_AS_STRING(path), &st) != FT_OK)
            rc = st.code ? st.code : FT_EINPUT;
    } else {
        ft_status_clear(&st);
        st.code = rc;
        snprintf(st.msg, sizeof st.msg, "%s", msg);
    }
    Py_END_ALLOW_THREADS
    if (w.stop) {
        ftpy_watch_raise(&w, NULL);
    } else if (rc != FT_OK) {
        st.code = rc;
        ftpy_raise_status(&st);
    } else {
        result = PyUnicode_FromString(html);
    }
    free(html);
out:
    Py_XDECREF(path);
    return result;
}
