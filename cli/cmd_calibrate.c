/* cmd_calibrate.c - `fusetile calibrate`: fit a target's free settings to measured times and write the fitted target file. */
#define _POSIX_C_SOURCE 200809L
#include "fusetile/calibrate.h"
#include "cli.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char calibrate_help[] =
    "usage: fusetile calibrate --target TARGET.cfg --measured FILE.tsv [--measured FILE.tsv]...\n"
    "                          [--problems DIR] [--free LIST] [--reset] [--all-rows]\n"
    "                          [-o FITTED.cfg] [--quiet]\n"
    "\n"
    "Fit TARGET's free settings to measured times by least squares on log\n"
    "time: the mean over the files of the mean squared log(predicted /\n"
    "measured), predictions as `fusetile validate` makes them.  The rows\n"
    "validate --part held-out names (every third gemm and pointwise row,\n"
    "every third problem) stay out of the fit, so that the error on them is\n"
    "an honest one.  Prints the settings before and after and the error\n"
    "(MAPE) per file before and after, on the fitted and the held-out rows;\n"
    "writes the fitted target with each fitted value marked.\n"
    "\n"
    "  --target FILE     the machine to start from (a real target: a file, or a\n"
    "                    shipped target's name, gpu-h100; docs/TARGETS.md)\n"
    "  --measured FILE   a measured TSV file (targets/measured/h100/); up to 16\n"
    "  --problems DIR    where graph_ops and graphs rows' problems are\n"
    "                    (default: benchmarks)\n"
    "  --free LIST       the settings to fit, comma-separated dotted names\n"
    "                    (default: execution.run_overhead,\n"
    "                    execution.launch_overhead, execution.tile_overhead,\n"
    "                    compute.matmul_efficiency, slow_memory.efficiency,\n"
    "                    shared_cache.bandwidth, compute.kind_cost.gelu,\n"
    "                    execution.step_overhead,\n"
    "                    execution.matmul_tile_overhead,\n"
    "                    execution.replay_interval,\n"
    "                    shared_cache.resident_bytes,\n"
    "                    execution.split_overhead); name\n"
    "                    compute.misaligned_efficiency only when the rows\n"
    "                    have a MatMul whose K or N is not a multiple of 8;\n"
    "                    with energy files alone (validate --help): the\n"
    "                    energy group's energy.mac_pj, energy.pointwise_pj,\n"
    "                    energy.slow_read_pj, energy.cache_pj,\n"
    "                    energy.launch_pj, energy.active_watts, fitted on\n"
    "                    log joules\n"
    "  --reset           start the fit from neutral values (efficiencies 0.5,\n"
    "                    overheads 1000 cycles, cache bandwidth twice the\n"
    "                    slow memory's, a resident part of one cache\n"
    "                    partition, kind costs 1, an interval the shortest\n"
    "                    row fitted), not TARGET's\n"
    "  --all-rows        fit the held-out rows too\n"
    "  -o FILE           write the fitted target to FILE (default: none)\n"
    "  --quiet           no progress lines on stderr\n"
    "  -h, --help        show this help\n"
    "\n"
    "Exit status: 0 done, 2 bad input or usage.\n";

/* The per-file error table: MAPE of the fitted, held-out and all rows. */
static int print_errors(const char *when, ft_target *t, ft_measured *const *files, int nfiles)
{
    printf("error %s:\n%-44s %10s %10s %10s %8s\n", when, "  file", "fit", "held-out", "all", "gmean");
    for (int f = 0; f < nfiles; f++) {
        const ft_measured *m = files[f];
        double *pred = malloc(sizeof(double) * (size_t)m->nrows * 2);
        double *meas = malloc(sizeof(double) * (size_t)m->nrows * 2);
        if (!pred || !meas) {
            free(pred);
            free(meas);
            cli_error("calibrate: out of memory");
            return -1;
        }
        int nfit = 0, nheld = 0;
        double *hp = pred + m->nrows, *hm = meas + m->nrows;
        for (int i = 0; i < m->nrows; i++) {
            ft_status st;
            double us, mu;   /* joules for an energy file's rows */
            if (ft_meas_predict_figure(&m->rows[i], t, &us, &mu, &st) != FT_OK) {
                cli_error("%s:%d: %s", m->path, m->rows[i].line, st.msg);
                free(pred);
                free(meas);
                return -1;
            }
            if (ft_meas_held_out(m, i)) {
                hp[nheld] = us;
                hm[nheld++] = mu;
            } else {
                pred[nfit] = us;
                meas[nfit++] = mu;
            }
        }
        ft_meas_stats sf, sh, sa;
        ft_meas_stats_of(pred, meas, nfit, &sf);
        ft_meas_stats_of(hp, hm, nheld, &sh);
        memmove(pred + nfit, hp, sizeof(double) * (size_t)nheld);
        memmove(meas + nfit, hm, sizeof(double) * (size_t)nheld);
        ft_meas_stats_of(pred, meas, nfit + nheld, &sa);
        printf("  %-42s %9.2f%% %9.2f%% %9.2f%% %8.4f\n", m->path, sf.mape, sh.mape, sa.mape, sa.gmean);
        free(pred);
        free(meas);
    }
    return 0;
}

static void on_step(void *ctx, int iter, double cost)
{
    (void)ctx;
    fprintf(stderr, "fusetile calibrate: step %d: cost %.6g\n", iter, cost);
}

int cmd_calibrate(int argc, char **argv)
{
    const char *target_arg = NULL, *dir = NULL, *out_path = NULL, *free_list = NULL;
    const char *meas_paths[FT_CALIB_MAX_FILES];
    int nmeas = 0, reset = 0, all_rows = 0, quiet = 0;
    cli_opts o;
    cli_opt_init(&o, argc, argv);
    const char *arg;
    int is_opt;
    while ((arg = cli_opt_next(&o, &is_opt))) {
        if (!is_opt) {
            cli_error("calibrate: unexpected argument '%s' (see 'fusetile calibrate --help')", arg);
            return EXIT_USAGE;
        }
        if (cli_opt_is(&o, arg, "-h") || cli_opt_is(&o, arg, "--help")) {
            fputs(calibrate_help, stdout);
            return EXIT_OK;
        } else if (cli_opt_is(&o, arg, "--target")) {
            if (!(target_arg = cli_opt_value(&o, "--target")))
                return EXIT_USAGE;
        } else if (cli_opt_is(&o, arg, "--measured")) {
            const char *v = cli_opt_value(&o, "--measured");
            if (!v)
                return EXIT_USAGE;
            if (nmeas == FT_CALIB_MAX_FILES) {
                cli_error("calibrate: more than %d --measured files", FT_CALIB_MAX_FILES);
                return EXIT_USAGE;
            }
            meas_paths[nmeas++] = v;
        } else if (cli_opt_is(&o, arg, "--problems")) {
            if (!(dir = cli_opt_value(&o, "--problems")))
                return EXIT_USAGE;
        } else if (cli_opt_is(&o, arg, "--free")) {
            if (!(free_list = cli_opt_value(&o, "--free")))
                return EXIT_USAGE;
        } else if (cli_opt_is(&o, arg, "-o") || cli_opt_is(&o, arg, "--output")) {
            if (!(out_path = cli_opt_value(&o, "-o")))
                return EXIT_USAGE;
        } else if (cli_opt_is(&o, arg, "--reset")) {
            reset = 1;
        } else if (cli_opt_is(&o, arg, "--all-rows")) {
            all_rows = 1;
        } else if (cli_opt_is(&o, arg, "--quiet") || cli_opt_is(&o, arg, "-q")) {
            quiet = 1;
        } else {
            cli_error("calibrate: unknown option '%s' (see 'fusetile calibrate --help')", arg);
            return EXIT_USAGE;
        }
    }
    if (!target_arg || nmeas == 0) {
        cli_error("calibrate: %s is required (see 'fusetile calibrate --help')", !target_arg ? "--target" : "--measured");
        return EXIT_USAGE;
    }
    if (!dir)
        dir = FT_BENCHMARKS_DIR;
    /* the free settings */
    char *names_buf = NULL;
    const char *names[FT_CALIB_MAX_FREE];
    int nfree = 0;
    if (free_list) {
        names_buf = strdup(free_list);
        if (!names_buf) {
            cli_error("calibrate: out of memory");
            return EXIT_USAGE;
        }
        for (char *save, *tok = strtok_r(names_buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            if (nfree == FT_CALIB_MAX_FREE) {
                cli_error("calibrate: --free: more than %d settings", FT_CALIB_MAX_FREE);
                free(names_buf);
                return EXIT_USAGE;
            }
            names[nfree++] = tok;
        }
        if (nfree == 0) {
            cli_error("calibrate: --free: no setting named");
            free(names_buf);
            return EXIT_USAGE;
        }
    } else {
        for (int i = 0; i < ft_calib_ndefault_free; i++)
            names[nfree++] = ft_calib_default_free[i];
    }
    int rc = EXIT_OK;
    ft_status st;
    ft_target *t = NULL;
    ft_measured *files[FT_CALIB_MAX_FILES];
    int nfiles = 0;
    char target_path[PATH_MAX];
    if (cli_target_find(target_arg, target_path, sizeof target_path) != EXIT_OK ||
        cli_input(target_path, "target") != EXIT_OK)
        return EXIT_USAGE;
    for (int i = 0; i < nmeas; i++)
        if (cli_input(meas_paths[i], "measured") != EXIT_OK)
            return EXIT_USAGE;
    if (out_path && cli_check_output("calibrate", out_path, 0) != EXIT_OK)
        return EXIT_USAGE;
    if (ft_target_load(target_path, &t, &st) != FT_OK) {
        cli_error("%s", st.msg);
        rc = EXIT_USAGE;
        goto done;
    }
    for (int i = 0; i < nmeas; i++) {
        if (ft_measured_load(meas_paths[i], dir, &files[nfiles], &st) != FT_OK) {
            cli_error("%s", st.msg);
            rc = EXIT_USAGE;
            goto done;
        }
        nfiles++;
    }
    int all_energy = nfiles > 0;
    for (int i = 0; i < nfiles; i++) {
        all_energy &= files[i]->format == FT_MEAS_ENERGY;
        if (files[i]->format == FT_MEAS_ENERGY && (t->contest || !t->energy_on)) {
            cli_error("calibrate: %s is an energy file, but %s has no energy group (docs/DEVICE.md, \"Energy\")", meas_paths[i],
                      target_path);
            rc = EXIT_USAGE;
            goto done;
        }
    }
    if (!free_list && all_energy) {   /* energy files: the energy settings (ft_calib_energy_free) */
        nfree = 0;
        for (int i = 0; i < ft_calib_nenergy_free; i++)
            names[nfree++] = ft_calib_energy_free[i];
    }
    if (reset) {
        for (int i = 0; i < nfree; i++) {
            double *v = t->contest ? NULL : ft_target_setting(t, names[i], NULL);
            if (v)
                *v = ft_calib_reset_value(t, files, nfiles, all_rows, names[i]);
        }
    }
    printf("target    %s%s\n", target_path, reset ? " (free settings reset)" : "");
    if (!t->contest && print_errors("before", t, files, nfiles)) {
        rc = EXIT_USAGE;
        goto done;
    }
    ft_calib_opts co;
    ft_calib_opts_init(&co);
    co.free = names;
    co.nfree = nfree;
    co.all_rows = all_rows;
    if (!quiet)
        co.on_step = on_step;
    ft_calib_result r;
    if (ft_calibrate(t, files, nfiles, &co, &r, &st) != FT_OK) {
        cli_error("%s", st.msg);
        rc = EXIT_USAGE;
        goto done;
    }
    printf("\nfitted %d settings to %d rows in %d steps: cost %.6g -> %.6g\n", r.nfree, r.rows, r.iterations,
           r.cost_before, r.cost_after);
    for (int i = 0; i < r.nfree; i++)
        printf("  %-34s %14.6g -> %14.6g\n", r.names[i], r.before[i], r.after[i]);
    printf("\n");
    if (print_errors("after", t, files, nfiles)) {
        rc = EXIT_USAGE;
        goto done;
    }
    if (out_path) {
        char note[600], day[32];
        time_t now = time(NULL);
        struct tm tmv;
        strftime(day, sizeof day, "%Y-%m-%d", gmtime_r(&now, &tmv) ? &tmv : gmtime(&now));
        int len = snprintf(note, sizeof note, "fitted by fusetile calibrate %s to", day);
        for (int i = 0; i < nfiles && len < (int)sizeof note; i++) {
            const char *base = strrchr(files[i]->path, '/');
            len += snprintf(note + len, sizeof note - (size_t)len, "%s %s", i ? "," : "", base ? base + 1 : files[i]->path);
        }
        if (all_rows && len < (int)sizeof note)
            snprintf(note + len, sizeof note - (size_t)len, " (all rows)");
        const char *nm[FT_CALIB_MAX_FREE];
        for (int i = 0; i < r.nfree; i++)
            nm[i] = r.names[i];
        if (ft_target_write_fitted(target_path, out_path, nm, r.after, r.nfree, note, &st) != FT_OK) {
            cli_error("%s", st.msg);
            rc = EXIT_USAGE;
            goto done;
        }
        printf("\nwrote %s\n", out_path);
    }
done:
    for (int i = 0; i < nfiles; i++)
        ft_measured_free(files[i]);
    ft_target_free(t);
    free(names_buf);
    return rc;
}
