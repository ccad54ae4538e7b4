#!/usr/bin/env bash
# test_h200.sh - targets/gpu-h200.cfg, the H200 predicted from the H100's fit: it differs from gpu-h100.cfg only in what the H200's datasheet and device report change (HBM bandwidth, L2 size, its name), and on a few held-out rows of targets/measured/h200/ it stays under the errors measured there, where gpu-h100.cfg misses the HBM-bound rows; gpu-h100.cfg is refused on the H200's files (exit 2).
# usage: test_h200.sh FUSETILE
set -u
bin=${1:?usage: test_h200.sh FUSETILE}
. "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
H200=$root/targets/gpu-h200.cfg
H100=$root/targets/gpu-h100.cfg
M=$root/targets/measured/h200

# Only name, description, the HBM bandwidths and the L2's capacity differ:
# every fitted setting is the H100's (a refit of gpu-h100.cfg must be
# carried over here, or the prediction is no longer the H100's fit).
settings() { sed -e 's/[[:space:]]*#.*$//' -e '/^[[:space:]]*$/d' -e 's/^[[:space:]]*//' "$1"; }
settings "$H100" >"$tmp/h100.set"
settings "$H200" >"$tmp/h200.set"
diff "$tmp/h100.set" "$tmp/h200.set" | sed -n 's/^[<>] *\([a-z_]*\) *=.*/\1/p' | sort -u | tr '\n' ' ' >"$tmp/changed"
expect only-datasheet "settings changed: $(cat "$tmp/changed")" \
    test "$(cat "$tmp/changed")" = "capacity_bytes description name read_bandwidth write_bandwidth "
expect bandwidth "read_bandwidth is not 4.8e12 B/s at the clock" grep -Eq '^read_bandwidth = 2622\.95;$' "$tmp/h200.set"
expect l2 "shared_cache.capacity_bytes is not env.tsv's l2_bytes" \
    grep -Eq "^capacity_bytes = $(sed -n 's/^l2_bytes\t//p' "$M/env.tsv");$" "$tmp/h200.set"

# A few rows of each file (few, for valgrind), with the device's env.tsv
# beside them; the bounds are the errors measured on 2026-11-28 with some
# margin: pointwise 3.27 %, gemm 3.81 %, energy 3.43 % (docs/ACCURACY.md).
mkdir -p "$tmp/h200" "$tmp/noenv"
cp "$M/env.tsv" "$tmp/h200/"
awk -F'\t' 'NR == 1 || ($1 ~ /^(relu|add|copy)$/ && ($3 == 16777216 || $3 == 67108864))' "$M/pointwise.tsv" >"$tmp/h200/pointwise.tsv"
awk -F'\t' 'NR == 1 || index(" 2048x2048x2048 4096x4096x4096 128x8192x8192 8192x128x4096 1024x8192x1024 ", " " $1 "x" $2 "x" $3 " ")' \
    "$M/gemm.tsv" >"$tmp/h200/gemm.tsv"
awk -F'\t' 'NR == 1 || ($1 == "gemm" && $2 == $3 && $3 == $4 && $2 >= 2048) || ($2 ~ /^(relu|add)$/ && $3 == 268435456)' \
    "$M/energy.tsv" >"$tmp/h200/energy.tsv"
expect rows "not 6, 5 and 5 rows picked" test "$(cat "$tmp"/h200/{pointwise,gemm,energy}.tsv | wc -l)" -eq 19
cp "$tmp"/h200/{pointwise,gemm,energy}.tsv "$tmp/noenv/"

check pointwise 0 out '^MAPE +[0-9.]+ % over 6 rows \(within --max-error 6 %\)' \
    -- "$bin" validate --target "$H200" --measured "$tmp/h200/pointwise.tsv" --max-error 6
check gemm 0 out '^MAPE +[0-9.]+ % over 5 rows \(within --max-error 7 %\)' \
    -- "$bin" validate --target "$H200" --measured "$tmp/h200/gemm.tsv" --max-error 7
check energy 0 out '^MAPE +[0-9.]+ % over 5 rows \(within --max-error 7 %\)' \
    -- "$bin" validate --target "$H200" --measured "$tmp/h200/energy.tsv" --max-error 7
check by-name 0 out '^MAPE +[0-9.]+ % over 6 rows' \
    -- "$bin" validate --target gpu-h200 --measured "$tmp/h200/pointwise.tsv" --max-error 6
# The same HBM-bound rows on the H100's file (no env.tsv beside them, so it
# is not refused): 3.35 TB/s makes them about 37 % slow (measured 36.99 %).
check h100-slow 1 out '^MAPE +[0-9.]+ % over 6 rows \(FAILED: above --max-error 25 %\)' \
    -- "$bin" validate --target "$H100" --measured "$tmp/noenv/pointwise.tsv" --max-error 25
# gpu-h100.cfg on the H200's files, env.tsv beside them: not that device.
check h100-refused 2 err '^fusetile: validate: .*gpu-h100.cfg \(gpu-h100\) is not the device .*gemm.tsv was measured on \(env.tsv: gpu NVIDIA H200\)' \
    -- "$bin" validate --target "$H100" --measured "$tmp/h200/gemm.tsv"
expect h100-refused-one-line "more than one line" test "$(wc -l <"$tmp/err")" -eq 1

finish h200
