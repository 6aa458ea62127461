"""MLE-bench's micro F1 for Natural Questions: parsing, the per-row rule, scikit-learn."""

from __future__ import annotations

import pandas as pd
import pytest
from sklearn.metrics import f1_score

from mle_gym.grading.errors import InvalidSubmission
from mle_gym.grading.metrics import METRICS
from mle_gym.grading.metrics.natural_questions import agreement_pairs, parse_answer

METRIC = METRICS["nq_answer_micro_f1"]


@pytest.mark.parametrize(
    ("text", "parsed"),
    [("6:18", (6, 18)), (" 6 : 18 ", (6, 18)), ("+6:018", (6, 18)), ("YES", "YES"), ("", "")],
)
def test_parse_answer_reads_like_python_int(text: str, parsed) -> None:
    assert parse_answer(text) == parsed


@pytest.mark.parametrize("text", ["yes", "6-18", "6:", "1:2:3", "a:b", "NONE"])
def test_parse_answer_refuses_other_text(text: str) -> None:
    with pytest.raises(ValueError):
        parse_answer(text)


def test_the_four_outcomes_of_a_row() -> None:
    accepted = pd.Series(["3:5", "3:5", "", "", "1:2 YES"])
    predicted = pd.Series(["3:5", "3:6", "", "YES", "YES"])
    # right answer (1,1); wrong answer (0,1); correct blank (0,0); answer where none (0,1)
    assert agreement_pairs(accepted, predicted) == ([1, 0, 0, 0, 1], [1, 1, 0, 1, 1])
    assert agreement_pairs(pd.Series(["3:5"]), pd.Series([""])) == ([1], [0])  # missed


def test_score_is_sklearn_micro_f1_which_is_row_accuracy() -> None:
    ids = [str(i) for i in range(6)]
    answers = pd.DataFrame({"id": ids, "p": ["3:5", "3:5", "", "", "1:2 YES", "7:9"]})
    predictions = pd.DataFrame({"id": ids, "p": ["3:5", "3:6", "", "YES", "YES", "nan"]})
    truth, guessed = [1, 0, 0, 0, 1, 1], [1, 1, 0, 1, 1, 0]
    expected = f1_score(truth, guessed, average="micro")
    assert METRIC(answers, predictions, ["p"]) == pytest.approx(expected) == pytest.approx(3 / 6)


def test_unreadable_prediction_is_invalid() -> None:
    frame = pd.DataFrame({"id": ["a"], "p": ["maybe"]})
    with pytest.raises(InvalidSubmission, match="unreadable answer 'maybe'"):
        METRIC(frame.assign(p=""), frame, ["p"])
