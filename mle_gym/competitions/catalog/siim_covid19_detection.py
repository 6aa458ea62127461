"""SIIM-FISABIO-RSNA COVID-19 Detection: classify chest X-ray studies, box the opacities.

Kaggle's test labels were never released, so MLE-bench holds out 10% of the labelled
studies (`train_test_split` over `train_study_level.csv`, `random_state=0`); each image
follows its study. The answers have one row per test study (its label, the first of the
four one-hot columns that is set, with the box `1 0 0 1 1`) and one per test image (its
`label` column from `train_image_level.csv`). The DICOM trees `<study>/<series>/<image>.dcm`
(about 120 GB) are placed by hard link, never read.

Grading: MLE-bench's own VOC-style mAP at IoU > 0.5 over the six labels
(`mle_gym.grading.metrics.siim_map`), identical on every submission it accepts; it is
independent of row order. Deviations (docs/fidelity.md): every test id exactly once (MLE-bench
only checks the length and the sorted ids, the same thing); non-finite numbers are refused
with the reason (MLE-bench crashes or scores NaN corners as order-dependent misses); an
empty cell means no predictions, as a cell of spaces does in MLE-bench (which crashes on
the empty one).
"""

from __future__ import annotations

from pathlib import Path

from mle_gym.competitions.case_folder_helpers import place_case_folders
from mle_gym.competitions.csv_io import read_csv
from mle_gym.competitions.dev_ids import ids_in, union
from mle_gym.competitions.holdout import holdout
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.lazy import pd

#: Study labels in the order of train_study_level.csv's one-hot columns.
STUDY_LABELS = ("negative", "typical", "indeterminate", "atypical")
#: Every box of a study row (the study task is a classification).
WHOLE = "1 0 0 1 1"


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split (see the module docstring), DICOM trees placed by hard link."""
    studies = read_csv(raw / "train_study_level.csv")
    train_studies, test_studies = holdout(studies, 0.1)
    train_studies = train_studies.sort_values(by="id")
    test_studies = test_studies.sort_values(by="id")
    train_studies.to_csv(public / "train_study_level.csv", index=False)

    images = read_csv(raw / "train_image_level.csv")
    study_of_image = images["StudyInstanceUID"] + "_study"
    train_images = images[study_of_image.isin(train_studies["id"])].sort_values(by="id")
    test_images = images[study_of_image.isin(test_studies["id"])].sort_values(by="id")
    train_images.to_csv(public / "train_image_level.csv", index=False)

    for folder, chosen in (("train", train_studies), ("test", test_studies)):
        studies = chosen["id"].str.removesuffix("_study")
        place_case_folders(raw / "train", public / folder, studies, f"{folder} studies")

    labels = test_studies.iloc[:, 1:5].to_numpy().argmax(axis=1)
    study_answers = [f"{STUDY_LABELS[i]} {WHOLE}" for i in labels]
    ids = [*test_studies["id"], *test_images["id"]]
    answers = pd.DataFrame({"id": ids, "PredictionString": [*study_answers, *test_images["label"]]})
    answers.to_csv(private / "test.csv", index=False)
    guesses = [f"negative {WHOLE}"] * len(test_studies) + [f"none {WHOLE}"] * len(test_images)
    pd.DataFrame({"id": ids, "PredictionString": guesses}).to_csv(
        public / "sample_submission.csv", index=False
    )


STATEMENT = """\
# SIIM-FISABIO-RSNA COVID-19 Detection

Chest radiographs of patients tested for COVID-19. Two tasks share one submission:
classify each study (a patient's examination, one or more radiographs) into one of four
appearances of COVID-19 pneumonia, and draw boxes around the lung opacities of each image.

## Data (read-only, in {data_dir})
- `train_study_level.csv`: one row per training study (about 5,450). Columns: `id`
  (`<StudyInstanceUID>_study`) and four one-hot columns `Negative for Pneumonia`,
  `Typical Appearance`, `Indeterminate Appearance`, `Atypical Appearance`.
- `train_image_level.csv`: one row per training image (about 5,700). Columns: `id`
  (`<image id>_image`), `boxes` (the opacity boxes as a list of `x`, `y`, `width`,
  `height` dicts; empty without opacity), `label` (the same boxes as `opacity 1 x_min
  y_min x_max y_max` groups, or `none 1 0 0 1 1` for an image without opacity) and
  `StudyInstanceUID`.
- `train/<study>/<series>/<image>.dcm`: the training radiographs, DICOM files of a few
  thousand pixels a side (read them with e.g. `pydicom`; mind `PhotometricInterpretation`,
  some are stored inverted). Image ids are the file names without `.dcm`.
- `test/<study>/<series>/<image>.dcm`: the test studies (about 600, with about 630 images),
  drawn from the same labelled set.
- `sample_submission.csv`: a valid submission listing every test study and image id
  (`negative` for every study, `none` for every image).

## Metric
Mean average precision at IoU > 0.5 over six classes, each weighted equally: the study
labels `negative`, `typical`, `indeterminate`, `atypical` and the image labels `none`,
`opacity` (only classes present in the test answers count). For a class, within each row,
predictions of the class are taken by confidence and each claims the not yet claimed answer
box of the class with the highest IoU above 0.5 (a hit) or is a false positive; each answer
box left unclaimed counts as a positive with confidence 0, and a row with neither
predictions nor answers of the class adds a negative with confidence 0. The class's AP is
scikit-learn's `average_precision_score` over all these (label, confidence) pairs; the score
is the mean over classes. Study answers use the box `0 0 1 1`, so a study label always
matches its answer box when predicted with that box. Higher is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per test study and
per test image: `id` (`<study>_study` or `<image>_image`) and `PredictionString`, groups of
`label confidence x_min y_min x_max y_max` separated by spaces. Predict several study labels
with their confidences; for images, `none confidence 0 0 1 1` and/or opacity boxes:

```
id,PredictionString
00086460a852_study,negative 0.6 0 0 1 1 typical 0.3 0 0 1 1 atypical 0.1 0 0 1 1
000a312787f2_image,opacity 0.8 789 582 1815 2499 none 0.2 0 0 1 1
```

Numbers must be finite; an empty cell means no prediction for that row. Put your code in
`{code_dir}`.
"""

COMPETITION = Competition(
    id="siim-covid19-detection",
    name="SIIM-FISABIO-RSNA COVID-19 Detection",
    split="high",
    metric="siim_map",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="id",
        columns=(Column("PredictionString", "text"),),
        answers_file="test.csv",
    ),
    raw_files=("train_study_level.csv", "train_image_level.csv", "train/*/*/*.dcm"),
    prepare=prepare,
    num_teams=1305,
    thresholds=Thresholds(gold=0.623, silver=0.609, bronze=0.601, median=0.586),
    sample_score=0.24492,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "b9bdbd95e7b93f64f54d6f8f2530899c",
            "train_image_level.csv": "87c704caa46ea0df4a50eae97092bcc4",
            "train_study_level.csv": "6026bc39b28881d65a85b51e1e991160",
        },
        private={"test.csv": "5a5802f4cd7cec932bb824533cb5b57c"},
    ),
    dev_variant=DevVariant(
        train_ids=union(
            ids_in("train_image_level.csv", "id"), ids_in("train_study_level.csv", "id")
        )
    ),
)
