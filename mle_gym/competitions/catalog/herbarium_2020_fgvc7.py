"""Herbarium 2020 - FGVC7: which of about 32,000 plant species a pressed specimen shows.

MLE-bench holds out 20% of each species' training images (see `per_category_split`) and
renumbers them; the answers are their species ids. Grading is macro F1 over the ids, as
MLE-bench's grader computes it (classes seen in the answers or predictions). The grader
checks length, ids and integer values only; ours refuses the same broken files with a
reason, and nothing in its reading can be gamed (rows are matched by id).

MLE-bench reads the raw metadata as Latin-1 (UTF-8 fails on it, its authors note), so
accented names come out as mojibake escaped with `\\u00XX` in the public JSON; we read it
the same way so that the files are byte for byte the same.
"""

from __future__ import annotations

from pathlib import Path

from mle_gym.competitions.per_category_split import (
    HERBARIUM_SCORING,
    HERBARIUM_SUBMISSION,
    prepare_renumbered_test,
    renumbered_test_dev_variant,
)
from mle_gym.competitions.spec import Checksums, Competition, Thresholds


def prepare(raw: Path, public: Path, private: Path) -> None:
    """Per-species 80:20 hold-out of Kaggle's labelled training specimens."""
    prepare_renumbered_test(
        raw,
        public,
        private,
        folder="nybg2020",
        encoding="latin-1",
        train_only_keys=("categories", "regions"),
    )


STATEMENT = (
    """\
# Herbarium 2020 - FGVC7

Identify the species of vascular plant in photographs of herbarium specimens (pressed,
dried plants on paper sheets) from the New York Botanical Garden: over a million images of
more than 32,000 species, with a long tail (many species have only a handful of
specimens, some have hundreds). Text and barcode labels on the sheets are blurred.

## Data (read-only, in {data_dir})
- `nybg2020/train/metadata.json`: COCO-style metadata of the training images (about 80% of
  the set). Keys: `images` (`id`, `file_name`, `height`, `width`, `license`),
  `annotations` (`image_id`, `category_id`, `region_id`, ...; entry i belongs to image i),
  `categories` (`id`, `name`, `family`, `genus`), `regions`, `info`, `licenses`.
- `nybg2020/train/images/<aaa>/<bb>/<image id>.jpg`: the training images, JPEG, at most
  1000 pixels on the longer side; the folders are the category id split into its
  hundreds (`aaa`, three digits) and last two digits (`bb`).
- `nybg2020/test/metadata.json`: `images`, `info` and `licenses` of the test images (no
  annotations, categories or regions). Test ids are `0`, `1`, `2`, ... in random order.
- `nybg2020/test/images/<nnn>/<id>.jpg`: the test images, `<nnn>` being the id divided by
  1000, as three digits.
- `sample_submission.csv`: a valid submission that predicts category 0 for every image.

Every species with at least two training specimens has at least one of them in the test
set.

"""
    + HERBARIUM_SCORING
)

COMPETITION = Competition(
    id="herbarium-2020-fgvc7",
    name="Herbarium 2020 - FGVC7",
    split="medium",
    metric="macro_f1",
    lower_is_better=False,
    submission=HERBARIUM_SUBMISSION,
    raw_files=("nybg2020/train/metadata.json", "nybg2020/train/images"),
    prepare=prepare,
    num_teams=154,
    thresholds=Thresholds(gold=0.63151, silver=0.2805, bronze=0.05334, median=0.05334),
    sample_score=0.0,
    statement=STATEMENT,
    checksums=Checksums(
        public={"sample_submission.csv": "a1bdb830f6582fcb9cffe8cec363a0b1"},
        private={"answers.csv": "5e7355890f648e4f8be7a68e6c9c71c5"},
    ),
    dev_variant=renumbered_test_dev_variant("nybg2020"),
)
