/* trace_file.c - output files of the trace writer: streamed through the safe writer (fusetile/io.h: a temporary file renamed into place), sticky write errors, and the number format the files share. */
#include "trace_int.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define STDIO_BUFFER (1u << 20) /* stdio buffer of each output file */

/* Contract: trace_int.h. */
void ft__trace_put_err(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    if (!err || errlen == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* Contract: trace_int.h. */
char *ft__trace_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

/* Contract: trace_int.h. */
int ft__tfile_open(tfile *tf, const char *path, char *err, size_t errlen)
{
    ft_status st;

    memset(tf, 0, sizeof *tf);
    if (path[0] == '\0') {
        ft__trace_put_err(err, errlen, "trace: empty output path");
        return FT_EINPUT;
    }
    tf->buf = malloc(STDIO_BUFFER);
    if (!tf->buf) {
        ft__trace_put_err(err, errlen, "%s: out of memory", path);
        return FT_ENOMEM;
    }
    int rc = ft_out_open(&tf->o, path, &st);
    if (rc != FT_OK) {
        ft__trace_put_err(err, errlen, "%s", st.msg);
        free(tf->buf);
        tf->buf = NULL;
        return rc;
    }
    setvbuf(tf->o.f, tf->buf, _IOFBF, STDIO_BUFFER);
    return FT_OK;
}

/* Contract: trace_int.h. */
void ft__tfile_write(tfile *tf, const char *s, size_t n)
{
    if (n && fwrite(s, 1, n, tf->o.f) != n && !tf->err)
        tf->err = errno ? errno : EIO;
    tf->bytes += (int64_t)n;
}

/* Contract: trace_int.h. */
void ft__tfile_puts(tfile *tf, const char *s)
{
    ft__tfile_write(tf, s, strlen(s));
}

/* Contract: trace_int.h. */
void ft__tfile_printf(tfile *tf, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vfprintf(tf->o.f, fmt, ap);
    if (n < 0 && !tf->err)
        tf->err = errno ? errno : EIO;
    if (n > 0)
        tf->bytes += n;
    va_end(ap);
}

/* Contract: trace_int.h. */
int ft__tfile_close(tfile *tf, char *err, size_t errlen)
{
    ft_status st;
    if (!tf->o.f)
        return FT_OK;
    if (tf->err) { /* the first failed write names the cause */
        ft__trace_put_err(err, errlen, "%s: write failed: %s", tf->o.path, strerror(tf->err));
        ft_out_abort(&tf->o);
        return FT_EINPUT;
    }
    if (ft_out_close(&tf->o, &st) != FT_OK) {
        ft__trace_put_err(err, errlen, "%s", st.msg);
        return FT_EINPUT;
    }
    return FT_OK;
}

/* Contract: trace_int.h. */
void ft__tfile_discard(tfile *tf)
{
    ft_out_abort(&tf->o);
    free(tf->buf);
    memset(tf, 0, sizeof *tf);
}

/* Contract: trace_int.h. */
int ft__tfile_commit(tfile *tf, char *err, size_t errlen)
{
    ft_status st;
    if (!tf->o.path)
        return FT_OK;
    if (ft_out_commit(&tf->o, &st) != FT_OK) {
        ft__trace_put_err(err, errlen, "%s", st.msg);
        return FT_EINPUT;
    }
    return FT_OK;
}

/* Contract: trace_int.h.  Integers below 2^53 print without exponent. */
const char *ft__trace_num(char *buf, size_t len, double x)
{
    if (x == 0 || !buf || len == 0)
        return "0";
    if (fabs(x) < 9007199254740992.0 && x == (double)(int64_t)x) {
        snprintf(buf, len, "%" PRId64, (int64_t)x);
        return buf;
    }
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, len, "%.*g", prec, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    for (char *p = buf; *p; p++) /* a locale with a decimal comma */
        if (*p == ',')
            *p = '.';
    return buf;
}
