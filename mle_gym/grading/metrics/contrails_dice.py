"""Global Dice of contrail masks (Google Research, Identify Contrails): 2 |X ∩ Y| / (|X| + |Y|)
over the pixels of all test records at once, X predicted and Y true.

Masks are Kaggle RLE strings, counted down each column (see `rle`), with `-` for an empty
mask. Each answer carries its record's image shape (see `rle_shapes`); each string is
checked against that shape, then counted from its runs without building masks: MLE-bench
decodes every mask into one array of 1,856 x 256 x 256 pixels for the same counts.

A cell pandas reads as missing (empty, `NA`, ...) is refused, as MLE-bench's decoder
refuses it; an empty mask must be written `-`. When neither side has any contrail pixel
Dice is undefined (MLE-bench returns NaN); we score it 1, agreement being perfect. The
real test set holds contrails, so this never decides a real score.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mle_gym.grading.metrics import Metric
from mle_gym.grading.metrics.rle_shapes import pixel_counts

if TYPE_CHECKING:
    import pandas as pd


def contrails_dice(answers: pd.DataFrame, predictions: pd.DataFrame, targets: list[str]) -> float:
    """Pooled Dice of every record's predicted and true pixels."""
    (column,) = targets
    overlap = predicted = true = 0
    for record, answer, cell in zip(
        answers.iloc[:, 0], answers[column], predictions[column], strict=True
    ):
        shared, mine, theirs = pixel_counts(
            answer,
            cell,
            f"encoded_pixels of record {record!r}",
            empty_mask="-",
            missing_hint="write '-' for a record without contrails",
        )
        overlap, predicted, true = overlap + shared, predicted + mine, true + theirs
    if predicted + true == 0:
        return 1.0
    return 2 * overlap / (predicted + true)


METRICS: dict[str, Metric] = {"contrails_dice": contrails_dice}
