"""APTOS 2019 Blindness Detection: grade diabetic retinopathy (0-4) in retina photographs."""

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

GRADES = ("0", "1", "2", "3", "4")


def _copy_images(raw: Path, ids: Iterable[str], folder: Path) -> None:
    folder.mkdir()
    for image_id in ids:
        shutil.copyfile(raw / "train_images" / f"{image_id}.png", folder / f"{image_id}.png")


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split: 10% of Kaggle's labelled images become the hidden test set."""
    original = read_csv(raw / "train.csv")
    train, test = train_test_split(original, test_size=0.1, random_state=0)

    _copy_images(raw, train["id_code"], public / "train_images")
    _copy_images(raw, test["id_code"], public / "test_images")

    sample = test.copy()
    sample["diagnosis"] = 0
    train.to_csv(public / "train.csv", index=False)
    test.to_csv(private / "test.csv", index=False)
    test.drop(columns="diagnosis").to_csv(public / "test.csv", index=False)
    sample.to_csv(public / "sample_submission.csv", index=False)


STATEMENT = """\
# APTOS 2019 Blindness Detection

Diabetic retinopathy is the leading cause of blindness among working-age adults. Aravind
Eye Hospital in India screens patients in rural areas with fundus photography (pictures
of the back of the eye) and wants to grade them automatically. A clinician has rated
each photograph on this scale:

- `0`: no diabetic retinopathy
- `1`: mild
- `2`: moderate
- `3`: severe
- `4`: proliferative diabetic retinopathy

Predict the rating of each test photograph. The images come from several clinics and
cameras over a long period, so expect varied lighting, focus, exposure and artefacts,
and some noise in the labels.

## Data (read-only, in {data_dir})
- `train.csv`: columns `id_code` (the image's name, 12 hexadecimal digits) and
  `diagnosis` (the rating, 0 to 4).
- `train_images/<id_code>.png`: the training photographs (full-size colour PNG files).
- `test.csv`: column `id_code` only: the photographs to rate.
- `test_images/<id_code>.png`: the test photographs.
- `sample_submission.csv`: a valid submission listing every test image (it predicts `0`
  everywhere).

## Metric
Quadratic weighted kappa between your ratings and the clinician's: 1 is perfect
agreement, 0 is no better than chance, negative is worse than chance. A disagreement
costs the square of the distance between the two ratings, so predicting 4 for a 0 is
much worse than predicting 1. Higher is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per image in
`test.csv`:

```
id_code,diagnosis
0005cfc8afb6,0
003f0afdcd15,2
```

`diagnosis` must be one of the integers 0, 1, 2, 3, 4. Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="aptos2019-blindness-detection",
    name="APTOS 2019 Blindness Detection",
    split="lite",
    metric="quadratic_weighted_kappa",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="id_code",
        columns=(Column("diagnosis", "label", labels=GRADES, open_labels=True),),
        answers_file="test.csv",
    ),
    raw_files=("train.csv", "train_images/*.png"),
    prepare=prepare,
    num_teams=2929,
    thresholds=Thresholds(gold=0.930508, silver=0.919654, bronze=0.914492, median=0.888912),
    sample_score=0.0,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "4a80cd1603bdd3423b602b609cc074c2",
            "test.csv": "395258c0476fa058de79fa8691a12723",
            "train.csv": "1a1f11fbeb7f20afd334e28421825725",
        },
        private={"test.csv": "a5c28ffe71a45d1fadf4bdda3c52d957"},
    ),
)
