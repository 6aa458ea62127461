"""contrails_dice: hand-counted global Dice, the shape each answer carries, refusals, and a
value computed by MLE-bench's grader on the same random masks."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mle_gym.formats.rle import encode_rle, with_shape
from mle_gym.grading.errors import InvalidSubmission
from mle_gym.grading.metrics import METRICS

DICE = METRICS["contrails_dice"]


def score(truth: list[str], predicted: list[str], shape: tuple[int, int] = (3, 2)) -> float:
    ids = [f"r{i}" for i in range(len(truth))]
    answers = pd.DataFrame(
        {"record_id": ids, "encoded_pixels": [with_shape(*shape, t) for t in truth]}
    )
    submitted = pd.DataFrame({"record_id": ids, "encoded_pixels": predicted})
    return DICE(answers, submitted, ["encoded_pixels"])


def test_hand_counted_global_dice() -> None:
    # Record 1: truth {1,2,3}, prediction {2,3,4}: 2 shared. Record 2: truth {5},
    # prediction none. Pooled: 2 * 2 / (3 + 4) = 4/7 (per-record means would differ).
    assert score(["1 3", "5 1"], ["2 3", "-"]) == pytest.approx(4 / 7)
    assert score(["1 3", "-"], ["1 3", "-"]) == 1.0
    assert score(["1 3", "-"], ["-", "4 2"]) == 0.0


def test_blank_prediction_is_an_empty_mask() -> None:
    assert score(["1 3"], [" "]) == 0.0


def test_no_contrail_anywhere_scores_one() -> None:
    assert score(["-", "-"], ["-", "-"]) == 1.0


def test_the_answers_shape_bounds_the_runs() -> None:
    assert score(["1 12"], ["1 12"], shape=(3, 4)) == 1.0
    with pytest.raises(InvalidSubmission, match=r"ends past the image's last pixel \(6\)"):
        score(["1 3"], ["1 12"])


@pytest.mark.parametrize(
    ("cell", "reason"),
    [
        ("", r"record 'r0' is empty or missing; write '-'"),
        ("NA", r"empty or missing"),
        ("1 2 5", r"has 3 numbers; it needs start/length pairs"),
        ("+1 2", r"must hold only integers"),
        ("3 1 1 1", r"starts must be in increasing order"),
        ("1 3 2 1", r"overlaps the previous run"),
        ("1 0", r"must have a length of at least 1"),
        ("0 1", r"starts before pixel 1"),
        ("-1", r"must hold only integers"),
    ],
)
def test_malformed_masks_are_refused(cell: str, reason: str) -> None:
    with pytest.raises(InvalidSubmission, match=reason):
        score(["1 3"], [cell])


def random_masks(seed: int, records: int = 40) -> tuple[list[str], list[str]]:
    """RLEs ('-' when empty) of sparse random 8 x 5 masks, for truth and prediction."""
    rng = np.random.default_rng(seed)

    def one() -> str:
        return encode_rle(rng.random((8, 5)) < rng.choice([0.0, 0.1, 0.4])) or "-"

    return [one() for _ in range(records)], [one() for _ in range(records)]


def test_matches_mlebench_on_random_masks() -> None:
    # MLE-bench's grade() on these masks (answers with height 8 and width 5) returned this.
    assert score(*random_masks(3), shape=(8, 5)) == 0.1975736568457539
