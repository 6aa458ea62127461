"""TGS Salt's score: per image, the share of IoU thresholds 0.5, 0.55, ..., 0.95 that the
predicted salt mask beats, averaged over images.

Each 101x101 image holds at most one "object" (all its salt pixels), so the matching of
Kaggle's object-detection precision reduces to one IoU per image: precision 1 at a
threshold the IoU strictly exceeds, else 0. An image without salt scores 1 for an empty
prediction and 0 for any other. No library implements this single-object reduction, so it
is written here, on pixel counts of RLE-decoded masks (see `rle`).

MLE-bench's grader (which MLE-bench's thresholds sit against) builds the IoU from
`np.histogram2d` with 2 bins over each mask's own value range. When the prediction is empty
and the truth is not, the prediction's single value 0 lands in the "object" bin, so its IoU
comes out as (salt pixels) / (all 10,201 pixels) instead of 0: an empty guess scores on
images more than half salt. We reproduce that number exactly, to grade as it does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mle_gym.grading.errors import InvalidSubmission
from mle_gym.grading.metrics.rle import decode_rle

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

SHAPE = (101, 101)


def _pixel_counts(column: pd.Series, ids: pd.Series, *, submitted: bool) -> np.ndarray:
    import numpy as np

    masks = np.zeros((len(column), SHAPE[0] * SHAPE[1]), dtype=bool)
    for row, (image, text) in enumerate(zip(ids, column, strict=True)):
        try:
            masks[row] = decode_rle(text, SHAPE).ravel(order="F")
        except InvalidSubmission as error:
            if not submitted:
                raise
            raise InvalidSubmission(f"rle_mask of id {image!r}: {error}") from None
    return masks


def image_scores(truth: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """Per-image score of flat boolean masks (one image a row), as MLE-bench computes it."""
    import numpy as np

    true_area = truth.sum(axis=1)
    predicted_area = predicted.sum(axis=1)
    overlap = (truth & predicted).sum(axis=1)
    union = true_area + predicted_area - overlap
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = np.where(
            predicted_area == 0, true_area / truth.shape[1], overlap / np.maximum(union, 1)
        )
    # The same float thresholds MLE-bench sweeps (0.6000000000000001, ...).
    thresholds = np.arange(0.5, 1.0, 0.05)
    hits = (iou[:, None] > thresholds[None, :]).mean(axis=1)
    no_salt = true_area == 0
    return np.where(no_salt, (predicted_area == 0).astype(float), hits)


def salt_iou_precision(
    answers: pd.DataFrame, predictions: pd.DataFrame, targets: list[str]
) -> float:
    import numpy as np

    (column,) = targets
    ids = predictions[predictions.columns[0]]
    truth = _pixel_counts(answers[column], ids, submitted=False)
    predicted = _pixel_counts(predictions[column], ids, submitted=True)
    return float(np.mean(image_scores(truth, predicted)))


METRICS = {"salt_iou_precision": salt_iou_precision}
