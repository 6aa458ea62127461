"""Facebook Recruiting III - Keyword Extraction: predict a question's tags, micro F1.

MLE-bench holds out 10% of Kaggle's labelled Train.csv (about 6 million Stack Exchange
questions, 7 GB inside Train.zip) as the test set. It loads the whole table; we stream it
from the zip in chunks (`mle_gym.competitions.chunked_holdout`) and write the same bytes.

Grading follows MLE-bench (`mle_gym.grading.metrics.tag_f1`): a predicted tag that no test
question carries is ignored rather than counted as a false positive, so spamming unknown
tags costs nothing, while spamming real tags lowers precision. MLE-bench's sample
submission keeps the questions' Title and Body beside Id and Tags; extra columns are
ignored, as MLE-bench ignores them.
"""

from __future__ import annotations

import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

from mle_gym.competitions.chunked_holdout import BLOCK_ROWS, append_csv, chunked_holdout
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
from mle_gym.lazy import pd

ARCHIVE = "Train.zip"
#: The tags MLE-bench's sample submission predicts for every question.
SAMPLE_TAGS = "javascript c# python php java"
#: Rows parsed at a time, and rows per block of the shuffled output (read at each call).
CHUNK_ROWS = 200_000
OUTPUT_BLOCK_ROWS = BLOCK_ROWS


def _questions(raw: Path) -> Iterator[pd.DataFrame]:
    """Train.csv in chunks, every column read as text (as MLE-bench reads Id and Tags)."""
    with zipfile.ZipFile(raw / ARCHIVE) as archive, archive.open("Train.csv") as handle:
        yield from read_csv(handle, dtype=str, chunksize=CHUNK_ROWS)


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split (see the module docstring), written block by block."""
    with tempfile.TemporaryDirectory(dir=private.parent) as workdir:
        train, test = chunked_holdout(
            lambda: _questions(raw), Path(workdir), block_rows=OUTPUT_BLOCK_ROWS
        )
        for number, block in enumerate(train):
            append_csv(block, public / "train.csv", number == 0)
        for number, block in enumerate(test):
            first = number == 0
            unlabelled = block.drop(columns="Tags")
            append_csv(unlabelled, public / "test.csv", first)
            append_csv(unlabelled.assign(Tags=SAMPLE_TAGS), public / "sample_submission.csv", first)
            append_csv(block, private / "test.csv", first)


def load_answers(private: Path) -> pd.DataFrame:
    """Id and Tags of the answers as written (the file also holds each question's text,
    hundreds of MB that grading does not need)."""
    return pd.read_csv(
        private / "test.csv",
        usecols=["Id", "Tags"],
        dtype=str,
        keep_default_na=False,
        na_filter=False,
    )


STATEMENT = """\
# Facebook Recruiting III - Keyword Extraction

Questions from Stack Exchange sites (Stack Overflow and many others, from programming and
mathematics to verbose-text sites) carry tags chosen by their authors. From a question's
title and body, predict its tags.

## Data (read-only, in {data_dir})
- `train.csv`: about 5.4 million tagged questions (over 6 GB). Columns:
  - `Id`: the question's integer id.
  - `Title`: the question's title.
  - `Body`: the question's text, as HTML (`<p>`, `<pre><code>`, ...), over many lines.
  - `Tags`: the target, space-separated lower-case tags, e.g. `c# asp.net-mvc linq`.
- `test.csv`: about 600,000 questions to tag: `Id`, `Title`, `Body`.
- `sample_submission.csv`: a valid submission in the right format (it predicts
  `javascript c# python php java` for every question; it also repeats `Title` and `Body`,
  which grading ignores).

The same question text can appear more than once. Reading `train.csv` in chunks (e.g.
pandas' `chunksize`) keeps memory in check.

## Metric
Micro-averaged F1 over tags: over all test questions together, TP counts predicted tags
the question has, FP predicted tags it does not have, FN its tags you missed;
F1 = 2 TP / (2 TP + FP + FN). Tags must match exactly (no synonyms); repeats in a row count
once, and a predicted tag that no test question has is ignored. Higher is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per `Id` in
`test.csv`; `Tags` holds your space-separated tags (it may be empty):

```
Id,Tags
1,"c++ javascript"
2,php python mysql
```

Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="facebook-recruiting-iii-keyword-extraction",
    name="Facebook Recruiting III - Keyword Extraction",
    split="medium",
    metric="micro_f1_tags",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="Id",
        columns=(Column("Tags", "text"),),
        answers_file="test.csv",
        load_answers=load_answers,
    ),
    raw_files=(ARCHIVE,),
    prepare=prepare,
    num_teams=371,
    thresholds=Thresholds(gold=0.79479, silver=0.76177, bronze=0.71345, median=0.60685),
    sample_score=0.07645,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "e4ea6ff928dff4bf2d2a5c3b0089402c",
            "test.csv": "10335b0f34418bb6a523506290aff802",
            "train.csv": "3e16dc3e4df1697f70c93cf6bb473eaf",
        },
        private={"test.csv": "1aeaa15b5bce7088a7d5423c2c404eca"},
    ),
    dev_variant=DevVariant(
        prepare=public_as_raw(prepare, zips={ARCHIVE: {"Train.csv": "train.csv"}})
    ),
)
