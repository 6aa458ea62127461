"""Pearson correlation: hand values, scipy, and the constant-column rule."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import ConstantInputWarning, pearsonr

from mle_gym.grading.metrics import METRICS
from mle_gym.grading.metrics.pearson import column_pearson


def test_hand_computed_value() -> None:
    # deviations (-1, 0, 1) and (-1, 1, 0): covariance 1, variances 2 and 2
    assert column_pearson(np.array([1.0, 2, 3]), np.array([1.0, 3, 2])) == pytest.approx(0.5)


@pytest.mark.parametrize("seed", range(5))
def test_matches_scipy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    truth, predicted = rng.normal(size=40), rng.normal(size=40)
    assert column_pearson(truth, predicted) == pytest.approx(pearsonr(truth, predicted)[0])


def test_constant_predictions_score_zero_where_scipy_gives_nan() -> None:
    truth, constant = np.array([0.0, 0.5, 1.0]), np.full(3, 0.25)
    with pytest.warns(ConstantInputWarning):
        assert np.isnan(pearsonr(truth, constant)[0])
    assert column_pearson(truth, constant) == 0.0


def test_metric_averages_columns() -> None:
    answers = pd.DataFrame({"id": ["a", "b", "c"], "x": [1.0, 2, 3], "y": [1.0, 2, 3]})
    predictions = pd.DataFrame({"id": ["a", "b", "c"], "x": [1.0, 3, 2], "y": [3.0, 2, 1]})
    score = METRICS["pearson_correlation"](answers, predictions, ["x", "y"])
    assert score == pytest.approx((0.5 - 1.0) / 2)
