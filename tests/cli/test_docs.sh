#!/usr/bin/env bash
# test_docs.sh - the front page and the man page: README.md at most 15 000 bytes, its quick start's two commands (the commands after the build run, with shorter time limits), man/fusetile.1 naming every command `fusetile --help` lists and rendering without a groff warning.
# usage: test_docs.sh FUSETILE VECTORS_DIR
# SRCDIR is two levels above VECTORS_DIR.  The rendering check needs groff
# (Debian's groff-base); without it that check is skipped with one line.
set -u
bin=${1:?usage: test_docs.sh FUSETILE VECTORS_DIR}
vec=${2:?usage: test_docs.sh FUSETILE VECTORS_DIR}
. "$(dirname "$0")/lib.sh"
src=$(cd "$vec/../.." && pwd)
readme=$src/README.md
man=$src/man/fusetile.1

# README: a front page; the reference lives in docs/ (docs/CLI.md).
bytes=$(wc -c <"$readme")
expect readme-size "README.md is $bytes bytes, over 15000: move reference text to docs/" test "$bytes" -le 15000
expect readme-quick-start "README.md lost the quick start's build command" \
    grep -q '&& ./configure && make && ./fusetile schedule examples/resnet18.problem.json' "$readme"
expect readme-check-all "README.md lost 'make check-all'" grep -qx 'make check-all' "$readme"

# The quick start's commands after the build run as written, from a
# directory holding only ./fusetile and examples/ (the search's time limit
# cut to 2 s, the report's to 1 s), and write what the README says.
qs=$(grep -o '&& make && \./fusetile schedule .*' "$readme" | head -1 | sed 's/^&& make && //')
qs=${qs//--time-limit 20/--time-limit 2}
qs=${qs/.\/fusetile report /.\/fusetile report --time-limit 1 }
mkdir "$tmp/qs"
ln -s "$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")" "$tmp/qs/fusetile"
ln -s "$src/examples" "$tmp/qs/examples"
expect readme-quick-start-runs "the quick start's commands failed: $qs" \
    env -C "$tmp/qs" bash -c "{ $qs; } >/dev/null 2>&1"
for f in resnet18.schedule.json resnet18.trace.json resnet18.report.html; do
    expect "readme-quick-start-$f" "the quick start wrote no $f" test -s "$tmp/qs/$f"
done

# The man page's SYNOPSIS names every command of `fusetile --help`.
check help 0 out '^commands:' -- "$bin" --help
cmds=$(sed -n 's/^  fusetile \([a-z][a-z]*\).*/\1/p' "$tmp/out")
expect help-commands "no command in 'fusetile --help'" test -n "$cmds"
for c in $cmds; do
    expect "man-$c" "man/fusetile.1 has no SYNOPSIS line for '$c'" grep -q "^\\\\fBfusetile $c" "$man"
done

if command -v groff >/dev/null 2>&1; then
    check man-render 0 - '' -- groff -man -Tutf8 -ww -z "$man"
    expect man-no-warnings "groff warns on man/fusetile.1: $(head -c 300 "$tmp/err")" test ! -s "$tmp/err"
else
    echo "man page rendering skipped: no groff (install groff-base)"
fi

finish docs
