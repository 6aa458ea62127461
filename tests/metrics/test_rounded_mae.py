"""rounded_mae: scikit-learn's MAE, rounded like Python's round (halves to even)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import mean_absolute_error

from mle_gym.grading.metrics import METRICS
from mle_gym.grading.metrics.rounded_mae import rounded_mae


def _score(truth, predicted) -> float:
    answers = pd.DataFrame({"id": range(len(truth)), "y": truth})
    return rounded_mae(answers, answers.assign(y=predicted), ["y"])


def test_registered() -> None:
    assert METRICS["rounded_mae"] is rounded_mae


@pytest.mark.parametrize(
    ("errors", "expected"), [([0.5], 0.0), ([1.5], 2.0), ([2.5], 2.0), ([2.51], 3.0), ([3, 4], 4.0)]
)
def test_hand_values_round_half_to_even(errors, expected) -> None:
    truth = np.zeros(len(errors))
    assert _score(truth, np.asarray(errors, float)) == expected


def test_equals_rounded_sklearn_on_large_values() -> None:
    rng = np.random.default_rng(0)
    truth = rng.integers(0, 50_000_000, 500).astype(float)
    predicted = truth + rng.normal(0, 4e6, 500)
    expected = mean_absolute_error(truth, predicted)
    assert _score(truth, predicted) == round(expected)
    assert abs(_score(truth, predicted) - expected) <= 0.5
