/* tclsweep.c - the Tcl binding's fusetile::sweep command: run a sweep file on worker processes into its SQLite database, list its runs' keys. */
#define _POSIX_C_SOURCE 200809L
#include "fttcl.h"

#include <stdlib.h>
#include <string.h>

#include "fusetile/sweep.h"

static const char *const sweep_subs[] = {"run", "keys", NULL};
enum { SUB_RUN, SUB_KEYS };
static const char *const run_opts[] = {"-jobs", "-db", "-slice", NULL};
enum { OPT_JOBS, OPT_DB, OPT_SLICE };

/* Load the sweep file objv[2]; TCL_OK with *sw, or the file's error. */
static int load(Tcl_Interp *interp, Tcl_Obj *file, ft_sweep **sw)
{
    ft_status st;
    if (ft_sweep_load(Tcl_GetString(file), sw, &st) != FT_OK)
        return fttcl_fail_status(interp, "", &st);
    return TCL_OK;
}

/* fusetile::sweep run FILE ?-jobs N? ?-db DB? ?-slice K/M?
 *   -> dict: db, selected, skipped, ok, failed, interrupted, seconds */
static int sweep_run(Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    if (objc < 3 || objc % 2 == 0)
        return fttcl_wrong_args(interp, 2, objv, "FILE ?-jobs N? ?-db DB? ?-slice K/M?");
    ft_sweep_exec_opts o;
    ft_sweep_exec_opts_init(&o);
    const char *db = NULL;
    for (int i = 3; i < objc; i++) {
        int opt, n;
        Tcl_Obj *v;
        if (fttcl_get_index(interp, objv[i], run_opts, "option", &opt) != TCL_OK ||
            !(v = fttcl_opt_value(interp, objc, objv, &i, run_opts[opt])))
            return TCL_ERROR;
        if (opt == OPT_JOBS) {
            if (Tcl_GetIntFromObj(NULL, v, &n) != TCL_OK || n < 1 || n > FT_SWEEP_MAX_JOBS)
                return fttcl_fail(interp, "USAGE", "-jobs is \"%s\", must be an integer from 1 to %d", Tcl_GetString(v),
                                  FT_SWEEP_MAX_JOBS);
            o.jobs = n;
        } else if (opt == OPT_DB) {
            db = Tcl_GetString(v);
            if (!*db)
                return fttcl_fail(interp, "USAGE", "-db needs a file name");
        } else {
            char tail;
            if (sscanf(Tcl_GetString(v), "%d/%d%c", &o.slice_k, &o.slice_m, &tail) != 2 || o.slice_k < 0 ||
                o.slice_m < 1 || o.slice_k >= o.slice_m)
                return fttcl_fail(interp, "USAGE", "-slice is \"%s\", must be K/M with integers 0 <= K < M",
                                  Tcl_GetString(v));
        }
    }
    ft_sweep *sw;
    if (load(interp, objv[2], &sw) != TCL_OK)
        return TCL_ERROR;
    char *dbdef = db ? NULL : ft_sweep_default_db(sw->path);
    if (!db && !dbdef) {
        ft_sweep_free(sw);
        return fttcl_fail_nomem(interp);
    }
    ft_sweep_counts c;
    ft_status st;
    int rc = ft_sweep_execute(sw, db ? db : dbdef, &o, &c, &st);
    if (rc != FT_OK) {
        free(dbdef);
        ft_sweep_free(sw);
        return fttcl_fail_status(interp, "", &st);
    }
    Tcl_Obj *d = Tcl_NewDictObj();
    fttcl_put(d, "db", fttcl_str(db ? db : dbdef));
    fttcl_put(d, "selected", Tcl_NewIntObj(c.selected));
    fttcl_put(d, "skipped", Tcl_NewIntObj(c.skipped));
    fttcl_put(d, "ok", Tcl_NewIntObj(c.done));
    fttcl_put(d, "failed", Tcl_NewIntObj(c.failed));
    fttcl_put(d, "interrupted", Tcl_NewBooleanObj(c.interrupted));
    fttcl_put(d, "seconds", Tcl_NewDoubleObj(c.elapsed));
    Tcl_SetObjResult(interp, d);
    free(dbdef);
    ft_sweep_free(sw);
    return TCL_OK;
}

/* fusetile::sweep keys FILE -> {IDX KEY} pairs, in index order */
static int sweep_keys(Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    if (objc != 3)
        return fttcl_wrong_args(interp, 2, objv, "FILE");
    ft_sweep *sw;
    if (load(interp, objv[2], &sw) != TCL_OK)
        return TCL_ERROR;
    Tcl_Obj *l = Tcl_NewListObj(0, NULL);
    for (int i = 0; i < sw->nruns; i++) {
        Tcl_Obj *pair[2] = {Tcl_NewIntObj(sw->runs[i].idx), fttcl_str(sw->runs[i].key)};
        Tcl_ListObjAppendElement(NULL, l, Tcl_NewListObj(2, pair));
    }
    ft_sweep_free(sw);
    Tcl_SetObjResult(interp, l);
    return TCL_OK;
}

int fttcl_sweep_cmd(ClientData cd, Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    (void)cd;
    int sub;
    if (fttcl_subcommand(interp, objc, objv, sweep_subs, &sub) != TCL_OK)
        return TCL_ERROR;
    return sub == SUB_RUN ? sweep_run(interp, objc, objv) : sweep_keys(interp, objc, objv);
}
