/* slurm.c - the Slurm driver's files and programs (fusetile/slurm.h): the layout of a submitted sweep's files, the batch script, the job record, sh quoting, and running Slurm's commands with a time limit; planning and submitting are in slurm_submit.c. */
#define _XOPEN_SOURCE 700
#include "fusetile/slurm.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Most bytes of a command's stdout or stderr that ft_slurm_run keeps. */
#define RUN_KEEP (1 << 20)

static char *dup_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *dup_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *s = malloc((size_t)n + 1);
    if (!s)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

/* path made absolute against the working directory (not resolved). */
static char *absolute(const char *path)
{
    if (path[0] == '/')
        return strdup(path);
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        return NULL;
    while (path[0] == '.' && path[1] == '/')
        path += 2;
    return dup_printf("%s/%s", strcmp(cwd, "/") == 0 ? "" : cwd, path);
}

/* Contract: fusetile/slurm.h. */
int ft_slurm_layout_init(ft_slurm_layout *l, const char *db)
{
    l->db = absolute(db);
    l->dir = l->db ? dup_printf("%s.slurm", l->db) : NULL;
    if (!l->dir) {
        ft_slurm_layout_free(l);
        return -1;
    }
    return 0;
}

/* Contract: fusetile/slurm.h. */
void ft_slurm_layout_free(ft_slurm_layout *l)
{
    free(l->db);
    free(l->dir);
    l->db = l->dir = NULL;
}

/* Contract: fusetile/slurm.h. */
char *ft_slurm_task_db(const ft_slurm_layout *l, int k)
{
    return dup_printf("%s/task-%d.db", l->dir, k);
}

/* K of a name "task-K.db" (K decimal, no sign, at most 9 digits), or -1. */
static int task_index(const char *name)
{
    if (strncmp(name, "task-", 5) != 0)
        return -1;
    const char *p = name + 5;
    int k = 0, digits = 0;
    for (; *p >= '0' && *p <= '9' && digits < 10; p++, digits++)
        k = k * 10 + (*p - '0');
    if (digits == 0 || digits > 9 || strcmp(p, ".db") != 0)
        return -1;
    return k;
}

typedef struct indexed {
    int k;
    char *path;
} indexed;

static int by_index(const void *a, const void *b)
{
    int x = ((const indexed *)a)->k, y = ((const indexed *)b)->k;
    return (x > y) - (x < y);
}

/* Contract: fusetile/slurm.h. */
void ft_slurm_free_list(char **list, int n)
{
    for (int i = 0; i < n; i++)
        free(list[i]);
    free(list);
}

/* Contract: fusetile/slurm.h. */
int ft_slurm_task_dbs(const ft_slurm_layout *l, char ***out, int *n)
{
    *out = NULL;
    *n = 0;
    DIR *d = opendir(l->dir);
    if (!d)
        return errno == ENOENT ? 0 : -1;
    indexed *v = NULL;
    int count = 0, cap = 0, bad = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        int k = task_index(e->d_name);
        if (k < 0)
            continue;
        if (count == cap) {
            cap = cap ? 2 * cap : 16;
            indexed *grown = realloc(v, (size_t)cap * sizeof *v);
            if (!grown) {
                bad = 1;
                break;
            }
            v = grown;
        }
        v[count].k = k;
        if (!(v[count].path = dup_printf("%s/%s", l->dir, e->d_name))) {
            bad = 1;
            break;
        }
        count++;
    }
    closedir(d);
    char **list = bad || count == 0 ? NULL : malloc((size_t)count * sizeof *list);
    if (bad || (count > 0 && !list)) {
        for (int i = 0; i < count; i++)
            free(v[i].path);
        free(v);
        errno = ENOMEM;
        return -1;
    }
    if (count == 0) {
        free(v);
        return 0;
    }
    qsort(v, (size_t)count, sizeof *v, by_index);
    for (int i = 0; i < count; i++)
        list[i] = v[i].path;
    free(v);
    *out = list;
    *n = count;
    return 0;
}

/* Contract: fusetile/slurm.h. */
int ft_slurm_record(const ft_slurm_layout *l, const ft_slurm_job *j)
{
    char *path = dup_printf("%s/jobs.tsv", l->dir);
    if (!path) {
        errno = ENOMEM;
        return -1;
    }
    FILE *f = fopen(path, "a");
    free(path);
    if (!f)
        return -1;
    fprintf(f, "%s\t%d\t%s\t%s\t%s\n", j->id, j->array_size, j->array, j->sweep, j->when);
    return fclose(f) == 0 ? 0 : -1;
}

/* Parse one jobs.tsv line (without its newline) into *j: 1, or 0. */
static int parse_job(char *line, ft_slurm_job *j)
{
    char *f[5];
    int n = 0;
    for (char *p = line; n < 5; n++) {
        f[n] = p;
        char *tab = strchr(p, '\t');
        if (!tab) {
            n++;
            break;
        }
        *tab = '\0';
        p = tab + 1;
    }
    if (n != 5 || !f[0][0] || strspn(f[0], "0123456789") != strlen(f[0]) || strlen(f[0]) >= sizeof j->id)
        return 0;
    char *end;
    long m = strtol(f[1], &end, 10);
    if (*end || m < 1 || m > INT_MAX)
        return 0;
    memset(j, 0, sizeof *j);
    snprintf(j->id, sizeof j->id, "%s", f[0]);
    j->array_size = (int)m;
    snprintf(j->array, sizeof j->array, "%s", f[2]);
    snprintf(j->sweep, sizeof j->sweep, "%s", f[3]);
    snprintf(j->when, sizeof j->when, "%s", f[4]);
    return 1;
}

/* Contract: fusetile/slurm.h. */
int ft_slurm_last_job(const ft_slurm_layout *l, ft_slurm_job *j)
{
    char *path = dup_printf("%s/jobs.tsv", l->dir);
    FILE *f = path ? fopen(path, "r") : NULL;
    free(path);
    if (!f)
        return 0;
    char line[8192];
    int found = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        ft_slurm_job tmp;
        if (parse_job(line, &tmp)) {
            *j = tmp;
            found = 1;
        }
    }
    fclose(f);
    return found;
}

/* s as one single-quoted sh word, appended to buf (malloc'd, grown);
 * NULL when out of memory (buf freed). */
static char *append_quoted(char *buf, const char *s)
{
    size_t len = buf ? strlen(buf) : 0, extra = 2;
    for (const char *p = s; *p; p++)
        extra += *p == '\'' ? 4 : 1;
    char *b = realloc(buf, len + extra + 1);
    if (!b) {
        free(buf);
        return NULL;
    }
    char *q = b + len;
    *q++ = '\'';
    for (const char *p = s; *p; p++) {
        if (*p == '\'') {
            memcpy(q, "'\\''", 4);
            q += 4;
        } else {
            *q++ = *p;
        }
    }
    *q++ = '\'';
    *q = '\0';
    return b;
}

static char *append(char *buf, const char *s)
{
    size_t len = buf ? strlen(buf) : 0;
    char *b = realloc(buf, len + strlen(s) + 1);
    if (!b) {
        free(buf);
        return NULL;
    }
    strcpy(b + len, s);
    return b;
}

/* Contract: fusetile/slurm.h. */
char *ft_slurm_script(const ft_slurm_layout *l, const char *fusetile, const char *sweep, const char *workdir,
                       int array_size, const char *sbatch_line)
{
    char m[32];
    snprintf(m, sizeof m, "%d", array_size);
    char *s = append(NULL, "#!/bin/sh\n"
                           "# One task of a Slurm job array running a fusetile sweep, written by\n"
                           "# `fusetile sweep submit --slurm`: task K runs the runs whose index is K\n"
                           "# modulo M into its own database; `fusetile sweep gather` merges them.\n");
    if (s && sbatch_line) {
        s = append(s, "# submitted as: ");
        s = s ? append(s, sbatch_line) : NULL;
        s = s ? append(s, "\n") : NULL;
    }
    if (s)
        s = append(s, "set -eu\n"
                      "k=${SLURM_ARRAY_TASK_ID:?this script runs as a task of a Slurm job array}\n"
                      "cd ");
    s = s ? append_quoted(s, workdir) : NULL;
    s = s ? append(s, "\nexec ") : NULL;
    s = s ? append_quoted(s, fusetile) : NULL;
    s = s ? append(s, " sweep run ") : NULL;
    s = s ? append_quoted(s, sweep) : NULL;
    s = s ? append(s, " --slice \"$k/") : NULL;
    s = s ? append(s, m) : NULL;
    s = s ? append(s, "\" --jobs \"${SLURM_CPUS_PER_TASK:-1}\" --db ") : NULL;
    s = s ? append_quoted(s, l->dir) : NULL;
    s = s ? append(s, "\"/task-$k.db\" --quiet\n") : NULL;
    return s;
}

/* Contract: fusetile/slurm.h. */
int ft_slurm_array_spec(const int *pending, int m, char *buf, size_t n)
{
    size_t len = 0;
    int tasks = 0;
    if (n == 0)
        return -1;
    buf[0] = '\0';
    for (int k = 0; k < m; k++) {
        if (pending[k] <= 0)
            continue;
        int last = k;
        while (last + 1 < m && pending[last + 1] > 0)
            last++;
        int w = last == k ? snprintf(buf + len, n - len, "%s%d", len ? "," : "", k)
                          : snprintf(buf + len, n - len, "%s%d-%d", len ? "," : "", k, last);
        if (w < 0 || (size_t)w >= n - len)
            return -1;
        len += (size_t)w;
        tasks += last - k + 1;
        k = last;
    }
    return tasks;
}

/* Contract: fusetile/slurm.h. */
char *ft_slurm_command_line(char *const *argv)
{
    size_t n = 1;
    for (int i = 0; argv[i]; i++)
        n += 4 * strlen(argv[i]) + 3;
    char *s = malloc(n), *q = s;
    if (!s)
        return NULL;
    for (int i = 0; argv[i]; i++) {
        const char *a = argv[i];
        if (i)
            *q++ = ' ';
        int plain = *a != '\0';
        for (const char *p = a; *p; p++)
            if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=./,:%+@", *p))
                plain = 0;
        if (plain) {
            q += sprintf(q, "%s", a);
            continue;
        }
        *q++ = '\'';
        for (const char *p = a; *p; p++) {
            if (*p == '\'') {
                memcpy(q, "'\\''", 4);
                q += 4;
            } else {
                *q++ = *p;
            }
        }
        *q++ = '\'';
    }
    *q = '\0';
    return s;
}

/* Contract: fusetile/slurm.h. */
int ft_slurm_is_database(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    char h[16];
    size_t n = fread(h, 1, sizeof h, f);
    fclose(f);
    return n == sizeof h && memcmp(h, "SQLite format 3", 16) == 0;
}

static int executable(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && access(path, X_OK) == 0;
}

/* Contract: fusetile/slurm.h. */
char *ft_slurm_which(const char *prog)
{
    if (strchr(prog, '/'))
        return executable(prog) ? absolute(prog) : NULL;
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        size_t n = strcspn(path, ":");
        char *cand = n ? dup_printf("%.*s/%s", (int)n, path, prog) : dup_printf("./%s", prog);
        if (cand && executable(cand))
            return cand;
        free(cand);
        path += n;
        if (*path == ':')
            path++;
    }
    return NULL;
}

/* Contract: fusetile/slurm.h. */
char *ft_slurm_self_path(const char *argv0)
{
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n > 0) {
        buf[n] = '\0';
        if (executable(buf))
            return strdup(buf);
    }
    if (!argv0)
        return NULL;
    char *p = ft_slurm_which(argv0);
    if (!p)
        return NULL;
    char *r = realpath(p, NULL);
    if (r) {
        free(p);
        return r;
    }
    return p;
}

/* A growing capture buffer. */
typedef struct capture {
    char *buf;
    size_t len, cap;
} capture;

static void keep(capture *c, const char *data, size_t n)
{
    if (c->len + n > RUN_KEEP)
        n = RUN_KEEP - c->len;
    if (n == 0)
        return;
    if (c->len + n + 1 > c->cap) {
        size_t cap = c->cap ? c->cap : 1024;
        while (cap < c->len + n + 1)
            cap *= 2;
        char *b = realloc(c->buf, cap);
        if (!b)
            return;
        c->buf = b;
        c->cap = cap;
    }
    memcpy(c->buf + c->len, data, n);
    c->len += n;
    c->buf[c->len] = '\0';
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* Contract: fusetile/slurm.h. */
int ft_slurm_run(char *const argv[], double timeout_s, ft_slurm_run_result *r)
{
    memset(r, 0, sizeof *r);
    char *prog = ft_slurm_which(argv[0]);
    if (!prog) {
        errno = ENOENT;
        return -1;
    }
    int po[2], pe[2];
    if (pipe(po) != 0) {
        free(prog);
        return -1;
    }
    if (pipe(pe) != 0) {
        int e = errno;
        close(po[0]);
        close(po[1]);
        free(prog);
        errno = e;
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(po[0]), close(po[1]), close(pe[0]), close(pe[1]);
        free(prog);
        errno = e;
        return -1;
    }
    if (pid == 0) {
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0)
            dup2(null, 0);
        dup2(po[1], 1);
        dup2(pe[1], 2);
        close(po[0]), close(po[1]), close(pe[0]), close(pe[1]);
        execv(prog, argv);
        fprintf(stderr, "%s: %s\n", prog, strerror(errno));
        _exit(127);
    }
    free(prog);
    close(po[1]);
    close(pe[1]);
    capture out = {0}, err = {0};
    struct pollfd fds[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
    int open_fds = 2;
    double deadline = now_s() + timeout_s;
    while (open_fds > 0) {
        double left = deadline - now_s();
        if (left <= 0) {
            r->timed_out = 1;
            kill(pid, SIGKILL);
            break;
        }
        int rc = poll(fds, 2, (int)(left * 1000) + 1);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc < 0)
            break;
        for (int i = 0; i < 2; i++) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            char chunk[4096];
            ssize_t n = read(fds[i].fd, chunk, sizeof chunk);
            if (n > 0) {
                keep(i == 0 ? &out : &err, chunk, (size_t)n);
            } else if (n == 0 || errno != EINTR) {
                close(fds[i].fd);
                fds[i].fd = -1;
                open_fds--;
            }
        }
    }
    for (int i = 0; i < 2; i++)
        if (fds[i].fd >= 0)
            close(fds[i].fd);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    r->status = WIFEXITED(status) && !r->timed_out ? WEXITSTATUS(status) : -1;
    r->out = out.buf ? out.buf : strdup("");
    r->err = err.buf ? err.buf : strdup("");
    return 0;
}

/* Contract: fusetile/slurm.h. */
void ft_slurm_run_free(ft_slurm_run_result *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

/* Contract: fusetile/slurm.h. */
const char *ft_slurm_last_line(const char *s, char *buf, size_t n)
{
    buf[0] = '\0';
    if (!s || n == 0)
        return buf;
    const char *end = s + strlen(s);
    while (end > s && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
        end--;
    const char *start = end;
    while (start > s && start[-1] != '\n')
        start--;
    size_t len = (size_t)(end - start);
    if (len >= n)
        len = n - 1;
    memcpy(buf, start, len);
    buf[len] = '\0';
    return buf;
}
