#!/usr/bin/env bash
# test_generate.sh - exit statuses, messages and output of `fusetile generate` and of tools/exact.
# usage: test_generate.sh FUSETILE VECTORS_DIR
set -u
bin=${1:?usage: test_generate.sh FUSETILE VECTORS_DIR}
vec=${2:?usage: test_generate.sh FUSETILE VECTORS_DIR}
. "$(dirname "$0")/lib.sh"

check gen-help 0 out 'usage: fusetile generate' -- "$bin" generate --help
check gen-listed 0 out 'fusetile generate \[--ops N\]' -- "$bin" --help
check gen-unknown-option 2 err "generate: unknown option '--big'" -- "$bin" generate --big
check gen-positional 2 err "generate: unexpected argument 'x'" -- "$bin" generate x
check gen-ops-bad 2 err "generate: --ops is 'ten', must be an integer" -- "$bin" generate --ops ten
check gen-ops-zero 2 err "generate: --ops is '0', must be an integer from 1" -- "$bin" generate --ops 0
check gen-ops-missing 2 err 'option --ops needs a value' -- "$bin" generate --ops
check gen-seed-bad 2 err "generate: --seed is '-3', must be an integer" -- "$bin" generate --seed=-3
check gen-family-bad 2 err "generate: --family is 'huge', must be contest, small or scale" -- "$bin" generate --family huge
check gen-small-too-many 2 err 'generate: --ops is 9, the small family has at most 8 ops' -- "$bin" generate --family small --ops 9
check gen-output-empty 2 err 'needs a file name' -- "$bin" generate -o ''
check gen-output-unwritable 2 err "generate: .*nodir/p.json.*cannot write" -- "$bin" generate -o "$tmp/nodir/p.json"
if [ "$(wc -l <"$tmp/err")" -ne 1 ]; then fail=$((fail + 1)); echo "FAIL gen-output-unwritable: want one line on stderr"; else pass=$((pass + 1)); fi

check gen-stdout 0 out '"native_granularity": \[128,128\]' -- "$bin" generate --ops 12 --seed 4
cp "$tmp/out" "$tmp/a.json"
check gen-file 0 - '' -- "$bin" generate --ops 12 --seed 4 -o "$tmp/b.json"
expect gen-deterministic "the same options gave different files" cmp -s "$tmp/a.json" "$tmp/b.json"
"$bin" generate --ops 12 --seed 5 -o "$tmp/c.json"
expect gen-seed-differs "another seed gave the same file" test -n "$(cmp "$tmp/a.json" "$tmp/c.json" 2>&1)"
expect gen-op-count "want 12 ops" test "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["op_types"]))' "$tmp/b.json")" = 12
check gen-schedules 0 - '' -- "$bin" schedule "$tmp/b.json" --time-limit 0.5 -q -o "$tmp/b.sched.json"
check gen-evaluates 0 out '^total ' -- "$bin" evaluate "$tmp/b.json" "$tmp/b.sched.json"
check gen-small 0 out '"op_types"' -- "$bin" generate --family small --seed 3
check gen-scale 0 - '' -- "$bin" generate --family scale --ops 2000 -o "$tmp/s.json"

# tools/exact, when built beside FUSETILE
exact=${FT_BUILDDIR:-$(dirname "$bin")}/tools/exact
if [ -x "$exact" ]; then
    "$bin" generate --family small --ops 3 --seed 2 -o "$tmp/small.json"
    check exact-help 0 out 'usage: exact PROBLEM.json' -- "$exact" --help
    check exact-no-problem 2 err 'exact: needs PROBLEM.json' -- "$exact"
    check exact-unknown-option 2 err "exact: unknown option '--fast'" -- "$exact" "$tmp/small.json" --fast
    check exact-bad-model 2 err "exact: --compute-model is 'best', must be native or op" -- "$exact" "$tmp/small.json" --compute-model best
    check exact-bad-limit 2 err "exact: --time-limit is 'soon'" -- "$exact" "$tmp/small.json" --time-limit soon
    check exact-missing-file 2 err "exact: $tmp/nope.json: cannot open" -- "$exact" "$tmp/nope.json"
    check exact-too-many-ops 2 err 'exact: .* has 12 ops, at most 8' -- "$exact" "$tmp/b.json"
    check exact-optimum 0 out '^optimum [0-9]' -- "$exact" "$tmp/small.json" -o "$tmp/small.sched.json"
    opt=$(awk '{print $2}' "$tmp/out")
    check exact-schedule-evaluates 0 out '^total ' -- "$bin" evaluate "$tmp/small.json" "$tmp/small.sched.json"
    got=$(awk '$1 == "total" {print $2}' "$tmp/out")
    expect exact-total-matches "exact says $opt, evaluate says $got" \
        python3 -c 'import sys; a, b = map(float, sys.argv[1:]); sys.exit(abs(a - b) > 1e-9 * abs(a))' "$opt" "$got"
    # seed 6 takes about 3 s on an idle machine: one second is not enough
    "$bin" generate --family small --seed 6 -o "$tmp/slow.json"
    check exact-not-proven 4 err 'exact: not proven: the time limit ran out' -- "$exact" "$tmp/slow.json" --time-limit 1
fi

finish test_generate
