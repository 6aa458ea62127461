"""Broken spaceship-titanic submissions are invalid, each with a precise reason."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.data import CompetitionDirs
from mle_gym.grading import check_submission, grade

COMP = get_competition("spaceship-titanic")


@pytest.fixture
def answers(spaceship_cache: Path) -> pd.DataFrame:
    return pd.read_csv(CompetitionDirs.of(COMP.id, spaceship_cache).private / "test.csv")


@pytest.fixture
def good(answers: pd.DataFrame) -> pd.DataFrame:
    return answers[["PassengerId", "Transported"]].copy()


def _grade(frame: pd.DataFrame | bytes, tmp_path: Path, spaceship_cache: Path):
    path = tmp_path / "submission.csv"
    if isinstance(frame, bytes):
        path.write_bytes(frame)
    else:
        frame.to_csv(path, index=False)
    return grade(COMP, path, CompetitionDirs.of(COMP.id, spaceship_cache).private)


CASES = {
    "missing rows": (lambda f: f.iloc[10:], r"10 test id\(s\) have no row"),
    "extra rows": (
        lambda f: pd.concat([f, pd.DataFrame({"PassengerId": ["9999_99"], "Transported": [True]})]),
        r"1 row\(s\) have ids that are not in the test set: '9999_99'",
    ),
    "duplicate rows": (lambda f: pd.concat([f, f.iloc[:2]]), r"2 duplicate row\(s\)"),
    "wrong columns": (
        lambda f: f.rename(columns={"Transported": "transported"}),
        r"missing column\(s\) 'Transported'",
    ),
    "no id column": (lambda f: f[["Transported"]], r"missing column\(s\) 'PassengerId'"),
    "NaN values": (
        lambda f: f.assign(Transported=[None] * 3 + list(f.Transported[3:])),
        r"3 empty or missing value\(s\)",
    ),
    "not booleans": (lambda f: f.assign(Transported=0.7), r"must hold True or False; found '0.7'"),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, good, tmp_path, spaceship_cache) -> None:
    mutate, reason = CASES[case]
    report = _grade(mutate(good), tmp_path, spaceship_cache)
    assert not report.valid_submission and report.score is None
    assert report.submission_exists
    assert report.normalized_score is None and not report.any_medal
    assert report.error is not None
    import re

    assert re.search(reason, report.error), report.error


def test_empty_and_binary_files_are_invalid(tmp_path, spaceship_cache) -> None:
    assert "empty" in _grade(b"", tmp_path, spaceship_cache).error
    report = _grade(b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe" * 50, tmp_path, spaceship_cache)
    assert not report.valid_submission


def test_missing_file_is_reported_as_absent(tmp_path, spaceship_cache) -> None:
    report = grade(
        COMP, tmp_path / "nope.csv", CompetitionDirs.of(COMP.id, spaceship_cache).private
    )
    assert not report.submission_exists and not report.valid_submission
    assert "no submission" in report.error


def test_order_case_and_extra_columns_do_not_matter(good, tmp_path, spaceship_cache) -> None:
    shuffled = good.sample(frac=1, random_state=1)
    shuffled["Transported"] = shuffled["Transported"].map({True: "true", False: "FALSE"})
    shuffled["note"] = "x"
    report = _grade(shuffled, tmp_path, spaceship_cache)
    assert report.score == 1.0
    assert report.warnings == ["ignored extra column(s): note"]


def test_check_submission_reveals_no_score(good, tmp_path, spaceship_cache) -> None:
    path = tmp_path / "s.csv"
    good.to_csv(path, index=False)
    private = CompetitionDirs.of(COMP.id, spaceship_cache).private
    assert check_submission(COMP, path, private) is None
    good.iloc[5:].to_csv(path, index=False)
    assert "have no row" in check_submission(COMP, path, private)
