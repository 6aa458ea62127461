"""Kuzushiji Recognition: find and read every cursive Japanese character on a page.

MLE-bench holds out 10% of Kaggle's labelled pages (`train_test_split`, seed 0) as the test
set and re-zips the page images into `train_images.zip` and `test_images.zip`. Here the
images go from the raw archive into the new ones member by member, never unpacked on disk;
the CSV files are MLE-bench's bytes.

Grading decisions: every test page must have exactly one row (MLE-bench only compares row
counts and sorted ids, which comes to the same). A row is malformed unless it splits on
single spaces into `label x y` triples with numeric x and y, as MLE-bench refuses it; an
empty cell predicts nothing on that page. A page whose answer is empty (illustrations
only) would make MLE-bench's prepare fail when writing the gold submission; here its gold
row is empty, a case the real split may never meet.
"""

from __future__ import annotations

import shutil
import zipfile
from collections.abc import Iterable
from pathlib import Path

from mle_gym.competitions.csv_io import read_csv
from mle_gym.competitions.hardlink_helpers import place_file
from mle_gym.competitions.holdout import holdout
from mle_gym.competitions.prepare_progress import Progress
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    SubmissionFormat,
    Thresholds,
)

#: The sample submission's guess for every page, as Kaggle's own sample has it.
SAMPLE_LABELS = "U+003F 1 1 U+FF2F 2 2"


def _rezip(archive: zipfile.ZipFile, image_ids: Iterable[str], dest: Path) -> None:
    """Copy `<id>.jpg` of each id from `archive` into a new flat zip at `dest`."""
    ids = list(image_ids)
    with (
        zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as out,
        Progress(dest.name, len(ids)) as progress,
    ):
        for image_id in ids:
            source = archive.getinfo(f"{image_id}.jpg")
            target = zipfile.ZipInfo(source.filename, date_time=source.date_time)
            target.compress_type = zipfile.ZIP_DEFLATED
            with archive.open(source) as reader, out.open(target, "w") as writer:
                shutil.copyfileobj(reader, writer, 1 << 20)
            progress.add(source.file_size)


def _gold_labels(boxes: object) -> str:
    """`label x y w h ...` as `label x+1 y+1 ...`: one point just inside each box."""
    if not isinstance(boxes, str):
        return ""
    tokens = boxes.split()
    return " ".join(
        f"{c} {int(x) + 1} {int(y) + 1}"
        for c, x, y in zip(tokens[0::5], tokens[1::5], tokens[2::5], strict=True)
    )


def prepare(raw: Path, public: Path, private: Path) -> None:
    """Hold out 10% of the labelled pages; zip each side's images; write the CSV files."""
    train, test = holdout(read_csv(raw / "train.csv"))
    train.to_csv(public / "train.csv", index=False)
    test.to_csv(private / "test.csv", index=False)
    with zipfile.ZipFile(raw / "train_images.zip") as archive:
        _rezip(archive, train["image_id"], public / "train_images.zip")
        _rezip(archive, test["image_id"], public / "test_images.zip")
    place_file(raw / "unicode_translation.csv", public / "unicode_translation.csv")
    test.assign(labels=SAMPLE_LABELS).to_csv(public / "sample_submission.csv", index=False)
    gold = test.assign(labels=[_gold_labels(v) for v in test["labels"]])
    gold.to_csv(private / "gold_submission.csv", index=False)


STATEMENT = """\
# Kuzushiji Recognition

Kuzushiji is the cursive script in which Japanese was written for over a thousand years;
few people today can read it. Each image is a scanned page of a historical book. Find
every Kuzushiji character on each test page and say which character it is, by giving its
Unicode code and one point inside it.

## Data (read-only, in {data_dir})
- `train.csv`: the labelled pages, columns `image_id` and `labels`. `labels` is a
  space-separated series of `unicode x y width height` groups, one per character: its
  Unicode code (e.g. `U+306F`) and its bounding box in pixels (top-left corner, width and
  height). It is empty for pages without characters (e.g. only illustrations).
- `train_images.zip`: the training pages, `<image_id>.jpg` at the top level of the archive.
- `test_images.zip`: the pages to transcribe, in the same form.
- `unicode_translation.csv`: the Unicode code of each character and the character itself.
- `sample_submission.csv`: a valid submission listing every test page (it guesses the
  same two characters at pixels (1, 1) and (2, 2) on every page).

The pages are colour photographs of a few thousand pixels per side; a page holds from
none to several hundred characters, out of thousands of distinct ones with a long tail.
Only the main text is labelled: small annotation characters written between the columns,
and characters seen through thin paper from the other side of the sheet, are not, and
predicting them counts as a false positive. The data folder is read-only: extract the
archives somewhere else, e.g. under `{code_dir}`.

## Metric
F1 score over all characters of all test pages. Boxes are taken one by one in the order
of the answer; a box counts as found (a true positive) when a prediction with the same
Unicode code lies strictly inside it and has not already been used by an earlier box.
Predictions used by no box are false positives, boxes not found false negatives.
Higher is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per test page:

```
image_id,labels
100241706_00004_2,U+306F 1231 3465 U+304C 275 1652
200003076_00035_1,
```

`labels` is a series of `unicode x y` triples separated by single spaces (x and y are the
point's pixel coordinates; decimals are allowed); leave it empty to predict no character.
Kaggle asked for at most 1,200 predictions per page. Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="kuzushiji-recognition",
    name="Kuzushiji Recognition",
    split="medium",
    metric="kuzushiji_f1",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="image_id",
        columns=(Column("labels", "text"),),
        answers_file="test.csv",
    ),
    raw_files=("train.csv", "train_images.zip", "unicode_translation.csv"),
    prepare=prepare,
    num_teams=294,
    thresholds=Thresholds(gold=0.903, silver=0.8, bronze=0.658, median=0.5985),
    sample_score=0.0,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "9ebf151965c85f43249479f38392e00c",
            "train.csv": "cb6a4b3dc1f2f2921394cf60ff8083d2",
            "unicode_translation.csv": "3b48a1cd37de399cf20dd018057900cf",
        },
        private={
            "gold_submission.csv": "f764948b29a9b7bd45c8fcd7fc8af117",
            "test.csv": "1d2c597a03e298e2f03eec22692271ec",
        },
    ),
)
