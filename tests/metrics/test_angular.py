"""Mean angular error against known angles and the host's published formula."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from mle_gym.grading.metrics import METRICS
from mle_gym.grading.metrics.angular import angular_distances

mean_angular_error = METRICS["mean_angular_error"]


def _score(truth: list[tuple[float, float]], guess: list[tuple[float, float]]) -> float:
    columns = ["azimuth", "zenith"]
    answers, predictions = (
        pd.DataFrame(truth, columns=columns),
        pd.DataFrame(guess, columns=columns),
    )
    return mean_angular_error(answers, predictions, columns)


def test_known_angles() -> None:
    # Same direction; the antipode; a quarter turn in zenith; the poles ignore azimuth.
    truth = [(1.0, 1.0), (0.5, 1.2), (2.0, 0.0), (0.3, 0.0)]
    guess = [
        (1.0 + 2 * math.pi, 1.0),
        (0.5 + math.pi, math.pi - 1.2),
        (2.0, math.pi / 2),
        (3.0, 0.0),
    ]
    distances = angular_distances(*np.array(truth).T, *np.array(guess).T)
    assert distances == pytest.approx([0.0, math.pi, math.pi / 2, 0.0], abs=1e-7)
    assert _score(truth, guess) == pytest.approx(1.5 * math.pi / 4, abs=1e-7)


def test_matches_the_vector_definition_on_random_directions() -> None:
    rng = np.random.default_rng(0)
    az_t, az_p = rng.uniform(0, 2 * np.pi, (2, 1000))
    ze_t, ze_p = rng.uniform(0, np.pi, (2, 1000))

    def unit(az, ze):
        return np.stack([np.sin(ze) * np.cos(az), np.sin(ze) * np.sin(az), np.cos(ze)], axis=1)

    cosine = np.sum(unit(az_t, ze_t) * unit(az_p, ze_p), axis=1)
    expected = np.arccos(np.clip(cosine, -1, 1))
    np.testing.assert_allclose(angular_distances(az_t, ze_t, az_p, ze_p), expected, atol=1e-12)


def test_rounding_beyond_one_is_clipped() -> None:
    """Identical directions can give a dot product a hair above 1; arccos would give NaN."""
    az, ze = np.full(50, 0.7), np.linspace(0.01, 3.13, 50)
    assert np.isfinite(angular_distances(az, ze, az, ze)).all()
