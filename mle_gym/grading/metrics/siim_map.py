"""SIIM-FISABIO-RSNA COVID-19: MLE-bench's VOC-style mAP at IoU > 0.5 over six classes.

Study rows (`<id>_study`) are answered by one of `negative`, `typical`, `indeterminate`,
`atypical`, image rows (`<id>_image`) by `none` or `opacity` boxes; all six labels are
classes of equal weight, and only labels present in the answers are scored. Kaggle's own
scorer was never published, so MLE-bench wrote one and its medal thresholds were set
against it; we compute exactly what it computes:

- Each cell is split on whitespace into `label confidence x_min y_min x_max y_max` groups
  (labels compared as written).
- For each class and row, the row's predictions are taken by confidence, highest first
  (ties in written order), and each predicted box of the class claims the unclaimed answer
  box of the class with the highest IoU, if that IoU is above 0.5 (strictly); the first
  such box wins ties. A claim is (1, confidence), a miss (0, confidence), an unclaimed
  answer box (1, 0), and a row with neither predictions nor answers of the class (0, 0).
- Each class's AP is scikit-learn's `average_precision_score` over these pairs, and the
  score is the mean over classes.

The matching is greedy per row and class, and no library implements these pairs (the
(0, 0) rows and the zero-confidence misses are MLE-bench's own choice), so it is written
here; AP comes from scikit-learn as in MLE-bench.

Rules checked here, with the reason: six tokens per box and five numbers after each label
(MLE-bench fails the same way) and finite numbers (MLE-bench's NaN confidences crash
scikit-learn and its NaN corners make order-dependent IoUs). A blank cell is a row without
predictions, as MLE-bench reads a cell of spaces (it crashes on an empty one).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from mle_gym.grading.errors import InvalidSubmission
from mle_gym.grading.metrics import Metric

IOU_THRESHOLD = 0.5

Box = tuple[str, float, float, float, float, float]


def parse_boxes(cell: str, row_id: str) -> list[Box]:
    """A cell's `(label, confidence, x_min, y_min, x_max, y_max)` groups (none if blank)."""
    tokens = cell.split()
    if len(tokens) % 6:
        raise InvalidSubmission(
            f"PredictionString of {row_id!r} must hold groups of six tokens "
            f"(label confidence x_min y_min x_max y_max); found {len(tokens)} token(s)"
        )
    boxes = []
    for start in range(0, len(tokens), 6):
        try:
            numbers = [float(t) for t in tokens[start + 1 : start + 6]]
        except ValueError:
            raise InvalidSubmission(
                f"PredictionString of {row_id!r}: a label must be followed by five numbers; "
                f"found {' '.join(tokens[start : start + 6])!r}"
            ) from None
        if not all(math.isfinite(n) for n in numbers):
            raise InvalidSubmission(f"PredictionString of {row_id!r} holds a non-finite number")
        boxes.append((tokens[start], *numbers))
    return boxes


def iou(a: Sequence[float], b: Sequence[float]) -> float:
    """Intersection over union of two corner boxes; 0 when the union is not positive."""
    width = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    height = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = width * height
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def _by_label(boxes: list[Box], ranked: bool) -> dict[str, list[tuple[float, ...]]]:
    """A row's boxes by label as (confidence, corners...), by confidence when `ranked`
    (highest first; ties keep the written order)."""
    if ranked:
        boxes = sorted(boxes, key=lambda b: b[1], reverse=True)
    grouped: dict[str, list[tuple[float, ...]]] = {}
    for label, *numbers in boxes:
        grouped.setdefault(label, []).append(tuple(numbers))
    return grouped


def _row_pairs(
    predicted: list[tuple[float, ...]], truth: list[tuple[float, ...]]
) -> list[tuple[int, float]]:
    """(is a hit or a missed answer, confidence) pairs of one row for one class."""
    answers = [t[1:] for t in truth]
    claimed = [False] * len(answers)
    pairs = []
    for confidence, *corners in predicted:
        best, best_iou = -1, 0.0
        for index, answer in enumerate(answers):
            if claimed[index]:
                continue
            overlap = iou(corners, answer)
            if overlap > best_iou and overlap > IOU_THRESHOLD:
                best, best_iou = index, overlap
        if best >= 0:
            claimed[best] = True
        pairs.append((int(best >= 0), confidence))
    pairs += [(1, 0.0)] * claimed.count(False)
    return pairs or [(0, 0.0)]


def voc_map(truth: list[list[Box]], predicted: list[list[Box]]) -> float:
    """Mean over the answers' labels of the AP of each label's pairs (module docstring)."""
    from sklearn.metrics import average_precision_score

    labels = sorted({box[0] for boxes in truth for box in boxes})
    answer_rows = [_by_label(boxes, ranked=False) for boxes in truth]
    guess_rows = [_by_label(boxes, ranked=True) for boxes in predicted]
    aps = []
    for label in labels:
        pairs = [
            pair
            for guesses, answers in zip(guess_rows, answer_rows, strict=True)
            for pair in _row_pairs(guesses.get(label, []), answers.get(label, []))
        ]
        hits, scores = np.array(pairs, dtype=float).T
        aps.append(average_precision_score(hits, scores))
    return float(np.mean(aps)) if aps else 0.0


def siim_map(answers: pd.DataFrame, predictions: pd.DataFrame, targets: list[str]) -> float:
    """VOC-style mAP of the PredictionString cells, rows aligned by id."""
    (column,) = targets
    ids = answers.iloc[:, 0].tolist()
    truth = [parse_boxes(c, i) for c, i in zip(answers[column], ids, strict=True)]
    predicted = [parse_boxes(c, i) for c, i in zip(predictions[column], ids, strict=True)]
    return voc_map(truth, predicted)


METRICS: dict[str, Metric] = {"siim_map": siim_map}
