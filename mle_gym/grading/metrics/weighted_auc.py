"""ALASKA2's weighted ROC AUC: the band of true-positive rates below 0.4 counts twice.

scikit-learn gives the ROC curve and the trapezoid area, but no area over a band of TPR,
so the banding is written here. For each band [low, high] of TPR, the area is that of the
region between the ROC curve and TPR = low, capped at TPR = high: the curve's points inside
the band, closed by a horizontal line at `high` out to FPR = 1. The curve's points at the
band edges are inserted first, by linear interpolation of FPR between the neighbouring
points (otherwise a segment that crosses an edge would be counted in the wrong band or not
at all). The bands' areas, weighted 2 and 1, are divided by the weighted area of a perfect
curve (2 * 0.4 + 1 * 0.6), so a perfect ranking scores 1 and a constant one 0.5857.

The edge insertion is MLE-bench's fix to the reference code shared on Kaggle, which took
the ROC points as they came. The arithmetic follows MLE-bench's order of floating-point
operations, so scores agree to the last bit (checked side by side on 2,000 random cases).
"""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pandas as pd

from mle_gym.grading.metrics import Metric

#: Edges of the TPR bands and the weight of each band.
BAND_EDGES = (0.0, 0.4, 1.0)
BAND_WEIGHTS = (2, 1)


def _with_band_edges(fpr: np.ndarray, tpr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ROC points plus one at each band edge the curve does not already pass through.

    The curve starts at TPR 0 and ends at TPR 1, so an edge it lacks lies between two points.
    """
    for edge in BAND_EDGES:
        if np.any(tpr == edge):
            continue
        after = int(np.searchsorted(tpr, edge, side="right"))
        before = after - 1
        rise = (fpr[after] - fpr[before]) * (edge - tpr[before]) / (tpr[after] - tpr[before])
        fpr = np.insert(fpr, after, fpr[before] + rise)
        tpr = np.insert(tpr, after, edge)
    return fpr, tpr


def weighted_roc_auc(truth: np.ndarray, scores: np.ndarray) -> float:
    """Weighted area under the ROC curve of `scores` against the 0/1 `truth` (both classes
    present, as they always are in the answers)."""
    from sklearn.metrics import auc, roc_curve

    fpr, tpr, _ = roc_curve(truth, scores, pos_label=1)
    fpr, tpr = _with_band_edges(fpr, tpr)
    total = 0.0
    for (low, high), weight in zip(pairwise(BAND_EDGES), BAND_WEIGHTS, strict=True):
        inside = (low <= tpr) & (tpr <= high)
        xs = np.append(fpr[inside], 1)
        ys = np.append(tpr[inside], high) - low
        total += auc(xs, ys) * weight
    return float(total / np.dot(np.diff(BAND_EDGES), BAND_WEIGHTS))


def alaska_weighted_auc(
    answers: pd.DataFrame, predictions: pd.DataFrame, targets: list[str]
) -> float:
    """The weighted AUC of the single target column (labels 0/1, any finite scores)."""
    (column,) = targets
    return weighted_roc_auc(answers[column].to_numpy(float), predictions[column].to_numpy(float))


METRICS: dict[str, Metric] = {"alaska_weighted_auc": alaska_weighted_auc}
