"""TGS Salt Identification Challenge: segment salt in 101x101 seismic images, graded by
mean precision over IoU thresholds on run-length-encoded masks.

MLE-bench's split: a quarter of Kaggle's 4,000 labelled images (train_test_split,
random_state=0) becomes the test set. Kaggle's own test images have no masks and are left
out, as are their depths.

Grading decisions (MLE-bench's grader is fragile here):
- every test id exactly once, only the `id` and `rle_mask` columns (as MLE-bench);
- each RLE string is checked before decoding (integers in pairs, starts >= 1, lengths
  >= 1, inside the 10,201 pixels, starts increasing, runs disjoint) and refused with the
  reason. MLE-bench silently clips runs past the image's end and crashes (instead of
  refusing) on non-integers or an odd count of numbers;
- MLE-bench's grader calls the removed `DataFrame.applymap` and no longer runs on current
  pandas; we compute the score it computed under the pandas it was written for, including
  its histogram quirk for empty predictions (see `salt_iou_precision`).
"""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path, PurePosixPath

from mle_gym.competitions.dev_rules import public_as_raw
from mle_gym.competitions.holdout import holdout
from mle_gym.competitions.prepare_progress import Progress
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.lazy import pd

_ROOT = "competition_data"


def _place_images(archive: zipfile.ZipFile, train_ids: set[str], public: Path) -> None:
    """Train images with their masks, and test images without, straight out of the zip."""
    folder = PurePosixPath(_ROOT, "train", "images")
    with Progress("TGS salt images", None) as progress:
        for name in archive.namelist():
            path = PurePosixPath(name)
            if path.parent != folder or path.suffix != ".png":
                continue
            targets = [("test", "images")]
            if path.stem in train_ids:
                targets = [("train", "images"), ("train", "masks")]
            for split, kind in targets:
                source = f"{_ROOT}/train/{kind}/{path.name}"
                dest = public / split / kind / path.name
                with archive.open(source) as src, dest.open("wb") as out:
                    shutil.copyfileobj(src, out)
                progress.add(dest.stat().st_size)


def prepare(raw: Path, public: Path, private: Path) -> None:
    with zipfile.ZipFile(raw / f"{_ROOT}.zip") as archive:
        with archive.open(f"{_ROOT}/train.csv") as handle:
            labelled = pd.read_csv(handle).fillna("")
        train, test = holdout(labelled, 0.25)
        train.sort_values(by="id").to_csv(public / "train.csv", index=False)
        test.sort_values(by="id").to_csv(private / "test.csv", index=False)
        for split, kind in (("train", "images"), ("train", "masks"), ("test", "images")):
            (public / split / kind).mkdir(parents=True, exist_ok=True)
        _place_images(archive, set(train["id"]), public)

    sample = test.drop(columns=["rle_mask"]).assign(rle_mask="1 1")
    sample.sort_values(by="id").to_csv(public / "sample_submission.csv", index=False)
    depths = pd.read_csv(raw / "depths.csv")
    depths = depths[depths["id"].isin(set(train["id"]))]
    depths.sort_values(by="id").to_csv(public / "depths.csv", index=False)


STATEMENT = """\
# TGS Salt Identification Challenge

Large deposits of oil and gas often sit next to bodies of salt below the surface, and
finding those salt bodies in seismic images still takes expert interpretation. Given a
small seismic image, mark every pixel that is salt.

## Data (read-only, in {data_dir})
- `train/images/<id>.png`: seismic images, 101x101 pixels, grayscale, named by a
  10-character hexadecimal `id`.
- `train/masks/<id>.png`: for each training image, its salt mask (same size; white where
  there is salt, black elsewhere). About four images in ten have no salt at all.
- `train.csv`: the training masks as run-length encodings. Columns `id` and `rle_mask`
  (empty when the image has no salt).
- `depths.csv`: the depth, `z` in feet, at which each training image was taken (columns
  `id`, `z`). Test images have no depth.
- `test/images/<id>.png`: the images to segment.
- `sample_submission.csv`: a valid submission listing every test image (it predicts a
  single salt pixel, `1 1`, everywhere).

## Metric
For each test image, the intersection over union (IoU) of your salt pixels and the true
salt pixels is compared with the thresholds 0.5, 0.55, ..., 0.95; the image scores the
fraction of thresholds its IoU strictly exceeds. An image with no salt scores 1 if you
predict no salt and 0 otherwise. The score is the mean over test images; higher is better.
(As in the benchmark this task comes from, an empty prediction for an image that has salt
is given the IoU "salt pixels / 10,201".)

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per test image,
and only these two columns:

```
id,rle_mask
003c477d7c,
0108518d1e,1 50 102 50 5000 200
```

`rle_mask` is the mask in run-length encoding: pairs `start length` separated by spaces,
meaning pixels `start`, `start+1`, ..., `start+length-1`. Pixels are numbered from 1,
top to bottom down each column, then left to right (pixel 1 is the top-left, pixel 2 the
one below it, pixel 102 the top of the second column). Starts must be increasing, runs
must not overlap, and every run must lie inside the 10,201 pixels; an empty `rle_mask`
means no salt. Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="tgs-salt-identification-challenge",
    name="TGS Salt Identification Challenge",
    split="medium",
    metric="salt_iou_precision",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="id",
        columns=(Column("rle_mask", "text"),),
        allow_extra_columns=False,
    ),
    raw_files=("competition_data.zip", "depths.csv"),
    prepare=prepare,
    num_teams=3219,
    thresholds=Thresholds(gold=0.89097, silver=0.87163, bronze=0.85918, median=0.81665),
    sample_score=0.0,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "depths.csv": "aa56896090e86d7b42dbe036921d11bc",
            "sample_submission.csv": "e94197284c1c392e79d539b89158cf4a",
            "train.csv": "cb31a738448596dfe36b1e3a67d656c8",
        },
        private={"test.csv": "eedcb00ab3595210c2663838578745c3"},
    ),
    dev_variant=DevVariant(
        prepare=public_as_raw(
            prepare,
            links={"depths.csv": "depths.csv"},
            zips={
                f"{_ROOT}.zip": {
                    f"{_ROOT}/train.csv": "train.csv",
                    f"{_ROOT}/train/images": "train/images",
                    f"{_ROOT}/train/masks": "train/masks",
                }
            },
        )
    ),
)
