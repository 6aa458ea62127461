"""Kaggle's progression rule: which leaderboard positions earn a medal.

The position cut-offs depend on the number of teams (kaggle.com/progression, as MLE-bench
applies it); the threshold is the score at that position of the private leaderboard.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mle_gym.competitions.spec import Thresholds


def medal_positions(num_teams: int) -> tuple[int, int, int]:
    """1-based leaderboard positions of the last gold, silver and bronze medal."""
    if num_teams < 1:
        raise ValueError("a leaderboard needs at least one team")
    if num_teams < 100:
        gold = max(1, int(num_teams * 0.1))
        return gold, max(1, int(num_teams * 0.2)), max(1, int(num_teams * 0.4))
    if num_teams < 250:
        return 10, max(1, int(num_teams * 0.2)), max(1, int(num_teams * 0.4))
    gold = 10 + int(num_teams * 0.002)
    if num_teams < 1000:
        return gold, 50, 100
    return gold, max(1, int(num_teams * 0.05)), max(1, int(num_teams * 0.1))


def thresholds_from_leaderboard(scores: Sequence[float]) -> Thresholds:
    """Thresholds of a leaderboard given best first, as the private leaderboard lists it."""
    ranked = np.asarray(scores, dtype=float)
    gold, silver, bronze = medal_positions(len(ranked))
    return Thresholds(
        gold=float(ranked[gold - 1]),
        silver=float(ranked[silver - 1]),
        bronze=float(ranked[bronze - 1]),
        median=float(np.median(ranked)),
    )


def beats(score: float, threshold: float, lower_is_better: bool, strict: bool = False) -> bool:
    """Whether `score` is at least as good as `threshold` (better, when strict)."""
    if lower_is_better:
        return score < threshold if strict else score <= threshold
    return score > threshold if strict else score >= threshold


def medal(score: float, thresholds: Thresholds, lower_is_better: bool) -> str | None:
    """'gold', 'silver', 'bronze' or None."""
    for name in ("gold", "silver", "bronze"):
        if beats(score, getattr(thresholds, name), lower_is_better):
            return name
    return None
