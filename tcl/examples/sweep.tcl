# sweep.tcl - capacity sweep: schedule a problem at a series of fast-memory
# capacities, print a table, and write it as CSV and as an SVG plot of
# latency against capacity with the lower bound as a second line; on a
# target with an energy group, the joules and average watts of each point
# too (table and CSV; the CSV's energy_j and power_w are empty without one).
#
# usage: fusetile shell tcl/examples/sweep.tcl ?-problem FILE? ?-target CFG?
#            ?-model native|op? ?-timelimit SECONDS? ?-capacities LIST? ?-out PREFIX?
#   -problem     problem file (default: benchmarks/mlsys-2026-1.json)
#   -target      a target file or a shipped target's name, applied before the
#                capacities (default: none, the problem file's machine)
#   -model       compute model (default: native)
#   -timelimit   search time per capacity in seconds (default: 1)
#   -capacities  capacities in elements (default: 4096 ... 1048576)
#   -out         writes PREFIX.csv and PREFIX.svg (default: sweep)

package require fusetile

set here [file dirname [file normalize [info script]]]
array set opt [list \
    -problem [file normalize [file join $here .. .. benchmarks mlsys-2026-1.json]] \
    -target "" \
    -model native \
    -timelimit 1 \
    -capacities {4096 8192 12288 16384 24576 32768 49152 65536 98304 131072 196608 262144 393216 524288 1048576} \
    -out sweep]
if {[llength $argv] % 2} {
    error "usage: sweep.tcl ?-problem FILE? ?-target CFG? ?-model native|op? ?-timelimit S? ?-capacities LIST? ?-out PREFIX?"
}
foreach {k v} $argv {
    if {![info exists opt($k)]} {
        error "sweep.tcl: unknown option \"$k\" (options: [join [lsort [array names opt]] {, }])"
    }
    set opt($k) $v
}

# ---------------------------------------------------------------- the sweep

fusetile::problem prob $opt(-problem)
set energy 0
if {$opt(-target) ne ""} {
    fusetile::target tgt $opt(-target)
    tgt apply prob
    tgt destroy
    # does the target have an energy group?  the evaluation says so
    prob schedule probe -timelimit 0.1 -model $opt(-model)
    set energy [dict exists [probe evaluate] energy_j]
    probe destroy
}
set rows {}
set head [format "%-12s %14s %14s %8s %10s" capacity latency "lower bound" ratio subgraphs]
puts [expr {$energy ? [format "%s %12s %10s" $head "energy (J)" "power (W)"] : $head}]
foreach cap $opt(-capacities) {
    prob configure -capacity $cap
    set bound [dict get [prob lowerbound -model $opt(-model)] bound]
    if {[catch {prob schedule sched -timelimit $opt(-timelimit) -model $opt(-model)} msg opts]} {
        if {[lindex [dict get $opts -errorcode] 1] ne "INVALID"} {
            return -options $opts $msg
        }
        puts [format "%-12s %14s %14.1f %8s %10s" $cap "no schedule" $bound - -]
        continue
    }
    set e [sched evaluate]
    set total [dict get $e total]
    set nsg [llength [dict get $e subgraphs]]
    sched destroy
    set line [format "%-12s %14.1f %14.1f %8.4f %10d" $cap $total $bound [expr {$total / $bound}] $nsg]
    if {$energy} {
        set j [dict get $e energy_j]
        set w [dict get $e power_w]
        puts [format "%s %12.6g %10.4g" $line $j $w]
    } else {
        set j ""
        set w ""
        puts $line
    }
    lappend rows [list $cap $total $bound $nsg $j $w]
}
set name [dict get [prob info] name]
prob destroy

# ---------------------------------------------------------------- CSV

set f [open $opt(-out).csv w]
puts $f "capacity,latency,lower_bound,subgraphs,energy_j,power_w"
foreach r $rows {
    puts $f [join $r ,]
}
close $f

# ---------------------------------------------------------------- SVG

# nice_step RANGE N: a step of 1, 2 or 5 times a power of ten giving about
# N intervals over RANGE.
proc nice_step {range n} {
    set raw [expr {$range / double($n)}]
    set mag [expr {10.0 ** floor(log10($raw))}]
    foreach m {1 2 5 10} {
        if {$m * $mag >= $raw} {
            return [expr {$m * $mag}]
        }
    }
}

# short N: 1500000 -> 1.5M, 4096 -> 4K (binary for the powers of two).
proc short {n {binary 0}} {
    set k [expr {$binary ? 1024.0 : 1000.0}]
    foreach {div suffix} [list [expr {$k * $k}] M $k K] {
        if {abs($n) >= $div} {
            return [format %g%s [expr {$n / $div}] $suffix]
        }
    }
    return [format %g $n]
}

proc esc {s} {
    string map {& &amp; < &lt; > &gt; \" &quot;} $s
}

# svg_plot FILE TITLE XLABEL YLABEL SERIES: SERIES is a list of
# {label colour dash points}, points a flat list x y x y ...; x on a log2
# scale, y linear from 0.
proc svg_plot {file title xlabel ylabel series} {
    set W 900; set H 560
    set L 100; set R 30; set T 60; set B 80
    set xs {}; set ys {}
    foreach s $series {
        foreach {x y} [lindex $s 3] {
            lappend xs $x; lappend ys $y
        }
    }
    set lx0 [expr {log([tcl::mathfunc::min {*}$xs]) / log(2)}]
    set lx1 [expr {log([tcl::mathfunc::max {*}$xs]) / log(2)}]
    if {$lx1 == $lx0} { set lx1 [expr {$lx0 + 1}] }
    set ymax [expr {[tcl::mathfunc::max {*}$ys] * 1.08}]
    set ystep [nice_step $ymax 6]
    set ymax [expr {ceil($ymax / $ystep) * $ystep}]
    set px [list apply {{x lx0 lx1 L W R} {expr {$L + ($W - $L - $R) * (log($x) / log(2) - $lx0) / ($lx1 - $lx0)}}}]
    set py [list apply {{y ymax T H B} {expr {$H - $B - ($H - $T - $B) * $y / $ymax}}}]

    set o {}
    lappend o "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"$W\" height=\"$H\" viewBox=\"0 0 $W $H\" font-family=\"sans-serif\" font-size=\"13\">"
    lappend o "<rect width=\"$W\" height=\"$H\" fill=\"white\"/>"
    lappend o "<text x=\"[expr {$W / 2}]\" y=\"30\" text-anchor=\"middle\" font-size=\"17\" font-weight=\"bold\">[esc $title]</text>"
    # y grid and tick labels
    for {set y 0} {$y <= $ymax + $ystep / 2} {set y [expr {$y + $ystep}]} {
        set v [{*}$py $y $ymax $T $H $B]
        lappend o [format {<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>} $L $v [expr {$W - $R}] $v]
        lappend o [format {<text x="%d" y="%.1f" text-anchor="end">%s</text>} [expr {$L - 8}] [expr {$v + 4}] [short $y]]
    }
    # x ticks at the powers of two
    for {set e [expr {int(ceil($lx0))}]} {$e <= floor($lx1)} {incr e} {
        set v [{*}$px [expr {2.0 ** $e}] $lx0 $lx1 $L $W $R]
        lappend o [format {<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>} $v $T $v [expr {$H - $B}]]
        lappend o [format {<text x="%.1f" y="%d" text-anchor="middle">%s</text>} $v [expr {$H - $B + 20}] [short [expr {2 ** $e}] 1]]
    }
    # axes and their labels
    lappend o "<line x1=\"$L\" y1=\"[expr {$H - $B}]\" x2=\"[expr {$W - $R}]\" y2=\"[expr {$H - $B}]\" stroke=\"black\"/>"
    lappend o "<line x1=\"$L\" y1=\"$T\" x2=\"$L\" y2=\"[expr {$H - $B}]\" stroke=\"black\"/>"
    lappend o "<text x=\"[expr {($L + $W - $R) / 2}]\" y=\"[expr {$H - 25}]\" text-anchor=\"middle\" font-size=\"15\">[esc $xlabel]</text>"
    lappend o "<text transform=\"translate(25 [expr {($T + $H - $B) / 2}]) rotate(-90)\" text-anchor=\"middle\" font-size=\"15\">[esc $ylabel]</text>"
    # the series, each labelled in a legend and at its last point
    set ly [expr {$T + 15}]
    set labels {}
    foreach s $series {
        lassign $s label colour dash points
        set pts {}
        foreach {x y} $points {
            set vx [{*}$px $x $lx0 $lx1 $L $W $R]
            set vy [{*}$py $y $ymax $T $H $B]
            lappend pts [format %.1f,%.1f $vx $vy]
            lappend o [format {<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"/>} $vx $vy $colour]
        }
        lappend o "<polyline fill=\"none\" stroke=\"$colour\" stroke-width=\"2.5\" stroke-dasharray=\"$dash\" points=\"[join $pts { }]\"/>"
        set lx [expr {$W - $R - 220}]
        lappend o "<line x1=\"$lx\" y1=\"$ly\" x2=\"[expr {$lx + 30}]\" y2=\"$ly\" stroke=\"$colour\" stroke-width=\"2.5\" stroke-dasharray=\"$dash\"/>"
        lappend o "<text x=\"[expr {$lx + 38}]\" y=\"[expr {$ly + 4}]\">[esc $label]</text>"
        incr ly 22
        # the label above its line's last point, or below it when an
        # earlier label is already there
        lassign [split [lindex $pts end] ,] ex ey
        set ty [expr {$ey - 8}]
        foreach used $labels {
            if {abs($used - $ty) < 16} {
                set ty [expr {$ey + 20}]
            }
        }
        lappend labels $ty
        lappend o [format {<text x="%.1f" y="%.1f" text-anchor="end" fill="%s">%s</text>} $ex $ty $colour [esc $label]]
    }
    lappend o "</svg>"
    set f [open $file w]
    puts $f [join $o \n]
    close $f
}

if {[llength $rows]} {
    set lat {}; set lb {}
    foreach r $rows {
        lassign $r cap total bound
        lappend lat $cap $total
        lappend lb $cap $bound
    }
    svg_plot $opt(-out).svg "Latency against fast-memory capacity: [file tail $name] ($opt(-model) model)" \
        "fast-memory capacity (elements, log scale)" "latency (cost units)" \
        [list [list "scheduled latency" "#1f6fb4" none $lat] [list "lower bound" "#d62728" "8 5" $lb]]
}
puts "wrote $opt(-out).csv and $opt(-out).svg ([llength $rows] points)"
