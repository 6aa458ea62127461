"""Vesuvius Challenge ink detection: pixel F0.5 of each fragment's ink mask, averaged over
the test fragments (MLE-bench's test set is one fragment).

Masks are Kaggle RLE strings counted along rows (row-major); each answer carries its
fragment's shape (see `rle_shapes`). F0.5 needs only three counts (true, predicted and
shared ink pixels), which come from the checked runs without building the ~40-megapixel
masks, and the score is scikit-learn's `fbeta_score` formula on them,
1.25 TP / (0.25 (TP + FN) + (TP + FP)), in the same order of operations (0 when both masks
are empty, scikit-learn's zero_division); the tests check both agree.

A cell pandas reads as missing (empty, `NA`, ...) is refused, as MLE-bench refuses it; a
blank string is the empty mask.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mle_gym.grading.metrics import Metric
from mle_gym.grading.metrics.rle_shapes import pixel_counts

if TYPE_CHECKING:
    import pandas as pd

BETA2 = 0.5**2


def f05_from_counts(shared: int, true: int, predicted: int) -> float:
    """scikit-learn's F-beta (beta 0.5) of one mask from its pixel counts."""
    denominator = BETA2 * float(true) + float(predicted)
    return (1 + BETA2) * float(shared) / denominator if denominator else 0.0


def vesuvius_f05(answers: pd.DataFrame, predictions: pd.DataFrame, targets: list[str]) -> float:
    """Mean over fragments of each fragment's pixel F0.5."""
    import numpy as np

    (column,) = targets
    scores = []
    for fragment, answer, cell in zip(
        answers.iloc[:, 0], answers[column], predictions[column], strict=True
    ):
        shared, predicted, true = pixel_counts(
            answer,
            cell,
            f"{column} of fragment {fragment!r}",
            empty_mask=None,
            missing_hint="write the RLE of its ink mask",
        )
        scores.append(f05_from_counts(shared, true, predicted))
    return float(np.mean(scores))


METRICS: dict[str, Metric] = {"vesuvius_f05": vesuvius_f05}
