"""chaii - Hindi and Tamil Question Answering: extract the answer span, word-level Jaccard.

MLE-bench holds out 10% of Kaggle's labelled train.csv as the test set. Its grader reads
the submission with pandas' defaults, so a `PredictionString` column that is numeric in
every row (e.g. all answers are years) crashes it and the submission counts as invalid;
we grade the cells as the text they are, which scores such a file like any other.
"""

from __future__ import annotations

from pathlib import Path

from mle_gym.competitions.csv_io import read_csv
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    SubmissionFormat,
    Thresholds,
)

#: What MLE-bench's sample submission answers for every question.
SAMPLE_ANSWER = "dummy text"


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split: 10% of the labelled questions become the hidden test set."""
    from sklearn.model_selection import train_test_split

    train, test = train_test_split(read_csv(raw / "train.csv"), test_size=0.1, random_state=0)
    answers = test[["id", "answer_text"]].set_axis(["id", "PredictionString"], axis=1)

    train.to_csv(public / "train.csv", index=False)
    test.drop(columns=["answer_start", "answer_text"]).to_csv(public / "test.csv", index=False)
    answers.to_csv(private / "test.csv", index=False)
    answers.assign(PredictionString=SAMPLE_ANSWER).to_csv(
        public / "sample_submission.csv", index=False
    )


STATEMENT = """\
# chaii - Hindi and Tamil Question Answering

Answer questions written in Hindi or Tamil by native speakers about Wikipedia articles in
the same language. Each question comes with the article's text (the context); the answer
is a span of that text.

## Data (read-only, in {data_dir})
- `train.csv`: questions with their answers. Columns:
  - `id`: a unique identifier.
  - `context`: the article text the answer comes from (long, multi-line text).
  - `question`: the question.
  - `answer_text`: the answer, as it appears in the context.
  - `answer_start`: the character offset of the answer in `context` (found automatically
    as the first occurrence of the answer, so it is sometimes not the intended one).
  - `language`: `hindi` or `tamil`.
- `test.csv`: the questions to answer: `id`, `context`, `question`, `language`.
- `sample_submission.csv`: a valid submission in the right format (it answers
  `dummy text` to every question).

About two thirds of the questions are in Hindi. All files are UTF-8. Training answers
were given by one annotator and can be noisy.

## Metric
Word-level Jaccard score: the answer and your prediction are lower-cased and split on
whitespace into sets of words; a row scores |common words| / |all words of both|, and the
score is the mean over the test questions. Punctuation stays attached to the words, so
include it as it appears in the context. An empty prediction (or one pandas reads as
missing, such as `NA` or `None`) scores 0. Higher is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per `id` in
`test.csv` (quote answers that contain commas or quotes):

```
id,PredictionString
8c8ee6504,"१९४७"
3163c22d0,"சென்னை நகரம்"
```

Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="chaii-hindi-and-tamil-question-answering",
    name="Hindi and Tamil Question Answering",
    split="medium",
    metric="word_jaccard",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="id",
        columns=(Column("PredictionString", "text"),),
        answers_file="test.csv",
    ),
    raw_files=("train.csv",),
    prepare=prepare,
    num_teams=943,
    thresholds=Thresholds(gold=0.76305, silver=0.73984, bronze=0.73725, median=0.72756),
    sample_score=0.0,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "772a81a2f11029153ebe965572fd9410",
            "test.csv": "f0fe24d3f56320b3d1dae5a66aef0fac",
            "train.csv": "b032f44429b21d64a103a3e7f8d61ad0",
        },
        private={"test.csv": "3ae8b59f0ae28791170f45313fdf0432"},
    ),
)
