/* tclargs.c - the Tcl binding's errors (result and errorCode {FUSETILE ...}) and argument parsing (subcommands, options and their values). */
#define _POSIX_C_SOURCE 200809L
#include "fttcl.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Set a formatted message as the result and errorCode {FUSETILE CODE}.
 * Returns TCL_ERROR. */
int fttcl_fail(Tcl_Interp *interp, const char *code, const char *fmt, ...)
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

int fttcl_fail_nomem(Tcl_Interp *interp)
{
    return fttcl_fail(interp, "NOMEM", "out of memory");
}

/* An ft_status as an error: prefix (may be "") then st->msg; errorCode by
 * st->code, with the reason and location for FT_EINVALID. */
int fttcl_fail_status(Tcl_Interp *interp, const char *prefix, const ft_status *st)
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
    return fttcl_fail(interp, st->code == FT_ENOMEM ? "NOMEM" : "INPUT", "%s%s", prefix, st->msg[0] ? st->msg : "failed");
}

/* Tcl_WrongNumArgs with errorCode {FUSETILE USAGE}. */
int fttcl_wrong_args(Tcl_Interp *interp, int n, Tcl_Obj *const objv[], const char *msg)
{
    Tcl_WrongNumArgs(interp, n, objv, msg);
    Tcl_SetErrorCode(interp, "FUSETILE", "USAGE", (char *)NULL);
    return TCL_ERROR;
}

/* Tcl_GetIndexFromObj with errorCode {FUSETILE USAGE} on failure. */
int fttcl_get_index(Tcl_Interp *interp, Tcl_Obj *obj, const char *const *table, const char *what, int *index)
{
    if (Tcl_GetIndexFromObj(interp, obj, table, what, 0, index) != TCL_OK) {
        Tcl_SetErrorCode(interp, "FUSETILE", "USAGE", (char *)NULL);
        return TCL_ERROR;
    }
    return TCL_OK;
}

/* The subcommand of a handle command (objv[1]) as an index into subs. */
int fttcl_subcommand(Tcl_Interp *interp, int objc, Tcl_Obj *const objv[], const char *const *subs, int *sub)
{
    if (objc < 2)
        return fttcl_wrong_args(interp, 1, objv, "SUBCOMMAND ?ARG ...?");
    return fttcl_get_index(interp, objv[1], subs, "subcommand", sub);
}

/* The value after option objv[*i] (advancing *i), or NULL after an error
 * naming the option by its full name. */
Tcl_Obj *fttcl_opt_value(Tcl_Interp *interp, int objc, Tcl_Obj *const objv[], int *i, const char *name)
{
    if (*i + 1 >= objc) {
        fttcl_fail(interp, "USAGE", "%s needs a value", name);
        return NULL;
    }
    return objv[++*i];
}

int fttcl_parse_model(Tcl_Interp *interp, Tcl_Obj *v, ft_compute_model *out)
{
    if (ft_compute_model_parse(Tcl_GetString(v), out))
        return fttcl_fail(interp, "USAGE", "-model is \"%s\", must be native or op", Tcl_GetString(v));
    return TCL_OK;
}

int fttcl_parse_seconds(Tcl_Interp *interp, Tcl_Obj *v, double *out)
{
    double x;
    if (Tcl_GetDoubleFromObj(NULL, v, &x) != TCL_OK || !isfinite(x) || x <= 0)
        return fttcl_fail(interp, "USAGE", "-timelimit is \"%s\", must be a positive number of seconds", Tcl_GetString(v));
    *out = x;
    return TCL_OK;
}

int fttcl_parse_seed(Tcl_Interp *interp, Tcl_Obj *v, uint64_t *out)
{
    const char *s = Tcl_GetString(v);
    unsigned long long x = 0;
    int digits = *s && strspn(s, "0123456789") == strlen(s);
    if (digits) {
        errno = 0;
        x = strtoull(s, NULL, 10);
    }
    if (!digits || errno)
        return fttcl_fail(interp, "USAGE", "-seed is \"%s\", must be an integer from 0 to 18446744073709551615", s);
    *out = (uint64_t)x;
    return TCL_OK;
}
