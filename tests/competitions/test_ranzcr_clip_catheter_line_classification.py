"""ranzcr-clip-catheter-line-classification: nine graded columns; broken submissions rejected."""

from __future__ import annotations

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from tests.competitions.support import assert_invalid, assert_scores_like_the_sample, grade_frame

COMP = get_competition("ranzcr-clip-catheter-line-classification")
UID = "StudyInstanceUID"
GRADED = COMP.submission.target_names


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "test.csv", dtype={UID: str})


CASES = {
    "missing rows": (lambda f: f.iloc[4:], r"4 test id\(s\) have no row"),
    "unknown image": (
        lambda f: pd.concat([f, f.iloc[:1].assign(**{UID: "1.2.3"})]),
        r"ids that are not in the test set: '1.2.3'",
    ),
    "duplicate rows": (lambda f: pd.concat([f, f.iloc[:1]]), r"1 duplicate row\(s\)"),
    "graded column missing": (
        lambda f: f.drop(columns="CVC - Borderline"),
        r"missing column\(s\) 'CVC - Borderline'",
    ),
    "columns renamed": (
        lambda f: f.rename(columns=lambda c: c.replace(" - ", "_")),
        r"missing column\(s\) 'ETT - Abnormal'",
    ),
    "empty value": (
        lambda f: f.assign(**{"NGT - Normal": [None, *f["NGT - Normal"][1:]]}),
        r"'NGT - Normal' has 1 empty or missing value\(s\)",
    ),
    "above one": (
        lambda f: f.assign(**{"ETT - Normal": 3}),
        r"'ETT - Normal' must hold probabilities in \[0, 1\]",
    ),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, answers, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    assert_invalid(grade_frame(COMP, dirs.private, mutate(answers), tmp_path), reason)


def test_grades_the_nine_columns_of_the_sample(dirs) -> None:
    sample = pd.read_csv(dirs.public / "sample_submission.csv")
    assert list(sample.columns) == [UID, *GRADED]
    assert len(GRADED) == 9
    assert "CVC - Normal" not in GRADED and "Swan Ganz Catheter Present" not in GRADED


def test_kaggles_eleven_columns_are_accepted_extra_ones_ignored(answers, dirs, tmp_path) -> None:
    frame = answers.drop(columns="PatientID").assign(**{"CVC - Normal": 0.5})
    report = grade_frame(COMP, dirs.private, frame, tmp_path)
    assert report.valid_submission and report.score == 1.0
    assert any("CVC - Normal" in w and "Swan Ganz" in w for w in report.warnings)


def test_constant_prediction_scores_half_like_the_sample(answers, dirs, tmp_path) -> None:
    # each column's AUC is 1/2 for a constant, so their mean is 1/2 too
    constant = answers[[UID]].assign(**dict.fromkeys(GRADED, 0.2))
    assert_scores_like_the_sample(
        COMP, dirs, constant, tmp_path, sample_file="sample_submission.csv", score=0.5
    )


def test_annotations_and_images_follow_the_split(answers, dirs) -> None:
    train = pd.read_csv(dirs.public / "train.csv", dtype={UID: str})
    annotations = pd.read_csv(dirs.public / "train_annotations.csv", dtype={UID: str})
    original = pd.read_csv(dirs.raw / "train_annotations.csv", dtype={UID: str})
    assert set(annotations[UID]) <= set(train[UID])
    assert len(annotations) == original[UID].isin(train[UID]).sum()
    assert sorted(p.stem for p in (dirs.public / "test").iterdir()) == sorted(answers[UID])
    assert sorted(p.stem for p in (dirs.public / "train").iterdir()) == sorted(train[UID])
