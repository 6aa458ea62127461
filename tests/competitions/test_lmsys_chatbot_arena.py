"""lmsys-chatbot-arena: layout, rejected submissions (MLE-bench's row-sum rule), log loss."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.competitions.catalog.lmsys_chatbot_arena import OUTCOMES
from tests.competitions.support import assert_invalid, assert_scores_like_the_sample, grade_frame

COMP = get_competition("lmsys-chatbot-arena")
SPLIT = {"winner_model_a": 0.5, "winner_model_b": 0.3, "winner_tie": 0.2}


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "answers.csv")


def _constant(answers: pd.DataFrame, **probabilities: float) -> pd.DataFrame:
    return answers[["id"]].assign(**probabilities)


def test_layout(answers, dirs) -> None:
    train = pd.read_csv(dirs.public / "train.csv")
    test = pd.read_csv(dirs.public / "test.csv")
    assert list(test.columns) == ["id", "prompt", "response_a", "response_b"]
    assert list(train.columns) == list(answers.columns)
    assert "model_a" in train.columns and len(train) == 180
    assert list(test["id"]) == list(answers["id"])


CASES = {
    "missing rows": (lambda f: f.iloc[1:], r"1 test id\(s\) have no row"),
    "unknown id": (
        lambda f: pd.concat([f, f.iloc[:1].assign(id=1)]),
        r"not in the test set: '1'",
    ),
    "duplicate rows": (lambda f: pd.concat([f, f.iloc[:2]]), r"2 duplicate row\(s\)"),
    "tie missing": (lambda f: f.drop(columns="winner_tie"), r"missing column\(s\) 'winner_tie'"),
    "empty value": (
        lambda f: f.assign(winner_tie=[None, *f["winner_tie"][1:]]),
        r"'winner_tie' has 1 empty or missing value",
    ),
    "above one": (
        lambda f: f.assign(winner_model_a=1.2, winner_model_b=-0.2, winner_tie=0.0),
        r"'winner_model_a' must hold probabilities in \[0, 1\]; found '1.2'",
    ),
    "rows not summing to one": (
        lambda f: f.assign(winner_model_a=0.6),
        r"sum, rounded to 6 decimals, is not 1: .*\(sum 1.1\)",
    ),
    # accepted by the spooky-style tolerance (1.1e-5), refused by MLE-bench's rounding
    "thirds rounded to 6 decimals": (
        lambda f: f.assign(winner_model_a=0.333333, winner_model_b=0.333333, winner_tie=0.333333),
        r"is not 1: .*\(sum 0.999999\)",
    ),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, answers, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    frame = mutate(_constant(answers, **SPLIT))
    assert_invalid(grade_frame(COMP, dirs.private, frame, tmp_path), reason)


def test_sum_rounding_to_one_is_accepted(answers, dirs, tmp_path) -> None:
    frame = _constant(answers, **{**SPLIT, "winner_tie": 0.2000004})
    assert grade_frame(COMP, dirs.private, frame, tmp_path).valid_submission


def test_score_is_cross_entropy_in_any_row_and_column_order(answers, dirs, tmp_path) -> None:
    frame = _constant(answers, **SPLIT)[["winner_tie", "id", *OUTCOMES[:2]]].iloc[::-1]
    expected = -(answers[list(OUTCOMES)] * [math.log(p) for p in SPLIT.values()]).sum(axis=1)
    assert grade_frame(COMP, dirs.private, frame, tmp_path).score == round(expected.mean(), 5)


def test_perfect_answers_and_clipped_mistakes(answers, dirs, tmp_path) -> None:
    perfect = answers[["id", *OUTCOMES]]
    assert grade_frame(COMP, dirs.private, perfect, tmp_path).score == 0.0
    swapped = perfect.rename(
        columns={"winner_model_a": "winner_tie", "winner_tie": "winner_model_a"}
    )
    wrong = (swapped["winner_tie"] != perfect["winner_tie"]).mean()
    expected = -math.log(2.220446049250313e-16) * wrong
    assert grade_frame(COMP, dirs.private, swapped, tmp_path).score == round(expected, 5)


def test_sample_scores_log_three(answers, dirs, tmp_path) -> None:
    assert_scores_like_the_sample(
        COMP,
        dirs,
        _constant(answers, **dict.fromkeys(OUTCOMES, 1 / 3)),
        tmp_path,
        sample_file="sample_submission.csv",
        score=round(math.log(3), 5),
    )
