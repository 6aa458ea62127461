"""text-normalization (English): broken submissions are rejected; empty and unicode strings
grade like MLE-bench; the sample scores the share of tokens left unchanged."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mle_gym.competitions import Competition, get_competition
from mle_gym.data import CompetitionDirs
from mle_gym.grading import grade
from mle_gym.grading.validation import read_as_text
from tests.competitions.support import assert_invalid, grade_frame

COMP = get_competition("text-normalization-challenge-english-language")


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return read_as_text(dirs.private / "answers.csv")


CASES = {
    "missing rows": (lambda f: f.iloc[3:], r"3 test id\(s\) have no row"),
    "unknown token": (
        lambda f: pd.concat([f, f.iloc[:1].assign(id="9999_0")]),
        r"ids that are not in the test set: '9999_0'",
    ),
    "ids with a dash": (
        lambda f: f.assign(id=f["id"].str.replace("_", "-")),
        r"ids that are not in the test set: '\d+-\d+'",
    ),
    "duplicate rows": (lambda f: pd.concat([f, f.iloc[:2]]), r"2 duplicate row\(s\)"),
    "after column missing": (
        lambda f: f.rename(columns={"after": "before"}),
        r"missing column\(s\) 'after'",
    ),
    "no header": (
        lambda f: f.set_axis(list(f.iloc[0]), axis=1).iloc[1:],
        r"missing column\(s\) 'id', 'after'",
    ),
}


def check_broken_submission(
    comp: Competition,
    case: str,
    answers: pd.DataFrame,
    dirs: CompetitionDirs,
    tmp_path: Path,
) -> None:
    mutate, reason = CASES[case]
    assert_invalid(grade_frame(comp, dirs.private, mutate(answers), tmp_path), reason)


def check_exotic_strings_grade_like_mlebench(
    comp: Competition, answers: pd.DataFrame, dirs: CompetitionDirs, tmp_path: Path
) -> None:
    """The answers round-trip exactly (unicode, quotes, commas, empty cells); any pandas
    missing spelling matches an empty answer, as MLE-bench's reading makes them equal."""
    empty = answers["after"] == ""
    assert empty.any() and (~empty).any()
    assert grade_frame(comp, dirs.private, answers, tmp_path).score == 1.0
    respelled = answers.assign(after=answers["after"].mask(empty, "None"))
    assert grade_frame(comp, dirs.private, respelled, tmp_path).score == 1.0
    wrong_empty = answers.assign(after=answers["after"].mask(empty, "-"))
    expected = round(1 - empty.mean(), 5)
    assert grade_frame(comp, dirs.private, wrong_empty, tmp_path).score == pytest.approx(expected)


def _as_mlebench_reads(frame: pd.DataFrame, column: str) -> list[str]:
    """Cells read with pandas' defaults and cast to str: a missing cell is 'nan'."""
    return [str(v) for v in frame[column].astype(object)]


def check_sample_scores_unchanged_share(
    comp: Competition, prefix: str, dirs: CompetitionDirs
) -> None:
    """The sample copies `before`, so it scores the share of test tokens whose `after`
    equals their `before`, both read as MLE-bench reads them."""
    name = f"{prefix}_test_2.csv"
    with zipfile.ZipFile(dirs.public / f"{name}.zip") as zf:
        test = pd.read_csv(zf.open(name))
    answers = pd.read_csv(dirs.private / "answers.csv")
    ids = test["sentence_id"].astype(str) + "_" + test["token_id"].astype(str)
    assert ids.tolist() == answers["id"].tolist()
    before, after = _as_mlebench_reads(test, "before"), _as_mlebench_reads(answers, "after")
    expected = np.mean(np.array(before) == np.array(after))
    assert 0 < expected < 1
    report = grade(comp, dirs.public / comp.submission.sample_file, dirs.private)
    assert report.score == pytest.approx(round(expected, 5))


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, answers, dirs, tmp_path) -> None:
    check_broken_submission(COMP, case, answers, dirs, tmp_path)


def test_exotic_strings_grade_like_mlebench(answers, dirs, tmp_path) -> None:
    check_exotic_strings_grade_like_mlebench(COMP, answers, dirs, tmp_path)


def test_sample_scores_unchanged_share(dirs) -> None:
    check_sample_scores_unchanged_share(COMP, "en", dirs)


def test_public_sample_is_the_zipped_sample_unquoted(dirs, tmp_path) -> None:
    with zipfile.ZipFile(dirs.public / "en_sample_submission_2.csv.zip") as zf:
        zf.extract("en_sample_submission_2.csv", tmp_path)
    zipped = read_as_text(tmp_path / "en_sample_submission_2.csv")
    pd.testing.assert_frame_equal(read_as_text(dirs.public / "sample_submission.csv"), zipped)
    assert (dirs.public / "sample_submission.csv").read_text().startswith("id,after\n")
