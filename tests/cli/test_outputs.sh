#!/usr/bin/env bash
# test_outputs.sh - the output rules (docs/OUTPUTS.md) on the command line: unsafe outputs refused with one line, devices and FIFOs written in place, a failed standard output, a full disk, an unwritable directory, and every writer killed with SIGKILL at random moments.
# usage: test_outputs.sh FUSETILE VECTORS_DIR
# Cases that need root (a device node made with mknod, a small tmpfs, a
# read-only bind mount) are skipped with a line when not root or when
# mount is not permitted; the unit test test_safe_write covers a full disk
# and an unwritable directory without root.  Each writer is killed
# FT_KILLS times (default 100; 10 with FT_SLOW=1, under valgrind and the
# sanitizers, whose start-up is slow) at a random moment of its run.
set -u
bin=${1:?usage: test_outputs.sh FUSETILE VECTORS_DIR}
vec=${2:?usage: test_outputs.sh FUSETILE VECTORS_DIR}
. "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
case $bin in /*) ;; *) bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin") ;; esac
slow=${FT_SLOW:-0}
if [ "$slow" = 1 ]; then kills=${FT_KILLS:-10}; scale=5; else kills=${FT_KILLS:-100}; scale=1; fi

mounts=()
cleanup() {
    local m
    for m in "${mounts[@]}"; do umount "$m" 2>/dev/null; done
    chmod -R u+w "$tmp" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT

P=$vec/B-prologue-splitk.problem.json
S=$vec/B-prologue-splitk.solution.json
B5=$root/benchmarks/mlsys-2026-5.json
E=$root/benchmarks/example_problem.json
sum() { cksum <"$1"; }
one_line_err() { [ "$(wc -l <"$tmp/err")" -eq 1 ]; }
# same_sum FILE SUM: FILE still has checksum SUM
same_sum() { [ "$(sum "$1")" = "$2" ]; }

# ---------------------------------------------------------------- unsafe outputs
cp "$P" "$tmp/p.json"
cp "$S" "$tmp/s.json"
psum=$(sum "$tmp/p.json")
ssum=$(sum "$tmp/s.json")

# the command's own inputs, under their names and others
check out-is-problem 2 err "^fusetile: schedule: $tmp/p.json: is the problem input; refusing to overwrite it$" \
    -- "$bin" schedule "$tmp/p.json" --time-limit 0.2 -q -o "$tmp/p.json"
expect out-is-problem-one-line "one line on stderr" one_line_err
expect out-is-problem-kept "the problem file changed" same_sum "$tmp/p.json" "$psum"
ln "$tmp/p.json" "$tmp/hard.json"
check out-is-problem-hard-link 2 err "$tmp/hard.json: is the problem input \($tmp/p.json\); refusing to overwrite it" \
    -- "$bin" schedule "$tmp/p.json" --time-limit 0.2 -q -o "$tmp/hard.json"
ln -s p.json "$tmp/plink.json"
check out-is-problem-symlink 2 err "is the problem input" -- "$bin" schedule "$tmp/p.json" --time-limit 0.2 -q -o "$tmp/plink.json"
check out-is-problem-dotted 2 err "is the problem input" -- "$bin" schedule "$tmp/p.json" --time-limit 0.2 -q -o "$tmp/./p.json"
(cd "$tmp" && "$bin" schedule p.json --time-limit 0.2 -q -o "$tmp/p.json") >"$tmp/out" 2>"$tmp/err"
expect out-is-problem-relative "a relative input name was not recognised: $(cat "$tmp/err")" grep -q "is the problem input (p.json)" "$tmp/err"
check mlsys-out-is-input 2 err "is the problem input; refusing" -- "$bin" mlsys "$tmp/p.json" "$tmp/p.json"
expect mlsys-out-is-input-kept "the problem file changed" same_sum "$tmp/p.json" "$psum"
check trace-is-schedule 2 err "^fusetile: simulate: $tmp/s.json: is the schedule input; refusing to overwrite it$" \
    -- "$bin" simulate "$tmp/p.json" "$tmp/s.json" --trace "$tmp/s.json"
check vcd-is-problem 2 err "$tmp/hard.json: is the problem input \($tmp/p.json\)" \
    -- "$bin" simulate "$tmp/p.json" "$tmp/s.json" --vcd "$tmp/hard.json"
expect trace-inputs-kept "an input changed" eval 'same_sum "$tmp/p.json" "$psum" && same_sum "$tmp/s.json" "$ssum"'
cp "$root/targets/kpu.cfg" "$tmp/kpu.cfg"
ksum=$(sum "$tmp/kpu.cfg")
check target-input-protected 2 err "is the target input; refusing" \
    -- "$bin" schedule "$tmp/p.json" --target "$tmp/kpu.cfg" --time-limit 0.2 -q -o "$tmp/kpu.cfg"
expect target-input-kept "the target file changed" same_sum "$tmp/kpu.cfg" "$ksum"
cat >"$tmp/sw.cfg" <<EOF
problems = [ "$E" ];
capacity = [ 30000.0, 40000.0 ];
time_limit = 0.05;
EOF
swsum=$(sum "$tmp/sw.cfg")
check sweep-db-is-sweep 2 err "$tmp/sw.cfg: is the sweep input; refusing to overwrite it" \
    -- "$bin" sweep run "$tmp/sw.cfg" --db "$tmp/sw.cfg" --quiet
expect sweep-db-is-sweep-kept "the sweep file changed" same_sum "$tmp/sw.cfg" "$swsum"
check sweep-db-is-device 2 err "/dev/null: is a character device; refusing to write to it \(a database must be a regular file\)" \
    -- "$bin" sweep run "$tmp/sw.cfg" --db /dev/null --quiet
check sweep-db-is-dir 2 err "$tmp: cannot write: Is a directory" -- "$bin" sweep run "$tmp/sw.cfg" --db "$tmp" --quiet
check sweep-run 0 - '' -- "$bin" sweep run "$tmp/sw.cfg" --db "$tmp/sw.db" --quiet
dbsum=$(sum "$tmp/sw.db")
check sweep-plot-out-is-db 2 err "$tmp/sw.db: is the database input; refusing" \
    -- "$bin" sweep plot "$tmp/sw.db" --x capacity --y total -o "$tmp/sw.db"
expect sweep-plot-db-kept "the database changed" same_sum "$tmp/sw.db" "$dbsum"

# kinds of file: a directory and a FIFO nobody reads are refused at once
# (the FIFO after a bounded wait, never a hang); a symbolic link is written
# through; a dangling link is refused; - is standard output
check out-dir 2 err "^fusetile: schedule: $tmp: cannot write: Is a directory$" -- "$bin" schedule "$tmp/p.json" -q -o "$tmp"
mkfifo "$tmp/fifo"
t0=$(date +%s)
check out-fifo-no-reader 2 err "$tmp/fifo: is a FIFO that no process reads \(waited 2000 ms\); refusing to block on it" \
    -- timeout 60 "$bin" mlsys "$E" "$tmp/fifo"
expect out-fifo-no-reader-one-line "one line on stderr" one_line_err
expect out-fifo-no-hang "waited $(($(date +%s) - t0)) s" [ $(($(date +%s) - t0)) -lt 50 ]
expect out-fifo-kept "the FIFO was replaced" test -p "$tmp/fifo"
cat "$tmp/fifo" >"$tmp/fifo-read" &
rpid=$!
# the writer waits at most 2 s for a reader: start it only once cat sleeps
# in its open of the FIFO, so a loaded machine cannot make this case fail
for _ in $(seq 200); do
    [ "$(cat /proc/$rpid/comm 2>/dev/null)" = cat ] && grep -q '^State:[[:space:]]*S' /proc/$rpid/status 2>/dev/null && break
    sleep 0.05
done
check out-fifo-reader 0 - '' -- timeout 60 "$bin" generate --ops 12 -o "$tmp/fifo"
wait
expect out-fifo-reader-got "the reader got no problem" grep -q '"widths"' "$tmp/fifo-read"
expect out-fifo-reader-kept "the FIFO was replaced" test -p "$tmp/fifo"
cp "$S" "$tmp/target.json"
ln -s target.json "$tmp/link.json"
check out-symlink 0 - '' -- "$bin" schedule "$tmp/p.json" --time-limit 0.2 -q -o "$tmp/link.json"
expect out-symlink-kept "the link was replaced" test -L "$tmp/link.json"
expect out-symlink-through "the link's target was not rewritten" eval '! same_sum "$tmp/target.json" "$ssum"'
ln -s nowhere/x.json "$tmp/dangling.json"
check out-dangling 2 err "$tmp/dangling.json: is a dangling symbolic link; refusing to write through it" \
    -- "$bin" generate -o "$tmp/dangling.json"
expect out-dangling-kept "the dangling link changed" test -L "$tmp/dangling.json"
check out-dash 0 out '"subgraphs"' -- "$bin" schedule "$tmp/p.json" --time-limit 0.2 -q -o -
check generate-dash 0 out '"widths"' -- "$bin" generate --ops 12 -o -
expect no-file-named-dash "a file named - was written" test ! -e ./-

# character devices: written in place, never replaced or removed
check out-dev-null 0 - '' -- "$bin" schedule "$tmp/p.json" --time-limit 0.2 -q -o /dev/null
expect out-dev-null-kept "/dev/null is no longer a character device" test -c /dev/null
check trace-dev-null 0 - '' -- "$bin" simulate "$tmp/p.json" "$tmp/s.json" --trace /dev/null
expect trace-dev-null-kept "/dev/null is no longer a character device" test -c /dev/null
check out-dev-full 2 err "^fusetile: schedule: /dev/full: write failed: No space left on device$" \
    -- "$bin" schedule "$tmp/p.json" --time-limit 0.2 -q -o /dev/full
if [ "$(id -u)" -eq 0 ] && mknod "$tmp/null" c 1 3 2>/dev/null; then
    check out-mknod 0 - '' -- "$bin" schedule "$tmp/p.json" --time-limit 0.2 -q -o "$tmp/null"
    expect out-mknod-kept "the device node was replaced" test -c "$tmp/null"
    check trace-mknod 0 - '' -- "$bin" simulate "$tmp/p.json" "$tmp/s.json" --trace "$tmp/null" --vcd "$tmp/null2.vcd"
    expect trace-mknod-kept "the device node was replaced" test -c "$tmp/null"
else
    skip 4 "the device node cases: not root, or mknod not permitted"
fi

# a failed standard output: exit 2 and one line, for each command that
# prints results there
full() { # full NAME PATTERN -- COMMAND...: COMMAND >/dev/full
    local name=$1 pat=$2
    shift 3
    "$@" >/dev/full 2>"$tmp/err" </dev/null
    local rc=$?
    if [ "$rc" -eq 2 ] && grep -Eq -- "$pat" "$tmp/err" && [ "$(grep -c 'standard output' "$tmp/err")" -eq 1 ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL $name: want exit 2 and one /$pat/ line on stderr; got exit $rc"
        sed 's/^/    err: /' "$tmp/err" | head -5
    fi
}
nospace='^fusetile: standard output: No space left on device$'
full full-evaluate "$nospace" -- "$bin" evaluate "$P" "$S"
full full-evaluate-json "$nospace" -- "$bin" evaluate "$P" "$S" --json
full full-simulate "$nospace" -- "$bin" simulate "$P" "$S"
full full-simulate-json "$nospace" -- "$bin" simulate "$P" "$S" --json
full full-schedule "$nospace" -- "$bin" schedule "$P" --time-limit 0.2 -q
full full-generate "$nospace" -- "$bin" generate --ops 12
full full-sweep-list "$nospace" -- "$bin" sweep list "$tmp/sw.cfg"
full full-validate "$nospace" -- "$bin" validate --target "$root/targets/gpu-h100.cfg" --measured "$root/targets/measured/h100/gemm.tsv" --problems "$root/benchmarks"
cp "$root/targets/measured/h100/gemm.tsv" "$tmp/gemm.tsv"
gsum=$(sum "$tmp/gemm.tsv")
check validate-svg-is-measured 2 err "$tmp/gemm.tsv: is the measured input; refusing to overwrite it" \
    -- "$bin" validate --target "$root/targets/gpu-h100.cfg" --measured "$tmp/gemm.tsv" --problems "$root/benchmarks" --svg "$tmp/gemm.tsv"
check calibrate-out-is-target 2 err "$tmp/kpu.cfg: is the target input; refusing to overwrite it" \
    -- "$bin" calibrate --target "$tmp/kpu.cfg" --measured "$tmp/gemm.tsv" --problems "$root/benchmarks" -o "$tmp/kpu.cfg"
expect measured-target-kept "an input changed" eval 'same_sum "$tmp/gemm.tsv" "$gsum" && same_sum "$tmp/kpu.cfg" "$ksum"'
full full-version "$nospace" -- "$bin" --version
full full-help "^fusetile: standard output: (No space left on device|write error)$" -- "$bin" --help
printf 'puts -nonewline "a result"\n' >"$tmp/puts.tcl"
full full-shell "^fusetile: standard output: no space left on device$" -- "$bin" shell "$tmp/puts.tcl"
check stdout-ok 0 out '^fusetile ' -- "$bin" --version

# ---------------------------------------------------------------- full disk
# A tmpfs of 64 KiB, nearly filled: the new version does not fit; one
# error, the previous file kept, no temporary file left.
if [ "$(id -u)" -eq 0 ] && mkdir "$tmp/small" && mount -t tmpfs -o size=64k tmpfs "$tmp/small" 2>/dev/null; then
    mounts+=("$tmp/small")
    cp "$tmp/s.json" "$tmp/small/out.json"
    cat /dev/zero >"$tmp/small/filler" 2>/dev/null      # the disk is full,
    truncate -s -4096 "$tmp/small/filler"                 # but for one page
    osum=$(sum "$tmp/small/out.json")
    check full-disk-generate 2 err "^fusetile: generate: $tmp/small/out.json: write failed: No space left on device$" \
        -- "$bin" generate --ops 150 -o "$tmp/small/out.json"
    expect full-disk-generate-kept "the previous file changed" same_sum "$tmp/small/out.json" "$osum"
    expect full-disk-no-temp "a temporary file was left: $(ls "$tmp/small")" \
        eval '[ -z "$(ls "$tmp/small" | grep fusetile-tmp)" ]'
    cp "$tmp/s.json" "$tmp/small/t.json"
    tsum=$(sum "$tmp/small/t.json")
    check full-disk-trace 2 err "^fusetile: simulate: $tmp/small/t.json: write failed: No space left on device$" \
        -- "$bin" simulate "$root/benchmarks/mlsys-2026-1.json" "$root/examples/mlsys-2026-1.schedule.json" --trace "$tmp/small/t.json"
    expect full-disk-trace-one-line "one line on stderr" one_line_err
    expect full-disk-trace-kept "the previous trace changed" same_sum "$tmp/small/t.json" "$tsum"
    expect full-disk-trace-no-temp "a temporary file was left: $(ls "$tmp/small")" \
        eval '[ -z "$(ls "$tmp/small" | grep fusetile-)" ]'
else
    skip 7 "the full-disk cases: not root, or mount not permitted (test_safe_write covers a failed write)"
fi

# ---------------------------------------------------------------- unwritable directory
# Root passes permission checks, so as root the directory is a read-only
# bind mount of itself; otherwise it is mode 555.
mkdir "$tmp/ro"
cp "$tmp/s.json" "$tmp/ro/out.json"
cp "$tmp/s.json" "$tmp/ro/t.json"
rosum=$(sum "$tmp/ro/out.json")
ro=0
if [ "$(id -u)" -eq 0 ]; then
    if mount --bind "$tmp/ro" "$tmp/ro" 2>/dev/null; then
        mounts+=("$tmp/ro")
        mount -o remount,bind,ro "$tmp/ro" 2>/dev/null && ro=1
    fi
else
    chmod 555 "$tmp/ro" && ro=1
fi
if [ $ro = 1 ]; then
    check ro-dir-schedule 2 err "^fusetile: schedule: $tmp/ro/out.json: cannot write: (Read-only file system|Permission denied)$" \
        -- "$bin" schedule "$tmp/p.json" --time-limit 0.2 -q -o "$tmp/ro/out.json"
    check ro-dir-mlsys 2 err "^mlsys: $tmp/ro/out.json: cannot write: (Read-only file system|Permission denied)$" \
        -- "$(dirname "$bin")/mlsys" "$tmp/p.json" "$tmp/ro/out.json"
    check ro-dir-trace 2 err "^fusetile: simulate: $tmp/ro/t.json: cannot write: (Read-only file system|Permission denied)$" \
        -- "$bin" simulate "$tmp/p.json" "$tmp/s.json" --trace "$tmp/ro/t.json"
    check ro-dir-generate 2 err "^fusetile: generate: $tmp/ro/out.json: cannot write: (Read-only file system|Permission denied)$" \
        -- "$bin" generate -o "$tmp/ro/out.json"
    expect ro-dir-kept "a previous file changed" eval 'same_sum "$tmp/ro/out.json" "$rosum" && same_sum "$tmp/ro/t.json" "$rosum"'
else
    skip 5 "the unwritable-directory cases: no read-only bind mount (test_safe_write covers it without root)"
fi

# ---------------------------------------------------------------- SIGKILL
# killloop NAME MAXMS OUT... -- COMMAND...: $kills times, give each OUT its
# previous version (OUT.prev; a database loses its write-ahead log), start
# COMMAND in a session of its own, kill it (not its children) with SIGKILL
# after a random 0..MAXMS ms (times $scale under FT_SLOW), count the kills
# that a child of it outlived by 5 s (then killed), then sort each OUT into previous (byte-identical), new
# (kept in $tmp/new-NAME for the checks below) or missing.  The stale
# temporary files a kill leaves beside OUT (NAME.fusetile-tmp.PID.N) are
# counted and removed.  The tally goes to $tmp/tally-NAME.  The writers'
# loops run side by side, each in its own directory $tmp/k-NAME.
killloop() {
    local name=$1 maxms=$(($2 * scale)) outs=() i o ms pid
    shift 2
    while [ "$1" != "--" ]; do outs+=("$1"); shift; done
    shift
    local prev=0 new=0 missing=0 temps=0 orphans=0 t0=$SECONDS dir w
    dir=$(dirname "${outs[0]}")
    mkdir -p "$tmp/new-$name"
    for ((i = 0; i < kills; i++)); do
        for o in "${outs[@]}"; do
            rm -f "$o-wal" "$o-shm"
            cp "$o.prev" "$o"
        done
        setsid "$@" >/dev/null 2>&1 </dev/null &
        pid=$!
        ms=$(((RANDOM * 32768 + RANDOM) % (maxms + 1)))
        sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
        kill -9 "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        # only the command is killed: the processes it started (a sweep's
        # workers) must die with it; count the kills they outlive by 5 s
        for ((w = 0; w < 500; w++)); do
            group_alive "$pid" || break
            sleep 0.01
        done
        if group_alive "$pid"; then
            orphans=$((orphans + 1))
            kill -9 -- "-$pid" 2>/dev/null
            while group_alive "$pid"; do sleep 0.01; done
        fi
        for o in "${outs[@]}"; do
            if [ ! -e "$o" ]; then
                missing=$((missing + 1))
            elif cmp -s "$o" "$o.prev" && [ ! -s "$o-wal" ]; then
                prev=$((prev + 1))
            else
                new=$((new + 1))
                cp "$o" "$tmp/new-$name/$i-$(basename "$o")"
                [ ! -e "$o-wal" ] || cp "$o-wal" "$tmp/new-$name/$i-$(basename "$o")-wal"
            fi
        done
        temps=$((temps + $(ls "$dir" | grep -c 'fusetile-tmp')))
        rm -f "$dir"/*fusetile-tmp*
    done
    echo "$prev $new $missing $temps $orphans $((SECONDS - t0))" >"$tmp/tally-$name"
}

# report NAME CORRUPT: the tally line, and a case that passes when no
# output was corrupt or missing
report() {
    local name=$1 corrupt=$2 p n m t o s
    read -r p n m t o s <"$tmp/tally-$name"
    echo "test_outputs: $name killed $kills times: $p previous, $((n - corrupt)) new, $((corrupt + m)) corrupt or missing ($t stale temporary files removed; $o outlived by a child; $s s)"
    expect "kill-$name" "$corrupt corrupt, $m missing, $o outlived by a child" \
        eval "[ $corrupt -eq 0 ] && [ $m -eq 0 ] && [ $o -eq 0 ] && [ $((p + n)) -gt 0 ]"
}

# corrupt_json DIR: how many files in DIR are not a complete schedule
# (JSON with as many granularities as subgraphs)
corrupt_json() {
    python3 - "$1" <<'PY'
import json, os, sys
bad = 0
for n in sorted(os.listdir(sys.argv[1])):
    try:
        d = json.load(open(os.path.join(sys.argv[1], n)))
        ok = isinstance(d.get("subgraphs"), list) and len(d["subgraphs"]) == len(d.get("granularities", []))
    except Exception:
        ok = False
    if not ok:
        bad += 1
        print("test_outputs: corrupt: " + n, file=sys.stderr)
print(bad)
PY
}

# corrupt_ref DIR REF...: how many files in DIR differ from the REF of the
# same base name (the output of an uninterrupted run)
corrupt_ref() {
    local dir=$1 bad=0 f r
    shift
    for f in "$dir"/*; do
        [ -e "$f" ] || continue
        for r in "$@"; do
            case $f in *-"$(basename "$r" | sed 's/^ref-//')") cmp -s "$f" "$r" || { bad=$((bad + 1)); echo "test_outputs: corrupt: $f" >&2; } ;; esac
        done
    done
    echo $bad
}

# corrupt_db DIR PREV: how many databases in DIR (each with its -wal) fail
# integrity_check, lost a row of PREV or hold an incomplete row
corrupt_db() {
    python3 - "$1" "$2" <<'PY'
import os, shutil, sqlite3, sys, tempfile
def rows(path):
    c = sqlite3.connect(path)
    try:
        if c.execute("pragma integrity_check").fetchone()[0] != "ok":
            return None
        return {r[0]: r for r in c.execute("select * from runs")}
    finally:
        c.close()
prev = rows(sys.argv[2])
bad = 0
for n in sorted(os.listdir(sys.argv[1])):
    if n.endswith("-wal"):
        continue  # read with its database
    try:
        got = rows(os.path.join(sys.argv[1], n))
        ok = got is not None and all(got.get(k) == v for k, v in prev.items()) and \
            all(r[14] in ("ok", "error", "invalid") and r[25] for r in got.values())
    except Exception:
        ok = False
    if not ok:
        bad += 1
        print("test_outputs: corrupt: " + n, file=sys.stderr)
print(bad)
PY
}

mlsys=$(dirname "$bin")/mlsys
mkdir "$tmp/k-schedule" "$tmp/k-mlsys" "$tmp/k-tcl" "$tmp/k-trace" "$tmp/k-sweep"
# schedule -o: every better schedule replaces the file during the search
cp "$tmp/s.json" "$tmp/k-schedule/out.json.prev"
# mlsys: the first valid schedule, then each better one
cp "$tmp/s.json" "$tmp/k-mlsys/out.json.prev"
# the Tcl write: a script that writes a schedule 20 times
cat >"$tmp/write.tcl" <<TCL
fusetile::problem p {$E}
p schedule s -timelimit 0.1
for {set i 0} {\$i < 20} {incr i} { s write {$tmp/k-tcl/out.json} }
TCL
cp "$tmp/s.json" "$tmp/k-tcl/out.json.prev"
# traces: a Perfetto JSON (2 MB) and a VCD, each the previous version or
# byte-identical to an uninterrupted run's
"$bin" schedule "$B5" --time-limit 0.3 -q -o "$tmp/b5.json"
"$bin" simulate "$B5" "$tmp/b5.json" --trace "$tmp/ref-trace.json" --vcd "$tmp/ref-trace.vcd" >/dev/null
printf '{"traceEvents": []}\n' >"$tmp/k-trace/trace.json.prev"
printf '$enddefinitions $end\n' >"$tmp/k-trace/trace.vcd.prev"
# a sweep database (SQLite's transactions): the previous rows kept, every
# row complete, integrity_check passes
cat >"$tmp/sweep.cfg" <<CFG
problems = [ "$B5" ];
capacity = [ 30000.0, 40000.0, 50000.0, 60000.0, 70000.0, 80000.0 ];
time_limit = 0.03;
CFG
"$bin" sweep run "$tmp/sweep.cfg" --slice 1/2 --db "$tmp/half.db" --quiet
cp "$tmp/half.db" "$tmp/k-sweep/out.db.prev"

killloop schedule 200 "$tmp/k-schedule/out.json" -- "$bin" schedule "$B5" --time-limit 0.15 -q -o "$tmp/k-schedule/out.json" &
killloop mlsys 80 "$tmp/k-mlsys/out.json" -- "$mlsys" "$E" "$tmp/k-mlsys/out.json" &
killloop tcl 300 "$tmp/k-tcl/out.json" -- "$bin" shell "$tmp/write.tcl" &
killloop trace 400 "$tmp/k-trace/trace.json" "$tmp/k-trace/trace.vcd" \
    -- "$bin" simulate "$B5" "$tmp/b5.json" --trace "$tmp/k-trace/trace.json" --vcd "$tmp/k-trace/trace.vcd" &
killloop sweep 300 "$tmp/k-sweep/out.db" -- "$bin" sweep run "$tmp/sweep.cfg" --db "$tmp/k-sweep/out.db" --quiet &
wait

report schedule "$(corrupt_json "$tmp/new-schedule")"
report mlsys "$(corrupt_json "$tmp/new-mlsys")"
report tcl "$(corrupt_json "$tmp/new-tcl")"
report trace "$(corrupt_ref "$tmp/new-trace" "$tmp/ref-trace.json" "$tmp/ref-trace.vcd")"
report sweep "$(corrupt_db "$tmp/new-sweep" "$tmp/k-sweep/out.db.prev")"

finish test_outputs
