"""champs-scalar-coupling: the split by molecule, what public keeps, and log-MAE by type."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.competitions.catalog.champs_scalar_coupling import MOLECULE_TABLES
from tests.competitions.support import assert_invalid, grade_frame

COMP = get_competition("champs-scalar-coupling")


@pytest.fixture(scope="module")
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "answers.csv")


def test_split_by_molecule_keeps_only_training_molecules_public(dirs, answers) -> None:
    train = pd.read_csv(dirs.public / "train.csv")
    test = pd.read_csv(dirs.public / "test.csv")
    kept = set(train["molecule_name"])
    assert len(kept) == 36 and answers["molecule_name"].nunique() == 4
    assert kept.isdisjoint(answers["molecule_name"])
    assert test.columns.tolist() == answers.columns.drop("scalar_coupling_constant").tolist()
    for name in MOLECULE_TABLES:
        assert set(pd.read_csv(dirs.public / name)["molecule_name"]) == kept, name
    xyz = list((dirs.public / "structures").iterdir())
    assert {p.stem for p in xyz} == kept and all(os.stat(p).st_nlink >= 2 for p in xyz)


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda s: s.iloc[1:], "test id\\(s\\) have no row"),
        (lambda s: pd.concat([s, s.iloc[:1].assign(id="99999")]), "not in the test set"),
        (lambda s: pd.concat([s, s.iloc[:1]]), "duplicate row"),
        (lambda s: s.drop(columns="scalar_coupling_constant"), "missing column"),
        (lambda s: s.assign(scalar_coupling_constant=""), "empty or missing value"),
        (lambda s: s.assign(scalar_coupling_constant="nan"), "must hold finite numbers"),
    ],
)
def test_invalid_submissions_are_rejected(dirs, tmp_path, change, reason) -> None:
    sample = pd.read_csv(dirs.public / "sample_submission.csv", dtype=str)
    assert_invalid(grade_frame(COMP, dirs.private, change(sample.copy()), tmp_path), reason)


def test_sample_scores_mean_log_of_mean_absolute_value_by_type(dirs, answers, tmp_path) -> None:
    """The sample predicts 0: per type, MAE is the mean |constant|; the score the mean log."""
    by_type = answers["scalar_coupling_constant"].abs().groupby(answers["type"]).mean()
    expected = round(float(np.log(by_type).mean()), 5)
    report = grade_frame(
        COMP, dirs.private, pd.read_csv(dirs.public / "sample_submission.csv"), tmp_path
    )
    assert report.score == expected


def test_each_type_weighs_the_same_whatever_its_size(dirs, answers, tmp_path) -> None:
    """Errors of 0.1 on one type and 1 elsewhere: mean of log(0.1) and (T - 1) log(1) = 0."""
    first = answers["type"] == answers["type"].iloc[0]
    guess = answers[["id", "scalar_coupling_constant"]].copy()
    guess["scalar_coupling_constant"] += np.where(first, 0.1, -1.0)
    types = answers["type"].nunique()
    report = grade_frame(COMP, dirs.private, guess.sample(frac=1, random_state=0), tmp_path)
    assert report.score == round(float(np.log(0.1) / types), 5)


def test_an_exact_type_is_floored_at_1e_9_not_minus_infinity(dirs, answers, tmp_path) -> None:
    """MLE-bench's log(0) would make this -inf; Kaggle's floor keeps the reward finite."""
    perfect = answers[["id", "scalar_coupling_constant"]]
    report = grade_frame(COMP, dirs.private, perfect, tmp_path)
    assert report.score == round(float(np.log(1e-9)), 5) and report.gold_medal
    assert np.isfinite(report.normalized_score)
