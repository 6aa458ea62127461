"""plant-pathology-2020-fgvc7: broken submissions are rejected; images are renamed."""

from __future__ import annotations

import pandas as pd
import pytest
from sklearn.model_selection import train_test_split

from mle_gym.competitions import get_competition
from tests.competitions.support import assert_invalid, assert_scores_like_the_sample, grade_frame

COMP = get_competition("plant-pathology-2020-fgvc7")
CLASSES = ["healthy", "multiple_diseases", "rust", "scab"]


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "test.csv")


CASES = {
    "missing rows": (lambda f: f.iloc[1:], r"1 test id\(s\) have no row"),
    "kaggle test id": (
        lambda f: pd.concat([f, f.iloc[:1].assign(image_id="Test_999")]),
        r"ids that are not in the test set: 'Test_999'",
    ),
    "duplicate rows": (lambda f: pd.concat([f, f.iloc[:2]]), r"2 duplicate row\(s\)"),
    "class missing": (
        lambda f: f.drop(columns="multiple_diseases"),
        r"missing column\(s\) 'multiple_diseases'",
    ),
    "label column instead": (
        lambda f: f[["image_id"]].assign(label="rust"),
        r"missing column\(s\) 'healthy', 'multiple_diseases'",
    ),
    "extra column": (lambda f: f.assign(combinations=0), r"unexpected column\(s\) 'combinations'"),
    "empty value": (
        lambda f: f.assign(scab=[None, *list(f["scab"][1:])]),
        r"'scab' has 1 empty or missing value\(s\)",
    ),
    "not a number": (lambda f: f.assign(rust="high"), r"'rust' must hold finite numbers"),
    "infinite": (lambda f: f.assign(healthy="inf"), r"'healthy' must hold finite numbers"),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, answers, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    assert_invalid(grade_frame(COMP, dirs.private, mutate(answers), tmp_path), reason)


def test_constant_prediction_scores_half_like_the_sample(answers, dirs, tmp_path) -> None:
    # each column's AUC is 1/2 for a constant, so their mean is 1/2 too
    constant = answers.assign(**dict.fromkeys(CLASSES, 0.1))
    assert_scores_like_the_sample(
        COMP, dirs, constant, tmp_path, sample_file="sample_submission.csv", score=0.5
    )


def test_score_is_the_mean_of_column_aucs(answers, dirs, tmp_path) -> None:
    # perfect on two columns, constant on the other two
    frame = answers.assign(rust=0.5, scab=0.5)
    assert grade_frame(COMP, dirs.private, frame, tmp_path).score == 0.75


def test_images_are_renamed_in_split_order(answers, dirs) -> None:
    train = pd.read_csv(dirs.public / "train.csv")
    assert list(train["image_id"]) == [f"Train_{i}" for i in range(len(train))]
    assert list(answers["image_id"]) == [f"Test_{i}" for i in range(len(answers))]
    assert list(pd.read_csv(dirs.public / "test.csv").columns) == ["image_id"]
    images = sorted(p.stem for p in (dirs.public / "images").iterdir())
    assert images == sorted([*train["image_id"], *answers["image_id"]])


def test_renamed_image_is_the_labelled_one(dirs) -> None:
    original = pd.read_csv(dirs.raw / "train.csv")
    split = train_test_split(original, test_size=0.1, random_state=0)
    train, held_out = (part.reset_index(drop=True) for part in split)
    for part, prefix in ((train, "Train"), (held_out, "Test")):
        for i in (0, len(part) - 1):
            renamed = dirs.public / "images" / f"{prefix}_{i}.jpg"
            source = dirs.raw / "images" / f"{part['image_id'][i]}.jpg"
            assert renamed.read_bytes() == source.read_bytes()
