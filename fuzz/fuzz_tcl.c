/* fuzz_tcl.c - libFuzzer harness of the Tcl commands' argument parsing: each input line is split as a Tcl list into one command of the extension (a factory or a handle) and its arguments, run in a fresh interpreter holding a problem p, a target t and a schedule s; errors are fine, crashes and leaks are not.  No Tcl script runs (no substitution, only fusetile commands), files stay in a scratch directory, and work is capped (see the rules below). */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

#include "fttcl.h"
#include "fuzz.h"
#include "tclfusetile.h"

/* Most command lines run per input. */
#define MAX_LINES 16
/* Most steps a replayed schedule may have for `S simulate` (the SystemC
 * replay is slower than the analytic walk: FZ_MAX_STEPS for `S evaluate`). */
#define MAX_SIM_STEPS ((int64_t)1 << 14)
/* `P schedule` (the search) runs only on problems of at most these many
 * ops and elements per tensor, with -timelimit 0.01 -threads 1 appended. */
#define MAX_SEARCH_OPS 8
#define MAX_SEARCH_ELEMS ((int64_t)1 << 14)

static char dir[64];
static Tcl_ObjCmdProc *factories[5];

static const char small_schedule[] = "{\"subgraphs\": [[0], [1]], \"granularities\": [[64, 64, 1], [64, 64, 1]], "
                                     "\"tensors_to_retain\": [[], []], \"traversal_orders\": [null, null]}";

static void put(const char *name, const char *text)
{
    FILE *o = fopen(name, "w");
    if (!o || fputs(text, o) == EOF || fclose(o) != 0)
        FZ_FAIL("cannot write %s/%s", dir, name);
}

/* Empty the scratch directory (the working directory), then write its
 * files afresh: every input sees the same ones. */
static void reset_dir(void)
{
    DIR *d = opendir(".");
    if (!d)
        FZ_FAIL("cannot read %s", dir);
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 && unlink(e->d_name) != 0)
            FZ_FAIL("cannot remove %s/%s", dir, e->d_name);   /* a directory: nothing here makes one */
    closedir(d);
    put("p.json", FZ_SMALL_PROBLEM);
    put("s.json", small_schedule);
    put("t.cfg", "name = \"t\"; clock_hz = 1e9; element_bytes = 2;\n"
                 "fast_memory = { capacity_bytes = 65536; };\nslow_memory = { read_bandwidth = 32; };\n"
                 "compute = { native_granularity = { w = 64; h = 32; }; matmul_macs_per_cycle = 256.0;\n"
                 "  pointwise_elements_per_cycle = 16; };\n");
    put("bad.cfg", "name = \"x\" \"y\" 1;\n");
    put("sweep.cfg", "problems = [\"p.json\"];\ncapacity = [30000, 40000];\ntargets = [\"none\", \"t.cfg\"];\n");
}

static void remove_dir(void)
{
    if (chdir(dir) == 0) {
        DIR *d = opendir(".");
        struct dirent *e;
        while (d && (e = readdir(d)))
            if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
                unlink(e->d_name);
        if (d)
            closedir(d);
    }
    if (chdir("/") == 0)
        rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    if (dir[0])
        return 0;
    Tcl_FindExecutable(argc && *argc > 0 ? (*argv)[0] : NULL);
    snprintf(dir, sizeof dir, "/tmp/ft-fuzz-tcl.XXXXXX");
    if (!mkdtemp(dir) || chdir(dir) != 0)
        FZ_FAIL("cannot make a scratch directory");
    atexit(remove_dir);
    Tcl_Interp *interp = Tcl_CreateInterp();
    if (Fusetile_Init(interp) != TCL_OK)
        FZ_FAIL("Fusetile_Init: %s", Tcl_GetStringResult(interp));
    static const char *const names[] = {"::fusetile::problem", "::fusetile::target", "::fusetile::schedule",
                                        "::fusetile::handles", "::fusetile::sweep"};
    for (int i = 0; i < 5; i++) {
        Tcl_CmdInfo info;
        if (!Tcl_GetCommandInfo(interp, names[i], &info))
            FZ_FAIL("no command %s", names[i]);
        factories[i] = info.objProc;
    }
    Tcl_DeleteInterp(interp);
    return 0;
}

/* Whether word is a nonempty prefix of full (how Tcl_GetIndexFromObj
 * takes an abbreviated subcommand). */
static int abbrev(Tcl_Obj *word, const char *full)
{
    const char *w = Tcl_GetString(word);
    return *w && strncmp(w, full, strlen(w)) == 0;
}

/* Steps of every subgraph of s on p (validated first), capped at cap + 1;
 * an invalid schedule counts 0 (evaluating it fails at once). */
static int64_t steps_of(const ft_problem *p, const ft_schedule *s, int64_t cap)
{
    ft_status st;
    if (ft_schedule_validate(p, s, &st) != FT_OK)
        return 0;
    int64_t total = 0;
    for (int g = 0; g < s->nsubgraphs && total <= cap; g++) {
        ft_walk *w = NULL;
        if (ft_walk_begin(p, s, g, FT_COMPUTE_NATIVE, &w, &st) != FT_OK)
            return cap + 1;
        int64_t ntx, nty, nk, n;
        ft_walk_grid(w, &ntx, &nty, &nk, &n);
        ft_walk_free(w);
        total += n > cap ? cap + 1 : n;
    }
    return total;
}

/* Run one command line (objv, objc words) unless the rules skip it. */
static void run_line(Tcl_Interp *interp, int objc, Tcl_Obj **objv)
{
    Tcl_CmdInfo info;
    if (objc < 1 || !Tcl_GetCommandInfo(interp, Tcl_GetString(objv[0]), &info))
        return;
    Tcl_ObjCmdProc *proc = info.objProc;
    int known = proc == fttcl_problem_cmd || proc == fttcl_target_cmd || proc == fttcl_schedule_cmd;
    for (int i = 0; i < 5; i++)
        known |= proc == factories[i];
    if (!known)
        return;   /* only the extension's commands: no Tcl script, no exec, no file delete */
    for (int i = 1; i < objc; i++)
        if (strchr(Tcl_GetString(objv[i]), '/'))
            return;   /* files stay in the scratch directory */
    Tcl_Obj *extra[4];
    int nextra = 0;
    if (proc == factories[4] && objc > 1 && abbrev(objv[1], "run"))
        return;   /* sweep run forks workers that search: keys only */
    if (proc == fttcl_problem_cmd && objc > 1 && abbrev(objv[1], "schedule")) {
        const ft_problem *p = ((Handle *)info.objClientData)->prob->p;
        if (p->nops > MAX_SEARCH_OPS)
            return;
        for (int t = 0; t < p->ntensors; t++)
            if (ft_tensor_size(p, t) > MAX_SEARCH_ELEMS)
                return;
        extra[nextra++] = Tcl_NewStringObj("-timelimit", -1);
        extra[nextra++] = Tcl_NewStringObj("0.01", -1);
        extra[nextra++] = Tcl_NewStringObj("-threads", -1);
        extra[nextra++] = Tcl_NewStringObj("1", -1);
    }
    if (proc == fttcl_schedule_cmd && objc > 1 && (abbrev(objv[1], "evaluate") || abbrev(objv[1], "simulate"))) {
        const Handle *h = info.objClientData;
        int64_t cap = abbrev(objv[1], "evaluate") ? FZ_MAX_STEPS : MAX_SIM_STEPS;
        if (steps_of(h->prob->p, h->sched, cap) > cap)
            return;
    }
    Tcl_Obj **all = malloc(sizeof *all * (size_t)(objc + nextra));
    if (!all)
        FZ_FAIL("out of memory");
    memcpy(all, objv, sizeof *all * (size_t)objc);
    memcpy(all + objc, extra, sizeof *all * (size_t)nextra);
    for (int i = 0; i < objc + nextra; i++)
        Tcl_IncrRefCount(all[i]);
    int rc = Tcl_EvalObjv(interp, objc + nextra, all, TCL_EVAL_GLOBAL);
    if (rc == TCL_ERROR) {
        /* every error is one line with a FUSETILE errorCode */
        const char *msg = Tcl_GetStringResult(interp);
        int newline = 0;
        for (int i = 0; i < objc; i++)
            newline |= strchr(Tcl_GetString(objv[i]), '\n') != NULL;
        if (!msg[0] || (strchr(msg, '\n') && !newline))
            FZ_FAIL("error message empty or of more than one line: %s", msg);
    }
    for (int i = 0; i < objc + nextra; i++)
        Tcl_DecrRefCount(all[i]);
    free(all);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir[0])
        LLVMFuzzerInitialize(NULL, NULL);
    reset_dir();
    Tcl_Interp *interp = Tcl_CreateInterp();
    if (Fusetile_Init(interp) != TCL_OK)
        FZ_FAIL("Fusetile_Init: %s", Tcl_GetStringResult(interp));
    if (Tcl_Eval(interp, "fusetile::problem p p.json; fusetile::target t t.cfg; fusetile::schedule s p s.json") != TCL_OK)
        FZ_FAIL("setting up p, t, s: %s", Tcl_GetStringResult(interp));
    char *text = fz_text(data, size);
    char *save = NULL;
    int lines = 0;
    for (char *line = strtok_r(text, "\n", &save); line && lines < MAX_LINES; line = strtok_r(NULL, "\n", &save)) {
        lines++;
        int objc;
        Tcl_Obj *list = Tcl_NewStringObj(line, -1), **objv;
        Tcl_IncrRefCount(list);
        if (Tcl_ListObjGetElements(NULL, list, &objc, &objv) == TCL_OK)
            run_line(interp, objc, objv);
        Tcl_DecrRefCount(list);
    }
    free(text);
    Tcl_DeleteInterp(interp);
    return 0;
}
