/* tclschedule.c - the Tcl binding's schedule handle command: info, subgraphs, evaluate, simulate (the SystemC replay), write, json, problem, destroy. */
#define _POSIX_C_SOURCE 200809L
#include "fttcl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* s evaluate ?-model M? */
static int schedule_evaluate(Tcl_Interp *interp, Handle *h, int objc, Tcl_Obj *const objv[])
{
    static const char *const opts[] = {"-model", NULL};
    ft_compute_model model = h->model;
    for (int i = 2; i < objc; i++) {
        int idx;
        Tcl_Obj *v;
        if (fttcl_get_index(interp, objv[i], opts, "option", &idx) != TCL_OK ||
            !(v = fttcl_opt_value(interp, objc, objv, &i, opts[idx])) || fttcl_parse_model(interp, v, &model) != TCL_OK)
            return TCL_ERROR;
    }
    ft_eval e;
    ft_status st;
    if (ft_evaluate(h->prob->p, h->sched, model, &e, &st) != FT_OK) {
        char pfx[64];
        snprintf(pfx, sizeof pfx, "invalid schedule (%s): ", ft_reason_name(st.reason));
        return fttcl_fail_status(interp, st.code == FT_EINVALID ? pfx : "", &st);
    }
    Tcl_SetObjResult(interp, fttcl_eval_dict(h->prob->p, h->sched, &e));
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
        if (fttcl_get_index(interp, objv[i], opts, "option", &idx) != TCL_OK ||
            !(v = fttcl_opt_value(interp, objc, objv, &i, opts[idx])))
            return TCL_ERROR;
        if (idx == O_MODEL) {
            if (fttcl_parse_model(interp, v, &so.model) != TCL_OK)
                return TCL_ERROR;
        } else {
            const char *f = Tcl_GetString(v);
            if (!*f)
                return fttcl_fail(interp, "USAGE", "%s needs a file name", opts[idx]);
            *(idx == O_VCD ? &so.trace_vcd : &so.trace_json) = f;
        }
    }
    if (so.trace_json && so.trace_vcd && strcmp(so.trace_json, so.trace_vcd) == 0)
        return fttcl_fail(interp, "USAGE", "-trace and -vcd name the same file \"%s\"", so.trace_json);
    Registry *reg = h->reg;
    if (!reg->sim) {
        const char *err = NULL;
        if (ft_sim_new(&reg->sim, &err) != FT_OK) {
            reg->sim = NULL;
            return fttcl_fail(interp, "INPUT", "simulator: %s", err ? err : "cannot start");
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
        fttcl_fail(interp, rc == FT_ENOMEM ? "NOMEM" : "INPUT", "simulator: %s", ft_sim_errmsg(reg->sim));
        ft_sim_result_free(&r);
        return TCL_ERROR;
    }
    Tcl_SetObjResult(interp, fttcl_sim_dict(h->prob->p, h->sched, &r, so.model));
    ft_sim_result_free(&r);
    return TCL_OK;
}

int fttcl_schedule_cmd(ClientData cd, Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    static const char *const subs[] = {"info", "subgraphs", "evaluate", "simulate", "write", "json", "problem", "destroy", NULL};
    enum { S_INFO, S_SUBGRAPHS, S_EVALUATE, S_SIMULATE, S_WRITE, S_JSON, S_PROBLEM, S_DESTROY };
    Handle *h = cd;
    int sub;
    ft_status st;
    if (fttcl_subcommand(interp, objc, objv, subs, &sub) != TCL_OK)
        return TCL_ERROR;
    switch (sub) {
    case S_INFO: { /* s info */
        if (objc != 2)
            return fttcl_wrong_args(interp, 2, objv, NULL);
        Tcl_Obj *d = Tcl_NewDictObj();
        fttcl_put(d, "name", fttcl_str(h->sched->name));
        fttcl_put(d, "problem", fttcl_str(h->prob->p->name));
        fttcl_put(d, "nsubgraphs", Tcl_NewIntObj(h->sched->nsubgraphs));
        fttcl_put(d, "model", fttcl_str(ft_compute_model_name(h->model)));
        Tcl_SetObjResult(interp, d);
        return TCL_OK;
    }
    case S_SUBGRAPHS: { /* s subgraphs */
        if (objc != 2)
            return fttcl_wrong_args(interp, 2, objv, NULL);
        Tcl_Obj *l = Tcl_NewListObj(0, NULL);
        for (int i = 0; i < h->sched->nsubgraphs; i++)
            Tcl_ListObjAppendElement(NULL, l, fttcl_subgraph_dict(h->prob->p, h->sched, i));
        Tcl_SetObjResult(interp, l);
        return TCL_OK;
    }
    case S_EVALUATE: /* s evaluate ?-model native|op? */
        return schedule_evaluate(interp, h, objc, objv);
    case S_SIMULATE: /* s simulate ?-model native|op? ?-trace FILE? ?-vcd FILE? */
        return schedule_simulate(interp, h, objc, objv);
    case S_WRITE: /* s write FILE */
        if (objc != 3)
            return fttcl_wrong_args(interp, 2, objv, "FILE");
        if (ft_schedule_write(h->sched, NULL, Tcl_GetString(objv[2]), &st) != FT_OK)
            return fttcl_fail_status(interp, "", &st);
        Tcl_ResetResult(interp);
        return TCL_OK;
    case S_JSON: { /* s json */
        if (objc != 2)
            return fttcl_wrong_args(interp, 2, objv, NULL);
        char *text = ft_schedule_to_json(h->sched, NULL);
        if (!text)
            return fttcl_fail_nomem(interp);
        Tcl_SetObjResult(interp, Tcl_NewStringObj(text, -1));
        free(text);
        return TCL_OK;
    }
    case S_PROBLEM: /* s problem NAME */
        if (objc != 3)
            return fttcl_wrong_args(interp, 2, objv, "NAME");
        return fttcl_problem_handle_of(interp, h->prob, objv[2]);
    default: /* s destroy */
        return fttcl_handle_destroy(interp, h, objc, objv);
    }
}
