"""HuBMAP - Hacking the Kidney: segment glomeruli in whole-slide kidney images (giant TIFFs),
graded by mean Dice of run-length-encoded masks.

MLE-bench's split: 3 of Kaggle's 15 labelled slides (train_test_split(train_size=12,
test_size=3, random_state=0)) become the test set. The slides (several GB in all) are
hard-linked, never read.

Deviations and grading decisions:
- MLE-bench copies each test slide's `<id>.json` into public/test; that file holds the
  slide's glomerulus polygons, i.e. the answer. We leave it out (the anatomical-structure
  JSON, cortex and medulla outlines, stays).
- every test id exactly once; each RLE checked before counting (integers in pairs, inside
  the slide, starts increasing, runs disjoint) and refused with the reason: MLE-bench
  silently clips runs past the slide's end. Dice is counted from runs, without the
  gigapixel masks MLE-bench decodes (same numbers).

The development variant is the same split of the 12 public slides, holding out the share
MLE-bench's 3 were of 15 (`scaled_count`: 2 slides, 10 for training).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

from mle_gym.competitions.dev_rules import scaled_count
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

INFO = "HuBMAP-20-dataset_information.csv"
#: Kaggle's labelled slides MLE-bench holds out.
TEST_SLIDES = 3


def _slide_files(
    raw: Path, public: Path, split: str, ids: list[str]
) -> Iterator[tuple[Path, Path]]:
    """Each slide's TIFF and anatomy JSON; its glomerulus JSON only for training slides."""
    for image_id in ids:
        names = [f"{image_id}.tiff", f"{image_id}-anatomical-structure.json"]
        if split == "train":
            names.insert(1, f"{image_id}.json")
        for name in names:
            yield raw / "train" / name, public / split / name


def prepare(raw: Path, public: Path, private: Path, *, held_out: int | None = None) -> None:
    """MLE-bench's split: `held_out` slides (3 of Kaggle's 15) for the test set."""
    labelled = pd.read_csv(raw / "train.csv")
    info = pd.read_csv(raw / INFO)
    test_size = TEST_SLIDES if held_out is None else held_out
    train, test = train_test_split(
        labelled, train_size=len(labelled) - test_size, test_size=test_size, random_state=0
    )
    info["id"] = info["image_file"].str.replace(".tiff", "", regex=False)
    info = info[info["id"].isin(labelled["id"])]
    test = test.merge(info[["id", "width_pixels", "height_pixels"]], on="id")
    info.drop(columns=["id"]).to_csv(public / INFO, index=False)
    train.to_csv(public / "train.csv", index=False)
    test.to_csv(private / "test.csv", index=False)

    sample = test[["id"]].assign(predicted="")
    sample.to_csv(public / "sample_submission.csv", index=False)
    sample.assign(predicted=test["encoding"]).to_csv(private / "gold_submission.csv", index=False)

    for split, ids in (("train", list(train["id"])), ("test", list(test["id"]))):
        (public / split).mkdir(exist_ok=True)
        place_files(_slide_files(raw, public, split, ids), f"HuBMAP {split} slides")
    shutil.copyfile(public / "sample_submission.csv", public / "test" / "sample_submission.csv")


def prepare_dev(raw: Path, public: Path, private: Path) -> None:
    """The development split of the public slides (see the module docstring)."""
    slides = len(pd.read_csv(raw / "train.csv", usecols=["id"]))
    prepare(raw, public, private, held_out=scaled_count(TEST_SLIDES, slides))


def load_answers(private: Path) -> pd.DataFrame:
    """Test ids and true masks, each carrying its slide's shape (see `hubmap_dice`)."""
    from mle_gym.formats.csv_text import read_as_text
    from mle_gym.formats.rle import with_shape

    answers = read_as_text(private / "test.csv")
    cells = map(with_shape, answers["height_pixels"], answers["width_pixels"], answers["encoding"])
    return answers[["id"]].assign(predicted=list(cells))


STATEMENT = """\
# HuBMAP - Hacking the Kidney

The Human BioMolecular Atlas Program maps the human body at the level of single cells. In
the kidney, the functional tissue units are glomeruli: small knots of capillaries that
filter the blood. Given a whole-slide microscope image of a kidney section (PAS-stained),
mark every pixel that belongs to a glomerulus.

## Data (read-only, in {data_dir})
- `train/<id>.tiff`: training slides, RGB TIFF images tens of thousands of pixels on a
  side (up to a few gigabytes decoded; some files store the channels in an extra leading
  axis). Reading them in tiles or downscaled (e.g. with `tifffile` or `rasterio`) keeps
  memory in check.
- `train/<id>.json`: the glomerulus outlines of the slide as polygons (GeoJSON-like list
  of features, coordinates in pixels).
- `train/<id>-anatomical-structure.json`: outlines of the slide's cortex and medulla.
- `train.csv`: the training masks as run-length encodings, columns `id` and `encoding`.
- `HuBMAP-20-dataset_information.csv`: one row per slide (training and test): file names,
  `width_pixels`, `height_pixels`, and donor data (patient number, race, ethnicity, sex,
  age, weight, height, BMI, laterality, percent cortex and medulla).
- `test/<id>.tiff` and `test/<id>-anatomical-structure.json`: the slides to segment.
- `sample_submission.csv` (also in `test/`): a valid submission listing every test slide
  with an empty mask.

## Metric
For each test slide, the Dice coefficient 2 |X ∩ Y| / (|X| + |Y|) between your predicted
pixels X and the true glomerulus pixels Y (1 when both are empty). The score is the mean
over test slides; higher is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per test slide:

```
id,predicted
aaa6a05cc,1 3 58010 7 116020 9
```

`predicted` is the slide's mask in run-length encoding: pairs `start length` separated by
spaces, meaning pixels `start` to `start+length-1`. Pixels are numbered from 1, top to
bottom down each column, then left to right (pixel 2 is below pixel 1, and pixel
`height_pixels + 1` is the top of the second column). Starts must be increasing, runs must
not overlap and must lie inside the slide; an empty `predicted` means no glomerulus.
Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="hubmap-kidney-segmentation",
    name="HuBMAP - Hacking the Kidney",
    split="medium",
    metric="hubmap_dice",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="id",
        columns=(Column("predicted", "text"),),
        load_answers=load_answers,
    ),
    raw_files=(
        "train.csv",
        INFO,
        "train/*.tiff",
        "train/*-anatomical-structure.json",
    ),
    prepare=prepare,
    num_teams=1200,
    thresholds=Thresholds(gold=0.9484, silver=0.9455, bronze=0.9439, median=0.0),
    sample_score=0.0,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            INFO: "6a19818d50bb232dbe51fbc375bc89cb",
            "sample_submission.csv": "135a2b41c9aa16f03880908a7171dc28",
            "train.csv": "a5760de09c0fcc1f78a32bb8f6459f45",
        },
        private={
            "gold_submission.csv": "04e4a0b5efa7d41491a1cdd01990b507",
            "test.csv": "17d0985b7ced8c4e23fee515af8e381f",
        },
    ),
    dev_variant=DevVariant(prepare=prepare_dev),
)
