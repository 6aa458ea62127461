"""chaii: layout, broken submissions with their reason, and word-level Jaccard scores that
can be worked out by hand on the fixture's answers."""

from __future__ import annotations

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.grading.validation import read_as_text
from tests.competitions.support import assert_invalid, assert_scores_like_the_sample, grade_frame

COMP = get_competition("chaii-hindi-and-tamil-question-answering")


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return read_as_text(dirs.private / "test.csv")


def test_layout(dirs, answers) -> None:
    assert list(read_as_text(dirs.public / "test.csv").columns) == [
        "id",
        "context",
        "question",
        "language",
    ]
    assert list(answers.columns) == ["id", "PredictionString"]
    train = read_as_text(dirs.public / "train.csv")
    assert len(train) == 54 and len(answers) == 6
    assert not set(train["id"]) & set(answers["id"])


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda f: f.iloc[2:], r"2 test id\(s\) have no row"),
        (lambda f: pd.concat([f, f.iloc[:1].assign(id="zzz")]), r"not in the test set: 'zzz'"),
        (lambda f: pd.concat([f, f.iloc[:1]]), r"1 duplicate row\(s\)"),
        (lambda f: f.rename(columns={"PredictionString": "answer"}), r"'PredictionString'"),
    ],
)
def test_broken_submission_is_invalid_with_reason(answers, dirs, tmp_path, change, reason) -> None:
    assert_invalid(grade_frame(COMP, dirs.private, change(answers), tmp_path), reason)


def test_sample_scores_zero(dirs, answers, tmp_path) -> None:
    constant = answers.assign(PredictionString="कुछ नहीं")
    assert_scores_like_the_sample(
        COMP, dirs, constant, tmp_path, sample_file="sample_submission.csv", score=0.0
    )


def test_case_and_word_order_do_not_matter(dirs, answers, tmp_path) -> None:
    """Words are compared as lower-cased sets, so a reversed, upper-cased answer is exact."""
    reversed_upper = answers.assign(
        PredictionString=[" ".join(reversed(a.split())).upper() for a in answers.PredictionString]
    )
    assert grade_frame(COMP, dirs.private, reversed_upper, tmp_path).score == 1.0


def test_partial_and_missing_answers_score_by_hand(dirs, answers, tmp_path) -> None:
    """First word only: |1| / |words of the answer|; `NA` on the first row is empty (0)."""
    first_word = answers.assign(PredictionString=[a.split()[0] for a in answers.PredictionString])
    first_word.loc[0, "PredictionString"] = "NA"
    expected = [1 / len(set(a.split())) for a in answers.PredictionString]
    expected[0] = 0.0
    score = grade_frame(COMP, dirs.private, first_word, tmp_path).score
    assert score == pytest.approx(round(sum(expected) / len(expected), 5))
    assert 0 < score < 1


def test_numeric_looking_answers_are_graded_as_text(dirs, answers, tmp_path) -> None:
    """An all-numeric column crashes MLE-bench's reading; here it scores its matches."""
    numbers = answers.assign(PredictionString="1330")
    matches = answers.PredictionString == "1330"
    assert 0 < matches.mean() < 1
    score = grade_frame(COMP, dirs.private, numbers, tmp_path).score
    assert score == pytest.approx(round(matches.mean(), 5))
