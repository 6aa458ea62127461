"""RSNA 2022 Cervical Spine Fracture Detection: which of C1-C7 is fractured, per CT study.

Kaggle's test studies were never labelled, so MLE-bench splits the 2,019 labelled studies
itself, the other way round from most competitions: only round(10%) = 202 studies stay in
train and the other 1,817 become the test set. With `random.Random(0)` it first draws
round(10%) of the studies that have both bounding boxes and segmentations, then tops up the
segmented and the boxed studies to round(10%) of each subset, then fills train with other
studies (`_train_studies`; Python's `round`, which takes halves to the even neighbour).
Only the kept studies' boxes and segmentations are public. That also keeps answers out:
boxes outline fractures, so a test study's boxes would give its label away (a segmentation,
a mask of the vertebrae, says nothing about fractures; test ones are left out all the
same). The answers and the public test table have one row per (study, target),
`<study>_<target>`. The DICOM trees (about 340 GB) and NIfTI files are placed by hard link,
never read.

Grading: MLE-bench's weighted multi-label log loss
(`mle_gym.grading.metrics.weighted_multilabel_logloss`), equal to the last bit on every
submission it accepts. MLE-bench refuses probabilities outside [0, 1], missing values and
ids that differ from the answers' (and crashes on a wrong row count); we refuse the same
files, saying why (every test row exactly once, finite probabilities in [0, 1]). Clipping at
1e-15 bounds the loss of a confident mistake, so no value earns a NaN or infinite score.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

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
from mle_gym.lazy import pd

#: Share of each subset of studies kept as train.
TRAIN_SHARE = 0.1
STUDY = "StudyInstanceUID"


def _kept(population: list[str], share_of: int, already: int, rng: random.Random) -> list[str]:
    """`round(share_of * TRAIN_SHARE) - already` studies drawn from `population`."""
    return rng.sample(population, round(share_of * TRAIN_SHARE) - already)


class Kept(NamedTuple):
    """The studies kept as train: all of them, and those whose boxes or segmentation go too."""

    train: list[str]
    boxed: list[str]
    segmented: list[str]


def _train_studies(studies: list[str], boxed: list[str], segmented: list[str]) -> Kept:
    """The train studies, drawn as MLE-bench draws them.

    `studies` in train.csv order; `boxed` and `segmented` sorted and distinct.
    """
    rng = random.Random(0)
    segmented_set = set(segmented)
    both = [s for s in boxed if s in segmented_set]
    both_set = set(both)
    shared = _kept(both, len(both), 0, rng)
    segmented_only = [s for s in segmented if s not in both_set]
    more_segmented = _kept(segmented_only, len(segmented), len(shared), rng)
    boxed_only = [s for s in boxed if s not in both_set]
    more_boxed = _kept(boxed_only, len(boxed), len(shared), rng)
    train = shared + more_segmented + more_boxed
    taken = set(train)
    train += _kept([s for s in studies if s not in taken], len(studies), len(train), rng)
    return Kept(train, shared + more_boxed, shared + more_segmented)


def _tree_pairs(raw: Path, dest: Path, studies: Iterable[str]) -> Iterator[tuple[Path, Path]]:
    """(raw file, placed file) for every file of each study's slice folder."""
    for study in studies:
        source = raw / "train_images" / study
        if not source.is_dir():
            raise FileNotFoundError(f"no slice folder {source} for the study {study}")
        for path in sorted(source.rglob("*")):
            if path.is_file():
                yield path, dest / study / path.relative_to(source)


def _write_tables(
    labels: pd.DataFrame, boxes: pd.DataFrame, public: Path, private: Path, kept: Kept
) -> None:
    """Train, boxes, answers (one row per study and target), public test and sample."""
    train_ids = set(kept.train)
    labels[labels[STUDY].isin(train_ids)].to_csv(public / "train.csv", index=False)
    boxes[boxes[STUDY].isin(kept.boxed)].to_csv(public / "train_bounding_boxes.csv", index=False)
    test = labels[~labels[STUDY].isin(train_ids)]
    answers = test.melt(id_vars=STUDY, var_name="prediction_type", value_name="fractured")
    answers["row_id"] = answers[STUDY] + "_" + answers["prediction_type"]
    answers.to_csv(private / "answers.csv", index=False)
    answers[["row_id"]].assign(fractured=0.5).to_csv(public / "sample_submission.csv", index=False)
    answers.drop(columns="fractured").to_csv(public / "test.csv", index=False)


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split (see the module docstring); files placed by hard link."""
    labels = read_csv(raw / "train.csv")
    boxes = read_csv(raw / "train_bounding_boxes.csv")
    segmented = sorted(path.stem for path in (raw / "segmentations").glob("*.nii"))
    kept = _train_studies(list(labels[STUDY]), sorted(boxes[STUDY].unique()), segmented)
    _write_tables(labels, boxes, public, private, kept)

    (public / "segmentations").mkdir()
    segmentations = (
        (raw / "segmentations" / f"{s}.nii", public / "segmentations" / f"{s}.nii")
        for s in kept.segmented
    )
    place_files(segmentations, "train segmentations", len(kept.segmented))
    train_ids = set(kept.train)
    test = [s for s in labels[STUDY] if s not in train_ids]
    for folder, chosen in (("train_images", kept.train), ("test_images", test)):
        (public / folder).mkdir()
        place_files(_tree_pairs(raw, public / folder, chosen), f"{folder} slices")


STATEMENT = """\
# RSNA 2022 Cervical Spine Fracture Detection

Computed tomography (CT) scans of the neck, from twelve hospitals on six continents, read by
spine radiologists. For each test scan, predict the probability that each of the seven
cervical vertebrae (C1 at the top to C7) is fractured, and that any of them is
(`patient_overall`). Fractures of the skull base, thoracic spine, ribs and clavicles do not
count.

## Data (read-only, in {data_dir})
- `train.csv`: one row per training study (202 of them). Columns: `StudyInstanceUID` (the
  scan's id), `patient_overall` (1 if any cervical vertebra is fractured) and `C1` ... `C7`
  (1 if that vertebra is fractured), all 0 or 1.
- `train_images/<StudyInstanceUID>/<slice_number>.dcm`: each training scan as axial DICOM
  slices (hundreds per scan, slice thickness at most 1 mm, bone kernel). Some files
  are JPEG-compressed: reading their pixels with `pydicom` may need `pylibjpeg` or GDCM.
- `test_images/<StudyInstanceUID>/<slice_number>.dcm`: the test scans (1,817 of them), in
  the same form.
- `test.csv`: the rows to predict, eight per test study. Columns: `StudyInstanceUID`,
  `prediction_type` (`patient_overall` or `C1` ... `C7`) and `row_id`
  (`<StudyInstanceUID>_<prediction_type>`).
- `train_bounding_boxes.csv`: boxes drawn around fractures on single slices, for some of the
  fractured training studies (24 studies). Columns: `StudyInstanceUID`, `x`, `y`, `width`,
  `height` (pixels) and `slice_number` (the `.dcm` file the box is on).
- `segmentations/<StudyInstanceUID>.nii`: voxel masks of the vertebrae for 9 training studies,
  in NIfTI format (read with e.g. `nibabel`). Values 1-7 are C1-C7, 8-19 the thoracic
  vertebrae T1-T12 (not all present), 0 anything else. They are stored in another orientation
  than the DICOM slices: use the NIfTI header to align them, or they come out flipped along
  the slice axis and mirrored left to right.
- `sample_submission.csv`: a valid submission in the right format (0.5 for every row).

## Metric
Weighted multi-label log loss. Each prediction p (clipped to [1e-15, 1 - 1e-15]) has the loss
-log(p) when the answer is 1 and -log(1 - p) when it is 0, times a weight: for
`patient_overall` 14 when the answer is 1 and 7 when it is 0; for each vertebra 2 and 1. A
study's loss is the sum of its eight weighted losses divided by the sum of its eight weights;
the score is the mean over test studies. Lower is better (0.5 everywhere scores about 0.693).

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per `row_id` of
`test.csv`:

```
row_id,fractured
1.2.826.0.1.3680043.10005_patient_overall,0.2
1.2.826.0.1.3680043.10005_C1,0.05
1.2.826.0.1.3680043.10005_C2,0.1
```

`fractured` is the probability of a fracture, between 0 and 1. Put your code in
`{code_dir}`.
"""

COMPETITION = Competition(
    id="rsna-2022-cervical-spine-fracture-detection",
    name="RSNA 2022 Cervical Spine Fracture Detection",
    split="high",
    metric="weighted_multilabel_logloss",
    lower_is_better=True,
    submission=SubmissionFormat(
        id_column="row_id",
        columns=(Column("fractured", "probability"),),
        answers_file="answers.csv",
    ),
    raw_files=(
        "train.csv",
        "train_bounding_boxes.csv",
        "segmentations/*.nii",
        "train_images/*/*.dcm",
    ),
    prepare=prepare,
    num_teams=884,
    thresholds=Thresholds(gold=0.2767, silver=0.49, bronze=0.5212, median=0.5223),
    sample_score=0.69315,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "2690b6c1b8c2fbc8d090e8fb00c1d79f",
            "test.csv": "d5c91b7191186743a2aa74b904207931",
            "train.csv": "812aecfc08948d621decc684759e243a",
            "train_bounding_boxes.csv": "d74270bdb517e79f9f2ac6a0f90825fd",
        },
        private={"answers.csv": "9d13e08d12211a39b8c5d2c29a9e7e8f"},
    ),
    dev_variant=DevVariant(
        train_ids=ids_in("train.csv", "StudyInstanceUID"),
        test_ids=ids_in("answers.csv", "row_id", form=lambda row: row.split("_", 1)[0]),
    ),
)
