"""Pooled Kendall tau of orderings: swap counts against scipy, pooling, and refusals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau

from mle_gym.grading.errors import InvalidSubmission
from mle_gym.grading.metrics import METRICS
from mle_gym.grading.metrics.kendall_tau import pooled_kendall_tau, swaps


def _score(truth: list[str], predicted: list[str]) -> float:
    ids = [f"n{i}" for i in range(len(truth))]
    return pooled_kendall_tau(
        pd.DataFrame({"id": ids, "o": truth}), pd.DataFrame({"id": ids, "o": predicted}), ["o"]
    )


def test_registered_under_its_name() -> None:
    assert METRICS["pooled_kendall_tau"] is pooled_kendall_tau


def test_swaps_by_hand() -> None:
    assert swaps([0, 1, 2, 3]) == 0
    assert swaps([3, 2, 1, 0]) == 6
    assert swaps([1, 0, 3, 2]) == 2
    assert swaps([2, 0, 1]) == 2


def test_swaps_agree_with_scipy_kendall_tau() -> None:
    """For a permutation, tau = 1 - 4 S / (n (n - 1))."""
    rng = np.random.default_rng(0)
    for n in (2, 3, 10, 57):
        ranks = list(rng.permutation(n))
        tau = kendalltau(np.arange(n), ranks).statistic
        assert swaps(ranks) == round((1 - tau) * n * (n - 1) / 4)


def test_swaps_are_pooled_before_dividing() -> None:
    # Notebook 1: 2 cells swapped (S=1, n(n-1)=2); notebook 2: 4 cells in order (0, 12).
    # Pooled: 1 - 4 * 1 / 14; averaging per-notebook taus would give (-1 + 1) / 2 = 0.
    score = _score(["a b", "c d e f"], ["b a", "c d e f"])
    assert score == pytest.approx(1 - 4 / 14)


def test_reversed_is_minus_one_and_any_whitespace_separates() -> None:
    assert _score(["a b c"], ["c  b\ta"]) == -1.0


@pytest.mark.parametrize(
    ("predicted", "reason"),
    [
        ("a b", r"row 'n0' must list each of its 3 items exactly once; found 2 item\(s\)"),
        ("a b c d", r"found 4 item\(s\)"),
        ("a b x", r"found unknown item\(s\) x"),
        ("a a b", r"found a repeated item"),
    ],
)
def test_rows_that_are_not_permutations_are_refused(predicted: str, reason: str) -> None:
    with pytest.raises(InvalidSubmission, match=reason):
        _score(["a b c"], [predicted])
