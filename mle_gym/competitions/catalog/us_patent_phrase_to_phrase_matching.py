"""U.S. Patent Phrase to Phrase Matching: rate how similar two phrases are within a CPC context.

MLE-bench holds out 10% of Kaggle's labelled pairs as the test set and grades the Pearson
correlation of the predicted and true scores (scipy). Its sample submission predicts 0 for
every pair, and a constant column has no correlation: scipy returns NaN, so MLE-bench's
sample score is NaN. We score a constant column 0 instead (see the `pearson` metric), so
no submission yields a NaN reward and the sample is the normalisation's zero. Empty or
non-finite scores, which MLE-bench would also turn into NaN, are refused.
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
    """MLE-bench's split; the sample submission predicts 0 for every pair."""
    prepare_csv_holdout(raw, public, private, id_column="id", sample_values={"score": 0})


STATEMENT = """\
# U.S. Patent Phrase to Phrase Matching

Patent examiners and attorneys search for earlier inventions that describe the same thing
in other words ("television set" and "TV set"). Given two phrases from patents, an
`anchor` and a `target`, and the Cooperative Patent Classification (CPC) code of the
subject they belong to, predict how similar their meanings are within that subject.

## Data (read-only, in {data_dir})
- `train.csv`: rated pairs. Columns:
  - `id`: a 16-character hexadecimal identifier of the pair.
  - `anchor`, `target`: the two phrases (an anchor appears in many pairs).
  - `context`: the CPC classification code (version 2021.05) of the subject, e.g. `H04`;
    similarity is judged within it.
  - `score`: the target, from 0 to 1 in steps of 0.25: 1 very close match (the same
    phrase up to conjugation, plural or stopwords), 0.75 close synonym or abbreviation,
    0.5 synonyms with different meanings (e.g. broader or narrower terms), 0.25 somewhat
    related (same domain, or antonyms), 0 unrelated. It combines one or more expert
    ratings.
- `test.csv`: the pairs to rate, same columns without `score`.
- `sample_submission.csv`: a valid submission in the right format (it predicts 0 for
  every pair).

## Metric
The Pearson correlation coefficient between your predicted and the true scores over all
test pairs. Only the linear relationship matters, so predictions need not lie in [0, 1].
A constant prediction has no defined correlation and scores 0. Higher is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per `id` in
`test.csv`:

```
id,score
4112d61851461f60,0
09e418c93a776564,0.25
36baf228038e314b,1
```

`score` must be a finite number. Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="us-patent-phrase-to-phrase-matching",
    name="U.S. Patent Phrase to Phrase Matching",
    split="medium",
    metric="pearson_correlation",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="id",
        columns=(Column("score", "number"),),
        answers_file="test.csv",
    ),
    raw_files=("train.csv",),
    prepare=prepare,
    num_teams=1889,
    thresholds=Thresholds(gold=0.87, silver=0.863, bronze=0.8616, median=0.851),
    sample_score=0.0,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "282590a9bcbf32edf5d351a40a30c6a0",
            "test.csv": "ea1dccd31666f938f0ae7632c69c95c6",
            "train.csv": "48042478b2d9a8f36d614589b7ee86e4",
        },
        private={"test.csv": "34f67932a2c9f49169cdccf5e7bbc57f"},
    ),
)
