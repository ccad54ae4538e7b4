# lib.sh - shared helpers of the command-line test scripts (sourced, not run).
# After sourcing: $tmp is a scratch directory removed at exit, and pass/fail
# count the cases.

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

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

# finish LABEL: print "LABEL: N passed, M failed" and exit 0 only if none failed.
finish() {
    echo "$1: $pass passed, $fail failed"
    [ "$fail" -eq 0 ]
    exit
}
