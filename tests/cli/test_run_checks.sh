#!/usr/bin/env bash
# test_run_checks.sh - the tally of tests/run-checks (what `make check` ends with), on stand-in test programs in a scratch source tree: cmocka-like binaries that pass, fail and skip, scripts that pass, fail, crash and skip (through lib.sh's skip and finish, and with a bare "skip:" line), and the Python suites skipped as a whole; the closing "check: N passed, M failed, K skipped", the "skipped: NAME: REASON" list, the exit status and FT_TALLY; with FT_JOBS=2, the items that check wall-time limits run alone after the others (not under FT_SLOW=1); under FT_RUNNER, each distinct run of the program under the runner once, a repeat without it (FT_RUNNER_ALL=1: all under it).
# usage: test_run_checks.sh FUSETILE VECTORS_DIR   (FUSETILE is not run)
set -u
. "$(dirname "$0")/lib.sh"
src=$(cd "$(dirname "$0")/../.." && pwd)

# The scratch source tree: run-checks runs its tools/check-vectors and each
# tests/cli/test_*.sh, and counts its tests/python suites' test methods.
fake=$tmp/src
mkdir -p "$fake/tools" "$fake/tests/cli" "$fake/tests/vectors" "$fake/tests/python" "$tmp/unit"
cp "$src/tests/cli/lib.sh" "$fake/tests/cli/lib.sh"
printf '#!/bin/sh\necho "2 passed, 0 failed"\n' >"$fake/tools/check-vectors"
printf 'import unittest\nclass T(unittest.TestCase):\n    def test_a(self): pass\n    def test_b(self): pass\n' >"$fake/tests/python/test_import_fake.py"
printf 'import unittest\nclass T(unittest.TestCase):\n    def test_m(self): pass\n' >"$fake/tests/python/test_measure_fake.py"
cat >"$fake/tests/cli/test_a_pass.sh" <<'EOF'
echo "pass: 4 passed, 0 failed"
EOF
cat >"$fake/tests/cli/test_b_fail.sh" <<'EOF'
echo "FAIL something"
echo "fail: 1 passed, 2 failed"
exit 1
EOF
cat >"$fake/tests/cli/test_c_skip.sh" <<'EOF'
. "$(dirname "$0")/lib.sh"
expect one "true failed" true
skip 3 "no frobnicator here"
finish "two words"
EOF
cat >"$fake/tests/cli/test_d_crash.sh" <<'EOF'
echo "half way"
exit 3
EOF
cat >"$fake/tests/cli/test_e_bare.sh" <<'EOF'
echo "skip: the whole suite: no widget"
echo "bare: 0 passed, 0 failed"
EOF
# cmocka's output, as CMOCKA_MESSAGE_OUTPUT=stdout prints it
cat >"$tmp/unit/test_pass" <<'EOF'
#!/bin/sh
printf '[==========] 3 test(s) run.\n[  PASSED  ] 3 test(s).\n'
EOF
cat >"$tmp/unit/test_skip" <<'EOF'
#!/bin/sh
printf '[ RUN      ] t_skip\n[  SKIPPED ] t_skip\n[==========] 2 test(s) run.\n[  PASSED  ] 1 test(s).\n'
printf '[  SKIPPED ] 1 test(s), listed below:\n[  SKIPPED ] t_skip\n\n 1 SKIPPED TEST(S)\n'
EOF
cat >"$tmp/unit/test_fail" <<'EOF'
#!/bin/sh
printf '[==========] 2 test(s) run.\n[  PASSED  ] 1 test(s).\n[  FAILED  ] 1 test(s), listed below:\n[  FAILED  ] t_bad\n'
exit 1
EOF
chmod +x "$tmp/unit/"*

# runchecks UNIT...: run-checks on the scratch tree, alone (none of the
# environment of the run-checks that runs this script), output in $tmp/out
runchecks() {
    (cd "$tmp" && env -u FT_RUNNER -u FT_SLOW -u FT_JOBS -u FT_TALLY -u FT_PYTHON_TORCH -u FT_PYTHON3 \
        ${tally:+FT_TALLY="$tally"} sh "$src/tests/run-checks" "$fake" "$tmp/fusetile" "$@") >"$tmp/out" 2>&1
}
# last N: the last N lines of the output
last() { tail -n "$1" "$tmp/out"; }

# --- everything: 13 passed (3 + 1 + 1 unit, 2 vectors, 4 + 1 + 1 scripts),
# 4 failed (unit 1, script 2, the crash 1), 8 skipped (unit 1, lib.sh's 3,
# the bare line's 1, the importer's 2 and the measuring script's 1 methods)
tally=$tmp/tally
runchecks "$tmp/unit/test_pass" "$tmp/unit/test_skip" "$tmp/unit/test_fail"
rc=$?
expect all-exit "exit $rc, want 1 (failures)" test "$rc" -eq 1
expect all-last "last line: $(last 1)" test "$(last 1)" = "check: 13 passed, 4 failed, 8 skipped"
expect all-ci-form "the last line is not 'WORD: N passed, N failed, N skipped'" \
    eval 'last 1 | grep -Eqx "[A-Za-z-]+: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped"'
expect all-failed "failed line: $(last 2 | head -n 1)" \
    test "$(last 2 | head -n 1)" = "failed: $tmp/unit/test_fail tests/cli/test_b_fail.sh tests/cli/test_d_crash.sh"
cat >"$tmp/want" <<EOF
skipped: $tmp/unit/test_skip: t_skip: skipped by the test (cmocka skip())
skipped: tests/cli/test_c_skip.sh: no frobnicator here (3 cases)
skipped: tests/cli/test_e_bare.sh: the whole suite: no widget
skipped: tests/python: the importer's tests: no Python 3 with torch (install python3-torch) (2 tests)
skipped: tests/python/test_measure_gpu.py: the measuring script's tests: no Python 3 (1 test)
EOF
grep '^skipped: ' "$tmp/out" >"$tmp/got"
expect all-skip-list "the skip list differs: $(diff "$tmp/want" "$tmp/got" | tr '\n' ' ')" cmp -s "$tmp/want" "$tmp/got"
expect all-skip-list-place "the skip list is not just before the failed line" \
    eval 'last 7 | head -n 5 | cmp -s - "$tmp/want"'
expect all-script-line "lib.sh's closing line" grep -qx 'two words: 1 passed, 0 failed, 3 skipped' "$tmp/out"
expect all-crash "no exit status line for the crash" grep -qx 'tests/cli/test_d_crash.sh: exit status 3' "$tmp/out"
expect all-tally "FT_TALLY holds '$(cat "$tally" 2>/dev/null)'" test "$(cat "$tally" 2>/dev/null)" = "13 4 8"

# --- no failures: skips alone do not fail; FT_TALLY appends
rm "$fake/tests/cli/test_b_fail.sh" "$fake/tests/cli/test_d_crash.sh"
runchecks "$tmp/unit/test_pass" "$tmp/unit/test_skip"
rc=$?
expect skips-exit "exit $rc, want 0 (skips only)" test "$rc" -eq 0
expect skips-last "last line: $(last 1)" test "$(last 1)" = "check: 11 passed, 0 failed, 8 skipped"
expect skips-no-failed "a failed line" eval '! grep -q "^failed:" "$tmp/out"'
expect skips-tally "FT_TALLY holds '$(tr '\n' '|' <"$tally")'" test "$(tr '\n' '|' <"$tally")" = "13 4 8|11 0 8|"
# check-all's and .ci/run's sum of it
expect skips-sum "the sum: $(awk '{ p += $1; f += $2; s += $3 } END { printf "%d %d %d", p, f, s }' "$tally")" \
    test "$(awk '{ p += $1; f += $2; s += $3 } END { printf "%d %d %d", p, f, s }' "$tally")" = "24 4 16"

# --- nothing skipped: "0 skipped" and no list
rm "$fake/tests/cli/test_c_skip.sh" "$fake/tests/cli/test_e_bare.sh"
tally=
runchecks "$tmp/unit/test_pass"
rc=$?
# (the Python suites still skip: no Python is given)
expect none-exit "exit $rc, want 0" test "$rc" -eq 0
expect none-last "last line: $(last 1)" test "$(last 1)" = "check: 9 passed, 0 failed, 3 skipped"
rm "$fake"/tests/python/test_*.py
printf '#!/bin/sh\necho "measure: 1 passed, 0 failed"\n' >"$tmp/python3"
chmod +x "$tmp/python3"
(cd "$tmp" && env -u FT_RUNNER -u FT_SLOW -u FT_JOBS -u FT_TALLY FT_PYTHON_TORCH="$tmp/python3" \
    sh "$src/tests/run-checks" "$fake" "$tmp/fusetile" "$tmp/unit/test_pass") >"$tmp/out" 2>&1
rc=$?
expect none-python-exit "exit $rc, want 0" test "$rc" -eq 0
expect none-python-last "last line: $(last 1)" test "$(last 1)" = "check: 11 passed, 0 failed, 0 skipped"
expect none-python-no-list "a skipped line" eval '! grep -q "^skipped:" "$tmp/out"'

# --- FT_JOBS=2: the timed items (here test_schedule.sh) run alone, after
# the others, which share the cores; under FT_SLOW=1 none is timed.  Each
# item logs "start NAME" and "end NAME"; test_x and test_y wait (up to
# 10 s) until both have started, which they only do at once.
rm -f "$fake"/tests/cli/test_*.sh
for name in test_schedule test_x test_y; do
    cat >"$fake/tests/cli/$name.sh" <<EOF
echo "start $name" >>"$tmp/order"
touch "$tmp/here-$name"
i=0
while [ $name != test_schedule ] && { [ ! -e "$tmp/here-test_x" ] || [ ! -e "$tmp/here-test_y" ]; }; do
    i=\$((i + 1)); [ \$i -gt 100 ] && break; sleep 0.1
done
echo "end $name" >>"$tmp/order"
echo "$name: 1 passed, 0 failed"
EOF
done
# order SLOW: run-checks with FT_JOBS=2 and FT_SLOW=SLOW; the log, one line
order() {
    rm -f "$tmp/order" "$tmp"/here-*
    (cd "$tmp" && env -u FT_RUNNER -u FT_TALLY -u FT_PYTHON_TORCH -u FT_PYTHON3 FT_JOBS=2 FT_SLOW=$1 \
        sh "$src/tests/run-checks" "$fake" "$tmp/fusetile") >"$tmp/out" 2>&1
    echo "exit $?: $(tr '\n' ',' <"$tmp/order")"
}
got=$(order 0)
expect jobs-timed-alone "want the shared two at once, then test_schedule alone: $got" \
    eval 'case "$got" in "exit 0: start test_"[xy]",start test_"[xy]",end test_"[xy]",end test_"[xy]",start test_schedule,end test_schedule,") true ;; *) false ;; esac'
expect jobs-in-order "the items are not printed in order" \
    eval 'test "$(sed -n "s|^== tests/cli/||p" "$tmp/out" | tr "\n" " ")" = "test_schedule.sh test_x.sh test_y.sh "'
expect jobs-timed-last "last line: $(last 1)" test "$(last 1)" = "check: 5 passed, 0 failed, 2 skipped"
got=$(order 1)
# (the three start in any order, test_schedule among the shared: it starts
# before test_x or test_y ends, where the timed one would start after both)
expect jobs-slow-shared "want test_schedule among the shared under FT_SLOW=1 (nothing timed): $got" \
    eval 'case "$got" in "exit 0: "*"start test_schedule,"*"end test_"[xy]*) true ;; *) false ;; esac'

# --- FT_RUNNER: the scripts run the program through a wrapper that runs
# each distinct run under the runner once (the same words but for their
# directories, the same file contents, standard input /dev/null); a repeat
# runs without it, and FT_RUNNER_ALL=1 runs every one under it.  The
# runner logs each run it gets; the program echoes its words.
rm -f "$fake"/tests/cli/test_*.sh
printf '#!/bin/sh\necho "$*" >>"%s/runner.log"\nexec "$@"\n' "$tmp" >"$tmp/runner"
printf '#!/bin/sh\necho "ran $*"\n' >"$tmp/fusetile"
chmod +x "$tmp/runner" "$tmp/fusetile"
mkdir -p "$tmp/d1" "$tmp/d2"
echo one >"$tmp/d1/f.json"; echo one >"$tmp/d2/f.json"; echo two >"$tmp/d1/g.json"
cat >"$fake/tests/cli/test_w.sh" <<EOF
for a in "$tmp/d1/f.json" "$tmp/d2/f.json" "$tmp/d1/g.json" "$tmp/d1/f.json"; do
    "\$1" evaluate "\$a" </dev/null >>"$tmp/w.out"
done
"\$1" evaluate --seed 2 "$tmp/d1/f.json" </dev/null >>"$tmp/w.out"
echo x | "\$1" evaluate "$tmp/d1/f.json" >>"$tmp/w.out"
echo "w: 1 passed, 0 failed"
EOF
# wrapped ALL: run-checks under the runner; "RUNS REPEATS OUTPUT_LINES"
wrapped() {
    rm -f "$tmp/runner.log" "$tmp/w.out"
    (cd "$tmp" && env -u FT_SLOW -u FT_JOBS -u FT_TALLY -u FT_PYTHON_TORCH -u FT_PYTHON3 FT_RUNNER="$tmp/runner" FT_RUNNER_ALL=$1 \
        sh "$src/tests/run-checks" "$fake" "$tmp/fusetile") >"$tmp/out" 2>&1
    echo "$(grep -c ' evaluate ' "$tmp/runner.log") $(sed -n 's/^runner: .*; \([0-9]*\) repeats of them without it$/\1/p' "$tmp/out") $(wc -l <"$tmp/w.out")"
}
# d1/f and d2/f (the same contents) once; g; d1/f again a repeat; --seed 2
# another run; the piped input always under the runner
got=$(wrapped 0)
expect runner-once "want 4 runs under the runner, 2 repeats, 6 outputs: $got" test "$got" = "4 2 6"
expect runner-line "the runner's summary: $(grep '^runner:' "$tmp/out")" grep -q "^runner: 4 runs of the program under $tmp/runner; 2 repeats of them without it$" "$tmp/out"
got=$(wrapped 1)
expect runner-all "want 6 runs under the runner with FT_RUNNER_ALL=1: $got" test "$got" = "6 0 6"

finish run_checks
