"""Kaggle's medal rule against the real leaderboards, and the normalised score."""

from __future__ import annotations

import csv

import pandas as pd
import pytest

from mle_gym.competitions.spec import Thresholds
from mle_gym.grading.grader import normalized_score
from mle_gym.grading.medals import medal, medal_positions, thresholds_from_leaderboard
from tests.prerequisites import SHARED, require_shared

SPECS = list(csv.DictReader(require_shared("specs", "competitions.csv", module=True).open()))


def test_there_are_82_leaderboards() -> None:
    assert len(SPECS) == 82
    assert len(list((SHARED / "leaderboards").glob("*.csv"))) == 82


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s["id"])
def test_rule_reproduces_mlebench_thresholds(spec: dict) -> None:
    board = pd.read_csv(SHARED / "leaderboards" / f"{spec['id']}.csv")
    assert len(board) == int(spec["num_teams"])
    found = thresholds_from_leaderboard(board["score"].tolist())
    for name in ("gold", "silver", "bronze", "median"):
        assert getattr(found, name) == pytest.approx(float(spec[name]), rel=1e-9, abs=1e-12), name


@pytest.mark.parametrize(
    ("teams", "positions"),
    [
        (5, (1, 1, 2)),
        (99, (9, 19, 39)),
        (100, (10, 20, 40)),
        (249, (10, 49, 99)),
        (250, (10, 50, 100)),
        (999, (11, 50, 100)),
        (1000, (12, 50, 100)),
        (2288, (14, 114, 228)),
    ],
)
def test_medal_positions_follow_kaggle_bands(teams: int, positions: tuple[int, int, int]) -> None:
    assert medal_positions(teams) == positions


def test_medal_for_lower_is_better() -> None:
    t = Thresholds(gold=0.1, silver=0.2, bronze=0.3, median=0.5)
    assert medal(0.05, t, lower_is_better=True) == "gold"
    assert medal(0.2, t, lower_is_better=True) == "silver"
    assert medal(0.29, t, lower_is_better=True) == "bronze"
    assert medal(0.31, t, lower_is_better=True) is None


def test_normalised_score_orients_itself() -> None:
    assert normalized_score(0.5, sample=0.5, gold=0.9, lower_is_better=False) == 0.0
    assert normalized_score(0.9, sample=0.5, gold=0.9, lower_is_better=False) == 1.0
    # log loss: sample 4.0, gold 0.5; halfway in loss is halfway in the normalised score
    assert normalized_score(2.25, sample=4.0, gold=0.5, lower_is_better=True) == pytest.approx(0.5)
    assert normalized_score(5.0, sample=4.0, gold=0.5, lower_is_better=True) < 0
    assert normalized_score(1.0, sample=1.0, gold=1.0, lower_is_better=False) == 1.0
