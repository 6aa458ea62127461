"""Multi-class log loss with the row-sum rule of MLE-bench's lmsys-chatbot-arena grader.

That grader refuses a submission unless every row's probabilities, summed and rounded to
six decimals, equal exactly 1: a stricter rule than the tolerance of the other multi-class
competitions (`log_loss.multiclass_log_loss`), which then computes the same loss.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from mle_gym.grading.errors import InvalidSubmission
from mle_gym.grading.metrics import Metric
from mle_gym.grading.metrics.log_loss import multiclass_log_loss

_EXAMPLES = 3


def _check_sums_round_to_one(predictions: pd.DataFrame, targets: list[str]) -> None:
    totals = predictions[targets].to_numpy(float).sum(axis=1)
    bad = np.round(totals, 6) != 1
    if bad.any():
        ids = predictions.drop(columns=targets).iloc[:, 0][bad]
        shown = [f"{i!r} (sum {t:.9g})" for i, t in zip(ids[:_EXAMPLES], totals[bad], strict=False)]
        more = int(bad.sum()) - len(shown)
        raise InvalidSubmission(
            f"{int(bad.sum())} row(s) have probabilities whose sum, rounded to 6 decimals, "
            f"is not 1: {', '.join(shown)}{f' and {more} more' if more > 0 else ''}"
        )


def log_loss_sum_rounds_to_one(
    answers: pd.DataFrame, predictions: pd.DataFrame, targets: list[str]
) -> float:
    """Cross-entropy against one-hot answers, after MLE-bench's six-decimal row-sum check."""
    _check_sums_round_to_one(predictions, targets)
    return multiclass_log_loss(answers, predictions, targets)


METRICS: dict[str, Metric] = {"log_loss_sum_rounds_to_one": log_loss_sum_rounds_to_one}
