"""HuBMAP kidney score: Dice 2 |X ∩ Y| / (|X| + |Y|) of each image's predicted (X) and true
(Y) glomerulus pixels, averaged over images; 1 when both masks are empty (as Kaggle and
MLE-bench define it).

Images are whole kidney slides of up to ~1.7 gigapixels, so masks are never built: each
RLE string is checked against its image's size (see `rle`) and the three counts come from
its runs. MLE-bench decodes both masks of every image into full boolean arrays for the same
counts. Our own code because no library computes Dice on run-length encodings.

Answers carry their image's shape (`with_shape`), packed by the competition's loader.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mle_gym.formats.rle import split_shape
from mle_gym.grading.errors import InvalidSubmission
from mle_gym.grading.metrics.rle import rle_runs, runs_overlap

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    Runs = tuple[np.ndarray, np.ndarray]


def image_dice(true_runs: Runs, predicted_runs: Runs) -> float:
    """Dice of two checked sets of runs (1.0 when both are empty)."""
    true_area = int((true_runs[1] - true_runs[0]).sum())
    predicted_area = int((predicted_runs[1] - predicted_runs[0]).sum())
    if true_area + predicted_area == 0:
        return 1.0
    return 2 * runs_overlap(true_runs, predicted_runs) / (true_area + predicted_area)


def hubmap_dice(answers: pd.DataFrame, predictions: pd.DataFrame, targets: list[str]) -> float:
    import numpy as np

    (column,) = targets
    scores = []
    for image, answer, cell in zip(
        answers.iloc[:, 0], answers[column], predictions[column], strict=True
    ):
        (height, width), truth = split_shape(answer)
        try:
            predicted = rle_runs(cell, height * width)
        except InvalidSubmission as error:
            raise InvalidSubmission(f"{column} of id {image!r}: {error}") from None
        scores.append(image_dice(rle_runs(truth, height * width), predicted))
    return float(np.mean(scores))


METRICS = {"hubmap_dice": hubmap_dice}
