"""fusetile - schedule DAGs of tensor ops onto accelerators under an exact cost model.

The Python face of libfusetile (the C extension ``fusetile._fusetile`` over
the library's public API, built by the project's Makefile)::

    import fusetile
    p = fusetile.load_problem("benchmarks/mlsys-2026-1.json")
    sched, ev = fusetile.schedule(p, time_limit=2)
    print(ev["total"], [g["label"] for g in ev["subgraphs"]])
    r = fusetile.simulate(p, sched, trace="run.json")

Arguments named ``problem`` take a :class:`Problem`, a dict (the problem
file's JSON) or a path; ``schedule`` a :class:`Schedule`, a dict or a path;
``target`` a :class:`Target`, a path or None.  ``compute_model`` is
``'native'`` (the default) or ``'op'`` (SPEC.md section 4).

Errors of the library raise :class:`Error` (``InputError`` for a bad file
or text, ``InvalidScheduleError`` with ``.reason`` for a schedule that
breaks SPEC.md section 2, ``UsageError`` -- also a ValueError -- for a bad
argument value); arguments of the wrong type raise TypeError.
"""

import json as _json
import os as _os

from . import _notebook
from ._notebook import Evaluation, Result, Simulation  # noqa: F401  (re-exported)

try:
    from . import _fusetile
    _MISSING = _IMPORT_ERROR = None
except ImportError as _e:
    # The .py files without the C extension beside them (a Python without
    # headers, or a source tree that is not a build tree): the importer
    # subpackage still works (but for --target); everything else raises
    # Error saying why.
    _fusetile = None
    _IMPORT_ERROR = str(_e)  # why, for the importer's --target message
    _MISSING = ("fusetile: the C extension fusetile._fusetile is not built next to %s (make builds it when "
                "configure finds a Python 3 with its headers, PYTHON_EXT; then PYTHONPATH=BUILDDIR/python): %s"
                % (_os.path.dirname(_os.path.abspath(__file__)), _e))

if _fusetile is not None:
    from ._fusetile import (  # noqa: F401  (re-exported)
        Error,
        InputError,
        InvalidScheduleError,
        Problem,
        Schedule,
        Target,
        UsageError,
    )

    __version__ = _fusetile.__version__
    #: Longest subgraph label in bytes (``ft_subgraph_label``); longer ones end in "...".
    LABEL_MAX = _fusetile.LABEL_MAX
else:
    class Error(Exception):
        """A fusetile error (see the C extension's documentation)."""
        message = kind = code = reason = subgraph = tile = step = None

    class InputError(Error):
        pass

    class InvalidScheduleError(Error):
        pass

    class UsageError(Error, ValueError):
        pass

    class Problem:
        def __init__(self, *a, **kw):
            raise TypeError("cannot create 'fusetile.Problem' instances")

    class Schedule(Problem):
        pass

    class Target(Problem):
        pass

    __version__ = None
    LABEL_MAX = 256


def _need():
    """Raise Error when the C extension is missing."""
    if _MISSING is not None:
        raise _error(Error, _MISSING, "missing")


def contest_time_limit(nops):
    """The contest's time limit in seconds for a problem of nops ops."""
    _need()
    return _fusetile.contest_time_limit(nops)


__all__ = [
    "Error", "InputError", "InvalidScheduleError", "UsageError",
    "Problem", "Schedule", "Target",
    "load_problem", "problem_from_dict", "problem_from_json",
    "load_schedule", "schedule_from_dict", "schedule_from_json",
    "load_target", "apply_target",
    "schedule", "evaluate", "simulate", "contest_time_limit", "import_model",
    "target", "sweep", "Result", "Evaluation", "Simulation",
    "FusetileWarning", "FallbackWarning",
    "report",
]


def _is_path(x):
    return isinstance(x, (str, bytes, _os.PathLike))


def _error(cls, message, kind):
    """An exception of class cls with the attributes the C side sets."""
    e = cls(message)
    e.message, e.kind, e.code = message, kind, 2
    return e


def _dumps(d, what):
    if not isinstance(d, dict):
        raise TypeError("%s must be a dict, not %s" % (what, type(d).__name__))
    try:
        return _json.dumps(d, allow_nan=False)
    except ValueError as e:  # NaN or infinity: not JSON
        raise _error(InputError, "<dict>: %s: %s" % (what, e), "input") from None


# ------------------------------------------------------------------ problems

def load_problem(path):
    """Load and check a problem file (SPEC.md section 1) -> Problem.

    The optional op_names, op_kinds and tensor_names lists are kept
    (``Problem.info()``); InputError names the file, field and index of a
    fault (``FILE: op_names[3]: expected a string, got an integer``).
    """
    _need()
    return _fusetile.load_problem(path)


def problem_from_json(text, name="<json>"):
    """A Problem from the text of a problem file; ``name`` is used in messages."""
    if not isinstance(text, str):
        raise TypeError("text must be a str, not %s" % type(text).__name__)
    _need()
    return _fusetile.parse_problem(text, name)


def problem_from_dict(d, name="<dict>"):
    """A Problem from a dict with the problem file's fields (what
    ``Problem.to_dict()`` gives)."""
    _need()
    return _fusetile.parse_problem(_dumps(d, "problem"), name)


def _problem(x):
    _need()
    if isinstance(x, Problem):
        return x
    if isinstance(x, dict):
        return problem_from_dict(x)
    if _is_path(x):
        return load_problem(x)
    raise TypeError("problem must be a fusetile.Problem, a dict or a path, not %s" % type(x).__name__)


# ------------------------------------------------------------------ schedules

def load_schedule(path):
    """Load a schedule file (SPEC.md section 2) -> Schedule.  Only its form is
    checked here; evaluate() checks it against a problem."""
    _need()
    return _fusetile.load_schedule(path)


def schedule_from_json(text, name="<json>"):
    """A Schedule from the text of a schedule file."""
    if not isinstance(text, str):
        raise TypeError("text must be a str, not %s" % type(text).__name__)
    _need()
    return _fusetile.parse_schedule(text, name)


def schedule_from_dict(d, name="<dict>"):
    """A Schedule from a dict with the schedule file's fields (subgraphs,
    granularities, tensors_to_retain, traversal_orders, subgraph_latencies)."""
    _need()
    return _fusetile.parse_schedule(_dumps(d, "schedule"), name)


def _schedule(x):
    if isinstance(x, Schedule):
        return x
    if isinstance(x, dict):
        return schedule_from_dict(x)
    if _is_path(x):
        return load_schedule(x)
    raise TypeError("schedule must be a fusetile.Schedule, a dict or a path, not %s" % type(x).__name__)


# ------------------------------------------------------------------ targets

def load_target(path):
    """Load and check a target file (targets/*.cfg), or a shipped target by
    name (``"kpu"``, ``"gpu-h100"``; $FUSETILE_TARGETS is searched first,
    docs/TARGETS.md) -> Target.  InputError says ``FILE:LINE: SETTING:
    message``, or for an unknown name where it looked and the shipped
    names."""
    _need()
    return _fusetile.load_target(path)


def _target(x):
    if x is None or isinstance(x, Target):
        return x
    if _is_path(x):
        return load_target(x)
    if isinstance(x, dict):
        _need()
        return Target.from_dict(x)
    raise TypeError("target must be a fusetile.Target, a path, a dict or None, not %s" % type(x).__name__)


def target(x, **settings):
    """A Target from a path, a dict of the target file's settings
    (``Target.from_dict``) or a Target, with ``settings`` changed as
    ``Target.with_`` changes them (capacity, bandwidth, native, native_k,
    units, larger, write_bandwidth, latency, launch, overlap, duplex: the
    settings of Tcl's ``p configure``, in the problem's units)."""
    _need()
    t = _target(x)
    if t is None:
        raise TypeError("target must be a fusetile.Target, a path or a dict, not None")
    return t.with_(**settings) if settings else t


def apply_target(problem, target, keep_costs=False):
    """A copy of the problem on the target's machine: its capacity,
    bandwidth, native granularity, timing terms and (unless keep_costs) base
    costs derived from its throughput (``ft_target_apply``).  A contest
    target changes nothing."""
    t = _target(target)
    if t is None:
        raise TypeError("target must be a fusetile.Target or a path, not None")
    return _problem(problem).with_target(t, keep_costs=bool(keep_costs))


def _on_target(problem, target, keep_costs):
    p, _t = _on_target2(problem, target, keep_costs)
    return p


def _on_target2(problem, target, keep_costs):
    """(the problem on the target, the Target or None)."""
    p = _problem(problem)
    t = _target(target)
    return (p if t is None else p.with_target(t, keep_costs=bool(keep_costs))), t


# ------------------------------------------------------------------ computations

def schedule(problem, time_limit=None, compute_model="native", seed=1, threads=0, target=None,
             keep_costs=False, max_restarts=0, strategy="search", start_from="all", patterns=None,
             partition="auto", parts=0, progress=None, objective="latency"):
    """Search for a low-latency schedule (``ft_search``) -> (schedule dict, evaluation dict).

    time_limit: seconds of wall time (None: the contest's limit for the
    problem's size); threads 0: one per core; the same seed, threads and
    max_restarts without a time cut give the same schedule.  With a target
    the search is for the problem on that machine (apply_target).  The GIL
    is released while it runs.  The schedule dict is the schedule file's
    JSON (``schedule_from_dict`` takes it back); the evaluation is
    evaluate()'s dict.  InvalidScheduleError when no valid schedule exists.

    strategy: "search" (fusetile's search) or a classic grouping run alone:
    "patterns" (pattern-library tiling; patterns: a list of pattern files
    instead of the bundled libraries, found under $FT_PATTERNS_DIR when it
    is set), "rules" (rule-based fusion),
    "partition" (fusion, then partition: "fit", "layers", "metis" into
    parts, or "auto"), "supertile" (super tiling).  A strategy's schedule
    dict has subgraph_labels: each group's label and source layers.
    start_from: the strategies the search also starts from ("all",
    "none" or names joined by commas).

    objective: what the search minimises: "latency" (default), "energy"
    (joules, the target's energy model: a target with an ``energy``
    group, InputError otherwise) or "edp" (the energy-delay product, J s);
    the evaluation then has objective, objective_value, objective_bound
    (a lower bound of it) and objective_ratio (docs/SCHEDULER.md
    "Objectives").

    progress: None (a tqdm bar, or a line on stderr, when interactive),
    False, True or a callable given a dict about every 0.25 s (what,
    elapsed, limit, fraction, best, bound, ratio, evals, evals_per_s, pass,
    threads).  Ctrl-C ends the search within a second and raises
    KeyboardInterrupt with the best schedule so far as ``e.schedule`` and
    its evaluation as ``e.evaluation`` (an exception from the progress
    callable does the same).  The evaluation is an :class:`Evaluation`
    (``to_rows()``; seconds on a clocked target).
    """
    p, t = _on_target2(problem, target, keep_costs)
    try:
        s, ev = _notebook.run_with(progress, "schedule", _fusetile.search, p, time_limit, compute_model, seed, threads,
                                   max_restarts, strategy, start_from, patterns, partition, parts,
                                   objective=objective)
    except BaseException as e:
        if isinstance(getattr(e, "schedule", None), Schedule):
            e.schedule = e.schedule.to_dict()
            e.evaluation = _notebook.evaluation(e.evaluation, t)
        raise
    return s.to_dict(), _notebook.evaluation(ev, t)


def evaluate(problem, schedule, compute_model="native", target=None, keep_costs=False, progress=None, gap_time=None):
    """Evaluate a schedule exactly under the cost model (``ft_evaluate``) -> dict.

    Keys: compute_model, total, lower_bound (with lower_bound_compute,
    lower_bound_memory and ratio), capacity_bound (capacity_bound_memory,
    capacity_ratio), scored, gap (where the gap to the bound lies, as
    ``fusetile evaluate --json``'s: bound, ratio, grouping_bound, subgraphs,
    between, within, and the evidence best_alone, search_part, bound_part,
    alone_tried, alone_done; gap_in "search", "bound" or
    "grouping"; docs/SCHEDULER.md), and
    subgraphs: per subgraph index, ops, label,
    op_names, op_kinds, granularity [w, h, k], latency, reported_latency,
    tiles, tiles_x, tiles_y, k_steps, steps, compute_bound_steps,
    memory_bound_steps, peak_working_set, loaded, written, compute_time,
    memory_time.  InvalidScheduleError (``.reason``, ``.subgraph``,
    ``.tile``, ``.step``) for an invalid schedule.

    The result is an :class:`Evaluation`, a dict with ``to_rows()`` (one
    row per subgraph, units in the keys) and, on a target with a clock,
    clock_hz, total_seconds and per subgraph latency_seconds.  progress and
    Ctrl-C as in schedule().  gap_time: the seconds the gap's evidence may
    take (None: FT_GAP_EVALUATE_SECONDS, 2; 0: none), as evaluate's
    --gap-time.
    """
    p, t = _on_target2(problem, target, keep_costs)
    extra = {} if gap_time is None else {"gap_time": gap_time}
    return _notebook.evaluation(_notebook.run_with(progress, "evaluate", _fusetile.evaluate, p, _schedule(schedule),
                                                   compute_model, **extra), t)


def simulate(problem, schedule, compute_model="native", target=None, keep_costs=False, trace=None, vcd=None,
             progress=None, effects=True, detail="waves"):
    """Replay a schedule in the SystemC simulator, beside the analytic model -> dict.

    Keys: compute_model, total_simulated, total_analytic, difference,
    relative_difference, agree (every relative difference at most 1e-9),
    steps, analytic_reason (None, or why ft_evaluate rejects what the
    simulator accepted), and subgraphs: index, ops, label, op_names,
    op_kinds, granularity, steps, simulated, analytic, difference,
    peak_occupancy, channel_busy, compute_busy.  trace writes a Chrome trace
    (Perfetto), vcd a VCD.  On a target with double buffering the simulator
    pipelines steps and may differ from the analytic figure (``fusetile
    simulate --target`` names the effect).  One replay runs at a time per
    process (the GIL is released while it runs).

    As ``fusetile simulate --json``: accounted (every difference agrees or
    is accounted for), accounted_for_by (for the total and per subgraph:
    "" when they agree, the effects whose removal alone brings agreement,
    "the effects together" or "nothing"), and effects_off: with effects
    (the default) the same replay with each timing effect of the target
    turned off, then all of them (turned_off, ok, total_simulated,
    total_analytic, relative_difference, agree, subgraphs_simulated,
    subgraphs_analytic).  The result is a :class:`Simulation` (to_rows();
    on a clocked target clock_hz, total_seconds, per subgraph
    simulated_seconds; traces show real time).  progress and Ctrl-C as in
    schedule().  detail: what trace and vcd hold, "waves" (a span per
    subgraph and per tile or run of tiles, counters sampled) or "steps"
    (every step and transfer, as ``fusetile simulate --detail steps``).
    """
    p, t = _on_target2(problem, target, keep_costs)
    hz = _notebook._clock(t)
    d = _notebook.run_with(progress, "simulate", _fusetile.simulate, p, _schedule(schedule), compute_model, trace, vcd,
                           effects=bool(effects), target_name=None if t is None else t.name, clock_hz=hz or 0.0,
                           detail=detail)
    return _notebook.simulation(d, t)


# ------------------------------------------------------------------ sweeps

def sweep(cfg, db=None, jobs=0, progress=None):
    """Run a sweep (docs/SWEEP.md) on forked workers into its SQLite
    database (``ft_sweep_execute``, as ``fusetile sweep run``) -> list of
    row dicts, one per run of the sweep in order (the database's columns:
    key, idx, problem, target, capacity, ..., status, error, total,
    lower_bound, ratio, sim_total, agreement, wall_s, ...).

    cfg: a sweep file's path, or a dict of its settings (lists as lists,
    ranges as dicts: ``{"problems": ["a.json"], "capacity": {"from": 1000,
    "to": 4000, "times": 2}}``; relative paths from the working
    directory).  db: the database (default: the file's name with .db, or
    fusetile-sweep.db for a dict); runs already ok there are kept.  jobs: 0
    (one per core) or more.  progress as in schedule(), given ok, failed,
    skipped, selected, pending, elapsed, fraction.  Ctrl-C stops the
    workers and raises KeyboardInterrupt with the rows finished so far as
    ``e.rows``.
    """
    _need()
    if isinstance(cfg, dict):
        path, text = _os.path.abspath("fusetile-sweep.cfg"), _notebook.cfg_text(cfg, "sweep")
        if db is None:
            db = _os.path.abspath("fusetile-sweep.db")
    elif _is_path(cfg):
        path, text = cfg, None
    else:
        raise TypeError("cfg must be a path or a dict, not %s" % type(cfg).__name__)
    r = _notebook.run_with(progress, "sweep", _fusetile.sweep_run, path, text, db, jobs)
    rows = _notebook.sweep_rows(r["db"], r["keys"])
    if r["interrupted"]:
        e = KeyboardInterrupt("sweep interrupted: %d of %d runs ok in %s" % (r["ok"] + r["skipped"], r["selected"],
                                                                             r["db"]))
        e.rows = rows
        raise e
    return rows


def report(problem, schedule=None, target=None, path=None, keep_costs=False, compute_model="native",
           time_limit=10, strategies="all", threads=0, seed=1, progress=None):
    """The HTML report of a schedule (``fusetile report``, ``ft_report_html``) -> str.

    One self-contained page: the subgraphs' table, a roofline chart, the
    simulator's timeline, the schedule beside the search and the classic
    strategies, and headings kept for later analyses; its data is JSON in
    ``<script type="application/json" id="report-data">`` and its script
    checks the page against it (``<body data-checks="pass">``).  schedule
    None: the search's schedule, found in time_limit seconds (also each
    strategy's limit).  strategies: "all", "none" or names joined by
    commas.  path: also write the page there atomically.  Returns the
    page's text.  The GIL is released while it runs, and the process's
    simulator is held (one replay at a time).  progress(dict) is called
    about every 0.25 s with what ("report"), done and total (phases: the
    search, the evaluation, the replay, each strategy) and fraction; Ctrl-C
    (or an exception from progress) stops the report and raises, writing
    nothing.
    """
    p, t = _on_target2(problem, target, keep_costs)
    s = None if schedule is None else _schedule(schedule)
    name = lambda x: _os.fsdecode(x) if _is_path(x) else None  # noqa: E731
    return _fusetile.report(p, s, t, path, keep_costs=bool(keep_costs), compute_model=compute_model,
                            time_limit=float(time_limit), strategies=strategies, threads=threads, seed=seed,
                            problem_name=name(problem), schedule_name=name(schedule), progress=progress)


# ------------------------------------------------------------------ importer

class FusetileWarning(UserWarning):
    """The base of fusetile's warnings."""


class FallbackWarning(FusetileWarning):
    """import_model went through an ONNX export instead of torch.fx.

    Warned when torch.fx cannot trace the model or meets an op with no
    canonical form; the export runs the model once on the example inputs,
    so of data-dependent control flow only the branch those inputs take is
    kept.
    """


def import_model(model, example_inputs=None, target=None, **kw):
    """Import a PyTorch model as a fusetile problem -> Problem (``fusetile.importer``, which needs torch).

    model: an ``nn.Module`` -- traced on a meta-device copy, so the module
    keeps its weights, device and training flag and computes what it did --
    or a path: ``"torchvision:NAME"``, ``"FILE.py:CALLABLE"``,
    ``"FILE.onnx"``, a model graph ``"FILE.json"``.  example_inputs: one
    tensor (or shape tuple) per model input (None: a path's default).
    target: a target file; the problem then records it as ``imported_for``.
    Keywords: dtype ('bf16', 'fp16', 'fp32', 'int8'), frontend ('auto',
    'fx', 'onnx'), batch_split, group_split, as_ ('compiler', or 'eager':
    the kernels PyTorch runs, with op_kernels), log (a function given the
    notes ``fusetile import`` prints).  Falling back from torch.fx to an
    ONNX export warns :class:`FallbackWarning` (of data-dependent control
    flow only the branch the example inputs take is kept).  Errors raise
    ``fusetile.importer.ImportFailure``, an :class:`Error`; arguments of
    the wrong type TypeError.
    """
    try:
        from .importer import import_model as _im
    except ImportError as e:
        missing = getattr(e, "name", None) or ""
        if missing == "torch" or missing.startswith("torch."):
            raise _error(Error, "import_model needs PyTorch: %s (install torch for this Python)" % e, "missing") from e
        raise _error(Error, "import_model: the importer (fusetile.importer) is not available: %s" % e,
                     "missing") from e
    return _im(model, example_inputs, target, **kw)
