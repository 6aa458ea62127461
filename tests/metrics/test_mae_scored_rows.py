"""MAE over scored rows: hand values, scikit-learn's result, and the unscored marker."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import mean_absolute_error

from mle_gym.formats.packed_answers import UNSCORED
from mle_gym.grading.metrics import METRICS

mae_scored_rows = METRICS["mae_scored_rows"]


def _score(truth: list[float], predicted: list[float]) -> float:
    return mae_scored_rows(pd.DataFrame({"y": truth}), pd.DataFrame({"y": predicted}), ["y"])


def test_by_hand_skipping_unscored_rows() -> None:
    assert _score([1.0, UNSCORED, -2.0], [2.0, 5.0, 0.0]) == pytest.approx(1.5)


def test_equals_scikit_learn_on_scored_rows() -> None:
    rng = np.random.default_rng(0)
    truth, predicted = rng.normal(10, 5, (2, 500))
    marked = truth.copy()
    marked[::3] = UNSCORED
    keep = np.arange(500) % 3 != 0
    expected = mean_absolute_error(truth[keep], predicted[keep])
    assert _score(list(marked), list(predicted)) == pytest.approx(expected, rel=1e-15)


def test_negative_true_values_are_scored() -> None:
    """Only the marker itself is skipped, not every negative answer."""
    assert _score([-1.9, -1e9], [0.1, -1e9 + 2]) == pytest.approx(2.0)
