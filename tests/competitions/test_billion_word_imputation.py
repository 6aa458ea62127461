"""billion-word-imputation: the streamed split's shape, broken submissions with their reason
(cells pandas reads as missing included), and edit distances known in closed form."""

from __future__ import annotations

import zipfile

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.grading.validation import read_as_text
from tests.competitions.support import assert_invalid, grade_frame
from tests.fixtures.raw.billion_word_imputation import LINES

COMP = get_competition("billion-word-imputation")


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return read_as_text(dirs.private / "test.csv")


def _member(dirs, name: str) -> str:
    with zipfile.ZipFile(dirs.public / f"{name}.zip") as zf:
        return zf.read(name).decode("utf-8")


def test_each_test_sentence_lost_one_inner_word(dirs, answers) -> None:
    train = _member(dirs, "train_v2.txt").splitlines()
    assert len(train) + len(answers) == LINES and 10 < len(answers) < 60
    public = pd.read_csv(dirs.public / "sample_submission.csv", dtype=str)
    assert public.equals(pd.read_csv(dirs.private / "sample_submission.csv", dtype=str))
    assert _member(dirs, "test_v2.txt") == (dirs.private / "sample_submission.csv").read_text()
    for full, short in zip(answers.sentence, public.sentence, strict=True):
        words, left = full.split(), short.split()
        assert len(left) == len(words) - 1 > 1
        assert left[0] == words[0] and left[-1] == words[-1]
        assert any(words[:i] + words[i + 1 :] == left for i in range(1, len(words) - 1))
    assert answers.sentence.str.contains('"').any()


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda f: f.iloc[1:], r"1 test id\(s\) have no row"),
        (lambda f: pd.concat([f, f.iloc[:1].assign(id="99999")]), r"not in the test set"),
        (lambda f: f.rename(columns={"sentence": "text"}), r"missing column\(s\) 'sentence'"),
        (
            lambda f: f.assign(sentence=["NA", "", *f.sentence[2:]]),
            r"2 'sentence' cell\(s\) are empty or read as missing",
        ),
    ],
)
def test_broken_submission_is_invalid_with_reason(answers, dirs, tmp_path, change, reason) -> None:
    assert_invalid(grade_frame(COMP, dirs.private, change(answers), tmp_path), reason)


def test_sample_costs_the_missing_words_and_their_spaces(dirs, answers, tmp_path) -> None:
    """Leaving a sentence short of a word costs len(word) + 1 (the word and one space)."""
    public = read_as_text(dirs.public / "sample_submission.csv")
    expected = (answers.sentence.str.len() - public.sentence.str.len()).mean()
    report = grade_frame(COMP, dirs.private, public, tmp_path)
    assert report.score == pytest.approx(round(expected, 5)) and not report.any_medal
    assert COMP.sample_score == 5.56118


def test_exact_and_one_edit_sentences(dirs, answers, tmp_path) -> None:
    assert grade_frame(COMP, dirs.private, answers, tmp_path).score == 0.0
    dropped_dot = answers.assign(sentence=answers.sentence.str[:-1])
    assert grade_frame(COMP, dirs.private, dropped_dot, tmp_path).score == 1.0
