#!/usr/bin/env bash
# test_sweep.sh - `fusetile sweep run|list|plot`: every kind of bad sweep file (one line naming file, line and setting, exit 2, no database), --help, a sweep run twice (the second skips all), --jobs 1 against 2, a worker pool killed with SIGKILL and rerun (every run once, finished rows kept), its parent alone killed (the workers die with it), slices, the plot and its errors.
# usage: test_sweep.sh FUSETILE VECTORS_DIR
set -u
bin=${1:?usage: test_sweep.sh FUSETILE VECTORS_DIR}
vec=${2:?usage: test_sweep.sh FUSETILE VECTORS_DIR}
. "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
case $vec in /*) ;; *) vec=$(pwd)/$vec ;; esac
slow=${FT_SLOW:-0}
have_sqlite=1
command -v sqlite3 >/dev/null 2>&1 || { have_sqlite=0; skip 1 "the database checks: sqlite3 (the command) not found (install sqlite3)"; }
q() { sqlite3 "$1" "$2"; }

check help 0 out '^usage: fusetile sweep run SWEEP.cfg' -- "$bin" sweep --help
check help-run 0 out '--slice K/M' -- "$bin" sweep run --help
check help-list 0 out 'usage: fusetile sweep list' -- "$bin" sweep list --help
check help-plot 0 out 'aggregated by their mean' -- "$bin" sweep plot --help
check top-help 0 out 'fusetile sweep run SWEEP.cfg' -- "$bin" --help
check no-sub 2 err 'sweep: needs a command' -- "$bin" sweep
check bad-sub 2 err "sweep: unknown command 'walk'" -- "$bin" sweep walk
check run-no-file 2 err 'sweep run: needs SWEEP.cfg' -- "$bin" sweep run
check run-bad-opt 2 err "sweep run: unknown option '--fast'" -- "$bin" sweep run x.cfg --fast
check run-bad-jobs 2 err "sweep run: --jobs is '0', must be an integer from 1 to 256" -- "$bin" sweep run x.cfg --jobs 0
check run-bad-slice 2 err "sweep run: --slice is '3/3', must be K/M" -- "$bin" sweep run x.cfg --slice 3/3
check run-missing 2 err 'nosuch.cfg: cannot open' -- "$bin" sweep run "$tmp/nosuch.cfg"

# ------------------------------------------------------------ bad files
mkdir -p "$tmp/bad"
cp "$vec/ex1A.problem.json" "$tmp/bad/p.json"
# bad NAME 'SETTING-PATTERN' CONTENT: exit 2, exactly one line on stderr
# naming bad/NAME.cfg, a line number and the setting, no database made.
bad() {
    local name=$1 pat=$2 content=$3
    printf '%s\n' "$content" >"$tmp/bad/$name.cfg"
    check "bad-$name" 2 err "$name\\.cfg:[0-9]+: $pat" -- "$bin" sweep run "$tmp/bad/$name.cfg" --jobs 1
    expect "bad-$name-one-line" "stderr has $(wc -l <"$tmp/err") lines, want 1" test "$(wc -l <"$tmp/err")" -eq 1
    expect "bad-$name-no-db" "a database was made" test ! -e "$tmp/bad/$name.db"
}
bad unknown 'capacty: unknown setting' 'problems = ["p.json"];
capacty = [1000];'
bad empty 'capacity: empty list' 'problems = ["p.json"];
capacity = [];'
bad empty-problems 'problems: empty list' 'problems = [];'
bad no-problems 'problems: missing' 'capacity = [1000];'
bad missing-problem 'problems: .*nosuch.json' 'problems = ["p.json",
  "nosuch.json"];'
bad missing-target 'targets: .*nosuch.cfg' 'problems = ["p.json"];
targets = ["none", "nosuch.cfg"];'
bad glob 'problems: no file matches' 'problems = ["zz-*.json"];'
bad step 'capacity.step: step is 0, must be positive' 'problems = ["p.json"];
capacity = { from = 1000; to = 2000; step = 0; };'
bad from-to 'capacity: from \(3000\) is above to \(2000\)' 'problems = ["p.json"];
capacity = { from = 3000; to = 2000; step = 10; };'
bad times 'bandwidth.times: times is 1, must be above 1' 'problems = ["p.json"];
bandwidth = { from = 1; to = 8; times = 1; };'
bad non-number 'capacity.from: expected a number, got a string' 'problems = ["p.json"];
capacity = { from = "big"; to = 2000; step = 10; };'
bad range-both 'capacity: a range needs exactly one of step' 'problems = ["p.json"];
capacity = { from = 1; to = 2; step = 1; times = 2; };'
bad range-key 'capacity.by: unknown setting' 'problems = ["p.json"];
capacity = { from = 1; to = 2; by = 1; };'
bad type 'capacity: expected a number, a list of them or a range group, got a string' 'problems = ["p.json"];
capacity = "large";'
bad type-units 'units: expected an integer' 'problems = ["p.json"];
units = [1.5];'
bad negative 'capacity: capacity is -5, must be a positive number' 'problems = ["p.json"];
capacity = [1000, -5];'
bad zero-bw 'bandwidth: bandwidth is 0, must be a positive number' 'problems = ["p.json"];
bandwidth = [0];'
bad units-range 'units: units is 100000, must be an integer from 1 to 65536' 'problems = ["p.json"];
units = [100000];'
bad native 'native: "128x" is not WxH or WxHxK' 'problems = ["p.json"];
native = ["128x"];'
bad model 'compute_model: "fast" is not native or op' 'problems = ["p.json"];
compute_model = ["fast"];'
bad strategy 'strategy: .*nope' 'problems = ["p.json"];
strategy = ["nope"];'
bad time 'time_limit: time_limit is 0, must be a positive number' 'problems = ["p.json"];
time_limit = 0;'
bad seed 'seed: seed is -1, must be a non-negative integer' 'problems = ["p.json"];
seed = [-1];'
bad simulate 'simulate: expected true or false, got an integer' 'problems = ["p.json"];
simulate = 1;'
bad twice 'capacity: value 1000 given twice' 'problems = ["p.json"];
capacity = [1000.0, 1000.0];'
bad runs-type 'runs: expected a list of groups' 'problems = ["p.json"];
runs = [1, 2];'
bad runs-entry 'runs\[0\].capasity: unknown setting' 'problems = ["p.json"];
runs = ( { capasity = 5; } );'
bad runs-dup 'runs: runs 0 and 1 have the same inputs' 'runs = ( { problem = "p.json"; capacity = 5000; },
         { problem = "./p.json"; capacity = 5000; } );'
bad syntax 'syntax error \(not libconfig syntax\)' 'problems = ["p.json"]
capacity = ;'
bad misplaced-string 'syntax error: unexpected string "q.json" \(a string stands only as a value, in a list or in an array\)' 'problems = ["p.json"] "q.json";'
bad unterminated-string 'unterminated string: no closing " before the end of the file' 'problems = ["p.json"];
strategy = "search'
printf '{ "nope": 1 }\n' >"$tmp/bad/broken.json"
bad bad-problem 'problems: .*broken.json' 'problems = ["broken.json"];'

# ------------------------------------------------------------ a small sweep
mkdir -p "$tmp/s"
cat >"$tmp/s/small.cfg" <<EOF
# vectors of up to 3 ops: every partition is tried, so totals repeat
problems = [ "$vec/ex1A.problem.json", "$vec/ex2A.problem.json", "$vec/ex3A.problem.json" ];
targets = [ "none", "$root/targets/kpu.cfg" ];
capacity = { from = 10000; to = 40000; times = 2; };   # 10000, 20000, 40000
strategy = [ "search", "rules" ];
time_limit = 2.0;
simulate = true;
EOF
check list 0 out '^35	problem=' -- "$bin" sweep list "$tmp/s/small.cfg"
expect list-count "list has $(wc -l <"$tmp/out") lines, want 36" test "$(wc -l <"$tmp/out")" -eq 36
expect list-distinct "keys not distinct" test "$(cut -f2 "$tmp/out" | sort -u | wc -l)" -eq 36
check run1 0 err '36 runs selected, 0 skipped' -- "$bin" sweep run "$tmp/s/small.cfg" --jobs 2
expect run1-db "no default database small.db" test -f "$tmp/s/small.db"
check run2 0 err '36 runs selected, 36 skipped' -- "$bin" sweep run "$tmp/s/small.cfg" --jobs 2
check run2-summary 0 err '0 ok, 0 failed, 36 skipped' -- "$bin" sweep run "$tmp/s/small.cfg"
check quiet 0 - '' -- "$bin" sweep run "$tmp/s/small.cfg" --quiet
expect quiet-silent "--quiet printed something" test ! -s "$tmp/err"
check jobs1 0 err '36 ok, 0 failed' -- "$bin" sweep run "$tmp/s/small.cfg" --jobs 1 --db "$tmp/s/one.db"
if [ $have_sqlite = 1 ]; then
    expect rows "rows in small.db" test "$(q "$tmp/s/small.db" 'SELECT count(*), count(DISTINCT key) FROM runs')" = "36|36"
    expect all-ok "not every run ok" test "$(q "$tmp/s/small.db" "SELECT count(*) FROM runs WHERE status = 'ok' AND total > 0 AND lower_bound > 0 AND ratio >= 1 AND subgraphs >= 1 AND sim_total > 0")" -eq 36
    expect agree-contest "contest runs disagree with the simulator" test "$(q "$tmp/s/small.db" "SELECT count(*) FROM runs WHERE target = 'none' AND agreement = 'yes'")" -eq 18
    expect meta "meta" test "$(q "$tmp/s/small.db" "SELECT value FROM meta WHERE key = 'schema_version'")" = 2
    expect wal "not WAL" test "$(q "$tmp/s/small.db" 'PRAGMA journal_mode')" = wal
    # --jobs 1 and --jobs 2 give the same totals, run by run
    a=$(q "$tmp/s/small.db" 'SELECT key, total, sim_total FROM runs ORDER BY key' | md5sum)
    b=$(q "$tmp/s/one.db" 'SELECT key, total, sim_total FROM runs ORDER BY key' | md5sum)
    expect jobs-same "--jobs 1 and --jobs 2 totals differ" test "$a" = "$b"
    # a failed row is retried
    q "$tmp/s/small.db" "UPDATE runs SET status = 'failed', total = NULL WHERE idx = 5"
    check retry 0 err '36 runs selected, 35 skipped' -- "$bin" sweep run "$tmp/s/small.cfg" --jobs 1
    expect retried "the failed run was not redone" test "$(q "$tmp/s/small.db" "SELECT status FROM runs WHERE idx = 5")" = ok
    # slices: 0/3 and 1/3 and 2/3 make the whole
    for k in 0 1 2; do
        check "slice-$k" 0 err '12 runs selected, 0 skipped' -- "$bin" sweep run "$tmp/s/small.cfg" --slice "$k/3" --db "$tmp/s/sl.db"
    done
    expect slice-idx "slice 1/3 ran other indices" test "$(q "$tmp/s/sl.db" 'SELECT count(*) FROM runs WHERE idx % 3 = 1')" -eq 12
    expect slice-union "slices do not make the whole" test "$(q "$tmp/s/sl.db" 'SELECT count(DISTINCT key) FROM runs')" -eq 36
fi

# an explicit runs list, with a failing run (no valid schedule): exit 1, recorded
cat >"$tmp/s/list.cfg" <<EOF
time_limit = 1.0;
runs = ( { problem = "$vec/ex1A.problem.json"; capacity = 20000; },
         { problem = "$vec/ex1A.problem.json"; capacity = 1; strategy = "rules"; },
         { problem = "$vec/ex2A.problem.json"; capacity = [15000, 30000]; } );
EOF
check list-runs 0 out '^3	' -- "$bin" sweep list "$tmp/s/list.cfg"
check failed-run 1 err '3 ok, 1 failed' -- "$bin" sweep run "$tmp/s/list.cfg" --jobs 2
if [ $have_sqlite = 1 ]; then
    expect failed-row "failed row" test "$(q "$tmp/s/list.db" "SELECT status FROM runs WHERE idx = 1")" = failed
    expect failed-error "no error text" test -n "$(q "$tmp/s/list.db" "SELECT error FROM runs WHERE idx = 1")"
fi
check failed-again 1 err '4 runs selected, 3 skipped' -- "$bin" sweep run "$tmp/s/list.cfg"

# ------------------------------------------------------------ plot
if [ $have_sqlite = 1 ]; then
    check plot 0 - '' -- "$bin" sweep plot "$tmp/s/small.db" --x capacity --y total --group target --log-x --log-y -o "$tmp/s/p.svg"
    expect plot-xml "SVG not well-formed" python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' "$tmp/s/p.svg"
    expect plot-legend "no legend entry per target" grep -q 'target=kpu.cfg' "$tmp/s/p.svg"
    expect plot-mean "the y label does not say mean" grep -q 'mean of the runs' "$tmp/s/p.svg"
    check plot-where 0 - '' -- "$bin" sweep plot "$tmp/s/small.db" --x capacity --y total --group target --where target=kpu.cfg -o "$tmp/s/w.svg"
    expect plot-where-kept "the kept target is not in the legend" grep -q 'target=kpu.cfg' "$tmp/s/w.svg"
    expect plot-where-one "--where kept another target" test "$(grep -o "target=[^<:)]*" "$tmp/s/w.svg" | sort -u | wc -l)" -eq 1
    expect plot-all-groups "without --where a target is missing" test "$(grep -o "target=[^<:)]*" "$tmp/s/p.svg" | sort -u | wc -l)" -eq 2
    check plot-where-none 1 err 'with the --where filters' -- "$bin" sweep plot "$tmp/s/small.db" --x capacity --y total --where 'target=no%such.cfg' -o "$tmp/s/w.svg"
fi
check plot-where-bad 2 err 'sweep plot: --where target: expected COLUMN=VALUE' -- "$bin" sweep plot "$tmp/s/small.db" --x capacity --y total --where target -o "$tmp/x.svg"
check plot-where-col 2 err 'sweep plot: --where nope: no such column' -- "$bin" sweep plot "$tmp/s/small.db" --x capacity --y total --where nope=1 -o "$tmp/x.svg"
check plot-bad-x 2 err 'sweep plot: --x capasity: no such column' -- "$bin" sweep plot "$tmp/s/small.db" --x capasity --y total -o "$tmp/x.svg"
check plot-text-x 2 err 'sweep plot: --x target: a text column' -- "$bin" sweep plot "$tmp/s/small.db" --x target --y total -o "$tmp/x.svg"
check plot-bad-group 2 err 'sweep plot: --group nope: no such column' -- "$bin" sweep plot "$tmp/s/small.db" --x capacity --y total --group nope -o "$tmp/x.svg"
check plot-missing 2 err 'sweep plot: needs DB, --x, --y and -o' -- "$bin" sweep plot "$tmp/s/small.db" --x capacity
check plot-no-db 2 err 'nosuch.db: cannot open' -- "$bin" sweep plot "$tmp/nosuch.db" --x capacity --y total -o "$tmp/x.svg"
printf 'not a database at all, just some text that is long enough to be a header' >"$tmp/junk.db"
check plot-junk 2 err 'junk.db: not a sweep database' -- "$bin" sweep plot "$tmp/junk.db" --x capacity --y total -o "$tmp/x.svg"
check plot-no-dir 2 err 'cannot' -- "$bin" sweep plot "$tmp/s/small.db" --x capacity --y total -o "$tmp/no/dir/x.svg"

# ------------------------------------------------------------ SIGKILL mid-way
# 60 runs (30 under valgrind or sanitizers) of 0.1 s each on 2 workers;
# kill -9 the whole process group once some rows exist, then rerun.
if [ $have_sqlite = 1 ]; then
    n=60
    [ "$slow" = 1 ] && n=30
    mkdir -p "$tmp/k"
    cat >"$tmp/k/kill.cfg" <<EOF
problems = [ "$root/benchmarks/mlsys-2026-1.json" ];
seed = { from = 1; to = $n; step = 1; };
time_limit = 0.1;
EOF
    setsid "$bin" sweep run "$tmp/k/kill.cfg" --jobs 2 --quiet >/dev/null 2>&1 &
    pid=$!
    rows=0
    for _ in $(seq 1 600); do
        sleep 0.1
        rows=$(q "$tmp/k/kill.db" 'SELECT count(*) FROM runs' 2>/dev/null || echo 0)
        [ "${rows:-0}" -ge 5 ] && break
    done
    kill -9 -- "-$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    before=$(q "$tmp/k/kill.db" 'SELECT count(*) FROM runs')
    q "$tmp/k/kill.db" 'SELECT key, finished_at FROM runs ORDER BY key' >"$tmp/k/before.txt"
    expect kill-midway "killed after $before of $n rows: not mid-way" test "$before" -ge 5 -a "$before" -lt "$n"
    check kill-rerun 0 err "$n runs selected, $before skipped" -- "$bin" sweep run "$tmp/k/kill.cfg" --jobs 2
    expect kill-once "rows after the rerun" test "$(q "$tmp/k/kill.db" 'SELECT count(*), count(DISTINCT key) FROM runs')" = "$n|$n"
    q "$tmp/k/kill.db" 'SELECT key, finished_at FROM runs ORDER BY key' | grep -Fxf "$tmp/k/before.txt" >"$tmp/k/kept.txt"
    expect kill-kept "finished rows were redone" test "$(wc -l <"$tmp/k/kept.txt")" -eq "$before"

    # kill -9 the parent alone while its 2 workers are mid-run (3 s each):
    # the workers die with it (none finishes its run and writes afterwards).
    # mlsys-2026-5's search runs to its limit (mlsys-2026-1's reaches its
    # bound in about 0.7 s, so its runs could end before the kill)
    cat >"$tmp/k/orphan.cfg" <<EOF
problems = [ "$root/benchmarks/mlsys-2026-5.json" ];
seed = { from = 1; to = 2; step = 1; };
time_limit = 3.0;
EOF
    setsid "$bin" sweep run "$tmp/k/orphan.cfg" --jobs 2 --quiet >/dev/null 2>&1 &
    pid=$!
    sleep 1
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    for _ in $(seq 1 50); do group_alive "$pid" || break; sleep 0.02; done
    left=no
    group_alive "$pid" && left=yes
    kill -9 -- "-$pid" 2>/dev/null
    expect orphan-workers "a worker outlived its parent by 1 s" test "$left" = no
    expect orphan-no-rows "a worker wrote after its parent died" \
        test "$(q "$tmp/k/orphan.db" 'SELECT count(*) FROM runs' 2>/dev/null || echo 0)" = 0
fi

finish sweep
