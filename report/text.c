/* text.c - the report's text helpers: a growing string, HTML escaping and exact numbers. */
#include "report_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for n more bytes and a NUL; 0, or -1 (bad set). */
static int reserve(rep_buf *b, size_t n)
{
    if (b->bad)
        return -1;
    if (b->len + n + 1 <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n + 1) {
        if (cap > ((size_t)-1) / 2) {
            b->bad = 1;
            return -1;
        }
        cap *= 2;
    }
    char *p = realloc(b->p, cap);
    if (!p) {
        b->bad = 1;
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

static void put(rep_buf *b, const char *s, size_t n)
{
    if (reserve(b, n))
        return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void ft__rep_puts(rep_buf *b, const char *s)
{
    put(b, s, strlen(s));
}

void ft__rep_printf(rep_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->bad = 1;
        return;
    }
    if (reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void ft__rep_html(rep_buf *b, const char *s)
{
    ft__rep_html_wrap(b, s, 0);
}

void ft__rep_html_wrap(rep_buf *b, const char *s, int wrap)
{
    for (const char *q = s ? s : ""; *q; q++) {
        if (wrap && q != s && (*q == '/' || *q == '.' || *q == '_'))
            ft__rep_puts(b, "<wbr>");
        switch (*q) {
        case '&': ft__rep_puts(b, "&amp;"); break;
        case '<': ft__rep_puts(b, "&lt;"); break;
        case '>': ft__rep_puts(b, "&gt;"); break;
        case '"': ft__rep_puts(b, "&quot;"); break;
        case '\'': ft__rep_puts(b, "&#39;"); break;
        default: put(b, q, 1);
        }
    }
}

void ft__rep_num(rep_buf *b, double x)
{
    char buf[FT_NUMBUF];
    ft__rep_puts(b, isfinite(x) ? ft_format_double(buf, x) : "NaN");
}
