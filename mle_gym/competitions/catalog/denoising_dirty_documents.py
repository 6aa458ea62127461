"""Denoising Dirty Documents: clean scanned text images, graded by pixel-wise RMSE."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

from mle_gym.competitions.dev_ids import files_in, ids_in
from mle_gym.competitions.dev_rules import public_as_raw
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.lazy import np, pd, train_test_split


def pixel_table(image: Path) -> pd.DataFrame:
    """One row per pixel, row-major: id `<image>_<row>_<col>` (1-based), intensity in [0, 1]."""
    try:  # only preparing this competition needs Pillow, so it is an extra
        from PIL import Image
    except ImportError:
        raise ImportError(
            "preparing denoising-dirty-documents reads images: pip install 'mle-gym[images]'"
        ) from None
    values = np.asarray(Image.open(image).convert("L")) / 255.0
    rows, cols = values.shape
    ids = [f"{image.stem}_{r}_{c}" for r in range(1, rows + 1) for c in range(1, cols + 1)]
    return pd.DataFrame({"id": ids, "value": values.ravel()})


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split: 20% of Kaggle's noisy/clean training pairs become the test set.

    The noisy test images move to public/test; their clean versions leave public and
    become the pixel answers (the images themselves are not kept).
    """
    with zipfile.ZipFile(raw / "train.zip") as archive:
        archive.extractall(public)
    noisy = sorted((public / "train").glob("*.png"))
    _, test_images = train_test_split(noisy, test_size=0.2, random_state=0)
    test_names = {path.name for path in test_images}

    (public / "test").mkdir(exist_ok=True)
    for name in test_names:
        shutil.move(public / "train" / name, public / "test" / name)

    with zipfile.ZipFile(raw / "train_cleaned.zip") as archive:
        archive.extractall(public)
    cleaned = public / "train_cleaned"
    answers = pd.concat([pixel_table(cleaned / name) for name in sorted(test_names)])
    for name in test_names:
        (cleaned / name).unlink()
    answers.to_csv(private / "answers.csv", index=False)

    answers.assign(value=1).to_csv(public / "sampleSubmission.csv", index=False)


STATEMENT = """\
# Denoising Dirty Documents

Scanned pages of printed text have been soiled with synthetic noise: coffee stains,
faded patches, creases and wrinkles. Restore each noisy test image to its clean version,
predicting the grayscale intensity of every pixel.

## Data (read-only, in {data_dir})
- `train/`: noisy PNG images of text (grayscale), named `<image>.png` with a number as
  the image name.
- `train_cleaned/`: the clean version of each image in `train/`, same file name and size.
- `test/`: noisy PNG images to clean; their clean versions are hidden.
- `sampleSubmission.csv`: a valid submission in the right format (it predicts pure white,
  1, for every pixel).

Images differ in height (pages of two sizes); all pixels of every test image are scored.

## Metric
Root mean squared error between your intensities and the clean image's intensities,
over all pixels of all test images. Intensities run from 0 (black) to 1 (white), i.e. the
8-bit gray level divided by 255. Lower is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per pixel of
every image in `test/`. The id is `<image>_<row>_<col>`, with rows and columns counted
from 1 (row 1 is the top, column 1 the left edge):

```
id,value
1_1_1,1
1_1_2,0.9529411764705882
1_2_1,0.3
```

`value` must be a number. The ids in `sampleSubmission.csv` are exactly the ones expected.
Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    extras=("images",),
    id="denoising-dirty-documents",
    name="Denoising Dirty Documents",
    split="lite",
    metric="rmse",
    lower_is_better=True,
    submission=SubmissionFormat(
        id_column="id",
        columns=(Column("value", "number"),),
        answers_file="answers.csv",
        sample_file="sampleSubmission.csv",
    ),
    raw_files=("train.zip", "train_cleaned.zip"),
    prepare=prepare,
    num_teams=162,
    thresholds=Thresholds(gold=0.01794, silver=0.02609, bronze=0.04517, median=0.07325),
    sample_score=0.28616,
    statement=STATEMENT,
    checksums=Checksums(
        public={"sampleSubmission.csv": "b9ae2607ee98bd6b9903de500a53bf90"},
        private={"answers.csv": "5701cc4b5e1d59aedbb6aea4434d093a"},
    ),
    dev_variant=DevVariant(
        prepare=public_as_raw(
            prepare,
            zips={
                "train.zip": {"train": "train"},
                "train_cleaned.zip": {"train_cleaned": "train_cleaned"},
            },
        ),
        train_ids=files_in("train"),
        # one answer row per pixel: `<image>_<row>_<column>`
        test_ids=ids_in("answers.csv", "id", form=lambda pixel: pixel.split("_", 1)[0]),
    ),
)
