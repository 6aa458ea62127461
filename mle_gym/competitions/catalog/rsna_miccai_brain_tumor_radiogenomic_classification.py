"""RSNA-MICCAI Brain Tumor Radiogenomic Classification: MGMT promoter methylation from MRI.

MLE-bench holds out 10% of Kaggle's labelled cases (`train_test_split`, seed 0) and copies
each case's folder of DICOM series (`<BraTS21ID>/{FLAIR,T1w,T1wCE,T2w}/Image-<n>.dcm`,
well over 100 GB in all) to public/train or public/test. Here every file is hard-linked
(copied only where links are impossible) and none is opened. Kaggle's own unlabelled
`test/` cases are not used.

Grading matches MLE-bench's: scikit-learn's ROC AUC of the submitted probabilities, rows
matched by case id, every test case exactly once, probabilities within [0, 1]. Case ids are
written with five digits (`00012`); MLE-bench reads them as integers, so `12` is the same
case there, and here too (the answer key holds the integers; a warning says what was read).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from mle_gym.competitions.case_folder_helpers import place_case_folders
from mle_gym.competitions.dev_ids import ids_in
from mle_gym.competitions.holdout import holdout
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    SubmissionFormat,
    Thresholds,
)

if TYPE_CHECKING:
    import pandas as pd


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split: 10% of the labelled cases become the hidden test set."""
    from mle_gym.competitions.csv_io import read_csv

    labels = read_csv(raw / "train_labels.csv", dtype={"BraTS21ID": str, "MGMT_value": int})
    train, test = holdout(labels)

    place_case_folders(raw / "train", public / "train", train["BraTS21ID"], "train cases")
    place_case_folders(raw / "train", public / "test", test["BraTS21ID"], "test cases")
    train.to_csv(public / "train_labels.csv", index=False)
    test.to_csv(private / "test.csv", index=False)
    test.assign(MGMT_value=0.5).to_csv(public / "sample_submission.csv", index=False)


def load_answers(private: Path) -> pd.DataFrame:
    """The answers with case ids as the integers MLE-bench's grader reads them as."""
    import pandas as pd

    answers = pd.read_csv(private / "test.csv", dtype=str)
    return answers.assign(BraTS21ID=answers["BraTS21ID"].astype(int).astype(str))


STATEMENT = """\
# RSNA-MICCAI Brain Tumor Radiogenomic Classification

Glioblastoma is the most common and most aggressive malignant brain tumour in adults.
When the promoter of the MGMT gene in the tumour is methylated, the tumour tends to
respond better to chemotherapy; today this is found out by genetic analysis of a tissue
sample taken in surgery. From each patient's pre-operative MRI scans, predict the
probability that the tumour's MGMT promoter is methylated.

## Data (read-only, in {data_dir})
- `train_labels.csv`: `BraTS21ID,MGMT_value` for the training cases; the id is written
  with five digits (`00012`) and `MGMT_value` is 1 for a methylated promoter, 0 otherwise
  (roughly half are 1).
- `train/<BraTS21ID>/` and `test/<BraTS21ID>/`: one folder per case, holding four
  structural MRI scans in subfolders:
  - `FLAIR`: fluid-attenuated inversion recovery,
  - `T1w`: T1-weighted before contrast,
  - `T1wCE`: T1-weighted after gadolinium contrast,
  - `T2w`: T2-weighted.
  Each scan is a DICOM series, one file per slice (`Image-1.dcm`, `Image-2.dcm`, ...).
  Slice counts, orientations (axial, sagittal, coronal) and resolutions differ between
  cases and scans.
- `sample_submission.csv`: a valid submission listing every test case (it predicts 0.5).

The scans add up to well over 100 GB: read them a case at a time (pydicom reads DICOM).

## Metric
Area under the ROC curve between your probabilities and the true `MGMT_value`. Higher is
better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per test case:

```
BraTS21ID,MGMT_value
00001,0.62
00013,0.38
```

`MGMT_value` is a probability between 0 and 1. Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="rsna-miccai-brain-tumor-radiogenomic-classification",
    name="RSNA-MICCAI Brain Tumor Radiogenomic Classification",
    split="high",
    metric="roc_auc",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="BraTS21ID",
        columns=(Column("MGMT_value", "probability"),),
        answers_file="test.csv",
        load_answers=load_answers,
    ),
    raw_files=("train_labels.csv", "train"),
    prepare=prepare,
    num_teams=1556,
    thresholds=Thresholds(gold=0.60096, silver=0.5815, bronze=0.57449, median=0.52553),
    sample_score=0.5,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "893556127819a5b9428102dbbc0e0ed3",
            "train_labels.csv": "891e1c30bfe288e25c931759a746f254",
        },
        private={"test.csv": "9069c7813ae83cd1dc962efed1875074"},
    ),
    dev_variant=DevVariant(
        train_ids=ids_in("train_labels.csv", "BraTS21ID"),
        test_ids=ids_in("test.csv", "BraTS21ID"),
    ),
)
