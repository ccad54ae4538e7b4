#!/usr/bin/env bash
# test_report.sh - `fusetile report`: its error paths, the page written atomically and self-contained, its embedded JSON against `fusetile evaluate --json`, and (with chromium) the page rendered headless passing its own checks, with a screenshot.
# usage: test_report.sh FUSETILE VECTORS_DIR
# The rendering cases need Debian's chromium; without it they are skipped
# with one line.
set -u
bin=${1:?usage: test_report.sh FUSETILE VECTORS_DIR}
vec=${2:?usage: test_report.sh FUSETILE VECTORS_DIR}
. "$(dirname "$0")/lib.sh"
src=$(cd "$vec/../.." && pwd)

prob=$vec/N-named-mlp.problem.json
sol=$vec/N-named-mlp.solution.json
kpu=$src/targets/kpu.cfg
quick=(--time-limit 0.5 --threads 1)

# ---------------------------------------------------------------- usage
check help 0 out 'fusetile report PROBLEM.json \[SCHEDULE.json\] -o REPORT.html' -- "$bin" report --help
check help-lists 0 out '^  fusetile report ' -- "$bin" --help
check no-args 2 err 'report: needs PROBLEM.json' -- "$bin" report
check no-output 2 err 'report: needs -o REPORT.html' -- "$bin" report "$prob" "$sol"
check empty-output 2 err 'report: -o needs a file name' -- "$bin" report "$prob" "$sol" -o ''
check unknown-option 2 err "report: unknown option '--bogus'" -- "$bin" report "$prob" "$sol" --bogus -o "$tmp/x.html"
check extra-arg 2 err "report: unexpected argument 'three'" -- "$bin" report "$prob" "$sol" three -o "$tmp/x.html"
check bad-time-limit 2 err "report: --time-limit is '0', must be a positive number of seconds" -- \
    "$bin" report "$prob" -o "$tmp/x.html" --time-limit 0
check bad-strategies 2 err "report: --strategies: .*bogus" -- \
    "$bin" report "$prob" -o "$tmp/x.html" --strategies rules,bogus
check keep-costs-alone 2 err 'report: --keep-costs needs --target' -- \
    "$bin" report "$prob" "$sol" -o "$tmp/x.html" --keep-costs
check missing-problem 2 err "$tmp/nope.json" -- "$bin" report "$tmp/nope.json" -o "$tmp/x.html"
check missing-schedule 2 err "$tmp/nope.json" -- "$bin" report "$prob" "$tmp/nope.json" -o "$tmp/x.html"
printf 'name = "broken";\ncontest = false;\n' >"$tmp/bad.cfg"
check bad-target 2 err "$tmp/bad.cfg" -- "$bin" report "$prob" "$sol" --target "$tmp/bad.cfg" -o "$tmp/x.html"
check missing-target 2 err "$tmp/none.cfg" -- "$bin" report "$prob" "$sol" --target "$tmp/none.cfg" -o "$tmp/x.html"
mkdir "$tmp/dir"
check output-is-dir 2 err "$tmp/dir" -- "$bin" report "$prob" "$sol" -o "$tmp/dir" --strategies none
check output-no-dir 2 err "$tmp/no/such/dir/r.html" -- "$bin" report "$prob" "$sol" -o "$tmp/no/such/dir/r.html" --strategies none
check output-is-input 2 err 'is the schedule input' -- "$bin" report "$prob" "$sol" -o "$sol" --strategies none
expect no-files-on-errors "a failed report left a file" test ! -e "$tmp/x.html"

# An invalid schedule: exit 1, and an existing page is left as it was.
echo 'previous page' >"$tmp/keep.html"
check invalid-schedule 1 err 'invalid schedule \(oom\)' -- \
    "$bin" report "$vec/X-oom.problem.json" "$vec/X-oom.solution.json" -o "$tmp/keep.html" --strategies none
expect invalid-keeps-old "an invalid schedule's report replaced the previous page" grep -qx 'previous page' "$tmp/keep.html"

# ---------------------------------------------------------------- a page
# The problem scheduled on the KPU target (the vector's solution is for
# the problem file's machine).
check schedule-kpu 0 - '' -- "$bin" schedule "$prob" --target "$kpu" -o "$tmp/kpu.json" --quiet "${quick[@]}"
# Over the previous page: replaced whole (ft_write_atomic), no temporary
# file left beside it.
echo 'previous page' >"$tmp/r.html"
check write 0 err 'report: wrote' -- "$bin" report "$prob" "$tmp/kpu.json" --target "$kpu" -o "$tmp/r.html" \
    --strategies search,rules,patterns "${quick[@]}"
expect write-replaced "the page did not replace the previous file" grep -q '^<!DOCTYPE html>' "$tmp/r.html"
expect write-whole "the page does not end in </html>" test "$(tail -n 1 "$tmp/r.html")" = '</html>'
expect write-no-temp "a temporary file was left beside the page: $(ls "$tmp")" \
    sh -c "! ls '$tmp' | grep -q 'fusetile-tmp'"
expect write-progress "no progress lines on stderr" grep -q 'report: strategy rules: total' "$tmp/err"

# Self-contained: no script, style sheet, image or link from the network.
expect self-contained "the page loads something from the network: $(grep -Eoi '(src|href)="?(https?:)?//[^" >]*' "$tmp/r.html" | head -3)" \
    sh -c "! grep -Eqi '(src|href)[[:space:]]*=[[:space:]]*\"?(https?:)?//' '$tmp/r.html'"
expect no-external-tags "the page has <link> or <script src>" sh -c "! grep -Eqi '<link |<script[^>]* src=' '$tmp/r.html'"

# The embedded JSON parses and agrees with `fusetile evaluate --json`.
check evaluate 0 - '' -- "$bin" evaluate "$prob" "$tmp/kpu.json" --target "$kpu" --json
cp "$tmp/out" "$tmp/eval.json"
cat >"$tmp/agree.py" <<'EOF'
import json, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
ev = json.load(open(sys.argv[2]))
blocks = re.findall(r'<script type="application/json" id="report-data">(.*?)</script>', page, re.S)
assert len(blocks) == 1, "%d data blocks" % len(blocks)
d = json.loads(blocks[0])
assert d["format"] == "fusetile-report" and d["version"] == 1, d.get("format")
assert d["total"] == ev["total"], (d["total"], ev["total"])
assert d["lower_bound"] == ev["lower_bound"], (d["lower_bound"], ev["lower_bound"])
assert len(d["subgraphs"]) == len(ev["subgraphs"])
for a, b in zip(d["subgraphs"], ev["subgraphs"]):
    assert a["latency"] == b["latency"] and a["loaded"] == b["loaded"] and a["steps"] == b["steps"], (a, b)
    assert a["layers"] == b["op_names"], (a["layers"], b["op_names"])  # every name, whole
assert abs(sum(g["latency"] for g in d["subgraphs"]) - d["total"]) <= 1e-9 * d["total"]
assert d["target"]["name"] == "kpu" and d["time_unit"] == "cycles"
assert [s["name"] for s in d["strategies"]] == ["patterns", "rules"] or \
       [s["name"] for s in d["strategies"]] == ["search", "patterns", "rules"], [s["name"] for s in d["strategies"]]
assert d["fusion_headroom"] is None
# the KPU has an energy group: joules and watts per subgraph and in total,
# evaluate's, and the replay's own account beside them
e = d["energy"]
assert e["energy_j"] == ev["energy_j"] and e["power_w"] == ev["power_w"], (e, ev.get("energy_j"))
assert e["energy_simulated_j"] > 0 and e["energy_agree"] in (True, False), e
for a, b in zip(d["subgraphs"], ev["subgraphs"]):
    assert a["energy_j"] == b["energy_j"] and a["power_w"] == b["power_w"], (a["energy_j"], b["energy_j"])
m = re.search(r'<tfoot>.*?data-key="energy_j" data-v="([^"]+)"', page, re.S)
assert m and float(m.group(1)) == e["energy_j"], m and m.group(1)
assert re.search(r'<dd id="sum-energy" data-v="([^"]+)"', page).group(1) == m.group(1)
assert page.count('<td class="num" data-key="power_w"') == len(d["subgraphs"]) + 1
# the table's footer shows the JSON total, exactly
m = re.search(r'<tfoot>.*?data-key="latency" data-v="([^"]+)"', page, re.S)
assert m and float(m.group(1)) == d["total"], m and m.group(1)
assert page.count(">not yet computed for this target</p>") == 1
assert '<table class="kv" data-later="energy">' in page
EOF
expect json-agrees "the page's JSON disagrees with evaluate --json: $(python3 "$tmp/agree.py" "$tmp/r.html" "$tmp/eval.json" 2>&1 | tail -1)" \
    python3 "$tmp/agree.py" "$tmp/r.html" "$tmp/eval.json"

# Without SCHEDULE: the search's schedule, and its row among the strategies.
check searched 0 err 'report: search: ' -- "$bin" report "$prob" -o "$tmp/s.html" --strategies search "${quick[@]}"
expect searched-row "the search's row is not this schedule" grep -q '<tr data-strategy="0" data-this="1"' "$tmp/s.html"
# the contest machine has no energy group: no energy anywhere on its page
expect contest-no-energy "the contest target's page shows energy" python3 -c '
import json, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
d = json.loads(re.search(r"<script type=\"application/json\" id=\"report-data\">(.*?)</script>", page, re.S).group(1))
sys.exit(0 if d["energy"] is None and all(g["energy_j"] is None for g in d["subgraphs"]) and "data-key=\"energy_j\"" not in page
         and "id=\"sum-energy\"" not in page and page.count(">not yet computed for this target</p>") == 2 else 1)' "$tmp/s.html"

# ---------------------------------------------------------------- rendered
if command -v chromium >/dev/null 2>&1; then
    : >"$tmp/chromium.err"
    render() { # render OUT ARGS...: chromium headless on the page, its own profile
        local out=$1
        shift
        timeout 120 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$tmp/profile" "$@" \
            "file://$tmp/r.html" >"$out" 2>"$tmp/chromium.err"
    }
    expect dump-dom "chromium --dump-dom failed: $(tail -2 "$tmp/chromium.err")" render "$tmp/dom.html" --dump-dom
    expect checks-pass "the page's own checks did not pass: $(grep -o 'checks: [^<]*' "$tmp/dom.html"; grep -o 'FAIL: [^<]*' "$tmp/dom.html" | grep -v "' +" | head -3)" \
        grep -q '<body data-checks="pass"' "$tmp/dom.html"
    expect checks-line "no 'checks: N of N passed' line" \
        sh -c "grep -o 'checks: [0-9]* of [0-9]* passed' '$tmp/dom.html' | awk '{ exit !(\$2 == \$4 && \$2 > 0) }'"
    # The checks can fail: the same page with its JSON total changed.
    python3 - "$tmp/r.html" "$tmp/bad.html" "$tmp/bad-energy.html" <<'EOF2'
import json, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r'(<script type="application/json" id="report-data">)(.*?)(</script>)', page, re.S)
d = json.loads(m.group(2))
d["total"] += 1
open(sys.argv[2], "w", encoding="utf-8").write(page[:m.start(2)] + json.dumps(d).replace("<", "\\u003c") + page[m.end(2):])
d["total"] -= 1
d["subgraphs"][0]["energy_j"] *= 2
open(sys.argv[3], "w", encoding="utf-8").write(page[:m.start(2)] + json.dumps(d).replace("<", "\\u003c") + page[m.end(2):])
EOF2
    timeout 120 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$tmp/profile" --dump-dom \
        "file://$tmp/bad.html" >"$tmp/bad-dom.html" 2>>"$tmp/chromium.err"
    expect checks-can-fail "a page whose JSON total was changed still passes its checks" \
        grep -q '<body data-checks="fail"' "$tmp/bad-dom.html"
    timeout 120 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$tmp/profile" --dump-dom \
        "file://$tmp/bad-energy.html" >"$tmp/bad-energy-dom.html" 2>>"$tmp/chromium.err"
    expect checks-energy-can-fail "a page whose JSON joules were changed still passes its checks" \
        sh -c "grep -q '<body data-checks=\"fail\"' '$tmp/bad-energy-dom.html' && grep -q 'FAIL: every row shows its subgraph.s joules' '$tmp/bad-energy-dom.html'"
    rm -f "$tmp/shot.png"
    expect screenshot "chromium --screenshot failed: $(tail -2 "$tmp/chromium.err")" \
        render "$tmp/shot.log" --screenshot="$tmp/shot.png" --window-size=1400,2400
    expect screenshot-png "the screenshot is not a non-empty PNG" \
        sh -c "test -s '$tmp/shot.png' && head -c 8 '$tmp/shot.png' | od -An -tx1 | grep -q '89 50 4e 47 0d 0a 1a 0a'"
else
    skip 7 "chromium is not installed (Debian: apt-get install chromium): the page is not rendered"
fi

finish report
