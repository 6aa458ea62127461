"""MLE-bench's per-category hold-out of COCO-style image metadata (Herbarium, iNaturalist).

These sets describe every training image in one JSON file whose `images` and `annotations`
lists run in parallel (entry i of both is image i). Kaggle kept its test labels, so
MLE-bench holds out a share of each category's images instead, so that every category
with two or more images appears on both sides:

- a category with one image stays in train;
- with two to four images, the last `max(1, int(n * test_size))` of them (in file order)
  go to test;
- otherwise `train_test_split(test_size, random_state=0)` over the category's images.

The held-out images are then pooled in category order and shuffled with `random.Random(0)`,
so that their order does not reveal the category; the Herbarium sets also renumber them
0, 1, 2, ... (iNaturalist keeps Kaggle's ids).

Only list positions are split and shuffled here: a shuffle or a `train_test_split`
permutes a list of positions exactly as it would permute the records themselves, so the
result is MLE-bench's without copying a million metadata records.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from mle_gym.competitions.dev_ids import digest, ids_in, public_of
from mle_gym.competitions.hardlink_helpers import place_files
from mle_gym.competitions.spec import Column, DevVariant, SubmissionFormat
from mle_gym.lazy import pd

Metadata = dict[str, Any]

#: The three Herbarium competitions' submission file (MLE-bench's `answers.csv` shape).
HERBARIUM_SUBMISSION = SubmissionFormat(
    id_column="Id",
    columns=(Column("Predicted", "label"),),
    answers_file="answers.csv",
)

#: The end of the three Herbarium statements: one grader, one submission shape.
HERBARIUM_SCORING = """\
## Metric
Macro-averaged F1 score (scikit-learn's `f1_score(average="macro")`): the F1 score is
computed per category and averaged without weights over every category that appears in
the true labels or in your predictions, so each rare species counts as much as a common
one, and predicting a category that is not in the test set adds a category scoring zero.
Higher is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per test image:
its `Id` and the predicted `category_id` as the integer `Predicted`:

```
Id,Predicted
0,15021
1,873
```

Put your code in `{code_dir}`.
"""


def load_metadata(path: Path, encoding: str = "utf-8") -> Metadata:
    """The metadata JSON file, read as MLE-bench reads it (the encoding matters: it decides
    how non-ASCII names are escaped when written back)."""
    with open(path, encoding=encoding) as f:
        return json.load(f)


def write_json(value: Any, path: Path) -> None:
    """`value` written as MLE-bench writes metadata: four-space indent, keys sorted."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f, indent=4, sort_keys=True)


def categories_of(metadata: Metadata, image_key: str = "id") -> list[int]:
    """The category of each image position, after checking that the lists run in parallel."""
    categories = []
    for annotation, image in zip(metadata["annotations"], metadata["images"], strict=True):
        if annotation["image_id"] != image[image_key]:
            raise ValueError(
                f"annotation of image {annotation['image_id']!r} is paired with image "
                f"{image[image_key]!r}: the metadata lists are out of step"
            )
        categories.append(annotation["category_id"])
    return categories


def _held_out(positions: list[int], test_size: float, small_rules: bool) -> tuple[list, list]:
    from sklearn.model_selection import train_test_split

    n = len(positions)
    if small_rules and n == 1:
        return positions, []
    if small_rules and n < 5:
        count = max(1, int(n * test_size))
        return positions[:-count], positions[-count:]
    train, test = train_test_split(positions, test_size=test_size, random_state=0)
    return list(train), list(test)


def split_per_category(
    categories: Sequence[int], test_size: float, *, small_rules: bool = True
) -> tuple[dict[int, list[int]], list[int]]:
    """(train positions by category, in first-seen category order; shuffled test positions).

    `small_rules=False` sends every category through `train_test_split` (Herbarium 2022,
    whose categories all have enough images).
    """
    by_category: dict[int, list[int]] = {}
    for position, category in enumerate(categories):
        by_category.setdefault(category, []).append(position)
    train: dict[int, list[int]] = {}
    test: list[int] = []
    for category, positions in by_category.items():
        train[category], held = _held_out(positions, test_size, small_rules)
        test.extend(held)
    random.Random(0).shuffle(test)
    return train, test


def flat(by_category: dict[int, list[int]]) -> list[int]:
    """Positions of every category, one category after the other."""
    return [position for positions in by_category.values() for position in positions]


def write_answers(
    path: Path, ids: Iterable[Any], categories: Iterable[int], columns: tuple[str, str]
) -> None:
    """A two-column CSV of test ids and their categories (or a sample's guesses)."""
    pd.DataFrame(dict(zip(columns, (list(ids), list(categories)), strict=True))).to_csv(
        path, index=False
    )


def prepare_renumbered_test(
    raw: Path,
    public: Path,
    private: Path,
    *,
    folder: str,
    encoding: str,
    train_only_keys: tuple[str, ...],
) -> None:
    """Herbarium 2020 and 2021: split `<folder>/train/metadata.json` 80:20 per category.

    Train keeps its images' ids and file names (`images/<cat // 100>/<cat % 100>/<id>.jpg`,
    which reveal the category); test images move to `<folder>/test/` as
    `images/<n // 1000:03d>/<n>.jpg` with id `str(n)`. The public test metadata drops the
    annotations and `train_only_keys`.
    """
    raw_train, public_train, public_test = (
        raw / folder / "train",
        public / folder / "train",
        public / folder / "test",
    )
    metadata = load_metadata(raw_train / "metadata.json", encoding)
    images, annotations = metadata["images"], metadata["annotations"]
    train_by_category, test = split_per_category(categories_of(metadata), test_size=0.2)
    train = flat(train_by_category)

    write_json(
        {
            **metadata,
            "annotations": [annotations[i] for i in train],
            "images": [images[i] for i in train],
        },
        public_train / "metadata.json",
    )
    place_files(
        (
            (raw_train / images[i]["file_name"], public_train / images[i]["file_name"])
            for i in train
        ),
        "train images",
        len(train),
    )

    renamed = [
        {**images[i], "id": str(n), "file_name": f"images/{n // 1000:03d}/{n}.jpg"}
        for n, i in enumerate(test)
    ]
    dropped = {"annotations", "images", *train_only_keys}
    shown = {key: value for key, value in metadata.items() if key not in dropped}
    write_json({**shown, "images": renamed}, public_test / "metadata.json")
    place_files(
        (
            (raw_train / images[i]["file_name"], public_test / image["file_name"])
            for i, image in zip(test, renamed, strict=True)
        ),
        "test images",
        len(test),
        fresh=True,  # raw folders are categories: links would carry their inode order
    )

    ids = [image["id"] for image in renamed]
    truth = [annotations[i]["category_id"] for i in test]
    write_answers(private / "answers.csv", ids, truth, ("Id", "Predicted"))
    write_answers(public / "sample_submission.csv", ids, [0] * len(ids), ("Id", "Predicted"))


def renumbered_test_dev_variant(folder: str) -> DevVariant:
    """The development variant of a `prepare_renumbered_test` competition: the same prepare
    on its public training images and metadata (which have the raw layout).

    The held-out images are renamed and renumbered, so every image is traced by its file's
    bytes: a training image's from `<folder>/train/metadata.json`, an answer's through the
    split's public `<folder>/test/metadata.json`, which names its file."""

    def training(public: Path) -> set[str]:
        train = public / folder / "train"
        images = load_metadata(train / "metadata.json")["images"]
        return {digest((train / image["file_name"]).read_bytes()) for image in images}

    def answers(private: Path) -> set[str]:
        test = public_of(private) / folder / "test"
        files = {i["id"]: i["file_name"] for i in load_metadata(test / "metadata.json")["images"]}
        return {
            digest((test / files[i]).read_bytes()) for i in ids_in("answers.csv", "Id")(private)
        }

    return DevVariant(train_ids=training, test_ids=answers)
