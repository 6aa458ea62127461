"""lyft_3d_map: Lyft's per-sample 3D mAP, by hand and against MLE-bench's grader."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mle_gym.grading.errors import InvalidSubmission
from mle_gym.grading.metrics import METRICS
from mle_gym.grading.metrics.lyft_3d_map import iou_matrix, parse_boxes

METRIC = METRICS["lyft_3d_map"]
COLUMN = "PredictionString"


def _score(truth: list[str], predicted: list[str]) -> float:
    ids = [f"s{i:03d}" for i in range(len(truth))]
    answers = pd.DataFrame({"Id": ids, COLUMN: truth})
    return METRIC(answers, pd.DataFrame({"Id": ids, COLUMN: predicted}), [COLUMN])


def test_iou_by_hand() -> None:
    truth, _ = parse_boxes("1 0 0 0 2 4 2 0 car", "s")
    shifted, _ = parse_boxes("1 1 0 0.5 2 4 2 0 car", "s")
    # Footprint 4 x 2 along x: shifted by 1 along x, overlap 3 x 2 = 6; heights [-1, 1]
    # and [-0.5, 1.5] overlap 1.5: 9 over 16 + 16 - 9 = 23.
    assert iou_matrix(shifted, truth)[0, 0] == pytest.approx(9 / 23)
    # Turned by 90 degrees about its centre: the 4 x 2 footprint becomes 2 x 4, overlap
    # 2 x 2 = 4, full heights: 8 over 16 + 16 - 8 = 24.
    turned, _ = parse_boxes(f"1 0 0 0 2 4 2 {np.pi / 2} car", "s")
    assert iou_matrix(turned, truth)[0, 0] == pytest.approx(8 / 24)


def test_map_by_hand() -> None:
    truth = ["1.0 0 0 0 2 4 2 0 car 1.0 50 50 0 1 1 2 0 pedestrian"]
    # car: IoU 9/23 = 0.39 misses every threshold: AP 0; an exact copy at lower
    # confidence then hits at all ten: precision 1/2 at recall 1, AP 0.5.
    # pedestrian: not predicted: AP 0. A bus (not in the answers) is ignored.
    predicted = ["0.9 1 0 0.5 2 4 2 0 car 0.8 0 0 0 2 4 2 0 car 0.99 0 0 0 2 4 2 0 bus"]
    assert _score(truth, predicted) == pytest.approx((0.5 + 0) / 2)
    # Two samples: the second perfectly found; and an empty cell is no prediction.
    assert _score([truth[0], "1 9 9 0 2 2 2 0 car"], [predicted[0], ""]) == pytest.approx(0.125)


def test_only_the_best_overlapping_answer_is_tried() -> None:
    truth = ["1 0 0 0 2 4 2 0 car 1 0.4 0 0 2 4 2 0 car"]
    # Both predictions overlap the first answer best (IoU 1, then 15.6/16.4 = 0.951); the
    # second is a false positive at every threshold although it overlaps the second answer
    # by 14.8/17.2 = 0.86 (Lyft's code does not fall back to the next best answer).
    predicted = ["0.9 0 0 0 2 4 2 0 car 0.8 0.1 0 0 2 4 2 0 car"]
    # A hit then a miss: precision 1 up to recall 1/2, AP 0.5 at each threshold.
    assert _score(truth, predicted) == pytest.approx(0.5)


def _synthetic(seed: int, n: int = 25) -> tuple[list[str], list[str]]:
    rng = np.random.default_rng(seed)
    truth, predicted = [], []
    for _ in range(n):
        boxes, guesses = [], []
        for _ in range(rng.integers(1, 6)):
            name = rng.choice(["car", "pedestrian", "truck"])
            x, y, z = rng.uniform(0, 40), rng.uniform(0, 40), rng.uniform(-20, -15)
            w, length, h, yaw = (
                rng.uniform(0.5, 3),
                rng.uniform(1, 8),
                rng.uniform(1, 3),
                rng.uniform(-3, 3),
            )
            boxes.append(f"1.0 {x} {y} {z} {w} {length} {h} {yaw} {name}")
            j = rng.normal(0, 0.2, 7) * [1, 1, 0.3, 0.2, 0.4, 0.2, 0.3]
            guesses.append(
                f"{rng.random():.2f} {x + j[0]} {y + j[1]} {z + j[2]} {w + abs(j[3])} "
                f"{length + abs(j[4])} {h + abs(j[5])} {yaw + j[6]} {name}"
            )
        truth.append(" ".join(boxes))
        predicted.append(" ".join(guesses))
    return truth, predicted


#: MLE-bench's grade() on the same answers and submission (run side by side).
MLEBENCH = {1: 0.433833333, 2: 0.421740741}


@pytest.mark.parametrize("seed", MLEBENCH)
def test_equals_mlebench_grader_on_synthetic_samples(seed) -> None:
    assert round(_score(*_synthetic(seed)), 9) == MLEBENCH[seed]


BAD = {
    "eight tokens": ("1 0 0 0 2 4 2 car", "9 tokens per box"),
    "double space": ("1 0 0 0 2 4 2 0  car", "9 tokens per box"),
    "word": ("1 0 0 zero 2 4 2 0 car", "8 numbers before its class"),
    "nan": ("nan 0 0 0 2 4 2 0 car", "non-finite"),
    "zero size": ("1 0 0 0 0 4 2 0 car", "not > 0"),
}


@pytest.mark.parametrize("case", BAD, ids=list(BAD))
def test_malformed_cells_are_refused_with_reason(case) -> None:
    cell, reason = BAD[case]
    with pytest.raises(InvalidSubmission, match=reason):
        _score(["1 0 0 0 2 4 2 0 car"], [cell])


def test_small_blocks_of_pairs_give_the_same_value(monkeypatch) -> None:
    truth, predicted = _synthetic(1)
    whole = _score(truth, predicted)
    monkeypatch.setattr("mle_gym.grading.metrics.lyft_3d_map.PAIR_BLOCK", 3)
    assert _score(truth, predicted) == whole
