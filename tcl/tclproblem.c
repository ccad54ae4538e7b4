/* tclproblem.c - the Tcl binding's problem handle command: info, ops, tensors, configure, lowerbound and capacitybound, schedule (ft_search), clone, destroy. */
#define _POSIX_C_SOURCE 200809L
#include "fttcl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    Tcl_ListObjAppendElement(NULL, l, fttcl_wide(p->native_w));
    Tcl_ListObjAppendElement(NULL, l, fttcl_wide(p->native_h));
    return l;
}

static Tcl_Obj *get_native_k(const ft_problem *p)
{
    return fttcl_wide(ft_native_k(p));
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
    return fttcl_str(fttcl_overlap_names[p->timing.overlap]);
}

static Tcl_Obj *get_duplex(const ft_problem *p)
{
    return Tcl_NewBooleanObj(p->timing.duplex);
}

static int set_number(Tcl_Interp *interp, const char *opt, Tcl_Obj *v, double *out)
{
    if (Tcl_GetDoubleFromObj(NULL, v, out) != TCL_OK)
        return fttcl_fail(interp, "USAGE", "%s is \"%s\", must be a number", opt, Tcl_GetString(v));
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
        return fttcl_fail(interp, "USAGE", "-native is \"%s\", must be a list of two integers {W H}", Tcl_GetString(v));
    p->native_w = (int64_t)w;
    p->native_h = (int64_t)h;
    return TCL_OK;
}

static int set_bool(Tcl_Interp *interp, const char *opt, Tcl_Obj *v, int *out)
{
    if (Tcl_GetBooleanFromObj(NULL, v, out) != TCL_OK)
        return fttcl_fail(interp, "USAGE", "%s is \"%s\", must be a boolean", opt, Tcl_GetString(v));
    return TCL_OK;
}

static int set_native_k(Tcl_Interp *interp, ft_problem *p, Tcl_Obj *v)
{
    Tcl_WideInt k;
    if (Tcl_GetWideIntFromObj(NULL, v, &k) != TCL_OK || k < 1)
        return fttcl_fail(interp, "USAGE", "-nativek is \"%s\", must be a positive integer", Tcl_GetString(v));
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
    if (Tcl_GetIndexFromObj(NULL, v, fttcl_overlap_names, "mode", TCL_EXACT, &i) != TCL_OK)
        return fttcl_fail(interp, "USAGE", "-overlap is \"%s\", must be step, none or pipeline", Tcl_GetString(v));
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

/* p configure ?-option? ?value -option value ...? */
static int problem_configure(Tcl_Interp *interp, Handle *h, int objc, Tcl_Obj *const objv[])
{
    const ft_problem *p = h->prob->p;
    int idx;
    if (objc == 2) {
        Tcl_Obj *d = Tcl_NewDictObj();
        for (int i = 0; i < NPROB_OPTIONS; i++)
            fttcl_put(d, prob_options[i].name, prob_options[i].get(p));
        Tcl_SetObjResult(interp, d);
        return TCL_OK;
    }
    if (objc == 3) {
        if (fttcl_get_index(interp, objv[2], prob_option_names, "option", &idx) != TCL_OK)
            return TCL_ERROR;
        Tcl_SetObjResult(interp, prob_options[idx].get(p));
        return TCL_OK;
    }
    if (objc % 2)
        return fttcl_wrong_args(interp, 2, objv, "?-option? ?value -option value ...?");
    ft_problem *c = ft_problem_clone(p);
    if (!c)
        return fttcl_fail_nomem(interp);
    for (int i = 2; i < objc; i += 2) {
        if (fttcl_get_index(interp, objv[i], prob_option_names, "option", &idx) != TCL_OK ||
            prob_options[idx].set(interp, c, objv[i + 1]) != TCL_OK) {
            ft_problem_free(c);
            return TCL_ERROR;
        }
    }
    ft_status st;
    if (ft_problem_finish(c, &st) != FT_OK) {
        ft_problem_free(c);
        return fttcl_fail_status(interp, "", &st);
    }
    Tcl_ResetResult(interp);
    return fttcl_prob_swap(interp, h, c);
}

/* p ops ?INDEX? / p tensors ?INDEX? */
static int problem_list(Tcl_Interp *interp, Handle *h, int objc, Tcl_Obj *const objv[], int ops)
{
    const ft_problem *p = h->prob->p;
    int n = ops ? p->nops : p->ntensors;
    Tcl_Obj *(*one)(const ft_problem *, int) = ops ? fttcl_op_dict : fttcl_tensor_dict;
    if (objc > 3)
        return fttcl_wrong_args(interp, 2, objv, "?INDEX?");
    if (objc == 3) {
        int i;
        if (Tcl_GetIntFromObj(NULL, objv[2], &i) != TCL_OK || i < 0 || i >= n)
            return fttcl_fail(interp, "USAGE", "%s index is \"%s\", must be an integer from 0 to %d", ops ? "op" : "tensor",
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
        if (fttcl_get_index(interp, objv[i], opts, "option", &idx) != TCL_OK ||
            !(v = fttcl_opt_value(interp, objc, objv, &i, opts[idx])) || fttcl_parse_model(interp, v, &model) != TCL_OK)
            return TCL_ERROR;
    }
    double c, m;
    double b = (capacity ? ft_lower_bound_capacity : ft_lower_bound)(h->prob->p, model, &c, &m);
    Tcl_Obj *d = Tcl_NewDictObj();
    fttcl_put(d, "model", fttcl_str(ft_compute_model_name(model)));
    fttcl_put(d, "bound", Tcl_NewDoubleObj(b));
    fttcl_put(d, "compute", Tcl_NewDoubleObj(c));
    fttcl_put(d, "memory", Tcl_NewDoubleObj(m));
    Tcl_SetObjResult(interp, d);
    return TCL_OK;
}

/* The grouping-strategy options of `p schedule` (-strategy, -startfrom,
 * -patterns, -partition, -parts) and its -objective into *o; the -patterns list's strings
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
    else if (!strcmp(opt, "-objective")) {
        if (ft_objective_parse(s, &o->objective))
            return fttcl_fail(interp, "USAGE", "-objective is \"%s\", must be latency, energy or edp", s);
    } else if (!strcmp(opt, "-parts")) {
        if (Tcl_GetIntFromObj(NULL, v, &o->parts) != TCL_OK || o->parts < 1)
            return fttcl_fail(interp, "USAGE", "-parts is \"%s\", must be a positive integer", s);
    } else { /* -patterns */
        if (Tcl_ListObjGetElements(NULL, v, &n, &elems) != TCL_OK || n < 1 || n > FT_TCL_MAX_PATTERN_FILES)
            return fttcl_fail(interp, "USAGE", "-patterns is \"%s\", must be a list of 1 to %d pattern files", s,
                        FT_TCL_MAX_PATTERN_FILES);
        for (int i = 0; i < n; i++)
            files[i] = Tcl_GetString(elems[i]);
        o->pattern_files = files;
        o->npattern_files = n;
    }
    if (rc != FT_OK)
        return fttcl_fail(interp, "USAGE", "%s: %s", opt, st.msg);
    return TCL_OK;
}

/* p schedule NAME ?-timelimit S? ?-model M? ?-seed N? ?-threads N? ?-target T? ?-keepcosts?
 *   ?-strategy NAME? ?-startfrom LIST? ?-patterns FILES? ?-partition M? ?-parts N?
 *   ?-objective latency|energy|edp? */
static int problem_schedule(Tcl_Interp *interp, Handle *h, int objc, Tcl_Obj *const objv[])
{
    static const char *const opts[] = {"-timelimit", "-model",     "-seed",     "-threads",   "-target", "-keepcosts",
                                       "-strategy",  "-startfrom", "-patterns", "-partition", "-parts",  "-objective", NULL};
    enum { O_TIMELIMIT, O_MODEL, O_SEED, O_THREADS, O_TARGET, O_KEEPCOSTS };
    if (objc < 3)
        return fttcl_wrong_args(interp, 2, objv,
                          "NAME ?-timelimit SECONDS? ?-model native|op? ?-seed N? ?-threads N? ?-target TARGET? ?-keepcosts? "
                          "?-strategy NAME? ?-startfrom LIST? ?-patterns FILES? ?-partition METHOD? ?-parts N? "
                          "?-objective latency|energy|edp?");
    ft_search_opts o;
    ft_search_opts_init(&o);
    o.time_limit = 0;
    o.patterns_dir = getenv("FT_PATTERNS_DIR"); /* ::env(FT_PATTERNS_DIR); the library reads no environment */
    Handle *t = NULL;
    int keep_costs = 0;
    const char *files[FT_TCL_MAX_PATTERN_FILES];
    for (int i = 3; i < objc; i++) {
        int idx;
        Tcl_Obj *v = NULL;
        if (fttcl_get_index(interp, objv[i], opts, "option", &idx) != TCL_OK)
            return TCL_ERROR;
        if (idx != O_KEEPCOSTS && !(v = fttcl_opt_value(interp, objc, objv, &i, opts[idx])))
            return TCL_ERROR;
        switch (idx) {
        case O_TIMELIMIT:
            if (fttcl_parse_seconds(interp, v, &o.time_limit) != TCL_OK)
                return TCL_ERROR;
            break;
        case O_MODEL:
            if (fttcl_parse_model(interp, v, &o.model) != TCL_OK)
                return TCL_ERROR;
            break;
        case O_SEED:
            if (fttcl_parse_seed(interp, v, &o.seed) != TCL_OK)
                return TCL_ERROR;
            break;
        case O_THREADS:
            if (Tcl_GetIntFromObj(NULL, v, &o.threads) != TCL_OK || o.threads < 0 || o.threads > FT_SEARCH_MAX_THREADS)
                return fttcl_fail(interp, "USAGE", "-threads is \"%s\", must be an integer from 0 (one per core) to %d",
                            Tcl_GetString(v), FT_SEARCH_MAX_THREADS);
            break;
        case O_TARGET:
            if (!(t = fttcl_handle_lookup(interp, v, K_TARGET)))
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
        return fttcl_fail(interp, "USAGE", "-keepcosts needs -target");
    if (fttcl_name_free(interp, objv[2]) != TCL_OK)
        return TCL_ERROR;

    ProbRef *pr;
    ft_status st;
    if (t) {
        ft_problem *c = ft_problem_clone(h->prob->p);
        if (!c)
            return fttcl_fail_nomem(interp);
        if (ft_target_apply(t->target, c, keep_costs, &st) != FT_OK) {
            char pfx[1024];
            snprintf(pfx, sizeof pfx, "%s: with target %s: ", h->prob->p->name, t->target->path);
            ft_problem_free(c);
            return fttcl_fail_status(interp, pfx, &st);
        }
        if (!(pr = fttcl_prob_new(c))) {
            ft_problem_free(c);
            return fttcl_fail_nomem(interp);
        }
    } else {
        pr = fttcl_prob_ref(h->prob);
    }
    if (o.time_limit <= 0)
        o.time_limit = ft_contest_time_limit(pr->p->nops);
    ft_schedule *s = NULL;
    ft_eval ev;
    int rc = ft_search(pr->p, &o, &s, &ev, &st);
    if (rc != FT_OK) {
        fttcl_prob_unref(pr);
        return fttcl_fail_status(interp, "", &st);
    }
    ft_eval_free(&ev);
    Handle *sh = fttcl_handle_new(interp, objv[2], K_SCHEDULE);
    if (!sh) {
        ft_schedule_free(s);
        fttcl_prob_unref(pr);
        return TCL_ERROR;
    }
    sh->prob = pr;
    sh->sched = s;
    sh->model = o.model;
    return TCL_OK;
}

/* p clone NAME / s problem NAME: a new problem handle on the same snapshot. */
int fttcl_problem_handle_of(Tcl_Interp *interp, ProbRef *pr, Tcl_Obj *name)
{
    Handle *n = fttcl_handle_new(interp, name, K_PROBLEM);
    if (!n)
        return TCL_ERROR;
    n->prob = fttcl_prob_ref(pr);
    return TCL_OK;
}

int fttcl_problem_cmd(ClientData cd, Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    static const char *const subs[] = {"info", "ops", "tensors", "configure", "lowerbound", "schedule", "clone", "destroy", NULL};
    enum { S_INFO, S_OPS, S_TENSORS, S_CONFIGURE, S_LOWERBOUND, S_SCHEDULE, S_CLONE, S_DESTROY };
    Handle *h = cd;
    int sub;
    /* p capacitybound: accepted ahead of the table, whose list of names
     * (in the "bad subcommand" message) stays as scripts know it */
    if (objc >= 2 && !strcmp(Tcl_GetString(objv[1]), "capacitybound"))
        return problem_lowerbound(interp, h, objc, objv, 1);
    if (fttcl_subcommand(interp, objc, objv, subs, &sub) != TCL_OK)
        return TCL_ERROR;
    switch (sub) {
    case S_INFO: /* p info */
        if (objc != 2)
            return fttcl_wrong_args(interp, 2, objv, NULL);
        Tcl_SetObjResult(interp, fttcl_problem_info_dict(h->prob->p));
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
            return fttcl_wrong_args(interp, 2, objv, "NAME");
        return fttcl_problem_handle_of(interp, h->prob, objv[2]);
    default: /* p destroy */
        return fttcl_handle_destroy(interp, h, objc, objv);
    }
}
