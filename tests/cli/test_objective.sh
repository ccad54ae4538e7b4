#!/usr/bin/env bash
# test_objective.sh - `schedule --objective latency|energy|edp` (issue 35): on targets/gpu-h100.cfg the energy-optimal schedule uses no more joules than the latency-optimal one, strictly fewer on one, and the latency-optimal one is no slower (the problems searched whole; on mlsys-2026-1, cut by its time limit, the bound, ratio and value only), edp keeps a product no worse than latency's, the summary's objective line (value, bound, ratio >= 1, equal to evaluate's joules), latency unchanged by the option, and the error paths (unknown objective, no energy model: no target, the contest target, a target without the group).
# usage: test_objective.sh FUSETILE
set -u
bin=${1:?usage: test_objective.sh FUSETILE}
. "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
H=$root/targets/gpu-h100.cfg
P=$root/benchmarks/example_problem.json
slow=${FT_SLOW:-0}
# a short search: problems of up to 7 ops are searched exhaustively within it
tl=2
[ "$slow" = 1 ] && tl=20

# --- error paths
check bad-name 2 err "--objective is 'speed', must be latency, energy or edp" -- "$bin" schedule "$P" --objective speed
check no-value 2 err 'objective' -- "$bin" schedule "$P" --objective
check no-target 2 err '--objective energy needs --target with an `energy` group' -- "$bin" schedule "$P" --objective energy
check contest 2 err 'target .*contest.cfg has no `energy` group' -- "$bin" schedule "$P" --objective edp --target "$root/targets/contest.cfg"
sed -e '/^energy = {/,/^};/d' "$H" > "$tmp/plain.cfg"
check no-group 2 err 'target .*plain.cfg has no `energy` group' -- "$bin" schedule "$P" --objective energy --target "$tmp/plain.cfg" -o "$tmp/never.json"
expect no-output "a refused objective wrote a schedule" test ! -e "$tmp/never.json"
check help 0 out '--objective OBJ' -- "$bin" schedule --help

# --- latency is the default: the option changes nothing
check lat-default 0 - - -- "$bin" schedule "$P" --target "$H" --threads 1 --time-limit "$tl" -q -o "$tmp/d.json"
check lat-explicit 0 err '^fusetile: schedule: objective latency: [0-9.e+-]+, bound [0-9.e+-]+, ratio' -- \
    "$bin" schedule "$P" --target "$H" --threads 1 --time-limit "$tl" --objective latency -o "$tmp/l.json"
expect lat-same "--objective latency changed the schedule" cmp -s "$tmp/d.json" "$tmp/l.json"

# --- the three objectives on several problems
"$bin" generate --family small --ops 6 --seed 2 -o "$tmp/g2.json"
"$bin" generate --family small --ops 7 --seed 5 -o "$tmp/g5.json"
probs=("$P")
if [ "$slow" = 1 ]; then
    # the same code on each problem; under valgrind each search takes 10 s
    skip 48 "FT_SLOW: the generated problems and mlsys-2026-1 (a time-limited search) left out"
else
    probs+=("$tmp/g2.json" "$tmp/g5.json" "$root/benchmarks/mlsys-2026-1.json")
fi
# figures NAME PROBLEM SCHEDULE: evaluate's total and joules into $tmp/NAME.fig
figures() {
    "$bin" evaluate "$2" "$3" --target "$H" --json > "$tmp/ev.json" &&
        python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(repr(d['total']), repr(d['energy_j']))" "$tmp/ev.json" > "$tmp/$1.fig"
}
strict=
for prob in "${probs[@]}"; do
    n=$(basename "$prob" .json)
    for obj in latency energy edp; do
        check "$n-$obj" 0 err "objective $obj: [0-9.e+-]+( J| J s)?, bound [0-9.e+-]+( J| J s)?, ratio [0-9.]+" -- \
            "$bin" schedule "$prob" --target "$H" --threads 1 --time-limit "$tl" --objective "$obj" -o "$tmp/$n-$obj.json"
        # the gap line is the latency's evidence, and says so under another objective
        if [ "$obj" = latency ]; then
            expect "$n-$obj-gap" "no plain gap line: $(grep 'gap:' "$tmp/err" | head -c 200)" grep -q '^fusetile: schedule: gap: ' "$tmp/err"
        else
            expect "$n-$obj-gap" "the gap line does not say latency: $(grep 'gap:' "$tmp/err" | head -c 200)" grep -q '^fusetile: schedule: latency gap: ' "$tmp/err"
        fi
        # the bound is a lower bound of the objective
        expect "$n-$obj-ratio" "ratio below 1: $(grep objective "$tmp/err")" \
            awk -v obj="$obj" '$0 ~ "objective " obj ":" { for (i = 1; i <= NF; i++) if ($i == "ratio") r = $(i + 1) + 0 } END { exit !(r >= 1) }' "$tmp/err"
        cp "$tmp/err" "$tmp/$n-$obj.err"
        figures "$n-$obj" "$prob" "$tmp/$n-$obj.json"
    done
    read -r tl_l e_l < "$tmp/$n-latency.fig"
    read -r tl_e e_e < "$tmp/$n-energy.fig"
    read -r tl_p e_p < "$tmp/$n-edp.fig"
    [ -n "${FT_VERBOSE:-}" ] && echo "$n: latency schedule $tl_l units $e_l J; energy schedule $tl_e units $e_e J; edp schedule $tl_p units $e_p J"
    # the summary's value is evaluate's joules
    expect "$n-energy-value" "summary value differs from evaluate's $e_e: $(grep objective "$tmp/$n-energy.err")" \
        python3 -c "import re, sys; v = float(re.search(r'objective energy: (\S+) J', open(sys.argv[1]).read()).group(1)); sys.exit(not abs(v - $e_e) <= 1e-9 * $e_e)" "$tmp/$n-energy.err"
    # the three relations hold between searches that end by themselves (the
    # whole space searched: "wall time T s (limit L s)" with T < L); the
    # time limit cuts mlsys-2026-1's, whose results then depend on the
    # machine's speed (a loaded CI's latency search once found a schedule
    # of less energy than the energy search did), so there only the bound,
    # ratio and value above are checked
    if [ "$n" = mlsys-2026-1 ]; then
        skip 6 "$n: the objectives' relations (its searches are cut by the time limit; the bound, ratio and value are checked)"
        continue
    fi
    for obj in latency energy edp; do
        expect "$n-$obj-ended" "the $obj search did not end before its limit: $(grep -o 'wall time [^,]*' "$tmp/$n-$obj.err")" \
            awk '/ wall time / { for (i = 1; i <= NF; i++) if ($i == "time" && $(i - 1) == "wall") { t = $(i + 1) + 0; l = $(i + 4) + 0 } } END { exit !(l > 0 && t < l) }' "$tmp/$n-$obj.err"
    done
    expect "$n-energy-le" "energy of the energy schedule $e_e > that of the latency schedule $e_l" \
        python3 -c "import sys; sys.exit(not ($e_e <= $e_l * (1 + 1e-9)))"
    expect "$n-latency-le" "latency of the latency schedule $tl_l > that of the energy schedule $tl_e" \
        python3 -c "import sys; sys.exit(not ($tl_l <= $tl_e * (1 + 1e-9)))"
    expect "$n-edp-le" "energy-delay product of the edp schedule $e_p x $tl_p > the latency schedule's $e_l x $tl_l" \
        python3 -c "import sys; sys.exit(not ($e_p * $tl_p <= $e_l * $tl_l * (1 + 1e-9)))"
    python3 -c "import sys; sys.exit(not ($e_e < $e_l * (1 - 1e-9)))" && strict="$strict $n"
done

# the energy search saves joules on some problem (g5: 0.000319561838710242 J
# against the latency schedule's 0.000319564647724594)
if [ "$slow" = 1 ]; then
    skip 1 "FT_SLOW: a strictly lower energy (on g5, left out above)"
else
    expect energy-saves "no problem where the energy schedule uses strictly less energy" test -n "$strict"
fi

finish test_objective
