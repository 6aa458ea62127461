"""Mean absolute error over the rows the answers mark as scored (ventilator pressure).

Kaggle scores only the inspiratory phase of each breath (u_out == 0). Validation hands a
metric only the answers' target column, so the competition's answer loader writes the
finite marker `UNSCORED` (`mle_gym.formats.packed_answers`) in place of the answer on the
other rows; this metric skips them. No real target is that far below zero, and the
submission's own values are not looked at to decide, so every row still needs a finite
prediction.
"""

from __future__ import annotations

import pandas as pd

from mle_gym.formats.packed_answers import UNSCORED
from mle_gym.grading.metrics import Metric


def mae_scored_rows(answers: pd.DataFrame, predictions: pd.DataFrame, targets: list[str]) -> float:
    """scikit-learn's mean absolute error on the rows whose answers are not `UNSCORED`."""
    from sklearn.metrics import mean_absolute_error

    (column,) = targets
    truth = answers[column].to_numpy(float)
    scored = truth != UNSCORED
    return float(mean_absolute_error(truth[scored], predictions[column].to_numpy(float)[scored]))


METRICS: dict[str, Metric] = {"mae_scored_rows": mae_scored_rows}
