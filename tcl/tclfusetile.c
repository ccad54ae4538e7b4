/* tclfusetile.c - the Tcl binding of fusetile (`package require fusetile`): factory commands make problem, target and schedule handle commands, in the idiom of SQLite's tclsqlite.c; it speaks only the public API (fusetile.h, target.h, sim.h).
 *
 * Commands (tcl/README.md has the details and examples):
 *
 *   fusetile::problem NAME FILE | NAME -text JSON     -> problem handle
 *   fusetile::target NAME FILE                        -> target handle
 *   fusetile::schedule NAME PROBLEM FILE | ... -text JSON -> schedule handle
 *   fusetile::handles ?problem|target|schedule?       -> live handles
 *
 * Every factory returns the handle's fully qualified command name.  A handle
 * is freed when its command is deleted: `h destroy`, `rename h {}`, or the
 * interp's deletion.
 *
 * Memory: a problem handle holds a reference to an immutable problem
 * snapshot (ProbRef).  Changing a problem (configure, a target's apply)
 * builds a new snapshot and swaps it in, so the schedules made from the old
 * one, which hold their own reference, keep the problem they were made for;
 * destroying handles in any order is safe.
 *
 * Errors: the interp's result is one line naming the file, field or option
 * (the library's own messages where it has one) and errorCode is
 * {FUSETILE USAGE}, {FUSETILE INPUT}, {FUSETILE NOMEM} or
 * {FUSETILE INVALID REASON SUBGRAPH TILE STEP} (REASON as ft_reason_name).
 */
#define _POSIX_C_SOURCE 200809L
#include "tclfusetile.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fusetile.h"
#include "sim.h"
#include "target.h"

/* Largest relative difference between simulated and analytic latencies
 * that still counts as agreement (as `fusetile simulate`). */
#define AGREE_REL 1e-9

/* ------------------------------------------------------------ handles */

typedef enum { K_PROBLEM = 0, K_TARGET = 1, K_SCHEDULE = 2 } Kind;
static const char *const kind_names[] = {"problem", "target", "schedule", NULL};

/* An immutable problem shared by the handles that use it. */
typedef struct ProbRef {
    int refs;
    ft_problem *p;
} ProbRef;

typedef struct Registry Registry;

typedef struct Handle {
    Kind kind;
    Registry *reg;
    Tcl_Interp *interp;
    Tcl_Command token;
    struct Handle *prev, *next;   /* the registry's list, in creation order */
    ProbRef *prob;                /* problem and schedule handles */
    ft_target *target;            /* target handles */
    ft_schedule *sched;           /* schedule handles */
    ft_compute_model model;       /* schedule: the model it was made for */
} Handle;

/* Per-interp state (assoc data "fusetile"): the live handles and the
 * simulator, made on first use.  Freed when the interp has gone and the
 * last handle with it. */
struct Registry {
    Handle *first, *last;
    ft_sim *sim;
    int dead;
};

#define ASSOC_KEY "fusetile"

static Tcl_ObjCmdProc problem_cmd, target_cmd, schedule_cmd;
static Tcl_ObjCmdProc *const kind_procs[] = {problem_cmd, target_cmd, schedule_cmd};

static ProbRef *prob_new(ft_problem *p)
{
    ProbRef *r = malloc(sizeof *r);
    if (r) {
        r->refs = 1;
        r->p = p;
    }
    return r;
}

static ProbRef *prob_ref(ProbRef *r)
{
    r->refs++;
    return r;
}

static void prob_unref(ProbRef *r)
{
    if (r && --r->refs == 0) {
        ft_problem_free(r->p);
        free(r);
    }
}

static void registry_maybe_free(Registry *reg)
{
    if (reg->dead && !reg->first) {
        ft_sim_free(reg->sim);
        free(reg);
    }
}

static void registry_delete(ClientData cd, Tcl_Interp *interp)
{
    (void)interp;
    Registry *reg = cd;
    reg->dead = 1;
    ft_sim_free(reg->sim);
    reg->sim = NULL;
    registry_maybe_free(reg);
}

/* The command's delete proc: unlink the handle and free what it owns. */
static void handle_delete(ClientData cd)
{
    Handle *h = cd;
    Registry *reg = h->reg;
    if (h->prev)
        h->prev->next = h->next;
    else
        reg->first = h->next;
    if (h->next)
        h->next->prev = h->prev;
    else
        reg->last = h->prev;
    prob_unref(h->prob);
    ft_target_free(h->target);
    ft_schedule_free(h->sched);
    free(h);
    registry_maybe_free(reg);
}

/* ------------------------------------------------------------ errors */

/* Set a formatted message as the result and errorCode {FUSETILE CODE}.
 * Returns TCL_ERROR. */
static int fail(Tcl_Interp *interp, const char *code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(Tcl_Interp *interp, const char *code, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    Tcl_SetObjResult(interp, Tcl_NewStringObj(buf, -1));
    Tcl_SetErrorCode(interp, "FUSETILE", code, (char *)NULL);
    return TCL_ERROR;
}

static int fail_nomem(Tcl_Interp *interp)
{
    return fail(interp, "NOMEM", "out of memory");
}

/* An ft_status as an error: prefix (may be "") then st->msg; errorCode by
 * st->code, with the reason and location for FT_EINVALID. */
static int fail_status(Tcl_Interp *interp, const char *prefix, const ft_status *st)
{
    if (st->code == FT_EINVALID) {
        char sg[32], tile[32], step[32];
        snprintf(sg, sizeof sg, "%d", st->sg);
        snprintf(tile, sizeof tile, "%lld", (long long)st->tile);
        snprintf(step, sizeof step, "%lld", (long long)st->step);
        Tcl_SetObjResult(interp, Tcl_ObjPrintf("%s%s", prefix, st->msg));
        Tcl_SetErrorCode(interp, "FUSETILE", "INVALID", ft_reason_name(st->reason), sg, tile, step, (char *)NULL);
        return TCL_ERROR;
    }
    return fail(interp, st->code == FT_ENOMEM ? "NOMEM" : "INPUT", "%s%s", prefix, st->msg[0] ? st->msg : "failed");
}

/* Tcl_WrongNumArgs with errorCode {FUSETILE USAGE}. */
static int wrong_args(Tcl_Interp *interp, int n, Tcl_Obj *const objv[], const char *msg)
{
    Tcl_WrongNumArgs(interp, n, objv, msg);
    Tcl_SetErrorCode(interp, "FUSETILE", "USAGE", (char *)NULL);
    return TCL_ERROR;
}

/* `H destroy`: delete the handle's command (its delete proc frees it). */
static int handle_destroy(Tcl_Interp *interp, Handle *h, int objc, Tcl_Obj *const objv[])
{
    if (objc != 2)
        return wrong_args(interp, 2, objv, NULL);
    Tcl_DeleteCommandFromToken(interp, h->token);
    Tcl_ResetResult(interp);
    return TCL_OK;
}

/* Tcl_GetIndexFromObj with errorCode {FUSETILE USAGE} on failure. */
static int get_index(Tcl_Interp *interp, Tcl_Obj *obj, const char *const *table, const char *what, int *index)
{
    if (Tcl_GetIndexFromObj(interp, obj, table, what, 0, index) != TCL_OK) {
        Tcl_SetErrorCode(interp, "FUSETILE", "USAGE", (char *)NULL);
        return TCL_ERROR;
    }
    return TCL_OK;
}

/* The subcommand of a handle command (objv[1]) as an index into subs. */
static int subcommand(Tcl_Interp *interp, int objc, Tcl_Obj *const objv[], const char *const *subs, int *sub)
{
    if (objc < 2)
        return wrong_args(interp, 1, objv, "SUBCOMMAND ?ARG ...?");
    return get_index(interp, objv[1], subs, "subcommand", sub);
}

/* ------------------------------------------------------------ helpers */

static Registry *registry_of(Tcl_Interp *interp)
{
    return Tcl_GetAssocData(interp, ASSOC_KEY, NULL);
}

/* TCL_OK when no command is named `name`, else an error saying so. */
static int name_free(Tcl_Interp *interp, Tcl_Obj *name)
{
    Tcl_CmdInfo info;
    if (Tcl_GetCommandInfo(interp, Tcl_GetString(name), &info))
        return fail(interp, "USAGE", "command \"%s\" already exists", Tcl_GetString(name));
    return TCL_OK;
}

/* Make handle command `name` of the given kind (its payload is set by the
 * caller after success).  Fails when a command of that name exists.  On
 * success the result is the command's fully qualified name. */
static Handle *handle_new(Tcl_Interp *interp, Tcl_Obj *name, Kind kind)
{
    const char *n = Tcl_GetString(name);
    if (!*n) {
        fail(interp, "USAGE", "a handle needs a non-empty command name");
        return NULL;
    }
    if (name_free(interp, name) != TCL_OK)
        return NULL;
    Handle *h = calloc(1, sizeof *h);
    if (!h) {
        fail_nomem(interp);
        return NULL;
    }
    /* Unqualified names are made in the current namespace, as proc does
     * (Tcl_CreateObjCommand would put them in the global one). */
    Tcl_Obj *qualified = Tcl_NewStringObj(n, -1);
    Tcl_IncrRefCount(qualified);
    Tcl_Namespace *ns = Tcl_GetCurrentNamespace(interp);
    if (!strstr(n, "::") && ns->parentPtr) {
        Tcl_SetStringObj(qualified, ns->fullName, -1);
        Tcl_AppendStringsToObj(qualified, "::", n, (char *)NULL);
    }
    Registry *reg = registry_of(interp);
    h->kind = kind;
    h->reg = reg;
    h->interp = interp;
    h->token = Tcl_CreateObjCommand(interp, Tcl_GetString(qualified), kind_procs[kind], h, handle_delete);
    Tcl_DecrRefCount(qualified);
    h->prev = reg->last;
    if (reg->last)
        reg->last->next = h;
    else
        reg->first = h;
    reg->last = h;
    Tcl_Obj *full = Tcl_NewObj();
    Tcl_GetCommandFullName(interp, h->token, full);
    Tcl_SetObjResult(interp, full);
    return h;
}

/* The handle of kind `kind` named by obj, or NULL after an error. */
static Handle *handle_lookup(Tcl_Interp *interp, Tcl_Obj *obj, Kind kind)
{
    Tcl_CmdInfo info;
    const char *n = Tcl_GetString(obj);
    if (!Tcl_GetCommandInfo(interp, n, &info) || !info.isNativeObjectProc || info.objProc != kind_procs[kind]) {
        fail(interp, "USAGE", "\"%s\" is not a fusetile %s handle", n, kind_names[kind]);
        return NULL;
    }
    return info.objClientData;
}

/* The value after option objv[*i] (advancing *i), or NULL after an error
 * naming the option by its full name. */
static Tcl_Obj *opt_value(Tcl_Interp *interp, int objc, Tcl_Obj *const objv[], int *i, const char *name)
{
    if (*i + 1 >= objc) {
        fail(interp, "USAGE", "%s needs a value", name);
        return NULL;
    }
    return objv[++*i];
}

static int parse_model(Tcl_Interp *interp, Tcl_Obj *v, ft_compute_model *out)
{
    if (ft_compute_model_parse(Tcl_GetString(v), out))
        return fail(interp, "USAGE", "-model is \"%s\", must be native or op", Tcl_GetString(v));
    return TCL_OK;
}

static int parse_seconds(Tcl_Interp *interp, Tcl_Obj *v, double *out)
{
    double x;
    if (Tcl_GetDoubleFromObj(NULL, v, &x) != TCL_OK || !isfinite(x) || x <= 0)
        return fail(interp, "USAGE", "-timelimit is \"%s\", must be a positive number of seconds", Tcl_GetString(v));
    *out = x;
    return TCL_OK;
}

static int parse_seed(Tcl_Interp *interp, Tcl_Obj *v, uint64_t *out)
{
    const char *s = Tcl_GetString(v);
    unsigned long long x = 0;
    int digits = *s && strspn(s, "0123456789") == strlen(s);
    if (digits) {
        errno = 0;
        x = strtoull(s, NULL, 10);
    }
    if (!digits || errno)
        return fail(interp, "USAGE", "-seed is \"%s\", must be an integer from 0 to 18446744073709551615", s);
    *out = (uint64_t)x;
    return TCL_OK;
}

static Tcl_Obj *int_list(const int *a, int n)
{
    Tcl_Obj *l = Tcl_NewListObj(0, NULL);
    for (int i = 0; i < n; i++)
        Tcl_ListObjAppendElement(NULL, l, Tcl_NewIntObj(a[i]));
    return l;
}

static Tcl_Obj *wide_list(const int64_t *a, int64_t n)
{
    Tcl_Obj *l = Tcl_NewListObj(0, NULL);
    for (int64_t i = 0; i < n; i++)
        Tcl_ListObjAppendElement(NULL, l, Tcl_NewWideIntObj((Tcl_WideInt)a[i]));
    return l;
}

static Tcl_Obj *wide(int64_t x)
{
    return Tcl_NewWideIntObj((Tcl_WideInt)x);
}

/* dict set d key v (d unshared). */
static void put(Tcl_Obj *d, const char *key, Tcl_Obj *v)
{
    Tcl_DictObjPut(NULL, d, Tcl_NewStringObj(key, -1), v);
}

static Tcl_Obj *str(const char *s)
{
    return Tcl_NewStringObj(s ? s : "", -1);
}

static double rel_diff(double sim, double ana)
{
    if (isnan(sim) || isnan(ana))
        return INFINITY;
    double d = fabs(sim - ana), m = fabs(ana);
    return d == 0 ? 0 : m > 0 ? d / m : INFINITY;
}

/* ------------------------------------------------------------ dicts
 * One function per dict, so a new field is one line. */

static Tcl_Obj *native_dict(const ft_problem *p)
{
    Tcl_Obj *d = Tcl_NewDictObj();
    put(d, "w", wide(p->native_w));
    put(d, "h", wide(p->native_h));
    put(d, "k", wide(ft_native_k(p)));
    put(d, "larger", Tcl_NewBooleanObj(p->allow_larger));
    return d;
}

static const char *const overlap_names[] = {"step", "none", "pipeline", NULL};

/* The timing terms (ft_timing); write_bandwidth 0 is the read bandwidth. */
static Tcl_Obj *timing_dict(const ft_problem *p)
{
    const ft_timing *t = &p->timing;
    Tcl_Obj *d = Tcl_NewDictObj();
    put(d, "write_bandwidth", Tcl_NewDoubleObj(t->write_bandwidth));
    put(d, "transfer_latency", Tcl_NewDoubleObj(t->transfer_latency));
    put(d, "launch_overhead", Tcl_NewDoubleObj(t->launch_overhead));
    put(d, "overlap", str(overlap_names[t->overlap]));
    put(d, "duplex", Tcl_NewBooleanObj(t->duplex));
    return d;
}

/* Whether some op of p has a name (op_names), kind (op_kinds: which = 1)
 * or some tensor a name (tensor_names: which = 2). */
static int has_names(const ft_problem *p, int which)
{
    int n = which == 2 ? p->ntensors : p->nops;
    for (int i = 0; i < n; i++)
        if (which == 2 ? p->tensors[i].name != NULL : (which ? p->ops[i].kind : p->ops[i].name) != NULL)
            return 1;
    return 0;
}

/* `p info` op_names, op_kinds or tensor_names (which as for has_names). */
static Tcl_Obj *names_list(const ft_problem *p, int which)
{
    Tcl_Obj *l = Tcl_NewListObj(0, NULL);
    int n = which == 2 ? p->ntensors : p->nops;
    for (int i = 0; i < n; i++)
        Tcl_ListObjAppendElement(NULL, l, str(which == 2 ? p->tensors[i].name : which ? p->ops[i].kind : p->ops[i].name));
    return l;
}

/* Add "label" (ft_subgraph_label) to a subgraph's dict when p has op names. */
static void put_label(Tcl_Obj *d, const ft_problem *p, const ft_subgraph *g)
{
    if (!has_names(p, 0))
        return;
    char *label = ft_subgraph_label(p, g);
    put(d, "label", str(label));
    free(label);
}

/* `p info`: the problem's sizes and graph. */
static Tcl_Obj *problem_info_dict(const ft_problem *p)
{
    Tcl_Obj *d = Tcl_NewDictObj();
    put(d, "name", str(p->name));
    put(d, "ntensors", Tcl_NewIntObj(p->ntensors));
    put(d, "nops", Tcl_NewIntObj(p->nops));
    put(d, "capacity", Tcl_NewDoubleObj(p->capacity));
    put(d, "bandwidth", Tcl_NewDoubleObj(p->bandwidth));
    put(d, "native", native_dict(p));
    put(d, "timing", timing_dict(p));
    put(d, "inputs", int_list(p->graph_inputs, p->ngraph_inputs));
    put(d, "outputs", int_list(p->graph_outputs, p->ngraph_outputs));
    put(d, "topo", int_list(p->topo, p->nops));
    /* the problem file's optional names, when it has them */
    static const char *const names_key[] = {"op_names", "op_kinds", "tensor_names"};
    for (int which = 0; which < 3; which++)
        if (has_names(p, which))
            put(d, names_key[which], names_list(p, which));
    return d;
}

/* `p ops`: one op. */
static Tcl_Obj *op_dict(const ft_problem *p, int o)
{
    const ft_op *op = &p->ops[o];
    Tcl_Obj *d = Tcl_NewDictObj();
    put(d, "index", Tcl_NewIntObj(o));
    put(d, "type", str(ft_op_type_name(op->type)));
    put(d, "inputs", int_list(op->inputs, op->ninputs));
    put(d, "output", Tcl_NewIntObj(op->output));
    put(d, "base_cost", Tcl_NewDoubleObj(op->base_cost));
    put(d, "k", wide(op->k));
    if (op->name)
        put(d, "name", str(op->name));
    if (op->kind)
        put(d, "kind", str(op->kind));
    return d;
}

/* `p tensors`: one tensor. */
static Tcl_Obj *tensor_dict(const ft_problem *p, int t)
{
    const ft_tensor *x = &p->tensors[t];
    Tcl_Obj *d = Tcl_NewDictObj();
    put(d, "index", Tcl_NewIntObj(t));
    put(d, "width", wide(x->width));
    put(d, "height", wide(x->height));
    put(d, "size", wide(ft_tensor_size(p, t)));
    put(d, "producer", Tcl_NewIntObj(x->producer));
    put(d, "consumers", int_list(x->consumers, x->nconsumers));
    if (x->name)
        put(d, "name", str(x->name));
    return d;
}

/* `t info`: every setting of the target file.  Contest targets have only
 * the fields marked 0 in `machine`. */
enum { F_STR, F_BOOL, F_INT, F_DBL };
static const struct target_field {
    const char *key;
    int type;
    size_t off;
    int machine;
} target_fields[] = {
    {"path", F_STR, offsetof(ft_target, path), 0},
    {"name", F_STR, offsetof(ft_target, name), 0},
    {"description", F_STR, offsetof(ft_target, description), 0},
    {"contest", F_BOOL, offsetof(ft_target, contest), 0},
    {"clock_hz", F_DBL, offsetof(ft_target, clock_hz), 1},
    {"element_bytes", F_INT, offsetof(ft_target, element_bytes), 1},
    {"capacity_bytes", F_INT, offsetof(ft_target, capacity_bytes), 1},
    {"read_bandwidth", F_DBL, offsetof(ft_target, read_bandwidth), 1},
    {"write_bandwidth", F_DBL, offsetof(ft_target, write_bandwidth), 1},
    {"transfer_latency", F_DBL, offsetof(ft_target, transfer_latency), 1},
    {"separate_channels", F_BOOL, offsetof(ft_target, separate_channels), 1},
    {"native_w", F_INT, offsetof(ft_target, native_w), 1},
    {"native_h", F_INT, offsetof(ft_target, native_h), 1},
    {"native_k", F_INT, offsetof(ft_target, native_k), 1},
    {"allow_larger_granularity", F_BOOL, offsetof(ft_target, allow_larger_granularity), 1},
    {"matmul_macs_per_cycle", F_DBL, offsetof(ft_target, matmul_macs_per_cycle), 1},
    {"pointwise_elements_per_cycle", F_DBL, offsetof(ft_target, pointwise_elements_per_cycle), 1},
    {"launch_overhead", F_DBL, offsetof(ft_target, launch_overhead), 1},
    {"double_buffering", F_BOOL, offsetof(ft_target, double_buffering), 1},
};

static Tcl_Obj *target_info_dict(const ft_target *t)
{
    Tcl_Obj *d = Tcl_NewDictObj();
    const char *base = (const char *)t;
    for (size_t i = 0; i < sizeof target_fields / sizeof target_fields[0]; i++) {
        const struct target_field *f = &target_fields[i];
        if (f->machine && t->contest)
            continue;
        const void *v = base + f->off;
        Tcl_Obj *o = f->type == F_STR    ? str(*(char *const *)v)
                     : f->type == F_BOOL ? Tcl_NewBooleanObj(*(const int *)v)
                     : f->type == F_INT  ? wide(*(const int64_t *)v)
                                         : Tcl_NewDoubleObj(*(const double *)v);
        put(d, f->key, o);
    }
    return d;
}

/* `s subgraphs`: one subgraph of a schedule. */
static Tcl_Obj *subgraph_dict(const ft_problem *p, const ft_schedule *s, int i)
{
    const ft_subgraph *g = &s->sg[i];
    Tcl_Obj *d = Tcl_NewDictObj(), *gran = Tcl_NewDictObj();
    put(gran, "w", wide(g->w));
    put(gran, "h", wide(g->h));
    put(gran, "k", wide(g->k));
    put(d, "index", Tcl_NewIntObj(i));
    put(d, "ops", int_list(g->ops, g->nops));
    put(d, "granularity", gran);
    put(d, "retain", int_list(g->retain, g->nretain));
    put(d, "order", g->order ? wide_list(g->order, g->norder) : Tcl_NewObj());
    put(d, "reported", g->has_reported ? Tcl_NewDoubleObj(g->reported) : Tcl_NewObj());
    put_label(d, p, g);
    if (g->label) /* the strategy's group (ft_subgraph.label) */
        put(d, "group", str(g->label));
    return d;
}

/* `s evaluate`: one subgraph's analytic figures. */
static Tcl_Obj *eval_sg_dict(const ft_problem *p, const ft_schedule *s, const ft_sg_result *r, int i)
{
    Tcl_Obj *d = Tcl_NewDictObj(), *grid = Tcl_NewDictObj();
    put(grid, "ntx", wide(r->ntx));
    put(grid, "nty", wide(r->nty));
    put(grid, "nk", wide(r->nk));
    put(d, "index", Tcl_NewIntObj(i));
    put(d, "latency", Tcl_NewDoubleObj(r->latency));
    put(d, "steps", wide(r->steps));
    put(d, "grid", grid);
    put(d, "compute_time", Tcl_NewDoubleObj(r->compute_time));
    put(d, "memory_time", Tcl_NewDoubleObj(r->memory_time));
    put(d, "compute_bound_steps", wide(r->compute_bound_steps));
    put(d, "memory_bound_steps", wide(r->memory_bound_steps));
    put(d, "peak_working_set", wide(r->peak_working_set));
    put(d, "loaded", wide(r->loaded));
    put(d, "written", wide(r->written));
    put_label(d, p, &s->sg[i]);
    return d;
}

/* `s evaluate`: the whole evaluation. */
static Tcl_Obj *eval_dict(const ft_problem *p, const ft_schedule *s, const ft_eval *e)
{
    Tcl_Obj *d = Tcl_NewDictObj(), *sgs = Tcl_NewListObj(0, NULL);
    for (int i = 0; i < e->nsubgraphs; i++)
        Tcl_ListObjAppendElement(NULL, sgs, eval_sg_dict(p, s, &e->sg[i], i));
    put(d, "model", str(ft_compute_model_name(e->model)));
    put(d, "total", Tcl_NewDoubleObj(e->total));
    put(d, "lower_bound", Tcl_NewDoubleObj(e->lower_bound));
    put(d, "ratio", Tcl_NewDoubleObj(e->lower_bound > 0 ? e->total / e->lower_bound : 0.0));
    put(d, "subgraphs", sgs);
    return d;
}

/* `s simulate`: one subgraph's simulated and analytic figures. */
static Tcl_Obj *sim_sg_dict(const ft_problem *p, const ft_schedule *s, const ft_sim_sg *q, int i)
{
    Tcl_Obj *d = Tcl_NewDictObj();
    put(d, "index", Tcl_NewIntObj(i));
    put(d, "simulated", Tcl_NewDoubleObj(q->simulated));
    put(d, "analytic", Tcl_NewDoubleObj(q->analytic));
    put(d, "difference", Tcl_NewDoubleObj(q->simulated - q->analytic));
    put(d, "steps", wide(q->steps));
    put(d, "peak_occupancy", wide(q->peak_occupancy));
    put(d, "channel_busy", Tcl_NewDoubleObj(q->channel_busy));
    put(d, "compute_busy", Tcl_NewDoubleObj(q->compute_busy));
    put_label(d, p, &s->sg[i]);
    return d;
}

/* `s simulate`: the whole replay and its cross-check. */
static Tcl_Obj *sim_dict(const ft_problem *p, const ft_schedule *s, const ft_sim_result *r, ft_compute_model model)
{
    Tcl_Obj *d = Tcl_NewDictObj(), *sgs = Tcl_NewListObj(0, NULL);
    int agree = r->analytic_reason == FT_R_NONE && rel_diff(r->total_simulated, r->total_analytic) <= AGREE_REL;
    for (int i = 0; i < r->nsubgraphs; i++) {
        Tcl_ListObjAppendElement(NULL, sgs, sim_sg_dict(p, s, &r->sg[i], i));
        if (rel_diff(r->sg[i].simulated, r->sg[i].analytic) > AGREE_REL)
            agree = 0;
    }
    put(d, "model", str(ft_compute_model_name(model)));
    put(d, "total_simulated", Tcl_NewDoubleObj(r->total_simulated));
    put(d, "total_analytic", Tcl_NewDoubleObj(r->total_analytic));
    put(d, "difference", Tcl_NewDoubleObj(r->total_simulated - r->total_analytic));
    put(d, "agree", Tcl_NewBooleanObj(agree));
    put(d, "steps", wide(r->steps));
    put(d, "analytic_reason", str(ft_reason_name(r->analytic_reason)));
    put(d, "subgraphs", sgs);
    return d;
}

/* ------------------------------------------------------------ problem */

/* The settings `p configure` reads and changes, one row each: the value as
 * a Tcl object, and a parser that stores a new value into a problem copy
 * (range checks are ft_problem_finish's). */
typedef struct prob_option {
    const char *name;
    Tcl_Obj *(*get)(const ft_problem *p);
    int (*set)(Tcl_Interp *interp, ft_problem *p, Tcl_Obj *v);
} prob_option;

static Tcl_Obj *get_capacity(const ft_problem *p)
{
    return Tcl_NewDoubleObj(p->capacity);
}

static Tcl_Obj *get_bandwidth(const ft_problem *p)
{
    return Tcl_NewDoubleObj(p->bandwidth);
}

static Tcl_Obj *get_native(const ft_problem *p)
{
    Tcl_Obj *l = Tcl_NewListObj(0, NULL);
    Tcl_ListObjAppendElement(NULL, l, wide(p->native_w));
    Tcl_ListObjAppendElement(NULL, l, wide(p->native_h));
    return l;
}

static Tcl_Obj *get_native_k(const ft_problem *p)
{
    return wide(ft_native_k(p));
}

static Tcl_Obj *get_larger(const ft_problem *p)
{
    return Tcl_NewBooleanObj(p->allow_larger);
}

static Tcl_Obj *get_write_bandwidth(const ft_problem *p)
{
    return Tcl_NewDoubleObj(p->timing.write_bandwidth);
}

static Tcl_Obj *get_latency(const ft_problem *p)
{
    return Tcl_NewDoubleObj(p->timing.transfer_latency);
}

static Tcl_Obj *get_launch(const ft_problem *p)
{
    return Tcl_NewDoubleObj(p->timing.launch_overhead);
}

static Tcl_Obj *get_overlap(const ft_problem *p)
{
    return str(overlap_names[p->timing.overlap]);
}

static Tcl_Obj *get_duplex(const ft_problem *p)
{
    return Tcl_NewBooleanObj(p->timing.duplex);
}

static int set_number(Tcl_Interp *interp, const char *opt, Tcl_Obj *v, double *out)
{
    if (Tcl_GetDoubleFromObj(NULL, v, out) != TCL_OK)
        return fail(interp, "USAGE", "%s is \"%s\", must be a number", opt, Tcl_GetString(v));
    return TCL_OK;
}

static int set_capacity(Tcl_Interp *interp, ft_problem *p, Tcl_Obj *v)
{
    return set_number(interp, "-capacity", v, &p->capacity);
}

static int set_bandwidth(Tcl_Interp *interp, ft_problem *p, Tcl_Obj *v)
{
    return set_number(interp, "-bandwidth", v, &p->bandwidth);
}

static int set_native(Tcl_Interp *interp, ft_problem *p, Tcl_Obj *v)
{
    Tcl_Obj **el;
    int n;
    Tcl_WideInt w, h;
    if (Tcl_ListObjGetElements(NULL, v, &n, &el) != TCL_OK || n != 2 || Tcl_GetWideIntFromObj(NULL, el[0], &w) != TCL_OK ||
        Tcl_GetWideIntFromObj(NULL, el[1], &h) != TCL_OK)
        return fail(interp, "USAGE", "-native is \"%s\", must be a list of two integers {W H}", Tcl_GetString(v));
    p->native_w = (int64_t)w;
    p->native_h = (int64_t)h;
    return TCL_OK;
}

static int set_bool(Tcl_Interp *interp, const char *opt, Tcl_Obj *v, int *out)
{
    if (Tcl_GetBooleanFromObj(NULL, v, out) != TCL_OK)
        return fail(interp, "USAGE", "%s is \"%s\", must be a boolean", opt, Tcl_GetString(v));
    return TCL_OK;
}

static int set_native_k(Tcl_Interp *interp, ft_problem *p, Tcl_Obj *v)
{
    Tcl_WideInt k;
    if (Tcl_GetWideIntFromObj(NULL, v, &k) != TCL_OK || k < 1)
        return fail(interp, "USAGE", "-nativek is \"%s\", must be a positive integer", Tcl_GetString(v));
    p->native_k = (int64_t)k;
    return TCL_OK;
}

static int set_larger(Tcl_Interp *interp, ft_problem *p, Tcl_Obj *v)
{
    return set_bool(interp, "-larger", v, &p->allow_larger);
}

static int set_write_bandwidth(Tcl_Interp *interp, ft_problem *p, Tcl_Obj *v)
{
    return set_number(interp, "-writebandwidth", v, &p->timing.write_bandwidth);
}

static int set_latency(Tcl_Interp *interp, ft_problem *p, Tcl_Obj *v)
{
    return set_number(interp, "-latency", v, &p->timing.transfer_latency);
}

static int set_launch(Tcl_Interp *interp, ft_problem *p, Tcl_Obj *v)
{
    return set_number(interp, "-launch", v, &p->timing.launch_overhead);
}

static int set_overlap(Tcl_Interp *interp, ft_problem *p, Tcl_Obj *v)
{
    int i;
    if (Tcl_GetIndexFromObj(NULL, v, overlap_names, "mode", TCL_EXACT, &i) != TCL_OK)
        return fail(interp, "USAGE", "-overlap is \"%s\", must be step, none or pipeline", Tcl_GetString(v));
    p->timing.overlap = (ft_overlap)i;
    return TCL_OK;
}

static int set_duplex(Tcl_Interp *interp, ft_problem *p, Tcl_Obj *v)
{
    return set_bool(interp, "-duplex", v, &p->timing.duplex);
}

static const prob_option prob_options[] = {
    {"-capacity", get_capacity, set_capacity},
    {"-bandwidth", get_bandwidth, set_bandwidth},
    {"-native", get_native, set_native},
    {"-nativek", get_native_k, set_native_k},
    {"-larger", get_larger, set_larger},
    {"-writebandwidth", get_write_bandwidth, set_write_bandwidth},
    {"-latency", get_latency, set_latency},
    {"-launch", get_launch, set_launch},
    {"-overlap", get_overlap, set_overlap},
    {"-duplex", get_duplex, set_duplex},
};
#define NPROB_OPTIONS (int)(sizeof prob_options / sizeof prob_options[0])
static const char *const prob_option_names[] = {"-capacity", "-bandwidth", "-native", "-nativek", "-larger", "-writebandwidth",
                                                "-latency", "-launch", "-overlap", "-duplex", NULL};

/* Replace the handle's snapshot by p (taking ownership). */
static int prob_swap(Tcl_Interp *interp, Handle *h, ft_problem *p)
{
    ProbRef *r = prob_new(p);
    if (!r) {
        ft_problem_free(p);
        return fail_nomem(interp);
    }
    prob_unref(h->prob);
    h->prob = r;
    return TCL_OK;
}

/* p configure ?-option? ?value -option value ...? */
static int problem_configure(Tcl_Interp *interp, Handle *h, int objc, Tcl_Obj *const objv[])
{
    const ft_problem *p = h->prob->p;
    int idx;
    if (objc == 2) {
        Tcl_Obj *d = Tcl_NewDictObj();
        for (int i = 0; i < NPROB_OPTIONS; i++)
            put(d, prob_options[i].name, prob_options[i].get(p));
        Tcl_SetObjResult(interp, d);
        return TCL_OK;
    }
    if (objc == 3) {
        if (get_index(interp, objv[2], prob_option_names, "option", &idx) != TCL_OK)
            return TCL_ERROR;
        Tcl_SetObjResult(interp, prob_options[idx].get(p));
        return TCL_OK;
    }
    if (objc % 2)
        return wrong_args(interp, 2, objv, "?-option? ?value -option value ...?");
    ft_problem *c = ft_problem_clone(p);
    if (!c)
        return fail_nomem(interp);
    for (int i = 2; i < objc; i += 2) {
        if (get_index(interp, objv[i], prob_option_names, "option", &idx) != TCL_OK ||
            prob_options[idx].set(interp, c, objv[i + 1]) != TCL_OK) {
            ft_problem_free(c);
            return TCL_ERROR;
        }
    }
    ft_status st;
    if (ft_problem_finish(c, &st) != FT_OK) {
        ft_problem_free(c);
        return fail_status(interp, "", &st);
    }
    Tcl_ResetResult(interp);
    return prob_swap(interp, h, c);
}

/* p ops ?INDEX? / p tensors ?INDEX? */
static int problem_list(Tcl_Interp *interp, Handle *h, int objc, Tcl_Obj *const objv[], int ops)
{
    const ft_problem *p = h->prob->p;
    int n = ops ? p->nops : p->ntensors;
    Tcl_Obj *(*one)(const ft_problem *, int) = ops ? op_dict : tensor_dict;
    if (objc > 3)
        return wrong_args(interp, 2, objv, "?INDEX?");
    if (objc == 3) {
        int i;
        if (Tcl_GetIntFromObj(NULL, objv[2], &i) != TCL_OK || i < 0 || i >= n)
            return fail(interp, "USAGE", "%s index is \"%s\", must be an integer from 0 to %d", ops ? "op" : "tensor",
                        Tcl_GetString(objv[2]), n - 1);
        Tcl_SetObjResult(interp, one(p, i));
        return TCL_OK;
    }
    Tcl_Obj *l = Tcl_NewListObj(0, NULL);
    for (int i = 0; i < n; i++)
        Tcl_ListObjAppendElement(NULL, l, one(p, i));
    Tcl_SetObjResult(interp, l);
    return TCL_OK;
}

/* p lowerbound ?-model native|op? (SPEC section 5), or with capacity set
 * p capacitybound ?-model native|op? (section 7): the same dict */
static int problem_lowerbound(Tcl_Interp *interp, Handle *h, int objc, Tcl_Obj *const objv[], int capacity)
{
    static const char *const opts[] = {"-model", NULL};
    ft_compute_model model = FT_COMPUTE_NATIVE;
    for (int i = 2; i < objc; i++) {
        int idx;
        Tcl_Obj *v;
        if (get_index(interp, objv[i], opts, "option", &idx) != TCL_OK ||
            !(v = opt_value(interp, objc, objv, &i, opts[idx])) || parse_model(interp, v, &model) != TCL_OK)
            return TCL_ERROR;
    }
    double c, m;
    double b = (capacity ? ft_lower_bound_capacity : ft_lower_bound)(h->prob->p, model, &c, &m);
    Tcl_Obj *d = Tcl_NewDictObj();
    put(d, "model", str(ft_compute_model_name(model)));
    put(d, "bound", Tcl_NewDoubleObj(b));
    put(d, "compute", Tcl_NewDoubleObj(c));
    put(d, "memory", Tcl_NewDoubleObj(m));
    Tcl_SetObjResult(interp, d);
    return TCL_OK;
}

/* The grouping-strategy options of `p schedule` (-strategy, -startfrom,
 * -patterns, -partition, -parts) into *o; the -patterns list's strings
 * into files (at most FT_TCL_MAX_PATTERN_FILES; they live as long as v).
 * TCL_OK or TCL_ERROR with a USAGE error. */
#define FT_TCL_MAX_PATTERN_FILES 16
static int strategy_opt(Tcl_Interp *interp, const char *opt, Tcl_Obj *v, ft_search_opts *o, const char **files)
{
    ft_status st;
    const char *s = Tcl_GetString(v);
    int rc = FT_OK, n;
    Tcl_Obj **elems;
    if (!strcmp(opt, "-strategy"))
        rc = ft_strategy_parse(s, &o->strategy, &st);
    else if (!strcmp(opt, "-startfrom"))
        rc = ft_strategy_parse_starts(s, &o->start_from, &st);
    else if (!strcmp(opt, "-partition"))
        rc = ft_partition_method_parse(s, &o->partition, &st);
    else if (!strcmp(opt, "-parts")) {
        if (Tcl_GetIntFromObj(NULL, v, &o->parts) != TCL_OK || o->parts < 1)
            return fail(interp, "USAGE", "-parts is \"%s\", must be a positive integer", s);
    } else { /* -patterns */
        if (Tcl_ListObjGetElements(NULL, v, &n, &elems) != TCL_OK || n < 1 || n > FT_TCL_MAX_PATTERN_FILES)
            return fail(interp, "USAGE", "-patterns is \"%s\", must be a list of 1 to %d pattern files", s,
                        FT_TCL_MAX_PATTERN_FILES);
        for (int i = 0; i < n; i++)
            files[i] = Tcl_GetString(elems[i]);
        o->pattern_files = files;
        o->npattern_files = n;
    }
    if (rc != FT_OK)
        return fail(interp, "USAGE", "%s: %s", opt, st.msg);
    return TCL_OK;
}

/* p schedule NAME ?-timelimit S? ?-model M? ?-seed N? ?-threads N? ?-target T? ?-keepcosts?
 *   ?-strategy NAME? ?-startfrom LIST? ?-patterns FILES? ?-partition M? ?-parts N? */
static int problem_schedule(Tcl_Interp *interp, Handle *h, int objc, Tcl_Obj *const objv[])
{
    static const char *const opts[] = {"-timelimit", "-model",     "-seed",     "-threads",   "-target", "-keepcosts",
                                       "-strategy",  "-startfrom", "-patterns", "-partition", "-parts",  NULL};
    enum { O_TIMELIMIT, O_MODEL, O_SEED, O_THREADS, O_TARGET, O_KEEPCOSTS };
    if (objc < 3)
        return wrong_args(interp, 2, objv,
                          "NAME ?-timelimit SECONDS? ?-model native|op? ?-seed N? ?-threads N? ?-target TARGET? ?-keepcosts? "
                          "?-strategy NAME? ?-startfrom LIST? ?-patterns FILES? ?-partition METHOD? ?-parts N?");
    ft_search_opts o;
    ft_search_opts_init(&o);
    o.time_limit = 0;
    Handle *t = NULL;
    int keep_costs = 0;
    const char *files[FT_TCL_MAX_PATTERN_FILES];
    for (int i = 3; i < objc; i++) {
        int idx;
        Tcl_Obj *v = NULL;
        if (get_index(interp, objv[i], opts, "option", &idx) != TCL_OK)
            return TCL_ERROR;
        if (idx != O_KEEPCOSTS && !(v = opt_value(interp, objc, objv, &i, opts[idx])))
            return TCL_ERROR;
        switch (idx) {
        case O_TIMELIMIT:
            if (parse_seconds(interp, v, &o.time_limit) != TCL_OK)
                return TCL_ERROR;
            break;
        case O_MODEL:
            if (parse_model(interp, v, &o.model) != TCL_OK)
                return TCL_ERROR;
            break;
        case O_SEED:
            if (parse_seed(interp, v, &o.seed) != TCL_OK)
                return TCL_ERROR;
            break;
        case O_THREADS:
            if (Tcl_GetIntFromObj(NULL, v, &o.threads) != TCL_OK || o.threads < 0 || o.threads > FT_SEARCH_MAX_THREADS)
                return fail(interp, "USAGE", "-threads is \"%s\", must be an integer from 0 (one per core) to %d",
                            Tcl_GetString(v), FT_SEARCH_MAX_THREADS);
            break;
        case O_TARGET:
            if (!(t = handle_lookup(interp, v, K_TARGET)))
                return TCL_ERROR;
            break;
        case O_KEEPCOSTS:
            keep_costs = 1;
            break;
        default:
            if (strategy_opt(interp, opts[idx], v, &o, files) != TCL_OK)
                return TCL_ERROR;
        }
    }
    if (keep_costs && !t)
        return fail(interp, "USAGE", "-keepcosts needs -target");
    if (name_free(interp, objv[2]) != TCL_OK)
        return TCL_ERROR;

    ProbRef *pr;
    ft_status st;
    if (t) {
        ft_problem *c = ft_problem_clone(h->prob->p);
        if (!c)
            return fail_nomem(interp);
        if (ft_target_apply(t->target, c, keep_costs, &st) != FT_OK) {
            char pfx[1024];
            snprintf(pfx, sizeof pfx, "%s: with target %s: ", h->prob->p->name, t->target->path);
            ft_problem_free(c);
            return fail_status(interp, pfx, &st);
        }
        if (!(pr = prob_new(c))) {
            ft_problem_free(c);
            return fail_nomem(interp);
        }
    } else {
        pr = prob_ref(h->prob);
    }
    if (o.time_limit <= 0)
        o.time_limit = ft_contest_time_limit(pr->p->nops);
    ft_schedule *s = NULL;
    ft_eval ev;
    int rc = ft_search(pr->p, &o, &s, &ev, &st);
    if (rc != FT_OK) {
        prob_unref(pr);
        return fail_status(interp, "", &st);
    }
    ft_eval_free(&ev);
    Handle *sh = handle_new(interp, objv[2], K_SCHEDULE);
    if (!sh) {
        ft_schedule_free(s);
        prob_unref(pr);
        return TCL_ERROR;
    }
    sh->prob = pr;
    sh->sched = s;
    sh->model = o.model;
    return TCL_OK;
}

/* p clone NAME / s problem NAME: a new problem handle on the same snapshot. */
static int problem_handle_of(Tcl_Interp *interp, ProbRef *pr, Tcl_Obj *name)
{
    Handle *n = handle_new(interp, name, K_PROBLEM);
    if (!n)
        return TCL_ERROR;
    n->prob = prob_ref(pr);
    return TCL_OK;
}

static int problem_cmd(ClientData cd, Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    static const char *const subs[] = {"info", "ops", "tensors", "configure", "lowerbound", "schedule", "clone", "destroy", NULL};
    enum { S_INFO, S_OPS, S_TENSORS, S_CONFIGURE, S_LOWERBOUND, S_SCHEDULE, S_CLONE, S_DESTROY };
    Handle *h = cd;
    int sub;
    /* p capacitybound: accepted ahead of the table, whose list of names
     * (in the "bad subcommand" message) stays as scripts know it */
    if (objc >= 2 && !strcmp(Tcl_GetString(objv[1]), "capacitybound"))
        return problem_lowerbound(interp, h, objc, objv, 1);
    if (subcommand(interp, objc, objv, subs, &sub) != TCL_OK)
        return TCL_ERROR;
    switch (sub) {
    case S_INFO: /* p info */
        if (objc != 2)
            return wrong_args(interp, 2, objv, NULL);
        Tcl_SetObjResult(interp, problem_info_dict(h->prob->p));
        return TCL_OK;
    case S_OPS: /* p ops ?INDEX? */
    case S_TENSORS: /* p tensors ?INDEX? */
        return problem_list(interp, h, objc, objv, sub == S_OPS);
    case S_CONFIGURE: /* p configure ?-option? ?value -option value ...? */
        return problem_configure(interp, h, objc, objv);
    case S_LOWERBOUND: /* p lowerbound ?-model native|op? */
        return problem_lowerbound(interp, h, objc, objv, 0);
    case S_SCHEDULE: /* p schedule NAME ?options? */
        return problem_schedule(interp, h, objc, objv);
    case S_CLONE: /* p clone NAME */
        if (objc != 3)
            return wrong_args(interp, 2, objv, "NAME");
        return problem_handle_of(interp, h->prob, objv[2]);
    default: /* p destroy */
        return handle_destroy(interp, h, objc, objv);
    }
}

/* ------------------------------------------------------------ target */

/* t apply PROBLEM ?-keepcosts? */
static int target_apply(Tcl_Interp *interp, Handle *h, int objc, Tcl_Obj *const objv[])
{
    static const char *const opts[] = {"-keepcosts", NULL};
    if (objc < 3 || objc > 4)
        return wrong_args(interp, 2, objv, "PROBLEM ?-keepcosts?");
    int idx, keep_costs = objc == 4;
    if (objc == 4 && get_index(interp, objv[3], opts, "option", &idx) != TCL_OK)
        return TCL_ERROR;
    Handle *ph = handle_lookup(interp, objv[2], K_PROBLEM);
    if (!ph)
        return TCL_ERROR;
    ft_problem *c = ft_problem_clone(ph->prob->p);
    if (!c)
        return fail_nomem(interp);
    ft_status st;
    if (ft_target_apply(h->target, c, keep_costs, &st) != FT_OK) {
        char pfx[1024];
        snprintf(pfx, sizeof pfx, "%s: with target %s: ", ph->prob->p->name, h->target->path);
        ft_problem_free(c);
        return fail_status(interp, pfx, &st);
    }
    return prob_swap(interp, ph, c);
}

static int target_cmd(ClientData cd, Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    static const char *const subs[] = {"info", "describe", "apply", "destroy", NULL};
    enum { S_INFO, S_DESCRIBE, S_APPLY, S_DESTROY };
    Handle *h = cd;
    int sub;
    if (subcommand(interp, objc, objv, subs, &sub) != TCL_OK)
        return TCL_ERROR;
    switch (sub) {
    case S_INFO: /* t info */
        if (objc != 2)
            return wrong_args(interp, 2, objv, NULL);
        Tcl_SetObjResult(interp, target_info_dict(h->target));
        return TCL_OK;
    case S_DESCRIBE: { /* t describe */
        if (objc != 2)
            return wrong_args(interp, 2, objv, NULL);
        int n = ft_target_describe(h->target, NULL, 0);
        char *buf = malloc((size_t)n + 1);
        if (!buf)
            return fail_nomem(interp);
        ft_target_describe(h->target, buf, (size_t)n + 1);
        Tcl_SetObjResult(interp, Tcl_NewStringObj(buf, -1));
        free(buf);
        return TCL_OK;
    }
    case S_APPLY: /* t apply PROBLEM ?-keepcosts? */
        return target_apply(interp, h, objc, objv);
    default: /* t destroy */
        return handle_destroy(interp, h, objc, objv);
    }
}

/* ------------------------------------------------------------ schedule */

/* s evaluate ?-model M? */
static int schedule_evaluate(Tcl_Interp *interp, Handle *h, int objc, Tcl_Obj *const objv[])
{
    static const char *const opts[] = {"-model", NULL};
    ft_compute_model model = h->model;
    for (int i = 2; i < objc; i++) {
        int idx;
        Tcl_Obj *v;
        if (get_index(interp, objv[i], opts, "option", &idx) != TCL_OK ||
            !(v = opt_value(interp, objc, objv, &i, opts[idx])) || parse_model(interp, v, &model) != TCL_OK)
            return TCL_ERROR;
    }
    ft_eval e;
    ft_status st;
    if (ft_evaluate(h->prob->p, h->sched, model, &e, &st) != FT_OK) {
        char pfx[64];
        snprintf(pfx, sizeof pfx, "invalid schedule (%s): ", ft_reason_name(st.reason));
        return fail_status(interp, st.code == FT_EINVALID ? pfx : "", &st);
    }
    Tcl_SetObjResult(interp, eval_dict(h->prob->p, h->sched, &e));
    ft_eval_free(&e);
    return TCL_OK;
}

/* s simulate ?-model M? ?-trace FILE? ?-vcd FILE? */
static int schedule_simulate(Tcl_Interp *interp, Handle *h, int objc, Tcl_Obj *const objv[])
{
    static const char *const opts[] = {"-model", "-trace", "-vcd", NULL};
    enum { O_MODEL, O_TRACE, O_VCD };
    ft_sim_opts so;
    ft_sim_opts_init(&so);
    so.model = h->model;
    for (int i = 2; i < objc; i++) {
        int idx;
        Tcl_Obj *v;
        if (get_index(interp, objv[i], opts, "option", &idx) != TCL_OK ||
            !(v = opt_value(interp, objc, objv, &i, opts[idx])))
            return TCL_ERROR;
        if (idx == O_MODEL) {
            if (parse_model(interp, v, &so.model) != TCL_OK)
                return TCL_ERROR;
        } else {
            const char *f = Tcl_GetString(v);
            if (!*f)
                return fail(interp, "USAGE", "%s needs a file name", opts[idx]);
            *(idx == O_VCD ? &so.trace_vcd : &so.trace_json) = f;
        }
    }
    if (so.trace_json && so.trace_vcd && strcmp(so.trace_json, so.trace_vcd) == 0)
        return fail(interp, "USAGE", "-trace and -vcd name the same file \"%s\"", so.trace_json);
    Registry *reg = h->reg;
    if (!reg->sim) {
        const char *err = NULL;
        if (ft_sim_new(&reg->sim, &err) != FT_OK) {
            reg->sim = NULL;
            return fail(interp, "INPUT", "simulator: %s", err ? err : "cannot start");
        }
    }
    ft_sim_result r;
    int rc = ft_sim_run(reg->sim, h->prob->p, h->sched, &so, &r);
    if (rc == FT_EINVALID) {
        char sg[32], tile[32], step[32];
        snprintf(sg, sizeof sg, "%d", r.fail_sg);
        snprintf(tile, sizeof tile, "%lld", (long long)r.fail_tile);
        snprintf(step, sizeof step, "%lld", (long long)r.fail_step);
        Tcl_SetObjResult(interp,
                         Tcl_ObjPrintf("invalid schedule (%s): simulator: %s", ft_reason_name(r.reason), ft_sim_errmsg(reg->sim)));
        Tcl_SetErrorCode(interp, "FUSETILE", "INVALID", ft_reason_name(r.reason), sg, tile, step, (char *)NULL);
        ft_sim_result_free(&r);
        return TCL_ERROR;
    }
    if (rc != FT_OK) {
        fail(interp, rc == FT_ENOMEM ? "NOMEM" : "INPUT", "simulator: %s", ft_sim_errmsg(reg->sim));
        ft_sim_result_free(&r);
        return TCL_ERROR;
    }
    Tcl_SetObjResult(interp, sim_dict(h->prob->p, h->sched, &r, so.model));
    ft_sim_result_free(&r);
    return TCL_OK;
}

static int schedule_cmd(ClientData cd, Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    static const char *const subs[] = {"info", "subgraphs", "evaluate", "simulate", "write", "json", "problem", "destroy", NULL};
    enum { S_INFO, S_SUBGRAPHS, S_EVALUATE, S_SIMULATE, S_WRITE, S_JSON, S_PROBLEM, S_DESTROY };
    Handle *h = cd;
    int sub;
    ft_status st;
    if (subcommand(interp, objc, objv, subs, &sub) != TCL_OK)
        return TCL_ERROR;
    switch (sub) {
    case S_INFO: { /* s info */
        if (objc != 2)
            return wrong_args(interp, 2, objv, NULL);
        Tcl_Obj *d = Tcl_NewDictObj();
        put(d, "name", str(h->sched->name));
        put(d, "problem", str(h->prob->p->name));
        put(d, "nsubgraphs", Tcl_NewIntObj(h->sched->nsubgraphs));
        put(d, "model", str(ft_compute_model_name(h->model)));
        Tcl_SetObjResult(interp, d);
        return TCL_OK;
    }
    case S_SUBGRAPHS: { /* s subgraphs */
        if (objc != 2)
            return wrong_args(interp, 2, objv, NULL);
        Tcl_Obj *l = Tcl_NewListObj(0, NULL);
        for (int i = 0; i < h->sched->nsubgraphs; i++)
            Tcl_ListObjAppendElement(NULL, l, subgraph_dict(h->prob->p, h->sched, i));
        Tcl_SetObjResult(interp, l);
        return TCL_OK;
    }
    case S_EVALUATE: /* s evaluate ?-model native|op? */
        return schedule_evaluate(interp, h, objc, objv);
    case S_SIMULATE: /* s simulate ?-model native|op? ?-trace FILE? ?-vcd FILE? */
        return schedule_simulate(interp, h, objc, objv);
    case S_WRITE: /* s write FILE */
        if (objc != 3)
            return wrong_args(interp, 2, objv, "FILE");
        if (ft_schedule_write(h->sched, NULL, Tcl_GetString(objv[2]), &st) != FT_OK)
            return fail_status(interp, "", &st);
        Tcl_ResetResult(interp);
        return TCL_OK;
    case S_JSON: { /* s json */
        if (objc != 2)
            return wrong_args(interp, 2, objv, NULL);
        char *text = ft_schedule_to_json(h->sched, NULL);
        if (!text)
            return fail_nomem(interp);
        Tcl_SetObjResult(interp, Tcl_NewStringObj(text, -1));
        free(text);
        return TCL_OK;
    }
    case S_PROBLEM: /* s problem NAME */
        if (objc != 3)
            return wrong_args(interp, 2, objv, "NAME");
        return problem_handle_of(interp, h->prob, objv[2]);
    default: /* s destroy */
        return handle_destroy(interp, h, objc, objv);
    }
}

/* ------------------------------------------------------------ factories */

/* Parse "NAME FILE" or "NAME -text JSON" from objv[first]; *text is 1 for
 * the second form. */
static int source_args(Tcl_Interp *interp, int objc, Tcl_Obj *const objv[], int first, const char *usage, int *text)
{
    if (objc == first + 2) {
        *text = 0;
        return TCL_OK;
    }
    if (objc == first + 3 && strcmp(Tcl_GetString(objv[first + 1]), "-text") == 0) {
        *text = 1;
        return TCL_OK;
    }
    return wrong_args(interp, 1, objv, usage);
}

/* fusetile::problem NAME FILE | NAME -text JSON */
static int factory_problem(ClientData cd, Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    (void)cd;
    int text;
    if (source_args(interp, objc, objv, 1, "NAME FILE | NAME -text JSON", &text) != TCL_OK)
        return TCL_ERROR;
    if (name_free(interp, objv[1]) != TCL_OK)
        return TCL_ERROR;
    ft_problem *p;
    ft_status st;
    int rc = text ? ft_problem_parse(Tcl_GetString(objv[3]), "<text>", &p, &st) : ft_problem_load(Tcl_GetString(objv[2]), &p, &st);
    if (rc != FT_OK)
        return fail_status(interp, "", &st);
    ProbRef *pr = prob_new(p);
    if (!pr) {
        ft_problem_free(p);
        return fail_nomem(interp);
    }
    Handle *h = handle_new(interp, objv[1], K_PROBLEM);
    if (!h) {
        prob_unref(pr);
        return TCL_ERROR;
    }
    h->prob = pr;
    return TCL_OK;
}

/* fusetile::target NAME FILE */
static int factory_target(ClientData cd, Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    (void)cd;
    if (objc != 3)
        return wrong_args(interp, 1, objv, "NAME FILE");
    if (name_free(interp, objv[1]) != TCL_OK)
        return TCL_ERROR;
    ft_target *t;
    ft_status st;
    if (ft_target_load(Tcl_GetString(objv[2]), &t, &st) != FT_OK)
        return fail_status(interp, "", &st);
    Handle *h = handle_new(interp, objv[1], K_TARGET);
    if (!h) {
        ft_target_free(t);
        return TCL_ERROR;
    }
    h->target = t;
    return TCL_OK;
}

/* fusetile::schedule NAME PROBLEM FILE | NAME PROBLEM -text JSON */
static int factory_schedule(ClientData cd, Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    (void)cd;
    int text;
    if (source_args(interp, objc, objv, 2, "NAME PROBLEM FILE | NAME PROBLEM -text JSON", &text) != TCL_OK)
        return TCL_ERROR;
    if (name_free(interp, objv[1]) != TCL_OK)
        return TCL_ERROR;
    Handle *ph = handle_lookup(interp, objv[2], K_PROBLEM);
    if (!ph)
        return TCL_ERROR;
    ft_schedule *s;
    ft_status st;
    int rc = text ? ft_schedule_parse(Tcl_GetString(objv[4]), "<text>", &s, &st) : ft_schedule_load(Tcl_GetString(objv[3]), &s, &st);
    if (rc != FT_OK)
        return fail_status(interp, "", &st);
    Handle *h = handle_new(interp, objv[1], K_SCHEDULE);
    if (!h) {
        ft_schedule_free(s);
        return TCL_ERROR;
    }
    h->prob = prob_ref(ph->prob);
    h->sched = s;
    h->model = FT_COMPUTE_NATIVE;
    return TCL_OK;
}

/* fusetile::handles ?problem|target|schedule? */
static int factory_handles(ClientData cd, Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    (void)cd;
    int kind = -1;
    if (objc > 2)
        return wrong_args(interp, 1, objv, "?problem|target|schedule?");
    if (objc == 2 && get_index(interp, objv[1], kind_names, "kind", &kind) != TCL_OK)
        return TCL_ERROR;
    Tcl_Obj *l = Tcl_NewListObj(0, NULL);
    for (Handle *h = registry_of(interp)->first; h; h = h->next)
        if (kind < 0 || (int)h->kind == kind) {
            Tcl_Obj *name = Tcl_NewObj();
            Tcl_GetCommandFullName(interp, h->token, name);
            Tcl_ListObjAppendElement(NULL, l, name);
        }
    Tcl_SetObjResult(interp, l);
    return TCL_OK;
}

int Fusetile_Init(Tcl_Interp *interp)
{
    if (!Tcl_InitStubs(interp, "8.6", 0))
        return TCL_ERROR;
    if (!registry_of(interp)) {
        Registry *reg = calloc(1, sizeof *reg);
        if (!reg)
            return fail_nomem(interp);
        Tcl_SetAssocData(interp, ASSOC_KEY, registry_delete, reg);
        Tcl_Namespace *ns = Tcl_FindNamespace(interp, "::fusetile", NULL, 0);
        if (!ns && !(ns = Tcl_CreateNamespace(interp, "::fusetile", NULL, NULL)))
            return TCL_ERROR;
        Tcl_CreateObjCommand(interp, "::fusetile::problem", factory_problem, NULL, NULL);
        Tcl_CreateObjCommand(interp, "::fusetile::target", factory_target, NULL, NULL);
        Tcl_CreateObjCommand(interp, "::fusetile::schedule", factory_schedule, NULL, NULL);
        Tcl_CreateObjCommand(interp, "::fusetile::handles", factory_handles, NULL, NULL);
        if (Tcl_Export(interp, ns, "*", 0) != TCL_OK)
            return TCL_ERROR;
    }
    return Tcl_PkgProvide(interp, "fusetile", FT_VERSION);
}
