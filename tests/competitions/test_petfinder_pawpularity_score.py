"""petfinder-pawpularity-score: broken or off-scale submissions are rejected; the sample's
random scores; the photographs of each half."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.grading import grade
from tests.competitions.support import assert_invalid, grade_frame

COMP = get_competition("petfinder-pawpularity-score")


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "test.csv")


def _submission(answers: pd.DataFrame) -> pd.DataFrame:
    return answers[["Id", "Pawpularity"]]


CASES = {
    "missing rows": (lambda f: f.iloc[1:], r"1 test id\(s\) have no row"),
    "duplicate rows": (lambda f: pd.concat([f, f.iloc[:2]]), r"2 duplicate row\(s\)"),
    "unknown id": (
        lambda f: pd.concat([f.iloc[1:], f.iloc[:1].assign(Id="0" * 32)]),
        r"ids that are not in the test set: '0{32}'",
    ),
    "target missing": (lambda f: f.drop(columns="Pawpularity"), r"missing column\(s\)"),
    "not a number": (lambda f: f.assign(Pawpularity="high"), r"must hold finite numbers"),
    "empty value": (
        lambda f: f.assign(Pawpularity=[None, *f["Pawpularity"][1:]]),
        r"'Pawpularity' has 1 empty or missing value\(s\)",
    ),
    "above 100": (
        lambda f: f.assign(Pawpularity=[100.5, *f["Pawpularity"][1:]]),
        r"'Pawpularity' must hold values in \[1, 100\]; 1 do not \(e.g. 100.5\)",
    ),
    "zero": (lambda f: f.assign(Pawpularity=0), r"must hold values in \[1, 100\]"),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, answers, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    assert_invalid(grade_frame(COMP, dirs.private, mutate(_submission(answers)), tmp_path), reason)


def test_sample_holds_seeded_random_scores(answers, dirs) -> None:
    sample = pd.read_csv(dirs.public / "sample_submission.csv")
    expected = np.random.default_rng(0).uniform(1, 100, len(answers)).round(2)
    assert list(sample["Id"]) == list(answers["Id"])
    assert np.array_equal(sample["Pawpularity"].to_numpy(), expected)
    rmse = np.sqrt(np.mean((answers["Pawpularity"].to_numpy() - expected) ** 2))
    assert grade(COMP, dirs.public / "sample_submission.csv", dirs.private).score == round(rmse, 5)


def test_bounds_are_valid_and_scored(answers, dirs, tmp_path) -> None:
    truth = answers["Pawpularity"].to_numpy(float)
    for value in (1, 100):
        frame = _submission(answers).assign(Pawpularity=value).iloc[::-1]
        expected = round(float(np.sqrt(np.mean((truth - value) ** 2))), 5)
        assert grade_frame(COMP, dirs.private, frame, tmp_path).score == expected


def test_public_test_lacks_the_score_and_images_are_split(answers, dirs) -> None:
    train = pd.read_csv(dirs.public / "train.csv")
    public_test = pd.read_csv(dirs.public / "test.csv")
    assert list(public_test.columns) == list(train.columns[:-1])
    assert train.columns[-1] == "Pawpularity"
    assert list(public_test["Id"]) == list(answers["Id"])
    for part, folder in ((train, "train"), (answers, "test")):
        placed = sorted(p.stem for p in (dirs.public / folder).iterdir())
        assert placed == sorted(part["Id"])
        first = part["Id"].iloc[0]
        source = dirs.raw / "train" / f"{first}.jpg"
        assert (dirs.public / folder / f"{first}.jpg").read_bytes() == source.read_bytes()
