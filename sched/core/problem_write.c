/* problem_write.c - a problem back to contest JSON (ft_problem_to_json, ft_problem_write): numbers exact, names kept, one field a line. */
#include "core/core.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A number as JSON: an integer when x is one (exactly representable),
 * else a real (jansson prints reals with 17 significant digits: exact). */
static json_t *json_num(double x)
{
    if (x == floor(x) && fabs(x) < 9007199254740992.0)
        return json_integer((json_int_t)x);
    return json_real(x);
}

/* Append "  \"name\": VALUE" (VALUE compact) to the text in *buf, taking v. */
static int add_field(char **buf, size_t *len, const char *name, json_t *v, int last)
{
    if (!v)
        return -1;
    char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    json_decref(v);
    if (!text)
        return -1;
    size_t need = strlen(name) + strlen(text) + 16;
    char *nb = ft__realloc(*buf, *len + need);
    if (!nb) {
        ft__free(text);
        return -1;
    }
    *buf = nb;
    *len += (size_t)snprintf(nb + *len, need, "  \"%s\": %s%s\n", name, text, last ? "" : ",");
    ft__free(text);
    return 0;
}

/* A list of n names (get(p, i), NULL written as ""), or NULL when all are
 * NULL: *bad is set when out of memory. */
static json_t *names_json(const ft_problem *p, int n, const char *(*get)(const ft_problem *, int), int *bad)
{
    int any = 0;
    for (int i = 0; i < n && !any; i++)
        any = get(p, i) != NULL;
    if (!any || *bad)
        return NULL;
    json_t *l = json_array();
    for (int i = 0; i < n && l && !*bad; i++)
        *bad = json_array_append_new(l, json_string(get(p, i) ? get(p, i) : "")) != 0;
    if (!l || *bad) {
        *bad = 1;
        json_decref(l);
        return NULL;
    }
    return l;
}

static const char *op_name_of(const ft_problem *p, int i) { return p->ops[i].name; }
static const char *op_kind_of(const ft_problem *p, int i) { return p->ops[i].kind; }
static const char *tensor_name_of(const ft_problem *p, int i) { return p->tensors[i].name; }

char *ft_problem_to_json(const ft_problem *p)
{
    json_t *w = json_array(), *h = json_array(), *in = json_array(), *out = json_array();
    json_t *costs = json_array(), *types = json_array(), *native = json_array();
    int bad = !w || !h || !in || !out || !costs || !types || !native;
    for (int t = 0; t < p->ntensors && !bad; t++)
        bad = json_array_append_new(w, json_integer(p->tensors[t].width)) ||
              json_array_append_new(h, json_integer(p->tensors[t].height));
    for (int o = 0; o < p->nops && !bad; o++) {
        const ft_op *op = &p->ops[o];
        json_t *l = json_array();
        bad = !l;
        for (int i = 0; i < op->ninputs && !bad; i++)
            bad = json_array_append_new(l, json_integer(op->inputs[i]));
        bad |= json_array_append_new(in, l) || json_array_append_new(out, json_pack("[i]", op->output)) ||
               json_array_append_new(costs, json_num(op->base_cost)) ||
               json_array_append_new(types, json_string(ft_op_type_name(op->type)));
    }
    bad = bad || json_array_append_new(native, json_integer(p->native_w)) ||
          json_array_append_new(native, json_integer(p->native_h));
    json_t *opn = names_json(p, p->nops, op_name_of, &bad), *opk = names_json(p, p->nops, op_kind_of, &bad);
    json_t *tn = names_json(p, p->ntensors, tensor_name_of, &bad);
    json_t *imp = NULL;
    if (p->imported_target) {
        imp = p->imported_file ? json_pack("{s:s, s:s}", "target", p->imported_target, "file", p->imported_file)
                               : json_pack("{s:s}", "target", p->imported_target);
        bad |= !imp;
    }
    json_t *kern = NULL;
    if (p->op_kernels) {
        kern = json_array();
        bad |= !kern;
        for (int o = 0; o < p->nops && !bad; o++)
            bad = json_array_append_new(kern, json_integer(p->op_kernels[o]));
    }
    struct { const char *name; json_t *v; } f[] = {
        {"widths", w}, {"heights", h}, {"inputs", in}, {"outputs", out}, {"base_costs", costs}, {"op_types", types},
        {"fast_memory_capacity", json_num(p->capacity)}, {"slow_memory_bandwidth", json_num(p->bandwidth)},
        {"native_granularity", native}, {"op_names", opn}, {"op_kinds", opk}, {"tensor_names", tn},
        {"imported_for", imp}, {"op_kernels", kern}};
    int nf = (int)(sizeof f / sizeof f[0]);
    /* the optional lists: only those present, in this order */
    int kept = 0;
    for (int i = 0; i < nf; i++)
        if (f[i].v || i < 9)
            f[kept++] = f[i];
    nf = kept;
    size_t len = 2;
    char *buf = bad ? NULL : ft__malloc(4);
    if (buf)
        memcpy(buf, "{\n", 3);
    for (int i = 0; i < nf; i++) {
        /* add_field takes f[i].v whatever it returns */
        if (!buf)
            json_decref(f[i].v);
        else if (add_field(&buf, &len, f[i].name, f[i].v, i == nf - 1)) {
            ft__free(buf);
            buf = NULL;
        }
    }
    if (!buf)
        return NULL;
    char *nb = ft__realloc(buf, len + 3);
    if (!nb) {
        ft__free(buf);
        return NULL;
    }
    memcpy(nb + len, "}\n", 3);
    return nb;
}

int ft_problem_write(const ft_problem *p, const char *path, ft_status *st)
{
    ft_status_clear(st);
    char *text = ft_problem_to_json(p);
    if (!text)
        return ft__fail(st, FT_ENOMEM, 0, "%s: out of memory", path);
    int rc = ft_write_atomic(text, path, st);
    ft__free(text);
    return rc;
}
