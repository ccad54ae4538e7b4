/* tclfusetile.h - entry point of the fusetile Tcl extension (`package require fusetile`), for tclsh's `load` and for programs that embed Tcl (fusetile shell). */
#ifndef TCLFUSETILE_H
#define TCLFUSETILE_H

#include <tcl.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Initialise the extension in interp: provide package fusetile (version
 * FT_VERSION) and create the commands of namespace ::fusetile (problem,
 * target, schedule, handles; see tcl/README.md).  Safe to call twice on one
 * interp (the second call only provides the package again).  Returns TCL_OK,
 * or TCL_ERROR with a message in interp's result when the Tcl library is
 * older than 8.6.  Every handle made later is freed when its command is
 * deleted (`h destroy`, `rename h {}`, or the interp's deletion).  There is
 * no Fusetile_SafeInit: the commands read and write files, which a safe
 * interp must not do. */
int Fusetile_Init(Tcl_Interp *interp);

#ifdef __cplusplus
}
#endif

#endif /* TCLFUSETILE_H */
