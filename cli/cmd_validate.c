/* cmd_validate.c - `fusetile validate`: a target's predicted times beside measured ones (targets/measured/), with the error figures, JSON and an SVG plot. */
#include "cli.h"
#include "fusetile/measured.h"
#include "fusetile/plot.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char validate_help[] =
    "usage: fusetile validate --target TARGET.cfg --measured FILE.tsv [--problems DIR]\n"
    "                         [--part all|fit|held-out] [--worst N] [--max-error PCT] [--json] [--svg OUT.svg]\n"
    "                         [--kernels N] [--headroom [--headroom-limit S]]\n"
    "\n"
    "Predict every row of a measured file on TARGET and print the prediction\n"
    "in microseconds beside the measured time, with the relative error; then\n"
    "the mean absolute percentage error (MAPE), the geometric mean of\n"
    "predicted / measured and the worst rows.  The formats are those of\n"
    "targets/measured/h100/README.md, told by the header: gemm (M N K),\n"
    "pointwise (op ninputs elements), graph_ops (one op of a contest problem)\n"
    "and graphs (a whole problem, one op per subgraph), and models (model\n"
    "batch: a torchvision model whole, as PyTorch's eager mode runs it); the\n"
    "measured figure is us_graph (us_cudagraph for graphs and models), one\n"
    "CUDA graph replay.  A models row's problem is DIR/MODEL-bBATCH.json with\n"
    "--problems DIR, else torchvision:MODEL imported into a temporary\n"
    "directory by `fusetile import --as eager` (input BATCH x 3 x 224 x 224,\n"
    "bf16; needs torch and torchvision); it runs one kernel per op_kernels\n"
    "group (a convolution's im2col and MatMul as one kernel).  A row is\n"
    "predicted as the target's execution.run_overhead once plus each kernel\n"
    "(one op alone in a subgraph, its launch overhead included) at the\n"
    "granularity the model finds fastest for it, and at least the target's\n"
    "execution.replay_interval (docs/DEVICE.md).\n"
    "\n"
    "A conv file (model layer batch in_ch out_ch kh kw stride pad groups\n"
    "in_h in_w out_h out_w ... us_graph, targets/measured/h100-c/conv.tsv)\n"
    "has one convolution a row, run as `import --as eager` lowers it: cuDNN's\n"
    "transposes to channels-last and back around the implicit GEMM, a 1x1\n"
    "stride-1 one a GEMM alone, a depthwise one PyTorch's own kernel\n"
    "(docs/LOWERING.md); other grouped ones are refused.  A kernels file\n"
    "(kind rows cols out_rows ... us: batch_norm or max_pool2d kernels as a\n"
    "profiler timed them, targets/measured/h100-c/eager_kernels.tsv) is\n"
    "predicted kernel by kernel with no run overhead and no replay floor.\n"
    "\n"
    "An energy file (kind M_or_op N_or_elements K us_per_op J_per_op: a gemm\n"
    "or pointwise op per row, targets/measured/h100/energy.tsv) is compared\n"
    "in joules per op: each row's kernels timed as above (no run overhead),\n"
    "their energy by the target's energy group (docs/DEVICE.md, \"Energy\");\n"
    "--json then has measured_j and predicted_j per row, and mape is the\n"
    "energy error.  A target without an energy group is refused.\n"
    "\n"
    "  --target FILE     the machine (a real target with a clock: a file, or a\n"
    "                    shipped target's name, gpu-h100; docs/TARGETS.md)\n"
    "  --measured FILE   the measured TSV file\n"
    "  --problems DIR    where graph_ops and graphs rows' problems are, as\n"
    "                    DIR/NAME.json (default: benchmarks); models rows':\n"
    "                    DIR/MODEL-bBATCH.json (default: imported)\n"
    "  --part P          all rows (default), only those calibration fits\n"
    "                    (fit), or only those it holds out (held-out: every\n"
    "                    third gemm or pointwise row, every third problem)\n"
    "  --worst N         list the N rows of largest error (default 5)\n"
    "  --max-error PCT   fail (exit 1) when the MAPE is above PCT per cent\n"
    "                    (default 50: the fitted targets/gpu-h100.cfg is at\n"
    "                    9 to 27 % on targets/measured/h100*)\n"
    "  --kernels N       models rows: list the N kernels of largest predicted\n"
    "                    time (default 8; 0: none)\n"
    "  --headroom        models rows: the fusion-headroom report, as PyTorch\n"
    "                    runs the model (measured and predicted), fusetile's\n"
    "                    best schedule of the same problem and the lower bound\n"
    "  --headroom-limit S  seconds of search per model (default 10)\n"
    "  --json            print one JSON object: rows (label, line, measured_us,\n"
    "                    predicted_us, error, held_out, and kernels: the\n"
    "                    form the model chose for each kernel, w, h, k and\n"
    "                    split, its predicted us and name), mape, gmean,\n"
    "                    mape_above_6us, n_above_6us, mape_floor, n_floor,\n"
    "                    worst, max_error, passed, and with --headroom\n"
    "                    headroom (one object per models row)\n"
    "  --svg FILE        plot predicted against measured, log-log, with the\n"
    "                    y = x line, the worst rows labelled\n"
    "  -h, --help        show this help\n"
    "\n"
    "The measured file's directory may hold env.tsv (targets/measured/h100/):\n"
    "when its gpu names a device (NVIDIA H100 80GB HBM3), TARGET's name or\n"
    "description must name that device's model (H100), else the files do not\n"
    "match (a KPU target against GPU data) and nothing is predicted.\n"
    "\n"
    "The MAPE is also given apart for rows measured at 6 us or more and for\n"
    "the floor rows under 6 us, where launch and replay overheads dominate.\n"
    "\n"
    "Exit status: 0 done and the MAPE at most --max-error, 1 the MAPE above\n"
    "it, 2 bad input or usage (a target that is not the measured device).\n";

/* The default of --max-error: the largest mean absolute percentage error
 * (per cent) at which a target still validates against measured data. */
#define VALIDATE_MAX_ERROR_PCT 50.0

/* Longest env.tsv line read whole (longer ones are not a device line). */
#define ENV_LINE_MAX 1024

/* The device that the measured file at meas_path was measured on: the
 * value of the "gpu" key of env.tsv in its directory, into dev (n bytes);
 * 0 when there is none (no env.tsv, no gpu key), 1 when found. */
static int measured_device(const char *meas_path, char *dev, size_t n)
{
    const char *slash = strrchr(meas_path, '/');
    size_t dlen = slash ? (size_t)(slash - meas_path) + 1 : 0;
    char path[4096], line[ENV_LINE_MAX];
    if (dlen + sizeof "env.tsv" > sizeof path)
        return 0;
    memcpy(path, meas_path, dlen);
    memcpy(path + dlen, "env.tsv", sizeof "env.tsv");
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (strncmp(line, "gpu\t", 4) == 0 && line[4]) {
            snprintf(dev, n, "%s", line + 4);
            found = 1;
        }
    }
    fclose(f);
    return found;
}

/* The model of device dev ("H100" of "NVIDIA H100 80GB HBM3"): its first
 * word (words split at spaces and '-') with a digit in it, into model (n
 * bytes); 0 when it has none. */
static int device_model(const char *dev, char *model, size_t n)
{
    for (const char *w = dev; *w;) {
        size_t len = strcspn(w, " -\t");
        if (len && len < n && strcspn(w, "0123456789") < len) {
            memcpy(model, w, len);
            model[len] = '\0';
            return 1;
        }
        w += len;
        w += *w ? 1 : 0;
    }
    return 0;
}

/* Whether text holds word, ignoring case. */
static int has_word(const char *text, const char *word)
{
    size_t n = strlen(word);
    for (const char *c = text; c && *c; c++)
        if (strncasecmp(c, word, n) == 0)
            return 1;
    return 0;
}

/* Which rows a run reports. */
enum part { PART_ALL, PART_FIT, PART_HELD };

/* Most worst rows listed, and most kernels listed per models row. */
#define MAX_WORST 1000
#define MAX_KERNELS_LISTED 1000

/* Rows measured at this many microseconds or more are kernels above the
 * floor; the rest are floor rows, where launch and replay overheads
 * dominate (the H100's replay interval is about 3.7 us). */
#define FLOOR_US 6.0

/* Default and largest seconds of search per model of --headroom. */
#define HEADROOM_LIMIT_S 10.0
#define HEADROOM_MAX_S 86400.0

/* The value of option `opt` (just matched) as a finite number above 0 and
 * at most max into *out: 0, or -1 after a line saying it is not a positive
 * `what` (or cli_opt_value's, when it is missing). */
static int opt_positive(cli_opts *o, const char *opt, const char *what, double max, double *out)
{
    const char *v = cli_opt_value(o, opt);
    char *end;
    double x = v ? strtod(v, &end) : -1;
    if (!v || end == v || *end || !(x > 0) || !isfinite(x) || x > max) {
        if (v && isfinite(max))
            cli_error("validate: %s: '%s' is not a positive %s (at most %g)", opt, v, what, max);
        else if (v)
            cli_error("validate: %s: '%s' is not a positive %s", opt, v, what);
        return -1;
    }
    *out = x;
    return 0;
}

/* The value of option `opt` (just matched) as a count from 0 to max into
 * *out: 0, or -1 after a line saying it is not one. */
static int opt_count(cli_opts *o, const char *opt, int max, int *out)
{
    const char *v = cli_opt_value(o, opt);
    char *end;
    long x = v ? strtol(v, &end, 10) : -1;
    if (!v || end == v || *end || x < 0 || x > max) {
        if (v)
            cli_error("validate: %s: '%s' is not a count from 0 to %d", opt, v, max);
        return -1;
    }
    *out = (int)x;
    return 0;
}

/* MAPE (per cent) over the rows whose measured time is (above 1) or is
 * not (above 0) at least FLOOR_US; *count gets how many. */
static double mape_split(const double *pred, const double *meas, int n, int above, int *count)
{
    double sum = 0;
    int c = 0;
    for (int i = 0; i < n; i++)
        if ((meas[i] >= FLOOR_US) == (above != 0)) {
            sum += fabs(pred[i] - meas[i]) / meas[i];
            c++;
        }
    *count = c;
    return c ? 100.0 * sum / c : 0.0;
}

/* Print the MAPE of a split (text, or a JSON number or null). */
static void print_split(int json, const char *what, double mape, int count)
{
    if (json) {
        printf(", \"mape_%s\": ", what);
        if (count)
            cli_json_number(stdout, mape);
        else
            printf("null");
        printf(", \"n_%s\": %d", what, count);
    } else if (count) {
        printf("%.2f %% over %d rows", mape, count);
    } else {
        printf("no rows");
    }
}

static int cmp_err_desc(const void *a, const void *b, void *ctx)
{
    const double *err = ctx;
    double x = err[*(const int *)a], y = err[*(const int *)b];
    return x < y ? 1 : x > y ? -1 : *(const int *)a - *(const int *)b;
}

/* Indices 0..n-1 sorted by err, largest first (insertion sort keeps it
 * simple and stable; n is at most FT_MEAS_MAX_ROWS). */
static void by_error(int *idx, int n, const double *err)
{
    for (int i = 0; i < n; i++)
        idx[i] = i;
    for (int i = 1; i < n; i++) {
        int v = idx[i], j = i - 1;
        while (j >= 0 && cmp_err_desc(&idx[j], &v, (void *)err) > 0) {
            idx[j + 1] = idx[j];
            j--;
        }
        idx[j + 1] = v;
    }
}

/* The nk kernels of models row r of largest predicted time (kus, us),
 * with their share of the row's prediction (total). */
static void list_kernels(const ft_meas_row *r, const double *kus, double total, int nk)
{
    int *idx = malloc(sizeof *idx * (size_t)(r->nkernels ? r->nkernels : 1));
    if (!idx)
        return;
    by_error(idx, r->nkernels, kus);
    if (nk > r->nkernels)
        nk = r->nkernels;
    printf("\n%s: %d kernels; the %d of largest predicted time\n", r->label, r->nkernels, nk);
    printf("  %-36s %-20s %4s %14s %10s %6s\n", "kernel", "kind", "ops", "output", "us", "share");
    for (int i = 0; i < nk; i++) {
        const ft_problem *k = r->kernels[idx[i]];
        const ft_op *op = &k->ops[k->nops - 1];
        char shape[64];
        snprintf(shape, sizeof shape, "%lldx%lld", (long long)k->tensors[op->output].height,
                 (long long)k->tensors[op->output].width);
        printf("  %-36.36s %-20.20s %4d %14s %10.2f %5.1f%%\n", op->name ? op->name : "", op->kind ? op->kind : "",
               k->nops, shape, kus[idx[i]], 100 * kus[idx[i]] / total);
    }
    free(idx);
}

static int write_svg(const char *path, const ft_measured *m, const ft_target *t, const double *pred, const double *meas,
                     const char *const *labels, int n, const ft_meas_stats *sx)
{
    char title[400];
    snprintf(title, sizeof title, "%s on %s: MAPE %.1f %%, %d rows", ft_meas_format_name(m->format), t->name, sx->mape, n);
    ft_plot_series ser = {ft_meas_format_name(m->format), meas, pred, labels, n, 0, 0};
    ft_plot pl = {title, "measured (us)", "predicted (us)", 1, 1, 1, &ser, 1, 0, 0};
    char err[512];
    if (ft_plot_write_svg(&pl, path, err, sizeof err) != 0) {
        cli_error("%s", err);
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

int cmd_validate(int argc, char **argv)
{
    const char *target_arg = NULL, *meas_path = NULL, *dir = NULL, *svg = NULL;
    int json = 0, nworst = 5, nkernels = 8, headroom = 0;
    double headroom_limit = HEADROOM_LIMIT_S;
    char models_dir[4096] = "";
    double max_error = VALIDATE_MAX_ERROR_PCT;
    enum part part = PART_ALL;
    cli_opts o;
    cli_opt_init(&o, argc, argv);
    const char *arg;
    int is_opt;
    while ((arg = cli_opt_next(&o, &is_opt))) {
        if (!is_opt) {
            cli_error("validate: unexpected argument '%s' (see 'fusetile validate --help')", arg);
            return EXIT_USAGE;
        }
        if (cli_opt_is(&o, arg, "-h") || cli_opt_is(&o, arg, "--help")) {
            fputs(validate_help, stdout);
            return EXIT_OK;
        } else if (cli_opt_is(&o, arg, "--target")) {
            if (!(target_arg = cli_opt_value(&o, "--target")))
                return EXIT_USAGE;
        } else if (cli_opt_is(&o, arg, "--measured")) {
            if (!(meas_path = cli_opt_value(&o, "--measured")))
                return EXIT_USAGE;
        } else if (cli_opt_is(&o, arg, "--problems")) {
            if (!(dir = cli_opt_value(&o, "--problems")))
                return EXIT_USAGE;
        } else if (cli_opt_is(&o, arg, "--svg")) {
            if (!(svg = cli_opt_value(&o, "--svg")))
                return EXIT_USAGE;
        } else if (cli_opt_is(&o, arg, "--json")) {
            json = 1;
        } else if (cli_opt_is(&o, arg, "--headroom")) {
            headroom = 1;
        } else if (cli_opt_is(&o, arg, "--headroom-limit")) {
            if (opt_positive(&o, "--headroom-limit", "number of seconds", HEADROOM_MAX_S, &headroom_limit))
                return EXIT_USAGE;
        } else if (cli_opt_is(&o, arg, "--kernels")) {
            if (opt_count(&o, "--kernels", MAX_KERNELS_LISTED, &nkernels))
                return EXIT_USAGE;
        } else if (cli_opt_is(&o, arg, "--part")) {
            const char *v = cli_opt_value(&o, "--part");
            if (!v)
                return EXIT_USAGE;
            if (strcmp(v, "all") == 0)
                part = PART_ALL;
            else if (strcmp(v, "fit") == 0)
                part = PART_FIT;
            else if (strcmp(v, "held-out") == 0)
                part = PART_HELD;
            else {
                cli_error("validate: --part: '%s' is not all, fit or held-out", v);
                return EXIT_USAGE;
            }
        } else if (cli_opt_is(&o, arg, "--max-error")) {
            if (opt_positive(&o, "--max-error", "percentage", INFINITY, &max_error))
                return EXIT_USAGE;
        } else if (cli_opt_is(&o, arg, "--worst")) {
            if (opt_count(&o, "--worst", MAX_WORST, &nworst))
                return EXIT_USAGE;
        } else {
            cli_error("validate: unknown option '%s' (see 'fusetile validate --help')", arg);
            return EXIT_USAGE;
        }
    }
    if (!target_arg || !meas_path) {
        cli_error("validate: %s is required (see 'fusetile validate --help')", !target_arg ? "--target" : "--measured");
        return EXIT_USAGE;
    }
    ft_status st;
    ft_target *t = NULL;
    char target_path[PATH_MAX];
    if (cli_target_find(target_arg, target_path, sizeof target_path) != EXIT_OK ||
        cli_input(target_path, "target") != EXIT_OK || cli_input(meas_path, "measured") != EXIT_OK)
        return EXIT_USAGE;
    if (svg && cli_check_output("validate", svg, 0) != EXIT_OK)
        return EXIT_USAGE;
    if (ft_target_load(target_path, &t, &st) != FT_OK) {
        cli_error("%s", st.msg);
        return EXIT_USAGE;
    }
    if (t->contest) {
        cli_error("validate: %s: a contest target has no clock; give a machine target (targets/gpu-h100.cfg)", target_path);
        ft_target_free(t);
        return EXIT_USAGE;
    }
    char dev[ENV_LINE_MAX], model[64];
    if (measured_device(meas_path, dev, sizeof dev) && device_model(dev, model, sizeof model) &&
        !has_word(t->name, model) && !has_word(t->description, model)) {
        cli_error("validate: %s (%s) is not the device %s was measured on (env.tsv: gpu %s): neither its name nor its "
                  "description names %s",
                  target_path, t->name, meas_path, dev, model);
        ft_target_free(t);
        return EXIT_USAGE;
    }
    if (!dir) {
        if (cli_models_import(meas_path, 224, models_dir, sizeof models_dir) != EXIT_OK) {
            cli_models_cleanup(models_dir);
            ft_target_free(t);
            return EXIT_USAGE;
        }
        dir = models_dir[0] ? models_dir : FT_BENCHMARKS_DIR;
    }
    ft_measured *m = NULL;
    if (ft_measured_load(meas_path, dir, &m, &st) != FT_OK) {
        cli_error("%s", st.msg);
        cli_models_cleanup(models_dir);
        ft_target_free(t);
        return EXIT_USAGE;
    }
    if (headroom && m->format != FT_MEAS_MODELS) {
        cli_error("validate: --headroom: %s is a %s file; the headroom report is for a models file (model batch ...)",
                  meas_path, ft_meas_format_name(m->format));
        ft_measured_free(m);
        cli_models_cleanup(models_dir);
        ft_target_free(t);
        return EXIT_USAGE;
    }
    int energy = m->format == FT_MEAS_ENERGY;
    if (energy && !t->energy_on) {
        cli_error("validate: %s is an energy file, but %s has no energy group (docs/DEVICE.md, \"Energy\")", meas_path,
                  t->path);
        ft_measured_free(m);
        ft_target_free(t);
        return EXIT_USAGE;
    }
    int rc = EXIT_OK, n = 0;
    double *tpred = malloc(sizeof *tpred * (size_t)m->nrows);
    double *pred = malloc(sizeof *pred * (size_t)m->nrows);
    double *meas = malloc(sizeof *meas * (size_t)m->nrows);
    double *err = malloc(sizeof *err * (size_t)m->nrows);
    int *row = malloc(sizeof *row * (size_t)m->nrows);
    int *order = malloc(sizeof *order * (size_t)m->nrows);
    const char **labels = malloc(sizeof *labels * (size_t)m->nrows);
    ft_kernel_choice **forms = calloc((size_t)m->nrows, sizeof *forms);
    double **kus = calloc((size_t)m->nrows, sizeof *kus);
    if (!tpred || !pred || !meas || !err || !row || !order || !labels || !forms || !kus) {
        cli_error("validate: out of memory");
        rc = EXIT_USAGE;
        goto done;
    }
    for (int i = 0; i < m->nrows; i++) {
        int held = ft_meas_held_out(m, i);
        if ((part == PART_FIT && held) || (part == PART_HELD && !held))
            continue;
        forms[n] = malloc(sizeof **forms * (size_t)m->rows[i].nkernels);
        kus[n] = malloc(sizeof **kus * (size_t)m->rows[i].nkernels);
        if (!forms[n] || !kus[n]) {
            cli_error("validate: out of memory");
            rc = EXIT_USAGE;
            goto done;
        }
        if (ft_meas_predict_kernels(&m->rows[i], t, NULL, forms[n], kus[n], &pred[n], &st) != FT_OK) {
            cli_error("%s:%d: %s", meas_path, m->rows[i].line, st.msg);
            rc = EXIT_USAGE;
            goto done;
        }
        meas[n] = m->rows[i].measured_us;
        tpred[n] = pred[n];
        /* an energy file: the figures compared are joules */
        if (energy && ft_meas_predict_energy(&m->rows[i], t, forms[n], kus[n], &pred[n], &st) != FT_OK) {
            cli_error("%s:%d: %s", meas_path, m->rows[i].line, st.msg);
            rc = EXIT_USAGE;
            goto done;
        }
        if (energy)
            meas[n] = m->rows[i].measured_j;
        err[n] = (pred[n] - meas[n]) / meas[n];
        labels[n] = m->rows[i].label;
        row[n++] = i;
    }
    if (n == 0) {
        cli_error("validate: %s: no rows in part %s", meas_path, part == PART_FIT ? "fit" : "held-out");
        rc = EXIT_USAGE;
        goto done;
    }
    ft_meas_stats sx;
    ft_meas_stats_of(pred, meas, n, &sx);
    double *aerr = malloc(sizeof *aerr * (size_t)n);
    if (!aerr) {
        cli_error("validate: out of memory");
        rc = EXIT_USAGE;
        goto done;
    }
    for (int i = 0; i < n; i++)
        aerr[i] = fabs(err[i]);
    by_error(order, n, aerr);
    free(aerr);
    if (nworst > n)
        nworst = n;
    const char *part_name = part == PART_ALL ? "all" : part == PART_FIT ? "fit" : "held-out";
    int n_above, n_floor;
    double mape_above = mape_split(pred, meas, n, 1, &n_above), mape_floor = mape_split(pred, meas, n, 0, &n_floor);
    const char *unit = energy ? "j" : "us";
    if (json) {
        printf("{\"measured\": ");
        cli_json_string(stdout, meas_path);
        printf(", \"format\": \"%s\", \"target\": ", ft_meas_format_name(m->format));
        cli_json_string(stdout, t->name);
        printf(", \"part\": \"%s\", \"rows\": [", part_name);
        for (int i = 0; i < n; i++) {
            const ft_meas_row *r = &m->rows[row[i]];
            printf("%s\n  {\"label\": ", i ? "," : "");
            cli_json_string(stdout, r->label);
            printf(", \"line\": %d, \"measured_%s\": ", r->line, unit);
            cli_json_number(stdout, meas[i]);
            printf(", \"predicted_%s\": ", unit);
            cli_json_number(stdout, pred[i]);
            if (energy) {
                printf(", \"measured_us\": ");
                cli_json_number(stdout, r->measured_us);
                printf(", \"predicted_us\": ");
                cli_json_number(stdout, tpred[i]);
            }
            printf(", \"error\": ");
            cli_json_number(stdout, err[i]);
            printf(", \"held_out\": %s, \"kernels\": [", ft_meas_held_out(m, row[i]) ? "true" : "false");
            for (int j = 0; j < r->nkernels; j++) {
                const ft_kernel_choice *f = &forms[i][j];
                const ft_problem *k = r->kernels[j];
                const char *kn = k->ops[k->nops - 1].name;
                printf("%s{\"w\": %lld, \"h\": %lld, \"k\": %lld, \"split\": %d, \"streamk\": %s, \"us\": ", j ? ", " : "",
                       (long long)f->w, (long long)f->h, (long long)f->k, f->split, f->streamk ? "true" : "false");
                cli_json_number(stdout, kus[i][j]);
                printf(", \"ops\": %d, \"name\": ", k->nops);
                if (kn)
                    cli_json_string(stdout, kn);
                else
                    printf("null");
                printf("}");
            }
            printf("]}");
        }
        printf("],\n \"n\": %d, \"mape\": ", n);
        cli_json_number(stdout, sx.mape);
        printf(", \"gmean\": ");
        cli_json_number(stdout, sx.gmean);
        if (!energy) {
            print_split(1, "above_6us", mape_above, n_above);
            print_split(1, "floor", mape_floor, n_floor);
        }
        printf(", \"worst\": [");
        for (int i = 0; i < nworst; i++) {
            printf("%s", i ? ", " : "");
            cli_json_string(stdout, m->rows[row[order[i]]].label);
        }
        printf("], \"max_error\": ");
        cli_json_number(stdout, max_error);
        printf(", \"passed\": %s", sx.mape <= max_error ? "true" : "false");
        if (headroom) {
            printf(",\n \"headroom\": [");
            for (int i = 0; i < n && rc == EXIT_OK; i++) {
                printf("%s\n  ", i ? "," : "");
                rc = cli_models_headroom(&m->rows[row[i]], dir, target_path, pred[i], headroom_limit, 1, stdout);
            }
            printf("]");
        }
        printf("}\n");
    } else {
        printf("measured  %s (%s, %d rows, part %s)\n", meas_path, ft_meas_format_name(m->format), n, part_name);
        printf("target    %s\n\n", t->name);
        printf("%-28s %5s %12s %12s %9s%s\n", "row", "line", "measured", "predicted", "error",
               energy ? "  (mJ per op; us measured, predicted)" : "");
        double scale = energy ? 1e3 : 1;
        for (int i = 0; i < n; i++) {
            const ft_meas_row *r = &m->rows[row[i]];
            printf(energy ? "%-28s %5d %12.4g %12.4g %+8.1f%%" : "%-28s %5d %12.3f %12.3f %+8.1f%%", r->label, r->line,
                   scale * meas[i], scale * pred[i], 100 * err[i]);
            if (energy)
                printf("  %10.3f %10.3f", r->measured_us, tpred[i]);
            printf("%s\n", ft_meas_held_out(m, row[i]) ? "  held out" : "");
        }
        printf("\nMAPE      %.2f %% over %d rows (%s --max-error %g %%)\n", sx.mape, n,
               sx.mape <= max_error ? "within" : "FAILED: above", max_error);
        printf("gmean     %.4f (predicted / measured)\n", sx.gmean);
        if (!energy) {
            printf("above 6us ");
            print_split(0, "above_6us", mape_above, n_above);
            printf(" (kernels measured at %g us or more)\nfloor     ", FLOOR_US);
            print_split(0, "floor", mape_floor, n_floor);
            printf(" (rows under %g us)\n", FLOOR_US);
        }
        if (nworst)
            printf("worst     ");
        for (int i = 0; i < nworst; i++)
            printf("%s%s %+.1f%%", i ? ", " : "", m->rows[row[order[i]]].label, 100 * err[order[i]]);
        if (nworst)
            printf("\n");
        for (int i = 0; m->format == FT_MEAS_MODELS && nkernels && i < n; i++)
            list_kernels(&m->rows[row[i]], kus[i], pred[i], nkernels);
        for (int i = 0; headroom && i < n && rc == EXIT_OK; i++)
            rc = cli_models_headroom(&m->rows[row[i]], dir, target_path, pred[i], headroom_limit, 0, stdout);
    }
    if (svg) {
        /* only the worst rows are labelled: hundreds of labels hide the plot */
        for (int i = 0; i < n; i++)
            labels[i] = NULL;
        for (int i = 0; i < nworst; i++)
            labels[order[i]] = m->rows[row[order[i]]].label;
        rc = write_svg(svg, m, t, pred, meas, labels, n, &sx);
    }
    if (rc == EXIT_OK && !(sx.mape <= max_error)) {
        cli_error("validate: %s on %s: MAPE %.2f %% over %d rows is above --max-error %g %%: the target does not predict "
                  "these measurements",
                  t->name, meas_path, sx.mape, n, max_error);
        rc = EXIT_INVALID;
    }
done:
    free(tpred);
    free(pred);
    free(meas);
    free(err);
    free(row);
    free(order);
    free(labels);
    for (int i = 0; forms && i < m->nrows; i++)
        free(forms[i]);
    free(forms);
    for (int i = 0; kus && i < m->nrows; i++)
        free(kus[i]);
    free(kus);
    cli_models_cleanup(models_dir);
    ft_measured_free(m);
    ft_target_free(t);
    return rc;
}
