# crosscheck.tcl - target cross-check: schedule a problem for a target,
# replay the schedule in the SystemC simulator, and print the analytic
# against the simulated latency of every subgraph.
#
# usage: fusetile shell tcl/examples/crosscheck.tcl ?-problem FILE? ?-target CFG?
#            ?-timelimit SECONDS? ?-keepcosts 0|1? ?-trace FILE?
#   -problem    problem file (default: benchmarks/mlsys-2026-1.json)
#   -target     target file (default: targets/kpu.cfg)
#   -timelimit  search time in seconds (default: 2)
#   -keepcosts  1: keep the problem's base costs (default: 0, the target's)
#   -trace      also write a Chrome trace of the replay (default: none)
#
# Where the simulator models only what the cost model has terms for, the two
# agree exactly; a difference is the effect of a target setting that only
# the simulator applies.  Exit status 1 when they differ by more than 1e-9.

package require fusetile

set here [file dirname [file normalize [info script]]]
array set opt [list \
    -problem [file normalize [file join $here .. .. benchmarks mlsys-2026-1.json]] \
    -target [file normalize [file join $here .. .. targets kpu.cfg]] \
    -timelimit 2 \
    -keepcosts 0 \
    -trace {}]
if {[llength $argv] % 2} {
    error "usage: crosscheck.tcl ?-problem FILE? ?-target CFG? ?-timelimit S? ?-keepcosts 0|1? ?-trace FILE?"
}
foreach {k v} $argv {
    if {![info exists opt($k)]} {
        error "crosscheck.tcl: unknown option \"$k\" (options: [join [lsort [array names opt]] {, }])"
    }
    set opt($k) $v
}

fusetile::problem prob $opt(-problem)
fusetile::target tgt $opt(-target)
set keep [expr {$opt(-keepcosts) ? "-keepcosts" : ""}]
prob schedule sched -timelimit $opt(-timelimit) -target tgt {*}$keep
sched problem machine
set sim [sched simulate {*}[expr {$opt(-trace) ne "" ? [list -trace $opt(-trace)] : ""}]]

puts "problem  [dict get [prob info] name]"
puts "target   [tgt describe]"
puts "on it    [machine configure] (one cost unit = one cycle)"
puts ""
puts [format "%3s  %-12s %8s %14s %14s %12s %10s %8s %8s" sg ops steps analytic simulated difference relative channel compute]
set subgraphs [sched subgraphs]
foreach s [dict get $sim subgraphs] {
    dict with s {
        set rel [expr {$analytic != 0 ? $difference / $analytic : 0.0}]
        set ops [join [dict get [lindex $subgraphs $index] ops] ,]
        if {[string length $ops] > 12} {
            set ops [string range $ops 0 8]...
        }
        puts [format "%3d  %-12s %8d %14.1f %14.1f %12.4g %10.3g %7.1f%% %7.1f%%" $index $ops $steps $analytic $simulated \
                  $difference $rel [expr {100 * $channel_busy}] [expr {100 * $compute_busy}]]
    }
}
dict with sim {
    puts [format "%3s  %-12s %8d %14.1f %14.1f %12.4g" all "" $steps $total_analytic $total_simulated $difference]
    puts "agreement: [expr {$agree ? "yes" : "NO"}] (relative difference at most 1e-9 in every subgraph and in total)"
}
if {$opt(-trace) ne ""} {
    puts "trace: $opt(-trace)"
}
foreach h {machine sched tgt prob} {
    $h destroy
}
if {![dict get $sim agree]} {
    exit 1
}
