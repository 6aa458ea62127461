"""vinbigdata-chest-xray-abnormalities-detection: consensus answers, DICOM files placed,
broken submissions refused with the reason, the sample scored only on "No finding"."""

from __future__ import annotations

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.grading import grade
from tests.competitions.support import assert_invalid, grade_frame

COMP = get_competition("vinbigdata-chest-xray-abnormalities-detection")


@pytest.fixture
def gold(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "gold_submission.csv", dtype=str)


def test_layout_consensus_and_images(dirs) -> None:
    raw = pd.read_csv(dirs.raw / "train.csv")
    train = pd.read_csv(dirs.public / "train.csv")
    answers = pd.read_csv(dirs.private / "answers.csv")
    assert list(train.columns) == list(raw.columns)
    assert list(answers.columns) == [
        "image_id", "class_id", "class_name", "rad_id", "x_min", "y_min", "x_max", "y_max"
    ]  # fmt: skip
    test_ids = set(answers["image_id"])
    assert len(test_ids) == 4 and not test_ids & set(train["image_id"])
    assert len(train) + (raw["image_id"].isin(test_ids)).sum() == len(raw)
    # One row per (image, class); "No finding" gets the box 0 0 1 1.
    assert not answers.duplicated(["image_id", "class_id"]).any()
    none = answers[answers["class_id"] == 14]
    assert (none[["x_min", "y_min", "x_max", "y_max"]].to_numpy() == [0, 0, 1, 1]).all()
    for folder, ids in (("train", set(train["image_id"])), ("test", test_ids)):
        placed = {p.stem for p in (dirs.public / folder).iterdir()}
        assert placed == ids
        for image in ids:
            path = f"{image}.dicom"
            assert (dirs.public / folder / path).read_bytes() == (
                dirs.raw / "train" / path
            ).read_bytes()
    assert sorted(p.name for p in dirs.public.iterdir()) == [
        "sample_submission.csv", "test", "train", "train.csv"
    ]  # fmt: skip


def test_sample_scores_the_no_finding_class_only(dirs, gold) -> None:
    answers = pd.read_csv(dirs.private / "answers.csv")
    classes = answers["class_id"].nunique()
    report = grade(COMP, dirs.public / "sample_submission.csv", dirs.private)
    # Every image gets "14 1 0 0 1 1": each "No finding" image is a hit and each other
    # image a miss, all at the same confidence, ranked by image id; only class 14 scores.
    assert 0 < report.score < 1 / classes
    assert not report.any_medal


CASES = {
    "missing rows": (lambda f: f.iloc[1:], r"1 test id\(s\) have no row"),
    "duplicate rows": (lambda f: pd.concat([f, f.iloc[:1]]), r"1 duplicate row\(s\)"),
    "unknown image": (
        lambda f: pd.concat([f, f.iloc[:1].assign(image_id="nope")]),
        r"ids that are not in the test set: 'nope'",
    ),
    "empty cell": (lambda f: f.assign(PredictionString=""), "numbers separated by single"),
    "nan score": (
        lambda f: f.assign(PredictionString="14 nan 0 0 1 1"),
        "not finite",
    ),
    "inverted box": (
        lambda f: f.assign(PredictionString="14 1 0 0 1 1 3 0.5 900 900 100 100"),
        "x_max < x_min",
    ),
    "target missing": (
        lambda f: f.drop(columns="PredictionString"),
        r"missing column\(s\) 'PredictionString'",
    ),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, gold, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    assert_invalid(grade_frame(COMP, dirs.private, mutate(gold), tmp_path), reason)


def test_gold_scores_high_in_any_row_order(gold, dirs, tmp_path) -> None:
    score = grade_frame(COMP, dirs.private, gold, tmp_path).score
    shuffled = grade_frame(COMP, dirs.private, gold.iloc[::-1], tmp_path).score
    assert shuffled == score
    assert COMP.thresholds.gold < score < 1  # the first answer box is never found
