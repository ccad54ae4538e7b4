#!/usr/bin/env bash
# test_limits.sh - the named limits (include/fusetile/limits.h, docs/LIMITS.md): a 10 000-op problem evaluated, simulated and scheduled within time bounds with progress lines; a 10^9-step schedule refused at once by evaluate, simulate and the Tcl commands; each limit's one-line message (exit 2) for an input just over it, generated here.
# usage: test_limits.sh FUSETILE [VECTORS_DIR]
# The time bounds are generous (several times what a loaded 2-core machine
# takes); with FT_SLOW=1 (valgrind, sanitizers) they are widened, and the
# 10 000-op search (minutes under valgrind) is skipped with a line saying
# so; under FT_RUNNER (valgrind) so are the 10 000-op simulation and the
# 20 000-op evaluation.
set -u
bin=${1:?usage: test_limits.sh FUSETILE [VECTORS_DIR]}
. "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
slow=${FT_SLOW:-0}
py=python3

now() { date +%s.%N; }
# within START SECONDS [SLOW_SECONDS]: less than SECONDS of wall time since
# START (SLOW_SECONDS under FT_SLOW=1, default 50 times SECONDS).
within() {
    local l=$2
    [ "$slow" = 1 ] && l=${3:-$((l * 50))}
    awk -v s="$1" -v e="$(now)" -v l="$l" 'BEGIN { exit !(e - s < l) }'
}
one_line_err() { [ "$(wc -l <"$tmp/err")" -eq 1 ]; }
# limit NAME FILE... : the value of FT_NAME in the limits header (an
# integer, after the header's arithmetic).
limit() {
    "$py" - "$root/include/fusetile/limits.h" "$1" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
defs = dict(re.findall(r'^#define (FT_\w+) (.+?)\s*(?:/\*.*)?$', text, re.M))
def value(name):
    e = defs[name]
    e = re.sub(r'\((?:int64_t|long long)\)', '', e)
    e = re.sub(r'FT_\w+', lambda m: str(value(m.group(0))), e)
    return eval(e)
print(value(sys.argv[2]))
PY
}

MAX_OPS=$(limit FT_MAX_OPS)
MAX_TENSORS=$(limit FT_MAX_TENSORS)
MAX_DIM=$(limit FT_MAX_DIM)
MAX_STEPS=$(limit FT_MAX_STEPS)
MAX_SUBGRAPHS=$(limit FT_MAX_SUBGRAPHS)
MAX_SG_OPS=$(limit FT_MAX_SUBGRAPH_OPS)
MAX_RETAIN=$(limit FT_MAX_RETAIN)
MAX_TRAVERSAL=$(limit FT_MAX_TRAVERSAL)
expect limits-read "the limits header did not parse" test "$MAX_OPS" -eq 20000 -a "$MAX_STEPS" -eq 500000000
# docs/LIMITS.md lists every limit of the header
for name in $(sed -n 's/^#define \(FT_[A-Z0-9_]*\) .*/\1/p' "$root/include/fusetile/limits.h"); do
    expect "doc-$name" "docs/LIMITS.md does not list $name" grep -q "\`$name\`" "$root/docs/LIMITS.md"
done

# gen KIND OUT ARGS...: write a generated problem or schedule (below).
gen() {
    "$py" - "$@" <<'PY'
import json, sys
kind, out = sys.argv[1], sys.argv[2]
a = [int(x) for x in sys.argv[3:]] if kind != "oneop" else []
def chain(nops, ntensors, w, h, nw, nh):
    return {"widths": [w] * ntensors, "heights": [h] * ntensors,
            "inputs": [[i] for i in range(nops)], "outputs": [[i + 1] for i in range(nops)],
            "base_costs": [1] * nops, "op_types": ["Pointwise"] * nops,
            "fast_memory_capacity": 1000000, "slow_memory_bandwidth": 10, "native_granularity": [nw, nh]}
def sched(sgs, gran, retain, orders=None):
    d = {"subgraphs": sgs, "granularities": gran, "tensors_to_retain": retain}
    if orders is not None:
        d["traversal_orders"] = orders
    return d
if kind == "chain":                     # NOPS NTENSORS W H NW NH
    d = chain(*a)
elif kind == "oneop":                   # one op per subgraph in topological order, [G, G, G]
    p = json.load(open(sys.argv[3]))
    g = int(sys.argv[4])
    prod = {o[0]: i for i, o in enumerate(p["outputs"])}
    deps = [set(prod[t] for t in ins if t in prod) for ins in p["inputs"]]
    done, order = set(), []
    while len(order) < len(deps):
        for i, d in enumerate(deps):
            if i not in done and d <= done:
                done.add(i); order.append(i)
    d = sched([[i] for i in order], [[g, g, g]] * len(order), [[]] * len(order))
elif kind == "subgraphs":               # N subgraphs
    d = sched([[0]] * a[0], [[1, 1, 1]] * a[0], [[]] * a[0])
elif kind == "sgops":                   # a subgraph of N ops
    d = sched([[0], [0] * a[0]], [[1, 1, 1]] * 2, [[]] * 2)
elif kind == "retain":                  # a retain list of N tensors
    d = sched([[0]], [[1, 1, 1]], [[0] * a[0]])
elif kind == "order":                   # a traversal order of N tiles
    d = sched([[0]], [[1, 1, 1]], [[]], [[0] * a[0]])
elif kind == "gran":                    # one subgraph at [W, H, 1]
    d = sched([[0]], [[a[0], a[1], 1]], [[]])
json.dump(d, open(out, "w"), separators=(",", ":"))
PY
}

# ------------------------------------------------------ 10 000 ops: runs
P10=$tmp/p10k.json
S10=$tmp/s10k.json
t0=$(now)
check gen-10k 0 - '' -- "$bin" generate --family scale --ops 10000 --seed 3 -o "$P10"
expect gen-10k-time "generating 10 000 ops took too long" within "$t0" 10
gen oneop "$S10" "$P10" 64
t0=$(now)
check eval-10k 0 out '^total ' -- "$bin" evaluate "$P10" "$S10"
expect eval-10k-time "evaluate of 10 000 ops took 10 s or more" within "$t0" 10
expect eval-10k-bound "no lower bound in evaluate's table" grep -Eq '^lower bound +[0-9]' "$tmp/out"
if [ -n "${FT_RUNNER:-}" ]; then
    skip 2 "the 10 000-op simulation, under FT_RUNNER (half a minute under valgrind; the evaluation above runs)"
else
    t0=$(now)
    check sim-10k 0 out '^agreement +yes' -- "$bin" simulate "$P10" "$S10"
    expect sim-10k-time "simulate of 10 000 ops took 20 s or more" within "$t0" 20
fi
if [ "$slow" = 1 ]; then
    skip 4 "the 10 000-op search, under FT_SLOW=1 (minutes under valgrind)"
else
    # the search: a first schedule (about 3 s here), progress lines while
    # it runs, the time limit kept
    t0=$(now)
    check sched-10k 0 err 'progress [0-9.]+/6 s' -- "$bin" schedule "$P10" --time-limit 6 -o "$tmp/o10k.json"
    expect sched-10k-time "schedule --time-limit 6 of 10 000 ops ran 12 s or more" within "$t0" 12
    expect sched-10k-summary "no summary line" grep -q 'compute model native, total' "$tmp/err"
    check sched-10k-valid 0 out '^total ' -- "$bin" evaluate "$P10" "$tmp/o10k.json"
fi

# ------------------------------------------------- 10^9 steps: refused at once
gen chain "$tmp/wide.json" 1 2 100000 100000 128 128
gen gran "$tmp/s1e9.json" 10 1
steps_msg="s1e9.json: 1000000000 steps \(the largest subgraph, 0: 10000 x 100000 tiles x 1 k-steps\), the limit is $MAX_STEPS \(FT_MAX_STEPS\)$"
t0=$(now)
check eval-1e9 2 err "^fusetile: .*$steps_msg" -- "$bin" evaluate "$tmp/wide.json" "$tmp/s1e9.json"
expect eval-1e9-time "evaluate took 2 s or more to refuse" within "$t0" 2
expect eval-1e9-one "not one line" one_line_err
t0=$(now)
check sim-1e9 2 err "^fusetile: simulate: .*$steps_msg" -- "$bin" simulate "$tmp/wide.json" "$tmp/s1e9.json"
expect sim-1e9-time "simulate took 2 s or more to refuse" within "$t0" 2
expect sim-1e9-one "not one line" one_line_err
# 2^24 x 2^24 tiles (2.8 x 10^14 steps)
gen chain "$tmp/huge-dims.json" 1 2 16777216 16777216 128 128
gen gran "$tmp/s1.json" 1 1
check eval-2e14 2 err "s1.json: 281474976710656 steps .*\(FT_MAX_STEPS\)$" -- "$bin" evaluate "$tmp/huge-dims.json" "$tmp/s1.json"
# under the limit it runs, with progress lines every two seconds when long
gen gran "$tmp/s5e6.json" 100 20
check eval-5e6 0 out '5000000 +[0-9.]+ ' -- "$bin" evaluate "$tmp/wide.json" "$tmp/s5e6.json"
# the Tcl commands: the same checks, the same messages
gen chain "$tmp/dim.json" 1 2 8 $((MAX_DIM + 1)) 8 8
cat >"$tmp/steps.tcl" <<EOF
fusetile::problem p {$tmp/wide.json}
fusetile::schedule s p {$tmp/s1e9.json}
if {![catch {s evaluate} m]} { puts "evaluate accepted" } else { puts "evaluate: \$m" }
if {![catch {s simulate} m]} { puts "simulate accepted" } else { puts "simulate: \$m" }
if {![catch {fusetile::problem q {$tmp/dim.json}} m]} { puts "dims accepted" } else { puts "problem: \$m" }
if {![catch {p configure -native [list [expr {$MAX_DIM + 1}] 8]} m]} { puts "native accepted" } else { puts "configure: \$m" }
EOF
check tcl-steps 0 out "^evaluate: .*$steps_msg" -- "$bin" shell "$tmp/steps.tcl"
expect tcl-steps-sim "Tcl simulate did not refuse" grep -Eq "^simulate: .*\(FT_MAX_STEPS\)$" "$tmp/out"
expect tcl-dims "Tcl problem over FT_MAX_DIM accepted" grep -Eq "^problem: .*dim.json: heights\[0\]: $((MAX_DIM + 1)) elements, the limit is $MAX_DIM \(FT_MAX_DIM\)$" "$tmp/out"
expect tcl-native "Tcl configure -native over FT_MAX_DIM accepted" grep -Eq "^configure: .*the limit is $MAX_DIM \(FT_MAX_DIM\)$" "$tmp/out"

# ------------------------------------------- each limit, an input just over it
S=$tmp/s.json
gen gran "$S" 1 1
over() { # NAME PATTERN -- COMMAND...: exit 2, one line matching PATTERN, fast
    local name=$1 pat=$2
    shift 3
    local t=$(now)
    check "$name" 2 err "$pat" -- "$@"
    expect "$name-one" "not one line" one_line_err
    expect "$name-time" "refused after 5 s or more" within "$t" 5
}
gen chain "$tmp/ops.json" $((MAX_OPS + 1)) $((MAX_OPS + 2)) 8 8 8 8
over ops "^fusetile: .*ops.json: op_types: $((MAX_OPS + 1)) ops, the limit is $MAX_OPS \(FT_MAX_OPS\)$" -- "$bin" evaluate "$tmp/ops.json" "$S"
gen chain "$tmp/tensors.json" 1 $((MAX_TENSORS + 1)) 8 8 8 8
over tensors "tensors.json: widths: $((MAX_TENSORS + 1)) tensors, the limit is $MAX_TENSORS \(FT_MAX_TENSORS\)$" -- "$bin" evaluate "$tmp/tensors.json" "$S"
over dim "dim.json: heights\[0\]: $((MAX_DIM + 1)) elements, the limit is $MAX_DIM \(FT_MAX_DIM\)$" -- "$bin" schedule "$tmp/dim.json"
gen chain "$tmp/native.json" 1 2 8 8 $((MAX_DIM + 1)) 8
over native "native.json: native_granularity\[0\]: $((MAX_DIM + 1)), the limit is $MAX_DIM \(FT_MAX_DIM\)$" -- "$bin" simulate "$tmp/native.json" "$S"
# the ops at the limit load (a 20 000-op chain, evaluated one op a subgraph)
if [ -n "${FT_RUNNER:-}" ]; then
    skip 2 "the $MAX_OPS-op evaluation, under FT_RUNNER (half a minute under valgrind)"
else
    gen chain "$tmp/ops-at.json" "$MAX_OPS" $((MAX_OPS + 1)) 8 8 8 8
    gen oneop "$tmp/ops-at.s.json" "$tmp/ops-at.json" 8
    t0=$(now)
    check ops-at 0 out '^total ' -- "$bin" evaluate "$tmp/ops-at.json" "$tmp/ops-at.s.json"
    expect ops-at-time "evaluate of $MAX_OPS ops took 20 s or more" within "$t0" 20
fi
# schedules
P=$tmp/one.json
gen chain "$P" 1 2 8 8 8 8
gen subgraphs "$tmp/sgs.json" $((MAX_SUBGRAPHS + 1))
over subgraphs "sgs.json: subgraphs: $((MAX_SUBGRAPHS + 1)) entries \(one per subgraph\), the limit is $MAX_SUBGRAPHS \(FT_MAX_SUBGRAPHS\)$" -- "$bin" evaluate "$P" "$tmp/sgs.json"
gen sgops "$tmp/sgops.json" $((MAX_SG_OPS + 1))
over sg-ops "sgops.json: subgraphs\[1\]: $((MAX_SG_OPS + 1)) ops, the limit is $MAX_SG_OPS \(FT_MAX_SUBGRAPH_OPS\)$" -- "$bin" simulate "$P" "$tmp/sgops.json"
gen retain "$tmp/retain.json" $((MAX_RETAIN + 1))
over retain "retain.json: tensors_to_retain\[0\]: $((MAX_RETAIN + 1)) tensors, the limit is $MAX_RETAIN \(FT_MAX_RETAIN\)$" -- "$bin" evaluate "$P" "$tmp/retain.json"
if [ "$slow" = 1 ]; then
    skip 3 "the traversal-order limit (4 million JSON values), under FT_SLOW=1"
else
    gen order "$tmp/order.json" $((MAX_TRAVERSAL + 1))
    over order "order.json: traversal_orders\[0\]: $((MAX_TRAVERSAL + 1)) tiles, the limit is $MAX_TRAVERSAL \(FT_MAX_TRAVERSAL\)$" -- "$bin" evaluate "$P" "$tmp/order.json"
fi
# files: sparse, one byte over each limit (no disk used; refused unread)
sparse() { truncate -s "$2" "$1"; }
bytes_over() { # NAME LIMIT_NAME FILE -- COMMAND...
    local name=$1 lname=$2 file=$3
    shift 4
    local l
    l=$(limit "$lname")
    sparse "$file" $((l + 1))
    over "$name" "$(basename "$file"): $((l + 1)) bytes, the limit is $l \($lname\)$" -- "$@"
    rm -f "$file"
}
bytes_over problem-bytes FT_MAX_PROBLEM_BYTES "$tmp/big.json" -- "$bin" evaluate "$tmp/big.json" "$S"
bytes_over schedule-bytes FT_MAX_SCHEDULE_BYTES "$tmp/big-s.json" -- "$bin" evaluate "$P" "$tmp/big-s.json"
bytes_over target-bytes FT_MAX_TARGET_BYTES "$tmp/big.cfg" -- "$bin" evaluate "$P" "$S" --target "$tmp/big.cfg"
bytes_over patterns-bytes FT_MAX_PATTERNS_BYTES "$tmp/big.patterns" -- "$bin" schedule "$P" --strategy patterns --patterns "$tmp/big.patterns"
bytes_over measured-bytes FT_MAX_MEASURED_BYTES "$tmp/big.tsv" -- "$bin" validate --target "$root/targets/gpu-h100.cfg" --measured "$tmp/big.tsv"
bytes_over sweep-bytes FT_MAX_SWEEP_BYTES "$tmp/big-sweep.cfg" -- "$bin" sweep run "$tmp/big-sweep.cfg" --db "$tmp/sweep.db"
expect sweep-bytes-no-db "a database was made for a refused sweep file" test ! -e "$tmp/sweep.db"
# a pipe: counted while read, stopped at the limit
l=$(limit FT_MAX_PROBLEM_BYTES)
t0=$(now)
check problem-pipe 2 err "/dev/stdin: more than $l bytes read, the limit is $l \(FT_MAX_PROBLEM_BYTES\)$" -- \
    bash -c 'head -c $(('"$l"' + 100)) /dev/zero | "$0" evaluate /dev/stdin "$1"' "$bin" "$S"
expect problem-pipe-time "a piped problem over the limit took 10 s or more" within "$t0" 10

finish test_limits
