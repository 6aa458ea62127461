"""learning-agency-lab-automated-essay-scoring-2: layout, rejected submissions, kappa scores."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from mle_gym.competitions import get_competition
from mle_gym.grading import grade
from tests.competitions.support import assert_invalid, grade_frame

COMP = get_competition("learning-agency-lab-automated-essay-scoring-2")


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "answers.csv")


def _submission(answers: pd.DataFrame) -> pd.DataFrame:
    return answers[["essay_id", "score"]]


def _with_first(frame: pd.DataFrame, value) -> pd.DataFrame:
    return frame.astype({"score": object}).assign(score=[value, *frame["score"][1:]])


def test_layout(answers, dirs) -> None:
    test = pd.read_csv(dirs.public / "test.csv")
    sample = pd.read_csv(dirs.public / "sample_submission.csv")
    assert list(test.columns) == ["essay_id", "full_text"]
    assert list(answers.columns) == ["essay_id", "full_text", "score"]
    assert list(test["essay_id"]) == list(sample["essay_id"]) == list(answers["essay_id"])
    # MLE-bench's sample: numpy's legacy generator, seed 42, integers 1 to 6
    expected = np.random.RandomState(42).randint(1, 7, size=len(sample))
    assert list(sample["score"]) == list(expected)


CASES = {
    "missing rows": (lambda f: f.iloc[2:], r"2 test id\(s\) have no row"),
    "unknown essay": (
        lambda f: pd.concat([f, f.iloc[:1].assign(essay_id="fffffff")]),
        r"not in the test set: 'fffffff'",
    ),
    "duplicate rows": (lambda f: pd.concat([f, f.iloc[:1]]), r"1 duplicate row\(s\)"),
    "score missing": (lambda f: f.drop(columns="score"), r"missing column\(s\) 'score'"),
    "empty score": (lambda f: _with_first(f, None), r"'score' has 1 empty or missing value"),
    "fractional score": (lambda f: _with_first(f, 2.5), r"found '2.5'"),
    "word as score": (lambda f: _with_first(f, "good"), r"found 'good'"),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, answers, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    report = grade_frame(COMP, dirs.private, mutate(_submission(answers)), tmp_path)
    assert_invalid(report, reason)


def test_score_is_sklearn_kappa_in_any_row_order(answers, dirs, tmp_path) -> None:
    shifted = np.clip(answers["score"] + np.arange(len(answers)) % 3 - 1, 1, 6)
    expected = cohen_kappa_score(shifted, answers["score"], weights="quadratic")
    frame = answers[["essay_id"]].assign(score=shifted).sample(frac=1, random_state=0)
    assert grade_frame(COMP, dirs.private, frame, tmp_path).score == round(expected, 5)


def test_whole_numbers_off_the_scale_are_scored_like_mlebench(answers, dirs, tmp_path) -> None:
    # MLE-bench reads 3.0 as 3 and scores 7 as a further point of the scale
    predicted = answers["score"].where(answers.index % 4 != 0, 7)
    frame = answers[["essay_id"]].assign(score=predicted.astype(float))
    expected = cohen_kappa_score(predicted, answers["score"], weights="quadratic")
    report = grade_frame(COMP, dirs.private, frame, tmp_path)
    assert report.score == round(expected, 5)
    assert report.warnings


def test_sample_score_is_kappa_of_its_random_scores(answers, dirs) -> None:
    sample = pd.read_csv(dirs.public / "sample_submission.csv")
    expected = cohen_kappa_score(sample["score"], answers["score"], weights="quadratic")
    report = grade(COMP, dirs.public / "sample_submission.csv", dirs.private)
    assert report.score == round(expected, 5)
    assert abs(report.score) < 0.3


def test_constant_score_is_zero(answers, dirs, tmp_path) -> None:
    frame = answers[["essay_id"]].assign(score=3)
    assert grade_frame(COMP, dirs.private, frame, tmp_path).score == 0.0
