"""vesuvius-challenge-ink-detection: fragment 3 becomes test fragment `a` without its labels,
the answer carries its size, broken submissions are refused with their reason."""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.competitions.catalog.vesuvius_challenge_ink_detection import png_size
from mle_gym.data.dev_variant import DevVariantUnavailable, require_dev_variant
from mle_gym.formats.rle import encode_rle
from mle_gym.grading import grade
from mle_gym.grading.metrics.rle import decode_rle
from tests.competitions.support import assert_invalid, grade_frame

COMP = get_competition("vesuvius-challenge-ink-detection")


@pytest.fixture
def gold(dirs) -> pd.DataFrame:
    return pd.read_csv(dirs.private / "gold_submission.csv", dtype=str)


def test_public_layout_hides_fragment_three_labels(dirs) -> None:
    test = dirs.public / "test" / "a"
    names = sorted(str(p.relative_to(test)) for p in test.rglob("*") if p.is_file())
    assert names == ["mask.png", *(f"surface_volume/{k:02}.tif" for k in range(3))]
    assert (test / "surface_volume" / "00.tif").stat().st_nlink > 1  # linked, not copied
    for fragment in ("1", "2"):
        files = {p.name for p in (dirs.public / "train" / fragment).iterdir()}
        assert {"inklabels.png", "inklabels_rle.csv", "ir.png", "mask.png"} <= files
    assert not (dirs.public / "train" / "3").exists()


def test_answer_is_fragment_three_with_its_size(dirs) -> None:
    answers = pd.read_csv(dirs.private / "inklabels_rle.csv", dtype=str)
    assert list(answers.columns) == ["Id", "Predicted", "width", "height"]
    assert answers.iloc[0][["Id", "width", "height"]].tolist() == ["a", "7", "5"]
    # The fixture's fragment 3 is 5 rows x 7 columns; its RLE runs along rows.
    mask = decode_rle(answers["Predicted"][0], (5, 7), order="C")
    assert encode_rle(mask, order="C") == answers["Predicted"][0]


def test_png_size_reads_the_header(tmp_path) -> None:
    from PIL import Image

    Image.fromarray(np.zeros((3, 11), np.uint8)).save(tmp_path / "x.png")
    assert png_size(tmp_path / "x.png") == (11, 3)
    (tmp_path / "y.png").write_bytes(b"GIF89a" + bytes(30))
    with pytest.raises(ValueError, match="not a PNG"):
        png_size(tmp_path / "y.png")


CASES = {
    "no row": (lambda f: f.iloc[:0], r"1 test id\(s\) have no row, e.g. 'a'"),
    "duplicate row": (lambda f: pd.concat([f, f]), r"1 duplicate row\(s\)"),
    "other fragment": (lambda f: f.assign(Id="b"), r"ids that are not in the test set: 'b'"),
    "extra column": (lambda f: f.assign(width=7), r"unexpected column\(s\) 'width'"),
    "empty mask cell": (lambda f: f.assign(Predicted=""), r"empty or missing"),
    "run past the image": (lambda f: f.assign(Predicted="30 10"), r"ends past the image"),
    "non-numeric run": (lambda f: f.assign(Predicted="1 x"), r"must hold only integers"),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_broken_submission_is_invalid_with_reason(case, gold, dirs, tmp_path) -> None:
    mutate, reason = CASES[case]
    assert_invalid(grade_frame(COMP, dirs.private, mutate(gold), tmp_path), reason)


def test_scores_are_pixel_f05(dirs, gold, tmp_path) -> None:
    assert grade_frame(COMP, dirs.private, gold, tmp_path).score == 1.0
    ink = decode_rle(gold["Predicted"][0], (5, 7), order="C")
    # Every pixel predicted as ink: p = ink share, r = 1 -> F0.5 = 1.25 p / (0.25 p + 1).
    p = ink.mean()
    everything = gold.assign(Predicted="1 35")
    expected = round(1.25 * p / (0.25 * p + 1), 5)
    assert grade_frame(COMP, dirs.private, everything, tmp_path).score == expected


def test_sample_guess_scores_its_f05(dirs, gold) -> None:
    # The sample marks pixels 1 and 5 of the first row as ink.
    ink = decode_rle(gold["Predicted"][0], (5, 7), order="C").ravel()
    hits = int(ink[0]) + int(ink[4])
    expected = round(1.25 * hits / (0.25 * ink.sum() + 2), 5)
    report = grade(COMP, dirs.public / "sample_submission.csv", dirs.private)
    assert report.score == expected and not report.any_medal
    assert COMP.sample_score == 0.0  # on the real fragment 3


def test_a_split_without_its_recorded_test_fragment_refuses_the_dev_variant(dirs, tmp_path) -> None:
    """The clean-split check needs to know which fragment the real test fragment was; a
    split prepared before that was recorded is refused with the remedy, and nothing is
    stored."""
    root = tmp_path / "cache"
    shutil.copytree(dirs.root, root / COMP.id, copy_function=shutil.copy)
    (root / COMP.id / "private" / "test_fragments.csv").unlink()
    with pytest.raises(DevVariantUnavailable, match="prepare it again"):
        require_dev_variant(COMP, root)
    assert not (root / COMP.id / "dev").exists()
    (root / COMP.id / "private" / "test_fragments.csv").write_text("Id,fragment\na,3\n")
    manifest = require_dev_variant(COMP, root).manifest.read_text()
    assert '"test_ids": ["2"]' in manifest and '"train_ids": ["1"]' in manifest
