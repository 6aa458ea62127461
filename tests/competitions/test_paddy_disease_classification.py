"""paddy-disease-classification: broken submissions are rejected; labels are compared as
written; images keep Kaggle's folder layout."""

from __future__ import annotations

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.grading import grade
from tests.competitions.support import assert_invalid, grade_frame

COMP = get_competition("paddy-disease-classification")


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "test.csv", dtype=str)


CASES = {
    "missing rows": (lambda f: f.iloc[2:], r"2 test id\(s\) have no row"),
    "id without .jpg": (
        lambda f: f.assign(image_id=f["image_id"].str[:-4]),
        r"ids that are not in the test set: '\d+'",
    ),
    "duplicate rows": (lambda f: pd.concat([f, f.iloc[:1]]), r"1 duplicate row\(s\)"),
    "label missing": (lambda f: f.drop(columns="label"), r"missing column\(s\) 'label'"),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, answers, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    assert_invalid(grade_frame(COMP, dirs.private, mutate(answers), tmp_path), reason)


def test_empty_sample_is_valid_and_scores_zero(answers, dirs) -> None:
    sample = pd.read_csv(dirs.public / "sample_submission.csv", dtype=str, keep_default_na=False)
    assert list(sample.columns) == ["image_id", "label"] and set(sample["label"]) == {""}
    assert sorted(sample["image_id"]) == sorted(answers["image_id"])
    assert COMP.sample_score == 0.0
    assert grade(COMP, dirs.public / "sample_submission.csv", dirs.private).score == 0.0


def test_score_is_the_share_of_exact_labels(answers, dirs, tmp_path) -> None:
    # first half right; the rest wrong: padded with a space, missing, or an unknown class
    half = len(answers) // 2
    wrong = [" " + answers["label"].iloc[half], "NA", "rice"]
    labels = [*answers["label"][:half], *(wrong[i % 3] for i in range(len(answers) - half))]
    frame = answers[["image_id"]].assign(label=labels).iloc[::-1]
    report = grade_frame(COMP, dirs.private, frame, tmp_path)
    assert report.score == round(half / len(answers), 5)


def test_images_keep_kaggle_layout(answers, dirs) -> None:
    train = pd.read_csv(dirs.public / "train.csv")
    assert list(train.columns) == ["image_id", "label", "variety", "age"]
    assert len(train) == 30 and len(answers) == 10  # 75% / 25% of 40
    for name, label in zip(train["image_id"], train["label"], strict=True):
        placed = dirs.public / "train_images" / label / name
        assert placed.read_bytes() == (dirs.raw / "train_images" / label / name).read_bytes()
    for name, label in zip(answers["image_id"], answers["label"], strict=True):
        placed = dirs.public / "test_images" / name
        assert placed.read_bytes() == (dirs.raw / "train_images" / label / name).read_bytes()
    assert len(list((dirs.public / "test_images").iterdir())) == len(answers)
    assert not (dirs.public / "test.csv").exists()
