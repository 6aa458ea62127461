"""Dogs vs. Cats Redux: the probability that a photograph shows a dog.

Its development variant is the competition's own split of the public training photos,
zipped back under `train/` as Kaggle ships them. The photos are renamed again, so each is
traced by its bytes.
"""

from __future__ import annotations

import zipfile
from pathlib import Path, PurePosixPath

from mle_gym.competitions.dev_ids import file_digests, files_in, ids_in
from mle_gym.competitions.dev_rules import public_as_raw
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.competitions.zip_members import add_file
from mle_gym.lazy import pd, train_test_split


def _train_images(archive: zipfile.ZipFile) -> list[str]:
    """Members `train/<name>.jpg`, in the order of their sorted paths (as MLE-bench lists them)."""
    paths = [PurePosixPath(name) for name in archive.namelist()]
    chosen = [p for p in paths if p.parent == PurePosixPath("train") and p.suffix == ".jpg"]
    return [str(p) for p in sorted(chosen)]


def _new_names(train_images: list[str]) -> list[str]:
    """Renumber each class from 0 in split order: cat.0.jpg, cat.1.jpg, ..., dog.0.jpg, ..."""
    counters = {"cat": 0, "dog": 0}
    names = []
    for member in train_images:
        kind = "cat" if "cat" in PurePosixPath(member).name else "dog"
        names.append(f"{kind}.{counters[kind]}.jpg")
        counters[kind] += 1
    return names


def _write_folder_and_zip(archive: zipfile.ZipFile, files: dict[str, str], folder: Path) -> None:
    """Copy members to `folder` under new names, then zip the folder beside it (flat, members
    stamped with a fixed time, so that a preparation is reproducible)."""
    folder.mkdir(exist_ok=True)
    for new_name, member in files.items():
        (folder / new_name).write_bytes(archive.read(member))
    with zipfile.ZipFile(folder.with_suffix(".zip"), "w") as out:
        for path in sorted(folder.iterdir()):
            add_file(out, path, path.name, zipfile.ZIP_DEFLATED)


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split: 10% of Kaggle's labelled photos become the hidden test set.

    Train photos are renamed cat.N.jpg / dog.N.jpg and test photos N.jpg (from 1), both in
    split order; each set is left as a folder and also zipped, as MLE-bench leaves them.
    """
    with zipfile.ZipFile(raw / "train.zip") as archive:
        train_images, test_images = train_test_split(
            _train_images(archive), test_size=0.1, random_state=0
        )
        ids = list(range(1, len(test_images) + 1))
        renamed = dict(zip(_new_names(train_images), train_images, strict=True))
        _write_folder_and_zip(archive, renamed, public / "train")
        _write_folder_and_zip(
            archive, {f"{i}.jpg": m for i, m in zip(ids, test_images, strict=True)}, public / "test"
        )

    dog = [int("dog" in PurePosixPath(m).name) for m in test_images]
    pd.DataFrame({"id": ids, "label": dog}).to_csv(private / "answers.csv", index=False)
    sample = pd.DataFrame({"id": ids, "label": [0.5] * len(ids)})
    sample.to_csv(public / "sample_submission.csv", index=False)


STATEMENT = """\
# Dogs vs. Cats Redux: Kernels Edition

Each photograph shows either a dog or a cat. For every test photograph, predict the
probability that it shows a dog.

## Data (read-only, in {data_dir})
- `train.zip`: the training photographs, named `cat.<n>.jpg` or `dog.<n>.jpg` (the name
  is the label; `<n>` numbers each class from 0). The same files are also unpacked in the
  folder `train/`.
- `test.zip`: the photographs to classify, named `<id>.jpg` with `<id>` = 1, 2, 3, ...;
  also unpacked in `test/`.
- `sample_submission.csv`: a valid submission in the right format (it predicts 0.5 for
  every photograph).

Photographs vary in size, framing and quality.

## Metric
Binary logarithmic loss: the mean over test photographs of
`-(y * log(p) + (1 - y) * log(1 - p))`, where `y` is 1 for a dog and 0 for a cat and `p`
your predicted probability of a dog. Probabilities are clipped to
[2.2e-16, 1 - 2.2e-16], so a confident wrong answer is very costly. Lower is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per photograph in
`test.zip`:

```
id,label
1,0.97
2,0.03
```

`label` must be a probability in [0, 1]. Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="dogs-vs-cats-redux-kernels-edition",
    name="Dogs vs. Cats Redux: Kernels Edition",
    split="lite",
    metric="binary_log_loss",
    lower_is_better=True,
    submission=SubmissionFormat(
        id_column="id",
        columns=(Column("label", "probability"),),
        answers_file="answers.csv",
    ),
    raw_files=("train.zip",),
    prepare=prepare,
    num_teams=1315,
    thresholds=Thresholds(gold=0.03882, silver=0.05038, bronze=0.06127, median=0.12216),
    sample_score=0.69315,
    statement=STATEMENT,
    checksums=Checksums(
        public={"sample_submission.csv": "cfe8f41567220b6fcbbdc4eb4df7230f"},
        private={"answers.csv": "98f293fd3f37f967c17aa9263e866c30"},
    ),
    dev_variant=DevVariant(
        prepare=public_as_raw(prepare, zips={"train.zip": {"train": "train"}}),
        train_ids=file_digests(files_in("train", "*.jpg", stem=False), "train/{}"),
        test_ids=file_digests(ids_in("answers.csv", "id"), "test/{}.jpg"),
    ),
)
