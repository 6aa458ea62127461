"""Herbarium 2021 - FGVC8: which of about 64,500 plant species a pressed specimen shows.

The split, renumbering and grading are Herbarium 2020's (`per_category_split`): 20% of each
species' training images become the hidden test set, ids `0, 1, ...` in shuffled order,
graded by macro F1 over the integer category ids. MLE-bench's grader only checks length,
ids and integer values; ours refuses the same broken files with a reason, and matches rows
by id, so nothing in its reading can be gamed.
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
        folder="",
        encoding="utf-8",
        train_only_keys=("categories", "institutions"),
    )


STATEMENT = (
    """\
# Herbarium 2021 - FGVC8

Identify the species of vascular plant in photographs of herbarium specimens (pressed,
dried plants on paper sheets) from several herbaria: about 2.3 million images of nearly
65,000 species of the Americas and Oceania, with a long tail (many species have only a few
specimens, some have hundreds). Text labels on the sheets are blurred.

## Data (read-only, in {data_dir})
- `train/metadata.json`: COCO-style metadata of the training images (about 80% of the
  set). Keys: `images` (`id`, `file_name`, `height`, `width`, `license`), `annotations`
  (`id`, `image_id`, `category_id`, `institution_id`; entry i belongs to image i),
  `categories` (`id`, `name`, `family`, `order`), `institutions`, `info`, `licenses`.
- `train/images/<aaa>/<bb>/<image id>.jpg`: the training images, JPEG, at most 1000 pixels
  on the longer side; the folders are the category id split into its hundreds (`aaa`,
  three digits) and last two digits (`bb`).
- `test/metadata.json`: `images`, `info` and `licenses` of the test images (no annotations,
  categories or institutions). Test ids are `0`, `1`, `2`, ... in random order.
- `test/images/<nnn>/<id>.jpg`: the test images, `<nnn>` being the id divided by 1000, as
  three digits.
- `sample_submission.csv`: a valid submission that predicts category 0 for every image.

Every species with at least two training specimens has at least one of them in the test
set.

"""
    + HERBARIUM_SCORING
)

COMPETITION = Competition(
    id="herbarium-2021-fgvc8",
    name="Herbarium 2021 - FGVC8",
    split="medium",
    metric="macro_f1",
    lower_is_better=False,
    submission=HERBARIUM_SUBMISSION,
    raw_files=("train/metadata.json", "train/images"),
    prepare=prepare,
    num_teams=80,
    thresholds=Thresholds(gold=0.54332, silver=0.41067, bronze=0.13026, median=0.05155),
    sample_score=0.0,
    statement=STATEMENT,
    checksums=Checksums(
        public={"sample_submission.csv": "e53508ab941ce7f219c6e82fde9a6baa"},
        private={"answers.csv": "ba6fdf67c5f53a1a39bef7a129b38108"},
    ),
    dev_variant=renumbered_test_dev_variant(""),
)
