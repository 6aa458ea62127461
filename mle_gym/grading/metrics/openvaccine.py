"""MCRMSE of OpenVaccine (stanford-covid-vaccine): scored targets, scored positions only.

Rows are `<sequence id>_<position>`; only the first SCORED_POSITIONS positions of each
sequence were measured, and only three of the five required target columns count. The
score is the mean over those columns of scikit-learn's RMSE on the scored rows.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from mle_gym.competitions.catalog.stanford_covid_vaccine import SCORED_POSITIONS
from mle_gym.grading.metrics import Metric

SCORED_TARGETS = ("reactivity", "deg_Mg_pH10", "deg_Mg_50C")


def openvaccine_mcrmse(
    answers: pd.DataFrame, predictions: pd.DataFrame, targets: list[str]
) -> float:
    """Mean over SCORED_TARGETS of the RMSE on rows whose position is below SCORED_POSITIONS."""
    from sklearn.metrics import root_mean_squared_error

    positions = answers.iloc[:, 0].str.rsplit("_", n=1).str[1].astype(int)
    scored = (positions < SCORED_POSITIONS).to_numpy()
    errors = [
        root_mean_squared_error(
            answers.loc[scored, column].to_numpy(float),
            predictions.loc[scored, column].to_numpy(float),
        )
        for column in SCORED_TARGETS
    ]
    return float(np.mean(errors))


METRICS: dict[str, Metric] = {"openvaccine_mcrmse": openvaccine_mcrmse}
