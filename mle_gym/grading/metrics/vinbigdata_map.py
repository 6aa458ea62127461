"""VinBigData chest X-ray: COCO mean average precision at IoU 0.4, by pycocotools.

Each cell lists boxes as `class score x_min y_min x_max y_max` groups; the answers are
MLE-bench's gold submission (one box per image and class, score 1.0). pycocotools'
COCOeval scores them with `iouThrs=[0.4]` and the value is `stats[0]`, as in MLE-bench
(read from `eval["precision"]` as `summarize()` reads it, without the other statistics).

MLE-bench's quirk, kept because the medal thresholds were set against its numbers: it hands
the corners `[x_min, y_min, x_max, y_max]` to COCO, which reads a box as
`[x, y, width, height]`. So both answers and predictions are compared as boxes from
`(x_min, y_min)` of size `x_max` by `y_max`; the `area` (used only for COCO's area range)
is still `(x_max - x_min) * (y_max - y_min)`. A class is truncated to an integer
(`int(float)`), and a class no answer carries is ignored, as there.

A second quirk comes from pycocotools, which takes annotation id 0 for "unmatched". The
answer boxes are numbered from 0 in MLE-bench, so the first answer box (first image by id,
lowest class) can never count as found: even the gold submission scores a little below 1.
We keep it (it is the same for every submission). MLE-bench also numbers the predicted
boxes from 0 in the submission's row order, so the first box of the first row, if it hits,
leaves its answer box free for a second hit, and the score depends on row order. We number
predicted boxes from 1, so row order never matters (a deviation, in docs/fidelity.md).

Rules checked here, with the reason: every cell holds groups of six finite numbers separated
by single spaces (MLE-bench fails on empty cells and stray spaces); a box must not have
`x_max < x_min` or `y_max < y_min`. MLE-bench accepts such a box, but its negative area puts
it outside COCO's area range, so it is ignored when it misses yet counted when it hits: a
spray of inverted boxes would earn true positives that cost no false positives.

COCOeval keeps only the 100 best-scored boxes (stable order) of each image and class; we
drop the rest before handing them over, which gives the same value with bounded memory.
"""

from __future__ import annotations

import contextlib
import io
import math

import numpy as np
import pandas as pd

from mle_gym.grading.errors import InvalidSubmission
from mle_gym.grading.metrics import Metric

IOU_THRESHOLD = 0.4
#: COCOeval's largest `maxDets`: boxes beyond it (per image and class) never count.
MAX_DETECTIONS = 100
#: COCOeval's "all" area range, the one `stats[0]` reads.
ALL_AREAS = [0.0, 1e5**2]


def parse_boxes(cell: str, image: str) -> np.ndarray:
    """The (n, 6) array of one cell's `class score x_min y_min x_max y_max` groups."""
    tokens = cell.split(" ")
    try:
        values = np.array([float(t) for t in tokens], dtype=float)
    except ValueError:
        raise InvalidSubmission(
            f"PredictionString of {image!r} must hold numbers separated by single spaces; "
            f"found {cell[:60]!r}"
        ) from None
    if len(values) % 6:
        raise InvalidSubmission(
            f"PredictionString of {image!r} must hold groups of six numbers "
            f"(class score x_min y_min x_max y_max); found {len(values)} number(s)"
        )
    if not np.isfinite(values).all():
        raise InvalidSubmission(f"PredictionString of {image!r} holds a number that is not finite")
    boxes = values.reshape(-1, 6)
    if ((boxes[:, 4] < boxes[:, 2]) | (boxes[:, 5] < boxes[:, 3])).any():
        raise InvalidSubmission(
            f"PredictionString of {image!r} has a box with x_max < x_min or y_max < y_min"
        )
    return boxes


def _annotations(boxes: np.ndarray, image: int, first_id: int, scored: bool) -> list[dict]:
    """COCO records with MLE-bench's corner boxes (see the module docstring)."""
    records = []
    for offset, (label, score, x_min, y_min, x_max, y_max) in enumerate(boxes.tolist()):
        record = {
            "id": first_id + offset,
            "image_id": image,
            "category_id": math.trunc(label),
            "bbox": [x_min, y_min, x_max, y_max],
            "area": (x_max - x_min) * (y_max - y_min),
            "iscrowd": 0,
        }
        if scored:
            record["score"] = score
        records.append(record)
    return records


def _best(boxes: np.ndarray, classes: set[int]) -> np.ndarray:
    """The boxes COCOeval can use: known classes, the 100 best of each class (stable)."""
    labels = np.trunc(boxes[:, 0])
    boxes = boxes[np.isin(labels, list(classes))]
    if len(boxes) <= MAX_DETECTIONS:
        return boxes
    labels = np.trunc(boxes[:, 0])
    order = np.lexsort((-boxes[:, 1], labels))
    rank = np.empty(len(boxes), dtype=int)
    sorted_labels = labels[order]
    starts = np.searchsorted(sorted_labels, sorted_labels, side="left")
    rank[order] = np.arange(len(boxes)) - starts
    return boxes[rank < MAX_DETECTIONS]


def coco_map(truth: list[np.ndarray], predicted: list[np.ndarray]) -> float:
    """COCO AP at IoU 0.4 over all classes of `truth`; image i of both lists is one image."""
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    gts: list[dict] = []
    for image, boxes in enumerate(truth):
        gts += _annotations(boxes, image, len(gts), scored=False)
    classes = sorted({g["category_id"] for g in gts})
    dts: list[dict] = []
    for image, boxes in enumerate(predicted):
        dts += _annotations(_best(boxes, set(classes)), image, len(dts) + 1, scored=True)
    images = [{"id": i} for i in range(len(truth))]
    categories = [{"id": c} for c in classes]
    with contextlib.redirect_stdout(io.StringIO()):
        ground, found = COCO(), COCO()
        ground.dataset = {"images": images, "categories": categories, "annotations": gts}
        found.dataset = {"images": images, "categories": categories, "annotations": dts}
        ground.createIndex()
        found.createIndex()
        evaluation = COCOeval(ground, found, "bbox")
        evaluation.params.imgIds = list(range(len(truth)))
        evaluation.params.iouThrs = np.array([IOU_THRESHOLD])
        # Only what `stats[0]` reads: area range "all", 100 boxes. The other ranges and
        # limits (small/medium/large, 1 and 10 boxes) would quadruple the work.
        evaluation.params.areaRng = [ALL_AREAS]
        evaluation.params.areaRngLbl = ["all"]
        evaluation.params.maxDets = [MAX_DETECTIONS]
        evaluation.evaluate()
        evaluation.accumulate()
    precision = evaluation.eval["precision"][:, :, :, 0, 0]
    return float(np.mean(precision[precision > -1]))


def vinbigdata_map(answers: pd.DataFrame, predictions: pd.DataFrame, targets: list[str]) -> float:
    """mAP@0.4 of the PredictionString cells against the gold boxes, rows aligned by id."""
    (column,) = targets
    ids = answers.iloc[:, 0].tolist()
    truth = [parse_boxes(c, i) for c, i in zip(answers[column], ids, strict=True)]
    predicted = [parse_boxes(c, i) for c, i in zip(predictions[column], ids, strict=True)]
    return coco_map(truth, predicted)


METRICS: dict[str, Metric] = {"vinbigdata_map": vinbigdata_map}
