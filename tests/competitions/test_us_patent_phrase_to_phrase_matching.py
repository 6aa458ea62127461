"""us-patent-phrase-to-phrase-matching: layout, rejected submissions, Pearson scores."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from tests.competitions.support import assert_invalid, assert_scores_like_the_sample, grade_frame

COMP = get_competition("us-patent-phrase-to-phrase-matching")


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "test.csv")


def _submission(answers: pd.DataFrame) -> pd.DataFrame:
    return answers[["id", "score"]]


def test_layout(answers, dirs) -> None:
    train = pd.read_csv(dirs.public / "train.csv")
    test = pd.read_csv(dirs.public / "test.csv")
    assert list(train.columns) == ["id", "anchor", "target", "context", "score"]
    assert list(test.columns) == ["id", "anchor", "target", "context"]
    assert list(test["id"]) == list(answers["id"])
    assert len(test) == 30 and len(train) == 270  # 10% of 300 rows held out
    assert not set(train["id"]) & set(test["id"])


CASES = {
    "missing rows": (lambda f: f.iloc[2:], r"2 test id\(s\) have no row"),
    "unknown id": (
        lambda f: pd.concat([f, f.iloc[:1].assign(id="ffffffffffffffff")]),
        r"not in the test set: 'ffffffffffffffff'",
    ),
    "duplicate rows": (lambda f: pd.concat([f, f.iloc[:1]]), r"1 duplicate row\(s\)"),
    "score missing": (lambda f: f.drop(columns="score"), r"missing column\(s\) 'score'"),
    "empty score": (
        lambda f: f.assign(score=[None, *f["score"][1:]]),
        r"'score' has 1 empty or missing value",
    ),
    "word as score": (
        lambda f: f.astype({"score": object}).assign(score="high"),
        r"'score' must hold finite numbers; found 'high'",
    ),
    "infinite score": (lambda f: f.assign(score=math.inf), r"must hold finite numbers"),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, answers, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    report = grade_frame(COMP, dirs.private, mutate(_submission(answers)), tmp_path)
    assert_invalid(report, reason)


def test_score_is_pearson_in_any_row_order(answers, dirs, tmp_path) -> None:
    noisy = answers["score"] + np.linspace(-0.4, 0.4, len(answers)) ** 2
    expected = np.corrcoef(answers["score"], noisy)[0, 1]
    frame = answers[["id"]].assign(score=noisy).sample(frac=1, random_state=1)
    report = grade_frame(COMP, dirs.private, frame, tmp_path)
    assert report.score == round(expected, 5)
    assert 0 < report.score < 1


def test_scale_and_shift_do_not_matter(answers, dirs, tmp_path) -> None:
    frame = _submission(answers).assign(score=answers["score"] * 40 - 7)
    assert grade_frame(COMP, dirs.private, frame, tmp_path).score == 1.0


def test_reversed_scores_are_minus_one(answers, dirs, tmp_path) -> None:
    frame = _submission(answers).assign(score=1 - answers["score"])
    assert grade_frame(COMP, dirs.private, frame, tmp_path).score == -1.0


@pytest.mark.parametrize("value", [0, 0.5, 3])
def test_constant_scores_zero_like_the_sample(value, answers, dirs, tmp_path) -> None:
    # MLE-bench gets NaN for a constant column; we score it 0 (no NaN reward)
    assert_scores_like_the_sample(
        COMP,
        dirs,
        answers[["id"]].assign(score=value),
        tmp_path,
        sample_file="sample_submission.csv",
        score=0.0,
    )
