# lib.sh - shared helpers of the command-line test scripts (sourced, not run).
# After sourcing: $tmp is a scratch directory removed at exit, and
# pass/fail/skipped count the cases.
#
# The convention of every test program that tests/run-checks runs: it ends
# with the line "[LABEL: ]N passed, M failed[, K skipped]" (the skipped part
# only when K > 0), and says why for each skip with a line "skip: REASON"
# anywhere in its output (run-checks lists them before its last line).  A
# skipped block of cases counts as its number of cases where that is known,
# else as one.

# slow: 1 under FT_SLOW=1 (valgrind through FT_RUNNER, the sanitizer
# build), where every program runs many times slower.  A script that runs
# the same command over many inputs may then run a representative part of
# them (the plain 'make check' runs them all); it says what it left out with
# skip, so that the tally counts it.
slow=${FT_SLOW:-0}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
skipped=0

# check NAME WANT_RC STREAM PATTERN -- PROGRAM ARGS...: run PROGRAM ARGS,
# expect exit WANT_RC and PATTERN (grep -E) in STREAM (out or err; "-" skips
# the check).  Leaves the output in $tmp/out and $tmp/err.
check() {
    local name=$1 want=$2 stream=$3 pat=$4
    shift 5
    "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
    local rc=$?
    local ok=1
    [ "$rc" -eq "$want" ] || ok=0
    if [ "$stream" != "-" ] && ! grep -Eq -- "$pat" "$tmp/$stream"; then ok=0; fi
    if [ $ok -eq 1 ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL $name: want exit $want and /$pat/ in $stream; got exit $rc"
        sed 's/^/    out: /' "$tmp/out" | head -5
        sed 's/^/    err: /' "$tmp/err" | head -5
    fi
}

# expect NAME WHAT COMMAND...: one more case that passes when COMMAND
# succeeds; WHAT says what failed otherwise.
expect() {
    local name=$1 what=$2
    shift 2
    if "$@"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL $name: $what"
    fi
}

# json_check NAME PYTHON_EXPR: evaluate EXPR with d = the JSON that the last
# check left in $tmp/out.
json_check() {
    local name=$1 expr=$2
    if python3 -c "import json, sys; d = json.load(open(sys.argv[1])); sys.exit(0 if ($expr) else 1)" "$tmp/out" 2>"$tmp/pyerr"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL $name: $expr"
        head -c 600 "$tmp/out" | sed 's/^/    out: /'
        sed 's/^/    py: /' "$tmp/pyerr" | tail -2
    fi
}

# skip N REASON: N cases (N > 0) not run here; prints "skip: REASON" (with
# "(N cases)" after it when N > 1).
skip() {
    local n=$1
    shift
    skipped=$((skipped + n))
    if [ "$n" -gt 1 ]; then
        echo "skip: $* ($n cases)"
    else
        echo "skip: $*"
    fi
}

# bad_files WHAT CASES: set bad_list to the files of $vec/bad/*.json to
# run WHAT on: all of them, or under FT_SLOW the first 3 (every bad file
# fails in the problem loader, which each command shares, and
# tools/check-vectors runs every one through it under the slow runners too);
# the others are skipped with a line, CASES cases each.
bad_files() {
    bad_list=("$vec"/bad/*.json)
    local n=${#bad_list[@]}
    if [ "$slow" = 1 ] && [ "$n" -gt 3 ]; then
        skip $(((n - 3) * $2)) "FT_SLOW: $1 on $((n - 3)) of the $n files of bad/ left out (tools/check-vectors runs each one through the same loader)"
        bad_list=("${bad_list[@]:0:3}")
    fi
}

# finish LABEL: print "LABEL: N passed, M failed" (", K skipped" after it
# when K > 0) and exit 0 only if none failed.
finish() {
    if [ "$skipped" -gt 0 ]; then
        echo "$1: $pass passed, $fail failed, $skipped skipped"
    else
        echo "$1: $pass passed, $fail failed"
    fi
    [ "$fail" -eq 0 ]
    exit
}

# group_alive PGID: whether a process of group PGID lives (a zombie, dead
# but not yet reaped, does not count)
group_alive() {
    local g=$1 f st rest state pgrp
    for f in /proc/[0-9]*/stat; do
        read -r st <"$f" 2>/dev/null || continue
        rest=${st##*) }   # state ppid pgrp ...
        read -r state _ pgrp _ <<<"$rest"
        [ "$pgrp" = "$g" ] && [ "$state" != Z ] && return 0
    done
    return 1
}
