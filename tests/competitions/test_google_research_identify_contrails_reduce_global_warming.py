"""google-research-identify-contrails-reduce-global-warming: linked record folders, masks
encoded column-major, broken submissions refused with their reason, pooled Dice."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.grading import grade
from mle_gym.grading.metrics.rle import decode_rle
from tests.competitions.support import assert_invalid, grade_frame
from tests.fixtures.raw.google_research_identify_contrails_reduce_global_warming import (
    make_raw,
    perfect_submission,
)

COMP = get_competition("google-research-identify-contrails-reduce-global-warming")


def read(path) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False)


@pytest.fixture
def perfect(dirs) -> pd.DataFrame:
    return perfect_submission(dirs.private)


def test_public_layout_links_train_test_and_validation(dirs) -> None:
    answers = read(dirs.private / "answers.csv")
    train = [r["record_id"] for r in json.loads((dirs.public / "train_metadata.json").read_text())]
    assert len(answers) == 4 and len(train) == 26
    assert sorted(p.name for p in (dirs.public / "test").iterdir()) == sorted(answers["record_id"])
    assert sorted(p.name for p in (dirs.public / "train").iterdir()) == sorted(train)
    for record in answers["record_id"]:
        names = sorted(p.name for p in (dirs.public / "test" / record).iterdir())
        assert names == [f"band_{k:02}.npy" for k in range(8, 17)]
    train_files = {p.name for p in (dirs.public / "train" / train[0]).iterdir()}
    assert {"human_pixel_masks.npy", "human_individual_masks.npy"} <= train_files
    assert len(list((dirs.public / "validation").iterdir())) == 4
    band = dirs.public / "train" / train[0] / "band_08.npy"
    assert band.stat().st_nlink > 1  # hard-linked from raw, not copied


def test_answers_are_the_raw_masks_counted_down_columns(dirs, tmp_path) -> None:
    make_raw(tmp_path)  # the fixture is deterministic: the same raw masks again
    answers = read(dirs.private / "answers.csv")
    assert set(answers["height"]) == {"4"} and set(answers["width"]) == {"6"}
    assert (answers["encoded_pixels"] != "-").sum() >= 2
    for record, rle in zip(answers["record_id"], answers["encoded_pixels"], strict=True):
        mask = np.load(tmp_path / "train" / record / "human_pixel_masks.npy")[:, :, 0]
        decoded = decode_rle("" if rle == "-" else rle, (4, 6), order="F")
        np.testing.assert_array_equal(decoded, mask == 1)


CASES = {
    "missing record": (lambda f: f.iloc[1:], r"1 test id\(s\) have no row"),
    "duplicate record": (lambda f: pd.concat([f, f.iloc[:1]]), r"1 duplicate row\(s\)"),
    "empty cell": (
        lambda f: f.assign(encoded_pixels=[""] * len(f)),
        r"is empty or missing; write '-'",
    ),
    "run past the image": (lambda f: f.assign(encoded_pixels="20 10"), r"ends past the image"),
    "unsorted runs": (lambda f: f.assign(encoded_pixels="5 1 1 1"), r"increasing order"),
    "odd count": (lambda f: f.assign(encoded_pixels="1 2 5"), r"start/length pairs"),
    "column missing": (
        lambda f: f.rename(columns={"encoded_pixels": "rle"}),
        r"missing column\(s\) 'encoded_pixels'",
    ),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, perfect, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    assert_invalid(grade_frame(COMP, dirs.private, mutate(perfect), tmp_path), reason)


def test_scores_pool_pixels_over_records(dirs, perfect, tmp_path) -> None:
    assert grade_frame(COMP, dirs.private, perfect.iloc[::-1], tmp_path).score == 1.0
    sizes = [
        sum(int(n) for n in rle.split()[1::2]) if rle != "-" else 0
        for rle in perfect["encoded_pixels"]
    ]
    # Only the first record predicted (exactly): Dice = 2 a / (a + total).
    first = perfect.assign(encoded_pixels=[perfect["encoded_pixels"].iloc[0]] + ["-"] * 3)
    expected = round(2 * sizes[0] / (sizes[0] + sum(sizes)), 5)
    assert grade_frame(COMP, dirs.private, first, tmp_path).score == expected
    # Every pixel of every image predicted: Dice = 2 total / (4 * 24 + total).
    full = perfect.assign(encoded_pixels="1 24")
    expected = round(2 * sum(sizes) / (4 * 24 + sum(sizes)), 5)
    assert grade_frame(COMP, dirs.private, full, tmp_path).score == expected


def test_sample_is_mlebench_random_guesses(dirs) -> None:
    sample = read(dirs.public / "sample_submission.csv")
    assert list(sample.columns) == ["record_id", "encoded_pixels", "height", "width"]
    assert set(sample["encoded_pixels"]) <= {"1 3 10 5", "-"}
    report = grade(COMP, dirs.public / "sample_submission.csv", dirs.private)
    assert report.valid_submission and 0 <= report.score < COMP.thresholds.median
