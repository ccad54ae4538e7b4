/* target_opts.c - `--target FILE|NAME` and `--keep-costs` for the commands: find (ft_target_find: a path, or a shipped target's name), load and apply a target, say what it changed. */
#include "cli.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Whether the file at path reads as a schedule (ft_schedule_load; as a
 * problem, ft_problem_load, when schedule is 0), for the message of a file
 * given in the other's place. */
static int reads_as(const char *path, int schedule)
{
    ft_schedule *s = NULL;
    ft_problem *p = NULL;
    ft_status st;
    int ok = (schedule ? ft_schedule_load(path, &s, &st) : ft_problem_load(path, &p, &st)) == FT_OK;
    ft_schedule_free(s);
    ft_problem_free(p);
    return ok;
}

int cli_target_find(const char *name, char *out, size_t n)
{
    ft_status st;
    if (ft_target_find(name, getenv("FUSETILE_TARGETS"), out, n, &st) != FT_OK) {
        cli_error("--target %s", st.msg);
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

int cli_load_problem(const char *usage, const char *problem_path, const char *target_name, int keep_costs, ft_problem **p,
                     ft_target **t)
{
    ft_status st;
    char target_path[PATH_MAX];
    *p = NULL;
    *t = NULL;
    if (cli_input(problem_path, "problem") != EXIT_OK)
        return EXIT_USAGE;
    if (target_name && (cli_target_find(target_name, target_path, sizeof target_path) != EXIT_OK ||
                        cli_input(target_path, "target") != EXIT_OK))
        return EXIT_USAGE;
    if (ft_problem_load(problem_path, p, &st) != FT_OK) {
        if (st.code == FT_EINPUT && reads_as(problem_path, 1))
            cli_error("%s: is a schedule, not a problem; usage: %s", problem_path, usage);
        else
            cli_error("%s", st.msg);
        return EXIT_USAGE;
    }
    if (!target_name)
        return EXIT_OK;
    if (ft_target_load(target_path, t, &st) != FT_OK) {
        cli_error("%s", st.msg);
        ft_problem_free(*p);
        *p = NULL;
        return EXIT_USAGE;
    }
    if (ft_target_apply(*t, *p, keep_costs, &st) != FT_OK) {
        cli_error("%s: with target %s: %s", problem_path, target_path, st.msg);
        ft_problem_free(*p);
        ft_target_free(*t);
        *p = NULL;
        *t = NULL;
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

void cli_warn_imported(const char *problem_path, const ft_problem *p, const char *target_path, const ft_target *t)
{
    const char *want = ft_problem_imported_for(p), *file = ft_problem_imported_file(p);
    if (!want)
        return;
    char from[512] = "";
    if (file)
        snprintf(from, sizeof from, " (%s)", file);
    if (!t || t->contest)
        cli_warn("%s: imported for target %s%s but run %s: costs are the problem's own, without the target's timing "
                 "terms (an 8-fold difference is possible); add --target %s",
                 problem_path, want, from, t ? "on the contest target" : "without --target", file ? file : "FILE.cfg");
    else if (strcmp(t->name, want) != 0)
        cli_warn("%s: imported for target %s%s but run with --target %s, a target named %s: its sizes and element type "
                 "are %s's; import it again with --target %s for this machine",
                 problem_path, want, from, target_path, t->name, want, target_path);
}

const char *cli_opt_file(cli_opts *o, const char *opt)
{
    const char *v = cli_opt_value(o, opt);
    if (v && !*v) {
        cli_error("%s: %s needs a file name", o->cmd, opt);
        return NULL;
    }
    return v;
}

int cli_opt_target(cli_opts *o, const char *arg, const char **target, int *keep_costs)
{
    if (cli_opt_is(o, arg, "--keep-costs")) {
        *keep_costs = 1;
        return 1;
    }
    if (!cli_opt_is(o, arg, "--target"))
        return 0;
    return (*target = cli_opt_file(o, "--target")) ? 1 : -1;
}

int cli_opt_model(cli_opts *o, const char *arg, ft_compute_model *model)
{
    if (!cli_opt_is(o, arg, "--compute-model"))
        return 0;
    const char *v = cli_opt_value(o, "--compute-model");
    if (!v)
        return -1;
    if (ft_compute_model_parse(v, model)) {
        cli_error("%s: --compute-model is '%s', must be native or op", o->cmd, v);
        return -1;
    }
    return 1;
}

int cli_pair_opt(cli_opts *o, const char *arg, int is_opt, cli_pair *c)
{
    int r;
    if (!is_opt) {
        if (c->npos >= 2) {
            cli_error("%s: unexpected argument '%s' (usage: fusetile %s PROBLEM SCHEDULE [options])", o->cmd, arg, o->cmd);
            return EXIT_USAGE;
        }
        c->paths[c->npos++] = arg;
        return CLI_NEXT;
    }
    if (cli_opt_is(o, arg, "--help") || cli_opt_is(o, arg, "-h")) {
        fputs(c->help, stdout);
        return EXIT_OK;
    }
    if (cli_opt_is(o, arg, "--json")) {
        c->json = 1;
        return CLI_NEXT;
    }
    if (cli_opt_is(o, arg, "--csv")) {
        if (!(c->csv = cli_opt_file(o, "--csv")))
            return EXIT_USAGE;
        return CLI_NEXT;
    }
    if ((r = cli_opt_target(o, arg, &c->target, &c->keep_costs)) != 0 || (r = cli_opt_model(o, arg, &c->model)) != 0)
        return r > 0 ? CLI_NEXT : EXIT_USAGE;
    return CLI_OTHER;
}

int cli_pair_load(cli_opts *o, const cli_pair *c, ft_problem **p, ft_target **t, ft_schedule **s)
{
    ft_status st;
    *s = NULL;
    *p = NULL;
    *t = NULL;
    if (c->npos < 2) {
        cli_error("%s: needs PROBLEM.json and SCHEDULE.json (try 'fusetile %s --help')", o->cmd, o->cmd);
        return EXIT_USAGE;
    }
    if (c->keep_costs && !c->target) {
        cli_error("%s: --keep-costs needs --target", o->cmd);
        return EXIT_USAGE;
    }
    if (c->csv && !strcmp(c->csv, "-") && c->json) {
        cli_error("%s: --csv - and --json both write to standard output: give --csv a file", o->cmd);
        return EXIT_USAGE;
    }
    if (cli_input(c->paths[1], "schedule") != EXIT_OK)
        return EXIT_USAGE;
    if (c->csv && strcmp(c->csv, "-") && cli_check_output(o->cmd, c->csv, 0) != EXIT_OK)
        return EXIT_USAGE;
    char usage[64];
    snprintf(usage, sizeof usage, "fusetile %s PROBLEM SCHEDULE", o->cmd);
    if (cli_load_problem(usage, c->paths[0], c->target, c->keep_costs, p, t))
        return EXIT_USAGE;
    if (ft_schedule_load(c->paths[1], s, &st)) {
        if (st.code == FT_EINPUT && reads_as(c->paths[1], 0))
            cli_error("%s: is a problem, not a schedule; usage: %s", c->paths[1], usage);
        else
            cli_error("%s", st.msg);
        ft_problem_free(*p);
        ft_target_free(*t);
        *p = NULL;
        *t = NULL;
        return EXIT_USAGE;
    }
    cli_warn_imported(c->paths[0], *p, c->target, *t);
    return EXIT_OK;
}

/* The whole-device terms that target t set in problem p, as "; whole
 * device: 16 units, ..." on f (nothing when t describes one plain unit). */
static void device_summary(FILE *f, const ft_target *t, const ft_problem *p)
{
    int first = 1;
#define ADD(...) (fputs(first ? "; whole device: " : ", ", f), first = 0, fprintf(f, __VA_ARGS__))
    if (p->timing.units > 1)
        ADD("%d units sharing the slow memory", p->timing.units);
    if (p->timing.cache_capacity > 0)
        ADD("shared cache %.15g elements%s (%lld B%s) at %.15g elements per cycle", p->timing.cache_capacity,
            t->cache_partitions > 1 ? " a partition" : "", (long long)t->cache_capacity_bytes,
            t->cache_partitions > 1 ? " in all" : "", p->timing.cache_bandwidth);
    if (p->timing.cache_resident > 0)
        ADD("partial residency R %.15g elements (of a larger footprint F, 2 R - F stay cached)", p->timing.cache_resident);
    if (p->timing.step_overhead > 0)
        ADD("step overhead %.15g cycles", p->timing.step_overhead);
    if (p->timing.tile_overhead > 0)
        ADD("tile overhead %.15g cycles", p->timing.tile_overhead);
    if (p->timing.matmul_tile_overhead > 0)
        ADD("MatMul tile overhead %.15g cycles", p->timing.matmul_tile_overhead);
    double read_eff, write_eff;
    ft_target_memory_efficiencies(t, &read_eff, &write_eff);
    if (read_eff != write_eff)
        ADD("slow memory efficiency %.15g read, %.15g write (in the bandwidths above)", read_eff, write_eff);
    else if (t->memory_efficiency < 1)
        ADD("slow memory efficiency %.15g (in the bandwidths above)", t->memory_efficiency);
    if (t->matmul_efficiency < 1)
        ADD("MatMul efficiency %.15g", t->matmul_efficiency);
    if (t->pointwise_efficiency < 1)
        ADD("Pointwise efficiency %.15g", t->pointwise_efficiency);
    if (p->pointwise_exact)
        ADD("Pointwise ops unpadded");
#undef ADD
}

char *cli_target_summary(const ft_target *t, const ft_problem *p, int keep_costs)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    if (t->contest) {
        fprintf(f,
                "%s (%s): the contest's abstract machine: capacity, bandwidth, native granularity and base costs "
                "from the problem file",
                t->path, t->name);
    } else {
        char lat[FT_NUMBUF], launch[FT_NUMBUF];
        fprintf(f,
                "%s (%s): from the target: capacity %.15g elements (%lld B / %lld B per element), bandwidth %.15g "
                "elements per cycle read (%.15g B/cycle), %.15g write%s, native %lldx%lldx%lld%s; timing: transfer "
                "latency %s, launch overhead %s cycles, %s",
                t->path, t->name, p->capacity, (long long)t->capacity_bytes, (long long)t->element_bytes,
                p->bandwidth, t->read_bandwidth, p->timing.write_bandwidth,
                p->timing.duplex ? " on a separate channel" : "", (long long)p->native_w, (long long)p->native_h,
                (long long)ft_native_k(p), p->allow_larger ? " (larger allowed)" : "",
                ft_format_cycles(lat, p->timing.transfer_latency), ft_format_cycles(launch, p->timing.launch_overhead),
                p->timing.overlap == FT_OVERLAP_PIPELINE ? "double buffering (steps pipelined)"
                                                         : "no double buffering (load, compute, write in turn)");
        device_summary(f, t, p);
        if (keep_costs)
            fputs("; base costs kept from the problem file (--keep-costs)", f);
        else
            fprintf(f,
                    "; base costs from the target's throughput (MatMul %.15g, Pointwise %.15g per input, cycles per "
                    "native tile)",
                    (double)t->native_w * (double)t->native_h * (double)t->native_k /
                        (t->matmul_macs_per_cycle * t->matmul_efficiency),
                    (double)t->native_w * (double)t->native_h /
                        (t->pointwise_elements_per_cycle * t->pointwise_efficiency));
        fprintf(f, "; one cost unit = one cycle at %.15g Hz", t->clock_hz);
    }
    if (ferror(f)) {
        fclose(f);
        free(buf);
        return NULL;
    }
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

void cli_print_header(const ft_problem *p, const ft_schedule *s, const ft_target *t, int keep_costs)
{
    char a[FT_NUMBUF], b[FT_NUMBUF];
    printf("problem   %s (%d ops, %d tensors, capacity %s, bandwidth %s, native %lldx%lld)\n", p->name, p->nops, p->ntensors,
           cli_fmt15(a, p->capacity), cli_fmt15(b, p->bandwidth), (long long)p->native_w, (long long)p->native_h);
    if (t) {
        char *line = cli_target_summary(t, p, keep_costs);
        printf("target    %s\n", line ? line : "(out of memory)");
        free(line);
    }
    printf("schedule  %s (%d subgraphs)\n", s->name, s->nsubgraphs);
}

static void member_num(FILE *f, const char *name, double x)
{
    fprintf(f, ", \"%s\": ", name);
    cli_json_number(f, x);
}

void cli_target_json(FILE *f, const ft_target *t, int keep_costs)
{
    if (!t) {
        fputs(", \"target\": null, \"target_settings\": null, \"base_costs\": \"problem\"", f);
        return;
    }
    fputs(", \"target\": ", f);
    cli_json_string(f, t->path);
    fputs(", \"target_settings\": {\"name\": ", f);
    cli_json_string(f, t->name);
    fputs(", \"description\": ", f);
    cli_json_string(f, t->description);
    fprintf(f, ", \"contest\": %s", t->contest ? "true" : "false");
    if (!t->contest) {
        member_num(f, "clock_hz", t->clock_hz);
        fprintf(f, ", \"element_bytes\": %lld, \"capacity_bytes\": %lld", (long long)t->element_bytes,
                (long long)t->capacity_bytes);
        member_num(f, "read_bandwidth", t->read_bandwidth);
        member_num(f, "write_bandwidth", t->write_bandwidth);
        member_num(f, "transfer_latency", t->transfer_latency);
        fprintf(f, ", \"separate_channels\": %s", t->separate_channels ? "true" : "false");
        fprintf(f, ", \"native_granularity\": {\"w\": %lld, \"h\": %lld, \"k\": %lld}", (long long)t->native_w,
                (long long)t->native_h, (long long)t->native_k);
        fprintf(f, ", \"allow_larger_granularity\": %s", t->allow_larger_granularity ? "true" : "false");
        fprintf(f, ", \"pointwise_unpadded\": %s", t->pointwise_unpadded ? "true" : "false");
        member_num(f, "matmul_macs_per_cycle", t->matmul_macs_per_cycle);
        member_num(f, "pointwise_elements_per_cycle", t->pointwise_elements_per_cycle);
        member_num(f, "launch_overhead", t->launch_overhead);
        fprintf(f, ", \"double_buffering\": %s", t->double_buffering ? "true" : "false");
        fprintf(f, ", \"units\": %lld", (long long)t->units);
        member_num(f, "slow_memory_efficiency", t->memory_efficiency);
        member_num(f, "matmul_efficiency", t->matmul_efficiency);
        member_num(f, "pointwise_efficiency", t->pointwise_efficiency);
        member_num(f, "step_overhead", t->step_overhead);
        member_num(f, "tile_overhead", t->tile_overhead);
        member_num(f, "matmul_tile_overhead", t->matmul_tile_overhead);
        /* the kernel model's settings, where the target has them */
        if (t->register_file_bytes > 0)
            fprintf(f, ", \"register_file_bytes\": %lld, \"accumulator_bytes\": %lld", (long long)t->register_file_bytes,
                    (long long)t->accumulator_bytes);
        if (t->misaligned_efficiency < 1) {
            member_num(f, "misaligned_efficiency", t->misaligned_efficiency);
            fprintf(f, ", \"aligned_elements\": %lld", (long long)t->aligned_elements);
        }
        if (t->split_overhead > 0)
            member_num(f, "split_overhead", t->split_overhead);
        if (t->conv_efficiency < 1)
            member_num(f, "conv_efficiency", t->conv_efficiency);
        if (t->conv_small_channels > 0) {
            fprintf(f, ", \"conv_small_channels\": %lld", (long long)t->conv_small_channels);
            member_num(f, "conv_small_efficiency", t->conv_small_efficiency);
        }
        if (t->cache_capacity_bytes > 0) {
            fprintf(f, ", \"shared_cache\": {\"capacity_bytes\": %lld, \"partitions\": %lld", (long long)t->cache_capacity_bytes,
                    (long long)t->cache_partitions);
            member_num(f, "bandwidth", t->cache_bandwidth);
            if (t->cache_resident_bytes > 0)   /* partial residency (absent: all or nothing) */
                member_num(f, "resident_bytes", t->cache_resident_bytes);
            fputc('}', f);
        } else {
            fputs(", \"shared_cache\": null", f);
        }
        member_num(f, "run_overhead", t->run_overhead);
        member_num(f, "replay_interval", t->replay_interval);
        fputs(", \"kind_cost\": {", f);
        for (int i = 0; i < t->nkind_costs; i++) {
            fputs(i ? ", " : "", f);
            cli_json_string(f, t->kind_names[i]);
            fputs(": ", f);
            cli_json_number(f, t->kind_costs[i]);
        }
        fputc('}', f);
        if (t->energy_on) {   /* the energy group (slow_write_pj as it applies) */
            fputs(", \"energy\": {", f);
            fputs("\"static_watts\": ", f);
            cli_json_number(f, t->energy_static_watts);
            member_num(f, "active_watts", t->energy_active_watts);
            member_num(f, "mac_pj", t->energy_mac_pj);
            member_num(f, "pointwise_pj", t->energy_pointwise_pj);
            member_num(f, "slow_read_pj", t->energy_slow_read_pj);
            member_num(f, "slow_write_pj", t->energy_slow_write_pj >= 0 ? t->energy_slow_write_pj : t->energy_slow_read_pj);
            member_num(f, "cache_pj", t->energy_cache_pj);
            member_num(f, "fast_pj", t->energy_fast_pj);
            member_num(f, "launch_pj", t->energy_launch_pj);
            if (t->energy_power_limit_watts > 0)
                member_num(f, "power_limit_watts", t->energy_power_limit_watts);
            fputc('}', f);
        } else {
            fputs(", \"energy\": null", f);
        }
    }
    fprintf(f, "}, \"base_costs\": \"%s\"", t->contest || keep_costs ? "problem" : "target");
}

void cli_json_energy(FILE *f, const ft_problem *p, double joules, double latency)
{
    if (!p->energy.on)
        return;
    member_num(f, "energy_j", joules);
    member_num(f, "power_w", ft_energy_watts(p, joules, latency));
}

void cli_json_seconds(FILE *f, const char *name, double cycles, const ft_target *t)
{
    if (!t || t->contest || !(t->clock_hz > 0))
        return;
    member_num(f, name, cycles / t->clock_hz);
}
