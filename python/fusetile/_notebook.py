"""_notebook.py - what the fusetile package adds for notebook use over the C extension: progress reporters (a tqdm bar or a stderr line), result dicts with seconds and to_rows() for pandas, targets and sweeps from dicts (as libconfig text), and a sweep's rows from its database.

The public names are re-exported by fusetile/__init__.py; the columns of
to_rows() are those of the CLI's --csv (cli/report_csv.c), which
tests/cli/test_csv.sh and tests/python/test_binding_notebook.py both check.
"""

import math
import os
import sys

# ------------------------------------------------------------------ progress


def _interactive():
    """Whether a person is watching: a Jupyter/IPython kernel, or stderr is a terminal."""
    if "ipykernel" in sys.modules:
        return True
    try:
        return sys.stderr is not None and sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _describe(d):
    """A short text of a progress dict (what the bar and the line show)."""
    what = d.get("what")
    if what == "schedule":
        best = d.get("best")
        return "%.1f/%g s  best %s  ratio %s  pass %s" % (
            d["elapsed"], d["limit"], "-" if best is None else "%.10g" % best,
            "-" if best is None else "%.4f" % d["ratio"], d["pass"])
    if what == "sweep":
        return "%d ok, %d failed, %d skipped of %d  %.1f s" % (d["ok"], d["failed"], d["skipped"], d["selected"],
                                                               d["elapsed"])
    return "%d/%d steps" % (d.get("done", 0), d.get("total", 0))


class _Line:
    """A progress line on stderr, redrawn in place."""

    def __init__(self, what):
        self.what = what
        self.shown = False

    def __call__(self, d):
        sys.stderr.write("\r\033[Kfusetile: %s: %3.0f%%  %s" % (self.what, 100 * d.get("fraction", 0), _describe(d)))
        sys.stderr.flush()
        self.shown = True

    def close(self):
        if self.shown:
            sys.stderr.write("\n")
            sys.stderr.flush()


class _Bar:
    """A tqdm bar (tqdm.auto: a widget in a notebook), in thousandths."""

    def __init__(self, tqdm, what):
        self.bar = tqdm(total=1000, desc=what, leave=False, bar_format="{desc}: {percentage:3.0f}%|{bar}| {postfix}")
        self.at = 0

    def __call__(self, d):
        to = int(1000 * min(1.0, max(0.0, d.get("fraction", 0))))
        if to > self.at:
            self.bar.update(to - self.at)
            self.at = to
        self.bar.set_postfix_str(_describe(d), refresh=True)

    def close(self):
        self.bar.close()


class _Calls:
    """The caller's progress callable (nothing to close)."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, d):
        self.fn(d)

    def close(self):
        pass


def reporter(progress, what):
    """The progress reporter of a long call, or None.

    progress: None (the default: a tqdm bar when tqdm is importable, else a
    line on stderr, and only when interactive: a notebook, or stderr a
    terminal), True (the same, interactive or not), False (nothing) or a
    callable taking the progress dict.  The reporter has close()."""
    if progress is False or (progress is None and not _interactive()):
        return None
    if callable(progress) and progress is not True:
        return _Calls(progress)
    if progress is not None and progress is not True:
        raise TypeError("progress must be None, True, False or a callable, not %s" % type(progress).__name__)
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return _Line(what)
    return _Bar(tqdm, what)


def run_with(progress, what, fn, *args, **kw):
    """fn(*args, progress=the reporter, **kw), the reporter closed after."""
    rep = reporter(progress, what)
    try:
        return fn(*args, progress=rep, **kw)
    finally:
        if rep is not None:
            rep.close()


# ------------------------------------------------------------------ results

#: The unit of each cost figure: one cost unit is one clock cycle of a
#: machine target (clock_hz in the result), or the contest's abstract unit.
COST_UNIT = "cost units"


def _clock(target):
    """The clock of a machine target in Hz, or None (no target, the contest's, no clock)."""
    if target is None:
        return None
    info = target.info()
    hz = info.get("clock_hz")
    if info.get("contest") or not hz or not hz > 0:
        return None
    return float(hz)


def _ops_text(ops):
    return " ".join(str(o) for o in ops)


def _pct(x):
    return None if x is None else 100.0 * x


def _sec(x, hz):
    return None if x is None or hz is None else x / hz


class Result(dict):
    """A result dict (the keys of fusetile evaluate/simulate --json) with
    to_rows(): one flat dict per subgraph whose keys carry their units
    ("latency [cost units]", "latency [s]", "peak_working_set [elements]"),
    the columns of the CLI's --csv.  ``units`` maps each column to its unit
    (None: a count or a name)."""

    #: (column, unit or None, function(subgraph dict, result) -> value)
    _columns = ()
    #: the columns a clocked target adds: (column, function)
    _seconds = ()

    def to_rows(self):
        """A list of dicts, one per subgraph (``pandas.DataFrame(r.to_rows())``)."""
        hz = self.get("clock_hz")
        rows = []
        for g in self.get("subgraphs", []):
            row = {name: f(g, self) for name, _unit, f in self._columns}
            if hz:
                for name, f in self._seconds:
                    row[name] = f(g, self)
            rows.append(row)
        return rows

    @property
    def units(self):
        """Each to_rows() column's unit (None for counts and names)."""
        u = {name: unit for name, unit, _f in self._columns}
        if self.get("clock_hz"):
            u.update({name: "s" for name, _f in self._seconds})
        return u


_HEAD = (
    ("subgraph", None, lambda g, r: g["index"]),
    ("label", None, lambda g, r: g["label"]),
    ("ops", None, lambda g, r: _ops_text(g["ops"])),
    ("w [elements]", "elements", lambda g, r: g["granularity"][0]),
    ("h [elements]", "elements", lambda g, r: g["granularity"][1]),
    ("k [elements]", "elements", lambda g, r: g["granularity"][2]),
)


class Evaluation(Result):
    """evaluate()'s and schedule()'s evaluation; with a clocked target also
    clock_hz, total_seconds and per subgraph latency_seconds."""

    _columns = _HEAD + (
        ("tiles", None, lambda g, r: g["tiles"]),
        ("steps", None, lambda g, r: g["steps"]),
        ("compute_bound_steps", None, lambda g, r: g["compute_bound_steps"]),
        ("memory_bound_steps", None, lambda g, r: g["memory_bound_steps"]),
        ("peak_working_set [elements]", "elements", lambda g, r: g["peak_working_set"]),
        ("loaded [elements]", "elements", lambda g, r: g["loaded"]),
        ("written [elements]", "elements", lambda g, r: g["written"]),
        ("compute_time [cost units]", COST_UNIT, lambda g, r: g["compute_time"]),
        ("memory_time [cost units]", COST_UNIT, lambda g, r: g["memory_time"]),
        ("latency [cost units]", COST_UNIT, lambda g, r: g["latency"]),
        ("share [%]", "%", lambda g, r: 100.0 * g["latency"] / r["total"] if r["total"] else 0.0),
    )
    _seconds = (("latency [s]", lambda g, r: g["latency_seconds"]),)


class Simulation(Result):
    """simulate()'s result; with a clocked target also clock_hz,
    total_seconds (of the simulated total, as `fusetile simulate --json`)
    and per subgraph simulated_seconds."""

    _columns = _HEAD + (
        ("steps", None, lambda g, r: g["steps"]),
        ("simulated [cost units]", COST_UNIT, lambda g, r: g["simulated"]),
        ("analytic [cost units]", COST_UNIT, lambda g, r: g["analytic"]),
        ("difference [cost units]", COST_UNIT, lambda g, r: g["difference"]),
        ("relative_difference", None, lambda g, r: g["relative_difference"]),
        ("peak_occupancy [elements]", "elements", lambda g, r: g["peak_occupancy"]),
        ("channel_busy [%]", "%", lambda g, r: _pct(g["channel_busy"])),
        ("compute_busy [%]", "%", lambda g, r: _pct(g["compute_busy"])),
        ("accounted_for_by", None, lambda g, r: g["accounted_for_by"]),
    )
    _seconds = (("simulated [s]", lambda g, r: g["simulated_seconds"]),)


def _with_seconds(r, target, total, each):
    """r with clock_hz, total_seconds (of r[total]) and each subgraph's
    EACH_seconds (of its r[each]) when target has a clock."""
    hz = _clock(target)
    if hz:
        r["clock_hz"] = hz
        r["total_seconds"] = r[total] / hz
        for g in r["subgraphs"]:
            g[each + "_seconds"] = g[each] / hz
    return r


def evaluation(d, target):
    """d (a dict from the C extension) as an Evaluation, with seconds when target has a clock."""
    return _with_seconds(Evaluation(d), target, "total", "latency")


def simulation(d, target):
    """d as a Simulation, with seconds (of the simulated figures) when target has a clock."""
    return _with_seconds(Simulation(d), target, "total_simulated", "simulated")


# ------------------------------------------------------------------ libconfig text


def _cfg_value(v, where):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return "%dL" % v if not -2**31 <= v < 2**31 else str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ValueError("%s: %r is not a finite number" % (where, v))
        t = repr(v)
        return t if any(c in t for c in ".en") else t + ".0"
    if isinstance(v, str):
        return '"%s"' % v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    if isinstance(v, os.PathLike):
        return _cfg_value(os.fspath(v), where)
    if isinstance(v, dict):
        return "{ %s }" % " ".join(_cfg_setting(k, x, where) for k, x in v.items())
    if isinstance(v, (list, tuple)):
        items = [_cfg_value(x, "%s[%d]" % (where, i)) for i, x in enumerate(v)]
        scalar = all(isinstance(x, (bool, int, float, str)) for x in v) and len({type(x) for x in v}) <= 1
        return ("[ %s ]" if scalar else "( %s )") % ", ".join(items)
    raise TypeError("%s: %s cannot be a setting's value" % (where, type(v).__name__))


def _cfg_setting(k, v, where):
    if not isinstance(k, str) or not k:
        raise TypeError("%s: setting names must be non-empty strings, not %r" % (where, k))
    return "%s = %s;" % (k, _cfg_value(v, "%s.%s" % (where, k) if where else k))


def cfg_text(d, what):
    """The libconfig text of dict d (groups as dicts, arrays as lists of
    scalars, lists as lists of mixed values or groups)."""
    if not isinstance(d, dict):
        raise TypeError("%s must be a dict, not %s" % (what, type(d).__name__))
    return "\n".join(_cfg_setting(k, v, "") for k, v in d.items()) + "\n"


# ------------------------------------------------------------------ sweeps


def sweep_rows(db, keys):
    """The database rows of these run keys, in their order (a dict each;
    runs without a row are left out)."""
    import sqlite3
    from urllib.request import pathname2url
    con = sqlite3.connect("file:%s?mode=ro" % pathname2url(os.path.abspath(db)), uri=True)
    try:
        con.row_factory = sqlite3.Row
        found = {}
        for i in range(0, len(keys), 500):
            part = keys[i:i + 500]
            q = "SELECT * FROM runs WHERE key IN (%s)" % ",".join("?" * len(part))
            for row in con.execute(q, part):
                found[row["key"]] = dict(row)
        return [found[k] for k in keys if k in found]
    finally:
        con.close()
