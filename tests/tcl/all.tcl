# all.tcl - the Tcl test suite of the fusetile package: sources every
# tests/tcl/*.test into this interpreter (the package must be loadable:
# `fusetile shell tests/tcl/all.tcl`, or tclsh with the build's tcl/ on
# auto_path), then checks that every handle was freed.
#
# usage: fusetile shell tests/tcl/all.tcl ?tcltest options?
#   e.g. -file problem.test (one file), -match 'problem-config*', -verbose bpe
# Ends with the line "tcl: N passed, M failed" (", K skipped" after it when
# tests were skipped, each constraint that skipped some named before it on a
# line "skip: ...": the convention of tests/run-checks); exits 1 when a test
# failed.  A test file may set ::ft_skip_reason(CONSTRAINT) to say why its
# constraint does not hold.

package require tcltest 2.5
package require fusetile
namespace import ::tcltest::*

set ::ft_testdir [file dirname [file normalize [info script]]]
set ::ft_srcdir [file dirname [file dirname $::ft_testdir]]

# Scratch directory for the files tests write; removed at the end.
set ::ft_tmp [file join [expr {[info exists env(TMPDIR)] ? $env(TMPDIR) : "/tmp"}] ft-tcl-[pid]]
file mkdir $::ft_tmp
configure -testdir $::ft_testdir -tmpdir $::ft_tmp {*}$argv

# src PATH: a file of the source tree.  tmp NAME: a file in the scratch
# directory.
proc src {path} { file join $::ft_srcdir $path }
proc tmp {name} { file join $::ft_tmp $name }

# errcode SCRIPT: the errorCode SCRIPT fails with ("" when it succeeds).
proc errcode {script} {
    if {[catch {uplevel 1 $script} msg opts]} {
        return [dict get $opts -errorcode]
    }
    return ""
}

# drop HANDLE...: destroy each handle that exists (test cleanups).
proc drop {args} {
    foreach h $args {
        catch {$h destroy}
    }
}

# Fixtures: a two-op problem with its schedule, a benchmark, targets.
set ::P1A [src tests/vectors/ex1A.problem.json]
set ::S1A [src tests/vectors/ex1A.solution.json]
set ::BENCH1 [src benchmarks/mlsys-2026-1.json]
set ::KPU [src targets/kpu.cfg]
set ::CONTEST [src targets/contest.cfg]

foreach file [lsort [::tcltest::GetMatchingFiles]] {
    source $file
}

# The leak check: every test frees what it makes.
test all-handles-freed {no handle is left after the suite} -body {
    fusetile::handles
} -result {}

set passed $::tcltest::numTests(Passed)
set failed $::tcltest::numTests(Failed)
set skipped $::tcltest::numTests(Skipped)
set skips {}
set unsaid $skipped
foreach c [lsort [array names ::tcltest::skippedBecause]] {
    set n $::tcltest::skippedBecause($c)
    incr unsaid -$n
    if {[info exists ::ft_skip_reason($c)]} {
        set why "$::ft_skip_reason($c) (constraint $c)"
    } else {
        set why "constraint $c not met"
    }
    lappend skips "skip: $why ($n test[expr {$n == 1 ? {} : {s}}])"
}
if {$unsaid > 0} {
    lappend skips "skip: not selected by -match or -skip ($unsaid test[expr {$unsaid == 1 ? {} : {s}}])"
}
cleanupTests
file delete -force $::ft_tmp
foreach line $skips {
    puts $line
}
puts "tcl: $passed passed, $failed failed[expr {$skipped > 0 ? ", $skipped skipped" : {}}]"
if {$failed > 0} {
    exit 1
}
