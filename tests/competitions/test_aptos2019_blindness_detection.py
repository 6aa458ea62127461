"""aptos2019-blindness-detection: broken submissions are rejected; kappa of the sample is 0."""

from __future__ import annotations

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from tests.competitions.support import assert_invalid, assert_scores_like_the_sample, grade_frame

COMP = get_competition("aptos2019-blindness-detection")


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "test.csv", dtype=str)


def _with_first(frame: pd.DataFrame, value: str | None) -> pd.DataFrame:
    return frame.assign(diagnosis=[value, *frame["diagnosis"][1:]])


CASES = {
    "missing rows": (lambda f: f.iloc[2:], r"2 test id\(s\) have no row"),
    "unknown image": (
        lambda f: pd.concat([f, f.iloc[:1].assign(id_code="ffffffffffff")]),
        r"ids that are not in the test set: 'ffffffffffff'",
    ),
    "duplicate rows": (lambda f: pd.concat([f, f.iloc[:1]]), r"1 duplicate row\(s\)"),
    "target missing": (lambda f: f.drop(columns="diagnosis"), r"missing column\(s\) 'diagnosis'"),
    "id renamed": (lambda f: f.rename(columns={"id_code": "id"}), r"missing column\(s\) 'id_code'"),
    "empty grade": (lambda f: _with_first(f, None), r"'diagnosis' has 1 empty or missing value"),
    "fractional grade": (
        lambda f: _with_first(f, "2.5"),
        r"'diagnosis' must hold one of .* \(or another integer class\); found '2.5'",
    ),
    "grade as word": (lambda f: _with_first(f, "severe"), r"found 'severe'"),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, answers, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    assert_invalid(grade_frame(COMP, dirs.private, mutate(answers), tmp_path), reason)


@pytest.mark.parametrize("grade_value", ["0", "2", "4"])
def test_constant_grade_scores_zero_like_the_sample(grade_value, answers, dirs, tmp_path) -> None:
    # one predicted grade makes the observed table equal its chance expectation: kappa = 0
    constant = answers.assign(diagnosis=grade_value)
    assert_scores_like_the_sample(
        COMP, dirs, constant, tmp_path, sample_file="sample_submission.csv", score=0.0
    )


def test_rows_in_any_order_score_the_same(answers, dirs, tmp_path) -> None:
    shuffled = answers.sample(frac=1, random_state=0)
    assert grade_frame(COMP, dirs.private, shuffled, tmp_path).score == 1.0


def test_images_follow_the_split(answers, dirs) -> None:
    train = pd.read_csv(dirs.public / "train.csv")
    test = pd.read_csv(dirs.public / "test.csv")
    assert list(test.columns) == ["id_code"]
    assert list(test["id_code"]) == list(answers["id_code"])
    assert sorted(p.stem for p in (dirs.public / "test_images").iterdir()) == sorted(
        answers["id_code"]
    )
    assert sorted(p.stem for p in (dirs.public / "train_images").iterdir()) == sorted(
        train["id_code"]
    )
