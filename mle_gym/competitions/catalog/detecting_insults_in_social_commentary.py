"""Detecting Insults in Social Commentary: is a comment an insult? Graded by ROC AUC.

Kaggle released the labels of its test set, so MLE-bench keeps Kaggle's own split; rows are
identified by the comment text itself (the files have no id column).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from mle_gym.competitions.csv_io import read_csv
from mle_gym.competitions.dev_rules import holdout_as_raw
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    SubmissionFormat,
    Thresholds,
)


def prepare(raw: Path, public: Path, private: Path) -> None:
    """Copy train and the labelled test; rebuild the public test and a null sample from it."""
    shutil.copyfile(raw / "train.csv", public / "train.csv")
    shutil.copyfile(raw / "test_with_solutions.csv", private / "test.csv")

    gold = read_csv(raw / "test_with_solutions.csv")[["Insult", "Date", "Comment"]]
    gold.to_csv(private / "gold_submission.csv", index=False)
    gold.drop(columns="Insult").to_csv(public / "test.csv", index=False)

    null_sample = gold.copy()
    null_sample["Insult"] = 0
    null_sample.to_csv(public / "sample_submission_null.csv", index=False)


STATEMENT = """\
# Detecting Insults in Social Commentary

Decide which comments, posted in online news and discussion threads, insult another person
taking part in the conversation. Insults aimed at people outside the conversation (a
celebrity, a politician) do not count, and neither does mere profanity or racism with no
target in the thread. Labels come from human annotators and are somewhat noisy.

## Data (read-only, in {data_dir})
- `train.csv`: labelled comments. Columns:
  - `Insult`: the target, `1` for an insult and `0` otherwise.
  - `Date`: when the comment was posted, as `YYYYMMDDhhmmssZ` (e.g. `20120618192155Z`);
    often blank.
  - `Comment`: the text, wrapped in an extra pair of double quotes and with unicode
    escapes written out (e.g. `\\xa0`, `\\n`).
- `test.csv`: the comments to score, columns `Date` and `Comment`.
- `sample_submission_null.csv`: a valid submission predicting `0` for every comment.

## Metric
Area under the ROC curve between your scores and the true `Insult` labels. Only the
ranking of the scores matters. Higher is better.

## Submission
Write a CSV file to `{submission_path}` with the columns `Insult`, `Date` and `Comment`
and one row per row of `test.csv`. Rows are matched on the `Comment` text, so copy it
unchanged from `test.csv`; `Insult` is your probability that the comment is an insult,
a number between 0 and 1:

```
Insult,Date,Comment
0.93,20120611202936Z,\"\"\"Hey race baiter take a hike you are a typical idiot\"\"\"
0.04,20120528221803Z,\"\"\"Then you don't understand basketball.\"\"\"
```

Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="detecting-insults-in-social-commentary",
    name="Detecting Insults in Social Commentary",
    split="lite",
    metric="roc_auc",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="Comment",
        columns=(Column("Insult", "probability"),),
        answers_file="test.csv",
        sample_file="sample_submission_null.csv",
    ),
    raw_files=("train.csv", "test_with_solutions.csv"),
    prepare=prepare,
    num_teams=50,
    thresholds=Thresholds(gold=0.83321, silver=0.82307, bronze=0.79111, median=0.77842),
    sample_score=0.5,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission_null.csv": "a0dcbebb9f3aa642325ec3b83dacafa1",
            "test.csv": "6dd3e4189309b7b513fcf124be21c790",
            "train.csv": "60f8ff55967759d144efd4f055f37673",
        },
        private={
            "gold_submission.csv": "937dc9172f07ab3f72f123c79e37652c",
            "test.csv": "76d6e15e475a2fd634bdd8cdfb4746c0",
        },
    ),
    dev_variant=DevVariant(
        prepare=holdout_as_raw(
            prepare, "test_with_solutions.csv", shape=lambda test: test.assign(Usage="PrivateTest")
        )
    ),
)
