"""ROC AUC of one column of 0/1 labels: scikit-learn's figure, to the last bit, for less.

`roc_auc_score` checks and re-encodes the labels before it scores them (the type of the
target, a `label_binarize` and three `np.unique` of every label): half its time on a
million rows, and the metric of jigsaw's six columns is that call six times. Labels
already 0 and 1, both present, need none of it: `roc_curve` and `auc` are the very calls
`roc_auc_score` makes for them, on the same values. Any other column goes to
`roc_auc_score` itself, which decides what it means (one class only, other labels).
"""

from __future__ import annotations

import numpy as np
from sklearn import metrics as skm


def binary_roc_auc(truth: np.ndarray, scores: np.ndarray) -> float:
    """`sklearn.metrics.roc_auc_score(truth, scores)` for one column of labels."""
    if truth.dtype.kind in "biuf":
        ones = truth == 1
        if (ones | (truth == 0)).all() and ones.any() and not ones.all():
            fpr, tpr, _ = skm.roc_curve(truth, scores)
            return float(skm.auc(fpr, tpr))
    return float(skm.roc_auc_score(truth, scores))
