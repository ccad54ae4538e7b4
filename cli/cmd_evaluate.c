/* cmd_evaluate.c - `fusetile evaluate`: exact cost-model report of a schedule. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char evaluate_help[] =
    "usage: fusetile evaluate PROBLEM.json SCHEDULE.json [--compute-model native|op] [--json] [--csv FILE]\n"
    "                         [--target TARGET.cfg [--keep-costs]] [--gap-time SECONDS]\n"
    "\n"
    "Evaluate SCHEDULE for PROBLEM exactly under the cost model (SPEC.md) and\n"
    "print, per subgraph, its latency, steps, compute- and memory-bound steps,\n"
    "peak working set and elements loaded and written (units under each\n"
    "column; one cost unit is one cycle on a target); then the total, the\n"
    "lower bound (SPEC.md section 5) and the ratio to it, and the capacity\n"
    "bound (section 7: the traffic the fast memory's capacity forces) and the\n"
    "ratio to it, and where the gap to the bound lies (the gap: line, with its\n"
    "evidence: the best configuration of each subgraph alone).\n"
    "\n"
    "  --compute-model M  native (default: MatMul depth in native-k units) or\n"
    "                     op (a full reduction costs the op's base cost)\n"
    "  --json             print one JSON object instead of the table; with a\n"
    "                     real target (not the contest's) it has total_seconds,\n"
    "                     the total in cycles divided by the target's clock_hz;\n"
    "                     with the target's energy group, energy_j and power_w\n"
    "                     (also per subgraph; the table gives them after it)\n"
    "  --csv FILE         also write the per-subgraph table as CSV to FILE ('-':\n"
    "                     standard output, instead of the table): the columns of\n"
    "                     Python's to_rows(), units in the header (latency [cost\n"
    "                     units], sizes [elements], latency [s] on a target with\n"
    "                     a clock), whole labels, exact numbers\n"
    "  --target FILE      evaluate on the machine of FILE, a target file or a\n"
    "                     shipped target's name (kpu, gpu-h100; docs/TARGETS.md): its\n"
    "                     capacity, bandwidth and native granularity replace\n"
    "                     the problem's, base costs are derived from its\n"
    "                     throughput, its timing terms (transfer latency,\n"
    "                     write bandwidth, separate channels, launch overhead,\n"
    "                     double buffering; targets/README.md) enter every step\n"
    "                     and subgraph, and one cost unit is one cycle; the\n"
    "                     contest target (targets/contest.cfg) changes nothing\n"
    "  --keep-costs       with --target: keep the problem file's base costs\n"
    "  --gap-time SECONDS wall time the gap line's evidence may take (default 2,\n"
    "                     FT_GAP_EVALUATE_SECONDS; 0: none); when cut, the line\n"
    "                     says how many subgraphs it covered\n"
    "  -h, --help         show this help\n"
    "\n"
    "Exit status: 0 valid, 1 invalid schedule (reason on stderr), 2 bad input\n"
    "or usage.  Reported subgraph_latencies that differ from the computed\n"
    "ones are a warning on stderr (not with a real target: the schedule's\n"
    "figures are for the problem file's machine).\n";

/* Compare the schedule's own figures with ours; warn on each difference. */
static void warn_reported(const ft_schedule *s, const ft_eval *e)
{
    for (int i = 0; i < s->nsubgraphs; i++) {
        const ft_subgraph *g = &s->sg[i];
        double got = e->sg[i].latency;
        if (!g->has_reported || fabs(g->reported - got) <= 1e-9 * fmax(1.0, fabs(got)))
            continue;
        char a[FT_NUMBUF], b[FT_NUMBUF];
        cli_warn("%s: subgraph_latencies[%d] is %s, the %s model gives %s", s->name, i, ft_format_double(a, g->reported),
                 ft_compute_model_name(e->model), ft_format_double(b, got));
    }
}

static void print_table(const ft_problem *p, const ft_schedule *s, const ft_eval *e, const ft_target *t,
                        int keep_costs, double gap_time)
{
    char a[FT_NUMBUF], b[FT_NUMBUF], c[FT_NUMBUF];
    double lbc, lbm;
    ft_lower_bound(p, e->model, &lbc, &lbm);
    cli_print_header(p, s, t, keep_costs);
    printf("compute model: %s\n\n", ft_compute_model_name(e->model));
    const int width = cli_ops_width(p, s);
    printf("%4s  %-*s %-16s %9s %10s %16s %10s %10s %10s %12s %12s\n", "sg", width, "ops", "w x h x k", "tiles", "steps",
           "latency", "cmp-bound", "mem-bound", "peak-ws", "loaded", "written");
    /* the units row: latency in cycles on a machine target (cost units on
     * the contest's), sizes in elements; steps and tiles are counts */
    printf("%4s  %-*s %-16s %9s %10s %16s %10s %10s %10s %12s %12s\n", "", width, "", "[elements]", "", "",
           cli_clock_hz(t) > 0 ? "[cycles]" : "[cost units]", "[steps]", "[steps]", "[elements]", "[elements]",
           "[elements]");
    for (int i = 0; i < e->nsubgraphs; i++) {
        const ft_subgraph *g = &s->sg[i];
        const ft_sg_result *r = &e->sg[i];
        cli_print_sg_head(stdout, p, i, g, width);
        printf(" %9lld %10lld %16s %10lld %10lld %10lld %12lld %12lld\n", (long long)(r->ntx * r->nty), (long long)r->steps,
               cli_fmt15(a, r->latency), (long long)r->compute_bound_steps, (long long)r->memory_bound_steps,
               (long long)r->peak_working_set, (long long)r->loaded, (long long)r->written);
    }
    /* a target's energy group: joules and average watts per subgraph */
    for (int i = 0; p->energy.on && i < e->nsubgraphs; i++)
        printf("%s%4d  %12.6g J  %9.2f W\n", i ? "" : "\nenergy [J], average power [W]:\n", i, e->sg[i].energy,
               ft_energy_watts(p, e->sg[i].energy, e->sg[i].latency));
    printf("\ntotal        %s\n", cli_fmt15(a, e->total));
    if (p->energy.on)
        printf("energy       %.6g J (average %.2f W)\n", e->energy, ft_energy_watts(p, e->energy, e->total));
    printf("lower bound  %s (compute %s, memory %s)\n", cli_fmt15(a, e->lower_bound), cli_fmt15(b, lbc),
           cli_fmt15(c, lbm));
    printf("ratio        %.4f\n", e->lower_bound > 0 ? e->total / e->lower_bound : 0.0);
    ft_lower_bound_capacity(p, e->model, &lbc, &lbm);
    printf("capacity bound  %s (compute %s, memory %s)\n", cli_fmt15(a, e->capacity_bound), cli_fmt15(b, lbc),
           cli_fmt15(c, lbm));
    printf("capacity ratio  %.4f\n", e->capacity_bound > 0 ? e->total / e->capacity_bound : 0.0);
    ft_gap g;
    if (cli_gap(p, s, e, gap_time, &g) == 0)
        cli_gap_line(stdout, &g);
}

static void print_json(const ft_problem *p, const ft_schedule *s, const ft_eval *e, const ft_target *t,
                       int keep_costs, double gap_time)
{
    double lbc, lbm;
    ft_lower_bound(p, e->model, &lbc, &lbm);
    FILE *f = stdout;
    fputs("{\"problem\": ", f);
    cli_json_string(f, p->name);
    fputs(", \"schedule\": ", f);
    cli_json_string(f, s->name);
    cli_target_json(f, t, keep_costs);
    fputs(", \"valid\": true, \"compute_model\": ", f);
    cli_json_string(f, ft_compute_model_name(e->model));
    fputs(", \"total\": ", f);
    cli_json_number(f, e->total);
    cli_json_seconds(f, "total_seconds", e->total, t);
    cli_json_energy(f, p, e->energy, e->total);
    fputs(", \"lower_bound\": ", f);
    cli_json_number(f, e->lower_bound);
    fputs(", \"lower_bound_compute\": ", f);
    cli_json_number(f, lbc);
    fputs(", \"lower_bound_memory\": ", f);
    cli_json_number(f, lbm);
    fputs(", \"ratio\": ", f);
    cli_json_number(f, e->lower_bound > 0 ? e->total / e->lower_bound : 0.0);
    ft_lower_bound_capacity(p, e->model, NULL, &lbm);
    fputs(", \"capacity_bound\": ", f);
    cli_json_number(f, e->capacity_bound);
    fputs(", \"capacity_bound_memory\": ", f);
    cli_json_number(f, lbm);
    fputs(", \"capacity_ratio\": ", f);
    cli_json_number(f, e->capacity_bound > 0 ? e->total / e->capacity_bound : 0.0);
    ft_gap g;
    if (cli_gap(p, s, e, gap_time, &g) == 0)
        cli_gap_json(f, &g);
    fputs(", \"subgraphs\": [", f);
    for (int i = 0; i < e->nsubgraphs; i++) {
        const ft_subgraph *g = &s->sg[i];
        const ft_sg_result *r = &e->sg[i];
        fprintf(f, "%s\n  {\"index\": %d, \"ops\": [", i ? "," : "", i);
        for (int j = 0; j < g->nops; j++)
            fprintf(f, "%s%d", j ? ", " : "", g->ops[j]);
        fputc(']', f);
        cli_json_sg_names(f, p, g);
        fprintf(f, ", \"granularity\": [%lld, %lld, %lld], \"latency\": ", (long long)g->w, (long long)g->h, (long long)g->k);
        cli_json_number(f, r->latency);
        fputs(", \"reported_latency\": ", f);
        if (g->has_reported)
            cli_json_number(f, g->reported);
        else
            fputs("null", f);
        fprintf(f, ", \"tiles\": %lld, \"tiles_x\": %lld, \"tiles_y\": %lld, \"k_steps\": %lld, \"steps\": %lld",
                (long long)(r->ntx * r->nty), (long long)r->ntx, (long long)r->nty, (long long)r->nk, (long long)r->steps);
        fprintf(f, ", \"compute_bound_steps\": %lld, \"memory_bound_steps\": %lld, \"peak_working_set\": %lld",
                (long long)r->compute_bound_steps, (long long)r->memory_bound_steps, (long long)r->peak_working_set);
        fprintf(f, ", \"loaded\": %lld, \"written\": %lld, \"compute_time\": ", (long long)r->loaded, (long long)r->written);
        cli_json_number(f, r->compute_time);
        fputs(", \"memory_time\": ", f);
        cli_json_number(f, r->memory_time);
        cli_json_energy(f, p, r->energy, r->latency);
        fputc('}', f);
    }
    fputs("\n]}\n", f);
}

static void print_invalid_json(const ft_status *st, ft_compute_model m, const ft_target *t, int keep_costs)
{
    fputs("{\"valid\": false", stdout);
    cli_target_json(stdout, t, keep_costs);
    fputs(", \"compute_model\": ", stdout);
    cli_json_string(stdout, ft_compute_model_name(m));
    fputs(", \"reason\": ", stdout);
    cli_json_string(stdout, ft_reason_name(st->reason));
    fputs(", \"message\": ", stdout);
    cli_json_string(stdout, st->msg);
    printf(", \"subgraph\": %d, \"tile\": %lld, \"step\": %lld}\n", st->sg, (long long)st->tile, (long long)st->step);
}

int cmd_evaluate(int argc, char **argv)
{
    cli_opts o;
    const char *arg;
    int is_opt;
    cli_pair c = {.help = evaluate_help, .model = FT_COMPUTE_NATIVE};
    double gap_time = FT_GAP_EVALUATE_SECONDS;
    cli_opt_init(&o, argc, argv);
    while ((arg = cli_opt_next(&o, &is_opt))) {
        int r = cli_pair_opt(&o, arg, is_opt, &c);
        if (r == CLI_OTHER && is_opt && cli_opt_is(&o, arg, "--gap-time")) {
            const char *v = cli_opt_value(&o, "--gap-time");
            char *end;
            if (!v)
                return EXIT_USAGE;
            gap_time = strtod(v, &end);
            if (end == v || *end || !isfinite(gap_time) || gap_time < 0) {
                cli_error("evaluate: --gap-time is '%s', must be a number of seconds, 0 or more", v);
                return EXIT_USAGE;
            }
            continue;
        }
        if (r == CLI_OTHER) {
            cli_error("evaluate: unknown option '%s' (try 'fusetile evaluate --help')", arg);
            return EXIT_USAGE;
        }
        if (r != CLI_NEXT)
            return r;
    }
    ft_status st;
    ft_problem *p;
    ft_schedule *s;
    ft_target *t;
    if (cli_pair_load(&o, &c, &p, &t, &s))
        return EXIT_USAGE;
    const ft_compute_model model = c.model;
    const int json = c.json, keep_costs = c.keep_costs;
    ft_eval e;
    cli_progress_state prog;
    cli_progress_init(&prog, "evaluate", "");
    int rc = ft_evaluate_progress(p, s, model, cli_progress, &prog, &e, &st);
    if (rc == FT_OK)
        cli_progress_end(&prog);
    if (rc == FT_EINVALID) {
        cli_error("invalid schedule (%s): %s", ft_reason_name(st.reason), st.msg);
        if (json)
            print_invalid_json(&st, model, t, keep_costs);
        rc = EXIT_INVALID;
    } else if (rc) {
        cli_error("%s", st.msg);
        rc = EXIT_USAGE;
    } else {
        if (!t || t->contest)   /* a real target changes the machine the figures were computed for */
            warn_reported(s, &e);
        int csv_only = c.csv && !strcmp(c.csv, "-");
        if (json)
            print_json(p, s, &e, t, keep_costs, gap_time);
        else if (!csv_only)
            print_table(p, s, &e, t, keep_costs, gap_time);
        rc = c.csv ? cli_csv_eval("evaluate", c.csv, p, s, &e, cli_clock_hz(t)) : EXIT_OK;
    }
    ft_eval_free(&e);
    ft_schedule_free(s);
    ft_problem_free(p);
    ft_target_free(t);
    return rc;
}
