#!/usr/bin/env bash
# test_simulate_clock.sh - replays whose spans together pass the SystemC
# clock of one process (2^64 fs, about 1.8e10 cost units): `fusetile
# simulate --target` replays a schedule once as it is and once per timing
# effect turned off, and each replay must have the whole clock to itself
# (sim/clock.h); a single replay past the clock fails with one line naming
# the limit (docs/LIMITS.md).
#
# usage: test_simulate_clock.sh FUSETILE
#
#  - three MatMuls of 2.5e9 cycles each (base costs kept, --keep-costs) on
#    targets/kpu.cfg: 7.5e9 cycles a replay, 7 replays (5 effects, then all
#    off), 5.25e10 cycles in all: every replay succeeds, agrees with the
#    analytic model, and the report accounts for every difference;
#  - the same at 8 k-steps per MatMul (the pipeline over several steps);
#  - the Python binding: the same replay three times in one process, then
#    traces of another: the same files as a fresh process's;
#  - eight such MatMuls, 2e10 cycles in one replay: exit 2 and the limit.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
[ $# -ge 1 ] || { echo "usage: test_simulate_clock.sh FUSETILE" >&2; exit 2; }
bin=$1
src=${FT_SRCDIR:-$here/../..}
kpu=$src/targets/kpu.cfg

# chain NAME N SIZE COST: a chain of N MatMuls of SIZE x SIZE tensors, each
# op's base cost COST, one subgraph per op at the KPU's native 32 x 32 x 32
# (NAME.json and NAME.schedule.json in $tmp).
chain() {
    python3 - "$tmp/$1" "$2" "$3" "$4" <<'PY'
import json, sys
out, n, size, cost = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
widths, inputs, outputs = [size, size], [], []
prev = 0
for i in range(n):
    if i == 0:
        left, right = 0, 1
    else:
        widths.append(size)
        left, right = prev, len(widths) - 1
    prev = len(widths)
    widths.append(size)
    inputs.append([left, right])
    outputs.append([prev])
problem = {"widths": widths, "heights": widths, "inputs": inputs, "outputs": outputs, "base_costs": [cost] * n,
           "op_types": ["MatMul"] * n, "fast_memory_capacity": 100000, "slow_memory_bandwidth": 10,
           "native_granularity": [32, 32]}
schedule = {"subgraphs": [[i] for i in range(n)], "granularities": [[32, 32, 32]] * n,
            "tensors_to_retain": [[]] * n, "traversal_orders": [None] * n}
json.dump(problem, open(out + ".json", "w"))
json.dump(schedule, open(out + ".schedule.json", "w"))
PY
}

chain big 3 32 2.5e9
chain steps 3 64 3e8
chain huge 8 32 2.5e9

for n in big steps; do
    P=$tmp/$n.json
    S=$tmp/$n.schedule.json
    check "$n-text" 0 out '^agreement +yes' -- "$bin" simulate "$P" "$S" --target "$kpu" --keep-costs
    expect "$n-no-failed-replay" "a replay failed: $(grep -m1 'replay failed' "$tmp/out")" \
        sh -c "! grep -q 'replay failed' '$tmp/out'"
    expect "$n-quiet" "stderr: $(head -c 300 "$tmp/err")" test ! -s "$tmp/err"
    expect "$n-all-off-row" "no 'all effects' row" grep -Eq '^  all effects +[0-9]+ +[0-9]+ +0 +0 +yes' "$tmp/out"
    check "$n-json" 0 - "" -- "$bin" simulate "$P" "$S" --target "$kpu" --keep-costs --json
    # 5 effects of the KPU and all of them off, each replayed and agreeing
    json_check "$n-json-replays" 'len(d["effects_off"]) == 6 and all(v["ok"] and v["agree"] for v in d["effects_off"])'
    json_check "$n-json-accounted" 'd["agree"] and d["accounted"] and d["total_simulated"] > 7e9'
    json_check "$n-json-total" 'sum(v["total_simulated"] for v in d["effects_off"]) + d["total_simulated"] > 1.8e10 * 2'
done

# The Python binding (FT_PYTHON, as test_python.sh): replays of one
# process, each with the whole clock.
py=${FT_PYTHON:-}
build=${FT_BUILDDIR:-$(cd "$(dirname "$bin")" && pwd)}
if [ -z "$py" ]; then
    skip 4 "the binding's replays: ${FT_PYTHON_SKIP:-FT_PYTHON is not set (run through make check)}"
else
    check python-replays 0 out '^ok 3$' -- env PYTHONPATH="$build/python" "$py" -c '
import sys
import fusetile as ft
problem, schedule, target = sys.argv[1:4]
ok = 0
for _ in range(3):
    r = ft.simulate(problem, schedule, target=target, keep_costs=True)
    ok += r["total_simulated"] == r["total_analytic"] > 7e9 and r["accounted"] and all(v["ok"] for v in r["effects_off"])
print("ok", ok)
' "$tmp/big.json" "$tmp/big.schedule.json" "$kpu"
    # traces written after 5e10 cycles of replays in the process are the
    # ones a fresh process writes (the CLI's, first replay of its process)
    check trace-first 0 - "" -- "$bin" simulate "$tmp/steps.json" "$tmp/steps.schedule.json" --target "$kpu" --keep-costs \
        --trace "$tmp/fresh.json" --vcd "$tmp/fresh.vcd"
    check python-trace-later 0 out '^traced$' -- env PYTHONPATH="$build/python" "$py" -c '
import sys
import fusetile as ft
big, big_s, steps, steps_s, target, tmp = sys.argv[1:7]
for _ in range(2):
    ft.simulate(big, big_s, target=target, keep_costs=True)
ft.simulate(steps, steps_s, target=target, keep_costs=True, trace=tmp + "/later.json", vcd=tmp + "/later.vcd")
print("traced")
' "$tmp/big.json" "$tmp/big.schedule.json" "$tmp/steps.json" "$tmp/steps.schedule.json" "$kpu" "$tmp"
    expect trace-later-json "the Chrome trace differs from a fresh process's" cmp -s "$tmp/fresh.json" "$tmp/later.json"
    expect trace-later-vcd "the VCD differs from a fresh process's" cmp -s "$tmp/fresh.vcd" "$tmp/later.vcd"
fi

# One replay past the clock: refused with the limit, whatever ran before.
check huge-one-replay 2 err 'runs past the simulator.s clock: 2\^64 fs .*about 1\.8e10 cost units for one replay' \
    -- "$bin" simulate "$tmp/huge.json" "$tmp/huge.schedule.json" --target "$kpu" --keep-costs
expect huge-one-line "stderr is not one line: $(head -c 300 "$tmp/err")" test "$(wc -l <"$tmp/err")" -le 1

finish test_simulate_clock
