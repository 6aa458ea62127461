"""Mean over target columns of Spearman's rank correlation (Google QUEST), with scipy.

A column whose predictions are all equal has no ranking, so its correlation is undefined:
MLE-bench's grader then returns NaN as the score. We refuse such a submission instead,
naming the column, so that no episode ends with a NaN reward.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from mle_gym.grading.errors import InvalidSubmission
from mle_gym.grading.metrics import Metric


def mean_column_spearman(
    answers: pd.DataFrame, predictions: pd.DataFrame, targets: list[str]
) -> float:
    """Average of the per-column Spearman correlations between answers and predictions."""
    from scipy.stats import spearmanr

    constant = [c for c in targets if predictions[c].nunique() < 2]
    if constant:
        shown = ", ".join(repr(c) for c in constant[:3])
        more = f" and {len(constant) - 3} more" if len(constant) > 3 else ""
        raise InvalidSubmission(
            f"column(s) {shown}{more} hold the same value on every row; Spearman's "
            "correlation is undefined for a constant column, so vary the predictions"
        )
    scores = [spearmanr(answers[c], predictions[c]).statistic for c in targets]
    return float(np.mean(scores))


METRICS: dict[str, Metric] = {"mean_column_spearman": mean_column_spearman}
