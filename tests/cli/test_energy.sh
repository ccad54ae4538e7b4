#!/usr/bin/env bash
# test_energy.sh - the energy model (issue 35): a target's energy group loaded and checked (errors name the file, line and setting), evaluate's and simulate's joules and watts per subgraph and in total (table and --json), the simulator's own energy account equal to the analytic one where the latencies agree, validate and calibrate on an energy file (targets/measured/h100/energy.tsv) and their error paths.
# usage: test_energy.sh FUSETILE
set -u
bin=${1:?usage: test_energy.sh FUSETILE}
. "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
H=$root/targets/gpu-h100.cfg
E=$root/targets/measured/h100/energy.tsv
P=$root/benchmarks/mlsys-2026-5.json
py=${PYTHON:-/usr/bin/python3}
command -v "$py" >/dev/null 2>&1 || py=python3

# a one-unit machine without a cache nor double buffering: the simulator's
# latency equals the analytic one, so its energy must too
cat > "$tmp/one.cfg" <<'CFG'
name = "one";
contest = false;
clock_hz = 1e9;
element_bytes = 2;
fast_memory = { capacity_bytes = 262144; };
slow_memory = { read_bandwidth = 64.0; };
compute = {
  native_granularity = { w = 32; h = 32; };
  matmul_macs_per_cycle = 1024.0;
  pointwise_elements_per_cycle = 64.0;
};
execution = { launch_overhead = 500; };
energy = {
  static_watts = 10;
  active_watts = 5;
  mac_pj = 1.5;
  pointwise_pj = 2;
  slow_read_pj = 40;
  slow_write_pj = 50;
  fast_pj = 1;
  launch_pj = 1e5;
};
CFG
# a target without the group (named for the device the file was measured on)
sed -e '/^energy = {/,/^};/d' -e 's/^name = "one";/name = "H100 without energy";/' "$tmp/one.cfg" > "$tmp/plain.cfg"

check sched 0 - - -- "$bin" schedule "$P" --target "$tmp/one.cfg" --time-limit 1 -o "$tmp/s.json" --quiet

# --- the target loader's checks
sed 's/^  mac_pj = 1.5;//' "$tmp/one.cfg" > "$tmp/nomac.cfg"
check missing-mac 2 err 'nomac.cfg:[0-9]+: missing required setting energy.mac_pj' -- "$bin" evaluate "$P" "$tmp/s.json" --target "$tmp/nomac.cfg"
sed 's/^  pointwise_pj = 2;/  pointwise_pj = -2;/' "$tmp/one.cfg" > "$tmp/neg.cfg"
check negative 2 err 'neg.cfg:[0-9]+: .*energy.pointwise_pj' -- "$bin" evaluate "$P" "$tmp/s.json" --target "$tmp/neg.cfg"
sed 's/^  fast_pj = 1;/  fastpj = 1;/' "$tmp/one.cfg" > "$tmp/typo.cfg"
check unknown 2 err 'typo.cfg:[0-9]+: .*fastpj.*did you mean' -- "$bin" evaluate "$P" "$tmp/s.json" --target "$tmp/typo.cfg"
printf 'name = "c";\ncontest = true;\nenergy = { static_watts = 1; mac_pj = 1; slow_read_pj = 1; };\n' > "$tmp/contest.cfg"
check contest 2 err 'contest.cfg:[0-9]+: energy is not used by a contest target' -- "$bin" evaluate "$P" "$tmp/s.json" --target "$tmp/contest.cfg"

# --- evaluate: joules and watts, per subgraph and in total
check eval-table 0 out '^energy +[0-9.e+-]+ J \(average [0-9.]+ W\)' -- "$bin" evaluate "$P" "$tmp/s.json" --target "$tmp/one.cfg"
check eval-json 0 out '"energy_j"' -- "$bin" evaluate "$P" "$tmp/s.json" --target "$tmp/one.cfg" --json
json_check eval-sum 'd["energy_j"] > 0 and abs(sum(s["energy_j"] for s in d["subgraphs"]) - d["energy_j"]) <= 1e-12 * d["energy_j"]'
json_check eval-settings 'd["target_settings"]["energy"]["mac_pj"] == 1.5 and d["target_settings"]["energy"]["slow_write_pj"] == 50'
json_check eval-watts 'abs(d["power_w"] - d["energy_j"] / d["total_seconds"]) <= 1e-9 * d["power_w"]'
# the rule by hand (ft_energy) for every subgraph: no cache, so slow
# memory at its own pJ per byte; the work from the problem's ops
cp "$tmp/out" "$tmp/ev.json"
expect eval-rule "a subgraph's joules are not the rule's" "$py" - "$P" "$tmp/ev.json" <<'PY'
import json, sys
p, d = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
size = lambda t: p["widths"][t] * p["heights"][t]
for s in d["subgraphs"]:
    macs = pw = 0
    for o in s["ops"]:
        out = p["outputs"][o][0]
        if p["op_types"][o] == "MatMul":
            macs += size(out) * p["widths"][p["inputs"][o][0]]
        else:
            pw += size(out) * len(p["inputs"][o])
    want = (1e-12 * (1.5 * macs + 2 * pw + 40 * 2 * s["loaded"] + 50 * 2 * s["written"] + 2 * (s["loaded"] + s["written"]) + 1e5)
            + 15 * s["latency"] / 1e9)
    assert abs(s["energy_j"] - want) <= 1e-9 * want, (s["index"], s["energy_j"], want)
PY
# no energy group, the contest target: no energy
check eval-none 0 - - -- "$bin" evaluate "$P" "$tmp/s.json" --json
json_check eval-none-json '"energy_j" not in d and all("energy_j" not in s for s in d["subgraphs"])'
check eval-plain 0 - - -- "$bin" evaluate "$P" "$tmp/s.json" --target "$tmp/plain.cfg" --json
json_check eval-plain-json '"energy_j" not in d and d["target_settings"]["energy"] is None'
check eval-contest 0 - - -- "$bin" evaluate "$P" "$tmp/s.json" --target "$root/targets/contest.cfg"
expect eval-contest-no-energy "energy line on the contest target" sh -c "! grep -q '^energy ' '$tmp/out'"

# --- simulate: the replay's own account, equal to the analytic one
check sim 0 out 'J analytic \(relative 0\): agree' -- "$bin" simulate "$P" "$tmp/s.json" --target "$tmp/one.cfg"
check sim-json 0 out '"energy_agree": true' -- "$bin" simulate "$P" "$tmp/s.json" --target "$tmp/one.cfg" --json
json_check sim-sg 'all(s["energy_j"] == s["energy_analytic_j"] and s["energy_j"] > 0 for s in d["subgraphs"])'
json_check sim-total 'd["energy_j"] == d["energy_analytic_j"] and d["energy_relative_difference"] == 0'
# on the whole H100 (units, cache, double buffering) both accounts are
# there; they differ where the latencies do (the effects)
check sim-h100 0 out '"energy_analytic_j"' -- "$bin" simulate "$P" "$tmp/s.json" --target "$H" --json
json_check sim-h100-j 'd["energy_j"] > 0 and d["energy_analytic_j"] > 0 and d["energy_relative_difference"] < 0.1'

# --- the power limit (docs/DEVICE.md "Power and the clock"): one.cfg at
# 15.4 W, 0.4 W above its static and active 15 W, so that its MatMul
# subgraphs (1024 MACs a cycle at 1.5 pJ: about 1.5 W) run at a lower clock
sed 's/^  launch_pj = 1e5;/  launch_pj = 1e5;\n  power_limit_watts = 15.4;/' "$tmp/one.cfg" > "$tmp/lim.cfg"
sed 's/^  launch_pj = 1e5;/  launch_pj = 1e5;\n  power_limit_watts = 12;/' "$tmp/one.cfg" > "$tmp/lowlim.cfg"
check power-low 2 err 'lowlim.cfg:[0-9]+: energy.power_limit_watts is 12 W, not above static_watts \+ active_watts \(15 W\)' -- "$bin" evaluate "$P" "$tmp/s.json" --target "$tmp/lowlim.cfg"
sed 's/^  launch_pj = 1e5;/  launch_pj = 1e5;\n  power_limit_watts = -3;/' "$tmp/one.cfg" > "$tmp/neglim.cfg"
check power-negative 2 err 'neglim.cfg:[0-9]+: .*energy.power_limit_watts' -- "$bin" evaluate "$P" "$tmp/s.json" --target "$tmp/neglim.cfg"
check power-eval 0 - - -- "$bin" evaluate "$P" "$tmp/s.json" --target "$tmp/one.cfg" --json
cp "$tmp/out" "$tmp/full.json"
check power-eval-lim 0 - - -- "$bin" evaluate "$P" "$tmp/s.json" --target "$tmp/lim.cfg" --json
cp "$tmp/out" "$tmp/lim.json"
json_check power-setting 'd["target_settings"]["energy"]["power_limit_watts"] == 15.4'
# the rule by hand: a subgraph whose power passes the limit takes
# max(T, cbrt(D T^2 / A)) (seconds, D its dynamic joules at the full
# clock, A = 0.4 W) and draws the limit; the others are untouched; no
# subgraph draws more than the limit
expect power-rule "a limited subgraph is not the power rule's" "$py" - "$tmp/full.json" "$tmp/lim.json" <<'PY'
import json, sys
f, l = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
slowed = 0
for a, b in zip(f["subgraphs"], l["subgraphs"]):
    T = a["latency"] / 1e9
    D = a["energy_j"] - 15 * T
    want = max(T, (D * T * T / 0.4) ** (1 / 3))
    assert abs(b["latency"] / 1e9 - want) <= 1e-12 * want, (a["index"], b["latency"], want * 1e9)
    if want > T:
        slowed += 1
        assert abs(b["energy_j"] - 15.4 * want) <= 1e-9 * b["energy_j"], (a["index"], b["energy_j"], 15.4 * want)
    else:
        assert abs(b["energy_j"] - a["energy_j"]) <= 1e-12 * a["energy_j"]
    assert b["energy_j"] / (b["latency"] / 1e9) <= 15.4 * (1 + 1e-9)
assert slowed > 0 and l["total"] > f["total"], slowed
PY
# the simulator: its own replay under the same rule, equal to the last digit
check power-sim 0 out '"energy_agree": true' -- "$bin" simulate "$P" "$tmp/s.json" --target "$tmp/lim.cfg" --json
json_check power-sim-equal 'd["total_simulated"] == d["total_analytic"] and d["energy_j"] == d["energy_analytic_j"] and all(s["simulated"] == s["analytic"] and s["energy_j"] == s["energy_analytic_j"] for s in d["subgraphs"])'
json_check power-sim-slowed 'd["total_analytic"] > '"$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["total"])' "$tmp/full.json")"
# the report of effects names it, and with it off the replay is the full clock's
json_check power-sim-effect '[v["total_analytic"] for v in d["effects_off"] if v["turned_off"] == "power limit"][0] == '"$("$py" -c 'import json,sys; print(repr(json.load(open(sys.argv[1]))["total"]))' "$tmp/full.json")"
# a schedule whose subgraphs' stretched times, added to the replay's total
# one by one, came 1 ulp off the analytic total (the simulator now sums them
# as ft_evaluate does)
printf '%s\n' '{"subgraphs":[[0,5,10],[3],[8],[13],[1],[6],[11],[2],[7],[12],[4],[9],[14],[15],[16],[17],[18]],"granularities":[[32,32,32],[32,32,32],[32,32,32],[32,32,32],[32,32,1],[32,32,1],[32,32,1],[32,32,32],[32,32,32],[32,32,32],[32,32,1],[32,32,1],[32,32,1],[32,32,1],[32,32,1],[32,32,1],[32,32,1]],"tensors_to_retain":[[],[],[],[],[],[],[],[],[],[],[],[],[],[],[],[],[]],"traversal_orders":[null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null]}' > "$tmp/ulp.json"
check power-sim-ulp 0 out '"energy_agree": true' -- "$bin" simulate "$P" "$tmp/ulp.json" --target "$tmp/lim.cfg" --json
json_check power-sim-ulp-equal 'd["total_simulated"] == d["total_analytic"] and d["energy_j"] == d["energy_analytic_j"] and all(s["simulated"] == s["analytic"] for s in d["subgraphs"])'
# the search scores what evaluate gives: the schedule it writes evaluates
# to the latency it reported
check power-sched 0 - - -- "$bin" schedule "$P" --target "$tmp/lim.cfg" --time-limit 1 -o "$tmp/slim.json" --quiet
check power-sched-eval 0 - - -- "$bin" evaluate "$P" "$tmp/slim.json" --target "$tmp/lim.cfg" --json
json_check power-sched-latency 'abs(d["total"] - '"$("$py" -c 'import json,sys; print(repr(json.load(open(sys.argv[1]))["subgraph_latencies"]))' "$tmp/slim.json" | tr -d '[]' | tr ',' '+' | sed 's/^/(/; s/$/)/')"') <= 1e-9 * d["total"]'

# --- validate and calibrate on the energy file
check validate 0 out '^MAPE +[0-9.]+ % over 17 rows' -- "$bin" validate --target "$H" --measured "$E" --max-error 15
expect validate-energy "not read as an energy file" grep -q '(energy, 17 rows' "$tmp/out"
check validate-json 0 out '"mape"' -- "$bin" validate --target "$H" --measured "$E" --json --max-error 15
json_check validate-rows 'len(d["rows"]) == 17 and d["format"] == "energy" and all(r["measured_j"] > 0 and r["predicted_j"] > 0 and r["measured_us"] > 0 for r in d["rows"]) and d["mape"] <= 15'
check validate-plain 2 err 'is an energy file, but .*plain.cfg has no energy group' -- "$bin" validate --target "$tmp/plain.cfg" --measured "$E"
{ head -1 "$E"; sed -n 2p "$E" | awk -F'\t' 'BEGIN{OFS="\t"} {$6="-1"; print}'; } > "$tmp/bad.tsv"
check validate-bad-j 2 err 'bad.tsv:2: J_per_op: "-1" is not a positive energy' -- "$bin" validate --target "$H" --measured "$tmp/bad.tsv"
{ head -1 "$E"; printf 'conv\t1\t1\t1\t1.0\t1e-3\t1\t1\t1\n'; } > "$tmp/kind.tsv"
check validate-bad-kind 2 err 'kind.tsv:2: kind: "conv" is not gemm or pointwise' -- "$bin" validate --target "$H" --measured "$tmp/kind.tsv"
head -1 "$E" | cut -f1-5 > "$tmp/noj.tsv"
check validate-no-j 2 err 'noj.tsv:1: an energy file .* without a J_per_op column' -- "$bin" validate --target "$H" --measured "$tmp/noj.tsv"
check calibrate 0 out 'energy.mac_pj' -- "$bin" calibrate --target "$H" --measured "$E" -o "$tmp/fit.cfg" --quiet
expect calibrate-written "fitted energy settings not marked" grep -q '^  mac_pj = .*# fitted by fusetile calibrate' "$tmp/fit.cfg"
check calibrate-validate 0 out '^MAPE' -- "$bin" validate --target "$tmp/fit.cfg" --measured "$E" --max-error 15
check calibrate-plain 2 err 'calibrate: .*energy.tsv is an energy file, but .*plain.cfg has no energy group' -- "$bin" calibrate --target "$tmp/plain.cfg" --measured "$E" --quiet

finish energy
