"""salt_iou_precision: hand values, values MLE-bench's grader gave for the same masks, its
empty-prediction quirk, and refusals of broken RLE naming the image."""

from __future__ import annotations

import pandas as pd
import pytest

from mle_gym.grading.errors import InvalidSubmission
from mle_gym.grading.metrics import METRICS
from mle_gym.grading.metrics.salt_iou_precision import salt_iou_precision


def _score(truth: list[str], predicted: list[str]) -> float:
    ids = [f"{i:010x}" for i in range(len(truth))]
    return salt_iou_precision(
        pd.DataFrame({"id": ids, "rle_mask": truth}),
        pd.DataFrame({"id": ids, "rle_mask": predicted}),
        ["rle_mask"],
    )


def test_registered_under_its_name() -> None:
    assert METRICS["salt_iou_precision"] is salt_iou_precision


def test_hand_values() -> None:
    # IoU 4000/5000 = 0.8 beats 0.5, 0.55, ..., 0.75 (6 of 10 thresholds), not 0.8 itself.
    assert _score(["1 5000"], ["1 4000"]) == pytest.approx(0.6)
    # No salt: an empty prediction is perfect, any pixel is a miss.
    assert _score([""], [""]) == 1.0
    assert _score([""], ["1 1"]) == 0.0
    # Disjoint masks.
    assert _score(["1 100"], ["101 100"]) == 0.0
    # IoU 9000/10201 = 0.882: 8 thresholds.
    assert _score(["1 10201"], ["1 9000"]) == pytest.approx(0.8)


def test_equals_mlebench_grader_on_the_same_masks() -> None:
    # MLE-bench's grade() on these five rows (pandas with applymap) returned
    # 0.6599999999999999; per row 0.6, 1.0, 0.9, 0.0, 0.8.
    truth = ["1 5000", "", "1 101 203 50 5000 300", "51 30 152 30 253 30", "1 10201"]
    predicted = ["1 4000", "", "1 101 203 45 5000 280", "", "1 9000"]
    assert _score(truth, predicted) == 0.6599999999999999


def test_empty_prediction_quirk_of_mlebench() -> None:
    # MLE-bench gives an empty guess the IoU salt/10201: 6000/10201 = 0.588 -> 2 thresholds,
    # 10201/10201 -> all 10. Its grader returned 0.6 for these two rows.
    assert _score(["1 6000", "1 10201"], ["", ""]) == pytest.approx(0.6)


@pytest.mark.parametrize(
    ("predicted", "reason"),
    [
        ("10200 5", "past the image's last pixel"),
        ("1 2 3", "start/length pairs"),
        ("5 1 1 1", "increasing order"),
        ("1 1.5", "only integers"),
    ],
)
def test_broken_rle_is_refused_naming_the_image(predicted: str, reason: str) -> None:
    with pytest.raises(InvalidSubmission, match=rf"id '0000000001'.*{reason}"):
        _score(["", "1 5"], ["", predicted])
