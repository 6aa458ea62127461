"""New York City Taxi Fare Prediction: regress the fare of a ride, graded by RMSE."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from mle_gym.competitions.csv_io import read_csv
from mle_gym.competitions.dev_ids import ids_in
from mle_gym.competitions.dev_rules import public_as_raw, scaled_count
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.competitions.streamed_split import NotStreamable, Output, holdout_order, split_csv
from mle_gym.lazy import train_test_split

if TYPE_CHECKING:
    import pandas as pd

#: Rows held out, as many as Kaggle's own (unlabelled) test set has.
TEST_ROWS = 9914
#: The fare MLE-bench's sample submission predicts for every ride.
SAMPLE_FARE = 11.35


#: How many of a table's rows are held out, given its number of rows.
HeldOut = Callable[[int], int]


def _kaggle_count(rows: int) -> int:
    return TEST_ROWS


def prepare(raw: Path, public: Path, private: Path, *, held_out: HeldOut = _kaggle_count) -> None:
    """MLE-bench's split of Kaggle's ~55M labelled rides, streamed (see `streamed_split`):
    the same bytes as `prepare_in_memory`, in memory bounded by a few bytes a row."""
    try:
        split_csv(
            raw / "train.csv",
            lambda rows: holdout_order(rows, held_out(rows)),
            [
                [Output(public / "labels.csv")],
                [
                    Output(public / "test.csv", lambda rows, _: rows.drop(columns="fare_amount")),
                    Output(public / "sample_submission.csv", _sample),
                    Output(private / "test.csv"),
                ],
            ],
        )
    except NotStreamable:
        prepare_in_memory(raw, public, private, held_out=held_out)
        return
    shutil.copyfile(raw / "GCP-Coupons-Instructions.rtf", public / "GCP-Coupons-Instructions.rtf")


def _sample(rows: pd.DataFrame, _rank: object) -> pd.DataFrame:
    return rows[["key"]].assign(fare_amount=SAMPLE_FARE)


def prepare_in_memory(
    raw: Path, public: Path, private: Path, *, held_out: HeldOut = _kaggle_count
) -> None:
    """The reference: the whole train.csv read into memory (several GB), as MLE-bench does."""
    rides = read_csv(raw / "train.csv")
    train, test = train_test_split(rides, test_size=held_out(len(rides)), random_state=0)

    train.to_csv(public / "labels.csv", index=False)
    test.drop(columns="fare_amount").to_csv(public / "test.csv", index=False)
    sample = test[["key"]].copy()
    sample["fare_amount"] = SAMPLE_FARE
    sample.to_csv(public / "sample_submission.csv", index=False)
    test.to_csv(private / "test.csv", index=False)
    shutil.copyfile(raw / "GCP-Coupons-Instructions.rtf", public / "GCP-Coupons-Instructions.rtf")


def prepare_dev(raw: Path, public: Path, private: Path) -> None:
    """The development split: MLE-bench's, holding out the share its 9,914 rides were of
    Kaggle's labelled rides (about 0.02%) rather than the count itself."""
    prepare(raw, public, private, held_out=lambda rows: scaled_count(TEST_ROWS, rows))


STATEMENT = """\
# New York City Taxi Fare Prediction

Predict the fare (tolls included) of a New York City taxi ride from where and
when it started and ended and how many passengers rode.

## Data (read-only, in {data_dir})
- `labels.csv`: about 55 million past rides with their fare. Columns:
  - `key`: a unique string per ride (the pickup time followed by a fractional counter,
    e.g. `2009-06-15 17:26:21.0000001`); it is the row identifier, not a feature.
  - `fare_amount`: the target, in US dollars.
  - `pickup_datetime`: e.g. `2009-06-15 17:26:21 UTC`.
  - `pickup_longitude`, `pickup_latitude`, `dropoff_longitude`, `dropoff_latitude`.
  - `passenger_count`: an integer.
- `test.csv`: the 9,914 rides to price, same columns without `fare_amount`.
- `sample_submission.csv`: a valid submission predicting $11.35 for every ride.
- `GCP-Coupons-Instructions.rtf`: a leftover of the original competition (cloud credits);
  it is not needed.

The raw data is noisy: some coordinates are missing, zero or far outside New York, some
fares are zero or negative, and passenger counts can be implausible. `labels.csv` is
several gigabytes; reading a subset of its rows is often enough.

## Metric
Root mean squared error between your predicted and the true fares, in dollars. Lower is
better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per ride in
`test.csv`:

```
key,fare_amount
2015-01-27 13:08:24.0000002,10.5
2015-01-27 13:08:24.0000003,9.2
```

`fare_amount` must be a number. Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="new-york-city-taxi-fare-prediction",
    name="New York City Taxi Fare Prediction",
    split="lite",
    metric="rmse",
    lower_is_better=True,
    submission=SubmissionFormat(
        id_column="key",
        columns=(Column("fare_amount", "number"),),
        answers_file="test.csv",
    ),
    raw_files=("train.csv", "GCP-Coupons-Instructions.rtf"),
    prepare=prepare,
    num_teams=1485,
    thresholds=Thresholds(gold=2.83377, silver=2.88191, bronze=2.92371, median=3.59741),
    sample_score=10.02927,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "labels.csv": "b1aa60e8d6ca817c18b23bd00e4a2500",
            "sample_submission.csv": "10c791174db974943c1c80f38fc86391",
            "test.csv": "a7b9d9b7208e9b7cff6891cfd56a0053",
        },
        private={"test.csv": "f51d45e95bcd7565f1175206e604506e"},
    ),
    dev_variant=DevVariant(
        prepare=public_as_raw(
            prepare_dev,
            links={
                "train.csv": "labels.csv",
                "GCP-Coupons-Instructions.rtf": "GCP-Coupons-Instructions.rtf",
            },
        ),
        train_ids=ids_in("labels.csv", "key"),
    ),
)
