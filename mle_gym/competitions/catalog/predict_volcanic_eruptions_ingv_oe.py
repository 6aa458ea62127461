"""INGV Volcanic Eruption Prediction: time until the next eruption from seismic logs, by MAE.

MLE-bench holds out 10% of Kaggle's labelled segments and copies each segment's sensor log
into public/train or public/test; the logs (about 30 GB) are hard-linked here instead.
Its grader rounds the mean absolute error to a whole number (Python's `round`, halves to
even), so the metric `rounded_mae` does the same and scores compare exactly.
"""

from __future__ import annotations

from pathlib import Path

from mle_gym.competitions.csv_io import read_csv
from mle_gym.competitions.hardlink_helpers import place_file
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.lazy import train_test_split


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split: 10% of the labelled segments become the hidden test set."""
    segments = read_csv(raw / "train.csv")
    train, test = train_test_split(segments, test_size=0.1, random_state=0)

    test.to_csv(private / "test.csv", index=False)
    train.to_csv(public / "train.csv", index=False)
    test.assign(time_to_eruption=0).to_csv(public / "sample_submission.csv", index=False)

    (public / "train").mkdir()
    (public / "test").mkdir()
    for folder, part in (("train", train), ("test", test)):
        for segment in part["segment_id"]:
            place_file(raw / "train" / f"{segment}.csv", public / folder / f"{segment}.csv")


STATEMENT = """\
# INGV - Volcanic Eruption Prediction

Ten seismic sensors record the ground around an active Italian volcano. From ten minutes
of their readings, predict how long it will be until the volcano's next eruption.

## Data (read-only, in {data_dir})
- `train.csv`: one row per training segment: `segment_id` (an integer naming the
  segment's log file) and `time_to_eruption`, the target (a whole number of time units;
  values reach tens of millions).
- `train/<segment_id>.csv`: the logs of the training segments.
- `test/<segment_id>.csv`: the logs of the segments to predict (about 440 of them).
- `sample_submission.csv`: a valid submission listing every test segment (it predicts 0).

Each log file has the columns `sensor_1` to `sensor_10` and 60,001 rows: ten minutes of
readings at 100 Hz, normalised within the segment to fit the int16 range. Some sensors
are missing for whole segments or stretches of them (empty cells), so read the files as
floats. The logs take about 30 GB in all.

## Metric
Mean absolute error between your predicted and the true times, rounded to a whole number.
Lower is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per test segment:

```
segment_id,time_to_eruption
1000015382,15000000
1000554676,21000000
```

`time_to_eruption` must be a number. Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="predict-volcanic-eruptions-ingv-oe",
    name="INGV - Volcanic Eruption Prediction",
    split="high",
    metric="rounded_mae",
    lower_is_better=True,
    submission=SubmissionFormat(
        id_column="segment_id",
        columns=(Column("time_to_eruption", "number"),),
        answers_file="test.csv",
    ),
    raw_files=("train.csv", "train"),
    prepare=prepare,
    num_teams=621,
    thresholds=Thresholds(gold=3971366.0, silver=4808057.0, bronze=4999330.0, median=6300677.0),
    sample_score=24402200.0,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "99631b72e1d2019b0b498f0dd6eec1cb",
            "train.csv": "b7c10ca530487fb7e3d1f1669a6e5059",
        },
        private={"test.csv": "1034df7a3f38ccd7bf9e5d6357db86f3"},
    ),
)
