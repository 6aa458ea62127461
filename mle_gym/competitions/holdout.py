"""MLE-bench's most common split: part of Kaggle's labelled table becomes the hidden test set.

Kaggle kept the labels of its own test set, so MLE-bench holds out a share of the labelled
training rows instead (`train_test_split` with `random_state=0`, rows shuffled). The public
test file is the held-out rows without their targets; the answers keep every column.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mle_gym.competitions.csv_io import read_csv


def holdout(rows: Any, test_size: float | int = 0.1) -> tuple[Any, Any]:
    """(train, test): a shuffled `test_size` share (or count) of `rows` held out, seed 0.

    `rows` is anything `train_test_split` takes (a frame, an array, a list); both halves
    have its kind."""
    from sklearn.model_selection import train_test_split

    train, test = train_test_split(rows, test_size=test_size, random_state=0)
    return train, test


def prepare_csv_holdout(
    raw: Path,
    public: Path,
    private: Path,
    *,
    id_column: str,
    sample_values: Mapping[str, Any],
    answers_file: str = "test.csv",
    test_columns: Sequence[str] | None = None,
) -> None:
    """Hold out 10% of `raw/train.csv`; write train, test, sample submission and answers.

    The sample's target columns are `sample_values` (its keys), each a constant or a
    function of the sample frame, as `DataFrame.assign` takes them. The public test keeps
    `test_columns`, or every column but the targets.
    """
    train, test = holdout(read_csv(raw / "train.csv"))
    targets = list(sample_values)
    public_test = test[list(test_columns)] if test_columns else test.drop(columns=targets)

    train.to_csv(public / "train.csv", index=False)
    public_test.to_csv(public / "test.csv", index=False)
    test[[id_column]].assign(**sample_values).to_csv(public / "sample_submission.csv", index=False)
    test.to_csv(private / answers_file, index=False)
