/* cmd_simulate.c - `fusetile simulate`: replay a schedule in the SystemC simulator and cross-check it against the analytic cost model. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fusetile/sim.h"
#include "fusetile/trace.h"

static const char simulate_help[] =
    "usage: fusetile simulate PROBLEM.json SCHEDULE.json [--compute-model native|op]\n"
    "                         [--target TARGET.cfg [--keep-costs]]\n"
    "                         [--trace OUT.json] [--vcd OUT.vcd] [--window FIRST:COUNT]\n"
    "                         [--detail waves|steps] [--trace-warn BYTES]\n"
    "                         [--json] [--csv FILE]\n"
    "\n"
    "Replay SCHEDULE for PROBLEM step by step in the SystemC simulator (a\n"
    "slow-memory channel, a fast memory, a compute engine and a controller)\n"
    "and compare with the analytic cost model: per subgraph the simulated\n"
    "latency, the analytic latency and their difference, the peak fast-memory\n"
    "occupancy and the fractions of the subgraph's time the channel and the\n"
    "compute engine were busy; then the totals.  The simulator checks the\n"
    "schedule on its own (fast memory over capacity, granularity above\n"
    "native, retained tensor not produced, op order, coverage, fused operands\n"
    "that leave the subgraph).  Traces name the target and, with --target,\n"
    "show real time from its clock_hz (cost units on the contest target).\n"
    "\n"
    "  --compute-model M  native (default: MatMul depth in native-k units) or\n"
    "                     op (a full reduction costs the op's base cost)\n"
    "  --target FILE      simulate the machine of FILE, a target file or a\n"
    "                     shipped target's name (kpu, gpu-h100; docs/TARGETS.md): its\n"
    "                     capacity, bandwidths, native granularity, derived base\n"
    "                     costs (one cost unit = one cycle) and timing effects:\n"
    "                     transfer latency, write bandwidth, separate read and\n"
    "                     write channels, launch overhead, double buffering;\n"
    "                     and the whole device's (docs/DEVICE.md): units (tiles\n"
    "                     in waves, sharing the bandwidths), shared cache\n"
    "                     (steps at its bandwidth), cache floor (a subgraph\n"
    "                     that overflows it waits for its footprint at the slow\n"
    "                     memory's), step overhead, tile overhead, MatMul\n"
    "                     tile overhead.  The\n"
    "                     analytic model has a closed form for all but double\n"
    "                     buffering: it keeps SPEC's per-step roofline and\n"
    "                     one fill and drain per subgraph, where the simulator\n"
    "                     pipelines each unit's steps (a cache floor then\n"
    "                     bounds the pipeline, fill and drain included).  The\n"
    "                     report adds, for each effect the target has, the replay\n"
    "                     with that effect turned off, and names the effect\n"
    "                     that accounts for each difference (turning it off\n"
    "                     brings simulated back to analytic)\n"
    "  --keep-costs       with --target: keep the problem file's base costs\n"
    "  --trace FILE       write a Chrome trace (JSON; opens in Perfetto): a\n"
    "                     thread per channel and compute unit, one span per\n"
    "                     subgraph (named after its ops) and, by default, per\n"
    "                     tile (or run of tiles) on the controller and the\n"
    "                     compute units, with\n"
    "                     counters of occupancy and channel busy (at most\n"
    "                     1000 samples each); --detail steps: per step and\n"
    "                     transfer; on a target with an energy group a\n"
    "                     \"power\" counter (args watts): each subgraph's\n"
    "                     average power from the replay's energy account\n"
    "  --vcd FILE         write a VCD waveform (busy signals per channel and\n"
    "                     compute unit, the current subgraph and step, the\n"
    "                     occupancy, power.watts with an energy group; by\n"
    "                     default per tile, with --detail steps per step) and\n"
    "                     next to it a GTKWave save file, FILE\n"
    "                     without .vcd plus .gtkw, and FILE without .vcd plus\n"
    "                     .subgraphs.txt ('gtkwave OUT.gtkw' opens with every\n"
    "                     signal in view, the whole run in the window and the\n"
    "                     subgraph shown by name)\n"
    "  --detail D         what the traces keep: waves (default: spans per\n"
    "                     subgraph and per tile or run of tiles, at most about\n"
    "                     20000 a track, counters sampled) or steps\n"
    "                     (every step, transfer and occupancy change: large,\n"
    "                     about 400 bytes a step; pair it with --window)\n"
    "  --window FIRST:COUNT\n"
    "                     trace only the steps FIRST to FIRST+COUNT-1 of the\n"
    "                     replay (counted from 0 over all subgraphs, as the\n"
    "                     traces number them), every step of them; the replay\n"
    "                     and its report are whole\n"
    "  --trace-warn BYTES warn on stderr (once) when a trace file grows or is\n"
    "                     bound to grow past BYTES (default 100000000, about\n"
    "                     what the Perfetto UI loads; suffixes k, M, G: powers\n"
    "                     of 1000; 0: never)\n"
    "  --json             print one JSON object instead of the table; with a\n"
    "                     real target (not the contest's) it has total_seconds,\n"
    "                     the simulated total in cycles divided by the target's\n"
    "                     clock_hz; with the target's energy group, the replay's\n"
    "                     own energy_j and power_w beside energy_analytic_j,\n"
    "                     and energy_agree (also per subgraph; the table gives\n"
    "                     them after it)\n"
    "  --csv FILE         also write the per-subgraph table as CSV to FILE ('-':\n"
    "                     standard output, instead of the table): the columns of\n"
    "                     Python's to_rows(), units in the header (simulated\n"
    "                     [cost units], simulated [s] on a target with a clock),\n"
    "                     whole labels, exact numbers\n"
    "  -h, --help         show this help\n"
    "\n"
    "Exit status: 0 valid and simulated = analytic (relative difference at\n"
    "most 1e-9, per subgraph and in total) or, with a target, every\n"
    "difference accounted for by an effect; 1 invalid schedule (reason,\n"
    "simulated time, subgraph, tile and step on stderr) or a difference\n"
    "nothing accounts for; 2 bad input or usage (including a trace file\n"
    "that cannot be written).\n";

/* ------------------------------------------------------------- effects */

/* The replays with effects off and what accounts for each difference are
 * the simulator library's (ft_sim_effects_run, ft_sim_accounted), as the
 * Python binding's simulate() reports them. */

/* The report's agreement line when the target has effects: "yes" when
 * every difference is within FT_SIM_AGREE_REL or accounted for by an
 * effect, with the total's difference and what accounts for it; "NO" and
 * what is not accounted for otherwise. */
static void print_agreement(const ft_sim_result *r, const ft_sim_effects *rep, int ok)
{
    char d[FT_NUMBUF], why[160];
    int all_agree = ft_sim_agrees(r, -1);
    for (int i = 0; i < r->nsubgraphs && all_agree; i++)
        all_agree = ft_sim_agrees(r, i);
    if (ok && all_agree) {
        printf("agreement    yes (relative difference at most %g in every subgraph and in total)\n", FT_SIM_AGREE_REL);
        return;
    }
    int total_ok = ft_sim_accounted(r, rep, -1, why, sizeof why);
    double diff = r->total_simulated - r->total_analytic;
    double pct = r->total_analytic != 0 ? 100 * diff / fabs(r->total_analytic) : INFINITY;
    if (ok && ft_sim_agrees(r, -1))
        printf("agreement    yes: the total is within %g of the analytic model, every subgraph's difference accounted "
               "for by an effect of the target (last column)\n", FT_SIM_AGREE_REL);
    else if (ok)
        printf("agreement    yes: differs from the analytic model by %s (%.3g %%), accounted for by %s; every difference "
               "accounted for\n", cli_fmt15(d, diff), pct, why);
    else if (!total_ok)
        printf("agreement    NO: differs from the analytic model by %s (%.3g %%) and no effect of the target accounts for "
               "it\n", cli_fmt15(d, diff), pct);
    else
        printf("agreement    NO: a subgraph's difference from the analytic model is accounted for by no effect of the target "
               "(stderr names it)\n");
}

static void print_table(const ft_problem *p, const ft_schedule *s, const ft_sim_result *r, ft_compute_model model,
                        const ft_target *t, int keep_costs, const ft_sim_effects *rep, int ok)
{
    char a[FT_NUMBUF], b[FT_NUMBUF], c[FT_NUMBUF], why[160];
    cli_print_header(p, s, t, keep_costs);
    if (t && !t->contest)
        printf("compute model: %s; simulated on target %s (1 cost unit = 1 cycle, shown as 1 us of SystemC time)\n\n",
               ft_compute_model_name(model), t->name);
    else
        printf("compute model: %s; simulated on the contest target (1 cost unit = 1 us of SystemC time)\n\n",
               ft_compute_model_name(model));
    const int width = cli_ops_width(p, s);
    printf("%4s  %-*s %-16s %10s %16s %16s %12s %10s %10s %8s %8s", "sg", width, "ops", "w x h x k", "steps", "simulated",
           "analytic", "difference", "relative", "peak-occ", "channel", "compute");
    printf(rep->nvar ? "  %s\n" : "\n", "accounted for by");
    /* the units row: times in cycles on a machine target (cost units on
     * the contest's), occupancy in elements, busy as % of the subgraph */
    const char *tu = cli_clock_hz(t) > 0 ? "[cycles]" : "[cost units]";
    printf("%4s  %-*s %-16s %10s %16s %16s %12s %10s %10s %8s %8s\n", "", width, "", "[elements]", "", tu, tu, tu, "",
           "[elements]", "[% busy]", "[% busy]");
    for (int i = 0; i < r->nsubgraphs; i++) {
        const ft_subgraph *g = &s->sg[i];
        const ft_sim_sg *q = &r->sg[i];
        cli_print_sg_head(stdout, p, i, g, width);
        printf(" %10lld %16s %16s %12.6g %10.3g %10lld %7.1f%% %7.1f%%", (long long)q->steps, cli_fmt15(a, q->simulated),
               cli_fmt15(b, q->analytic), q->simulated - q->analytic, ft_sim_rel_diff(q->simulated, q->analytic),
               (long long)q->peak_occupancy, 100 * q->channel_busy, 100 * q->compute_busy);
        if (rep->nvar) {
            ft_sim_accounted(r, rep, i, why, sizeof why);
            printf("  %s", why[0] ? why : "-");
        }
        putchar('\n');
    }
    /* a target's energy group: the replay's own account beside the analytic one */
    for (int i = 0; p->energy.on && i < r->nsubgraphs; i++) {
        const ft_sim_sg *q = &r->sg[i];
        if (i == 0)
            printf("\n%4s  %16s %16s %10s %10s\n%4s  %16s %16s %10s %10s\n", "sg", "energy sim", "energy analytic", "relative",
                   "power", "", "[J]", "[J]", "", "[W]");
        printf("%4d  %16.9g %16.9g %10.3g %10.2f\n", i, q->energy, q->energy_analytic, ft_sim_rel_diff(q->energy, q->energy_analytic),
               ft_energy_watts(p, q->energy, q->simulated));
    }
    double rd = ft_sim_rel_diff(r->total_simulated, r->total_analytic);
    if (p->energy.on) {
        int agree = ft_sim_energy_agrees(r, -1);
        for (int i = 0; i < r->nsubgraphs; i++)
            agree = agree && ft_sim_energy_agrees(r, i);
        printf("\nenergy       %.9g J simulated (average %.2f W), %.9g J analytic (relative %.3g): %s\n", r->energy_simulated,
               ft_energy_watts(p, r->energy_simulated, r->total_simulated), r->energy_analytic,
               ft_sim_rel_diff(r->energy_simulated, r->energy_analytic), agree ? "agree" : "differ");
    }
    printf("\nsimulated    %s (%lld steps)\n", cli_fmt15(a, r->total_simulated), (long long)r->steps);
    printf("analytic     %s\n", cli_fmt15(b, r->total_analytic));
    printf("difference   %s (relative %.3g)\n", cli_fmt15(c, r->total_simulated - r->total_analytic), rd);
    if (!rep->nvar) {
        printf("agreement    %s (relative difference at most %g in every subgraph and in total)\n", ok ? "yes" : "NO", FT_SIM_AGREE_REL);
        return;
    }
    print_agreement(r, rep, ok);
    printf("\nthe same replay with one effect of the target turned off (totals):\n");
    printf("  %-22s %16s %16s %12s %10s  %s\n", "turned off", "simulated", "analytic", "difference", "relative", "agreement");
    for (int v = 0; v < rep->nvar; v++) {
        const ft_sim_variant *x = &rep->var[v];
        if (!x->ok) {
            printf("  %-22s (replay failed)\n", x->turned_off);
            continue;
        }
        printf("  %-22s %16s %16s %12.6g %10.3g  %s\n", x->turned_off, cli_fmt15(a, x->r.total_simulated), cli_fmt15(b, x->r.total_analytic),
               x->r.total_simulated - x->r.total_analytic, ft_sim_rel_diff(x->r.total_simulated, x->r.total_analytic),
               ft_sim_agrees(&x->r, -1) ? "yes" : "no");
    }
}

static void print_json(const ft_problem *p, const ft_schedule *s, const ft_sim_result *r, ft_compute_model model,
                       const ft_target *t, int keep_costs, const ft_sim_effects *rep, int ok)
{
    FILE *f = stdout;
    char why[160];
    fputs("{\"problem\": ", f);
    cli_json_string(f, p->name);
    fputs(", \"schedule\": ", f);
    cli_json_string(f, s->name);
    cli_target_json(f, t, keep_costs);
    fputs(", \"valid\": true, \"compute_model\": ", f);
    cli_json_string(f, ft_compute_model_name(model));
    fputs(", \"total_simulated\": ", f);
    cli_json_number(f, r->total_simulated);
    fputs(", \"total_analytic\": ", f);
    cli_json_number(f, r->total_analytic);
    cli_json_seconds(f, "total_seconds", r->total_simulated, t);
    fputs(", \"difference\": ", f);
    cli_json_number(f, r->total_simulated - r->total_analytic);
    fputs(", \"relative_difference\": ", f);
    cli_json_number(f, ft_sim_rel_diff(r->total_simulated, r->total_analytic));
    if (p->energy.on) {
        cli_json_energy(f, p, r->energy_simulated, r->total_simulated);
        fputs(", \"energy_analytic_j\": ", f);
        cli_json_number(f, r->energy_analytic);
        fputs(", \"energy_relative_difference\": ", f);
        cli_json_number(f, ft_sim_rel_diff(r->energy_simulated, r->energy_analytic));
        fprintf(f, ", \"energy_agree\": %s", ft_sim_energy_agrees(r, -1) ? "true" : "false");
    }
    fprintf(f, ", \"agree\": %s, \"accounted\": %s, \"accounted_for_by\": ", ft_sim_agrees(r, -1) ? "true" : "false", ok ? "true" : "false");
    ft_sim_accounted(r, rep, -1, why, sizeof why);
    cli_json_string(f, why);
    fprintf(f, ", \"steps\": %lld, \"analytic_reason\": ", (long long)r->steps);
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
        fputc(']', f);
        cli_json_sg_names(f, p, g);
        fprintf(f, ", \"granularity\": [%lld, %lld, %lld], \"steps\": %lld, \"simulated\": ", (long long)g->w, (long long)g->h,
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
        if (p->energy.on) {
            cli_json_energy(f, p, q->energy, q->simulated);
            fputs(", \"energy_analytic_j\": ", f);
            cli_json_number(f, q->energy_analytic);
            fprintf(f, ", \"loaded\": %lld, \"written\": %lld", (long long)q->loaded, (long long)q->written);
        }
        fputs(", \"accounted_for_by\": ", f);
        ft_sim_accounted(r, rep, i, why, sizeof why);
        cli_json_string(f, why);
        fputc('}', f);
    }
    fputs("\n], \"effects_off\": [", f);
    for (int v = 0; v < rep->nvar; v++) {
        const ft_sim_variant *x = &rep->var[v];
        fprintf(f, "%s\n  {\"turned_off\": ", v ? "," : "");
        cli_json_string(f, x->turned_off);
        fprintf(f, ", \"ok\": %s", x->ok ? "true" : "false");
        if (x->ok) {
            fputs(", \"total_simulated\": ", f);
            cli_json_number(f, x->r.total_simulated);
            fputs(", \"total_analytic\": ", f);
            cli_json_number(f, x->r.total_analytic);
            fputs(", \"relative_difference\": ", f);
            cli_json_number(f, ft_sim_rel_diff(x->r.total_simulated, x->r.total_analytic));
            fprintf(f, ", \"agree\": %s, \"subgraphs_simulated\": [", ft_sim_agrees(&x->r, -1) ? "true" : "false");
            for (int i = 0; i < x->r.nsubgraphs; i++) {
                fputs(i ? ", " : "", f);
                cli_json_number(f, x->r.sg[i].simulated);
            }
            fputs("], \"subgraphs_analytic\": [", f);
            for (int i = 0; i < x->r.nsubgraphs; i++) {
                fputs(i ? ", " : "", f);
                cli_json_number(f, x->r.sg[i].analytic);
            }
            fputc(']', f);
        }
        fputc('}', f);
    }
    fputs("\n]}\n", f);
}

static void print_invalid_json(const ft_sim_result *r, const char *msg, ft_compute_model m, const ft_target *t, int keep_costs)
{
    fputs("{\"valid\": false, \"compute_model\": ", stdout);
    cli_json_string(stdout, ft_compute_model_name(m));
    cli_target_json(stdout, t, keep_costs);
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

/* Whether every difference between simulated and analytic, per subgraph
 * and in total, is within FT_SIM_AGREE_REL or accounted for by an effect of the
 * target; one line on stderr per difference that is not. */
static int check_agreement(const ft_sim_result *r, const ft_sim_effects *rep)
{
    char a[FT_NUMBUF], b[FT_NUMBUF], why[160];
    int ok = 1;
    if (r->analytic_reason) {
        cli_error("simulate: the simulator accepts the schedule but the analytic evaluator rejects it (%s)",
                  ft_reason_name(r->analytic_reason));
        return 0;
    }
    for (int i = -1; i < r->nsubgraphs; i++) {
        if (ft_sim_accounted(r, rep, i, why, sizeof why))
            continue;
        double sim = i < 0 ? r->total_simulated : r->sg[i].simulated, ana = i < 0 ? r->total_analytic : r->sg[i].analytic;
        char where[32];
        snprintf(where, sizeof where, i < 0 ? "total" : "subgraph %d", i);
        cli_error("simulate: %s: simulated %s and analytic %s differ (relative %.3g > %g)%s", where, ft_format_double(a, sim),
                  ft_format_double(b, ana), ft_sim_rel_diff(sim, ana), FT_SIM_AGREE_REL,
                  rep->nvar ? " and turning off no effect of the target accounts for it" : "");
        ok = 0;
    }
    return ok;
}

/* Replay s on copies of p with each timing effect of p turned off, then
 * with all of them off, into *rep (nothing when p has no effect): the
 * library's ft_sim_effects_run, with a warning per replay that failed;
 * their progress goes on from the first replay's in *prog. */
static int run_variants(ft_sim *sim, const ft_problem *p, const ft_schedule *s, ft_compute_model model, ft_sim_effects *rep,
                        cli_progress_state *prog)
{
    ft_sim_opts so;
    ft_sim_opts_init(&so);
    so.model = model;
    cli_progress_phase(prog, 1, ft_sim_effects_count(p));
    so.progress = cli_progress;
    so.progress_ctx = prog;
    int rc = ft_sim_effects_run(sim, p, s, &so, rep);
    if (rc != FT_OK) {
        cli_error("simulate: %s", rc == FT_ENOMEM ? "out of memory" : "the replays with effects off were interrupted");
        return EXIT_USAGE;
    }
    for (int v = 0; v < rep->nvar; v++)
        if (!rep->var[v].ok)
            cli_warn("simulate: the replay with %s off failed: %s", rep->var[v].turned_off, rep->var[v].error);
    return EXIT_OK;
}

/* Parse --trace-warn BYTES (a whole number, optionally with k, M or G:
 * powers of 1000; 0: never) into so.  0, or -1 after an error line. */
static int parse_trace_warn(const char *v, ft_sim_opts *so)
{
    char num[32];
    uint64_t n, mult = 1;
    size_t len = v ? strlen(v) : 0;
    if (!v)
        return -1;
    if (len > 0 && strchr("kMG", v[len - 1])) {
        mult = v[len - 1] == 'k' ? 1000 : v[len - 1] == 'M' ? 1000000 : 1000000000;
        len--;
    }
    if (len > 0 && len < sizeof num) {
        memcpy(num, v, len);
        num[len] = '\0';
        if (cli_parse_u64(num, &n) == 0 && n <= (uint64_t)INT64_MAX / mult) {
            so->trace_warn_bytes = n == 0 ? -1 : (int64_t)(n * mult);
            return 0;
        }
    }
    cli_error("simulate: --trace-warn '%s': expected a size in bytes, a whole number with an optional k, M or G "
              "(0: never warn)", v);
    return -1;
}

/* Parse --window FIRST:COUNT into so.  0, or -1 after an error line. */
static int parse_window(const char *v, ft_sim_opts *so)
{
    uint64_t first, count;
    const char *colon = v ? strchr(v, ':') : NULL;
    char head[32];
    if (!v)
        return -1;
    if (colon && (size_t)(colon - v) < sizeof head) {
        memcpy(head, v, (size_t)(colon - v));
        head[colon - v] = '\0';
        if (cli_parse_u64(head, &first) == 0 && cli_parse_u64(colon + 1, &count) == 0 && count >= 1 &&
            first <= INT64_MAX && count <= (uint64_t)INT64_MAX - first) {
            so->window_first = (int64_t)first;
            so->window_count = (int64_t)count;
            return 0;
        }
    }
    cli_error("simulate: --window '%s': expected FIRST:COUNT, whole numbers with COUNT at least 1 (steps FIRST to "
              "FIRST+COUNT-1 of the replay)", v);
    return -1;
}

int cmd_simulate(int argc, char **argv)
{
    cli_opts o;
    const char *arg;
    int is_opt;
    cli_pair c = {.help = simulate_help, .model = FT_COMPUTE_NATIVE};
    ft_sim_opts so;
    int detail_given = 0;
    ft_sim_opts_init(&so);
    cli_opt_init(&o, argc, argv);
    while ((arg = cli_opt_next(&o, &is_opt))) {
        int r = cli_pair_opt(&o, arg, is_opt, &c);
        if (r == CLI_OTHER && (cli_opt_is(&o, arg, "--trace") || cli_opt_is(&o, arg, "--vcd"))) {
            const char *opt = cli_opt_is(&o, arg, "--vcd") ? "--vcd" : "--trace";
            if (!(*(opt[2] == 'v' ? &so.trace_vcd : &so.trace_json) = cli_opt_file(&o, opt)))
                return EXIT_USAGE;
            continue;
        }
        if (r == CLI_OTHER && cli_opt_is(&o, arg, "--window")) {
            if (parse_window(cli_opt_value(&o, "--window"), &so) != 0)
                return EXIT_USAGE;
            continue;
        }
        if (r == CLI_OTHER && cli_opt_is(&o, arg, "--detail")) {
            const char *v = cli_opt_value(&o, "--detail");
            if (!v)
                return EXIT_USAGE;
            if (strcmp(v, "waves") != 0 && strcmp(v, "steps") != 0) {
                cli_error("simulate: --detail '%s': expected waves or steps", v);
                return EXIT_USAGE;
            }
            so.trace_detail = strcmp(v, "steps") == 0 ? FT_TRACE_DETAIL_STEPS : FT_TRACE_DETAIL_WAVES;
            detail_given = 1;
            continue;
        }
        if (r == CLI_OTHER && cli_opt_is(&o, arg, "--trace-warn")) {
            if (parse_trace_warn(cli_opt_value(&o, "--trace-warn"), &so) != 0)
                return EXIT_USAGE;
            continue;
        }
        if (r == CLI_OTHER) {
            cli_error("simulate: unknown option '%s' (try 'fusetile simulate --help')", arg);
            return EXIT_USAGE;
        }
        if (r != CLI_NEXT)
            return r;
    }
    if (so.trace_json && so.trace_vcd && strcmp(so.trace_json, so.trace_vcd) == 0) {
        cli_error("simulate: --trace and --vcd name the same file '%s'", so.trace_json);
        return EXIT_USAGE;
    }
    if (so.window_count > 0 && !so.trace_json && !so.trace_vcd) {
        cli_error("simulate: --window limits the traces: give --trace or --vcd too");
        return EXIT_USAGE;
    }
    if (detail_given && !so.trace_json && !so.trace_vcd) {
        cli_error("simulate: --detail says what the traces keep: give --trace or --vcd too");
        return EXIT_USAGE;
    }
    char *gtkw = so.trace_vcd ? ft_trace_gtkw_path(so.trace_vcd) : NULL;
    if (so.trace_vcd && !gtkw) {
        cli_error("simulate: out of memory");
        return EXIT_USAGE;
    }
    if (gtkw && so.trace_json && strcmp(gtkw, so.trace_json) == 0) {
        cli_error("simulate: --trace names '%s', the GTKWave save file that --vcd writes", so.trace_json);
        free(gtkw);
        return EXIT_USAGE;
    }
    so.trace_gtkw = gtkw;
    so.model = c.model;
    ft_problem *p;
    ft_target *t;
    ft_schedule *s;
    if (cli_pair_load(&o, &c, &p, &t, &s)) {
        free(gtkw);
        return EXIT_USAGE;
    }
    if (t) { /* traces name the target and, when it has a clock, show real time */
        so.target = t->name;
        so.clock_hz = t->contest ? 0 : t->clock_hz;
    }
    const int json = c.json, keep_costs = c.keep_costs;
    ft_sim *sim = NULL;
    const char *err = NULL;
    int rc = ft_sim_new(&sim, &err);
    if (rc != FT_OK) {
        cli_error("simulate: %s", err);
        ft_schedule_free(s);
        ft_target_free(t);
        ft_problem_free(p);
        free(gtkw);
        return EXIT_USAGE;
    }
    ft_sim_result r;
    ft_sim_effects rep;
    rep.nvar = 0;
    cli_progress_state prog; /* one count over the replay and those of run_variants */
    cli_progress_init(&prog, "simulate", "replayed and evaluated");
    prog.runs = 1 + ft_sim_effects_count(p);
    so.progress = cli_progress;
    so.progress_ctx = &prog;
    rc = ft_sim_run(sim, p, s, &so, &r);
    if (rc == FT_EINVALID) {
        char tb[FT_NUMBUF];
        cli_error("invalid schedule (%s): simulator: %s", ft_reason_name(r.reason), ft_sim_errmsg(sim));
        if (r.analytic_reason == FT_R_NONE)
            cli_error("simulate: the analytic evaluator accepts this schedule (total %s): the two disagree",
                      ft_format_double(tb, r.total_analytic));
        else if (r.analytic_reason != r.reason)
            cli_error("simulate: the analytic evaluator rejects it for another reason (%s)", ft_reason_name(r.analytic_reason));
        if (json)
            print_invalid_json(&r, ft_sim_errmsg(sim), so.model, t, keep_costs);
        rc = EXIT_INVALID;
    } else if (rc != FT_OK) {
        cli_error("simulate: %s", ft_sim_errmsg(sim));
        rc = EXIT_USAGE;
    } else if ((rc = run_variants(sim, p, s, so.model, &rep, &prog)) == EXIT_OK) {
        cli_progress_end(&prog);
        int ok = check_agreement(&r, &rep);
        int csv_only = c.csv && !strcmp(c.csv, "-");
        if (json)
            print_json(p, s, &r, so.model, t, keep_costs, &rep, ok);
        else if (!csv_only)
            print_table(p, s, &r, so.model, t, keep_costs, &rep, ok);
        rc = ok ? EXIT_OK : EXIT_INVALID;
        if (c.csv && cli_csv_sim("simulate", c.csv, p, s, &r, &rep, cli_clock_hz(t)) != EXIT_OK)
            rc = EXIT_USAGE;
    }
    ft_sim_effects_free(&rep);
    ft_sim_result_free(&r);
    ft_sim_free(sim);
    ft_schedule_free(s);
    ft_target_free(t);
    ft_problem_free(p);
    free(gtkw);
    return rc;
}
