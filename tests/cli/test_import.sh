#!/usr/bin/env bash
# test_import.sh - exit statuses and messages of `fusetile import` (the C command that runs the Python model importer), and one import scheduled end to end.
# usage: test_import.sh FUSETILE VECTORS_DIR
# FT_PYTHON_TORCH (from make check): the Python with torch fusetile was configured with; empty: none.
set -u
bin=${1:?usage: test_import.sh FUSETILE VECTORS_DIR}
vec=${2:?usage: test_import.sh FUSETILE VECTORS_DIR}
. "$(dirname "$0")/lib.sh"
py=${FT_PYTHON_TORCH:-}

# one_line NAME: the last check's stderr is exactly one line
one_line() {
    if [ "$(wc -l <"$tmp/err")" -eq 1 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $1: want one line on stderr"; sed 's/^/    err: /' "$tmp/err" | head -5; fi
}

check import-help 0 out '^usage: fusetile import MODEL' -- "$bin" import --help
check import-help-models 0 out 'torchvision:NAME' -- "$bin" import -h
check import-help-command 0 out '^usage: fusetile import MODEL' -- "$bin" help import
check import-listed 0 out 'fusetile import MODEL' -- "$bin" --help
check import-no-such-python 2 err '^fusetile import: cannot run /nonexistent/python3: No such file or directory \(hint: install python3-torch' \
    -- env FUSETILE_PYTHON=/nonexistent/python3 "$bin" import torchvision:resnet18
one_line import-no-such-python

# a Python 3 without torch (the PATH's, when it has none)
for cand in "${FT_PYTHON3:-}" python3; do
    p=$(command -v "$cand" 2>/dev/null) || continue
    if ! "$p" -c 'import torch' >/dev/null 2>&1; then
        check import-python-without-torch 2 err 'torch is not installed for this Python \(hint: install python3-torch' \
            -- env FUSETILE_PYTHON="$p" "$bin" import torchvision:resnet18
        one_line import-python-without-torch
        break
    fi
done

if [ -z "$py" ]; then
    check import-not-configured 2 err '^fusetile import: no Python 3 with torch was found when fusetile was configured \(hint: install python3-torch' \
        -- "$bin" import torchvision:resnet18
    one_line import-not-configured
    # the cases below, counted as the calls that count them (a loop's once)
    n=$(sed -n '/^# --- the cases that need torch/,$p' "$0" | grep -Ec '^ *(check|expect|one_line) ')
    skip "$n" "the cases that need torch: no Python 3 with torch (install python3-torch)"
    finish test_import
fi

# --- the cases that need torch
check import-missing-model 2 err '^fusetile import: needs MODEL \(hint: try .fusetile import --help.\)$' -- "$bin" import
one_line import-missing-model
check import-bad-shape 2 err "^fusetile import: --input-shape: '1x3xfoo' is not a shape \(hint: " \
    -- "$bin" import torchvision:resnet18 --input-shape 1x3xfoo
one_line import-bad-shape
check import-unreadable 2 err "^fusetile import: $tmp/none.onnx: cannot read: No such file or directory \(hint: " \
    -- "$bin" import "$tmp/none.onnx"
one_line import-unreadable
check import-unknown-model 2 err "^fusetile import: torchvision:nonet: unknown torchvision model 'nonet' \(hint: " \
    -- "$bin" import torchvision:nonet
one_line import-unknown-model
check import-unknown-kind 2 err '^fusetile import: model.h5: unknown kind of model \(hint: ' -- "$bin" import model.h5
check import-unknown-option 2 err 'unrecognized arguments: --bogus' -- "$bin" import torchvision:resnet18 --bogus
check import-no-output-dir 2 err "^fusetile import: $tmp/nodir/p.json: cannot write: no such directory" \
    -- "$bin" import torchvision:resnet18 -o "$tmp/nodir/p.json"
expect import-no-partial-file "an output file appeared after an error" test ! -e "$tmp/nodir/p.json"

cat >"$tmp/model.py" <<'PY'
import torch
import torch.nn as nn


class MLP(nn.Module):
    input_shapes = [(128, 256)]

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(256, 512)
        self.fc2 = nn.Linear(512, 128)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class Gelu(nn.Module):
    input_shapes = [(128, 256)]

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(256, 512)
        self.fc2 = nn.Linear(512, 128)

    def forward(self, x):
        h = self.fc1(x)
        return self.fc2(nn.functional.gelu(h) + torch.relu(h))


class Broken(nn.Module):
    def forward(self, x):
        return torch.cumsum(x, 0)


def mlp():
    return MLP()


def gelu():
    return Gelu()


def broken():
    return Broken()
PY
check import-mlp 0 err 'problem: 3 ops \(2 MatMul, 1 Pointwise, 0 Layout\)' -- "$bin" import "$tmp/model.py:mlp" -o "$tmp/mlp.json"
check import-mlp-names 0 - '' -- grep -q '"op_names": \["fc1","relu","fc2"\]' "$tmp/mlp.json"
check import-mlp-schedules 0 - '' -- "$bin" schedule "$tmp/mlp.json" --time-limit 0.5 -q -o "$tmp/mlp.sched.json"
check import-mlp-evaluates 0 out '^total ' -- "$bin" evaluate "$tmp/mlp.json" "$tmp/mlp.sched.json"
check import-mlp-input-shape 0 - '' -- "$bin" import "$tmp/model.py:mlp" --input-shape 32x256 -q -o "$tmp/mlp32.json"
expect import-quiet "--quiet printed on stderr" test ! -s "$tmp/err"
check import-mlp-input-shape-used 0 - '' -- grep -q '"heights": \[32,256,32,32,512,32\]' "$tmp/mlp32.json"
check import-mlp-stdout 0 out '"widths": \[256,512,512,512,128,128\]' -- "$bin" import "$tmp/model.py:mlp"
# --target: the machine and base costs are ft_target_apply's (the C library
# reads and applies the target through the Python binding), so evaluating
# on the target with the problem's costs kept (--keep-costs) gives what
# evaluating with the costs the target derives gives; gpu-h100.cfg has
# efficiencies below 1 and a kind_cost for gelu.  Without the binding's
# extension, --target stops with one line naming it.
build=${FT_BUILDDIR:-$(cd "$(dirname "$bin")" && pwd)}
h100=$(cd "$(dirname "$0")/../.." && pwd)/targets/gpu-h100.cfg
if PYTHONPATH="$build/python" "$py" -c 'import fusetile._fusetile' >/dev/null 2>&1; then
    # (the fitted figures as the target file gives them: each refit moves them)
    gelu=$(sed -n 's/^ *gelu = \([0-9.]*\);.*/\1/p' "$h100")
    check import-target 0 err "bf16 on gpu-h100: capacity 116736, bandwidth [0-9.]+, native 64x64, base costs MatMul [0-9.]+, Pointwise 32 per input, gelu x$gelu, nchw_to_nhwc x[0-9.]+, nhwc_to_nchw x[0-9.]+, depthwise_conv2d x[0-9.]+, batch_norm x[0-9.]+, max_pool2d x[0-9.]+\$" \
        -- "$bin" import "$tmp/model.py:gelu" --target "$h100" -o "$tmp/gelu.json"
    mm=$(sed -n 's/.*base costs MatMul \([0-9.]*\),.*/\1/p' "$tmp/err")
    check import-target-gelu-cost 0 - '' -- grep -q "\"base_costs\": \\[$mm[0-9]*,[0-9.]*,32,64,$mm[0-9]*\\]" "$tmp/gelu.json"
    check import-target-imported-for 0 - '' -- grep -q "^  \"imported_for\": {\"target\":\"gpu-h100\",\"file\":\"$h100\"}" "$tmp/gelu.json"
    check import-target-schedules 0 - '' -- "$bin" schedule "$tmp/gelu.json" --target "$h100" --time-limit 0.5 -q -o "$tmp/gelu.sched.json"
    "$bin" evaluate "$tmp/gelu.json" "$tmp/gelu.sched.json" --target "$h100" --keep-costs --json >"$tmp/kept.json" 2>"$tmp/err"
    "$bin" evaluate "$tmp/gelu.json" "$tmp/gelu.sched.json" --target "$h100" --json >"$tmp/derived.json" 2>>"$tmp/err"
    kept=$(sed -n 's/.*"total": *\([^,}]*\).*/\1/p' "$tmp/kept.json" | head -n 1)
    derived=$(sed -n 's/.*"total": *\([^,}]*\).*/\1/p' "$tmp/derived.json" | head -n 1)
    expect import-target-costs-are-ft_target_apply "evaluate --keep-costs gives total '$kept', the target's own costs '$derived'" \
        eval '[ -n "$kept" ] && [ "$kept" = "$derived" ]'
else
    check import-target-no-binding 2 err "^fusetile import: --target: needs the Python binding's C extension fusetile._fusetile" \
        -- "$bin" import "$tmp/model.py:gelu" --target "$h100" -o "$tmp/gelu.json"
    one_line import-target-no-binding
    check import-no-target-no-binding 0 - '' -- "$bin" import "$tmp/model.py:gelu" -q -o "$tmp/gelu.json"
fi
check import-no-target 0 - '' -- "$bin" import "$tmp/model.py:gelu" -q -o "$tmp/plain.json"
check import-no-target-no-imported-for 1 - '' -- grep -q imported_for "$tmp/plain.json"
# the output rules (docs/OUTPUTS.md): an input, a directory refused; a
# device written in place; - is stdout; a failed stdout is exit 2
msum=$(cksum <"$tmp/model.py")
check import-out-is-model 2 err "^fusetile import: $tmp/model.py: is the model input; refusing to overwrite it$" \
    -- "$bin" import "$tmp/model.py:mlp" -o "$tmp/model.py"
expect import-out-is-model-kept "the model file changed" [ "$(cksum <"$tmp/model.py")" = "$msum" ]
check import-out-dir 2 err "^fusetile import: $tmp: cannot write: Is a directory$" -- "$bin" import "$tmp/model.py:mlp" -o "$tmp"
check import-out-dev-null 0 - '' -- "$bin" import "$tmp/model.py:mlp" -q -o /dev/null
expect import-out-dev-null-kept "/dev/null is no longer a character device" test -c /dev/null
check import-out-dash 0 out '"widths"' -- "$bin" import "$tmp/model.py:mlp" -q -o -
"$bin" import "$tmp/model.py:mlp" -q >/dev/full 2>"$tmp/err"
rc=$?
expect import-stdout-full "want exit 2 and one line, got exit $rc: $(cat "$tmp/err")" \
    eval '[ $rc -eq 2 ] && grep -q "^fusetile import: standard output: No space left on device$" "$tmp/err" && [ "$(wc -l <"$tmp/err")" -eq 1 ]'
check import-unsupported 2 err '^fusetile import: cumsum \(torch.cumsum\): unsupported op \(hint: ' \
    -- "$bin" import "$tmp/model.py:broken" --input-shape 4x4 --frontend fx
one_line import-unsupported
check import-resnet18-graph 0 err 'graph: (.*, )?20 conv2d' -- "$bin" import torchvision:resnet18 --graph-only -o "$tmp/r18.graph.json"
for want in '20 batch_norm' '17 relu' '8 add'; do
    expect "import-resnet18-graph ($want)" "no '$want' in the graph line" grep -q "graph: .*$want" "$tmp/err"
done
check import-resnet18-graph-json 0 - '' -- grep -q '"format": "fusetile-model-graph"' "$tmp/r18.graph.json"

finish test_import
