#!/usr/bin/env bash
# test_validate_conv.sh - `fusetile validate` and `calibrate` on a conv file and a kernels file (model layer batch in_ch out_ch kh kw stride pad groups in_h in_w out_h out_w ... us_graph: targets/measured/h100-c/conv.tsv's columns), each convolution timed as `import --as eager` runs it; its error paths; the shipped conv.tsv within its documented error.
# usage: test_validate_conv.sh FUSETILE VECTORS_DIR
set -u
bin=${1:?usage: test_validate_conv.sh FUSETILE VECTORS_DIR}
. "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
T=$root/targets/gpu-h100.cfg
H='model	layer	uses	batch	in_ch	out_ch	kh	kw	stride	pad	dilation	groups	bias	in_h	in_w	out_h	out_w	us_stream	us_graph'
conv() {   # conv ROW... > conv.tsv
    printf '%s\n' "$H"
    for r in "$@"; do printf '%s\n' "$r"; done
}
conv "resnet18	conv1	1	32	3	64	7	7	2	3	1	1	0	224	224	112	112	335.3	326.8" \
     "resnet18	layer1.0.conv1	4	32	64	64	3	3	1	1	1	1	0	56	56	56	56	129.5	55.0" \
     "resnet50	layer1.0.conv1	1	32	64	64	1	1	1	0	1	1	0	56	56	56	56	15.9	8.3" \
     "mobilenet_v2	features.2.conv.1.0	1	32	96	96	3	3	2	1	1	96	0	112	112	56	56	101.1	100.1" >"$tmp/c.tsv"

check conv 0 out '^resnet18 conv1 b32 +2 +326\.800' -- "$bin" validate --target "$T" --measured "$tmp/c.tsv" --max-error 1000
expect conv-rows "not 4 rows" grep -q '^MAPE .* over 4 rows' "$tmp/out"
expect conv-depthwise "no depthwise row" grep -q '^mobilenet_v2 features.2.conv.1.0 b32' "$tmp/out"
check conv-json 0 out '"kernels"' -- "$bin" validate --target "$T" --measured "$tmp/c.tsv" --max-error 1000 --json
expect conv-json-4 "the 3x3 row has no 4 kernels (transposes around the implicit GEMM)" \
    sh -c "grep -o '\"name\": \"[a-z_]*\"' '$tmp/out' | head -4 | tr '\n' ' ' | grep -q 'to_nhwc.*weight_to_nhwc.*conv.*to_nchw'"
# calibrate fits the conv settings on a conv file
check calibrate 0 out 'compute.conv_efficiency' -- "$bin" calibrate --target "$T" --measured "$tmp/c.tsv" --all-rows \
    --free compute.conv_efficiency,compute.kind_cost.nchw_to_nhwc -o "$tmp/fit.cfg" --quiet
expect calibrate-wrote "no fitted target" grep -q '^ *conv_efficiency = ' "$tmp/fit.cfg"

# error paths: each names the file, line and field, exit 2
conv "resnet18	x	1	1	64	64	3	3	1	1	1	4	0	8	8	8	8	1	2.0" >"$tmp/bad1.tsv"
check grouped 2 err 'bad1.tsv:2: groups: 4 groups of 64 channels: only 1 group and depthwise' -- \
    "$bin" validate --target "$T" --measured "$tmp/bad1.tsv"
conv "resnet18	x	1	1	64	60	3	3	1	1	1	8	0	8	8	8	8	1	2.0" >"$tmp/bad2.tsv"
check groups-divide 2 err 'bad2.tsv:2: groups: 8 does not divide' -- "$bin" validate --target "$T" --measured "$tmp/bad2.tsv"
conv "resnet18	x	1	1	0	64	3	3	1	1	1	1	0	8	8	8	8	1	2.0" >"$tmp/bad3.tsv"
check in-ch 2 err 'bad3.tsv:2: in_ch: 0 is out of range' -- "$bin" validate --target "$T" --measured "$tmp/bad3.tsv"
conv "resnet18	x	1	1	64	64	3	3	1	1	1	1	0	8	8	8	8	1	-1" >"$tmp/bad4.tsv"
check time 2 err 'bad4.tsv:2: us_graph: "-1" is not a positive time' -- "$bin" validate --target "$T" --measured "$tmp/bad4.tsv"
printf 'model\tlayer\tbatch\tin_ch\tout_ch\tkh\tkw\tstride\tpad\tgroups\tin_h\tin_w\tout_h\tout_w\n' >"$tmp/bad5.tsv"
check no-time 2 err 'without a us_graph column' -- "$bin" validate --target "$T" --measured "$tmp/bad5.tsv"

# a kernels file (kind model batch rows cols out_rows us): PyTorch's batch
# norm and max pool kernels alone, no run overhead, no replay floor, and no
# model imported for its model and batch columns
printf 'kind\tmodel\tbatch\trows\tcols\tout_rows\tus\nbatch_norm\tresnet18\t32\t100352\t64\t100352\t12.16\nmax_pool2d\tresnet18\t32\t401408\t64\t100352\t107.2\nbatch_norm\tresnet18\t1\t196\t512\t196\t2.6\n' >"$tmp/k.tsv"
check kernels 0 out '^max_pool2d 401408x64 line 3 +3 +107\.200' -- "$bin" validate --target "$T" --measured "$tmp/k.tsv" --max-error 1000
expect kernels-no-import "a kernels file imported a model" sh -c "! grep -q importing '$tmp/err'"
expect kernels-bare "a 2-us kernel is predicted at the replay floor (3.7 us)" \
    sh -c "grep -E '^batch_norm 196x512 line 4 ' '$tmp/out' | awk '{exit !(\$(NF-1) + 0 < 3.5)}'"
printf 'kind\tmodel\tbatch\trows\tcols\tout_rows\tus\nrelu\tr\t1\t8\t8\t8\t2.0\n' >"$tmp/bad6.tsv"
check kernels-kind 2 err 'bad6.tsv:2: kind: "relu" is not batch_norm or max_pool2d' -- "$bin" validate --target "$T" --measured "$tmp/bad6.tsv"
printf 'kind\tmodel\tbatch\trows\tcols\tout_rows\tus\nbatch_norm\tr\t1\t8\t8\t4\t2.0\n' >"$tmp/bad7.tsv"
check kernels-rows 2 err 'bad7.tsv:2: out_rows: 4, but batch_norm keeps its rows' -- "$bin" validate --target "$T" --measured "$tmp/bad7.tsv"

# the shipped measurements (targets/measured/h100-c/conv.tsv, 238 rows): docs/ACCURACY.md's figure
check shipped 0 out '^MAPE ' -- "$bin" validate --target "$T" --measured "$root/targets/measured/h100-c/conv.tsv" --max-error 35
expect shipped-rows "not 238 rows" grep -q '^MAPE .* over 238 rows' "$tmp/out"
finish validate_conv
