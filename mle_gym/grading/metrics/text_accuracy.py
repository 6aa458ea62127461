"""Exact-match accuracy of predicted strings, as MLE-bench grades text normalisation.

MLE-bench reads both files with pandas' default missing-value handling and then casts the
column to `str`. A cell pandas takes for missing (an empty cell, `None`, `NA`, `null`,
`nan`, ...) therefore becomes the string `nan`, so all such spellings match one another.
Validation hands this metric the cells exactly as written, so the metric applies that same
folding before comparing.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: The strings pandas' `read_csv` reads as missing by default (pandas >= 2).
PANDAS_MISSING = frozenset(
    {
        "",
        "#N/A",
        "#N/A N/A",
        "#NA",
        "-1.#IND",
        "-1.#QNAN",
        "-NaN",
        "-nan",
        "1.#IND",
        "1.#QNAN",
        "<NA>",
        "N/A",
        "NA",
        "NULL",
        "NaN",
        "None",
        "n/a",
        "nan",
        "null",
    }
)

#: What `str()` makes of a missing value read by pandas.
MISSING_TEXT = "nan"


def as_graded(cells: pd.Series) -> np.ndarray:
    """The strings MLE-bench compares: pandas' missing spellings all become 'nan'."""
    text = cells.astype(str)
    return text.where(~text.isin(PANDAS_MISSING), MISSING_TEXT).to_numpy(dtype=object)


def text_accuracy(answers: pd.DataFrame, predictions: pd.DataFrame, targets: list[str]) -> float:
    """Share of rows whose every target string equals the answer's."""
    hits = np.ones(len(answers), dtype=bool)
    for col in targets:
        hits &= as_graded(answers[col]) == as_graded(predictions[col])
    return float(hits.mean())


METRICS = {"text_accuracy": text_accuracy}
