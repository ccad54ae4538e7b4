# soak.tcl - many schedule-and-simulate calls in one interpreter: neither
# memory nor time per call may grow (make soak).
#
# usage: fusetile shell tests/tcl/soak.tcl ?-count N? ?-problem FILE?
#            ?-timelimit SECONDS? ?-check 0|1?
#   -count      calls (default 1000); each is `p schedule s`, `s simulate`
#               and `s destroy`
#   -problem    problem file (default: benchmarks/mlsys-2026-1.json, whose
#               search ends on its own in well under the time limit, so a
#               call's time is its work, not the limit)
#   -timelimit  search time limit per call (default 0.2)
#   -check      1 (default): fail (exit 1) when the median time per call of
#               the last hundred calls exceeds the first hundred's by more
#               than 10%, or when the resident set grows by more than 4 MiB
#               from call 100 to the last; 0: only report
# Prints the figures and "soak: ok" or "soak: FAILED: ...".  Always fails
# when a handle is left or the totals change from call to call.

package require fusetile

set here [file dirname [file normalize [info script]]]
array set opt [list \
    -count 1000 \
    -problem [file normalize [file join $here .. .. benchmarks mlsys-2026-1.json]] \
    -timelimit 0.2 \
    -check 1]
foreach {k v} $argv {
    if {![info exists opt($k)]} {
        error "soak.tcl: unknown option \"$k\" (options: [join [lsort [array names opt]] {, }])"
    }
    set opt($k) $v
}

# Resident set size in KiB (Linux), or 0 where /proc is missing.
proc rss_kib {} {
    if {[catch {open /proc/self/status} f]} {
        return 0
    }
    set kib 0
    foreach line [split [read $f] \n] {
        if {[regexp {^VmRSS:\s+(\d+)} $line -> kib]} {
            break
        }
    }
    close $f
    return $kib
}

proc mean {l} {
    expr {[tcl::mathop::+ {*}$l] / double([llength $l])}
}

proc median {l} {
    set l [lsort -real $l]
    set n [llength $l]
    expr {$n % 2 ? [lindex $l [expr {$n / 2}]] : ([lindex $l [expr {$n / 2 - 1}]] + [lindex $l [expr {$n / 2}]]) / 2.0}
}

fusetile::problem p $opt(-problem)
set n $opt(-count)
set times {}
set rss {}
set totals {}
for {set i 1} {$i <= $n} {incr i} {
    set t0 [clock microseconds]
    p schedule s -timelimit $opt(-timelimit)
    set r [s simulate]
    s destroy
    lappend times [expr {([clock microseconds] - $t0) / 1000.0}]
    dict set totals [dict get $r total_simulated] 1
    if {$i == 1 || $i % 100 == 0 || $i == $n} {
        lappend rss $i [rss_kib]
    }
}
p destroy

set k [expr {min(100, $n)}]
set head [lrange $times 0 [expr {$k - 1}]]
set tail [lrange $times end-[expr {$k - 1}] end]
# The slowdown compares medians: on a shared machine a few calls of either
# hundred can take twice as long for reasons outside the process, which
# moves a mean by several percent but not a median.
set slowdown [expr {[median $tail] / [median $head] - 1}]
set rss100 [expr {[dict exists $rss 100] ? [dict get $rss 100] : [dict get $rss 1]}]
set growth [expr {[dict get $rss $n] - $rss100}]
puts "soak: $n schedule-and-simulate calls on [file tail $opt(-problem)] (time limit $opt(-timelimit) s)"
puts [format "soak: time per call: first %d median %.2f ms (mean %.2f), last %d median %.2f ms (mean %.2f): %+.1f%% (medians)" \
          $k [median $head] [mean $head] $k [median $tail] [mean $tail] [expr {100 * $slowdown}]]
puts "soak: resident set (KiB) after call: [join [lmap {i kib} $rss {string cat $i= $kib}] {, }]"
puts "soak: growth from call [expr {[dict exists $rss 100] ? 100 : 1}] to $n: $growth KiB; distinct totals: [dict size $totals]"

set failures {}
if {[llength [fusetile::handles]]} {
    lappend failures "handles left: [fusetile::handles]"
}
if {[dict size $totals] != 1} {
    lappend failures "the simulated total changed from call to call: [dict keys $totals]"
}
if {$opt(-check)} {
    if {$slowdown > 0.10} {
        lappend failures [format "the last hundred calls are %.1f%% slower than the first" [expr {100 * $slowdown}]]
    }
    if {$growth > 4096} {
        lappend failures "the resident set grew by $growth KiB"
    }
}
if {[llength $failures]} {
    puts "soak: FAILED: [join $failures {; }]"
    exit 1
}
puts "soak: ok"
