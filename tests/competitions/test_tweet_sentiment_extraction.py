"""tweet-sentiment-extraction: layout, rejected submissions, Jaccard scores as MLE-bench's."""

from __future__ import annotations

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from tests.competitions.support import assert_invalid, assert_scores_like_the_sample, grade_frame

COMP = get_competition("tweet-sentiment-extraction")


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "test.csv", dtype=str, keep_default_na=False)


def _submission(answers: pd.DataFrame) -> pd.DataFrame:
    return answers[["textID", "selected_text"]]


def test_layout(answers, dirs) -> None:
    train = pd.read_csv(dirs.public / "train.csv", keep_default_na=False)
    test = pd.read_csv(dirs.public / "test.csv")
    assert list(train.columns) == ["textID", "text", "selected_text", "sentiment"]
    assert list(test.columns) == ["textID", "text", "sentiment"]
    assert list(test["textID"]) == list(answers["textID"])
    assert len(test) == 20 and len(train) == 180
    assert "" in set(train["text"])  # the empty tweet stays in train, as in the real split


CASES = {
    "missing rows": (lambda f: f.iloc[3:], r"3 test id\(s\) have no row"),
    "unknown id": (
        lambda f: pd.concat([f, f.iloc[:1].assign(textID="0000000000")]),
        r"not in the test set: '0000000000'",
    ),
    "duplicate rows": (lambda f: pd.concat([f, f.iloc[:2]]), r"2 duplicate row\(s\)"),
    "target missing": (
        lambda f: f.drop(columns="selected_text"),
        r"missing column\(s\) 'selected_text'",
    ),
    "id renamed": (lambda f: f.rename(columns={"textID": "id"}), r"missing column\(s\) 'textID'"),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, answers, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    report = grade_frame(COMP, dirs.private, mutate(_submission(answers)), tmp_path)
    assert_invalid(report, reason)


def test_case_and_spacing_do_not_matter(answers, dirs, tmp_path) -> None:
    frame = _submission(answers).assign(selected_text="  " + answers["selected_text"].str.upper())
    assert grade_frame(COMP, dirs.private, frame.iloc[::-1], tmp_path).score == 1.0


def test_one_extra_word_scores_words_over_words_plus_one(answers, dirs, tmp_path) -> None:
    frame = _submission(answers).assign(selected_text=answers["selected_text"] + " zebra")
    sizes = [len(set(text.lower().split())) for text in answers["selected_text"]]
    expected = sum(n / (n + 1) for n in sizes) / len(sizes)
    assert grade_frame(COMP, dirs.private, frame, tmp_path).score == round(expected, 5)


def test_half_right_rows(answers, dirs, tmp_path) -> None:
    wrong = answers["selected_text"].where(answers.index % 2 == 0, "zebra")
    frame = _submission(answers).assign(selected_text=wrong)
    assert grade_frame(COMP, dirs.private, frame, tmp_path).score == 0.5


@pytest.mark.parametrize("nothing", ["", "NA", "None", "nan"])
def test_missing_spellings_select_nothing_like_the_sample(nothing, answers, dirs, tmp_path) -> None:
    assert_scores_like_the_sample(
        COMP,
        dirs,
        answers[["textID"]].assign(selected_text=nothing),
        tmp_path,
        sample_file="sample_submission.csv",
        score=0.0,
    )
