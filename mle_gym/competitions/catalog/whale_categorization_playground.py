"""Humpback Whale Identification Challenge: which known whale's fluke is this, or a new one?

Kaggle's test labels were never published, so MLE-bench splits the 9,850 labelled images
itself, whale by whale, in the order whales first appear in train.csv: of a whale with two
or more images, two are drawn (`DataFrame.sample(2, random_state=0)`), the first going to
train and the second to test; a whale with one image goes to test with probability 0.1
(one numpy `default_rng(0)` drawing for all of them, in turn). The images left over are
split by `train_test_split(test_size=0.1, random_state=0)`. A test image whose whale has no
training image is relabelled `new_whale`. Images are placed by hard link.

Grading: MAP@5 over space-separated whale ids (`map_at_5`), compared as written; `new_whale`
is a label like any other (predicting it at rank k scores 1/k on a new whale). MLE-bench
refuses any column besides `Image` and `Id`, and so do we. Whale ids are not numbers, so
pandas' type guessing changes nothing here and every accepted file scores as in MLE-bench.
"""

from __future__ import annotations

from pathlib import Path

from mle_gym.competitions.csv_io import read_csv
from mle_gym.competitions.hardlink_helpers import place_files
from mle_gym.competitions.holdout import holdout
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.lazy import np, pd

TEST_SHARE = 0.1
NEW_WHALE = "new_whale"
SAMPLE_GUESS = "new_whale w_1287fbc w_98baff9 w_7554f44 w_1eafe46"


def assign_splits(labelled: pd.DataFrame) -> pd.Series:
    """ "train" or "test" for each row of Kaggle's train.csv (see the module docstring)."""
    split = pd.Series("undecided", index=labelled.index)
    singles = np.random.default_rng(0)
    for _, images in labelled.groupby("Id", sort=False):
        if len(images) >= 2:
            first, second = images.sample(2, random_state=0).index[:2]
            split.loc[first], split.loc[second] = "train", "test"
        else:
            p = [1 - TEST_SHARE, TEST_SHARE]
            split.loc[images.index[0]] = singles.choice(["train", "test"], replace=False, p=p)
    rest = labelled[split == "undecided"]
    train, test = holdout(rest, TEST_SHARE)
    split.loc[train.index] = "train"
    split.loc[test.index] = "test"
    return split


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's per-whale split (see the module docstring), images placed by hard link."""
    labelled = read_csv(raw / "train.csv")
    split = assign_splits(labelled)
    train = labelled[split == "train"]
    answers = labelled[split == "test"].copy()
    answers.loc[~answers["Id"].isin(set(train["Id"])), "Id"] = NEW_WHALE

    answers.to_csv(private / "test.csv", index=False)
    train.to_csv(public / "train.csv", index=False)
    answers.assign(Id=SAMPLE_GUESS).to_csv(public / "sample_submission.csv", index=False)
    for part, folder in ((train, "train"), (answers, "test")):
        place_files(
            ((raw / "train" / image, public / folder / image) for image in part["Image"]),
            f"{folder} images",
            len(part),
        )


STATEMENT = """\
# Humpback Whale Identification Challenge

Researchers recognise individual humpback whales by the shape and markings of their tail
flukes, photographed as the whale dives. Given a fluke photograph, name the whale: one of
the whales catalogued in the training set, or `new_whale` if it is none of them.

## Data (read-only, in {data_dir})
- `train/`: most of the 9,850 labelled photographs (JPEG, of varying size and quality,
  some in grayscale), `<8 hexadecimal characters>.jpg`.
- `train.csv`: `Image` (the file name) and `Id`: the whale (`w_` and 7 hexadecimal
  characters, e.g. `w_1287fbc`), or `new_whale` for photographs whose whale was not
  identified. Most whales have only one or two photographs; `new_whale` has hundreds.
- `test/`: the photographs to identify (roughly a quarter of the labelled set), named the
  same way. Every whale with at least two labelled photographs has one in `train/` and
  one in `test/`; a test photograph whose whale has no photograph in `train/`, or that
  was labelled `new_whale`, is to be answered `new_whale`.
- `sample_submission.csv`: a valid submission listing every test photograph (it guesses
  `new_whale` and the same four whales for all).

## Metric
Mean average precision at 5 (MAP@5). Each test photograph has one correct label; its
score is 1/k if the correct label is the k-th of your list (k <= 5), else 0. Only the
first five labels count, and a repeated label counts once (at its first rank).
`new_whale` is scored like any other label. The score is the mean over test photographs.
Higher is better.

## Submission
Write a CSV file to `{submission_path}` with exactly the header `Image,Id` and one row per
photograph in `test/`: up to five labels separated by single spaces, most likely first:

```
Image,Id
00029b3a.jpg,new_whale w_1287fbc w_98baff9 w_7554f44 w_1eafe46
0003c693.jpg,w_98baff9 new_whale w_1287fbc w_7554f44 w_1eafe46
```

Labels are compared as written (case and spaces matter). Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="whale-categorization-playground",
    name="Humpback Whale Identification Challenge",
    split="medium",
    metric="map_at_5",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="Image",
        columns=(Column("Id", "text"),),
        answers_file="test.csv",
        # MLE-bench refuses any column besides Image and Id.
        allow_extra_columns=False,
    ),
    raw_files=("train.csv", "train/*.jpg"),
    prepare=prepare,
    num_teams=529,
    thresholds=Thresholds(gold=0.56236, silver=0.44852, bronze=0.40515, median=0.32788),
    sample_score=0.11549,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "6ca155a2486ee7455662e159318b09df",
            "train.csv": "fe97ca1df1ac09c8c3c6a24853481f79",
        },
        private={"test.csv": "c86022f990b9fccf644806e023d24b51"},
    ),
)
