"""Pearson correlation between predicted and true values (scipy's `pearsonr`).

A constant column of predictions has no defined correlation: scipy (and so MLE-bench)
returns NaN, which would make a NaN reward. We score it 0, "no linear relationship",
which is also what the constant sample submission is normalised against.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd

from mle_gym.grading.metrics import Metric


def column_pearson(truth: np.ndarray, predicted: np.ndarray) -> float:
    """scipy's Pearson r, or 0.0 where it is undefined (either side constant)."""
    from scipy.stats import pearsonr

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = float(pearsonr(truth, predicted)[0])
    return 0.0 if math.isnan(value) else value


def pearson_correlation(
    answers: pd.DataFrame, predictions: pd.DataFrame, targets: list[str]
) -> float:
    """Pearson r of each target column, averaged over the columns."""
    scores = [
        column_pearson(answers[c].to_numpy(float), predictions[c].to_numpy(float)) for c in targets
    ]
    return float(np.mean(scores))


METRICS: dict[str, Metric] = {"pearson_correlation": pearson_correlation}
