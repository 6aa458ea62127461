"""Leaderboards made of reference models, for competitions with no human leaderboard.

Each model of the competition's panel is fitted on public/train.csv, predicts the test set,
and its submission is graded by the same grader as an agent's. The scores, best first, are
then a leaderboard like any other, and Kaggle's medal rule gives the thresholds.

`mle-gym reference-panel <competition-id>` recomputes the figures.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pandas as pd

from mle_gym.competitions import Competition
from mle_gym.competitions.csv_io import read_csv
from mle_gym.competitions.spec import Thresholds
from mle_gym.grading.grader import score_submission
from mle_gym.grading.medals import thresholds_from_leaderboard


def panel_scores(comp: Competition, public: Path, private: Path) -> dict[str, float]:
    """Each panel model's graded score, best first."""
    if not comp.reference_panel:
        raise ValueError(f"{comp.id} has no reference panel")
    fmt = comp.submission
    target = fmt.target_names[0]
    train, test = read_csv(public / "train.csv"), read_csv(public / "test.csv")
    features = [c for c in train.columns if c not in (fmt.id_column, *fmt.target_names)]
    scores = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "submission.csv"
        for name, factory in comp.reference_panel.items():
            model = factory().fit(train[features].to_numpy(), train[target].to_numpy())
            predictions = model.predict(test[features].to_numpy())
            pd.DataFrame({fmt.id_column: test[fmt.id_column], target: predictions}).to_csv(
                path, index=False
            )
            scores[name], _ = score_submission(comp, path, private)
    ranked = sorted(scores.items(), key=lambda kv: kv[1], reverse=not comp.lower_is_better)
    return dict(ranked)


def panel_thresholds(comp: Competition, public: Path, private: Path) -> Thresholds:
    return thresholds_from_leaderboard(list(panel_scores(comp, public, private).values()))
