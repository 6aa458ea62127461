"""detecting-insults-in-social-commentary: rows keyed by comment text, rules, sample AUC."""

from __future__ import annotations

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from tests.competitions.support import assert_scores_like_the_sample, grade_frame

COMP = get_competition("detecting-insults-in-social-commentary")


@pytest.fixture(scope="module")
def sample(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.public / "sample_submission_null.csv", dtype=str, keep_default_na=False)


def test_layout(dirs) -> None:
    assert list(pd.read_csv(dirs.public / "test.csv").columns) == ["Date", "Comment"]
    assert list(pd.read_csv(dirs.private / "gold_submission.csv").columns) == [
        "Insult",
        "Date",
        "Comment",
    ]
    assert list(pd.read_csv(dirs.private / "test.csv").columns) == [
        "Insult",
        "Date",
        "Comment",
        "Usage",
    ]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s: s.iloc[1:], "test id(s) have no row"),
        (
            lambda s: s.assign(Comment=s["Comment"].str.replace('"', "", regex=False)),
            "not in the test set",
        ),
        (lambda s: pd.concat([s, s.iloc[:1]]), "duplicate row"),
        (lambda s: s.drop(columns="Comment"), "missing column(s) 'Comment'"),
        (lambda s: s.assign(Insult=""), "empty or missing value"),
        (lambda s: s.assign(Insult="insult"), "must hold finite numbers"),
        (lambda s: s.assign(Insult="1.5"), "probabilities in [0, 1]"),
    ],
)
def test_invalid_submissions_are_rejected(dirs, sample, tmp_path, change, message) -> None:
    report = grade_frame(COMP, dirs.private, change(sample.copy()), tmp_path)
    assert not report.valid_submission
    assert message in report.error


def test_date_column_is_optional(dirs, sample, tmp_path) -> None:
    assert grade_frame(COMP, dirs.private, sample.drop(columns="Date"), tmp_path).score == 0.5


def test_constant_prediction_scores_the_sample_auc(dirs, sample, tmp_path) -> None:
    """MLE-bench's null sample predicts 0 everywhere; any constant has an AUC of exactly 1/2."""
    constant = sample.assign(Insult="0.7")
    assert_scores_like_the_sample(
        COMP, dirs, constant, tmp_path, sample_file="sample_submission_null.csv", score=0.5
    )


def test_repeated_comments_in_the_answers_may_repeat_in_the_submission(tmp_path) -> None:
    private = tmp_path / "private"
    private.mkdir()
    answers = pd.DataFrame(
        {
            "Insult": [1, 1, 0, 0],
            "Date": ["20120611175119Z", "20120515133353Z", "", "20120528221803Z"],
            "Comment": ['"You are an idiot."', '"You are an idiot."', '"Nice game"', '"See you"'],
            "Usage": ["PrivateTest"] * 4,
        }
    )
    answers.to_csv(private / "test.csv", index=False)
    submission = answers[["Insult", "Date", "Comment"]].assign(Insult=[0.9, 0.8, 0.1, 0.2])
    assert grade_frame(COMP, private, submission, tmp_path).score == 1.0
