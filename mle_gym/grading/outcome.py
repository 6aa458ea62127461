"""A grading report as the summary trainers log, with the reward of a reward mode.

The env and `mle_gym.evaluate` (grading a file off the env) both build their result here,
so the two cannot give different rewards for the same file. The trainers' adapters name
the same grade with the same keys (`trainer_fields`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mle_gym.grading.report import GradeReport
from mle_gym.grading.rewards import terminal_reward

#: `GradeReport.summary` keys as trainers log them (`valid_submission` is `valid` there).
TRAINER_KEYS = {
    "score": "score",
    "valid_submission": "valid",
    "any_medal": "any_medal",
    "medal": "medal",
    "above_median": "above_median",
    "normalized_score": "normalized_score",
    "error": "error",
}


def trainer_fields(summary: Mapping[str, Any]) -> dict[str, Any]:
    """A grade summary under the keys trainers log, the yes/no fields as booleans (a
    missing report is neither valid nor a medal)."""
    fields = {key: summary.get(name) for name, key in TRAINER_KEYS.items()}
    for key in ("valid", "any_medal", "above_median"):
        fields[key] = bool(fields[key])
    return fields


def outcome(report: GradeReport, reward_mode: str) -> dict[str, Any]:
    """The flat summary trainers log, with the reward of `reward_mode` and the full report."""
    return {
        "reward": terminal_reward(report, reward_mode),
        **trainer_fields(report.summary()),
        "reward_mode": reward_mode,
        "report": report.to_dict(),
    }
