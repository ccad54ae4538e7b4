#!/usr/bin/env bash
# test_csv.sh - --csv FILE|- of schedule, evaluate and simulate: the columns (the Python binding's to_rows()), units in the header, whole labels (longer than the text table's cut), seconds on a clocked target, the units row of the text tables, and the errors.
# usage: test_csv.sh FUSETILE VECTORS_DIR
set -u
bin=${1:?usage: test_csv.sh FUSETILE VECTORS_DIR}
vec=${2:?usage: test_csv.sh FUSETILE VECTORS_DIR}
. "$(dirname "$0")/lib.sh"
src=$(cd "$vec/../.." && pwd)
kpu=$src/targets/kpu.cfg
P=$vec/N-named-mlp.problem.json
S=$vec/N-named-mlp.solution.json

EVAL_HEAD='subgraph,label,ops,w [elements],h [elements],k [elements],tiles,steps,compute_bound_steps,memory_bound_steps,peak_working_set [elements],loaded [elements],written [elements],compute_time [cost units],memory_time [cost units],latency [cost units],share [%]'
SIM_HEAD='subgraph,label,ops,w [elements],h [elements],k [elements],steps,simulated [cost units],analytic [cost units],difference [cost units],relative_difference,peak_occupancy [elements],channel_busy [%],compute_busy [%],accounted_for_by'

# header: the first line of FILE without its CR
head1() { head -n 1 "$1" | tr -d '\r'; }

# --- evaluate --csv -: only the CSV on stdout, CRLF lines, the header exact
check eval-csv-stdout 0 out '^0,encoder\.layer1\.fc1\+act\+fc2,0 1 2,128,128,64,2,16,16,0,49152,294912,32768,17600,8192,17600,100' \
    -- "$bin" evaluate "$P" "$S" --csv -
expect eval-csv-head "evaluate --csv header is '$(head1 "$tmp/out")'" test "$(head1 "$tmp/out")" = "$EVAL_HEAD"
expect eval-csv-rows "evaluate --csv - printed $(wc -l <"$tmp/out") lines, want a header and 1 row" test "$(wc -l <"$tmp/out")" -eq 2
expect eval-csv-crlf "CSV lines end in CRLF (RFC 4180)" grep -q "$(printf '\r')\$" "$tmp/out"
expect eval-csv-no-table "--csv - prints no text table" sh -c "! grep -q '^total' '$tmp/out'"

# --- evaluate --csv FILE: the table still on stdout, its units row
check eval-csv-file 0 out '^ +\[elements\] +\[cost units\] +\[steps\] +\[steps\] +\[elements\] +\[elements\] +\[elements\]$' \
    -- "$bin" evaluate "$P" "$S" --csv "$tmp/e.csv"
expect eval-csv-file-head "the file's header" test "$(head1 "$tmp/e.csv")" = "$EVAL_HEAD"

# --- a label longer than the text table's 48-column cut: whole in the CSV,
# quoted (it holds a comma), cut with ... in the table
L=$tmp/long.problem.json
sed 's/"encoder\.layer1\.fc1", "encoder\.layer1\.act", "encoder\.layer1\.fc2"/"model.encoder.block_number_one.attention_query_projection", "model.encoder.block_number_one.activation,gelu", "model.encoder.block_number_one.output_projection"/' "$P" >"$L"
long='model.encoder.block_number_one.attention_query_projection+activation,gelu+output_projection'
check long-label-table 0 out '\.\.\. ' -- "$bin" evaluate "$L" "$S"
check long-label-csv 0 out "^0,\"${long//+/\\+}\",0 1 2," -- "$bin" evaluate "$L" "$S" --csv -
expect long-label-longer "the label (${#long} characters) is longer than the table's cut (48)" test "${#long}" -gt 48

# --- schedule --csv: the final schedule's evaluation, seconds on a target
check sched-csv 0 - '' -- "$bin" schedule "$vec/E-mlp-fused.problem.json" --target "$kpu" --time-limit 1 --quiet \
    -o "$tmp/s.json" --csv "$tmp/s.csv"
expect sched-csv-head "schedule --csv header with latency [s]" test "$(head1 "$tmp/s.csv")" = "$EVAL_HEAD,latency [s]"
check sched-csv-seconds 0 out '^0,"?0,1"?,0 1,32,32,32,.*,[0-9.]+e-05.$' -- cat "$tmp/s.csv"
check sched-csv-stdout-needs-o 2 err '--csv - and the schedule both go to standard output' \
    -- "$bin" schedule "$P" --time-limit 0.5 --quiet --csv -
check sched-csv-dir 2 err "$tmp: cannot write: Is a directory" \
    -- "$bin" schedule "$P" --time-limit 0.5 --quiet -o "$tmp/x.json" --csv "$tmp"
check sched-csv-no-value 2 err 'option --csv needs a value' -- "$bin" schedule "$P" --csv

# --- simulate --csv: the columns, what accounts for each difference, seconds
check sim-csv 0 out '^0,"0,1",0 1,32,32,32,512,[0-9.]+,[0-9.]+,[0-9.]+,[0-9.e-]+,[0-9]+,[0-9.]+,[0-9.]+,double buffering,[0-9.e-]+.$' \
    -- "$bin" simulate "$vec/E-mlp-fused.problem.json" "$tmp/s.json" --target "$kpu" --csv -
expect sim-csv-head "simulate --csv header" test "$(head1 "$tmp/out")" = "$SIM_HEAD,simulated [s]"
check sim-table-units 0 out '^ +\[elements\] +\[cycles\] +\[cycles\] +\[cycles\] +\[elements\] \[% busy\] \[% busy\]$' \
    -- "$bin" simulate "$vec/E-mlp-fused.problem.json" "$tmp/s.json" --target "$kpu"
check sim-csv-contest 0 out '^0,encoder\.layer1\.fc1\+act\+fc2,0 1 2,128,128,64,16,17600,17600,0,0,' \
    -- "$bin" simulate "$P" "$S" --csv -
expect sim-csv-contest-head "no seconds column on the contest target" test "$(head1 "$tmp/out")" = "$SIM_HEAD"

# --- errors
check csv-json-stdout 2 err '--csv - and --json both write to standard output' -- "$bin" evaluate "$P" "$S" --json --csv -
check csv-is-input 2 err 'refusing to overwrite' -- "$bin" evaluate "$P" "$S" --csv "$S"
check csv-json-file 0 out '"total": 17600' -- "$bin" evaluate "$P" "$S" --json --csv "$tmp/j.csv"
expect csv-json-file-written "--json with --csv FILE writes both" test -s "$tmp/j.csv"

finish csv
