#!/usr/bin/env bash
# test_evaluate.sh - exit statuses, messages and output of `fusetile evaluate` and the top-level command.
# usage: test_evaluate.sh FUSETILE VECTORS_DIR
set -u
bin=${1:?usage: test_evaluate.sh FUSETILE VECTORS_DIR}
vec=${2:?usage: test_evaluate.sh FUSETILE VECTORS_DIR}
. "$(dirname "$0")/lib.sh"

P=$vec/ex1A.problem.json
S=$vec/ex1A.solution.json

check no-args 2 err 'usage: fusetile COMMAND' -- "$bin"
check help 0 out 'fusetile evaluate PROBLEM' -- "$bin" --help
# the top-level help's line for each command lists every option of the
# command's own usage lines (issue 32: simulate's lacked --target)
"$bin" --help >"$tmp/top-help" 2>&1
cmds=$(grep -oE '^  fusetile [a-z]+' "$tmp/top-help" | awk '{print $2}')
expect top-help-commands "fusetile --help lists no commands" test -n "$cmds"
for c in $cmds; do
    "$bin" "$c" --help 2>&1 | sed -n '1,/^$/p' | grep -oE -- '(^|[][ |])--?[a-z][a-z-]*' | sed -E 's/^[][ |]//' | sort -u >"$tmp/opts-$c"
    missing=$(while read -r opt; do
        grep -E "^  fusetile $c " "$tmp/top-help" | grep -qF -- "$opt" || printf '%s ' "$opt"
    done <"$tmp/opts-$c")
    expect "top-help-$c" "fusetile --help's $c line lacks: $missing" test -z "$missing"
done
# and sweep's help lists every option of each sweep command's (its help read
# once: it was run once per option, each run a valgrind start in that layer)
"$bin" sweep --help | sed -n '1,/^$/p' >"$tmp/sweep-help"
for c in run list plot submit status gather; do
    missing=$("$bin" sweep "$c" --help 2>&1 | sed -n '1,/^$/p' | grep -oE -- '(^|[][ |])--?[a-z][a-z-]*' | sed -E 's/^[][ |]//' | sort -u |
        while read -r opt; do
            grep -E "fusetile sweep $c " "$tmp/sweep-help" | grep -qF -- "$opt" || printf '%s ' "$opt"
        done)
    expect "sweep-help-$c" "fusetile sweep --help's $c line lacks: $missing" test -z "$missing"
done
check help-command 0 out 'usage: fusetile evaluate' -- "$bin" help evaluate
check help-unknown 2 err "unknown command 'nope'" -- "$bin" help nope
check version 0 out '^fusetile [0-9]' -- "$bin" --version
check unknown-command 2 err "unknown command 'frobnicate'" -- "$bin" frobnicate
check eval-help 0 out '--compute-model M' -- "$bin" evaluate --help
check eval-one-arg 2 err 'needs PROBLEM.json and SCHEDULE.json' -- "$bin" evaluate "$P"
# PROBLEM and SCHEDULE swapped, or a problem where the schedule goes: the
# message says which file is which (issue 32), not "missing field widths"
check eval-swapped 2 err "ex1A.solution.json: is a schedule, not a problem; usage: fusetile evaluate PROBLEM SCHEDULE" \
    -- "$bin" evaluate "$S" "$P"
check eval-two-problems 2 err "ex1A.problem.json: is a problem, not a schedule; usage: fusetile evaluate PROBLEM SCHEDULE" \
    -- "$bin" evaluate "$P" "$P"
check eval-three-args 2 err "unexpected argument 'extra'" -- "$bin" evaluate "$P" "$S" extra
check eval-unknown-option 2 err "unknown option '--fast'" -- "$bin" evaluate "$P" "$S" --fast
check eval-bad-model 2 err "--compute-model is 'best', must be native or op" -- "$bin" evaluate "$P" "$S" --compute-model best
check eval-model-no-value 2 err 'option --compute-model needs a value' -- "$bin" evaluate "$P" "$S" --compute-model
check eval-missing-problem 2 err "$tmp/nope.json: cannot open" -- "$bin" evaluate "$tmp/nope.json" "$S"
check eval-missing-schedule 2 err "$tmp/nope.json: cannot open" -- "$bin" evaluate "$P" "$tmp/nope.json"

printf '{"subgraphs": [[0], [1]],' >"$tmp/trunc.json"
check eval-schedule-truncated 2 err "trunc.json:1:[0-9]+: not valid JSON" -- "$bin" evaluate "$P" "$tmp/trunc.json"
printf '{"subgraphs": [[0], [1]], "tensors_to_retain": [[], []]}' >"$tmp/nogran.json"
check eval-schedule-missing-field 2 err 'nogran.json: missing field granularities' -- "$bin" evaluate "$P" "$tmp/nogran.json"
printf '{"subgraphs": [[0], [1]], "granularities": [[128, 128, 1], [128, "x", 1]], "tensors_to_retain": [[], []]}' >"$tmp/type.json"
check eval-schedule-wrong-type 2 err 'type.json: granularities\[1\]\[1\] must be an integer' -- "$bin" evaluate "$P" "$tmp/type.json"
printf '{"subgraphs": [[0], [1]], "granularities": [[128, 128, 1]], "tensors_to_retain": [[], []]}' >"$tmp/len.json"
check eval-length-mismatch 1 err 'invalid schedule \(length-mismatch\): .*granularities has 1 entries, subgraphs has 2' -- "$bin" evaluate "$P" "$tmp/len.json"
printf '{"subgraphs": [[0], [1]], "granularities": [[128, 128, 1], [128, 128, 1]], "tensors_to_retain": [[], []], "traversal_orders": [null, [0, 0]]}' >"$tmp/perm.json"
check eval-bad-traversal 1 err 'invalid schedule \(bad-traversal-order\): .*traversal_orders\[1\] has 2 entries, subgraph 1 has 1 tiles' -- "$bin" evaluate "$P" "$tmp/perm.json"
printf '{"subgraphs": [[1], [0]], "granularities": [[128, 128, 1], [128, 128, 1]], "tensors_to_retain": [[], []]}' >"$tmp/avail.json"
check eval-tensor-unavailable 1 err 'invalid schedule \(tensor-unavailable\): .*op 1 needs tensor 1' -- "$bin" evaluate "$P" "$tmp/avail.json"

check eval-oom 1 err 'invalid schedule \(oom\): .*subgraph 0, tile 0 \(row 0, col 0\), step 0 \(k-step 0\): working set 49152 exceeds fast_memory_capacity 40000' \
    -- "$bin" evaluate "$vec/X-oom.problem.json" "$vec/X-oom.solution.json"
check eval-oom-json 1 out '"valid": false, .*"reason": "oom"' -- "$bin" evaluate "$vec/X-oom.problem.json" "$vec/X-oom.solution.json" --json
check eval-not-covered 1 err 'invalid schedule \(op-not-covered\): .*op 2 is in no subgraph' \
    -- "$bin" evaluate "$vec/X-missing-op.problem.json" "$vec/X-missing-op.solution.json"
check eval-warn-reported 0 err 'warning: .*subgraph_latencies\[0\] is 0, the native model gives 17600' \
    -- "$bin" evaluate "$vec/E-mlp-fused.problem.json" "$vec/E-mlp-fused.solution.json"
check eval-table 0 out '^total +6553.6$' -- "$bin" evaluate "$P" "$S"
check eval-table-bound 0 out '^lower bound +' -- "$bin" evaluate "$P" "$S"
check eval-json 0 out '"compute_model": "op", "total": 7372.8' -- "$bin" evaluate "$vec/D-deep-k.problem.json" "$vec/D-deep-k.solution.json" --json --compute-model=op
check eval-json-subgraphs 0 out '"subgraphs": \[' -- "$bin" evaluate "$P" "$S" --json
# the capacity bound (SPEC 7): the lower bound's figures where capacity forces nothing more
check eval-table-capacity 0 out '^capacity bound +3276.8 \(compute 1100, memory 3276.8\)$' -- "$bin" evaluate "$P" "$S"
check eval-table-capacity-ratio 0 out '^capacity ratio +2.0000$' -- "$bin" evaluate "$P" "$S"
check eval-json-capacity 0 out '"ratio": 2, "capacity_bound": 3276.8, "capacity_bound_memory": 3276.8, "capacity_ratio": 2, ' \
    -- "$bin" evaluate "$P" "$S" --json
# where the gap lies (ft_gap_report, ft_gap_alone): ex1A's split schedule
# pays exactly the bound of its two subgraphs, twice the problem's bound:
# the grouping's part; the best configuration of each subgraph alone is
# its own
check eval-table-gap 0 out '^gap: 2\.00 x the bound \(3276\.8\) = 1\.00 in the search.s configurations x 1\.00 in the bound x 2\.00 in the grouping \(2 subgraphs\): most of the gap is in the grouping' \
    -- "$bin" evaluate "$P" "$S"
# and the grouping's evidence: the two merged cost the bound, half the total
check eval-table-merge 0 out 'merging subgraphs 0 and 1 saves 3277 \(50\.00% of the total\): the grouping can improve\)$' \
    -- "$bin" evaluate "$P" "$S"
# the search's two subgraphs of a generated small problem: their merge
# costs more than the two
"$bin" generate --family small --seed 1 -o "$tmp/g1.json"
printf '{"subgraphs": [[0, 1, 2], [3, 4]], "granularities": [[14, 14, 4], [14, 14, 4]], "tensors_to_retain": [[], []], "traversal_orders": [null, null]}' >"$tmp/g1.s.json"
check eval-table-no-merge 0 out '; no merge of two neighbouring subgraphs costs less than the two \(1 pair, [1-9][0-9]* configurations\)' \
    -- "$bin" evaluate "$tmp/g1.json" "$tmp/g1.s.json"
# a recomputed op in both subgraphs (ex3B): no pair is merged
check eval-table-recompute-no-pair 0 out 'over 2 subgraphs, is [0-9.]* x the bound of the same subgraphs\)$' \
    -- "$bin" evaluate "$vec/ex3B.problem.json" "$vec/ex3B.solution.json"
check eval-json-gap 0 out '"gap": \{"bound": 3276\.8, "ratio": 2, "grouping_bound": 6553\.6, "subgraphs": 2, "between": 2, "within": 1, "best_alone": 6553\.6, "search_part": 1, "bound_part": 1, "alone_tried": [1-9][0-9]*, "alone_done": 2, "pairs_tried": 1, "pairs_done": 1, "pairs_configs": [1-9][0-9]*, "merge_at": 0, "merge_gain": 3276\.8, "merge_sum": 3276\.8, "grouping_in_bound": 0, "gap_in": "grouping"\}' \
    -- "$bin" evaluate "$P" "$S" --json
# ex1A fused at 32 x 32 (a worse configuration than the native one): the
# evidence finds the native tile, and the line names the search's part
printf '{"subgraphs": [[0, 1]], "granularities": [[32, 32, 1]], "tensors_to_retain": [[]], "traversal_orders": [null]}' >"$tmp/small.json"
check eval-gap-search 0 out '^gap: 5\.37 x the bound \(3276\.8\) = 5\.37 in the search.s configurations x 1\.00 in the bound x 1\.00 in the grouping \(1 subgraph\): most of the gap is in the search.s configurations \(the best configuration of each subgraph alone, [1-9][0-9]* configurations tried over 1 subgraph, is 1\.00 x the bound of the same subgraphs, the schedule 5\.37 x that' \
    -- "$bin" evaluate "$P" "$tmp/small.json"
check eval-json-gap-search 0 out '"best_alone": 3276\.8, "search_part": 5\.37109375, "bound_part": 1, .*"gap_in": "search"' \
    -- "$bin" evaluate "$P" "$tmp/small.json" --json
# --gap-time: 0 scores nothing (the line says it covered none, the parts
# stand as ft_gap_report set them); a bad value is one line, exit 2
check eval-gap-time-zero 0 out '^gap: 2\.00 x the bound .*most of the gap is in the grouping \(.*0 configurations tried over 0 of 2 subgraphs \(cut at [0-9.]+ s: the others keep their own\)' \
    -- "$bin" evaluate "$P" "$S" --gap-time 0
check eval-gap-time-bad 2 err "^fusetile: evaluate: --gap-time is '-1', must be a number of seconds, 0 or more$" \
    -- "$bin" evaluate "$P" "$S" --gap-time -1
check eval-gap-time-word 2 err "^fusetile: evaluate: --gap-time is 'soon', must be a number of seconds, 0 or more$" \
    -- "$bin" evaluate "$P" "$S" --gap-time soon
check eval-gap-time-missing 2 err 'option --gap-time needs a value' -- "$bin" evaluate "$P" "$S" --gap-time
# and schedule's summary ends with it (ex1A fused: no gap; the evidence
# covered every subgraph within its share of the limit, or, under a slow
# runner, said it was cut)
check schedule-gap 0 err '^fusetile: schedule: gap: 1\.00 x the bound .*most of the gap is in the bound \(the best configuration of each subgraph alone, [1-9][0-9]* configurations tried over (1 subgraph|0 of 1 subgraphs \(cut at [0-9.]+ s: the others keep their own\)), is 1\.00 x the bound' \
    -- "$bin" schedule "$P" --time-limit 1 --threads 1
check eval-no-warning 0 - '' -- "$bin" evaluate "$P" "$S"
if [ -s "$tmp/err" ]; then fail=$((fail + 1)); echo "FAIL eval-no-warning: stderr not empty"; else pass=$((pass + 1)); fi

bad_files evaluate 1
for f in "${bad_list[@]}"; do
    b=$(basename "$f")
    check "bad-$b" 2 err "^fusetile: .*$b" -- "$bin" evaluate "$f" "$S"
    if [ "$(wc -l <"$tmp/err")" -ne 1 ]; then
        fail=$((fail + 1)); echo "FAIL bad-$b: want one line on stderr, got $(wc -l <"$tmp/err")"
    fi
done

finish cli
