"""The mean column-wise RMSLE against hand-computed values and scikit-learn."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import root_mean_squared_log_error

from mle_gym.grading.errors import InvalidSubmission
from mle_gym.grading.metrics import METRICS

rmsle = METRICS["rmsle"]


def _frames(truth: dict[str, list[float]], predicted: dict[str, list[float]]):
    return pd.DataFrame(truth), pd.DataFrame(predicted)


def test_single_column_by_hand() -> None:
    # log1p(e - 1) = 1 and log1p(0) = 0: errors 1 and 0, so sqrt(1 / 2).
    answers, predictions = _frames({"y": [0.0, 3.0]}, {"y": [math.e - 1, 3.0]})
    assert rmsle(answers, predictions, ["y"]) == pytest.approx(math.sqrt(0.5))


def test_perfect_prediction_is_zero() -> None:
    values = {"a": [0.1, 2.0], "b": [5.0, 0.0]}
    answers, predictions = _frames(values, values)
    assert rmsle(answers, predictions, ["a", "b"]) == 0.0


def test_mean_over_columns_not_over_cells() -> None:
    # Column a is exact, column b is off by log-error 1 on one of two rows.
    answers, predictions = _frames(
        {"a": [1.0, 2.0], "b": [0.0, 0.0]}, {"a": [1.0, 2.0], "b": [math.e - 1, 0.0]}
    )
    assert rmsle(answers, predictions, ["a", "b"]) == pytest.approx(math.sqrt(0.5) / 2)


def test_matches_scikit_learn_per_column() -> None:
    rng = np.random.default_rng(3)
    truth = {"a": rng.uniform(0, 1, 50), "b": rng.uniform(0, 6, 50)}
    predicted = {"a": rng.uniform(0, 1, 50), "b": rng.uniform(0, 6, 50)}
    answers, predictions = _frames(truth, predicted)
    expected = np.mean([root_mean_squared_log_error(truth[c], predicted[c]) for c in "ab"])
    assert rmsle(answers, predictions, ["a", "b"]) == pytest.approx(expected, rel=1e-12)


def test_negative_predictions_above_minus_one_are_scored_like_scikit_learn() -> None:
    answers, predictions = _frames({"y": [0.2, 1.0]}, {"y": [-0.5, 1.0]})
    expected = root_mean_squared_log_error([0.2, 1.0], [-0.5, 1.0])
    assert rmsle(answers, predictions, ["y"]) == pytest.approx(expected)


@pytest.mark.parametrize("bad", [-1.0, -3.5])
def test_values_at_or_below_minus_one_are_rejected(bad: float) -> None:
    answers, predictions = _frames({"y": [0.2, 1.0]}, {"y": [bad, 1.0]})
    with pytest.raises(InvalidSubmission, match=r"'y' must hold values greater than -1"):
        rmsle(answers, predictions, ["y"])
    with pytest.raises(ValueError):
        root_mean_squared_log_error([0.2, 1.0], [bad, 1.0])
