"""Histopathologic Cancer Detection: find metastatic tissue in lymph node scan patches."""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path

from mle_gym.competitions.dev_ids import ids_in
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.lazy import pd, train_test_split


def _copy_images(raw: Path, ids: Iterable[str], folder: Path) -> None:
    folder.mkdir()
    for image_id in ids:
        shutil.copyfile(raw / "train" / f"{image_id}.tif", folder / f"{image_id}.tif")


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split: a hidden test set as large, relatively, as Kaggle's own.

    Kaggle's test images are only counted, to set the share of labelled images held out;
    both halves keep the order of train_labels.csv.
    """
    original = pd.read_csv(raw / "train_labels.csv")
    kaggle_test_size = sum(1 for _ in (raw / "test").glob("*.tif"))
    share = kaggle_test_size / (len(original) + kaggle_test_size)
    train_ids, test_ids = train_test_split(original["id"], test_size=share, random_state=0)
    train = original[original["id"].isin(train_ids)]
    test = original[original["id"].isin(test_ids)]

    _copy_images(raw, train_ids, public / "train")
    _copy_images(raw, test_ids, public / "test")

    sample = test.copy()
    sample["label"] = 0
    train.to_csv(public / "train_labels.csv", index=False)
    test.to_csv(private / "answers.csv", index=False)
    sample.to_csv(public / "sample_submission.csv", index=False)


STATEMENT = """\
# Histopathologic Cancer Detection

Detect metastatic cancer in small image patches cut from digital pathology scans of
lymph node sections (a de-duplicated version of the PatchCamelyon benchmark). A patch is
positive when its central 32x32 pixel region contains at least one pixel of tumour
tissue; tumour in the outer part of the patch does not count, which is there only to give
context. Predict, for each test patch, the probability that it is positive.

## Data (read-only, in {data_dir})
- `train_labels.csv`: columns `id` (the patch's name, 40 hexadecimal digits) and `label`
  (`1` positive, `0` negative).
- `train/<id>.tif`: the training patches, 96x96 pixel RGB TIFF images.
- `test/<id>.tif`: the patches to predict, in the same form.
- `sample_submission.csv`: a valid submission listing every test patch (it predicts `0`
  everywhere).

## Metric
Area under the ROC curve between your predicted probabilities and the true labels.
Higher is better; only the ranking of your predictions matters.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per image in
`test/` (the ids are the file names without `.tif`):

```
id,label
0b2ea2a822ad23fdb1b5dd26653da899fbd2c0d5,0.12
95596b92e5066c5c52466c90b69ff089b39f2737,0.87
```

`label` must be a probability between 0 and 1. Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="histopathologic-cancer-detection",
    name="Histopathologic Cancer Detection",
    split="lite",
    metric="roc_auc",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="id",
        columns=(Column("label", "probability"),),
        answers_file="answers.csv",
    ),
    raw_files=("train_labels.csv", "train/*.tif", "test/*.tif"),
    prepare=prepare,
    num_teams=1149,
    thresholds=Thresholds(gold=0.9835, silver=0.9798, bronze=0.9738, median=0.9477),
    sample_score=0.5,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "8016b8be0087d487ff38ac46f646a01d",
            "train_labels.csv": "806d8b128caeeaf4d0091bd6034cd0fb",
        },
        private={"answers.csv": "949d1acc553f3a04b89262f6e24e9fc7"},
    ),
    dev_variant=DevVariant(train_ids=ids_in("train_labels.csv", "id")),
)
