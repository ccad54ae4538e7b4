#!/usr/bin/env bash
# test_sweep_energy.sh - a sweep records energy (issue 35): examples/sweep/energy-latency.cfg run and plotted energy against latency, energy_j and power_w per run (NULL without an energy group), a run's joules equal to evaluate's for the same schedule, a schema-1 database given the columns by sweep run and named by sweep plot, and the plot's errors.
# usage: test_sweep_energy.sh FUSETILE VECTORS_DIR
set -u
bin=${1:?usage: test_sweep_energy.sh FUSETILE VECTORS_DIR}
vec=${2:?usage: test_sweep_energy.sh FUSETILE VECTORS_DIR}
. "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
case $vec in /*) ;; *) vec=$(pwd)/$vec ;; esac
if ! command -v sqlite3 >/dev/null 2>&1; then
    skip 20 "the sweep's energy columns: sqlite3 (the command) not found (install sqlite3)"
    finish sweep-energy
fi
q() { sqlite3 "$1" "$2"; }

check help-plot 0 out 'energy_j, power_w' -- "$bin" sweep plot --help
check help-points 0 out '--points' -- "$bin" sweep plot --help

# ------------------------------------------------------------ the example, as its comment runs it
ex=$root/examples/sweep/energy-latency.cfg
check example-run 0 err '18 ok, 0 failed' -- "$bin" sweep run "$ex" --jobs 2 --db "$tmp/el.db"
expect example-energy "a run without joules or watts" \
    test "$(q "$tmp/el.db" "SELECT count(*) FROM runs WHERE status = 'ok' AND energy_j > 0 AND power_w > 0")" -eq 18
expect example-version "schema_version not 2" test "$(q "$tmp/el.db" "SELECT value FROM meta WHERE key = 'schema_version'")" = 2
# joules = watts x seconds, the seconds at the target's clock (cost units are cycles)
for t in kpu gpu-h100-sm tpu-v5e; do
    hz=$(sed -n 's/^[[:space:]]*clock_hz[[:space:]]*=[[:space:]]*\([0-9.eE+]*\).*/\1/p' "$root/targets/$t.cfg" | head -1)
    bad=$(q "$tmp/el.db" "SELECT count(*) FROM runs WHERE target LIKE '%/$t.cfg' AND abs(power_w * total / $hz - energy_j) > 1e-9 * energy_j")
    expect "example-watts-$t" "$t: power_w x total / clock_hz differs from energy_j in $bad runs (clock_hz '$hz')" test -n "$hz" -a "$bad" = 0
done
check example-plot 0 - '' -- "$bin" sweep plot "$tmp/el.db" --x total --y energy_j --group target --log-x --log-y --points -o "$tmp/el.svg"
expect example-plot-xml "SVG not well-formed" python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' "$tmp/el.svg"
expect example-plot-title "the title does not say energy against latency" grep -q 'energy_j against total by target' "$tmp/el.svg"
expect example-plot-legend "not a legend entry per target" test "$(grep -o 'target=[a-z0-9-]*\.cfg' "$tmp/el.svg" | sort -u | wc -l)" -eq 3
expect example-plot-points "no point drawn per run" test "$(grep -c '<circle' "$tmp/el.svg")" -ge 18
expect example-plot-no-line "--points drew lines" test "$(grep -c '<polyline' "$tmp/el.svg")" -eq 0
check example-plot-watts 0 - '' -- "$bin" sweep plot "$tmp/el.db" --x capacity --y power_w --group target --log-x -o "$tmp/pw.svg"

# ------------------------------------------------------------ the joules of a run are evaluate's
# (the rules strategy repeats its schedule given the time to check every
# group: its fit checks are cut by the clock, which valgrind's slow build
# reached once in CI with the default limit; no override, so schedule and
# evaluate see the same machine)
cat >"$tmp/one.cfg" <<EOF
runs = ( { problem = "$root/examples/gpt2_block.problem.json"; target = "$root/targets/gpu-h100.cfg"; strategy = "rules"; time_limit = 600.0; },
         { problem = "$root/examples/gpt2_block.problem.json"; strategy = "rules"; time_limit = 600.0; } );
simulate = true;
EOF
check one-run 0 err '2 ok, 0 failed' -- "$bin" sweep run "$tmp/one.cfg" --jobs 1
check one-schedule 0 - '' -- "$bin" schedule "$root/examples/gpt2_block.problem.json" --target "$root/targets/gpu-h100.cfg" \
    --strategy rules --time-limit 600 -o "$tmp/one.schedule.json"
check one-evaluate 0 - '' -- "$bin" evaluate "$root/examples/gpt2_block.problem.json" "$tmp/one.schedule.json" \
    --target "$root/targets/gpu-h100.cfg" --json
row=$(q "$tmp/one.db" "SELECT total, energy_j, power_w FROM runs WHERE target LIKE '%gpu-h100.cfg'")
json_check one-equal "abs(d['total'] - float('${row%%|*}')) <= 1e-9 * d['total'] and abs(d['energy_j'] - float('$(echo "$row" | cut -d'|' -f2)')) <= 1e-12 * d['energy_j'] and abs(d['power_w'] - float('${row##*|}')) <= 1e-9 * d['power_w']"
expect one-contest-null "the contest target's run has energy" \
    test "$(q "$tmp/one.db" "SELECT count(*) FROM runs WHERE target = 'none' AND status = 'ok' AND energy_j IS NULL AND power_w IS NULL")" = 1
check one-plot-null 0 - '' -- "$bin" sweep plot "$tmp/one.db" --x total --y energy_j --group target -o "$tmp/one.svg"
expect one-plot-no-contest "the run without energy is plotted" test "$(grep -c 'target=none' "$tmp/one.svg")" -eq 0
check none-energy 1 err 'no ok run has both total and energy_j' -- "$bin" sweep plot "$tmp/one.db" --x total --y energy_j --where target=none -o "$tmp/x.svg"

# ------------------------------------------------------------ a database of schema 1 (before the energy columns)
old() {
    rm -f "$1"
    q "$1" "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
INSERT INTO meta VALUES('schema_version', '1');
CREATE TABLE runs(key TEXT PRIMARY KEY, sweep TEXT, idx INTEGER, problem TEXT, target TEXT,
  capacity REAL, bandwidth REAL, native TEXT, units INTEGER, compute_model TEXT, strategy TEXT,
  time_limit REAL, seed INTEGER, simulate INTEGER, status TEXT, error TEXT,
  total REAL, lower_bound REAL, capacity_bound REAL, ratio REAL, subgraphs INTEGER,
  sim_total REAL, agreement TEXT, wall_s REAL, worker TEXT, finished_at TEXT);
INSERT INTO runs(key, idx, problem, target, capacity, status, total) VALUES('old-key', 0, 'p.json', 'none', 1000, 'ok', 42);"
}
old "$tmp/old.db"
check old-plot-total 0 - '' -- "$bin" sweep plot "$tmp/old.db" --x capacity --y total -o "$tmp/old.svg"
check old-plot-energy 2 err 'old.db: no column energy_j \(a database of an older fusetile' -- \
    "$bin" sweep plot "$tmp/old.db" --x total --y energy_j -o "$tmp/x.svg"
check old-where-energy 2 err 'no column power_w' -- \
    "$bin" sweep plot "$tmp/old.db" --x total --y total --where power_w=1 -o "$tmp/x.svg"
check old-run 0 err '2 ok, 0 failed' -- "$bin" sweep run "$tmp/one.cfg" --jobs 1 --db "$tmp/old.db"
expect old-migrated "the old database did not get the energy columns" \
    test "$(q "$tmp/old.db" "SELECT count(*) FROM pragma_table_info('runs') WHERE name IN ('energy_j', 'power_w')")" = 2
expect old-version "schema_version not raised to 2" test "$(q "$tmp/old.db" "SELECT value FROM meta WHERE key = 'schema_version'")" = 2
expect old-row-kept "the old row was lost or given energy" \
    test "$(q "$tmp/old.db" "SELECT total, quote(energy_j) FROM runs WHERE key = 'old-key'")" = "42.0|NULL"
expect old-new-rows "the new rows have no energy" \
    test "$(q "$tmp/old.db" "SELECT count(*) FROM runs WHERE target LIKE '%gpu-h100.cfg' AND energy_j > 0")" = 1
check old-plot-after 0 - '' -- "$bin" sweep plot "$tmp/old.db" --x total --y energy_j -o "$tmp/old2.svg"
check old-run-again 0 err '2 skipped' -- "$bin" sweep run "$tmp/one.cfg" --jobs 1 --db "$tmp/old.db"

# ------------------------------------------------------------ a search cut short
# (its figures from the scorer, which has no traffic: the run's joules are
# then the walk's, past the limit, not 0 J; a sanitizer build's slower walk
# found it)
cat >"$tmp/short.cfg" <<EOF
runs = ( { problem = "$root/examples/gpt2_block.problem.json"; target = "$root/targets/gpu-h100.cfg"; } );
time_limit = 0.001;
EOF
check short-run 0 err '1 ok, 0 failed' -- "$bin" sweep run "$tmp/short.cfg" --jobs 1
row=$(q "$tmp/short.db" "SELECT energy_j > 0 AND power_w > 0 AND abs(power_w * total / 1.83e9 - energy_j) <= 1e-9 * energy_j FROM runs")
expect short-joules "a search cut short recorded no joules: $(q "$tmp/short.db" "SELECT total, energy_j, power_w FROM runs")" test "$row" = 1

finish sweep-energy
