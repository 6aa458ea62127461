"""Quadratic weighted kappa against hand-computed values and scikit-learn."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from mle_gym.grading.metrics import METRICS
from mle_gym.grading.metrics.kappa import quadratic_kappa


def _sklearn(truth, predicted) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cohen_kappa_score(predicted, truth, weights="quadratic")


def test_hand_computed_value() -> None:
    # observed: one miss of distance 1; chance-weighted disagreement sums to 5
    assert quadratic_kappa(np.array([0, 1, 2]), np.array([0, 2, 2])) == pytest.approx(0.8)


def test_weights_follow_positions_on_the_scale_not_values() -> None:
    # the scale is 0, 1, 4 at positions 0, 1, 2: disagreements 1<->4 cost 1, not 9
    truth, predicted = np.array([0, 1, 4, 4]), np.array([0, 4, 1, 4])
    assert quadratic_kappa(truth, predicted) == pytest.approx(7 / 11)
    assert _sklearn(truth, predicted) == pytest.approx(7 / 11)


def test_perfect_agreement_is_one() -> None:
    ratings = np.array([0, 1, 2, 3, 4, 2, 0])
    assert quadratic_kappa(ratings, ratings) == pytest.approx(1.0)


@pytest.mark.parametrize("constant", [0, 2, 4])
def test_constant_prediction_is_zero(constant: int) -> None:
    truth = np.array([0, 0, 1, 2, 3, 4, 4, 2])
    assert quadratic_kappa(truth, np.full(len(truth), constant)) == pytest.approx(0.0, abs=1e-12)


def test_reversed_ratings_are_negative() -> None:
    truth = np.array([0, 1, 2, 3, 4])
    assert quadratic_kappa(truth, truth[::-1].copy()) == pytest.approx(-1.0)


def test_single_shared_rating_is_undefined_like_sklearn() -> None:
    same = np.array([2, 2, 2])
    assert math.isnan(quadratic_kappa(same, same))
    assert math.isnan(_sklearn(same, same))


def test_symmetric_in_the_two_raters() -> None:
    rng = np.random.default_rng(1)
    a, b = rng.integers(0, 5, 50), rng.integers(0, 5, 50)
    assert quadratic_kappa(a, b) == pytest.approx(quadratic_kappa(b, a))


@pytest.mark.parametrize("seed", range(20))
def test_matches_sklearn_on_random_ratings(seed: int) -> None:
    rng = np.random.default_rng(seed)
    size = int(rng.integers(2, 60))
    truth = rng.integers(0, 5, size)
    # some predictions use a narrower or shifted range, so labels are missing on one side
    predicted = np.clip(truth + rng.integers(-2, 3, size), 0, int(rng.integers(2, 6)))
    assert quadratic_kappa(truth, predicted) == pytest.approx(_sklearn(truth, predicted))


def test_metric_reads_label_text_as_numbers_and_averages_columns() -> None:
    answers = pd.DataFrame({"id": list("abcd"), "x": ["0", "1", "10", "2"], "y": ["1"] * 4})
    predictions = pd.DataFrame({"id": list("abcd"), "x": ["0", "2", "10", "2"], "y": ["1"] * 4})
    answers.loc[0, "y"] = "0"
    expected_x = _sklearn(np.array([0, 1, 10, 2]), np.array([0, 2, 10, 2]))
    expected_y = _sklearn(np.array([0, 1, 1, 1]), np.array([1, 1, 1, 1]))
    score = METRICS["quadratic_weighted_kappa"](answers, predictions, ["x", "y"])
    assert score == pytest.approx((expected_x + expected_y) / 2)
    assert expected_y == pytest.approx(0.0)
