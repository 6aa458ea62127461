"""Plant Pathology 2020 (FGVC7): tell healthy apple leaves from rust, scab or several diseases.

Its development variant is the competition's own split of the public training leaves, which
renames them `Train_<i>` and `Test_<i>` again; each leaf is traced by its image's bytes.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from mle_gym.competitions.csv_io import read_csv
from mle_gym.competitions.dev_ids import file_digests, ids_in
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.lazy import train_test_split

CLASSES = ("healthy", "multiple_diseases", "rust", "scab")


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split: 10% of Kaggle's labelled leaves become the hidden test set.

    MLE-bench renames the leaves `Train_<i>` and `Test_<i>`, numbered in the order of
    each half, and copies only the labelled images (Kaggle's own test images are left out).
    """
    original = read_csv(raw / "train.csv")
    train, answers = train_test_split(original, test_size=0.1, random_state=0)
    new_names = {
        **{old: f"Train_{i}" for i, old in enumerate(train["image_id"].unique())},
        **{old: f"Test_{i}" for i, old in enumerate(answers["image_id"].unique())},
    }
    train = train.assign(image_id=train["image_id"].map(new_names))
    answers = answers.assign(image_id=answers["image_id"].map(new_names))

    (public / "images").mkdir()
    for old in original["image_id"]:
        shutil.copyfile(raw / "images" / f"{old}.jpg", public / "images" / f"{new_names[old]}.jpg")

    sample = answers[["image_id"]].copy()
    for name in CLASSES:
        sample[name] = 0.25
    answers.to_csv(private / "test.csv", index=False)
    sample.to_csv(public / "sample_submission.csv", index=False)
    answers[["image_id"]].to_csv(public / "test.csv", index=False)
    train.to_csv(public / "train.csv", index=False)


STATEMENT = """\
# Plant Pathology 2020 - FGVC7

Misdiagnosed crop diseases lead to misused chemicals, resistant pathogens and lost
harvests. From a photograph of an apple leaf, tell whether it is healthy, infected with
apple rust, infected with apple scab, or has more than one disease. Symptoms vary with
the age of the tissue, genetics and light, and some classes are rare.

## Data (read-only, in {data_dir})
- `train.csv`: columns `image_id` (e.g. `Train_0`), then `healthy`, `multiple_diseases`,
  `rust`, `scab`: exactly one of the four is `1` for each leaf, the others `0`.
- `test.csv`: column `image_id` (e.g. `Test_0`): the leaves to classify.
- `images/<image_id>.jpg`: the photographs of both training and test leaves (large
  colour JPEG files).
- `sample_submission.csv`: a valid submission listing every test leaf (it predicts
  `0.25` for every class).

## Metric
Mean column-wise ROC AUC: the area under the ROC curve is computed for each of the four
class columns separately, then averaged. Higher is better; within each column only the
ranking of your predictions matters.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per leaf in
`test.csv`, giving a probability for each class:

```
image_id,healthy,multiple_diseases,rust,scab
Test_0,0.91,0.02,0.04,0.03
Test_1,0.05,0.10,0.80,0.05
```

Every class column must hold a probability between 0 and 1, and the file must have no
other columns. Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="plant-pathology-2020-fgvc7",
    name="Plant Pathology 2020 - FGVC7",
    split="lite",
    metric="roc_auc",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="image_id",
        columns=tuple(Column(name, "score") for name in CLASSES),
        answers_file="test.csv",
        allow_extra_columns=False,
    ),
    raw_files=("train.csv", "images/Train_*.jpg"),
    prepare=prepare,
    num_teams=1318,
    thresholds=Thresholds(gold=0.97836, silver=0.97465, bronze=0.97361, median=0.94852),
    sample_score=0.5,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "7a67fc684abd73d9d1afc554e8d5cf07",
            "test.csv": "4a6cc8292989880ba253a124634efff1",
            "train.csv": "f99c8adb1be7d3f0a5c96fe804fcf3f3",
        },
        private={"test.csv": "8835c3fd71013bd15ea81566d4f85d7b"},
    ),
    dev_variant=DevVariant(
        train_ids=file_digests(ids_in("train.csv", "image_id"), "images/{}.jpg"),
        test_ids=file_digests(ids_in("test.csv", "image_id"), "images/{}.jpg"),
    ),
)
