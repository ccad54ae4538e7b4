#!/usr/bin/env bash
# test_bench_models.sh - bench/run's models table: its settings refused with one line and exit 2, and a short table run for real (a small model, two batches, two targets), its imports cached.
# usage: test_bench_models.sh FUSETILE VECTORS_DIR
# FT_PYTHON_TORCH (from make check): the Python with torch fusetile was configured with; empty: none.
set -u
bin=${1:?usage: test_bench_models.sh FUSETILE VECTORS_DIR}
: "${2:?usage: test_bench_models.sh FUSETILE VECTORS_DIR}"
. "$(dirname "$0")/lib.sh"
src=$(cd "$(dirname "$0")/../.." && pwd)
run=$src/bench/run

# a build directory for bench/run: this fusetile (perhaps a runner's wrapper) and the benchmarks
mkdir "$tmp/build"
ln -s "$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")" "$tmp/build/fusetile"
ln -s "$src/benchmarks" "$tmp/build/benchmarks"

# one_line NAME: the last check's stderr is exactly one line
one_line() {
    if [ "$(wc -l <"$tmp/err")" -eq 1 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $1: want one line on stderr"; sed 's/^/    err: /' "$tmp/err" | head -5; fi
}

# --- the settings, checked before any benchmark runs (nothing is imported: no torch needed)
bad() {   # bad NAME PATTERN VAR=VALUE...: exit 2, PATTERN on stderr, one line, nothing on stdout
    local name=$1 pat=$2
    shift 2
    check "$name" 2 err "$pat" -- env BENCH=models "$@" sh "$run" "$tmp/build"
    one_line "$name"
    expect "$name-quiet" "nothing on stdout" test ! -s "$tmp/out"
}
bad bench-models-time-word "^bench/run: BENCH_MODELS_TIME 'abc' is not a number of seconds$" BENCH_MODELS_TIME=abc
bad bench-models-time-zero "^bench/run: BENCH_MODELS_TIME '0' is not a positive number of seconds$" BENCH_MODELS_TIME=0
bad bench-models-time-negative "BENCH_MODELS_TIME '-1' is not a number" BENCH_MODELS_TIME=-1
bad bench-models-batch-zero "^bench/run: BENCH_MODELS_BATCHES: '0' is not a positive integer$" BENCH_MODELS_BATCHES="1 0"
bad bench-models-batch-comma "BENCH_MODELS_BATCHES: '1,32' is not a positive integer" BENCH_MODELS_BATCHES=1,32
bad bench-models-batch-blank "^bench/run: BENCH_MODELS_BATCHES names no batch$" BENCH_MODELS_BATCHES=" "
bad bench-models-target "^bench/run: BENCH_MODELS_TARGETS: 'nosuch' is neither a target file nor a shipped target" \
    BENCH_MODELS_TARGETS="kpu nosuch"
bad bench-models-target-blank "^bench/run: BENCH_MODELS_TARGETS names no target$" BENCH_MODELS_TARGETS=" "
# checked when the table is one of several benchmarks too, before the first runs
bad bench-models-with-others "BENCH_MODELS_TIME 'x'" BENCH="eval models" BENCH_MODELS_TIME=x
check bench-unknown 2 err "^bench/run: unknown benchmark 'model' in BENCH \(known: .*models models-contest" \
    -- env BENCH=model sh "$run" "$tmp/build"

# --- the table run for real: needs the importer
n_real=$(sed -n '/^# --- the table run for real/,$p' "$0" | grep -Ec '^ *(check|expect) ')
if [ -z "${FT_PYTHON_TORCH:-}" ]; then
    skip "$n_real" "the models table run: no Python 3 with torch (install python3-torch)"
    finish test_bench_models
fi
if [ "${FT_SLOW:-0}" = 1 ]; then
    skip "$n_real" "the models table run: timings under FT_RUNNER (FT_SLOW) say nothing"
    finish test_bench_models
fi
mlp="$src/tests/python/models.py:mlp@Bx512"
table() {
    env BENCH=models BENCH_MODELS="$mlp" BENCH_MODELS_BATCHES="1 64" BENCH_MODELS_TARGETS="kpu $src/targets/tpu-v5e-chip.cfg" \
        BENCH_MODELS_TIME=1 BENCH_MODELS_CACHE="$tmp/cache" "$@" sh "$run" "$tmp/build"
}
check bench-models-run 0 out '^== models: fusetile import --target, schedule --time-limit 1 --verbose' -- table
cp "$tmp/out" "$tmp/table1"
# four rows: mlp at batch 1 and 64 on both targets, 5 ops each, a first schedule, within the limit, the simulator agreeing
# (then the gap's three factors and the part named: configs, bound x, grouping, gap in)
rows='^  mlp +(1|64) (kpu|tpu-v5e-chip) +5 +[0-9.]+!? +([0-9]+|-) +([0-9.]+|-) +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +(search|bound|grouping) +[0-9.]+!? \(1\) +yes\*?$'
expect bench-models-rows "four rows of the table" test "$(grep -Ec "$rows" "$tmp/table1")" -eq 4
expect bench-models-header "the header names the columns" \
    grep -Eq '^  model +batch target +ops first s +evals/s closed % +total +bound +ratio +configs +bound x +grouping +gap in +wall s \(limit\) agree$' "$tmp/table1"
# every row above 1.5 to the target-aware bound has a note naming the part, with its evidence
expect bench-models-gap-notes "a row above 1.5 without its note" python3 -c '
import re, sys
t = open(sys.argv[1]).read()
rows = re.findall(r"^  (mlp +\d+ +\S+) .* ([0-9.]+) +([0-9.]+) +([0-9.]+) +(search|bound|grouping) +[0-9.]+!? \(1\)", t, re.M)
assert rows, "no rows"
for r, a, b, c, part in rows:
    row = " ".join(r.split())
    if float(a) * float(b) * float(c) > 1.5 * 1.01:
        assert re.search(r"^  note: %s: ratio [0-9.]+ to the target-aware bound, most in the .*configurations over \d+ of \d+ subgraphs" % re.escape(row), t, re.M), row
' "$tmp/table1"
expect bench-models-batches "batch 64's problem is 64 rows high" \
    grep -q '"heights": \[64,' "$tmp/cache/mlp-b64-kpu.json"
expect bench-models-cached "four imports cached, one per batch and target" \
    test "$(ls "$tmp/cache" | tr '\n' ' ')" = "mlp-b1-kpu.json mlp-b1-tpu-v5e-chip.json mlp-b64-kpu.json mlp-b64-tpu-v5e-chip.json "
# a rerun imports nothing: with no Python to import with, the rows still come from the cache
check bench-models-rerun 0 out '^  mlp +64 tpu-v5e-chip +5 ' -- table FUSETILE_PYTHON=/nonexistent/python3
expect bench-models-rerun-rows "four rows again" test "$(grep -Ec "$rows" "$tmp/out")" -eq 4
# a model without @SHAPE runs at batch 1 only, and says so for the others
check bench-models-no-shape 0 out '^  mlp batch 64: skipped \(no @SHAPE' -- \
    env BENCH=models BENCH_MODELS="$src/tests/python/models.py:mlp" BENCH_MODELS_BATCHES="1 64" BENCH_MODELS_TARGETS=kpu \
    BENCH_MODELS_TIME=1 BENCH_MODELS_CACHE="$tmp/cache" sh "$run" "$tmp/build"
expect bench-models-no-shape-row "batch 1's row" grep -Eq '^  mlp +1 kpu +5 ' "$tmp/out"
# an import that fails is a line of the table, not the end of it
check bench-models-import-fails 0 out '^  nonet 1 kpu: import failed: .*unknown torchvision model' -- \
    env BENCH=models BENCH_MODELS="torchvision:nonet $mlp" BENCH_MODELS_BATCHES=1 BENCH_MODELS_TARGETS=kpu \
    BENCH_MODELS_TIME=1 BENCH_MODELS_CACHE="$tmp/cache" sh "$run" "$tmp/build"
expect bench-models-import-fails-row "the next model's row" grep -Eq '^  mlp +1 kpu +5 ' "$tmp/out"
# a schedule that fails (a broken cached problem) is a line of the table and a note, not the end of it
echo '{"widths": [' >"$tmp/cache/mlp-b64-kpu.json"
check bench-models-schedule-fails 0 out '^  mlp 64 kpu: schedule exit 2 after [0-9.]+ s \(limit 1\): .*; first valid schedule not found$' -- table
expect bench-models-schedule-fails-note "a note names it" grep -Eq '^  note: mlp 64 kpu: schedule exit 2 after' "$tmp/out"
expect bench-models-schedule-fails-rows "the other three rows" test "$(grep -Ec "$rows" "$tmp/out")" -eq 3
finish test_bench_models
