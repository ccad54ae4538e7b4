/* report_csv.c - the per-subgraph tables of schedule, evaluate and simulate as CSV (--csv FILE or -): the columns, with their units in the header, of the Python binding's to_rows() (python/fusetile/_notebook.py), whole labels, numbers that read back exactly. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fusetile/io.h"

/* The columns every table starts with. */
static const char csv_head[] = "subgraph,label,ops,w [elements],h [elements],k [elements]";

/* s as a CSV field (RFC 4180: quoted when it holds a comma, quote or line
 * break, quotes doubled). */
static void csv_text(FILE *f, const char *s)
{
    if (!s)
        return;
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* ",x": the shortest text that reads back as x; empty for NaN. */
static void csv_num(FILE *f, double x)
{
    char buf[FT_NUMBUF];
    fputc(',', f);
    if (isfinite(x))
        fputs(ft_format_double(buf, x), f);
}

static void csv_int(FILE *f, long long x)
{
    fprintf(f, ",%lld", x);
}

/* index, label (whole: ft_subgraph_label), ops (space-separated), w, h, k. */
static int csv_sg_head(FILE *f, const ft_problem *p, const ft_subgraph *g, int i)
{
    char *label = ft_subgraph_label(p, g);
    if (!label)
        return -1;
    fprintf(f, "%d,", i);
    csv_text(f, label);
    free(label);
    fputc(',', f);
    for (int j = 0; j < g->nops; j++)
        fprintf(f, "%s%d", j ? " " : "", g->ops[j]);
    fprintf(f, ",%lld,%lld,%lld", (long long)g->w, (long long)g->h, (long long)g->k);
    return 0;
}

/* Open path ("-": standard output) for a table. */
static FILE *csv_open(const char *cmd, const char *path, ft_out *out)
{
    ft_status st;
    if (!strcmp(path, "-"))
        return stdout;
    if (ft_out_open(out, path, &st) != FT_OK) {
        cli_error("%s: %s", cmd, st.msg);
        return NULL;
    }
    return out->f;
}

/* Finish the table: EXIT_OK, or EXIT_USAGE after a message (or oom). */
static int csv_close(const char *cmd, const char *path, ft_out *out, int oom)
{
    ft_status st;
    if (!strcmp(path, "-")) {
        if (fflush(stdout) != 0 || ferror(stdout))
            cli_stdout_failed(errno);
        if (oom)
            cli_error("%s: out of memory", cmd);
        return oom ? EXIT_USAGE : EXIT_OK;
    }
    if (oom) {
        ft_out_abort(out);
        cli_error("%s: out of memory", cmd);
        return EXIT_USAGE;
    }
    if (ft_out_commit(out, &st) != FT_OK) {
        cli_error("%s: %s", cmd, st.msg);
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

double cli_clock_hz(const ft_target *t)
{
    return t && !t->contest && t->clock_hz > 0 ? t->clock_hz : 0;
}

int cli_csv_eval(const char *cmd, const char *path, const ft_problem *p, const ft_schedule *s, const ft_eval *e,
                 double clock_hz)
{
    ft_out out;
    FILE *f = csv_open(cmd, path, &out);
    if (!f)
        return EXIT_USAGE;
    int oom = 0;
    fprintf(f, "%s,tiles,steps,compute_bound_steps,memory_bound_steps,peak_working_set [elements],loaded [elements],"
               "written [elements],compute_time [cost units],memory_time [cost units],latency [cost units],share [%%]%s\r\n",
            csv_head, clock_hz > 0 ? ",latency [s]" : "");
    for (int i = 0; i < e->nsubgraphs && !oom; i++) {
        const ft_sg_result *r = &e->sg[i];
        if (csv_sg_head(f, p, &s->sg[i], i)) {
            oom = 1;
            break;
        }
        csv_int(f, (long long)(r->ntx * r->nty));
        csv_int(f, (long long)r->steps);
        csv_int(f, (long long)r->compute_bound_steps);
        csv_int(f, (long long)r->memory_bound_steps);
        csv_int(f, (long long)r->peak_working_set);
        csv_int(f, (long long)r->loaded);
        csv_int(f, (long long)r->written);
        csv_num(f, r->compute_time);
        csv_num(f, r->memory_time);
        csv_num(f, r->latency);
        csv_num(f, e->total ? 100.0 * r->latency / e->total : 0.0);
        if (clock_hz > 0)
            csv_num(f, r->latency / clock_hz);
        fputs("\r\n", f);
    }
    return csv_close(cmd, path, &out, oom);
}

int cli_csv_sim(const char *cmd, const char *path, const ft_problem *p, const ft_schedule *s, const ft_sim_result *r,
                const ft_sim_effects *rep, double clock_hz)
{
    ft_out out;
    FILE *f = csv_open(cmd, path, &out);
    if (!f)
        return EXIT_USAGE;
    int oom = 0;
    char why[160];
    fprintf(f, "%s,steps,simulated [cost units],analytic [cost units],difference [cost units],relative_difference,"
               "peak_occupancy [elements],channel_busy [%%],compute_busy [%%],accounted_for_by%s\r\n",
            csv_head, clock_hz > 0 ? ",simulated [s]" : "");
    for (int i = 0; i < r->nsubgraphs && !oom; i++) {
        const ft_sim_sg *q = &r->sg[i];
        if (csv_sg_head(f, p, &s->sg[i], i)) {
            oom = 1;
            break;
        }
        csv_int(f, (long long)q->steps);
        csv_num(f, q->simulated);
        csv_num(f, q->analytic);
        csv_num(f, q->simulated - q->analytic);
        csv_num(f, ft_sim_rel_diff(q->simulated, q->analytic));
        csv_int(f, (long long)q->peak_occupancy);
        csv_num(f, 100 * q->channel_busy);
        csv_num(f, 100 * q->compute_busy);
        ft_sim_accounted(r, rep, i, why, sizeof why);
        fputc(',', f);
        csv_text(f, why);
        if (clock_hz > 0)
            csv_num(f, q->simulated / clock_hz);
        fputs("\r\n", f);
    }
    return csv_close(cmd, path, &out, oom);
}
