/* tclhandles.c - the Tcl binding's handles: the per-interp registry of handle commands, their creation, lookup and deletion, and the shared problem snapshots (ProbRef). */
#define _POSIX_C_SOURCE 200809L
#include "fttcl.h"

#include <stdlib.h>
#include <string.h>

const char *const fttcl_kind_names[] = {"problem", "target", "schedule", NULL};

static Tcl_ObjCmdProc *const kind_procs[] = {fttcl_problem_cmd, fttcl_target_cmd, fttcl_schedule_cmd};

ProbRef *fttcl_prob_new(ft_problem *p)
{
    ProbRef *r = malloc(sizeof *r);
    if (r) {
        r->refs = 1;
        r->p = p;
    }
    return r;
}

ProbRef *fttcl_prob_ref(ProbRef *r)
{
    r->refs++;
    return r;
}

void fttcl_prob_unref(ProbRef *r)
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

void fttcl_registry_delete(ClientData cd, Tcl_Interp *interp)
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
    fttcl_prob_unref(h->prob);
    ft_target_free(h->target);
    ft_schedule_free(h->sched);
    free(h);
    registry_maybe_free(reg);
}

/* Replace the handle's snapshot by p (taking ownership). */
int fttcl_prob_swap(Tcl_Interp *interp, Handle *h, ft_problem *p)
{
    ProbRef *r = fttcl_prob_new(p);
    if (!r) {
        ft_problem_free(p);
        return fttcl_fail_nomem(interp);
    }
    fttcl_prob_unref(h->prob);
    h->prob = r;
    return TCL_OK;
}

/* `H destroy`: delete the handle's command (its delete proc frees it). */
int fttcl_handle_destroy(Tcl_Interp *interp, Handle *h, int objc, Tcl_Obj *const objv[])
{
    if (objc != 2)
        return fttcl_wrong_args(interp, 2, objv, NULL);
    Tcl_DeleteCommandFromToken(interp, h->token);
    Tcl_ResetResult(interp);
    return TCL_OK;
}

Registry *fttcl_registry_of(Tcl_Interp *interp)
{
    return Tcl_GetAssocData(interp, ASSOC_KEY, NULL);
}

/* TCL_OK when no command is named `name`, else an error saying so. */
int fttcl_name_free(Tcl_Interp *interp, Tcl_Obj *name)
{
    Tcl_CmdInfo info;
    if (Tcl_GetCommandInfo(interp, Tcl_GetString(name), &info))
        return fttcl_fail(interp, "USAGE", "command \"%s\" already exists", Tcl_GetString(name));
    return TCL_OK;
}

/* Make handle command `name` of the given kind (its payload is set by the
 * caller after success).  Fails when a command of that name exists.  On
 * success the result is the command's fully qualified name. */
Handle *fttcl_handle_new(Tcl_Interp *interp, Tcl_Obj *name, Kind kind)
{
    const char *n = Tcl_GetString(name);
    if (!*n) {
        fttcl_fail(interp, "USAGE", "a handle needs a non-empty command name");
        return NULL;
    }
    if (fttcl_name_free(interp, name) != TCL_OK)
        return NULL;
    Handle *h = calloc(1, sizeof *h);
    if (!h) {
        fttcl_fail_nomem(interp);
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
    Registry *reg = fttcl_registry_of(interp);
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
Handle *fttcl_handle_lookup(Tcl_Interp *interp, Tcl_Obj *obj, Kind kind)
{
    Tcl_CmdInfo info;
    const char *n = Tcl_GetString(obj);
    if (!Tcl_GetCommandInfo(interp, n, &info) || !info.isNativeObjectProc || info.objProc != kind_procs[kind]) {
        fttcl_fail(interp, "USAGE", "\"%s\" is not a fusetile %s handle", n, fttcl_kind_names[kind]);
        return NULL;
    }
    return info.objClientData;
}
