/* exact.c - the exact optimum of a problem of up to 8 ops (tests/unit/ref_search.h over every granularity and op order), to measure a scheduler's gap. */
#include "fusetile/fusetile.h"
#include "../tests/unit/ref_search.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage_text[] =
    "usage: exact PROBLEM.json [--compute-model native|op] [-o OUT.json]\n"
    "             [--time-limit S] [--help]\n"
    "\n"
    "Finds the exact optimum total latency of PROBLEM.json (at most 8 ops) by\n"
    "exhaustive search: every partition into connected subgraphs, every\n"
    "subgraph order, every op order inside a subgraph, every granularity\n"
    "(w in 1..nw, h in 1..nh, k in 1..nw), raster and both snake traversals,\n"
    "every retention; no recomputation.  Configurations are skipped only when\n"
    "a proven lower bound of their latency already reaches the best, so the\n"
    "result is the optimum of that space.  Practical when the native\n"
    "granularity is small (`fusetile generate --family small`).\n"
    "\n"
    "Prints \"optimum TOTAL\" on stdout (every digit), statistics on stderr.\n"
    "\n"
    "  --compute-model MODEL    native (default) or op, as in SPEC.md\n"
    "  -o OUT.json              write the optimal schedule there\n"
    "  --time-limit S           give up after S seconds (rounded up to whole\n"
    "                           seconds; default 60) and say \"not proven\"\n"
    "  --help                   this text\n"
    "\n"
    "Exit status: 0 optimum proven, 1 no valid schedule in the space, 2 bad\n"
    "input or usage, 3 out of memory or an inconsistency in the reference,\n"
    "4 not proven within the time limit.\n";

static const char *problem_path;

/* SIGALRM: the time limit; only async-signal-safe calls. */
static void on_alarm(int sig)
{
    static const char msg[] = "exact: not proven: the time limit ran out\n";
    (void)sig;
    ssize_t r = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)r;
    _exit(4);
}

static int usage_error(const char *fmt, const char *arg)
{
    fputs("exact: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs(" (try --help)\n", stderr);
    return 2;
}

int main(int argc, char **argv)
{
    const char *out = NULL;
    ft_compute_model model = FT_COMPUTE_NATIVE;
    double limit = 60;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage_text, stdout);
            return 0;
        }
        if (strcmp(a, "-o") == 0 || strcmp(a, "--compute-model") == 0 || strcmp(a, "--time-limit") == 0) {
            if (i + 1 >= argc)
                return usage_error("%s needs a value", a);
            val = argv[++i];
        }
        if (strcmp(a, "-o") == 0) {
            if (!*val)
                return usage_error("%s needs a file name", a);
            out = val;
        } else if (strcmp(a, "--compute-model") == 0) {
            if (ft_compute_model_parse(val, &model) != 0)
                return usage_error("--compute-model is '%s', must be native or op", val);
        } else if (strcmp(a, "--time-limit") == 0) {
            char *end;
            errno = 0;
            limit = strtod(val, &end);
            if (errno || end == val || *end || !(limit > 0) || limit > 1e6)
                return usage_error("--time-limit is '%s', must be a positive number of seconds", val);
        } else if (a[0] == '-' && a[1] != '\0') {
            return usage_error("unknown option '%s'", a);
        } else if (problem_path) {
            return usage_error("unexpected argument '%s'", a);
        } else {
            problem_path = a;
        }
    }
    if (!problem_path)
        return usage_error("%s", "needs PROBLEM.json");
    ft_problem *p;
    ft_status st;
    if (ft_problem_load(problem_path, &p, &st) != FT_OK) {
        fprintf(stderr, "exact: %s\n", st.msg);
        return 2;
    }
    if (p->nops > REF_MAX_OPS) {
        fprintf(stderr, "exact: %s has %d ops, at most %d are supported\n", problem_path, p->nops, REF_MAX_OPS);
        ft_problem_free(p);
        return 2;
    }
    signal(SIGALRM, on_alarm);
    alarm((unsigned)ceil(limit));
    ref_result r;
    char err[512];
    int rc = ref_search(p, model, REF_ALL_GRANULARITIES | REF_ALL_OP_ORDERS, &r, err, sizeof err);
    alarm(0);
    if (rc != 0) {
        fprintf(stderr, "exact: %s: %s\n", problem_path, err);
        ft_problem_free(p);
        return 3;
    }
    int status = 0;
    if (!r.found) {
        fprintf(stderr, "exact: %s: no valid schedule in the space (an op fits no tile?)\n", problem_path);
        status = 1;
    } else {
        printf("optimum %.17g\n", r.total);
        fprintf(stderr, "exact: %s: compute model %s, optimum %.17g (proven), lower bound %.17g, %d subgraphs; "
                        "%ld partitions, %ld contexts, %ld evaluations, %ld pruned\n",
                problem_path, ft_compute_model_name(model), r.total, ft_lower_bound(p, model, NULL, NULL),
                r.best->nsubgraphs, r.stats.partitions, r.stats.contexts, r.stats.evaluations, r.stats.pruned);
        if (out && ft_schedule_write(r.best, NULL, out, &st) != FT_OK) {
            fprintf(stderr, "exact: %s\n", st.msg);
            status = 2;
        }
    }
    ref_result_free(&r);
    ft_problem_free(p);
    return status;
}
