#!/usr/bin/env bash
# test_python.sh - the Python binding (python/fusetile): its unittest suite (tests/python/test_binding*.py) on the build tree, and `make install DESTDIR=...` followed by `import fusetile` from the installed package.
# usage: test_python.sh FUSETILE VECTORS_DIR
# Environment (make check sets it): FT_PYTHON, the Python the binding is
# built for (empty: skipped, FT_PYTHON_SKIP says why); FT_BUILDDIR; FT_MAKE;
# FT_PYTHONDIR, the install directory of the package ($(pythondir)).
# Skipped under FT_RUNNER (valgrind): the tests run Python, not fusetile.
set -u
bin=${1:?usage: test_python.sh FUSETILE VECTORS_DIR}
vec=${2:?usage: test_python.sh FUSETILE VECTORS_DIR}
. "$(dirname "$0")/lib.sh"
src=$(cd "$vec/../.." && pwd)
vec=$(cd "$vec" && pwd)
py=${FT_PYTHON:-}
build=${FT_BUILDDIR:-$(cd "$(dirname "$bin")" && pwd)}

if [ -z "$py" ]; then
    echo "python: skipped: ${FT_PYTHON_SKIP:-FT_PYTHON is not set (run through make check)}"
    finish python
fi
if [ -n "${FT_RUNNER:-}" ]; then
    echo "python: skipped under FT_RUNNER ($FT_RUNNER): make check runs the binding's tests"
    finish python
fi

# --- the unittest suite on the build tree: its "Ran N tests" and failures
# become this script's counts
PYTHONPATH="$build/python" FT_SRCDIR="$src" "$py" -m unittest discover -s "$src/tests/python" -p 'test_binding*.py' \
    >"$tmp/unittest.out" 2>&1
rc=$?
cat "$tmp/unittest.out"
ran=$(sed -n 's/^Ran \([0-9][0-9]*\) tests\{0,1\} in .*/\1/p' "$tmp/unittest.out" | tail -n 1)
bad=$(sed -n 's/^FAILED (\(.*\))$/\1/p' "$tmp/unittest.out" | tr ',' '\n' |
      sed -n 's/^ *\(failures\|errors\|unexpected successes\)=\([0-9]*\)$/\2/p' | awk '{ s += $1 } END { print s + 0 }')
skipped=$(sed -n 's/^\(OK\|FAILED\) (.*skipped=\([0-9]*\).*)$/\2/p' "$tmp/unittest.out" | tail -n 1)
if [ -z "$ran" ]; then
    fail=$((fail + 1))
    echo "FAIL unittest: no \"Ran N tests\" line (exit $rc)"
else
    pass=$((pass + ran - bad - ${skipped:-0}))
    fail=$((fail + bad))
    if [ "$rc" -ne 0 ] && [ "$bad" -eq 0 ]; then
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
fi

finish python
