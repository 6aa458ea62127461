"""RMSE for targets on a closed scale, refusing predictions off that scale.

PetFinder's Pawpularity runs from 1 to 100, and MLE-bench's grader rejects a submission
holding any prediction outside [1, 100] instead of scoring it; we refuse it the same way,
naming a few offending rows, then score plain RMSE (`basic.rmse`).
"""

from __future__ import annotations

import pandas as pd

from mle_gym.grading.errors import InvalidSubmission
from mle_gym.grading.metrics import Metric
from mle_gym.grading.metrics.basic import rmse


def rmse_in_range(low: float, high: float) -> Metric:
    """RMSE that refuses any predicted value outside [low, high] (bounds included)."""

    def metric(answers: pd.DataFrame, predictions: pd.DataFrame, targets: list[str]) -> float:
        for column in targets:
            values = predictions[column]
            outside = ~values.between(low, high)
            if outside.any():
                shown = ", ".join(f"{v:g}" for v in values[outside].iloc[:3])
                raise InvalidSubmission(
                    f"column {column!r} must hold values in [{low:g}, {high:g}]; "
                    f"{int(outside.sum())} do not (e.g. {shown})"
                )
        return rmse(answers, predictions, targets)

    return metric


METRICS: dict[str, Metric] = {"rmse_1_to_100": rmse_in_range(1, 100)}
