"""Mean Levenshtein (character edit) distance between predicted and true strings, with
rapidfuzz (the library python-Levenshtein, which MLE-bench calls, is built on).

MLE-bench reads the submission with pandas' defaults, so a cell pandas takes for missing
(empty, `NA`, `null`, ...) reaches the distance function as NaN, which fails and makes the
whole submission invalid. We refuse such cells too, but say which rows hold them.
"""

from __future__ import annotations

import pandas as pd

from mle_gym.grading.errors import InvalidSubmission
from mle_gym.grading.metrics import Metric
from mle_gym.grading.metrics.text_accuracy import PANDAS_MISSING


def _refuse_missing(predictions: pd.DataFrame, column: str) -> None:
    missing = predictions[column].isin(PANDAS_MISSING)
    if missing.any():
        ids = predictions.loc[missing].iloc[:3, 0].tolist()
        raise InvalidSubmission(
            f"{int(missing.sum())} {column!r} cell(s) are empty or read as missing "
            f"(e.g. `NA`, `null`) by MLE-bench's pandas, which cannot grade them; "
            f"first ids: {', '.join(map(str, ids))}"
        )


def mean_levenshtein(answers: pd.DataFrame, predictions: pd.DataFrame, targets: list[str]) -> float:
    """Average over rows of the edit distance of the (single) target column."""
    from rapidfuzz.distance import Levenshtein

    (column,) = targets
    _refuse_missing(predictions, column)
    pairs = zip(answers[column], predictions[column], strict=True)
    distances = [Levenshtein.distance(truth, predicted) for truth, predicted in pairs]
    return sum(distances) / len(distances)


METRICS: dict[str, Metric] = {"mean_levenshtein": mean_levenshtein}
