"""Macro-averaged F1 over integer class ids, as MLE-bench grades Herbarium and iWildCam 2019.

MLE-bench casts both the answers and the predictions to `int` and calls scikit-learn's
`f1_score(average="macro")` with no explicit label list. The average therefore runs over
every class that occurs in the answers *or* in the predictions: predicting a class that
is absent from the test set adds one more class, of F1 zero, to the mean. A class in the
answers that is never predicted also scores zero (scikit-learn's `zero_division` default,
whose warning is silenced here). We call the same function the same way.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from mle_gym.grading.errors import InvalidSubmission
from mle_gym.grading.metrics import Metric


def integer_classes(cells: pd.Series, column: str) -> np.ndarray:
    """`cells` as int64 class ids; integral numbers written as floats (`12.0`) count, as
    `int()` reads them in MLE-bench, anything else is refused with the offending values."""
    numbers = pd.to_numeric(cells, errors="coerce")
    values = numbers.to_numpy(float, na_value=np.nan)
    bad = ~np.isfinite(values) | (values != np.round(values))
    if bad.any():
        shown = ", ".join(repr(str(v)) for v in cells[bad].iloc[:3])
        raise InvalidSubmission(
            f"column {column!r} must hold integer class ids; found {shown}"
            + (f" and {int(bad.sum()) - 3} more" if bad.sum() > 3 else "")
        )
    return values.astype(np.int64)


def macro_f1(answers: pd.DataFrame, predictions: pd.DataFrame, targets: list[str]) -> float:
    """Unweighted mean F1 over the classes seen in the answers or the predictions."""
    from sklearn.exceptions import UndefinedMetricWarning
    from sklearn.metrics import f1_score

    (target,) = targets
    truth = integer_classes(answers[target], target)
    predicted = integer_classes(predictions[target], target)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        return float(f1_score(truth, predicted, average="macro"))


METRICS: dict[str, Metric] = {"macro_f1": macro_f1}
