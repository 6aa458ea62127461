"""Cassava Leaf Disease Classification: which of four diseases, if any, a cassava leaf shows.

Grading: accuracy of the predicted class per image, as MLE-bench scores it. MLE-bench
accepts any value as a class and counts an unknown one as wrong; here a value that is not
one of the five classes is scored the same way, with a warning. MLE-bench's grader needs
one row per test image and no others, which validation checks first.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from mle_gym.competitions.csv_io import read_csv
from mle_gym.competitions.hardlink_helpers import place_file, place_files
from mle_gym.competitions.holdout import holdout
from mle_gym.competitions.prepare_progress import Progress
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.competitions.tfrecord import (
    TFRecordError,
    parse_example,
    read_records,
    without_features,
    write_records,
)

CLASSES = ("0", "1", "2", "3", "4")
#: The Example feature that holds a record's class: removed from the held-out shards.
LABEL_FEATURE = "target"


def _renamed(shards: list[Path], kind: str, folder: Path) -> Iterator[tuple[Path, Path]]:
    """Each shard with its new name `ld_<kind>NN-<records>.tfrec`, numbered in split order."""
    for number, shard in enumerate(shards):
        count = shard.stem.split("-")[1]
        yield shard, folder / f"ld_{kind}{number:02d}-{count}.tfrec"


def _image_name(record: bytes, shard: Path) -> str:
    names = parse_example(record).get("image_name")
    if not names or not isinstance(names[0], bytes):
        raise TFRecordError(f"{shard.name} has a record without an image_name feature")
    return names[0].decode("utf-8")


def _without_labels(shard: Path, names: set[str]) -> Iterator[bytes]:
    """The shard's records without their label feature, adding each image name to `names`."""
    for record in read_records(shard):
        names.add(_image_name(record, shard))
        yield without_features(record, {LABEL_FEATURE})


def _write_test_shards(shards: list[Path], folder: Path) -> set[str]:
    """Write the held-out shards without their label feature; return the image names in them.

    MLE-bench copies these shards whole, so their `target` feature gives the answers away;
    here each record keeps every other feature byte for byte.
    """
    folder.mkdir(parents=True, exist_ok=True)
    names: set[str] = set()
    with Progress("Writing test TFRecords", len(shards)) as progress:
        for shard, destination in _renamed(shards, "test", folder):
            write_records(destination, _without_labels(shard, names))
            progress.add(destination.stat().st_size)
    return names


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split: 10% of Kaggle's training TFRecord shards (2 of 16) are held out.

    The shards, sorted by name, are split by `train_test_split(test_size=0.1,
    random_state=0)`; the images inside the held-out shards form the test set. Both CSVs
    keep the order of Kaggle's train.csv; shards are renumbered in the split's order.
    """
    shards = sorted(p for p in (raw / "train_tfrecords").iterdir() if p.suffix == ".tfrec")
    train_shards, test_shards = holdout(shards, 0.1)
    test_ids = _write_test_shards(test_shards, public / "test_tfrecords")
    place_files(
        _renamed(train_shards, "train", public / "train_tfrecords"),
        "Placing train TFRecords",
        len(train_shards),
    )

    original = read_csv(raw / "train.csv")
    in_test = original["image_id"].isin(test_ids)
    train, answers = original[~in_test], original[in_test]
    train.to_csv(public / "train.csv", index=False)
    answers.to_csv(private / "test.csv", index=False)
    answers.assign(label=4).to_csv(public / "sample_submission.csv", index=False)

    for folder, frame in (("train_images", train), ("test_images", answers)):
        pairs = ((raw / "train_images" / i, public / folder / i) for i in frame["image_id"])
        (public / folder).mkdir(exist_ok=True)
        place_files(pairs, f"Placing {folder}", len(frame))
    place_file(raw / "label_num_to_disease_map.json", public / "label_num_to_disease_map.json")


STATEMENT = """\
# Cassava Leaf Disease Classification

Cassava feeds hundreds of millions of people, and viral diseases cost smallholder
farmers much of their harvest. From a photograph of a cassava leaf taken in the field by
a farmer, tell which disease it shows, or that it is healthy.

## Data (read-only, in {data_dir})
About 21,400 labelled photographs (800x600 JPEG), of which about 2,700 (those of two of
the 16 TFRecord shards) form the test set.
- `train.csv`: columns `image_id` (the file name, e.g. `1000015157.jpg`) and `label`
  (the class, an integer 0-4).
- `label_num_to_disease_map.json`: the meaning of each class: `0` Cassava Bacterial
  Blight (CBB), `1` Cassava Brown Streak Disease (CBSD), `2` Cassava Green Mottle (CGM),
  `3` Cassava Mosaic Disease (CMD), `4` Healthy. Most leaves show mosaic disease.
- `train_images/<image_id>`, `test_images/<image_id>`: the photographs.
- `train_tfrecords/ld_trainNN-<count>.tfrec`: the training photographs again, as
  TFRecord shards of `tf.train.Example` records (`<count>` records each) with features
  `image` (the JPEG bytes), `image_name` and `target` (the class).
- `test_tfrecords/ld_testNN-<count>.tfrec`: the test photographs as TFRecord shards,
  with features `image` and `image_name` only.
- `sample_submission.csv`: a valid submission listing every test image (it predicts
  `4` everywhere).

## Metric
Accuracy: the share of test images whose predicted class is right. Higher is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per file in
`test_images/`:

```
image_id,label
1000837476.jpg,3
1003442061.jpg,0
```

`label` must be one of the integer classes 0-4. Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="cassava-leaf-disease-classification",
    name="Cassava Leaf Disease Classification",
    split="medium",
    metric="accuracy",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="image_id",
        columns=(Column("label", "label", labels=CLASSES, open_labels=True),),
        answers_file="test.csv",
    ),
    raw_files=(
        "train.csv",
        "train_tfrecords/ld_train*.tfrec",
        "train_images/*.jpg",
        "label_num_to_disease_map.json",
    ),
    prepare=prepare,
    num_teams=3901,
    thresholds=Thresholds(gold=0.9013, silver=0.8992, bronze=0.8978, median=0.8909),
    sample_score=0.11584,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "label_num_to_disease_map.json": "133bf5c6a60c901792937eaad034b188",
            "sample_submission.csv": "b27270a483141fa217d990d55b4b3d49",
            "train.csv": "fede2927f0d412590f195abfbd07b578",
        },
        private={"test.csv": "34b2b412be39aba1edac9c04990e4fb8"},
    ),
)
