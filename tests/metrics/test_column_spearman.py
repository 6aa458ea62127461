"""Mean column-wise Spearman: hand values, scipy per column, and the constant-column refusal."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from mle_gym.grading.errors import InvalidSubmission
from mle_gym.grading.metrics import METRICS
from mle_gym.grading.metrics.column_spearman import mean_column_spearman

TARGETS = ["a", "b"]


def test_registered_under_its_name() -> None:
    assert METRICS["mean_column_spearman"] is mean_column_spearman


def test_hand_values() -> None:
    answers = pd.DataFrame({"a": [0.0, 0.5, 1.0, 1.0], "b": [1.0, 0.0, 0.5, 0.5]})
    # a: same order as the answers -> 1 (ties both sides); b: exact reverse of its ranks -> -1.
    predictions = pd.DataFrame({"a": [1, 2, 3, 3], "b": [0.0, 9.0, 5.0, 5.0]})
    assert mean_column_spearman(answers, predictions, TARGETS) == pytest.approx(0.0)
    # Three distinct ranks against [1, 2, 3]: d = (0, 1, -1), rho = 1 - 6*2/(3*8) = 0.5.
    three = pd.DataFrame({"a": [1.0, 2.0, 3.0]})
    assert mean_column_spearman(three, pd.DataFrame({"a": [1, 3, 2]}), ["a"]) == 0.5


def test_matches_scipy_column_by_column() -> None:
    rng = np.random.default_rng(0)
    answers = pd.DataFrame(rng.choice([0, 1 / 3, 2 / 3, 1], (50, 2)), columns=TARGETS)
    predictions = pd.DataFrame(rng.random((50, 2)), columns=TARGETS)
    expected = np.mean([spearmanr(answers[c], predictions[c]).statistic for c in TARGETS])
    assert mean_column_spearman(answers, predictions, TARGETS) == pytest.approx(expected)


def test_constant_prediction_column_is_refused_not_nan() -> None:
    answers = pd.DataFrame({"a": [0.0, 1.0, 0.5], "b": [1.0, 0.0, 0.5]})
    predictions = pd.DataFrame({"a": [0.1, 0.2, 0.3], "b": [0.7, 0.7, 0.7]})
    with pytest.warns(RuntimeWarning, match="constant"):
        assert np.isnan(spearmanr(answers["b"], predictions["b"]).statistic)
    with pytest.raises(InvalidSubmission, match=r"'b' hold the same value on every row"):
        mean_column_spearman(answers, predictions, TARGETS)
