"""Google Smartphone Decimeter Challenge 2022: phone positions from raw GNSS, by distance error.

MLE-bench splits Kaggle's training drives by date (10% of the dates become the test set),
copies each drive's folder into public/train or public/test, and gathers the test phones'
ground_truth.csv files into the answers, one row per (tripId, UnixTimeMillis), where tripId
is `<drive>-<phone>`. The drive folders are hard-linked here instead of copied.

Deviations:
- MLE-bench's public test drives keep `supplemental/span_log.nmea`, the reference
  receiver's log from which the ground truth was derived (its known issue 93). Those files
  are left out of public/test here; everything else matches.
- MLE-bench checks each trip's row count and then pairs a trip's submitted rows with its
  answers by position, never looking at UnixTimeMillis. Here rows are matched by
  (tripId, UnixTimeMillis): any row order scores what MLE-bench gives rows in the answers'
  order (the sample submission's), and a trip whose timestamps differ from the answers'
  is refused.

Metric (`smartphone_p50_p95_distance`): per trip, the mean of the 50th and 95th percentile
of the haversine distances (metres) between predicted and true positions; then the mean
over trips.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from mle_gym.competitions.dev_ids import dirs_in
from mle_gym.competitions.hardlink_helpers import link_or_copy, place_tree
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.lazy import pd, train_test_split

#: Answer files left out of public test drives: the ground truth, and the reference
#: receiver's log it was computed from.
HIDDEN_IN_TEST = ("ground_truth.csv", "span_log.nmea")
#: Where MLE-bench's sample submission places every phone.
SAMPLE_POSITION = {"LatitudeDegrees": 37.904611315634504, "LongitudeDegrees": -86.48107806249548}


def drive_date(drive: str) -> str:
    """`YYYY-MM-DD` of a drive id `YYYY-M-D-<place>`, with month and day zero-padded."""
    year, month, day = drive.split("-")[:3]
    if not (year.isdigit() and month.isdigit() and day.isdigit()):
        raise ValueError(f"drive {drive!r} does not start with a date")
    return f"{year}-{month.zfill(2)}-{day.zfill(2)}"


def _answers(raw_train: Path, test_drives: list[str]) -> pd.DataFrame:
    """Every test phone's ground truth, in path order, under its tripId."""
    frames = []
    for drive in test_drives:
        for path in sorted((raw_train / drive).rglob("ground_truth.csv")):
            # pandas' default float parsing, as MLE-bench reads these files
            truth = pd.read_csv(path)
            truth["tripId"] = f"{drive}-{path.parent.name}"
            frames.append(truth[["tripId", "UnixTimeMillis", *SAMPLE_POSITION]])
    return pd.concat(frames, ignore_index=True)


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split of the training drives by date (see the module docstring)."""
    drives = sorted(p.name for p in (raw / "train").iterdir() if p.is_dir())
    dates = sorted({drive_date(d) for d in drives})
    _, test_dates = train_test_split(dates, test_size=0.1, random_state=0)
    test_drives = [d for d in drives if drive_date(d) in test_dates]

    hide = shutil.ignore_patterns(*HIDDEN_IN_TEST)
    for drive in drives:
        if drive in test_drives:
            dest = public / "test" / drive
            shutil.copytree(raw / "train" / drive, dest, copy_function=link_or_copy, ignore=hide)
        else:
            place_tree(raw / "train" / drive, public / "train" / drive)
    place_tree(raw / "metadata", public / "metadata")

    answers = _answers(raw / "train", test_drives)
    answers.to_csv(private / "test.csv", index=False)
    answers.assign(**SAMPLE_POSITION).to_csv(public / "sample_submission.csv", index=False)


STATEMENT = """\
# Google Smartphone Decimeter Challenge 2022

Phones locate themselves from satellite (GNSS) signals to within a few metres. From the
raw GNSS measurements and motion sensors logged by Android phones in cars on highways and
light urban roads, compute each phone's position as precisely as you can, ideally to the
decimetre. All of a drive's data (also later in time) may be used.

## Data (read-only, in {data_dir})
- `train/<drive>/<phone>/` and `test/<drive>/<phone>/`: one folder per phone of each drive;
  a drive id starts with its date, e.g. `2021-04-29-US-MTV-1`. In each:
  - `device_gnss.csv`: raw GNSS measurements, one row per satellite signal per epoch:
    clock fields, satellite id and constellation, pseudorange rates, accumulated delta
    range, carrier-to-noise density, satellite positions and velocities, corrected
    pseudoranges, and a baseline position (`WlsPositionXEcefMeters`, ...) from a weighted
    least squares solver; `utcTimeMillis` is the epoch.
  - `device_imu.csv`: accelerometer, gyroscope and magnetometer readings.
  - `supplemental/`: the same GNSS data in other formats (`gnss_log.txt`, RINEX `.2?o`).
  - train only: `ground_truth.csv`, the reference positions (`LatitudeDegrees`,
    `LongitudeDegrees`, altitude, speed, bearing) at each `UnixTimeMillis`, from a
    high-grade receiver, and `supplemental/span_log.nmea`, that receiver's log.
- `metadata/`: JSON maps of the bit fields in `device_gnss.csv` (`State`,
  `AccumulatedDeltaRangeState`).
- `sample_submission.csv`: every (tripId, UnixTimeMillis) to predict, with one fixed
  position for all.

Test drives were recorded on other dates than the training drives.

## Metric
For each trip (a phone on a drive), the horizontal (haversine) distance in metres between
predicted and true positions is computed at every timestamp; the trip's score is the
mean of the 50th and 95th percentiles of those distances; the final score is the mean over
trips. Lower is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per row of
`sample_submission.csv` (same tripId and UnixTimeMillis), `tripId` being `<drive>-<phone>`:

```
tripId,UnixTimeMillis,LatitudeDegrees,LongitudeDegrees
2021-04-29-US-MTV-1-GooglePixel4,1619735725999,37.4162,-122.0820
2021-04-29-US-MTV-1-GooglePixel4,1619735726999,37.4162,-122.0821
```

Latitude and longitude are WGS84 decimal degrees. Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="smartphone-decimeter-2022",
    name="Google Smartphone Decimeter Challenge 2022",
    split="high",
    metric="smartphone_p50_p95_distance",
    lower_is_better=True,
    submission=SubmissionFormat(
        id_column="tripId",
        columns=(
            Column("UnixTimeMillis", "number"),
            Column("LatitudeDegrees", "number"),
            Column("LongitudeDegrees", "number"),
        ),
        answers_file="test.csv",
    ),
    raw_files=("train", "metadata"),
    prepare=prepare,
    num_teams=574,
    thresholds=Thresholds(gold=1.768, silver=2.119, bronze=3.068, median=3.3280000000000003),
    sample_score=3122773.6564,
    statement=STATEMENT,
    checksums=Checksums(
        public={"sample_submission.csv": "0cf35d457c068e151816fd36f93ce036"},
        private={"test.csv": "8c2ca9cd51dcea17a3943bbf20336254"},
    ),
    dev_variant=DevVariant(train_ids=dirs_in("train", depth=2)),
)
