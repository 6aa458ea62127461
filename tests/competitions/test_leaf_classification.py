"""leaf-classification: broken submissions are rejected; uniform sample is log(99)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.competitions.catalog.leaf_classification import SPECIES
from mle_gym.grading import grade
from tests.competitions.support import assert_invalid, grade_frame

COMP = get_competition("leaf-classification")


@pytest.fixture
def sample(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.public / "sample_submission.csv")


CASES = {
    "missing rows": (lambda f: f.iloc[2:], r"2 test id\(s\) have no row"),
    "unknown id": (
        lambda f: pd.concat([f, f.iloc[:1].assign(id=99999)]),
        r"ids that are not in the test set: '99999'",
    ),
    "fractional ids": (
        lambda f: f.assign(id=f["id"] + 0.5),
        r"ids that are not in the test set: '\d+\.5'",
    ),
    "duplicate rows": (lambda f: pd.concat([f, f.iloc[:3]]), r"3 duplicate row\(s\)"),
    "species missing": (
        lambda f: f.drop(columns="Zelkova_Serrata"),
        r"missing column\(s\) 'Zelkova_Serrata'",
    ),
    "species in lower case": (
        lambda f: f.rename(columns=str.lower),
        r"missing column\(s\) 'Acer_Capillipes', 'Acer_Circinatum'",
    ),
    "empty value": (
        lambda f: f.assign(Acer_Mono=""),
        r"'Acer_Mono' has \d+ empty or missing value\(s\)",
    ),
    "above one": (lambda f: f.assign(Acer_Mono=1.01), r"'Acer_Mono' must hold probabilities"),
    "rows not summing to one": (
        lambda f: f.assign(Acer_Mono=0.0),
        r"row\(s\) have probabilities that do not sum to one",
    ),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, sample, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    assert_invalid(grade_frame(COMP, dirs.private, mutate(sample), tmp_path), reason)


def test_one_hot_answers_reach_the_zero_gold_threshold(dirs, tmp_path) -> None:
    report = grade_frame(COMP, dirs.private, pd.read_csv(dirs.private / "test.csv"), tmp_path)
    assert report.score == 0.0 and report.gold_medal and COMP.thresholds.gold == 0.0


def test_public_images_cover_train_and_test_but_private_images_is_empty(dirs) -> None:
    ids = pd.concat([pd.read_csv(dirs.public / f)["id"] for f in ("train.csv", "test.csv")])
    assert {p.stem for p in (dirs.public / "images").iterdir()} == set(ids.astype(str))
    assert (dirs.private / "images").is_dir() and not any((dirs.private / "images").iterdir())


def test_uniform_sample_scores_log_99(dirs) -> None:
    report = grade(COMP, dirs.public / "sample_submission.csv", dirs.private)
    assert report.score == pytest.approx(math.log(len(SPECIES)), abs=5e-6)
    assert COMP.sample_score == pytest.approx(math.log(len(SPECIES)), abs=5e-6)
    assert len(SPECIES) == len(set(SPECIES)) == 99
