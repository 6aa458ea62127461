"""Log loss (cross-entropy) over probability columns, as MLE-bench grades it.

MLE-bench calls scikit-learn's `log_loss` (version 1.5 or later). That version no longer
rescales rows to sum to one: it clips every probability to [eps, 1 - eps], eps being the
float64 machine epsilon, and averages the per-row loss. The multi-class competitions refuse
rows that do not sum to one instead, using `np.isclose(total, 1, atol=1e-6)` (whose default
relative tolerance of 1e-5 adds to the absolute one); the binary form has no such rule.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import xlogy

from mle_gym.grading.errors import InvalidSubmission
from mle_gym.grading.metrics import Metric

#: Probabilities are kept this far from 0 and 1, so a confident mistake costs about 36.
EPS = float(np.finfo(np.float64).eps)
#: MLE-bench's tolerances for a row sum: |total - 1| <= ROW_SUM_ATOL + ROW_SUM_RTOL.
ROW_SUM_ATOL = 1e-6
ROW_SUM_RTOL = 1e-5
_EXAMPLES = 3


def _mean_cross_entropy(truth: np.ndarray, probabilities: np.ndarray) -> float:
    """Mean over rows of -sum(truth * log(clipped probability))."""
    clipped = np.clip(probabilities, EPS, 1 - EPS)
    per_row = -xlogy(truth, clipped).sum(axis=1)
    return float(np.mean(per_row))


def _check_rows_sum_to_one(predictions: pd.DataFrame, targets: list[str]) -> None:
    """Raise for rows whose probabilities do not add up to one, naming a few ids."""
    totals = predictions[targets].to_numpy(float).sum(axis=1)
    bad = ~np.isclose(totals, 1.0, atol=ROW_SUM_ATOL, rtol=ROW_SUM_RTOL)
    if bad.any():
        ids = predictions.drop(columns=targets).iloc[:, 0][bad]
        count = int(bad.sum())
        pairs = zip(ids.iloc[:_EXAMPLES], totals[bad], strict=False)
        shown = [f"{i!r} (sum {t:.7g})" for i, t in pairs]
        more = f" and {count - len(shown)} more" if count > len(shown) else ""
        raise InvalidSubmission(
            f"{count} row(s) have probabilities that do not sum to one "
            f"(within {ROW_SUM_ATOL + ROW_SUM_RTOL:g}): {', '.join(shown)}{more}"
        )


def multiclass_log_loss(
    answers: pd.DataFrame, predictions: pd.DataFrame, targets: list[str]
) -> float:
    """Cross-entropy against one-hot answers; each row must be a distribution over `targets`."""
    _check_rows_sum_to_one(predictions, targets)
    truth = answers[targets].to_numpy(float)
    return _mean_cross_entropy(truth, predictions[targets].to_numpy(float))


def binary_log_loss(answers: pd.DataFrame, predictions: pd.DataFrame, targets: list[str]) -> float:
    """Log loss of the probability of the positive class (answers 0 or 1), mean over columns."""
    losses = []
    for column in targets:
        positive = predictions[column].to_numpy(float)
        label = answers[column].to_numpy(float)
        truth = np.column_stack([1 - label, label])
        losses.append(_mean_cross_entropy(truth, np.column_stack([1 - positive, positive])))
    return float(np.mean(losses))


METRICS: dict[str, Metric] = {
    "multiclass_log_loss": multiclass_log_loss,
    "binary_log_loss": binary_log_loss,
}
