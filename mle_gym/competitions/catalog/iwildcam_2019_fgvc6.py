"""iWildCam 2019 - FGVC6: which animal (if any) a camera-trap image shows.

MLE-bench holds out whole camera locations: `train_test_split` over the distinct
locations (test share 0.1, seed 8), so no test location appears in train. The images
arrive as Kaggle's `train_images.zip`; MLE-bench unpacks it, copies the images into two
folders and zips each again. We stream each image from Kaggle's archive straight into the
new one (same member names and bytes, deflated as `shutil.make_archive` does), so the set
is never unpacked on disk; the containers' timestamps and member order differ from
MLE-bench's, which depend on when and in which directory order it copied the files.

MLE-bench writes the sample submission with pandas' index as a first, unnamed column; it is
kept (graders ignore extra columns, ours with a warning). Grading is macro F1 over the
integer category ids (`macro_f1`); rows are matched by id, so nothing in MLE-bench's
reading can be gamed.
"""

from __future__ import annotations

import shutil
import zipfile
from collections.abc import Iterable
from pathlib import Path

from mle_gym.competitions.csv_io import read_csv
from mle_gym.competitions.dev_ids import ids_in
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
from mle_gym.lazy import train_test_split


def rezip(source: zipfile.ZipFile, names: Iterable[str], archive: Path, what: str) -> None:
    """Copy members `names` of `source` into a new deflated `archive`, one stream at a time."""
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as target, Progress(what) as progress:
        for name in names:
            member = zipfile.ZipInfo(name, date_time=ZIP_TIME)
            member.compress_type = zipfile.ZIP_DEFLATED
            member.external_attr = 0o644 << 16
            with source.open(name) as src, target.open(member, "w") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
            progress.add(source.getinfo(name).file_size)


def prepare(raw: Path, public: Path, private: Path) -> None:
    """Hold out 10% of the camera locations (seed 8) with all of their images."""
    original = read_csv(raw / "train.csv")
    _, test_locations = train_test_split(
        original["location"].unique(), test_size=0.1, random_state=8
    )
    held_out = original["location"].isin(test_locations)
    train, answers = original[~held_out], original[held_out]

    answers.to_csv(private / "test.csv", index=False)
    gold = answers[["id", "category_id"]].rename(columns={"id": "Id", "category_id": "Category"})
    gold.to_csv(private / "answers.csv", index=False)
    train.to_csv(public / "train.csv", index=False)
    answers.drop(columns=["category_id"]).to_csv(public / "test.csv", index=False)
    gold.assign(Category=0).to_csv(public / "sample_submission.csv", index=True)

    with zipfile.ZipFile(raw / "train_images.zip") as source:
        rezip(
            source,
            (f"{i}.jpg" for i in sorted(train["id"])),
            public / "train_images.zip",
            "train images",
        )
        rezip(
            source,
            (f"{i}.jpg" for i in sorted(answers["id"])),
            public / "test_images.zip",
            "test images",
        )


STATEMENT = """\
# iWildCam 2019 - FGVC6

Camera traps photograph whatever passes in front of them, day and night. Label each image
with the animal it shows, or `0` when it shows none. The images come from about 140 camera
locations in Southern California (196,157 images in all); the test images are from
locations that never appear in the training images, so a model must work at new sites.

Categories: 0 empty, 1 deer, 2 moose, 3 squirrel, 4 rodent, 5 small_mammal, 6 elk,
7 pronghorn_antelope, 8 rabbit, 9 bighorn_sheep, 10 fox, 11 coyote, 12 black_bear,
13 raccoon, 14 skunk, 15 wolf, 16 bobcat, 17 cat, 18 dog, 19 opossum, 20 bison,
21 mountain_goat, 22 mountain_lion. Only some of them occur in these images; `empty` is by
far the most common.

## Data (read-only, in {data_dir})
- `train.csv`: one row per training image. Columns `category_id` (the label), then
  `date_captured`, `file_name`, `frame_num`, `id`, `location`, `rights_holder`, `seq_id`
  (images of one burst share it), `seq_num_frames`, `width`, `height`.
- `train_images.zip`: the training images, JPEG, named `<id>.jpg` at the top level of the
  archive.
- `test.csv`: the same columns for the test images, without `category_id`.
- `test_images.zip`: the test images, named `<id>.jpg`.
- `sample_submission.csv`: a valid submission predicting `0` (empty) everywhere; its
  first, unnamed column is a row index you need not write.

The data folder is read-only: extract the archives somewhere else, e.g. under
`{code_dir}`.

## Metric
Macro-averaged F1 score (scikit-learn's `f1_score(average="macro")`): F1 per category,
averaged without weights over every category that appears in the true labels or in your
predictions, so rare animals count as much as empty frames. Higher is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per test image:
its `Id` (the `id` of `test.csv`) and the predicted integer `Category`:

```
Id,Category
5998cfa4-23d2-11e8-a6a3-ec086b02610b,0
588a679f-23d2-11e8-a6a3-ec086b02610b,19
```

Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="iwildcam-2019-fgvc6",
    name="iWildCam 2019 - FGVC6",
    split="high",
    metric="macro_f1",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="Id",
        columns=(Column("Category", "label"),),
        answers_file="answers.csv",
    ),
    raw_files=("train.csv", "train_images.zip"),
    prepare=prepare,
    num_teams=337,
    thresholds=Thresholds(gold=0.212, silver=0.129, bronze=0.114, median=0.108),
    sample_score=0.02315,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "2c3d7681f93545d6c811de41fbe2013a",
            "test.csv": "7b83b8c770dc4b820ab2c35484f3fc55",
            "train.csv": "3e7e01b0c342da6aebda97efae2de0e4",
        },
        private={
            "answers.csv": "83006769438332df65e5106e31c5d1fd",
            "test.csv": "e81e5aefbfbb046ae5cc5493012f303c",
        },
    ),
    dev_variant=DevVariant(train_ids=ids_in("train.csv", "id")),
)
