"""accuracy, roc_auc and rmse: hand-computed values, scikit-learn, and edge cases."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn import metrics as skm

from mle_gym.grading.metrics import METRICS


def frames(truth: dict, predicted: dict) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    return pd.DataFrame(truth), pd.DataFrame(predicted), list(truth)


def test_accuracy_by_hand_and_all_columns_must_match() -> None:
    assert METRICS["accuracy"](*frames({"y": [1, 0, 1, 1]}, {"y": [1, 1, 1, 0]})) == 0.5
    both = frames({"a": ["x", "y", "z"], "b": [1, 2, 3]}, {"a": ["x", "y", "q"], "b": [1, 0, 3]})
    assert METRICS["accuracy"](*both) == pytest.approx(1 / 3)


def test_accuracy_compares_strings_exactly() -> None:
    result = METRICS["accuracy"](*frames({"y": ["True", "7"]}, {"y": ["true", "7.0"]}))
    assert result == 0.0


def test_roc_auc_by_hand_with_ties() -> None:
    # positives 0.8 and 0.4; negatives 0.4 and 0.1: pairs (0.8>0.4, 0.8>0.1, 0.4=0.4, 0.4>0.1)
    truth, predicted, cols = frames({"p": [1, 1, 0, 0]}, {"p": [0.8, 0.4, 0.4, 0.1]})
    assert METRICS["roc_auc"](truth, predicted, cols) == pytest.approx(3.5 / 4)


def test_roc_auc_constant_is_one_half_and_matches_sklearn() -> None:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 200)
    s = rng.random(200)
    assert METRICS["roc_auc"](*frames({"p": y}, {"p": np.full(200, 0.3)})) == 0.5
    assert METRICS["roc_auc"](*frames({"p": y}, {"p": s})) == pytest.approx(skm.roc_auc_score(y, s))


def test_roc_auc_is_the_mean_over_columns() -> None:
    truth, predicted, cols = frames(
        {"a": [1, 0, 1, 0], "b": [0, 1, 1, 0]}, {"a": [0.9, 0.1, 0.8, 0.2], "b": [0.5] * 4}
    )
    assert METRICS["roc_auc"](truth, predicted, cols) == pytest.approx((1.0 + 0.5) / 2)


def test_rmse_by_hand_and_against_sklearn() -> None:
    assert METRICS["rmse"](*frames({"y": [1.0, 2.0, 3.0]}, {"y": [1.0, 2.0, 7.0]})) == (
        pytest.approx(np.sqrt(16 / 3))
    )
    rng = np.random.default_rng(1)
    y, p = rng.normal(size=50), rng.normal(size=50)
    expected = np.sqrt(skm.mean_squared_error(y, p))
    assert METRICS["rmse"](*frames({"y": y}, {"y": p})) == pytest.approx(expected)


def test_rmse_of_a_perfect_prediction_is_zero() -> None:
    assert METRICS["rmse"](*frames({"y": [0.25, 1e9]}, {"y": [0.25, 1e9]})) == 0.0
