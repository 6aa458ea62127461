"""google-quest-challenge: the spelling swap, broken submissions with their reason (a
constant column included: MLE-bench's NaN), and Spearman scores known in closed form."""

from __future__ import annotations

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.competitions.catalog.google_quest_challenge import RARE, TARGETS
from mle_gym.grading import grade
from tests.competitions.support import assert_invalid, grade_frame
from tests.fixtures.raw.google_quest_challenge import SPELLING_ROWS

COMP = get_competition("google-quest-challenge")
LABELS = list(TARGETS)


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "test.csv")


def test_layout_and_the_spelling_swap(dirs, answers) -> None:
    train = pd.read_csv(dirs.public / "train.csv")
    test = pd.read_csv(dirs.public / "test.csv")
    assert train.shape == (90, 41) and test.shape == (10, 11)
    assert list(answers.columns) == ["qa_id", *LABELS]
    # Both non-zero spelling rows fell in train; the first of them was swapped into test.
    swapped_in = SPELLING_ROWS[0] * 3 + 39
    assert answers.qa_id.iloc[0] == test.qa_id.iloc[0] == swapped_in
    assert answers[RARE].nunique() == 2 and (train[RARE] != 0).sum() == 1
    assert all(answers[c].nunique() > 1 for c in LABELS)


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda f: f.iloc[1:], r"1 test id\(s\) have no row"),
        (lambda f: f.drop(columns="answer_helpful"), r"missing column\(s\) 'answer_helpful'"),
        (lambda f: f.assign(category="x"), r"unexpected column\(s\) 'category'"),
        (lambda f: f.astype({RARE: object}).assign(**{RARE: "low"}), r"finite numbers"),
        (
            lambda f: f.assign(answer_helpful=0.5, question_well_written=1.0),
            r"'question_well_written', 'answer_helpful' hold the same value on every row",
        ),
    ],
)
def test_broken_submission_is_invalid_with_reason(answers, dirs, tmp_path, change, reason) -> None:
    assert_invalid(grade_frame(COMP, dirs.private, change(answers), tmp_path), reason)


def test_exact_and_reversed_rankings(dirs, answers, tmp_path) -> None:
    """Any increasing transform ranks like the answers (1); a decreasing one gives -1."""
    squared = answers.assign(**{c: answers[c] ** 2 + 5 for c in LABELS})
    assert grade_frame(COMP, dirs.private, squared, tmp_path).score == 1.0
    reversed_ = answers.assign(**{c: -answers[c] for c in LABELS})
    assert grade_frame(COMP, dirs.private, reversed_, tmp_path).score == -1.0


def test_sample_scores_the_rank_correlation_with_file_order(dirs, answers) -> None:
    """The sample ranks the rows in file order; pandas' rank correlation gives its score."""
    position = pd.Series(range(len(answers)), dtype=float)
    expected = sum(answers[c].corr(position, method="spearman") for c in LABELS) / len(LABELS)
    report = grade(COMP, dirs.public / "sample_submission.csv", dirs.private)
    assert report.score == pytest.approx(round(expected, 5))
    assert COMP.sample_score == -0.01016
