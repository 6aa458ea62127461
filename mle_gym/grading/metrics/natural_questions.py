"""Micro F1 of long and short answers to Natural Questions, as MLE-bench grades
tensorflow2-question-answering (its own reading of Kaggle's rule; the medal thresholds
were set against it).

Every submission row (`<id>_long` or `<id>_short`) becomes one binary pair: the prediction
is 1 when the row names an answer; the truth is 1 when that answer is among the accepted
ones, or, for a blank row, when some answer exists. scikit-learn's micro-averaged F1 over
these pairs (both classes counted) is the share of rows where the two agree: a correct
answer or a correct blank. The answers hold, per row, the accepted answers separated by
spaces (`start:end` token spans, `YES`, `NO`), empty when there is none.

Predictions are read as MLE-bench reads them: pandas' missing-value spellings are blank,
surrounding spaces are dropped, `start:end` is parsed with Python's `int` on both sides,
and anything else but `YES`, `NO` or blank makes the submission invalid.
"""

from __future__ import annotations

import pandas as pd

from mle_gym.grading.errors import InvalidSubmission
from mle_gym.grading.metrics import Metric
from mle_gym.grading.metrics.text_accuracy import PANDAS_MISSING

Answer = tuple[int, int] | str


def parse_answer(text: str) -> Answer:
    """A token span as (start, end), or `YES`/`NO`/'' as they are; raises ValueError."""
    answer = text.strip()
    parts = answer.split(":")
    if len(parts) == 2:
        return int(parts[0]), int(parts[1])
    if answer in ("YES", "NO", ""):
        return answer
    raise ValueError(answer)


def _predictions(cells: pd.Series) -> list[Answer]:
    parsed = []
    for cell in cells.astype(str):
        try:
            parsed.append(parse_answer("" if cell in PANDAS_MISSING else cell))
        except ValueError:
            raise InvalidSubmission(
                f"unreadable answer {cell!r}: write start:end token indices (e.g. 6:18), "
                "YES, NO, or leave the cell empty"
            ) from None
    return parsed


def agreement_pairs(accepted: pd.Series, predicted: pd.Series) -> tuple[list[int], list[int]]:
    """(truth, prediction) bits per row, by MLE-bench's TP/FP/FN rule."""
    truth, guessed = [], []
    for valid_text, answer in zip(accepted.astype(str), _predictions(predicted), strict=True):
        valid = [parse_answer(v) for v in valid_text.split()]
        guessed.append(int(answer != ""))
        truth.append(int(answer in valid) if answer != "" else int(bool(valid)))
    return truth, guessed


def answer_micro_f1(answers: pd.DataFrame, predictions: pd.DataFrame, targets: list[str]) -> float:
    """scikit-learn's micro F1 over the rows' bits, pooled over the target columns."""
    from sklearn.metrics import f1_score

    truth, guessed = [], []
    for col in targets:
        column_truth, column_guessed = agreement_pairs(answers[col], predictions[col])
        truth += column_truth
        guessed += column_guessed
    return float(f1_score(truth, guessed, average="micro"))


METRICS: dict[str, Metric] = {"nq_answer_micro_f1": answer_micro_f1}
