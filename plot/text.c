/* text.c - libfusetile_plot's text: a growing string, XML escaping of UTF-8, locale-free number formatting, the emit and error helpers (plot_int.h). */
#include "plot_int.h"

#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Contract: plot_int.h. */
void ft__plot_put(svg_buf *b, const char *s, size_t n)
{
    if (b->bad)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 8192;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->bad = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

/* Contract: plot_int.h. */
void ft__plot_puts(svg_buf *b, const char *s)
{
    ft__plot_put(b, s, strlen(s));
}

/* Length of the UTF-8 sequence at s if it encodes a character XML allows
 * (tab, newline, carriage return, U+0020 and up, not U+FFFE or U+FFFF),
 * else 0.  Stops at the terminating NUL. */
static size_t xml_char_len(const unsigned char *s)
{
    unsigned c = s[0];
    if (c < 0x80)
        return (c >= 0x20 || c == '\t' || c == '\n' || c == '\r') ? 1 : 0;
    if (c >= 0xC2 && c <= 0xDF)
        return (s[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        unsigned lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
        if (s[1] < lo || s[1] > hi || (s[2] & 0xC0) != 0x80)
            return 0;
        if (c == 0xEF && s[1] == 0xBF && s[2] >= 0xBE)
            return 0;
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        unsigned lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        if (s[1] < lo || s[1] > hi || (s[2] & 0xC0) != 0x80 || (s[3] & 0xC0) != 0x80)
            return 0;
        return 4;
    }
    return 0;
}

/* Append s XML-escaped; bytes that are not an allowed character become
 * '?'.  maxchars > 0: at most that many characters, then an ellipsis. */
void ft__plot_xml(svg_buf *b, const char *s, int maxchars)
{
    const unsigned char *p = (const unsigned char *)s;
    int nchars = 0;
    while (*p) {
        if (maxchars > 0 && nchars == maxchars) {
            ft__plot_puts(b, "\xE2\x80\xA6"); /* U+2026 */
            return;
        }
        size_t n = xml_char_len(p);
        nchars++;
        if (n == 0) {
            ft__plot_put(b, "?", 1);
            p++;
            continue;
        }
        switch (*p) {
        case '&': ft__plot_puts(b, "&amp;"); break;
        case '<': ft__plot_puts(b, "&lt;"); break;
        case '>': ft__plot_puts(b, "&gt;"); break;
        case '"': ft__plot_puts(b, "&quot;"); break;
        case '\'': ft__plot_puts(b, "&#39;"); break;
        default: ft__plot_put(b, (const char *)p, n); break;
        }
        p += n;
    }
}

/* Characters ft__plot_xml(s, maxchars) shows (the ellipsis counts as one). */
int ft__plot_text_chars(const char *s, int maxchars)
{
    const unsigned char *p = (const unsigned char *)s;
    int nchars = 0;
    while (*p) {
        if (maxchars > 0 && nchars == maxchars)
            return nchars + 1;
        size_t n = xml_char_len(p);
        p += n ? n : 1;
        nchars++;
    }
    return nchars;
}

/* snprintf's text with the locale's decimal point turned into '.'. */
static void c_point(char *buf)
{
    const char *dp = localeconv()->decimal_point;
    if (!dp || !*dp || strcmp(dp, ".") == 0)
        return;
    char *q = strstr(buf, dp);
    if (q) {
        size_t n = strlen(dp);
        *q = '.';
        memmove(q + 1, q + n, strlen(q + n) + 1);
    }
}

/* v with prec significant digits (%g), the exponent without '+' or
 * leading zeros ("1e6", "2.5e-7"), "-0" as "0".  Returns buf. */
const char *ft__plot_fmt_value(char *buf, size_t len, double v, int prec)
{
    snprintf(buf, len, "%.*g", prec, v);
    c_point(buf);
    char *e = strchr(buf, 'e');
    if (e) {
        char *d = e + 1;
        if (*d == '-')
            d++;
        char *s = *d == '+' ? d + 1 : d;
        while (*s == '0' && s[1])
            s++;
        memmove(d, s, strlen(s) + 1);
    }
    if (strcmp(buf, "-0") == 0)
        strcpy(buf, "0");
    return buf;
}

/* A pixel coordinate: two decimals at most, trailing zeros dropped. */
const char *ft__plot_fmt_px(char *buf, size_t len, double v)
{
    snprintf(buf, len, "%.2f", v);
    c_point(buf);
    char *dot = strchr(buf, '.');
    if (dot) {
        char *end = buf + strlen(buf);
        while (end > dot + 1 && end[-1] == '0')
            *--end = '\0';
        if (end == dot + 1)
            *dot = '\0';
    }
    if (strcmp(buf, "-0") == 0)
        strcpy(buf, "0");
    return buf;
}

/* Append fmt to b, with these conversions only: %s a string as is, %x a
 * string XML-escaped, %p a pixel coordinate (double), %v a value (double,
 * 6 significant digits), %d an int, %% a '%'. */
void ft__plot_emit(svg_buf *b, const char *fmt, ...)
{
    char num[64];
    va_list ap;
    va_start(ap, fmt);
    while (*fmt) {
        const char *pc = strchr(fmt, '%');
        if (!pc) {
            ft__plot_puts(b, fmt);
            break;
        }
        ft__plot_put(b, fmt, (size_t)(pc - fmt));
        switch (pc[1]) {
        case 's': ft__plot_puts(b, va_arg(ap, const char *)); break;
        case 'x': ft__plot_xml(b, va_arg(ap, const char *), 0); break;
        case 'p': ft__plot_puts(b, ft__plot_fmt_px(num, sizeof num, va_arg(ap, double))); break;
        case 'v': ft__plot_puts(b, ft__plot_fmt_value(num, sizeof num, va_arg(ap, double), 6)); break;
        case 'd':
            snprintf(num, sizeof num, "%d", va_arg(ap, int));
            ft__plot_puts(b, num);
            break;
        default: ft__plot_put(b, "%", 1); break; /* "%%" */
        }
        if (!pc[1])
            break;
        fmt = pc + 2;
    }
    va_end(ap);
}

/* Contract: plot_int.h. */
void ft__plot_err(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    if (!err || errlen == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}
