#!/usr/bin/env bash
# test_sweep_slurm.sh - `fusetile sweep submit|status|gather` without a cluster: help and error paths, --dry-run, and whole submissions through stand-in sbatch, squeue and sacct scripts (sbatch runs the array's tasks at once, in order), with gather's merge rules, resubmission of failed and missing runs, and keys outside the sweep.  The real cluster is tests/cli/test_slurm_cluster.sh.
# usage: test_sweep_slurm.sh FUSETILE VECTORS_DIR
set -u
bin=${1:?usage: test_sweep_slurm.sh FUSETILE VECTORS_DIR}
. "$(dirname "$0")/lib.sh"
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
command -v sqlite3 >/dev/null 2>&1 || { skip 1 "no sqlite3 program (install sqlite3)"; finish "sweep slurm"; }

# a sweep of 20 quick runs: 5 small problems x 4 seeds
w=$tmp/w
mkdir -p "$w" "$tmp/bin" "$tmp/nobin"
for s in 1 2 3 4 5; do
    "$bin" generate --family small --ops 5 --seed "$s" -o "$w/p$s.json" || echo "FAIL: generate"
done
printf 'problems = ["p1.json", "p2.json", "p3.json", "p4.json", "p5.json"];\nseed = [1, 2, 3, 4];\n' >"$w/s.cfg"
q() { sqlite3 "$@" 2>&1; }

# stand-ins: sbatch runs each array task's script in turn (SLURM_ARRAY_TASK_ID
# set) and prints a job id; FAKE_SBATCH_FAIL makes it fail as a real one does;
# squeue prints $FAKE_SQUEUE; sacct says accounting is disabled.
cat >"$tmp/bin/sbatch" <<'EOF'
#!/bin/sh
printf '%s\n' "$@" >"$FAKE_DIR/sbatch.args"
if [ -n "${FAKE_SBATCH_FAIL:-}" ]; then
    echo "sbatch: error: Batch job submission failed: Invalid partition name specified" >&2
    exit 1
fi
spec=
for a in "$@"; do
    case $a in --array=*) spec=${a#--array=} ;; esac
    script=$a
done
n=$(cat "$FAKE_DIR/jobid" 2>/dev/null || echo 41)
n=$((n + 1))
echo "$n" >"$FAKE_DIR/jobid"
for r in $(echo "$spec" | tr ',' ' '); do
    lo=${r%-*}
    hi=${r#*-}
    k=$lo
    while [ "$k" -le "$hi" ]; do
        SLURM_ARRAY_TASK_ID=$k sh "$script" >>"$FAKE_DIR/tasks.out" 2>&1
        k=$((k + 1))
    done
done
echo "$n;cluster"
EOF
cat >"$tmp/bin/squeue" <<'EOF'
#!/bin/sh
printf '%s' "${FAKE_SQUEUE:-}"
EOF
cat >"$tmp/bin/sacct" <<'EOF'
#!/bin/sh
echo "Slurm accounting storage is disabled" >&2
exit 1
EOF
chmod +x "$tmp/bin/sbatch" "$tmp/bin/squeue" "$tmp/bin/sacct"
export FAKE_DIR=$tmp
P=$tmp/bin:$PATH
# no Slurm at all: a PATH with none of its programs
for p in sqlite3 sh; do ln -s "$(command -v $p)" "$tmp/nobin/$p"; done
N=$tmp/nobin
cd "$w" || exit 1

# --- help and usage
check help-submit 0 out 'usage: fusetile sweep submit SWEEP.cfg --slurm' -- "$bin" sweep submit --help
check help-status 0 out 'usage: fusetile sweep status SWEEP.cfg\|OUT.db' -- "$bin" sweep status --help
check help-gather 0 out 'usage: fusetile sweep gather SWEEP.cfg\|OUT.db' -- "$bin" sweep gather -h
check help-sweep 0 out 'fusetile sweep submit SWEEP.cfg --slurm' -- "$bin" sweep --help
check help-main 0 out 'submit SWEEP.cfg --slurm' -- "$bin" --help
check sub-unknown 2 err "sweep: unknown command 'sbumit': run, list, plot, submit, status or gather" -- "$bin" sweep sbumit

# --- submit's errors
check submit-none 2 err 'sweep submit: needs SWEEP.cfg' -- "$bin" sweep submit --slurm
check submit-no-slurm 2 err 'sweep submit: --slurm is required' -- "$bin" sweep submit s.cfg
check submit-two 2 err "sweep submit: unexpected argument 'x.cfg'" -- "$bin" sweep submit s.cfg x.cfg --slurm
check submit-bad-opt 2 err "sweep submit: unknown option '--nope'" -- "$bin" sweep submit s.cfg --slurm --nope
check submit-m-zero 2 err "sweep submit: --array-size is '0', must be an integer from 1 to 100000" -- "$bin" sweep submit s.cfg --slurm --array-size 0
check submit-m-text 2 err "sweep submit: --array-size is 'ten'" -- "$bin" sweep submit s.cfg --slurm --array-size ten
check submit-m-missing 2 err 'option --array-size needs a value' -- "$bin" sweep submit s.cfg --slurm --array-size
check submit-opt-empty 2 err 'sweep submit: --sbatch-opt needs a value' -- "$bin" sweep submit s.cfg --slurm --sbatch-opt=
check submit-db-empty 2 err 'needs a file name' -- "$bin" sweep submit s.cfg --slurm --db ''
check submit-missing 2 err 'nosuch.cfg: cannot open' -- "$bin" sweep submit nosuch.cfg --slurm
printf 'problems = ["p1.json"];\nseeds = [1];\n' >bad.cfg
check submit-bad-file 2 err 'bad.cfg:2: seeds: unknown setting' -- "$bin" sweep submit bad.cfg --slurm
check submit-no-sbatch 2 err '^fusetile: sweep submit: sbatch not found on PATH' -- env PATH="$N" "$bin" sweep submit s.cfg --slurm --db n.db
expect submit-no-sbatch-lines "more than one line" test "$(wc -l <"$tmp/err")" -eq 1
expect submit-no-sbatch-nothing "files written without sbatch" test ! -e n.db -a ! -e n.db.slurm

# --- dry run: the command and the script, nothing written
check dry 0 out '^#!/bin/sh' -- env PATH="$N" "$bin" sweep submit s.cfg --slurm --array-size 4 --db d.db --sbatch-opt --time=5 --dry-run
expect dry-array "no --array=0-3" grep -q -- '^# sbatch --parsable --array=0-3 .*--time=5 .*/d.db.slurm/job.sh$' "$tmp/out"
expect dry-slice "no --slice K/4" grep -q -- "sweep run '$w/s.cfg' --slice \"\$k/4\" --jobs \"\${SLURM_CPUS_PER_TASK:-1}\" --db '$w/d.db.slurm'\"/task-\$k.db\"" "$tmp/out"
expect dry-counts "no counts line" grep -q '^# 20 runs: 0 ok, 0 failed, 20 pending; 4 of 4 tasks to run' "$tmp/out"
expect dry-nothing "dry run wrote files" test ! -e d.db -a ! -e d.db.slurm
sed -n '/^#!/,$p' "$tmp/out" >"$tmp/job.sh"
expect dry-sh "script is not valid sh" sh -n "$tmp/job.sh"
check dry-clamp 0 out '0-19' -- "$bin" sweep submit s.cfg --slurm --array-size 500 --db d.db --dry-run

# --- a submission through the stand-ins: 4 tasks, every run ok
check submit 0 out '^submitted job 42: array 0-3 \(4 of 4 tasks\), 20 runs pending of 20' -- env PATH="$P" "$bin" sweep submit s.cfg --slurm --array-size 4 --sbatch-opt=--time=5
expect submit-args "sbatch arguments" grep -qx -- '--time=5' "$tmp/sbatch.args"
expect submit-parsable "no --parsable" grep -qx -- '--parsable' "$tmp/sbatch.args"
expect submit-script "no job.sh" test -x s.db.slurm/job.sh
expect submit-tasks "task databases" test -f s.db.slurm/task-0.db -a -f s.db.slurm/task-3.db
expect submit-record "jobs.tsv" grep -q "^42	4	0-3	$w/s.cfg	" s.db.slurm/jobs.tsv
expect task-rows "task 1 has not runs 1, 5, 9, 13, 17" test "$(q s.db.slurm/task-1.db 'SELECT group_concat(idx) FROM (SELECT idx FROM runs ORDER BY idx)')" = "1,5,9,13,17"
check status 0 out '^runs     20 total, 20 ok, 0 failed, 0 pending' -- env PATH="$P" "$bin" sweep status s.cfg
expect status-job "job line" grep -q '^job      42: array 0-3 of 4, submitted ' "$tmp/out"
expect status-squeue "squeue line" grep -q '^squeue   not in the queue' "$tmp/out"
expect status-sacct "sacct line" grep -q '^sacct    unavailable: Slurm accounting storage is disabled' "$tmp/out"
check status-noslurm 0 out '^squeue   not found' -- env PATH="$N" "$bin" sweep status s.db
expect status-nosacct "sacct not found" grep -q '^sacct    not found' "$tmp/out"
check status-queued 0 out '^squeue   2 RUNNING, 1 PENDING' -- env PATH="$P" FAKE_SQUEUE=$'42_0 RUNNING\n42_1 RUNNING\n42_3 PENDING\n' "$bin" sweep status s.db
check submit-queued 1 err 'sweep submit: job 42 of this sweep is still in squeue; wait for it or scancel 42' -- env PATH="$P" FAKE_SQUEUE=$'42_3 PENDING\n' "$bin" sweep submit s.cfg --slurm

# --- gather: all rows once, idempotent
check gather 0 out '^gathered 4 task databases into .*/s.db: 20 rows' -- "$bin" sweep gather s.cfg
expect gather-runs "runs line" grep -q '^runs 20: 20 ok, 0 failed, 0 pending' "$tmp/out"
expect gather-keys "keys not all once" test "$(q s.db 'SELECT count(*), count(DISTINCT key), sum(status = "ok") FROM runs')" = "20|20|20"
q s.db 'SELECT key, total FROM runs ORDER BY key' >"$tmp/first"
check gather-again 0 out '20 rows \(20 before\)' -- "$bin" sweep gather s.db
q s.db 'SELECT key, total FROM runs ORDER BY key' >"$tmp/second"
expect gather-idempotent "second gather changed rows" cmp -s "$tmp/first" "$tmp/second"
check gather-local 0 - '' -- "$bin" sweep run s.cfg --jobs 1 --db local.db --quiet
# gathered rows hold the totals the tasks found; the local run has the
# same runs, all ok (its totals may differ: each search stops at its time
# limit, and under FT_RUNNER the local one runs under valgrind, the tasks
# not)
expect gather-equal "gathered totals differ from the tasks' own" test \
    "$(q s.db "ATTACH 's.db.slurm/task-0.db' AS t0; ATTACH 's.db.slurm/task-1.db' AS t1; ATTACH 's.db.slurm/task-2.db' AS t2; ATTACH 's.db.slurm/task-3.db' AS t3;
       SELECT count(*) FROM runs r JOIN (SELECT key, total FROM t0.runs UNION ALL SELECT key, total FROM t1.runs
         UNION ALL SELECT key, total FROM t2.runs UNION ALL SELECT key, total FROM t3.runs) x USING (key) WHERE r.total = x.total")" = 20
expect gather-local "the local run has not the same 20 runs, all ok" test \
    "$(q s.db "ATTACH 'local.db' AS l; SELECT count(*) FROM runs r JOIN l.runs x USING (key) WHERE x.status = 'ok'")" = 20

# an ok row is never replaced by a failed one
q s.db.slurm/task-2.db "UPDATE runs SET status = 'failed', error = 'x', total = NULL WHERE idx = 2" >/dev/null
check gather-okwins 0 out 'runs 20: 20 ok' -- "$bin" sweep gather s.db
expect gather-okwins-row "ok row replaced" test "$(q s.db "SELECT status FROM runs WHERE idx = 2")" = ok

# --- resubmission: a missing run (5, task 1) and failed ones (2 and 6, task 2) are rerun; tasks 0 and 3 are not
q s.db "DELETE FROM runs WHERE idx = 5; UPDATE runs SET status = 'failed', error = 'x' WHERE idx IN (2, 6)" >/dev/null
q s.db.slurm/task-1.db "DELETE FROM runs WHERE idx = 5" >/dev/null
q s.db.slurm/task-2.db "UPDATE runs SET status = 'failed', error = 'x' WHERE idx = 6" >/dev/null
check status-partial 0 out '^runs     20 total, 17 ok, 2 failed, 1 pending' -- env PATH="$P" "$bin" sweep status s.db
# rows written from now on are the reruns (seeded rows keep their finished_at)
t0=$(for d in s.db s.db.slurm/task-*.db; do q "$d" 'SELECT max(finished_at) FROM runs'; done | sort | tail -n 1)
reruns() { for d in s.db.slurm/task-*.db; do q "$d" "SELECT idx FROM runs WHERE finished_at > '$t0'"; done | sort -n | tr '\n' ' '; }
check resubmit 0 out '^submitted job 43: array 1-2 \(2 of 4 tasks\), 3 runs pending of 20 \(17 ok, 2 failed\)' -- env PATH="$P" "$bin" sweep submit s.cfg --slurm
expect resubmit-reruns "reran $(reruns), not 2 5 6" test "$(reruns)" = "2 5 6 "
check regather 0 out 'runs 20: 20 ok, 0 failed, 0 pending' -- "$bin" sweep gather s.cfg
expect regather-keys "keys not all once" test "$(q s.db 'SELECT count(*), count(DISTINCT key), sum(status = "ok") FROM runs')" = "20|20|20"
check resubmit-none 0 out '^nothing to submit: all 20 runs of .*s.cfg are ok' -- env PATH="$P" "$bin" sweep submit s.cfg --slurm
expect resubmit-none-job "sbatch ran" test "$(cat "$tmp/jobid")" = 43

# a new array size: runs ok in the main database are copied into the new slices' databases
check resize 0 out '^nothing to submit' -- env PATH="$P" "$bin" sweep submit s.cfg --slurm --array-size 3
q s.db "DELETE FROM runs WHERE idx = 7" >/dev/null
q s.db.slurm/task-3.db "DELETE FROM runs WHERE idx = 7" >/dev/null
t0=$(for d in s.db s.db.slurm/task-*.db; do q "$d" 'SELECT max(finished_at) FROM runs'; done | sort | tail -n 1)
check resize-one 0 out '^submitted job 44: array 2 \(1 of 5 tasks\)' -- env PATH="$P" "$bin" sweep submit s.cfg --slurm --array-size 5
expect resize-reruns "reran $(reruns), not 7" test "$(reruns)" = "7 "
expect resize-seeded "task 2 of 5 not seeded with its slice's ok runs" test \
    "$(q s.db.slurm/task-2.db "SELECT group_concat(idx) FROM (SELECT idx FROM runs WHERE status = 'ok' AND idx % 5 = 2 ORDER BY idx)")" = "2,7,12,17"

# sbatch failing
q s.db "DELETE FROM runs WHERE idx = 0" >/dev/null
for d in s.db.slurm/task-*.db; do q "$d" "DELETE FROM runs WHERE idx = 0" >/dev/null; done
: >s.db.slurm/task-4.db   # an empty file, as a task killed at its start leaves
check status-empty-task 0 out '^runs     20 total, 19 ok, 0 failed, 1 pending' -- env PATH="$P" "$bin" sweep status s.cfg
check sbatch-fails 1 err '^fusetile: sweep submit: sbatch failed: sbatch: error: Batch job submission failed: Invalid partition' -- env PATH="$P" FAKE_SBATCH_FAIL=1 "$bin" sweep submit s.cfg --slurm
expect sbatch-fails-record "a failed submission was recorded" test "$(grep -c . s.db.slurm/jobs.tsv)" -eq 3

# --- keys outside the sweep, bad databases
q s.db.slurm/task-0.db "INSERT INTO runs(key, status) VALUES ('problem=old.json;seed=9', 'ok')" >/dev/null
check foreign 1 err 'sweep gather: 1 key in the databases is not a run of .*s.cfg \(first: problem=old.json;seed=9\); left out of' -- "$bin" sweep gather s.cfg
expect foreign-left-out "foreign key merged" test "$(q s.db "SELECT count(*) FROM runs WHERE key LIKE 'problem=old%'")" = 0
check foreign-status 0 out '^foreign  1 keys not in the sweep' -- env PATH="$P" "$bin" sweep status s.cfg
echo "not a database" >s.db.slurm/task-9.db
check gather-corrupt 2 err 'sweep gather: .*task-9.db: file is not a database' -- "$bin" sweep gather s.cfg
check status-corrupt 2 err 'task-9.db: file is not a database' -- "$bin" sweep status s.cfg
rm -f s.db.slurm/task-9.db
q s.db.slurm/task-8.db "CREATE TABLE x(a)" >/dev/null
check gather-notsweep 2 err 'task-8.db: no runs table' -- "$bin" sweep gather s.cfg
rm -f s.db.slurm/task-8.db

# --- status and gather arguments
check status-none 2 err 'sweep status: needs SWEEP.cfg or its database' -- "$bin" sweep status
check status-two 2 err "sweep status: unexpected argument 'b'" -- "$bin" sweep status a b
check status-bad-opt 2 err "sweep status: unknown option '--x'" -- "$bin" sweep status s.cfg --x
check status-db-db 2 err 'sweep status: --db is for a sweep file argument; s.db is a database' -- "$bin" sweep status s.db --db s.db
check status-missing 2 err 'nosuch.cfg: cannot open' -- "$bin" sweep status nosuch.cfg
check gather-none 2 err 'sweep gather: needs SWEEP.cfg or its database' -- "$bin" sweep gather
check gather-bad-opt 2 err "sweep gather: unknown option '--x'" -- "$bin" sweep gather s.cfg --x
check submit-db-arg 2 err 'sweep submit: s.db is a database; name the sweep file' -- "$bin" sweep submit s.db --slurm
# a database without a submission: the sweep from its meta table
check status-meta 0 out '^runs     20 total, 20 ok' -- env PATH="$P" "$bin" sweep status local.db
expect status-meta-job "job line" grep -q '^job      none submitted' "$tmp/out"
sqlite3 nometa.db "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT); CREATE TABLE runs(key TEXT PRIMARY KEY, status TEXT)"
check status-nometa 2 err 'sweep status: nometa.db: no sweep file recorded in it; name the sweep file \(fusetile sweep status SWEEP --db nometa.db\)' -- "$bin" sweep status nometa.db
# a fresh sweep's status: nothing yet
check status-fresh 0 out '^runs     20 total, 0 ok, 0 failed, 20 pending' -- env PATH="$P" "$bin" sweep status s.cfg --db fresh.db
expect status-fresh-nothing "status wrote files" test ! -e fresh.db -a ! -e fresh.db.slurm

finish "sweep slurm"
