#!/usr/bin/env bash
# test_python.sh - the Python binding (python/fusetile): its unittest suite (tests/python/test_binding*.py) on the build tree, and `make install DESTDIR=...` followed by `import fusetile` from the installed package.
# usage: test_python.sh FUSETILE VECTORS_DIR
# Environment (make check sets it): FT_PYTHON, the Python the binding is
# built for (empty: skipped, FT_PYTHON_SKIP says why); FT_BUILDDIR; FT_MAKE;
# FT_PYTHONDIR, the install directory of the package ($(pythondir)).
# Skipped under FT_RUNNER (valgrind): the tests run Python, not fusetile.
# A whole skip counts the suite's test methods and the install cases.
set -u
bin=${1:?usage: test_python.sh FUSETILE VECTORS_DIR}
vec=${2:?usage: test_python.sh FUSETILE VECTORS_DIR}
. "$(dirname "$0")/lib.sh"
src=$(cd "$vec/../.." && pwd)
vec=$(cd "$vec" && pwd)
py=${FT_PYTHON:-}
build=${FT_BUILDDIR:-$(cd "$(dirname "$bin")" && pwd)}

# skip_all REASON: skip the whole script, counted as the suite's test
# methods and the install cases below
skip_all() {
    local n
    n=$(cat "$src"/tests/python/test_binding*.py | grep -c '^    def test_')
    n=$((n + $(grep -Ec '^    (check|expect) (un)?install' "$0")))
    skip "$n" "the binding's tests: $1"
    finish python
}
if [ -z "$py" ]; then
    skip_all "${FT_PYTHON_SKIP:-FT_PYTHON is not set (run through make check)}"
fi
if [ -n "${FT_RUNNER:-}" ]; then
    skip_all "they run in plain 'make check', not under FT_RUNNER ($FT_RUNNER)"
fi

# --- the unittest suite on the build tree (tests/python/run.py --suite
# binding): its closing line's counts become this script's, and its "skip:"
# lines (one a reason) pass through
PYTHONPATH="$build/python" FT_SRCDIR="$src" "$py" "$src/tests/python/run.py" --suite binding \
    >"$tmp/unittest.out" 2>&1
rc=$?
cat "$tmp/unittest.out"
counts=$(tail -n 1 "$tmp/unittest.out" |
         sed -n 's/^binding: \([0-9][0-9]*\) passed, \([0-9][0-9]*\) failed\(, \([0-9][0-9]*\) skipped\)\{0,1\}$/\1 \2 \4/p')
if [ -z "$counts" ]; then
    fail=$((fail + 1))
    echo "FAIL unittest: no \"binding: N passed, M failed\" line (exit $rc)"
else
    set -- $counts
    pass=$((pass + $1))
    fail=$((fail + $2))
    skipped=$((skipped + ${3:-0}))
    if [ "$rc" -ne 0 ] && [ "$2" -eq 0 ]; then
        fail=$((fail + 1))
        echo "FAIL unittest: exit status $rc"
    fi
fi

# --- make install into a scratch DESTDIR: the installed package imports
# (and not the build tree's) and works
if [ -n "${FT_MAKE:-}" ] && [ -n "${FT_PYTHONDIR:-}" ]; then
    inst=$tmp/inst
    check install 0 - '' -- env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL $FT_MAKE -s -C "$build" install DESTDIR="$inst"
    pydir=$inst$FT_PYTHONDIR
    expect install-files "the package is in $FT_PYTHONDIR/fusetile" test -f "$pydir/fusetile/__init__.py"
    check install-import 0 out "^ok $pydir/fusetile/__init__.py 6553.6 encoder.layer1.fc1\+act\+fc2$" -- \
        env -C / PYTHONPATH="$pydir" "$py" -c "import fusetile
p = fusetile.load_problem('$vec/N-named-mlp.problem.json')
r = fusetile.evaluate('$vec/ex1A.problem.json', '$vec/ex1A.solution.json')
print('ok', fusetile.__file__, r['total'], p.label([0, 1, 2]))"
    check install-uninstall 0 - '' -- env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL $FT_MAKE -s -C "$build" uninstall DESTDIR="$inst"
    expect uninstall-gone "uninstall removes the package" test ! -e "$pydir/fusetile"
else
    skip 5 "make install of the package: FT_MAKE or FT_PYTHONDIR is not set (run through make check)"
fi

finish python
