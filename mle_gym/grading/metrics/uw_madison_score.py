"""UW-Madison GI tract score: 0.4 x mean 2D Dice + 0.6 x (1 - mean 3D Hausdorff distance),
as MLE-bench computes it.

- Dice per row (one organ class on one slice), from RLE runs; rows where both masks are
  empty are skipped (NaN-mean).
- Hausdorff per scan (case and day): the slices' masks, all classes OR-ed together, stacked
  in slice order into a volume; voxel coordinates divided by the volume's shape
  (depth, height, width) and the distance divided by sqrt(3), so it lies in [0, 1]. Both
  empty: skipped; identical: 0; one empty, or more than 10x the true voxels predicted: 1.

The Hausdorff distance comes from exact nearest-neighbour queries of scipy's k-d tree
(voxels of one volume outside the other, against the other's surface voxels) instead of
MLE-bench's `directed_hausdorff` over all voxels: the same distance, at a cost of
O(n log n) whatever the prediction, where `directed_hausdorff` can take quadratic time.

Masks are decoded as MLE-bench decodes them: pixel k at row (k-1) mod height, column
(k-1) div height. Rows are matched by (id, class): MLE-bench pairs them by position, so
its score depends on the row order (and it accepts truncated files); we require every test
row and score the rows in the answers' order. Answers carry their slice's shape
(`with_shape`), packed by the competition's loader.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mle_gym.formats.rle import split_shape
from mle_gym.grading.errors import InvalidSubmission
from mle_gym.grading.metrics.rle import rle_runs, runs_overlap, runs_to_flat

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

DICE_WEIGHT, HAUSDORFF_WEIGHT = 0.4, 0.6


def _by_id_and_class(frame: pd.DataFrame, class_column: str) -> pd.DataFrame:
    import numpy as np

    ids = frame.iloc[:, 0].to_numpy(str)
    order = np.lexsort((frame[class_column].to_numpy(str), ids))
    return frame.iloc[order].reset_index(drop=True)


def _check_pairs(answers: pd.DataFrame, predictions: pd.DataFrame, class_column: str) -> None:
    import numpy as np

    wrong = np.flatnonzero(
        answers[class_column].to_numpy(str) != predictions[class_column].to_numpy(str)
    )
    if len(wrong):
        i = int(wrong[0])
        raise InvalidSubmission(
            f"id {answers.iloc[i, 0]!r} needs exactly one row for each class; found "
            f"{class_column} {predictions[class_column][i]!r} where "
            f"{answers[class_column][i]!r} was expected (one row per id and class)"
        )


def hausdorff_3d(predicted: np.ndarray, true: np.ndarray) -> float:
    """Normalised symmetric Hausdorff distance of two boolean volumes, MLE-bench's rules."""
    import numpy as np

    predicted_count, true_count = int(predicted.sum()), int(true.sum())
    if predicted_count == 0 and true_count == 0:
        return float("nan")
    if np.array_equal(predicted, true):
        return 0.0
    if predicted_count == 0 or true_count == 0 or predicted_count > 10 * true_count:
        return 1.0
    scale = np.asarray(true.shape, dtype=float)
    return max(_farthest(predicted, true, scale), _farthest(true, predicted, scale)) / np.sqrt(3)


def _farthest(source: np.ndarray, target: np.ndarray, scale: np.ndarray) -> float:
    """max over voxels of `source` of the distance to the nearest voxel of `target`, with
    coordinates divided by `scale` (MLE-bench's normalisation).

    Only source voxels outside `target` can be away from it, and the nearest target voxel
    of such a point always has a 6-neighbour outside `target` (otherwise its neighbour
    towards the point would be nearer): a k-d tree of target's surface answers exactly.
    """
    import numpy as np
    from scipy.spatial import cKDTree

    outside = source & ~target
    if not outside.any():
        return 0.0
    surface = target & ~_interior(target)
    tree = cKDTree(np.argwhere(surface) / scale)
    distances, _ = tree.query(np.argwhere(outside) / scale)
    return float(distances.max())


def _interior(volume: np.ndarray) -> np.ndarray:
    """Voxels whose 6 neighbours inside the volume all belong to it (a binary erosion,
    written with array shifts: several times faster than scipy's on these volumes)."""
    inner = volume.copy()
    for axis in range(volume.ndim):
        ahead = [slice(None)] * volume.ndim
        behind = [slice(None)] * volume.ndim
        ahead[axis], behind[axis] = slice(1, None), slice(None, -1)
        inner[tuple(ahead)] &= volume[tuple(behind)]
        inner[tuple(behind)] &= volume[tuple(ahead)]
    return inner


def _volumes(
    frame: pd.DataFrame, column: str, shapes: list[tuple[int, int]], *, submitted: bool
) -> tuple[list[tuple[np.ndarray, np.ndarray]], list[np.ndarray]]:
    """Per row: the checked runs; per scan (case and day, in id order): the OR-ed volume."""
    import numpy as np

    ids = frame.iloc[:, 0].tolist()
    runs = []
    for image, cell, (height, width) in zip(ids, frame[column], shapes, strict=True):
        if not submitted:
            cell = split_shape(cell)[1]
        try:
            runs.append(rle_runs(cell, height * width))
        except InvalidSubmission as error:
            if not submitted:
                raise
            raise InvalidSubmission(f"{column} of id {image!r}: {error}") from None
    volumes, slices, current = [], [], None
    for row, image in enumerate(ids):
        scan = image.split("_slice_")[0]
        if scan != current:
            if slices:
                volumes.append(np.stack(slices))
            slices, current, last = [], scan, None
        height, width = shapes[row]
        flat = runs_to_flat(*runs[row], height * width)
        if image == last:
            slices[-1] |= flat.reshape((height, width), order="F")
        else:
            slices.append(flat.reshape((height, width), order="F"))
        last = image
    if slices:
        volumes.append(np.stack(slices))
    return runs, volumes


def _dice(truth: tuple[np.ndarray, np.ndarray], predicted: tuple[np.ndarray, np.ndarray]) -> float:
    areas = int((truth[1] - truth[0]).sum()) + int((predicted[1] - predicted[0]).sum())
    if areas == 0:
        return float("nan")
    return 2 * runs_overlap(truth, predicted) / areas


def uw_madison_score(answers: pd.DataFrame, predictions: pd.DataFrame, targets: list[str]) -> float:
    import numpy as np

    class_column, column = targets
    answers = _by_id_and_class(answers, class_column)
    predictions = _by_id_and_class(predictions, class_column)
    _check_pairs(answers, predictions, class_column)
    shapes = [split_shape(cell)[0] for cell in answers[column]]
    true_runs, true_volumes = _volumes(answers, column, shapes, submitted=False)
    predicted_runs, predicted_volumes = _volumes(predictions, column, shapes, submitted=True)
    dice = np.nanmean([_dice(t, p) for t, p in zip(true_runs, predicted_runs, strict=True)])
    distances = [hausdorff_3d(p, t) for p, t in zip(predicted_volumes, true_volumes, strict=True)]
    return float(DICE_WEIGHT * dice + HAUSDORFF_WEIGHT * (1 - np.nanmean(distances)))


METRICS = {"uw_madison_score": uw_madison_score}
