"""dog-breed-identification: broken submissions are rejected; uniform sample is log(120)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.competitions.catalog.dog_breed_identification import BREEDS
from mle_gym.grading import grade
from tests.competitions.support import assert_invalid, grade_frame

COMP = get_competition("dog-breed-identification")


@pytest.fixture
def sample(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.public / "sample_submission.csv")


def _moved(frame: pd.DataFrame, amount: float) -> pd.DataFrame:
    """Move `amount` of probability from the second breed to the first."""
    return frame.assign(
        **{BREEDS[0]: frame[BREEDS[0]] + amount, BREEDS[1]: frame[BREEDS[1]] - amount}
    )


CASES = {
    "missing rows": (lambda f: f.iloc[1:], r"1 test id\(s\) have no row"),
    "unknown id": (
        lambda f: pd.concat([f, f.iloc[:1].assign(id="f" * 32)]),
        r"ids that are not in the test set: 'f{32}'",
    ),
    "duplicate rows": (lambda f: pd.concat([f, f.iloc[:1]]), r"1 duplicate row\(s\)"),
    "breed missing": (lambda f: f.drop(columns="dingo"), r"missing column\(s\) 'dingo'"),
    "breed misspelt": (
        lambda f: f.rename(columns={"shih-tzu": "shih_tzu"}),
        r"missing column\(s\) 'shih-tzu'",
    ),
    "class indices instead of names": (
        lambda f: f.set_axis(["id", *map(str, range(120))], axis=1),
        r"missing column\(s\) 'affenpinscher', 'afghan_hound'",
    ),
    "empty value": (
        lambda f: f.assign(pug=[None, *list(f.pug[1:])]),
        r"'pug' has 1 empty or missing value\(s\)",
    ),
    "above one": (lambda f: _moved(f, 1.5), r"'affenpinscher' must hold probabilities in \[0, 1\]"),
    "negative": (lambda f: _moved(f, 0.01), r"'afghan_hound' must hold probabilities"),
    "rows not summing to one": (
        lambda f: f.assign(pug=0.5),
        r"\d+ row\(s\) have probabilities that do not sum to one",
    ),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, sample, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    assert_invalid(grade_frame(COMP, dirs.private, mutate(sample), tmp_path), reason)


def test_column_order_does_not_matter(sample, dirs, tmp_path) -> None:
    answers = pd.read_csv(dirs.private / "test.csv")
    shuffled = answers[["id", *reversed(BREEDS)]]
    report = grade_frame(COMP, dirs.private, shuffled, tmp_path)
    assert report.valid_submission and report.score == 0.0 and report.gold_medal


def test_confident_answers_score_as_expected(dirs, tmp_path) -> None:
    answers = pd.read_csv(dirs.private / "test.csv")
    right = answers[list(BREEDS)].to_numpy(float)
    blend = 0.9 * right + 0.1 / len(BREEDS)
    frame = pd.DataFrame(blend, columns=list(BREEDS)).assign(id=answers["id"])
    report = grade_frame(COMP, dirs.private, frame, tmp_path)
    assert report.score == pytest.approx(round(-math.log(0.9 + 0.1 / 120), 5))
    assert np.allclose(blend.sum(axis=1), 1)


def test_uniform_sample_scores_log_120(dirs) -> None:
    report = grade(COMP, dirs.public / "sample_submission.csv", dirs.private)
    assert report.score == pytest.approx(math.log(len(BREEDS)), abs=5e-6)
    assert COMP.sample_score == pytest.approx(math.log(len(BREEDS)), abs=5e-6)
    assert len(BREEDS) == len(set(BREEDS)) == 120
