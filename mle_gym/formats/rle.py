"""Kaggle run-length encoding (RLE) of binary masks, and answer cells carrying a shape.

A Kaggle RLE string is "start length start length ...": 1-based starts of runs of mask
pixels, counted down each column first (column-major, ``order="F"``) unless a competition
says otherwise. Prepare writes masks with `encode_rle`; grading checks and decodes them
(`mle_gym.grading.metrics.rle`). An RLE string means nothing without its image's height
and width, while validation hands a metric only the answers' target column: competitions
whose images differ in size pack each shape into its answer cell (`with_shape`,
`load_shaped_answers`) and the metric splits it again (`split_shape`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

from mle_gym.formats.csv_text import read_as_text

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

Order = Literal["F", "C"]


def encode_rle(mask: np.ndarray, *, order: Order = "F") -> str:
    """The Kaggle RLE string of a 2D boolean mask ("" when it is empty)."""
    import numpy as np

    flat = np.asarray(mask, dtype=bool).ravel(order=order).astype(np.int8)
    edges = np.flatnonzero(np.diff(np.concatenate([[0], flat, [0]])))
    starts, ends = edges[0::2], edges[1::2]
    pairs = np.column_stack([starts + 1, ends - starts]).ravel()
    return " ".join(map(str, pairs.tolist()))


def with_shape(height: int, width: int, text: str) -> str:
    """An answer cell carrying its image's shape, `<height>x<width>:<rle>`.

    Validation hands a metric only the answers' target column; competitions whose images
    differ in size pack each image's shape into its answer with this, at load time.
    """
    return f"{height}x{width}:{text}"


def split_shape(cell: str) -> tuple[tuple[int, int], str]:
    """The ((height, width), rle) packed by `with_shape`."""
    shape, _, text = cell.partition(":")
    height, width = shape.split("x")
    return (int(height), int(width)), text


def load_shaped_answers(path: Path, id_column: str, target: str) -> pd.DataFrame:
    """The id and target columns of the answers CSV at `path`, as text, each target cell
    carrying the shape in the file's `height` and `width` columns."""
    answers = read_as_text(path)
    cells = map(with_shape, answers["height"], answers["width"], answers[target])
    return answers[[id_column]].assign(**{target: list(cells)})
