"""The host CPU time one episode's grading may take, all grades together.

Each grade runs in a bounded child (`grading.bounded`), but an agent decides how many run:
a validate per step, a check per upload to MLE-bench's endpoint, a snapshot graded after
the episode per rewrite. Those children run on the host, outside the sandbox's CPU quota,
so one episode could keep host cores busy for hours. The budget caps their sum: a grade is
given at most what is left as its CPU limit, what it used is charged when it ends, and a
grade with nothing left is refused with the reason, not run.

Checks during the episode may spend the budget only down to the final grade's share (its
per-grade CPU limit, or half the budget if that is less), so no number of validations can
cost an agent its graded report; snapshots, graded after the episode, take what is left.
"""

from __future__ import annotations

import math
import threading
from typing import Any

#: CPU seconds per episode for every grade of its submission (final, validations,
#: MLE-bench's /validate, snapshots); documented in docs/security.md.
DEFAULT_GRADING_CPU_BUDGET = 1800.0
#: A grade given less than this is refused: RLIMIT_CPU counts whole seconds.
MIN_GRANT = 1


class GradingBudgetSpent(Exception):
    """No CPU time is left for this grade; the message says how much was spent of what."""


class GradingBudget:
    """An episode's grading CPU seconds: `grant` before a grade, `settle` after it."""

    def __init__(self, seconds: float = DEFAULT_GRADING_CPU_BUDGET, spent: float = 0.0) -> None:
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds <= 0:
            raise ValueError(f"the grading CPU budget must be a positive number, got {seconds!r}")
        self.seconds = float(seconds)
        self.spent = float(spent)
        #: Grades refused because the budget was spent.
        self.refused = 0
        self._held = 0.0  # granted to grades still running
        self._lock = threading.Lock()

    def final_share(self, per_grade: float) -> float:
        """What checks during the episode leave for the final grade."""
        return min(float(per_grade), self.seconds / 2)

    def grant(self, per_grade: int, keep: float = 0.0) -> int:
        """Whole CPU seconds the next grade may use (at most `per_grade`), held until
        `settle`; `keep` is left untouched for later grades. Raises GradingBudgetSpent."""
        with self._lock:
            left = self.seconds - self.spent - self._held - keep
            granted = min(int(per_grade), math.floor(left))
            if granted < MIN_GRANT:
                self.refused += 1
                raise GradingBudgetSpent(
                    f"this episode's host grading budget of {self.seconds:g} CPU seconds is "
                    f"spent ({self.spent:.0f} s used"
                    + (f", {keep:.0f} s kept for the final grade" if keep else "")
                    + "); the grade was not run"
                )
            self._held += granted
            return granted

    def settle(self, granted: int, used: float) -> None:
        """A grade given `granted` seconds ended having used `used`."""
        with self._lock:
            self._held -= granted
            self.spent += used

    def to_dict(self) -> dict[str, Any]:
        return {"seconds": self.seconds, "spent": round(self.spent, 3), "refused": self.refused}

    @classmethod
    def from_dict(cls, record: dict[str, Any]) -> GradingBudget:
        """The budget left after the grades `record` (`to_dict`) counted."""
        return cls(record["seconds"], record.get("spent", 0.0))
