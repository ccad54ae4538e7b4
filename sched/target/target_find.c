/* target_find.c - `--target NAME`: a target given as a path or as the name of a shipped target (targets/NAME.cfg), found in the caller's search path and the shipped targets directory (ft_target_find, ft_target_names). */
#include "cost/cost.h"
#include "fusetile/target.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* 1 when path names something that exists and is not a directory. */
static int is_file(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && !S_ISDIR(sb.st_mode);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int ft_target_names(char *out, size_t n)
{
    if (n == 0)
        return -1;
    out[0] = '\0';
    char dirs[FT_DATA_DIRS_MAX][PATH_MAX];
    if (ft__data_dirs("targets", dirs) == 0)
        return 0;
    DIR *d = opendir(dirs[0]);
    if (!d)
        return 0;
    char **names = NULL;
    size_t count = 0, cap = 0;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len <= 4 || e->d_name[0] == '.' || strcmp(e->d_name + len - 4, ".cfg") != 0)
            continue;
        if (count == cap) {
            size_t ncap = cap ? 2 * cap : 16;
            char **more = ft__realloc(names, ncap * sizeof *names);
            if (!more) {
                rc = -1;
                break;
            }
            names = more;
            cap = ncap;
        }
        if (!(names[count] = ft__malloc(len - 3))) {
            rc = -1;
            break;
        }
        memcpy(names[count], e->d_name, len - 4);
        names[count++][len - 4] = '\0';
    }
    closedir(d);
    if (count)
        qsort(names, count, sizeof *names, by_name);
    size_t used = 0;
    for (size_t i = 0; i < count && rc == 0; i++) {
        size_t len = strlen(names[i]) + (i ? 2 : 0);
        if (used + len + 1 > n) {
            rc = -1;
            break;
        }
        used += (size_t)snprintf(out + used, n - used, "%s%s", i ? ", " : "", names[i]);
    }
    if (rc) { /* ", ..." in place of what did not fit */
        while (used > 0 && used + 6 > n) {
            char *comma = strrchr(out, ',');
            used = comma ? (size_t)(comma - out) : 0;
            out[used] = '\0';
        }
        if (used + 6 <= n)
            snprintf(out + used, n - used, "%s...", used ? ", " : "");
    }
    for (size_t i = 0; i < count; i++)
        ft__free(names[i]);
    ft__free(names);
    return rc;
}

/* Try dir/name and dir/name.cfg; 1 (with the path in out, or *toolong
 * set when it did not fit) when one is a file. */
static int try_dir(const char *dir, size_t dlen, const char *name, char *out, size_t n, int *toolong)
{
    static const char *const ext[] = {"", ".cfg"};
    for (int i = 0; i < 2; i++) {
        char path[PATH_MAX];
        int len = snprintf(path, sizeof path, "%.*s/%s%s", (int)dlen, dir, name, ext[i]);
        if (len < 0 || (size_t)len >= sizeof path || !is_file(path))
            continue;
        if ((size_t)len >= n)
            *toolong = 1;
        else
            memcpy(out, path, (size_t)len + 1);
        return 1;
    }
    return 0;
}

int ft_target_find(const char *name, const char *search_path, char *out, size_t n, ft_status *st)
{
    ft_status_clear(st);
    if (n)
        out[0] = '\0';
    if (!name || !name[0])
        return ft__fail(st, FT_EINPUT, 0, "target: the name is empty; give a path or a name");
    int toolong = 0, found = 0;
    struct stat sb;
    /* as given, whatever it is (ft_target_load says what is wrong with it),
     * but for a directory with a bare name: that may be a shipped name */
    if (stat(name, &sb) == 0 && (!S_ISDIR(sb.st_mode) || strchr(name, '/'))) {
        found = 1;
        if (strlen(name) >= n)
            toolong = 1;
        else
            memcpy(out, name, strlen(name) + 1);
    }
    char data[FT_DATA_DIRS_MAX][PATH_MAX];
    int ndata = 0;
    char looked[256] = "";
    size_t lused = 0;
#define LOOKED(p, len)                                                                                 \
    (lused += (size_t)snprintf(looked + lused, sizeof looked - lused, "%s%.*s", lused ? ", " : "", \
                               (int)(len), (p)),                                                  \
     lused = lused < sizeof looked ? lused : sizeof looked - 1)
    if (!found && !strchr(name, '/')) {
        const char *s = search_path ? search_path : "";
        while (!found && *s) {
            size_t len = strcspn(s, ":");
            if (len) {
                found = try_dir(s, len, name, out, n, &toolong);
                LOOKED(s, len);
            }
            s += len + (s[len] == ':');
        }
        ndata = ft__data_dirs("targets", data);
        for (int i = 0; i < ndata && !found; i++) {
            found = try_dir(data[i], strlen(data[i]), name, out, n, &toolong);
            LOOKED(data[i], strlen(data[i]));
        }
    }
#undef LOOKED
    if (lused == sizeof looked - 1) /* it did not all fit: say so */
        memcpy(looked + lused - 3, "...", 3);
    if (toolong) {
        if (n)
            out[0] = '\0';
        return ft__fail(st, FT_EINPUT, 0, "%s: the path of the target is longer than %zu bytes", name,
                        n ? n - 1 : 0);
    }
    if (found)
        return FT_OK;
    char names[256];
    ft_target_names(names, sizeof names);
    if (strchr(name, '/'))
        return ft__fail(st, FT_EINPUT, 0, "%s: cannot open: No such file or directory; shipped targets: %s; give a path or a name", name,
                        names[0] ? names : "none found");
    return ft__fail(st, FT_EINPUT, 0,
                    "%s: no such file or shipped target (looked in ./, %s); shipped targets: %s; give a path or a name",
                    name, lused ? looked : "no targets directory: none was found", names[0] ? names : "none found");
}
