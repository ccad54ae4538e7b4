/* _fusetile.h - what the files of the Python extension fusetile._fusetile share: the object types, the exceptions and the conversion helpers.
 *
 * The extension speaks only the library's public API (include/fusetile/fusetile.h,
 * include/fusetile/target.h, include/fusetile/sim.h).  Python.h comes first, as the Python docs
 * ask.  Conventions:
 *  - Every function that returns a new reference returns NULL with a Python
 *    exception set on failure; int helpers return 0 or -1 (exception set).
 *  - Library failures become exceptions by ftpy_raise_status: FT_EINPUT an
 *    InputError, FT_EINVALID an InvalidScheduleError carrying the reason's
 *    name and where (subgraph, tile, step), FT_ENOMEM a MemoryError.
 *  - Long computations (ft_search, ft_evaluate, the simulator) run with
 *    the GIL released; the objects they read are immutable from Python.
 */
#ifndef FTPY_FUSETILE_H
#define FTPY_FUSETILE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "fusetile/fusetile.h"
#include "fusetile/report.h"
#include "fusetile/sim.h"
#include "fusetile/target.h"

/* fusetile.Problem: owns a finished problem. */
typedef struct {
    PyObject_HEAD
    ft_problem *p;
} FtProblem;

/* fusetile.Schedule: owns a schedule (not tied to a problem). */
typedef struct {
    PyObject_HEAD
    ft_schedule *s;
} FtSchedule;

/* Settings Target.with_() changes on the problem after the target is
 * applied, as Tcl's `p configure` changes them (capacity, bandwidth,
 * native, units through ft_problem_override; the rest set, then
 * ft_problem_finish).  Unset: 0 in ov, -1 for the ints, NaN for the
 * doubles. */
typedef struct ftpy_tune {
    int any;
    ft_override ov;
    int larger, overlap, duplex;
    double write_bandwidth, latency, launch;
} ftpy_tune;

/* fusetile.Target: a loaded target (owned, or shared with `base`, the
 * target with_() was called on), and the settings with_() changed. */
typedef struct {
    PyObject_HEAD
    ft_target *t;
    PyObject *base;
    ftpy_tune tune;
} FtTarget;

/* A copy of p on target o's machine: ft_target_apply, then o's with_()
 * settings.  NULL with the exception set. */
ft_problem *ftpy_target_apply(const FtTarget *o, const ft_problem *p, int keep_costs);

extern PyTypeObject FtProblem_Type;
extern PyTypeObject FtSchedule_Type;
extern PyTypeObject FtTarget_Type;

/* The exceptions (module attributes Error, InputError,
 * InvalidScheduleError, UsageError); set up by the module's init. */
extern PyObject *FtError;
extern PyObject *FtInputError;
extern PyObject *FtInvalidError;
extern PyObject *FtUsageError;

/* Raise `type` with message msg and the attributes kind, code, reason
 * (NULL: None), subgraph, tile, step (-1: None).  Returns NULL. */
PyObject *ftpy_raise(PyObject *type, const char *kind, int code, const char *reason, int sg, int64_t tile,
                     int64_t step, const char *msg);

/* Raise the exception for a failed library call (code in st->code).
 * Returns NULL. */
PyObject *ftpy_raise_status(const ft_status *st);

/* Raise UsageError with a printf-style message.  Returns NULL. */
PyObject *ftpy_usage(const char *fmt, ...);

/* Wrap a new problem / schedule / target (taking ownership; NULL on
 * failure, which frees it). */
PyObject *ftpy_problem_new(ft_problem *p);
PyObject *ftpy_schedule_new(ft_schedule *s);
PyObject *ftpy_target_new(ft_target *t);

/* PyArg converter for a compute model: "native" or "op" (UsageError
 * otherwise, TypeError for a non-string); None keeps the default. */
int ftpy_model_converter(PyObject *o, void *out);

/* d[key] = v, taking v (NULL v: failure).  0 or -1. */
int ftpy_put(PyObject *d, const char *key, PyObject *v);

/* A string or None for NULL. */
PyObject *ftpy_str_or_none(const char *s);

/* A list of n ints / 64-bit ints. */
PyObject *ftpy_int_list(const int *a, int n);
PyObject *ftpy_wide_list(const int64_t *a, int64_t n);

/* json.loads(text) (for to_dict). */
PyObject *ftpy_json_loads(const char *text);

/* Module functions of ft_run.c: search, evaluate, simulate. */
PyObject *ftpy_search(PyObject *self, PyObject *args, PyObject *kw);
PyObject *ftpy_evaluate(PyObject *self, PyObject *args, PyObject *kw);
PyObject *ftpy_simulate(PyObject *self, PyObject *args, PyObject *kw);

/* sweep_run (ft_run.c): a sweep file (or its text) run into its database. */
PyObject *ftpy_sweep(PyObject *self, PyObject *args, PyObject *kw);

/* What a long call's callbacks share: the caller's progress callable (NULL:
 * none), the stop flag the library reads, and the exception that stopped
 * the run (NULL until one did). */
typedef struct watch {
    PyObject *progress;
    volatile int stop;
    PyObject *exc_type, *exc_value, *exc_tb;
} watch;

/* What ftpy_steps_progress reports: ctx of the ft_progress_fn of evaluate,
 * simulate and report. */
typedef struct watch_steps {
    watch *w;
    const char *what;
} watch_steps;

/* The ft_progress_fn of evaluate, simulate and report (ft_run.c): ctx is
 * a watch_steps; it polls for Ctrl-C and calls the progress callable with
 * {what, done, total, fraction}.  0, or 1 once the run is to stop. */
int ftpy_steps_progress(void *ctx, int64_t done, int64_t total);

/* PyArg converter for progress=: None (NULL in *(PyObject **)out) or a
 * callable (borrowed). */
int ftpy_progress_converter(PyObject *o, void *out);

/* Raise the exception that stopped a run (w->stop set), with NAME = value
 * attached for each (name, value) pair before the final NULL.  NULL. */
PyObject *ftpy_watch_raise(watch *w, ...);

/* report(problem, schedule, target, path, ...) -> str (ft_report.c). */
PyObject *ftpy_report(PyObject *self, PyObject *args, PyObject *kw);

/* The process's simulator handle (ft_run.c), made on first use, for one
 * replay at a time: call with the GIL released; FT_OK with *out set and
 * the lock held (ftpy_sim_release gives it back), or the code with a
 * message in msg (n bytes) and the lock not held. */
int ftpy_sim_acquire(ft_sim **out, char *msg, size_t n);
void ftpy_sim_release(void);

/* $FT_PATTERNS_DIR (os.environ) copied into buf (n bytes) while the GIL
 * is held, for ft_search_opts.patterns_dir (the library reads no
 * environment): buf, or NULL when unset, empty or too long. */
const char *ftpy_patterns_dir(char *buf, size_t n);

/* PyArg converter: None, or a path (os.fsencode) into a new bytes
 * object in *(PyObject **)out (NULL for None). */
int ftpy_path_or_none(PyObject *o, void *out);

/* Set up and release what ft_run.c keeps for the process (the simulator's
 * lock and handle).  0 or -1. */
int ftpy_run_init(void);
void ftpy_run_free(void);

#endif /* FTPY_FUSETILE_H */
