"""MAP@12 against hand-computed average precisions and its rules for repeats and cut-offs."""

from __future__ import annotations

import pandas as pd
import pytest

from mle_gym.grading.metrics import METRICS
from mle_gym.grading.metrics.map_at_k import average_precision_at_k

map_at_12 = METRICS["map_at_12"]


def _score(truth: list[str], predicted: list[str]) -> float:
    answers = pd.DataFrame({"prediction": truth})
    return map_at_12(answers, pd.DataFrame({"prediction": predicted}), ["prediction"])


def test_average_precision_by_hand() -> None:
    # Hits at ranks 1 and 3 of {a, b, c}: (1/1 + 2/3) / 3.
    assert average_precision_at_k({"a", "b", "c"}, ["a", "x", "b"]) == pytest.approx(5 / 9)
    assert average_precision_at_k({"a"}, ["x", "a"]) == 0.5
    assert average_precision_at_k(set(), ["a"]) == 0.0


def test_repeats_count_once_and_only_twelve_ranks_count() -> None:
    assert average_precision_at_k({"a", "b"}, ["a", "a", "b"]) == pytest.approx((1 + 2 / 3) / 2)
    late = [str(i) for i in range(12)] + ["a"]
    assert average_precision_at_k({"a"}, late) == 0.0
    # More than 12 relevant items: divided by 12, so a full list of hits scores 1.
    many = [str(i) for i in range(20)]
    assert average_precision_at_k(set(many), many) == 1.0


def test_rows_with_an_empty_answer_are_not_scored() -> None:
    score = _score(["1 2", "", "3"], ["2 1", "1 2 3", "9 3"])
    assert score == pytest.approx((1.0 + 0.5) / 2)


def test_items_are_compared_as_written() -> None:
    """A leading zero or a double space makes an item that matches nothing."""
    assert _score(["108775015 2"], ["0108775015  2"]) == pytest.approx((1 / 3) / 2)
