"""smartphone_p50_p95_distance: haversine against scikit-learn, percentiles per trip,
the mean over trips, pairing by timestamp."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics.pairwise import haversine_distances

from mle_gym.grading.errors import InvalidSubmission
from mle_gym.grading.metrics import METRICS
from mle_gym.grading.metrics.smartphone_distance import (
    EARTH_RADIUS_M,
    haversine_m,
    smartphone_p50_p95_distance,
)

TARGETS = ["UnixTimeMillis", "LatitudeDegrees", "LongitudeDegrees"]


def _answers(trips: dict[str, int]) -> pd.DataFrame:
    rows = [(trip, 1000.0 * i, 37.0, -122.0) for trip, n in trips.items() for i in range(n)]
    return pd.DataFrame(rows, columns=["tripId", *TARGETS])


def test_registered() -> None:
    assert METRICS["smartphone_p50_p95_distance"] is smartphone_p50_p95_distance


def test_haversine_equals_scikit_learn() -> None:
    rng = np.random.default_rng(0)
    a = rng.uniform([-80, -180], [80, 180], (50, 2))
    b = a + rng.normal(0, 0.01, (50, 2))
    expected = EARTH_RADIUS_M * np.diag(haversine_distances(np.deg2rad(a), np.deg2rad(b)))
    assert haversine_m(a[:, 0], a[:, 1], b[:, 0], b[:, 1]) == pytest.approx(expected, rel=1e-9)


def test_one_degree_of_latitude_is_radius_times_pi_over_180() -> None:
    distance = haversine_m(np.array([10.0]), np.array([5.0]), np.array([11.0]), np.array([5.0]))
    assert distance[0] == pytest.approx(EARTH_RADIUS_M * np.pi / 180, rel=1e-12)


def test_mean_of_median_and_95th_percentile_per_trip_then_over_trips() -> None:
    answers = _answers({"a": 5, "b": 2})
    metres = np.array([0.0, 1.0, 2.0, 3.0, 10.0, 4.0, 4.0])
    predicted = answers.assign(
        LatitudeDegrees=answers.LatitudeDegrees + np.rad2deg(metres / EARTH_RADIUS_M)
    )
    # trip a: p50 2, p95 3 + 0.8 * 7 = 8.6; trip b: 4 and 4
    expected = ((2 + 8.6) / 2 + 4) / 2
    assert smartphone_p50_p95_distance(answers, predicted, TARGETS) == pytest.approx(expected)


def test_rows_are_paired_by_timestamp_within_a_trip() -> None:
    answers = _answers({"a": 3})
    answers["LatitudeDegrees"] = [37.0, 37.1, 37.2]
    reordered = answers.iloc[[2, 0, 1]].reset_index(drop=True)
    assert smartphone_p50_p95_distance(answers, reordered, TARGETS) == 0.0


def test_other_timestamps_are_refused() -> None:
    answers = _answers({"a": 3, "b": 2})
    moved = answers.assign(UnixTimeMillis=answers.UnixTimeMillis.where(answers.tripId == "a", 5))
    with pytest.raises(InvalidSubmission, match=r"1 trip\(s\) .* trip 'b' lacks 0"):
        smartphone_p50_p95_distance(answers, moved, TARGETS)
