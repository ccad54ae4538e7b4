/* schedule.c - the schedule model: JSON loading and writing, and the structural rules of SPEC 2. */
#define _POSIX_C_SOURCE 200809L
#include "core/core.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#define SNAME(s) ((s)->name ? (s)->name : "schedule")

ft_schedule *ft_schedule_new(int n)
{
    ft_schedule *s = ft__calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->sg = ft__calloc((size_t)(n > 0 ? n : 1), sizeof(ft_subgraph));
    if (!s->sg) {
        ft__free(s);
        return NULL;
    }
    s->nsubgraphs = n;
    s->len_granularities = s->len_retain = n;
    s->len_orders = s->len_latencies = -1;
    return s;
}

void ft_schedule_free(ft_schedule *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->nsubgraphs; i++) {
        ft__free(s->sg[i].ops);
        ft__free(s->sg[i].retain);
        ft__free(s->sg[i].order);
        ft__free(s->sg[i].label);
    }
    ft__free(s->sg);
    ft__free(s->name);
    ft__free(s);
}

static int set_ints(int **dst, int *ndst, const int *src, int n)
{
    int *a = ft__malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    if (!a)
        return FT_ENOMEM;
    if (n > 0)
        memcpy(a, src, sizeof(int) * (size_t)n);
    ft__free(*dst);
    *dst = a;
    *ndst = n;
    return FT_OK;
}

int ft_subgraph_set_ops(ft_subgraph *g, const int *ops, int nops)
{
    return set_ints(&g->ops, &g->nops, ops, nops);
}

int ft_subgraph_set_retain(ft_subgraph *g, const int *tensors, int n)
{
    return set_ints(&g->retain, &g->nretain, tensors, n);
}

/* ------------------------------------------------------------ JSON in */

static int to_index(json_t *v, int *out)
{
    double d;
    if (json_is_integer(v))
        d = (double)json_integer_value(v);
    else if (json_is_real(v) && json_real_value(v) == floor(json_real_value(v)))
        d = json_real_value(v);
    else
        return -1;
    /* out-of-range indices stay detectable by the validator */
    *out = (d < -1 || d > INT32_MAX) ? -1 : (int)d;
    return 0;
}

/* A list of at most max `what` (ops, tensors) named limit_name
 * (fusetile/limits.h). */
static int int_list(json_t *a, const char *n, const char *field, int i, long long max, const char *what, const char *limit_name,
                    int **out, int *count, ft_status *st)
{
    if (!json_is_array(a))
        return ft__fail(st, FT_EINPUT, 0, "%s: %s[%d] must be a list of integers", n, field, i);
    size_t len = json_array_size(a);
    if ((long long)len > max)
        return ft__fail(st, FT_EINPUT, 0, "%s: %s[%d]: %zu %s, the limit is %lld (%s)", n, field, i, len, what, max, limit_name);
    *out = ft__malloc(sizeof(int) * (len ? len : 1));
    if (!*out)
        return ft__fail(st, FT_ENOMEM, 0, "%s: out of memory", n);
    *count = (int)len;
    for (size_t j = 0; j < len; j++)
        if (to_index(json_array_get(a, j), &(*out)[j]))
            return ft__fail(st, FT_EINPUT, 0, "%s: %s[%d][%zu] must be an integer", n, field, i, j);
    return FT_OK;
}

/* Optional or required top-level list; *len = its size or -1 if absent. */
static int top_list(json_t *root, const char *n, const char *field, int required, json_t **out, int *len, ft_status *st)
{
    json_t *v = json_object_get(root, field);
    *out = NULL;
    *len = -1;
    if (!v || (json_is_null(v) && !required)) {
        if (required)
            return ft__fail(st, FT_EINPUT, 0, "%s: missing field %s", n, field);
        return FT_OK;
    }
    if (!json_is_array(v))
        return ft__fail(st, FT_EINPUT, 0, "%s: %s must be a list", n, field);
    if (json_array_size(v) > FT_MAX_SUBGRAPHS)
        return ft__fail(st, FT_EINPUT, 0, "%s: %s: %zu entries (one per subgraph), the limit is %d (FT_MAX_SUBGRAPHS)", n, field,
                        json_array_size(v), FT_MAX_SUBGRAPHS);
    *out = v;
    *len = (int)json_array_size(v);
    return FT_OK;
}

static int from_json(json_t *root, ft_schedule *s, ft_status *st)
{
    const char *n = SNAME(s);
    json_t *subgraphs, *gran, *retain, *orders, *lat, *labels;
    int nsg, rc, nlabels;
    if (!json_is_object(root))
        return ft__fail(st, FT_EINPUT, 0, "%s: top level must be an object", n);
    if ((rc = top_list(root, n, "subgraphs", 1, &subgraphs, &nsg, st)) ||
        (rc = top_list(root, n, "granularities", 1, &gran, &s->len_granularities, st)) ||
        (rc = top_list(root, n, "tensors_to_retain", 1, &retain, &s->len_retain, st)) ||
        (rc = top_list(root, n, "traversal_orders", 0, &orders, &s->len_orders, st)) ||
        (rc = top_list(root, n, "subgraph_latencies", 0, &lat, &s->len_latencies, st)) ||
        (rc = top_list(root, n, "subgraph_labels", 0, &labels, &nlabels, st)))
        return rc;
    s->sg = ft__calloc((size_t)(nsg ? nsg : 1), sizeof(ft_subgraph));
    if (!s->sg)
        return ft__fail(st, FT_ENOMEM, 0, "%s: out of memory", n);
    s->nsubgraphs = nsg;
    for (int i = 0; i < nsg; i++) {
        ft_subgraph *g = &s->sg[i];
        if ((rc = int_list(json_array_get(subgraphs, i), n, "subgraphs", i, FT_MAX_SUBGRAPH_OPS, "ops", "FT_MAX_SUBGRAPH_OPS", &g->ops,
                           &g->nops, st)))
            return rc;
        if (i < s->len_granularities) {
            json_t *e = json_array_get(gran, i);
            if (!json_is_array(e) || json_array_size(e) != 3)
                return ft__fail(st, FT_EINPUT, 0, "%s: granularities[%d] must be a list [w, h, k]", n, i);
            int64_t v[3];
            for (int d = 0; d < 3; d++) {
                json_t *x = json_array_get(e, (size_t)d);
                if (json_is_integer(x))
                    v[d] = json_integer_value(x);
                else if (json_is_real(x) && json_real_value(x) == floor(json_real_value(x)) && fabs(json_real_value(x)) < 9e18)
                    v[d] = (int64_t)json_real_value(x);
                else
                    return ft__fail(st, FT_EINPUT, 0, "%s: granularities[%d][%d] must be an integer", n, i, d);
            }
            g->w = v[0];
            g->h = v[1];
            g->k = v[2];
        }
        if (i < s->len_retain &&
            (rc = int_list(json_array_get(retain, i), n, "tensors_to_retain", i, FT_MAX_RETAIN, "tensors", "FT_MAX_RETAIN", &g->retain,
                       &g->nretain, st)))
            return rc;
        if (i < s->len_orders) {
            json_t *e = json_array_get(orders, i);
            if (!json_is_null(e)) {
                if (!json_is_array(e))
                    return ft__fail(st, FT_EINPUT, 0, "%s: traversal_orders[%d] must be null or a list of tile indices", n, i);
                size_t len = json_array_size(e);
                if ((int64_t)len > FT_MAX_TRAVERSAL)
                    return ft__fail(st, FT_EINPUT, 0, "%s: traversal_orders[%d]: %zu tiles, the limit is %lld (FT_MAX_TRAVERSAL)", n, i,
                                    len, (long long)FT_MAX_TRAVERSAL);
                g->order = ft__malloc(sizeof(int64_t) * (len ? len : 1));
                if (!g->order)
                    return ft__fail(st, FT_ENOMEM, 0, "%s: out of memory", n);
                g->norder = (int64_t)len;
                for (size_t j = 0; j < len; j++) {
                    json_t *x = json_array_get(e, j);
                    if (!json_is_integer(x))
                        return ft__fail(st, FT_EINPUT, 0, "%s: traversal_orders[%d][%zu] must be an integer", n, i, j);
                    g->order[j] = json_integer_value(x);
                }
            }
        }
        if (i < nlabels) {
            json_t *e = json_array_get(labels, i);
            if (json_is_string(e)) {
                if (!(g->label = ft__strdup(json_string_value(e))))
                    return ft__fail(st, FT_ENOMEM, 0, "%s: out of memory", n);
            } else if (!json_is_null(e))
                return ft__fail(st, FT_EINPUT, 0, "%s: subgraph_labels[%d] must be a string or null", n, i);
        }
        if (i < s->len_latencies) {
            json_t *e = json_array_get(lat, i);
            if (json_is_number(e)) {
                g->has_reported = 1;
                g->reported = json_number_value(e);
            } else if (!json_is_null(e))
                return ft__fail(st, FT_EINPUT, 0, "%s: subgraph_latencies[%d] must be a number", n, i);
        }
    }
    return FT_OK;
}

int ft_schedule_parse(const char *text, const char *name, ft_schedule **out, ft_status *st)
{
    ft_status_clear(st);
    *out = NULL;
    ft_schedule *s = ft__calloc(1, sizeof *s);
    if (!s)
        return ft__fail(st, FT_ENOMEM, 0, "schedule: out of memory");
    s->name = ft__strdup(name ? name : "schedule");
    if (!s->name) {
        ft_schedule_free(s);
        return ft__fail(st, FT_ENOMEM, 0, "%s: out of memory", name ? name : "schedule");
    }
    void *root;
    int rc = ft__json_parse(text, SNAME(s), &root, st);
    if (!rc) {
        rc = from_json(root, s, st);
        json_decref(root);
    }
    if (rc) {
        ft_schedule_free(s);
        return rc;
    }
    *out = s;
    return FT_OK;
}

int ft_schedule_load(const char *path, ft_schedule **out, ft_status *st)
{
    char *text;
    ft_status_clear(st);
    *out = NULL;
    int rc = ft_read_file_max(path, FT_MAX_SCHEDULE_BYTES, "FT_MAX_SCHEDULE_BYTES", &text, st);
    if (rc)
        return rc;
    rc = ft_schedule_parse(text, path, out, st);
    ft__free(text);
    return rc;
}

/* ------------------------------------------------------------ JSON out */

/* A growing string buffer; `bad` records an allocation failure. */
typedef struct sbuf {
    char *p;
    size_t len, cap;
    int bad;
} sbuf;

static void sb_add(sbuf *b, const char *fmt, ...) FT_PRINTF(2, 3);

#include <stdarg.h>
static void sb_add(sbuf *b, const char *fmt, ...)
{
    if (b->bad)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->bad = 1;
            return;
        }
        if ((size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        size_t nc = b->cap * 2 + (size_t)n;
        char *np = ft__realloc(b->p, nc);
        if (!np) {
            b->bad = 1;
            return;
        }
        b->p = np;
        b->cap = nc;
    }
}

char *ft_schedule_to_json(const ft_schedule *s, const double *latencies)
{
    sbuf b = {ft__malloc(4096), 0, 4096, 0};
    if (!b.p)
        return NULL;
    b.p[0] = '\0';
    int n = s->nsubgraphs;
    sb_add(&b, "{\n  \"subgraphs\": [");
    for (int i = 0; i < n; i++) {
        sb_add(&b, "%s[", i ? ", " : "");
        for (int j = 0; j < s->sg[i].nops; j++)
            sb_add(&b, "%s%d", j ? ", " : "", s->sg[i].ops[j]);
        sb_add(&b, "]");
    }
    sb_add(&b, "],\n  \"granularities\": [");
    for (int i = 0; i < n; i++)
        sb_add(&b, "%s[%lld, %lld, %lld]", i ? ", " : "", (long long)s->sg[i].w, (long long)s->sg[i].h, (long long)s->sg[i].k);
    sb_add(&b, "],\n  \"tensors_to_retain\": [");
    for (int i = 0; i < n; i++) {
        sb_add(&b, "%s[", i ? ", " : "");
        for (int j = 0; j < s->sg[i].nretain; j++)
            sb_add(&b, "%s%d", j ? ", " : "", s->sg[i].retain[j]);
        sb_add(&b, "]");
    }
    sb_add(&b, "],\n  \"traversal_orders\": [");
    for (int i = 0; i < n; i++) {
        const ft_subgraph *g = &s->sg[i];
        if (!g->order) {
            sb_add(&b, "%snull", i ? ", " : "");
            continue;
        }
        sb_add(&b, "%s[", i ? ", " : "");
        for (int64_t j = 0; j < g->norder; j++)
            sb_add(&b, "%s%lld", j ? ", " : "", (long long)g->order[j]);
        sb_add(&b, "]");
    }
    sb_add(&b, "],\n  \"subgraph_latencies\": [");
    for (int i = 0; i < n; i++) {
        double v = latencies ? latencies[i] : s->sg[i].reported;
        if (!latencies && !s->sg[i].has_reported)
            sb_add(&b, "%snull", i ? ", " : "");
        else {
            char num[32];
            sb_add(&b, "%s%s", i ? ", " : "", ft_format_double(num, v));
        }
    }
    sb_add(&b, "]");
    int labelled = 0;
    for (int i = 0; i < n; i++)
        labelled |= s->sg[i].label != NULL;
    if (labelled) {
        sb_add(&b, ",\n  \"subgraph_labels\": [");
        for (int i = 0; i < n; i++) {
            json_t *str = s->sg[i].label ? json_string(s->sg[i].label) : NULL;
            char *text = str ? json_dumps(str, JSON_ENCODE_ANY | JSON_ENSURE_ASCII) : NULL;
            if (s->sg[i].label && !text)
                b.bad = 1;
            sb_add(&b, "%s%s", i ? ", " : "", text ? text : "null");
            ft__free(text);
            json_decref(str);
        }
        sb_add(&b, "]");
    }
    sb_add(&b, "\n}\n");
    if (b.bad) {
        ft__free(b.p);
        return NULL;
    }
    return b.p;
}

int ft_schedule_write(const ft_schedule *s, const double *latencies, const char *path, ft_status *st)
{
    ft_status_clear(st);
    char *text = ft_schedule_to_json(s, latencies);
    if (!text)
        return ft__fail(st, FT_ENOMEM, 0, "%s: out of memory", path);
    int rc = ft_write_atomic(text, path, st);
    ft__free(text);
    return rc;
}
