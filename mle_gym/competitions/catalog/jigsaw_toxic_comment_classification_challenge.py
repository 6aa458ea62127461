"""Toxic Comment Classification Challenge: six toxicity labels per comment, mean ROC AUC.

Kaggle released its test labels, so MLE-bench keeps Kaggle's split and uses test_labels.csv
as the answers. Rows Kaggle never scored carry -1 in every label; the metric skips them, so
the label columns are plain numbers rather than probabilities (the answers hold -1).
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from mle_gym.competitions.csv_io import read_csv
from mle_gym.competitions.holdout import holdout
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.lazy import pd

CLASSES = ("toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate")


def _read_zipped(raw: Path, name: str) -> pd.DataFrame:
    """Read `name` from Kaggle's `name.zip`, which holds that one CSV."""
    with zipfile.ZipFile(raw / f"{name}.zip") as zf, zf.open(name) as handle:
        return read_csv(handle)


def prepare(raw: Path, public: Path, private: Path) -> None:
    """Re-write Kaggle's files through pandas; the sample predicts 0.5 for every label."""
    _write(
        _read_zipped(raw, "train.csv"),
        _read_zipped(raw, "test.csv"),
        _read_zipped(raw, "test_labels.csv"),
        _read_zipped(raw, "sample_submission.csv")[["id"]],
        public,
        private,
    )


def _write(
    train: pd.DataFrame,
    test: pd.DataFrame,
    labels: pd.DataFrame,
    sample_ids: pd.DataFrame,
    public: Path,
    private: Path,
) -> None:
    train.to_csv(public / "train.csv", index=False)
    test.to_csv(public / "test.csv", index=False)
    sample_ids.assign(**dict.fromkeys(CLASSES, 0.5)).to_csv(
        public / "sample_submission.csv", index=False
    )
    labels.to_csv(private / "test.csv", index=False)


def prepare_dev(folder: Path, public: Path, private: Path) -> None:
    """The development split: Kaggle's test comments were labelled apart from its training
    ones, so a tenth of the public training comments is held out (seed 0) and written as
    `prepare` writes Kaggle's test comments, their labels and the sample."""
    train, held_out = holdout(read_csv(folder / "train.csv"))
    test = held_out[["id", "comment_text"]]
    _write(train, test, held_out[["id", *CLASSES]], test[["id"]], public, private)


STATEMENT = """\
# Toxic Comment Classification Challenge

The comments come from Wikipedia talk pages, where editors discuss changes to articles.
Human raters marked each comment with six kinds of toxicity, and a comment can have any
number of them. For each test comment, predict the probability of each kind.

## Data (read-only, in {data_dir})
- `train.csv`: labelled comments. Columns:
  - `id`: a 16-character hexadecimal identifier.
  - `comment_text`: the comment (multi-line text, quoted in the CSV).
  - `toxic`, `severe_toxic`, `obscene`, `threat`, `insult`, `identity_hate`: the targets,
    `1` if the comment has that kind of toxicity and `0` otherwise.
- `test.csv`: the comments to predict, columns `id` and `comment_text`.
- `sample_submission.csv`: a valid submission predicting 0.5 everywhere.

The data contains profane, vulgar and offensive text.

## Metric
For each of the six labels, the area under the ROC curve between your predictions and the
true labels; the score is the mean of the six. Some test comments were never labelled and
are not scored, but your file must still have a row for each. Only the ranking of the
predictions within each column matters. Higher is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per `id` in
`test.csv`:

```
id,toxic,severe_toxic,obscene,threat,insult,identity_hate
00001cee341fdb12,0.98,0.31,0.87,0.04,0.79,0.12
0000247867823ef7,0.01,0.00,0.01,0.00,0.01,0.00
```

Every label column must hold a number (a probability is expected); write no other
columns. Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="jigsaw-toxic-comment-classification-challenge",
    name="Toxic Comment Classification Challenge",
    split="lite",
    metric="roc_auc_scored_rows",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="id",
        columns=tuple(Column(name, "number") for name in CLASSES),
        answers_file="test.csv",
        # MLE-bench scores every submitted column against the six labels, so an extra
        # column makes the shapes differ and the submission invalid there.
        allow_extra_columns=False,
    ),
    raw_files=(
        "train.csv.zip",
        "test.csv.zip",
        "test_labels.csv.zip",
        "sample_submission.csv.zip",
    ),
    prepare=prepare,
    num_teams=4539,
    thresholds=Thresholds(gold=0.9874, silver=0.98668, bronze=0.98639, median=0.98079),
    sample_score=0.5,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "2af5ed06d19b00c13c0573b474edb165",
            "test.csv": "d21e68ec9e3728be456aa0f477be230c",
            "train.csv": "7ed6a529f1671bd558cf581831d3462b",
        },
        private={"test.csv": "c23029ecede85b3adfbc2527e7812b84"},
    ),
    dev_variant=DevVariant(prepare=prepare_dev),
)
