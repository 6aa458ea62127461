"""Accuracy, ROC AUC and RMSE: the metrics many competitions share."""

from __future__ import annotations

import numpy as np
import pandas as pd

from mle_gym.grading.metrics import Metric
from mle_gym.grading.metrics.binary_auc import binary_roc_auc
from mle_gym.grading.metrics.by_column import score_columns


def accuracy(answers: pd.DataFrame, predictions: pd.DataFrame, targets: list[str]) -> float:
    """Share of rows whose every target column matches exactly."""
    hits = np.ones(len(answers), dtype=bool)
    for col in targets:
        # Compared as stored (Arrow text compares without making Python strings).
        hits &= np.asarray(answers[col].array == predictions[col].array, dtype=bool)
    return float(hits.mean())


def roc_auc(answers: pd.DataFrame, predictions: pd.DataFrame, targets: list[str]) -> float:
    """Area under the ROC curve, averaged over target columns (macro)."""
    truth = [answers[c].to_numpy() for c in targets]
    guess = [predictions[c].to_numpy() for c in targets]
    scores = score_columns(lambda k: binary_roc_auc(truth[k], guess[k]), len(targets))
    return float(np.mean(scores))


def rmse(answers: pd.DataFrame, predictions: pd.DataFrame, targets: list[str]) -> float:
    """Root mean squared error over all target cells."""
    diff = answers[targets].to_numpy(float) - predictions[targets].to_numpy(float)
    return float(np.sqrt(np.mean(diff**2)))


METRICS: dict[str, Metric] = {
    "accuracy": accuracy,
    "roc_auc": roc_auc,
    "rmse": rmse,
}
