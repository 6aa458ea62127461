"""Micro-averaged F1 over space-separated tag sets, as MLE-bench grades Facebook Recruiting III.

Each row's tags are a set (repeats count once). MLE-bench binarises the tags with scikit-
learn's `MultiLabelBinarizer` whose classes are the tags seen in the answers, so a predicted
tag that no answer holds is dropped silently rather than counted as a false positive; we
keep that rule, since scores must match MLE-bench's. pandas' missing spellings (`NA`,
`null`, ...) as a whole cell are an empty tag set, as MLE-bench's reading makes them.

F1 is computed from the pooled counts, 2 TP / (2 TP + FP + FN) (0 when all sets are empty,
scikit-learn's zero_division), instead of through scikit-learn: its route needs a matrix of
every row by every tag and refuses a single-tag vocabulary. The tests check both agree.
"""

from __future__ import annotations

import pandas as pd

from mle_gym.grading.metrics import Metric
from mle_gym.grading.metrics.text_accuracy import PANDAS_MISSING


def tag_sets(cells: pd.Series) -> list[set[str]]:
    """Whitespace-separated tags of each cell; pandas' missing spellings hold none."""
    return [set() if c in PANDAS_MISSING else set(c.split()) for c in cells]


def micro_f1_tags(answers: pd.DataFrame, predictions: pd.DataFrame, targets: list[str]) -> float:
    """Pooled F1 of predicted against true tags; tags absent from every answer are ignored."""
    (column,) = targets
    truth = tag_sets(answers[column])
    known = set().union(*truth)
    hits = wrong = missed = 0
    for expected, predicted in zip(truth, tag_sets(predictions[column]), strict=True):
        predicted &= known
        common = len(expected & predicted)
        hits += common
        wrong += len(predicted) - common
        missed += len(expected) - common
    counted = 2 * hits + wrong + missed
    return 2 * hits / counted if counted else 0.0


METRICS: dict[str, Metric] = {"micro_f1_tags": micro_f1_tags}
