#!/usr/bin/env bash
# test_validate_models.sh - `fusetile validate` on a models file (model batch us_cudagraph): a whole network predicted as PyTorch's eager mode runs it, one kernel per op_kernels group (a fused im2col + MatMul kernel), the kernels listed, the fusion-headroom report, the MAPE above 6 us and on the floor; its error paths (bad rows, names, problems, op_kernels, options, a model that cannot be imported); with torch, resnet18 imported --as eager end to end.
# usage: test_validate_models.sh FUSETILE VECTORS_DIR
# FT_PYTHON_TORCH (from make check): the Python with torch fusetile was configured with; empty: none.
set -u
bin=${1:?usage: test_validate_models.sh FUSETILE VECTORS_DIR}
. "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
T=$root/targets/gpu-h100.cfg
py=${FT_PYTHON_TORCH:-}
jpy=${PYTHON:-/usr/bin/python3}
command -v "$jpy" >/dev/null 2>&1 || jpy=python3

# tiny-b2.json: a problem as `fusetile import --as eager` writes it: a 3x3
# convolution (im2col Layout + MatMul, kernel 0), batch norm (kernel 1),
# relu (kernel 2) on a 72 x 8 channels-last feature map
tiny() {   # tiny OP_KERNELS_JSON_FIELD > FILE
    printf '{"widths":[8,72,8,8,8,8],"heights":[72,72,72,72,72,72],"inputs":[[0],[1,2],[3],[4]],'
    printf '"outputs":[[1],[3],[4],[5]],"base_costs":[1,1,1,1],"op_types":["Layout","MatMul","Pointwise","Pointwise"],'
    printf '"fast_memory_capacity":600000,"slow_memory_bandwidth":50,"native_granularity":[128,128],'
    printf '"op_names":["conv/im2col","conv","bn","relu"],"op_kinds":["conv2d","conv2d","batch_norm","relu"]%s}\n' "$1"
}
mkdir -p "$tmp/p"
tiny ',"op_kernels":[0,0,1,2]' >"$tmp/p/tiny-b2.json"
tiny '' >"$tmp/p/plain-b2.json"
tiny ',"op_kernels":[0,1,0,0]' >"$tmp/p/twoout-b2.json"
tiny ',"op_kernels":[0,0,1,9]' >"$tmp/p/range-b2.json"
models() {   # models ROW... > models.tsv (rows "model batch us_cudagraph")
    printf 'model\tbatch\tus_eager\tus_cudagraph\n'
    for r in "$@"; do printf '%s\n' "$r"; done
}
models "tiny	2	90.0	12.5" >"$tmp/m.tsv"

check help 0 out '--headroom' -- "$bin" validate --help
check tiny 0 out '^tiny b2 +2 +12\.500' -- "$bin" validate --target "$T" --measured "$tmp/m.tsv" --problems "$tmp/p" --max-error 1000
expect tiny-kernels "no kernel list of 3 kernels" grep -q '^tiny b2: 3 kernels' "$tmp/out"
expect tiny-fused "the conv kernel is not listed with 2 ops" grep -Eq '^  conv +conv2d +2 +72x8 ' "$tmp/out"
expect tiny-split "no 6-us split lines" grep -Eq '^above 6us 1?[0-9.]+ % over 1 rows' "$tmp/out"
expect tiny-floor "no floor line" grep -q '^floor     no rows' "$tmp/out"
check tiny-json 0 out '"mape_above_6us"' -- "$bin" validate --target "$T" --measured "$tmp/m.tsv" --problems "$tmp/p" --max-error 1000 --json
json_check tiny-json-rows 'd["format"] == "models" and len(d["rows"]) == 1 and [k["ops"] for k in d["rows"][0]["kernels"]] == [2, 1, 1] and d["rows"][0]["kernels"][0]["name"] == "conv" and all(k["us"] > 0 for k in d["rows"][0]["kernels"]) and d["n_above_6us"] == 1 and d["mape_floor"] is None and d["n_floor"] == 0 and d["rows"][0]["held_out"]'
# the sum of the kernels is the prediction less the run overhead (gpu-h100's, in cycles at 1.83 GHz)
run_overhead=$(sed -nE 's/^[[:space:]]*run_overhead[[:space:]]*=[[:space:]]*([0-9.e+-]+);.*/\1/p' "$T")
json_check tiny-json-sum 'abs(sum(k["us"] for k in d["rows"][0]["kernels"]) + '"$run_overhead"' / 1.83e9 * 1e6 - d["rows"][0]["predicted_us"]) < 0.02'
# without op_kernels every op is a kernel of its own
models "plain	2	90.0	12.5" >"$tmp/plain.tsv"
check plain 0 out '^plain b2: 4 kernels' -- "$bin" validate --target "$T" --measured "$tmp/plain.tsv" --problems "$tmp/p" --max-error 1000
# the headroom report: eager measured and predicted, best schedule, bound
check headroom 0 out '^fusion headroom of tiny b2' -- "$bin" validate --target "$T" --measured "$tmp/m.tsv" --problems "$tmp/p" --max-error 1000 --headroom --headroom-limit 0.3
expect headroom-rows "no best-schedule and bound rows" grep -q "fusetile's best schedule" "$tmp/out"
expect headroom-eager "the best schedule is not said to be the eager problem's" grep -q "tiny-b2.json: the eager problem itself" "$tmp/out"
# with the model as a compiler lowers it beside it, the best schedule and bound are that problem's
tiny '' >"$tmp/p/tiny-b2-compiler.json"
check headroom-compiler 0 out 'tiny-b2-compiler.json: the model as a compiler lowers it' -- "$bin" validate --target "$T" --measured "$tmp/m.tsv" --problems "$tmp/p" --max-error 1000 --headroom --headroom-limit 0.3
check headroom-json 0 out '"headroom"' -- "$bin" validate --target "$T" --measured "$tmp/m.tsv" --problems "$tmp/p" --max-error 1000 --headroom --headroom-limit 0.3 --json
json_check headroom-json-fields 'len(d["headroom"]) == 1 and d["headroom"][0]["best_problem"] == "compiler" and d["headroom"][0]["best_us"] > 0 and d["headroom"][0]["bound_us"] <= d["headroom"][0]["best_us"] * 1.0001 and abs(d["headroom"][0]["headroom"] - d["headroom"][0]["eager_us"] / d["headroom"][0]["best_us"]) < 1e-9'
# every format reports the 6-us split
check gemm-split 0 out '^floor +[0-9.]+ % over [0-9]+ rows' -- "$bin" validate --target "$T" --measured "$root/targets/measured/h100/gemm.tsv"
check gemm-split-json 0 out '"mape_floor"' -- "$bin" validate --target "$T" --measured "$root/targets/measured/h100/gemm.tsv" --json
json_check gemm-split-counts 'd["n_above_6us"] + d["n_floor"] == d["n"] and d["mape_above_6us"] > 0 and d["mape_floor"] > 0'

# error paths: one line naming the file, line and column; exit 2
bad() {   # bad NAME ROW PATTERN: a models file of one row ROW is refused with PATTERN
    models "$2" >"$tmp/bad.tsv"
    check "$1" 2 err "$3" -- "$bin" validate --target "$T" --measured "$tmp/bad.tsv" --problems "$tmp/p"
}
bad bad-batch "tiny	x	90.0	12.5" 'bad.tsv:2: batch: "x" is not an integer'
bad zero-batch "tiny	0	90.0	12.5" 'bad.tsv:2: batch: 0 is out of range'
bad bad-name "../tiny	2	90.0	12.5" 'bad.tsv:2: model: "\.\./tiny" is not a model name'
bad no-problem "tiny	3	90.0	12.5" 'bad.tsv:2: model: problem tiny-b3: .*tiny-b3.json'
bad bad-time "tiny	2	90.0	-1" 'bad.tsv:2: us_cudagraph: "-1" is not a positive time'
bad two-outputs "twoout	2	90.0	12.5" 'twoout-b2.json: the kernel of ops 0 and 3 has two outputs'
bad op-kernels-range "range	2	90.0	12.5" 'range-b2.json: op_kernels\[3\] is 9, out of range \(0 to 3\)'
printf 'model\tbatch\tus_eager\n' >"$tmp/bad.tsv"
check no-time 2 err 'bad.tsv:1: no us_cudagraph column' -- "$bin" validate --target "$T" --measured "$tmp/bad.tsv" --problems "$tmp/p"
check headroom-not-models 2 err '^fusetile: validate: --headroom: .*gemm.tsv is a gemm file' -- "$bin" validate --target "$T" --measured "$root/targets/measured/h100/gemm.tsv" --headroom
check headroom-limit 2 err "^fusetile: validate: --headroom-limit: '0' is not a positive number" -- "$bin" validate --target "$T" --measured "$tmp/m.tsv" --headroom-limit 0
check kernels-bad 2 err "^fusetile: validate: --kernels: 'x' is not a count" -- "$bin" validate --target "$T" --measured "$tmp/m.tsv" --kernels x
# no importer Python: the import fails with the importer's line and validate's
check no-python 2 err 'm.tsv:2: model: tiny at batch 2 could not be imported' -- env FUSETILE_PYTHON=/nonexistent/python3 "$bin" validate --target "$T" --measured "$tmp/m.tsv"
expect no-python-why "the importer's reason is not shown" grep -q 'cannot run /nonexistent/python3' "$tmp/err"
expect no-python-cleanup "a temporary models directory was left behind" test -z "$(ls -d "${TMPDIR:-/tmp}"/fusetile-models-* 2>/dev/null | while read -r d; do [ "$d" -nt "$tmp/m.tsv" ] && echo "$d"; done)"

# with torch: resnet18 at batch 1 imported --as eager and predicted; an unknown model
if [ -n "$py" ] && "$py" -c 'import torch, torchvision' >/dev/null 2>&1; then
    models "resnet18	1	4280.7	473.2" >"$tmp/r18.tsv"
    check resnet18 0 out '^resnet18 b1 +2 +473\.200' -- env FUSETILE_PYTHON="$py" "$bin" validate --target "$T" --measured "$tmp/r18.tsv" --max-error 1000 --headroom --headroom-limit 1
    expect resnet18-kernels "not 168 kernels (20 convolutions fused with their im2col, 3 transposes each, 20 batch norms of 3 kernels)" grep -q "^resnet18 b1: 168 kernels" "$tmp/out"
    expect resnet18-headroom "no headroom report" grep -q '^  fusion headroom [0-9.]*x predicted' "$tmp/out"
    expect resnet18-headroom-compiler "the headroom is not against the compiler lowering" grep -q 'resnet18-b1-compiler.json: the model as a compiler lowers it' "$tmp/out"
    models "nosuchnet	1	1.0	1.0" >"$tmp/unknown.tsv"
    check unknown-model 2 err 'unknown.tsv:2: model: nosuchnet at batch 1 could not be imported' -- env FUSETILE_PYTHON="$py" "$bin" validate --target "$T" --measured "$tmp/unknown.tsv"
    expect unknown-model-why "the importer's line does not name the model" grep -q 'nosuchnet' "$tmp/err"
else
    skip 6 "the cases that import torchvision models: no Python 3 with torch and torchvision (install python3-torch and python3-torchvision)"
fi
finish validate_models
