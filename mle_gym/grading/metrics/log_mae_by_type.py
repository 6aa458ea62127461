"""Mean over groups of log(MAE) (CHAMPS scalar coupling: the groups are the coupling types).

Kaggle's metric, as the competition host published it, floors each group's MAE at 1e-9
before the log. MLE-bench's grader does not, so a group predicted exactly gives log(0) = -inf
there and a score of -inf. We keep Kaggle's floor: every score is finite (the best possible
is log(1e-9) ≈ -20.72, far beyond gold), and it equals MLE-bench's whenever every group's MAE
is at least 1e-9, which any submission not copied from the answers satisfies.

Validation hands a metric only the answers' target column, and this metric also needs each
row's group. The answer loader therefore packs both into one integer, exactly: the value's
decimal text as an integer number of 10^-places units, with its `places` and the group index
in the low bits (`mle_gym.formats.packed_answers.pack`). Decoding divides that integer by
10^places, which in floating point gives the same double as parsing the text, so the errors
are those of the raw answers.
No library scores grouped log-MAE; scikit-learn's mean_absolute_error would give the same
per-group means but needs the groups split out first, which numpy does directly here.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from mle_gym.formats.packed_answers import unpack
from mle_gym.grading.metrics import Metric

#: Kaggle's floor on a group's MAE.
FLOOR = 1e-9


def log_mae_by_type(answers: pd.DataFrame, predictions: pd.DataFrame, targets: list[str]) -> float:
    """Mean over the answers' groups of log(max(MAE of the group, 1e-9))."""
    (column,) = targets
    truth, groups = unpack(answers[column].to_numpy(float))
    errors = np.abs(truth - predictions[column].to_numpy(float))
    maes = pd.Series(errors).groupby(groups).mean().to_numpy()
    return float(np.mean(np.log(np.maximum(maes, FLOOR))))


METRICS: dict[str, Metric] = {"log_mae_by_type": log_mae_by_type}
