"""OSIC's modified Laplace log-likelihood of FVC predictions with their confidence.

Each scored row contributes `-sqrt(2) * delta / sigma - ln(sqrt(2) * sigma)`, where
`sigma` is the submitted confidence raised to at least 70 ml and `delta` the absolute FVC
error capped at 1000 ml; the score is the mean over scored rows (higher is better, never
above 0 for real volumes). No maintained library has this competition-specific formula, so
it is written here with numpy, in the order MLE-bench's grader evaluates it (so its floats
are the same).

Kaggle scores only each patient's last three measured weeks, but asks for every week. The
competition's answer loader writes the finite marker `UNSCORED` as the FVC of every other
row; those rows need a finite prediction and are then skipped.
"""

from __future__ import annotations

import pandas as pd

from mle_gym.formats.packed_answers import UNSCORED
from mle_gym.grading.metrics import Metric

#: Confidence below this many ml is raised to it (roughly the spirometer's own error).
MIN_SIGMA = 70.0
#: FVC errors beyond this many ml count as this much.
MAX_DELTA = 1000.0


def laplace_log_likelihood(
    answers: pd.DataFrame, predictions: pd.DataFrame, targets: list[str]
) -> float:
    """Mean modified Laplace log-likelihood over rows whose true FVC is not `UNSCORED`.

    `targets` is the FVC column followed by the confidence column.
    """
    import numpy as np

    fvc, confidence = targets
    truth = answers[fvc].to_numpy(float)
    scored = truth != UNSCORED
    sigma = np.maximum(predictions[confidence].to_numpy(float)[scored], MIN_SIGMA)
    delta = np.minimum(np.abs(truth[scored] - predictions[fvc].to_numpy(float)[scored]), MAX_DELTA)
    values = -np.sqrt(2) * delta / sigma - np.log(np.sqrt(2) * sigma)
    return float(np.mean(values))


METRICS: dict[str, Metric] = {"laplace_log_likelihood": laplace_log_likelihood}
