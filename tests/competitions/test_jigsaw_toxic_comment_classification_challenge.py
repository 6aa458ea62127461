"""jigsaw-toxic-comment-classification-challenge: rules, unscored rows, the sample's AUC."""

from __future__ import annotations

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.competitions.catalog.jigsaw_toxic_comment_classification_challenge import (
    CLASSES,
)
from tests.competitions.support import assert_scores_like_the_sample, grade_frame

COMP = get_competition("jigsaw-toxic-comment-classification-challenge")
LABELS = list(CLASSES)


@pytest.fixture(scope="module")
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "test.csv")


@pytest.fixture(scope="module")
def sample(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.public / "sample_submission.csv", dtype=str)


def test_layout(dirs, answers) -> None:
    test = pd.read_csv(dirs.public / "test.csv")
    assert list(test.columns) == ["id", "comment_text"]
    assert list(answers.columns) == ["id", *LABELS]
    assert (answers[LABELS] == -1).all(axis=1).any()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s: s.iloc[1:], "test id(s) have no row"),
        (lambda s: pd.concat([s, s.iloc[:1].assign(id="ffffffffffffffff")]), "not in the test set"),
        (lambda s: pd.concat([s, s.iloc[:1]]), "duplicate row"),
        (lambda s: s.drop(columns=["threat", "insult"]), "missing column(s) 'threat', 'insult'"),
        (lambda s: s.assign(toxic=""), "empty or missing value"),
        (lambda s: s.assign(obscene="yes"), "must hold finite numbers"),
        (lambda s: s.assign(comment_text="hi"), "unexpected column(s) 'comment_text'"),
    ],
)
def test_invalid_submissions_are_rejected(dirs, sample, tmp_path, change, message) -> None:
    report = grade_frame(COMP, dirs.private, change(sample.copy()), tmp_path)
    assert not report.valid_submission
    assert message in report.error


def test_unscored_rows_do_not_count(dirs, answers, tmp_path) -> None:
    """Exact labels on the scored rows reach 1 whatever is predicted on the others."""
    perfect = answers.astype({label: float for label in LABELS})
    perfect.loc[(answers[LABELS] == -1).all(axis=1), LABELS] = 0.99
    assert grade_frame(COMP, dirs.private, perfect, tmp_path).score == 1.0


def test_scores_outside_zero_one_are_graded_like_mle_bench(dirs, sample, tmp_path) -> None:
    """MLE-bench ranks any real-valued score (it checks no range), so we do too."""
    assert grade_frame(COMP, dirs.private, sample.assign(toxic="3.5"), tmp_path).valid_submission


def test_constant_prediction_scores_the_sample_auc(dirs, sample, tmp_path) -> None:
    """The sample predicts 0.5 for every label; a constant column has an AUC of 1/2."""
    constant = sample.assign(**{c: "0.1" for c in LABELS})
    assert_scores_like_the_sample(
        COMP, dirs, constant, tmp_path, sample_file="sample_submission.csv", score=0.5
    )
