"""Multi-class and binary log loss against hand-computed values and scikit-learn."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import log_loss

from mle_gym.grading.errors import InvalidSubmission
from mle_gym.grading.metrics import METRICS
from mle_gym.grading.metrics.log_loss import EPS, binary_log_loss, multiclass_log_loss

CLASSES = ["a", "b", "c"]


def _frames(truth: np.ndarray, probs: np.ndarray, names: list[str]):
    ids = [f"r{i}" for i in range(len(truth))]
    answers = pd.DataFrame(truth, columns=names).assign(id=ids)[["id", *names]]
    predictions = pd.DataFrame(probs, columns=names).assign(id=ids)[["id", *names]]
    return answers, predictions


def _multiclass(truth, probs) -> float:
    return multiclass_log_loss(*_frames(np.asarray(truth), np.asarray(probs), CLASSES), CLASSES)


def _binary(labels, probs) -> float:
    truth, pred = np.asarray(labels)[:, None], np.asarray(probs)[:, None]
    return binary_log_loss(*_frames(truth, pred, ["label"]), ["label"])


def _sklearn(truth, probs) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # rows a hair off one: sklearn warns, MLE-bench grades
        return log_loss(np.asarray(truth), np.asarray(probs))


def test_registered_under_their_names() -> None:
    assert METRICS["multiclass_log_loss"] is multiclass_log_loss
    assert METRICS["binary_log_loss"] is binary_log_loss


def test_hand_computed_multiclass_value() -> None:
    truth = [[1, 0, 0], [0, 0, 1]]
    probs = [[0.5, 0.25, 0.25], [0.2, 0.4, 0.4]]
    assert _multiclass(truth, probs) == pytest.approx((math.log(2) + math.log(2.5)) / 2)


def test_uniform_probabilities_give_log_of_class_count() -> None:
    truth = np.eye(3)[[0, 1, 2, 2, 1]]
    assert _multiclass(truth, np.full((5, 3), 1 / 3)) == pytest.approx(math.log(3))


def test_matches_sklearn_on_random_distributions() -> None:
    rng = np.random.default_rng(0)
    truth = np.eye(3)[rng.integers(0, 3, 200)]
    probs = rng.dirichlet([0.3, 0.3, 0.3], 200)
    assert _multiclass(truth, probs) == pytest.approx(_sklearn(truth, probs), rel=1e-12)


def test_perfect_prediction_is_zero_up_to_clipping() -> None:
    truth = np.eye(3)[[0, 2, 1]]
    assert _multiclass(truth, truth) == pytest.approx(-math.log(1 - EPS))
    assert round(_multiclass(truth, truth), 5) == 0.0


def test_zero_on_the_true_class_is_clipped_like_sklearn() -> None:
    truth = [[1, 0, 0], [0, 1, 0]]
    probs = [[0.0, 0.5, 0.5], [0.0, 1.0, 0.0]]
    expected = (-math.log(EPS) - math.log(1 - EPS)) / 2
    assert _multiclass(truth, probs) == pytest.approx(expected)
    assert _multiclass(truth, probs) == pytest.approx(_sklearn(truth, probs))
    assert -math.log(EPS) == pytest.approx(36.04365, abs=1e-5)


def test_rows_within_mlebench_tolerance_are_graded_without_rescaling() -> None:
    # 1 + 1.05e-5 passes np.isclose(total, 1, atol=1e-6) (rtol 1e-5 adds on); not rescaled
    truth = [[1, 0, 0]]
    probs = [[0.5 + 1.05e-5, 0.25, 0.25]]
    assert _multiclass(truth, probs) == pytest.approx(-math.log(0.5 + 1.05e-5), rel=1e-12)
    assert _multiclass(truth, probs) == pytest.approx(_sklearn(truth, probs), rel=1e-12)


@pytest.mark.parametrize("total", [1 + 1.2e-5, 1 - 1.2e-5, 0.5, 3.0])
def test_rows_not_summing_to_one_are_rejected(total: float) -> None:
    probs = np.array([[0.2, 0.3, 0.5], [0.2, 0.3, 0.5 + total - 1]])
    with pytest.raises(InvalidSubmission, match=r"1 row\(s\) have probabilities that do not sum"):
        _multiclass(np.eye(3)[[0, 1]], probs)


def test_rejection_names_offending_ids_and_counts_the_rest() -> None:
    probs = np.full((5, 3), 0.5)
    with pytest.raises(InvalidSubmission) as info:
        _multiclass(np.eye(3)[[0, 1, 2, 0, 1]], probs)
    message = str(info.value)
    assert message.startswith("5 row(s)")
    assert "'r0' (sum 1.5)" in message and "'r2'" in message and "and 2 more" in message
    assert "'r3'" not in message


def test_all_zero_row_is_rejected_rather_than_clipped() -> None:
    with pytest.raises(InvalidSubmission, match="sum 0"):
        _multiclass([[1, 0, 0]], [[0.0, 0.0, 0.0]])


def test_hand_computed_binary_value() -> None:
    expected = -(math.log(0.8) + math.log(1 - 0.3) + math.log(0.5)) / 3
    assert _binary([1, 0, 1], [0.8, 0.3, 0.5]) == pytest.approx(expected)


def test_binary_constant_half_is_log_two() -> None:
    assert _binary([0, 1, 1, 0, 1], [0.5] * 5) == pytest.approx(math.log(2))


def test_binary_matches_sklearn_with_extremes() -> None:
    rng = np.random.default_rng(1)
    labels = rng.integers(0, 2, 300)
    probs = rng.random(300)
    probs[:6] = [0.0, 1.0, 0.0, 1.0, 1e-20, 1 - 1e-17]
    assert _binary(labels, probs) == pytest.approx(_sklearn(labels, probs), rel=1e-12)


def test_binary_certain_mistake_costs_minus_log_eps() -> None:
    assert _binary([1, 0], [0.0, 1.0]) == pytest.approx(-math.log(EPS))
    assert _binary([1, 0], [1.0, 0.0]) == pytest.approx(-math.log(1 - EPS))


def test_binary_single_class_answers_still_graded() -> None:
    # scikit-learn refuses y_true with one label; a real test split always has both
    assert _binary([1, 1], [0.5, 0.25]) == pytest.approx((math.log(2) + math.log(4)) / 2)


def test_binary_averages_over_several_columns() -> None:
    names = ["x", "y"]
    answers, predictions = _frames(
        np.array([[1, 0], [0, 0]]), np.array([[0.5, 0.5], [0.5, 0.1]]), names
    )
    expected = (math.log(2) + (math.log(2) - math.log(0.9)) / 2) / 2
    assert binary_log_loss(answers, predictions, names) == pytest.approx(expected)
