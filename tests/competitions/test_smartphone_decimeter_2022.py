"""smartphone-decimeter-2022: drives split by date without answer files in public/test,
rejected submissions, rows matched by trip and timestamp, the far-off sample's score."""

from __future__ import annotations

import math
import os

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics.pairwise import haversine_distances

from mle_gym.competitions import get_competition
from mle_gym.competitions.catalog.smartphone_decimeter_2022 import SAMPLE_POSITION, drive_date
from tests.competitions.support import assert_invalid, grade_frame

COMP = get_competition("smartphone-decimeter-2022")
RADIUS = 6_371_000
TRIPS = [
    "2020-7-8-US-MTV-1-GooglePixel5",
    "2021-12-07-US-LAX-1-GooglePixel6Pro",
    "2021-12-07-US-LAX-1-XiaomiMi8",
]


@pytest.fixture
def answers(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "test.csv")


def test_drive_dates_are_zero_padded() -> None:
    assert drive_date("2020-7-8-US-MTV-1") == "2020-07-08"
    with pytest.raises(ValueError, match="does not start with a date"):
        drive_date("US-MTV-2020-07-08")


def test_held_out_dates_leave_no_answer_file_in_public(answers, dirs) -> None:
    test_drives = sorted(p.name for p in (dirs.public / "test").iterdir())
    train_drives = sorted(p.name for p in (dirs.public / "train").iterdir())
    assert test_drives == ["2020-7-8-US-MTV-1", "2021-12-07-US-LAX-1"]
    assert len(train_drives) == 10
    assert answers["tripId"].unique().tolist() == TRIPS
    public_test = [p.relative_to(dirs.public / "test") for p in (dirs.public / "test").rglob("*")]
    assert not [p for p in public_test if p.name in ("ground_truth.csv", "span_log.nmea")]
    phone = dirs.public / "test" / "2021-12-07-US-LAX-1" / "XiaomiMi8"
    assert sorted(p.name for p in phone.rglob("*") if p.is_file()) == [
        "device_gnss.csv",
        "device_imu.csv",
        "gnss_log.txt",
        "gnss_rinex.20o",
    ]
    raw_phone = dirs.raw / "train" / "2021-12-07-US-LAX-1" / "XiaomiMi8"
    assert os.path.samefile(phone / "device_gnss.csv", raw_phone / "device_gnss.csv")
    assert len(list((dirs.public / "train").rglob("span_log.nmea"))) == 13
    assert sorted(p.name for p in (dirs.public / "metadata").iterdir()) == [
        "accumulated_delta_range_state_bit_map.json",
        "raw_state_bit_map.json",
    ]


def _shifted_north(answers: pd.DataFrame, metres: np.ndarray) -> pd.DataFrame:
    """Each prediction `metres` north of the truth: its haversine error is exactly that."""
    return answers.assign(LatitudeDegrees=answers.LatitudeDegrees + np.rad2deg(metres / RADIUS))


CASES = {
    "a trip one row short": (lambda f: f.iloc[1:], r"1 test id\(s\) have no row"),
    "a trip one row too many": (lambda f: pd.concat([f, f.iloc[:1]]), r"1 duplicate row"),
    "unknown trip": (
        lambda f: f.assign(tripId=["2020-7-8-US-MTV-1-Pixel9", *f["tripId"][1:]]),
        r"not in the test set: '2020-7-8-US-MTV-1-Pixel9'",
    ),
    "timestamps off by a second": (
        lambda f: f.assign(UnixTimeMillis=f["UnixTimeMillis"] + 1000),
        r"3 trip\(s\) have UnixTimeMillis values that are not the expected ones",
    ),
    "no timestamp column": (lambda f: f.drop(columns="UnixTimeMillis"), r"'UnixTimeMillis'"),
    "empty latitude": (
        lambda f: f.assign(LatitudeDegrees=[None] + [37.0] * (len(f) - 1)),
        r"'LatitudeDegrees' has 1 empty or missing value\(s\)",
    ),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, answers, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    assert_invalid(grade_frame(COMP, dirs.private, mutate(answers), tmp_path), reason)


def test_rows_pair_by_trip_and_timestamp_in_any_order(answers, dirs, tmp_path) -> None:
    # trip k's errors are 1..6 metres times (k + 1): p50 3.5(k+1), p95 5.75(k+1)
    metres = np.tile(np.arange(1.0, 7.0), 3) * np.repeat([1.0, 2.0, 3.0], 6)
    predicted = _shifted_north(answers, metres)
    expected = np.mean([(3.5 + 5.75) / 2 * k for k in (1, 2, 3)])
    for seed in range(2):
        shuffled = predicted.sample(frac=1, random_state=seed)
        assert grade_frame(COMP, dirs.private, shuffled, tmp_path).score == pytest.approx(
            expected, abs=1e-5
        )


def test_sample_scores_its_distance_from_the_fixed_point(answers, dirs, tmp_path) -> None:
    truth = np.deg2rad(answers[["LatitudeDegrees", "LongitudeDegrees"]].to_numpy())
    fixed = np.deg2rad([[SAMPLE_POSITION["LatitudeDegrees"], SAMPLE_POSITION["LongitudeDegrees"]]])
    distances = pd.Series(RADIUS * haversine_distances(truth, fixed)[:, 0])
    per_trip = distances.groupby(answers["tripId"]).quantile([0.5, 0.95]).groupby(level=0).mean()
    sample = pd.read_csv(dirs.public / "sample_submission.csv")
    score = grade_frame(COMP, dirs.private, sample, tmp_path).score
    assert score == pytest.approx(per_trip.mean(), abs=1e-5)
    assert math.isclose(score, COMP.sample_score, rel_tol=0.01)  # ~3,100 km from every trip
