"""Root mean squared logarithmic error, averaged over the target columns.

With one target column this is the plain RMSLE; nomad2018 averages it over its two targets.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from mle_gym.grading.errors import InvalidSubmission
from mle_gym.grading.metrics import Metric


def _check_domain(column: str, values: np.ndarray) -> None:
    """log1p is undefined at or below -1; scikit-learn refuses such values, so do we."""
    bad = values[values <= -1]
    if len(bad):
        shown = ", ".join(repr(float(v)) for v in bad[:3])
        raise InvalidSubmission(
            f"column {column!r} must hold values greater than -1 for a logarithmic error; "
            f"found {len(bad)} such value(s), e.g. {shown}"
        )


def column_rmsle(truth: np.ndarray, predicted: np.ndarray) -> float:
    """sqrt(mean((log(1 + predicted) - log(1 + truth))^2))."""
    return float(np.sqrt(np.mean((np.log1p(predicted) - np.log1p(truth)) ** 2)))


def mean_column_rmsle(
    answers: pd.DataFrame, predictions: pd.DataFrame, targets: list[str]
) -> float:
    """RMSLE of each target column, then the unweighted mean over columns."""
    scores = []
    for col in targets:
        predicted = predictions[col].to_numpy(float)
        _check_domain(col, predicted)
        scores.append(column_rmsle(answers[col].to_numpy(float), predicted))
    return float(np.mean(scores))


METRICS: dict[str, Metric] = {"rmsle": mean_column_rmsle}
