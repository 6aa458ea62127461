"""Plant Seedlings Classification: which of 12 species a photograph of a seedling shows.

Kaggle gives no labels table: its training photographs are filed in one folder per species.
MLE-bench lists them (folders, then files, each in sorted order; `.png` only), holds out 14%
of that list as the test set and keeps the folder layout for the rest. Its public side has
no labels table either: the training folders are the labels. Test photographs are fresh
copies in name order (a link's inode would tell the species folder they came from).

Grading follows MLE-bench: scikit-learn's micro F1 over the species names (equal to
accuracy, one species per row; `mle_gym.grading.metrics.label_f1`). A name that is not one
of the 12 species is a wrong answer, and so is an empty or missing cell (MLE-bench's
scikit-learn call scores a NaN among the names as wrong).
"""

from __future__ import annotations

import os
from pathlib import Path

from mle_gym.competitions.dev_ids import files_in
from mle_gym.competitions.held_out_images import place_images
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


def labelled_files(folder: Path) -> pd.DataFrame:
    """(file, species) of every `.png` under `folder/<species>/`, in MLE-bench's order."""
    rows = [
        (name, species)
        for species in sorted(os.listdir(folder))
        if (folder / species).is_dir()
        for name in sorted(os.listdir(folder / species))
        if name.endswith(".png")
    ]
    return pd.DataFrame(rows, columns=["file", "species"])


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split: 14% of the labelled photographs held out, seed 0."""
    source = raw / "train"
    train, test = holdout(labelled_files(source), 0.14)

    test.to_csv(private / "answers.csv", index=False)
    test.assign(species="Sugar beet").to_csv(public / "sample_submission.csv", index=False)

    place_images(source, public / "train", train["file"], train["species"], keep_labels=True)
    place_images(source, public / "test", test["file"], test["species"], fresh=True)


STATEMENT = """\
# Plant Seedlings Classification

Telling a crop seedling from a weed early saves yield and herbicide. From a photograph of
a young plant, taken from above on a soil background (the Aarhus University plant
seedlings dataset), tell which of 12 species it is: `Black-grass`, `Charlock`, `Cleavers`,
`Common Chickweed`, `Common wheat`, `Fat Hen`, `Loose Silky-bent`, `Maize`,
`Scentless Mayweed`, `Shepherds Purse`, `Small-flowered Cranesbill` or `Sugar beet`.

## Data (read-only, in {data_dir})
- `train/<species>/<file>.png`: the training photographs (about 4,100), filed in one
  folder per species, named as above; the folder is the label (there is no labels table).
  Colour PNG images of varying size; names are like `0050f38b3.png`.
- `test/<file>.png`: the photographs to classify (about 660).
- `sample_submission.csv`: a valid submission listing every test photograph (it predicts
  `Sugar beet` for all).

## Metric
Micro-averaged F1 score over the species. With exactly one species predicted and one true
per photograph, this equals the share of photographs classified correctly. Higher is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per file in
`test/` (the `file` column holds the file name, with `.png`):

```
file,species
0021e90e4.png,Maize
003d61042.png,Sugar beet
```

Species names are compared exactly as written (case and spaces count); any other text is
scored as wrong, as is an empty cell. Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="plant-seedlings-classification",
    name="Plant Seedlings Classification",
    split="dev",
    metric="micro_f1_labels",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="file",
        columns=(Column("species", "text"),),
        answers_file="answers.csv",
    ),
    raw_files=("train/*/*.png",),
    prepare=prepare,
    num_teams=835,
    thresholds=Thresholds(gold=0.99244, silver=0.98614, bronze=0.98236, median=0.95591),
    sample_score=0.07057,
    statement=STATEMENT,
    checksums=Checksums(
        public={"sample_submission.csv": "e993f1a8a6b576a5401e027154a5cbac"},
        private={"answers.csv": "89d5dba3d48b22669f108f6a3bc10e0f"},
    ),
    dev_variant=DevVariant(train_ids=files_in("train", stem=False)),
)
