"""Kaggle's Kullback-Leibler divergence metric, micro-averaged, as MLE-bench grades HMS.

For each row, sum over classes of y * log(y / p) with y the true distribution and p the
prediction clipped to [1e-15, 1 - 1e-15]; classes with y = 0 add nothing; the score is
the mean over rows. scipy's `rel_entr` computes the per-cell term (it may differ from
Kaggle's pandas code in the last bit of a cell, far below the 5 decimals reported).
Rows must sum to one after rounding to 5 decimals, the rule MLE-bench applies first.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from mle_gym.grading.errors import InvalidSubmission
from mle_gym.grading.metrics import Metric

#: Predictions are kept this far from 0 and 1, as Kaggle's metric does.
EPSILON = 1e-15
#: Row sums are compared with 1 after rounding to this many decimals.
ROW_SUM_DECIMALS = 5
_EXAMPLES = 3


def _check_rows_sum_to_one(predictions: pd.DataFrame, targets: list[str]) -> None:
    totals = predictions[targets].to_numpy(float).sum(axis=1)
    bad = np.array([round(float(t), ROW_SUM_DECIMALS) != 1 for t in totals], dtype=bool)
    if bad.any():
        ids = predictions.drop(columns=targets).iloc[:, 0][bad]
        shown = [f"{i!r} (sum {t:.7g})" for i, t in zip(ids[:_EXAMPLES], totals[bad], strict=False)]
        more = f" and {int(bad.sum()) - len(shown)} more" if bad.sum() > len(shown) else ""
        raise InvalidSubmission(
            f"{int(bad.sum())} row(s) have probabilities that do not sum to 1 "
            f"(rounded to {ROW_SUM_DECIMALS} decimals): {', '.join(shown)}{more}"
        )


def kl_divergence(answers: pd.DataFrame, predictions: pd.DataFrame, targets: list[str]) -> float:
    """Mean over rows of KL(answer row || clipped prediction row); rows must sum to one."""
    from scipy.special import rel_entr

    _check_rows_sum_to_one(predictions, targets)
    truth = answers[targets].to_numpy(float)
    clipped = np.clip(predictions[targets].to_numpy(float), EPSILON, 1 - EPSILON)
    return float(np.mean(rel_entr(truth, clipped).sum(axis=1)))


METRICS: dict[str, Metric] = {"kl_divergence": kl_divergence}
