"""openvaccine_mcrmse: hand values; only three targets and positions below 68 count."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import root_mean_squared_error

from mle_gym.grading.metrics import METRICS
from mle_gym.grading.metrics.openvaccine import SCORED_POSITIONS, openvaccine_mcrmse

TARGETS = ["reactivity", "deg_Mg_pH10", "deg_pH10", "deg_Mg_50C", "deg_50C"]


def _frames(length: int = 70) -> tuple[pd.DataFrame, pd.DataFrame]:
    ids = [f"id_a_b_{p}" for p in range(length)]  # ids may hold underscores themselves
    answers = pd.DataFrame({"id_seqpos": ids, **{t: 0.0 for t in TARGETS}})
    return answers, answers.copy()


def test_registered() -> None:
    assert METRICS["openvaccine_mcrmse"] is openvaccine_mcrmse
    assert SCORED_POSITIONS == 68


def test_hand_value_over_the_three_scored_columns() -> None:
    answers, predicted = _frames()
    predicted.loc[:67, "reactivity"] = 2.0  # RMSE 2
    predicted.loc[:33, "deg_Mg_50C"] = 1.0  # RMSE sqrt(34 / 68)
    expected = (2.0 + 0.0 + math.sqrt(0.5)) / 3
    assert openvaccine_mcrmse(answers, predicted, TARGETS) == pytest.approx(expected, rel=1e-15)


def test_unscored_columns_and_positions_do_not_count() -> None:
    answers, predicted = _frames()
    predicted[["deg_pH10", "deg_50C"]] = 9.0
    predicted.loc[68:, ["reactivity", "deg_Mg_pH10", "deg_Mg_50C"]] = 9.0
    assert openvaccine_mcrmse(answers, predicted, TARGETS) == 0.0


def test_equals_mean_of_sklearn_rmse_on_scored_rows() -> None:
    rng = np.random.default_rng(0)
    answers, predicted = _frames(107)
    answers[TARGETS] = rng.normal(size=(107, 5))
    predicted[TARGETS] = rng.normal(size=(107, 5))
    expected = np.mean(
        [
            root_mean_squared_error(answers[c][:68], predicted[c][:68])
            for c in ("reactivity", "deg_Mg_pH10", "deg_Mg_50C")
        ]
    )
    assert openvaccine_mcrmse(answers, predicted, TARGETS) == pytest.approx(expected, rel=1e-15)
