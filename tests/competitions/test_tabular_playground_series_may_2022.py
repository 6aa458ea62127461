"""tabular-playground-series-may-2022: submission rules and the sample's AUC of one half."""

from __future__ import annotations

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from tests.competitions.support import assert_scores_like_the_sample, grade_frame

COMP = get_competition("tabular-playground-series-may-2022")


@pytest.fixture(scope="module")
def sample(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.public / "sample_submission.csv", dtype=str)


def test_split_sizes_and_renumbered_ids(dirs) -> None:
    train = pd.read_csv(dirs.public / "train.csv", usecols=["id"])
    test = pd.read_csv(dirs.public / "test.csv", usecols=["id"])
    assert len(test) == 100_000
    assert train["id"].tolist() == list(range(len(train)))
    assert test["id"].tolist() == list(range(len(train), len(train) + len(test)))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s: s.iloc[1:], "test id(s) have no row"),
        (lambda s: pd.concat([s, s.iloc[:1].assign(id="5")]), "not in the test set"),
        (lambda s: pd.concat([s, s.iloc[:1]]), "duplicate row"),
        (lambda s: s.drop(columns="target"), "missing column(s) 'target'"),
        (lambda s: s.assign(target=""), "empty or missing value"),
        (lambda s: s.assign(target="likely"), "must hold finite numbers"),
        (lambda s: s.assign(target="1.2"), "probabilities in [0, 1]"),
        (lambda s: s.assign(target="-0.1"), "probabilities in [0, 1]"),
    ],
)
def test_invalid_submissions_are_rejected(dirs, sample, tmp_path, change, message) -> None:
    report = grade_frame(COMP, dirs.private, change(sample.copy()), tmp_path)
    assert not report.valid_submission
    assert message in report.error


def test_constant_prediction_scores_the_sample_auc(dirs, sample, tmp_path) -> None:
    """MLE-bench's sample predicts 0.5 everywhere; any constant has an AUC of exactly 1/2."""
    constant = sample.assign(target="0.9")
    assert_scores_like_the_sample(
        COMP, dirs, constant, tmp_path, sample_file="sample_submission.csv", score=0.5
    )
