"""Bristol-Myers Squibb - Molecular Translation: the InChI string of a drawn molecule.

Kaggle kept its test labels, so MLE-bench holds out 20% of the ~2.4 million labelled
images (`train_test_split`, `random_state=0`) as the test set. Images stay in Kaggle's
three-level tree `<a>/<b>/<c>/<image_id>.png` (the id's first three characters) under
`train/` or `test/`; all of them are placed by hard link, streamed, with progress.

Grading: mean Levenshtein distance between the submitted and true InChI strings
(`mean_levenshtein_nan_as_text`, rapidfuzz's plain edit distance as python-Levenshtein's).
Every test id needs exactly one row, as MLE-bench requires (same length, same ids); extra
columns are ignored, as there. A cell pandas reads as missing (empty, `NA`, ...) is scored
as the text `nan`, as MLE-bench scores it under pandas 2 (under pandas 3 its grader fails on
such a cell; we keep the pandas-2 reading). One reading we do not copy: when every cell of
the InChI column is a number, pandas types the column as numbers and MLE-bench measures
their re-printed text (`1.50` as `1.5`); we measure the text as written. No InChI is a
number, so only a nonsense file can notice (see docs/fidelity.md).
"""

from __future__ import annotations

from pathlib import Path

from mle_gym.competitions.csv_io import read_csv
from mle_gym.competitions.dev_ids import ids_in
from mle_gym.competitions.hardlink_helpers import place_file, place_files
from mle_gym.competitions.holdout import holdout
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    SubmissionFormat,
    Thresholds,
)

#: The sample submission's guess for every image: water.
SAMPLE_INCHI = "InChI=1S/H2O/h1H2"
EXTRA_INCHIS = "extra_approved_InChIs.csv"


def image_path(image_id: str) -> Path:
    """Kaggle's place for an image: one folder level per each of the id's first 3 characters."""
    return Path(image_id[0], image_id[1], image_id[2], f"{image_id}.png")


def _place_images(ids: list[str], raw: Path, dest: Path) -> None:
    pairs = ((raw / "train" / image_path(i), dest / image_path(i)) for i in ids)
    place_files(pairs, f"{dest.name} images", len(ids))


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split (see the module docstring), images placed by hard link."""
    labels = read_csv(raw / "train_labels.csv")
    train, test = holdout(labels, 0.2)

    train.to_csv(public / "train_labels.csv", index=False)
    test.to_csv(private / "test.csv", index=False)
    test.assign(InChI=SAMPLE_INCHI).to_csv(public / "sample_submission.csv", index=False)
    place_file(raw / EXTRA_INCHIS, public / EXTRA_INCHIS)
    _place_images(train["image_id"].tolist(), raw, public / "train")
    _place_images(test["image_id"].tolist(), raw, public / "test")


STATEMENT = """\
# Bristol-Myers Squibb - Molecular Translation

Each image is a black-and-white drawing of one molecule's skeletal formula, rendered
synthetically and then degraded: drawings come at various resolutions, may be rotated and
carry speckle noise, like old scanned documents. Give the molecule's InChI (International
Chemical Identifier) string for every test image.

## Data (read-only, in {data_dir})
- `train/`: about 1.94 million training images, PNG, stored as
  `train/<a>/<b>/<c>/<image_id>.png` where `<a>`, `<b>`, `<c>` are the first three
  characters of the 12-character hexadecimal `image_id` (e.g.
  `train/0/0/0/000011a64c74.png`).
- `train_labels.csv`: the InChI of every training image. Columns `image_id` and `InChI`,
  e.g. `InChI=1S/C13H20OS/c1-9(2)8-15-13-6-5-10(3)7-12(13)11(4)14/h5-7,9,11,14H,8H2,1-4H3`:
  the `1S/` version prefix, the molecular formula, then layers each introduced by `/` and
  a letter (`c` connections between atoms, `h` hydrogens, and sometimes charge or
  stereochemistry layers).
- `test/`: about 485,000 test images in the same three-level layout.
- `extra_approved_InChIs.csv`: more valid InChI strings (column `InChI`) without images,
  which may serve as extra text for a language model of InChI.
- `sample_submission.csv`: a valid submission in the right format (it guesses water,
  `InChI=1S/H2O/h1H2`, for every image).

The test images were drawn from the same labelled set as the training images.

## Metric
The Levenshtein distance (number of single-character insertions, deletions and
substitutions) between your InChI string and the true one, averaged over the test
images. Lower is better; an exact string scores 0.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per test image
(its `image_id` is the file name without `.png`):

```
image_id,InChI
00000d2a601c,"InChI=1S/C10H14BrN5S/c1-6-13-14-10(17)16(6)15-5-8-3-4-9(11)7(2)12-8/h3-4,15H,5H2,1-2H3,(H,14,17)"
00001f7fc849,InChI=1S/H2O/h1H2
```

Quote an InChI that contains a comma (most do), as any CSV writer does. Put your code in
`{code_dir}`.
"""

COMPETITION = Competition(
    id="bms-molecular-translation",
    name="Bristol-Myers Squibb - Molecular Translation",
    split="high",
    metric="mean_levenshtein_nan_as_text",
    lower_is_better=True,
    submission=SubmissionFormat(
        id_column="image_id",
        columns=(Column("InChI", "text"),),
        answers_file="test.csv",
    ),
    raw_files=("train_labels.csv", "train/*/*/*/*.png", EXTRA_INCHIS),
    prepare=prepare,
    num_teams=875,
    thresholds=Thresholds(gold=0.62, silver=1.37, bronze=1.99, median=5.58),
    sample_score=109.59778,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            EXTRA_INCHIS: "24301ba135996bd369cc83740e01f8c8",
            "sample_submission.csv": "fb64d50adadf358d780b001dc14daa47",
            "train_labels.csv": "35513e9a1d7f42bfa97f93b0476abc4c",
        },
        private={"test.csv": "9d0cf13e5b604a31bb4dd77faaead8ae"},
    ),
    dev_variant=DevVariant(train_ids=ids_in("train_labels.csv", "image_id")),
)
