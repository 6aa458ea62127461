"""right-whale-redux: broken submissions are rejected; the date split; the sample's 0.5 AUC."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from mle_gym.competitions import get_competition
from tests.competitions.support import assert_invalid, assert_scores_like_the_sample, grade_frame

COMP = get_competition("the-icml-2013-whale-challenge-right-whale-redux")


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "test.csv")


CASES = {
    "missing rows": (lambda f: f.iloc[2:], r"2 test id\(s\) have no row"),
    "clip without extension": (
        lambda f: f.assign(clip=f["clip"].str.removesuffix(".aif")),
        r"ids that are not in the test set: '20090330_\d+_\w+_Test\d+'",
    ),
    "duplicate rows": (lambda f: pd.concat([f, f.iloc[:1]]), r"1 duplicate row\(s\)"),
    "probability column missing": (
        lambda f: f.drop(columns="probability"),
        r"missing column\(s\) 'probability'",
    ),
    "empty value": (
        lambda f: f.assign(probability=[None] + [0.5] * (len(f) - 1)),
        r"'probability' has 1 empty or missing value\(s\)",
    ),
    "label words": (
        lambda f: f.astype({"probability": object}).assign(probability="whale"),
        r"'probability' must hold finite numbers; found 'whale'",
    ),
    "above one": (
        lambda f: f.assign(probability=2.0),
        r"'probability' must hold probabilities in \[0, 1\]; found '2.0'",
    ),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, answers, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    assert_invalid(grade_frame(COMP, dirs.private, mutate(answers), tmp_path), reason)


def _clips(archive: Path) -> list[str]:
    with zipfile.ZipFile(archive) as zf:
        return sorted(Path(n).name for n in zf.namelist() if n.endswith(".aif"))


def test_first_two_days_train_last_two_test(answers, dirs) -> None:
    train, test = _clips(dirs.public / "train2.zip"), _clips(dirs.public / "test2.zip")
    assert {c[:8] for c in train} == {"20090328", "20090329"}
    assert {c[:8] for c in test} == {"20090330", "20090331"}
    assert sorted(answers["clip"]) == test
    assert all(re.search(r"_TRAIN\d+_[01]\.aif$", c) for c in train)
    ordered = answers["clip"].tolist()
    assert ordered == sorted(ordered, key=lambda c: (c[:15], c)), "indices follow time"


def test_auc_of_a_ranking(answers, dirs, tmp_path) -> None:
    scores = np.random.default_rng(0).random(len(answers))
    report = grade_frame(COMP, dirs.private, answers.assign(probability=scores), tmp_path)
    assert report.score == pytest.approx(roc_auc_score(answers["probability"], scores), abs=5e-6)


def test_constant_submission_scores_one_half_like_the_sample(answers, dirs, tmp_path) -> None:
    constant = answers.assign(probability=0.8)
    assert_scores_like_the_sample(
        COMP, dirs, constant, tmp_path, sample_file="sampleSubmission.csv", score=0.5
    )
