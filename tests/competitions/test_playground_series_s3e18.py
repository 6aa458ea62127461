"""playground-series-s3e18: layout, submission rules and the sample's AUC of one half."""

from __future__ import annotations

import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from mle_gym.competitions import get_competition
from tests.competitions.support import (
    assert_invalid,
    assert_scores_like_the_sample,
    grade_frame,
)

COMP = get_competition("playground-series-s3e18")


@pytest.fixture(scope="module")
def sample(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.public / "sample_submission.csv", dtype=str)


def test_layout(dirs) -> None:
    train = pd.read_csv(dirs.public / "train.csv")
    test = pd.read_csv(dirs.public / "test.csv")
    answers = pd.read_csv(dirs.private / "test.csv")
    assert (len(train), len(test)) == (270, 30)
    assert train.shape[1] == 38 and test.shape[1] == 32
    assert test["id"].tolist() == answers["id"].tolist()
    assert set(train["id"]).isdisjoint(test["id"])


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda s: s.iloc[1:], "test id\\(s\\) have no row"),
        (lambda s: pd.concat([s, s.iloc[:1].assign(id="100000")]), "not in the test set"),
        (lambda s: pd.concat([s, s.iloc[:1]]), "duplicate row"),
        (lambda s: s.drop(columns="EC2"), "missing column\\(s\\) 'EC2'"),
        (lambda s: s.assign(EC1=""), "empty or missing value"),
        (lambda s: s.assign(EC1="yes"), "must hold finite numbers"),
        (lambda s: s.assign(EC2="nan"), "must hold finite numbers"),
    ],
)
def test_invalid_submissions_are_rejected(dirs, sample, tmp_path, change, reason) -> None:
    assert_invalid(grade_frame(COMP, dirs.private, change(sample.copy()), tmp_path), reason)


def test_constant_prediction_scores_the_sample_auc(dirs, sample, tmp_path) -> None:
    """Any constant has an AUC of exactly 1/2 in both columns."""
    constant = sample.assign(EC1="3", EC2="-1")
    assert_scores_like_the_sample(
        COMP, dirs, constant, tmp_path, sample_file="sample_submission.csv", score=0.5
    )


def test_scores_outside_zero_one_rank_like_probabilities(dirs, tmp_path) -> None:
    """AUC ranks: scores beyond [0, 1] are graded (as MLE-bench does), in any row order."""
    answers = pd.read_csv(dirs.private / "test.csv")
    scores = answers[["id"]].assign(
        EC1=answers["EC1"] * 5 + answers["id"] % 7, EC2=-answers["id"] * 1.5
    )
    expected = (
        roc_auc_score(answers["EC1"], scores["EC1"]) + roc_auc_score(answers["EC2"], scores["EC2"])
    ) / 2
    shuffled = scores.sample(frac=1, random_state=1)
    assert grade_frame(COMP, dirs.private, shuffled, tmp_path).score == round(expected, 5)
