"""Word-level Jaccard: per row, |A ∩ B| / |A ∪ B| of the lower-cased whitespace-split word
sets of the answer and the prediction, averaged over rows (chaii; tweet-sentiment too).

MLE-bench reads both files with pandas' default missing-value handling and fills the gaps
with "", so any spelling pandas takes for missing (`NA`, `None`, `null`, ...) is an empty
prediction; validation hands us the cells as written, so the same folding happens here.
MLE-bench scores with scikit-learn's `jaccard_score(average="samples")` over binarised
word sets; we compute the same per-row set ratio directly (a row whose two sets are both
empty scores 0, scikit-learn's zero_division), because scikit-learn's route needs the whole
vocabulary as a matrix and fails outright when that vocabulary has a single word.
The tests check the two agree.
"""

from __future__ import annotations

import pandas as pd

from mle_gym.grading.metrics import Metric
from mle_gym.grading.metrics.text_accuracy import PANDAS_MISSING


def word_sets(cells: pd.Series) -> list[set[str]]:
    """Lower-cased whitespace-split words of each cell; pandas' missing spellings are empty."""
    return [set(("" if c in PANDAS_MISSING else c).lower().split()) for c in cells]


def _jaccard(truth: set[str], predicted: set[str]) -> float:
    union = len(truth | predicted)
    return len(truth & predicted) / union if union else 0.0


def word_jaccard(answers: pd.DataFrame, predictions: pd.DataFrame, targets: list[str]) -> float:
    """Mean over rows of the word-set Jaccard index of the (single) target column."""
    (column,) = targets
    pairs = zip(word_sets(answers[column]), word_sets(predictions[column]), strict=True)
    scores = [_jaccard(truth, predicted) for truth, predicted in pairs]
    return sum(scores) / len(scores)


METRICS: dict[str, Metric] = {"word_jaccard": word_jaccard}
