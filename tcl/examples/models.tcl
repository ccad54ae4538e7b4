# models.tcl - compare the two compute models (SPEC section 4): schedule
# each problem for the native model and for the op model, and evaluate each
# schedule under both, against each model's lower bound.
#
# usage: fusetile shell tcl/examples/models.tcl ?-timelimit SECONDS? ?PROBLEM ...?
#   -timelimit  search time per schedule in seconds (default: 2)
#   PROBLEM     problem files (default: benchmarks/mlsys-2026-1.json and
#               benchmarks/mlsys-2026-5.json)
#
# A row per problem and model the schedule was made for: its total under
# the native and the op model, each model's lower bound, and the ratio of
# the total to the bound under the model it was made for.  A schedule made
# for one model is usually worse under the other: the op model charges a
# MatMul's full reduction at once, so it favours other granularities.

package require fusetile

set here [file dirname [file normalize [info script]]]
set timelimit 2
set problems {}
for {set i 0} {$i < [llength $argv]} {incr i} {
    set a [lindex $argv $i]
    if {$a eq "-timelimit"} {
        set timelimit [lindex $argv [incr i]]
    } elseif {[string match -* $a]} {
        error "models.tcl: unknown option \"$a\" (usage: models.tcl ?-timelimit S? ?PROBLEM ...?)"
    } else {
        lappend problems $a
    }
}
if {![llength $problems]} {
    foreach n {1 5} {
        lappend problems [file normalize [file join $here .. .. benchmarks mlsys-2026-$n.json]]
    }
}

puts [format "%-16s %-8s %14s %14s %14s %14s %8s %5s" problem "made for" "native total" "native bound" \
          "op total" "op bound" ratio sgs]
foreach file $problems {
    fusetile::problem prob $file
    set bound(native) [dict get [prob lowerbound -model native] bound]
    set bound(op) [dict get [prob lowerbound -model op] bound]
    foreach made {native op} {
        prob schedule sched -timelimit $timelimit -model $made
        set total(native) [dict get [sched evaluate -model native] total]
        set total(op) [dict get [sched evaluate -model op] total]
        puts [format "%-16s %-8s %14.1f %14.1f %14.1f %14.1f %8.4f %5d" [file rootname [file tail $file]] $made \
                  $total(native) $bound(native) $total(op) $bound(op) [expr {$total($made) / $bound($made)}] \
                  [dict get [sched info] nsubgraphs]]
        set best($made) $total($made)
        set cross($made) $total([expr {$made eq "native" ? "op" : "native"}])
        sched destroy
    }
    puts [format "%-16s under native, the op-model schedule costs %+.1f%%; under op, the native-model schedule costs %+.1f%%" \
              "" [expr {100.0 * ($cross(op) / $best(native) - 1)}] [expr {100.0 * ($cross(native) / $best(op) - 1)}]]
    prob destroy
}
