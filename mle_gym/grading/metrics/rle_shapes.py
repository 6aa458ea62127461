"""Pixel counts of a submitted RLE against an answer cell that carries its image's shape.

The answer loaders of competitions whose images differ in size write each answer as
`<height>x<width>:<rle>` (`mle_gym.formats.rle.load_shaped_answers`); `pixel_counts`
splits it again and counts one row's pixels at once. Defines no metric.
"""

from __future__ import annotations

from mle_gym.formats.rle import split_shape
from mle_gym.grading.errors import InvalidSubmission
from mle_gym.grading.metrics.rle import rle_runs, runs_overlap
from mle_gym.grading.metrics.text_accuracy import PANDAS_MISSING


def pixel_counts(
    answer: str, cell: str, where: str, *, empty_mask: str | None, missing_hint: str
) -> tuple[int, int, int]:
    """(shared, predicted, true) pixels of a submitted RLE `cell` against a shaped `answer`.

    `cell` is checked against the answer's shape; `where` names its row in the reason of a
    refusal. A cell pandas reads as missing is refused (MLE-bench's decoders refuse NaN),
    with `missing_hint` saying what to write instead; `empty_mask` is the competition's
    spelling of an empty mask, if it has one.
    """
    (height, width), truth = split_shape(answer)
    if cell in PANDAS_MISSING:
        raise InvalidSubmission(f"{where} is empty or missing; {missing_hint}")
    try:
        mine = rle_runs("" if cell == empty_mask else cell, height * width)
    except InvalidSubmission as error:
        raise InvalidSubmission(f"{where}: {error}") from None
    theirs = rle_runs("" if truth == empty_mask else truth, height * width)
    predicted, true = int((mine[1] - mine[0]).sum()), int((theirs[1] - theirs[0]).sum())
    return runs_overlap(mine, theirs), predicted, true
