"""Tweet Sentiment Extraction: pick the words of a tweet that carry its labelled sentiment.

MLE-bench holds out 10% of Kaggle's labelled tweets as the test set and grades the mean
word-level Jaccard similarity (`tweet_word_jaccard` metric). Its grader reads the cells with
pandas, so an empty cell and pandas' missing-value spellings (`NA`, `None`, `nan`, ...)
count as an empty prediction; we fold them the same way. Where both the answer and the
prediction have no words, MLE-bench divides by zero and refuses the submission; we score
that row 1 (only possible if a held-out answer is empty). The sample submission predicts
the empty string everywhere and scores 0.
"""

from __future__ import annotations

from pathlib import Path

from mle_gym.competitions.holdout import prepare_csv_holdout
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    SubmissionFormat,
    Thresholds,
)


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split; the sample submission selects nothing (empty strings)."""
    prepare_csv_holdout(
        raw, public, private, id_column="textID", sample_values={"selected_text": ""}
    )


STATEMENT = """\
# Tweet Sentiment Extraction

Each tweet comes with its sentiment (positive, negative or neutral). Find the word or
phrase of the tweet that supports that sentiment: for "My ridiculous dog is amazing."
labelled positive, the answer might be "amazing.".

## Data (read-only, in {data_dir})
- `train.csv`: labelled tweets. Columns:
  - `textID`: a 10-character identifier.
  - `text`: the tweet (it may contain commas, quotes, URLs and leading spaces, and in
    rare cases be empty).
  - `selected_text`: the target, a span copied from `text` (punctuation included); for
    neutral tweets it is often the whole tweet.
  - `sentiment`: `positive`, `negative` or `neutral`.
- `test.csv`: the tweets to process, columns `textID`, `text` and `sentiment`.
- `sample_submission.csv`: a valid submission in the right format (it selects nothing,
  leaving `selected_text` empty, and scores 0).

The data contains profane, vulgar and offensive text.

## Metric
Word-level Jaccard similarity, averaged over the test tweets. Both strings are
lower-cased and split on whitespace into sets of words (punctuation stays attached to its
word, so `amazing.` differs from `amazing`); a tweet scores the number of shared words
divided by the number of distinct words in either set. An empty cell, and the spellings
pandas reads as missing (`NA`, `None`, `nan`, `null`, ...), count as selecting nothing.
Higher is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per `textID` in
`test.csv`. Quote `selected_text` (it may contain commas and quotes):

```
textID,selected_text
f87dea47db,"Last session of the day"
96d74cb729,"shanghai is also really exciting"
```

Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="tweet-sentiment-extraction",
    name="Tweet Sentiment Extraction",
    split="medium",
    metric="tweet_word_jaccard",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="textID",
        columns=(Column("selected_text", "text"),),
        answers_file="test.csv",
    ),
    raw_files=("train.csv",),
    prepare=prepare,
    num_teams=2225,
    thresholds=Thresholds(gold=0.72689, silver=0.71752, bronze=0.71705, median=0.71378),
    sample_score=0.0,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "0341dc99c0063baba150e1e64d8b5000",
            "test.csv": "b52b4f32e127ea49f8f0d218527fa93f",
            "train.csv": "4248531bac2a97518a553a38d05355ac",
        },
        private={"test.csv": "f67a6c60b4b93ad6a7a248a0dfcae16c"},
    ),
)
