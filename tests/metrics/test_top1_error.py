"""Top-1 error: hand values, first of several guesses, and refused cells."""

from __future__ import annotations

import pandas as pd
import pytest

from mle_gym.grading.errors import InvalidSubmission
from mle_gym.grading.metrics import METRICS
from mle_gym.grading.metrics.top1_error import first_classes, top1_error


def _score(truth: list[str], predicted: list[str]) -> float:
    ids = [str(i) for i in range(len(truth))]
    return top1_error(
        pd.DataFrame({"id": ids, "predicted": truth}),
        pd.DataFrame({"id": ids, "predicted": predicted}),
        ["predicted"],
    )


def test_registered_under_its_name() -> None:
    assert METRICS["top1_error"] is top1_error


def test_hand_computed_values() -> None:
    assert _score(["1", "2", "3", "4"], ["1", "2", "3", "5"]) == pytest.approx(0.25)
    assert _score(["7"], ["7"]) == 0.0
    assert _score(["7", "8"], ["8", "7"]) == 1.0


def test_only_the_first_guess_counts() -> None:
    assert _score(["1", "2"], ["1 2 3 4 5", "5 4 3 2 1"]) == pytest.approx(0.5)
    assert _score(["10"], ["  10   11"]) == 0.0


def test_cells_not_starting_with_an_integer_are_refused() -> None:
    assert list(first_classes(pd.Series(["+3", "007 1"]), "p")) == [3, 7]
    for bad in ("3.0", "", "dog 1", "1,2"):
        with pytest.raises(InvalidSubmission, match=r"'p' must start each cell with an integer"):
            first_classes(pd.Series(["1", bad]), "p")
