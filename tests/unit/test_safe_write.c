/* test_safe_write.c - unit tests of the safe output writer (sched/core/safe_write.c): atomic replacement, symbolic links written through, devices and FIFOs in place, refused kinds, protected inputs, write failures (a full disk without root), the named limits, temporary files removed. */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "ft_testutil.h"

#include "fusetile/io.h"

typedef struct fixture {
    char dir[512];
    char a[600], b[600], link[600];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f || ftt_tmpdir(f->dir, sizeof f->dir, "ft-safe-write") != 0) {
        free(f);
        return -1;
    }
    snprintf(f->a, sizeof f->a, "%s/a.json", f->dir);
    snprintf(f->b, sizeof f->b, "%s/b.json", f->dir);
    snprintf(f->link, sizeof f->link, "%s/link.json", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    ft_out_unprotect_all();
    ftt_rmtree(f->dir);
    free(f);
    return 0;
}

/* The whole content of path into buf (n bytes, NUL-terminated); "" when
 * it cannot be read. */
static const char *slurp(const char *path, char *buf, size_t n)
{
    FILE *in = fopen(path, "rb");
    size_t got = in ? fread(buf, 1, n - 1, in) : 0;
    buf[got] = '\0';
    if (in)
        fclose(in);
    return buf;
}

static void put(const char *path, const char *text)
{
    FILE *out = fopen(path, "wb");
    assert_non_null(out);
    fputs(text, out);
    assert_int_equal(fclose(out), 0);
}

/* How many entries of dir have "fusetile-tmp" in their names. */
static int temporaries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    assert_non_null(d);
    while ((e = readdir(d)))
        n += strstr(e->d_name, "fusetile-tmp") != NULL;
    closedir(d);
    return n;
}

/* A new name is created, an existing regular file replaced with its
 * permission bits kept; nothing else is left in the directory. */
static void test_regular_new_and_replaced(void **state)
{
    fixture *f = *state;
    ft_status st;
    char buf[256];
    struct stat sb;
    assert_int_equal(ft_write_atomic("one\n", f->a, &st), FT_OK);
    assert_string_equal(slurp(f->a, buf, sizeof buf), "one\n");
    assert_int_equal(chmod(f->a, 0640), 0);
    assert_int_equal(stat(f->a, &sb), 0);
    ino_t before = sb.st_ino;
    assert_int_equal(ft_write_atomic("two\n", f->a, &st), FT_OK);
    assert_string_equal(slurp(f->a, buf, sizeof buf), "two\n");
    assert_int_equal(stat(f->a, &sb), 0);
    assert_int_equal(sb.st_mode & 07777, 0640);
    assert_true(sb.st_ino != before); /* a new file renamed over the old */
    assert_int_equal(temporaries(f->dir), 0);
    assert_int_equal(ft_out_check(f->a, 1, &st), FT_OK);
}

/* A symbolic link stays a link; the file it names is replaced; a
 * dangling link is refused and nothing is created. */
static void test_symlink_written_through(void **state)
{
    fixture *f = *state;
    ft_status st;
    char buf[256];
    struct stat sb;
    put(f->a, "old\n");
    assert_int_equal(symlink("a.json", f->link), 0);
    assert_int_equal(ft_write_atomic("new\n", f->link, &st), FT_OK);
    assert_int_equal(lstat(f->link, &sb), 0);
    assert_true(S_ISLNK(sb.st_mode));
    assert_string_equal(slurp(f->a, buf, sizeof buf), "new\n");
    assert_int_equal(temporaries(f->dir), 0);

    char dangling[700];
    snprintf(dangling, sizeof dangling, "%s/dangling.json", f->dir);
    assert_int_equal(symlink("nowhere/x.json", dangling), 0);
    assert_int_equal(ft_write_atomic("x\n", dangling, &st), FT_EINPUT);
    assert_non_null(strstr(st.msg, "is a dangling symbolic link; refusing to write through it"));
    assert_int_equal(ft_out_check(dangling, 0, &st), FT_EINPUT);
    assert_int_equal(lstat(dangling, &sb), 0);
    assert_true(S_ISLNK(sb.st_mode));
}

/* /dev/null is written in place and stays a character device; a
 * database (regular_only) may not be one. */
static void test_character_device_in_place(void **state)
{
    (void)state;
    ft_status st;
    struct stat sb;
    assert_int_equal(ft_write_atomic("nothing\n", "/dev/null", &st), FT_OK);
    assert_int_equal(stat("/dev/null", &sb), 0);
    assert_true(S_ISCHR(sb.st_mode));
    assert_int_equal(ft_out_check("/dev/null", 0, &st), FT_OK);
    assert_int_equal(ft_out_check("/dev/null", 1, &st), FT_EINPUT);
    assert_string_equal(st.msg, "/dev/null: is a character device; refusing to write to it (a database must be a regular file)");
    /* a failed write to a device is reported, not lost */
    assert_int_equal(ft_write_atomic("full\n", "/dev/full", &st), FT_EINPUT);
    assert_string_equal(st.msg, "/dev/full: write failed: No space left on device");
}

/* A directory and a socket are refused with one line; nothing changes. */
static void test_refused_kinds(void **state)
{
    fixture *f = *state;
    ft_status st;
    assert_int_equal(ft_write_atomic("x", f->dir, &st), FT_EINPUT);
    char want[700];
    snprintf(want, sizeof want, "%s: cannot write: Is a directory", f->dir);
    assert_string_equal(st.msg, want);

    char sock[700];
    snprintf(sock, sizeof sock, "%s/sock", f->dir);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    assert_true(strlen(sock) < sizeof sa.sun_path);
    strcpy(sa.sun_path, sock);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(ft_write_atomic("x", sock, &st), FT_EINPUT);
    snprintf(want, sizeof want, "%s: is a socket; refusing to write to it", sock);
    assert_non_null(strstr(st.msg, want));
    close(fd);
    struct stat sb;
    assert_int_equal(lstat(sock, &sb), 0);
    assert_true(S_ISSOCK(sb.st_mode));
    assert_int_equal(ft_write_atomic("x", "", &st), FT_EINPUT);
    assert_string_equal(st.msg, "output: empty file name");
}

/* A FIFO is written in place when a process reads it, and refused after
 * FT_OUT_FIFO_WAIT_MS (not a hang) when none does. */
static void test_fifo(void **state)
{
    fixture *f = *state;
    ft_status st;
    char fifo[700], got[700], buf[256];
    snprintf(fifo, sizeof fifo, "%s/fifo", f->dir);
    snprintf(got, sizeof got, "%s/got", f->dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    double t0 = ftt_seconds();
    assert_int_equal(ft_write_atomic("x\n", fifo, &st), FT_EINPUT);
    double waited = ftt_seconds() - t0;
    assert_non_null(strstr(st.msg, "is a FIFO that no process reads"));
    assert_true(waited >= FT_OUT_FIFO_WAIT_MS / 1000.0 * 0.9 && waited < FT_OUT_FIFO_WAIT_MS / 1000.0 + 5);

    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) { /* the reader: FIFO to file */
        char b[64];
        int in = open(fifo, O_RDONLY), out = open(got, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        ssize_t n;
        while (in >= 0 && out >= 0 && (n = read(in, b, sizeof b)) > 0)
            if (write(out, b, (size_t)n) != n)
                _exit(1);
        _exit(in >= 0 && out >= 0 ? 0 : 1);
    }
    assert_int_equal(ft_write_atomic("through the pipe\n", fifo, &st), FT_OK);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_string_equal(slurp(got, buf, sizeof buf), "through the pipe\n");
    struct stat sb;
    assert_int_equal(lstat(fifo, &sb), 0);
    assert_true(S_ISFIFO(sb.st_mode));
    assert_int_equal(ft_out_check(fifo, 0, &st), FT_OK);
    assert_int_equal(ft_out_check(fifo, 1, &st), FT_EINPUT);
}

/* A protected input is refused under its own name, another name (a
 * symbolic link, a hard link, a path with ./), and the file is kept. */
static void test_protected_inputs(void **state)
{
    fixture *f = *state;
    ft_status st;
    char buf[256], want[1400], hard[700], dotted[700];
    put(f->a, "input\n");
    assert_int_equal(ft_out_protect(f->a, "problem", &st), FT_OK);
    assert_int_equal(ft_out_protect(f->a, "problem", &st), FT_OK); /* once */
    assert_int_equal(ft_out_protect("/nonexistent/x.json", "schedule", &st), FT_OK);
    assert_int_equal(ft_write_atomic("x", f->a, &st), FT_EINPUT);
    snprintf(want, sizeof want, "%s: is the problem input; refusing to overwrite it", f->a);
    assert_string_equal(st.msg, want);
    assert_int_equal(symlink("a.json", f->link), 0);
    snprintf(hard, sizeof hard, "%s/hard.json", f->dir);
    assert_int_equal(link(f->a, hard), 0);
    snprintf(dotted, sizeof dotted, "%s/./a.json", f->dir);
    const char *names[] = {f->link, hard, dotted};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(ft_write_atomic("x", names[i], &st), FT_EINPUT);
        snprintf(want, sizeof want, "%s: is the problem input (%s); refusing to overwrite it", names[i], f->a);
        assert_string_equal(st.msg, want);
        assert_int_equal(ft_out_check(names[i], 0, &st), FT_EINPUT);
    }
    assert_string_equal(slurp(f->a, buf, sizeof buf), "input\n");
    assert_int_equal(ft_write_atomic("other\n", f->b, &st), FT_OK); /* other files are fine */
    ft_out_unprotect_all();
    assert_int_equal(ft_write_atomic("now allowed\n", f->a, &st), FT_OK);
    assert_string_equal(slurp(f->a, buf, sizeof buf), "now allowed\n");
}

/* A write that fails on the way (the temporary file's descriptor pointed
 * at /dev/full: a full disk, needing no root) is one error at commit; the
 * previous file is kept and no temporary file is left. */
static void test_full_disk(void **state)
{
    fixture *f = *state;
    ft_status st;
    ft_out o;
    char buf[256];
    put(f->a, "previous\n");
    assert_int_equal(ft_out_open(&o, f->a, &st), FT_OK);
    assert_int_equal(temporaries(f->dir), 1);
    int full = open("/dev/full", O_WRONLY);
    assert_true(full >= 0);
    assert_true(dup2(full, fileno(o.f)) >= 0);
    close(full);
    for (int i = 0; i < 5000; i++) /* more than a stdio buffer */
        fputs("new content that does not fit\n", o.f);
    assert_int_equal(ft_out_commit(&o, &st), FT_EINPUT);
    char want[700];
    snprintf(want, sizeof want, "%s: write failed: No space left on device", f->a);
    assert_string_equal(st.msg, want);
    assert_string_equal(slurp(f->a, buf, sizeof buf), "previous\n");
    assert_int_equal(temporaries(f->dir), 0);
    assert_null(o.f);
    assert_null(o.path);
}

/* A directory that refuses new files: one error, the previous file kept
 * (as root, whom permissions do not stop, this case is the command-line
 * test's, which runs the writer as another user). */
static void test_unwritable_directory(void **state)
{
    fixture *f = *state;
    ft_status st;
    char buf[256];
    if (geteuid() == 0) {
        print_message("test_unwritable_directory: skipped as root (tests/cli/test_outputs.sh covers it)\n");
        return;
    }
    put(f->a, "previous\n");
    assert_int_equal(chmod(f->dir, 0555), 0);
    int rc = ft_write_atomic("x", f->a, &st);
    assert_int_equal(chmod(f->dir, 0755), 0);
    assert_int_equal(rc, FT_EINPUT);
    char want[700];
    snprintf(want, sizeof want, "%s: cannot write: Permission denied", f->a);
    assert_string_equal(st.msg, want);
    assert_string_equal(slurp(f->a, buf, sizeof buf), "previous\n");
    assert_int_equal(temporaries(f->dir), 0);
}

/* Abort and the signal clean-up remove the temporary file and leave the
 * destination; a streamed output becomes visible only at commit. */
static void test_abort_and_signal_cleanup(void **state)
{
    fixture *f = *state;
    ft_status st;
    ft_out o;
    char buf[256];
    put(f->a, "previous\n");
    assert_int_equal(ft_out_open(&o, f->a, &st), FT_OK);
    fputs("half", o.f);
    ft_out_abort(&o);
    ft_out_abort(&o); /* twice is harmless */
    assert_string_equal(slurp(f->a, buf, sizeof buf), "previous\n");
    assert_int_equal(temporaries(f->dir), 0);

    assert_int_equal(ft_out_open(&o, f->a, &st), FT_OK);
    fputs("streamed\n", o.f);
    assert_int_equal(temporaries(f->dir), 1);
    ft_out_signal_cleanup(); /* what a SIGTERM handler does */
    assert_int_equal(temporaries(f->dir), 0);
    assert_string_equal(slurp(f->a, buf, sizeof buf), "previous\n");
    assert_int_equal(ft_out_commit(&o, &st), FT_EINPUT); /* its file is gone */
    assert_string_equal(slurp(f->a, buf, sizeof buf), "previous\n");

    assert_int_equal(ft_out_open(&o, f->b, &st), FT_OK);
    fputs("streamed\n", o.f);
    assert_int_equal(access(f->b, F_OK), -1);
    assert_int_equal(ft_out_close(&o, &st), FT_OK);
    assert_int_equal(access(f->b, F_OK), -1); /* closed, not yet in place */
    assert_int_equal(ft_out_commit(&o, &st), FT_OK);
    assert_string_equal(slurp(f->b, buf, sizeof buf), "streamed\n");
    assert_int_equal(ft_out_commit(&o, &st), FT_EINPUT); /* released */
    assert_string_equal(st.msg, "output: not open");
}

/* FT_OUT_MAX_OPEN outputs open at once, FT_OUT_MAX_INPUTS inputs: one
 * more of either is refused with a message naming the limit. */
static void test_limits(void **state)
{
    fixture *f = *state;
    ft_status st;
    static ft_out o[FT_OUT_MAX_OPEN + 1];
    char path[700];
    for (int i = 0; i < FT_OUT_MAX_OPEN; i++) {
        snprintf(path, sizeof path, "%s/out%d", f->dir, i);
        assert_int_equal(ft_out_open(&o[i], path, &st), FT_OK);
    }
    snprintf(path, sizeof path, "%s/one-more", f->dir);
    assert_int_equal(ft_out_open(&o[FT_OUT_MAX_OPEN], path, &st), FT_EINPUT);
    assert_non_null(strstr(st.msg, "FT_OUT_MAX_OPEN"));
    for (int i = 0; i < FT_OUT_MAX_OPEN; i++)
        ft_out_abort(&o[i]);
    assert_int_equal(temporaries(f->dir), 0);

    for (int i = 0; i <= FT_OUT_MAX_INPUTS; i++) {
        snprintf(path, sizeof path, "%s/in%d", f->dir, i);
        put(path, "x");
        int rc = ft_out_protect(path, "measured", &st);
        assert_int_equal(rc, i < FT_OUT_MAX_INPUTS ? FT_OK : FT_EINPUT);
    }
    assert_non_null(strstr(st.msg, "FT_OUT_MAX_INPUTS"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_regular_new_and_replaced, setup, teardown),
        cmocka_unit_test_setup_teardown(test_symlink_written_through, setup, teardown),
        cmocka_unit_test_setup_teardown(test_character_device_in_place, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused_kinds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fifo, setup, teardown),
        cmocka_unit_test_setup_teardown(test_protected_inputs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_full_disk, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unwritable_directory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_abort_and_signal_cleanup, setup, teardown),
        cmocka_unit_test_setup_teardown(test_limits, setup, teardown),
    };
    return cmocka_run_group_tests_name("safe_write", tests, NULL, NULL);
}
