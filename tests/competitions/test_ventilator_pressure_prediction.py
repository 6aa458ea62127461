"""ventilator-pressure-prediction: the split by breath, and MAE over the inspiratory phase."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.competitions.group_holdout import split_groups
from tests.competitions.support import assert_invalid, grade_frame

COMP = get_competition("ventilator-pressure-prediction")


@pytest.fixture(scope="module")
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "test.csv")


def test_split_by_breath_with_ids_from_one(dirs, answers) -> None:
    train = pd.read_csv(dirs.public / "train.csv")
    test = pd.read_csv(dirs.public / "test.csv")
    assert (train["breath_id"].nunique(), test["breath_id"].nunique()) == (27, 3)
    assert set(train["breath_id"]).isdisjoint(test["breath_id"])
    assert train["id"].tolist() == list(range(1, len(train) + 1))
    assert test["id"].tolist() == answers["id"].tolist() == list(range(1, 241))
    assert (test.groupby("breath_id").size() == 80).all()


def test_group_split_equals_shuffling_the_groupby_groups() -> None:
    """Keys out of order in the file, groups of uneven size: same rows, same order as
    shuffling the list of groupby groups and concatenating them (MLE-bench's way)."""
    from sklearn.model_selection import train_test_split

    rng = np.random.default_rng(3)
    rows = pd.DataFrame({"key": rng.integers(0, 40, 500), "value": np.arange(500)})
    groups = [group for _, group in rows.groupby("key")]
    expected = [pd.concat(part) for part in train_test_split(groups, test_size=0.1, random_state=0)]
    for got, want in zip(split_groups(rows, "key"), expected, strict=True):
        pd.testing.assert_frame_equal(got, want)


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda s: s.iloc[1:], "test id\\(s\\) have no row"),
        (lambda s: pd.concat([s, s.iloc[:1].assign(id="100000")]), "not in the test set"),
        (lambda s: pd.concat([s, s.iloc[:1]]), "duplicate row"),
        (lambda s: s.drop(columns="pressure"), "missing column"),
        (lambda s: s.assign(pressure="high"), "must hold finite numbers"),
        (lambda s: s.assign(pressure=""), "empty or missing value"),
    ],
)
def test_invalid_submissions_are_rejected(dirs, tmp_path, change, reason) -> None:
    sample = pd.read_csv(dirs.public / "sample_submission.csv", dtype=str)
    assert_invalid(grade_frame(COMP, dirs.private, change(sample.copy()), tmp_path), reason)


def test_sample_scores_the_mean_inspiratory_pressure(dirs, answers, tmp_path) -> None:
    """The sample predicts 0: its MAE is the mean |pressure| where u_out is 0."""
    expected = answers.loc[answers["u_out"] == 0, "pressure"].abs().mean()
    sample = pd.read_csv(dirs.public / "sample_submission.csv")
    assert grade_frame(COMP, dirs.private, sample, tmp_path).score == round(expected, 5)


def test_expiratory_rows_do_not_count(dirs, answers, tmp_path) -> None:
    """Off by 0.5 where scored, by 1e6 where not, in any row order: MAE 0.5."""
    off = np.where(answers["u_out"] == 0, 0.5, 1e6)
    guess = answers[["id"]].assign(pressure=answers["pressure"] + off)
    report = grade_frame(COMP, dirs.private, guess.sample(frac=1, random_state=0), tmp_path)
    assert report.score == 0.5
