"""Plant Pathology 2021 (FGVC8): name every disease visible on a photographed apple leaf.

Kaggle's test images were hidden behind a code competition, so MLE-bench holds out 20% of
the 18,632 labelled photographs as the test set; their images move, unrenamed, from
`train_images/` to `test_images/`. No public table lists the test images: the folder and the
sample submission do.

Grading follows MLE-bench: micro F1 over the space-separated labels of each image
(`mle_gym.grading.metrics.tag_f1`). Its `MultiLabelBinarizer` knows only the labels found
in the answers, so a predicted label no test image carries is ignored rather than counted
as a false positive: padding a prediction with unknown words neither helps nor hurts, while
adding real labels lowers precision. A repeated label counts once; an empty cell is an
empty set.
"""

from __future__ import annotations

from pathlib import Path

from mle_gym.competitions.csv_io import read_csv
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
    """MLE-bench's split: 20% of the labelled photographs held out, seed 0."""
    original = read_csv(raw / "train.csv")
    train, answers = holdout(original, 0.2)

    answers.to_csv(private / "answers.csv", index=False)
    train.to_csv(public / "train.csv", index=False)
    answers.assign(labels="healthy").to_csv(public / "sample_submission.csv", index=False)

    for part, folder in ((train, "train_images"), (answers, "test_images")):
        place_images(raw / "train_images", public / folder, part["image"])


STATEMENT = """\
# Plant Pathology 2021 - FGVC8

Apple orchards lose yield to foliar diseases, and scouting for them by eye is slow. From
a photograph of an apple leaf, list every disease it shows, or say it is healthy. The
labels are `healthy`, `scab`, `rust`, `frog_eye_leaf_spot`, `powdery_mildew` and
`complex`; a leaf can carry several (e.g. `scab frog_eye_leaf_spot`). `complex` marks an
unhealthy leaf with too many diseases to tell apart visually, sometimes alongside some of
the diseases that can be identified.

## Data (read-only, in {data_dir})
- `train.csv`: one row per training photograph (about 14,900): `image` (its file name,
  e.g. `800113bb65efe69e.jpg`) and `labels` (its labels, separated by spaces).
- `train_images/<image>`: the training photographs (large colour JPEG files, typically
  4000x2672 pixels).
- `test_images/<image>`: the photographs to label (about 3,700).
- `sample_submission.csv`: a valid submission listing every test photograph (it predicts
  `healthy` for all).

## Metric
Micro-averaged F1 score: every (photograph, label) pair you predict that is true counts
as a true positive, every other predicted pair as a false positive, and every true pair
you miss as a false negative; F1 = 2 TP / (2 TP + FP + FN), pooled over all photographs.
Only labels that occur in the test answers count: any other word you predict is ignored.
Higher is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per file in
`test_images/`, its labels separated by single spaces:

```
image,labels
85f8cb619c66b863.jpg,healthy
ad8770db05586b59.jpg,scab frog_eye_leaf_spot
```

Order and repeats within a row do not matter; an empty cell predicts no label. Put your
code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="plant-pathology-2021-fgvc8",
    name="Plant Pathology 2021 - FGVC8",
    split="medium",
    metric="micro_f1_tags",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="image",
        columns=(Column("labels", "text"),),
        answers_file="answers.csv",
    ),
    raw_files=("train.csv", "train_images/*.jpg"),
    prepare=prepare,
    num_teams=626,
    thresholds=Thresholds(gold=0.8612, silver=0.85305, bronze=0.83508, median=0.754445),
    sample_score=0.24507,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "fc2941d5d4aedafb25332b57342688bf",
            "train.csv": "0c4ca06e59e35f1e00f55aa79a5dadc5",
        },
        private={"answers.csv": "cfe891cbe7e6b58e77919acb517125ea"},
    ),
)
