#!/usr/bin/env bash
# acceptance.sh - the Slurm acceptance scenario, run inside tests/slurm/cluster.sh (SLURM_CONF set): a 200-run sweep submitted as an array of 8 tasks, one task cancelled mid-run with scancel, the array waited for, resubmitted, waited for, gathered: every run exactly once, all ok, totals equal to a local `sweep run`.
# usage: cluster.sh run bash acceptance.sh FUSETILE
# Writes the cluster's directory ($FT_SLURM_DIR) to $FT_SLURM_DIR_FILE when
# that is set, so that the caller can check nothing of it is left running.
set -u
bin=${1:?usage: acceptance.sh FUSETILE}
. "$(dirname "$0")/../cli/lib.sh"
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
[ -n "${FT_SLURM_DIR_FILE:-}" ] && echo "${FT_SLURM_DIR:-}" >"$FT_SLURM_DIR_FILE"
q() { sqlite3 "$@" 2>&1; }

# wait_job SECONDS JOBID: until squeue no longer lists the job (1 on timeout)
wait_job() {
    local end=$((SECONDS + $1))
    while [ $SECONDS -lt "$end" ]; do
        [ -z "$(timeout 10 squeue -h -j "$2" -o %i 2>/dev/null)" ] && return 0
        sleep 0.5
    done
    return 1
}

# 200 deterministic runs: 5 small problems of 7 ops (searched exhaustively:
# the same schedule whatever the seed and the time limit) x 40 seeds, about
# a quarter of a second each
w=$tmp/w
mkdir -p "$w"
cd "$w" || exit 1
for s in 4 19 5 8 26; do
    "$bin" generate --family small --ops 7 --seed "$s" -o "p$s.json" || echo "FAIL: generate $s"
done
cat >s.cfg <<'EOF'
# 200 runs: the acceptance test's sweep
problems = ["p4.json", "p19.json", "p5.json", "p8.json", "p26.json"];
seed = { from = 1; to = 40; step = 1; };
EOF
check list 0 - '' -- "$bin" sweep list s.cfg
expect list-200 "not 200 runs" test "$(wc -l <"$tmp/out")" -eq 200

# --- submit 8 tasks; cancel task 0 once it has recorded a run or two
check submit 0 out '^submitted job [0-9]+: array 0-7 \(8 of 8 tasks\), 200 runs pending of 200' -- "$bin" sweep submit s.cfg --slurm --array-size 8
job=$(sed -n 's/^submitted job \([0-9]*\):.*/\1/p' "$tmp/out")
echo "submitted job $job"
cancelled=0
end=$((SECONDS + 60))
while [ $SECONDS -lt $end ]; do
    n=$(q s.db.slurm/task-0.db "SELECT count(*) FROM runs WHERE finished_at IS NOT NULL" 2>/dev/null)
    case $n in
        '' | *[!0-9]*) n=0 ;;
    esac
    if [ "$n" -ge 2 ]; then
        timeout 10 scancel "${job}_0" && cancelled=1
        echo "cancelled ${job}_0 after $n of its 25 runs"
        break
    fi
    sleep 0.1
done
expect cancel "task 0 never recorded two runs, or scancel failed" test "$cancelled" = 1
check status-running 0 out '^job      '"$job"': array 0-7 of 8' -- "$bin" sweep status s.cfg
expect status-squeue "no squeue line" grep -q '^squeue   ' "$tmp/out"
sed 's/^/    /' "$tmp/out"
expect wait-1 "job $job still queued after 150 s" wait_job 150 "$job"

# --- task 0 stopped mid-run: some runs are missing
check status-after 0 out '^runs     200 total, [0-9]+ ok, 0 failed, [1-9][0-9]* pending' -- "$bin" sweep status s.db
sed 's/^/    /' "$tmp/out"
done0=$(q s.db.slurm/task-0.db "SELECT count(*) FROM runs WHERE status = 'ok'")
expect mid-run "task 0 has $done0 of 25 runs: the cancel did not land mid-run" test "$done0" -gt 0 -a "$done0" -lt 25
others=$(for k in 1 2 3 4 5 6 7; do q s.db.slurm/task-$k.db "SELECT count(*) FROM runs WHERE status = 'ok'"; done | awk '{ s += $1 } END { print s }')
expect others-done "tasks 1-7 have $others ok runs, not 175" test "$others" = 175

# --- resubmit: only task 0, only its missing runs
check resubmit 0 out '^submitted job [0-9]+: array 0 \(1 of 8 tasks\), '"$((25 - done0))"' runs pending of 200 \('"$((175 + done0))"' ok, 0 failed\)' -- "$bin" sweep submit s.cfg --slurm
job2=$(sed -n 's/^submitted job \([0-9]*\):.*/\1/p' "$tmp/out")
cat "$tmp/out"
expect new-job "resubmission reused job id $job" test -n "$job2" -a "$job2" != "$job"
expect wait-2 "job $job2 still queued after 120 s" wait_job 120 "$job2"

# --- gather: every run exactly once, all ok
check gather 0 out '^runs 200: 200 ok, 0 failed, 0 pending' -- "$bin" sweep gather s.cfg
cat "$tmp/out"
got=$(q s.db "SELECT count(*), count(DISTINCT key), sum(status = 'ok') FROM runs")
echo "gathered: count, distinct keys, ok = $got"
expect gather-once "gathered rows $got, not 200|200|200" test "$got" = "200|200|200"
check gather-twice 0 out '200 rows \(200 before\)' -- "$bin" sweep gather s.db
check resubmit-none 0 out '^nothing to submit: all 200 runs' -- "$bin" sweep submit s.cfg --slurm
expect jobs-recorded "jobs.tsv has not two jobs" test "$(grep -c . s.db.slurm/jobs.tsv)" -eq 2

# --- the same totals as a local run of the same sweep
t0=$SECONDS
check local 0 - '' -- "$bin" sweep run s.cfg --jobs 2 --db local.db --quiet
echo "local sweep run: $((SECONDS - t0)) s"
same=$(q s.db "ATTACH 'local.db' AS l; SELECT count(*) FROM runs AS r JOIN l.runs AS x USING (key) WHERE r.status = 'ok' AND x.status = 'ok' AND r.total = x.total")
echo "totals equal to the local run: $same of 200"
expect local-equal "$same of 200 totals equal the local run's" test "$same" = 200

finish "slurm acceptance"
