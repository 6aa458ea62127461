"""MAP@12 of ranked, space-separated item lists (H&M personalised fashion recommendations).

Neither scikit-learn nor scipy scores ranked recommendations against a set of relevant
items (scikit-learn's average_precision_score ranks scores, not item lists), so AP@k is
written here. It follows Kaggle's definition as MLE-bench computes it: the lists are split on
single spaces, only the first k predictions count, a repeated prediction counts once, and
each row's sum of precisions is divided by min(number of relevant items, k).

Rows whose answer is empty are not scored: H&M customers who bought nothing in the test
period are in the submission (so their identity is not revealed) but excluded from the mean.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from mle_gym.grading.metrics import Metric

K = 12


def average_precision_at_k(relevant: set[str], predicted: list[str], k: int = K) -> float:
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


def map_at_12(answers: pd.DataFrame, predictions: pd.DataFrame, targets: list[str]) -> float:
    """Mean AP@12 over the rows whose answer lists at least one item."""
    (column,) = targets
    scored = answers[column].to_numpy() != ""
    relevant = answers.loc[scored, column].str.split(" ")
    predicted = predictions.loc[scored, column].str.split(" ")
    return float(
        np.mean(
            [average_precision_at_k(set(r), p) for r, p in zip(relevant, predicted, strict=True)]
        )
    )


METRICS: dict[str, Metric] = {"map_at_12": map_at_12}
