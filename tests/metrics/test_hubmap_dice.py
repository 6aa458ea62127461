"""hubmap_dice: hand values (also MLE-bench's result on the same rows), both-empty images,
run counting equal to mask counting, and refusals naming the slide."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mle_gym.formats.rle import encode_rle, with_shape
from mle_gym.grading.errors import InvalidSubmission
from mle_gym.grading.metrics import METRICS
from mle_gym.grading.metrics.hubmap_dice import hubmap_dice


def _score(shapes: list[tuple[int, int]], truth: list[str], predicted: list[str]) -> float:
    ids = [f"s{i}" for i in range(len(truth))]
    cells = [with_shape(h, w, t) for (h, w), t in zip(shapes, truth, strict=True)]
    return hubmap_dice(
        pd.DataFrame({"id": ids, "predicted": cells}),
        pd.DataFrame({"id": ids, "predicted": predicted}),
        ["predicted"],
    )


def test_registered_under_its_name() -> None:
    assert METRICS["hubmap_dice"] is hubmap_dice


def test_hand_values_equal_mlebench() -> None:
    # 1-10 vs 6-15: 2*5/20; {5-8, 20-25} vs {7-10, 21-22}: 2*4/16; both empty: 1;
    # truth only: 0. Mean 0.5, which MLE-bench's grade() also returned for these rows.
    shapes = [(5, 10), (4, 8), (5, 5), (7, 6)]
    truth = ["1 10", "5 4 20 6", "", "3 3"]
    predicted = ["6 10", "7 4 21 2", "", ""]
    assert _score(shapes, truth, predicted) == 0.5


def test_equals_dice_of_decoded_masks() -> None:
    rng = np.random.default_rng(0)
    shapes, truth, predicted, expected = [], [], [], []
    for _ in range(10):
        x, y = rng.random((2, 23, 31)) < 0.3
        shapes.append(x.shape)
        truth.append(encode_rle(x))
        predicted.append(encode_rle(y))
        expected.append(2 * (x & y).sum() / (x.sum() + y.sum()))
    assert _score(shapes, truth, predicted) == pytest.approx(np.mean(expected), abs=1e-12)


@pytest.mark.parametrize(
    ("predicted", "reason"),
    [("40 2", "ends past the image's last pixel \\(40\\)"), ("1 2 2 2", "overlaps")],
)
def test_broken_rle_is_refused_naming_the_slide(predicted: str, reason: str) -> None:
    with pytest.raises(InvalidSubmission, match=f"predicted of id 's1'.*{reason}"):
        _score([(5, 8), (5, 8)], ["1 3", "1 3"], ["1 3", predicted])
