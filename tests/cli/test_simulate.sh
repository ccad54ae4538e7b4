#!/usr/bin/env bash
# test_simulate.sh - exit statuses, messages, output and trace files of `fusetile simulate`.
# usage: test_simulate.sh FUSETILE VECTORS_DIR
set -u
bin=${1:?usage: test_simulate.sh FUSETILE VECTORS_DIR}
vec=${2:?usage: test_simulate.sh FUSETILE VECTORS_DIR}
. "$(dirname "$0")/lib.sh"

P=$vec/ex1A.problem.json
S=$vec/ex1A.solution.json

check top-help 0 out 'fusetile simulate PROBLEM' -- "$bin" --help
check help 0 out 'usage: fusetile simulate' -- "$bin" simulate --help
check help-command 0 out '--vcd FILE' -- "$bin" help simulate
check help-window 0 out '--window FIRST:COUNT' -- "$bin" simulate --help
check help-gtkw 0 out 'GTKWave save' -- "$bin" simulate --help
# PROBLEM and SCHEDULE swapped: the message says so (issue 32)
check swapped 2 err "ex1A.solution.json: is a schedule, not a problem; usage: fusetile simulate PROBLEM SCHEDULE" \
    -- "$bin" simulate "$S" "$P"
check no-args 2 err 'simulate: needs PROBLEM.json and SCHEDULE.json' -- "$bin" simulate
check one-arg 2 err 'simulate: needs PROBLEM.json and SCHEDULE.json' -- "$bin" simulate "$P"
check three-args 2 err "unexpected argument 'extra'" -- "$bin" simulate "$P" "$S" extra
check unknown-option 2 err "unknown option '--fast'" -- "$bin" simulate "$P" "$S" --fast
check bad-model 2 err "--compute-model is 'best', must be native or op" -- "$bin" simulate "$P" "$S" --compute-model best
check model-no-value 2 err 'option --compute-model needs a value' -- "$bin" simulate "$P" "$S" --compute-model
check trace-no-value 2 err 'option --trace needs a value' -- "$bin" simulate "$P" "$S" --trace
check vcd-empty 2 err '--vcd needs a file name' -- "$bin" simulate "$P" "$S" --vcd=
check same-file 2 err "--trace and --vcd name the same file" -- "$bin" simulate "$P" "$S" --trace "$tmp/x" --vcd "$tmp/x"
check missing-problem 2 err "$tmp/nope.json: cannot open" -- "$bin" simulate "$tmp/nope.json" "$S"
check missing-schedule 2 err "$tmp/nope.json: cannot open" -- "$bin" simulate "$P" "$tmp/nope.json"
printf '{"subgraphs": [[0], [1]],' >"$tmp/trunc.json"
check schedule-truncated 2 err "trunc.json:1:[0-9]+: not valid JSON" -- "$bin" simulate "$P" "$tmp/trunc.json"
bad_files simulate 1
for f in "${bad_list[@]}"; do
    b=$(basename "$f")
    check "bad-$b" 2 err "^fusetile: .*$b" -- "$bin" simulate "$f" "$S"
done
check trace-unwritable 2 err "$tmp/no/such/dir/t.json" -- "$bin" simulate "$P" "$S" --trace "$tmp/no/such/dir/t.json"
check vcd-unwritable 2 err "$tmp/no/such/dir/t.vcd" -- "$bin" simulate "$P" "$S" --vcd "$tmp/no/such/dir/t.vcd"
expect no-partial-trace "a failed replay left a trace file" test ! -e "$tmp/no"

# Valid schedules: the table and the JSON.
# (one run, its table read for each line: each run is a simulator start
# under valgrind)
check table 0 out '^agreement +yes' -- "$bin" simulate "$P" "$S"
expect table-no-stderr "stderr is not empty" test ! -s "$tmp/err"
expect table-total "no line 'simulated 6553.6 (2 steps)'" grep -Eq '^simulated +6553.6 \(2 steps\)' "$tmp/out"
expect table-analytic "no line 'analytic 6553.6'" grep -Eq '^analytic +6553.6$' "$tmp/out"
expect table-columns "no column heads" grep -Eq 'simulated +analytic +difference +relative +peak-occ +channel +compute' "$tmp/out"
check json 0 out '"valid": true' -- "$bin" simulate "$vec/D-deep-k.problem.json" "$vec/D-deep-k.solution.json" --json --compute-model=op
json_check json-totals 'd["total_simulated"] == 7372.8 and d["total_analytic"] == 7372.8 and d["agree"] is True and d["compute_model"] == "op"'
json_check json-fields 'd["difference"] == 0 and d["relative_difference"] == 0 and d["steps"] == 4 and d["analytic_reason"] is None'
json_check json-subgraph 'all(k in d["subgraphs"][0] for k in ("index", "ops", "granularity", "steps", "simulated", "analytic", "difference", "peak_occupancy", "channel_busy", "compute_busy"))'
json_check json-busy 'd["subgraphs"][0]["peak_occupancy"] == 49152 and d["subgraphs"][0]["channel_busy"] == 1 and 0 < d["subgraphs"][0]["compute_busy"] < 1'
check json-native 0 out '"total_simulated": 16000' -- "$bin" simulate "$vec/D-deep-k.problem.json" "$vec/D-deep-k.solution.json" --json

# Every vector of expected.tsv: the valid ones agree with the expected total,
# the invalid ones fail with exit 1 and the expected reason.  Under FT_SLOW
# (valgrind, sanitizers: a simulator start is about a second under
# valgrind, and this loop was a third of the script there) each vector runs
# in one compute model, native and op by turns (the rows come in pairs):
# every vector and every invalid kind still runs; all run in plain check.
rows=0
cut=0
cases=0
while IFS=$'\t' read -r name mode want; do
    case $name in ''|'#'*) continue ;; esac
    rows=$((rows + 1))
    if [ "$slow" = 1 ] && [ $((rows % 4)) -ne 1 ] && [ $((rows % 4)) -ne 0 ]; then
        cut=$((cut + 1))
        case $want in invalid:*) cases=$((cases + 1)) ;; *) cases=$((cases + 2)) ;; esac
        continue
    fi
    case $want in
        invalid:*)
            check "vector-$name-$mode" 1 err "invalid schedule \\(${want#invalid:}\\): simulator: " \
                -- "$bin" simulate "$vec/$name.problem.json" "$vec/$name.solution.json" --compute-model "$mode"
            ;;
        *)
            check "vector-$name-$mode" 0 out '"agree": true' \
                -- "$bin" simulate "$vec/$name.problem.json" "$vec/$name.solution.json" --compute-model "$mode" --json
            json_check "vector-$name-$mode-total" "abs(d['total_simulated'] - $want) <= 1e-9 * $want"
            ;;
    esac
done <"$vec/expected.tsv"
[ "$cut" -gt 0 ] && skip "$cases" "FT_SLOW: $cut of the $rows vector rows left out (each vector runs in one compute model here; all run in plain make check)"

# Invalid schedules: where and when, in words and in JSON.
check oom 1 err 'invalid schedule \(oom\): simulator: .*at simulated time 0, subgraph 0, tile 0 \(row 0, col 0\), step 0 \(k-step 0\): fast-memory occupancy 49152 .*exceeds fast_memory_capacity 40000' \
    -- "$bin" simulate "$vec/X-oom.problem.json" "$vec/X-oom.solution.json"
check oom-json 1 out '"valid": false' -- "$bin" simulate "$vec/X-oom.problem.json" "$vec/X-oom.solution.json" --json
json_check oom-json-fields 'd["reason"] == "oom" and d["subgraph"] == 0 and d["tile"] == 0 and d["step"] == 0 and d["time"] == 0 and d["analytic_reason"] == "oom"'
printf '{"subgraphs": [[0], [1]], "granularities": [[128, 128, 1]], "tensors_to_retain": [[], []]}' >"$tmp/len.json"
check length-mismatch 1 err 'invalid schedule \(length-mismatch\): simulator: .*granularities has 1 entries, subgraphs has 2' -- "$bin" simulate "$P" "$tmp/len.json"
# A later-step overflow: the corner tile first, the full tile 0 last.
printf '{"widths": [200, 200], "heights": [200, 200], "inputs": [[0]], "outputs": [[1]], "base_costs": [100], "op_types": ["Pointwise"], "fast_memory_capacity": 30000, "slow_memory_bandwidth": 10, "native_granularity": [128, 128]}' >"$tmp/late.problem.json"
printf '{"subgraphs": [[0]], "granularities": [[128, 128, 1]], "tensors_to_retain": [[]], "traversal_orders": [[3, 1, 2, 0]]}' >"$tmp/late.solution.json"
check late-oom 1 err 'invalid schedule \(oom\): simulator: .*at simulated time 4723.2, subgraph 0, tile 0 \(row 0, col 0\), step 3 \(k-step 0\)' \
    -- "$bin" simulate "$tmp/late.problem.json" "$tmp/late.solution.json"

# total_seconds: with a real target, simulate --json gives the simulated
# total in seconds at the target's clock; without a target, on the contest
# target and for an invalid schedule it is absent.
targets=$(cd "$(dirname "$0")/../../targets" && pwd)
check seconds-gpu 0 out '"total_seconds": ' -- "$bin" simulate "$P" "$S" --json --target "$targets/gpu-h100-sm.cfg"
json_check seconds-gpu-value 'd["total_seconds"] == d["total_simulated"] / 1830000000'
check seconds-none 0 out '"total_simulated": ' -- "$bin" simulate "$P" "$S" --json
json_check seconds-none-absent '"total_seconds" not in d'
check seconds-contest 0 out '"total_simulated": ' -- "$bin" simulate "$P" "$S" --json --target "$targets/contest.cfg"
json_check seconds-contest-absent '"total_seconds" not in d'
check seconds-invalid 1 out '"valid": false' -- "$bin" simulate "$P" "$S" --json --target "$targets/kpu.cfg"
json_check seconds-invalid-absent '"total_seconds" not in d'
check seconds-help 0 out 'total_seconds' -- "$bin" simulate --help

# Traces: written on success, left out on failure.
check trace 0 - '' -- "$bin" simulate "$P" "$S" --trace "$tmp/t.json" --vcd "$tmp/t.vcd"
expect trace-json "no Chrome trace written" test -s "$tmp/t.json"
expect trace-vcd "no VCD written" test -s "$tmp/t.vcd"
expect trace-gtkw "no GTKWave save file written next to the VCD" grep -qx '\[dumpfile\] "t.vcd"' "$tmp/t.gtkw"
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$tmp/t.json" 2>/dev/null
expect trace-json-parses "the Chrome trace is not valid JSON" test $? -eq 0
check trace-invalid 1 - '' -- "$bin" simulate "$tmp/late.problem.json" "$tmp/late.solution.json" --trace "$tmp/bad.json" --vcd "$tmp/bad.vcd"
expect trace-invalid-no-json "an invalid schedule left a Chrome trace" test ! -e "$tmp/bad.json"
expect trace-invalid-no-vcd "an invalid schedule left a VCD" test ! -e "$tmp/bad.vcd"
expect trace-invalid-no-gtkw "an invalid schedule left a save file" test ! -e "$tmp/bad.gtkw"
# progress: one count over the replay and the replays with each effect off
# (kpu.cfg: 5 effects, 7 replays of 524288 steps, each evaluated too), the
# figures only grow, and the last line reads 100 % (issue 32: it stopped
# at 46 %).  FUSETILE_PROGRESS_SECONDS=0 prints a line at every callback.
printf '%s\n' '{"widths": [4096, 2048, 2048], "heights": [2048, 4096, 2048], "inputs": [[0, 1]], "outputs": [[2]], "base_costs": [1000], "op_types": ["MatMul"], "fast_memory_capacity": 100000, "slow_memory_bandwidth": 10, "native_granularity": [32, 32]}' >"$tmp/mm.json"
printf '%s\n' '{"subgraphs": [[0]], "granularities": [[32, 32, 32]], "tensors_to_retain": [[]], "traversal_orders": [null]}' >"$tmp/mm.schedule.json"
check progress 0 err 'fusetile simulate: [0-9]+ of 7340032 steps replayed and evaluated' \
    -- env FUSETILE_PROGRESS_SECONDS=0 "$bin" simulate "$tmp/mm.json" "$tmp/mm.schedule.json" --target "$targets/kpu.cfg"
expect progress-last-100 "the last progress line is not at 100 %: $(grep 'steps replayed' "$tmp/err" | tail -1)" \
    sh -c "grep 'steps replayed' '$tmp/err' | tail -1 | grep -q '^fusetile simulate: 7340032 of 7340032 steps replayed and evaluated (100%)\$'"
expect progress-grows "the progress figures go back: $(grep -o '^fusetile simulate: [0-9]*' "$tmp/err" | tr '\n' ' ')" \
    sh -c "grep -o '^fusetile simulate: [0-9]*' '$tmp/err' | awk '{ if (\$3 + 0 < last) exit 1; last = \$3 + 0 }'"
# with an interval (0.01 s: the seven replays take about 0.2 s since the
# simulator's runs of like steps; 10 s under FT_SLOW, where valgrind spaces
# the callbacks seconds apart: some callbacks print, most do not) the last
# line is still the 100 % one, printed at the end
interval=0.01
[ "${FT_SLOW:-0}" = 1 ] && interval=10
check progress-interval 0 - '' \
    -- env FUSETILE_PROGRESS_SECONDS=$interval "$bin" simulate "$tmp/mm.json" "$tmp/mm.schedule.json" --target "$targets/kpu.cfg"
if grep -q 'steps replayed' "$tmp/err"; then
    expect progress-interval-last-100 "with an interval, the last progress line is not at 100 %: $(grep 'steps replayed' "$tmp/err" | tail -1)" \
        sh -c "grep 'steps replayed' '$tmp/err' | tail -1 | grep -q '^fusetile simulate: 7340032 of 7340032 steps replayed and evaluated (100%)\$'"
    expect progress-interval-fewer "every callback printed with an interval of $interval s" test "$(grep -c 'steps replayed' "$tmp/err")" -lt 28
else
    skip 2 "the replay ended within $interval s: no progress line to check"
fi
check progress-quiet-short 0 - "" -- "$bin" simulate "$P" "$S" --target "$targets/gpu-h100-sm.cfg"
expect progress-quiet-short-none "a short replay printed progress" sh -c "! grep -q 'steps replayed' '$tmp/err'"
# a difference that an effect accounts for reads as agreement, with the
# difference and the effect, not "agreement no" (issue 32): the MatMul
# above on kpu.cfg differs by double buffering alone
check accounted-reads-yes 0 out '^agreement +yes: differs from the analytic model by -?[0-9.]+ \(-?[0-9.e-]+ %\), accounted for by double buffering; every difference accounted for$' \
    -- "$bin" simulate "$tmp/mm.json" "$tmp/mm.schedule.json" --target "$targets/kpu.cfg"
expect accounted-no-no "an accounted-for run still says no: $(grep '^agreement' "$tmp/out")" sh -c "! grep -Eq '^agreement +no' '$tmp/out'"
leftovers=$(find "$tmp" -name '*.tmp.*' | wc -l)
expect no-temporary-files "temporary trace files were left behind" test "$leftovers" -eq 0

finish cli
