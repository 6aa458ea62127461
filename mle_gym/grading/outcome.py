"""A grading report as the summary trainers log, with the reward of a reward mode.

The env and `mle_gym.evaluate` (grading a file off the env) both build their result here,
so the two cannot give different rewards for the same file.
"""

from __future__ import annotations

from typing import Any

from mle_gym.grading.report import GradeReport
from mle_gym.grading.rewards import terminal_reward


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
