"""SIIM-ISIC Melanoma Classification: is a skin lesion in a dermoscopic image malignant?"""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path

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
from mle_gym.lazy import pd

#: The two of Kaggle's sixteen training shards (about 10% of the images) that MLE-bench
#: holds out as its test set.
TEST_SHARDS = ("train00-2071.tfrec", "train06-2071.tfrec")
TEST_COLUMNS = ["image_name", "patient_id", "sex", "age_approx", "anatom_site_general_challenge"]
#: Features of a training Example that test.csv does not have: removed from held-out shards.
LABEL_FEATURES = frozenset({"target", "diagnosis", "benign_malignant"})


def _copy_images(raw: Path, names: Iterable[str], dicom_dir: Path, jpeg_dir: Path) -> None:
    dicom_dir.mkdir(parents=True)
    jpeg_dir.mkdir(parents=True)
    for name in names:
        shutil.copyfile(raw / "train" / f"{name}.dcm", dicom_dir / f"{name}.dcm")
        shutil.copyfile(raw / "jpeg" / "train" / f"{name}.jpg", jpeg_dir / f"{name}.jpg")


def _image_name(record: bytes, shard: Path) -> str:
    names = parse_example(record).get("image_name")
    if not names or not isinstance(names[0], bytes):
        raise TFRecordError(f"{shard.name} has a record without an image_name feature")
    return names[0].decode("utf-8")


def _hold_out(shard: Path, destination: Path) -> list[str]:
    """Copy a held-out shard without its label features; return its image names.

    MLE-bench copies these shards whole, so their `target` feature reveals the answers;
    here the records lose the features test.csv lacks and keep everything else.
    """
    names: list[str] = []

    def stripped() -> Iterator[bytes]:
        for record in read_records(shard):
            names.append(_image_name(record, shard))
            yield without_features(record, LABEL_FEATURES)

    write_records(destination, stripped())
    return names


def _copy_shards(raw: Path, public: Path) -> set[str]:
    """Copy the training shards renumbered, held-out ones as testNN and the rest as trainNN.

    Returns the image names in the held-out shards, which form the test set.
    """
    missing = [name for name in TEST_SHARDS if not (raw / "tfrecords" / name).is_file()]
    if missing:
        raise FileNotFoundError(f"the held-out shard(s) {', '.join(missing)} are missing")
    target = public / "tfrecords"
    target.mkdir()
    counts = {"train": 0, "test": 0}
    held_out: set[str] = set()
    for shard in sorted((raw / "tfrecords").glob("train*.tfrec")):
        kind = "test" if shard.name in TEST_SHARDS else "train"
        destination = target / f"{kind}{counts[kind]:02d}-{shard.stem.split('-')[1]}.tfrec"
        counts[kind] += 1
        if kind == "test":
            held_out.update(_hold_out(shard, destination))
        else:
            shutil.copyfile(shard, destination)
    return held_out


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split: the images stored in two TFRecord shards become the test set.

    Both halves keep the order of Kaggle's train.csv.
    """
    original = pd.read_csv(raw / "train.csv")
    in_test = original["image_name"].isin(_copy_shards(raw, public))
    train, test = original[~in_test], original[in_test]
    answers = test[["image_name", "target"]]
    sample = answers.copy()
    sample["target"] = 0

    train.to_csv(public / "train.csv", index=False)
    test[TEST_COLUMNS].to_csv(public / "test.csv", index=False)
    sample.to_csv(public / "sample_submission.csv", index=False)
    answers.to_csv(private / "test.csv", index=False)

    _copy_images(raw, train["image_name"], public / "train", public / "jpeg" / "train")
    _copy_images(raw, test["image_name"], public / "test", public / "jpeg" / "test")


STATEMENT = """\
# SIIM-ISIC Melanoma Classification

Melanoma causes most skin cancer deaths, and is curable when caught early. Given a
dermoscopic image of a skin lesion and a little information about the patient, predict
the probability that the lesion is malignant (melanoma). Most lesions are benign: fewer
than 2% of the training images are malignant. A patient usually has several images, and
comparing a lesion with the same patient's other lesions can help.

## Data (read-only, in {data_dir})
- `train.csv`: one row per training image. Columns:
  - `image_name`: the image's id, e.g. `ISIC_2637011`.
  - `patient_id`: the patient, e.g. `IP_7279968`.
  - `sex`, `age_approx`: the patient's sex and approximate age (sometimes blank).
  - `anatom_site_general_challenge`: where on the body the lesion is (sometimes blank).
  - `diagnosis`: the detailed diagnosis (e.g. `nevus`, `melanoma`, `unknown`).
  - `benign_malignant`: `benign` or `malignant`.
  - `target`: the answer, `1` for malignant and `0` for benign.
- `test.csv`: the images to predict, with columns `image_name`, `patient_id`, `sex`,
  `age_approx`, `anatom_site_general_challenge`.
- The images, in three formats:
  - `train/<image_name>.dcm`, `test/<image_name>.dcm`: DICOM files, holding the image
    and metadata (readable with e.g. `pydicom`).
  - `jpeg/train/<image_name>.jpg`, `jpeg/test/<image_name>.jpg`: JPEG files.
  - `tfrecords/trainNN-<count>.tfrec`, `tfrecords/testNN-<count>.tfrec`: TFRecord shards
    of `tf.train.Example` records (`<count>` is the number of records in the shard). Each
    holds the JPEG-encoded image resized to 1024x1024 (feature `image`), its
    `image_name` and metadata features; the training shards also hold the label
    `target`. The test shards hold exactly the images of `test.csv`.
- `sample_submission.csv`: a valid submission listing every test image (it predicts `0`
  everywhere).

## Metric
Area under the ROC curve between your predicted probabilities and the true labels.
Higher is better; only the ranking of your predictions matters.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per image in
`test.csv`:

```
image_name,target
ISIC_0052060,0.07
ISIC_0052349,0.61
```

`target` must be a probability between 0 and 1. Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="siim-isic-melanoma-classification",
    name="SIIM-ISIC Melanoma Classification",
    split="lite",
    metric="roc_auc",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="image_name",
        columns=(Column("target", "probability"),),
        answers_file="test.csv",
    ),
    raw_files=("train.csv", "tfrecords/train*.tfrec", "train/*.dcm", "jpeg/train/*.jpg"),
    prepare=prepare,
    num_teams=3308,
    thresholds=Thresholds(gold=0.9455, silver=0.9401, bronze=0.937, median=0.9128),
    sample_score=0.5,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "c8fa2aaa934d434e5b87e148ca91d42e",
            "test.csv": "faeb3cdaf1ee9c47120bcbf46787fe81",
            "train.csv": "dc473826f850a25d5e62f981b5e62d54",
        },
        private={"test.csv": "89aae5dac5881e960258883de51152fe"},
    ),
)
