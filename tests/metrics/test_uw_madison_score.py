"""uw_madison_score: a hand-computed case, MLE-bench's result on random masks, its
Hausdorff rules, row order, and refusals (missing class, broken RLE)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from mle_gym.formats.rle import encode_rle, with_shape
from mle_gym.grading.errors import InvalidSubmission
from mle_gym.grading.metrics import METRICS
from mle_gym.grading.metrics.uw_madison_score import hausdorff_3d, uw_madison_score

CLASSES = ("large_bowel", "small_bowel", "stomach")


def _score(rows: list[tuple[str, str, str, str, int, int]]) -> float:
    """rows: (id, class, true rle, predicted rle, height, width)."""
    answers = pd.DataFrame(
        [(i, c, with_shape(h, w, t)) for i, c, t, _, h, w in rows],
        columns=["id", "class", "predicted"],
    )
    predictions = pd.DataFrame([(i, c, p) for i, c, _, p, _, _ in rows], columns=answers.columns)
    return uw_madison_score(answers, predictions, ["class", "predicted"])


def _slices(truth: dict, predicted: dict, shape=(4, 4), scan="case1_day1") -> list[tuple]:
    return [
        (f"{scan}_slice_{s:04d}", c, truth.get((s, c), ""), predicted.get((s, c), ""), *shape)
        for s in (1, 2)
        for c in CLASSES
    ]


def test_registered_under_its_name() -> None:
    assert METRICS["uw_madison_score"] is uw_madison_score


def test_hand_value() -> None:
    # Truth: top-left pixel of slice 1 (large bowel). Prediction: the same, plus the
    # top-left pixel of slice 2 as stomach. Dice: 1 (slice 1 large bowel), 0 (slice 2
    # stomach); the four empty-on-both rows are skipped -> 0.5. Volumes (all classes
    # OR-ed) differ by one voxel one slice away: distance (1/2 slices) / sqrt(3).
    rows = _slices({(1, "large_bowel"): "1 1"}, {(1, "large_bowel"): "1 1", (2, "stomach"): "1 1"})
    expected = 0.4 * 0.5 + 0.6 * (1 - 0.5 / math.sqrt(3))
    assert _score(rows) == pytest.approx(expected, abs=1e-15)
    # MLE-bench's grade() returned 0.6267949192431123 for these rows.
    assert _score(rows) == pytest.approx(0.6267949192431123, abs=1e-15)


def test_equals_mlebench_on_random_masks() -> None:
    # Two scans of 3 slices (5x6 and 7x4 pixels), masks drawn as below; MLE-bench's
    # grade() returned 0.5329301896235299 for them.
    rng = np.random.default_rng(3)
    rows = []
    for scan, (h, w) in (("case2_day3", (5, 6)), ("case4_day1", (7, 4))):
        for s in range(1, 4):
            for c in CLASSES:
                t, p = rng.random((h, w)) < 0.25, rng.random((h, w)) < 0.25
                if (s + len(c)) % 4 == 0:
                    t[:] = False
                rows.append((f"{scan}_slice_{s:04d}", c, encode_rle(t), encode_rle(p), h, w))
    assert _score(rows) == pytest.approx(0.5329301896235299, abs=1e-12)
    shuffled = [rows[i] for i in np.random.default_rng(0).permutation(len(rows))]
    assert _score(shuffled) == _score(rows)


def test_hausdorff_rules() -> None:
    empty = np.zeros((2, 3, 3), bool)
    one = empty.copy()
    one[0, 0, 0] = True
    assert math.isnan(hausdorff_3d(empty, empty))
    assert hausdorff_3d(one, one) == 0.0
    assert hausdorff_3d(empty, one) == 1.0 and hausdorff_3d(one, empty) == 1.0
    big = np.ones((2, 3, 3), bool)  # 18 voxels > 10 x 1
    assert hausdorff_3d(big, one) == 1.0
    far = empty.copy()
    far[1, 2, 2] = True
    far[0, 0, 0] = True  # 2 voxels; the far one at (1/2, 2/3, 2/3) from the truth
    assert hausdorff_3d(far, one) == pytest.approx(
        math.sqrt(0.25 + 4 / 9 + 4 / 9) / math.sqrt(3), abs=1e-15
    )


def test_missing_class_row_is_refused() -> None:
    rows = _slices({(1, "large_bowel"): "1 1"}, {})
    answers = pd.DataFrame(
        [(i, c, with_shape(h, w, t)) for i, c, t, _, h, w in rows],
        columns=["id", "class", "predicted"],
    )
    # Same ids, but one slice lists stomach twice and no small bowel.
    predictions = answers.assign(predicted="")
    predictions.loc[1, "class"] = "stomach"
    with pytest.raises(InvalidSubmission, match="one row for each class"):
        uw_madison_score(answers, predictions, ["class", "predicted"])


def test_broken_rle_is_refused_naming_the_row() -> None:
    rows = _slices({}, {(2, "small_bowel"): "16 2"})
    with pytest.raises(InvalidSubmission, match=r"predicted of id 'case1_day1_slice_0002'.*past"):
        _score(rows)
