"""Aerial Cactus Identification: does a 32x32 aerial photo show a columnar cactus?"""

from __future__ import annotations

import zipfile
from collections.abc import Iterable
from pathlib import Path

from mle_gym.competitions.csv_io import read_csv
from mle_gym.competitions.dev_rules import rebuilt_raw
from mle_gym.competitions.hardlink_helpers import link_or_copy
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.competitions.zip_members import ZIP_TIME
from mle_gym.lazy import train_test_split


def _zip_images(source: zipfile.ZipFile, ids: Iterable[str], archive: Path) -> None:
    """Write images `train/<id>` of Kaggle's train.zip into a new archive, named `<id>`.

    MLE-bench zips the contents of a folder, so the new archives have no folder inside.
    """
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as target:
        for image_id in ids:
            member = zipfile.ZipInfo(image_id, date_time=ZIP_TIME)
            member.compress_type = zipfile.ZIP_DEFLATED
            target.writestr(member, source.read(f"train/{image_id}"))


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split: 19% of Kaggle's labelled images become the hidden test set."""
    original = read_csv(raw / "train.csv")
    train, test = train_test_split(original, test_size=0.19, random_state=0)

    train.to_csv(public / "train.csv", index=False)
    test.to_csv(private / "test.csv", index=False)
    sample = test.copy()
    sample["has_cactus"] = 0.5
    sample.to_csv(public / "sample_submission.csv", index=False)

    with zipfile.ZipFile(raw / "train.zip") as source:
        _zip_images(source, train["id"], public / "train.zip")
        _zip_images(source, test["id"], public / "test.zip")


def _public_as_raw(folder: Path, raw: Path) -> None:
    """Kaggle's layout from the public files: train.csv as it is, and train.zip's images
    under a `train/` folder inside the archive, where public/train.zip holds them at its top."""
    link_or_copy(folder / "train.csv", raw / "train.csv")
    with (
        zipfile.ZipFile(folder / "train.zip") as source,
        zipfile.ZipFile(raw / "train.zip", "w", zipfile.ZIP_STORED) as target,
    ):
        for name in source.namelist():
            target.writestr(f"train/{name}", source.read(name))


STATEMENT = """\
# Aerial Cactus Identification

A project surveying protected natural areas in Mexico wants to recognise vegetation from
the air automatically. Its first target is a columnar cactus (*Neobuxbaumia tetetzo*):
given a 32x32 pixel aerial photograph, predict the probability that it contains one.

## Data (read-only, in {data_dir})
- `train.csv`: the labelled images. Columns:
  - `id`: the image's file name, 32 hexadecimal digits followed by `.jpg`.
  - `has_cactus`: `1` if the image shows a cactus, `0` otherwise (about three images in
    four do).
- `train.zip`: the training images, 32x32 RGB JPEG files named by `id`, at the top level
  of the archive (no folder inside).
- `test.zip`: the images to predict, in the same form.
- `sample_submission.csv`: a valid submission listing every test image (it predicts
  `0.5` everywhere).

The data folder is read-only: extract the archives somewhere else, e.g. under
`{code_dir}`.

## Metric
Area under the ROC curve between your predicted probabilities and the true labels.
Higher is better; only the ranking of your predictions matters.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per image in
`test.zip`:

```
id,has_cactus
000940378805c44108d287872b2f04ce.jpg,0.93
0017242f54ececa4512b4d7937d1e21e.jpg,0.08
```

`has_cactus` must be a probability between 0 and 1. Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="aerial-cactus-identification",
    name="Aerial Cactus Identification",
    split="lite",
    metric="roc_auc",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="id",
        columns=(Column("has_cactus", "probability"),),
        answers_file="test.csv",
    ),
    raw_files=("train.csv", "train.zip"),
    prepare=prepare,
    num_teams=1221,
    thresholds=Thresholds(gold=1.0, silver=1.0, bronze=1.0, median=0.9991),
    sample_score=0.5,
    statement=STATEMENT,
    dev_variant=DevVariant(prepare=rebuilt_raw(prepare, _public_as_raw)),
    checksums=Checksums(
        public={
            "sample_submission.csv": "14c675bde0de98994efafac8e008277e",
            "train.csv": "4f5f752b84f8836c852f4f70e988a545",
        },
        private={"test.csv": "ebdb02d62dbaf60270a9b3a8617840af"},
    ),
)
