"""Jigsaw Unintended Bias: MLE-bench's thresholded variant of Kaggle's bias-weighted AUC.

score = 0.25 * overall AUC + 0.25 * (power mean, p = -5, over the 9 identities) of each of
the subgroup, BPSN and BNSP AUCs. Kaggle ranked raw scores; MLE-bench first turns every
prediction into 0/1 at 0.5 (>= 0.5 is toxic), as it does the answers' toxicity and identity
fractions (a missing identity fraction is 0). Its medal thresholds were set with this
variant, so we compute exactly it: only which side of 0.5 a prediction falls on matters.

The metric needs the toxicity and the nine identity flags of each test comment, while
validation hands a metric only the answers' target column; the competition's answer
loader therefore packs them into one integer per comment
(`mle_gym.formats.packed_answers.pack_labels`): bit 0 toxicity,
bit k + 1 identity k of `IDENTITIES`.

A subset whose AUC is exactly 0 (every prediction inverted there) makes MLE-bench's power
mean divide by zero, and the submission invalid; we give that mean its limit, 0.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from mle_gym.formats.packed_answers import IDENTITIES
from mle_gym.grading.metrics import Metric

POWER = -5
WEIGHT = 0.25


def _power_mean(scores: list[float]) -> float:
    if min(scores) == 0:
        return 0.0
    return (sum(s**POWER for s in scores) / len(scores)) ** (1 / POWER)


def jigsaw_bias_auc(answers: pd.DataFrame, predictions: pd.DataFrame, targets: list[str]) -> float:
    """The bias-weighted AUC of 0/1 predictions (see the module docstring)."""
    from sklearn.metrics import roc_auc_score

    (column,) = targets
    packed = answers[column].to_numpy().astype(np.int64)
    toxic = (packed & 1).astype(bool)
    predicted = (predictions[column].to_numpy(float) >= 0.5).astype(int)

    def auc(rows: np.ndarray) -> float:
        return float(roc_auc_score(toxic[rows].astype(int), predicted[rows]))

    subgroup, bpsn, bnsp = [], [], []
    for bit in range(1, len(IDENTITIES) + 1):
        mentioned = ((packed >> bit) & 1).astype(bool)
        subgroup.append(auc(mentioned))
        bpsn.append(auc((mentioned & ~toxic) | (~mentioned & toxic)))
        bnsp.append(auc((mentioned & toxic) | (~mentioned & ~toxic)))
    overall = auc(np.ones(len(packed), dtype=bool))
    return WEIGHT * overall + sum(WEIGHT * _power_mean(s) for s in (subgroup, bpsn, bnsp))


METRICS: dict[str, Metric] = {"jigsaw_bias_auc": jigsaw_bias_auc}
