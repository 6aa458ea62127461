"""VinBigData Chest X-ray Abnormalities Detection: locate and classify 14 findings.

Kaggle's test labels were never released, so MLE-bench holds out 10% of the 15,000
labelled images (`train_test_split` over the unique image ids, `random_state=0`). Kaggle's
train labels hold every radiologist's boxes (three readers per image); Kaggle scored its
test set against one consensus box per finding, so MLE-bench keeps, per test image and
class, the first non-empty value of each column (pandas `groupby(...).first()`), gives
"No finding" rows (class 14) the box `0 0 1 1`, and writes them as `answers.csv` and as a
gold submission, which is what we grade against. The DICOM images (about 200 GB) are
placed by hard link, never read.

Grading: COCO mAP at IoU 0.4 (`mle_gym.grading.metrics.vinbigdata_map`), with MLE-bench's
corner-box quirk kept (its medal thresholds were set with it; see docs/fidelity.md).
Deviations: a row for every test image exactly once (MLE-bench only compares the id sets),
and a box with `x_max < x_min` or `y_max < y_min`, non-finite numbers or an empty cell are
refused with the reason. MLE-bench scores inverted boxes as hits that can never miss (a
free-lunch exploit) and fails on empty cells. Predicted boxes are numbered from 1, not
from 0 in row order as MLE-bench numbers them (pycocotools reads id 0 as "unmatched"), so
the score does not depend on row order.
"""

from __future__ import annotations

from pathlib import Path

from mle_gym.competitions.csv_io import read_csv
from mle_gym.competitions.hardlink_helpers import place_files
from mle_gym.competitions.holdout import holdout
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.lazy import np, pd

NO_FINDING = 14
#: The prediction of MLE-bench's sample submission: "No finding" with a one-pixel box.
SAMPLE_PREDICTION = "14 1 0 0 1 1"


def consensus(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per (image, class) as MLE-bench makes it (see the module docstring)."""
    answers = rows.groupby(by=["image_id", "class_id"]).first().reset_index()
    answers = answers.fillna(0)
    answers.loc[answers["class_id"] == NO_FINDING, ["x_max", "y_max"]] = 1.0
    return answers


def gold_submission(answers: pd.DataFrame) -> pd.DataFrame:
    """Each image's boxes as `class 1.0 x_min y_min x_max y_max` groups, joined by spaces."""
    groups = answers["class_id"].map(str) + " 1.0"
    for corner in ("x_min", "y_min", "x_max", "y_max"):
        groups = groups + " " + answers[corner].map(str)
    strings = groups.groupby(answers["image_id"]).agg(" ".join)
    return strings.rename("PredictionString").reset_index()


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split (see the module docstring), DICOM files placed by hard link."""
    labels = read_csv(raw / "train.csv")
    images = np.asarray(labels["image_id"].unique(), dtype=object)
    train_ids, test_ids = holdout(images, 0.1)

    labels[labels["image_id"].isin(train_ids)].to_csv(public / "train.csv", index=False)
    sample = pd.DataFrame({"image_id": test_ids, "PredictionString": SAMPLE_PREDICTION})
    sample.to_csv(public / "sample_submission.csv", index=False)
    answers = consensus(labels[labels["image_id"].isin(test_ids)])
    answers.to_csv(private / "answers.csv", index=False)
    gold_submission(answers).to_csv(private / "gold_submission.csv", index=False)

    for ids, folder in ((train_ids, "train"), (test_ids, "test")):
        (public / folder).mkdir(exist_ok=True)
        pairs = ((raw / "train" / f"{i}.dicom", public / folder / f"{i}.dicom") for i in ids)
        place_files(pairs, f"{folder} DICOM images", len(ids))


STATEMENT = """\
# VinBigData Chest X-ray Abnormalities Detection

Find and classify thoracic abnormalities on chest radiographs. Each finding is one of 14
classes and is located by a box; an image with no finding is labelled class 14.

| class_id | class_name | class_id | class_name |
| --- | --- | --- | --- |
| 0 | Aortic enlargement | 7 | Lung Opacity |
| 1 | Atelectasis | 8 | Nodule/Mass |
| 2 | Calcification | 9 | Other lesion |
| 3 | Cardiomegaly | 10 | Pleural effusion |
| 4 | Consolidation | 11 | Pleural thickening |
| 5 | ILD | 12 | Pneumothorax |
| 6 | Infiltration | 13 | Pulmonary fibrosis |
| | | 14 | No finding |

## Data (read-only, in {data_dir})
- `train.csv`: one row per box drawn by one radiologist on a training image (about 61,000
  rows for 13,500 images). Columns: `image_id`, `class_name`, `class_id`, `rad_id` (the
  radiologist, R1 to R17), `x_min`, `y_min`, `x_max`, `y_max` (pixel corners in the
  original image). Each image was read by three radiologists, so a finding usually has up
  to three boxes that disagree a little; "No finding" rows (class 14) have empty boxes.
- `train/<image_id>.dicom`: the training radiographs, grey-scale DICOM files a few
  thousand pixels a side (read them with e.g. `pydicom`, and mind the
  `PhotometricInterpretation` tag: some images are stored inverted).
- `test/<image_id>.dicom`: the 1,500 images to annotate, drawn from the same labelled set.
- `sample_submission.csv`: a valid submission that predicts "No finding" everywhere.

## Metric
Mean average precision at IoU 0.4, computed by pycocotools' COCOeval as MLE-bench
computes it: for each class, predictions over all images are ranked by confidence and a
prediction is a hit when it overlaps an unmatched answer box of its class with IoU of at
least 0.4; the average precision is interpolated at 101 recall points; the score is the
mean over the classes present in the test answers (class 14 included). Only the 100
most confident predictions per image and class count. The test answers hold one box per
image and class (the first radiologist's, not a fused box), and "No finding" is the box
`0 0 1 1`.

Note the grader's box convention: the four numbers are handed to COCO, which reads them
as `x, y, width, height`. Both answers and predictions are read that way, so write your
boxes as corners, exactly as in `train.csv`, and they are compared consistently. Higher
is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per test image:
`image_id` and `PredictionString`, a list of `class_id confidence x_min y_min x_max y_max`
groups separated by single spaces (write `14 1 0 0 1 1` for an image without findings;
you may add it beside other boxes too):

```
image_id,PredictionString
004f33259ee4aef671c2b95d54e4be68,14 1 0 0 1 1
008bdde2af2462e86fd373a445d0f4cd,0 0.9 691 1375 1653 1831 3 0.8 900 1700 1900 2000
```

Every number must be finite, every box must have `x_min <= x_max` and `y_min <= y_max`,
and a cell may not be empty. Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    extras=("detection",),
    id="vinbigdata-chest-xray-abnormalities-detection",
    name="VinBigData Chest X-ray Abnormalities Detection",
    split="high",
    metric="vinbigdata_map",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="image_id",
        columns=(Column("PredictionString", "text"),),
        answers_file="gold_submission.csv",
    ),
    raw_files=("train.csv", "train/*.dicom"),
    prepare=prepare,
    num_teams=1275,
    thresholds=Thresholds(gold=0.289, silver=0.257, bronze=0.243, median=0.223),
    sample_score=0.0475,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "b72a880d1f2d14c9398498e06bc0cc10",
            "train.csv": "f87c05d09de910f075b198dbbe831874",
        },
        private={
            "answers.csv": "7f52e6634e15cf925fd73049d4f7cd91",
            "gold_submission.csv": "c3dc4669e63958e16c6b76e0caa7cbf1",
        },
    ),
)
