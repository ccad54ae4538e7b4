#!/usr/bin/env bash
# test_schedule.sh - exit statuses, messages and results of `fusetile schedule` and the contest entry `mlsys`.
# usage: test_schedule.sh FUSETILE VECTORS_DIR
# The contest entry is the mlsys symlink beside FUSETILE (make builds it);
# without one the script makes its own.  Every search is bounded to about
# two seconds; with FT_SLOW=1 (valgrind, sanitizers) the wall-time checks
# are skipped.
set -u
bin=${1:?usage: test_schedule.sh FUSETILE VECTORS_DIR}
vec=${2:?usage: test_schedule.sh FUSETILE VECTORS_DIR}
. "$(dirname "$0")/lib.sh"
slow=${FT_SLOW:-0}

mlsys=$(dirname "$bin")/mlsys
if [ ! -x "$mlsys" ]; then
    ln -s "$bin" "$tmp/mlsys"
    mlsys=$tmp/mlsys
fi

one_line_err() { [ "$(wc -l <"$tmp/err")" -eq 1 ]; }
empty_err() { [ ! -s "$tmp/err" ]; }
now() { date +%s.%N; }
# within START SECONDS: less than SECONDS of wall time since START (always
# true under FT_SLOW=1).
within() { [ "$slow" = 1 ] && return 0; awk -v s="$1" -v e="$(now)" -v l="$2" 'BEGIN { exit !(e - s < l) }'; }
# The total on the summary line of `fusetile schedule`, and on the table of
# `fusetile evaluate`.
sched_total() { sed -n 's/.*: compute model [a-z]*, total \([^,]*\),.*/\1/p' "$tmp/err"; }
eval_total() { sed -n 's/^total  *//p' "$tmp/out"; }

P=$vec/ex1A.problem.json
S=$tmp/s.json

# ---------------------------------------------------------- usage errors
check top-help-schedule 0 out 'fusetile schedule PROBLEM' -- "$bin" --help
check top-help-mlsys 0 out 'fusetile mlsys INPUT' -- "$bin" --help
check help-command 0 out 'usage: fusetile schedule' -- "$bin" help schedule
check sched-help 0 out '--time-limit SECONDS' -- "$bin" schedule --help
check sched-no-args 2 err '^fusetile: schedule: needs PROBLEM.json' -- "$bin" schedule
check sched-two-problems 2 err "unexpected argument 'extra'" -- "$bin" schedule "$P" extra
# a schedule where the problem goes: the message says so (issue 32)
check sched-given-schedule 2 err "ex1A.solution.json: is a schedule, not a problem; usage: fusetile schedule PROBLEM" \
    -- "$bin" schedule "$vec/ex1A.solution.json"
check mlsys-given-schedule 2 err "ex1A.solution.json: is a schedule, not a problem; usage: mlsys INPUT.json OUTPUT.json" \
    -- "$bin" mlsys "$vec/ex1A.solution.json" "$tmp/never.json"
check sched-unknown-option 2 err "unknown option '--fast'" -- "$bin" schedule "$P" --fast
check sched-bad-model 2 err "--compute-model is 'best', must be native or op" -- "$bin" schedule "$P" --compute-model best
check sched-limit-negative 2 err "--time-limit is '-1', must be a positive number of seconds" -- "$bin" schedule "$P" --time-limit -1
check sched-limit-zero 2 err "--time-limit is '0', must be a positive" -- "$bin" schedule "$P" --time-limit 0
check sched-limit-nan 2 err "--time-limit is 'nan', must be a positive" -- "$bin" schedule "$P" --time-limit nan
check sched-limit-word 2 err "--time-limit is 'soon', must be a positive" -- "$bin" schedule "$P" --time-limit=soon
check sched-limit-suffix 2 err "--time-limit is '2s', must be a positive" -- "$bin" schedule "$P" --time-limit 2s
check sched-limit-no-value 2 err 'option --time-limit needs a value' -- "$bin" schedule "$P" --time-limit
check sched-seed-negative 2 err "--seed is '-3', must be an integer from 0 to 18446744073709551615" -- "$bin" schedule "$P" --seed -3
check sched-seed-word 2 err "--seed is 'x', must be an integer" -- "$bin" schedule "$P" --seed x
check sched-seed-overflow 2 err "--seed is '18446744073709551616', must be an integer" -- "$bin" schedule "$P" --seed 18446744073709551616
check sched-output-no-value 2 err 'option -o needs a value' -- "$bin" schedule "$P" -o
check sched-missing-problem 2 err "^fusetile: $tmp/nope.json: cannot open" -- "$bin" schedule "$tmp/nope.json" --time-limit 1
expect sched-missing-problem-one-line "one line on stderr" one_line_err
check sched-output-dir-missing 2 err "$tmp/no/s.json: cannot write" -- "$bin" schedule "$P" -o "$tmp/no/s.json" --time-limit 1
check sched-output-is-dir 2 err "$tmp: cannot write: Is a directory" -- "$bin" schedule "$P" -o "$tmp" --time-limit 1

bad_files schedule 2
for f in "${bad_list[@]}"; do
    b=$(basename "$f")
    check "sched-bad-$b" 2 err "^fusetile: .*$b" -- "$bin" schedule "$f" --time-limit 1
    expect "sched-bad-$b-one-line" "one line on stderr, got $(wc -l <"$tmp/err")" one_line_err
done

# An op whose smallest tile (1x1x1: three elements) does not fit: no valid
# schedule exists.
printf '{"widths": [8, 8, 8], "heights": [8, 8, 8], "inputs": [[0, 1]], "outputs": [[2]], "base_costs": [100], "op_types": ["MatMul"], "fast_memory_capacity": 2, "slow_memory_bandwidth": 10, "native_granularity": [8, 8]}' >"$tmp/tiny.json"
check sched-no-valid-schedule 1 err "^fusetile: schedule: .*tiny.json: no valid schedule" -- "$bin" schedule "$tmp/tiny.json" -o "$S" --time-limit 1
expect sched-no-valid-schedule-no-file "no schedule file written" test ! -e "$S"

# ---------------------------------------------------------- results
t0=$(now)
check sched-ex1A 0 err ': compute model native, total [0-9.e+]+, lower bound 3276.8, ratio [0-9.]+, [0-9]+ subgraphs, wall time' \
    -- "$bin" schedule "$P" -o "$S" --time-limit 1
expect sched-ex1A-time "finished within the time limit + 1 s" within "$t0" 2
total=$(sched_total)
check sched-ex1A-evaluates 0 out '^total ' -- "$bin" evaluate "$P" "$S"
expect sched-ex1A-same-total "evaluate's total '$(eval_total)' is the schedule's '$total'" test "$(eval_total)" = "$total"
expect sched-ex1A-no-warning "evaluate warns: $(head -1 "$tmp/err")" empty_err
check sched-ex1A-progress-line 0 err '^fusetile: schedule: +[0-9]+\.[0-9]+ s  total [0-9.e+]+  ratio [0-9.]+$' \
    -- "$bin" schedule "$vec/E-mlp-fused.problem.json" -o "$S" --time-limit 1
check sched-stdout 0 out '"subgraphs"' -- "$bin" schedule "$P" --time-limit 0.5 --quiet
expect sched-quiet "--quiet prints nothing on stderr" empty_err
cp "$tmp/out" "$tmp/stdout.json"
check sched-stdout-evaluates 0 out '^total ' -- "$bin" evaluate "$P" "$tmp/stdout.json"
# the summary ends with the capacity bound (SPEC 7) and the ratio to it;
# on mlsys-2026-5 (capacity 30000) it is above the lower bound
check sched-ex1A-capacity 0 err 'improvements, the last at [0-9.]+ s( \(written in [0-9.]+ s\))?, capacity bound 3276.8, ratio to capacity bound [0-9.]+, strategy search, first valid at [0-9.]+ s \(due within [0-9.e+-]+ s, 10% of the limit(: missed)?\)(,|$)' \
    -- "$bin" schedule "$P" -o "$tmp/cap.json" --time-limit 0.2
check sched-capacity-bound 0 err 'lower bound 232000, .* capacity bound 253405.866666667, ratio to capacity bound [0-9.]+, strategy search, first valid at [0-9.]+ s \(due within [0-9.e+-]+ s, 10% of the limit(: missed)?\)(,|$)' \
    -- "$bin" schedule "$vec/../../benchmarks/mlsys-2026-5.json" -o "$tmp/cap.json" --time-limit 0.5

D=$vec/D-deep-k.problem.json
check sched-op-model 0 err ': compute model op, total ' -- "$bin" schedule "$D" -o "$S" --time-limit 1 --compute-model=op
total=$(sched_total)
check sched-op-model-evaluates 0 out '^total ' -- "$bin" evaluate "$D" "$S" --compute-model op
expect sched-op-model-same-total "evaluate's total '$(eval_total)' is the schedule's '$total'" test "$(eval_total)" = "$total"

E=$vec/E-mlp-fused.problem.json
# (the search reaches the bound and stops well within 1 s; under a slow
# runner, two at once, it may not, and a search the clock cuts is not
# deterministic: 10 s there)
elim=1
[ "${FT_SLOW:-0}" = 1 ] && elim=10
check sched-seed-run1 0 - '' -- "$bin" schedule "$E" -o "$tmp/r1.json" --time-limit "$elim" --seed 7 --quiet
check sched-seed-run2 0 - '' -- "$bin" schedule "$E" -o "$tmp/r2.json" --time-limit "$elim" --seed 7 --quiet
expect sched-deterministic "two runs with --seed 7 wrote different files" cmp -s "$tmp/r1.json" "$tmp/r2.json"

# threads, progress and the time a search above its bound uses
# --threads 0 is one thread per core, as Python's threads=0 (the progress
# line names the threads the search ran)
check sched-threads-too-many 2 err "--threads is '257', must be an integer from 0 \(one per core\) to 256" -- "$bin" schedule "$P" --threads 257
check sched-threads-word 2 err "--threads is 'all', must be an integer from 0 \(one per core\) to 256" -- "$bin" schedule "$P" --threads all
check sched-threads-no-value 2 err 'option --threads needs a value' -- "$bin" schedule "$P" --threads
check sched-threads-run1 0 - '' -- "$bin" schedule "$E" -o "$tmp/t1.json" --time-limit "$elim" --seed 7 --threads 2 --quiet
check sched-threads-run2 0 - '' -- "$bin" schedule "$E" -o "$tmp/t2.json" --time-limit "$elim" --seed 7 --threads 2 --quiet
expect sched-threads-deterministic "two runs with --seed 7 --threads 2 wrote different files" cmp -s "$tmp/t1.json" "$tmp/t2.json"
B5=$vec/../../benchmarks/mlsys-2026-5.json
check sched-progress-lines 0 err 'progress [0-9.]+/2 s  best [0-9.]+  ratio [0-9.]+  [0-9]+ evaluations/s  pass [a-z-]+  1 thread$' \
    -- "$bin" schedule "$B5" -o "$tmp/p5.json" --time-limit 2 --threads 1
cp "$tmp/err" "$tmp/perr"
# --verbose: the share of configurations scored in closed form (issue 33)
check sched-progress-closed-form 0 err 'evaluations/s  closed form [0-9.]+%  pass [a-z-]+  1 thread$' \
    -- "$bin" schedule "$B5" -o "$tmp/p5v.json" --time-limit 2 --threads 1 --verbose
expect sched-progress-closed-form-plain "a progress line without --verbose named the closed form" \
    bash -c '! grep -q "closed form" "$1"' - "$tmp/perr"
check sched-progress-summary 0 out ', [0-9]+ improvements, the last at [0-9.]+ s' -- cat "$tmp/perr"
expect sched-progress-no-cr "plain progress lines carry no carriage return when stderr is not a terminal" sh -c "! grep -q \"$(printf '\r')\" '$tmp/perr'"
check sched-progress-quiet 0 - '' -- "$bin" schedule "$B5" -o "$tmp/p5.json" --time-limit 1 --quiet
expect sched-progress-quiet-empty "--quiet printed something" test ! -s "$tmp/err"
# --threads 0 is one thread per core, as Python's threads=0: the progress
# lines name as many threads as the machine has cores (before the fix:
# "--threads is '0', must be an integer from 1 to 256", exit 2)
ncores=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
[ "$ncores" -gt 256 ] && ncores=256
check sched-threads-zero 0 err "  $ncores threads?\$" -- "$bin" schedule "$B5" -o "$tmp/t0.json" --time-limit 1.5 --threads 0

# a generated 8-op problem with a small native tile: the restarts pass split
# an op out of a partition of singletons (a group id past the op count) and
# crashed before the fix
check sched-small8-generate 0 - '' -- "$bin" generate --family small --seed 27 -o "$tmp/small27.json"
check sched-small8-no-crash 0 err 'compute model native, total [0-9.]+,' -- "$bin" schedule "$tmp/small27.json" -o "$tmp/s27.json" --time-limit 1

# ---------------------------------------------------------- mlsys
check mlsys-no-args 2 err '^mlsys: needs INPUT.json and OUTPUT.json' -- "$mlsys"
expect mlsys-no-args-one-line "one line on stderr" one_line_err
check mlsys-help 0 out 'usage: mlsys INPUT.json OUTPUT.json' -- "$mlsys" --help
check mlsys-one-arg 2 err '^mlsys: needs INPUT.json and OUTPUT.json' -- "$mlsys" "$P"
check mlsys-three-args 2 err "^mlsys: unexpected argument 'extra'" -- "$mlsys" "$P" "$S" extra
check mlsys-unknown-option 2 err "^mlsys: unknown option '--time-limit'" -- "$mlsys" --time-limit 1 "$P" "$S"
check mlsys-missing-input 2 err "^mlsys: $tmp/nope.json: cannot open" -- "$mlsys" "$tmp/nope.json" "$S"
expect mlsys-missing-input-one-line "one line on stderr" one_line_err
check mlsys-bad-input 2 err '^mlsys: .*cycle.json' -- "$mlsys" "$vec/bad/cycle.json" "$S"
expect mlsys-bad-input-one-line "one line on stderr" one_line_err
check mlsys-output-dir-missing 2 err "^mlsys: $tmp/no/out.json: cannot write" -- "$mlsys" "$P" "$tmp/no/out.json"
check mlsys-no-valid-schedule 1 err '^mlsys: .*tiny.json: no valid schedule' -- "$mlsys" "$tmp/tiny.json" "$tmp/none.json"

rm -f "$tmp/m.json"
t0=$(now)
check mlsys-ex1A 0 - '' -- "$mlsys" "$P" "$tmp/m.json"
# 2 ops: the contest allows 2 s; mlsys keeps a margin, so it ends in time.
expect mlsys-ex1A-time "ended within the contest's 2 s" within "$t0" 2
expect mlsys-ex1A-quiet "mlsys printed on stderr: $(head -1 "$tmp/err")" empty_err
expect mlsys-ex1A-no-stdout "mlsys printed on stdout" test ! -s "$tmp/out"
expect mlsys-ex1A-wrote "OUTPUT written" test -s "$tmp/m.json"
check mlsys-ex1A-evaluates 0 out '^total ' -- "$bin" evaluate "$P" "$tmp/m.json"
expect mlsys-ex1A-no-stray-files "only the output is left: $(ls "$tmp" | grep '^m\.json.' | head -1)" \
    test -z "$(ls "$tmp" | grep '^m\.json.')"

rm -f "$tmp/m2.json"
check fusetile-mlsys 0 - '' -- "$bin" mlsys "$P" "$tmp/m2.json"
expect fusetile-mlsys-quiet "fusetile mlsys printed on stderr: $(head -1 "$tmp/err")" empty_err
check fusetile-mlsys-evaluates 0 out '^total ' -- "$bin" evaluate "$P" "$tmp/m2.json"
# A time limit too short for any search still gives the one-op-per-subgraph
# schedule: the first schedule is never cut by the deadline.
B17=$(cd "$(dirname "$0")/../.." && pwd)/benchmarks/mlsys-2026-17.json
check sched-tiny-limit 0 err ', 103 subgraphs, ' -- "$bin" schedule "$B17" --time-limit 0.001 -o "$tmp/tiny-limit.json"
check sched-tiny-limit-evaluates 0 out '^total ' -- "$bin" evaluate "$B17" "$tmp/tiny-limit.json"
check fusetile-mlsys-help 0 out 'usage: mlsys INPUT.json OUTPUT.json' -- "$bin" mlsys --help
check fusetile-mlsys-no-args 2 err '^fusetile: mlsys: needs INPUT.json and OUTPUT.json' -- "$bin" mlsys

# -o onto something that is not a regular file (a FIFO here, /dev/null in
# practice) writes into it: renaming a temporary file over it would replace
# it with a regular file.
mkfifo "$tmp/fifo"
# the search writes each better schedule: a reader that reopens the FIFO
# until told to stop
( while [ ! -e "$tmp/fifo-stop" ]; do cat "$tmp/fifo" >>"$tmp/fifo-read"; done ) &
reader=$!
check sched-out-fifo 0 - '' -- "$bin" schedule "$B17" --time-limit 0.5 -q -o "$tmp/fifo"
touch "$tmp/fifo-stop"
# release the reader's last open until it has gone: an open read-write
# never blocks (Linux opens a FIFO O_RDWR at once), and is repeated since
# the reader may check fifo-stop just before it appears and open the FIFO
# only after a single release (a hang seen once)
while kill -0 "$reader" 2>/dev/null; do
    : <>"$tmp/fifo"
    sleep 0.05
done
wait "$reader"
expect sched-out-fifo-kept "the FIFO was replaced by a regular file" test -p "$tmp/fifo"
expect sched-out-fifo-read "the reader got no schedule" grep -q '"subgraphs"' "$tmp/fifo-read"

finish cli
