/* tcltarget.c - the Tcl binding's target handle command: info, describe, apply (to a problem handle), destroy. */
#define _POSIX_C_SOURCE 200809L
#include "fttcl.h"

#include <stdio.h>
#include <stdlib.h>

/* t apply PROBLEM ?-keepcosts? */
static int target_apply(Tcl_Interp *interp, Handle *h, int objc, Tcl_Obj *const objv[])
{
    static const char *const opts[] = {"-keepcosts", NULL};
    if (objc < 3 || objc > 4)
        return fttcl_wrong_args(interp, 2, objv, "PROBLEM ?-keepcosts?");
    int idx, keep_costs = objc == 4;
    if (objc == 4 && fttcl_get_index(interp, objv[3], opts, "option", &idx) != TCL_OK)
        return TCL_ERROR;
    Handle *ph = fttcl_handle_lookup(interp, objv[2], K_PROBLEM);
    if (!ph)
        return TCL_ERROR;
    ft_problem *c = ft_problem_clone(ph->prob->p);
    if (!c)
        return fttcl_fail_nomem(interp);
    ft_status st;
    if (ft_target_apply(h->target, c, keep_costs, &st) != FT_OK) {
        char pfx[1024];
        snprintf(pfx, sizeof pfx, "%s: with target %s: ", ph->prob->p->name, h->target->path);
        ft_problem_free(c);
        return fttcl_fail_status(interp, pfx, &st);
    }
    return fttcl_prob_swap(interp, ph, c);
}

int fttcl_target_cmd(ClientData cd, Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    static const char *const subs[] = {"info", "describe", "apply", "destroy", NULL};
    enum { S_INFO, S_DESCRIBE, S_APPLY, S_DESTROY };
    Handle *h = cd;
    int sub;
    if (fttcl_subcommand(interp, objc, objv, subs, &sub) != TCL_OK)
        return TCL_ERROR;
    switch (sub) {
    case S_INFO: /* t info */
        if (objc != 2)
            return fttcl_wrong_args(interp, 2, objv, NULL);
        Tcl_SetObjResult(interp, fttcl_target_info_dict(h->target));
        return TCL_OK;
    case S_DESCRIBE: { /* t describe */
        if (objc != 2)
            return fttcl_wrong_args(interp, 2, objv, NULL);
        int n = ft_target_describe(h->target, NULL, 0);
        char *buf = malloc((size_t)n + 1);
        if (!buf)
            return fttcl_fail_nomem(interp);
        ft_target_describe(h->target, buf, (size_t)n + 1);
        Tcl_SetObjResult(interp, Tcl_NewStringObj(buf, -1));
        free(buf);
        return TCL_OK;
    }
    case S_APPLY: /* t apply PROBLEM ?-keepcosts? */
        return target_apply(interp, h, objc, objv);
    default: /* t destroy */
        return fttcl_handle_destroy(interp, h, objc, objv);
    }
}
