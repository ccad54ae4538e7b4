#!/usr/bin/env bash
# test_layers.sh - the library's layering (docs/ARCHITECTURE.md): tools/check-layers passes on the source tree and names the file, line and rule of an include against the layering in a copy made wrong; libfusetile.so exports no internal ft__ function.
# usage: test_layers.sh FUSETILE VECTORS_DIR
# SRCDIR is two levels above VECTORS_DIR; the shared library is looked for in
# FT_BUILDDIR (make check sets it), else next to FUSETILE.
set -u
bin=${1:?usage: test_layers.sh FUSETILE VECTORS_DIR}
vec=${2:?usage: test_layers.sh FUSETILE VECTORS_DIR}
. "$(dirname "$0")/lib.sh"
src=$(cd "$vec/../.." && pwd)
layers=$src/tools/check-layers
py=${FT_PYTHON3:-python3}

# the source tree keeps the layering
check tree 0 out 'every include within the layering$' -- "$py" "$layers" "$src"
check tree-graph 0 out '^  search   -> ' -- "$py" "$layers" "$src"

# a copy with one include against it: the cost part including the search's
# header, a client including a private header, a file outside the parts
mkdir -p "$tmp/t"
cp -R "$src/sched" "$src/include" "$src/cli" "$tmp/t/"
printf '#include "search/search.h"\n' >>"$tmp/t/sched/cost/cost.c"
check up-include 1 out '^sched/cost/cost\.c:[0-9]+: includes search/search\.h: cost may include only core of the other parts$' \
    -- "$py" "$layers" "$tmp/t"
check up-count 1 out '^check-layers: 1 include\(s\) against the layering' -- "$py" "$layers" "$tmp/t"
cp "$src/sched/cost/cost.c" "$tmp/t/sched/cost/cost.c"
printf '#include "core.h"\n' >>"$tmp/t/cli/main.c"
check client-private 1 out '^cli/main\.c:[0-9]+: includes core\.h: a private header of the library' -- "$py" "$layers" "$tmp/t"
cp "$src/cli/main.c" "$tmp/t/cli/main.c"
printf '/* x.c - a file outside the parts */\n' >"$tmp/t/sched/x.c"
check flat-file 1 out '^sched/x\.c:1: includes -: a source of sched/ lives in one of its parts' -- "$py" "$layers" "$tmp/t"
check no-tree 2 err 'no sched/ folder here' -- "$py" "$layers" "$tmp/nowhere"

# the shared library exports the public API only
so=${FT_BUILDDIR:-$(dirname "$bin")}/libfusetile.so
if [ -f "$so" ] && command -v nm >/dev/null 2>&1; then
    nm -D --defined-only "$so" >"$tmp/nm" 2>/dev/null
    expect so-public "libfusetile.so exports no ft_ function at all" grep -q ' T ft_problem_load$' "$tmp/nm"
    expect so-no-internal "libfusetile.so exports internal functions: $(grep -c ' ft__' "$tmp/nm")" \
        sh -c "! grep -q ' ft__' '$tmp/nm'"
else
    echo "skip: libfusetile.so export check: no $so or no nm"
fi

finish layers
