/* cmd_simulate.c - `fusetile simulate`: replay a schedule in the SystemC simulator and cross-check it against the analytic cost model. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

/* Largest relative difference between simulated and analytic latencies
 * that still counts as agreement (SPEC.md: 1e-9). */
#define AGREE_REL 1e-9

static const char simulate_help[] =
    "usage: fusetile simulate PROBLEM.json SCHEDULE.json [--compute-model native|op]\n"
    "                         [--trace OUT.json] [--vcd OUT.vcd] [--json]\n"
    "\n"
    "Replay SCHEDULE for PROBLEM step by step in the SystemC simulator (a\n"
    "slow-memory channel, a fast memory, a compute engine and a controller,\n"
    "on the contest's abstract machine) and compare with the analytic cost\n"
    "model: per subgraph the simulated latency, the analytic latency and\n"
    "their difference, the peak fast-memory occupancy and the fractions of\n"
    "the subgraph's time the channel and the compute engine were busy; then\n"
    "the totals.  The simulator checks the schedule on its own (fast memory\n"
    "over capacity, granularity above native, retained tensor not produced,\n"
    "op order, coverage, fused operands that leave the subgraph).\n"
    "\n"
    "  --compute-model M  native (default: MatMul depth in native-k units) or\n"
    "                     op (a full reduction costs the op's base cost)\n"
    "  --trace FILE       write a Chrome trace (JSON; opens in Perfetto)\n"
    "  --vcd FILE         write a VCD waveform (GTKWave)\n"
    "  --json             print one JSON object instead of the table\n"
    "  -h, --help         show this help\n"
    "\n"
    "Exit status: 0 valid and simulated = analytic (relative difference at\n"
    "most 1e-9, per subgraph and in total), 1 invalid schedule (reason,\n"
    "simulated time, subgraph, tile and step on stderr) or a disagreement,\n"
    "2 bad input or usage (including a trace file that cannot be written).\n";

static double rel_diff(double sim, double ana)
{
    if (isnan(sim) || isnan(ana))
        return INFINITY;
    double d = fabs(sim - ana), m = fabs(ana);
    return d == 0 ? 0 : m > 0 ? d / m : INFINITY;
}

static void print_table(const ft_problem *p, const ft_schedule *s, const ft_sim_result *r, ft_compute_model model, int agree)
{
    char a[FT_NUMBUF], b[FT_NUMBUF], c[FT_NUMBUF];
    printf("problem   %s (%d ops, %d tensors, capacity %s, bandwidth %s, native %lldx%lld)\n", p->name, p->nops, p->ntensors,
           cli_fmt15(a, p->capacity), cli_fmt15(b, p->bandwidth), (long long)p->native_w, (long long)p->native_h);
    printf("schedule  %s (%d subgraphs)\n", s->name, s->nsubgraphs);
    printf("compute model: %s; simulated on the contest target (1 cost unit = 1 us of SystemC time)\n\n", ft_compute_model_name(model));
    printf("%4s  %-16s %-16s %10s %16s %16s %12s %10s %8s %8s\n", "sg", "ops", "w x h x k", "steps", "simulated", "analytic",
           "difference", "peak-occ", "channel", "compute");
    for (int i = 0; i < r->nsubgraphs; i++) {
        const ft_subgraph *g = &s->sg[i];
        const ft_sim_sg *q = &r->sg[i];
        char gran[64];
        snprintf(gran, sizeof gran, "%lldx%lldx%lld", (long long)g->w, (long long)g->h, (long long)g->k);
        printf("%4d  ", i);
        cli_print_ops(stdout, g, 16);
        printf(" %-16s %10lld %16s %16s %12.3g %10lld %7.1f%% %7.1f%%\n", gran, (long long)q->steps, cli_fmt15(a, q->simulated),
               cli_fmt15(b, q->analytic), q->simulated - q->analytic, (long long)q->peak_occupancy, 100 * q->channel_busy,
               100 * q->compute_busy);
    }
    double rd = rel_diff(r->total_simulated, r->total_analytic);
    printf("\nsimulated    %s (%lld steps)\n", cli_fmt15(a, r->total_simulated), (long long)r->steps);
    printf("analytic     %s\n", cli_fmt15(b, r->total_analytic));
    printf("difference   %s (relative %.3g)\n", cli_fmt15(c, r->total_simulated - r->total_analytic), rd);
    printf("agreement    %s (relative difference at most %g in every subgraph and in total)\n", agree ? "yes" : "NO", AGREE_REL);
}

static void print_json(const ft_problem *p, const ft_schedule *s, const ft_sim_result *r, ft_compute_model model, int agree)
{
    FILE *f = stdout;
    fputs("{\"problem\": ", f);
    cli_json_string(f, p->name);
    fputs(", \"schedule\": ", f);
    cli_json_string(f, s->name);
    fputs(", \"valid\": true, \"compute_model\": ", f);
    cli_json_string(f, ft_compute_model_name(model));
    fputs(", \"total_simulated\": ", f);
    cli_json_number(f, r->total_simulated);
    fputs(", \"total_analytic\": ", f);
    cli_json_number(f, r->total_analytic);
    fputs(", \"difference\": ", f);
    cli_json_number(f, r->total_simulated - r->total_analytic);
    fputs(", \"relative_difference\": ", f);
    cli_json_number(f, rel_diff(r->total_simulated, r->total_analytic));
    fprintf(f, ", \"agree\": %s, \"steps\": %lld, \"analytic_reason\": ", agree ? "true" : "false", (long long)r->steps);
    if (r->analytic_reason)
        cli_json_string(f, ft_reason_name(r->analytic_reason));
    else
        fputs("null", f);
    fputs(", \"subgraphs\": [", f);
    for (int i = 0; i < r->nsubgraphs; i++) {
        const ft_subgraph *g = &s->sg[i];
        const ft_sim_sg *q = &r->sg[i];
        fprintf(f, "%s\n  {\"index\": %d, \"ops\": [", i ? "," : "", i);
        for (int j = 0; j < g->nops; j++)
            fprintf(f, "%s%d", j ? ", " : "", g->ops[j]);
        fprintf(f, "], \"granularity\": [%lld, %lld, %lld], \"steps\": %lld, \"simulated\": ", (long long)g->w, (long long)g->h,
                (long long)g->k, (long long)q->steps);
        cli_json_number(f, q->simulated);
        fputs(", \"analytic\": ", f);
        cli_json_number(f, q->analytic);
        fputs(", \"difference\": ", f);
        cli_json_number(f, q->simulated - q->analytic);
        fprintf(f, ", \"peak_occupancy\": %lld, \"channel_busy\": ", (long long)q->peak_occupancy);
        cli_json_number(f, q->channel_busy);
        fputs(", \"compute_busy\": ", f);
        cli_json_number(f, q->compute_busy);
        fputc('}', f);
    }
    fputs("\n]}\n", f);
}

static void print_invalid_json(const ft_sim_result *r, const char *msg, ft_compute_model m)
{
    fputs("{\"valid\": false, \"compute_model\": ", stdout);
    cli_json_string(stdout, ft_compute_model_name(m));
    fputs(", \"reason\": ", stdout);
    cli_json_string(stdout, ft_reason_name(r->reason));
    fputs(", \"message\": ", stdout);
    cli_json_string(stdout, msg);
    printf(", \"subgraph\": %d, \"tile\": %lld, \"step\": %lld, \"time\": ", r->fail_sg, (long long)r->fail_tile, (long long)r->fail_step);
    cli_json_number(stdout, r->fail_time);
    fputs(", \"analytic_reason\": ", stdout);
    if (r->analytic_reason)
        cli_json_string(stdout, ft_reason_name(r->analytic_reason));
    else
        fputs("null", stdout);
    fputs("}\n", stdout);
}

/* Whether simulated and analytic agree, per subgraph and in total; one
 * line on stderr per disagreement. */
static int check_agreement(const ft_sim_result *r)
{
    char a[FT_NUMBUF], b[FT_NUMBUF];
    int ok = 1;
    if (r->analytic_reason) {
        cli_error("simulate: the simulator accepts the schedule but the analytic evaluator rejects it (%s)",
                  ft_reason_name(r->analytic_reason));
        return 0;
    }
    for (int i = 0; i < r->nsubgraphs; i++) {
        double rd = rel_diff(r->sg[i].simulated, r->sg[i].analytic);
        if (rd > AGREE_REL) {
            cli_error("simulate: subgraph %d: simulated %s and analytic %s differ (relative %.3g > %g)", i,
                      ft_format_double(a, r->sg[i].simulated), ft_format_double(b, r->sg[i].analytic), rd, AGREE_REL);
            ok = 0;
        }
    }
    double rd = rel_diff(r->total_simulated, r->total_analytic);
    if (rd > AGREE_REL) {
        cli_error("simulate: total: simulated %s and analytic %s differ (relative %.3g > %g)", ft_format_double(a, r->total_simulated),
                  ft_format_double(b, r->total_analytic), rd, AGREE_REL);
        ok = 0;
    }
    return ok;
}

int cmd_simulate(int argc, char **argv)
{
    cli_opts o;
    const char *arg, *paths[2] = {NULL, NULL};
    int is_opt, npos = 0, json = 0;
    ft_sim_opts so;
    ft_sim_opts_init(&so);
    cli_opt_init(&o, argc, argv);
    while ((arg = cli_opt_next(&o, &is_opt))) {
        if (!is_opt) {
            if (npos >= 2) {
                cli_error("simulate: unexpected argument '%s' (usage: fusetile simulate PROBLEM SCHEDULE [options])", arg);
                return EXIT_USAGE;
            }
            paths[npos++] = arg;
        } else if (cli_opt_is(&o, arg, "--help") || cli_opt_is(&o, arg, "-h")) {
            fputs(simulate_help, stdout);
            return EXIT_OK;
        } else if (cli_opt_is(&o, arg, "--json")) {
            json = 1;
        } else if (cli_opt_is(&o, arg, "--compute-model")) {
            const char *v = cli_opt_value(&o, "--compute-model");
            if (!v)
                return EXIT_USAGE;
            if (ft_compute_model_parse(v, &so.model)) {
                cli_error("simulate: --compute-model is '%s', must be native or op", v);
                return EXIT_USAGE;
            }
        } else if (cli_opt_is(&o, arg, "--trace") || cli_opt_is(&o, arg, "--vcd")) {
            int vcd = cli_opt_is(&o, arg, "--vcd");
            const char *v = cli_opt_value(&o, vcd ? "--vcd" : "--trace");
            if (!v)
                return EXIT_USAGE;
            if (!*v) {
                cli_error("simulate: %s needs a file name", vcd ? "--vcd" : "--trace");
                return EXIT_USAGE;
            }
            *(vcd ? &so.trace_vcd : &so.trace_json) = v;
        } else {
            cli_error("simulate: unknown option '%s' (try 'fusetile simulate --help')", arg);
            return EXIT_USAGE;
        }
    }
    if (npos < 2) {
        cli_error("simulate: needs PROBLEM.json and SCHEDULE.json (try 'fusetile simulate --help')");
        return EXIT_USAGE;
    }
    if (so.trace_json && so.trace_vcd && strcmp(so.trace_json, so.trace_vcd) == 0) {
        cli_error("simulate: --trace and --vcd name the same file '%s'", so.trace_json);
        return EXIT_USAGE;
    }
    ft_status st;
    ft_problem *p = NULL;
    ft_schedule *s = NULL;
    if (ft_problem_load(paths[0], &p, &st) || ft_schedule_load(paths[1], &s, &st)) {
        cli_error("%s", st.msg);
        ft_problem_free(p);
        return EXIT_USAGE;
    }
    ft_sim *sim = NULL;
    const char *err = NULL;
    int rc = ft_sim_new(&sim, &err);
    if (rc != FT_OK) {
        cli_error("simulate: %s", err);
        ft_schedule_free(s);
        ft_problem_free(p);
        return EXIT_USAGE;
    }
    ft_sim_result r;
    rc = ft_sim_run(sim, p, s, &so, &r);
    if (rc == FT_EINVALID) {
        char t[FT_NUMBUF];
        cli_error("invalid schedule (%s): simulator: %s", ft_reason_name(r.reason), ft_sim_errmsg(sim));
        if (r.analytic_reason == FT_R_NONE)
            cli_error("simulate: the analytic evaluator accepts this schedule (total %s): the two disagree",
                      ft_format_double(t, r.total_analytic));
        else if (r.analytic_reason != r.reason)
            cli_error("simulate: the analytic evaluator rejects it for another reason (%s)", ft_reason_name(r.analytic_reason));
        if (json)
            print_invalid_json(&r, ft_sim_errmsg(sim), so.model);
        rc = EXIT_INVALID;
    } else if (rc != FT_OK) {
        cli_error("simulate: %s", ft_sim_errmsg(sim));
        rc = EXIT_USAGE;
    } else {
        int agree = check_agreement(&r);
        if (json)
            print_json(p, s, &r, so.model, agree);
        else
            print_table(p, s, &r, so.model, agree);
        rc = agree ? EXIT_OK : EXIT_INVALID;
    }
    ft_sim_result_free(&r);
    ft_sim_free(sim);
    ft_schedule_free(s);
    ft_problem_free(p);
    return rc;
}
