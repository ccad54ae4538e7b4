/* core.h - the core part's private interface (sched/core/): status messages, file reading, JSON parsing, the allocation hook, small arithmetic and the compensated sum every other part of the library uses; not installed. */
#ifndef FT_CORE_H
#define FT_CORE_H

#include "fusetile/fusetile.h"
#include "fusetile/io.h"

#include <limits.h>

#if defined(__GNUC__)
#define FT_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define FT_PRINTF(a, b)
#endif

/* Fill *st (may be NULL) with code, reason and a formatted message (its
 * control characters, a newline quoted from the input say, become '?': one
 * line); returns code so callers can write
 * `return ft__fail(st, FT_EINPUT, 0, ...)`. */
int ft__fail(ft_status *st, int code, int reason, const char *fmt, ...)
    FT_PRINTF(4, 5);

/* Read a NUL-terminated file into a malloc'd buffer.  FT_OK, FT_EINPUT (with
 * the OS error naming the path) or FT_ENOMEM. */
int ft__read_file(const char *path, char **out, ft_status *st);

/* Parse a JSON text into *root (json_t *, decref when done); on failure
 * FT_EINPUT with "NAME: empty file" or "NAME:LINE:COL: not valid JSON". */
int ft__json_parse(const char *text, const char *name, void **root, ft_status *st);

/* FT_EINPUT "NAME: op_types: N ops, the limit is M (FT_MAX_OPS)" (or
 * widths and FT_MAX_TENSORS) when a problem of nops ops and ntensors
 * tensors is over the limits of fusetile/limits.h, else FT_OK. */
int ft__check_problem_size(const char *name, long long nops, long long ntensors, ft_status *st);

/* The library's allocation functions (alloc.c): every allocation of
 * sched/ goes through them, so ft_set_allocator's hook sees it.  They never
 * return NULL for a size of 0 unless the allocator fails; ft__calloc
 * returns NULL when n * size overflows; ft__realloc(NULL, n) is
 * ft__malloc(n); ft__free(NULL) is a no-op. */
void *ft__malloc(size_t n);
void *ft__calloc(size_t n, size_t size);
void *ft__realloc(void *ptr, size_t n);
void ft__free(void *ptr);

/* How many allocations of the calling thread have failed so far (ft__calloc's
 * overflow included).  A function whose callees fall back when memory runs
 * out (a weaker bound, a candidate skipped) compares it before and after
 * to report FT_ENOMEM instead. */
unsigned long ft__alloc_failures(void);

/* strdup through ft__malloc that tolerates NULL (returns NULL) */
char *ft__strdup(const char *s);

/* Division rounding up for positive operands. */
static inline int64_t ft__ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Seconds on the monotonic clock: the clock of every deadline in the
 * library (the search's, the strategies', the gap evidence's). */
double ft__now_s(void);


/* Most directories ft__data_dirs returns: the source tree's, the installed
 * tree's found from where the code runs, and the configured one. */
#define FT_DATA_DIRS_MAX 3

/* The directories that hold the shipped data SUB ("targets", "patterns"),
 * best first, into dirs[0..FT_DATA_DIRS_MAX-1], each of size PATH_MAX
 * (datadir.c): the source tree's SUB when the running code (the program,
 * or the shared object libfusetile is linked into) lies under the build
 * directory it was configured in; then $(datadir)/fusetile/SUB of the
 * install tree the code runs from, found from the object's own path, so
 * that a tree installed with DESTDIR, or moved, finds its own data; then
 * the configured $(datadir)/fusetile/SUB.  Only directories that exist are
 * returned, each once; a path longer than PATH_MAX is left out.  Returns
 * how many (0 when none exists). */
int ft__data_dirs(const char *sub, char (*dirs)[PATH_MAX]);

#endif
