"""Mean absolute error rounded to a whole number, as MLE-bench grades volcanic eruptions.

MLE-bench reports `int(round(mae))`: Python's rounding, which sends halves to the even
neighbour. The same call here gives the same whole number for the same error.
"""

from __future__ import annotations

import pandas as pd

from mle_gym.grading.metrics import Metric


def rounded_mae(answers: pd.DataFrame, predictions: pd.DataFrame, targets: list[str]) -> float:
    """scikit-learn's MAE over all target cells, rounded half to even to an integer."""
    from sklearn.metrics import mean_absolute_error

    error = mean_absolute_error(
        answers[targets].to_numpy(float), predictions[targets].to_numpy(float)
    )
    return float(round(float(error)))


METRICS: dict[str, Metric] = {"rounded_mae": rounded_mae}
