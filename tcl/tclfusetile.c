/* tclfusetile.c - the Tcl binding of fusetile (`package require fusetile`): factory commands make problem, target and schedule handle commands, in the idiom of SQLite's tclsqlite.c; it speaks only the public API (fusetile.h, target.h, sim.h).
 *
 * Commands (tcl/README.md has the details and examples):
 *
 *   fusetile::problem NAME FILE | NAME -text JSON     -> problem handle
 *   fusetile::target NAME FILE                        -> target handle
 *   fusetile::schedule NAME PROBLEM FILE | ... -text JSON -> schedule handle
 *   fusetile::handles ?problem|target|schedule?       -> live handles
 *   fusetile::sweep run FILE ?-jobs N? ?-db DB? ?-slice K/M? -> counts dict
 *   fusetile::sweep keys FILE                         -> {IDX KEY} pairs
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
 * Files, one concern each (fttcl.h declares what they share):
 *
 *   tclfusetile.c   Fusetile_Init and the factory commands (this file)
 *   tclhandles.c    the per-interp registry, handle commands, problem snapshots
 *   tclargs.c       errors and argument parsing
 *   tcldicts.c      results as dicts
 *   tclproblem.c    the problem handle command (configure, schedule, ...)
 *   tcltarget.c     the target handle command
 *   tclschedule.c   the schedule handle command (evaluate, simulate, ...)
 *   tclsweep.c      fusetile::sweep (sweep files, through include/fusetile/sweep.h)
 *
 * Errors: the interp's result is one line naming the file, field or option
 * (the library's own messages where it has one) and errorCode is
 * {FUSETILE USAGE}, {FUSETILE INPUT}, {FUSETILE NOMEM} or
 * {FUSETILE INVALID REASON SUBGRAPH TILE STEP} (REASON as ft_reason_name).
 */
#define _POSIX_C_SOURCE 200809L
#include "fttcl.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

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
    return fttcl_wrong_args(interp, 1, objv, usage);
}

/* fusetile::problem NAME FILE | NAME -text JSON */
static int factory_problem(ClientData cd, Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    (void)cd;
    int text = 0;
    if (source_args(interp, objc, objv, 1, "NAME FILE | NAME -text JSON", &text) != TCL_OK)
        return TCL_ERROR;
    if (fttcl_name_free(interp, objv[1]) != TCL_OK)
        return TCL_ERROR;
    ft_problem *p;
    ft_status st;
    int rc = text ? ft_problem_parse(Tcl_GetString(objv[3]), "<text>", &p, &st) : ft_problem_load(Tcl_GetString(objv[2]), &p, &st);
    if (rc != FT_OK)
        return fttcl_fail_status(interp, "", &st);
    ProbRef *pr = fttcl_prob_new(p);
    if (!pr) {
        ft_problem_free(p);
        return fttcl_fail_nomem(interp);
    }
    Handle *h = fttcl_handle_new(interp, objv[1], K_PROBLEM);
    if (!h) {
        fttcl_prob_unref(pr);
        return TCL_ERROR;
    }
    h->prob = pr;
    return TCL_OK;
}

/* fusetile::target NAME FILE: FILE a target file, or a shipped target's
 * name (ft_target_find, with $FUSETILE_TARGETS as the search path) */
static int factory_target(ClientData cd, Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    (void)cd;
    if (objc != 3)
        return fttcl_wrong_args(interp, 1, objv, "NAME FILE");
    if (fttcl_name_free(interp, objv[1]) != TCL_OK)
        return TCL_ERROR;
    ft_target *t;
    ft_status st;
    char path[PATH_MAX];
    if (ft_target_find(Tcl_GetString(objv[2]), Tcl_GetVar2(interp, "env", "FUSETILE_TARGETS", TCL_GLOBAL_ONLY), path,
                       sizeof path, &st) != FT_OK ||
        ft_target_load(path, &t, &st) != FT_OK)
        return fttcl_fail_status(interp, "", &st);
    Handle *h = fttcl_handle_new(interp, objv[1], K_TARGET);
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
    int text = 0;
    if (source_args(interp, objc, objv, 2, "NAME PROBLEM FILE | NAME PROBLEM -text JSON", &text) != TCL_OK)
        return TCL_ERROR;
    if (fttcl_name_free(interp, objv[1]) != TCL_OK)
        return TCL_ERROR;
    Handle *ph = fttcl_handle_lookup(interp, objv[2], K_PROBLEM);
    if (!ph)
        return TCL_ERROR;
    ft_schedule *s;
    ft_status st;
    int rc = text ? ft_schedule_parse(Tcl_GetString(objv[4]), "<text>", &s, &st) : ft_schedule_load(Tcl_GetString(objv[3]), &s, &st);
    if (rc != FT_OK)
        return fttcl_fail_status(interp, "", &st);
    Handle *h = fttcl_handle_new(interp, objv[1], K_SCHEDULE);
    if (!h) {
        ft_schedule_free(s);
        return TCL_ERROR;
    }
    h->prob = fttcl_prob_ref(ph->prob);
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
        return fttcl_wrong_args(interp, 1, objv, "?problem|target|schedule?");
    if (objc == 2 && fttcl_get_index(interp, objv[1], fttcl_kind_names, "kind", &kind) != TCL_OK)
        return TCL_ERROR;
    Tcl_Obj *l = Tcl_NewListObj(0, NULL);
    for (Handle *h = fttcl_registry_of(interp)->first; h; h = h->next)
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
    if (!fttcl_registry_of(interp)) {
        Registry *reg = calloc(1, sizeof *reg);
        if (!reg)
            return fttcl_fail_nomem(interp);
        Tcl_SetAssocData(interp, ASSOC_KEY, fttcl_registry_delete, reg);
        Tcl_Namespace *ns = Tcl_FindNamespace(interp, "::fusetile", NULL, 0);
        if (!ns && !(ns = Tcl_CreateNamespace(interp, "::fusetile", NULL, NULL)))
            return TCL_ERROR;
        Tcl_CreateObjCommand(interp, "::fusetile::problem", factory_problem, NULL, NULL);
        Tcl_CreateObjCommand(interp, "::fusetile::target", factory_target, NULL, NULL);
        Tcl_CreateObjCommand(interp, "::fusetile::schedule", factory_schedule, NULL, NULL);
        Tcl_CreateObjCommand(interp, "::fusetile::handles", factory_handles, NULL, NULL);
        Tcl_CreateObjCommand(interp, "::fusetile::sweep", fttcl_sweep_cmd, NULL, NULL);
        if (Tcl_Export(interp, ns, "*", 0) != TCL_OK)
            return TCL_ERROR;
    }
    return Tcl_PkgProvide(interp, "fusetile", FT_VERSION);
}
