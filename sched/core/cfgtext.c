/* cfgtext.c - libconfig texts (target and sweep files) parsed without libconfig 1.5's leaks: a scanner that mirrors libconfig's refuses what would leak or be silently dropped, then config_read_string. */
#include "core/core.h"

#include <libconfig.h>
#include <stdlib.h>
#include <string.h>

/* Why this exists.  libconfig 1.5's bison parser has no destructor for
 * string tokens: a string literal that is the parser's lookahead when it
 * meets a syntax error ("x" = 1;, a "x";, a = 1 "x";, a = { "x" }) is never
 * freed (64 bytes or more from strbuf_append, called by the lexer, lost
 * after config_destroy).  A string is a valid next token only after "=" or
 * ":", "(" or "[", a "," inside a list or an array, or another string
 * (concatenation); this scanner reads the text as libconfig's flex scanner
 * does (comments, strings and their escapes, @include at a line's start)
 * and refuses a string anywhere else before libconfig sees it.  It also
 * refuses what libconfig would silently accept and drop: a string or a
 * block comment left open at the end of the file (a = "x" "y; reads as
 * a = "x"), and @include (libconfig 1.5 opens any path, a device or a
 * FIFO included, to any depth of nesting it allows), and a nesting deeper
 * than FT_CFG_MAX_DEPTH (where bison's stack would run out with a string
 * in hand).  Tokens that are not strings need no exact reading: the parser
 * stops at its first error, and tokens other than strings own no memory,
 * so the scanner stops at the first character no libconfig token starts
 * with (libconfig then reports the syntax error itself). */

/* The class of the last token read, all that decides whether a string may
 * come next. */
enum tok { T_START, T_EQUALS, T_COMMA, T_OPEN, T_CLOSE, T_SEMI, T_STRING, T_OTHER };

/* Characters of libconfig's names, booleans, integers and floats (one run
 * of them may be several of its tokens: they are all T_OTHER here). */
static int other_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '+' ||
           c == '_' || c == '*' || c == '.';
}

/* Line of position p of text (1 for the first). */
static int line_at(const char *text, const char *p)
{
    int line = 1;
    for (const char *q = text; q < p; q++)
        line += *q == '\n';
    return line;
}

/* Whether p, at the start of a line, opens an include directive as
 * libconfig's include_open does: ^[ \t]*@include[ \t]+" */
static int include_at(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    if (strncmp(p, "@include", 8) != 0)
        return 0;
    p += 8;
    if (*p != ' ' && *p != '\t')
        return 0;
    while (*p == ' ' || *p == '\t')
        p++;
    return *p == '"';
}

/* Most characters of a misplaced string quoted in its message. */
#define STRING_SHOWN 32

/* The literal from a to b (its closing quote), as shown in a message in
 * out (STRING_SHOWN + 4 bytes): at most STRING_SHOWN characters, "..."
 * after a longer one, '?' for a byte that is no printable ASCII or is a
 * quote or a backslash. */
static void show_string(const char *a, const char *b, char *out)
{
    int n = 0;
    for (; a < b && n < STRING_SHOWN; a++)
        out[n++] = *a >= ' ' && *a <= '~' && *a != '"' && *a != '\\' ? *a : '?';
    if (a < b)
        for (int i = 0; i < 3; i++)
            out[n++] = '.';
    out[n] = '\0';
}

/* Check text (NUL-terminated, ending in a newline) as described above.
 * FT_OK, or FT_EINPUT with "NAME:LINE: message". */
static int check(const char *text, const char *name, ft_status *st)
{
    char stack[FT_CFG_MAX_DEPTH];   /* the open brackets: '{', '(' or '[' */
    int depth = 0;
    enum tok prev = T_START;
    const char *p = text;
    while (*p) {
        if ((p == text || p[-1] == '\n') && include_at(p))
            return ft__fail(st, FT_EINPUT, 0, "%s:%d: @include is not supported: write the settings in this file",
                            name, line_at(text, p));
        char c = *p;
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
            p++;
        } else if (c == '#' || (c == '/' && p[1] == '/')) {
            while (*p && *p != '\n')   /* the text ends in a newline: libconfig's `.*$` matches */
                p++;
        } else if (c == '/' && p[1] == '*') {
            const char *end = strstr(p + 2, "*/");
            if (!end)
                return ft__fail(st, FT_EINPUT, 0,
                                "%s:%d: unterminated comment: no closing */ before the end of the file "
                                "(not libconfig syntax)",
                                name, line_at(text, p));
            p = end + 2;
        } else if (c == '"') {
            int ok = prev == T_EQUALS || prev == T_STRING || (prev == T_OPEN && depth > 0 && stack[depth - 1] != '{') ||
                     (prev == T_COMMA && depth > 0 && stack[depth - 1] != '{');
            const char *q = p + 1;
            while (*q && *q != '"')
                q += q[0] == '\\' && (q[1] == '\\' || q[1] == '"') ? 2 : 1;
            if (!*q)
                return ft__fail(st, FT_EINPUT, 0,
                                "%s:%d: unterminated string: no closing \" before the end of the file "
                                "(not libconfig syntax)",
                                name, line_at(text, p));
            if (!ok) {
                char shown[STRING_SHOWN + 4];
                show_string(p + 1, q, shown);
                return ft__fail(st, FT_EINPUT, 0,
                                "%s:%d: syntax error: unexpected string \"%s\" (a string stands only as a value, in a "
                                "list or in an array) (not libconfig syntax)",
                                name, line_at(text, p), shown);
            }
            p = q + 1;
            prev = T_STRING;
        } else if (c == '{' || c == '(' || c == '[') {
            if (depth == FT_CFG_MAX_DEPTH)
                return ft__fail(st, FT_EINPUT, 0,
                                "%s:%d: groups, lists and arrays nested more than %d deep", name,
                                line_at(text, p), FT_CFG_MAX_DEPTH);
            stack[depth++] = c;
            p++;
            prev = T_OPEN;
        } else if (c == '}' || c == ')' || c == ']') {
            char open = c == '}' ? '{' : c == ')' ? '(' : '[';
            if (depth == 0 || stack[depth - 1] != open)
                return FT_OK;   /* libconfig's syntax error, here or before */
            depth--;
            p++;
            prev = T_CLOSE;
        } else if (c == '=' || c == ':') {
            p++;
            prev = T_EQUALS;
        } else if (c == ',') {
            p++;
            prev = T_COMMA;
        } else if (c == ';') {
            p++;
            prev = T_SEMI;
        } else if (other_char(c)) {
            while (other_char(*p))
                p++;
            prev = T_OTHER;
        } else {
            return FT_OK;   /* no token starts so: libconfig's syntax error, here or before */
        }
    }
    return FT_OK;
}

int ft_cfg_read(struct config_t *cfg, const char *text, const char *name, ft_status *st)
{
    /* libconfig reads a comment at the very end of a file without a
     * newline (`a = 1; # x`) as garbage: give it the newline. */
    size_t n = strlen(text);
    char *copy = NULL;
    if (n == 0 || text[n - 1] != '\n') {
        copy = ft__malloc(n + 2);
        if (!copy)
            return ft__fail(st, FT_ENOMEM, 0, "%s: out of memory", name);
        memcpy(copy, text, n);
        copy[n] = '\n';
        copy[n + 1] = '\0';
        text = copy;
    }
    int rc = check(text, name, st);
    if (rc == FT_OK && config_read_string(cfg, text) != CONFIG_TRUE) {
        const char *file = config_error_file(cfg);
        const char *why = config_error_text(cfg);
        rc = ft__fail(st, FT_EINPUT, 0, "%s:%d: %s (not libconfig syntax)", file ? file : name, config_error_line(cfg),
                      why ? why : "syntax error");
    }
    ft__free(copy);
    return rc;
}
