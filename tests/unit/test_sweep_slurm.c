/* test_sweep_slurm.c - the Slurm driver of libfusetile_sweep (fusetile/slurm.h) without Slurm: array specifications, sh quoting, the file layout and jobs.tsv, the batch script, running a program with a time limit, and a dry-run plan; whole submissions through stand-in programs are tests/cli/test_sweep_slurm.sh's. */
#include "ft_testutil.h"
#include "sweep_runs.h"

#include <errno.h>
#include <unistd.h>

#include "fusetile/slurm.h"

#define NRUNS 4

typedef struct fixture {
    char dir[64];
    char db[128];
    ft_sweep sw;
    ft_sweep_run runs[NRUNS];
    char keys[NRUNS][FTT_SWEEP_KEY];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f || ftt_tmpdir(f->dir, sizeof f->dir, "ft-slurm")) {
        free(f);
        return -1;
    }
    snprintf(f->db, sizeof f->db, "%s/out.db", f->dir);
    ftt_sweep_runs(&f->sw, f->runs, f->keys, NRUNS);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    int rc = ftt_rmtree(f->dir);
    free(f);
    return rc;
}

/* Pending tasks as ranges; a buffer too small says so. */
static void test_slurm_array_spec(void **state)
{
    (void)state;
    char buf[64];
    const int all[] = {1, 2, 1, 3}, some[] = {0, 1, 0, 1, 1, 1, 0, 2}, none[] = {0, 0};
    assert_int_equal(ft_slurm_array_spec(all, 4, buf, sizeof buf), 4);
    assert_string_equal(buf, "0-3");
    assert_int_equal(ft_slurm_array_spec(some, 8, buf, sizeof buf), 5);
    assert_string_equal(buf, "1,3-5,7");
    assert_int_equal(ft_slurm_array_spec(none, 2, buf, sizeof buf), 0);
    assert_string_equal(buf, "");
    assert_int_equal(ft_slurm_array_spec(some, 8, buf, 4), -1);
}

/* Plain words stay as they are; others are single-quoted, quotes and all. */
static void test_slurm_command_line(void **state)
{
    (void)state;
    char *argv[] = {"sbatch", "--array=0-3", "--comment=a b", "it's", "", "/x/job%A.out", NULL};
    char *line = ft_slurm_command_line(argv);
    assert_non_null(line);
    assert_string_equal(line, "sbatch --array=0-3 '--comment=a b' 'it'\\''s' '' /x/job%A.out");
    free(line);
}

/* The layout of a database's files, jobs.tsv, the task databases found
 * in index order, the sweep file a database goes with. */
static void test_slurm_files(void **state)
{
    fixture *f = *state;
    ft_slurm_layout l;
    ft_status st;
    assert_int_equal(ft_slurm_layout_init(&l, f->db), 0);
    assert_string_equal(l.db, f->db);
    char want[160];
    snprintf(want, sizeof want, "%s.slurm", f->db);
    assert_string_equal(l.dir, want);
    char *t3 = ft_slurm_task_db(&l, 3);
    snprintf(want, sizeof want, "%s.slurm/task-3.db", f->db);
    assert_string_equal(t3, want);

    /* no directory yet: no tasks, no job */
    char **list = NULL;
    int n = -1;
    ft_slurm_job j;
    assert_int_equal(ft_slurm_task_dbs(&l, &list, &n), 0);
    assert_null(list);
    assert_int_equal(n, 0);
    assert_int_equal(ft_slurm_last_job(&l, &j), 0);
    assert_false(ft_slurm_is_database(f->db));

    /* task files found by their index, other names left alone */
    assert_int_equal(mkdir(l.dir, 0777), 0);
    const char *names[] = {"task-10.db", "task-2.db", "task-x.db", "job.sh", "task-1.db-wal"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char p[256];
        snprintf(p, sizeof p, "%s/%s", l.dir, names[i]);
        FILE *out = fopen(p, "w");
        assert_non_null(out);
        fclose(out);
    }
    assert_int_equal(ft_slurm_task_dbs(&l, &list, &n), 0);
    assert_int_equal(n, 2);
    assert_non_null(strstr(list[0], "/task-2.db"));
    assert_non_null(strstr(list[1], "/task-10.db"));
    ft_slurm_free_list(list, n);

    /* jobs.tsv: the last valid line wins */
    ft_slurm_job a = {"41", 4, "0-3", "/abs/s.cfg", "2024-01-01T00:00:00Z"};
    ft_slurm_job b = {"42", 3, "1", "/abs/t.cfg", "2024-01-02T00:00:00Z"};
    assert_int_equal(ft_slurm_record(&l, &a), 0);
    assert_int_equal(ft_slurm_record(&l, &b), 0);
    assert_int_equal(ft_slurm_last_job(&l, &j), 1);
    assert_string_equal(j.id, "42");
    assert_int_equal(j.array_size, 3);
    assert_string_equal(j.array, "1");
    assert_string_equal(j.sweep, "/abs/t.cfg");
    assert_string_equal(j.when, "2024-01-02T00:00:00Z");
    char *sweep = NULL;
    assert_int_equal(ft_slurm_recorded_sweep(&l, &sweep, &st), FT_OK);
    assert_string_equal(sweep, "/abs/t.cfg");
    free(sweep);

    /* an SQLite file is told from another one by its header */
    ft_sweep_db *db = NULL;
    assert_int_equal(ft_sweep_db_open(t3, "s.cfg", &db, &st), FT_OK);
    ft_sweep_db_close(db);
    assert_true(ft_slurm_is_database(t3));
    snprintf(want, sizeof want, "%s/job.sh", l.dir);
    assert_false(ft_slurm_is_database(want));
    free(t3);
    ft_slurm_layout_free(&l);
    assert_null(l.db);
}

/* The batch script: the working directory, the program, the slice and the
 * task's database, every path quoted. */
static void test_slurm_script(void **state)
{
    (void)state;
    ft_slurm_layout l = {"/r/o'd.db", "/r/o'd.db.slurm"};
    char *s = ft_slurm_script(&l, "/bin/fusetile", "/r/s.cfg", "/work dir", 8, "sbatch --parsable x");
    assert_non_null(s);
    assert_int_equal(strncmp(s, "#!/bin/sh\n", 10), 0);
    assert_non_null(strstr(s, "# submitted as: sbatch --parsable x\n"));
    assert_non_null(strstr(s, "\ncd '/work dir'\n"));
    assert_non_null(strstr(s, "\nexec '/bin/fusetile' sweep run '/r/s.cfg' --slice \"$k/8\" --jobs "
                              "\"${SLURM_CPUS_PER_TASK:-1}\" --db '/r/o'\\''d.db.slurm'\"/task-$k.db\" --quiet\n"));
    free(s);
}

/* A program's output, status and time limit; one not found. */
static void test_slurm_run(void **state)
{
    (void)state;
    ft_slurm_run_result r;
    char *ok[] = {"sh", "-c", "echo one; echo two; echo oops >&2; exit 3", NULL};
    assert_int_equal(ft_slurm_run(ok, 30, &r), 0);
    assert_int_equal(r.status, 3);
    assert_int_equal(r.timed_out, 0);
    assert_string_equal(r.out, "one\ntwo\n");
    assert_string_equal(r.err, "oops\n");
    char line[16];
    assert_string_equal(ft_slurm_last_line(r.out, line, sizeof line), "two");
    assert_string_equal(ft_slurm_last_line("\n\n", line, sizeof line), "");
    assert_string_equal(ft_slurm_last_line("a\na long last line\n", line, 7), "a long");
    ft_slurm_run_free(&r);

    char *slow[] = {"sh", "-c", "sleep 20", NULL};
    double t0 = ftt_seconds();
    assert_int_equal(ft_slurm_run(slow, 0.2, &r), 0);
    assert_int_equal(r.timed_out, 1);
    assert_int_equal(r.status, -1);
    assert_true(ftt_seconds() - t0 < 10);
    ft_slurm_run_free(&r);

    char *missing[] = {"no-such-program-ft", NULL};
    errno = 0;
    assert_int_equal(ft_slurm_run(missing, 1, &r), -1);
    assert_int_equal(errno, ENOENT);
    assert_null(ft_slurm_which("no-such-program-ft"));
    char *self = ft_slurm_self_path(NULL);
    assert_non_null(self);
    assert_int_equal(self[0], '/');
    free(self);
}

/* A dry-run plan: every task pending, the sbatch command and the script,
 * nothing created; M defaults to the runs when fewer than 64. */
static void test_slurm_plan_dry_run(void **state)
{
    fixture *f = *state;
    ft_slurm_layout l;
    ft_status st;
    assert_int_equal(ft_slurm_layout_init(&l, f->db), 0);
    const char *opts[] = {"--time=5"};
    ft_slurm_submit_opts o = {3, opts, 1, 1, NULL};
    ft_slurm_submission s;
    memset(&s, 0, sizeof s);
    assert_int_equal(ft_slurm_plan(&f->sw, "/abs/s.cfg", &l, &o, &s, &st), FT_OK);
    assert_int_equal(s.m, 3);
    assert_int_equal(s.ntasks, 3);
    assert_string_equal(s.spec, "0-2");
    assert_int_equal(s.pending[0], 2); /* runs 0 and 3 */
    assert_int_equal(s.pending[1], 1);
    assert_int_equal(s.tally.total, NRUNS);
    assert_int_equal(s.tally.pending, NRUNS);
    assert_int_equal(s.gathered, 0);
    assert_null(s.sbatch);
    assert_string_equal(s.argv[0], "sbatch");
    assert_string_equal(s.argv[2], "--array=0-2");
    assert_string_equal(s.argv[5], "--time=5");
    assert_null(s.argv[7]);
    char want[256];
    snprintf(want, sizeof want, "sbatch --parsable --array=0-2 --job-name=fusetile-sweep --output=%s/job%%A-task%%a.out "
                                "--time=5 %s/job.sh",
             l.dir, l.dir);
    assert_string_equal(s.command, want);
    assert_non_null(strstr(s.script, "--slice \"$k/3\""));
    assert_non_null(strstr(s.script, "'/abs/s.cfg'"));
    assert_int_equal(access(l.dir, F_OK), -1);
    ft_slurm_submission_free(&s);

    o.array_size = 0;
    memset(&s, 0, sizeof s);
    assert_int_equal(ft_slurm_plan(&f->sw, "/abs/s.cfg", &l, &o, &s, &st), FT_OK);
    assert_int_equal(s.m, NRUNS);
    assert_string_equal(s.spec, "0-3");
    ft_slurm_submission_free(&s);

    /* submitting a dry run's plan is refused */
    assert_int_equal(ft_slurm_submit(&f->sw, &l, &s, &st), FT_EINPUT);
    ft_slurm_layout_free(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slurm_array_spec),
        cmocka_unit_test(test_slurm_command_line),
        cmocka_unit_test_setup_teardown(test_slurm_files, setup, teardown),
        cmocka_unit_test(test_slurm_script),
        cmocka_unit_test(test_slurm_run),
        cmocka_unit_test_setup_teardown(test_slurm_plan_dry_run, setup, teardown),
    };
    return cmocka_run_group_tests_name("sweep_slurm", tests, NULL, NULL);
}
