#!/usr/bin/env bash
# test_trace.sh - traces of `fusetile simulate`: golden traces (--detail steps) byte for byte, the trace options and their errors, traces of real targets (name, real time, read and write signals, the GTKWave save file and its translate file, op names, the step window), the default detail against the step detail (a span per subgraph and per tile, bounded counters, a ResNet-18 trace under 20 MB, the size warning), GTKWave opening the whole run with subgraphs by name, and the mlsys-2026-13 acceptance check (Chrome JSON consistent, VCD accepted).
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
import json, re, sys

def fail(msg):
    print("check_trace: " + msg)
    sys.exit(1)

def check_json(path, capacity, total, us):
    """us: microseconds of ts per cost unit (1 without a clock)."""
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
    names, procs, spans, occ, power = {}, [], {}, [], []
    for ev in doc["traceEvents"]:
        ph = ev.get("ph")
        if ev.get("pid") != 1:
            fail("%s: event outside pid 1: %r" % (path, ev))
        if ph == "M":
            if ev["name"] == "process_name":
                procs.append(ev["args"]["name"])
            elif ev["name"] == "thread_name":
                names[ev["tid"]] = ev["args"]["name"]
        elif ph == "X":
            if ev["dur"] < 0:
                fail("%s: negative duration: %r" % (path, ev))
            spans.setdefault(ev["tid"], []).append((ev["ts"], ev["ts"] + ev["dur"], ev["name"]))
        elif ph == "C":
            if ev["name"] == "channel busy":
                if set(ev["args"]) != {"load", "write"} or min(ev["args"].values()) < 0:
                    fail("%s: bad channel busy counter %r" % (path, ev))
                continue
            if ev["name"] == "power":
                if set(ev["args"]) != {"watts"} or not ev["args"]["watts"] >= 0:
                    fail("%s: bad power counter %r" % (path, ev))
                power.append((ev["ts"], ev["args"]["watts"]))
                continue
            if ev["name"] != "fast memory":
                fail("%s: unexpected counter %r" % (path, ev["name"]))
            occ.append((ev["ts"], ev["args"]["elements"]))
        else:
            fail("%s: unexpected phase %r" % (path, ph))
    if procs != [other.get("target")]:
        fail("%s: process names %r, target %r" % (path, procs, other.get("target")))
    for want in (("controller",), ("slow-memory channel", "read channel"), ("compute engine", "compute unit 0"), ("subgraphs",)):
        if not set(want) & set(names.values()):
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
    if abs(last_end - total * us) > 1e-9 * max(1.0, abs(total * us)):
        fail("%s: last span ends at %r, total latency is %r (x %r us per unit)" % (path, last_end, total, us))
    if abs(other.get("end_time", -1) - total * us) > 1e-9 * max(1.0, abs(total * us)):
        fail("%s: otherData.end_time %r, total latency is %r (x %r us per unit)" % (path, other.get("end_time"), total, us))
    # what the GTKWave translate file should call each subgraph: its label
    # (op names), else its span's name
    labels = other.get("subgraph_labels")
    sgnames = {}
    for ev in doc["traceEvents"]:
        if ev.get("ph") == "X" and ev.get("cat") == "subgraph":
            sg = ev["args"]["sg"]
            sgnames[sg] = labels[sg] if labels else ev["name"]
    return nspans, occ, sgnames, power, doc

def check_power(path, power, doc, total, us, energy):
    """The power counter (a target with an energy group, energy in joules;
    else None and no counter): levels in time order from 0, the last 0 W at
    the end of the run, and its integral over time (ts in us) the
    simulator's joules."""
    if energy is None:
        if power:
            fail("%s: a power counter without an energy model" % path)
        return
    if not power:
        fail("%s: no power counter (energy %r J)" % (path, energy))
    ts = [t for t, _ in power]
    if ts != sorted(ts) or len(set(ts)) != len(ts) or ts[0] != 0:
        fail("%s: power counter times %r not increasing from 0" % (path, ts[:5]))
    if power[-1][1] != 0 or abs(ts[-1] - total * us) > 1e-9 * total * us:
        fail("%s: the power counter does not end at 0 W at the run's end (%r, end %r)" % (path, power[-1], total * us))
    joules = sum(w * (b[0] - a[0]) * 1e-6 for (a, b), w in zip(zip(power, power[1:]), [w for _, w in power]))
    if abs(joules - energy) > 1e-9 * energy:
        fail("%s: the power counter's integral is %r J, the simulator's energy %r J" % (path, joules, energy))
    # a step at each subgraph's start, where its average power changes
    starts = sorted(ev["ts"] for ev in doc["traceEvents"] if ev.get("cat") == "subgraph")
    if not set(ts[:-1]) <= set(starts):
        fail("%s: power changes %r not at subgraph starts" % (path, sorted(set(ts[:-1]) - set(starts))[:3]))

def parse_vcd(path):
    """Strict VCD reader: header, $var declarations, increasing timestamps,
    changes of declared ids only, binary vectors no wider than declared.
    Returns the timescale, the variables by name (with their scope path)
    and the last timestamp."""
    with open(path, encoding="ascii") as f:
        toks = f.read().split()
    i, n = 0, len(toks)
    vars_, timescale, scopes = {}, None, []
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
            scopes.append(toks[i + 2])
            i += 4
        elif t == "$upscope":
            if not scopes or toks[i + 1] != "$end":
                fail("%s: bad $upscope" % path)
            scopes.pop()
            i += 2
        elif t == "$var":
            j = until_end(i + 1)
            typ, size, ident, ref = toks[i + 1:i + 5]
            if not scopes or ident in vars_ or not size.isdigit() or int(size) < 1 or typ not in ("wire", "integer", "real") \
                    or (typ == "real" and size != "64"):
                fail("%s: bad $var %s" % (path, " ".join(toks[i:j])))
            vars_[ident] = {"ref": ref, "path": ".".join(scopes), "size": int(size), "changes": [], "real": typ == "real"}
            i = j
        elif t == "$enddefinitions":
            if toks[i + 1] != "$end" or scopes:
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
        elif t[0] in "rR":
            v = vars_.get(toks[i]) if i < n else None
            try:
                x = float(t[1:])
            except ValueError:
                x = None
            if time < 0 or v is None or not v["real"] or x is None:
                fail("%s: bad real change %r at %d" % (path, t, time))
            v["changes"].append((time, x))
            i += 1
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
            if time < 0 or v is None or v["real"] or not bits or set(bits) - set("01") or len(bits) > v["size"]:
                fail("%s: bad vector change %r %r at %d" % (path, t, toks[i], time))
            v["changes"].append((time, int(bits, 2)))
            i += 1
        else:
            fail("%s: unexpected token %r at time %d" % (path, t, time))
    return timescale, {v["ref"]: v for v in vars_.values()}, time

SCALES = {"1 s": 1, "1 ms": 1e3, "1 us": 1e6, "1 ns": 1e9, "1 ps": 1e12, "1 fs": 1e15}

def check_vcd(path, capacity, total, occ, clock, power):
    timescale, sig, last = parse_vcd(path)
    if clock == 0:
        if timescale != "1 fs":
            fail("%s: timescale %r" % (path, timescale))
        tpu = 1e9
    else:
        if timescale not in SCALES:
            fail("%s: timescale %r" % (path, timescale))
        tpu = SCALES[timescale] / clock
        if tpu < 100 or (timescale != "1 s" and tpu >= 100000):
            fail("%s: timescale %r for a clock of %r Hz" % (path, timescale, clock))
    want = (("fusetile.controller", "subgraph", 32), ("fusetile.controller", "step", 64),
            ("fusetile.channel", "read_busy", 1), ("fusetile.channel", "write_busy", 1),
            ("fusetile.compute", "unit0_busy", 1), ("fusetile.fast_memory", "occupancy", 64))
    for scope, ref, size in want:
        if ref not in sig or sig[ref]["size"] != size or sig[ref]["path"] != scope:
            fail("%s: no %d-bit %s.%s" % (path, size, scope, ref))
        ch = sig[ref]["changes"]
        if not ch or ch[0][0] != 0:
            fail("%s: %s has no value at time 0" % (path, ref))
    tol = 0 if clock == 0 else 1
    if abs(last - round(total * tpu)) > tol:
        fail("%s: last timestamp %d, want %d" % (path, last, round(total * tpu)))
    for t, v in sig["occupancy"]["changes"]:
        if v > capacity:
            fail("%s: occupancy %d at %d above capacity %r" % (path, v, t, capacity))
    for ref in ("read_busy", "write_busy", "unit0_busy"):
        if sum(v for _, v in sig[ref]["changes"]) == 0:
            fail("%s: %s is never 1" % (path, ref))
    # the occupancy signal is the JSON counter, instant by instant (the
    # last counter value at a timestamp holds; unchanged values are not
    # written again); JSON microseconds are units x us_per_unit
    us = 1 if clock == 0 else 1e6 / clock
    last_at = {}
    for ts, v in occ:
        last_at[round(ts / us * tpu)] = v
    want_occ = [(0, last_at.pop(0, 0))]
    for t in sorted(last_at):
        if last_at[t] != want_occ[-1][1]:
            want_occ.append((t, last_at[t]))
    got = sig["occupancy"]["changes"]
    if len(got) != len(want_occ) or any(a[1] != b[1] or abs(a[0] - b[0]) > tol for a, b in zip(got, want_occ)):
        fail("%s: occupancy changes differ from the JSON counter" % path)
    # the power signal (a real, watts) is the JSON power counter
    if not power:
        if "watts" in sig:
            fail("%s: a power signal without an energy model" % path)
    else:
        got = sig["watts"]["changes"] if "watts" in sig and sig["watts"]["path"] == "fusetile.power" else None
        want_pw = [(round(ts / us * tpu), w) for ts, w in power]
        if got is None or len(got) != len(want_pw) or any(a[1] != b[1] or abs(a[0] - b[0]) > tol for a, b in zip(got, want_pw)):
            fail("%s: fusetile.power.watts %r differs from the JSON power counter %r" % (path, (got or [])[:4], want_pw[:4]))
    return sig, last

def check_gtkw(path, vcd, sig, last, sgnames):
    """The save file names the VCD by its base name and lists every signal
    by its full path, each scope opened; it opens zoomed to the whole run
    (GTKWave shows 2^-zoom ticks per 200 pixels; the waves' pane is 1400 -
    260 - 70 pixels wide) and shows the subgraph through the translate file
    beside it, which names every subgraph."""
    import os
    with open(path, encoding="ascii") as f:
        lines = f.read().split("\n")
    start = [int(l.split()[1]) for l in lines if l.startswith("[timestart] ")]
    zoom = [float(l[1:].split()[0]) for l in lines if l.startswith("*")]
    if len(start) != 1 or len(zoom) != 1:
        fail("%s: want one [timestart] and one zoom line" % path)
    shown, span = 2.0 ** -zoom[0] / 200 * (1400 - 260 - 70), last - start[0]
    if not (shown >= span * 0.999 and (shown <= span * 1.001 or zoom[0] == 0)):
        fail("%s: zoom %r shows %r ticks, the run lasts %r" % (path, zoom[0], shown, span))
    xl = re.sub(r"\.vcd$", "", os.path.basename(vcd)) + ".subgraphs.txt"
    i = lines.index("^1 " + xl) if "^1 " + xl in lines else -1
    if i < 0 or lines[i + 1:i + 3] != ["@2024", "fusetile.controller.subgraph"]:
        fail("%s: the subgraph is not shown through %s (^1, @2024)" % (path, xl))
    with open(os.path.join(os.path.dirname(path), xl), encoding="ascii") as f:
        rows = [l.split(" ", 1) for l in f.read().split("\n") if l and not l.startswith("#")]
    if [int(r[0]) for r in rows] != list(range(len(rows))) or any(len(r) != 2 or not r[1] for r in rows):
        fail("%s: not one line INDEX LABEL per subgraph from 0" % xl)
    for sg, name in sgnames.items():
        if sg >= len(rows) or rows[sg][1] != name:
            fail("%s: subgraph %d is %r, want %r" % (xl, sg, rows[sg][1] if sg < len(rows) else None, name))
    if '[dumpfile] "%s"' % os.path.basename(vcd) not in lines:
        fail("%s: no [dumpfile] line naming %s" % (path, os.path.basename(vcd)))
    for v in sig.values():
        full = v["path"] + "." + v["ref"]
        if full not in lines:
            fail("%s: does not list %s" % (path, full))
        if "[treeopen] %s." % v["path"] not in lines:
            fail("%s: does not open %s" % (path, v["path"]))

def main():
    if len(sys.argv) != 7:
        fail("usage: check_trace.py TRACE.json TRACE.vcd CAPACITY TOTAL CLOCK_HZ SIMULATE.json")
    capacity, total, clock = float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
    us = 1 if clock == 0 else 1e6 / clock
    with open(sys.argv[6], encoding="utf-8") as f:
        energy = json.load(f).get("energy_j")
    nspans, occ, sgnames, power, doc = check_json(sys.argv[1], capacity, total, us)
    check_power(sys.argv[1], power, doc, total, us, energy)
    sig, last = check_vcd(sys.argv[2], capacity, total, occ, clock, power)
    check_gtkw(re.sub(r"\.vcd$", "", sys.argv[2]) + ".gtkw", sys.argv[2], sig, last, sgnames)
    print("check_trace: %s: %d spans, %d occupancy changes; %s and its save file: accepted" % (sys.argv[1], nspans, len(occ), sys.argv[2]))

main()
PY

# check_trace NAME JSON VCD PROBLEM SIMULATE-JSON-OUTPUT [CAPACITY [CLOCK_HZ]]: the
# trace pair and the save file next to the VCD are consistent with the
# problem's capacity and the simulated total (in cycles of CLOCK_HZ; 0 or
# none: cost units).
check_trace() {
    local name=$1 json=$2 vcd=$3 problem=$4 out=$5 cap=${6:-} clock=${7:-0} total
    { [ -n "$cap" ] || cap=$(field "$problem" fast_memory_capacity); } && total=$(field "$out" total_simulated) || {
        fail=$((fail + 1))
        echo "FAIL $name: no capacity in $problem or no total_simulated in the output"
        return
    }
    expect "$name" "the trace is consistent (capacity $cap, total $total, clock $clock)" \
        python3 "$tmp/check_trace.py" "$json" "$vcd" "$cap" "$total" "$clock" "$out"
}

# --- golden traces (every step): regenerated byte for byte, and consistent
for n in ex1A ex4B E-mlp-fused B-prologue-splitk; do
    P=$vec/$n.problem.json
    S=$vec/$n.solution.json
    check "golden-$n-simulate" 0 out '"agree": true' -- "$bin" simulate "$P" "$S" --trace "$tmp/$n.json" --vcd "$tmp/$n.vcd" --detail steps --json
    cp "$tmp/out" "$tmp/$n.out"
    expect "golden-$n-json" "$tmp/$n.json differs from traces/$n.json" cmp -s "$golden/$n.json" "$tmp/$n.json"
    expect "golden-$n-vcd" "$tmp/$n.vcd differs from traces/$n.vcd" cmp -s "$golden/$n.vcd" "$tmp/$n.vcd"
    expect "golden-$n-gtkw" "$tmp/$n.gtkw differs from traces/$n.gtkw" cmp -s "$golden/$n.gtkw" "$tmp/$n.gtkw"
    expect "golden-$n-translate" "$tmp/$n.subgraphs.txt differs from traces/$n.subgraphs.txt" \
        cmp -s "$golden/$n.subgraphs.txt" "$tmp/$n.subgraphs.txt"
    check_trace "golden-$n-consistent" "$tmp/$n.json" "$tmp/$n.vcd" "$P" "$tmp/$n.out"
done

# --- the golden trace of the default detail (a span per subgraph and per
# tile, counters per period): ex1A.waves.*, byte for byte, and consistent
P=$vec/ex1A.problem.json
S=$vec/ex1A.solution.json
check golden-waves-simulate 0 out '"agree": true' -- "$bin" simulate "$P" "$S" --trace "$tmp/ex1A.waves.json" --vcd "$tmp/ex1A.waves.vcd" --json
for x in json vcd gtkw subgraphs.txt; do
    expect "golden-waves-$x" "$tmp/ex1A.waves.$x differs from traces/ex1A.waves.$x" cmp -s "$golden/ex1A.waves.$x" "$tmp/ex1A.waves.$x"
done
check_trace golden-waves-consistent "$tmp/ex1A.waves.json" "$tmp/ex1A.waves.vcd" "$P" "$tmp/out"

# --- a problem with names (N-named-mlp is E-mlp-fused with op_names and
# tensor_names): spans named after the subgraph's label and the tensors,
# args with "label" and "tensor_name", the VCD's subgraph comment; apart
# from those, the same events as the golden E-mlp-fused trace
N=$vec/N-named-mlp.problem.json
check named-simulate 0 out '"agree": true' -- "$bin" simulate "$N" "$vec/N-named-mlp.solution.json" --trace "$tmp/named.json" --vcd "$tmp/named.vcd" --detail steps --json
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
        for key in ("label", "tensor_name", "loads", "writes"):
            ev["args"].pop(key, None)
        if ev.get("ph") == "X":
            ev.pop("name")
        out.append(ev)
    doc["otherData"].pop("subgraph_labels", None)
    return out, doc["otherData"]
sys.exit(0 if events(sys.argv[1]) == events(sys.argv[2]) else 1)
PY
expect named-same-events "without names and labels the events are the golden E-mlp-fused ones" python3 "$tmp/strip_names.py" "$tmp/named.json" "$golden/E-mlp-fused.json"
expect named-labels-meta "otherData lists the labels" grep -q '"subgraph_labels":\["encoder.layer1.fc1+act+fc2"\]' "$tmp/named.json"
expect named-subgraph-span "the subgraph span is named after its ops" grep -q '"name":"encoder.layer1.fc1+act+fc2","cat":"subgraph"' "$tmp/named.json"
expect named-step-tensors "a step lists its tensors by name" grep -q '"loads":\["encoder.layer1.fc1.weight",' "$tmp/named.json"

# --- one file at a time; the report is the same with and without traces
P=$vec/E-mlp-fused.problem.json
S=$vec/E-mlp-fused.solution.json
check trace-only 0 - '' -- "$bin" simulate "$P" "$S" --trace "$tmp/only.json" --detail steps
expect trace-only-files "only only.json is written" test -s "$tmp/only.json" -a ! -e "$tmp/only.vcd"
expect trace-only-same "--trace alone writes the same JSON" cmp -s "$tmp/only.json" "$golden/E-mlp-fused.json"
check vcd-only 0 - '' -- "$bin" simulate "$P" "$S" --vcd "$tmp/only.vcd" --detail steps
expect vcd-only-same "--vcd alone writes the same VCD" cmp -s "$tmp/only.vcd" "$golden/E-mlp-fused.vcd"
expect vcd-only-gtkw "--vcd writes the save file next to the VCD" \
    cmp -s <(sed 's/only\./E-mlp-fused./g' "$tmp/only.gtkw") "$golden/E-mlp-fused.gtkw"
expect vcd-only-translate "--vcd writes the translate file next to the save file" \
    cmp -s "$tmp/only.subgraphs.txt" "$golden/E-mlp-fused.subgraphs.txt"
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
check trace-is-gtkw 2 err "--trace names '$tmp/g.gtkw', the GTKWave save file that --vcd writes" -- \
    "$bin" simulate "$P" "$S" --trace "$tmp/g.gtkw" --vcd "$tmp/g.vcd"

# --- subgraph spans named after their ops: source names (the importer's
# lowering suffix stripped), each once; "op N" without names; the
# schedule's label in the args
python3 - "$vec/ex1A.problem.json" "$vec/ex1A.solution.json" "$tmp/imp.problem.json" "$tmp/imp.solution.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["op_names"] = ["blk.conv/im2col", "blk.conv"]
json.dump(p, open(sys.argv[3], "w"))
s = json.load(open(sys.argv[2]))
s = {"subgraphs": [[0, 1]], "granularities": [[128, 128, 1]], "tensors_to_retain": [[]],
     "subgraph_labels": ["conv (im2col fused)"]}
json.dump(s, open(sys.argv[4], "w"))
PY
check imported-simulate 0 - '' -- "$bin" simulate "$tmp/imp.problem.json" "$tmp/imp.solution.json" --trace "$tmp/imp.json"
expect imported-source-name "the subgraph span is named after the source op, once" \
    grep -q '"name":"blk.conv","cat":"subgraph".*"ops":\[0,1\],"schedule_label":"conv (im2col fused)"' "$tmp/imp.json"
expect unnamed-op-names "without names, subgraph spans say op N" grep -q '"name":"op 1","cat":"subgraph"' "$golden/ex1A.json"

# --- a window of steps: only those steps' spans (and the subgraph span they
# touch, cut to them), the VCD from the window's start; the replay and its
# report are whole
check window 0 out '"steps": 16' -- "$bin" simulate "$P" "$S" --trace "$tmp/w.json" --vcd "$tmp/w.vcd" --window 2:3 --json
expect window-json "the JSON holds steps 2 to 4 only" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
xs = [e for e in d["traceEvents"] if e["ph"] == "X"]
steps = sorted(e["args"]["replay_step"] for e in xs if e["cat"] == "step")
sub = [e for e in xs if e["cat"] == "subgraph"]
ok = steps == [2, 3, 4] and all(e["args"]["step"] in (2, 3, 4) for e in xs if e["cat"] != "subgraph")
ok = ok and len(sub) == 1 and sub[0]["args"]["clipped_to_window"] is True
ok = ok and d["otherData"]["window"] == {"first_step": 2, "steps": 3}
t0 = min(e["ts"] for e in xs)
ok = ok and all(e["ts"] >= t0 for e in d["traceEvents"] if e["ph"] == "C") and sub[0]["ts"] == t0
sys.exit(0 if ok else 1)' "$tmp/w.json"
expect window-vcd "the VCD starts at step 2 and says so" python3 -c '
import sys
text = open(sys.argv[1]).read()
body = text.split("$enddefinitions $end\n")[1].split()
step = body.index("b10") if "b10" in body[:12] else -1
sys.exit(0 if "$comment window: steps 2 to 4 $end" in text and body[0] != "#0" and body[1] == "$dumpvars" and step > 0 and body[step + 1] == chr(34) else 1)' "$tmp/w.vcd"
expect window-gtkw "the save file starts at the window" grep -q "^\[timestart\] [1-9]" "$tmp/w.gtkw"
check window-past-end 2 err "trace window: step 16 is past the replay's last step \(16 steps: 0 to 15\)" -- \
    "$bin" simulate "$P" "$S" --trace "$tmp/wp.json" --vcd "$tmp/wp.vcd" --window 16:1
expect window-past-end-clean "no trace file is left" no_files "$tmp/wp.*"
for bad in 5 1:0 a:3 -1:3 1:2:3 :3 2: 9223372036854775807:1 ''; do
    check "window-bad-'$bad'" 2 err "--window '$bad': expected FIRST:COUNT" -- "$bin" simulate "$P" "$S" --trace "$tmp/wb.json" --window="$bad"
    expect "window-bad-'$bad'-one-line" "one line on stderr" test "$(wc -l <"$tmp/err")" -eq 1
done
check window-no-value 2 err "option --window needs a value" -- "$bin" simulate "$P" "$S" --trace "$tmp/wb.json" --window
check window-no-trace 2 err "--window limits the traces: give --trace or --vcd too" -- "$bin" simulate "$P" "$S" --window 1:2
expect window-bad-clean "no trace file is left" no_files "$tmp/wb.*"

# --- the detail options and the size warning's: errors on one line, exit 2
check detail-bad 2 err "--detail 'all': expected waves or steps" -- "$bin" simulate "$P" "$S" --trace "$tmp/db.json" --detail all
expect detail-bad-one-line "one line on stderr" test "$(wc -l <"$tmp/err")" -eq 1
check detail-no-value 2 err "option --detail needs a value" -- "$bin" simulate "$P" "$S" --trace "$tmp/db.json" --detail
check detail-no-trace 2 err "--detail says what the traces keep: give --trace or --vcd too" -- "$bin" simulate "$P" "$S" --detail steps
for bad in x 10X -1 M 99999999999999999999 ''; do
    check "trace-warn-bad-'$bad'" 2 err "--trace-warn '$bad': expected a size in bytes" -- \
        "$bin" simulate "$P" "$S" --trace "$tmp/db.json" --trace-warn="$bad"
done
expect detail-bad-clean "no trace file is left" no_files "$tmp/db.*"
check detail-waves 0 - '' -- "$bin" simulate "$P" "$S" --trace "$tmp/dw.json" --detail waves
check detail-default 0 - '' -- "$bin" simulate "$P" "$S" --trace "$tmp/dd.json"
expect detail-waves-default "--detail waves is the default" cmp -s "$tmp/dw.json" "$tmp/dd.json"

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
# the same replay with every step: consistent too, and the default is its
# summary (compare_detail.py)
# (its step trace is about 28 MB: past --trace-warn 5M, it warns once, on
# the JSON trace alone, the VCD being about 2 MB)
check m13-steps-simulate 0 out '"agree": true' -- \
    "$bin" simulate "$B" "$tmp/m13.schedule.json" --trace "$tmp/m13s.json" --vcd "$tmp/m13s.vcd" --detail steps --json --trace-warn 5M
expect m13-steps-warns "not one warning naming $tmp/m13s.json past 5 MB: $(head -c 300 "$tmp/err")" \
    test "$(grep -c "^fusetile: warning: trace $tmp/m13s.json is on course for about [0-9.]* MB, past the warning size of 5 MB (--trace-warn).*--window FIRST:COUNT" "$tmp/err")" -eq 1 -a "$(wc -l <"$tmp/err")" -eq 1
check_trace m13-steps-consistent "$tmp/m13s.json" "$tmp/m13s.vcd" "$B" "$tmp/out"
cat >"$tmp/compare_detail.py" <<'PY'
# compare_detail.py DEFAULT.json STEPS.json SCHEDULE.json MAX_BYTES: the
# default trace has the step trace's subgraph spans, one span per subgraph
# of the schedule; controller spans that cover every tile of the step trace
# once, each a run of whole tiles ("tile", "last_tile") from its first
# step's start to its last step's end, counting its steps, each covering
# fewer than 2 x span_steps steps unless it is one tile; at most
# FT_TRACE_WAVE_SPANS (20000) plus one per subgraph; no step, load or write
# spans; at most FT_TRACE_COUNTER_SAMPLES (1000) samples per counter track
# plus the final one; and fewer than MAX_BYTES bytes.
import json, os, sys
from collections import Counter
d, s = (json.load(open(p)) for p in sys.argv[1:3])
nsg = len(json.load(open(sys.argv[3]))["subgraphs"])
def fail(msg):
    print("compare_detail: " + msg)
    sys.exit(1)
def xs(doc, cat):
    return [e for e in doc["traceEvents"] if e["ph"] == "X" and e["cat"] == cat]
near = lambda a, b: abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b))
sd = sorted((e["args"]["sg"], e["ts"], e["dur"]) for e in xs(d, "subgraph"))
ss = sorted((e["args"]["sg"], e["ts"], e["dur"]) for e in xs(s, "subgraph"))
if [x[0] for x in sd] != list(range(nsg)) or sd != ss:
    fail("%d subgraph spans, want one per subgraph (%d) as in the step trace" % (len(sd), nsg))
for cat in ("step", "load", "write"):
    if xs(d, cat):
        fail("the default trace has %s spans" % cat)
tiles = {}
for e in xs(s, "step"):
    k = (e["args"]["sg"], e["args"]["tile"])
    a, b, n = tiles.get(k, (e["ts"], e["ts"] + e["dur"], 0))
    tiles[k] = (min(a, e["ts"]), max(b, e["ts"] + e["dur"]), n + 1)
span = d["otherData"]["span_steps"]
covered = set()
for e in xs(d, "tile"):
    sg, t0 = e["args"]["sg"], e["args"]["tile"]
    ks = [(sg, t) for t in range(t0, e["args"].get("last_tile", t0) + 1) if (sg, t) in tiles]
    if not ks or covered & set(ks):
        fail("span %r covers no tile or one covered before" % e["name"])
    covered |= set(ks)
    a, b, n = min(tiles[k][0] for k in ks), max(tiles[k][1] for k in ks), sum(tiles[k][2] for k in ks)
    if not (near(e["ts"], a) and near(e["ts"] + e["dur"], b) and e["args"]["steps"] == n):
        fail("span %r: %r, its tiles' steps %r" % (e["name"], (e["ts"], e["ts"] + e["dur"], e["args"]["steps"]), (a, b, n)))
    if len(ks) > 1 and n - tiles[ks[-1]][2] >= span:
        fail("span %r goes on past %d steps" % (e["name"], span))
if covered != set(tiles):
    fail("the tile spans cover %d of %d tiles" % (len(covered), len(tiles)))
if len(xs(d, "tile")) > 20000 + nsg or not xs(d, "compute"):
    fail("%d tile spans (at most 20000 + %d), %d compute spans" % (len(xs(d, "tile")), nsg, len(xs(d, "compute"))))
samples = Counter(e["name"] for e in d["traceEvents"] if e["ph"] == "C")
if not samples or max(samples.values()) > 1001:
    fail("counter samples %r, want at most 1001 per track" % dict(samples))
if os.path.getsize(sys.argv[1]) >= int(sys.argv[4]):
    fail("%s has %d bytes, want fewer than %s" % (sys.argv[1], os.path.getsize(sys.argv[1]), sys.argv[4]))
print("compare_detail: %d subgraphs, %d tiles in %d spans (span_steps %d), %d of %d bytes" % (nsg, len(tiles), len(xs(d, "tile")), span, os.path.getsize(sys.argv[1]), os.path.getsize(sys.argv[2])))
PY
expect m13-default-summary "the default trace sums up the step trace (compare_detail.py)" \
    python3 "$tmp/compare_detail.py" "$tmp/m13.json" "$tmp/m13s.json" "$tmp/m13.schedule.json" "$(stat -c %s "$tmp/m13s.json")"

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
    clock=$(sed -n 's/^clock_hz *= *\([0-9.e]*\);.*/\1/p' "$src/targets/$t.cfg")
    check_trace "$t-consistent" "$tmp/$t.json" "$tmp/$t.vcd" "$B" "$tmp/$t.out" "$cap" "$clock"
    expect "$t-other-data" "otherData names the target $t and its clock $clock" python3 -c '
import json, sys
o = json.load(open(sys.argv[1]))["otherData"]
sys.exit(0 if o["target"] == sys.argv[2] and o["clock_hz"] == float(sys.argv[3]) and "real time" in o["time_unit"] else 1)' \
        "$tmp/$t.json" "$t" "$clock"
    expect "$t-process-name" "the trace names the target $t" \
        grep -q "\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,\"args\":{\"name\":\"$t\"}" "$tmp/$t.json"
    expect "$t-vcd-target" "the VCD names the target $t" grep -qx "\\\$comment target $t \\\$end" "$tmp/$t.vcd"
done

# --- the power track (issue 35): on the H100 (an energy group) the Chrome
# trace's "power" counter and the VCD's power.watts give each subgraph's
# average power from the simulator's own energy account, stepping at the
# subgraph starts; their integral is the replay's joules (check_trace's
# check_power); the contest target (the golden traces above) has neither
H=$src/targets/gpu-h100.cfg
check h100-schedule 0 - '' -- "$bin" schedule "$B" --target "$H" --time-limit 0.5 -q -o "$tmp/h100.schedule.json"
check h100-simulate 0 out '"energy_agree": true' -- \
    "$bin" simulate "$B" "$tmp/h100.schedule.json" --target "$H" --trace "$tmp/h100.json" --vcd "$tmp/h100.vcd" --json
cp "$tmp/out" "$tmp/h100.out"
cap=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["otherData"]["fast_memory_capacity"])' "$tmp/h100.json")
clock=$(sed -n 's/^clock_hz *= *\([0-9.e]*\);.*/\1/p' "$H")
check_trace h100-consistent "$tmp/h100.json" "$tmp/h100.vcd" "$B" "$tmp/h100.out" "$cap" "$clock"
expect h100-power-levels "the power levels are not the subgraphs' power_w in order" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
levels = [e["args"]["watts"] for e in json.load(open(sys.argv[2]))["traceEvents"] if e["name"] == "power"]
want = [g["power_w"] for g in d["subgraphs"]]
want = [w for i, w in enumerate(want) if i == 0 or w != want[i - 1]] + [0]
sys.exit(0 if levels == want and len(want) > 2 else 1)' "$tmp/h100.out" "$tmp/h100.json"
expect h100-gtkw-power "the save file does not show power.watts as a step curve (@8024)" \
    grep -A1 -x '@8024' "$tmp/h100.gtkw" | grep -qx 'fusetile.power.watts'
check h100-json-only 0 - '' -- "$bin" simulate "$B" "$tmp/h100.schedule.json" --target "$H" --trace "$tmp/h100j.json"
expect h100-json-only-same "--trace alone writes another power counter" \
    test "$(grep '"name":"power"' "$tmp/h100j.json")" = "$(grep '"name":"power"' "$tmp/h100.json")"
check h100-vcd-only 0 - '' -- "$bin" simulate "$B" "$tmp/h100.schedule.json" --target "$H" --vcd "$tmp/h100v.vcd"
expect h100-vcd-only-same "--vcd alone writes another VCD" cmp -s "$tmp/h100v.vcd" "$tmp/h100.vcd"
expect h100-vcd-steps-power "--detail steps has no power.watts" python3 -c '
import subprocess, sys
sys.exit(subprocess.call([sys.argv[1], "simulate", sys.argv[2], sys.argv[3], "--target", sys.argv[4], "--vcd", sys.argv[5],
                          "--detail", "steps"]) or ("power $end" not in open(sys.argv[5]).read()))' \
    "$bin" "$B" "$tmp/h100.schedule.json" "$H" "$tmp/h100s.vcd"
# a window: the track cut to the window, from its first instant to its end
check h100-window 0 - '' -- "$bin" simulate "$B" "$tmp/h100.schedule.json" --target "$H" --trace "$tmp/h100w.json" \
    --vcd "$tmp/h100w.vcd" --window 10:30
expect h100-window-power "the windowed power counter is not cut to the window" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
pw = [(e["ts"], e["args"]["watts"]) for e in ev if e["name"] == "power"]
spans = [(e["ts"], e["ts"] + e["dur"]) for e in ev if e.get("ph") == "X"]
t0, t1 = min(a for a, _ in spans), max(b for _, b in spans)
full = {e["args"]["watts"] for e in json.load(open(sys.argv[2]))["traceEvents"] if e["name"] == "power"}
near = lambda a, b: abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1e-9)   # a span ends at ts + dur, rounded
sys.exit(0 if pw and near(pw[0][0], t0) and near(pw[-1][0], t1) and pw[-1][1] == 0 and {w for _, w in pw} <= full else 1)' "$tmp/h100w.json" "$tmp/h100.json"
expect h100-window-vcd "the windowed VCD has no power.watts" grep -q 'power \$end' "$tmp/h100w.vcd"

# --- real time: the same replay on the KPU with twice its clock is shown in
# half the time (a window keeps the traces small)
B=$src/benchmarks/mlsys-2026-1.json
sed 's/^clock_hz = 1.0e9;/clock_hz = 2.0e9;/' "$src/targets/kpu.cfg" >"$tmp/kpu2.cfg"
check clock-1ghz 0 - '' -- "$bin" simulate "$B" "$tmp/kpu.schedule.json" --target "$src/targets/kpu.cfg" --trace "$tmp/c1.json" --vcd "$tmp/c1.vcd" --window 0:40
check clock-2ghz 0 - '' -- "$bin" simulate "$B" "$tmp/kpu.schedule.json" --target "$tmp/kpu2.cfg" --trace "$tmp/c2.json" --vcd "$tmp/c2.vcd" --window 0:40
expect clock-scales "timestamps at 2 GHz are half those at 1 GHz" python3 -c '
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
ea = [e for e in a["traceEvents"] if e["ph"] in "XC"]
eb = [e for e in b["traceEvents"] if e["ph"] in "XC"]
near = lambda x, y: abs(x - y) <= 1e-9 * max(1.0, abs(x))
ok = len(ea) == len(eb) > 40 and all(near(x["ts"], 2 * y["ts"]) and near(x.get("dur", 0), 2 * y.get("dur", 0)) for x, y in zip(ea, eb))
ok = ok and a["otherData"]["clock_hz"] == 1e9 and b["otherData"]["clock_hz"] == 2e9 and near(a["otherData"]["end_time"], 2 * b["otherData"]["end_time"])
sys.exit(0 if ok else 1)' "$tmp/c1.json" "$tmp/c2.json"
expect clock-vcd "both VCDs tick in ps, the same instants twice as far apart" python3 -c '
import sys
def stamps(p):
    t = open(p).read()
    return "$timescale 1 ps $end" in t, [int(x[1:]) for x in t.split() if x.startswith("#") and x[1:].isdigit()]
(sa, ta), (sb, tb) = stamps(sys.argv[1]), stamps(sys.argv[2])
sys.exit(0 if sa and sb and len(ta) == len(tb) > 10 and all(abs(x - 2 * y) <= 1 for x, y in zip(ta, tb)) else 1)' "$tmp/c1.vcd" "$tmp/c2.vcd"

# --- a big problem: the quick start's ResNet-18 on the KPU.  The default
# trace stays under 20 MB with a span per subgraph and per run of tiles and says
# nothing; every step (85 MB or so) passes a 20 MB warning size, which the
# run says once, early, with how to trace less; the VCD's warning likewise
R=$src/examples/resnet18.problem.json
check r18-schedule 0 - '' -- "$bin" schedule "$R" --target "$src/targets/kpu.cfg" --time-limit 1 -q -o "$tmp/r18.schedule.json"
check r18-default 0 - '' -- "$bin" simulate "$R" "$tmp/r18.schedule.json" --target "$src/targets/kpu.cfg" \
    --trace "$tmp/r18.json" --vcd "$tmp/r18.vcd" --trace-warn 20M --json
cp "$tmp/out" "$tmp/r18.out"
expect r18-default-quiet "no warning under 20 MB" test ! -s "$tmp/err"
# Under FT_SLOW (valgrind, sanitizers) the ResNet-18 step trace (its
# largest run there) is left out: mlsys-2026-13's step trace above runs the
# same code, warning included; plain make check runs both.
if [ "$slow" = 1 ]; then
    skip 3 "FT_SLOW: the ResNet-18 step trace and its size warning left out (mlsys-2026-13's step trace runs the same code, warning included)"
else
    check r18-steps-warns 0 err "^fusetile: warning: trace $tmp/r18s.json is on course for about [0-9.]+ MB, past the warning size of 20 MB \(--trace-warn\).*--window FIRST:COUNT.*leave out --detail steps" -- \
        "$bin" simulate "$R" "$tmp/r18.schedule.json" --target "$src/targets/kpu.cfg" --trace "$tmp/r18s.json" --detail steps --trace-warn 20M
    expect r18-steps-warns-once "one warning line" test "$(grep -c warning "$tmp/err")" -eq 1
    expect r18-summary "one span per subgraph, spans of whole tiles, under 20 MB (compare_detail.py)" \
        python3 "$tmp/compare_detail.py" "$tmp/r18.json" "$tmp/r18s.json" "$tmp/r18.schedule.json" 20000000
    rm -f "$tmp/r18s.json"
fi
cap=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["otherData"]["fast_memory_capacity"])' "$tmp/r18.json")
check_trace r18-consistent "$tmp/r18.json" "$tmp/r18.vcd" "$R" "$tmp/r18.out" "$cap" 1.0e9
# (under valgrind, where each is a ResNet-18 replay of some 10 s, these two
# are left out: the replay and its VCD ran above, and mlsys-2026-13's step
# trace runs the warning)
case ${FT_RUNNER:-} in
    *valgrind*)
        skip 4 "the ResNet-18 VCD's warning sizes under valgrind (the replay and its VCD ran above; mlsys-2026-13's step trace warns)" ;;
    *)
        check r18-vcd-warns 0 err "^fusetile: warning: trace $tmp/r18w.vcd (is on course for about|has) [0-9.]+ MB, past the warning size of 0.1 MB" -- \
            "$bin" simulate "$R" "$tmp/r18.schedule.json" --target "$src/targets/kpu.cfg" --vcd "$tmp/r18w.vcd" --trace-warn 100k
        expect r18-vcd-warns-once "one warning line" test "$(grep -c warning "$tmp/err")" -eq 1
        check r18-warn-never 0 - '' -- "$bin" simulate "$R" "$tmp/r18.schedule.json" --target "$src/targets/kpu.cfg" --vcd "$tmp/r18w.vcd" --trace-warn 0
        expect r18-warn-never-quiet "--trace-warn 0: no warning" test ! -s "$tmp/err" ;;
esac

# --- GTKWave (when it and xvfb-run are installed) opens the ResNet-18 VCD
# with its save file showing the whole run and the subgraph by name
if command -v gtkwave >/dev/null 2>&1 && command -v xvfb-run >/dev/null 2>&1; then
    cat >"$tmp/gtkwave.tcl" <<'TCL'
puts "window [gtkwave::getWindowStartTime] [gtkwave::getWindowEndTime] [gtkwave::getMaxTime]"
gtkwave::setMarker [expr {[gtkwave::getMaxTime] / 2}]
puts "subgraph [gtkwave::getTraceValueAtMarkerFromName fusetile.controller.subgraph]"
puts "power [gtkwave::getTraceValueAtMarkerFromName fusetile.power.watts]"
gtkwave::/File/Quit
TCL
    (cd "$tmp" && timeout 120 xvfb-run -a -s '-screen 0 1400x900x24' gtkwave -S gtkwave.tcl r18.vcd r18.gtkw) >"$tmp/gtkwave.out" 2>&1
    expect gtkwave-whole-run "GTKWave's window shows the whole run and little more" python3 -c '
import sys
w = [l.split()[1:] for l in open(sys.argv[1]) if l.startswith("window ")]
sys.exit(0 if w and int(w[0][0]) == 0 and int(w[0][2]) <= int(w[0][1]) <= 1.02 * int(w[0][2]) else 1)' "$tmp/gtkwave.out"
    expect gtkwave-subgraph-name "GTKWave shows the subgraph by its label" python3 -c '
import sys
v = [l.split(" ", 1)[1].strip() for l in open(sys.argv[1]) if l.startswith("subgraph ")]
names = [l.split(" ", 1)[1].strip() for l in open(sys.argv[2]) if not l.startswith("#")]
sys.exit(0 if v and v[0] in names and not v[0].isdigit() else 1)' "$tmp/gtkwave.out" "$tmp/r18.subgraphs.txt"
    expect gtkwave-power "GTKWave does not read power.watts as one of the power levels" python3 -c '
import json, sys
v = [l.split()[1] for l in open(sys.argv[1]) if l.startswith("power ")]
levels = {e["args"]["watts"] for e in json.load(open(sys.argv[2]))["traceEvents"] if e["name"] == "power"}
sys.exit(0 if v and any(abs(float(v[0]) - w) <= 1e-6 * w for w in levels if w > 0) else 1)' "$tmp/gtkwave.out" "$tmp/r18.json"
else
    skip 3 "gtkwave or xvfb-run is not installed: GTKWave opening the save file is not checked"
fi

finish trace
