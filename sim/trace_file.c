/* trace_file.c - output files of the trace writer: written to PATH.tmp.PID and renamed into place, sticky write errors, and the number format the files share. */
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
    struct stat sb;
    size_t n = strlen(path) + 32;

    memset(tf, 0, sizeof *tf);
    if (path[0] == '\0') {
        ft__trace_put_err(err, errlen, "trace: empty output path");
        return FT_EINPUT;
    }
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        ft__trace_put_err(err, errlen, "%s: cannot write: %s", path, strerror(EISDIR));
        return FT_EINPUT;
    }
    tf->path = ft__trace_strdup(path);
    tf->tmp = malloc(n);
    tf->buf = malloc(STDIO_BUFFER);
    if (!tf->path || !tf->tmp || !tf->buf) {
        ft__trace_put_err(err, errlen, "%s: out of memory", path);
        return FT_ENOMEM;
    }
    snprintf(tf->tmp, n, "%s.tmp.%ld", path, (long)getpid());
    tf->f = fopen(tf->tmp, "wb");
    if (!tf->f) {
        int e = errno;
        ft__trace_put_err(err, errlen, "%s: cannot write: %s (creating %s)", path, strerror(e), tf->tmp);
        return FT_EINPUT;
    }
    setvbuf(tf->f, tf->buf, _IOFBF, STDIO_BUFFER);
    return FT_OK;
}

/* Contract: trace_int.h. */
void ft__tfile_write(tfile *tf, const char *s, size_t n)
{
    if (n && fwrite(s, 1, n, tf->f) != n && !tf->err)
        tf->err = errno ? errno : EIO;
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
    if (vfprintf(tf->f, fmt, ap) < 0 && !tf->err)
        tf->err = errno ? errno : EIO;
    va_end(ap);
}

/* Contract: trace_int.h. */
int ft__tfile_close(tfile *tf, char *err, size_t errlen)
{
    int rc = FT_OK;
    if (!tf->f)
        return FT_OK;
    if (fflush(tf->f) != 0 && !tf->err)
        tf->err = errno ? errno : EIO;
    if (fclose(tf->f) != 0 && !tf->err)
        tf->err = errno ? errno : EIO;
    tf->f = NULL;
    if (tf->err) {
        ft__trace_put_err(err, errlen, "%s: write failed: %s", tf->path, strerror(tf->err));
        rc = FT_EINPUT;
    }
    return rc;
}

/* Contract: trace_int.h. */
void ft__tfile_discard(tfile *tf)
{
    if (tf->f)
        fclose(tf->f);
    tf->f = NULL;
    if (tf->tmp)
        remove(tf->tmp);
    free(tf->path);
    free(tf->tmp);
    free(tf->buf);
    memset(tf, 0, sizeof *tf);
}

/* Contract: trace_int.h. */
int ft__tfile_commit(tfile *tf, char *err, size_t errlen)
{
    if (rename(tf->tmp, tf->path) != 0) {
        int e = errno;
        ft__trace_put_err(err, errlen, "%s: cannot rename %s into place: %s", tf->path, tf->tmp, strerror(e));
        return FT_EINPUT;
    }
    free(tf->tmp);
    tf->tmp = NULL; /* nothing left to remove */
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
