"""Tabular Playground Series, May 2022: binary classification of synthetic manufacturing data.

MLE-bench holds out 100,000 of Kaggle's 900,000 labelled rows and renumbers the ids so that
the test ids follow the training ids.

Its development variant holds out the share MLE-bench held out of Kaggle's rows (1/9) of the
public rows, as a ratio rather than the fixed 100,000 (which the 800,000 public rows could
hold, but not a smaller table). The ids are renumbered again, so the rows are traced to the
public training table by their content (`row_digests`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from mle_gym.competitions.csv_io import read_csv
from mle_gym.competitions.dev_ids import row_digests
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.competitions.streamed_split import NotStreamable, Output, holdout_order, split_csv
from mle_gym.lazy import np, train_test_split

if TYPE_CHECKING:
    import pandas as pd

TEST_ROWS = 100_000
#: The share of Kaggle's 900,000 labelled rows that MLE-bench held out.
DEV_SHARE = TEST_ROWS / 900_000


def prepare(raw: Path, public: Path, private: Path) -> None:
    """Split off TEST_ROWS rows (random_state=0); ids become 0..n-1 across train then test.
    Streamed (see `streamed_split`): the bytes of `prepare_in_memory` in bounded memory."""
    _split(raw, public, private, TEST_ROWS)


def prepare_dev(raw: Path, public: Path, private: Path) -> None:
    """The development rule: `prepare` holding out DEV_SHARE of the rows instead."""
    _split(raw, public, private, DEV_SHARE)


def _split(raw: Path, public: Path, private: Path, test_size: float | int) -> None:
    path = raw / "train.csv"
    try:
        split_csv(path, lambda rows: holdout_order(rows, test_size), _outputs(public, private))
    except NotStreamable:
        prepare_in_memory(raw, public, private, test_size)


def _outputs(public: Path, private: Path) -> Callable[[list[int]], list[list[Output]]]:
    """The train part renumbered from 0; the test part after it, with its gold and sample."""

    def outputs(sizes: list[int]) -> list[list[Output]]:
        def test(rows: pd.DataFrame, rank: np.ndarray) -> pd.DataFrame:
            return rows.assign(id=sizes[0] + rank.astype(np.int64))

        return [
            [
                Output(
                    public / "train.csv", lambda rows, rank: rows.assign(id=rank.astype(np.int64))
                )
            ],
            [
                Output(private / "test.csv", test),
                Output(public / "test.csv", lambda r, k: test(r, k).drop(columns="target")),
                Output(private / "gold_submission.csv", lambda r, k: test(r, k)[GOLD]),
                Output(
                    public / "sample_submission.csv",
                    lambda r, k: test(r, k)[GOLD].assign(target=0.5),
                ),
            ],
        ]

    return outputs


#: The columns of the gold submission.
GOLD = ["id", "target"]


def prepare_in_memory(
    raw: Path, public: Path, private: Path, test_size: float | int = TEST_ROWS
) -> None:
    """The reference: the whole table in memory, as MLE-bench does."""
    rows = read_csv(raw / "train.csv")
    train, test = train_test_split(rows, test_size=test_size, random_state=0)
    train["id"] = np.arange(len(train))
    test["id"] = np.arange(len(train), len(train) + len(test))

    gold = test[["id", "target"]].copy()
    sample = gold.copy()
    sample["target"] = 0.5

    train.to_csv(public / "train.csv", index=False)
    test.to_csv(private / "test.csv", index=False)
    test.drop(columns="target").to_csv(public / "test.csv", index=False)
    gold.to_csv(private / "gold_submission.csv", index=False)
    sample.to_csv(public / "sample_submission.csv", index=False)


STATEMENT = """\
# Tabular Playground Series - May 2022

The data is synthetic and simulates the results of a manufacturing control process:
predict, for each row, the probability that its binary `target` is 1.

## Data (read-only, in {data_dir})
- `train.csv`: 800,000 labelled rows. Columns:
  - `id`: the row identifier.
  - `f_00` ... `f_06`, `f_19` ... `f_26`, `f_28`: continuous features.
  - `f_07` ... `f_18`, `f_29`, `f_30`: integer features.
  - `f_27`: a string of ten capital letters (e.g. `ABABDADBAB`).
  - `target`: the target, `0` or `1`.
- `test.csv`: 100,000 rows to predict, same columns without `target`.
- `sample_submission.csv`: a valid submission predicting 0.5 for every row.

## Metric
Area under the ROC curve between your predicted probabilities and the true `target`.
Only the ranking of the predictions matters. Higher is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per `id` in
`test.csv`:

```
id,target
800000,0.73
800001,0.12
```

`target` must be a probability between 0 and 1. Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="tabular-playground-series-may-2022",
    name="Tabular Playground Series - May 2022",
    split="lite",
    metric="roc_auc",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="id",
        columns=(Column("target", "probability"),),
        answers_file="test.csv",
    ),
    raw_files=("train.csv",),
    prepare=prepare,
    num_teams=1152,
    thresholds=Thresholds(gold=0.99823, silver=0.99822, bronze=0.99818, median=0.972675),
    sample_score=0.5,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "353457517aa847e701141e00a7a774eb",
            "test.csv": "a15b39583b2c38e02f986251d0292851",
            "train.csv": "40ef2671fc5bde862789ff7cfcc48c20",
        },
        private={
            "gold_submission.csv": "fd2e8a542de49e4f4b46ea1a174db71a",
            "test.csv": "0ad7146d50d6a3043b98e9471835db59",
        },
    ),
    dev_variant=DevVariant(
        prepare=prepare_dev, train_ids=row_digests("train.csv"), test_ids=row_digests("test.csv")
    ),
)
