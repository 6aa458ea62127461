"""Mean word-level Jaccard similarity of predicted and true text spans (tweet sentiment).

Each string becomes the set of its lower-cased, whitespace-separated words (Python's
`str.lower().split()`), and a row scores |A & B| / |A | B|. This is the formula Kaggle
published and MLE-bench applies; no library computes it on raw strings (scikit-learn's
`jaccard_score` compares label sets and resolves empty sets differently), so it is written
here.

MLE-bench reads both files with pandas, whose missing-value spellings (an empty cell, `NA`,
`None`, `nan`, ...) become empty strings; the same folding is applied to the exact text
cells that validation hands over. When both word sets are empty, the formula divides by
zero and MLE-bench refuses the whole submission; we count the row as a perfect match
instead, since an empty prediction is then exactly right.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from mle_gym.grading.metrics import Metric
from mle_gym.grading.metrics.text_accuracy import PANDAS_MISSING


def word_jaccard(first: str, second: str) -> float:
    """|A & B| / |A | B| over the two strings' lower-cased word sets; 1.0 if both are empty."""
    a, b = set(first.lower().split()), set(second.lower().split())
    union = a | b
    return len(a & b) / len(union) if union else 1.0


def as_read_by_pandas(cells: pd.Series) -> list[str]:
    """The strings MLE-bench compares: pandas' missing spellings become ''."""
    text = cells.astype(str)
    return text.where(~text.isin(PANDAS_MISSING), "").tolist()


def mean_word_jaccard(
    answers: pd.DataFrame, predictions: pd.DataFrame, targets: list[str]
) -> float:
    """Mean over rows of the word Jaccard similarity, averaged over the target columns."""
    scores = []
    for col in targets:
        pairs = zip(
            as_read_by_pandas(answers[col]), as_read_by_pandas(predictions[col]), strict=True
        )
        scores.append(np.mean([word_jaccard(truth, guess) for truth, guess in pairs]))
    return float(np.mean(scores))


METRICS: dict[str, Metric] = {"tweet_word_jaccard": mean_word_jaccard}
