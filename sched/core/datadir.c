/* datadir.c - where the shipped data (targets/, patterns/) lies: the source tree for code that runs from its build tree, else the install tree the code runs from (relocatable: found from the program's or shared object's own path) and the configured $(datadir)/fusetile. */
#define _GNU_SOURCE /* dladdr1, RTLD_DL_LINKMAP */
#include "core/core.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The Makefile compiles these in (Makefile.in: datadir.o): the source and
 * build trees, $(datadir)/fusetile, and where each installed object lies
 * and where the data lies, relative to $(prefix). */
#ifndef FT_DATA_SRCDIR
#define FT_DATA_SRCDIR ""
#endif
#ifndef FT_DATA_BUILDDIR
#define FT_DATA_BUILDDIR ""
#endif
#ifndef FT_DATA_DIR
#define FT_DATA_DIR ""
#endif
/* colon-separated: bindir, libdir, the Tcl package's and the Python
 * package's directories, each relative to $(prefix) (an absolute one, not
 * under the prefix, is not relocated) */
#ifndef FT_DATA_OBJDIRS
#define FT_DATA_OBJDIRS ""
#endif
/* $(datadir)/fusetile relative to $(prefix) ("": not under it) */
#ifndef FT_DATA_REL
#define FT_DATA_REL ""
#endif

/* The directory of the object this code is linked into (the program, or
 * libfusetile.so, the Tcl or Python extension), resolved, into dir.  0, or
 * -1 when it cannot be told. */
static int code_dir(char *dir)
{
    Dl_info info;
    struct link_map *map = NULL;
    char path[PATH_MAX];
    const char *obj = NULL;
    if (dladdr1((void *)code_dir, &info, (void **)&map, RTLD_DL_LINKMAP) && map && map->l_name && map->l_name[0])
        obj = map->l_name;
    if (!obj) { /* the main program: its name in the link map is "" */
        ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
        if (n <= 0)
            return -1;
        path[n] = '\0';
        obj = path;
    }
    char real[PATH_MAX];
    if (!realpath(obj, real))
        return -1;
    char *slash = strrchr(real, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    snprintf(dir, PATH_MAX, "%s", real[0] ? real : "/");
    return 0;
}

/* 1 when path is dir or lies under it. */
static int under(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    return n > 0 && strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* Append a/b/c (b, c may be "") to dirs[*k] when it is an existing
 * directory not yet listed and fits. */
static void add(char (*dirs)[PATH_MAX], int *k, const char *a, const char *b, const char *c)
{
    if (*k >= FT_DATA_DIRS_MAX || !a[0])
        return;
    char p[PATH_MAX];
    int len = snprintf(p, sizeof p, "%s%s%s%s%s", a, b[0] ? "/" : "", b, c[0] ? "/" : "", c);
    if (len < 0 || (size_t)len >= sizeof p)
        return;
    struct stat sb;
    if (stat(p, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return;
    for (int i = 0; i < *k; i++)
        if (strcmp(dirs[i], p) == 0)
            return;
    memcpy(dirs[(*k)++], p, (size_t)len + 1);
}

int ft__data_dirs(const char *sub, char (*dirs)[PATH_MAX])
{
    int k = 0;
    char here[PATH_MAX];
    int known = code_dir(here) == 0;
    char build[PATH_MAX];
    const char *builddir = FT_DATA_BUILDDIR, *rel = FT_DATA_REL;
    if (known && builddir[0] && realpath(builddir, build) && under(here, build))
        add(dirs, &k, FT_DATA_SRCDIR, sub, "");
    /* installed: here ends in one of the objects' directories; the prefix
     * is what comes before it */
    const char *objdirs = FT_DATA_OBJDIRS;
    while (known && rel[0] && *objdirs) {
        size_t len = strcspn(objdirs, ":");
        size_t hl = strlen(here);
        if (len > 0 && objdirs[0] != '/' && hl > len && here[hl - len - 1] == '/' &&
            strncmp(here + hl - len, objdirs, len) == 0) {
            char prefix[PATH_MAX];
            memcpy(prefix, here, hl - len - 1);
            prefix[hl - len - 1] = '\0';
            add(dirs, &k, prefix[0] ? prefix : "/", FT_DATA_REL, sub);
            break;
        }
        objdirs += len + (objdirs[len] == ':');
    }
    add(dirs, &k, FT_DATA_DIR, sub, "");
    return k;
}
