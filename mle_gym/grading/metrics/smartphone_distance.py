"""The distance score of the Smartphone Decimeter Challenge 2022, as MLE-bench grades it.

Per trip, the mean of the 50th and 95th percentiles (numpy's linear interpolation) of the
haversine distances between predicted and true positions on a sphere of radius 6,371 km;
the score is the mean over trips. The haversine formula is a few lines of numpy: the
libraries that offer it compute all pairs (scikit-learn) or add a dependency for no gain.

The id column (tripId) repeats once per timestamp; validation has already checked each
trip's row count. Rows are paired by (tripId, UnixTimeMillis) here, so a trip must carry
exactly the answers' timestamps.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from mle_gym.grading.errors import InvalidSubmission
from mle_gym.grading.metrics import Metric

EARTH_RADIUS_M = 6_371_000
TIME = "UnixTimeMillis"
LATITUDE, LONGITUDE = "LatitudeDegrees", "LongitudeDegrees"


def haversine_m(
    lat1: np.ndarray, lon1: np.ndarray, lat2: np.ndarray, lon2: np.ndarray
) -> np.ndarray:
    """Great-circle distances in metres between paired points given in degrees."""
    phi1, lam1, phi2, lam2 = (np.deg2rad(a) for a in (lat1, lon1, lat2, lon2))
    half = (
        np.sin((phi2 - phi1) / 2) ** 2
        + np.cos(phi1) * np.cos(phi2) * np.sin((lam2 - lam1) / 2) ** 2
    )
    return 2 * EARTH_RADIUS_M * np.arcsin(np.sqrt(half))


def _by_trip_and_time(frame: pd.DataFrame) -> pd.DataFrame:
    trip = frame.columns[0]
    return frame.sort_values([trip, TIME], kind="stable").reset_index(drop=True)


def _check_timestamps(answers: pd.DataFrame, predictions: pd.DataFrame) -> None:
    wrong = answers[TIME].to_numpy() != predictions[TIME].to_numpy()
    if wrong.any():
        trips = answers.iloc[:, 0][wrong].unique()
        first = int(np.argmax(wrong))
        raise InvalidSubmission(
            f"{len(trips)} trip(s) have UnixTimeMillis values that are not the expected ones, "
            f"e.g. trip {trips[0]!r} lacks {answers[TIME][first]:.0f}; write one row per "
            "tripId and UnixTimeMillis of sample_submission.csv"
        )


def smartphone_p50_p95_distance(
    answers: pd.DataFrame, predictions: pd.DataFrame, targets: list[str]
) -> float:
    """Mean over trips of (p50 + p95) / 2 of the prediction's distance errors in metres."""
    answers, predictions = _by_trip_and_time(answers), _by_trip_and_time(predictions)
    _check_timestamps(answers, predictions)
    distances = haversine_m(
        predictions[LATITUDE].to_numpy(float),
        predictions[LONGITUDE].to_numpy(float),
        answers[LATITUDE].to_numpy(float),
        answers[LONGITUDE].to_numpy(float),
    )
    per_trip = pd.Series(distances).groupby(answers.iloc[:, 0].to_numpy(), sort=False)
    scores = [np.mean([np.quantile(d, 0.5), np.quantile(d, 0.95)]) for _, d in per_trip]
    return float(np.mean(scores))


METRICS: dict[str, Metric] = {"smartphone_p50_p95_distance": smartphone_p50_p95_distance}
