"""Vesuvius Challenge - Ink Detection: find the ink on carbonised papyrus from 3D x-ray scans.

Kaggle's test fragments were hidden (a code competition), so MLE-bench keeps training
fragments 1 and 2 for training and makes fragment 3, without its labels and infrared photo,
the single test fragment `a`. The fragments' TIFF stacks (tens of GB) are hard-linked into
place, copied only where a link is impossible; the answers are fragment 3's own
`inklabels_rle.csv` with its image size (read from the PNG header of `ir.png`).

Grading decisions: MLE-bench pairs submission and answer rows by position and only checks
the row count; here every test fragment must have exactly one row, matched by `Id`. Like
MLE-bench, no column beyond `Id` and `Predicted` is allowed. RLE strings are checked
before counting (see `rle`): MLE-bench silently clips runs past the image's end and reads
signs (`+5`) and an odd count of numbers; we refuse them with the reason.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path

from mle_gym.competitions.csv_io import read_csv
from mle_gym.competitions.dev_ids import dirs_in
from mle_gym.competitions.hardlink_helpers import place_files, place_tree
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.lazy import pd

TEST_FRAGMENT = "3"
#: Fragment 3's files that stay out of public/test/a: its labels and its infrared photo.
HIDDEN = ("inklabels.png", "inklabels_rle.csv", "ir.png")
#: Host-only `Id,fragment`: the training fragment each test fragment was.
TEST_FRAGMENTS = "test_fragments.csv"


def png_size(path: Path) -> tuple[int, int]:
    """(width, height) of a PNG, from its header chunk (the image is never decoded)."""
    with open(path, "rb") as handle:
        head = handle.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        raise ValueError(f"{path} is not a PNG file")
    width, height = struct.unpack(">II", head[16:24])
    return width, height


def _test_files(fragment: Path, dest: Path) -> Iterator[tuple[Path, Path]]:
    for path in sorted(fragment.rglob("*")):
        if path.is_file() and path.name not in HIDDEN:
            yield path, dest / path.relative_to(fragment)


def prepare(raw: Path, public: Path, private: Path) -> None:
    """Fragments 1 and 2 to public/train; fragment 3 to public/test/a without labels."""
    _split(raw, public, private, ("1", "2"), TEST_FRAGMENT)


def dev_prepare(folder: Path, public: Path, private: Path) -> None:
    """The same rule on the public fragments (`folder` holds the public files, train/ in
    Kaggle's layout): the last one, 2, becomes test fragment `a`, fragment 1 stays."""
    _split(folder, public, private, ("1",), "2")


def _split(raw: Path, public: Path, private: Path, train: tuple[str, ...], test: str) -> None:
    """The `train` fragments to public/train; fragment `test` to public/test/a without
    its labels, recorded on the host in private/test_fragments.csv."""
    for fragment in train:
        place_tree(raw / "train" / fragment, public / "train" / fragment)
    pd.DataFrame({"Id": ["a"], "fragment": [test]}).to_csv(private / TEST_FRAGMENTS, index=False)
    fragment = raw / "train" / test
    labels = read_csv(fragment / "inklabels_rle.csv")
    if len(labels) != 1:
        raise ValueError(f"{fragment}/inklabels_rle.csv holds {len(labels)} rows, not one")
    width, height = png_size(fragment / "ir.png")
    labels = labels.assign(width=width, height=height, Id="a")
    labels.to_csv(private / "inklabels_rle.csv", index=False)
    labels.drop(columns=["width", "height"]).to_csv(private / "gold_submission.csv", index=False)
    place_files(_test_files(fragment, public / "test" / "a"), "Vesuvius test fragment")
    sample = pd.DataFrame({"Id": ["a"], "Predicted": ["1 1 5 1"]})
    sample.to_csv(public / "sample_submission.csv", index=False)


def load_answers(private: Path) -> pd.DataFrame:
    """Fragment ids and ink masks, each mask carrying its image shape (see `rle_shapes`)."""
    from mle_gym.formats.rle import load_shaped_answers

    return load_shaped_answers(private / "inklabels_rle.csv", "Id", "Predicted")


def _test_fragments(private: Path) -> set[str]:
    """The training fragments a private folder's test fragments were."""
    if not (private / TEST_FRAGMENTS).is_file():
        raise FileNotFoundError(
            f"{private / TEST_FRAGMENTS} is missing: this split was prepared before its "
            "test fragment was recorded; prepare it again"
        )
    return set(read_csv(private / TEST_FRAGMENTS, dtype=str)["fragment"])


STATEMENT = """\
# Vesuvius Challenge - Ink Detection

The papyrus scrolls of Herculaneum were carbonised by the eruption of Mount Vesuvius in
79 AD. Their ink is nearly invisible, even on x-ray scans. Each fragment of papyrus was
scanned in 3D; your task is to mark, pixel by pixel, where the test fragment carries ink.

## Data (read-only, in {data_dir})
- `train/1/`, `train/2/`: two labelled fragments, each with
  - `surface_volume/00.tif` ... `64.tif`: 65 greyscale 16-bit slices of the x-ray volume
    around the papyrus surface, one TIFF per depth, each as large as the fragment's image
    (several thousand pixels per side);
  - `mask.png`: which pixels belong to the fragment (hold data);
  - `inklabels.png`: the ink labels (ink vs no ink), and `inklabels_rle.csv` the same
    labels as run-length encoding in the submission's format;
  - `ir.png`: the infrared photograph on which the ink labels were drawn.
- `test/a/`: the fragment to label, with `surface_volume/` and `mask.png` only.
- `sample_submission.csv`: a valid submission (a guess of two pixels).

The data folder is read-only and large: read the TIFF slices where they are (e.g. with
`tifffile` or Pillow), and write anything derived under `{code_dir}`.

## Metric
F0.5 score between your ink mask and the true ink mask of the test fragment, over its
pixels: (1 + 0.25) p r / (0.25 p + r), with p the precision and r the recall of your ink
pixels; precision counts more than recall. Higher is better.

## Submission
Write a CSV file to `{submission_path}` with exactly the columns `Id` and `Predicted` and
one row per folder in `test/`:

```
Id,Predicted
a,1 1 5 1
```

`Predicted` is the run-length encoding of your binary ink mask for that fragment:
space-separated pairs `start length`, with pixels numbered from 1 left to right, then top
to bottom (along each row first), starts increasing, runs not overlapping and inside the
image. Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="vesuvius-challenge-ink-detection",
    name="Vesuvius Challenge - Ink Detection",
    split="high",
    metric="vesuvius_f05",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="Id",
        columns=(Column("Predicted", "text"),),
        answers_file="inklabels_rle.csv",
        load_answers=load_answers,
        allow_extra_columns=False,
    ),
    raw_files=(
        "train/1/surface_volume/*.tif",
        "train/2/surface_volume/*.tif",
        "train/3/surface_volume/*.tif",
        "train/3/inklabels_rle.csv",
        "train/3/ir.png",
    ),
    prepare=prepare,
    num_teams=1250,
    thresholds=Thresholds(gold=0.779927, silver=0.725248, bronze=0.660027, median=0.418442),
    sample_score=0.0,
    statement=STATEMENT,
    dev_variant=DevVariant(
        prepare=dev_prepare, train_ids=dirs_in("train"), test_ids=_test_fragments, seed=None
    ),
    checksums=Checksums(
        public={"sample_submission.csv": "034491951a7c40fbcac61ebe97ec4629"},
        private={
            "gold_submission.csv": "448955259fbb2d5399d4d6b0944b255d",
            "inklabels_rle.csv": "319de381a2477837da0ba44679c6227e",
        },
    ),
)
