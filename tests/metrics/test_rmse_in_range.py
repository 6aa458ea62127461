"""rmse_1_to_100: plain RMSE inside the scale, and a refusal with reasons outside it."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from sklearn.metrics import root_mean_squared_error

from mle_gym.grading.errors import InvalidSubmission
from mle_gym.grading.metrics import METRICS


def _score(truth: list[float], predicted: list[float]) -> float:
    return METRICS["rmse_1_to_100"](
        pd.DataFrame({"y": truth}), pd.DataFrame({"y": predicted}), ["y"]
    )


def test_hand_value_and_sklearn() -> None:
    # errors 3 and 4: sqrt((9 + 16) / 2)
    assert _score([10, 50], [13, 46]) == pytest.approx(math.sqrt(12.5))
    truth, predicted = [1, 20, 77, 100], [1, 33.3, 64.2, 99.5]
    assert _score(truth, predicted) == pytest.approx(root_mean_squared_error(truth, predicted))


def test_bounds_are_included() -> None:
    assert _score([1, 100], [1, 100]) == 0.0


@pytest.mark.parametrize("outside", [0.999, 100.01, -5, 0])
def test_a_value_off_the_scale_is_refused(outside: float) -> None:
    with pytest.raises(InvalidSubmission, match=r"'y' must hold values in \[1, 100\]; 1 do not"):
        _score([10, 20, 30], [10, outside, 30])
