"""RANZCR CLiP: detect and judge the position of tubes and catheters on chest x-rays."""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path

from mle_gym.competitions.csv_io import read_csv
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.lazy import train_test_split

#: The columns MLE-bench grades (and writes in its sample submission). Kaggle's task had
#: two more, "CVC - Normal" and "Swan Ganz Catheter Present", which MLE-bench leaves out
#: (its known issue #30); its checksums were made with these nine.
GRADED = (
    "ETT - Abnormal",
    "ETT - Borderline",
    "ETT - Normal",
    "NGT - Abnormal",
    "NGT - Borderline",
    "NGT - Incompletely Imaged",
    "NGT - Normal",
    "CVC - Abnormal",
    "CVC - Borderline",
)


def _copy_images(raw: Path, ids: Iterable[str], folder: Path) -> None:
    folder.mkdir()
    for uid in ids:
        shutil.copyfile(raw / "train" / f"{uid}.jpg", folder / f"{uid}.jpg")


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split: 10% of Kaggle's labelled x-rays become the hidden test set."""
    original = read_csv(raw / "train.csv")
    train, test = train_test_split(original, test_size=0.1, random_state=0)
    annotations = read_csv(raw / "train_annotations.csv")
    in_train = annotations["StudyInstanceUID"].isin(train["StudyInstanceUID"])
    train_annotations = annotations[in_train]

    _copy_images(raw, train["StudyInstanceUID"], public / "train")
    _copy_images(raw, test["StudyInstanceUID"], public / "test")

    sample = test[["StudyInstanceUID", *GRADED]].copy()
    sample[list(GRADED)] = 0
    train.to_csv(public / "train.csv", index=False)
    train_annotations.to_csv(public / "train_annotations.csv", index=False)
    test.to_csv(private / "test.csv", index=False)
    sample.to_csv(public / "sample_submission.csv", index=False)


STATEMENT = """\
# RANZCR CLiP - Catheter and Line Position Challenge

Badly placed tubes and catheters can cause serious complications, and checking their
position on chest x-rays takes a radiologist's time. For each chest x-ray, predict the
probability of each finding about the endotracheal tube (ETT), the nasogastric tube (NGT)
and the central venous catheter (CVC): whether one is present and whether its position is
normal, borderline (would ideally be moved but mostly works) or abnormal (must be moved at
once). An image may show several devices, or none.

## Data (read-only, in {data_dir})
- `train.csv`: one row per training x-ray. Columns:
  - `StudyInstanceUID`: the image's id (a dotted DICOM identifier).
  - eleven 0/1 labels: `ETT - Abnormal`, `ETT - Borderline`, `ETT - Normal`,
    `NGT - Abnormal`, `NGT - Borderline`, `NGT - Incompletely Imaged`, `NGT - Normal`,
    `CVC - Abnormal`, `CVC - Borderline`, `CVC - Normal`, `Swan Ganz Catheter Present`.
  - `PatientID`: the patient; a patient may have several x-rays.
- `train_annotations.csv`: for some training images, the drawn line of a device:
  `StudyInstanceUID`, `label` (which finding) and `data` (a list of `[x, y]` pixel
  points along the device).
- `train/<StudyInstanceUID>.jpg`: the training x-rays (large grayscale JPEG files).
- `test/<StudyInstanceUID>.jpg`: the x-rays to predict.
- `sample_submission.csv`: a valid submission listing every test image (it predicts `0`
  everywhere).

## Metric
Mean column-wise ROC AUC over the nine columns of the sample submission: `ETT - Abnormal`,
`ETT - Borderline`, `ETT - Normal`, `NGT - Abnormal`, `NGT - Borderline`,
`NGT - Incompletely Imaged`, `NGT - Normal`, `CVC - Abnormal`, `CVC - Borderline`. The
area under the ROC curve is computed for each column separately, then averaged. Higher
is better. `CVC - Normal` and `Swan Ganz Catheter Present` are not graded; columns
beyond the nine are ignored.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per image in
`test/` (the ids are the file names without `.jpg`), with a probability for each of the
nine graded columns:

```
StudyInstanceUID,ETT - Abnormal,ETT - Borderline,ETT - Normal,NGT - Abnormal,\
NGT - Borderline,NGT - Incompletely Imaged,NGT - Normal,CVC - Abnormal,CVC - Borderline
1.2.826.0.1.3680043.8.498.10000428974990117276582711948006105617,\
0.01,0.02,0.9,0.0,0.0,0.1,0.8,0.02,0.3
```

Every class column must hold a probability between 0 and 1.
Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="ranzcr-clip-catheter-line-classification",
    name="RANZCR CLiP - Catheter and Line Position Challenge",
    split="lite",
    metric="roc_auc",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="StudyInstanceUID",
        columns=tuple(Column(name, "probability") for name in GRADED),
        answers_file="test.csv",
    ),
    raw_files=("train.csv", "train_annotations.csv", "train/*.jpg"),
    prepare=prepare,
    num_teams=1547,
    thresholds=Thresholds(gold=0.97357, silver=0.97152, bronze=0.9709, median=0.9675),
    sample_score=0.5,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "fade90160bce8a12138711b20fa89584",
            "train.csv": "620fa6759729f96539ed66ae860a84f9",
            "train_annotations.csv": "1929aab17c1206719cc7edf6d7e9e57b",
        },
        private={"test.csv": "e2959bb0ca0ca9fc983b02e01caf31fa"},
    ),
)
