#!/usr/bin/env bash
# test_slurm_cluster.sh - `fusetile sweep submit|status|gather` on a real single-node Slurm cluster (tests/slurm/cluster.sh): the acceptance scenario of tests/slurm/acceptance.sh, then that no daemon of the cluster is left running.
# usage: test_slurm_cluster.sh FUSETILE VECTORS_DIR
# Runs in plain `make check` only (skipped under FT_RUNNER or FT_SLOW: the
# sanitizer and valgrind passes would only slow the daemons' scenario down),
# and skips (one "skip:" line, counted as one skipped case) where the
# cluster cannot start (not root, Slurm or munge not installed:
# `apt-get install slurm-wlm munge`).
set -u
bin=${1:?usage: test_slurm_cluster.sh FUSETILE VECTORS_DIR}
. "$(dirname "$0")/lib.sh"
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
here=$(cd "$(dirname "$0")/../slurm" && pwd)

if [ -n "${FT_RUNNER:-}" ] || [ "${FT_SLOW:-0}" = 1 ]; then
    skip 1 "the Slurm cluster runs in plain 'make check' only (FT_RUNNER or FT_SLOW is set)"
    finish "slurm cluster"
fi
if ! command -v sqlite3 >/dev/null 2>&1; then
    skip 1 "the Slurm cluster: no sqlite3 program (install sqlite3)"
    finish "slurm cluster"
fi

export FT_SLURM_DIR_FILE=$tmp/cluster.dir
# 600 s against a hang: the scenario takes about 70 s alone, and make check
# runs it beside other tests (240 s was once reached on a loaded machine)
t0=$SECONDS
FT_SLURM_TIMEOUT=${FT_SLURM_TIMEOUT:-600} bash "$here/cluster.sh" run bash "$here/acceptance.sh" "$bin" >"$tmp/cluster.out" 2>&1
rc=$?
if [ $rc -eq 77 ]; then
    why=$(sed -n 's/^slurm cluster: skipped: //p' "$tmp/cluster.out" | head -n 1)
    skip 1 "the Slurm cluster: ${why:-cluster.sh exited 77 without saying why}"
    finish "slurm cluster"
fi
cat "$tmp/cluster.out"
echo "slurm cluster: $((SECONDS - t0)) s with the cluster up"
# the scenario's own counts, then this script's
summary=$(grep '^slurm acceptance: [0-9]* passed, [0-9]* failed$' "$tmp/cluster.out" | tail -n 1)
if [ -n "$summary" ]; then
    p=${summary#slurm acceptance: }
    pass=$((pass + ${p%% passed*}))
    f=${p#* passed, }
    fail=$((fail + ${f%% failed}))
else
    fail=$((fail + 1))
    echo "FAIL acceptance: no summary line (exit $rc)"
fi
expect cluster-exit "cluster.sh exited $rc" test "$rc" -eq 0

# nothing of the cluster is left: no process names its directory
dir=$(cat "$FT_SLURM_DIR_FILE" 2>/dev/null)
leftover() {
    local p
    [ -n "$dir" ] || return 1
    for p in /proc/[0-9]*; do
        if tr '\0' ' ' 2>/dev/null <"$p/cmdline" | grep -qF "$dir"; then
            return 0
        fi
        if tr '\0' '\n' 2>/dev/null <"$p/environ" | grep -qxF "SLURM_CONF=$dir/slurm.conf"; then
            return 0
        fi
    done
    return 1
}
expect cluster-dir "no cluster directory recorded" test -n "$dir"
expect cluster-stopped "a process of the cluster ($dir) is still running" eval '! leftover'
expect cluster-removed "the cluster's directory $dir is still there" test ! -e "$dir"

finish "slurm cluster"
