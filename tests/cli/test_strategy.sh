#!/usr/bin/env bash
# test_strategy.sh - `fusetile schedule --strategy` and its options: each grouping strategy's valid, labelled schedule on the bundled ResNet-18, the search no worse than them, and every option's error path.
# usage: test_strategy.sh FUSETILE VECTORS_DIR
# With FT_SLOW=1 (valgrind, sanitizers) the search's comparison is skipped.
set -u
bin=${1:?usage: test_strategy.sh FUSETILE VECTORS_DIR}
vec=${2:?usage: test_strategy.sh FUSETILE VECTORS_DIR}
. "$(dirname "$0")/lib.sh"
src=$(cd "$(dirname "$0")/../.." && pwd)

R=$src/examples/resnet18.problem.json
P=$vec/ex1A.problem.json
S=$tmp/s.json
sched_total() { sed -n 's/.*: compute model [a-z]*, total \([^,]*\),.*/\1/p' "$tmp/err"; }

# ---------------------------------------------------------- errors
check help 0 out '--strategy NAME' -- "$bin" schedule --help
check bad-strategy 2 err "^fusetile: schedule: --strategy: unknown strategy 'tiles' \(expected search, patterns, rules, partition or supertile\)$" -- "$bin" schedule "$P" --strategy tiles
check strategy-no-value 2 err '--strategy' -- "$bin" schedule "$P" --strategy
check bad-start 2 err "^fusetile: schedule: --start-from: 'x' is not a grouping strategy" -- "$bin" schedule "$P" --start-from rules,x
check start-search 2 err "'search' is not a grouping strategy" -- "$bin" schedule "$P" --start-from search
check bad-partition 2 err "^fusetile: schedule: --partition: unknown partition method 'kway' \(expected auto, fit, layers or metis\)$" -- "$bin" schedule "$P" --partition kway
check bad-parts 2 err "^fusetile: schedule: --parts is '0', must be a positive integer$" -- "$bin" schedule "$P" --parts 0
check bad-parts-text 2 err "--parts is 'many'" -- "$bin" schedule "$P" --parts many
check missing-patterns 2 err '/nonexistent/x.patterns: cannot open: No such file or directory' -- "$bin" schedule "$P" --strategy patterns --patterns /nonexistent/x.patterns -q
printf 'pattern broken\n  node a mm\n  edge a b 0\nend\n' >"$tmp/bad.patterns"
check broken-patterns 2 err "bad.patterns:3: edge: unknown node 'b'" -- "$bin" schedule "$P" --strategy patterns --patterns "$tmp/bad.patterns" -q
check broken-patterns-search 2 err "bad.patterns:3:" -- "$bin" schedule "$P" --patterns "$tmp/bad.patterns" -q --time-limit 1
args=()
for i in $(seq 17); do args+=(--patterns "$tmp/bad.patterns"); done
check too-many-patterns 2 err 'more than 16 --patterns files' -- "$bin" schedule "$P" "${args[@]}"
expect no-output-on-error 'a failed strategy wrote a schedule' test ! -e "$S"

# ---------------------------------------------------------- each strategy
for k in patterns rules partition supertile; do
    check "$k-runs" 0 err "strategy $k(,|\$)" -- "$bin" schedule "$R" --strategy "$k" --threads 1 -o "$S"
    eval "t_$k=$(sched_total)"
    n=$(grep -c ': subgraph [0-9]*: ' "$tmp/err")
    check "$k-valid" 0 out '^total ' -- "$bin" evaluate "$R" "$S"
    check "$k-simulated" 0 out 'agreement +yes' -- "$bin" simulate "$R" "$S"
    check "$k-labels" 0 - - -- python3 -c "
import json, sys
d = json.load(open('$S'))
assert len(d['subgraph_labels']) == len(d['subgraphs']) == $n, (len(d['subgraph_labels']), $n)
assert all(': ' in l for l in d['subgraph_labels'])"
done
check rules-first-group 0 err 'subgraph 0: conv\+bn\+relu conv1: conv1, relu$' -- "$bin" schedule "$R" --strategy rules --threads 1 -o "$S"
check layers-stem 0 err 'subgraph 0: stem: conv1, relu, maxpool$' -- "$bin" schedule "$R" --strategy partition --partition layers --threads 1 -o "$S"
check metis-parts 0 err 'strategy partition(,|$)' -- "$bin" schedule "$R" --strategy partition --partition metis --parts 16 --threads 1 -o "$S"
check strategy-quiet 0 - - -- "$bin" schedule "$R" --strategy rules -q -o "$S"
expect strategy-quiet-silent 'stderr not empty under -q' test ! -s "$tmp/err"

# ---------------------------------------------------------- the search starts from them
check search-starts 0 err 'strategy search(,|$)' -- "$bin" schedule "$R" --time-limit 8 --threads 1 -o "$S"
t_search=$(sched_total)
# (8 s: the search costs the four strategies' groupings first, in about a
# second here, with room for a loaded machine; not under FT_SLOW=1:
# valgrind leaves the search too little of the limit to
# cost the strategies' groups; test_strategy.c covers it there)
if [ "${FT_SLOW:-0}" = 1 ]; then
    skip 4 "the search against each strategy's schedule, under FT_SLOW=1 (test_strategy.c covers it)"
fi
for k in patterns rules partition supertile; do
    [ "${FT_SLOW:-0}" = 1 ] && break
    eval "t=\$t_$k"
    expect "search-beats-$k" "search $t_search is worse than $k's $t" awk -v a="$t_search" -v b="$t" 'BEGIN { exit !(a <= b) }'
done
expect search-no-labels 'the search wrote subgraph_labels' sh -c "! grep -q subgraph_labels '$S'"
check search-no-starts 0 err 'strategy search(,|$)' -- "$bin" schedule "$P" --start-from none --time-limit 1 -o "$S"

finish strategy
