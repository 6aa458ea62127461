"""histopathologic-cancer-detection: broken submissions are rejected; the split's size."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from tests.competitions.support import assert_invalid, assert_scores_like_the_sample, grade_frame

COMP = get_competition("histopathologic-cancer-detection")


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "answers.csv")


CASES = {
    "missing rows": (lambda f: f.iloc[5:], r"5 test id\(s\) have no row"),
    "train id": (
        lambda f: pd.concat([f.iloc[1:], f.iloc[:1].assign(id="0" * 40)]),
        r"ids that are not in the test set: '0{40}'",
    ),
    "ids with .tif": (
        lambda f: f.assign(id=f["id"] + ".tif"),
        r"ids that are not in the test set: '[0-9a-f]{40}\.tif'",
    ),
    "duplicate rows": (lambda f: pd.concat([f, f.iloc[:3]]), r"3 duplicate row\(s\)"),
    "target missing": (lambda f: f.drop(columns="label"), r"missing column\(s\) 'label'"),
    "empty value": (
        lambda f: f.assign(label=[None, *list(f["label"][1:])]),
        r"'label' has 1 empty or missing value\(s\)",
    ),
    "above one": (lambda f: f.assign(label=2), r"'label' must hold probabilities in \[0, 1\]"),
    "nan text": (
        lambda f: f.astype({"label": object}).assign(label="nan"),
        r"'label' must hold finite numbers; found 'nan'",
    ),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, answers, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    assert_invalid(grade_frame(COMP, dirs.private, mutate(answers), tmp_path), reason)


def test_constant_prediction_scores_half_like_the_sample(answers, dirs, tmp_path) -> None:
    # a constant ties every positive with every negative: AUC = 1/2 whatever the constant
    constant = answers.assign(label=0.3)
    assert_scores_like_the_sample(
        COMP, dirs, constant, tmp_path, sample_file="sample_submission.csv", score=0.5
    )


def test_held_out_share_matches_kaggles_test_share(answers, dirs) -> None:
    original = pd.read_csv(dirs.raw / "train_labels.csv")
    kaggle_test = len(list((dirs.raw / "test").glob("*.tif")))
    share = kaggle_test / (len(original) + kaggle_test)
    assert len(answers) == math.ceil(share * len(original))
    train = pd.read_csv(dirs.public / "train_labels.csv")
    # both halves keep the order of the original labels file
    order = {image_id: i for i, image_id in enumerate(original["id"])}
    for half in (train, answers):
        assert list(half["id"]) == sorted(half["id"], key=order.__getitem__)
    assert sorted(p.stem for p in (dirs.public / "test").iterdir()) == sorted(answers["id"])
    assert sorted(p.stem for p in (dirs.public / "train").iterdir()) == sorted(train["id"])
