/* util.c - messages, option scanning and JSON output helpers for the command-line program. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>

const char *cli_progname = "fusetile";
const char *cli_argv0 = NULL;

void cli_error(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", cli_progname);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

void cli_warn(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: warning: ", cli_progname);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

void cli_opt_init(cli_opts *o, int argc, char **argv)
{
    memset(o, 0, sizeof *o);
    o->argc = argc;
    o->argv = argv;
    o->i = 1;
    o->cmd = argv[0];
}

const char *cli_opt_next(cli_opts *o, int *is_opt)
{
    o->inline_value = NULL;
    while (o->i < o->argc) {
        char *a = o->argv[o->i++];
        if (!o->only_positional && strcmp(a, "--") == 0) {
            o->only_positional = 1;
            continue;
        }
        *is_opt = !o->only_positional && a[0] == '-' && a[1] != '\0';
        if (*is_opt && a[1] == '-') {
            char *eq = strchr(a, '=');
            if (eq)
                o->inline_value = eq + 1;
        }
        return a;
    }
    return NULL;
}

int cli_opt_is(const cli_opts *o, const char *arg, const char *name)
{
    size_t n = o->inline_value ? (size_t)(o->inline_value - 1 - arg) : strlen(arg);
    return strlen(name) == n && strncmp(arg, name, n) == 0;
}

const char *cli_opt_value(cli_opts *o, const char *opt)
{
    if (o->inline_value)
        return o->inline_value;
    if (o->i < o->argc)
        return o->argv[o->i++];
    cli_error("%s: option %s needs a value", o->cmd, opt);
    return NULL;
}

void cli_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (*p < 0x20)
                fprintf(f, "\\u%04x", *p);
            else
                fputc(*p, f);
        }
    }
    fputc('"', f);
}

void cli_json_number(FILE *f, double x)
{
    char buf[FT_NUMBUF];
    if (!isfinite(x)) {
        fputs("null", f);
        return;
    }
    fputs(ft_format_double(buf, x), f);
}

const char *cli_fmt15(char *buf, double x)
{
    snprintf(buf, FT_NUMBUF, "%.15g", x);
    return buf;
}

/* A subgraph's op list ("0,3,1") left-aligned in width columns, ending in
 * "..." when it does not fit. */
static void print_ops(FILE *f, const ft_subgraph *g, int width)
{
    char buf[64];
    int n = 0;
    buf[0] = '\0';
    for (int j = 0; j < g->nops; j++) {
        int room = (int)sizeof buf - n;
        int w = snprintf(buf + n, (size_t)room, "%s%d", j ? "," : "", g->ops[j]);
        if (w >= room || n + w > width) {
            snprintf(buf + (n < width - 3 ? n : width - 3), 4, "...");
            break;
        }
        n += w;
    }
    fprintf(f, "%-*s", width, buf);
}

/* Characters (UTF-8 code points) in s. */
static int text_columns(const char *s)
{
    int n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        n += (*p & 0xC0) != 0x80;
    return n;
}

/* s left-aligned in width columns, cut to width - 3 characters and "..."
 * when longer. */
static void print_padded(FILE *f, const char *s, int width)
{
    int cols = text_columns(s);
    if (cols > width) {
        const unsigned char *p = (const unsigned char *)s;
        int kept = 0;
        while (*p) {
            if ((*p & 0xC0) != 0x80 && kept++ == width - 3)
                break;
            p++;
        }
        fwrite(s, 1, (size_t)(p - (const unsigned char *)s), f);
        fputs("...", f);
        return;
    }
    fputs(s, f);
    fprintf(f, "%*s", width - cols, "");
}

int cli_has_names(const ft_problem *p)
{
    for (int o = 0; o < p->nops; o++)
        if (p->ops[o].name || p->ops[o].kind)
            return 1;
    return 0;
}

int cli_ops_width(const ft_problem *p, const ft_schedule *s)
{
    int width = 16;
    if (!cli_has_names(p))
        return width;
    for (int i = 0; i < s->nsubgraphs && width < CLI_LABEL_COLUMNS; i++) {
        char *l = ft_subgraph_label(p, &s->sg[i]);
        int n = l ? text_columns(l) : 0;
        free(l);
        if (n > width)
            width = n < CLI_LABEL_COLUMNS ? n : CLI_LABEL_COLUMNS;
    }
    return width;
}

void cli_print_sg_head(FILE *f, const ft_problem *p, int index, const ft_subgraph *g, int width)
{
    char gran[64];
    snprintf(gran, sizeof gran, "%lldx%lldx%lld", (long long)g->w, (long long)g->h, (long long)g->k);
    fprintf(f, "%4d  ", index);
    char *label = cli_has_names(p) ? ft_subgraph_label(p, g) : NULL;
    if (label)
        print_padded(f, label, width);
    else
        print_ops(f, g, width);
    free(label);
    fprintf(f, " %-16s", gran);
}

/* A list of per-op strings as JSON (null for a missing one). */
static void json_op_strings(FILE *f, const ft_problem *p, const ft_subgraph *g, int kinds)
{
    fputc('[', f);
    for (int j = 0; j < g->nops; j++) {
        int o = g->ops[j];
        const char *v = o >= 0 && o < p->nops ? (kinds ? p->ops[o].kind : p->ops[o].name) : NULL;
        fputs(j ? ", " : "", f);
        if (v)
            cli_json_string(f, v);
        else
            fputs("null", f);
    }
    fputc(']', f);
}

void cli_json_sg_names(FILE *f, const ft_problem *p, const ft_subgraph *g)
{
    if (!cli_has_names(p))
        return;
    char *label = ft_subgraph_label(p, g);
    fputs(", \"label\": ", f);
    cli_json_string(f, label ? label : "");
    free(label);
    fputs(", \"op_names\": ", f);
    json_op_strings(f, p, g, 0);
    fputs(", \"op_kinds\": ", f);
    json_op_strings(f, p, g, 1);
}

int cli_parse_u64(const char *v, uint64_t *out)
{
    if (!*v || strspn(v, "0123456789") != strlen(v))
        return -1;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (errno || *end)
        return -1;
    *out = (uint64_t)x;
    return 0;
}

void cli_progress_init(cli_progress_state *ps, const char *what, const char *noun)
{
    ps->what = what;
    ps->noun = noun;
    ps->runs = ps->span = 1;
    ps->first = 0;
    ps->done = ps->total = 0;
    ps->printed = 0;
    ps->printed_done = -1;
    ps->interval = CLI_PROGRESS_SECONDS;
    const char *v = getenv("FUSETILE_PROGRESS_SECONDS");
    char *end;
    double x = v && *v ? strtod(v, &end) : -1;
    if (v && *v && !*end && x >= 0 && x <= 3600)
        ps->interval = x;
    clock_gettime(CLOCK_MONOTONIC, &ps->last);
}

/* Print the progress line of ps's figures. */
static void progress_line(cli_progress_state *ps)
{
    fprintf(stderr, "fusetile %s: %lld of %lld steps%s%s (%.0f%%)\n", ps->what, (long long)ps->done, (long long)ps->total,
            ps->noun[0] ? " " : "", ps->noun, ps->total ? 100.0 * (double)ps->done / (double)ps->total : 0.0);
    ps->printed = 1;
    ps->printed_done = ps->done;
}

int cli_progress(void *ctx, int64_t done, int64_t total)
{
    cli_progress_state *ps = ctx;
    /* the callback counts `span` runs alike, after `first` of `runs` */
    int64_t unit = total / (ps->span > 0 ? ps->span : 1);
    ps->total = unit * ps->runs;
    ps->done = unit * ps->first + (done < total ? done : total);
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double since = (double)(now.tv_sec - ps->last.tv_sec) + 1e-9 * (double)(now.tv_nsec - ps->last.tv_nsec);
    if (since >= ps->interval) {
        progress_line(ps);
        ps->last = now;
    }
    return 0;
}

void cli_progress_phase(cli_progress_state *ps, int first, int span)
{
    ps->first = first;
    ps->span = span > 0 ? span : 1;
}

void cli_progress_end(cli_progress_state *ps)
{
    if (!ps->printed || ps->printed_done == ps->total)
        return;
    ps->done = ps->total;
    progress_line(ps);
}

int cli_parse_seconds(const char *v, double *out)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || end == v || *end || !isfinite(x) || x <= 0)
        return -1;
    *out = x;
    return 0;
}

int cli_opt_search(cli_opts *o, const char *arg, const char *cmd, double *time_limit, int *threads, uint64_t *seed)
{
    const char *name = cli_opt_is(o, arg, "--time-limit") ? "--time-limit"
                       : cli_opt_is(o, arg, "--threads")  ? "--threads"
                       : cli_opt_is(o, arg, "--seed")     ? "--seed"
                                                          : NULL;
    if (!name)
        return 0;
    const char *v = cli_opt_value(o, name);
    uint64_t n;
    if (!v)
        return -1;
    if (name[2] == 't' && name[3] == 'i') {
        if (cli_parse_seconds(v, time_limit)) {
            cli_error("%s: --time-limit is '%s', must be a positive number of seconds", cmd, v);
            return -1;
        }
    } else if (name[2] == 't') {
        if (cli_parse_u64(v, &n) || n > FT_SEARCH_MAX_THREADS) {
            cli_error("%s: --threads is '%s', must be an integer from 0 (one per core) to %d", cmd, v,
                      FT_SEARCH_MAX_THREADS);
            return -1;
        }
        *threads = (int)n;
    } else if (cli_parse_u64(v, seed)) {
        cli_error("%s: --seed is '%s', must be an integer from 0 to 18446744073709551615", cmd, v);
        return -1;
    }
    return 1;
}

/* Contract: cli.h. */
int cli_gap(const ft_problem *p, const ft_schedule *s, const ft_eval *e, double seconds, ft_gap *g)
{
    ft_status st;
    return ft_gap_evidence(p, s, e, seconds, g, &st) == FT_OK ? 0 : -1;
}

/* Contract: cli.h. */
void cli_gap_line(FILE *f, const ft_gap *g)
{
    char a[FT_NUMBUF], cover[96];
    snprintf(a, sizeof a, "%.15g", g->bound);
    if (g->alone_done < g->nsubgraphs)
        snprintf(cover, sizeof cover, "%d of %d subgraphs (cut at %.2f s: the others keep their own)", g->alone_done,
                 g->nsubgraphs, g->alone_seconds);
    else
        snprintf(cover, sizeof cover, "%d subgraph%s", g->nsubgraphs, g->nsubgraphs == 1 ? "" : "s");
    fprintf(f,
            "gap: %.2f x the bound (%s) = %.2f in the search's configurations x %.2f in the bound x %.2f in the "
            "grouping (%d subgraph%s): most of the gap is ",
            g->ratio, a, g->search_part, g->bound_part, g->between, g->nsubgraphs, g->nsubgraphs == 1 ? "" : "s");
    if (g->gap_in == FT_GAP_IN_SEARCH)
        fputs("in the search's configurations (", f);
    else if (g->gap_in == FT_GAP_IN_BOUND)
        fputs("in the bound (", f);
    else
        fputs("in the grouping (launches, tile overheads, waves and traffic between subgraphs, which the bound counts "
              "once, as if one subgraph held the whole problem: fewer, larger subgraphs might remove it; ",
              f);
    fprintf(f,
            "the best configuration of each subgraph alone, %lld configurations tried over %s, is %.2f x the bound "
            "of the same subgraphs",
            g->alone_tried, cover, g->bound_part);
    if (g->gap_in == FT_GAP_IN_SEARCH)
        fprintf(f, ", the schedule %.2f x that: better configurations of these subgraphs exist", g->search_part);
    else if (g->gap_in == FT_GAP_IN_BOUND)
        fputs(": what no configuration of them reaches, not counted by the bound", f);
    /* the grouping's evidence: merges of neighbouring subgraphs */
    double pct = g->total > 0 ? 100 / g->total : 0;
    if (g->merge_at >= 0 && g->grouping_in_bound)
        fprintf(f,
                "; merging subgraphs %d and %d saves %.4g (%.2f%% of the total), and every merge of two neighbouring "
                "subgraphs that saves anything saves %.2f%% summed (%d pairs), against the grouping's %.2f%% of the "
                "total: most of the grouping's part lies in the bound (which counts the whole problem as one "
                "subgraph)",
                g->merge_at, g->merge_at + 1, g->merge_gain, pct * g->merge_gain, pct * g->merge_sum, g->pairs_tried,
                g->between > 0 ? 100 * (1 - 1 / g->between) : 0.0);
    else if (g->merge_at >= 0)
        fprintf(f, "; merging subgraphs %d and %d saves %.4g (%.2f%% of the total): the grouping can improve", g->merge_at,
                g->merge_at + 1, g->merge_gain, pct * g->merge_gain);
    else if (g->pairs_tried > 0)
        fprintf(f,
                "; no merge of two neighbouring subgraphs costs less than the two (%d pair%s, %lld configurations%s)%s",
                g->pairs_tried, g->pairs_tried == 1 ? "" : "s", g->pairs_configs,
                g->pairs_done < g->pairs_tried ? ", cut by the time" : "",
                g->grouping_in_bound ? ": no merge of neighbours removes the grouping's part, so it most likely lies "
                                       "in the bound (which counts the whole problem as one subgraph)"
                                     : "");
    fputs(")\n", f);
}

/* Contract: cli.h. */
void cli_gap_json(FILE *f, const ft_gap *g)
{
    const struct {
        const char *key;
        double v;
    } num[] = {{"bound", g->bound},           {"ratio", g->ratio},
               {"grouping_bound", g->grouping_bound}, {"subgraphs", g->nsubgraphs},
               {"between", g->between},       {"within", g->within},
               {"best_alone", g->best_alone}, {"search_part", g->search_part},
               {"bound_part", g->bound_part}, {"alone_tried", (double)g->alone_tried},
               {"alone_done", g->alone_done}, {"pairs_tried", g->pairs_tried},
               {"pairs_done", g->pairs_done}, {"pairs_configs", (double)g->pairs_configs},
               {"merge_at", g->merge_at}, {"merge_gain", g->merge_gain},
               {"merge_sum", g->merge_sum}, {"grouping_in_bound", g->grouping_in_bound}};
    fputs(", \"gap\": {", f);
    for (size_t i = 0; i < sizeof num / sizeof num[0]; i++) {
        fprintf(f, "%s\"%s\": ", i ? ", " : "", num[i].key);
        cli_json_number(f, num[i].v);
    }
    /* (not its wall time: the JSON of one schedule stays the same run to run) */
    fprintf(f, ", \"gap_in\": \"%s\"}", ft_gap_in_name(g->gap_in));
}
