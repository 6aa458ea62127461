"""IceCube - Neutrinos in Deep Ice: the direction a neutrino came from, mean angular error.

MLE-bench splits Kaggle's 660 training batches (test_size=0.1, random_state=0, over the batch
ids in order of first appearance in train_meta.parquet): the events of the held-out batches
become the test set, and their batch files move to public/test/.

Fidelity: MLE-bench writes the two metadata tables with fastparquet, whose bytes depend on
the library's version (MLE-bench issue 58: its own md5 sums do not reproduce), so no md5 can
hold for them. We write the same rows, columns and types with pyarrow, and compare contents
(the tables read back are equal); the CSV files keep MLE-bench's bytes and md5 sums.

The raw set is ~117 GB: train_meta.parquet (~130M events) is read in record batches, twice
(the batch ids, then the split), and written batch by batch, so memory is bounded by one row
group of the raw file; the per-batch pulse files, kept unchanged, are hard-linked.

Grading: MLE-bench requires exactly the columns event_id, azimuth, zenith, all finite
numbers; so do we. Any finite angle names a direction and is scored.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from mle_gym.competitions.dev_ids import parquet_ids
from mle_gym.competitions.hardlink_helpers import place_file
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    SubmissionFormat,
    Thresholds,
)

if TYPE_CHECKING:
    import pyarrow as pa

META = "train_meta.parquet"
TARGETS = ("azimuth", "zenith")
#: Events per record batch read from train_meta.parquet (~50 MB of columns).
READ_ROWS = 1_000_000


def record_batches(path: Path, columns: list[str] | None = None) -> Iterator[pa.RecordBatch]:
    """The file's rows, READ_ROWS at a time, reading one row group after the other.

    One reader over the whole file keeps what it decoded until it is done (pyarrow 26:
    memory grows with the file, as in apache/arrow#39808); a reader per row group frees it.
    """
    import pyarrow.parquet as pq

    source = pq.ParquetFile(path)
    for group in range(source.num_row_groups):
        yield from source.iter_batches(READ_ROWS, row_groups=[group], columns=columns)


def batch_ids_in_order(meta: Path) -> list[int]:
    """The distinct batch ids, in order of first appearance (as pandas' unique gives them)."""
    seen: dict[int, None] = {}
    for block in record_batches(meta, ["batch_id"]):
        seen.update(dict.fromkeys(block.column(0).unique().to_pylist()))
    return list(seen)


class _Outputs:
    """The four files written from train_meta.parquet, one record batch at a time."""

    def __init__(self, public: Path, private: Path, schema: pa.Schema) -> None:
        import pyarrow.parquet as pq

        self.train = pq.ParquetWriter(public / "train_meta.parquet", schema)
        test_schema = schema.remove(schema.get_field_index(TARGETS[0]))
        test_schema = test_schema.remove(test_schema.get_field_index(TARGETS[1]))
        self.test = pq.ParquetWriter(public / "test_meta.parquet", test_schema)
        self.answers = (private / "test.csv").open("w", newline="")
        self.sample = (public / "sample_submission.csv").open("w", newline="")
        self.header = True

    def write(self, train: pa.Table, test: pa.Table) -> None:
        self.train.write_table(train)
        self.test.write_table(test.drop_columns(list(TARGETS)))
        answers = test.select(["event_id", *TARGETS]).to_pandas()
        answers.to_csv(self.answers, index=False, header=self.header)
        answers.assign(**dict.fromkeys(TARGETS, 1)).to_csv(
            self.sample, index=False, header=self.header
        )
        self.header = False

    def close(self) -> None:
        for handle in (self.train, self.test, self.answers, self.sample):
            handle.close()


def split_meta(meta: Path, public: Path, private: Path, test_batches: set[int]) -> None:
    """Events of `test_batches` to the test files, all others to train_meta.parquet."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    outputs = _Outputs(public, private, pq.ParquetFile(meta).schema_arrow.remove_metadata())
    held_out = pa.array(sorted(test_batches), type=pa.int64())
    try:
        for block in record_batches(meta):
            table = pa.Table.from_batches([block]).replace_schema_metadata(None)
            in_test = pc.is_in(table["batch_id"], value_set=held_out)
            outputs.write(table.filter(pc.invert(in_test)), table.filter(in_test))
    finally:
        outputs.close()


def _batch_number(path: Path) -> int:
    """`batch_12.parquet` -> 12."""
    return int(path.stem.split("_")[-1])


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split of the training batches (see the module docstring)."""
    from sklearn.model_selection import train_test_split

    batch_ids = batch_ids_in_order(raw / META)
    train_ids, test_ids = train_test_split(batch_ids, test_size=0.1, random_state=0)
    split_meta(raw / META, public, private, set(test_ids))
    place_file(raw / "sensor_geometry.csv", public / "sensor_geometry.csv")
    folders = {**dict.fromkeys(train_ids, "train"), **dict.fromkeys(test_ids, "test")}
    for folder in ("train", "test"):
        (public / folder).mkdir()
    for path in sorted((raw / "train").glob("*.parquet")):
        folder = folders.get(_batch_number(path))
        if folder is not None:
            place_file(path, public / folder / path.name)


STATEMENT = """\
# IceCube - Neutrinos in Deep Ice

The IceCube observatory, a cubic kilometre of Antarctic ice instrumented with 5,160 light
sensors, records the flashes left by particles that neutrinos produce. From the pulses of
light recorded for an event, reconstruct the direction the neutrino came from, as two angles.

## Data (read-only, in {data_dir})
- `train_meta.parquet`: one row per training event (about 120 million): `batch_id`,
  `event_id`, `first_pulse_index` and `last_pulse_index` (the event's rows in its batch
  file), and the targets `azimuth` (0 to 2π) and `zenith` (0 to π), in radians.
- `test_meta.parquet`: the events to predict (about 13 million), same columns without the
  targets.
- `train/batch_<n>.parquet` and `test/batch_<n>.parquet`: the pulses of every event of batch
  n, one row per pulse, indexed by `event_id`: `sensor_id`, `time` (ns, only relative times
  within an event matter), `charge` (photoelectrons) and `auxiliary` (True when the pulse
  fails quality criteria, e.g. possibly noise). Together about 100 GB: read one batch at a
  time.
- `sensor_geometry.csv`: `sensor_id` and its position `x`, `y`, `z` in metres.
- `sample_submission.csv`: a valid submission in the right format (1 for both angles).

The direction given by (azimuth, zenith) points to where the neutrino came from.

## Metric
The mean, over the test events, of the angle in radians between the true and the predicted
direction. Lower is better.

## Submission
Write a CSV file to `{submission_path}` with exactly the header `event_id,azimuth,zenith`
and one row per event in `test_meta.parquet`:

```
event_id,azimuth,zenith
2092,1.87,0.93
7344,4.52,2.11
```

The angles must be finite numbers, in radians. Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="icecube-neutrinos-in-deep-ice",
    name="IceCube - Neutrinos in Deep Ice",
    split="medium",
    metric="mean_angular_error",
    lower_is_better=True,
    submission=SubmissionFormat(
        id_column="event_id",
        columns=tuple(Column(name, "number") for name in TARGETS),
        answers_file="test.csv",
        allow_extra_columns=False,
    ),
    raw_files=(META, "sensor_geometry.csv", "train/batch_*.parquet"),
    prepare=prepare,
    num_teams=813,
    thresholds=Thresholds(gold=0.977306, silver=1.007885, bronze=1.018571, median=1.019959),
    sample_score=1.55139,
    statement=STATEMENT,
    # The parquet tables have no md5 here: see the module docstring.
    checksums=Checksums(
        public={
            "sample_submission.csv": "df2a0e29adf304f4fa521a43ba9031f1",
            "sensor_geometry.csv": "acad541886071600c427b405a70841e8",
        },
        private={"test.csv": "6b3eef7a836409e5c99557763d1d2c7d"},
    ),
    dev_variant=DevVariant(train_ids=parquet_ids("train_meta.parquet", "event_id")),
)
