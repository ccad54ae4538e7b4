/* baseline.c - the one-op-per-subgraph schedule at the best single granularity, a reference point for schedulers. */
#include "fusetile/fusetile.h"
#include "oneop.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_MAX_STEPS 2000000

static const char usage_text[] =
    "usage: baseline PROBLEM.json [-o OUT.json] [--compute-model native|op]\n"
    "                [--granularity W,H,K] [--max-steps N] [--help]\n"
    "\n"
    "Writes the one-op-per-subgraph schedule of PROBLEM.json: one subgraph per\n"
    "op in topological order, nothing retained, raster order, every subgraph\n"
    "at the same granularity [W, H, K].\n"
    "\n"
    "Without --granularity it evaluates candidate granularities (each of w, h,\n"
    "k a power of two up to native or a divisor <= native of the sizes it\n"
    "tiles) and keeps the one with the lowest total latency.  Candidates are\n"
    "tried in order of a cheap lower bound on their total (padded compute and\n"
    "compulsory traffic per op) and the search stops once that bound reaches\n"
    "the best total, so the result is the best candidate; candidates over\n"
    "--max-steps steps in total (default 2000000) are skipped.\n"
    "\n"
    "  -o OUT.json              write the schedule there (default: stdout)\n"
    "  --compute-model MODEL    native (default) or op, as in SPEC.md\n"
    "  --granularity W,H,K      use this granularity, no search\n"
    "  --max-steps N            skip candidates with more steps than N\n"
    "  --help                   this text\n"
    "\n"
    "Progress and the summary (total, lower bound, ratio) go to stderr.\n"
    "Exit status: 0 written, 1 no valid granularity (or the given one is\n"
    "invalid), 2 bad input or usage, 3 out of memory.\n";

struct options {
    const char *problem;
    const char *out;
    ft_compute_model model;
    int fixed;
    int64_t g[3];
    int64_t max_steps;
};

struct candidate {
    int64_t g[3];
    int64_t steps;
    double bound;
};

static int usage_error(const char *fmt, const char *arg)
{
    fputs("baseline: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs(" (try --help)\n", stderr);
    return FT_EINPUT;
}

static int parse_i64(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end)
        return -1;
    *out = v;
    return 0;
}

static int parse_granularity(const char *s, int64_t g[3])
{
    for (int n = 0; n < 3; n++) {
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (errno || end == s || *end != (n < 2 ? ',' : '\0'))
            return -1;
        g[n] = v;
        s = end + 1;
    }
    return 0;
}

/* Returns -1 to go on, else an exit status (0 after --help). */
static int parse_args(int argc, char **argv, struct options *o)
{
    memset(o, 0, sizeof *o);
    o->model = FT_COMPUTE_NATIVE;
    o->max_steps = DEFAULT_MAX_STEPS;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage_text, stdout);
            return 0;
        }
        if (strcmp(a, "-o") == 0 || strcmp(a, "--compute-model") == 0 ||
            strcmp(a, "--granularity") == 0 || strcmp(a, "--max-steps") == 0) {
            if (i + 1 >= argc)
                return usage_error("%s needs a value", a);
            val = argv[++i];
        }
        if (strcmp(a, "-o") == 0) {
            o->out = val;
        } else if (strcmp(a, "--compute-model") == 0) {
            if (ft_compute_model_parse(val, &o->model) != 0)
                return usage_error("--compute-model: '%s' is neither native nor op", val);
        } else if (strcmp(a, "--granularity") == 0) {
            if (parse_granularity(val, o->g) != 0)
                return usage_error("--granularity: '%s' is not W,H,K (three integers)", val);
            o->fixed = 1;
        } else if (strcmp(a, "--max-steps") == 0) {
            if (parse_i64(val, &o->max_steps) != 0 || o->max_steps < 1)
                return usage_error("--max-steps: '%s' is not a positive integer", val);
        } else if (a[0] == '-' && a[1] != '\0') {
            return usage_error("unknown option '%s'", a);
        } else if (o->problem) {
            return usage_error("unexpected argument '%s'", a);
        } else {
            o->problem = a;
        }
    }
    if (!o->problem)
        return usage_error("%s", "missing PROBLEM.json");
    return -1;
}

/* Lower bound on the total of the one-op schedule at granularity g: per op,
 * the larger of its padded compute (every tile pays whole native tiles, as
 * each candidate dimension is <= native) and its compulsory traffic (each
 * distinct input loaded once, the output written once: in a one-op schedule
 * in topological order every output is a graph output or a later subgraph's
 * boundary input). */
static double candidate_bound(const ft_problem *p, ft_compute_model model,
                              const int64_t g[3])
{
    double total = 0;
    for (int i = 0; i < p->nops; i++) {
        const ft_op *o = &p->ops[i];
        const ft_tensor *t = &p->tensors[o->output];
        double tiles = (double)oneop_ceil_div(t->width, g[ONEOP_W]) *
                       (double)oneop_ceil_div(t->height, g[ONEOP_H]);
        double compute = o->base_cost * tiles;
        if (o->type == FT_OP_MATMUL && model == FT_COMPUTE_NATIVE)
            compute *= (double)o->k / (double)p->native_w;
        double elems = (double)ft_tensor_size(p, o->output);
        for (int j = 0; j < o->ninputs; j++) {
            int dup = 0;
            for (int m = 0; m < j; m++)
                dup |= o->inputs[m] == o->inputs[j];
            if (!dup)
                elems += (double)ft_tensor_size(p, o->inputs[j]);
        }
        double memory = elems / p->bandwidth;
        total += compute > memory ? compute : memory;
    }
    return total;
}

static int cmp_candidate(const void *a, const void *b)
{
    const struct candidate *x = a, *y = b;
    if (x->bound != y->bound)
        return x->bound < y->bound ? -1 : 1;
    return (x->steps > y->steps) - (x->steps < y->steps);
}

/* Evaluate the one-op schedule at g.  FT_OK with the total and a malloc'd
 * copy of the subgraph latencies, or the evaluator's code with *st set. */
static int evaluate_at(const ft_problem *p, ft_compute_model model,
                       const int64_t g[3], double *total, double **lat,
                       ft_status *st)
{
    ft_schedule *s = oneop_schedule(p, g);
    if (!s) {
        snprintf(st->msg, sizeof st->msg, "out of memory");
        return FT_ENOMEM;
    }
    ft_eval e;
    memset(&e, 0, sizeof e);
    int rc = ft_evaluate(p, s, model, &e, st);
    if (rc == FT_OK) {
        *total = e.total;
        *lat = malloc((size_t)(e.nsubgraphs ? e.nsubgraphs : 1) * sizeof **lat);
        if (!*lat) {
            snprintf(st->msg, sizeof st->msg, "out of memory");
            rc = FT_ENOMEM;
        } else {
            for (int i = 0; i < e.nsubgraphs; i++)
                (*lat)[i] = e.sg[i].latency;
        }
        ft_eval_free(&e);
    }
    ft_schedule_free(s);
    return rc;
}

/* Fill *out with every candidate granularity (bound-sorted); returns the
 * count or -1 when out of memory. */
static int make_candidates(const ft_problem *p, ft_compute_model model,
                           struct candidate **out)
{
    int64_t *v[3] = { NULL, NULL, NULL };
    int n[3];
    int count = -1;
    *out = NULL;
    for (int d = 0; d < 3; d++)
        if ((n[d] = oneop_candidates(p, d, &v[d])) < 0)
            goto done;
    size_t total = (size_t)n[0] * (size_t)n[1] * (size_t)n[2];
    struct candidate *c = malloc((total ? total : 1) * sizeof *c);
    if (!c)
        goto done;
    size_t m = 0;
    for (int a = 0; a < n[0]; a++)
        for (int b = 0; b < n[1]; b++)
            for (int k = 0; k < n[2]; k++) {
                struct candidate *x = &c[m++];
                x->g[ONEOP_W] = v[0][a];
                x->g[ONEOP_H] = v[1][b];
                x->g[ONEOP_K] = v[2][k];
                x->steps = oneop_steps(p, x->g);
                x->bound = candidate_bound(p, model, x->g);
            }
    qsort(c, m, sizeof *c, cmp_candidate);
    *out = c;
    count = (int)m;
done:
    for (int d = 0; d < 3; d++)
        free(v[d]);
    return count;
}

/* Search the best single granularity; FT_OK with *best_g, *best_total and
 * *best_lat (malloc'd), FT_EINVALID when no candidate is valid, FT_ENOMEM. */
static int search(const ft_problem *p, const struct options *o,
                  int64_t best_g[3], double *best_total, double **best_lat)
{
    struct candidate *c;
    int n = make_candidates(p, o->model, &c);
    if (n < 0) {
        fprintf(stderr, "baseline: out of memory\n");
        return FT_ENOMEM;
    }
    int evaluated = 0, invalid = 0, over = 0, pruned = 0;
    int reasons[FT_R_COUNT] = { 0 };
    int found = 0, rc = FT_OK;
    int64_t best_steps = 0;
    for (int i = 0; i < n; i++) {
        if (found && c[i].bound > *best_total * (1 + 1e-9)) {
            pruned = n - i;
            break;
        }
        if (c[i].steps > o->max_steps) {
            over++;
            continue;
        }
        double total;
        double *lat = NULL;
        ft_status st;
        ft_status_clear(&st);
        int e = evaluate_at(p, o->model, c[i].g, &total, &lat, &st);
        evaluated++;
        if (e == FT_EINVALID) {
            invalid++;
            if (st.reason > 0 && st.reason < FT_R_COUNT)
                reasons[st.reason]++;
            continue;
        }
        if (e != FT_OK) {
            fprintf(stderr, "baseline: %s\n", st.msg);
            rc = e;
            break;
        }
        /* Within rounding of the best, the candidate with fewer steps wins
         * (sums of many steps differ in their last bits). */
        double tol = 1e-9 * (found ? *best_total : 0);
        if (!found || total < *best_total - tol ||
            (total <= *best_total + tol && c[i].steps < best_steps)) {
            fprintf(stderr,
                    "baseline:   [%" PRId64 ",%" PRId64 ",%" PRId64 "] %" PRId64
                    " steps: total %.4f (best so far)\n",
                    c[i].g[0], c[i].g[1], c[i].g[2], c[i].steps, total);
            free(*best_lat);
            *best_lat = lat;
            *best_total = total;
            memcpy(best_g, c[i].g, sizeof c[i].g);
            best_steps = c[i].steps;
            found = 1;
        } else {
            free(lat);
        }
    }
    fprintf(stderr,
            "baseline: %d candidates: %d evaluated (%d invalid), %d over "
            "--max-steps %" PRId64 ", %d pruned by the bound\n",
            n, evaluated, invalid, over, o->max_steps, pruned);
    for (int r = 1; r < FT_R_COUNT; r++)
        if (reasons[r])
            fprintf(stderr, "baseline:   %d invalid: %s\n", reasons[r],
                    ft_reason_name(r));
    free(c);
    if (rc == FT_OK && !found) {
        fprintf(stderr, "baseline: %s: no candidate granularity gives a valid "
                        "one-op-per-subgraph schedule%s\n", p->name,
                over ? " within --max-steps" : "");
        rc = FT_EINVALID;
    }
    return rc;
}

/* baseline PROBLEM.json [-o OUT.json] [...]: see usage_text.  Returns the
 * exit status documented there. */
int main(int argc, char **argv)
{
    struct options o;
    int rc = parse_args(argc, argv, &o);
    if (rc >= 0)
        return rc;

    ft_status st;
    ft_status_clear(&st);
    ft_problem *p = NULL;
    rc = ft_problem_load(o.problem, &p, &st);
    if (rc != FT_OK) {
        fprintf(stderr, "baseline: %s\n", st.msg);
        return rc;
    }
    fprintf(stderr, "baseline: %s: %d ops, compute model %s\n", o.problem,
            p->nops, ft_compute_model_name(o.model));

    int64_t g[3];
    double total = 0, *lat = NULL;
    if (o.fixed) {
        memcpy(g, o.g, sizeof g);
        rc = evaluate_at(p, o.model, g, &total, &lat, &st);
        if (rc != FT_OK)
            fprintf(stderr, "baseline: %s: granularity [%" PRId64 ",%" PRId64
                            ",%" PRId64 "]: %s\n",
                    o.problem, g[0], g[1], g[2], st.msg);
    } else {
        rc = search(p, &o, g, &total, &lat);
    }

    if (rc == FT_OK) {
        double lb = ft_lower_bound(p, o.model, NULL, NULL);
        fprintf(stderr,
                "baseline: %s granularity [%" PRId64 ",%" PRId64 ",%" PRId64
                "]: total %.4f, lower bound %.4f, ratio %.4f (compute model %s)\n",
                o.fixed ? "given" : "best", g[0], g[1], g[2], total, lb,
                lb > 0 ? total / lb : INFINITY,
                ft_compute_model_name(o.model));
        ft_schedule *s = oneop_schedule(p, g);
        if (!s) {
            fprintf(stderr, "baseline: out of memory\n");
            rc = FT_ENOMEM;
        } else if (o.out) {
            rc = ft_schedule_write(s, lat, o.out, &st);
            if (rc != FT_OK)
                fprintf(stderr, "baseline: %s\n", st.msg);
        } else {
            char *text = ft_schedule_to_json(s, lat);
            if (!text) {
                fprintf(stderr, "baseline: out of memory\n");
                rc = FT_ENOMEM;
            } else {
                if (fputs(text, stdout) == EOF || fputc('\n', stdout) == EOF ||
                    fflush(stdout) != 0) {
                    fprintf(stderr, "baseline: <stdout>: write error: %s\n",
                            strerror(errno));
                    rc = FT_EINPUT;
                }
                free(text);
            }
        }
        ft_schedule_free(s);
    }
    free(lat);
    ft_problem_free(p);
    return rc;
}
