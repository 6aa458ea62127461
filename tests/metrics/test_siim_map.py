"""siim_map: MLE-bench's VOC-style mAP, by hand and against MLE-bench's grader."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mle_gym.grading.errors import InvalidSubmission
from mle_gym.grading.metrics import METRICS

METRIC = METRICS["siim_map"]
COLUMN = "PredictionString"


def _score(truth: list[str], predicted: list[str]) -> float:
    ids = [f"r{i:02d}" for i in range(len(truth))]
    answers = pd.DataFrame({"id": ids, COLUMN: truth})
    return METRIC(answers, pd.DataFrame({"id": ids, COLUMN: predicted}), [COLUMN])


def test_hand_computed_value() -> None:
    truth = ["typical 1 0 0 1 1", "opacity 1 0 0 10 10 opacity 1 20 20 30 30"]
    predicted = [
        "typical 0.4 0 0 1 1 opacity 0.9 0 0 10 10",
        # IoU 81/100 hit at 0.8; IoU 0.47 (not above 0.5) miss at 0.7.
        "opacity 0.8 1 1 10 10 opacity 0.7 20 20 30 24.7",
    ]
    # typical: pairs (1, 0.4) and (0, 0) for the image row: AP 1.
    # opacity: row 0 (0, 0.9); row 1 (1, 0.8), (0, 0.7), (1, 0) for the unclaimed box.
    # Ranked: 0.9 miss, 0.8 hit (P 1/2, R 1/2), 0.7 miss, 0 hit (P 2/4, R 1): AP 1/2.
    assert _score(truth, predicted) == pytest.approx((1 + 0.5) / 2, abs=1e-12)


def test_best_unclaimed_answer_box_is_claimed_in_confidence_order() -> None:
    truth = ["none 1 0 0 1 1", "opacity 1 0 0 10 10 opacity 1 0 0 10 12"]
    # The box at 0.9 claims the better-overlapping answer (IoU 1 with 0 0 10 12); the box
    # at 0.5 then takes the other (IoU 10/12). Both hit: opacity AP 1, none AP 0.
    both = "opacity 0.5 0 0 10 12 opacity 0.9 0 0 10 12"
    assert _score(truth, ["none 0 0 0 1 1", both]) == pytest.approx(0.75)


def _synthetic(seed: int, n: int = 40) -> tuple[list[str], list[str]]:
    rng = np.random.default_rng(seed)
    truth, predicted = [], []
    for _ in range(n):
        if rng.random() < 0.5:
            label = rng.choice(["negative", "typical", "indeterminate", "atypical"])
            truth.append(f"{label} 1 0 0 1 1")
            guesses = rng.choice(["negative", "typical", "indeterminate"], 2, replace=False)
            predicted.append(" ".join(f"{g} {rng.random():.2f} 0 0 1 1" for g in guesses))
            continue
        boxes, guesses = [], [f"none {rng.random():.2f} 0 0 1 1"]
        for _ in range(rng.integers(0, 3)):
            x, y, w, h = rng.integers(0, 1000, 4) + np.array([0, 0, 50, 50])
            boxes.append(f"opacity 1 {x} {y} {x + w} {y + h}")
            dx, dy = rng.integers(-40, 41, 2)
            guesses.append(f"opacity {rng.random():.2f} {x + dx} {y + dy} {x + w} {y + h + dy}")
        truth.append(" ".join(boxes) or "none 1 0 0 1 1")
        predicted.append(" ".join(guesses))
    return truth, predicted


#: MLE-bench's grade() on the same answers and submission (run side by side).
MLEBENCH = {1: 0.5604902, 2: 0.4066668}


@pytest.mark.parametrize("seed", MLEBENCH)
def test_equals_mlebench_grader_on_synthetic_rows(seed) -> None:
    assert round(_score(*_synthetic(seed)), 7) == MLEBENCH[seed]


def test_blank_cell_is_no_prediction_and_unknown_labels_are_ignored() -> None:
    truth = ["typical 1 0 0 1 1", "negative 1 0 0 1 1"]
    blank = _score(truth, ["typical 0.9 0 0 1 1", ""])
    assert blank == _score(truth, ["typical 0.9 0 0 1 1", "  "])
    assert blank == _score(truth, ["typical 0.9 0 0 1 1", "Negative 0.9 0 0 1 1"])
    # typical: (1, 0.9) and (0, 0): AP 1. negative: (0, 0) and the unclaimed answer
    # (1, 0), tied at 0: precision 1/2 at recall 1, AP 1/2.
    assert blank == pytest.approx(0.75)


BAD = {
    "five tokens": ("typical 0.5 0 0 1", "groups of six tokens"),
    "word": ("typical high 0 0 1 1", "followed by five numbers"),
    "nan": ("typical nan 0 0 1 1", "non-finite"),
    "inf corner": ("opacity 0.5 0 0 inf 1", "non-finite"),
}


@pytest.mark.parametrize("case", BAD, ids=list(BAD))
def test_malformed_cells_are_refused_with_reason(case) -> None:
    cell, reason = BAD[case]
    with pytest.raises(InvalidSubmission, match=reason):
        _score(["typical 1 0 0 1 1"], [cell])
