#!/usr/bin/env bash
# test_names.sh - a problem with op_names, op_kinds and tensor_names (SPEC section 1): subgraph labels in `fusetile evaluate` and `fusetile simulate` (table and --json), the same figures as without names, and the names' load errors.
# usage: test_names.sh FUSETILE VECTORS_DIR
set -u
bin=${1:?usage: test_names.sh FUSETILE VECTORS_DIR}
vec=${2:?usage: test_names.sh FUSETILE VECTORS_DIR}
. "$(dirname "$0")/lib.sh"

N=$vec/N-named-mlp.problem.json      # E-mlp-fused with names
U=$vec/E-mlp-fused.problem.json      # the same problem without them
FUSED=$vec/N-named-mlp.solution.json
SPLIT=$vec/E2-mlp-split.solution.json

# --- evaluate: the ops column reads the label
check eval-label-fused 0 out '^   0  encoder\.layer1\.fc1\+act\+fc2 128x128x64 +2 +16 +17600 ' -- "$bin" evaluate "$N" "$FUSED"
check eval-label-header 0 out '^  sg  ops {24}w x h x k ' -- "$bin" evaluate "$N" "$FUSED"
check eval-label-split 0 out '^   0  encoder\.layer1\.fc1\+act 128x128x128 ' -- "$bin" evaluate "$N" "$SPLIT"
grep -Eq '^   1  encoder\.layer1\.fc2     128x128x128 ' "$tmp/out" && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL eval-label-split-row1"; }
check eval-total-same 0 out '^total +18115.2$' -- "$bin" evaluate "$N" "$SPLIT"
# without names the table is the op list, as always
check eval-unnamed 0 out '^   0  0,1,2            128x128x64 ' -- "$bin" evaluate "$U" "$FUSED"
check eval-json-label 0 out '"label": "encoder.layer1.fc1\+act"' -- "$bin" evaluate "$N" "$SPLIT" --json
json_check eval-json-names 'd["subgraphs"][0]["op_names"] == ["encoder.layer1.fc1", "encoder.layer1.act"] and d["subgraphs"][1]["op_kinds"] == ["linear"] and d["subgraphs"][1]["label"] == "encoder.layer1.fc2"'
json_check eval-json-figures 'd["total"] == 18115.2 and d["subgraphs"][0]["ops"] == [0, 1]'
check eval-json-unnamed 0 out '"total": 17600' -- "$bin" evaluate "$U" "$FUSED" --json
json_check eval-json-unnamed-no-label 'all("label" not in g and "op_names" not in g for g in d["subgraphs"])'

# --- simulate: the same label in its table and JSON, the same figures
check sim-label 0 out '^   0  encoder\.layer1\.fc1\+act\+fc2 128x128x64 +16 +17600 +17600 ' -- "$bin" simulate "$N" "$FUSED"
check sim-label-split 0 out '^   1  encoder\.layer1\.fc2     128x128x128 ' -- "$bin" simulate "$N" "$SPLIT"
check sim-json 0 out '"agree": true' -- "$bin" simulate "$N" "$SPLIT" --json
json_check sim-json-label 'd["subgraphs"][0]["label"] == "encoder.layer1.fc1+act" and d["subgraphs"][0]["op_kinds"] == ["linear", "gelu"] and d["total_simulated"] == 18115.2'
check sim-unnamed 0 out '^   0  0,1              128x128x128 ' -- "$bin" simulate "$U" "$SPLIT"

# --- a label wider than the column is cut with "..." (48 columns)
python3 - "$N" "$tmp/long.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["op_names"] = ["model.encoder.layers.0.attention.self.query_projection", "model.encoder.layers.0.attention.self.activation_function", "model.encoder.layers.0.attention.self.output_projection"]
json.dump(d, open(sys.argv[2], "w"))
PY
check eval-long-label 0 out '^   0  model\.encoder\.layers\.0\.attention\.self\.query_p\.\.\. 128x128x64 ' -- "$bin" evaluate "$tmp/long.json" "$FUSED"
check eval-long-label-json 0 out '"label": "model\.encoder\.layers\.0\.attention\.self\.query_projection\+activation_function\+output_projection"' \
    -- "$bin" evaluate "$tmp/long.json" "$FUSED" --json

# --- the scheduler and the contest entry read a named problem as any other
check schedule-named 0 - '' -- "$bin" schedule "$N" --time-limit 0.3 -q -o "$tmp/named.schedule.json"
check schedule-named-eval 0 out '^total ' -- "$bin" evaluate "$N" "$tmp/named.schedule.json"

# --- the names' errors: exit 2, one line naming the field and index
printf '{"widths": [8, 8], "heights": [8, 8], "inputs": [[0]], "outputs": [[1]], "base_costs": [1], "op_types": ["Pointwise"], "fast_memory_capacity": 1000, "slow_memory_bandwidth": 1, "native_granularity": [8, 8], "op_kinds": [3]}' >"$tmp/kinds.json"
check bad-kind 2 err "kinds.json: op_kinds\[0\]: expected a string, got an integer" -- "$bin" evaluate "$tmp/kinds.json" "$FUSED"
printf '{"widths": [8, 8], "heights": [8, 8], "inputs": [[0]], "outputs": [[1]], "base_costs": [1], "op_types": ["Pointwise"], "fast_memory_capacity": 1000, "slow_memory_bandwidth": 1, "native_granularity": [8, 8], "tensor_names": ["x", "y", "z"]}' >"$tmp/tn.json"
check bad-tensor-names 2 err "tn.json: tensor_names has 3 entries, expected 2 \(one per tensor\)" -- "$bin" simulate "$tmp/tn.json" "$FUSED"
printf '{"widths": [8, 8], "heights": [8, 8], "inputs": [[0]], "outputs": [[1]], "base_costs": [1], "op_types": ["Pointwise"], "fast_memory_capacity": 1000, "slow_memory_bandwidth": 1, "native_granularity": [8, 8], "op_names": "relu"}' >"$tmp/on.json"
check bad-op-names 2 err "on.json: op_names: expected a list of strings, got a string" -- "$bin" schedule "$tmp/on.json" --time-limit 0.1

finish names
