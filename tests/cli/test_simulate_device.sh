#!/usr/bin/env bash
# test_simulate_device.sh - `fusetile simulate` on a whole-device target
# (targets/gpu-h100.cfg: 132 units, a shared L2 cache, a tile overhead,
# double buffering): the simulator models the whole-device terms and agrees
# with the analytic model (docs/DEVICE.md).
#
# usage: test_simulate_device.sh FUSETILE [VECTORS_DIR]
#
#  - on scheduler schedules of public benchmarks and examples, and on a
#    two-wave Pointwise and one whose footprint overflows the L2 (the cache
#    floor binds): the report accounts for every difference, and a subgraph
#    that differs names double buffering (the one effect without an exact
#    closed form); with double buffering off, simulated = analytic per
#    subgraph and in total;
#  - the report turns off each whole-device effect (units, shared cache,
#    cache floor, tile overhead) and they cost something;
#  - traces have a busy signal and a thread per unit (132);
#  - a trace of more units than traces show is refused, the replay is not.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
[ $# -ge 1 ] || { echo "usage: test_simulate_device.sh FUSETILE [VECTORS_DIR]" >&2; exit 2; }
bin=$1
src=${FT_SRCDIR:-$here/../..}
h100=$src/targets/gpu-h100.cfg

# json FILE EXPR: evaluate the Python expression EXPR over the JSON object d
# read from FILE and print the result.
json() {
    python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# The H100 without double buffering: every other term has a closed form.
sed -E 's/^([[:space:]]*double_buffering[[:space:]]*=)[^;]*;/\1 false;/' "$h100" >"$tmp/nodb.cfg"
expect nodb-config "no double_buffering setting in $h100" grep -q "double_buffering = false;" "$tmp/nodb.cfg"

# A Pointwise op on an N x N tensor at 128 x 128: N = 2048 gives 256 tiles
# (two waves on 132 units, the L2 holds its footprint); N = 4096 overflows
# the L2 (2 x 16M elements of 2 bytes > 50 MiB): the cache floor binds.
for n in 2048 4096; do
    printf '{"widths": [%d, %d], "heights": [%d, %d], "inputs": [[0]], "outputs": [[1]], "base_costs": [100], "op_types": ["Pointwise"], "fast_memory_capacity": 100000, "slow_memory_bandwidth": 10, "native_granularity": [128, 128]}\n' \
        "$n" "$n" "$n" "$n" >"$tmp/pw$n.json"
done
printf '{"subgraphs": [[0]], "granularities": [[128, 128, 1]], "tensors_to_retain": [[]], "traversal_orders": [null]}\n' >"$tmp/pw.schedule.json"

limit=1
[ "${FT_SLOW:-0}" = 1 ] && limit=3
cases="pw2048 pw4096"
for P in "$src/benchmarks/mlsys-2026-1.json" "$src/benchmarks/mlsys-2026-9.json" "$src/examples/bert_layer.problem.json"; do
    n=$(basename "$P" .json)
    n=${n%.problem}
    cp "$P" "$tmp/$n.json"
    check "$n-schedule" 0 - "" -- "$bin" schedule "$P" --target "$h100" --time-limit $limit -q -o "$tmp/$n.schedule.json"
    cases="$cases $n"
done
cp "$tmp/pw.schedule.json" "$tmp/pw2048.schedule.json"
cp "$tmp/pw.schedule.json" "$tmp/pw4096.schedule.json"

for n in $cases; do
    P=$tmp/$n.json
    S=$tmp/$n.schedule.json
    # The whole device: every difference accounted for, by double buffering.
    check "$n-report" 0 out '^agreement +yes( \(relative difference at most 1e-09 in every subgraph and in total\)|: the total is within 1e-09 of the analytic model, every subgraph.s difference accounted for .*|: differs from the analytic model by -?[0-9.e+-]+ \(-?[0-9.e+-]+ %\), accounted for by double buffering[a-z, ]*; every difference accounted for)$' \
        -- "$bin" simulate "$P" "$S" --target "$h100"
    # (the same report names each effect turned off: one run, not five;
    # each is a simulator start under valgrind)
    cp "$tmp/out" "$tmp/report.out"
    for e in units 'shared cache' 'cache floor' 'tile overhead'; do
        expect "$n-turned-off-$e" "no line '  $e' with a figure in the report" grep -Eq "^  $e +[0-9]" "$tmp/report.out"
    done
    "$bin" simulate "$P" "$S" --target "$h100" --json >"$tmp/full.json" 2>/dev/null
    expect "$n-accounted" "not every difference is accounted for" test "$(json "$tmp/full.json" 'd["accounted"]')" = True
    expect "$n-named" "a subgraph that differs does not name double buffering" \
        test "$(json "$tmp/full.json" 'all(s["accounted_for_by"] == "" or "double buffering" in s["accounted_for_by"] for s in d["subgraphs"])')" = True
    expect "$n-units-cost" "the analytic total does not change with one unit" \
        test "$(json "$tmp/full.json" '[v["total_analytic"] for v in d["effects_off"] if v["turned_off"] == "units"][0] != d["total_analytic"]')" = True
    expect "$n-overhead-costs" "the analytic total does not change without the tile overhead" \
        test "$(json "$tmp/full.json" '[v["total_analytic"] for v in d["effects_off"] if v["turned_off"] == "tile overhead"][0] < d["total_analytic"]')" = True

    # Without double buffering: simulated = analytic, per subgraph and in
    # total, and with each whole-device effect turned off too.
    check "$n-no-double-buffering" 0 out '^agreement +yes \(relative difference at most 1e-09 in every subgraph and in total\)$' \
        -- "$bin" simulate "$P" "$S" --target "$tmp/nodb.cfg"
    "$bin" simulate "$P" "$S" --target "$tmp/nodb.cfg" --json >"$tmp/nodb.json" 2>/dev/null
    expect "$n-no-double-buffering-subgraphs" "a subgraph differs with double buffering off" \
        test "$(json "$tmp/nodb.json" 'all(abs(s["simulated"] - s["analytic"]) <= 1e-9 * s["analytic"] for s in d["subgraphs"])')" = True
    expect "$n-no-double-buffering-effects" "a replay with a whole-device effect off differs" \
        test "$(json "$tmp/nodb.json" 'all(v["ok"] and v["agree"] for v in d["effects_off"])')" = True
done

# The floor binds on the 4096 x 4096 Pointwise (its footprint at the HBM's
# bandwidth exceeds its steps at the L2's), not on the 2048 one.
"$bin" simulate "$tmp/pw4096.json" "$tmp/pw.schedule.json" --target "$tmp/nodb.cfg" --json >"$tmp/big.json" 2>/dev/null
expect floor-binds "turning the cache floor off does not lower the 4096 x 4096 Pointwise" \
    test "$(json "$tmp/big.json" '[v["total_analytic"] for v in d["effects_off"] if v["turned_off"] == "cache floor"][0] < d["total_analytic"]')" = True
"$bin" simulate "$tmp/pw2048.json" "$tmp/pw.schedule.json" --target "$tmp/nodb.cfg" --json >"$tmp/small.json" 2>/dev/null
expect floor-warm "the cache floor binds on a footprint that fits the L2" \
    test "$(json "$tmp/small.json" '[v["total_analytic"] for v in d["effects_off"] if v["turned_off"] == "cache floor"][0] == d["total_analytic"]')" = True

# Partial residency: with 35 MiB resident, 2 x 35 - 64 = 6 MiB (3145728
# elements) of the 4096 x 4096 Pointwise's 64 MiB footprint stay in the L2,
# so its floor (still above its steps at the L2's bandwidth) is the rest
# at the HBM's bandwidth; the simulator agrees, names the effect, and
# turning it off adds those 6 MiB at the HBM's bandwidth.
sed -E '/^[[:space:]]*resident_bytes[[:space:]]*=/d; s/^([[:space:]]*capacity_bytes[[:space:]]*=[[:space:]]*52428800;)/\1 resident_bytes = 36700160;/' \
    "$tmp/nodb.cfg" >"$tmp/resident.cfg"
expect resident-config "no L2 capacity line in $h100" grep -q "resident_bytes = 36700160;" "$tmp/resident.cfg"
check resident-report 0 out '^agreement +yes \(relative difference at most 1e-09 in every subgraph and in total\)$' \
    -- "$bin" simulate "$tmp/pw4096.json" "$tmp/pw.schedule.json" --target "$tmp/resident.cfg"
check resident-named 0 out '^  partial residency +[0-9]' -- "$bin" simulate "$tmp/pw4096.json" "$tmp/pw.schedule.json" --target "$tmp/resident.cfg"
"$bin" simulate "$tmp/pw4096.json" "$tmp/pw.schedule.json" --target "$tmp/resident.cfg" --json >"$tmp/res.json" 2>/dev/null
bw=$(sed -nE 's/^[[:space:]]*read_bandwidth[[:space:]]*=[[:space:]]*([0-9.e+-]+);.*/\1/p' "$tmp/resident.cfg")
eff=$(sed -nE '/^slow_memory/,/^}/s/^[[:space:]]*efficiency[[:space:]]*=[[:space:]]*([0-9.e+-]+);.*/\1/p' "$tmp/resident.cfg")
expect resident-kept "turning partial residency off does not add the 6 MiB kept at the HBM's bandwidth" \
    test "$(json "$tmp/res.json" "abs([v['total_analytic'] for v in d['effects_off'] if v['turned_off'] == 'partial residency'][0] - d['total_analytic'] - 3145728 / ($bw * $eff / 2)) <= 1e-9 * d['total_analytic'] and all(v['ok'] and v['agree'] for v in d['effects_off'])")" = True

# Separate read and write efficiencies of the HBM (slow_memory.read_efficiency,
# .write_efficiency): the simulator agrees with the analytic model, and a
# lower write efficiency costs the 4096 x 4096 Pointwise (its footprint
# overflows the L2: its writes reach the HBM) more than the same read one.
for rw in "0.9 0.5" "0.9 0.9"; do
    set -- $rw
    sed -E "s/^([[:space:]]*efficiency[[:space:]]*=[^;]*;)/\1 read_efficiency = $1; write_efficiency = $2;/" "$tmp/nodb.cfg" >"$tmp/rw$2.cfg"
done
expect rw-config "no slow_memory.efficiency line in $h100" grep -q "write_efficiency = 0.5;" "$tmp/rw0.5.cfg"
check rw-agree 0 out '^agreement +yes \(relative difference at most 1e-09 in every subgraph and in total\)$' \
    -- "$bin" simulate "$tmp/pw4096.json" "$tmp/pw.schedule.json" --target "$tmp/rw0.5.cfg"
"$bin" simulate "$tmp/pw4096.json" "$tmp/pw.schedule.json" --target "$tmp/rw0.5.cfg" --json >"$tmp/rw0.5.json" 2>/dev/null
"$bin" simulate "$tmp/pw4096.json" "$tmp/pw.schedule.json" --target "$tmp/rw0.9.cfg" --json >"$tmp/rw0.9.json" 2>/dev/null
expect rw-write-slower "a lower write efficiency does not slow the 4096 x 4096 Pointwise" \
    test "$(python3 -c 'import json, sys; s, f = (json.load(open(x)) for x in sys.argv[1:]); print(s["total_simulated"] > 1.1 * f["total_simulated"] and s["agree"] and f["agree"])' "$tmp/rw0.5.json" "$tmp/rw0.9.json")" = True
check rw-header 0 out 'slow memory efficiency 0.9 read, 0.5 write' -- "$bin" evaluate "$tmp/pw4096.json" "$tmp/pw.schedule.json" --target "$tmp/rw0.5.cfg"

# The convolution rule (compute.conv_efficiency, docs/DEVICE.md): a 3x3
# convolution's implicit GEMM (im2col Layout and MatMul of kind conv2d, one
# subgraph, compute-bound at 256 channels) costs more than the same ops of
# kind matmul; the simulator
# agrees with the analytic model on it, as on every base cost.
conv_problem() {   # conv_problem KIND > FILE
    printf '{"widths": [256, 2304, 256, 256], "heights": [3136, 3136, 2304, 3136], "inputs": [[0], [1, 2]], "outputs": [[1], [3]], "base_costs": [1, 1], "op_types": ["Layout", "MatMul"], "op_kinds": ["%s", "%s"], "fast_memory_capacity": 100000, "slow_memory_bandwidth": 10, "native_granularity": [64, 64]}\n' "$1" "$1"
}
conv_problem conv2d >"$tmp/conv.json"
conv_problem matmul >"$tmp/gemm.json"
printf '{"subgraphs": [[0, 1]], "granularities": [[128, 128, 64]], "tensors_to_retain": [[]], "traversal_orders": [null]}\n' >"$tmp/conv.schedule.json"
check conv-agree 0 out '^agreement +yes' -- "$bin" simulate "$tmp/conv.json" "$tmp/conv.schedule.json" --target "$tmp/nodb.cfg"
"$bin" simulate "$tmp/conv.json" "$tmp/conv.schedule.json" --target "$tmp/nodb.cfg" --json >"$tmp/conv.out.json" 2>/dev/null
"$bin" simulate "$tmp/gemm.json" "$tmp/conv.schedule.json" --target "$tmp/nodb.cfg" --json >"$tmp/gemm.out.json" 2>/dev/null
expect conv-slower "the convolution's implicit GEMM is not slower than the same GEMM" \
    test "$(python3 -c 'import json, sys; c, g = (json.load(open(f)) for f in sys.argv[1:]); print(c["total_simulated"] > 1.2 * g["total_simulated"] and c["agree"])' "$tmp/conv.out.json" "$tmp/gemm.out.json")" = True

# Traces: a busy signal and a thread per unit.
check trace-units 0 - "" -- "$bin" simulate "$tmp/pw2048.json" "$tmp/pw.schedule.json" --target "$h100" \
    --trace "$tmp/t.json" --vcd "$tmp/t.vcd"
expect vcd-unit131 "the VCD has no unit131_busy" grep -q ' unit131_busy \$end' "$tmp/t.vcd"
expect vcd-no-unit132 "the VCD has unit132_busy" test -z "$(grep ' unit132_busy ' "$tmp/t.vcd")"
expect json-unit131 "the Chrome trace has no thread for unit 131" grep -q '"compute unit 131"' "$tmp/t.json"
expect json-valid "the Chrome trace is not valid JSON" python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$tmp/t.json"

# More units than a trace shows: the trace is refused, the replay is not.
sed -E 's/^units = [0-9]+;/units = 2000;/' "$h100" >"$tmp/many.cfg"
check many-units-trace 2 err 'units 2000 is out of range \(1 to 1024\)' \
    -- "$bin" simulate "$tmp/pw2048.json" "$tmp/pw.schedule.json" --target "$tmp/many.cfg" --vcd "$tmp/m.vcd"
check many-units 0 out '^agreement ' -- "$bin" simulate "$tmp/pw2048.json" "$tmp/pw.schedule.json" --target "$tmp/many.cfg"

finish test_simulate_device
