#!/usr/bin/env bash
# test_trace.sh - traces of `fusetile simulate`: golden traces byte for byte, the trace options' errors, and the mlsys-2026-13 acceptance check (Chrome JSON consistent, VCD accepted).
# usage: test_trace.sh FUSETILE VECTORS_DIR
# The golden traces are SRCDIR/traces/NAME.{json,vcd} (SRCDIR is two levels
# above VECTORS_DIR); traces/README.md says how they were made.  The checks
# of trace contents are a Python script written to the scratch directory
# (python3 and its json module; the VCD reader is the script's own).
set -u
bin=${1:?usage: test_trace.sh FUSETILE VECTORS_DIR}
vec=${2:?usage: test_trace.sh FUSETILE VECTORS_DIR}
. "$(dirname "$0")/lib.sh"
src=$(cd "$vec/../.." && pwd)
golden=$src/traces

# field FILE KEY: a top-level number of a JSON file, as Python's repr (the
# shortest text that reads back as the same double).
field() { python3 -c 'import json, sys; print(repr(json.load(open(sys.argv[1]))[sys.argv[2]]))' "$1" "$2"; }

# no_files PATTERN...: none of the glob patterns matches a file.
no_files() {
    local p
    for p in "$@"; do
        compgen -G "$p" >/dev/null && return 1
    done
    return 0
}

cat >"$tmp/check_trace.py" <<'PY'
import json, sys

def fail(msg):
    print("check_trace: " + msg)
    sys.exit(1)

def check_json(path, capacity, total):
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        fail("%s: not valid JSON: %s" % (path, e))
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        fail("%s: no traceEvents list" % path)
    if doc.get("displayTimeUnit") != "ns":
        fail("%s: displayTimeUnit is %r" % (path, doc.get("displayTimeUnit")))
    other = doc.get("otherData", {})
    if other.get("fast_memory_capacity") != capacity:
        fail("%s: otherData.fast_memory_capacity %r, want %r" % (path, other.get("fast_memory_capacity"), capacity))
    names, procs, spans, occ = {}, 0, {}, []
    for ev in doc["traceEvents"]:
        ph = ev.get("ph")
        if ev.get("pid") != 1:
            fail("%s: event outside pid 1: %r" % (path, ev))
        if ph == "M":
            if ev["name"] == "process_name":
                procs += 1
            elif ev["name"] == "thread_name":
                names[ev["tid"]] = ev["args"]["name"]
        elif ph == "X":
            if ev["dur"] < 0:
                fail("%s: negative duration: %r" % (path, ev))
            spans.setdefault(ev["tid"], []).append((ev["ts"], ev["ts"] + ev["dur"], ev["name"]))
        elif ph == "C":
            if ev["name"] != "fast memory":
                fail("%s: unexpected counter %r" % (path, ev["name"]))
            occ.append((ev["ts"], ev["args"]["elements"]))
        else:
            fail("%s: unexpected phase %r" % (path, ph))
    if procs != 1:
        fail("%s: %d process_name events" % (path, procs))
    for want in ("controller", "slow-memory channel", "compute engine"):
        if want not in names.values():
            fail("%s: no thread named %r" % (path, want))
    nspans, last_end = 0, 0.0
    for tid, lst in spans.items():
        if tid not in names:
            fail("%s: spans on unnamed thread %d" % (path, tid))
        lst.sort()
        for a, b in zip(lst, lst[1:]):
            if a[1] > b[0] + 1e-9 * max(1.0, abs(b[0])):
                fail("%s: on %s, %s (ends %r) overlaps %s (starts %r)" % (path, names[tid], a[2], a[1], b[2], b[0]))
        nspans += len(lst)
        last_end = max([last_end] + [e for _, e, _ in lst])
    if nspans == 0:
        fail("%s: no spans" % path)
    for ts, n in occ:
        if not (0 <= n <= capacity):
            fail("%s: occupancy %r at %r outside [0, %r]" % (path, n, ts, capacity))
    if abs(last_end - total) > 1e-9 * max(1.0, abs(total)):
        fail("%s: last span ends at %r, total latency is %r" % (path, last_end, total))
    if abs(other.get("end_time", -1) - total) > 1e-9 * max(1.0, abs(total)):
        fail("%s: otherData.end_time %r, total latency is %r" % (path, other.get("end_time"), total))
    return nspans, occ

def parse_vcd(path):
    """Strict VCD reader: header, $var declarations, increasing timestamps,
    changes of declared ids only, binary vectors no wider than declared."""
    with open(path, encoding="ascii") as f:
        toks = f.read().split()
    i, n = 0, len(toks)
    vars_, timescale, depth = {}, None, 0
    def until_end(i):
        while i < n and toks[i] != "$end":
            i += 1
        if i == n:
            fail("%s: unterminated section" % path)
        return i + 1
    while True:
        if i == n:
            fail("%s: no $enddefinitions" % path)
        t = toks[i]
        if t in ("$date", "$version", "$comment"):
            i = until_end(i + 1)
        elif t == "$timescale":
            j = until_end(i + 1)
            timescale = " ".join(toks[i + 1:j - 1])
            i = j
        elif t == "$scope":
            if toks[i + 3] != "$end":
                fail("%s: bad $scope" % path)
            depth += 1
            i += 4
        elif t == "$upscope":
            if depth == 0 or toks[i + 1] != "$end":
                fail("%s: bad $upscope" % path)
            depth -= 1
            i += 2
        elif t == "$var":
            j = until_end(i + 1)
            typ, size, ident, ref = toks[i + 1:i + 5]
            if depth == 0 or ident in vars_ or not size.isdigit() or int(size) < 1:
                fail("%s: bad $var %s" % (path, " ".join(toks[i:j])))
            vars_[ident] = {"ref": ref, "size": int(size), "changes": []}
            i = j
        elif t == "$enddefinitions":
            if toks[i + 1] != "$end" or depth != 0:
                fail("%s: bad $enddefinitions" % path)
            i += 2
            break
        else:
            fail("%s: unexpected header token %r" % (path, t))
    if timescale is None:
        fail("%s: no $timescale" % path)
    time = -1
    while i < n:
        t = toks[i]
        i += 1
        if t.startswith("#"):
            if not t[1:].isdigit() or int(t[1:]) <= time:
                fail("%s: timestamp %s not increasing (after %d)" % (path, t, time))
            time = int(t[1:])
        elif t in ("$dumpvars", "$dumpall", "$dumpon", "$dumpoff", "$end"):
            if time < 0:
                fail("%s: %s before the first timestamp" % (path, t))
        elif t[0] in "01":
            v = vars_.get(t[1:])
            if time < 0 or v is None or v["size"] != 1:
                fail("%s: bad scalar change %r at %d" % (path, t, time))
            v["changes"].append((time, int(t[0])))
        elif t[0] in "bB":
            if i == n:
                fail("%s: vector change without an id" % path)
            v = vars_.get(toks[i])
            bits = t[1:]
            if time < 0 or v is None or not bits or set(bits) - set("01") or len(bits) > v["size"]:
                fail("%s: bad vector change %r %r at %d" % (path, t, toks[i], time))
            v["changes"].append((time, int(bits, 2)))
            i += 1
        else:
            fail("%s: unexpected token %r at time %d" % (path, t, time))
    return timescale, {v["ref"]: v for v in vars_.values()}, time

def check_vcd(path, capacity, total, occ):
    timescale, sig, last = parse_vcd(path)
    if timescale != "1 fs":
        fail("%s: timescale %r" % (path, timescale))
    for ref, size in (("channel_busy", 1), ("compute_busy", 1), ("occupancy", 64)):
        if ref not in sig or sig[ref]["size"] != size:
            fail("%s: no %d-bit %s" % (path, size, ref))
        ch = sig[ref]["changes"]
        if not ch or ch[0][0] != 0:
            fail("%s: %s has no value at time 0" % (path, ref))
    if last != round(total * 1e9):
        fail("%s: last timestamp %d, want %d" % (path, last, round(total * 1e9)))
    for t, v in sig["occupancy"]["changes"]:
        if v > capacity:
            fail("%s: occupancy %d at %d above capacity %r" % (path, v, t, capacity))
    if sum(v for _, v in sig["compute_busy"]["changes"]) == 0:
        fail("%s: the compute engine is never busy" % path)
    # the occupancy signal is the JSON counter, instant by instant (the
    # last counter value at a timestamp holds; unchanged values are not
    # written again)
    last_at = {}
    for ts, v in occ:
        last_at[round(ts * 1e9)] = v
    want = [(0, last_at.pop(0, 0))]
    for t in sorted(last_at):
        if last_at[t] != want[-1][1]:
            want.append((t, last_at[t]))
    if sig["occupancy"]["changes"] != want:
        fail("%s: occupancy changes differ from the JSON counter" % path)

def main():
    if len(sys.argv) != 5:
        fail("usage: check_trace.py TRACE.json TRACE.vcd CAPACITY TOTAL")
    capacity, total = float(sys.argv[3]), float(sys.argv[4])
    nspans, occ = check_json(sys.argv[1], capacity, total)
    check_vcd(sys.argv[2], capacity, total, occ)
    print("check_trace: %s: %d spans, %d occupancy changes; %s: accepted" % (sys.argv[1], nspans, len(occ), sys.argv[2]))

main()
PY

# check_trace NAME JSON VCD PROBLEM SIMULATE-JSON-OUTPUT [CAPACITY]: the trace pair is
# consistent with the problem's capacity and the simulated total.
check_trace() {
    local name=$1 json=$2 vcd=$3 problem=$4 out=$5 cap=${6:-} total
    { [ -n "$cap" ] || cap=$(field "$problem" fast_memory_capacity); } && total=$(field "$out" total_simulated) || {
        fail=$((fail + 1))
        echo "FAIL $name: no capacity in $problem or no total_simulated in the output"
        return
    }
    expect "$name" "the trace is consistent (capacity $cap, total $total)" \
        python3 "$tmp/check_trace.py" "$json" "$vcd" "$cap" "$total"
}

# --- golden traces: regenerated byte for byte, and consistent
for n in ex1A ex4B E-mlp-fused B-prologue-splitk; do
    P=$vec/$n.problem.json
    S=$vec/$n.solution.json
    check "golden-$n-simulate" 0 out '"agree": true' -- "$bin" simulate "$P" "$S" --trace "$tmp/$n.json" --vcd "$tmp/$n.vcd" --json
    cp "$tmp/out" "$tmp/$n.out"
    expect "golden-$n-json" "$tmp/$n.json differs from traces/$n.json" cmp -s "$golden/$n.json" "$tmp/$n.json"
    expect "golden-$n-vcd" "$tmp/$n.vcd differs from traces/$n.vcd" cmp -s "$golden/$n.vcd" "$tmp/$n.vcd"
    check_trace "golden-$n-consistent" "$tmp/$n.json" "$tmp/$n.vcd" "$P" "$tmp/$n.out"
done

# --- a problem with names (N-named-mlp is E-mlp-fused with op_names and
# tensor_names): spans named after the subgraph's label and the tensors,
# args with "label" and "tensor_name", the VCD's subgraph comment; apart
# from those, the same events as the golden E-mlp-fused trace
N=$vec/N-named-mlp.problem.json
check named-simulate 0 out '"agree": true' -- "$bin" simulate "$N" "$vec/N-named-mlp.solution.json" --trace "$tmp/named.json" --vcd "$tmp/named.vcd" --json
cp "$tmp/out" "$tmp/named.out"
check_trace named-consistent "$tmp/named.json" "$tmp/named.vcd" "$N" "$tmp/named.out"
expect named-compute-span "a compute span is named after the label" grep -q '"name":"compute encoder.layer1.fc1+act+fc2 tile 0 k 0"' "$tmp/named.json"
expect named-step-span "a step span is named after the label" grep -q '"name":"step 0 (encoder.layer1.fc1+act+fc2 tile 0 k 0)"' "$tmp/named.json"
expect named-load-span "a load is named after its tensor" grep -q '"name":"load encoder.layer1.fc1.weight\[0:128, 0:64\]".*"label":"encoder.layer1.fc1+act+fc2","tensor_name":"encoder.layer1.fc1.weight"}}' "$tmp/named.json"
expect named-vcd-comment "the VCD header names subgraph 0" grep -qx '\$comment subgraph 0 encoder.layer1.fc1+act+fc2 \$end' "$tmp/named.vcd"
expect named-vcd-same-changes "the VCD has the golden changes" cmp -s <(sed '/^\$comment subgraph/d' "$tmp/named.vcd") "$golden/E-mlp-fused.vcd"
cat >"$tmp/strip_names.py" <<'PY'
import json, sys
def events(path):
    doc = json.load(open(path))
    out = []
    for ev in doc["traceEvents"]:
        ev = dict(ev, args=dict(ev.get("args", {})))
        ev["args"].pop("label", None)
        ev["args"].pop("tensor_name", None)
        if ev.get("ph") == "X":
            ev.pop("name")
        out.append(ev)
    doc["otherData"].pop("subgraph_labels", None)
    return out, doc["otherData"]
sys.exit(0 if events(sys.argv[1]) == events(sys.argv[2]) else 1)
PY
expect named-same-events "without names and labels the events are the golden E-mlp-fused ones" python3 "$tmp/strip_names.py" "$tmp/named.json" "$golden/E-mlp-fused.json"
expect named-labels-meta "otherData lists the labels" grep -q '"subgraph_labels":\["encoder.layer1.fc1+act+fc2"\]' "$tmp/named.json"

# --- one file at a time; the report is the same with and without traces
P=$vec/E-mlp-fused.problem.json
S=$vec/E-mlp-fused.solution.json
check trace-only 0 - '' -- "$bin" simulate "$P" "$S" --trace "$tmp/only.json"
expect trace-only-files "only only.json is written" test -s "$tmp/only.json" -a ! -e "$tmp/only.vcd"
expect trace-only-same "--trace alone writes the same JSON" cmp -s "$tmp/only.json" "$golden/E-mlp-fused.json"
check vcd-only 0 - '' -- "$bin" simulate "$P" "$S" --vcd "$tmp/only.vcd"
expect vcd-only-same "--vcd alone writes the same VCD" cmp -s "$tmp/only.vcd" "$golden/E-mlp-fused.vcd"
check no-trace 0 out '"agree": true' -- "$bin" simulate "$P" "$S" --json
expect no-trace-same-report "the --json report does not depend on the trace options" cmp -s "$tmp/out" "$tmp/E-mlp-fused.out"

# --- errors: the path and the OS error named, exit 2, nothing left behind
check trace-no-dir 2 err "$tmp/nodir/t.json: cannot write: No such file or directory" -- \
    "$bin" simulate "$P" "$S" --trace "$tmp/nodir/t.json"
check vcd-no-dir 2 err "$tmp/nodir/t.vcd: cannot write: No such file or directory" -- \
    "$bin" simulate "$P" "$S" --trace "$tmp/half.json" --vcd "$tmp/nodir/t.vcd"
expect vcd-no-dir-clean "no half.json or temporary file is left" no_files "$tmp/half.json" "$tmp/half.json.tmp.*"
check trace-is-dir 2 err "$tmp: cannot write: Is a directory" -- "$bin" simulate "$P" "$S" --trace "$tmp"
# a schedule the simulator rejects: exit 1 and its trace files removed
check invalid-oom 1 err 'invalid schedule \(oom\)' -- \
    "$bin" simulate "$vec/X-oom.problem.json" "$vec/X-oom.solution.json" --trace "$tmp/oom.json" --vcd "$tmp/oom.vcd"
expect invalid-oom-clean "no trace file is left after a failed simulation" no_files "$tmp/oom.*"

# --- acceptance: a trace of mlsys-2026-13 is valid JSON whose events and
# counters are consistent (spans per thread never overlap, occupancy never
# exceeds capacity, the last span ends at the total simulated latency), and
# its VCD is accepted by a VCD reader
B=$src/benchmarks/mlsys-2026-13.json
check m13-schedule 0 - '' -- "$bin" schedule "$B" --time-limit 2 -o "$tmp/m13.schedule.json"
check m13-simulate 0 out '"agree": true' -- \
    "$bin" simulate "$B" "$tmp/m13.schedule.json" --trace "$tmp/m13.json" --vcd "$tmp/m13.vcd" --json
cp "$tmp/out" "$tmp/m13.out"
check_trace m13-consistent "$tmp/m13.json" "$tmp/m13.vcd" "$B" "$tmp/m13.out"

# --- on the machine targets (steps overlap with double buffering; the KPU
# writes back on a channel of its own): still consistent, capacity in the
# target's elements
B=$src/benchmarks/mlsys-2026-1.json
for t in kpu tpu-v5e; do
    check "$t-schedule" 0 - '' -- "$bin" schedule "$B" --target "$src/targets/$t.cfg" --time-limit 0.5 -q -o "$tmp/$t.schedule.json"
    check "$t-simulate" 0 out '"accounted": true' -- \
        "$bin" simulate "$B" "$tmp/$t.schedule.json" --target "$src/targets/$t.cfg" --trace "$tmp/$t.json" --vcd "$tmp/$t.vcd" --json
    cp "$tmp/out" "$tmp/$t.out"
    cap=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["otherData"]["fast_memory_capacity"])' "$tmp/$t.json")
    check_trace "$t-consistent" "$tmp/$t.json" "$tmp/$t.vcd" "$B" "$tmp/$t.out" "$cap"
done

finish trace
