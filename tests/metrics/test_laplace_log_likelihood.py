"""Modified Laplace log-likelihood: hand values, both clips, unscored rows, and MLE-bench's
figures for the same inputs."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from mle_gym.formats.packed_answers import UNSCORED
from mle_gym.grading.metrics import METRICS

metric = METRICS["laplace_log_likelihood"]


def _score(truth: list[float], fvc: list[float], confidence: list[float]) -> float:
    answers = pd.DataFrame({"FVC": truth, "Confidence": 100.0})
    predictions = pd.DataFrame({"FVC": fvc, "Confidence": confidence})
    return metric(answers, predictions, ["FVC", "Confidence"])


def test_exact_prediction_scores_minus_log_of_sigma() -> None:
    assert _score([2000.0], [2000.0], [100.0]) == pytest.approx(-math.log(math.sqrt(2) * 100))


def test_by_hand() -> None:
    # 200 ml off with sigma 100: -sqrt(2)*2 - ln(100 sqrt(2)); exact with sigma 200.
    first = -math.sqrt(2) * 2 - math.log(math.sqrt(2) * 100)
    second = -math.log(math.sqrt(2) * 200)
    assert _score([2500.0, 3000.0], [2700.0, 3000.0], [100.0, 200.0]) == pytest.approx(
        (first + second) / 2
    )


def test_confidence_below_70_counts_as_70() -> None:
    assert _score([2000.0], [2100.0], [5.0]) == _score([2000.0], [2100.0], [70.0])
    assert _score([2000.0], [2100.0], [-300.0]) == _score([2000.0], [2100.0], [70.0])
    assert _score([2000.0], [2100.0], [71.0]) != _score([2000.0], [2100.0], [70.0])


def test_error_above_1000_counts_as_1000() -> None:
    capped = -math.sqrt(2) * 1000 / 100 - math.log(math.sqrt(2) * 100)
    assert _score([2000.0], [9000.0], [100.0]) == pytest.approx(capped)
    assert _score([2000.0], [1000.0], [100.0]) == pytest.approx(capped)


def test_unscored_rows_are_skipped_whatever_is_predicted() -> None:
    with_marker = _score([UNSCORED, 2000.0, UNSCORED], [1e9, 2000.0, -5.0], [1.0, 100.0, 1e6])
    assert with_marker == _score([2000.0], [2000.0], [100.0])


def test_equals_mlebench_grader_on_fixed_inputs() -> None:
    """Values MLE-bench's grade() returned for these rows (run side by side, Nov 2026)."""
    truth = [2315.0, 2214.0, 2061.0, 3400.0, 1800.0]
    fvc = [2300.0, 2400.0, 1000.0, 3390.5, 1800.0]
    confidence = [150.0, 60.0, 500.0, 80.0, 0.0]
    assert _score(truth, fvc, confidence) == pytest.approx(MLEBENCH_FIXED, abs=1e-12)


MLEBENCH_FIXED = -6.546536453988088
