"""Answer cells that carry their image's shape, for RLE metrics whose images differ in size.

Validation hands a metric only the answers' target column, while an RLE string means
nothing without the height and width of its image (kept in other answer columns). A
competition's answer loader therefore writes each answer as `<height>x<width>:<rle>`
(`load_shaped_answers`), and the metric splits it again (`split_shaped`), or has one
row's pixels counted at once (`pixel_counts`). Defines no metric.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from mle_gym.grading.errors import InvalidSubmission
from mle_gym.grading.metrics.rle import rle_runs, runs_overlap
from mle_gym.grading.metrics.text_accuracy import PANDAS_MISSING

if TYPE_CHECKING:
    import pandas as pd


def shaped_answer(height: int | str, width: int | str, rle: str) -> str:
    """An answer cell carrying its image's shape: `<height>x<width>:<rle>`."""
    return f"{height}x{width}:{rle}"


def split_shaped(cell: str) -> tuple[tuple[int, int], str]:
    """((height, width), rle) of a cell written by `shaped_answer`."""
    shape, _, rle = cell.partition(":")
    height, width = shape.split("x")
    return (int(height), int(width)), rle


def load_shaped_answers(path: Path, id_column: str, target: str) -> pd.DataFrame:
    """The id and target columns of the answers CSV at `path`, as text, each target cell
    carrying the shape in the file's `height` and `width` columns."""
    from mle_gym.grading.csv_text import read_as_text

    answers = read_as_text(path)
    cells = map(shaped_answer, answers["height"], answers["width"], answers[target])
    return answers[[id_column]].assign(**{target: list(cells)})


def pixel_counts(
    answer: str, cell: str, where: str, *, empty_mask: str | None, missing_hint: str
) -> tuple[int, int, int]:
    """(shared, predicted, true) pixels of a submitted RLE `cell` against a shaped `answer`.

    `cell` is checked against the answer's shape; `where` names its row in the reason of a
    refusal. A cell pandas reads as missing is refused (MLE-bench's decoders refuse NaN),
    with `missing_hint` saying what to write instead; `empty_mask` is the competition's
    spelling of an empty mask, if it has one.
    """
    (height, width), truth = split_shaped(answer)
    if cell in PANDAS_MISSING:
        raise InvalidSubmission(f"{where} is empty or missing; {missing_hint}")
    try:
        mine = rle_runs("" if cell == empty_mask else cell, height * width)
    except InvalidSubmission as error:
        raise InvalidSubmission(f"{where}: {error}") from None
    theirs = rle_runs("" if truth == empty_mask else truth, height * width)
    predicted, true = int((mine[1] - mine[0]).sum()), int((theirs[1] - theirs[0]).sum())
    return runs_overlap(mine, theirs), predicted, true
