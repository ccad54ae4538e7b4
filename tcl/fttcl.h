/* fttcl.h - private declarations shared by the C files of the Tcl binding in tcl/: the handle and registry types and the helpers each file uses from another; not installed, not part of any public API. */
#ifndef FTTCL_H
#define FTTCL_H

#include <stdint.h>

#include "tclfusetile.h"

#include "fusetile/fusetile.h"
#include "fusetile/sim.h"
#include "fusetile/target.h"

/* Largest relative difference between simulated and analytic latencies
 * that still counts as agreement (as `fusetile simulate`). */
#define AGREE_REL 1e-9

/* The interp's assoc data key of the Registry. */
#define ASSOC_KEY "fusetile"

/* ------------------------------------------------------------ handles
 * (tclhandles.c) */

typedef enum { K_PROBLEM = 0, K_TARGET = 1, K_SCHEDULE = 2 } Kind;

/* "problem", "target", "schedule" (by Kind), then NULL. */
extern const char *const fttcl_kind_names[];

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

/* A new snapshot of p with one reference (taking ownership of p), or NULL
 * when out of memory (p is then still the caller's). */
ProbRef *fttcl_prob_new(ft_problem *p);

/* r with one more reference; returns r. */
ProbRef *fttcl_prob_ref(ProbRef *r);

/* Drop a reference to r (NULL: nothing); the last frees the problem. */
void fttcl_prob_unref(ProbRef *r);

/* Replace the handle's snapshot by p (taking ownership of p, freed on
 * failure).  TCL_OK, or TCL_ERROR {FUSETILE NOMEM}. */
int fttcl_prob_swap(Tcl_Interp *interp, Handle *h, ft_problem *p);

/* The interp's Registry, or NULL before Fusetile_Init. */
Registry *fttcl_registry_of(Tcl_Interp *interp);

/* The Registry's assoc data delete proc: marks it dead, frees the
 * simulator, and frees the Registry once no handle is left. */
void fttcl_registry_delete(ClientData cd, Tcl_Interp *interp);

/* TCL_OK when no command is named `name`, else a USAGE error saying so. */
int fttcl_name_free(Tcl_Interp *interp, Tcl_Obj *name);

/* Make handle command `name` of the given kind (its payload is set by the
 * caller after success).  Fails when a command of that name exists.  On
 * success the result is the command's fully qualified name; on failure
 * NULL with an error in the interp. */
Handle *fttcl_handle_new(Tcl_Interp *interp, Tcl_Obj *name, Kind kind);

/* The handle of kind `kind` named by obj, or NULL after a USAGE error. */
Handle *fttcl_handle_lookup(Tcl_Interp *interp, Tcl_Obj *obj, Kind kind);

/* `H destroy`: delete the handle's command (its delete proc frees it). */
int fttcl_handle_destroy(Tcl_Interp *interp, Handle *h, int objc, Tcl_Obj *const objv[]);

/* The handle commands' procs (their client data is the Handle):
 * tclproblem.c, tcltarget.c, tclschedule.c. */
Tcl_ObjCmdProc fttcl_problem_cmd, fttcl_target_cmd, fttcl_schedule_cmd;

/* `p clone NAME` / `s problem NAME`: a new problem handle on snapshot pr
 * (tclproblem.c).  TCL_OK with its name as the result, or TCL_ERROR. */
int fttcl_problem_handle_of(Tcl_Interp *interp, ProbRef *pr, Tcl_Obj *name);

/* fusetile::sweep run FILE ?-jobs N? ?-db DB? ?-slice K/M? | keys FILE
 * (tclsweep.c): the sweep library (include/fusetile/sweep.h) from Tcl. */
int fttcl_sweep_cmd(ClientData cd, Tcl_Interp *interp, int objc, Tcl_Obj *const objv[]);

/* ------------------------------------------------------------ errors and
 * arguments (tclargs.c) */

/* Set a formatted message as the result and errorCode {FUSETILE CODE}.
 * Returns TCL_ERROR. */
int fttcl_fail(Tcl_Interp *interp, const char *code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* "out of memory" with errorCode {FUSETILE NOMEM}; returns TCL_ERROR. */
int fttcl_fail_nomem(Tcl_Interp *interp);

/* An ft_status as an error: prefix (may be "") then st->msg; errorCode by
 * st->code, with the reason and location for FT_EINVALID.  Returns
 * TCL_ERROR. */
int fttcl_fail_status(Tcl_Interp *interp, const char *prefix, const ft_status *st);

/* Tcl_WrongNumArgs with errorCode {FUSETILE USAGE}; returns TCL_ERROR. */
int fttcl_wrong_args(Tcl_Interp *interp, int n, Tcl_Obj *const objv[], const char *msg);

/* Tcl_GetIndexFromObj with errorCode {FUSETILE USAGE} on failure. */
int fttcl_get_index(Tcl_Interp *interp, Tcl_Obj *obj, const char *const *table, const char *what, int *index);

/* The subcommand of a handle command (objv[1]) as an index into subs;
 * TCL_OK, or TCL_ERROR with a USAGE error. */
int fttcl_subcommand(Tcl_Interp *interp, int objc, Tcl_Obj *const objv[], const char *const *subs, int *sub);

/* The value after option objv[*i] (advancing *i), or NULL after an error
 * naming the option by its full name. */
Tcl_Obj *fttcl_opt_value(Tcl_Interp *interp, int objc, Tcl_Obj *const objv[], int *i, const char *name);

/* -model: native or op into *out; TCL_OK, or TCL_ERROR with a USAGE error. */
int fttcl_parse_model(Tcl_Interp *interp, Tcl_Obj *v, ft_compute_model *out);

/* -timelimit: a positive finite number of seconds into *out; TCL_OK, or
 * TCL_ERROR with a USAGE error. */
int fttcl_parse_seconds(Tcl_Interp *interp, Tcl_Obj *v, double *out);

/* -seed: a decimal integer from 0 to 2^64 - 1 into *out; TCL_OK, or
 * TCL_ERROR with a USAGE error. */
int fttcl_parse_seed(Tcl_Interp *interp, Tcl_Obj *v, uint64_t *out);

/* ------------------------------------------------------------ dicts
 * (tcldicts.c; each returns a new unshared object) */

/* The names of ft_overlap ("step", "none", "pipeline"), then NULL. */
extern const char *const fttcl_overlap_names[];

/* x as a Tcl wide integer. */
Tcl_Obj *fttcl_wide(int64_t x);

/* dict set d key v (d unshared). */
void fttcl_put(Tcl_Obj *d, const char *key, Tcl_Obj *v);

/* s as a Tcl string ("" for NULL). */
Tcl_Obj *fttcl_str(const char *s);

/* `p info`: the problem's sizes, machine, timing terms and graph, and its
 * optional names. */
Tcl_Obj *fttcl_problem_info_dict(const ft_problem *p);

/* `p ops`: op o. */
Tcl_Obj *fttcl_op_dict(const ft_problem *p, int o);

/* `p tensors`: tensor t. */
Tcl_Obj *fttcl_tensor_dict(const ft_problem *p, int t);

/* `t info`: every setting of the target file (a contest target: path,
 * name, description, contest only). */
Tcl_Obj *fttcl_target_info_dict(const ft_target *t);

/* `s subgraphs`: subgraph i of schedule s (made for p). */
Tcl_Obj *fttcl_subgraph_dict(const ft_problem *p, const ft_schedule *s, int i);

/* `s evaluate`: evaluation e of schedule s on p. */
Tcl_Obj *fttcl_eval_dict(const ft_problem *p, const ft_schedule *s, const ft_eval *e);

/* `s simulate`: replay r of schedule s on p under model, with its
 * agreement with the analytic model (AGREE_REL). */
Tcl_Obj *fttcl_sim_dict(const ft_problem *p, const ft_schedule *s, const ft_sim_result *r, ft_compute_model model);

#endif /* FTTCL_H */
