"""RSNA Screening Mammography Breast Cancer Detection: cancer probability per breast.

Kaggle's test labels were never released, so MLE-bench holds out 10% of the labelled
patients (`train_test_split` over `train.csv`'s distinct `patient_id`s in file order,
`random_state=42`); every image follows its patient. A prediction is per breast,
`prediction_id = <patient_id>_<laterality>`, and its answer is the `cancer` label of the
breast's images (one row per prediction id, sorted by id).

The public test.csv has exactly the columns of Kaggle's own test.csv: `site_id`,
`patient_id`, `image_id`, `laterality`, `view`, `age`, `implant`, `machine_id` and
`prediction_id`. Of train.csv's columns it drops `cancer` and the four that are known only
with (or after) the diagnosis: `biopsy` (a follow-up biopsy was done), `invasive` (the
cancer proved invasive), `BIRADS` (the screening read: 0 follow-up needed, 1 negative,
2 normal), `difficult_negative_case`, and also `density`, which Kaggle gave for train only.
None of the kept columns is derived from the label. The DICOM files (about 310 GB) are
placed by hard link, never read.

Grading: MLE-bench's probabilistic F1 (`mle_gym.grading.metrics.probabilistic_f1`), equal
to the last bit on every submission it accepts. Like MLE-bench, any real number is accepted
and clipped to [0, 1] (clipping gains nothing: above 1 counts as 1). We refuse non-finite
values with the reason (MLE-bench scores a NaN anywhere as 0 and clips an infinity), and
require every prediction id exactly once (MLE-bench: the same, by length and sorted ids).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from mle_gym.competitions.csv_io import read_csv
from mle_gym.competitions.dev_ids import ids_in
from mle_gym.competitions.hardlink_helpers import place_files
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.lazy import pd, train_test_split

#: Columns of Kaggle's test.csv, prediction_id (built here) last.
TEST_COLUMNS = [
    "site_id",
    "patient_id",
    "image_id",
    "laterality",
    "view",
    "age",
    "implant",
    "machine_id",
    "prediction_id",
]


def _image_pairs(raw: Path, dest: Path, images: pd.DataFrame) -> Iterator[tuple[Path, Path]]:
    """(raw file, placed file) of each row's `<patient_id>/<image_id>.dcm`."""
    for patient, image in zip(images["patient_id"], images["image_id"], strict=True):
        name = f"{patient}/{image}.dcm"
        yield raw / "train_images" / name, dest / name


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split (see the module docstring); images placed by hard link."""
    labels = read_csv(raw / "train.csv")
    _, test_patients = train_test_split(
        labels["patient_id"].unique(), test_size=0.1, random_state=42
    )
    is_test = labels["patient_id"].isin(set(test_patients))
    train = labels[~is_test]
    train.to_csv(public / "train.csv", index=False)

    test = labels.loc[is_test, TEST_COLUMNS[:-1]]
    test = test.assign(prediction_id=test["patient_id"].astype(str) + "_" + test["laterality"])
    test.to_csv(public / "test.csv", index=False)
    answers = (
        labels.loc[is_test, ["cancer"]]
        .assign(prediction_id=test["prediction_id"])
        .groupby("prediction_id")
        .first()
        .reset_index()
    )
    answers.to_csv(private / "answers.csv", index=False)
    answers.assign(cancer=train["cancer"].mean()).to_csv(
        public / "sample_submission.csv", index=False
    )

    for folder, images in (("train_images", train), ("test_images", test)):
        (public / folder).mkdir()
        place_files(_image_pairs(raw, public / folder, images), folder, len(images))


STATEMENT = """\
# RSNA Screening Mammography Breast Cancer Detection

Screening mammograms from two hospital sites (in Australia and the United States). For each
breast of each test patient, predict the probability that it has cancer. Positive cases are
rare: about 2% of the breasts.

## Data (read-only, in {data_dir})
- `train.csv`: one row per training image (about 49,000 images of about 10,700 patients).
  Columns:
  - `site_id`: the hospital (1 or 2); `machine_id`: the imaging device.
  - `patient_id`, `image_id`: ids of the patient and the image.
  - `laterality`: the breast, `L` or `R`; `view`: the orientation, mostly `CC`
    (craniocaudal) and `MLO` (mediolateral oblique), the two standard screening views.
  - `age`: the patient's age in years (sometimes missing).
  - `implant`: 1 if the patient has breast implants (site 1 reports it per patient only).
  - `density`: breast tissue density from `A` (least dense) to `D` (most dense).
  - `cancer`: the target, 1 if the breast proved to have a malignant cancer.
  - `biopsy`: 1 if a follow-up biopsy was done; `invasive`: 1 if the cancer proved invasive;
    `BIRADS`: the screening read, 0 follow-up needed, 1 negative, 2 normal (sometimes
    missing); `difficult_negative_case`: True if the case was unusually hard. These are known
    only for training images.
- `train_images/<patient_id>/<image_id>.dcm`: the training mammograms, DICOM files of a few
  thousand pixels a side; many are compressed as JPEG 2000 (reading their pixels with
  `pydicom` may need `pylibjpeg` with its openjpeg plugin, or GDCM). There are usually, not
  always, two views of each breast.
- `test.csv`: one row per test image (about 1,190 patients), with `site_id`, `patient_id`,
  `image_id`, `laterality`, `view`, `age`, `implant`, `machine_id` and `prediction_id`
  (`<patient_id>_<laterality>`: the images of one breast share it).
- `test_images/<patient_id>/<image_id>.dcm`: the test mammograms.
- `sample_submission.csv`: a valid submission in the right format (it predicts the training
  set's cancer rate for every breast).

## Metric
Probabilistic F1: predictions are clipped to [0, 1]; soft true positives are the sum of the
predictions for breasts with cancer, precision is that sum over the sum of all predictions,
recall that sum over the number of breasts with cancer, and the score is
2 * precision * recall / (precision + recall) (0 if nothing is predicted for a breast with
cancer). Confident, correct probabilities score best. Higher is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per
`prediction_id` of `test.csv`:

```
prediction_id,cancer
10008_L,0.01
10008_R,0.62
```

`cancer` is a number (clipped to [0, 1] when scored). Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="rsna-breast-cancer-detection",
    name="RSNA Screening Mammography Breast Cancer Detection",
    split="high",
    metric="probabilistic_f1",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="prediction_id",
        columns=(Column("cancer", "number"),),
        answers_file="answers.csv",
    ),
    raw_files=("train.csv", "train_images/*/*.dcm"),
    prepare=prepare,
    num_teams=1688,
    thresholds=Thresholds(gold=0.49, silver=0.43, bronze=0.41, median=0.28),
    sample_score=0.02212,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "66e5e72a439b76b1f38b105aeec770b8",
            "test.csv": "6116661d0f3457cc3d9655ba942a9916",
            "train.csv": "c61eac186ab4fd952f2783974e7b189d",
        },
        private={"answers.csv": "f6e2830725827a87b1b85de66b35c656"},
    ),
    dev_variant=DevVariant(train_ids=ids_in("train.csv", "patient_id", "laterality")),
)
