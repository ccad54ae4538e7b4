/* measured.c - measured TSV files (gemm, pointwise, graph_ops, graphs, models, energy, conv, kernels) read into rows of one-op kernels, and each row's predicted time on a target. */
#include "fusetile/measured.h"

#include "cost/cost.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Most columns a header may have, and longest problem name. */
#define MAX_COLUMNS 64
#define MAX_NAME 200

const char *ft_meas_format_name(ft_meas_format f)
{
    switch (f) {
    case FT_MEAS_GEMM: return "gemm";
    case FT_MEAS_POINTWISE: return "pointwise";
    case FT_MEAS_GRAPH_OPS: return "graph_ops";
    case FT_MEAS_GRAPHS: return "graphs";
    case FT_MEAS_MODELS: return "models";
    case FT_MEAS_ENERGY: return "energy";
    case FT_MEAS_CONV: return "conv";
    case FT_MEAS_KERNELS: return "kernels";
    }
    return "?";
}

void ft_measured_free(ft_measured *m)
{
    if (!m)
        return;
    for (int i = 0; i < m->nrows; i++) {
        ft_meas_row *r = &m->rows[i];
        ft__free(r->label);
        ft__free(r->problem);
        for (int j = 0; j < r->nkernels; j++) {
            ft_problem_free(r->kernels[j]);
            if (r->tensors)
                ft__free(r->tensors[j]);
        }
        ft__free(r->kernels);
        ft__free(r->tensors);
    }
    ft__free(m->rows);
    ft__free(m->path);
    ft__free(m);
}

/* ---------------------------------------------------------------- kernels */

/* Append kernel k to row r (takes it); ids (k's ngraph_inputs + 1 entries,
 * each >= 0) are the row's ids of its inputs and output. */
static int row_add(ft_meas_row *r, ft_problem *k, const int *ids, ft_status *st)
{
    if (r->nkernels >= FT_MEAS_MAX_KERNELS) {
        ft_problem_free(k);
        return ft__fail(st, FT_EINPUT, 0, "%s: more than %d kernels", r->label, FT_MEAS_MAX_KERNELS);
    }
    int nt = k->ngraph_inputs + 1;   /* its inputs (what no op of it makes), then its output */
    ft_problem **nk = ft__realloc(r->kernels, sizeof *nk * (size_t)(r->nkernels + 1));
    if (nk)
        r->kernels = nk;
    int **ntids = nk ? ft__realloc(r->tensors, sizeof *ntids * (size_t)(r->nkernels + 1)) : NULL;
    if (ntids)
        r->tensors = ntids;
    int *mine = ntids ? ft__malloc(sizeof *mine * (size_t)nt) : NULL;
    if (!mine) {
        ft_problem_free(k);
        return ft__fail(st, FT_ENOMEM, 0, "out of memory");
    }
    for (int q = 0; q < nt; q++) {
        mine[q] = ids[q];
        if (ids[q] >= r->ntensors)
            r->ntensors = ids[q] + 1;
    }
    r->tensors[r->nkernels] = mine;
    r->kernels[r->nkernels++] = k;
    return FT_OK;
}

/* Add to r the Pointwise kernels that compute tensor `out` (row id) from
 * the nin tensors ins (row ids), each of extent w x h, as the measuring
 * script runs them: one kernel of kind `kind` for one input, else the
 * nin - 1 adds that sum them left to right (each but the last into a new
 * tensor of the row). */
static int add_pointwise(ft_meas_row *r, const char *kind, int nin, const int *ins, int out, int64_t w, int64_t h,
                         ft_status *st)
{
    int64_t ws[3] = {w, w, w}, hs[3] = {h, h, h};
    if (nin == 1) {
        ft_problem *k;
        int ids[2] = {ins[0], out};
        int rc = ft_kernel_new(&k, "Pointwise", kind, 1, ws, hs, st);
        return rc ? rc : row_add(r, k, ids, st);
    }
    int fresh = out >= r->ntensors ? out + 1 : r->ntensors;   /* ids after every one given */
    for (int i = 0; i < nin; i++)
        if (ins[i] >= fresh)
            fresh = ins[i] + 1;
    int acc = ins[0];
    for (int c = 1; c < nin; c++) {
        int ids[3] = {acc, ins[c], c == nin - 1 ? out : fresh++};
        ft_problem *k;
        int rc = ft_kernel_new(&k, "Pointwise", "add", 2, ws, hs, st);
        if (rc || (rc = row_add(r, k, ids, st)))
            return rc;
        acc = ids[2];
    }
    return FT_OK;
}

/* The kernels that run op `o` of problem p as the measuring script does:
 * a MatMul as is, a Pointwise op of one input as relu, of n >= 2 as n - 1
 * adds on its output's extent, a Layout op as a copy.  The row's ids of
 * p's tensors are their indices in p. */
static int add_op(ft_meas_row *r, const ft_problem *p, int o, ft_status *st)
{
    const ft_op *op = &p->ops[o];
    const ft_tensor *out = &p->tensors[op->output];
    if (r->ntensors < p->ntensors)
        r->ntensors = p->ntensors;   /* new tensors (partial sums) after all of p's */
    if (op->type == FT_OP_POINTWISE)
        return add_pointwise(r, "relu", op->ninputs, op->inputs, op->output, out->width, out->height, st);
    int64_t w[3], h[3];
    int ids[3];
    int nin = op->type == FT_OP_MATMUL ? 2 : 1;
    for (int i = 0; i < nin; i++) {
        w[i] = p->tensors[op->inputs[i]].width;
        h[i] = p->tensors[op->inputs[i]].height;
        ids[i] = op->inputs[i];
    }
    w[nin] = out->width;
    h[nin] = out->height;
    ids[nin] = op->output;
    const char *type = op->type == FT_OP_MATMUL ? "MatMul" : "Layout";
    const char *kind = op->type == FT_OP_MATMUL ? "matmul" : "copy";
    ft_problem *k;
    int rc = ft_kernel_new(&k, type, kind, nin, w, h, st);
    return rc ? rc : row_add(r, k, ids, st);
}

/* The kernels of problem p as PyTorch's eager mode runs them: one per
 * group of p's op_kernels (each op alone when p has none), in the order
 * of their first ops in p's topological order. */
static int add_eager_kernels(ft_meas_row *r, const ft_problem *p, ft_status *st)
{
    int ids[FT_KERNEL_MAX_OPS * (FT_KERNEL_MAX_INPUTS + 1) + 1];
    int *done = ft__calloc((size_t)p->nops + 1, sizeof *done);
    if (!done)
        return ft__fail(st, FT_ENOMEM, 0, "out of memory");
    if (r->ntensors < p->ntensors)
        r->ntensors = p->ntensors;
    int rc = FT_OK;
    for (int x = 0; x < p->nops && rc == FT_OK; x++) {
        int o = p->topo[x];
        if (done[o])
            continue;
        int ops[FT_KERNEL_MAX_OPS], n = 0;
        for (int y = x; y < p->nops; y++) {
            int q = p->topo[y];
            if (done[q] || (q != o && (!p->op_kernels || p->op_kernels[q] != p->op_kernels[o])))
                continue;
            if (n == FT_KERNEL_MAX_OPS) {
                rc = ft__fail(st, FT_EINPUT, 0, "%s: kernel %d (op_kernels) has more than %d ops (FT_KERNEL_MAX_OPS)",
                              p->name, p->op_kernels[o], FT_KERNEL_MAX_OPS);
                break;
            }
            ops[n++] = q;
            done[q] = 1;
        }
        ft_problem *k;
        if (rc == FT_OK && (rc = ft_kernel_of_ops(p, ops, n, &k, ids, st)) == FT_OK)
            rc = row_add(r, k, ids, st);
    }
    ft__free(done);
    return rc;
}

/* The eager lowering's kinds of cuDNN's transposes and of PyTorch's
 * depthwise convolution (python/fusetile/importer/lower.py). */
#define KIND_TO_NHWC "nchw_to_nhwc"
#define KIND_TO_NCHW "nhwc_to_nchw"
#define KIND_DEPTHWISE "depthwise_conv2d"

/* The geometry of one measured convolution (a conv row). */
typedef struct conv_geom {
    int64_t n, cin, cout, kh, kw, stride, pad, groups, h, w, ho, wo;
} conv_geom;

/* One op of a convolution's lowering (add_conv). */
typedef struct conv_op {
    const char *type, *kind, *name;
    int in[2], nin, out, factor, kernel;
} conv_op;

/* Add to r the kernels of convolution g as `fusetile import --as eager`
 * lowers torch's conv2d on a channels-first tensor (docs/LOWERING.md:
 * transposes around cuDNN's implicit GEMM; a 1x1 stride-1 one a GEMM
 * alone, a depthwise one PyTorch's own kernel): a
 * small problem of its ops and op_kernels, run through add_eager_kernels.
 * Groups other than 1 and depthwise are refused (FT_EINPUT, no message:
 * the caller names the field). */
static int add_conv(ft_meas_row *r, const conv_geom *g, ft_status *st)
{
    int64_t rin = g->n * g->h * g->w, rows = g->n * g->ho * g->wo, k = g->cin * g->kh * g->kw;
    int identity = g->kh == 1 && g->kw == 1 && g->stride == 1 && g->pad == 0;
    /* tensors (height x width), ops (type, kind, inputs, output, factor, kernel) */
    int64_t th[8], tw[8];
    conv_op ops[6];
    int nt = 0, no = 0;
#define T(hh, ww) (th[nt] = (hh), tw[nt] = (ww), nt++)
#define OP(ty, ki, na, i0, i1, ni, o, f, ke) (ops[no] = (conv_op){ty, ki, na, {i0, i1}, ni, o, f, ke}, no++)
    if (g->groups == 1 && identity) {   /* a plain GEMM on the channels-first tensor */
        int x = T(rin, g->cin), wt = T(k, g->cout), o = T(rows, g->cout);
        OP("MatMul", "conv2d", "conv", x, wt, 2, o, 1, 0);
    } else if (g->groups == 1) {
        int x = T(rin, g->cin), xt = T(rin, g->cin);
        OP("Layout", KIND_TO_NHWC, "to_nhwc", x, -1, 1, xt, 1, 0);
        int left = T(rows, k);
        OP("Layout", "conv2d", "im2col", xt, -1, 1, left, 1, 1);
        int wt = T(k, g->cout), wtt = T(k, g->cout);
        OP("Layout", KIND_TO_NHWC, "weight_to_nhwc", wt, -1, 1, wtt, 1, 2);
        int o = T(rows, g->cout), on = T(rows, g->cout);
        OP("MatMul", "conv2d", "conv", left, wtt, 2, o, 1, 1);
        OP("Layout", KIND_TO_NCHW, "to_nchw", o, -1, 1, on, 1, 3);
    } else if (g->groups == g->cin && g->cout % g->cin == 0) {
        int x = T(rin, g->cin), in = x;
        if (g->ho != g->h || g->wo != g->w || g->cout != g->cin) {
            in = T(rows, g->cout);
            OP("Layout", "conv2d", "window", x, -1, 1, in, 1, 0);
        }
        int o = T(rows, g->cout);
        OP("Pointwise", KIND_DEPTHWISE, "conv", in, -1, 1, o, (int)(g->kh * g->kw), 0);
    } else {
        return FT_EINPUT;
    }
#undef T
#undef OP
    char json[4096];
    size_t n = sizeof json, lw = 0;
#define PUT(...) lw += (size_t)snprintf(json + lw, lw < n ? n - lw : 0, __VA_ARGS__)
    PUT("{\"widths\":[");
    for (int i = 0; i < nt; i++)
        PUT("%s%lld", i ? "," : "", (long long)tw[i]);
    PUT("],\"heights\":[");
    for (int i = 0; i < nt; i++)
        PUT("%s%lld", i ? "," : "", (long long)th[i]);
    static const char *const lists[] = {"inputs", "outputs", "base_costs", "op_types", "op_kinds", "op_names", "op_kernels"};
    for (int l = 0; l < 7; l++) {
        PUT("],\"%s\":[", lists[l]);
        for (int i = 0; i < no; i++) {
            PUT("%s", i ? "," : "");
            if (l == 0)
                PUT(ops[i].nin == 2 ? "[%d,%d]" : "[%d]", ops[i].in[0], ops[i].in[1]);
            else if (l == 1)
                PUT("[%d]", ops[i].out);
            else if (l == 2)
                PUT("%d", ops[i].factor);
            else if (l == 6)
                PUT("%d", ops[i].kernel);
            else
                PUT("\"%s\"", l == 3 ? ops[i].type : l == 4 ? ops[i].kind : ops[i].name);
        }
    }
    PUT("],\"fast_memory_capacity\":1,\"slow_memory_bandwidth\":1,\"native_granularity\":[1,1]}");
#undef PUT
    if (lw >= n)
        return ft__fail(st, FT_EINPUT, 0, "%s: the convolution's problem is too long", r->label);
    ft_problem *p;
    int rc = ft_problem_parse(json, r->label, &p, st);
    if (rc == FT_OK)
        rc = add_eager_kernels(r, p, st);
    ft_problem_free(p);
    return rc;
}

int ft_meas_model_problem(const char *model, long long batch, char *buf, size_t n, ft_status *st)
{
    size_t len = strlen(model);
    if (!len || len > MAX_NAME || strspn(model, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") != len ||
        model[0] == '.')
        return ft__fail(st, FT_EINPUT, 0, "\"%.60s\" is not a model name (letters, digits, _ - and .)", model);
    if (batch < 1)
        return ft__fail(st, FT_EINPUT, 0, "batch %lld is not positive", batch);
    if ((size_t)snprintf(buf, n, "%s-b%lld.json", model, batch) >= n)
        return ft__fail(st, FT_EINPUT, 0, "%s: the name is too long", model);
    return FT_OK;
}

/* ------------------------------------------------------------------ parsing */

/* A file being read: its text cut into lines and fields. */
typedef struct reader {
    const char *path;
    const char *dir;
    ft_status *st;
    int line;
    char *fields[MAX_COLUMNS];
    int nfields;
    /* problems read so far (graph_ops, graphs) */
    int nprob;
    char **prob_names;
    ft_problem **probs;
} reader;

/* Cut line s (modified) at tabs into rd->fields. */
static void split(reader *rd, char *s)
{
    rd->nfields = 0;
    while (rd->nfields < MAX_COLUMNS) {
        rd->fields[rd->nfields++] = s;
        char *tab = strchr(s, '\t');
        if (!tab)
            break;
        *tab = 0;
        s = tab + 1;
    }
    char *cr = strchr(rd->fields[rd->nfields - 1], '\r');
    if (cr)
        *cr = 0;
}

static int fail_at(reader *rd, const char *column, const char *fmt, ...) FT_PRINTF(3, 4);
static int fail_at(reader *rd, const char *column, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ft__fail(rd->st, FT_EINPUT, 0, "%s:%d: %s%s%s", rd->path, rd->line, column ? column : "", column ? ": " : "",
                    msg);
}

/* Integer field of column `name` (index c) in [lo, hi]. */
static int get_int(reader *rd, int c, const char *name, int64_t lo, int64_t hi, int64_t *v)
{
    if (c >= rd->nfields)
        return fail_at(rd, name, "missing (the line has %d fields)", rd->nfields);
    char *end;
    errno = 0;
    long long x = strtoll(rd->fields[c], &end, 10);
    if (end == rd->fields[c] || *end || errno)
        return fail_at(rd, name, "\"%.40s\" is not an integer", rd->fields[c]);
    if (x < lo || x > hi)
        return fail_at(rd, name, "%lld is out of range (%lld to %lld)", x, (long long)lo, (long long)hi);
    *v = (int64_t)x;
    return FT_OK;
}

/* Time field of column `name` (index c): finite and > 0. */
static int get_time(reader *rd, int c, const char *name, double *v)
{
    if (c >= rd->nfields)
        return fail_at(rd, name, "missing (the line has %d fields)", rd->nfields);
    char *end;
    double x = strtod(rd->fields[c], &end);
    if (end == rd->fields[c] || *end || !isfinite(x) || !(x > 0))
        return fail_at(rd, name, "\"%.40s\" is not a positive time in microseconds", rd->fields[c]);
    *v = x;
    return FT_OK;
}

/* Energy field of column J_per_op (index c): finite and > 0 joules. */
static int get_energy(reader *rd, int c, double *v)
{
    if (c >= rd->nfields)
        return fail_at(rd, "J_per_op", "missing (the line has %d fields)", rd->nfields);
    char *end;
    double x = strtod(rd->fields[c], &end);
    if (end == rd->fields[c] || *end || !isfinite(x) || !(x > 0))
        return fail_at(rd, "J_per_op", "\"%.40s\" is not a positive energy in joules", rd->fields[c]);
    *v = x;
    return FT_OK;
}

static const char *get_str(reader *rd, int c)
{
    return c < rd->nfields ? rd->fields[c] : "";
}

/* The problem named `name`, read from rd->dir once. */
static int problem_named(reader *rd, const char *name, const char *column, const ft_problem **out)
{
    for (int i = 0; i < rd->nprob; i++)
        if (strcmp(rd->prob_names[i], name) == 0) {
            *out = rd->probs[i];
            return FT_OK;
        }
    if (!rd->dir)
        return fail_at(rd, column, "problem %s: no problems directory given (--problems DIR)", name);
    if (!*name || strlen(name) > MAX_NAME || strchr(name, '/'))
        return fail_at(rd, column, "\"%.60s\" is not a problem name", name);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.json", rd->dir, name);
    ft_problem *p;
    ft_status pst;
    int rc = ft_problem_load(path, &p, &pst);
    if (rc == FT_ENOMEM)
        return ft__fail(rd->st, FT_ENOMEM, 0, "out of memory");
    if (rc)
        return fail_at(rd, column, "problem %s: %s", name, pst.msg);
    char **nn = ft__realloc(rd->prob_names, sizeof *nn * (size_t)(rd->nprob + 1));
    if (nn)
        rd->prob_names = nn;
    ft_problem **np = nn ? ft__realloc(rd->probs, sizeof *np * (size_t)(rd->nprob + 1)) : NULL;
    if (np)
        rd->probs = np;
    char *copy = np ? ft__strdup(name) : NULL;
    if (!copy) {
        ft_problem_free(p);
        return ft__fail(rd->st, FT_ENOMEM, 0, "out of memory");
    }
    rd->prob_names[rd->nprob] = copy;
    rd->probs[rd->nprob++] = p;
    *out = p;
    return FT_OK;
}

/* Column indices of the formats' fields; -1 where absent. */
typedef struct columns {
    int m, n, k, op, ninputs, elements, problem, type, out_w, out_h, ops, model, batch, time;
    int kind, m_or_op, n_or_elements, joules;   /* energy */
    int layer, in_ch, out_ch, kh, kw, stride, pad, groups, in_h, in_w, conv_oh, conv_ow;   /* conv */
    int rows, cols, out_rows;   /* kernels */
    const char *time_name;
} columns;

static int column(reader *rd, const char *name)
{
    for (int i = 0; i < rd->nfields; i++)
        if (strcmp(rd->fields[i], name) == 0)
            return i;
    return -1;
}

/* Tell the format from the header in rd->fields. */
static int header(reader *rd, ft_meas_format *f, columns *c)
{
    c->m = column(rd, "M");
    c->n = column(rd, "N");
    c->k = column(rd, "K");
    c->op = column(rd, "op");
    c->ninputs = column(rd, "ninputs");
    c->elements = column(rd, "elements");
    c->problem = column(rd, "problem");
    c->type = column(rd, "type");
    c->out_w = column(rd, "out_w");
    c->out_h = column(rd, "out_h");
    c->ops = column(rd, "ops");
    c->model = column(rd, "model");
    c->batch = column(rd, "batch");
    c->kind = column(rd, "kind");
    c->m_or_op = column(rd, "M_or_op");
    c->n_or_elements = column(rd, "N_or_elements");
    c->joules = column(rd, "J_per_op");
    static const char *const conv_cols[] = {"layer", "in_ch", "out_ch", "kh", "kw", "stride", "pad", "groups",
                                            "in_h", "in_w", "out_h", "out_w"};
    int *conv_at[] = {&c->layer, &c->in_ch, &c->out_ch, &c->kh, &c->kw, &c->stride, &c->pad, &c->groups,
                      &c->in_h, &c->in_w, &c->conv_oh, &c->conv_ow};
    int conv = c->model >= 0 && c->batch >= 0;
    for (int i = 0; i < (int)(sizeof conv_cols / sizeof conv_cols[0]); i++)
        conv &= (*conv_at[i] = column(rd, conv_cols[i])) >= 0;
    if (conv) {
        *f = FT_MEAS_CONV;
        c->time_name = "us_graph";
        c->time = column(rd, c->time_name);
        if (c->time < 0)
            return fail_at(rd, NULL, "a conv file (model layer batch in_ch out_ch kh kw stride pad groups in_h in_w "
                           "out_h out_w) without a us_graph column");
        return FT_OK;
    }
    c->rows = column(rd, "rows");
    c->cols = column(rd, "cols");
    c->out_rows = column(rd, "out_rows");
    if (c->kind >= 0 && c->rows >= 0 && c->cols >= 0 && c->out_rows >= 0) {
        *f = FT_MEAS_KERNELS;
        c->time_name = "us";
        c->time = column(rd, c->time_name);
        if (c->time < 0)
            return fail_at(rd, NULL, "a kernels file (kind rows cols out_rows) without a us column");
        return FT_OK;
    }
    if (c->kind >= 0 && c->m_or_op >= 0 && c->n_or_elements >= 0 && c->k >= 0) {
        *f = FT_MEAS_ENERGY;
        c->time_name = "us_per_op";
        c->time = column(rd, c->time_name);
        if (c->time < 0 || c->joules < 0)
            return fail_at(rd, NULL, "an energy file (kind M_or_op N_or_elements K) without a%s column",
                           c->time < 0 ? " us_per_op" : " J_per_op");
        return FT_OK;
    }
    if (c->model >= 0 && c->batch >= 0)
        *f = FT_MEAS_MODELS;
    else if (c->m >= 0 && c->n >= 0 && c->k >= 0)
        *f = FT_MEAS_GEMM;
    else if (c->op >= 0 && c->ninputs >= 0 && c->elements >= 0)
        *f = FT_MEAS_POINTWISE;
    else if (c->problem >= 0 && c->op >= 0 && c->type >= 0 && c->out_w >= 0 && c->out_h >= 0 && c->k >= 0 &&
             c->ninputs >= 0)
        *f = FT_MEAS_GRAPH_OPS;
    else if (c->problem >= 0 && c->ops >= 0)
        *f = FT_MEAS_GRAPHS;
    else
        return fail_at(rd, NULL,
                       "header names no known format (gemm: M N K; pointwise: op ninputs elements; graph_ops: problem "
                       "op type out_w out_h K ninputs; graphs: problem ops; models: model batch; conv: model layer "
                       "batch in_ch out_ch kh kw stride pad groups in_h in_w out_h out_w; kernels: kind rows cols out_rows)");
    int whole = *f == FT_MEAS_GRAPHS || *f == FT_MEAS_MODELS;
    c->time_name = whole ? "us_cudagraph" : "us_graph";
    c->time = column(rd, c->time_name);
    if (c->time < 0 && *f == FT_MEAS_GRAPHS) {
        c->time_name = "us_graph";
        c->time = column(rd, c->time_name);
    }
    if (c->time < 0)
        return fail_at(rd, NULL, "no %s column (the measured time per CUDA graph replay)",
                       whole ? "us_cudagraph" : "us_graph");
    return FT_OK;
}

/* Largest tensor extent a measured row may give. */
#define MAX_EXTENT ((int64_t)1 << 24)

/* Fill row r from the fields of one data line. */
static int data_row(reader *rd, ft_meas_format f, const columns *c, ft_meas_row *r)
{
    char label[MAX_NAME + 64];
    int rc;
    if ((rc = get_time(rd, c->time, c->time_name, &r->measured_us)))
        return rc;
    int gemm = f == FT_MEAS_GEMM, pointwise = f == FT_MEAS_POINTWISE;
    int mc = c->m, nc = c->n, opc = c->op, ec = c->elements;
    if (f == FT_MEAS_ENERGY) {
        if ((rc = get_energy(rd, c->joules, &r->measured_j)))
            return rc;
        const char *kind = get_str(rd, c->kind);
        gemm = strcmp(kind, "gemm") == 0;
        pointwise = strcmp(kind, "pointwise") == 0;
        if (!gemm && !pointwise)
            return fail_at(rd, "kind", "\"%.40s\" is not gemm or pointwise", kind);
        mc = opc = c->m_or_op;
        nc = ec = c->n_or_elements;
    }
    if (gemm) {
        int64_t m, n, k;
        if ((rc = get_int(rd, mc, f == FT_MEAS_ENERGY ? "M_or_op" : "M", 1, MAX_EXTENT, &m)) ||
            (rc = get_int(rd, nc, f == FT_MEAS_ENERGY ? "N_or_elements" : "N", 1, MAX_EXTENT, &n)) ||
            (rc = get_int(rd, c->k, "K", 1, MAX_EXTENT, &k)))
            return rc;
        snprintf(label, sizeof label, "gemm %lldx%lldx%lld", (long long)m, (long long)n, (long long)k);
        if (!(r->label = ft__strdup(label)))
            return ft__fail(rd->st, FT_ENOMEM, 0, "out of memory");
        int64_t w[3] = {k, n, n}, h[3] = {m, k, m};
        int ids[3] = {0, 1, 2};
        ft_problem *kp;
        if ((rc = ft_kernel_new(&kp, "MatMul", "matmul", 2, w, h, rd->st)))
            return rc;
        return row_add(r, kp, ids, rd->st);
    }
    if (pointwise) {
        const char *op = get_str(rd, opc);
        int64_t nin = -1, e;
        if ((f == FT_MEAS_POINTWISE && (rc = get_int(rd, c->ninputs, "ninputs", 1, 3, &nin))) ||
            (rc = get_int(rd, ec, f == FT_MEAS_ENERGY ? "N_or_elements" : "elements", 1, MAX_EXTENT * MAX_EXTENT / 4, &e)))
            return rc;
        static const struct { const char *op; int nin; const char *kind; } known[] = {
            {"relu", 1, "relu"}, {"gelu", 1, "gelu"}, {"copy", 1, "copy"}, {"add", 2, "add"}, {"add3", 3, "add"},
        };
        int which = -1;
        for (int i = 0; i < (int)(sizeof known / sizeof known[0]); i++)
            if (strcmp(known[i].op, op) == 0)
                which = i;
        if (which < 0)
            return fail_at(rd, f == FT_MEAS_ENERGY ? "M_or_op" : "op", "\"%.40s\" is not one of relu, gelu, copy, add, add3",
                           op);
        if (nin >= 0 && nin != known[which].nin)
            return fail_at(rd, "ninputs", "%s has %d inputs, not %lld", op, known[which].nin, (long long)nin);
        /* a square-ish matrix of the elements: the width a power of two */
        int64_t w = 1;
        while (w * w < e)
            w *= 2;
        int64_t h = ft__ceil_div(e, w);
        snprintf(label, sizeof label, "%s %lld", op, (long long)e);
        if (!(r->label = ft__strdup(label)))
            return ft__fail(rd->st, FT_ENOMEM, 0, "out of memory");
        static const int ins[3] = {0, 1, 2};
        return add_pointwise(r, known[which].kind, known[which].nin, ins, known[which].nin, w, h, rd->st);
    }
    if (f == FT_MEAS_KERNELS) {
        const char *kind = get_str(rd, c->kind);
        int pool = strcmp(kind, "max_pool2d") == 0;
        if (!pool && strcmp(kind, "batch_norm") != 0)
            return fail_at(rd, "kind", "\"%.40s\" is not batch_norm or max_pool2d", kind);
        int64_t rows, cols, out;
        if ((rc = get_int(rd, c->rows, "rows", 1, MAX_EXTENT * 64, &rows)) ||
            (rc = get_int(rd, c->cols, "cols", 1, MAX_EXTENT, &cols)) ||
            (rc = get_int(rd, c->out_rows, "out_rows", 1, MAX_EXTENT * 64, &out)))
            return rc;
        if (!pool && out != rows)
            return fail_at(rd, "out_rows", "%lld, but batch_norm keeps its rows (%lld)", (long long)out, (long long)rows);
        snprintf(label, sizeof label, "%s %lldx%lld line %d", kind, (long long)rows, (long long)cols, rd->line);
        if (!(r->label = ft__strdup(label)) || !(r->problem = ft__strdup(kind)))
            return ft__fail(rd->st, FT_ENOMEM, 0, "out of memory");
        r->bare = 1;
        int64_t w[2] = {cols, cols}, h[2] = {rows, out};
        int ids[2] = {0, 1};
        ft_problem *kp;
        if ((rc = ft_kernel_new(&kp, pool ? "Layout" : "Pointwise", kind, 1, w, h, rd->st)))
            return rc;
        return row_add(r, kp, ids, rd->st);
    }
    if (f == FT_MEAS_CONV) {
        conv_geom g;
        int64_t *v[] = {&g.n, &g.cin, &g.cout, &g.kh, &g.kw, &g.stride, &g.pad, &g.groups, &g.h, &g.w, &g.ho, &g.wo};
        const int cols[] = {c->batch, c->in_ch, c->out_ch, c->kh, c->kw, c->stride, c->pad, c->groups,
                            c->in_h, c->in_w, c->conv_oh, c->conv_ow};
        static const char *const names[] = {"batch", "in_ch", "out_ch", "kh", "kw", "stride", "pad", "groups",
                                            "in_h", "in_w", "out_h", "out_w"};
        for (int i = 0; i < 12; i++)
            if ((rc = get_int(rd, cols[i], names[i], i == 6 ? 0 : 1, MAX_EXTENT, v[i])))
                return rc;
        if (g.cin % g.groups || g.cout % g.groups)
            return fail_at(rd, "groups", "%lld does not divide in_ch %lld and out_ch %lld", (long long)g.groups,
                           (long long)g.cin, (long long)g.cout);
        if ((double)g.n * (double)(g.h * g.w > g.ho * g.wo ? g.h * g.w : g.ho * g.wo) > (double)MAX_EXTENT * 64 ||
            (double)g.cin * (double)(g.kh * g.kw) > (double)MAX_EXTENT)
            return fail_at(rd, "batch", "the convolution is too large (over %lld rows)", (long long)MAX_EXTENT * 64);
        snprintf(label, sizeof label, "%.60s %.80s b%lld", get_str(rd, c->model), get_str(rd, c->layer), (long long)g.n);
        if (!(r->label = ft__strdup(label)) || !(r->problem = ft__strdup(get_str(rd, c->model))))
            return ft__fail(rd->st, FT_ENOMEM, 0, "out of memory");
        r->batch = (int)g.n;
        rc = add_conv(r, &g, rd->st);
        if (rc == FT_EINPUT && !rd->st->msg[0])
            return fail_at(rd, "groups", "%lld groups of %lld channels: only 1 group and depthwise (groups = in_ch) "
                           "are modelled", (long long)g.groups, (long long)g.cin);
        return rc;
    }
    if (f == FT_MEAS_MODELS) {
        const char *model = get_str(rd, c->model);
        int64_t batch;
        char file[MAX_NAME + 64];
        ft_status mst;
        const ft_problem *p = NULL;
        if ((rc = get_int(rd, c->batch, "batch", 1, MAX_EXTENT, &batch)))
            return rc;
        if (ft_meas_model_problem(model, (long long)batch, file, sizeof file, &mst))
            return fail_at(rd, "model", "%s", mst.msg);
        file[strlen(file) - strlen(".json")] = 0;
        if ((rc = problem_named(rd, file, "model", &p)))
            return rc;
        snprintf(label, sizeof label, "%s b%lld", model, (long long)batch);
        if (!(r->problem = ft__strdup(model)) || !(r->label = ft__strdup(label)))
            return ft__fail(rd->st, FT_ENOMEM, 0, "out of memory");
        r->batch = (int)batch;
        return add_eager_kernels(r, p, rd->st);
    }
    const char *name = get_str(rd, c->problem);
    const ft_problem *p = NULL;
    if ((rc = problem_named(rd, name, "problem", &p)))
        return rc;
    if (!(r->problem = ft__strdup(name)))
        return ft__fail(rd->st, FT_ENOMEM, 0, "out of memory");
    if (f == FT_MEAS_GRAPHS) {
        int64_t ops;
        if ((rc = get_int(rd, c->ops, "ops", 1, INT32_MAX, &ops)))
            return rc;
        if (ops != p->nops)
            return fail_at(rd, "ops", "%lld, but problem %s has %d ops", (long long)ops, name, p->nops);
        if (!(r->label = ft__strdup(name)))
            return ft__fail(rd->st, FT_ENOMEM, 0, "out of memory");
        for (int i = 0; i < p->nops; i++)
            if ((rc = add_op(r, p, p->topo[i], rd->st)))
                return rc;
        return FT_OK;
    }
    int64_t o, ow, oh, k, nin;
    if ((rc = get_int(rd, c->op, "op", 0, p->nops - 1, &o)))
        return rc;
    const ft_op *op = &p->ops[o];
    const ft_tensor *out = &p->tensors[op->output];
    const char *type = op->type == FT_OP_MATMUL ? "MatMul" : op->type == FT_OP_LAYOUT ? "Layout" : "Pointwise";
    if (strcmp(get_str(rd, c->type), type) != 0)
        return fail_at(rd, "type", "\"%.40s\", but op %lld of %s is %s", get_str(rd, c->type), (long long)o, name, type);
    if ((rc = get_int(rd, c->out_w, "out_w", 1, INT64_MAX, &ow)) || (rc = get_int(rd, c->out_h, "out_h", 1, INT64_MAX, &oh)) ||
        (rc = get_int(rd, c->k, "K", 0, INT64_MAX, &k)) || (rc = get_int(rd, c->ninputs, "ninputs", 1, INT32_MAX, &nin)))
        return rc;
    if (ow != out->width || oh != out->height)
        return fail_at(rd, "out_w", "%lldx%lld, but op %lld of %s writes %lldx%lld", (long long)ow, (long long)oh,
                       (long long)o, name, (long long)out->width, (long long)out->height);
    if (k != op->k || nin != op->ninputs)
        return fail_at(rd, "K", "K %lld and %lld inputs, but op %lld of %s has K %lld and %d inputs", (long long)k,
                       (long long)nin, (long long)o, name, (long long)op->k, op->ninputs);
    snprintf(label, sizeof label, "%s op %lld", name, (long long)o);
    if (!(r->label = ft__strdup(label)))
        return ft__fail(rd->st, FT_ENOMEM, 0, "out of memory");
    return add_op(r, p, (int)o, rd->st);
}

int ft_measured_load(const char *path, const char *problems_dir, ft_measured **out, ft_status *st)
{
    ft_status_clear(st);
    *out = NULL;
    char *text;
    int rc = ft_read_file_max(path, FT_MAX_MEASURED_BYTES, "FT_MAX_MEASURED_BYTES", &text, st);
    if (rc)
        return rc;
    reader rd;
    memset(&rd, 0, sizeof rd);
    rd.path = path;
    rd.dir = problems_dir;
    rd.st = st;
    ft_measured *m = ft__calloc(1, sizeof *m);
    if (!m || !(m->path = ft__strdup(path))) {
        rc = ft__fail(st, FT_ENOMEM, 0, "out of memory");
        goto done;
    }
    columns c;
    memset(&c, 0, sizeof c);
    int have_header = 0;
    char *s = text;
    while (s && *s) {
        char *nl = strchr(s, '\n');
        if (nl)
            *nl = 0;
        rd.line++;
        char *line = s;
        s = nl ? nl + 1 : NULL;
        if (!*line || *line == '#' || strspn(line, " \t\r") == strlen(line))
            continue;
        split(&rd, line);
        if (!have_header) {
            if ((rc = header(&rd, &m->format, &c)))
                goto done;
            have_header = 1;
            continue;
        }
        if (m->nrows >= FT_MEAS_MAX_ROWS) {
            rc = fail_at(&rd, NULL, "more than %d rows", FT_MEAS_MAX_ROWS);
            goto done;
        }
        ft_meas_row *nr = ft__realloc(m->rows, sizeof *nr * (size_t)(m->nrows + 1));
        if (!nr) {
            rc = ft__fail(st, FT_ENOMEM, 0, "out of memory");
            goto done;
        }
        m->rows = nr;
        ft_meas_row *r = &m->rows[m->nrows++];
        memset(r, 0, sizeof *r);
        r->line = rd.line;
        if ((rc = data_row(&rd, m->format, &c, r)))
            goto done;
    }
    if (!have_header)
        rc = ft__fail(st, FT_EINPUT, 0, "%s: empty file (no header line)", path);
    else if (m->nrows == 0)
        rc = ft__fail(st, FT_EINPUT, 0, "%s: no rows after the header", path);
done:
    for (int i = 0; i < rd.nprob; i++) {
        ft__free(rd.prob_names[i]);
        ft_problem_free(rd.probs[i]);
    }
    ft__free(rd.prob_names);
    ft__free(rd.probs);
    ft__free(text);
    if (rc) {
        ft_measured_free(m);
        return rc;
    }
    *out = m;
    return FT_OK;
}

/* ------------------------------------------------------------- statistics */

int ft_meas_held_out(const ft_measured *m, int i)
{
    if (m->format == FT_MEAS_MODELS)
        return 1;   /* whole networks check a model; calibration never fits them */
    if (m->format == FT_MEAS_GEMM || m->format == FT_MEAS_POINTWISE || m->format == FT_MEAS_ENERGY ||
        m->format == FT_MEAS_KERNELS)
        return i % 3 == 2;
    const char *name = m->rows[i].problem;
    /* rank of the problem among the distinct names m has, in name order */
    int rank = 0;
    for (int j = 0; j < m->nrows; j++) {
        const char *o = m->rows[j].problem;
        if (strcmp(o, name) >= 0)
            continue;
        int first = 1;   /* count each distinct name once: at its first row */
        for (int q = 0; q < j && first; q++)
            first = strcmp(m->rows[q].problem, o) != 0;
        rank += first;
    }
    return rank % 3 == 2;
}

void ft_meas_stats_of(const double *pred, const double *meas, int n, ft_meas_stats *out)
{
    ksum ape = {0, 0}, lr = {0, 0};
    double worst = -1;
    out->n = n;
    out->worst = -1;
    for (int i = 0; i < n; i++) {
        double e = fabs(pred[i] - meas[i]) / meas[i];
        ksum_add(&ape, e);
        ksum_add(&lr, log(pred[i] / meas[i]));
        if (e > worst) {
            worst = e;
            out->worst = i;
        }
    }
    out->mape = n ? 100.0 * ksum_value(&ape) / n : 0.0;
    out->gmean = n ? exp(ksum_value(&lr) / n) : 1.0;
}
