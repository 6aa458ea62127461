"""Quadratic weighted kappa: agreement between two raters on an ordinal scale."""

from __future__ import annotations

import numpy as np
import pandas as pd

from mle_gym.grading.metrics import Metric


def quadratic_kappa(truth: np.ndarray, predicted: np.ndarray) -> float:
    """Cohen's kappa with quadratic weights, as scikit-learn defines it.

    The rating scale is the sorted set of values either rater used, and a disagreement
    costs the squared distance between the two values' positions on that scale (not
    between the values themselves). When both raters give one and the same rating to
    everything, the score is undefined and NaN is returned, as scikit-learn does.
    """
    scale, codes = np.unique(np.concatenate([truth, predicted]), return_inverse=True)
    size = len(scale)
    truth_codes, predicted_codes = codes[: len(truth)], codes[len(truth) :]
    observed = np.zeros((size, size))
    np.add.at(observed, (truth_codes, predicted_codes), 1.0)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / observed.sum()
    positions = np.arange(size)
    weights = (positions[:, None] - positions[None, :]) ** 2
    chance = float((weights * expected).sum())
    if chance == 0:
        return float("nan")
    return 1.0 - float((weights * observed).sum()) / chance


def quadratic_weighted_kappa(
    answers: pd.DataFrame, predictions: pd.DataFrame, targets: list[str]
) -> float:
    """Kappa per target column (ratings read as numbers), averaged over the columns."""
    scores = [
        quadratic_kappa(
            pd.to_numeric(answers[c]).to_numpy(), pd.to_numeric(predictions[c]).to_numpy()
        )
        for c in targets
    ]
    return float(np.mean(scores))


METRICS: dict[str, Metric] = {"quadratic_weighted_kappa": quadratic_weighted_kappa}
