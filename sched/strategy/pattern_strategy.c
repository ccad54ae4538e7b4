/* pattern_strategy.c - the patterns strategy's entry (strategy.h): the pattern libraries it reads (the files named, or the bundled ones under the caller's directory, the shipped patterns/ of ft__data_dirs or ./patterns), then the tiler of patterns.c.  It reads no environment: the front ends pass $FT_PATTERNS_DIR as the directory. */
#include "strategy/patterns.h"

#include <stdio.h>
#include <string.h>

/* The bundled libraries, read in this order when no file is given. */
static const char *const bundled[] = {"cnn.patterns", "transformer.patterns", "contest.patterns"};

/* Directory of the bundled libraries into dir (size n): `first` (the
 * caller's, ft_search_opts.patterns_dir; NULL or "": none), the shipped
 * patterns/ (ft__data_dirs: the source tree's for a build-tree program,
 * else the installed ones), or ./patterns; the first that holds the first
 * bundled file.  0, or -1 when none does. */
static int bundled_dir(const char *first, char *dir, size_t n)
{
    char data[FT_DATA_DIRS_MAX][PATH_MAX];
    int ndata = ft__data_dirs("patterns", data);
    const char *try[FT_DATA_DIRS_MAX + 2] = {first && *first ? first : NULL};
    int ntry = 1;
    for (int i = 0; i < ndata; i++)
        try[ntry++] = data[i];
    try[ntry++] = "patterns";
    for (int i = 0; i < ntry; i++) {
        if (!try[i])
            continue;
        char path[PATH_MAX + 64];
        snprintf(path, sizeof path, "%s/%s", try[i], bundled[0]);
        FILE *f = fopen(path, "r");
        if (f) {
            fclose(f);
            if ((size_t)snprintf(dir, n, "%s", try[i]) >= n)
                continue;
            return 0;
        }
    }
    return -1;
}

int ft__strategy_patterns(const ft_problem *p, const ft_strategy_opts *o, ft_partition *out, ft_status *st)
{
    ft_patlib lib = {0};
    int rc = FT_OK;
    memset(out, 0, sizeof *out);
    if (o && o->npattern_files > 0) {
        for (int i = 0; i < o->npattern_files && rc == FT_OK; i++)
            rc = ft__patlib_load(&lib, o->pattern_files[i], st);
    } else {
        char dir[PATH_MAX], path[PATH_MAX + 64];
        if (bundled_dir(o ? o->patterns_dir : NULL, dir, sizeof dir))
            return ft__fail(st, FT_EINPUT, 0,
                            "patterns: the bundled pattern libraries (%s, ...) were not found: set FT_PATTERNS_DIR "
                            "(the patterns_dir option) to the source tree's patterns/ or name the files",
                            bundled[0]);
        for (size_t i = 0; i < sizeof bundled / sizeof *bundled && rc == FT_OK; i++) {
            snprintf(path, sizeof path, "%s/%s", dir, bundled[i]);
            rc = ft__patlib_load(&lib, path, st);
        }
    }
    if (rc == FT_OK)
        rc = ft__patterns_partition(p, &lib, out, NULL, st);
    ft__patlib_free(&lib);
    return rc;
}
