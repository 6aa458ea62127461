"""aerial-cactus-identification: broken submissions are rejected; images move into new zips."""

from __future__ import annotations

import zipfile

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from tests.competitions.support import assert_invalid, assert_scores_like_the_sample, grade_frame

COMP = get_competition("aerial-cactus-identification")


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "test.csv")


CASES = {
    "missing rows": (lambda f: f.iloc[3:], r"3 test id\(s\) have no row"),
    "unknown image": (
        lambda f: pd.concat([f, f.iloc[:1].assign(id="nope.jpg")]),
        r"ids that are not in the test set: 'nope.jpg'",
    ),
    "ids without .jpg": (
        lambda f: f.assign(id=f["id"].str.removesuffix(".jpg")),
        r"ids that are not in the test set",
    ),
    "duplicate rows": (lambda f: pd.concat([f, f.iloc[:2]]), r"2 duplicate row\(s\)"),
    "target missing": (lambda f: f.drop(columns="has_cactus"), r"missing column\(s\) 'has_cactus'"),
    "empty value": (
        lambda f: f.assign(has_cactus=[None, *list(f["has_cactus"][1:])]),
        r"'has_cactus' has 1 empty or missing value\(s\)",
    ),
    "above one": (
        lambda f: f.assign(has_cactus=1.5),
        r"'has_cactus' must hold probabilities in \[0, 1\]; found '1.5'",
    ),
    "below zero": (lambda f: f.assign(has_cactus=-0.1), r"probabilities in \[0, 1\]"),
    "text": (
        lambda f: f.astype({"has_cactus": object}).assign(has_cactus="yes"),
        r"'has_cactus' must hold finite numbers; found 'yes'",
    ),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, answers, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    assert_invalid(grade_frame(COMP, dirs.private, mutate(answers), tmp_path), reason)


def test_constant_prediction_scores_half_like_the_sample(answers, dirs, tmp_path) -> None:
    # a constant ties every positive with every negative: AUC = 1/2 whatever the constant
    constant = answers.assign(has_cactus=0.9)
    assert_scores_like_the_sample(
        COMP, dirs, constant, tmp_path, sample_file="sample_submission.csv", score=0.5
    )


def test_zips_hold_the_split_images_at_top_level(answers, dirs) -> None:
    train = pd.read_csv(dirs.public / "train.csv")
    with (
        zipfile.ZipFile(dirs.public / "test.zip") as archive,
        zipfile.ZipFile(dirs.raw / "train.zip") as original,
    ):
        assert sorted(archive.namelist()) == sorted(answers["id"])
        for image_id in answers["id"]:
            assert archive.read(image_id) == original.read(f"train/{image_id}")
    with zipfile.ZipFile(dirs.public / "train.zip") as archive:
        assert sorted(archive.namelist()) == sorted(train["id"])
    assert not set(train["id"]) & set(answers["id"])
    assert sorted(p.name for p in dirs.public.iterdir()) == [
        "sample_submission.csv",
        "test.zip",
        "train.csv",
        "train.zip",
    ]
