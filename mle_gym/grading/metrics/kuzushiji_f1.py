"""Kuzushiji Recognition's F1: a predicted character counts when its point lies in a box.

The answers hold `label x y width height` boxes per page; a prediction is `label x y`. Box
by box in the answer's order, a box is found when an unused prediction with its label lies
strictly inside it; the first such prediction (in the row's order) is used up. Unused
predictions are false positives, boxes not found false negatives; F1 comes from the counts
pooled over all pages (0 when nothing is found). This is Kaggle's published rule, as
MLE-bench's port of it computes it.

No library scores points against boxes with this greedy, order-dependent matching, so it
is written here. Candidate (box, point) pairs come from one sort of the points by label
and x, so a box meets only the points of its label in its x range; they are tested in
numpy blocks, and the greedy walk in Python visits only the pairs with the point inside,
about one per box on a real page. Cells are split on single spaces, as MLE-bench splits
them, so a doubled or trailing space makes a row malformed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from mle_gym.grading.errors import InvalidSubmission
from mle_gym.grading.metrics import Metric
from mle_gym.grading.metrics.text_accuracy import PANDAS_MISSING

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

#: Most same-label (box, point) pairs compared at once.
_BLOCK = 1 << 22


def _codes(labels: list[str], known: dict[str, int]) -> np.ndarray:
    """Integer codes of `labels`, numbered in `known` (shared by a page's two sides)."""
    import numpy as np

    return np.array([known.setdefault(label, len(known)) for label in labels], dtype=np.int64)


def _points(cell: str, page: str) -> tuple[list[str], np.ndarray]:
    """Labels and an (n, 2) array of x, y of a prediction cell; malformed cells refused."""
    import numpy as np

    if cell in PANDAS_MISSING:
        return [], np.zeros((0, 2))
    tokens = cell.split(" ")
    if len(tokens) % 3:
        raise InvalidSubmission(
            f"labels of image {page!r} must be 'label x y' triples separated by single "
            f"spaces; found {len(tokens)} space-separated values"
        )
    try:
        xy = np.array([tokens[1::3], tokens[2::3]]).astype(float).T
    except ValueError:
        raise InvalidSubmission(
            f"labels of image {page!r}: x and y must be numbers, in 'label x y' triples"
        ) from None
    return tokens[0::3], xy


def _boxes(cell: str) -> tuple[list[str], np.ndarray]:
    """Labels and an (n, 4) array of xmin, ymin, xmax, ymax of an answer cell."""
    import numpy as np

    if cell in PANDAS_MISSING:
        return [], np.zeros((0, 4))
    tokens = cell.split(" ")
    x, y, w, h = (np.array(tokens[k::5]).astype(float) for k in range(1, 5))
    return tokens[0::5], np.stack([x, y, x + w, y + h], axis=1)


def _candidates(
    boxes: np.ndarray, box_codes: np.ndarray, points: np.ndarray, point_codes: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """For each box, the range [low, high) of `order` holding every point of its label
    whose x is about within the box's x range, and `order` (points by label, then x).

    Points are keyed `code * span + x`, x clipped to just beyond the boxes' extent, so one
    sorted array serves every label. The ranges are padded by half a pixel: rounding in the
    keys can only add candidates, which the exact test then drops.
    """
    import numpy as np

    left, right = boxes[:, 0].min(), boxes[:, 2].max()
    span = right - left + 4
    x = np.clip(points[:, 0], left - 1, right + 1) - left + 1
    keys = point_codes * span + x
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    base = box_codes * span - left + 1
    low = np.searchsorted(sorted_keys, base + boxes[:, 0] - 0.5, side="left")
    high = np.searchsorted(sorted_keys, base + boxes[:, 2] + 0.5, side="right")
    return order, np.stack([low, np.maximum(high, low)], axis=1)


def _inside_pairs(
    boxes: np.ndarray, box_codes: np.ndarray, points: np.ndarray, point_codes: np.ndarray
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(box, point) index pairs of the same label with the point strictly inside the box,
    by box, then point, in order; in blocks of at most about `_BLOCK` candidate pairs."""
    import numpy as np

    if not len(boxes) or not len(points):
        return
    order, ranges = _candidates(boxes, box_codes, points, point_codes)
    counts = ranges[:, 1] - ranges[:, 0]
    block_of = np.cumsum(counts) // _BLOCK
    for block in np.unique(block_of[counts > 0]):
        rows = np.flatnonzero((block_of == block) & (counts > 0))
        box = np.repeat(rows, counts[rows])
        starts = np.cumsum(counts[rows]) - counts[rows]
        offset = np.arange(len(box)) - np.repeat(starts, counts[rows])
        point = order[np.repeat(ranges[rows, 0], counts[rows]) + offset]
        x, y = points[point, 0], points[point, 1]
        b = boxes[box]
        inside = (b[:, 0] < x) & (b[:, 2] > x) & (b[:, 1] < y) & (b[:, 3] > y)
        inside &= box_codes[box] == point_codes[point]
        box, point = box[inside], point[inside]
        by_box = np.lexsort((point, box))
        yield box[by_box], point[by_box]


def page_counts(truth: str, predicted: str, page: str) -> tuple[int, int, int]:
    """(true positives, predictions, boxes) of one page.

    Boxes in order each take the first unused same-label point inside them; only the pairs
    with the point inside are walked in Python.
    """
    box_labels, boxes = _boxes(truth)
    point_labels, points = _points(predicted, page)
    known: dict[str, int] = {}
    box_codes, point_codes = _codes(box_labels, known), _codes(point_labels, known)
    used: set[int] = set()
    last_hit = -1
    for box_block, point_block in _inside_pairs(boxes, box_codes, points, point_codes):
        for box, point in zip(box_block.tolist(), point_block.tolist(), strict=True):
            if box != last_hit and point not in used:
                used.add(point)
                last_hit = box
    return len(used), len(point_labels), len(box_labels)


def kuzushiji_f1(answers: pd.DataFrame, predictions: pd.DataFrame, targets: list[str]) -> float:
    """F1 of pooled counts, 0 without a true positive; computed from precision and recall
    in MLE-bench's order of operations, so the floats agree to the last bit."""
    (column,) = targets
    ids = answers.iloc[:, 0]
    hits = predicted = boxes = 0
    for page, truth, cell in zip(ids, answers[column], predictions[column], strict=True):
        tp, n_points, n_boxes = page_counts(truth, cell, page)
        hits, predicted, boxes = hits + tp, predicted + n_points, boxes + n_boxes
    if not hits:
        return 0.0
    precision, recall = hits / predicted, hits / boxes
    return 2 * precision * recall / (precision + recall)


METRICS: dict[str, Metric] = {"kuzushiji_f1": kuzushiji_f1}
