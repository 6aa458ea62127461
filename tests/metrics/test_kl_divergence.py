"""kl_divergence: hand values, scipy's entropy, clipping, zero-truth cells, the row-sum rule."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import entropy

from mle_gym.grading.errors import InvalidSubmission
from mle_gym.grading.metrics import METRICS
from mle_gym.grading.metrics.kl_divergence import EPSILON, kl_divergence

NAMES = ["a", "b", "c"]


def _score(truth, predicted, names=NAMES) -> float:
    ids = {"id": [f"r{i}" for i in range(len(truth))]}
    answers = pd.DataFrame(ids).join(pd.DataFrame(np.asarray(truth, float), columns=names))
    predictions = pd.DataFrame(ids).join(pd.DataFrame(np.asarray(predicted, float), columns=names))
    return kl_divergence(answers, predictions, names)


def test_registered() -> None:
    assert METRICS["kl_divergence"] is kl_divergence


def test_hand_computed_value() -> None:
    # row 1: 1 * log(1 / 0.5); row 2: 0.5 log(0.5/0.25) + 0.5 log(0.5/0.75)
    expected = (math.log(2) + 0.5 * math.log(2) + 0.5 * math.log(2 / 3)) / 2
    assert _score([[1, 0, 0], [0.5, 0.5, 0]], [[0.5, 0.5, 0], [0.25, 0.75, 0]]) == pytest.approx(
        expected, rel=1e-15
    )


def test_two_class_example_of_kaggles_metric() -> None:
    truth = [[0, 1], [1, 0], [1, 0], [0, 1]]
    predicted = [[0.1, 0.9], [0.9, 0.1], [0.8, 0.2], [0.35, 0.65]]
    assert _score(truth, predicted, ["ham", "spam"]) == pytest.approx(0.216161, abs=1e-6)


def test_equals_mean_of_scipy_entropy_per_row() -> None:
    rng = np.random.default_rng(0)
    truth = rng.dirichlet(np.ones(3), 50)
    truth[truth < 0.1] = 0
    truth /= truth.sum(axis=1, keepdims=True)
    predicted = rng.dirichlet(np.ones(3), 50)
    expected = np.mean([entropy(t, p) for t, p in zip(truth, predicted, strict=True)])
    assert _score(truth, predicted) == pytest.approx(expected, rel=1e-12)


def test_zero_prediction_on_a_true_class_is_clipped_to_epsilon() -> None:
    assert _score([[1, 0, 0]], [[0, 0.5, 0.5]]) == pytest.approx(-math.log(EPSILON))


def test_classes_the_experts_never_chose_cost_nothing() -> None:
    assert _score([[0.5, 0.5, 0]], [[0.5, 0.5, 0]]) == 0.0


@pytest.mark.parametrize(("total", "ok"), [(1.000004, True), (0.999996, True), (1.00001, False)])
def test_rows_must_sum_to_one_after_rounding_to_five_decimals(total, ok) -> None:
    row = [[0.5, 0.25, total - 0.75]]
    if ok:
        assert _score([[1, 0, 0]], row) == pytest.approx(math.log(2))
    else:
        with pytest.raises(InvalidSubmission, match=r"1 row\(s\) .* do not sum to 1 .*'r0'"):
            _score([[1, 0, 0]], row)
