"""budget.py - gpumeasure's --budget-s wall-time limit: a set stops starting rows once it has passed, later sets are not started, and what was cut is recorded for env.tsv's settings (Budget)."""

import time

from .common import warn


class Budget:
    """The wall time a run may spend starting rows (None: no limit), counted from the run's start."""

    def __init__(self, seconds, start=None):
        self.seconds = seconds
        self.start = time.monotonic() if start is None else start
        self.notes = []       # what was cut, in order: "odd_gemm 120/385 rows", "energy not started"

    def elapsed(self):
        """Seconds since the run's start."""
        return time.monotonic() - self.start

    def passed(self):
        """True once the budget is spent (never without --budget-s)."""
        return self.seconds is not None and self.elapsed() > self.seconds

    def stop(self, name, done, total):
        """True (with a warning and a note) when set NAME must start no more rows: done of total are measured."""
        if not self.passed():
            return False
        self.cut(name, f"{done}/{total} rows", self.reason())
        return True

    def skip(self, name):
        """Set NAME is not started: the budget was spent before it."""
        self.cut(name, "not started", self.reason())

    def reason(self):
        """Why a set is cut: the budget and the time spent."""
        return f"the --budget-s {self.seconds:g} s budget is spent ({self.elapsed():.0f} s since the start)"

    def cut(self, name, what, why):
        """Record that set NAME was cut (WHAT: '120/385 rows', 'not started'; WHY: the reason), with a warning."""
        self.notes.append(f"{name} {what}")
        warn(f"{name}: truncated ({what}): {why}")

    def describe(self):
        """The text env.tsv's settings get: the budget and what it cut ('' without --budget-s or cuts)."""
        parts = []
        if self.seconds is not None:
            parts.append(f"budget_s {self.seconds:g}")
        if self.notes:
            parts.append("truncated: " + "; ".join(self.notes))
        return ", ".join(parts)
