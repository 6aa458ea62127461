"""movie-review-sentiment-analysis-kernels-only: zipped layout, rejected submissions, accuracy."""

from __future__ import annotations

import math
import zipfile

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.grading import grade
from tests.competitions.support import assert_invalid, grade_frame

COMP = get_competition("movie-review-sentiment-analysis-kernels-only")


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "answers.csv")


def _submission(answers: pd.DataFrame) -> pd.DataFrame:
    return answers[["PhraseId", "Sentiment"]]


def _zipped(path, member: str) -> pd.DataFrame:
    with zipfile.ZipFile(path) as zf:
        assert zf.namelist() == [member]
        with zf.open(member) as handle:
            return pd.read_csv(handle, sep="\t")


def test_layout(answers, dirs) -> None:
    assert sorted(p.name for p in dirs.public.iterdir()) == [
        "sampleSubmission.csv",
        "test.tsv.zip",
        "train.tsv.zip",
    ]
    train = _zipped(dirs.public / "train.tsv.zip", "train.tsv")
    test = _zipped(dirs.public / "test.tsv.zip", "test.tsv")
    assert list(train.columns) == ["PhraseId", "SentenceId", "Phrase", "Sentiment"]
    assert list(test.columns) == ["PhraseId", "SentenceId", "Phrase"]
    assert list(test["PhraseId"]) == list(answers["PhraseId"])
    assert len(test) == math.ceil(0.3 * (len(train) + len(test)))  # 30% held out
    assert not set(train["PhraseId"]) & set(test["PhraseId"])


def _with_first(frame: pd.DataFrame, value) -> pd.DataFrame:
    return frame.astype({"Sentiment": object}).assign(Sentiment=[value, *frame["Sentiment"][1:]])


CASES = {
    "missing rows": (lambda f: f.iloc[4:], r"4 test id\(s\) have no row"),
    "unknown phrase": (
        lambda f: pd.concat([f, f.iloc[:1].assign(PhraseId=999999)]),
        r"not in the test set: '999999'",
    ),
    "duplicate rows": (lambda f: pd.concat([f, f.iloc[:1]]), r"1 duplicate row\(s\)"),
    "target missing": (lambda f: f.drop(columns="Sentiment"), r"missing column\(s\) 'Sentiment'"),
    "empty label": (lambda f: _with_first(f, None), r"'Sentiment' has 1 empty or missing value"),
    "fractional label": (lambda f: _with_first(f, 2.5), r"found '2.5'"),
    "label as word": (lambda f: _with_first(f, "neutral"), r"found 'neutral'"),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, answers, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    report = grade_frame(COMP, dirs.private, mutate(_submission(answers)), tmp_path)
    assert_invalid(report, reason)


def test_floats_and_ids_read_as_integers_in_any_order(answers, dirs, tmp_path) -> None:
    frame = _submission(answers).astype(float).sample(frac=1, random_state=0)
    report = grade_frame(COMP, dirs.private, frame, tmp_path)
    assert report.score == 1.0 and report.warnings


def test_other_whole_numbers_count_as_wrong(answers, dirs, tmp_path) -> None:
    wrong = answers.index < 10
    frame = _submission(answers).assign(Sentiment=answers["Sentiment"].where(~wrong, 7))
    report = grade_frame(COMP, dirs.private, frame, tmp_path)
    assert report.score == round(1 - 10 / len(answers), 5)
    assert any("outside the classes" in w for w in report.warnings)


def test_sample_scores_the_share_of_neutral_phrases(answers, dirs, tmp_path) -> None:
    neutral = round(float((answers["Sentiment"] == 2).mean()), 5)
    constant = answers[["PhraseId"]].assign(Sentiment=2)
    assert grade_frame(COMP, dirs.private, constant, tmp_path).score == neutral
    assert grade(COMP, dirs.public / "sampleSubmission.csv", dirs.private).score == neutral
