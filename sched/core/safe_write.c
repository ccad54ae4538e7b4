/* safe_write.c - the one writer of fusetile's output files (fusetile/io.h): the output rules, temporary files renamed into place, protected inputs and temporary files removed on a signal. */
/* realpath, fchmod, fsync, O_CLOEXEC, O_DIRECTORY, O_NOCTTY */
#define _XOPEN_SOURCE 700
#include "fusetile/io.h"

#include "core/core.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

/* What the path of an output names, after its symbolic links. */
enum out_kind { OUT_NEW, OUT_REGULAR, OUT_DEVICE, OUT_FIFO };

/* Inputs protected from the outputs (ft_out_protect). */
static struct {
    dev_t dev;
    ino_t ino;
    char *path;       /* copy */
    const char *role;
} inputs[FT_OUT_MAX_INPUTS];
static int ninputs;

/* Temporary files of the outputs open now, for ft_out_signal_cleanup:
 * a slot holds its file's name from creation to rename or removal. */
static char *volatile open_tmp[FT_OUT_MAX_OPEN];
static pthread_mutex_t open_mu = PTHREAD_MUTEX_INITIALIZER;

/* Counter behind the temporary names (N of PATH.fusetile-tmp.PID.N). */
static unsigned long tmp_counter;

/* Contract: fusetile/io.h. */
int ft_out_protect(const char *path, const char *role, ft_status *st)
{
    struct stat sb;
    if (!path || stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
        return FT_OK;
    for (int i = 0; i < ninputs; i++)
        if (inputs[i].dev == sb.st_dev && inputs[i].ino == sb.st_ino)
            return FT_OK;
    if (ninputs == FT_OUT_MAX_INPUTS)
        return ft__fail(st, FT_EINPUT, 0, "%s: more than %d input files (FT_OUT_MAX_INPUTS)", path, FT_OUT_MAX_INPUTS);
    if (!(inputs[ninputs].path = ft__strdup(path)))
        return ft__fail(st, FT_ENOMEM, 0, "%s: out of memory", path);
    inputs[ninputs].dev = sb.st_dev;
    inputs[ninputs].ino = sb.st_ino;
    inputs[ninputs].role = role ? role : "an";
    ninputs++;
    return FT_OK;
}

/* Contract: fusetile/io.h. */
void ft_out_unprotect_all(void)
{
    for (int i = 0; i < ninputs; i++)
        ft__free(inputs[i].path);
    ninputs = 0;
}

/* Contract: fusetile/io.h.  unlink is async-signal-safe; a slot is cleared
 * before its name is freed. */
void ft_out_signal_cleanup(void)
{
    for (int i = 0; i < FT_OUT_MAX_OPEN; i++) {
        char *t = open_tmp[i];
        if (t)
            unlink(t);
    }
}

/* Take a clean-up slot for tmp: its index plus one, or 0 when all
 * FT_OUT_MAX_OPEN are taken. */
static int slot_take(char *tmp)
{
    int got = 0;
    pthread_mutex_lock(&open_mu);
    for (int i = 0; i < FT_OUT_MAX_OPEN && !got; i++)
        if (!open_tmp[i]) {
            open_tmp[i] = tmp;
            got = i + 1;
        }
    pthread_mutex_unlock(&open_mu);
    return got;
}

/* Give back slot (slot_take's result; 0: none). */
static void slot_drop(int slot)
{
    if (slot <= 0)
        return;
    pthread_mutex_lock(&open_mu);
    open_tmp[slot - 1] = NULL;
    pthread_mutex_unlock(&open_mu);
}

/* A one-word name of a file type for messages. */
static const char *kind_name(mode_t m)
{
    if (S_ISDIR(m))
        return "a directory";
    if (S_ISFIFO(m))
        return "a FIFO";
    if (S_ISSOCK(m))
        return "a socket";
    if (S_ISBLK(m))
        return "a block device";
    if (S_ISCHR(m))
        return "a character device";
    return "not a regular file";
}

/* Refuse sb when it is a protected input: FT_EINPUT naming both, else
 * FT_OK. */
static int check_inputs(const char *path, const struct stat *sb, ft_status *st)
{
    for (int i = 0; i < ninputs; i++) {
        if (inputs[i].dev != sb->st_dev || inputs[i].ino != sb->st_ino)
            continue;
        if (strcmp(inputs[i].path, path) == 0)
            return ft__fail(st, FT_EINPUT, 0, "%s: is the %s input; refusing to overwrite it", path, inputs[i].role);
        return ft__fail(st, FT_EINPUT, 0, "%s: is the %s input (%s); refusing to overwrite it", path, inputs[i].role, inputs[i].path);
    }
    return FT_OK;
}

/* Apply the rules to path: FT_OK with *kind, *sb (the final file's status
 * when it exists) and *islink; else FT_EINPUT with the refusal. */
static int classify(const char *path, int regular_only, enum out_kind *kind, struct stat *sb, int *islink, ft_status *st)
{
    *islink = 0;
    if (!path || !path[0])
        return ft__fail(st, FT_EINPUT, 0, "output: empty file name");
    if (lstat(path, sb) != 0) {
        if (errno == ENOENT) {
            *kind = OUT_NEW;
            return FT_OK;
        }
        return ft__fail(st, FT_EINPUT, 0, "%s: cannot write: %s", path, strerror(errno));
    }
    if (S_ISLNK(sb->st_mode)) {
        *islink = 1;
        if (stat(path, sb) != 0) {
            if (errno == ENOENT)
                return ft__fail(st, FT_EINPUT, 0, "%s: is a dangling symbolic link; refusing to write through it", path);
            return ft__fail(st, FT_EINPUT, 0, "%s: cannot write: %s", path, strerror(errno));
        }
    }
    if (S_ISREG(sb->st_mode)) {
        *kind = OUT_REGULAR;
        return check_inputs(path, sb, st);
    }
    if (S_ISCHR(sb->st_mode) && !regular_only) {
        *kind = OUT_DEVICE;
        return FT_OK;
    }
    if (S_ISFIFO(sb->st_mode) && !regular_only) {
        *kind = OUT_FIFO; /* whether a process reads it is seen at the open */
        return FT_OK;
    }
    if (S_ISDIR(sb->st_mode))
        return ft__fail(st, FT_EINPUT, 0, "%s: cannot write: %s", path, strerror(EISDIR));
    return ft__fail(st, FT_EINPUT, 0, "%s: is %s%s; refusing to write to it (%s)", path, *islink ? "a symbolic link to " : "",
                    kind_name(sb->st_mode),
                    regular_only ? "a database must be a regular file" : "outputs are regular files, character devices, FIFOs or - for standard output");
}

/* Contract: fusetile/io.h. */
int ft_out_check(const char *path, int regular_only, ft_status *st)
{
    enum out_kind kind;
    struct stat sb;
    int islink;
    ft_status_clear(st);
    return classify(path, regular_only, &kind, &sb, &islink, st);
}

/* Release what *o holds (the temporary file's name and slot too) and
 * clear it. */
static void release(ft_out *o)
{
    slot_drop(o->slot);
    ft__free(o->path);
    ft__free(o->dest);
    ft__free(o->tmp);
    memset(o, 0, sizeof *o);
}

/* Open a character device or a FIFO in place: FT_OK with o->f, or
 * FT_EINPUT.  A FIFO is opened without blocking: one that no process has
 * open for reading is retried every FT_OUT_FIFO_POLL_MS for
 * FT_OUT_FIFO_WAIT_MS, then refused, instead of waiting for ever. */
static int open_stream(ft_out *o, const char *path, int fifo, ft_status *st)
{
    int fd = -1;
    for (int waited = 0;; waited += FT_OUT_FIFO_POLL_MS) {
        fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC | (fifo ? O_NONBLOCK : 0));
        if (fd >= 0 || !fifo || errno != ENXIO || waited >= FT_OUT_FIFO_WAIT_MS)
            break;
        struct timespec ts = {0, FT_OUT_FIFO_POLL_MS * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (fd < 0 && fifo && errno == ENXIO)
        return ft__fail(st, FT_EINPUT, 0, "%s: is a FIFO that no process reads (waited %d ms); refusing to block on it", path,
                        FT_OUT_FIFO_WAIT_MS);
    if (fd < 0)
        return ft__fail(st, FT_EINPUT, 0, "%s: cannot write: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !(fifo ? S_ISFIFO(sb.st_mode) : S_ISCHR(sb.st_mode))) { /* it changed under us */
        close(fd);
        return ft__fail(st, FT_EINPUT, 0, "%s: changed while being opened; refusing to write to it", path);
    }
    if (fifo) { /* writes block as usual from here on */
        int fl = fcntl(fd, F_GETFL);
        if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
            int e = errno;
            close(fd);
            return ft__fail(st, FT_EINPUT, 0, "%s: cannot write: %s", path, strerror(e));
        }
    }
    o->f = fdopen(fd, "wb");
    if (!o->f) {
        int e = errno;
        close(fd);
        return ft__fail(st, e == ENOMEM ? FT_ENOMEM : FT_EINPUT, 0, "%s: cannot write: %s", path, strerror(e));
    }
    return FT_OK;
}

/* Create the temporary file beside o->dest: FT_OK with o->tmp, o->slot
 * and o->f, or an error naming path. */
static int open_temp(ft_out *o, const char *path, ft_status *st)
{
    size_t n = strlen(o->dest) + 64;
    o->tmp = ft__malloc(n);
    if (!o->tmp)
        return ft__fail(st, FT_ENOMEM, 0, "%s: out of memory", path);
    o->slot = slot_take(o->tmp);
    if (!o->slot)
        return ft__fail(st, FT_EINPUT, 0, "%s: more than %d outputs open at once (FT_OUT_MAX_OPEN)", path, FT_OUT_MAX_OPEN);
    int fd = -1;
    for (int i = 0; i < FT_OUT_TMP_TRIES && fd < 0; i++) {
        unsigned long k = __atomic_fetch_add(&tmp_counter, 1, __ATOMIC_RELAXED);
        snprintf(o->tmp, n, "%s.fusetile-tmp.%ld.%lu", o->dest, (long)getpid(), k);
        fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0666);
        if (fd < 0 && errno != EEXIST)
            return ft__fail(st, FT_EINPUT, 0, "%s: cannot write: %s", path, strerror(errno));
    }
    if (fd < 0)
        return ft__fail(st, FT_EINPUT, 0, "%s: no free temporary name after %d tries (FT_OUT_TMP_TRIES)", path, FT_OUT_TMP_TRIES);
    if (o->mode >= 0 && fchmod(fd, (mode_t)o->mode) != 0) {
        int e = errno;
        close(fd);
        unlink(o->tmp);
        return ft__fail(st, FT_EINPUT, 0, "%s: cannot set the permissions of its new version: %s", path, strerror(e));
    }
    o->f = fdopen(fd, "wb");
    if (!o->f) {
        int e = errno;
        close(fd);
        unlink(o->tmp);
        return ft__fail(st, e == ENOMEM ? FT_ENOMEM : FT_EINPUT, 0, "%s: cannot write: %s", path, strerror(e));
    }
    return FT_OK;
}

/* Contract: fusetile/io.h. */
int ft_out_open(ft_out *o, const char *path, ft_status *st)
{
    enum out_kind kind;
    struct stat sb;
    int islink;
    memset(o, 0, sizeof *o);
    o->mode = -1;
    ft_status_clear(st);
    int rc = classify(path, 0, &kind, &sb, &islink, st);
    if (rc != FT_OK)
        return rc;
    o->path = ft__strdup(path);
    if (!o->path)
        return ft__fail(st, FT_ENOMEM, 0, "%s: out of memory", path);
    if (kind == OUT_DEVICE || kind == OUT_FIFO) {
        rc = open_stream(o, path, kind == OUT_FIFO, st);
    } else {
        if (islink) {
            char buf[PATH_MAX];
            if (!realpath(path, buf)) {
                rc = ft__fail(st, FT_EINPUT, 0, "%s: cannot resolve the symbolic link: %s", path, strerror(errno));
                release(o);
                return rc;
            }
            o->dest = ft__strdup(buf);
        } else {
            o->dest = ft__strdup(path);
        }
        if (!o->dest) {
            release(o);
            return ft__fail(st, FT_ENOMEM, 0, "%s: out of memory", path);
        }
        if (kind == OUT_REGULAR)
            o->mode = (int)(sb.st_mode & 07777);
        rc = open_temp(o, path, st);
    }
    if (rc != FT_OK)
        release(o);
    return rc;
}

/* fsync the directory holding file, so that a rename in it lasts: 0, or
 * an errno (a file system that cannot sync directories is not an error). */
static int sync_dir(const char *file)
{
    /* on the stack: the file is in place, a failed allocation here would
     * be an error after the fact (a longer name open() refuses anyway) */
    char dir[PATH_MAX];
    const char *slash = strrchr(file, '/');
    if (slash) {
        size_t n = slash == file ? 1 : (size_t)(slash - file);
        if (n >= sizeof dir)
            return ENAMETOOLONG;
        memcpy(dir, file, n);
        dir[n] = '\0';
    }
    int fd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int e = fd < 0 ? errno : 0;
    if (fd >= 0) {
        if (fsync(fd) != 0 && errno != EINVAL && errno != EROFS)
            e = errno;
        close(fd);
    }
    return e == EACCES ? 0 : e; /* a directory we may not open for reading */
}

/* Contract: fusetile/io.h. */
int ft_out_close(ft_out *o, ft_status *st)
{
    ft_status_clear(st);
    if (!o->f)
        return FT_OK;
    int e = 0, had_error = ferror(o->f);
    if (fflush(o->f) != 0)
        e = errno;
    else if (had_error)
        e = EIO; /* a write failed earlier and its errno is gone */
    if (!e && o->tmp && fsync(fileno(o->f)) != 0)
        e = errno;
    if (fclose(o->f) != 0 && !e)
        e = errno;
    o->f = NULL;
    if (!e)
        return FT_OK;
    int rc = ft__fail(st, FT_EINPUT, 0, "%s: write failed: %s", o->path, strerror(e));
    ft_out_abort(o);
    return rc;
}

/* Contract: fusetile/io.h. */
int ft_out_commit(ft_out *o, ft_status *st)
{
    ft_status_clear(st);
    if (!o->path)
        return ft__fail(st, FT_EINPUT, 0, "output: not open");
    int rc = ft_out_close(o, st);
    if (rc != FT_OK)
        return rc; /* released */
    if (o->tmp && rename(o->tmp, o->dest) != 0) {
        rc = ft__fail(st, FT_EINPUT, 0, "%s: cannot move the new version into place: %s", o->path, strerror(errno));
    } else if (o->tmp) {
        slot_drop(o->slot);
        o->slot = 0;
        ft__free(o->tmp);
        o->tmp = NULL; /* renamed: nothing left to remove */
        int e = sync_dir(o->dest);
        if (e)
            rc = ft__fail(st, FT_EINPUT, 0, "%s: written, but its directory could not be synced: %s", o->path, strerror(e));
    }
    ft_out_abort(o); /* removes the temporary file if the rename failed */
    return rc;
}

/* Contract: fusetile/io.h. */
void ft_out_abort(ft_out *o)
{
    if (o->f)
        fclose(o->f);
    o->f = NULL;
    if (o->tmp)
        unlink(o->tmp);
    release(o);
}

/* Contract: fusetile/io.h. */
int ft_write_atomic(const char *text, const char *path, ft_status *st)
{
    ft_out o;
    int rc = ft_out_open(&o, path, st);
    if (rc != FT_OK)
        return rc;
    size_t len = strlen(text);
    if (len && fwrite(text, 1, len, o.f) != len) {
        int e = errno;
        ft_out_abort(&o);
        return ft__fail(st, FT_EINPUT, 0, "%s: write failed: %s", path, strerror(e ? e : EIO));
    }
    return ft_out_commit(&o, st);
}
