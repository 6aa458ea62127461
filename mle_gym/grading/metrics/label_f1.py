"""Micro-averaged F1 of single-label class predictions, as MLE-bench grades Plant Seedlings.

MLE-bench passes the two lists of class names to scikit-learn's `f1_score(average="micro")`;
we call the same function. With exactly one true and one predicted class per row, micro
precision and recall both equal the share of rows right, so the score is accuracy; a class
no answer holds is simply a wrong answer. Classes are compared as written (MLE-bench does
not trim them). A cell pandas reads as missing (empty, `NA`, `null`, ...) reaches
MLE-bench's scikit-learn call as NaN, which it scores as a wrong answer; we fold those
spellings to one string that no answer holds (`text_accuracy.as_graded`), with the same
result. (When every cell is missing, scikit-learn refuses the all-NaN column and
MLE-bench's grading fails; we score such a file 0.)

Multi-label sets (space-separated labels per row) are graded by `tag_f1.micro_f1_tags`,
which follows MLE-bench's `MultiLabelBinarizer` route.
"""

from __future__ import annotations

import pandas as pd

from mle_gym.grading.metrics import Metric
from mle_gym.grading.metrics.text_accuracy import as_graded


def micro_f1_labels(answers: pd.DataFrame, predictions: pd.DataFrame, targets: list[str]) -> float:
    """scikit-learn's micro F1 of the (single) target column's class names."""
    from sklearn.metrics import f1_score

    (column,) = targets
    return float(
        f1_score(as_graded(answers[column]), as_graded(predictions[column]), average="micro")
    )


METRICS: dict[str, Metric] = {"micro_f1_labels": micro_f1_labels}
