"""Statoil/C-CORE Iceberg Classifier Challenge: iceberg or ship, from a radar image?

Grading: binary log loss of `is_iceberg`, as MLE-bench scores it (scikit-learn's
`log_loss`, probabilities clipped to machine epsilon from 0 and 1). MLE-bench refuses
values outside [0, 1] and sets of ids unlike the answers'; it never counts rows, so a
repeated id would reach scikit-learn and fail there: validation refuses it first.
"""

from __future__ import annotations

import csv
import json
import tempfile
from pathlib import Path
from typing import Any, BinaryIO

from mle_gym.competitions.archive_streams import (
    JsonArrayReader,
    add_with_fixed_time,
    only_member_named,
    stream_7z,
)
from mle_gym.competitions.prepare_progress import Progress
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.lazy import pd, train_test_split

#: Our own plain copy of the sample submission in public/ (MLE-bench only publishes it in
#: a 7z archive), with quoted ids so that no public file repeats a private one byte for byte.
PLAIN_SAMPLE = "sample_submission.csv"


class _RecordStore:
    """Kaggle's training records, each kept on disk as `json.dumps` writes it.

    The real train.json unpacks to hundreds of megabytes of floats; only ids, labels and
    each record's place in the scratch file stay in memory.
    """

    def __init__(self, handle: BinaryIO, progress: Progress) -> None:
        self._handle = handle
        self._progress = progress
        self.spans: list[tuple[int, int]] = []
        self.labels: list[tuple[str, int]] = []

    def add(self, record: dict[str, Any]) -> None:
        text = json.dumps(record).encode("ascii")  # json.dumps escapes all else
        self.spans.append((self._handle.tell(), len(text)))
        self._handle.write(text)
        self.labels.append((record["id"], int(record["is_iceberg"])))
        self._progress.add(len(text))

    def text(self, index: int) -> str:
        start, length = self.spans[index]
        self._handle.seek(start)
        return self._handle.read(length).decode("ascii")

    def test_text(self, index: int, fields: list[str]) -> str:
        """The record as a test record: only `fields`, in their order."""
        record = json.loads(self.text(index))
        return json.dumps({field: record[field] for field in fields})


def _read_json_array(archive: Path, basename: str, on_value: Any, limit: int | None = None) -> None:
    reader = JsonArrayReader(on_value, limit)
    stream_7z(archive, [only_member_named(archive, basename)], lambda _: reader)
    reader.close()


def _test_fields(raw: Path) -> list[str]:
    """The fields of Kaggle's test records, in their order, from its first record only.

    py7zr still decompresses the whole member (1.5 GB), but the rest is never parsed or kept.
    """
    first: list[dict[str, Any]] = []
    _read_json_array(raw / "test.json.7z", "test.json", first.append, limit=1)
    if not first:
        raise ValueError("test.json.7z holds no test record")
    return list(first[0])


def _write_7z(archive: Path, member: Path) -> None:
    """A 7z archive of one file, LZMA2 at preset 1.

    MLE-bench uses py7zr's default level, which would take about a quarter of an hour
    for the real train.json on our 2-core test machine (preset 1: about three minutes);
    the archive's bytes never match MLE-bench's anyway. The member's recorded write time is
    fixed: two preparations give the same bytes.
    """
    import py7zr

    with py7zr.SevenZipFile(
        archive, "w", filters=[{"id": py7zr.FILTER_LZMA2, "preset": 1}]
    ) as target:
        add_with_fixed_time(target, member, member.name)


def _train_ids(public: Path) -> set[str]:
    """The ids of the records in a public train.json.7z (for the development variant)."""
    ids: set[str] = set()
    _read_json_array(public / "train.json.7z", "train.json", lambda r: ids.add(r["id"]))
    return ids


def _write_json_list(path: Path, texts: Any) -> None:
    """Write what `json.dump` writes for a list whose elements dump to `texts`."""
    with path.open("w") as handle:
        handle.write("[")
        for number, text in enumerate(texts):
            handle.write(", " + text if number else text)
        handle.write("]")


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split: 20% of Kaggle's 1,604 labelled images become the hidden test set.

    `train_test_split(test_size=0.2, random_state=0)` over the records of train.json, both
    halves in the split's (shuffled) order; the held-out records keep only the fields of
    Kaggle's test records. The records pass through a scratch file, never all in memory.
    """
    fields = _test_fields(raw)
    with tempfile.TemporaryDirectory(dir=private) as scratch_dir:
        scratch = Path(scratch_dir)
        with (scratch / "records.json").open("w+b") as handle:
            with Progress("Reading train.json records") as progress:
                store = _RecordStore(handle, progress)
                _read_json_array(raw / "train.json.7z", "train.json", store.add)
            train, test = train_test_split(range(len(store.spans)), test_size=0.2, random_state=0)
            _write_json_list(scratch / "train.json", (store.text(i) for i in train))
            _write_json_list(scratch / "test.json", (store.test_text(i, fields) for i in test))
        _write_7z(public / "train.json.7z", scratch / "train.json")
        _write_7z(public / "test.json.7z", scratch / "test.json")

    answers = pd.DataFrame([store.labels[i] for i in test], columns=["id", "is_iceberg"])
    answers.to_csv(private / "test.csv", index=False)
    sample = answers.assign(is_iceberg=0.5)
    sample.to_csv(private / "sample_submission.csv", index=False)
    _write_7z(public / "sample_submission.csv.7z", private / "sample_submission.csv")
    sample.to_csv(public / PLAIN_SAMPLE, index=False, quoting=csv.QUOTE_NONNUMERIC)


STATEMENT = """\
# Statoil/C-CORE Iceberg Classifier Challenge

Icebergs threaten ships and platforms off the east coast of Canada, where aerial
surveillance is costly and often impossible. A satellite's radar sees through cloud and
darkness; the task is to tell, from a small radar image around a detected object,
whether it is an iceberg or a ship.

## Data (read-only, in {data_dir})
The labelled images of Kaggle's training set (1,604), of which 20% (321) form the
test set here. Each file is a 7z archive holding one JSON file:
- `train.json.7z` holds `train.json`: a list of records with fields
  - `id`: the image's id (8 hexadecimal characters, e.g. `dfd5f913`);
  - `band_1`, `band_2`: the 75x75 image as a flat list of 5,625 floats, row by row,
    for the HH (transmit and receive horizontally) and HV (transmit horizontally,
    receive vertically) polarisations; values are backscatter in dB;
  - `inc_angle`: the incidence angle of the radar beam in degrees, or `"na"` where
    it is unknown;
  - `is_iceberg`: the answer, `1` for an iceberg and `0` for a ship.
- `test.json.7z` holds `test.json`: the images to classify, with the same fields except
  `is_iceberg`.
- `sample_submission.csv.7z`, and the same unpacked (ids quoted) as
  `sample_submission.csv`: a valid submission listing every test image (it predicts
  `0.5` everywhere).

## Metric
Binary log loss (cross-entropy) between your predicted probabilities and the true
labels; probabilities are first clipped to within machine epsilon (about 2.2e-16)
of 0 and 1, so a confident mistake costs about 36. Lower is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per image in
`test.json`, giving the probability that it shows an iceberg:

```
id,is_iceberg
5941774d,0.12
4023181e,0.93
```

`is_iceberg` must be a probability between 0 and 1. Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    extras=("archives",),
    id="statoil-iceberg-classifier-challenge",
    name="Statoil/C-CORE Iceberg Classifier Challenge",
    split="medium",
    metric="binary_log_loss",
    lower_is_better=True,
    submission=SubmissionFormat(
        id_column="id",
        columns=(Column("is_iceberg", "probability"),),
        answers_file="test.csv",
        sample_file=PLAIN_SAMPLE,
    ),
    raw_files=("train.json.7z", "test.json.7z"),
    prepare=prepare,
    num_teams=3330,
    thresholds=Thresholds(gold=0.11374, silver=0.13753, bronze=0.14552, median=0.20371),
    sample_score=0.69315,
    statement=STATEMENT,
    dev_variant=DevVariant(train_ids=_train_ids),
    checksums=Checksums(
        private={
            "sample_submission.csv": "eeade5905d2b08fe7efd353de37ac58b",
            "test.csv": "0b3eba8691a3cc72dcb7998baa672446",
        },
    ),
)
