/* calibrate.c - least-squares fit of a target's free settings to measured times (Levenberg-Marquardt on log time, kernel forms fixed between re-choices). */
#include "fusetile/calibrate.h"

#include "cost/cost.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const ft_calib_default_free[] = {
    "execution.run_overhead",  "execution.launch_overhead", "execution.tile_overhead", "compute.matmul_efficiency",
    "slow_memory.efficiency",  "shared_cache.bandwidth",    "compute.kind_cost.gelu",    "execution.step_overhead",
    "execution.matmul_tile_overhead", "execution.replay_interval", "shared_cache.resident_bytes", "execution.split_overhead",
};
const int ft_calib_ndefault_free = (int)(sizeof ft_calib_default_free / sizeof ft_calib_default_free[0]);

const char *const ft_calib_energy_free[] = {
    "energy.mac_pj", "energy.pointwise_pj", "energy.slow_read_pj", "energy.cache_pj", "energy.launch_pj", "energy.active_watts",
};
const int ft_calib_nenergy_free = (int)(sizeof ft_calib_energy_free / sizeof ft_calib_energy_free[0]);

/* Outer rounds (kernel forms chosen again) and the step in log space of
 * the finite differences. */
#define MAX_ROUNDS 12
#define FD_STEP 1e-5
/* Largest magnitude a parameter takes in log space: factors of e^30 either
 * way (an efficiency at most 1). */
#define THETA_MAX 30.0

void ft_calib_opts_init(ft_calib_opts *o)
{
    memset(o, 0, sizeof *o);
    o->max_iter = 200;
}

/* Whether a fit uses row i of m: every row with all_rows, else those not
 * held out (ft_meas_held_out). */
static int row_fitted(const ft_measured *m, int i, int all_rows)
{
    return all_rows || !ft_meas_held_out(m, i);
}

double ft_calib_reset_value(const ft_target *t, ft_measured *const *files, int nfiles, int all_rows, const char *name)
{
    if (strstr(name, "efficiency"))
        return 0.5;
    if (strstr(name, "interval")) {
        double shortest = INFINITY;
        for (int f = 0; f < nfiles; f++)
            for (int i = 0; i < files[f]->nrows; i++)
                if (row_fitted(files[f], i, all_rows))
                    shortest = fmin(shortest, files[f]->rows[i].measured_us);
        return isfinite(shortest) && t->clock_hz > 0 ? shortest * 1e-6 * t->clock_hz : 1000.0;
    }
    if (strstr(name, "overhead") || strstr(name, "latency"))
        return 1000.0;
    if (strcmp(name, "shared_cache.bandwidth") == 0)
        return 2.0 * t->read_bandwidth;
    if (strcmp(name, "shared_cache.resident_bytes") == 0)   /* one partition's capacity */
        return ft_target_cache_elements(t) * (double)t->element_bytes;
    return 1.0;
}

/* The state of one fit. */
typedef struct fit {
    ft_target *t;
    ft_measured *const *files;
    int nfiles;
    int all_rows;
    int np;
    double *slot[FT_CALIB_MAX_FREE];
    int fraction[FT_CALIB_MAX_FREE];
    int nres;                  /* residuals: rows fitted */
    const ft_meas_row **row;   /* nres rows */
    double *weight;            /* sqrt of each row's weight */
    ft_kernel_choice **choice; /* per row: its kernels' forms */
    double *kus;               /* the kernels' times of one row (energy rows) */
    ft_status *st;
} fit;

/* th clamped to setting i's range: an efficiency's log is at most 0. */
static double clamp(const fit *F, int i, double th)
{
    return fmax(-THETA_MAX, fmin(F->fraction[i] ? 0.0 : THETA_MAX, th));
}

static double to_value(const fit *F, int i, double th)
{
    return exp(clamp(F, i, th));
}

static double to_theta(const fit *F, int i, double v)
{
    (void)F;
    (void)i;
    return log(fmax(v, 1e-12));
}

static void set_theta(fit *F, const double *th)
{
    for (int i = 0; i < F->np; i++)
        *F->slot[i] = to_value(F, i, th[i]);
}

/* Whether two form lists of n kernels are the same. */
static int same_forms(const ft_kernel_choice *a, const ft_kernel_choice *b, int n)
{
    for (int i = 0; i < n; i++)
        if (a[i].w != b[i].w || a[i].h != b[i].h || a[i].k != b[i].k || a[i].split != b[i].split || a[i].streamk != b[i].streamk ||
            a[i].add_w != b[i].add_w || a[i].add_h != b[i].add_h || a[i].add_k != b[i].add_k)
            return 0;
    return 1;
}

/* Residuals at th into res; their sum of squares in *cost.  th NULL: the
 * settings as they are.  prev NULL: each row's kernels keep their stored
 * forms.  Otherwise the forms are chosen again and stored (prev: room for
 * one row's forms), and *changed (when not NULL) is set when any moved. */
static int residuals(fit *F, const double *th, ft_kernel_choice *prev, double *res, double *cost, int *changed)
{
    if (th)
        set_theta(F, th);
    ksum c = {0, 0};
    for (int i = 0; i < F->nres; i++) {
        double us;
        int nk = F->row[i]->nkernels;
        if (prev)
            memcpy(prev, F->choice[i], sizeof *prev * (size_t)nk);
        int rc = ft_meas_predict_kernels(F->row[i], F->t, prev ? NULL : F->choice[i], prev ? F->choice[i] : NULL, F->kus, &us,
                                         F->st);
        /* an energy file's row: its joules are fitted, at the kernels' times */
        double meas = F->row[i]->measured_us;
        if (rc == FT_OK && F->row[i]->measured_j > 0) {
            rc = ft_meas_predict_energy(F->row[i], F->t, F->choice[i], F->kus, &us, F->st);
            meas = F->row[i]->measured_j;
        }
        if (rc)
            return rc;
        if (prev && changed && !same_forms(prev, F->choice[i], nk))
            *changed = 1;
        res[i] = F->weight[i] * log(us / meas);
        ksum_add(&c, res[i] * res[i]);
    }
    *cost = ksum_value(&c);
    return FT_OK;
}

/* Solve the n x n system a x = b (a and b overwritten) by Gaussian
 * elimination with partial pivoting; 0, or -1 when singular. */
static int solve(double *a, double *b, int n, double *x)
{
    for (int c = 0; c < n; c++) {
        int piv = c;
        for (int r = c + 1; r < n; r++)
            if (fabs(a[r * n + c]) > fabs(a[piv * n + c]))
                piv = r;
        if (!(fabs(a[piv * n + c]) > 1e-300))
            return -1;
        if (piv != c) {
            for (int k = 0; k < n; k++) {
                double tmp = a[c * n + k];
                a[c * n + k] = a[piv * n + k];
                a[piv * n + k] = tmp;
            }
            double tmp = b[c];
            b[c] = b[piv];
            b[piv] = tmp;
        }
        for (int r = c + 1; r < n; r++) {
            double f = a[r * n + c] / a[c * n + c];
            for (int k = c; k < n; k++)
                a[r * n + k] -= f * a[c * n + k];
            b[r] -= f * b[c];
        }
    }
    for (int r = n - 1; r >= 0; r--) {
        double s = b[r];
        for (int k = r + 1; k < n; k++)
            s -= a[r * n + k] * x[k];
        x[r] = s / a[r * n + r];
    }
    return 0;
}

/* Levenberg-Marquardt steps from th with the kernel forms fixed; th and
 * *cost updated; *steps counts the accepted ones. */
static int lm_run(fit *F, double *th, double *cost, int max_iter, int *steps, const ft_calib_opts *o)
{
    int n = F->np, m = F->nres, rc = FT_OK;
    double *res = ft__malloc(sizeof(double) * (size_t)m), *res2 = ft__malloc(sizeof(double) * (size_t)m);
    double *J = ft__malloc(sizeof(double) * (size_t)m * (size_t)n);
    double A[FT_CALIB_MAX_FREE * FT_CALIB_MAX_FREE], M[FT_CALIB_MAX_FREE * FT_CALIB_MAX_FREE];
    double g[FT_CALIB_MAX_FREE], b[FT_CALIB_MAX_FREE], d[FT_CALIB_MAX_FREE], th2[FT_CALIB_MAX_FREE];
    if (!res || !res2 || !J) {
        rc = ft__fail(F->st, FT_ENOMEM, 0, "out of memory");
        goto done;
    }
    double lambda = 1e-3;
    if ((rc = residuals(F, th, NULL, res, cost, NULL)))
        goto done;
    for (int it = 0; it < max_iter; it++) {
        for (int j = 0; j < n; j++) {
            memcpy(th2, th, sizeof(double) * (size_t)n);
            double h = FD_STEP * fmax(1.0, fabs(th[j]));
            if (clamp(F, j, th[j] + h) < th[j] + h)
                h = -h;   /* at the top of its range: a backward difference */
            th2[j] += h;
            double c2;
            if ((rc = residuals(F, th2, NULL, res2, &c2, NULL)))
                goto done;
            for (int i = 0; i < m; i++)
                J[(size_t)i * (size_t)n + (size_t)j] = (res2[i] - res[i]) / h;
        }
        for (int a = 0; a < n; a++) {
            g[a] = 0;
            for (int i = 0; i < m; i++)
                g[a] += J[(size_t)i * (size_t)n + (size_t)a] * res[i];
            for (int c = 0; c < n; c++) {
                double s = 0;
                for (int i = 0; i < m; i++)
                    s += J[(size_t)i * (size_t)n + (size_t)a] * J[(size_t)i * (size_t)n + (size_t)c];
                A[a * n + c] = s;
            }
        }
        int accepted = 0;
        double newcost = *cost;
        while (lambda < 1e12) {
            memcpy(M, A, sizeof(double) * (size_t)(n * n));
            for (int a = 0; a < n; a++) {
                M[a * n + a] += lambda * A[a * n + a] + 1e-12;
                b[a] = -g[a];
            }
            if (solve(M, b, n, d) == 0) {
                for (int a = 0; a < n; a++)
                    th2[a] = clamp(F, a, th[a] + d[a]);
                if ((rc = residuals(F, th2, NULL, res2, &newcost, NULL)))
                    goto done;
                if (newcost < *cost) {
                    accepted = 1;
                    break;
                }
            }
            lambda *= 4;
        }
        if (!accepted)
            break;
        double moved = 0;
        for (int a = 0; a < n; a++)
            moved = fmax(moved, fabs(th2[a] - th[a]));
        double gain = *cost - newcost;
        memcpy(th, th2, sizeof(double) * (size_t)n);
        memcpy(res, res2, sizeof(double) * (size_t)m);
        *cost = newcost;
        lambda = fmax(lambda / 3, 1e-9);
        (*steps)++;
        if (o->on_step)
            o->on_step(o->ctx, *steps, *cost);
        if (moved < 1e-9 || gain < 1e-12 * *cost || *cost < 1e-24)
            break;
    }
done:
    set_theta(F, th);
    ft__free(res);
    ft__free(res2);
    ft__free(J);
    return rc;
}

/* A coordinate scan from th: each setting in turn tried at SCAN_POINTS
 * points of its log (logit) range, `span` either side of its value,
 * kernel forms fixed, and moved to the best.  Least squares from a poor
 * start can stop where a max() of the roofline hides a setting's effect
 * (a gelu cost below the memory time) or where one setting stands in for
 * another; each round of the fit scans first, over a narrower span each
 * time (SCAN_SPAN, halved per round SCAN_HALVINGS times).  The first span,
 * factors of e^7 (about 1100) either way, reaches a gelu cost of about 100
 * from the reset value 1, which e^3.5 (33) did not: there the gelu rows are
 * still memory-bound and the cost flat. */
#define SCAN_POINTS 13
#define SCAN_SPAN 7.0
#define SCAN_HALVINGS 5
static int scan(fit *F, double *th, double *cost, double *res, double span)
{
    for (int i = 0; i < F->np; i++) {
        double best = th[i], c;
        for (int q = 0; q < SCAN_POINTS; q++) {
            double save = th[i];
            th[i] = clamp(F, i, save + span * (2.0 * q / (SCAN_POINTS - 1) - 1.0));
            int rc = residuals(F, th, NULL, res, &c, NULL);
            double tried = th[i];
            th[i] = save;
            if (rc)
                return rc;
            if (c < *cost) {
                *cost = c;
                best = tried;
            }
        }
        th[i] = best;
    }
    set_theta(F, th);
    return FT_OK;
}

static void fit_free(fit *F)
{
    for (int i = 0; i < F->nres && F->choice; i++)
        ft__free(F->choice[i]);
    ft__free(F->choice);
    ft__free(F->row);
    ft__free(F->weight);
    ft__free(F->kus);
}

/* The rows to fit and their weights. */
static int fit_rows(fit *F)
{
    int total = 0;
    for (int f = 0; f < F->nfiles; f++)
        total += F->files[f]->nrows;
    F->row = ft__malloc(sizeof *F->row * (size_t)(total + 1));
    F->weight = ft__malloc(sizeof *F->weight * (size_t)(total + 1));
    F->choice = ft__calloc((size_t)(total + 1), sizeof *F->choice);
    if (!F->row || !F->weight || !F->choice)
        return ft__fail(F->st, FT_ENOMEM, 0, "out of memory");
    int used = 0;
    for (int f = 0; f < F->nfiles; f++) {
        const ft_measured *m = F->files[f];
        int nf = 0;
        for (int i = 0; i < m->nrows; i++)
            nf += row_fitted(m, i, F->all_rows);
        if (nf)
            used++;
        for (int i = 0; i < m->nrows; i++) {
            if (!row_fitted(m, i, F->all_rows))
                continue;
            F->row[F->nres] = &m->rows[i];
            F->weight[F->nres] = 1.0 / sqrt((double)nf);
            F->choice[F->nres] = ft__calloc((size_t)m->rows[i].nkernels + 1, sizeof(ft_kernel_choice));
            if (!F->choice[F->nres++])
                return ft__fail(F->st, FT_ENOMEM, 0, "out of memory");
        }
    }
    if (F->nres == 0)
        return ft__fail(F->st, FT_EINPUT, 0, "calibrate: no rows to fit");
    for (int i = 0; i < F->nres; i++)
        F->weight[i] /= sqrt((double)used);
    return FT_OK;
}

int ft_calibrate(ft_target *t, ft_measured *const *files, int nfiles, const ft_calib_opts *o, ft_calib_result *r,
                 ft_status *st)
{
    ft_status_clear(st);
    memset(r, 0, sizeof *r);
    ft_calib_opts defaults;
    if (!o) {
        ft_calib_opts_init(&defaults);
        o = &defaults;
    }
    /* energy files alone: the energy settings by default */
    int all_energy = 1;
    for (int f = 0; f < nfiles && f < FT_CALIB_MAX_FILES; f++)
        all_energy &= files[f]->format == FT_MEAS_ENERGY;
    const char *const *names = o->free ? o->free : all_energy ? ft_calib_energy_free : ft_calib_default_free;
    int np = o->free ? o->nfree : all_energy ? ft_calib_nenergy_free : ft_calib_ndefault_free;
    if (t->contest)
        return ft__fail(st, FT_EINPUT, 0, "calibrate: %s is a contest target; give a machine target", t->path);
    if (np < 1 || np > FT_CALIB_MAX_FREE)
        return ft__fail(st, FT_EINPUT, 0, "calibrate: %d settings to fit (1 to %d)", np, FT_CALIB_MAX_FREE);
    if (nfiles < 1 || nfiles > FT_CALIB_MAX_FILES)
        return ft__fail(st, FT_EINPUT, 0, "calibrate: %d measured files (1 to %d)", nfiles, FT_CALIB_MAX_FILES);
    fit F;
    memset(&F, 0, sizeof F);
    F.t = t;
    F.files = files;
    F.nfiles = nfiles;
    F.all_rows = o->all_rows;
    F.np = np;
    F.st = st;
    double th[FT_CALIB_MAX_FREE];
    for (int i = 0; i < np; i++) {
        for (int j = 0; j < i; j++)
            if (strcmp(names[i], names[j]) == 0)
                return ft__fail(st, FT_EINPUT, 0, "calibrate: setting %s named twice", names[i]);
        if (strlen(names[i]) >= FT_CALIB_NAME || !(F.slot[i] = ft_target_setting(t, names[i], &F.fraction[i])))
            return ft__fail(st, FT_EINPUT, 0,
                            "calibrate: %s is not a number setting of a target (targets/example.cfg lists them)", names[i]);
        if (strncmp(names[i], "shared_cache.", 13) == 0 && t->cache_capacity_bytes <= 0)
            return ft__fail(st, FT_EINPUT, 0, "calibrate: %s: %s has no shared_cache group", names[i], t->path);
        if (strncmp(names[i], "energy.", 7) == 0 && !t->energy_on)
            return ft__fail(st, FT_EINPUT, 0, "calibrate: %s: %s has no energy group", names[i], t->path);
        snprintf(r->names[i], FT_CALIB_NAME, "%s", names[i]);
        r->before[i] = *F.slot[i];
        double v = *F.slot[i];
        if (!(v > 0) && strncmp(names[i], "slow_memory.", 12) == 0 && strstr(names[i], "_efficiency")) {
            double read_eff, write_eff;   /* not given: from slow_memory.efficiency */
            ft_target_memory_efficiencies(t, &read_eff, &write_eff);
            v = strstr(names[i], "read_") ? read_eff : write_eff;
        }
        if (!(v > 0))
            v = ft_calib_reset_value(t, files, nfiles, o->all_rows, names[i]);
        th[i] = to_theta(&F, i, v);
    }
    r->nfree = np;
    int rc = fit_rows(&F);
    /* the misaligned efficiency has a slope only on misaligned MatMuls */
    for (int i = 0; !rc && i < np; i++) {
        if (strcmp(names[i], "compute.misaligned_efficiency") != 0)
            continue;
        int any = 0;
        for (int j = 0; j < F.nres && !any; j++)
            for (int q = 0; q < F.row[j]->nkernels && !any; q++) {
                const ft_problem *kp = F.row[j]->kernels[q];
                for (int o2 = 0; o2 < kp->nops && !any; o2++)
                    any = ft_target_misaligned(t, kp, &kp->ops[o2]);
            }
        if (!any)
            rc = ft__fail(st, FT_EINPUT, 0, "calibrate: %s: no row fitted has a MatMul whose K or N is not a multiple of "
                          "%lld (compute.aligned_elements), so nothing sets it; leave it out of --free", names[i],
                          (long long)t->aligned_elements);
    }
    double *res = rc || F.nres < 1 ? NULL : ft__malloc(sizeof(double) * (size_t)F.nres);
    int maxk = 1;   /* the previous forms of one row, to tell a change */
    for (int i = 0; !rc && i < F.nres; i++) {
        maxk = F.row[i]->nkernels > maxk ? F.row[i]->nkernels : maxk;
        if (F.row[i]->measured_j > 0 && !t->energy_on)
            rc = ft__fail(st, FT_EINPUT, 0, "calibrate: an energy file's rows, but %s has no energy group", t->path);
    }
    ft_kernel_choice *prev = rc ? NULL : ft__malloc(sizeof *prev * (size_t)maxk);
    F.kus = rc ? NULL : ft__malloc(sizeof *F.kus * (size_t)maxk);
    if (!rc && (!res || !prev || !F.kus))
        rc = ft__fail(st, FT_ENOMEM, 0, "out of memory");
    r->rows = F.nres;
    if (!rc)   /* the cost before: the target as given */
        rc = residuals(&F, NULL, prev, res, &r->cost_before, NULL);
    /* The true cost is the one with every kernel's form chosen again (as
     * validate predicts); a run of steps with the forms fixed can lower
     * its own cost and raise the true one.  The fit keeps the settings of
     * the lowest true cost seen: a round that does not lower it starts the
     * next from them again (a narrower scan), two such rounds end the fit. */
    double best_th[FT_CALIB_MAX_FREE], best = INFINITY;
    int fails = 0;
    if (!rc && (rc = residuals(&F, th, prev, res, &best, NULL)) == FT_OK)
        memcpy(best_th, th, sizeof(double) * (size_t)np);
    for (int round = 0; !rc && round < MAX_ROUNDS; round++) {
        double cost = best;
        if ((rc = scan(&F, th, &cost, res, SCAN_SPAN / (1 << (round < SCAN_HALVINGS ? round : SCAN_HALVINGS)))))
            break;
        if ((rc = lm_run(&F, th, &cost, o->max_iter, &r->iterations, o)))
            break;
        /* choose the forms again at the new settings: the true cost */
        int changed = 0;
        double truecost;
        if ((rc = residuals(&F, th, prev, res, &truecost, &changed)))
            break;
        if (truecost < best * (1 - 1e-9)) {
            best = truecost;
            memcpy(best_th, th, sizeof(double) * (size_t)np);
            fails = 0;
            if (!changed && round >= 2)
                break;
        } else {
            /* back to the best settings and their forms */
            memcpy(th, best_th, sizeof(double) * (size_t)np);
            if ((rc = residuals(&F, th, prev, res, &cost, NULL)) || ++fails >= 2)
                break;
        }
    }
    if (!rc && best >= r->cost_before) {
        /* a setting given as "off" (-1: no stream-K form; a read or write
         * efficiency as slow_memory.efficiency) has no value in the fit's
         * range: when no value beats it, it stays as given; so does
         * every setting of a fit that lowers nothing */
        for (int i = 0; i < np; i++)
            *F.slot[i] = r->after[i] = r->before[i];
        r->cost_after = r->cost_before;
    } else if (!rc) {   /* every way out of the rounds leaves th at best_th */
        set_theta(&F, best_th);
        r->cost_after = best;
        for (int i = 0; i < np; i++)
            r->after[i] = *F.slot[i];
    }
    ft__free(prev);
    ft__free(res);
    fit_free(&F);
    if (rc)
        for (int i = 0; i < np && F.slot[i]; i++)
            *F.slot[i] = r->before[i];
    return rc;
}
