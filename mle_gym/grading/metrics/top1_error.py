"""Top-1 classification error over integer class ids, as MLE-bench grades iNaturalist 2019.

Kaggle's iNaturalist submissions listed several guesses per image, space-separated; only
the first counts for top-1. MLE-bench keeps an integer cell as it is, takes the first
space-separated token of a text cell, casts it to `int` and returns `1 - accuracy`. We
read the first whitespace-separated token of every cell the same way (a plain integer is
its own first token) and refuse a cell whose first token is not an integer, where
MLE-bench's cast fails. Plain NumPy suffices: the metric is a count of matches.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from mle_gym.grading.errors import InvalidSubmission
from mle_gym.grading.metrics import Metric


def first_classes(cells: pd.Series, column: str) -> np.ndarray:
    """The integer first token of each cell, or `InvalidSubmission` naming bad cells."""
    tokens = cells.astype(str).map(lambda cell: next(iter(cell.split()), ""))
    good = tokens.str.fullmatch(r"[+-]?[0-9]+")
    if not good.all():
        shown = ", ".join(repr(str(v)) for v in cells[~good].iloc[:3])
        raise InvalidSubmission(
            f"column {column!r} must start each cell with an integer class id (further "
            f"space-separated guesses are ignored); found {shown}"
        )
    return tokens.astype(np.int64).to_numpy()


def top1_error(answers: pd.DataFrame, predictions: pd.DataFrame, targets: list[str]) -> float:
    """Share of rows whose first guess is not the true class."""
    (target,) = targets
    truth = first_classes(answers[target], target)
    guessed = first_classes(predictions[target], target)
    return float(1 - np.mean(truth == guessed))


METRICS: dict[str, Metric] = {"top1_error": top1_error}
