"""Kendall tau between predicted and true orderings, pooled over all lists (AI4Code).

The score is 1 - 4 * sum(S_i) / sum(n_i (n_i - 1)), where S_i is the number of pairs a
list orders differently from the truth (the adjacent swaps that sort it) and n_i its
length: the swaps are added up over the whole test set before dividing. scipy's
`kendalltau` returns a per-list coefficient, not the swap counts the pooling needs, so the
counting is done here (insertion into a sorted list; notebooks hold tens of cells).

Each predicted order must be a permutation of the true list's items. MLE-bench refuses
anything else too (a list of another length, or one missing an item, stops its grader);
we say which row is wrong and how.
"""

from __future__ import annotations

from bisect import bisect, insort

import pandas as pd

from mle_gym.grading.errors import InvalidSubmission
from mle_gym.grading.metrics import Metric


def swaps(ranks: list[int]) -> int:
    """Pairs i < j with ranks[i] > ranks[j]: the adjacent swaps that sort `ranks`."""
    seen: list[int] = []
    count = 0
    for placed, rank in enumerate(ranks):
        count += placed - bisect(seen, rank)
        insort(seen, rank)
    return count


def _ranks(row_id: str, truth: list[str], predicted: list[str]) -> list[int]:
    position = {item: rank for rank, item in enumerate(truth)}
    if len(predicted) != len(truth) or set(predicted) != set(truth):
        unknown = [item for item in predicted if item not in position][:3]
        if len(predicted) != len(truth):
            problem = f"{len(predicted)} item(s)"
        elif unknown:
            problem = f"unknown item(s) {', '.join(unknown)}"
        else:
            problem = "a repeated item"
        raise InvalidSubmission(
            f"row {row_id!r} must list each of its {len(truth)} items exactly once; found {problem}"
        )
    return [position[item] for item in predicted]


def pooled_kendall_tau(
    answers: pd.DataFrame, predictions: pd.DataFrame, targets: list[str]
) -> float:
    """Kendall tau of space-separated orderings, swaps pooled over all rows."""
    (column,) = targets
    id_column = answers.columns[0]
    total_swaps = total_pairs = 0
    for row_id, truth, predicted in zip(
        answers[id_column], answers[column], predictions[column], strict=True
    ):
        items = truth.split()
        total_swaps += swaps(_ranks(row_id, items, predicted.split()))
        total_pairs += len(items) * (len(items) - 1)
    return 1 - 4 * total_swaps / total_pairs


METRICS: dict[str, Metric] = {"pooled_kendall_tau": pooled_kendall_tau}
