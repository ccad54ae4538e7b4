#!/usr/bin/env bash
# cluster.sh - a throwaway single-node Slurm cluster (munged, slurmctld, slurmd on this host, all state under one temporary directory) for the Slurm tests: starts it, runs a command against it, stops every daemon it started.
#
# usage: cluster.sh run COMMAND [ARGS...]
#        cluster.sh check
#
# `run` generates a munge key, a slurm.conf (one node named after this host
# with its real CPU count, one default partition, proctrack/linuxproc,
# task/none, no cgroups, no accounting, SlurmUser=root, free ports) under a
# fresh directory, starts munged, slurmctld and slurmd in the foreground
# (-D) in the background, waits until sinfo shows the node idle, then runs
# COMMAND with SLURM_CONF pointing at the cluster (and FT_SLURM_DIR at the
# directory) and exits with its status.  Whatever happens (COMMAND failing,
# a signal, a timeout) the trap cancels the cluster's jobs and stops every
# process the cluster started, by process id: the three daemons and any
# slurmstepd whose environment names this cluster's slurm.conf; the
# directory is removed.  `check` is `run` with a command that prints sinfo.
#
# When the cluster cannot start (not root, a binary missing, a daemon that
# exits or never reports the node idle) it prints one line
# "slurm cluster: skipped: REASON" on stdout and exits 77; the logs are
# kept in the line's directory only with FT_SLURM_KEEP=1.
#
# Environment:
#   FT_SLURM_TIMEOUT  seconds COMMAND may run before it is killed (default 300)
#   FT_SLURM_KEEP     1: keep the cluster's directory (logs) after the run
#   TMPDIR            where the cluster's directory is made (default /tmp)
set -u

SKIP=77

skip() {
    echo "slurm cluster: skipped: $*"
    exit $SKIP
}

# free_port N: a TCP port in 20000-59999 that nothing on 127.0.0.1 accepts
# connections on, and that is not N.
free_port() {
    local p tries=0
    while [ $tries -lt 200 ]; do
        p=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
        tries=$((tries + 1))
        [ "$p" = "${1:-0}" ] && continue
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
            echo "$p"
            return 0
        fi
    done
    return 1
}

# The processes this script started: daemons by pid; slurmstepd (which
# slurmd forks and which detaches) by its environment naming our conf.
pids=()
dir=""

stepd_pids() {
    local p
    [ -n "$dir" ] || return 0
    for p in /proc/[0-9]*; do
        [ -r "$p/environ" ] || continue
        case $(readlink "$p/exe" 2>/dev/null) in
            */slurmstepd*) ;;
            *) continue ;;
        esac
        if tr '\0' '\n' <"$p/environ" 2>/dev/null | grep -qxF "SLURM_CONF=$dir/slurm.conf"; then
            echo "${p#/proc/}"
        fi
    done
}

# alive PID...: the ones still running
alive() {
    local p
    for p in "$@"; do kill -0 "$p" 2>/dev/null && echo "$p"; done
}

stop_cluster() {
    local rc=$? p left i
    trap - EXIT INT TERM HUP
    if [ -n "$dir" ] && [ -n "${cmd_pid:-}" ]; then
        kill -TERM "$cmd_pid" 2>/dev/null
    fi
    if [ -n "$dir" ] && [ -f "$dir/slurm.conf" ] && [ ${#pids[@]} -gt 0 ]; then
        SLURM_CONF=$dir/slurm.conf timeout 10 scancel --quiet --user=root >/dev/null 2>&1
        # give the jobs' steps a few seconds to end under slurmd's control
        for i in 1 2 3 4 5 6 7 8 9 10; do
            [ -z "$(stepd_pids)" ] && break
            sleep 0.5
        done
    fi
    # slurmd first (no new steps), then the controller, then munged
    for i in 2 1 0; do
        p=${pids[$i]:-}
        [ -n "$p" ] && kill -TERM "$p" 2>/dev/null
    done
    left=$(alive "${pids[@]}" $(stepd_pids))
    for i in $(seq 1 20); do
        [ -z "$left" ] && break
        sleep 0.5
        left=$(alive $left)
    done
    for p in $left; do kill -KILL "$p" 2>/dev/null; done
    for p in $(stepd_pids); do kill -KILL "$p" 2>/dev/null; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
    if [ -n "$dir" ]; then
        if [ "${FT_SLURM_KEEP:-0}" = 1 ]; then
            echo "slurm cluster: kept $dir" >&2
        else
            rm -rf "$dir"
        fi
    fi
    exit "$rc"
}

# wait_for SECONDS COMMAND...: poll COMMAND every half second until it
# succeeds (0); 1 on timeout; COMMAND's status when it is 2 (give up)
wait_for() {
    local end=$((SECONDS + $1)) rc
    shift
    while [ $SECONDS -lt $end ]; do
        "$@"
        rc=$?
        [ $rc -eq 0 ] || [ $rc -eq 2 ] && return $rc
        sleep 0.5
    done
    return 1
}

# node_idle: sinfo reports our node idle; 2 when a daemon has exited
node_idle() {
    local s
    [ -n "$(alive "${pids[@]}")" ] && [ "$(alive "${pids[@]}" | wc -l)" -eq 3 ] || return 2
    s=$(SLURM_CONF=$dir/slurm.conf timeout 5 sinfo -h -N -n "$node" -o '%T' 2>/dev/null) || return 1
    case $s in idle*) return 0 ;; esac
    return 1
}

start_cluster() {
    [ "$(id -u)" -eq 0 ] || skip "not root (munged, slurmctld and slurmd run as root here)"
    local b
    for b in munged slurmctld slurmd slurmstepd sbatch squeue sinfo scancel timeout; do
        command -v "$b" >/dev/null 2>&1 || PATH=$PATH:/usr/sbin:/sbin command -v "$b" >/dev/null 2>&1 ||
            skip "$b not found (install the Debian packages slurm-wlm and munge)"
    done
    export PATH=$PATH:/usr/sbin:/sbin
    [ -r /dev/urandom ] || skip "no /dev/urandom for the munge key"

    dir=$(mktemp -d "${TMPDIR:-/tmp}/ftslurm.XXXXXX") || skip "cannot make a temporary directory"
    # munged wants its socket's directories searchable by all, not writable
    chmod 711 "$dir"
    mkdir -p "$dir/state" "$dir/spool" "$dir/log" "$dir/munge" || skip "cannot make directories under $dir"
    chmod 711 "$dir/munge"

    # munge: a fresh key, the socket under our directory
    dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 2>/dev/null || skip "cannot write $dir/munge/munge.key"
    chmod 400 "$dir/munge/munge.key"
    local sock=$dir/munge/munge.socket
    munged -F -f --key-file="$dir/munge/munge.key" --socket="$sock" \
        --pid-file="$dir/munge/munged.pid" --seed-file="$dir/munge/munged.seed" \
        --log-file="$dir/log/munged.log" >"$dir/log/munged.out" 2>&1 &
    pids[0]=$!
    wait_for 10 test -S "$sock" ||
        skip "munged did not start: $(tail -n 1 "$dir/log/munged.out" "$dir/log/munged.log" 2>/dev/null | grep -v '^==>' | grep . | tail -n 1)"

    node=$(hostname -s 2>/dev/null || hostname)
    [ -n "$node" ] || skip "no host name"
    local cpus ctl_port d_port mem
    cpus=$(nproc 2>/dev/null || echo 1)
    # the node's RealMemory in MiB: what slurmd -C reports, less a little
    mem=$(awk '/^MemTotal:/ { printf "%d", $2 / 1024 * 0.9 }' /proc/meminfo 2>/dev/null)
    [ -n "$mem" ] && [ "$mem" -gt 0 ] || mem=1000
    ctl_port=$(free_port) || skip "no free TCP port"
    d_port=$(free_port "$ctl_port") || skip "no free TCP port"

    cat >"$dir/slurm.conf" <<EOF
# slurm.conf - written by tests/slurm/cluster.sh: one node, this host
ClusterName=fttest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctl_port
SlurmdPort=$d_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MaxArraySize=10001
MinJobAge=300
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=2
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
EOF
    export SLURM_CONF=$dir/slurm.conf

    slurmctld -D -i -f "$dir/slurm.conf" >"$dir/log/slurmctld.out" 2>&1 &
    pids[1]=$!
    # slurmd 22.05 always loads a cgroup plugin, though proctrack/linuxproc
    # and task/none use no cgroup: let it autodetect one first (without
    # systemd, IgnoreSystemd); when slurmd exits, try cgroup/v1 and
    # cgroup/v2 by name before giving up
    local cg rc=1
    for cg in "" cgroup/v1 cgroup/v2; do
        { echo "# cgroup.conf - written by tests/slurm/cluster.sh"
          [ -n "$cg" ] && echo "CgroupPlugin=$cg"
          echo "IgnoreSystemd=yes"; } >"$dir/cgroup.conf"
        slurmd -D -N "$node" -f "$dir/slurm.conf" >>"$dir/log/slurmd.out" 2>&1 &
        pids[2]=$!
        wait_for 30 node_idle
        rc=$?
        [ $rc -eq 2 ] && kill -0 "${pids[1]}" 2>/dev/null && ! kill -0 "${pids[2]}" 2>/dev/null || break
        wait "${pids[2]}" 2>/dev/null
    done
    if [ $rc -ne 0 ]; then
        local why="" p
        for p in 1 2; do
            if ! kill -0 "${pids[$p]}" 2>/dev/null; then
                why="$( [ $p = 1 ] && echo slurmctld || echo slurmd) exited: $(grep -hiE 'error|fatal' "$dir/log/slurm"*".log" "$dir/log/slurm"*".out" 2>/dev/null | tail -n 1)"
                break
            fi
        done
        [ -n "$why" ] || why="node $node not idle after 30 s: $(timeout 5 sinfo -h -N -o '%N %T %E' 2>&1 | head -n 1)"
        skip "$why"
    fi
}

case ${1:-} in
    run)
        shift
        [ $# -ge 1 ] || { echo "usage: cluster.sh run COMMAND [ARGS...]" >&2; exit 2; }
        ;;
    check)
        set -- sh -c 'sinfo -N -o "%N %T %c %m" && echo "slurm cluster: up"'
        ;;
    *)
        echo "usage: cluster.sh run COMMAND [ARGS...] | cluster.sh check" >&2
        exit 2
        ;;
esac

trap stop_cluster EXIT
trap 'exit 143' INT TERM HUP
start_cluster
export FT_SLURM_DIR=$dir
timeout -k 5 "${FT_SLURM_TIMEOUT:-300}" "$@" &
cmd_pid=$!
wait "$cmd_pid"
rc=$?
cmd_pid=""
[ $rc -eq 124 ] && echo "slurm cluster: '$1' killed after ${FT_SLURM_TIMEOUT:-300} s" >&2
exit $rc
