#!/usr/bin/env bash
# test_fuzz.sh - replay every fuzz harness (fuzz/fuzz_NAME.c, built as
# $FT_BUILDDIR/fuzz/replay-NAME by make check) on its seed corpus
# (fuzz/corpus/NAME) and on the inputs that once crashed it
# (fuzz/regress/NAME): each replay passes when the harness finds nothing
# (no abort, sanitizer report or, under FT_RUNNER=valgrind, memory error).
# Also checks fuzz/run's and the replay driver's own error paths.
# usage: test_fuzz.sh FUSETILE VECTORS_DIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/lib.sh"
build=${FT_BUILDDIR:-$(cd "$(dirname "$1")" && pwd)}
runner=${FT_RUNNER:-}

n=0
for name in problem schedule target sweep tcl graph; do
    prog=$build/fuzz/replay-$name
    if [ ! -x "$prog" ]; then
        echo "fuzz $name: no $prog (not built here: see FUZZ_NAMES in the Makefile)"
        continue
    fi
    n=$((n + 1))
    # the graph harness runs the importer's Python reader in CPython:
    # valgrind sees only the interpreter there (73 of the script's 87 s
    # under valgrind); the sanitizer build replays it, as does the plain one
    case $runner in
        *valgrind*)
            if [ "$name" = graph ]; then
                skip 1 "replay-graph under valgrind: the harness is CPython running the importer's reader (the plain and sanitizer layers replay it)"
                continue
            fi ;;
    esac
    dirs=("$root/fuzz/corpus/$name")
    [ -d "$root/fuzz/regress/$name" ] && dirs+=("$root/fuzz/regress/$name")
    check "replay-$name" 0 out '^replay: [0-9]+ inputs, no finding$' -- $runner "$prog" "${dirs[@]}"
    cat "$tmp/out"
done
expect harnesses "no harness built" test "$n" -ge 4

# the replay driver: a missing input is an error; a single file replays
if [ -x "$build/fuzz/replay-problem" ]; then
    check replay-missing 1 err 'replay: .*nosuch: No such file or directory' -- "$build/fuzz/replay-problem" "$tmp/nosuch"
fi
if [ -x "$build/fuzz/replay-schedule" ]; then
    { cat "$2/ex1A.problem.json"; printf '\0'; cat "$2/ex1A.solution.json"; } >"$tmp/pair"
    check replay-pair 0 out '^replay: 1 inputs, no finding$' -- "$build/fuzz/replay-schedule" "$tmp/pair"
fi

# what the regressions found, through the command: a problem whose base
# cost overflows the latency is one clear error, not a total of nan
reg=$root/fuzz/regress/schedule/overflowing-base-cost
python3 -c 'import sys; p, s = open(sys.argv[1], "rb").read().split(b"\0", 1); open(sys.argv[2], "wb").write(p); open(sys.argv[3], "wb").write(s)' \
    "$reg" "$tmp/ob.problem.json" "$tmp/ob.schedule.json"
check overflow-evaluate 2 err 'ob.schedule.json: subgraph 3: latency is -?nan, not a finite number: a base cost, a size or the bandwidth of the problem is out of range$' \
    -- "$1" evaluate "$tmp/ob.problem.json" "$tmp/ob.schedule.json"

# fuzz/run: its usage errors
check run-usage 2 err '^usage: run SRCDIR BUILDDIR SECONDS NAME' -- sh "$root/fuzz/run" "$root"
check run-seconds 2 err "FUZZ_SECONDS must be a whole number of seconds, at least 1, not 'x'" -- sh "$root/fuzz/run" "$root" "$build" x problem

finish fuzz
