"""Cdiscount's Image Classification Challenge: the category of a product, from its photos.

Kaggle's train.bson holds 7,069,896 products (58 GB): one BSON document per product with
its `_id`, its photos (`imgs`, one to four JPEGs of 180x180) and its `category_id` (one
of 5,270). The split reads the file twice, one document at a time, and never holds it.

Grading: accuracy of `category_id`, as MLE-bench scores it. MLE-bench compares the values
as pandas reads them, so `1000010653.0` matches `1000010653` and a value that is no number
at all makes scikit-learn refuse the file; the column is therefore read as numbers here.
MLE-bench's grader needs one row per test product and no others, as validation does.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from mle_gym.competitions.hardlink_helpers import place_file
from mle_gym.competitions.prepare_progress import Progress
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.lazy import np, pd, train_test_split

#: The category the sample submission predicts for every product (MLE-bench's choice).
SAMPLE_CATEGORY = 1000010653
#: train_example.bson holds this many of the first documents of the new train.bson.
EXAMPLE_ROWS = 100


def _documents(path: Path, what: str) -> Iterator[dict[str, Any]]:
    """Decode a BSON file one document at a time, as `bson.decode_file_iter` reads it."""
    import bson

    with path.open("rb") as handle, Progress(what) as progress:
        while header := handle.read(4):
            size = int.from_bytes(header, "little", signed=True)
            body = handle.read(size - 4) if len(header) == 4 and size > 4 else b""
            if len(body) != size - 4:
                raise ValueError(f"{path.name} ends inside document {progress.files}")
            yield bson.decode(header + body)
            progress.add(size)


def _ids_and_categories(train_bson: Path) -> pd.DataFrame:
    """Every document's `_id` and `category_id`, as 64-bit integers (7 million of each)."""
    ids, categories = array("q"), array("q")
    for document in _documents(train_bson, "Reading train.bson ids"):
        ids.append(document["_id"])
        categories.append(document["category_id"])
    return pd.DataFrame({"_id": np.asarray(ids), "category_id": np.asarray(categories)})


def _write_split(train_bson: Path, ids: Any, in_test: Any, public: Path) -> None:
    """Write the new train.bson, test.bson (without categories) and train_example.bson.

    Each document is decoded and encoded again, as MLE-bench writes them (its bytes), in
    Kaggle's order; `in_test` tells by position which document is held out.
    """
    import bson

    examples = 0
    with (
        (public / "train.bson").open("wb") as train,
        (public / "test.bson").open("wb") as test,
        (public / "train_example.bson").open("wb") as example,
    ):
        outputs: tuple[BinaryIO, BinaryIO] = (train, test)
        for position, document in enumerate(_documents(train_bson, "Writing the split")):
            if document["_id"] != ids[position]:
                raise ValueError("train.bson changed while it was being split")
            held_out = bool(in_test[position])
            if held_out:
                del document["category_id"]
            encoded = bson.encode(document)
            outputs[held_out].write(encoded)
            if not held_out and examples < EXAMPLE_ROWS:
                example.write(encoded)
                examples += 1


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split: 10% of Kaggle's training products become the hidden test set.

    `train_test_split(test_size=0.1, random_state=0)` over train.bson's documents; the new
    BSON files keep Kaggle's document order, the answers are sorted by `_id`.
    """
    original = _ids_and_categories(raw / "train.bson")
    if not original["_id"].is_unique:
        raise ValueError("train.bson repeats a product _id")
    _, test_rows = train_test_split(np.arange(len(original)), test_size=0.1, random_state=0)
    in_test = np.zeros(len(original), dtype=bool)
    in_test[test_rows] = True

    answers = original.iloc[test_rows].sort_values(by="_id")
    answers.to_csv(private / "answers.csv", index=False)
    answers[["_id"]].assign(category_id=SAMPLE_CATEGORY).to_csv(
        public / "sample_submission.csv", index=False
    )
    _write_split(raw / "train.bson", original["_id"].to_numpy(), in_test, public)
    place_file(raw / "category_names.csv", public / "category_names.csv")


def _train_ids(public: Path) -> set[str]:
    """The product ids of a public train.bson (for the development variant)."""
    return {str(i) for i in _ids_and_categories(public / "train.bson")["_id"].tolist()}


STATEMENT = """\
# Cdiscount’s Image Classification Challenge

Cdiscount, France's largest non-food e-commerce site, sorts its tens of millions of
products into more than 5,000 categories. From the photos of a product, predict its
category.

## Data (read-only, in {data_dir})
Kaggle's 7,069,896 training products, of which 10% form the test set here. The BSON
files (MongoDB's binary JSON: read them one document at a time, e.g. with
`bson.decode_file_iter` from the `pymongo` package; `train.bson` is about 52 GB) hold
one document per product:
- `train.bson`: documents with `_id` (the product id, an integer), `imgs` (a list of one
  to four photos, each a document whose `picture` is the bytes of a 180x180 JPEG) and
  `category_id` (the answer).
- `train_example.bson`: the first 100 documents of `train.bson`, to look at quickly.
- `test.bson`: the products to classify: documents with `_id` and `imgs`.
- `category_names.csv`: for each `category_id`, its names at three levels of the
  hierarchy, in French (`category_level1`, `category_level2`, `category_level3`).
- `sample_submission.csv`: a valid submission listing every test product (it predicts
  `1000010653` everywhere).

## Metric
Accuracy: the share of test products whose predicted category is right. Higher is
better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per product in
`test.bson`:

```
_id,category_id
10,1000010653
14,1000010667
```

`category_id` must be one of the integer ids of `category_names.csv`. Put your code in
`{code_dir}`.
"""

COMPETITION = Competition(
    extras=("archives",),
    id="cdiscount-image-classification-challenge",
    name="Cdiscount’s Image Classification Challenge",
    split="medium",
    metric="accuracy",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="_id",
        columns=(Column("category_id", "number"),),
        answers_file="answers.csv",
    ),
    raw_files=("train.bson", "category_names.csv"),
    prepare=prepare,
    num_teams=627,
    thresholds=Thresholds(gold=0.77604, silver=0.73526, bronze=0.70898, median=0.44055),
    sample_score=0.00885,
    statement=STATEMENT,
    dev_variant=DevVariant(train_ids=_train_ids),
    checksums=Checksums(
        public={
            "category_names.csv": "f3942c134e6010e531709f56fcf63ce4",
            "sample_submission.csv": "386d237e1e17a667040d9a8a8e753371",
            "test.bson": "b2b39dbcd5e04c1c27aea258e103e1a4",
            "train.bson": "af1df955ac1abfab0b9c3fa5ad732760",
            "train_example.bson": "e715bde1bc797b076f21349674898e4d",
        },
        private={"answers.csv": "40700f1566c1be9eda129ec310ce6fe8"},
    ),
)
