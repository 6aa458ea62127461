"""Grading a submission file off the env: what a trainer that ran the episode elsewhere calls.

`evaluate` gives the same reward and report as an episode that ends with that file, because
the env grades through `outcome` too. It changes nothing: the submission is only read, the
answers only read (their parsed key may be cached beside them, see
`mle_gym.grading.answer_keys`), and grading runs in a bounded child process.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from mle_gym.competitions import get_competition
from mle_gym.data.cache import CompetitionDirs
from mle_gym.grading.bounded import GradingLimits, grade_bounded
from mle_gym.grading.report import GradeReport
from mle_gym.grading.rewards import REWARD_MODES, terminal_reward


class NotPrepared(FileNotFoundError):
    """The competition's answers are not in the cache; the message says how to prepare it."""


def outcome(report: GradeReport, reward_mode: str) -> dict[str, Any]:
    """The flat summary trainers log, with the reward of `reward_mode` and the full report."""
    return {
        "reward": terminal_reward(report, reward_mode),
        "score": report.score,
        "valid": report.valid_submission,
        "any_medal": report.any_medal,
        "medal": report.medal,
        "above_median": report.above_median,
        "normalized_score": report.normalized_score,
        "error": report.error,
        "reward_mode": reward_mode,
        "report": report.to_dict(),
    }


def evaluate(
    competition_id: str,
    submission_path: str | os.PathLike,
    reward_mode: str = "normalized",
    *,
    root: str | os.PathLike | None = None,
    limits: GradingLimits | None = None,
) -> dict[str, Any]:
    """Grade `submission_path` for `competition_id` as an episode ending with it would be.

    Returns {"reward", "score", "valid", "any_medal", "medal", "above_median",
    "normalized_score", "error", "reward_mode", "report"}. A missing or malformed file is an
    invalid submission (reward 0 in the default mode), never an exception; an unknown
    competition, an unknown reward mode or an unprepared competition raise.
    """
    if reward_mode not in REWARD_MODES:
        raise ValueError(f"unknown reward_mode {reward_mode!r}; choose one of {REWARD_MODES}")
    comp = get_competition(competition_id)
    dirs = CompetitionDirs.of(comp.id, Path(root) if root is not None else None)
    if not dirs.is_prepared():
        raise NotPrepared(
            f"{comp.id} is not prepared in {dirs.root.parent}; run `mle-gym prepare {comp.id}` "
            "(or pass root= where it is prepared)"
        )
    path = Path(submission_path)
    report = grade_bounded(comp.id, path if path.is_file() else None, dirs.private, limits=limits)
    return outcome(report, reward_mode)
