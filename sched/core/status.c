/* status.c - status codes, reason names, compute-model names, small I/O helpers. */
#define _POSIX_C_SOURCE 200809L
#include "core/core.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void ft_status_clear(ft_status *st)
{
    if (!st)
        return;
    st->code = FT_OK;
    st->reason = FT_R_NONE;
    st->sg = -1;
    st->tile = -1;
    st->step = -1;
    st->msg[0] = '\0';
}

static const char *const reason_names[FT_R_COUNT] = {
    [FT_R_NONE] = "none",
    [FT_R_LENGTH_MISMATCH] = "length-mismatch",
    [FT_R_EMPTY_SUBGRAPH] = "empty-subgraph",
    [FT_R_REPEATED_OP] = "repeated-op",
    [FT_R_OP_OUT_OF_RANGE] = "op-out-of-range",
    [FT_R_OP_NOT_COVERED] = "op-not-covered",
    [FT_R_OP_BEFORE_PRODUCER] = "op-before-producer",
    [FT_R_NOT_CONNECTED] = "not-connected",
    [FT_R_GRANULARITY_BELOW_ONE] = "granularity-below-one",
    [FT_R_GRANULARITY_ABOVE_NATIVE] = "granularity-above-native",
    [FT_R_RETAIN_NOT_PRODUCED] = "retain-not-produced",
    [FT_R_BAD_TRAVERSAL] = "bad-traversal-order",
    [FT_R_TENSOR_UNAVAILABLE] = "tensor-unavailable",
    [FT_R_OOM] = "oom",
    [FT_R_FUSED_OPERAND_ESCAPES] = "fused-operand-escapes",
    [FT_R_RETAIN_ON_UNITS] = "retain-on-units",
};

const char *ft_reason_name(int reason)
{
    if (reason < 0 || reason >= FT_R_COUNT)
        return "unknown";
    return reason_names[reason];
}

const char *ft_compute_model_name(ft_compute_model m)
{
    return m == FT_COMPUTE_OP ? "op" : "native";
}

int ft_compute_model_parse(const char *name, ft_compute_model *out)
{
    if (name && strcmp(name, "native") == 0) {
        *out = FT_COMPUTE_NATIVE;
        return 0;
    }
    if (name && strcmp(name, "op") == 0) {
        *out = FT_COMPUTE_OP;
        return 0;
    }
    return -1;
}

int ft__fail(ft_status *st, int code, int reason, const char *fmt, ...)
{
    if (st) {
        va_list ap;
        st->code = code;
        st->reason = reason;
        va_start(ap, fmt);
        vsnprintf(st->msg, sizeof st->msg, fmt, ap);
        va_end(ap);
        /* one line whatever the message quotes from its input (a JSON
         * parser's "near" text, a value with a newline) */
        for (char *c = st->msg; *c; c++)
            if ((unsigned char)*c < ' ')
                *c = '?';
    }
    return code;
}

int ft_read_file_max(const char *path, long long max, const char *limit_name, char **out, ft_status *st)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return ft__fail(st, FT_EINPUT, 0, "%s: cannot open: %s", path,
                        strerror(errno));
    /* a regular file over the limit is refused before reading it */
    struct stat sb;
    if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) && (long long)sb.st_size > max) {
        fclose(f);
        return ft__fail(st, FT_EINPUT, 0, "%s: %lld bytes, the limit is %lld (%s)", path, (long long)sb.st_size, max,
                        limit_name);
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = ft__malloc(cap);
    if (!buf) {
        fclose(f);
        return ft__fail(st, FT_ENOMEM, 0, "%s: out of memory", path);
    }
    for (;;) {
        size_t n = fread(buf + len, 1, cap - len - 1, f);
        len += n;
        if ((long long)len > max) {
            /* a pipe or a file that grew: stop at the limit */
            ft__free(buf);
            fclose(f);
            return ft__fail(st, FT_EINPUT, 0, "%s: more than %lld bytes read, the limit is %lld (%s)", path, max, max, limit_name);
        }
        if (len + 1 < cap) {
            if (ferror(f)) {
                int e = errno;
                ft__free(buf);
                fclose(f);
                return ft__fail(st, FT_EINPUT, 0, "%s: read error: %s", path,
                                strerror(e));
            }
            break;
        }
        char *nb = ft__realloc(buf, cap * 2);
        if (!nb) {
            ft__free(buf);
            fclose(f);
            return ft__fail(st, FT_ENOMEM, 0, "%s: out of memory", path);
        }
        buf = nb;
        cap *= 2;
    }
    fclose(f);
    buf[len] = '\0';
    const char *nul = memchr(buf, '\0', len);
    if (nul) {
        size_t at = (size_t)(nul - buf);
        ft__free(buf);
        return ft__fail(st, FT_EINPUT, 0, "%s: not a text file (a NUL byte at offset %zu)", path, at);
    }
    *out = buf;
    return FT_OK;
}

int ft__read_file(const char *path, char **out, ft_status *st)
{
    return ft_read_file_max(path, FT_MAX_FILE_BYTES, "FT_MAX_FILE_BYTES", out, st);
}

char *ft_format_double(char *buf, double x)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, 32, "%.*g", prec, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    return buf;
}

char *ft_format_cycles(char *buf, double x)
{
    /* a thousandth of a cycle is the finest figure worth showing; six
     * significant digits above it, whole cycles from a million on */
    if (!(fabs(x) >= FT_CYCLES_EPSILON)) {
        snprintf(buf, FT_NUMBUF, "%s", isnan(x) ? "nan" : "0");
        return buf;
    }
    if (fabs(x) >= 1e6 && fabs(x) < 1e15)
        snprintf(buf, FT_NUMBUF, "%.0f", x);
    else
        snprintf(buf, FT_NUMBUF, "%.6g", round(x / FT_CYCLES_EPSILON) * FT_CYCLES_EPSILON);
    return buf;
}

int ft__json_parse(const char *text, const char *name, void **root, ft_status *st)
{
    json_error_t je;
    unsigned long failed = ft__alloc_failures();
    json_t *r = json_loads(text, JSON_REJECT_DUPLICATES, &je);
    /* jansson may drop a member whose allocation failed and still return
     * the object: any failure during the parse is out of memory */
    if (r && ft__alloc_failures() != failed) {
        json_decref(r);
        r = NULL;
    }
    *root = r;
    if (r)
        return FT_OK;
    /* out of memory: an allocation failed, or jansson gave up without a
     * message (its parser returns early then), or said so */
    int oom = ft__alloc_failures() != failed || je.text[0] == '\0';
#if JANSSON_VERSION_HEX >= 0x020b00
    oom = oom || json_error_code(&je) == json_error_out_of_memory;
#endif
    if (oom)
        return ft__fail(st, FT_ENOMEM, 0, "%s: out of memory", name);
    if (text[strspn(text, " \t\r\n")] == '\0')
        return ft__fail(st, FT_EINPUT, 0, "%s: empty file, expected a JSON object", name);
    return ft__fail(st, FT_EINPUT, 0, "%s:%d:%d: not valid JSON: %s", name, je.line, je.column, je.text);
}
