/* replay.c - runs a libFuzzer harness without libFuzzer (built with any compiler, run under valgrind or the sanitizers): each FILE argument, or each file of each DIRECTORY argument in name order, is passed once to LLVMFuzzerTestOneInput; a finding aborts.  make check replays fuzz/corpus and fuzz/regress so. */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

/* Largest input replayed (libFuzzer's inputs are smaller still). */
#define REPLAY_MAX_INPUT ((size_t)1 << 24)

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: %s: cannot open: %s\n", path, strerror(errno));
        return -1;
    }
    uint8_t *buf = malloc(REPLAY_MAX_INPUT);
    size_t n = buf ? fread(buf, 1, REPLAY_MAX_INPUT, f) : 0;
    int err = !buf || ferror(f) || !feof(f);
    fclose(f);
    if (err) {
        fprintf(stderr, "replay: %s: cannot read it whole (at most %zu bytes)\n", path, REPLAY_MAX_INPUT);
        free(buf);
        return -1;
    }
    /* a copy of exactly n bytes, so that reading past the input is caught */
    uint8_t *in = malloc(n ? n : 1);
    if (!in) {
        free(buf);
        return -1;
    }
    memcpy(in, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(in, n);
    free(in);
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Replay every regular file of directory d in name order; the count in *n. */
static int replay_dir(const char *d, int *n)
{
    DIR *dp = opendir(d);
    if (!dp) {
        fprintf(stderr, "replay: %s: cannot open: %s\n", d, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t count = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(dp))) {
        if (e->d_name[0] == '.')
            continue;
        if (count == cap) {
            cap = cap ? 2 * cap : 64;
            char **nn = realloc(names, cap * sizeof *nn);
            if (!nn)
                break;
            names = nn;
        }
        size_t len = strlen(d) + strlen(e->d_name) + 2;
        if (!(names[count] = malloc(len)))
            break;
        snprintf(names[count++], len, "%s/%s", d, e->d_name);
    }
    closedir(dp);
    if (count)
        qsort(names, count, sizeof *names, by_name);
    int rc = 0;
    for (size_t i = 0; i < count; i++) {
        struct stat sb;
        if (rc == 0 && stat(names[i], &sb) == 0 && S_ISREG(sb.st_mode)) {
            rc = replay_file(names[i]);
            ++*n;
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE|DIRECTORY...\n", argv[0]);
        return 2;
    }
    /* absolute paths: a harness may change the working directory */
    for (int i = 1; i < argc; i++) {
        char *abs = realpath(argv[i], NULL);
        if (!abs) {
            fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
            return 1;
        }
        argv[i] = abs;   /* kept to the end */
    }
    LLVMFuzzerInitialize(&argc, &argv);
    int n = 0, rc = 0;
    for (int i = 1; i < argc && rc == 0; i++) {
        struct stat sb;
        if (stat(argv[i], &sb) == 0 && S_ISDIR(sb.st_mode)) {
            rc = replay_dir(argv[i], &n);
        } else {
            rc = replay_file(argv[i]);
            n++;
        }
    }
    for (int i = 1; i < argc; i++)
        free(argv[i]);
    if (rc)
        return 1;
    printf("replay: %d inputs, no finding\n", n);
    return 0;
}
