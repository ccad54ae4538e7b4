/* validate_models.c - `fusetile validate` on a models file: each row's torchvision model imported as PyTorch's eager mode runs it (`fusetile import --as eager`) into a temporary directory, and the fusion-headroom report (eager, best schedule, bound). */
#include "cli.h"
#include "fusetile/measured.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The file a models row's problem as a compiler lowers it (batch norm
 * folded, no framework kernels) has in place of ".json": the headroom's
 * best schedule and bound are that problem's when it is there. */
#define MODELS_COMPILER_SUFFIX "-compiler.json"

/* Longest line of a models file read whole, and most columns looked at. */
#define MODELS_LINE_MAX 4096
#define MODELS_MAX_COLUMNS 64

/* Cut line s (modified) at tabs into at most max fields; their count. */
static int tab_fields(char *s, char **f, int max)
{
    int n = 0;
    while (n < max) {
        f[n++] = s;
        char *tab = strchr(s, '\t');
        if (!tab)
            break;
        *tab = 0;
        s = tab + 1;
    }
    return n;
}

/* Run `fusetile import torchvision:MODEL --as LOWERING --input-shape
 * BATCHx3xSxS --dtype bf16 -q -o OUT` in a child; its exit status (2 when
 * it could not run). */
static int run_import(const char *model, long long batch, int image, const char *lowering, const char *out)
{
    char spec[300], shape[96];
    snprintf(spec, sizeof spec, "torchvision:%s", model);
    snprintf(shape, sizeof shape, "%lldx3x%dx%d", batch, image, image);
    char *argv[] = {"import", spec, "--as", (char *)lowering, "--input-shape", shape, "--dtype", "bf16", "-q", "-o", (char *)out, NULL};
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return EXIT_USAGE;
    if (pid == 0)
        _exit(cmd_import((int)(sizeof argv / sizeof argv[0]) - 1, argv));   /* execs the importer */
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return EXIT_USAGE;
    return WIFEXITED(status) ? WEXITSTATUS(status) : EXIT_USAGE;
}

int cli_models_import(const char *meas_path, int image, char *dir, size_t n)
{
    dir[0] = 0;
    FILE *f = fopen(meas_path, "r");
    if (!f)
        return EXIT_OK;   /* ft_measured_load says why */
    char line[MODELS_LINE_MAX];
    char *fld[MODELS_MAX_COLUMNS];
    int lineno = 0, cm = -1, cb = -1, header = 0, rc = EXIT_OK;
    while (rc == EXIT_OK && fgets(line, sizeof line, f)) {
        lineno++;
        line[strcspn(line, "\r\n")] = 0;
        if (!line[0] || line[0] == '#' || strspn(line, " \t") == strlen(line))
            continue;
        int nf = tab_fields(line, fld, MODELS_MAX_COLUMNS);
        if (!header) {
            header = 1;
            for (int i = 0; i < nf; i++) {
                if (strcmp(fld[i], "model") == 0)
                    cm = i;
                if (strcmp(fld[i], "batch") == 0)
                    cb = i;
            }
            int conv = 0;   /* a conv (in_ch ...) or kernels (out_rows ...) file names model and batch too */
            for (int i = 0; i < nf; i++)
                conv |= strcmp(fld[i], "in_ch") == 0 || strcmp(fld[i], "out_rows") == 0;
            if (cm < 0 || cb < 0 || conv)
                break;   /* not a models file */
            const char *tmp = getenv("TMPDIR");
            char path[PATH_MAX];
            snprintf(path, sizeof path, "%s/fusetile-models-XXXXXX", tmp && *tmp ? tmp : "/tmp");
            if (!mkdtemp(path)) {
                cli_error("validate: cannot make a directory for the imported models (%s): %s", path, strerror(errno));
                rc = EXIT_USAGE;
                break;
            }
            snprintf(dir, n, "%s", path);
            continue;
        }
        if (cm >= nf || cb >= nf)
            continue;   /* ft_measured_load names the missing field */
        char *end;
        long long batch = strtoll(fld[cb], &end, 10);
        char file[300], out[PATH_MAX + 300];
        ft_status st;
        if (end == fld[cb] || *end || ft_meas_model_problem(fld[cm], batch, file, sizeof file, &st) != FT_OK)
            continue;   /* ft_measured_load names the bad field */
        snprintf(out, sizeof out, "%s/%s", dir, file);
        if (access(out, F_OK) == 0)
            continue;   /* the same model and batch on an earlier row */
        fprintf(stderr, "%s: validate: importing torchvision:%s at batch %lld (--as eager, and as a compiler lowers it)\n",
                cli_progname, fld[cm], batch);
        char fused[PATH_MAX + 320];
        snprintf(fused, sizeof fused, "%.*s%s", (int)(strlen(out) - strlen(".json")), out, MODELS_COMPILER_SUFFIX);
        if (run_import(fld[cm], batch, image, "eager", out) != 0 || run_import(fld[cm], batch, image, "compiler", fused) != 0) {
            cli_error("validate: %s:%d: model: %s at batch %lld could not be imported (fusetile import torchvision:%s "
                      "--as eager failed: see the line above)",
                      meas_path, lineno, fld[cm], batch, fld[cm]);
            rc = EXIT_USAGE;
        }
    }
    fclose(f);
    return rc;
}

void cli_models_cleanup(const char *dir)
{
    if (!dir || !*dir)
        return;
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char path[PATH_MAX + 300];
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
                snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
                unlink(path);
            }
        closedir(d);
    }
    rmdir(dir);
}

int cli_models_headroom(const ft_meas_row *r, const char *dir, const char *target_name, double predicted_us,
                        double limit_s, int json, FILE *out)
{
    char file[300], path[PATH_MAX + 300];
    ft_status st;
    if (ft_meas_model_problem(r->problem, r->batch, file, sizeof file, &st) != FT_OK) {
        cli_error("validate: %s", st.msg);
        return EXIT_USAGE;
    }
    snprintf(path, sizeof path, "%s/%.*s%s", dir, (int)(strlen(file) - strlen(".json")), file, MODELS_COMPILER_SUFFIX);
    int compiler = access(path, R_OK) == 0;
    if (!compiler)
        snprintf(path, sizeof path, "%s/%s", dir, file);
    ft_problem *p;
    ft_target *t;
    if (cli_load_problem("fusetile validate --headroom", path, target_name, 0, &p, &t) != EXIT_OK)
        return EXIT_USAGE;
    double hz = t->clock_hz, over = t->run_overhead;
    ft_target_free(t);
    ft_search_opts o;
    ft_search_opts_init(&o);
    o.time_limit = limit_s;
    o.seed = 1;
    ft_schedule *s = NULL;
    ft_eval ev;
    int rc = ft_search(p, &o, &s, &ev, &st);
    if (rc != FT_OK) {
        cli_error("validate: --headroom: %s: %s", path, st.msg);
        ft_problem_free(p);
        return rc == FT_EINVALID ? EXIT_INVALID : EXIT_USAGE;
    }
    /* the schedule and the bound as replays, as the eager prediction is:
     * the run overhead once (launches are the subgraphs') */
    /* the bound: the search's figures carry both (the larger is the
     * target-aware bound the gap line names) */
    double bound = ev.capacity_bound > ev.lower_bound ? ev.capacity_bound : ev.lower_bound;
    double best_us = (ev.total + over) / hz * 1e6, bound_us = (bound + over) / hz * 1e6;
    int nsub = s->nsubgraphs;
    ft_schedule_free(s);
    ft_eval_free(&ev);
    ft_problem_free(p);
    if (json) {
        fprintf(out, "{\"label\": ");
        cli_json_string(out, r->label);
        fprintf(out, ", \"kernels\": %d, \"measured_us\": ", r->nkernels);
        cli_json_number(out, r->measured_us);
        fprintf(out, ", \"eager_us\": ");
        cli_json_number(out, predicted_us);
        fprintf(out, ", \"best_us\": ");
        cli_json_number(out, best_us);
        fprintf(out, ", \"best_subgraphs\": %d, \"best_problem\": \"%s\", \"bound_us\": ", nsub,
                compiler ? "compiler" : "eager");
        cli_json_number(out, bound_us);
        fprintf(out, ", \"headroom\": ");
        cli_json_number(out, predicted_us / best_us);
        fprintf(out, ", \"headroom_measured\": ");
        cli_json_number(out, r->measured_us / best_us);
        fprintf(out, ", \"search_s\": ");
        cli_json_number(out, limit_s);
        fprintf(out, "}");
        return EXIT_OK;
    }
    fprintf(out, "\nfusion headroom of %s (best schedule and bound of %s%s)\n", r->label, path,
            compiler ? ": the model as a compiler lowers it" : ": the eager problem itself");
    fprintf(out, "  %-44s %12s %9s\n", "", "us", "x best");
    fprintf(out, "  %-44s %12.1f %9.2f\n", "as PyTorch runs it, measured (us_cudagraph)", r->measured_us,
            r->measured_us / best_us);
    char what[80];
    snprintf(what, sizeof what, "as PyTorch runs it, predicted (%d kernels)", r->nkernels);
    fprintf(out, "  %-44s %12.1f %9.2f\n", what, predicted_us, predicted_us / best_us);
    snprintf(what, sizeof what, "fusetile's best schedule (%d subgraphs, %g s)", nsub, limit_s);
    fprintf(out, "  %-44s %12.1f %9.2f\n", what, best_us, 1.0);
    fprintf(out, "  %-44s %12.1f %9.2f\n", "lower bound", bound_us, bound_us / best_us);
    fprintf(out, "  fusion headroom %.2fx predicted (%.2fx measured); the bound is %.2fx below the best schedule\n",
            predicted_us / best_us, r->measured_us / best_us, best_us / bound_us);
    return EXIT_OK;
}
