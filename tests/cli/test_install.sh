#!/usr/bin/env bash
# test_install.sh - `make install DESTDIR=...` works alone: the installed fusetile schedules an installed example on a shipped target by name (found in the install tree, not the source tree, from a directory outside both), every installed library's pkg-config file compiles, links and runs a small C program, the installed Tcl package and Python package find the shipped targets too, the tree moved whole still finds them, and `make uninstall` removes every file.
# usage: test_install.sh FUSETILE VECTORS_DIR
# Environment (make check sets it): FT_MAKE, FT_BUILDDIR; FT_TCLSH and
# FT_HAVE_TCL; FT_PYTHON (empty: the Python cases skip, FT_PYTHON_SKIP says
# why).  It installs with the configured directories (the pkg-config
# files name them) and reads them from the build's Makefile.
set -u
bin=${1:?usage: test_install.sh FUSETILE VECTORS_DIR}
vec=${2:?usage: test_install.sh FUSETILE VECTORS_DIR}
. "$(dirname "$0")/lib.sh"
vec=$(cd "$vec" && pwd)
build=${FT_BUILDDIR:-$(cd "$(dirname "$bin")" && pwd)}
mk=${FT_MAKE:-make}
if [ -n "${FT_RUNNER:-}" ]; then
    skip 1 "make install under FT_RUNNER: the installed programs are not the ones FT_RUNNER runs"
    finish test_install
fi
if ! command -v pkg-config >/dev/null 2>&1; then
    skip 1 "make install: pkg-config not found (install pkg-config)"
    finish test_install
fi
# make -C BUILD with the caller's make flags removed (a sub-make of make check)
bmake() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL $mk -s -C "$build" "$@"; }
dir() { bmake --eval='ft-print-%: ; @echo $($*)' "ft-print-$1"; }
bindir=$(dir bindir) libdir=$(dir libdir) datadir=$(dir datadir) tclpkgdir=$(dir tclpkgdir) pythondir=$(dir pythondir)
D=$tmp/dest
away=$tmp/away   # a working directory outside the source and build trees
mkdir -p "$away"

check install 0 - '' -- bmake install DESTDIR="$D"
share=$D$datadir/fusetile
for f in targets/kpu.cfg targets/gpu-h100.cfg targets/contest.cfg targets/measured/h100/gemm.tsv \
    examples/bert_layer.problem.json examples/sweep/capacity-bandwidth.cfg patterns/cnn.patterns; do
    expect "installed-$f" "$share/$f is not installed" test -f "$share/$f"
done

# --- the installed command, from a directory outside both trees, with no
# environment pointing at them: --target NAME finds the installed target
run_inst() { env -C "$away" -u FUSETILE_TARGETS -u FT_PATTERNS_DIR PATH="$D$bindir:/usr/bin:/bin" LD_LIBRARY_PATH="$D$libdir" "$@"; }
check inst-schedule-by-name 0 err "^fusetile: schedule: target $share/targets/kpu.cfg \(kpu\): " -- \
    run_inst fusetile schedule "$share/examples/bert_layer.problem.json" --target kpu --time-limit 1 -o "$tmp/bert.json"
check inst-evaluate-cfg-name 0 out "^target +$share/targets/kpu.cfg \(kpu\)" -- \
    run_inst fusetile evaluate "$share/examples/bert_layer.problem.json" "$tmp/bert.json" --target kpu.cfg
# the patterns strategy finds the installed pattern libraries
check inst-patterns 0 err 'pattern ' -- \
    run_inst fusetile schedule "$share/examples/bert_layer.problem.json" --strategy patterns --time-limit 1 -o /dev/null
check inst-unknown-name 2 err "^fusetile: --target kpu2: no such file or shipped target \(looked in \./, $share/targets\); shipped targets: contest, example, gpu-h100, gpu-h100-sm, gpu-h200, kpu, kpu-chip, tpu-v5e, tpu-v5e-chip; give a path or a name$" -- \
    run_inst fusetile evaluate "$share/examples/bert_layer.problem.json" "$tmp/bert.json" --target kpu2
# the installed sweep example's relative target paths hold in the install tree
check inst-sweep-example 0 out '^35[[:space:]]problem=../gpt2_block.problem.json;target=../../targets/tpu-v5e.cfg;' -- run_inst fusetile sweep list "$share/examples/sweep/capacity-bandwidth.cfg"

# --- pkg-config: every installed library's file; a small C program against
# each compiles, links and runs (PKG_CONFIG_SYSROOT_DIR puts DESTDIR before
# the configured paths)
export PKG_CONFIG_PATH=$D$libdir/pkgconfig PKG_CONFIG_SYSROOT_DIR=$D
check pkg-config-all 0 out "-I$D" -- pkg-config --cflags --libs fusetile fusetile-sim fusetile-sweep fusetile-plot fusetile-report
cat >"$tmp/core.c" <<'EOF'
/* the core library: a shipped target by name, from the installed libfusetile.so */
#include <fusetile/fusetile.h>
#include <fusetile/target.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    char path[4096];
    ft_status st;
    ft_problem *p;
    ft_target *t;
    if (argc < 2 || ft_target_find("kpu", NULL, path, sizeof path, &st) || ft_target_load(path, &t, &st) ||
        ft_problem_load(argv[1], &p, &st) || ft_target_apply(t, p, 0, &st)) {
        fprintf(stderr, "%s\n", argc < 2 ? "usage" : st.msg);
        return 2;
    }
    printf("core %s %s capacity %g\n", t->name, path, p->capacity);
    ft_problem_free(p);
    ft_target_free(t);
    return 0;
}
EOF
cat >"$tmp/sim.c" <<'EOF'
/* the simulator: replay a schedule */
#include <fusetile/fusetile.h>
#include <fusetile/sim.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    ft_status st;
    ft_problem *p;
    ft_schedule *s;
    ft_sim *sim;
    const char *err = "";
    ft_sim_result r;
    if (argc < 3 || ft_problem_load(argv[1], &p, &st) || ft_schedule_load(argv[2], &s, &st)) {
        fprintf(stderr, "%s\n", argc < 3 ? "usage" : st.msg);
        return 2;
    }
    if (ft_sim_new(&sim, &err) || ft_sim_run(sim, p, s, NULL, &r)) {
        fprintf(stderr, "sim: %s\n", err[0] ? err : ft_sim_errmsg(sim));
        return 2;
    }
    printf("sim total %.15g\n", r.total_simulated);
    ft_sim_result_free(&r);
    ft_sim_free(sim);
    ft_schedule_free(s);
    ft_problem_free(p);
    return 0;
}
EOF
cat >"$tmp/sweep.c" <<'EOF'
/* the sweep library: load a sweep file (it loads every problem and target it names) */
#include <fusetile/sweep.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    ft_status st;
    ft_sweep *sw;
    if (argc < 2 || ft_sweep_load(argv[1], &sw, &st)) {
        fprintf(stderr, "%s\n", argc < 2 ? "usage" : st.msg);
        return 2;
    }
    char *db = ft_sweep_default_db(argv[1]);
    printf("sweep ok %s\n", db ? "db" : "-");
    free(db);
    ft_sweep_free(sw);
    return 0;
}
EOF
cat >"$tmp/plot.c" <<'EOF'
/* the plotter: an SVG in memory */
#include <fusetile/plot.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void)
{
    double x[] = {1, 2, 3}, y[] = {2, 4, 8};
    ft_plot_series sr = {"s", x, y, NULL, 3, 1, 0};
    ft_plot pl = {"t", "x", "y", 0, 1, 0, &sr, 1, 0, 0};
    char err[256];
    char *svg = ft_plot_svg(&pl, err, sizeof err);
    if (!svg) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    printf("plot %s\n", strstr(svg, "<svg") ? "svg" : "no svg");
    free(svg);
    return 0;
}
EOF
cat >"$tmp/report.c" <<'EOF'
/* the report: a schedule's HTML page in memory (no strategies compared) */
#include <fusetile/fusetile.h>
#include <fusetile/report.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv)
{
    ft_status st;
    ft_problem *p;
    ft_schedule *s;
    ft_report_opts o;
    char *html = NULL;
    if (argc < 3 || ft_problem_load(argv[1], &p, &st) || ft_schedule_load(argv[2], &s, &st)) {
        fprintf(stderr, "%s\n", argc < 3 ? "usage" : st.msg);
        return 2;
    }
    ft_report_opts_init(&o);
    o.strategies = 0;
    if (ft_report_html(p, s, &o, &html, &st)) {
        fprintf(stderr, "report: %s\n", st.msg);
        return 2;
    }
    printf("report %s\n", strstr(html, "id=\"report-data\"") ? "html" : "no data");
    free(html);
    ft_schedule_free(s);
    ft_problem_free(p);
    return 0;
}
EOF
# the build's compiler and flags (a sanitizer build's libraries need its
# runtime linked in)
cc=$(dir CC) cflags=$(dir CFLAGS) ldflags=$(dir LDFLAGS)
# link NAME MODULE: compile $tmp/NAME.c against pkg-config MODULE
link() { $cc $cflags -o "$tmp/$1" "$tmp/$1.c" $(pkg-config --cflags --libs "$2") $ldflags; }
run_prog() { env -C "$away" LD_LIBRARY_PATH="$D$libdir" "$@"; }
check cc-fusetile 0 - '' -- link core fusetile
check run-fusetile 0 out "^core kpu $share/targets/kpu.cfg capacity 131072$" -- run_prog "$tmp/core" "$vec/ex1A.problem.json"
check cc-fusetile-sim 0 - '' -- link sim fusetile-sim
check run-fusetile-sim 0 out '^sim total [0-9]' -- run_prog "$tmp/sim" "$vec/ex1A.problem.json" "$vec/ex1A.solution.json"
check cc-fusetile-sweep 0 - '' -- link sweep fusetile-sweep
check run-fusetile-sweep 0 out '^sweep ok db$' -- run_prog "$tmp/sweep" "$share/examples/sweep/capacity-bandwidth.cfg"
check cc-fusetile-plot 0 - '' -- link plot fusetile-plot
check run-fusetile-plot 0 out '^plot svg$' -- run_prog "$tmp/plot"
check cc-fusetile-report 0 - '' -- link report fusetile-report
check run-fusetile-report 0 out '^report html$' -- run_prog "$tmp/report" "$vec/ex1A.problem.json" "$vec/ex1A.solution.json"
unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR

# --- the installed Tcl package: package require, and a shipped target by name
if [ -f "$D$tclpkgdir/libtclfusetile.so" ] && ldd "$D$tclpkgdir/libtclfusetile.so" 2>/dev/null | grep -q libasan; then
    skip 1 "the installed Tcl package: a sanitizer build (tclsh cannot load it without the sanitizer runtime first)"
elif [ "${FT_HAVE_TCL:-yes}" = yes ] && [ -f "$D$tclpkgdir/pkgIndex.tcl" ] && command -v "${FT_TCLSH:-tclsh8.6}" >/dev/null 2>&1; then
    check tcl-installed 0 out "^tcl [0-9.]+ $share/targets/gpu-h100.cfg$" -- env -C "$away" -u TCLLIBPATH "${FT_TCLSH:-tclsh8.6}" <(printf '%s\n' \
        "set auto_path [linsert \$auto_path 0 [file dirname {$D$tclpkgdir}]]" \
        'set v [package require fusetile]' \
        'fusetile::target t gpu-h100' \
        'puts "tcl $v [dict get [t info] path]"')
else
    skip 1 "the installed Tcl package: this build has no Tcl extension (Tcl 8.6 with tcl-dev) or no tclsh"
fi

# --- the installed Python package: a schedule on a shipped target by name
if [ -n "${FT_PYTHON:-}" ]; then
    check python-installed 0 out "^py $D$pythondir/fusetile/__init__.py $share/targets/kpu.cfg [0-9.]+$" -- \
        env -C "$away" -u FUSETILE_TARGETS PYTHONPATH="$D$pythondir" "$FT_PYTHON" -c "
import fusetile
t = fusetile.load_target('kpu')
s, ev = fusetile.schedule('$share/examples/bert_layer.problem.json', time_limit=1, target='kpu', threads=1)
print('py', fusetile.__file__, t.path, ev['total'])"
else
    skip 1 "the installed Python package: ${FT_PYTHON_SKIP:-FT_PYTHON is not set (run through make check)}"
fi

# --- a tree moved whole still finds its own targets (they are found from
# where the program lies, not from the configured prefix)
prefix=$(dir prefix)
case $bindir:$datadir in
"$prefix"/*:"$prefix"/*)
    mv "$D$prefix" "$tmp/moved"
    check moved-tree 0 err "^fusetile: schedule: target $tmp/moved${datadir#"$prefix"}/fusetile/targets/tpu-v5e.cfg \(tpu-v5e\): " -- \
        env -C "$away" LD_LIBRARY_PATH="$tmp/moved${libdir#"$prefix"}" "$tmp/moved${bindir#"$prefix"}/fusetile" schedule \
        "$tmp/moved${datadir#"$prefix"}/fusetile/examples/bert_layer.problem.json" --target tpu-v5e --time-limit 1 -o /dev/null
    mv "$tmp/moved" "$D$prefix"
    ;;
*) skip 1 "a moved install tree: bindir or datadir is not under the prefix ($bindir, $datadir)" ;;
esac

# --- uninstall leaves no file behind
check uninstall 0 - '' -- bmake uninstall DESTDIR="$D"
left=$(find "$D" -type f -o -type l | head -5)
expect uninstall-empty "files left after make uninstall: $left" test -z "$left"

finish test_install
