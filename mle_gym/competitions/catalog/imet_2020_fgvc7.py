"""iMet Collection 2020 (FGVC7): tag artworks of The Met with their attributes.

Kaggle reran submitted code on a hidden test set, so MLE-bench holds out 15% of the 142,119
labelled images as the test set; their images move, unrenamed, from `train/` to `test/`, and
the attribute descriptions (`labels.csv`) are published unchanged. Its sample submission
predicts attributes `0 1 2` for every image.

Grading follows MLE-bench: micro F1 over the space-separated attribute ids of each image
(`mle_gym.grading.metrics.tag_f1`). Its `MultiLabelBinarizer` knows only the attributes
found in the answers, so a predicted id no test image carries is ignored rather than
counted as a false positive: padding with unused ids neither helps nor hurts. Ids are
compared as text (`013` is not `13`); a repeated id counts once; an empty cell is an empty
set.
"""

from __future__ import annotations

from pathlib import Path

from mle_gym.competitions.csv_io import read_csv
from mle_gym.competitions.hardlink_helpers import place_file
from mle_gym.competitions.held_out_images import place_images
from mle_gym.competitions.holdout import holdout
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    SubmissionFormat,
    Thresholds,
)


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split: 15% of the labelled images held out, seed 0."""
    original = read_csv(raw / "train.csv")
    train, answers = holdout(original, 0.15)

    answers.to_csv(private / "answers.csv", index=False)
    train.to_csv(public / "train.csv", index=False)
    answers.assign(attribute_ids="0 1 2").to_csv(public / "sample_submission.csv", index=False)
    place_file(raw / "labels.csv", public / "labels.csv")

    for part, folder in ((train, "train"), (answers, "test")):
        place_images(raw / "train", public / folder, part["id"] + ".png")


STATEMENT = """\
# iMet Collection 2020 - FGVC7

The Metropolitan Museum of Art in New York photographs the objects of its collection:
paintings, sculpture, textiles, arms, furniture, whole rooms. Annotators tagged each with
attributes from an ontology of The Met (where it comes from, its culture, medium, what it
shows); each object was tagged by one person without review, so the labels are noisy and
some attributes mean nearly the same thing. For every test image, predict its attributes.

## Data (read-only, in {data_dir})
- `train.csv`: one row per training image (about 120,800): `id` (32 hexadecimal
  characters) and `attribute_ids` (the image's attribute ids, integers separated by
  spaces, e.g. `147 616 813`).
- `labels.csv`: columns `attribute_id` and `attribute_name`, which describes each of the
  roughly 3,500 attributes with a prefix for its kind (e.g. `country::afghanistan`,
  `culture::american`, `medium::bronze`, `tags::landscapes`).
- `train/<id>.png`: the training images (colour PNG files of varying size).
- `test/<id>.png`: the images to tag (about 21,300).
- `sample_submission.csv`: a valid submission listing every test image (it predicts
  `0 1 2` for all).

## Metric
Micro-averaged F1 score: every (image, attribute) pair you predict that is true counts as
a true positive, every other predicted pair as a false positive, and every true pair you
miss as a false negative; F1 = 2 TP / (2 TP + FP + FN), pooled over all images. Only
attribute ids that occur in the test answers count: any other id you predict is ignored.
Higher is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per file in
`test/` (the id is the file name without `.png`), attribute ids separated by single spaces:

```
id,attribute_ids
00011f01965f141f5d1eea6592fa9862,147 616 813
00014abc91ed3e4bf1663fde8136fe80,51 1059
```

Ids are compared as written (`013` is not `13`); order and repeats within a row do not
matter; an empty cell predicts no attribute. Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="imet-2020-fgvc7",
    name="iMet Collection 2020 - FGVC7",
    split="medium",
    metric="micro_f1_tags",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="id",
        columns=(Column("attribute_ids", "text"),),
        answers_file="answers.csv",
    ),
    raw_files=("train.csv", "labels.csv", "train/*.png"),
    prepare=prepare,
    num_teams=96,
    thresholds=Thresholds(gold=0.696, silver=0.649, bronze=0.649, median=0.627),
    sample_score=6e-05,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "labels.csv": "a62c433510585b96a558564fa8f530f4",
            "sample_submission.csv": "879aa23cfa7947e6c39737615fa7f429",
            "train.csv": "ce560adcffe6ee6e9b6da89981f8da2e",
        },
        private={"answers.csv": "c708435becf1c7679bf09c1746942992"},
    ),
)
