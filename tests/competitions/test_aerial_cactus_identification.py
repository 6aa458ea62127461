"""aerial-cactus-identification: broken submissions are rejected; images move into new zips."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.data import prepare
from mle_gym.grading import grade
from tests.fixtures.raw import generator_for

COMP = get_competition("aerial-cactus-identification")


@pytest.fixture(scope="module")
def dirs(tmp_path_factory: pytest.TempPathFactory):
    raw = tmp_path_factory.mktemp("cactus-raw")
    generator_for(COMP).make_raw(raw)
    return prepare(COMP, raw, root=tmp_path_factory.mktemp("cactus-cache")).dirs


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "test.csv")


def _grade(frame: pd.DataFrame, dirs, tmp_path: Path):
    path = tmp_path / "submission.csv"
    frame.to_csv(path, index=False)
    return grade(COMP, path, dirs.private)


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
    report = _grade(mutate(answers), dirs, tmp_path)
    assert not report.valid_submission and report.score is None
    assert re.search(reason, report.error), report.error


def test_constant_prediction_scores_half_like_the_sample(answers, dirs, tmp_path) -> None:
    # a constant ties every positive with every negative: AUC = 1/2 whatever the constant
    assert COMP.sample_score == 0.5
    assert grade(COMP, dirs.public / "sample_submission.csv", dirs.private).score == 0.5
    assert _grade(answers.assign(has_cactus=0.9), dirs, tmp_path).score == 0.5


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
