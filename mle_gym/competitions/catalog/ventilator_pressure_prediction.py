"""Google Brain - Ventilator Pressure Prediction: airway pressure per time step, MAE.

MLE-bench splits Kaggle's labelled train.csv by breath (10% of the breaths held out, see
`mle_gym.competitions.group_holdout`) and renumbers the `id` column from 1 in each part.
Files are written with `%.10g` floats.

Grading: MAE over the test rows of the inspiratory phase (the answers' u_out == 0), as Kaggle
scores it; MLE-bench's config names another metric, its grade function computes this one.
Every row still needs a finite prediction (MLE-bench fails on a missing value in a scored
row and ignores one in an unscored row; we refuse both).

Its development variant is the same split of the public train.csv. The `id` column is
renumbered again, but breath ids are kept, so each row is traced by its breath and time step.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from mle_gym.competitions.dev_ids import ids_in
from mle_gym.competitions.group_holdout import split_groups
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    SubmissionFormat,
    Thresholds,
)

if TYPE_CHECKING:
    import pandas as pd

#: The column types MLE-bench reads train.csv with.
COLUMN_TYPES = {
    "id": "int32",
    "breath_id": "int32",
    "R": "int8",
    "C": "int8",
    "time_step": "float64",
    "u_in": "float64",
    "u_out": "int8",
    "pressure": "float64",
}
WRITE = {"index": False, "float_format": "%.10g"}


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split by breath (see the module docstring); the sample predicts 0.
    Streamed (see `streamed_split`): the bytes of `prepare_in_memory` in bounded memory."""
    from mle_gym.competitions.streamed_split import (
        NotStreamable,
        Output,
        group_holdout_order,
        read_column,
        split_csv,
    )

    path, read = raw / "train.csv", {"dtype": COLUMN_TYPES}
    numbered = _numbered_from_one
    try:
        split_csv(
            path,
            group_holdout_order(read_column(path, "breath_id", read)),
            [
                [Output(public / "train.csv", numbered, WRITE_ROWS)],
                [
                    Output(
                        public / "test.csv",
                        lambda rows, rank: numbered(rows, rank).drop(columns="pressure"),
                        WRITE_ROWS,
                    ),
                    Output(
                        public / "sample_submission.csv",
                        lambda rows, rank: numbered(rows, rank)[["id"]].assign(pressure=0),
                        WRITE_ROWS,
                    ),
                    Output(private / "test.csv", numbered, WRITE_ROWS),
                ],
            ],
            read=read,
        )
    except NotStreamable:
        prepare_in_memory(raw, public, private)


#: WRITE without `index`, which streamed outputs never write.
WRITE_ROWS = {"float_format": "%.10g"}


def _numbered_from_one(rows: pd.DataFrame, rank: Any) -> pd.DataFrame:
    return rows.assign(id=1 + rank.astype("int64"))


def prepare_in_memory(raw: Path, public: Path, private: Path) -> None:
    """The reference: the whole table in memory, as MLE-bench does."""
    from mle_gym.competitions.csv_io import read_csv

    train, test = split_groups(read_csv(raw / "train.csv", dtype=COLUMN_TYPES), "breath_id")
    train = train.assign(id=range(1, len(train) + 1))
    test = test.assign(id=range(1, len(test) + 1))
    train.to_csv(public / "train.csv", **WRITE)
    test.drop(columns="pressure").to_csv(public / "test.csv", **WRITE)
    test[["id"]].assign(pressure=0).to_csv(public / "sample_submission.csv", **WRITE)
    test.to_csv(private / "test.csv", **WRITE)


def load_answers(private: Path) -> pd.DataFrame:
    """The test ids and pressures, with the unscored marker on expiratory rows (u_out 1)."""
    import pandas as pd

    from mle_gym.formats.packed_answers import UNSCORED

    answers = pd.read_csv(private / "test.csv", usecols=["id", "u_out", "pressure"], dtype=str)
    scored = answers["u_out"] == "0"
    return answers[["id"]].assign(pressure=answers["pressure"].where(scored, repr(UNSCORED)))


STATEMENT = """\
# Google Brain - Ventilator Pressure Prediction

A mechanical ventilator pushes air into a patient's lungs through a valve and lets it out
through another. The data come from an open-source ventilator connected to an artificial
test lung. Given each breath's control inputs and the lung's attributes, predict the airway
pressure at every time step of the breath.

## Data (read-only, in {data_dir})
- `train.csv`: one row per time step (80 per breath, about 3 seconds). Columns:
  - `id`: the time step's identifier (numbered from 1 in each file).
  - `breath_id`: the breath the time step belongs to.
  - `R`: how restricted the airway is (cmH2O/L/S: 5, 20 or 50).
  - `C`: how compliant the lung is (mL/cmH2O: 10, 20 or 50).
  - `time_step`: seconds since the breath started.
  - `u_in`: how far the inspiratory valve is open, from 0 to 100.
  - `u_out`: whether the expiratory valve is open (1) or closed (0).
  - `pressure`: the target, the airway pressure in cmH2O.
- `test.csv`: the breaths to predict, same columns without `pressure`. No breath is in both.
- `sample_submission.csv`: a valid submission in the right format (0 everywhere).

## Metric
Mean absolute error between your predicted and the true pressures, over the time steps of
the inspiratory phase only (`u_out` = 0); the expiratory phase is not scored, but every
row needs a prediction. Lower is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per `id` in
`test.csv`:

```
id,pressure
1,6.33
2,5.91
```

`pressure` must be a finite number. Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="ventilator-pressure-prediction",
    name="Google Brain - Ventilator Pressure Prediction",
    split="medium",
    metric="mae_scored_rows",
    lower_is_better=True,
    submission=SubmissionFormat(
        id_column="id",
        columns=(Column("pressure", "number"),),
        answers_file="test.csv",
        load_answers=load_answers,
    ),
    raw_files=("train.csv",),
    prepare=prepare,
    num_teams=2605,
    thresholds=Thresholds(gold=0.1119, silver=0.1338, bronze=0.1364, median=0.1638),
    sample_score=17.65486,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "6ab5162be2a03922cfc6068befc31c22",
            "test.csv": "39c126e1ac7b2e6641ec54f698b1ebdf",
            "train.csv": "4b0aaa1c637a452d5d1109aa585bca9f",
        },
        private={"test.csv": "ef4ebee21345154a7cdfbec0606db01a"},
    ),
    dev_variant=DevVariant(
        train_ids=ids_in("train.csv", "breath_id", "time_step"),
        test_ids=ids_in("test.csv", "breath_id", "time_step"),
    ),
)
