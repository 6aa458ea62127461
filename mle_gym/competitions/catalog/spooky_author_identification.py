"""Spooky Author Identification: which of three horror writers wrote a sentence."""

from __future__ import annotations

import zipfile
from pathlib import Path

from mle_gym.competitions.csv_io import read_csv
from mle_gym.competitions.dev_rules import public_as_raw
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.lazy import pd, train_test_split

AUTHORS = ("EAP", "HPL", "MWS")
#: The constant probabilities of Kaggle's sample submission (the authors' shares in train).
SAMPLE_PROBABILITIES = {
    "EAP": 0.403493538995863,
    "HPL": 0.287808366106543,
    "MWS": 0.308698094897594,
}


def one_hot(frame: pd.DataFrame) -> pd.DataFrame:
    """The answers as the submission is shaped: id, then a 0/1 column per author."""
    unknown = set(frame["author"]) - set(AUTHORS)
    if unknown:
        raise ValueError(f"unexpected authors in train.csv: {sorted(unknown)}")
    columns = {author: (frame["author"] == author).astype("int64") for author in AUTHORS}
    return pd.DataFrame({"id": frame["id"], **columns})


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split: 10% of Kaggle's labelled sentences become the hidden test set."""
    with zipfile.ZipFile(raw / "train.zip") as archive, archive.open("train.csv") as handle:
        original = read_csv(handle)
    train, test = train_test_split(original, test_size=0.1, random_state=0)

    answers = one_hot(test)
    sample = pd.DataFrame({"id": answers["id"], **SAMPLE_PROBABILITIES})

    train.to_csv(public / "train.csv", index=False)
    test.drop(columns="author").to_csv(public / "test.csv", index=False)
    sample.to_csv(public / "sample_submission.csv", index=False)
    answers.to_csv(private / "test.csv", index=False)


STATEMENT = """\
# Spooky Author Identification

Each text is a sentence (the split into sentences was automatic, so a few are fragments)
from the fiction of one of three horror writers: Edgar Allan Poe (`EAP`), H. P. Lovecraft
(`HPL`) or Mary Wollstonecraft Shelley (`MWS`). For every test sentence, predict the
probability that each author wrote it.

## Data (read-only, in {data_dir})
- `train.csv`: sentences with their author. Columns `id` (e.g. `id26305`), `text` and
  `author` (`EAP`, `HPL` or `MWS`).
- `test.csv`: the sentences to attribute, columns `id` and `text`.
- `sample_submission.csv`: a valid submission in the right format (it gives every
  sentence the same probabilities, each author's share of the training sentences).

## Metric
Multi-class logarithmic loss: the mean over test sentences of `-log(p)`, where `p` is the
probability you gave to the true author. Probabilities are clipped to
[2.2e-16, 1 - 2.2e-16] before taking the logarithm, so a confident wrong answer is very
costly. Lower is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per sentence in
`test.csv`:

```
id,EAP,HPL,MWS
id02310,0.6,0.3,0.1
id24541,0.05,0.05,0.9
```

Every probability must lie in [0, 1] and the three values of a row must sum to one (within
1e-5); they are not rescaled for you. Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="spooky-author-identification",
    name="Spooky Author Identification",
    split="lite",
    metric="multiclass_log_loss",
    lower_is_better=True,
    submission=SubmissionFormat(
        id_column="id",
        columns=tuple(Column(author, "probability") for author in AUTHORS),
        answers_file="test.csv",
        allow_extra_columns=False,
    ),
    raw_files=("train.zip",),
    prepare=prepare,
    num_teams=1242,
    thresholds=Thresholds(gold=0.16506, silver=0.26996, bronze=0.29381, median=0.418785),
    sample_score=1.08468,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "3b754ff50b2b4416150bb00c86c34889",
            "test.csv": "2ea5096a8e8cf340b13a7a18d9bdd914",
            "train.csv": "1124166bf7b8b1e337a32fe568732447",
        },
        private={"test.csv": "fb1381c6c9a7e9efd236c625807a0c8a"},
    ),
    dev_variant=DevVariant(
        prepare=public_as_raw(prepare, zips={"train.zip": {"train.csv": "train.csv"}})
    ),
)
