"""Mean Levenshtein distance: hand values, python-Levenshtein's semantics, missing cells."""

from __future__ import annotations

import pandas as pd
import pytest

from mle_gym.grading.errors import InvalidSubmission
from mle_gym.grading.metrics import METRICS
from mle_gym.grading.metrics.levenshtein import mean_levenshtein


def _score(truth: list[str], predicted: list[str]) -> float:
    ids = [str(i) for i in range(len(truth))]
    return mean_levenshtein(
        pd.DataFrame({"id": ids, "s": truth}), pd.DataFrame({"id": ids, "s": predicted}), ["s"]
    )


def test_registered_under_its_name() -> None:
    assert METRICS["mean_levenshtein"] is mean_levenshtein


def test_hand_values() -> None:
    assert _score(["kitten"], ["sitting"]) == 3  # the textbook example
    assert _score(["He went home ."], ["He home ."]) == 5  # "went" and one space
    assert _score(["abc", "abc"], ["abc", "abd"]) == 0.5
    assert _score(["café"], ["cafe"]) == 1  # characters, not bytes
    assert _score(['say "hi"'], ["say hi"]) == 2


def test_transposition_costs_two_edits() -> None:
    """Plain Levenshtein (as python-Levenshtein's distance): no transposition operation."""
    assert _score(["ab"], ["ba"]) == 2


@pytest.mark.parametrize("spelling", ["", "NA", "null", "None", "nan"])
def test_cells_pandas_reads_as_missing_are_refused(spelling: str) -> None:
    with pytest.raises(InvalidSubmission, match=r"1 's' cell\(s\) are empty .* first ids: 1"):
        _score(["a b .", "c d ."], ["a b .", spelling])


def test_missing_looking_text_inside_a_sentence_is_fine() -> None:
    assert _score(["NA is here ."], ["NA is here ."]) == 0
