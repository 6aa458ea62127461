"""Kaggle run-length encoding (RLE) of binary masks: checked parsing and decoding (the
encoding, and answer cells that carry a shape, are `mle_gym.formats.rle`).

A Kaggle RLE string is "start length start length ...": 1-based starts of runs of mask
pixels, counted down each column first (column-major, ``order="F"``) unless a
competition says otherwise. Our own code rather than a library's because the checks are
the point: every string an agent submits is validated here before any pixel is touched, so
a malformed one is refused with a precise reason instead of crashing the grader or being
silently clipped (MLE-bench's decoder drops runs past the image's end).

Runs are kept as 0-based half-open ``(starts, ends)`` arrays so that metrics on giant
images (HuBMAP's are up to ~1.7 gigapixels) can count overlaps without building masks.
Defines no metric; shared by the segmentation metrics.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from mle_gym.formats.rle import Order
from mle_gym.grading.errors import InvalidSubmission

if TYPE_CHECKING:
    import numpy as np

_ONLY_DIGITS_AND_SPACE = re.compile(r"[0-9 \t\n\r\f\v]*")
_TOO_LONG_NUMBER = re.compile(r"[0-9]{19}")
_SHOWN = 60


def _shown(text: str) -> str:
    return repr(text if len(text) <= _SHOWN else text[:_SHOWN] + "...")


def rle_runs(text: str, size: int) -> tuple[np.ndarray, np.ndarray]:
    """The runs of `text` as 0-based half-open (starts, ends) int64 arrays, checked.

    `size` is the number of pixels of the image. Refuses (InvalidSubmission) anything but
    whitespace-separated non-negative integers in pairs, starts below 1, lengths below 1,
    runs past the last pixel, starts not in increasing order and overlapping runs. An empty
    or blank string is the empty mask.
    """
    import numpy as np

    if not isinstance(text, str):
        raise InvalidSubmission(f"an RLE mask must be text, got {type(text).__name__}")
    if _ONLY_DIGITS_AND_SPACE.fullmatch(text) is None:
        raise InvalidSubmission(f"RLE {_shown(text)} must hold only integers separated by spaces")
    if _TOO_LONG_NUMBER.search(text):
        raise InvalidSubmission(f"RLE {_shown(text)} holds a number with 19 or more digits")
    numbers = (
        np.fromstring(text, dtype=np.int64, sep=" ") if text.strip() else np.zeros(0, np.int64)
    )
    if numbers.size % 2:
        raise InvalidSubmission(
            f"RLE {_shown(text)} has {numbers.size} numbers; it needs start/length pairs"
        )
    starts, lengths = numbers[0::2] - 1, numbers[1::2]
    _check_runs(text, starts, lengths, size)
    return starts, starts + lengths


def _check_runs(text: str, starts: np.ndarray, lengths: np.ndarray, size: int) -> None:
    import numpy as np

    def refuse(index: np.ndarray, why: str) -> None:
        i = int(np.flatnonzero(index)[0])
        raise InvalidSubmission(
            f"RLE {_shown(text)}: run {i + 1} (start {int(starts[i]) + 1}, length "
            f"{int(lengths[i])}) {why}"
        )

    if (starts < 0).any():
        refuse(starts < 0, "starts before pixel 1")
    if (lengths < 1).any():
        refuse(lengths < 1, "must have a length of at least 1")
    past = starts + lengths > size
    if past.any():
        refuse(past, f"ends past the image's last pixel ({size})")
    unsorted = np.concatenate([[False], starts[1:] < starts[:-1]])
    if unsorted.any():
        refuse(unsorted, "starts before the previous run; starts must be in increasing order")
    overlapping = np.concatenate([[False], starts[1:] < (starts + lengths)[:-1]])
    if overlapping.any():
        refuse(overlapping, "overlaps the previous run")


def validate_rle(text: str, shape: tuple[int, int]) -> None:
    """Raise InvalidSubmission with the reason when `text` is not a valid RLE for `shape`."""
    rle_runs(text, shape[0] * shape[1])


def decode_rle(text: str, shape: tuple[int, int], *, order: Order = "F") -> np.ndarray:
    """The boolean mask of `shape` (height, width) that `text` encodes, after the checks."""
    size = shape[0] * shape[1]
    starts, ends = rle_runs(text, size)
    flat = runs_to_flat(starts, ends, size)
    return flat.reshape(shape, order=order)


def runs_to_flat(starts: np.ndarray, ends: np.ndarray, size: int) -> np.ndarray:
    """The flat boolean mask of `size` pixels covered by checked (sorted, disjoint) runs.

    Costs the number of mask pixels, not of image pixels, beyond the zeroed array.
    """
    import numpy as np

    flat = np.zeros(size, dtype=bool)
    lengths = ends - starts
    # Pixel k of the mask, counted over all runs, lies at k + (its run's start - pixels
    # in the runs before it).
    shift = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
    flat[np.arange(len(shift)) + shift] = True
    return flat


def runs_overlap(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> int:
    """Number of pixels covered by both sets of checked runs, without building masks."""
    import numpy as np

    up, down = np.ones(len(a[0]) + len(b[0]), np.int64), -np.ones(len(a[1]) + len(b[1]), np.int64)
    points = np.concatenate([a[0], b[0], a[1], b[1]])
    steps = np.concatenate([up, down])
    order = np.argsort(points, kind="stable")
    points, steps = points[order], steps[order]
    depth = np.cumsum(steps)
    # Between consecutive points the depth is constant; both sets cover where it is 2.
    widths = np.diff(points)
    return int(widths[depth[:-1] == 2].sum())
