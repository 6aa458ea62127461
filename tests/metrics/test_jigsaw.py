"""ROC AUC over the scored rows only, as MLE-bench grades the jigsaw toxic comments."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from mle_gym.grading.metrics import METRICS

auc = METRICS["roc_auc_scored_rows"]
TARGETS = ["a", "b"]


def test_unscored_rows_are_ignored_whatever_they_predict() -> None:
    answers = pd.DataFrame({"a": [1, 0, -1, 1, 0], "b": [0, 1, -1, 1, 0]})
    good = pd.DataFrame({"a": [0.9, 0.1, 0.0, 0.8, 0.2], "b": [0.1, 0.9, 1.0, 0.7, 0.3]})
    assert auc(answers, good, TARGETS) == 1.0
    flipped = good.copy()
    flipped.loc[2] = [1.0, 0.0]
    assert auc(answers, flipped, TARGETS) == 1.0


def test_by_hand_with_ties() -> None:
    # Column a: positives {0.5, 0.5}, negatives {0.5, 0.1}: pairs win 1+1, tie 0.5+0.5 -> 3/4.
    # Column b: perfect -> 1. Mean 7/8.
    answers = pd.DataFrame({"a": [1, 1, 0, 0, -1], "b": [1, 0, 1, 0, -1]})
    predictions = pd.DataFrame({"a": [0.5, 0.5, 0.5, 0.1, 0.3], "b": [0.9, 0.2, 0.8, 0.1, 0.3]})
    assert auc(answers, predictions, TARGETS) == pytest.approx(7 / 8)


def test_constant_prediction_scores_one_half() -> None:
    answers = pd.DataFrame({"a": [1, 0, 0, -1], "b": [0, 1, 1, -1]})
    assert auc(answers, pd.DataFrame({"a": [0.5] * 4, "b": [0.5] * 4}), TARGETS) == 0.5


def test_matches_scikit_learn_macro_on_the_kept_rows_to_the_last_bit() -> None:
    """The columns are scored in parallel threads; the mean must still be exactly the one
    scikit-learn's macro average gives (ties included: predictions are rounded)."""
    rng = np.random.default_rng(7)
    for rows, columns in ((60, 2), (5000, 6)):
        names = [f"label_{k}" for k in range(columns)]
        labels = rng.integers(0, 2, (rows, columns))
        labels[rng.random(rows) < 0.3] = -1
        answers = pd.DataFrame(labels, columns=names)
        predictions = pd.DataFrame(rng.random((rows, columns)).round(2), columns=names)
        keep = labels.sum(axis=1) >= 0
        expected = roc_auc_score(labels[keep], predictions.to_numpy()[keep], average="macro")
        assert auc(answers, predictions, names) == expected
