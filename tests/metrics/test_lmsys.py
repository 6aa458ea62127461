"""The lmsys log loss: MLE-bench's six-decimal row-sum rule, then scikit-learn's log loss."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import log_loss

from mle_gym.grading.errors import InvalidSubmission
from mle_gym.grading.metrics import METRICS

METRIC = METRICS["log_loss_sum_rounds_to_one"]
TARGETS = ["a", "b", "tie"]


def _frames(truth: np.ndarray, predicted: np.ndarray) -> tuple[pd.DataFrame, pd.DataFrame]:
    ids = [str(i) for i in range(len(truth))]
    return (
        pd.DataFrame({"id": ids, **dict(zip(TARGETS, truth.T, strict=True))}),
        pd.DataFrame({"id": ids, **dict(zip(TARGETS, predicted.T, strict=True))}),
    )


@pytest.mark.parametrize("tie", [0.2000004, 0.1999996, 0.2])
def test_sums_rounding_to_one_are_scored_as_sklearn(tie: float) -> None:
    truth = np.eye(3)[[0, 1, 2, 0]]
    predicted = np.array([[0.5, 0.3, tie]] * 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sklearn warns about sums off by 4e-7, still scores
        expected = log_loss(truth, predicted)
    assert METRIC(*_frames(truth, predicted), TARGETS) == pytest.approx(expected)


@pytest.mark.parametrize("tie", [0.2000006, 0.199999, 0.3])
def test_sums_not_rounding_to_one_are_refused(tie: float) -> None:
    truth = np.eye(3)[[0, 1]]
    predicted = np.array([[0.5, 0.3, 0.2], [0.5, 0.3, tie]])
    with pytest.raises(InvalidSubmission, match=r"1 row\(s\) .*'1' \(sum"):
        METRIC(*_frames(truth, predicted), TARGETS)


def test_certain_mistake_costs_log_of_machine_epsilon() -> None:
    truth, predicted = np.eye(3)[[0]], np.array([[0.0, 1.0, 0.0]])
    assert METRIC(*_frames(truth, predicted), TARGETS) == pytest.approx(-np.log(2.0**-52))
