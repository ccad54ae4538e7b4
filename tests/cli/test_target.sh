#!/usr/bin/env bash
# test_target.sh - `--target` and `--keep-costs` of `fusetile evaluate` and `fusetile schedule`: the contest target changes no result over every vector, a real target changes the report and says so, bad targets exit 2 with FILE:LINE.
# usage: test_target.sh FUSETILE VECTORS_DIR
set -u
bin=${1:?usage: test_target.sh FUSETILE VECTORS_DIR}
vec=${2:?usage: test_target.sh FUSETILE VECTORS_DIR}
. "$(dirname "$0")/lib.sh"
vec=$(cd "$vec" && pwd)
targets=$(cd "$(dirname "$0")/../../targets" && pwd)
contest=$targets/contest.cfg
gpu=$targets/gpu-h100-sm.cfg

# Acceptance: on contest.cfg every vector row gives the same exit status,
# the same report (but for the line naming the target) and the same
# messages as without a target.  Under FT_SLOW (valgrind, sanitizers; this
# loop was most of the script's 353 s under valgrind) each vector runs in one
# compute model, native and op by turns (the rows come in pairs, native then
# op): every vector's report and every invalid kind still runs, and
# tools/check-vectors under FT_SLOW runs the other half of the rows, so that
# every row still runs once under the slow runner.  Under valgrind (where a
# run starts in about a second, and this loop was a third of the script's
# starts) a quarter: the rows of the other quarter run in
# tests/cli/test_simulate.sh's half there.
keep=" 0 1 "
case ${FT_RUNNER:-} in *valgrind*) keep=" 1 " ;; esac
rows=0
cut=0
while IFS=$'\t' read -r name mode want; do
    case $name in ''|'#'*) continue ;; esac
    rows=$((rows + 1))
    if [ "$slow" = 1 ] && [ "${keep#* $((rows % 4)) }" = "$keep" ]; then
        cut=$((cut + 1))
        continue
    fi
    P=$vec/$name.problem.json
    S=$vec/$name.solution.json
    "$bin" evaluate "$P" "$S" --compute-model "$mode" >"$tmp/plain.out" 2>"$tmp/plain.err" </dev/null
    rc1=$?
    "$bin" evaluate "$P" "$S" --compute-model "$mode" --target "$contest" >"$tmp/cfg.out" 2>"$tmp/cfg.err" </dev/null
    rc2=$?
    case $want in invalid:*) wrc=1 ;; *) wrc=0 ;; esac
    expect "contest-$name-$mode-status" "exit $rc1 without a target, $rc2 with contest.cfg, want $wrc" \
        test "$rc1" -eq "$wrc" -a "$rc2" -eq "$wrc"
    grep -v '^target ' "$tmp/cfg.out" >"$tmp/cfg.stripped"
    expect "contest-$name-$mode-report" "report differs with contest.cfg" cmp -s "$tmp/plain.out" "$tmp/cfg.stripped"
    expect "contest-$name-$mode-stderr" "stderr differs with contest.cfg" cmp -s "$tmp/plain.err" "$tmp/cfg.err"
    if [ "$wrc" -eq 0 ]; then
        expect "contest-$name-$mode-says" "no target line naming contest.cfg" \
            grep -Eq "^target +$contest \(contest\): the contest's abstract machine" "$tmp/cfg.out"
    else
        r=${want#invalid:}
        expect "contest-$name-$mode-reason" "no '($r)' on stderr" grep -q "invalid schedule ($r)" "$tmp/cfg.err"
    fi
done <"$vec/expected.tsv"
[ "$cut" -gt 0 ] && skip $((4 * cut)) "FT_SLOW: $cut of the $rows vector rows on contest.cfg left out (each vector runs in one model here; all run in plain make check)"

P=$vec/ex1A.problem.json
S=$vec/ex1A.solution.json

# JSON: the same total, and the target named.
"$bin" evaluate "$vec/D-deep-k.problem.json" "$vec/D-deep-k.solution.json" --json >"$tmp/a.json" 2>/dev/null
"$bin" evaluate "$vec/D-deep-k.problem.json" "$vec/D-deep-k.solution.json" --json --target "$contest" >"$tmp/b.json" 2>/dev/null
expect json-contest-total "JSON totals differ" test "$(grep -o '"total": [^,]*' "$tmp/a.json")" = "$(grep -o '"total": [^,]*' "$tmp/b.json")"
check json-no-target 0 out '"target": null, "target_settings": null, "base_costs": "problem"' -- "$bin" evaluate "$P" "$S" --json
check json-contest 0 out '"target": "[^"]*contest.cfg", "target_settings": \{"name": "contest", .*"contest": true\}, "base_costs": "problem"' \
    -- "$bin" evaluate "$P" "$S" --json --target "$contest"
check json-gpu 0 out '"target_settings": \{"name": "gpu-h100-sm", .*"capacity_bytes": 233472, .*"native_granularity": \{"w": 128, "h": 128, "k": 128\}.*"base_costs": "target"' \
    -- "$bin" evaluate "$P" "$S" --json --target "$gpu"
check json-gpu-keep 0 out '"base_costs": "problem"' -- "$bin" evaluate "$P" "$S" --json --target "$gpu" --keep-costs
check json-invalid-target 1 out '"valid": false, "target": "[^"]*contest.cfg"' \
    -- "$bin" evaluate "$vec/X-oom.problem.json" "$vec/X-oom.solution.json" --json --target "$contest"

# A real target: capacity 233472 B / 2 B, bandwidth 13.868 / 2 per cycle,
# base costs 128^3 / 2048 = 1024 (MatMul) and 128 * 128 / 128 = 128 per
# input (Pointwise); ex1A is two Pointwise ops of one 128 x 128 tile each.
check gpu-problem-line 0 out '^problem .*capacity 116736, bandwidth 6.934, native 128x128\)' -- "$bin" evaluate "$P" "$S" --target "$gpu"
check gpu-target-line 0 out "^target +$gpu \(gpu-h100-sm\): from the target: capacity 116736 elements \(233472 B / 2 B per element\), bandwidth 6.934 elements per cycle read \(13.868 B/cycle\), 6.934 write, native 128x128x128 \(larger allowed\); timing: transfer latency 600, launch overhead 3660 cycles, double buffering \(steps pipelined\); base costs from the target's throughput \(MatMul 1024, Pointwise 128 per input, cycles per native tile\); one cost unit = one cycle at 1830000000 Hz" \
    -- "$bin" evaluate "$P" "$S" --target "$gpu"
# Each subgraph is one step, which double buffering cannot overlap with
# anything: launch 3660, then 600 + 16384 / 6.934 to load, 128 to compute,
# 600 + 16384 / 6.934 to write: 2 x 9713.70 = 19427.40.
check gpu-total 0 out '^total +19427.3989039515$' -- "$bin" evaluate "$P" "$S" --target "$gpu"
expect gpu-no-warning "stderr not empty (reported latencies are not compared on a real target)" test ! -s "$tmp/err"
check gpu-keep-costs 0 out 'base costs kept from the problem file \(--keep-costs\)' -- "$bin" evaluate "$P" "$S" --target "$gpu" --keep-costs
# Keeping ex1A's costs (1000, 100) on the TPU (bandwidth 272.455, latency
# 500, launch 1503): each subgraph is one step, which double buffering
# cannot overlap with anything: 1503 + 500 + 16384 / 272.455 + compute +
# 500 + 16384 / 272.455, so 3623.27 + 2723.27.
check tpu-keep-costs 0 out '^total +6346.53880457323$' -- "$bin" evaluate "$P" "$S" --target "$targets/tpu-v5e.cfg" --keep-costs
# The KPU's native 32 x 32 rejects ex1A's 128-wide tiles.
check kpu-above-native 1 err 'invalid schedule \(granularity-above-native\): .*w = 128 is above native 32' -- "$bin" evaluate "$P" "$S" --target "$targets/kpu.cfg"
# Every bundled target loads and applies (exit 0, or 1 where the schedule's
# tiles exceed the target's native granularity; never 2).
for f in "$targets"/*.cfg; do
    "$bin" evaluate "$vec/ex2B.problem.json" "$vec/ex2B.solution.json" --target "$f" >/dev/null 2>"$tmp/err" </dev/null
    rc=$?
    expect "loads-$(basename "$f")" "exit $rc: $(head -1 "$tmp/err")" test "$rc" -le 1
done

# Bad targets and usage: exit 2, one line, FILE:LINE.
check missing-target 2 err "^fusetile: --target $tmp/nope.cfg: cannot open: No such file or directory; shipped targets: contest, example, gpu-h100, gpu-h100-sm, gpu-h200, kpu, kpu-chip, tpu-v5e, tpu-v5e-chip; give a path or a name$" -- "$bin" evaluate "$P" "$S" --target "$tmp/nope.cfg"

# Targets by name (ft_target_find): a shipped target from any directory,
# with or without .cfg; $FUSETILE_TARGETS is searched first; an unknown
# name says where it looked and lists the shipped names.
abin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
check name-target 0 out "^target +$targets/gpu-h100-sm.cfg \(gpu-h100-sm\): " -- env -C "$tmp" "$abin" evaluate "$P" "$S" --target gpu-h100-sm
check name-target-cfg 0 out "^target +$targets/gpu-h100-sm.cfg \(gpu-h100-sm\): " -- env -C "$tmp" "$abin" evaluate "$P" "$S" --target gpu-h100-sm.cfg
check name-schedule 0 err "^fusetile: schedule: target $targets/kpu.cfg \(kpu\): " -- env -C "$tmp" "$abin" schedule "$P" --target kpu --time-limit 1 -o /dev/null
mkdir -p "$tmp/mine" "$tmp/empty"
sed 's/^name = .*/name = "mine";/' "$gpu" >"$tmp/mine/gpu-h100-sm.cfg"
check name-env-first 0 out "^target +$tmp/mine/gpu-h100-sm.cfg \(mine\): " -- \
    env -C / FUSETILE_TARGETS="$tmp/empty::$tmp/mine" "$abin" evaluate "$P" "$S" --target gpu-h100-sm
check name-env-shipped 0 out "^target +$targets/tpu-v5e.cfg \(tpu-v5e\): " -- env FUSETILE_TARGETS="$tmp/mine" "$bin" evaluate "$P" "$S" --target tpu-v5e
check name-unknown 2 err "^fusetile: --target kpu2: no such file or shipped target \(looked in \./, $tmp/empty, $targets\); shipped targets: contest, example, gpu-h100, gpu-h100-sm, gpu-h200, kpu, kpu-chip, tpu-v5e, tpu-v5e-chip; give a path or a name$" -- \
    env -C "$tmp" FUSETILE_TARGETS="$tmp/empty" "$abin" evaluate "$P" "$S" --target kpu2
expect name-unknown-one-line "want one line on stderr" test "$(wc -l <"$tmp/err")" -eq 1
check name-unknown-simulate 2 err '^fusetile: --target kpu2: no such file or shipped target' -- "$bin" simulate "$P" "$S" --target kpu2
check name-unknown-validate 2 err '^fusetile: --target kpu2: no such file or shipped target' -- "$bin" validate --target kpu2 --measured "$targets/measured/h100/gemm.tsv"
check name-unknown-calibrate 2 err '^fusetile: --target kpu2: no such file or shipped target' -- "$bin" calibrate --target kpu2 --measured "$targets/measured/h100/gemm.tsv"
# a target file in the working directory wins over the shipped one
cp "$tmp/mine/gpu-h100-sm.cfg" "$tmp/gpu-h100-sm"
check name-cwd-first 0 out '^target +gpu-h100-sm \(mine\): ' -- env -C "$tmp" "$abin" evaluate "$P" "$S" --target gpu-h100-sm
rm -f "$tmp/gpu-h100-sm"
# a directory of that name there does not hide the shipped target
mkdir "$tmp/gpu-h100-sm"
check name-cwd-dir 0 out "^target +$targets/gpu-h100-sm.cfg \(gpu-h100-sm\): " -- env -C "$tmp" "$abin" evaluate "$P" "$S" --target gpu-h100-sm
rmdir "$tmp/gpu-h100-sm"
check dir-target 2 err "^fusetile: $tmp: cannot read: Is a directory$" -- "$bin" evaluate "$P" "$S" --target "$tmp"
check target-no-value 2 err 'option --target needs a value' -- "$bin" evaluate "$P" "$S" --target
check target-empty 2 err 'evaluate: --target needs a file name' -- "$bin" evaluate "$P" "$S" --target=
check keep-costs-alone 2 err 'evaluate: --keep-costs needs --target' -- "$bin" evaluate "$P" "$S" --keep-costs
check schedule-keep-costs-alone 2 err 'schedule: --keep-costs needs --target' -- "$bin" schedule "$P" --keep-costs

sed 's/capacity_bytes = 233472;/capacity_byts = 233472;/' "$gpu" >"$tmp/typo.cfg"
line=$(grep -n capacity_byts "$tmp/typo.cfg" | cut -d: -f1)
check typo-target 2 err "^fusetile: $tmp/typo.cfg:$line: unknown setting fast_memory.capacity_byts \(did you mean fast_memory.capacity_bytes\?\)$" \
    -- "$bin" evaluate "$P" "$S" --target "$tmp/typo.cfg"
expect typo-one-line "want one line on stderr" test "$(wc -l <"$tmp/err")" -eq 1
sed 's/element_bytes = 2;/element_bytes = "two";/' "$gpu" >"$tmp/type.cfg"
line=$(grep -n '"two"' "$tmp/type.cfg" | cut -d: -f1)
check type-target 2 err "^fusetile: $tmp/type.cfg:$line: element_bytes must be an integer, not a string$" -- "$bin" evaluate "$P" "$S" --target "$tmp/type.cfg"
sed 's/capacity_bytes = 233472;/capacity_bytes = -233472;/' "$gpu" >"$tmp/neg.cfg"
line=$(grep -n -- '-233472' "$tmp/neg.cfg" | cut -d: -f1)
check negative-target 2 err "^fusetile: $tmp/neg.cfg:$line: fast_memory.capacity_bytes is -233472, must be positive$" -- "$bin" schedule "$P" --target "$tmp/neg.cfg"
grep -v 'matmul_macs_per_cycle' "$gpu" >"$tmp/missing.cfg"
line=$(grep -n '^compute = {' "$tmp/missing.cfg" | cut -d: -f1)
check missing-setting 2 err "^fusetile: $tmp/missing.cfg:$line: missing required setting compute.matmul_macs_per_cycle" -- "$bin" evaluate "$P" "$S" --target "$tmp/missing.cfg"
printf 'name = "x";\ncontest = true\nclock_hz = = 1;\n' >"$tmp/syntax.cfg"
check syntax-target 2 err "^fusetile: $tmp/syntax.cfg:3: syntax error \(not libconfig syntax\)$" -- "$bin" schedule "$P" --target "$tmp/syntax.cfg"
# Malformed strings: refused before libconfig (which would leak a misplaced
# string, and drop an unterminated one without a word), with their line.
printf 'name = "x";\ncontest = true "y";\n' >"$tmp/string.cfg"
check misplaced-string 2 err "^fusetile: $tmp/string.cfg:2: syntax error: unexpected string \"y\" \(a string stands only as a value, in a list or in an array\) \(not libconfig syntax\)$" -- "$bin" schedule "$P" --target "$tmp/string.cfg"
printf 'name = "x";\ncontest = true;\ndescription = "a" "b;\n' >"$tmp/open.cfg"
check unterminated-string 2 err "^fusetile: $tmp/open.cfg:3: unterminated string: no closing \" before the end of the file \(not libconfig syntax\)$" -- "$bin" schedule "$P" --target "$tmp/open.cfg"
printf 'name = "x";\n@include "/dev/zero"\n' >"$tmp/include.cfg"
check include 2 err "^fusetile: $tmp/include.cfg:2: @include is not supported: write the settings in this file$" -- "$bin" schedule "$P" --target "$tmp/include.cfg"

# schedule: says what came from the target, and the schedule it writes is
# valid on that target.
check schedule-gpu 0 err "schedule: target $gpu \(gpu-h100-sm\): from the target: capacity 116736 elements" \
    -- "$bin" schedule "$vec/E-mlp-fused.problem.json" --target "$gpu" --time-limit 1 -o "$tmp/e.json"
check schedule-gpu-evaluates 0 out '^total ' -- "$bin" evaluate "$vec/E-mlp-fused.problem.json" "$tmp/e.json" --target "$gpu"
# (the search reaches the bound, 17600, and stops: its 10-s limit costs
# nothing but leaves room on a loaded machine, where 1 s under valgrind
# once fell short)
check schedule-contest 0 err "schedule: target $contest \(contest\): the contest's abstract machine" \
    -- "$bin" schedule "$vec/E-mlp-fused.problem.json" --target "$contest" --time-limit 10 -o "$tmp/c.json"
check schedule-contest-total 0 out '^total +17600$' -- "$bin" evaluate "$vec/E-mlp-fused.problem.json" "$tmp/c.json"
check schedule-quiet 0 - '' -- "$bin" schedule "$vec/E-mlp-fused.problem.json" --target "$gpu" --time-limit 1 --quiet -o "$tmp/q.json"
expect schedule-quiet-silent "stderr not empty under --quiet" test ! -s "$tmp/err"
# total_seconds: with a real target, evaluate --json gives the total in
# seconds at the target's clock (total cycles / clock_hz), --keep-costs too;
# without a target, on the contest target and for an invalid schedule it is
# absent.
check seconds-gpu 0 out '"total_seconds": ' -- "$bin" evaluate "$P" "$S" --json --target "$gpu"
json_check seconds-gpu-value 'd["total_seconds"] == d["total"] / 1830000000 and d["target_settings"]["clock_hz"] == 1830000000'
check seconds-gpu-keep 0 out '"total_seconds": ' -- "$bin" evaluate "$P" "$S" --json --target "$gpu" --keep-costs
json_check seconds-gpu-keep-value 'd["total_seconds"] == d["total"] / 1830000000'
check seconds-none 0 out '"total": ' -- "$bin" evaluate "$P" "$S" --json
json_check seconds-none-absent '"total_seconds" not in d'
check seconds-contest 0 out '"total": ' -- "$bin" evaluate "$P" "$S" --json --target "$contest"
json_check seconds-contest-absent '"total_seconds" not in d'
check seconds-invalid 1 out '"valid": false' -- "$bin" evaluate "$P" "$S" --json --target "$targets/kpu.cfg"
json_check seconds-invalid-absent '"total_seconds" not in d and "total" not in d'
check seconds-help 0 out 'total_seconds' -- "$bin" evaluate --help

# The whole-chip targets (docs/DEVICE.md): the scheduler's schedule of a
# public benchmark and of an example model is valid there; the JSON gives
# the whole-device settings and the time in seconds.  kpu-chip is 16 tiles
# of kpu.cfg with a shared L3: the same benchmark runs several times
# faster there than on one tile.
B=$(cd "$(dirname "$0")/../../benchmarks" && pwd)/mlsys-2026-1.json
X=$(cd "$(dirname "$0")/../../examples" && pwd)/gpt2_block.problem.json
for t in kpu kpu-chip tpu-v5e-chip; do
    for pb in "$B" "$X"; do
        n=$t-$(basename "$pb" .json)
        check "$n-schedule" 0 - '' -- "$bin" schedule "$pb" --target "$targets/$t.cfg" --time-limit 1 -q -o "$tmp/$n.json"
        check "$n-evaluate" 0 out '"valid": true' -- "$bin" evaluate "$pb" "$tmp/$n.json" --target "$targets/$t.cfg" --json
        json_check "$n-seconds" 'd["total_seconds"] == d["total"] / d["target_settings"]["clock_hz"] and d["ratio"] >= 1'
        cp "$tmp/out" "$tmp/$n.eval.json"
    done
done
check kpu-chip-json 0 out '"valid": true' -- "$bin" evaluate "$B" "$tmp/kpu-chip-mlsys-2026-1.json" --target "$targets/kpu-chip.cfg" --json
json_check kpu-chip-settings 'd["target_settings"]["units"] == 16 and d["target_settings"]["shared_cache"] == {"capacity_bytes": 16777216, "partitions": 1, "bandwidth": 1024} and d["target_settings"]["step_overhead"] == 64'
expect kpu-chip-faster "kpu-chip is not at least 4 x faster than one kpu tile on $B" python3 -c '
import json, sys
tile, chip = (json.load(open(f))["total"] for f in sys.argv[1:3])
sys.exit(0 if chip * 4 < tile else 1)' "$tmp/kpu-mlsys-2026-1.eval.json" "$tmp/kpu-chip-mlsys-2026-1.eval.json"
check kpu-chip-header 0 out '^target .*\(kpu-chip\).*; whole device: 16 units sharing the slow memory, shared cache 8388608 elements \(16777216 B\) at 512 elements per cycle, step overhead 64 cycles, slow memory efficiency 0.8 \(in the bandwidths above\), MatMul efficiency 0.9; base costs from the target.s throughput \(MatMul 35.5555555555556,' \
    -- "$bin" evaluate "$B" "$tmp/kpu-chip-mlsys-2026-1.json" --target "$targets/kpu-chip.cfg"
check tpu-chip-settings 0 out '"units": 1, "slow_memory_efficiency": 0.9, "matmul_efficiency": 0.85, "pointwise_efficiency": 1, "step_overhead": 526, "tile_overhead": 0, "matmul_tile_overhead": 0, "shared_cache": null, "run_overhead": 0, "replay_interval": 0, "kind_cost": \{\}' \
    -- "$bin" evaluate "$B" "$tmp/tpu-v5e-chip-mlsys-2026-1.json" --target "$targets/tpu-v5e-chip.cfg" --json
# the fitted H100: the settings only validate and calibrate use, and the
# kind costs (any schedule valid there will do: the kpu-chip one is)
check gpu-h100-json 0 out '"valid": true' -- "$bin" evaluate "$B" "$tmp/kpu-chip-mlsys-2026-1.json" --target "$targets/gpu-h100.cfg" --json
json_check gpu-h100-measured-settings 'd["target_settings"]["run_overhead"] > 0 and d["target_settings"]["replay_interval"] > 0 and list(d["target_settings"]["kind_cost"]) == ["gelu", "nchw_to_nhwc", "nhwc_to_nchw", "depthwise_conv2d", "batch_norm", "max_pool2d"] and d["target_settings"]["kind_cost"]["gelu"] > 1'
# a fitted overhead that is zero but for rounding (9.35762e-14 cycles):
# the target line and T describe read 0, not 9.35762e-14 (issue 32)
sed -E 's/^([[:space:]]*launch_overhead[[:space:]]*=)[^;]*;/\1 9.35762e-14;/; s/^([[:space:]]*transfer_latency[[:space:]]*=)[^;]*;/\1 37.6470588235294;/' \
    "$targets/kpu.cfg" >"$tmp/tiny.cfg"
expect tiny-config "no launch_overhead setting in kpu.cfg" grep -q "launch_overhead = 9.35762e-14;" "$tmp/tiny.cfg"
check tiny-launch-line 0 out '^target .*; timing: transfer latency 37.647, launch overhead 0 cycles, ' \
    -- "$bin" evaluate "$B" "$tmp/kpu-mlsys-2026-1.json" --target "$tmp/tiny.cfg"
expect tiny-launch-no-exponent "the target line shows an exponent: $(grep '^target' "$tmp/out")" \
    sh -c "! grep '^target' '$tmp/out' | grep -Eq '[0-9]e-[0-9]'"
printf 'fusetile::target T {%s}\nputs [T describe]\n' "$tmp/tiny.cfg" >"$tmp/describe.tcl"
check tiny-describe 0 out 'latency 37.647 cycles, .*launch overhead 0 cycles' -- "$bin" shell "$tmp/describe.tcl"
# a schedule made for one unit (kpu.cfg) that retains a tensor, evaluated
# and simulated on the H100's 132 units: the reason names the units, not
# retain-not-produced (the tensor is produced; issue 32)
printf '%s\n' '{"widths": [128, 128, 128], "heights": [128, 128, 128], "inputs": [[0], [1]], "outputs": [[1], [2]], "base_costs": [100, 100], "op_types": ["Pointwise", "Pointwise"], "fast_memory_capacity": 100000, "slow_memory_bandwidth": 10, "native_granularity": [128, 128]}' >"$tmp/chain.json"
printf '%s\n' '{"subgraphs": [[0], [1]], "granularities": [[32, 32, 1], [32, 32, 1]], "tensors_to_retain": [[1], []], "traversal_orders": [null, null]}' >"$tmp/chain.schedule.json"
check retain-one-unit 0 out '^total ' -- "$bin" evaluate "$tmp/chain.json" "$tmp/chain.schedule.json" --target "$targets/kpu.cfg"
for c in evaluate simulate; do
    check "retain-on-units-$c" 1 err "invalid schedule \(retain-on-units\): .*tensors_to_retain\[0\]\[0\]: tensor 1 is retained, but this machine has 132 units, each with its own fast memory, .*the schedule was made for a machine of one unit" \
        -- "$bin" "$c" "$tmp/chain.json" "$tmp/chain.schedule.json" --target "$targets/gpu-h100.cfg"
done
# one machine per problem (issue 32): a problem imported for gpu-h100
# (imported_for, as `fusetile import --target` writes it; made by hand
# here) run without --target, on the contest target or on another target
# gets one warning line on stderr; with its own target, none
python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
p["imported_for"] = {"target": "gpu-h100", "file": "targets/gpu-h100.cfg"}
json.dump(p, open(sys.argv[2], "w"))' "$B" "$tmp/imported.json"
check imported-schedule 0 - '' -- "$bin" schedule "$tmp/imported.json" --target "$targets/gpu-h100.cfg" --time-limit 1 -q -o "$tmp/imported.schedule.json"
expect imported-schedule-quiet "a warning with the problem's own target: $(cat "$tmp/err")" sh -c "! grep -q 'imported for' '$tmp/err'"
# the runs below take a schedule valid on every machine they use (one op a
# subgraph at 128 x 128 x 32), not the search's, which may use a tile only
# gpu-h100 allows
printf '%s\n' '{"subgraphs": [[0], [1], [2], [3], [4]], "granularities": [[128, 128, 32], [128, 128, 1], [128, 128, 32], [128, 128, 32], [128, 128, 1]], "tensors_to_retain": [[], [], [], [], []]}' \
    >"$tmp/imported.schedule.json"
for c in evaluate simulate; do
    check "imported-$c-own" 0 - '' -- "$bin" "$c" "$tmp/imported.json" "$tmp/imported.schedule.json" --target "$targets/gpu-h100.cfg"
    expect "imported-$c-own-quiet" "a warning with the problem's own target: $(cat "$tmp/err")" sh -c "! grep -q 'imported for' '$tmp/err'"
    check "imported-$c-bare" 0 err "warning: .*imported.json: imported for target gpu-h100 \(targets/gpu-h100.cfg\) but run without --target: costs are the problem's own, without the target's timing terms \(an 8-fold difference is possible\); add --target targets/gpu-h100.cfg" \
        -- "$bin" "$c" "$tmp/imported.json" "$tmp/imported.schedule.json"
    expect "imported-$c-once" "not one warning: $(cat "$tmp/err")" test "$(grep -c 'imported for' "$tmp/err")" -eq 1
    check "imported-$c-other" 0 err "warning: .*imported.json: imported for target gpu-h100 \(targets/gpu-h100.cfg\) but run with --target .*tpu-v5e-chip.cfg, a target named tpu-v5e-chip" \
        -- "$bin" "$c" "$tmp/imported.json" "$tmp/imported.schedule.json" --target "$targets/tpu-v5e-chip.cfg"
done
check imported-contest 0 err "imported for target gpu-h100 .* but run on the contest target" \
    -- "$bin" evaluate "$tmp/imported.json" "$tmp/imported.schedule.json" --target "$targets/contest.cfg"
check imported-schedule-bare 0 err "imported.json: imported for target gpu-h100 .* but run without --target" \
    -- "$bin" schedule "$tmp/imported.json" --time-limit 1 -q -o "$tmp/imported2.json"
check imported-mlsys-silent 0 - '' -- "$bin" mlsys "$tmp/imported.json" "$tmp/imported3.json"
expect imported-mlsys-no-warning "mlsys printed: $(cat "$tmp/err")" test ! -s "$tmp/err"
printf '%s\n' '{"widths": [128, 128], "heights": [128, 128], "inputs": [[0]], "outputs": [[1]], "base_costs": [100], "op_types": ["Pointwise"], "fast_memory_capacity": 100000, "slow_memory_bandwidth": 10, "native_granularity": [128, 128], "imported_for": {"target": 7}}' >"$tmp/bad-imported.json"
check imported-bad 2 err 'bad-imported.json: imported_for.target: expected a non-empty string, got an integer' -- "$bin" schedule "$tmp/bad-imported.json"
# a NUL byte in a target file: one line naming the file and the offset
printf 'name = "x";\0\n' >"$tmp/nul.cfg"
check nul-byte 2 err 'nul.cfg: not a text file \(a NUL byte at offset 11\)' -- "$bin" schedule "$P" --target "$tmp/nul.cfg"
# the whole target line, however long (it was cut at 352 bytes of the
# whole-device terms: "...MatMul efficiency 0.997456, Point")
check gpu-h100-line 0 out '^target .*\(gpu-h100\): .*MatMul efficiency 0\.997456, Pointwise ops unpadded; base costs from the target.s throughput \(MatMul [0-9.]+, Pointwise 32 per input, cycles per native tile\); one cost unit = one cycle at 1830000000 Hz$' \
    -- "$bin" evaluate "$B" "$tmp/kpu-chip-mlsys-2026-1.json" --target "$targets/gpu-h100.cfg"
check schedule-help 0 out '--target FILE' -- "$bin" schedule --help
check schedule-help-name 0 out "shipped target's name" -- "$bin" schedule --help
check evaluate-help 0 out '--keep-costs' -- "$bin" evaluate --help

finish test_target
