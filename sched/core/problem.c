/* problem.c - the problem model: contest JSON loading, validation (SPEC 1), derived graph facts (the writer: problem_write.c). */
#include "core/core.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NAME(p) ((p)->name ? (p)->name : "problem")

void ft_problem_free(ft_problem *p)
{
    if (!p)
        return;
    for (int i = 0; i < p->nops; i++) {
        ft__free(p->ops[i].inputs);
        ft__free(p->ops[i].name);
        ft__free(p->ops[i].kind);
    }
    for (int t = 0; t < p->ntensors; t++) {
        ft__free(p->tensors[t].consumers);
        ft__free(p->tensors[t].name);
    }
    ft__free(p->ops);
    ft__free(p->tensors);
    ft__free(p->topo);
    ft__free(p->graph_inputs);
    ft__free(p->graph_outputs);
    ft__free(p->name);
    ft__free(p->imported_target);
    ft__free(p->imported_file);
    ft__free(p->op_kernels);
    ft__free(p);
}

const char *ft_problem_imported_for(const ft_problem *p)
{
    return p->imported_target;
}

const char *ft_problem_imported_file(const ft_problem *p)
{
    return p->imported_target ? p->imported_file : NULL;
}

/* op_types names, indexed by ft_op_type */
static const char *const op_type_names[] = {"MatMul", "Pointwise", "Layout"};
#define NOPTYPES ((int)(sizeof op_type_names / sizeof op_type_names[0]))

const char *ft_op_type_name(ft_op_type t)
{
    return (int)t >= 0 && (int)t < NOPTYPES ? op_type_names[t] : "unknown";
}

int64_t ft_tensor_size(const ft_problem *p, int t)
{
    return p->tensors[t].width * p->tensors[t].height;
}

static void clear_derived(ft_problem *p)
{
    for (int t = 0; t < p->ntensors; t++) {
        ft__free(p->tensors[t].consumers);
        p->tensors[t].consumers = NULL;
        p->tensors[t].nconsumers = 0;
        p->tensors[t].producer = -1;
    }
    ft__free(p->topo);
    ft__free(p->graph_inputs);
    ft__free(p->graph_outputs);
    p->topo = p->graph_inputs = p->graph_outputs = NULL;
    p->ngraph_inputs = p->ngraph_outputs = 0;
}

int ft__check_problem_size(const char *name, long long nops, long long ntensors, ft_status *st)
{
    if (nops > FT_MAX_OPS)
        return ft__fail(st, FT_EINPUT, 0, "%s: op_types: %lld ops, the limit is %d (FT_MAX_OPS)", name, nops, FT_MAX_OPS);
    if (ntensors > FT_MAX_TENSORS)
        return ft__fail(st, FT_EINPUT, 0, "%s: widths: %lld tensors, the limit is %d (FT_MAX_TENSORS)", name, ntensors,
                        FT_MAX_TENSORS);
    return FT_OK;
}

/* Checks of SPEC section 1 that do not depend on the graph structure. */
static int check_values(ft_problem *p, ft_status *st)
{
    const char *n = NAME(p);
    int64_t total = 0;
    for (int t = 0; t < p->ntensors; t++) {
        const ft_tensor *x = &p->tensors[t];
        if (x->width <= 0)
            return ft__fail(st, FT_EINPUT, 0, "%s: widths[%d] is %lld, must be positive", n, t, (long long)x->width);
        if (x->height <= 0)
            return ft__fail(st, FT_EINPUT, 0, "%s: heights[%d] is %lld, must be positive", n, t, (long long)x->height);
        if (x->width > FT_MAX_DIM || x->height > FT_MAX_DIM)
            return ft__fail(st, FT_EINPUT, 0, "%s: %s[%d]: %lld elements, the limit is %lld (FT_MAX_DIM)", n,
                            x->width > FT_MAX_DIM ? "widths" : "heights", t,
                            (long long)(x->width > FT_MAX_DIM ? x->width : x->height), (long long)FT_MAX_DIM);
        int64_t sz;
        if (__builtin_mul_overflow(x->width, x->height, &sz) ||
            __builtin_add_overflow(total, sz, &total))
            return ft__fail(st, FT_EINPUT, 0, "%s: widths[%d] x heights[%d] (%lld x %lld) overflows 64 bits", n, t, t,
                            (long long)x->width, (long long)x->height);
    }
    for (int o = 0; o < p->nops; o++)
        if (!(p->ops[o].base_cost > 0) || !isfinite(p->ops[o].base_cost))
            return ft__fail(st, FT_EINPUT, 0, "%s: base_costs[%d] is %g, must be positive", n, o, p->ops[o].base_cost);
    if (!(p->capacity > 0) || !isfinite(p->capacity))
        return ft__fail(st, FT_EINPUT, 0, "%s: fast_memory_capacity is %g, must be positive", n, p->capacity);
    if (!(p->bandwidth > 0) || !isfinite(p->bandwidth))
        return ft__fail(st, FT_EINPUT, 0, "%s: slow_memory_bandwidth is %g, must be positive", n, p->bandwidth);
    if (p->native_w <= 0)
        return ft__fail(st, FT_EINPUT, 0, "%s: native_granularity[0] is %lld, must be positive", n, (long long)p->native_w);
    if (p->native_h <= 0)
        return ft__fail(st, FT_EINPUT, 0, "%s: native_granularity[1] is %lld, must be positive", n, (long long)p->native_h);
    for (int i = 0; i < 2; i++) {
        int64_t v = i ? p->native_h : p->native_w;
        if (v > FT_MAX_DIM)
            return ft__fail(st, FT_EINPUT, 0, "%s: native_granularity[%d]: %lld, the limit is %lld (FT_MAX_DIM)", n, i,
                            (long long)v, (long long)FT_MAX_DIM);
    }
    if (p->native_k > FT_MAX_DIM)
        return ft__fail(st, FT_EINPUT, 0, "%s: native k: %lld, the limit is %lld (FT_MAX_DIM)", n, (long long)p->native_k,
                        (long long)FT_MAX_DIM);
    if (p->native_k < 0)
        return ft__fail(st, FT_EINPUT, 0, "%s: native k is %lld, must be positive (or 0 for native_granularity[0])", n,
                        (long long)p->native_k);
    const ft_timing *tm = &p->timing;
    if (!(tm->write_bandwidth >= 0) || !isfinite(tm->write_bandwidth))
        return ft__fail(st, FT_EINPUT, 0, "%s: write bandwidth is %g, must be positive (or 0 for slow_memory_bandwidth)", n,
                        tm->write_bandwidth);
    if (!(tm->transfer_latency >= 0) || !isfinite(tm->transfer_latency))
        return ft__fail(st, FT_EINPUT, 0, "%s: transfer latency is %g, must be 0 or more", n, tm->transfer_latency);
    if (!(tm->launch_overhead >= 0) || !isfinite(tm->launch_overhead))
        return ft__fail(st, FT_EINPUT, 0, "%s: launch overhead is %g, must be 0 or more", n, tm->launch_overhead);
    if (tm->overlap != FT_OVERLAP_STEP && tm->overlap != FT_OVERLAP_NONE && tm->overlap != FT_OVERLAP_PIPELINE)
        return ft__fail(st, FT_EINPUT, 0, "%s: overlap mode %d is not one of ft_overlap", n, (int)tm->overlap);
    if (!(tm->step_overhead >= 0) || !isfinite(tm->step_overhead))
        return ft__fail(st, FT_EINPUT, 0, "%s: step overhead is %g, must be 0 or more", n, tm->step_overhead);
    if (!(tm->tile_overhead >= 0) || !isfinite(tm->tile_overhead))
        return ft__fail(st, FT_EINPUT, 0, "%s: tile overhead is %g, must be 0 or more", n, tm->tile_overhead);
    if (!(tm->matmul_tile_overhead >= 0) || !isfinite(tm->matmul_tile_overhead))
        return ft__fail(st, FT_EINPUT, 0, "%s: MatMul tile overhead is %g, must be 0 or more", n, tm->matmul_tile_overhead);
    if (!(tm->cache_capacity >= 0) || !isfinite(tm->cache_capacity))
        return ft__fail(st, FT_EINPUT, 0, "%s: cache capacity is %g, must be 0 or more", n, tm->cache_capacity);
    if (!(tm->cache_resident >= 0) || !isfinite(tm->cache_resident))
        return ft__fail(st, FT_EINPUT, 0, "%s: cache resident part is %g, must be 0 or more", n, tm->cache_resident);
    if (tm->cache_capacity > 0 && (!(tm->cache_bandwidth > 0) || !isfinite(tm->cache_bandwidth)))
        return ft__fail(st, FT_EINPUT, 0, "%s: cache bandwidth is %g, must be positive with a cache", n, tm->cache_bandwidth);
    if (tm->units < 0 || tm->units > FT_MAX_UNITS)
        return ft__fail(st, FT_EINPUT, 0, "%s: units is %d, must be 1 to %d", n, tm->units, FT_MAX_UNITS);
    return FT_OK;
}

int64_t ft_native_k(const ft_problem *p)
{
    return p->native_k > 0 ? p->native_k : p->native_w;
}

static int check_shapes(ft_problem *p, ft_status *st)
{
    const char *n = NAME(p);
    for (int o = 0; o < p->nops; o++) {
        ft_op *op = &p->ops[o];
        const ft_tensor *O = &p->tensors[op->output];
        op->k = 0;
        if ((int)op->type < 0 || (int)op->type >= NOPTYPES)
            return ft__fail(st, FT_EINPUT, 0, "%s: op_types[%d] is type %d, not MatMul, Pointwise or Layout", n, o, (int)op->type);
        if (op->type == FT_OP_MATMUL) {
            if (op->ninputs != 2)
                return ft__fail(st, FT_EINPUT, 0, "%s: inputs[%d]: MatMul op %d has %d inputs, needs 2 [L, R]", n, o, o, op->ninputs);
            const ft_tensor *L = &p->tensors[op->inputs[0]], *R = &p->tensors[op->inputs[1]];
            if (L->height != O->height)
                return ft__fail(st, FT_EINPUT, 0, "%s: inputs[%d][0]: MatMul op %d: L (tensor %d) has height %lld, output (tensor %d) has height %lld",
                                n, o, o, op->inputs[0], (long long)L->height, op->output, (long long)O->height);
            if (R->width != O->width)
                return ft__fail(st, FT_EINPUT, 0, "%s: inputs[%d][1]: MatMul op %d: R (tensor %d) has width %lld, output (tensor %d) has width %lld",
                                n, o, o, op->inputs[1], (long long)R->width, op->output, (long long)O->width);
            if (L->width != R->height)
                return ft__fail(st, FT_EINPUT, 0, "%s: inputs[%d]: MatMul op %d: L (tensor %d) has width %lld, R (tensor %d) has height %lld",
                                n, o, o, op->inputs[0], (long long)L->width, op->inputs[1], (long long)R->height);
            op->k = L->width;
        } else if (op->type == FT_OP_LAYOUT) {
            /* any two shapes: SPEC 4 maps O's regions onto X proportionally */
            if (op->ninputs != 1)
                return ft__fail(st, FT_EINPUT, 0, "%s: inputs[%d]: Layout op %d has %d inputs, needs exactly 1 [X]", n, o, o, op->ninputs);
        } else {
            if (op->ninputs < 1)
                return ft__fail(st, FT_EINPUT, 0, "%s: inputs[%d]: Pointwise op %d has no inputs", n, o, o);
            for (int i = 0; i < op->ninputs; i++) {
                const ft_tensor *I = &p->tensors[op->inputs[i]];
                if (I->width != O->width || I->height != O->height)
                    return ft__fail(st, FT_EINPUT, 0, "%s: inputs[%d][%d]: Pointwise op %d: tensor %d is %lldx%lld (w x h), output tensor %d is %lldx%lld",
                                    n, o, i, o, op->inputs[i], (long long)I->width, (long long)I->height, op->output,
                                    (long long)O->width, (long long)O->height);
            }
        }
    }
    return FT_OK;
}

static int push_int(int **arr, int *n, int v)
{
    int *na = ft__realloc(*arr, sizeof(int) * (size_t)(*n + 1));
    if (!na)
        return -1;
    na[(*n)++] = v;
    *arr = na;
    return 0;
}

int ft_problem_finish(ft_problem *p, ft_status *st)
{
    const char *n = NAME(p);
    ft_status_clear(st);
    clear_derived(p);
    if (p->nops < 1)
        return ft__fail(st, FT_EINPUT, 0, "%s: op_types is empty: a problem needs at least one op", n);
    if (p->ntensors < 1)
        return ft__fail(st, FT_EINPUT, 0, "%s: widths is empty: a problem needs tensors", n);
    int rc = ft__check_problem_size(n, (long long)p->nops, (long long)p->ntensors, st);
    if (rc)
        return rc;
    rc = check_values(p, st);
    if (rc)
        return rc;
    /* indices, producers */
    for (int o = 0; o < p->nops; o++) {
        ft_op *op = &p->ops[o];
        if (op->output < 0 || op->output >= p->ntensors)
            return ft__fail(st, FT_EINPUT, 0, "%s: outputs[%d][0] is tensor %d, out of range (%d tensors)", n, o, op->output, p->ntensors);
        for (int i = 0; i < op->ninputs; i++)
            if (op->inputs[i] < 0 || op->inputs[i] >= p->ntensors)
                return ft__fail(st, FT_EINPUT, 0, "%s: inputs[%d][%d] is tensor %d, out of range (%d tensors)", n, o, i, op->inputs[i], p->ntensors);
        ft_tensor *O = &p->tensors[op->output];
        if (O->producer >= 0)
            return ft__fail(st, FT_EINPUT, 0, "%s: outputs[%d][0]: tensor %d is produced by ops %d and %d", n, o, op->output, O->producer, o);
        O->producer = o;
    }
    for (int o = 0; o < p->nops; o++) {
        ft_op *op = &p->ops[o];
        for (int i = 0; i < op->ninputs; i++) {
            if (op->inputs[i] == op->output)
                return ft__fail(st, FT_EINPUT, 0, "%s: inputs[%d][%d]: op %d consumes its own output (tensor %d)", n, o, i, o, op->output);
            ft_tensor *T = &p->tensors[op->inputs[i]];
            if (T->nconsumers == 0 || T->consumers[T->nconsumers - 1] != o)
                if (push_int(&T->consumers, &T->nconsumers, o))
                    return ft__fail(st, FT_ENOMEM, 0, "%s: out of memory", n);
        }
    }
    rc = check_shapes(p, st);
    if (rc)
        return rc;
    /* topological order (Kahn, FIFO in op index order) */
    int *indeg = ft__calloc((size_t)p->nops, sizeof(int));
    p->topo = ft__malloc(sizeof(int) * (size_t)p->nops);
    if (!indeg || !p->topo) {
        ft__free(indeg);
        return ft__fail(st, FT_ENOMEM, 0, "%s: out of memory", n);
    }
    for (int o = 0; o < p->nops; o++)
        for (int i = 0; i < p->ops[o].ninputs; i++) {
            int pr = p->tensors[p->ops[o].inputs[i]].producer;
            if (pr >= 0)
                indeg[o]++;
        }
    int head = 0, tail = 0;
    for (int o = 0; o < p->nops; o++)
        if (indeg[o] == 0)
            p->topo[tail++] = o;
    while (head < tail) {
        int o = p->topo[head++];
        const ft_tensor *T = &p->tensors[p->ops[o].output];
        for (int c = 0; c < T->nconsumers; c++) {
            int q = T->consumers[c];
            /* q may consume the tensor several times: count each use */
            for (int i = 0; i < p->ops[q].ninputs; i++)
                if (p->ops[q].inputs[i] == p->ops[o].output && --indeg[q] == 0)
                    p->topo[tail++] = q;
        }
    }
    if (tail < p->nops) {
        int bad = 0;
        while (indeg[bad] == 0)
            bad++;
        ft__free(indeg);
        return ft__fail(st, FT_EINPUT, 0, "%s: inputs: the graph has a cycle through op %d (%d of %d ops are on or after a cycle)", n, bad,
                        p->nops - tail, p->nops);
    }
    ft__free(indeg);
    for (int t = 0; t < p->ntensors; t++) {
        const ft_tensor *T = &p->tensors[t];
        if (T->producer < 0 && push_int(&p->graph_inputs, &p->ngraph_inputs, t))
            return ft__fail(st, FT_ENOMEM, 0, "%s: out of memory", n);
        if (T->nconsumers == 0 && push_int(&p->graph_outputs, &p->ngraph_outputs, t))
            return ft__fail(st, FT_ENOMEM, 0, "%s: out of memory", n);
    }
    return FT_OK;
}

/* ------------------------------------------------------------ JSON */

static const char *type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "a list";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a number";
    case JSON_TRUE: case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    }
    return "?";
}

/* Fetch a required array field. */
static int get_array(json_t *root, const char *n, const char *field, json_t **out, ft_status *st)
{
    json_t *v = json_object_get(root, field);
    if (!v)
        return ft__fail(st, FT_EINPUT, 0, "%s: missing field %s", n, field);
    if (!json_is_array(v))
        return ft__fail(st, FT_EINPUT, 0, "%s: %s is %s, must be a list", n, field, type_name(v));
    *out = v;
    return FT_OK;
}

/* An integer (or a real with an integral value) into *out. */
static int get_int(json_t *v, int64_t *out)
{
    if (json_is_integer(v)) {
        *out = (int64_t)json_integer_value(v);
        return 0;
    }
    if (json_is_real(v)) {
        double d = json_real_value(v);
        if (d == floor(d) && fabs(d) < 9.2e18) {
            *out = (int64_t)d;
            return 0;
        }
    }
    return -1;
}

static int get_number(json_t *root, const char *n, const char *field, double *out, ft_status *st)
{
    json_t *v = json_object_get(root, field);
    if (!v)
        return ft__fail(st, FT_EINPUT, 0, "%s: missing field %s", n, field);
    if (!json_is_number(v))
        return ft__fail(st, FT_EINPUT, 0, "%s: %s is %s, must be a number", n, field, type_name(v));
    *out = json_number_value(v);
    return FT_OK;
}

/* An index list like inputs[o] into a malloc'd int array. */
static int get_index_list(json_t *arr, const char *n, const char *field, int o, int **out, int *count, ft_status *st)
{
    if (!json_is_array(arr))
        return ft__fail(st, FT_EINPUT, 0, "%s: %s[%d] is %s, must be a list of tensor indices", n, field, o, type_name(arr));
    size_t len = json_array_size(arr);
    *out = ft__malloc(sizeof(int) * (len ? len : 1));
    if (!*out)
        return ft__fail(st, FT_ENOMEM, 0, "%s: out of memory", n);
    *count = (int)len;
    for (size_t i = 0; i < len; i++) {
        int64_t x;
        json_t *e = json_array_get(arr, i);
        if (get_int(e, &x))
            return ft__fail(st, FT_EINPUT, 0, "%s: %s[%d][%zu] is %s, must be a tensor index", n, field, o, i, type_name(e));
        if (x < 0 || x > INT32_MAX)
            return ft__fail(st, FT_EINPUT, 0, "%s: %s[%d][%zu] is tensor %lld, out of range", n, field, o, i, (long long)x);
        (*out)[i] = (int)x;
    }
    return FT_OK;
}

/* The optional list `field` of `count` strings (op_names, op_kinds,
 * tensor_names; `per` names what it has one entry per) into *out: a
 * malloc'd array of malloc'd copies, or NULL when the field is absent or
 * null.  FT_OK, FT_EINPUT naming the field (and index) or FT_ENOMEM. */
static int get_names(json_t *root, const char *n, const char *field, size_t count, const char *per, char ***out,
                     ft_status *st)
{
    json_t *v = json_object_get(root, field);
    *out = NULL;
    if (!v || json_is_null(v))
        return FT_OK;
    if (!json_is_array(v))
        return ft__fail(st, FT_EINPUT, 0, "%s: %s: expected a list of strings, got %s", n, field, type_name(v));
    if (json_array_size(v) != count)
        return ft__fail(st, FT_EINPUT, 0, "%s: %s has %zu entries, expected %zu (one per %s)", n, field,
                        json_array_size(v), count, per);
    for (size_t i = 0; i < count; i++) {
        json_t *e = json_array_get(v, i);
        if (!json_is_string(e))
            return ft__fail(st, FT_EINPUT, 0, "%s: %s[%zu]: expected a string, got %s", n, field, i, type_name(e));
    }
    char **names = ft__calloc(count ? count : 1, sizeof *names);
    if (!names)
        return ft__fail(st, FT_ENOMEM, 0, "%s: out of memory", n);
    for (size_t i = 0; i < count; i++)
        if (!(names[i] = ft__strdup(json_string_value(json_array_get(v, i))))) {
            while (i-- > 0)
                ft__free(names[i]);
            ft__free(names);
            return ft__fail(st, FT_ENOMEM, 0, "%s: out of memory", n);
        }
    *out = names;
    return FT_OK;
}

/* Read op_names, op_kinds and tensor_names into p's ops and tensors. */
static int names_from_json(json_t *root, ft_problem *p, ft_status *st)
{
    const char *n = NAME(p);
    char **names;
    int rc;
    if ((rc = get_names(root, n, "op_names", (size_t)p->nops, "op", &names, st)))
        return rc;
    for (int o = 0; names && o < p->nops; o++)
        p->ops[o].name = names[o];
    ft__free(names);
    if ((rc = get_names(root, n, "op_kinds", (size_t)p->nops, "op", &names, st)))
        return rc;
    for (int o = 0; names && o < p->nops; o++)
        p->ops[o].kind = names[o];
    ft__free(names);
    if ((rc = get_names(root, n, "tensor_names", (size_t)p->ntensors, "tensor", &names, st)))
        return rc;
    for (int t = 0; names && t < p->ntensors; t++)
        p->tensors[t].name = names[t];
    ft__free(names);
    return FT_OK;
}

/* Read the optional imported_for {"target": NAME, "file": PATH} into
 * p->imported_target and p->imported_file. */
static int imported_from_json(json_t *root, ft_problem *p, ft_status *st)
{
    const char *n = NAME(p);
    json_t *v = json_object_get(root, "imported_for");
    if (!v || json_is_null(v))
        return FT_OK;
    if (!json_is_object(v))
        return ft__fail(st, FT_EINPUT, 0, "%s: imported_for: expected an object {\"target\": NAME, \"file\": PATH}, got %s", n,
                        type_name(v));
    json_t *t = json_object_get(v, "target"), *f = json_object_get(v, "file");
    if (!json_is_string(t) || !*json_string_value(t))
        return ft__fail(st, FT_EINPUT, 0, "%s: imported_for.target: expected a non-empty string, got %s", n,
                        t ? json_is_string(t) ? "an empty string" : type_name(t) : "nothing");
    if (f && !json_is_null(f) && !json_is_string(f))
        return ft__fail(st, FT_EINPUT, 0, "%s: imported_for.file: expected a string, got %s", n, type_name(f));
    const char *key;
    json_t *member;
    json_object_foreach(v, key, member) {
        if (strcmp(key, "target") != 0 && strcmp(key, "file") != 0)
            return ft__fail(st, FT_EINPUT, 0, "%s: imported_for.%s: unknown member (target and file only)", n, key);
    }
    p->imported_target = ft__strdup(json_string_value(t));
    if (json_is_string(f))
        p->imported_file = ft__strdup(json_string_value(f));
    if (!p->imported_target || (json_is_string(f) && !p->imported_file))
        return ft__fail(st, FT_ENOMEM, 0, "%s: out of memory", n);
    return FT_OK;
}

/* Read the optional op_kernels (one kernel index per op, 0 .. nops - 1)
 * into p->op_kernels. */
static int kernels_from_json(json_t *root, ft_problem *p, ft_status *st)
{
    const char *n = NAME(p);
    json_t *v = json_object_get(root, "op_kernels");
    if (!v || json_is_null(v))
        return FT_OK;
    if (!json_is_array(v))
        return ft__fail(st, FT_EINPUT, 0, "%s: op_kernels: expected a list of kernel indices, got %s", n, type_name(v));
    if (json_array_size(v) != (size_t)p->nops)
        return ft__fail(st, FT_EINPUT, 0, "%s: op_kernels has %zu entries, expected %d (one per op)", n,
                        json_array_size(v), p->nops);
    if (!(p->op_kernels = ft__malloc(sizeof(int) * ((size_t)p->nops + 1))))
        return ft__fail(st, FT_ENOMEM, 0, "%s: out of memory", n);
    for (int o = 0; o < p->nops; o++) {
        int64_t x;
        json_t *e = json_array_get(v, (size_t)o);
        if (get_int(e, &x))
            return ft__fail(st, FT_EINPUT, 0, "%s: op_kernels[%d] is %s, must be a kernel index", n, o, type_name(e));
        if (x < 0 || x >= p->nops)
            return ft__fail(st, FT_EINPUT, 0, "%s: op_kernels[%d] is %lld, out of range (0 to %d)", n, o, (long long)x,
                            p->nops - 1);
        p->op_kernels[o] = (int)x;
    }
    return FT_OK;
}

static int from_json(json_t *root, ft_problem *p, ft_status *st)
{
    const char *n = NAME(p);
    json_t *widths, *heights, *inputs, *outputs, *costs, *types, *native;
    int rc;
    if (!json_is_object(root))
        return ft__fail(st, FT_EINPUT, 0, "%s: top level is %s, must be an object", n, type_name(root));
    if ((rc = get_array(root, n, "widths", &widths, st)) || (rc = get_array(root, n, "heights", &heights, st)) ||
        (rc = get_array(root, n, "inputs", &inputs, st)) || (rc = get_array(root, n, "outputs", &outputs, st)) ||
        (rc = get_array(root, n, "base_costs", &costs, st)) || (rc = get_array(root, n, "op_types", &types, st)) ||
        (rc = get_number(root, n, "fast_memory_capacity", &p->capacity, st)) ||
        (rc = get_number(root, n, "slow_memory_bandwidth", &p->bandwidth, st)) ||
        (rc = get_array(root, n, "native_granularity", &native, st)))
        return rc;
    size_t nt = json_array_size(widths), no = json_array_size(types);
    if (json_array_size(heights) != nt)
        return ft__fail(st, FT_EINPUT, 0, "%s: heights has %zu entries, widths has %zu", n, json_array_size(heights), nt);
    struct { json_t *a; const char *f; } perop[] = {{inputs, "inputs"}, {outputs, "outputs"}, {costs, "base_costs"}};
    for (size_t i = 0; i < 3; i++)
        if (json_array_size(perop[i].a) != no)
            return ft__fail(st, FT_EINPUT, 0, "%s: %s has %zu entries, op_types has %zu", n, perop[i].f, json_array_size(perop[i].a), no);
    if (json_array_size(native) != 2)
        return ft__fail(st, FT_EINPUT, 0, "%s: native_granularity has %zu entries, must be [width, height]", n, json_array_size(native));
    if ((rc = ft__check_problem_size(n, (long long)no, (long long)nt, st)))
        return rc;
    for (size_t i = 0; i < 2; i++) {
        int64_t x;
        if (get_int(json_array_get(native, i), &x))
            return ft__fail(st, FT_EINPUT, 0, "%s: native_granularity[%zu] is %s, must be an integer", n, i, type_name(json_array_get(native, i)));
        if (i == 0)
            p->native_w = x;
        else
            p->native_h = x;
    }
    p->tensors = ft__calloc(nt ? nt : 1, sizeof(ft_tensor));
    p->ops = ft__calloc(no ? no : 1, sizeof(ft_op));
    if (!p->tensors || !p->ops)
        return ft__fail(st, FT_ENOMEM, 0, "%s: out of memory", n);
    p->ntensors = (int)nt;
    for (size_t t = 0; t < nt; t++) {
        json_t *w = json_array_get(widths, t), *h = json_array_get(heights, t);
        if (get_int(w, &p->tensors[t].width))
            return ft__fail(st, FT_EINPUT, 0, "%s: widths[%zu] is %s, must be an integer", n, t, type_name(w));
        if (get_int(h, &p->tensors[t].height))
            return ft__fail(st, FT_EINPUT, 0, "%s: heights[%zu] is %s, must be an integer", n, t, type_name(h));
        p->tensors[t].producer = -1;
    }
    for (size_t o = 0; o < no; o++) {
        ft_op *op = &p->ops[o];
        p->nops = (int)o + 1; /* so that free() releases what was parsed */
        json_t *ty = json_array_get(types, o), *c = json_array_get(costs, o);
        if (!json_is_string(ty))
            return ft__fail(st, FT_EINPUT, 0, "%s: op_types[%zu] is %s, must be \"MatMul\", \"Pointwise\" or \"Layout\"", n, o, type_name(ty));
        int known = 0;
        for (int k = 0; k < NOPTYPES && !known; k++)
            if (strcmp(json_string_value(ty), op_type_names[k]) == 0) {
                op->type = (ft_op_type)k;
                known = 1;
            }
        if (!known)
            return ft__fail(st, FT_EINPUT, 0, "%s: op_types[%zu] is \"%s\", an unknown op type (MatMul, Pointwise or Layout)", n, o,
                            json_string_value(ty));
        if (!json_is_number(c))
            return ft__fail(st, FT_EINPUT, 0, "%s: base_costs[%zu] is %s, must be a number", n, o, type_name(c));
        op->base_cost = json_number_value(c);
        if ((rc = get_index_list(json_array_get(inputs, o), n, "inputs", (int)o, &op->inputs, &op->ninputs, st)))
            return rc;
        int *outs = NULL, nout = 0;
        rc = get_index_list(json_array_get(outputs, o), n, "outputs", (int)o, &outs, &nout, st);
        if (!rc && nout != 1)
            rc = ft__fail(st, FT_EINPUT, 0, "%s: outputs[%zu] has %d entries, an op has exactly one output", n, o, nout);
        op->output = rc ? 0 : outs[0];
        ft__free(outs);
        if (rc)
            return rc;
    }
    if ((rc = names_from_json(root, p, st)) || (rc = imported_from_json(root, p, st)) ||
        (rc = kernels_from_json(root, p, st)))
        return rc;
    return ft_problem_finish(p, st);
}

int ft_problem_parse(const char *text, const char *name, ft_problem **out, ft_status *st)
{
    ft_status_clear(st);
    *out = NULL;
    ft_problem *p = ft__calloc(1, sizeof *p);
    if (!p)
        return ft__fail(st, FT_ENOMEM, 0, "%s: out of memory", name ? name : "problem");
    p->name = ft__strdup(name ? name : "problem");
    if (!p->name) {
        ft_problem_free(p);
        return ft__fail(st, FT_ENOMEM, 0, "%s: out of memory", name ? name : "problem");
    }
    void *root;
    int rc = ft__json_parse(text, NAME(p), &root, st);
    if (!rc) {
        rc = from_json(root, p, st);
        json_decref(root);
    }
    if (rc) {
        ft_problem_free(p);
        return rc;
    }
    *out = p;
    return FT_OK;
}

int ft_problem_load(const char *path, ft_problem **out, ft_status *st)
{
    char *text;
    ft_status_clear(st);
    *out = NULL;
    int rc = ft_read_file_max(path, FT_MAX_PROBLEM_BYTES, "FT_MAX_PROBLEM_BYTES", &text, st);
    if (rc)
        return rc;
    rc = ft_problem_parse(text, path, out, st);
    ft__free(text);
    return rc;
}

ft_problem *ft_problem_clone(const ft_problem *p)
{
    ft_problem *c = ft__calloc(1, sizeof *c);
    if (!c)
        return NULL;
    *c = *p;
    c->name = NULL;
    c->imported_target = c->imported_file = NULL;
    c->op_kernels = NULL;
    c->tensors = NULL;
    c->ops = NULL;
    c->topo = c->graph_inputs = c->graph_outputs = NULL;
    c->ntensors = c->nops = c->ngraph_inputs = c->ngraph_outputs = 0;
    c->name = ft__strdup(p->name);
    c->tensors = ft__calloc((size_t)p->ntensors + 1, sizeof(ft_tensor));
    c->ops = ft__calloc((size_t)p->nops + 1, sizeof(ft_op));
    if (!c->tensors || !c->ops || (p->name && !c->name))
        goto oom;
    if ((p->imported_target && !(c->imported_target = ft__strdup(p->imported_target))) ||
        (p->imported_file && !(c->imported_file = ft__strdup(p->imported_file))))
        goto oom;
    if (p->op_kernels) {
        if (!(c->op_kernels = ft__malloc(sizeof(int) * ((size_t)p->nops + 1))))
            goto oom;
        memcpy(c->op_kernels, p->op_kernels, sizeof(int) * (size_t)p->nops);
    }
    for (int t = 0; t < p->ntensors; t++) {
        c->tensors[t] = p->tensors[t];
        c->tensors[t].consumers = NULL;
        c->tensors[t].name = NULL;
        c->ntensors = t + 1;
        if (p->tensors[t].name && !(c->tensors[t].name = ft__strdup(p->tensors[t].name)))
            goto oom;
        if (p->tensors[t].nconsumers) {
            c->tensors[t].consumers = ft__malloc(sizeof(int) * (size_t)p->tensors[t].nconsumers);
            if (!c->tensors[t].consumers)
                goto oom;
            memcpy(c->tensors[t].consumers, p->tensors[t].consumers, sizeof(int) * (size_t)p->tensors[t].nconsumers);
        }
    }
    for (int o = 0; o < p->nops; o++) {
        c->ops[o] = p->ops[o];
        c->ops[o].inputs = NULL;
        c->ops[o].name = c->ops[o].kind = NULL;
        c->nops = o + 1;
        c->ops[o].inputs = ft__malloc(sizeof(int) * (size_t)(p->ops[o].ninputs + 1));
        if (!c->ops[o].inputs)
            goto oom;
        if ((p->ops[o].name && !(c->ops[o].name = ft__strdup(p->ops[o].name))) ||
            (p->ops[o].kind && !(c->ops[o].kind = ft__strdup(p->ops[o].kind))))
            goto oom;
        memcpy(c->ops[o].inputs, p->ops[o].inputs, sizeof(int) * (size_t)p->ops[o].ninputs);
    }
    c->topo = ft__malloc(sizeof(int) * ((size_t)p->nops + 1));
    c->graph_inputs = ft__malloc(sizeof(int) * ((size_t)p->ngraph_inputs + 1));
    c->graph_outputs = ft__malloc(sizeof(int) * ((size_t)p->ngraph_outputs + 1));
    if (!c->topo || !c->graph_inputs || !c->graph_outputs)
        goto oom;
    if (p->topo)
        memcpy(c->topo, p->topo, sizeof(int) * (size_t)p->nops);
    memcpy(c->graph_inputs, p->graph_inputs ? p->graph_inputs : c->graph_inputs, sizeof(int) * (size_t)p->ngraph_inputs);
    memcpy(c->graph_outputs, p->graph_outputs ? p->graph_outputs : c->graph_outputs, sizeof(int) * (size_t)p->ngraph_outputs);
    c->ngraph_inputs = p->ngraph_inputs;
    c->ngraph_outputs = p->ngraph_outputs;
    return c;
oom:
    ft_problem_free(c);
    return NULL;
}
