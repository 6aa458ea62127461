"""new-york-city-taxi-fare-prediction: submission rules and the constant sample's RMSE."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.grading import grade
from tests.competitions.support import grade_frame

COMP = get_competition("new-york-city-taxi-fare-prediction")


@pytest.fixture(scope="module")
def sample(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.public / "sample_submission.csv", dtype=str)


def test_layout(dirs) -> None:
    labels = pd.read_csv(dirs.public / "labels.csv")
    test = pd.read_csv(dirs.public / "test.csv")
    assert len(test) == 9914
    assert "fare_amount" in labels.columns and "fare_amount" not in test.columns
    assert (dirs.public / "GCP-Coupons-Instructions.rtf").is_file()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s: s.iloc[1:], "test id(s) have no row"),
        (
            lambda s: pd.concat([s, s.iloc[:1].assign(key="2030-01-01 00:00:00.1")]),
            "not in the test set",
        ),
        (lambda s: pd.concat([s, s.iloc[:1]]), "duplicate row"),
        (lambda s: s.rename(columns={"fare_amount": "fare"}), "missing column(s) 'fare_amount'"),
        (lambda s: s.assign(fare_amount=""), "empty or missing value"),
        (lambda s: s.assign(fare_amount="$12"), "must hold finite numbers"),
        (lambda s: s.assign(fare_amount="inf"), "must hold finite numbers"),
    ],
)
def test_invalid_submissions_are_rejected(dirs, sample, tmp_path, change, message) -> None:
    report = grade_frame(COMP, dirs.private, change(sample.copy()), tmp_path)
    assert not report.valid_submission
    assert message in report.error


def test_constant_fare_scores_its_root_mean_squared_deviation(dirs, tmp_path) -> None:
    """The sample predicts 11.35 for every ride: RMSE = sqrt(mean((fare - 11.35)^2))."""
    fares = pd.read_csv(dirs.private / "test.csv")["fare_amount"].to_numpy()
    expected = round(float(np.sqrt(np.mean((fares - 11.35) ** 2))), 5)
    assert grade(COMP, dirs.public / "sample_submission.csv", dirs.private).score == expected
    assert COMP.sample_score > COMP.thresholds.median


def test_negative_fares_are_graded(dirs, sample, tmp_path) -> None:
    """RMSE has no domain restriction; MLE-bench grades any number."""
    negative = sample.assign(fare_amount="-3.5")
    assert grade_frame(COMP, dirs.private, negative, tmp_path).valid_submission
