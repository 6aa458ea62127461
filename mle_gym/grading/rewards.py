"""How a grading report becomes the terminal reward, per reward mode."""

from __future__ import annotations

from mle_gym.grading.report import GradeReport

REWARD_MODES = ("normalized", "medal", "score", "dense")
#: Modes that grade during the episode, so only on a development variant's answers.
DEV_ONLY_REWARD_MODES = ("dense",)
_MEDAL_VALUE = {"gold": 3.0, "silver": 2.0, "bronze": 1.0}


def terminal_reward(report: GradeReport, mode: str) -> float:
    """normalized: medal-normalised score floored at 0 (invalid or missing gives 0);
    dense: the same value, which the episode pays out as it changes (`potential_step`);
    medal: 0 none, 1 bronze, 2 silver, 3 gold;
    score: the raw metric, negated when lower is better; a submission without a valid
    score counts as the sample submission's score."""
    if mode in ("normalized", "dense"):
        return max(0.0, report.normalized_score) if report.normalized_score is not None else 0.0
    if mode == "medal":
        return _MEDAL_VALUE.get(report.medal or "", 0.0)
    if mode == "score":
        raw = report.score if report.score is not None else report.sample_score
        return -raw if report.is_lower_better else raw
    raise ValueError(f"unknown reward_mode {mode!r}; choose one of {', '.join(REWARD_MODES)}")


def potential(report: GradeReport) -> float:
    """reward_mode="dense" pays the differences of this potential (the "normalized" reward)
    as the submission changes: an episode's rewards then sum to its final normalised score,
    and the best policy stays that of the terminal reward."""
    return terminal_reward(report, "normalized")
