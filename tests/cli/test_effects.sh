#!/bin/bash
# test_effects.sh - the timing effects of the machine targets, analytic
# against simulated (`fusetile simulate --target`).
#
# usage: test_effects.sh FUSETILE
#
# For the KPU, GPU and TPU targets and a scheduler schedule of two public
# benchmarks on each:
#  - the report accounts for every difference between simulated and
#    analytic (exit 0), and names double buffering, the one effect without an
#    exact closed form, wherever they differ;
#  - a copy of the target file with double buffering turned off brings
#    simulated back to analytic (relative difference <= 1e-9), per subgraph
#    and in total;
#  - for each other effect the target has, a copy with only that effect on
#    (double buffering off) agrees too: its closed form is exact; and the
#    effect is there (the analytic total differs from the copy with it off);
#  - the report's own "turned off" replays equal replays of the copies.
# Then the command's error paths with --target.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
[ $# -ge 1 ] || { echo "usage: test_effects.sh FUSETILE" >&2; exit 2; }
bin=$1
src=${FT_SRCDIR:-$here/../..}
targets=$src/targets
bench=$src/benchmarks

# json FILE EXPR: evaluate the Python expression EXPR over the JSON object d
# read from FILE and print the result.
json() {
    python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# copy_with SRC DST SETTING=VALUE...: DST is SRC with each SETTING's value
# replaced (the setting must be present in SRC).
copy_with() {
    local from=$1 to=$2
    shift 2
    cp "$from" "$to"
    for kv in "$@"; do
        local k=${kv%%=*} v=${kv#*=}
        grep -Eq "^[[:space:]]*$k[[:space:]]*=" "$to" || { echo "copy_with: no $k in $from" >&2; return 1; }
        sed -i -E "s/^([[:space:]]*$k[[:space:]]*=)[^;]*;/\1 $v;/" "$to"
    done
}

# The effects, the setting that turns each off, and the target values that
# have it: every target has latency, launch overhead and double buffering;
# the KPU also has a narrower write port on a separate channel.
off_latency="transfer_latency=0"
off_launch="launch_overhead=0"
off_double="double_buffering=false"
off_channels="separate_channels=false"
all_off="$off_latency $off_launch $off_double $off_channels"

limit=0.5
benches="1 5"
[ "${FT_SLOW:-0}" = 1 ] && { limit=2; benches=1; }

for t in kpu gpu-h100-sm tpu-v5e; do
    cfg=$targets/$t.cfg
    read_bw=$(sed -nE 's/^[[:space:]]*read_bandwidth[[:space:]]*=[[:space:]]*([0-9.]+);.*/\1/p' "$cfg")
    off_write="write_bandwidth=$read_bw"
    for n in $benches; do
        P=$bench/mlsys-2026-$n.json
        S=$tmp/$t-$n.schedule.json
        check "$t-$n-schedule" 0 - "" -- "$bin" schedule "$P" --target "$cfg" --time-limit $limit -q -o "$S"
        # The full target: every difference accounted for.
        check "$t-$n-report" 0 out '^agreement +yes( \(relative difference at most 1e-09 in every subgraph and in total\)|: the total is within 1e-09 of the analytic model, every subgraph.s difference accounted for .*|: differs from the analytic model by -?[0-9.e+-]+ \(-?[0-9.e+-]+ %\), accounted for by double buffering; every difference accounted for)$' \
            -- "$bin" simulate "$P" "$S" --target "$cfg"
        # (the same report's table of effects turned off: no second run)
        expect "$t-$n-report-off-table" "no double buffering row ending 'yes' in the table of effects turned off" \
            grep -Eq '^  double buffering +[0-9.e+]+ +[0-9.e+]+ +[-0-9.e+]+ +[0-9.e+-]+ +yes$' "$tmp/out"
        "$bin" simulate "$P" "$S" --target "$cfg" --json >"$tmp/full.json" 2>/dev/null
        expect "$t-$n-accounted" "not every difference is accounted for" \
            test "$(json "$tmp/full.json" 'd["accounted"]')" = True
        expect "$t-$n-named" "a subgraph that differs is not accounted for by double buffering" \
            test "$(json "$tmp/full.json" 'all(s["accounted_for_by"] in ("", "double buffering") or "double buffering" in s["accounted_for_by"] for s in d["subgraphs"])')" = True

        # Double buffering off: simulated = analytic, per subgraph and total.
        copy_with "$cfg" "$tmp/nodb.cfg" $off_double
        check "$t-$n-no-double-buffering" 0 out '^agreement +yes' -- "$bin" simulate "$P" "$S" --target "$tmp/nodb.cfg"
        "$bin" simulate "$P" "$S" --target "$tmp/nodb.cfg" --json >"$tmp/nodb.json" 2>/dev/null
        expect "$t-$n-no-double-buffering-subgraphs" "a subgraph differs with double buffering off" \
            test "$(json "$tmp/nodb.json" 'all(abs(s["simulated"] - s["analytic"]) <= 1e-9 * s["analytic"] for s in d["subgraphs"])')" = True
        # The report's replay with double buffering off is that of the copy.
        expect "$t-$n-off-replay-matches-copy" "the report's replay with double buffering off differs from the copy's" \
            test "$(json "$tmp/full.json" '[v["total_simulated"] for v in d["effects_off"] if v["turned_off"] == "double buffering"][0]')" \
            = "$(json "$tmp/nodb.json" 'd["total_simulated"]')"

        # Each closed-form effect alone (with double buffering off) agrees,
        # and costs something.
        effects="latency launch"
        [ "$t" = kpu ] && effects="$effects channels write"
        for e in $effects; do
            eval "off=\$off_$e"
            rest=""
            for kv in $all_off $off_write; do
                [ "$kv" = "$off" ] || rest="$rest $kv"
            done
            # shellcheck disable=SC2086
            copy_with "$cfg" "$tmp/only.cfg" $rest
            check "$t-$n-only-$e" 0 out '^agreement +yes' -- "$bin" simulate "$P" "$S" --target "$tmp/only.cfg"
            a_only=$(sed -nE 's/^analytic +([0-9.e+]+)$/\1/p' "$tmp/out")
            # The closed form counts the effect: the analytic total changes
            # when it is turned on alone, or off with the others on (separate
            # channels matter only when steps overlap).
            # shellcheck disable=SC2086
            copy_with "$cfg" "$tmp/none.cfg" $all_off $off_write
            "$bin" simulate "$P" "$S" --target "$tmp/none.cfg" >"$tmp/out" 2>&1
            a_none=$(sed -nE 's/^analytic +([0-9.e+]+)$/\1/p' "$tmp/out")
            copy_with "$cfg" "$tmp/off.cfg" "$off"
            a_full=$(json "$tmp/full.json" 'd["total_analytic"]')
            "$bin" simulate "$P" "$S" --target "$tmp/off.cfg" --json >"$tmp/off.json" 2>/dev/null
            a_off=$(json "$tmp/off.json" 'd["total_analytic"]')
            expect "$t-$n-$e-costs" "the analytic total does not change with $e (alone $a_only, none $a_none; all $a_full, all but it $a_off)" \
                test -n "$a_only" -a -n "$a_off" -a \( "$a_only" != "$a_none" -o "$a_off" != "$a_full" \)
        done
    done
done

# The KPU's double buffering hides the transfer latency and the write
# channel: its analytic total is below the one without double buffering.
P=$bench/mlsys-2026-1.json
S=$tmp/kpu-1.schedule.json
"$bin" simulate "$P" "$S" --target "$targets/kpu.cfg" --json >"$tmp/full.json" 2>/dev/null
copy_with "$targets/kpu.cfg" "$tmp/nodb.cfg" $off_double
"$bin" simulate "$P" "$S" --target "$tmp/nodb.cfg" --json >"$tmp/nodb.json" 2>/dev/null
expect kpu-double-buffering-pays "double buffering does not lower the KPU's total" \
    python3 -c 'import json, sys; a, b = (json.load(open(f)) for f in sys.argv[1:]); sys.exit(not (a["total_simulated"] < b["total_simulated"] and a["total_analytic"] < b["total_analytic"]))' \
    "$tmp/full.json" "$tmp/nodb.json"

# A target without timing effects (the contest's) has no "turned off" table.
V=$src/tests/vectors
check contest-no-effects 0 out '^agreement +yes \(relative difference at most 1e-09' \
    -- "$bin" simulate "$V/ex1A.problem.json" "$V/ex1A.solution.json" --target "$targets/contest.cfg"
expect contest-no-effects-table "the contest target printed a table of effects" test -z "$(grep 'turned off' "$tmp/out")"

# Error paths.
check keep-costs-needs-target 2 err '^fusetile: simulate: --keep-costs needs --target$' \
    -- "$bin" simulate "$V/ex1A.problem.json" "$V/ex1A.solution.json" --keep-costs
check target-empty 2 err '^fusetile: simulate: --target needs a file name$' \
    -- "$bin" simulate "$V/ex1A.problem.json" "$V/ex1A.solution.json" --target ""
check target-missing 2 err "^fusetile: --target $tmp/nope.cfg: cannot open: No such file or directory; shipped targets: .*kpu" \
    -- "$bin" simulate "$V/ex1A.problem.json" "$V/ex1A.solution.json" --target "$tmp/nope.cfg"
printf 'name = "x";\ncontest = false;\nclock_hz = 1e9;\nelement_bytes = 2;\nfast_memory = { capacity_bytes = 4096; };\nslow_memory = { read_bandwidth = 8.0; seperate_channels = true; };\ncompute = { native_granularity = { w = 128; h = 128; }; matmul_macs_per_cycle = 1.0; pointwise_elements_per_cycle = 1.0; };\n' >"$tmp/typo.cfg"
check target-typo 2 err "^fusetile: $tmp/typo.cfg:6: unknown setting slow_memory.seperate_channels \(did you mean slow_memory.separate_channels\?\)" \
    -- "$bin" simulate "$V/ex1A.problem.json" "$V/ex1A.solution.json" --target "$tmp/typo.cfg"
check target-above-native 1 err 'invalid schedule \(granularity-above-native\): simulator: .*w = 128 is above native 32' \
    -- "$bin" simulate "$V/ex1A.problem.json" "$V/ex1A.solution.json" --target "$targets/kpu.cfg"
check target-json-invalid 1 out '"valid": false.*"target": ".*kpu.cfg"' \
    -- "$bin" simulate "$V/ex1A.problem.json" "$V/ex1A.solution.json" --target "$targets/kpu.cfg" --json

finish test_effects
