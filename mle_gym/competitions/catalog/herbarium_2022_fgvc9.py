"""Herbarium 2022 - FGVC9: which of 15,501 North American plant species a specimen shows.

MLE-bench holds out 20% of every species' training images with `train_test_split` (no
small-category rules: every species has enough images) and renames both sides, so that no
gap in the ids hints at a held-out image: train images become `<cat:05d>__<k:03d>` within
their species, test images `test-<n:06d>` in shuffled order. Grading is macro F1 over the
integer category ids (`per_category_split`, `macro_f1`). MLE-bench's grader checks only
length, ids and integer values; ours refuses the same broken files with a reason and
matches rows by id, so nothing in its reading can be gamed. Train images are hard-linked;
test images are fresh copies in id order (a link's inode would tell the species folder).

The development variant is the same split of the public images, but a species with fewer
than five public images follows the small-category rules of the other Herbarium sets (one
image stays in training; two to four give their last one). Both parts are renamed again,
so the clean-split check traces images by their bytes, not by name.
"""

from __future__ import annotations

from pathlib import Path

from mle_gym.competitions.dev_ids import digest, ids_in, public_of
from mle_gym.competitions.hardlink_helpers import place_files
from mle_gym.competitions.per_category_split import (
    HERBARIUM_SCORING,
    HERBARIUM_SUBMISSION,
    categories_of,
    load_metadata,
    split_per_category,
    write_answers,
    write_json,
)
from mle_gym.competitions.spec import Checksums, Competition, DevVariant, Thresholds


def _renamed_train(metadata: dict, train_by_category: dict[int, list[int]]) -> list[tuple]:
    """(position, image record, annotation record) of each train image, renamed."""
    renamed = []
    for category, positions in train_by_category.items():
        folder = f"{category // 100:03d}/{category % 100:02d}"
        for k, i in enumerate(positions, start=1):
            image_id = f"{category:05d}__{k:03d}"
            image = {**metadata["images"][i], "image_id": image_id}
            image["file_name"] = f"{folder}/{image_id}.jpg"
            renamed.append((i, image, {**metadata["annotations"][i], "image_id": image_id}))
    return renamed


def prepare(raw: Path, public: Path, private: Path, *, small_rules: bool = False) -> None:
    """Per-species 80:20 split of Kaggle's labelled specimens, both sides renamed."""
    metadata = load_metadata(raw / "train_metadata.json")
    images, annotations = metadata["images"], metadata["annotations"]
    train_by_category, test = split_per_category(
        categories_of(metadata, "image_id"), test_size=0.2, small_rules=small_rules
    )

    train = _renamed_train(metadata, train_by_category)
    write_json(
        {
            **metadata,
            "annotations": [annotation for _, _, annotation in train],
            "images": [image for _, image, _ in train],
        },
        public / "train_metadata.json",
    )
    place_files(
        (
            (
                raw / "train_images" / images[i]["file_name"],
                public / "train_images" / image["file_name"],
            )
            for i, image, _ in train
        ),
        "train images",
        len(train),
    )

    renamed = [
        {**images[i], "image_id": str(n), "file_name": f"{n // 1000:03d}/test-{n:06d}.jpg"}
        for n, i in enumerate(test)
    ]
    write_json(renamed, public / "test_metadata.json")
    place_files(
        (
            (
                raw / "train_images" / images[i]["file_name"],
                public / "test_images" / image["file_name"],
            )
            for i, image in zip(test, renamed, strict=True)
        ),
        "test images",
        len(test),
        fresh=True,
    )

    ids = [image["image_id"] for image in renamed]
    truth = [annotations[i]["category_id"] for i in test]
    write_answers(private / "answers.csv", ids, truth, ("Id", "Predicted"))
    write_answers(public / "sample_submission.csv", ids, [42] * len(ids), ("Id", "Predicted"))


def prepare_dev(raw: Path, public: Path, private: Path) -> None:
    """The development split of the public images (see the module docstring)."""
    prepare(raw, public, private, small_rules=True)


def _training_images(public: Path) -> set[str]:
    """The digest of each training image's file."""
    images = load_metadata(public / "train_metadata.json")["images"]
    return {digest((public / "train_images" / i["file_name"]).read_bytes()) for i in images}


def _test_images(private: Path) -> set[str]:
    """The digest of each answer's image, found through the public test metadata."""
    public = public_of(private)
    files = {i["image_id"]: i["file_name"] for i in load_metadata(public / "test_metadata.json")}
    answers = ids_in("answers.csv", "Id")(private)
    return {digest((public / "test_images" / files[i]).read_bytes()) for i in answers}


STATEMENT = (
    """\
# Herbarium 2022 - FGVC9

Identify the species of vascular plant in photographs of herbarium specimens (pressed,
dried plants on paper sheets) from North American herbaria: about 840,000 images of 15,501
species, at most 80 training images per species. Text labels on the sheets are blurred.

## Data (read-only, in {data_dir})
- `train_metadata.json`: COCO-style metadata of the training images (about 80% of the
  set). Keys: `images` (`image_id`, `file_name`, `license`), `annotations` (`image_id`,
  `category_id`, `genus_id`, `institution_id`; entry i belongs to image i), `categories`
  (`category_id`, `scientificName`, `family`, `genus`, `species`, `authors`), `genera`,
  `distances` (phylogenetic distance between pairs of genera), `institutions`, `license`.
- `train_images/<aaa>/<bb>/<cat>__<k>.jpg`: the training images, JPEG, at most 1000 pixels
  on the longer side; `<cat>` is the five-digit category id (`aaa` its hundreds, `bb` its
  last two digits) and `<k>` numbers the species' images from `001`.
- `test_metadata.json`: a list of the test images (`image_id`, `file_name`, `license`).
  Test ids are `0`, `1`, `2`, ... in random order.
- `test_images/<nnn>/test-<id:06d>.jpg`: the test images, `<nnn>` being the id divided by
  1000, as three digits.
- `sample_submission.csv`: a valid submission that predicts category 42 for every image.

Every species appears in both the training and the test images.

"""
    + HERBARIUM_SCORING
)

COMPETITION = Competition(
    id="herbarium-2022-fgvc9",
    name="Herbarium 2022 - FGVC9",
    split="medium",
    metric="macro_f1",
    lower_is_better=False,
    submission=HERBARIUM_SUBMISSION,
    raw_files=("train_metadata.json", "train_images"),
    prepare=prepare,
    num_teams=137,
    thresholds=Thresholds(gold=0.84602, silver=0.75373, bronze=0.5965, median=0.22549),
    sample_score=0.0,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "c2b0d6f95036aaa177a4e14a0d627054",
            "test_metadata.json": "465f92cf49fb94a793648066989fe817",
            "train_metadata.json": "22394926583a35658f6dd26ea0dcc683",
        },
        private={"answers.csv": "d7988cc4decb444ed99cbae59381298d"},
    ),
    dev_variant=DevVariant(
        prepare=prepare_dev,
        train_ids=_training_images,
        test_ids=_test_images,
    ),
)
