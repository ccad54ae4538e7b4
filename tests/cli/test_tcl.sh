#!/usr/bin/env bash
# test_tcl.sh - `fusetile shell` (script, arguments, exit statuses, the
# prompt read from a pipe), the Tcl test suite (tests/tcl/all.tcl, run in the
# shell so that it runs under FT_RUNNER too), the example scenarios of
# tcl/examples/, a short soak, and `package require fusetile` from tclsh.
# usage: test_tcl.sh FUSETILE VECTORS_DIR
# Environment (set by make check): FT_HAVE_TCL (yes/no), FT_BUILDDIR (for
# tcl/pkgIndex.tcl), FT_TCLSH; FT_SLOW=1 runs the examples on smaller inputs.
set -u
bin=${1:?usage: test_tcl.sh FUSETILE VECTORS_DIR}
vec=${2:?usage: test_tcl.sh FUSETILE VECTORS_DIR}
. "$(dirname "$0")/lib.sh"
src=$(cd "$(dirname "$0")/../.." && pwd)
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac   # the examples run elsewhere

check shell-help 0 out '^usage: fusetile shell \[SCRIPT.tcl \[ARGS...\]\]' -- "$bin" shell --help
check help-shell 0 out 'tclreadline' -- "$bin" help shell
check top-help 0 out 'fusetile shell \[SCRIPT.tcl' -- "$bin" --help

if [ "${FT_HAVE_TCL:-yes}" = no ]; then
    check no-tcl 2 err 'shell: this fusetile was built without Tcl' -- "$bin" shell
    skip 1 "the shell, the Tcl test suite and the examples: this fusetile was built without Tcl (install tcl-dev and rerun configure)"
    finish tcl
fi

check unknown-option 2 err "^fusetile: shell: unknown option '--fast' \(try 'fusetile shell --help'\)$" -- "$bin" shell --fast

# A script gets argv0, argv and argc; arguments may look like options.
cat >"$tmp/args.tcl" <<'EOF'
puts "argv0=[file tail $argv0] argc=$argc argv=$argv"
puts "package=[package present fusetile] interactive=$tcl_interactive"
EOF
check script-args 0 out '^argv0=args.tcl argc=3 argv=a -b \{c d\}$' -- "$bin" shell "$tmp/args.tcl" a -b "c d"
check script-package 0 out '^package=0.1.0 interactive=0$' -- "$bin" shell "$tmp/args.tcl"
check script-dashdash 0 out 'argc=1 argv=--x' -- "$bin" shell -- "$tmp/args.tcl" --x

# A script error: errorInfo on stderr, exit 1.
printf 'proc f {} { error "boom here" }\nf\n' >"$tmp/err.tcl"
check script-error 1 err '^boom here$' -- "$bin" shell "$tmp/err.tcl"
expect script-error-info "no stack trace on stderr" grep -q '(procedure "f" line 1)' "$tmp/err"
printf 'fusetile::problem p %s\np configure -capacity 0\n' "$vec/ex1A.problem.json" >"$tmp/cap.tcl"
check script-error-message 1 err "^$vec/ex1A.problem.json: fast_memory_capacity is 0, must be positive$" -- "$bin" shell "$tmp/cap.tcl"
check script-missing 1 err "^couldn't read file \"$tmp/nope.tcl\": no such file or directory" -- "$bin" shell "$tmp/nope.tcl"
printf 'fusetile::problem p %s\nexit 3\n' "$vec/ex1A.problem.json" >"$tmp/exit.tcl"
check script-exit 3 - '' -- "$bin" shell "$tmp/exit.tcl"

# The prompt, reading a pipe: commands complete over several lines, an
# error is printed and the loop goes on, end of input ends the shell.
printf 'proc twice {x} {\n    expr {2 * $x}\n}\nputs [twice 21]\nerror oops\nfusetile::problem p %s\nputs [dict get [p info] nops]\np destroy\n' \
    "$vec/ex1A.problem.json" >"$tmp/repl.in"
check repl 0 out '^42$' -- sh -c '"$1" shell <"$2"' sh "$bin" "$tmp/repl.in"
expect repl-continues "the prompt stopped at the error" grep -qx 2 "$tmp/out"
expect repl-error "no error message on stderr" grep -qx oops "$tmp/err"

# The test suite, in the shell: its counts join ours (its "skip:" lines
# pass through to tests/run-checks).
echo "-- tests/tcl/all.tcl"
(cd "$tmp" && "$bin" shell "$src/tests/tcl/all.tcl") >"$tmp/suite.out" 2>&1
rc=$?
cat "$tmp/suite.out"
counts=$(tail -n 1 "$tmp/suite.out" |
         sed -n 's/^tcl: \([0-9][0-9]*\) passed, \([0-9][0-9]*\) failed\(, \([0-9][0-9]*\) skipped\)\{0,1\}$/\1 \2 \4/p')
if [ -n "$counts" ]; then
    read -r p f k <<<"$counts"
    pass=$((pass + p))
    fail=$((fail + f))
    skipped=$((skipped + ${k:-0}))
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        fail=$((fail + 1))
        echo "FAIL tcl-suite: exit status $rc"
    fi
else
    fail=$((fail + 1))
    echo "FAIL tcl-suite: no summary line (exit status $rc)"
fi

# The examples, from a scratch directory; smaller inputs when slow (but
# time limits long enough for the search's first schedule under valgrind).
if [ "${FT_SLOW:-0}" = 1 ]; then
    sweep_args=(-timelimit 0.5 -capacities "8192 32768 131072")
    models_args=(-timelimit 0.5 "$src/benchmarks/mlsys-2026-1.json")
    cross_args=(-timelimit 0.5)
else
    sweep_args=()
    models_args=()
    cross_args=()
fi
# example NAME PATTERN ARGS...: run tcl/examples/NAME.tcl, expect exit 0,
# PATTERN on stdout and at most 60 seconds (when not slow).
example() {
    local name=$1 pat=$2
    shift 2
    local t0=$SECONDS
    check "example-$name" 0 out "$pat" -- sh -c 'cd "$1" && shift && exec "$@"' sh "$tmp" "$bin" shell "$src/tcl/examples/$name.tcl" "$@"
    local dt=$((SECONDS - t0))
    [ "${FT_SLOW:-0}" = 1 ] || expect "example-$name-time" "took $dt s, more than a minute" [ "$dt" -le 60 ]
}
example sweep '^wrote sweep.csv and sweep.svg \([0-9]+ points\)$' "${sweep_args[@]}"
expect sweep-table "no table header" grep -Eq '^capacity +latency +lower bound +ratio +subgraphs$' "$tmp/out"
expect sweep-csv "bad CSV" grep -q '^capacity,latency,lower_bound,subgraphs,energy_j,power_w$' "$tmp/sweep.csv"
expect sweep-csv-no-energy "energy on the contest machine" sh -c "! grep -q '^[0-9].*[^,]\$' '$tmp/sweep.csv'"
expect sweep-csv-rows "CSV rows differ from the table" \
    [ "$(grep -c '^[0-9]' "$tmp/sweep.csv")" -eq "$(grep -Ec '^[0-9]+ +[0-9.]+ ' "$tmp/out")" ]
expect sweep-svg-lines "not two lines in the SVG" [ "$(grep -c '<polyline' "$tmp/sweep.svg")" -eq 2 ]
expect sweep-svg-labels "a line label is missing" grep -q '>scheduled latency</text>' "$tmp/sweep.svg"
expect sweep-svg-bound "the lower bound label is missing" grep -q '>lower bound</text>' "$tmp/sweep.svg"
# on a target with an energy group: joules and watts per point, as evaluate's
check example-sweep-energy 0 out '^capacity +latency +lower bound +ratio +subgraphs +energy \(J\) +power \(W\)$' -- \
    sh -c 'cd "$1" && shift && exec "$@"' sh "$tmp" "$bin" shell "$src/tcl/examples/sweep.tcl" -target "$src/targets/kpu.cfg" \
    -timelimit 0.3 -capacities "65536 262144" -out energy
expect sweep-energy-csv "no joules and watts in the CSV" python3 -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
sys.exit(0 if len(rows) == 2 and all(float(r["energy_j"]) > 0 and float(r["power_w"]) > 0 for r in rows) else 1)' "$tmp/energy.csv"
expect sweep-svg-axes "an axis label is missing" \
    sh -c 'grep -q ">fast-memory capacity (elements, log scale)</text>" "$1" && grep -q ">latency (cost units)</text>" "$1"' sh "$tmp/sweep.svg"
if command -v python3 >/dev/null 2>&1; then
    expect sweep-svg-xml "the SVG is not well-formed XML" python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$tmp/sweep.svg"
fi
example models '^mlsys-2026-1 +native ' "${models_args[@]}"
expect models-op "no op-model row" grep -Eq '^mlsys-2026-1 +op ' "$tmp/out"
example crosscheck '^every difference accounted for: yes$' "${cross_args[@]}"
expect crosscheck-rows "no per-subgraph rows" grep -Eq '^ +0  [0-9,.]+ +[0-9]+ +[0-9.]+ +[0-9.]+ ' "$tmp/out"

# A short soak (make soak runs the full one): no handle left, same totals
# (each search ends on its own well within 0.2 s; under a slow runner, two
# at once, one the clock cut would end at another total: 5 s there).
soak_limit=0.2
[ "${FT_SLOW:-0}" = 1 ] && soak_limit=5
check soak 0 out '^soak: ok$' -- "$bin" shell "$src/tests/tcl/soak.tcl" -count 20 -problem "$vec/ex1A.problem.json" -check 0 -timelimit "$soak_limit"

# The loadable package from tclsh, from the build tree (not for a
# sanitizer build: its library needs the sanitizer runtime loaded first).
so=${FT_BUILDDIR:-}/tcl/libtclfusetile.so
if [ -n "${FT_TCLSH:-}" ] && [ -f "$so" ] && ! ldd "$so" 2>/dev/null | grep -q 'libasan'; then
    printf 'lappend auto_path %s/tcl\nputs [package require fusetile]\nfusetile::problem p %s\np schedule s -timelimit 0.5\nputs [dict get [s simulate] agree]\ns destroy; p destroy\nputs [llength [fusetile::handles]]\n' \
        "$FT_BUILDDIR" "$vec/ex1A.problem.json" >"$tmp/load.tcl"
    check tclsh-load 0 out '^0.1.0$' -- "$FT_TCLSH" "$tmp/load.tcl"
    expect tclsh-simulate "simulate through the loaded package failed" grep -qx 1 "$tmp/out"
elif [ -z "${FT_TCLSH:-}" ] || [ ! -f "$so" ]; then
    skip 2 "package require fusetile from tclsh: no tclsh (FT_TCLSH) or no $so"
else
    skip 2 "package require fusetile from tclsh: a sanitizer build (its library needs the sanitizer runtime loaded first)"
fi

finish tcl
