"""predict-volcanic-eruptions-ingv-oe: layout, rejected submissions, MAE rounded half to even."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from tests.competitions.support import assert_invalid, grade_frame

COMP = get_competition("predict-volcanic-eruptions-ingv-oe")


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "test.csv")


def test_each_segment_log_sits_in_its_split_as_a_link_to_the_raw_file(answers, dirs) -> None:
    train = pd.read_csv(dirs.public / "train.csv")
    for folder, part in (("train", train), ("test", answers)):
        names = sorted(p.name for p in (dirs.public / folder).iterdir())
        assert names == sorted(f"{s}.csv" for s in part["segment_id"])
    raw_log = dirs.raw / "train" / f"{answers['segment_id'].iloc[0]}.csv"
    public_log = dirs.public / "test" / raw_log.name
    assert os.path.samefile(raw_log, public_log)
    assert len(answers) == 4 and len(train) == 36


CASES = {
    "missing segment": (lambda f: f.iloc[1:], r"1 test id\(s\) have no row"),
    "training segment": (
        lambda f: pd.concat([f, pd.DataFrame({"segment_id": [5], "time_to_eruption": [1]})]),
        r"ids that are not in the test set: '5'",
    ),
    "duplicate row": (lambda f: pd.concat([f, f.iloc[:1]]), r"1 duplicate row\(s\)"),
    "no target column": (
        lambda f: f.rename(columns={"time_to_eruption": "time"}),
        r"missing column\(s\) 'time_to_eruption'",
    ),
    "empty value": (
        lambda f: f.assign(time_to_eruption=[None, 1.0, 2.0, 3.0]),
        r"'time_to_eruption' has 1 empty or missing value\(s\)",
    ),
    "not a number": (
        lambda f: f.astype({"time_to_eruption": object}).assign(time_to_eruption="soon"),
        r"'time_to_eruption' must hold finite numbers; found 'soon'",
    ),
    "infinite": (
        lambda f: f.assign(time_to_eruption=np.inf),
        r"'time_to_eruption' must hold finite numbers",
    ),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, answers, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    assert_invalid(grade_frame(COMP, dirs.private, mutate(answers), tmp_path), reason)


@pytest.mark.parametrize(("off_by", "score"), [(2.0, 0.0), (6.0, 2.0), (10.0, 2.0), (11.0, 3.0)])
def test_mae_is_rounded_half_to_even(off_by, score, answers, dirs, tmp_path) -> None:
    # four test segments: one prediction off by `off_by` gives an MAE of off_by / 4
    shifted = answers.astype({"time_to_eruption": float})
    shifted.loc[0, "time_to_eruption"] += off_by
    shuffled = shifted.sample(frac=1, random_state=0)
    assert grade_frame(COMP, dirs.private, shuffled, tmp_path).score == score


def test_sample_scores_the_rounded_mean_time(answers, dirs, tmp_path) -> None:
    sample = pd.read_csv(dirs.public / "sample_submission.csv")
    assert set(sample["time_to_eruption"]) == {0}
    expected = float(round(answers["time_to_eruption"].mean()))
    report = grade_frame(COMP, dirs.private, sample, tmp_path)
    assert report.score == expected
    assert COMP.sample_score == 24402200.0
