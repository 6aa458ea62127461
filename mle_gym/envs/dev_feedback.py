"""The development variant's feedback within an episode (data="dev" only): the development
score `validate` reports (and `info["dev_score"]`), and reward_mode="dense"'s potential-based
bookkeeping.

Dense rewards pay, at each step where the submission changed, the change in its normalised
development score (the potential); the final step pays what is left, so an episode's rewards
sum to its final normalised score and the optimal policy is that of the terminal reward. The
potential paid so far, and the md5 of the file it was paid for, are the state a checkpoint
keeps (`state`, `restore`), so a resumed episode's rewards still add up.

On the test data there is none of this: the `Episode` holds no `DevFeedback`, and no metric
runs before the final grade.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from mle_gym.data.checksums import md5_of
from mle_gym.grading.report import GradeReport
from mle_gym.grading.rewards import potential

#: The final info's word on a development variant's grade (`info["data_note"]`).
DEV_NOTE = (
    "graded on the development variant's answers, carved from the public training data; "
    "medals and the normalised score use the competition's leaderboard thresholds and sample "
    "score, measured on its test set: an approximation for this split"
)
#: What the agent reads about the development variant, after the budget.
DEV_BUDGET_NOTE = (
    " This is the competition's development variant: /home/data is carved from its public "
    "training data, and validate also reports the submission's score on the development answers."
)

#: A grade of a file on the development answers within the episode's grading budget (None
#: past it); the episode counts it in its integrity record.
GradeFn = Callable[[Path], GradeReport | None]


class DevFeedback:
    """One episode's development feedback over `grade` (the episode's own grade of a file on
    the development answers); a file is graded once while it stays unchanged."""

    def __init__(self, grade: GradeFn) -> None:
        self._grade = grade
        self.reset()

    def reset(self) -> None:
        """A new episode's feedback: nothing scored, nothing paid."""
        #: The development score the current step's validate found (info["dev_score"]).
        self.score: float | None = None
        #: The last development grade, with the md5 of the file it graded.
        self._graded: tuple[str, GradeReport] | None = None
        #: reward_mode="dense": the md5 of the submission last paid for (None: no file) and
        #: the potential paid so far (its normalised development score).
        self.paid_for: str | None = None
        self.potential = 0.0

    def begin_step(self) -> None:
        self.score = None

    def add_info(self, info: dict[str, Any]) -> None:
        """The step's `info["dev_score"]`, on a step whose validate scored the submission."""
        if self.score is not None:
            info["dev_score"] = self.score

    def validate_note(self, path: Path) -> str:
        """What validate adds to its answer for the valid submission at `path`: its
        development score (noted for `info["dev_score"]`), or why there is none."""
        report = self._report(path)
        if report is None:
            return " Its development score could not be computed: the grading budget is spent."
        if report.score is None:
            return f" Its development score could not be computed: {report.error}"
        self.score = report.score
        return (
            f" Development score: {report.score:.6g} (normalised: "
            f"{potential(report):.4f}; on the development answers, not the test set)."
        )

    def _report(self, path: Path) -> GradeReport | None:
        digest = md5_of(path)
        if self._graded is not None and self._graded[0] == digest:
            return self._graded[1]
        report = self._grade(path)
        if report is not None:
            self._graded = (digest, report)
        return report

    def dense_reward(self, path: Path | None) -> float:
        """reward_mode="dense", a step that did not end the episode, whose submission is now
        `path` (None: no file): where it changed since the last payment, the change in its
        normalised development score (nothing while it cannot be graded)."""
        digest = md5_of(path) if path is not None else None
        if digest == self.paid_for:
            return 0.0
        if path is None:
            after = 0.0
        else:
            report = self._report(path)
            if report is None:
                return 0.0
            after = potential(report)
        self.paid_for = digest
        reward, self.potential = after - self.potential, after
        return reward

    def final_reward(self, report: GradeReport) -> float:
        """reward_mode="dense": the final step's reward, what the steps before did not pay."""
        return potential(report) - self.potential

    def state(self) -> dict[str, Any]:
        """What a checkpoint keeps: the dense reward's bookkeeping."""
        return {"paid_for": self.paid_for, "potential": self.potential}

    def restore(self, state: dict[str, Any]) -> None:
        """Go on from a checkpoint's `state` (ValueError or TypeError for a malformed one)."""
        paid_for, paid = state["paid_for"], state["potential"]
        if paid_for is not None and not isinstance(paid_for, str):
            raise TypeError(f"paid_for is not an md5: {paid_for!r}")
        if isinstance(paid, bool) or not isinstance(paid, (int, float)):
            raise TypeError(f"potential is not a number: {paid!r}")
        self.reset()
        self.paid_for, self.potential = paid_for, float(paid)
