"""denoising-dirty-documents: broken submissions are rejected; RMSE of the all-white sample."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from mle_gym.competitions import get_competition
from mle_gym.grading import grade
from tests.competitions.support import assert_invalid, grade_frame

COMP = get_competition("denoising-dirty-documents")


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "answers.csv")


CASES = {
    "missing rows": (lambda f: f.iloc[4:], r"4 test id\(s\) have no row"),
    "unknown pixel": (
        lambda f: pd.concat([f, f.iloc[:1].assign(id="1_99_1")]),
        r"ids that are not in the test set: '1_99_1'",
    ),
    "zero-based pixel ids": (
        lambda f: f.assign(id=f["id"].str.replace(r"_1$", "_0", regex=True)),
        r"ids that are not in the test set: '\d+_1_0'",
    ),
    "duplicate rows": (lambda f: pd.concat([f, f.iloc[:2]]), r"2 duplicate row\(s\)"),
    "value column missing": (lambda f: f.drop(columns="value"), r"missing column\(s\) 'value'"),
    "id column renamed": (lambda f: f.rename(columns={"id": "Id"}), r"missing column\(s\) 'id'"),
    "empty value": (
        lambda f: f.assign(value=[None, *list(f["value"][1:])]),
        r"'value' has 1 empty or missing value\(s\)",
    ),
    "not a number": (
        lambda f: f.astype({"value": object}).assign(value="white"),
        r"'value' must hold finite numbers; found 'white'",
    ),
    "infinite": (lambda f: f.assign(value=math.inf), r"'value' must hold finite numbers"),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, answers, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    assert_invalid(grade_frame(COMP, dirs.private, mutate(answers), tmp_path), reason)


def test_answers_hold_every_pixel_of_the_test_images_only(answers, dirs) -> None:
    test_images = sorted((dirs.public / "test").glob("*.png"))
    assert test_images
    for image in test_images:
        rows, cols = np.asarray(Image.open(image)).shape
        pixels = answers[answers["id"].str.startswith(f"{image.stem}_")]
        assert len(pixels) == rows * cols
        assert pixels["id"].iloc[-1] == f"{image.stem}_{rows}_{cols}"
        assert not (dirs.public / "train" / image.name).exists()
        assert not (dirs.public / "train_cleaned" / image.name).exists()
    assert len(answers) == sum(np.asarray(Image.open(i)).size for i in test_images)


def _rmse_of_constant(truth: pd.Series, value: float) -> float:
    return math.sqrt(((truth - value) ** 2).mean())


def test_sample_scores_the_rmse_of_pure_white(answers, dirs) -> None:
    report = grade(COMP, dirs.public / "sampleSubmission.csv", dirs.private)
    assert report.score == pytest.approx(_rmse_of_constant(answers["value"], 1.0), abs=5e-6)


def test_values_outside_unit_range_are_graded_like_mlebench(answers, dirs, tmp_path) -> None:
    frame = answers.sample(frac=1, random_state=0).assign(value=1.5)
    report = grade_frame(COMP, dirs.private, frame, tmp_path)
    assert report.valid_submission, report.error
    assert report.score == pytest.approx(_rmse_of_constant(answers["value"], 1.5), abs=5e-6)
