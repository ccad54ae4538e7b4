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
# The analytic model has an exact closed form for every timing effect of a
# target but double buffering (targets/README.md).  Where the two differ,
# the script replays the schedule on copies of the machine with one effect
# turned off at a time, and names the effects whose removal brings
# simulated back to analytic.  Exit status 1 when a difference (above 1e-9
# relative) is accounted for by no effect.

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

# relative difference of simulated against analytic, and agreement (1e-9)
proc rel {sim ana} {
    expr {$sim == $ana ? 0.0 : $ana != 0 ? abs($sim - $ana) / abs($ana) : Inf}
}
proc agrees {sim ana} {
    expr {[rel $sim $ana] <= 1e-9}
}

# The machine's timing effects, each with the configure options that turn
# it off (as the target file would with that setting changed).
set tm [dict get [machine info] timing]
set effects {}
if {[dict get $tm transfer_latency] > 0} {lappend effects "transfer latency" {-latency 0}}
set wb [dict get $tm write_bandwidth]
if {$wb > 0 && $wb != [machine configure -bandwidth]} {lappend effects "write bandwidth" {-writebandwidth 0}}
if {[dict get $tm duplex]} {lappend effects "separate channels" {-duplex 0}}
if {[dict get $tm launch_overhead] > 0} {lappend effects "launch overhead" {-launch 0}}
if {[dict get $tm overlap] eq "pipeline"} {lappend effects "double buffering" {-overlap none}}

# The same schedule on a copy of the machine with each effect off.
set off {}
foreach {name opts} $effects {
    machine clone m2
    m2 configure {*}$opts
    fusetile::schedule s2 m2 -text [sched json]
    dict set off $name [s2 simulate]
    s2 destroy
    m2 destroy
}

# What accounts for the difference of subgraph i (-1: the total).
proc accounted {sim off i} {
    if {$i < 0} {
        set pick {apply {{r} {list [dict get $r total_simulated] [dict get $r total_analytic]}}}
    } else {
        set pick [list apply {{i r} {set g [lindex [dict get $r subgraphs] $i]; list [dict get $g simulated] [dict get $g analytic]}} $i]
    }
    if {[agrees {*}[{*}$pick $sim]]} {
        return -
    }
    set by {}
    dict for {name r} $off {
        if {[agrees {*}[{*}$pick $r]]} {
            lappend by $name
        }
    }
    expr {[llength $by] ? [join $by {, }] : "nothing"}
}

puts "problem  [dict get [prob info] name]"
puts "target   [tgt describe]"
puts "on it    [machine configure] (one cost unit = one cycle)"
puts ""
puts [format "%3s  %-12s %8s %14s %14s %12s %10s %8s %8s  %s" sg ops steps analytic simulated difference relative channel compute \
          "accounted for by"]
set subgraphs [sched subgraphs]
set unexplained 0
foreach s [dict get $sim subgraphs] {
    dict with s {
        set ops [join [dict get [lindex $subgraphs $index] ops] ,]
        if {[string length $ops] > 12} {
            set ops [string range $ops 0 8]...
        }
        set by [accounted $sim $off $index]
        incr unexplained [expr {$by eq "nothing"}]
        puts [format "%3d  %-12s %8d %14.1f %14.1f %12.4g %10.3g %7.1f%% %7.1f%%  %s" $index $ops $steps $analytic $simulated \
                  $difference [rel $simulated $analytic] [expr {100 * $channel_busy}] [expr {100 * $compute_busy}] $by]
    }
}
set by [accounted $sim $off -1]
incr unexplained [expr {$by eq "nothing"}]
dict with sim {
    puts [format "%3s  %-12s %8d %14.1f %14.1f %12.4g %10.3g %17s  %s" all "" $steps $total_analytic $total_simulated $difference \
              [rel $total_simulated $total_analytic] "" $by]
}
if {[dict size $off]} {
    puts ""
    puts "the same schedule with one effect turned off:"
    dict for {name r} $off {
        dict with r {
            puts [format "  %-18s analytic %14.1f  simulated %14.1f  relative %9.3g  %s" $name $total_analytic $total_simulated \
                      [rel $total_simulated $total_analytic] [expr {[agrees $total_simulated $total_analytic] ? "agree" : "differ"}]]
        }
    }
}
puts "every difference accounted for: [expr {$unexplained ? "NO" : "yes"}]"
if {$opt(-trace) ne ""} {
    puts "trace: $opt(-trace)"
}
foreach h {machine sched tgt prob} {
    $h destroy
}
if {$unexplained} {
    exit 1
}
