"""Column-wise ROC AUC that skips rows the answers mark as unscored (jigsaw toxic comments).

Kaggle released the test labels with every column set to -1 on rows that were never scored;
MLE-bench drops the rows whose labels sum below zero and averages the per-column AUCs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from mle_gym.grading.metrics import Metric
from mle_gym.grading.metrics.binary_auc import binary_roc_auc
from mle_gym.grading.metrics.by_column import score_columns


def scored_rows(answers: pd.DataFrame, targets: list[str]) -> np.ndarray:
    """Mask of rows that count: an unscored row has -1 in every target column."""
    return answers[targets].to_numpy(float).sum(axis=1) >= 0


def roc_auc_scored_rows(
    answers: pd.DataFrame, predictions: pd.DataFrame, targets: list[str]
) -> float:
    """Macro ROC AUC over the target columns, on the scored rows only."""
    keep = scored_rows(answers, targets)
    truth = answers.loc[keep, targets].to_numpy(float)
    scores = predictions.loc[keep, targets].to_numpy(float)
    # scikit-learn's macro average: each column's AUC, then their plain mean in column order.
    per_column = score_columns(lambda k: binary_roc_auc(truth[:, k], scores[:, k]), len(targets))
    return float(np.average(per_column))


METRICS: dict[str, Metric] = {"roc_auc_scored_rows": roc_auc_scored_rows}
