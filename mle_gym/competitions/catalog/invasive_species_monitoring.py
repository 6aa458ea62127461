"""Invasive Species Monitoring: does a photo of a forest show invasive hydrangea?

Kaggle ships its 2,295 labelled photos in train.7z (`train/<name>.jpg`). The split streams
them out of that archive, one photo at a time through a scratch file, into the two new archives.

Grading: ROC AUC of `invasive`, as MLE-bench scores it; MLE-bench refuses values outside
[0, 1] and files whose sorted names differ from the answers', as validation does.
"""

from __future__ import annotations

import csv
import tempfile
import zipfile
from pathlib import Path
from typing import Any, BinaryIO

from mle_gym.competitions.archive_streams import add_with_fixed_time, member_names, stream_7z
from mle_gym.competitions.csv_io import read_csv
from mle_gym.competitions.dev_ids import ids_in
from mle_gym.competitions.holdout import holdout
from mle_gym.competitions.prepare_progress import Progress
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.competitions.zip_members import ZIP_TIME

#: Our own plain copy of the sample submission in public/ (MLE-bench only publishes it
#: zipped), with a quoted header so that no public file repeats a private one byte for byte.
PLAIN_SAMPLE = "sample_submission.csv"


class _Photo:
    """Receives one photo from Kaggle's archive into a scratch file, then adds that file to
    the new archive at its end (with a fixed write time: see `add_with_fixed_time`)."""

    def __init__(self, target: Any, arcname: str, scratch: Path, progress: Progress) -> None:
        self._target = target
        self._arcname = arcname
        self._scratch = scratch
        self._progress = progress
        self._file: BinaryIO = scratch.open("wb")

    def write(self, chunk: bytes) -> None:
        self._file.write(chunk)

    def close(self) -> None:
        self._progress.add(self._file.tell())
        self._file.close()
        add_with_fixed_time(self._target, self._scratch, self._arcname)


def _split_photos(train_7z: Path, folders: dict[str, str], public: Path, scratch: Path) -> None:
    """Copy each photo `train/<name>.jpg` named in `folders` (name -> "train" or "test")
    into public/<folder>.7z as `<folder>/<name>.jpg`, each through the file `scratch`.

    JPEGs do not compress, so the new archives store them as they are (7z's copy method).
    """
    import py7zr

    wanted = {f"train/{name}.jpg": name for name in folders}
    members = [m for m in member_names(train_7z) if m in wanted]
    missing = len(wanted) - len(members)
    if missing:
        raise FileNotFoundError(f"train.7z lacks {missing} of the labelled photos")
    store = [{"id": py7zr.FILTER_COPY}]
    with (
        py7zr.SevenZipFile(public / "train.7z", "w", filters=store) as train,
        py7zr.SevenZipFile(public / "test.7z", "w", filters=store) as test,
        Progress("Writing train.7z and test.7z", len(members)) as progress,
    ):
        targets = {"train": train, "test": test}

        def photo(member: str) -> _Photo:
            folder = folders[wanted[member]]
            return _Photo(targets[folder], f"{folder}/{wanted[member]}.jpg", scratch, progress)

        stream_7z(train_7z, members, photo)


def _write_zip(archive: Path, name: str, text: str) -> None:
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as target:
        target.writestr(zipfile.ZipInfo(name, date_time=ZIP_TIME), text, zipfile.ZIP_DEFLATED)


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split: 20% of Kaggle's labelled photos become the hidden test set.

    `train_test_split(test_size=0.2, random_state=0)` over train_labels.csv; both halves in
    the split's (shuffled) order.
    """
    with (
        zipfile.ZipFile(raw / "train_labels.csv.zip") as archive,
        archive.open("train_labels.csv") as handle,
    ):
        original = read_csv(handle)
    train, answers = holdout(original, 0.2)
    sample = answers.assign(invasive=0.5)

    answers.to_csv(private / "answers.csv", index=False)
    sample.to_csv(private / "sample_submission.csv", index=False)
    _write_zip(public / "train_labels.csv.zip", "train_labels.csv", train.to_csv(index=False))
    _write_zip(
        public / "sample_submission.csv.zip", "sample_submission.csv", sample.to_csv(index=False)
    )
    sample.to_csv(public / PLAIN_SAMPLE, index=False, quoting=csv.QUOTE_NONNUMERIC)

    folders = {
        **{str(name): "train" for name in train["name"]},
        **{str(name): "test" for name in answers["name"]},
    }
    with tempfile.TemporaryDirectory(dir=private) as scratch:
        _split_photos(raw / "train.7z", folders, public, Path(scratch) / "photo.jpg")


STATEMENT = """\
# Invasive Species Monitoring

Invasive plants spread fast and are costly to track: someone has to walk the forest and
look. From a photograph taken in a Brazilian national forest, predict whether it shows
invasive hydrangea.

## Data (read-only, in {data_dir})
Kaggle's 2,295 labelled colour photographs (JPEG), of which 20% (459) form the test
set here.
- `train_labels.csv.zip` holds `train_labels.csv`: columns `name` (the photo's number,
  e.g. `1093`) and `invasive` (the answer: `1` when invasive hydrangea is present,
  `0` otherwise).
- `train.7z` holds the training photos as `train/<name>.jpg`; `test.7z` holds the test
  photos as `test/<name>.jpg`. Unpack them where you can write, e.g. with `py7zr` or
  `7z x`.
- `sample_submission.csv.zip`, and the same unzipped (header quoted) as
  `sample_submission.csv`: a valid submission listing every test photo (it predicts
  `0.5` everywhere).

## Metric
Area under the ROC curve between your predicted probabilities and the true labels.
Higher is better; only the ranking of your predictions matters.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per photo in
`test.7z`:

```
name,invasive
1093,0.92
212,0.07
```

`invasive` must be a probability between 0 and 1. Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    extras=("archives",),
    id="invasive-species-monitoring",
    name="Invasive Species Monitoring",
    split="dev",
    metric="roc_auc",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="name",
        columns=(Column("invasive", "probability"),),
        answers_file="answers.csv",
        sample_file=PLAIN_SAMPLE,
    ),
    raw_files=("train.7z", "train_labels.csv.zip"),
    prepare=prepare,
    num_teams=512,
    thresholds=Thresholds(gold=0.99505, silver=0.99237, bronze=0.98979, median=0.969985),
    sample_score=0.5,
    statement=STATEMENT,
    dev_variant=DevVariant(train_ids=ids_in("train_labels.csv.zip", "name")),
    checksums=Checksums(
        private={
            "answers.csv": "931c56b826f984b6e8e38de046240166",
            "sample_submission.csv": "3fc85f5b579bbf85aa605899887df903",
        },
    ),
)
