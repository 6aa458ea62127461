"""tabular-playground-series-dec-2021: broken submissions are rejected; the sample's score."""

from __future__ import annotations

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.competitions.catalog.tabular_playground_series_dec_2021 import SAMPLE_COVER_TYPE
from mle_gym.grading import grade
from tests.competitions.support import assert_invalid, grade_frame

COMP = get_competition("tabular-playground-series-dec-2021")


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "test.csv")[["Id", "Cover_Type"]]


CASES = {
    "missing rows": (lambda f: f.iloc[4:], r"4 test id\(s\) have no row"),
    "unknown id": (
        lambda f: pd.concat([f, pd.DataFrame({"Id": [-1], "Cover_Type": [2]})]),
        r"ids that are not in the test set: '-1'",
    ),
    "duplicate rows": (lambda f: pd.concat([f, f.iloc[:2]]), r"2 duplicate row\(s\)"),
    "lower-case header": (lambda f: f.rename(columns={"Id": "id"}), r"missing column\(s\) 'Id'"),
    "target missing": (lambda f: f[["Id"]], r"missing column\(s\) 'Cover_Type'"),
    "empty value": (
        lambda f: f.assign(Cover_Type=[None, *list(f.Cover_Type[1:])]),
        r"'Cover_Type' has 1 empty or missing value\(s\)",
    ),
    "fractional class": (
        lambda f: f.assign(Cover_Type=2.5),
        r"must hold one of '1', '2', '3'.*found '2.5'",
    ),
    "class as word": (lambda f: f.assign(Cover_Type="spruce"), r"found 'spruce'"),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, answers, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    assert_invalid(grade_frame(COMP, dirs.private, mutate(answers), tmp_path), reason)


def test_a_class_absent_from_the_test_split_may_still_be_predicted(answers, dirs, tmp_path):
    assert 5 not in set(answers["Cover_Type"])
    report = grade_frame(COMP, dirs.private, answers.assign(Cover_Type=5), tmp_path)
    assert report.valid_submission and report.score == 0.0


def test_sample_scores_the_share_of_its_constant_class(answers, dirs) -> None:
    report = grade(COMP, dirs.public / "sample_submission.csv", dirs.private)
    share = (answers["Cover_Type"] == SAMPLE_COVER_TYPE).mean()
    assert report.score == pytest.approx(round(share, 5))
    assert 0 < COMP.sample_score < 1 and COMP.sample_score < COMP.thresholds.median
