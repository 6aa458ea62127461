"""MAP@k of ranked, space-separated label lists: MAP@12 (H&M), MAP@5 (hotel-id, whales).

Neither scikit-learn nor scipy scores ranked recommendations against a set of relevant
items (scikit-learn's average_precision_score ranks scores, not item lists), so AP@k is
written here. It follows Kaggle's definition as MLE-bench computes it: the lists are split on
single spaces, only the first k predictions count, a repeated prediction counts once (its
later ranks still count as ranks), fewer than k predictions are fine, and each row's sum of
precisions is divided by min(number of relevant items, k). Every label is a label:
`new_whale` is scored like any whale id.

Rows whose answer is empty are not scored: H&M customers who bought nothing in the test
period are in the submission (so their identity is not revealed) but excluded from the mean.
Hotel-id and whale answers are never empty, so every row of theirs is scored.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd

from mle_gym.grading.metrics import Metric


def average_precision_at_k(relevant: set[str], predicted: list[str], k: int) -> float:
    """Sum of precision@i over ranks i <= k that add a relevant item, / min(|relevant|, k)."""
    if not relevant:
        return 0.0
    hits = 0
    total = 0.0
    seen: set[str] = set()
    for rank, item in enumerate(predicted[:k], start=1):
        if item in relevant and item not in seen:
            hits += 1
            total += hits / rank
        seen.add(item)
    return total / min(len(relevant), k)


def mean_average_precision_at_k(
    answers: pd.DataFrame, predictions: pd.DataFrame, targets: list[str], *, k: int
) -> float:
    """Mean AP@k over the rows whose answer lists at least one item."""
    (column,) = targets
    scored = answers[column].to_numpy() != ""
    relevant = answers.loc[scored, column].str.split(" ")
    predicted = predictions.loc[scored, column].str.split(" ")
    return float(
        np.mean(
            [average_precision_at_k(set(r), p, k) for r, p in zip(relevant, predicted, strict=True)]
        )
    )


METRICS: dict[str, Metric] = {
    "map_at_12": partial(mean_average_precision_at_k, k=12),
    "map_at_5": partial(mean_average_precision_at_k, k=5),
}
