"""Google QUEST Q&A Labeling: 30 subjective ratings of question-answer pairs, mean Spearman.

MLE-bench holds out 10% of Kaggle's labelled train.csv. `question_type_spelling` is almost
always 0; when the held-out rows have a single value there, MLE-bench swaps the first test
row with the first training row that is not 0, so that every answer column varies.

Grading decisions: a submission must be exactly `qa_id` and the 30 targets (MLE-bench
refuses any other column count). A prediction column holding one value everywhere makes
MLE-bench's score NaN; here it is an invalid submission that names the column (see
`mle_gym.grading.metrics.column_spearman`). Values are ranked only, so any finite number is
accepted, as MLE-bench does.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from mle_gym.competitions.csv_io import read_csv
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    SubmissionFormat,
    Thresholds,
)

QUESTION_TARGETS = (
    "question_asker_intent_understanding",
    "question_body_critical",
    "question_conversational",
    "question_expect_short_answer",
    "question_fact_seeking",
    "question_has_commonly_accepted_answer",
    "question_interestingness_others",
    "question_interestingness_self",
    "question_multi_intent",
    "question_not_really_a_question",
    "question_opinion_seeking",
    "question_type_choice",
    "question_type_compare",
    "question_type_consequence",
    "question_type_definition",
    "question_type_entity",
    "question_type_instructions",
    "question_type_procedure",
    "question_type_reason_explanation",
    "question_type_spelling",
    "question_well_written",
)
ANSWER_TARGETS = (
    "answer_helpful",
    "answer_level_of_information",
    "answer_plausible",
    "answer_relevance",
    "answer_satisfaction",
    "answer_type_instructions",
    "answer_type_procedure",
    "answer_type_reason_explanation",
    "answer_well_written",
)
TARGETS = QUESTION_TARGETS + ANSWER_TARGETS
RARE = "question_type_spelling"


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split (see the module docstring); the sample ranks rows in file order."""
    from sklearn.model_selection import train_test_split

    train, test = train_test_split(read_csv(raw / "train.csv"), test_size=0.1, random_state=0)
    if test[RARE].nunique() == 1:
        donor = train.index[train[RARE] != 0][0]
        first_test_row = test.iloc[0].copy()
        test.iloc[0] = train.loc[donor].copy()
        train.loc[donor] = first_test_row

    answers = test[["qa_id", *TARGETS]]
    sample = answers.copy()
    sample[list(TARGETS)] = np.tile(np.linspace(0, 1, len(sample))[:, None], (1, len(TARGETS)))

    answers.to_csv(private / "test.csv", index=False)
    train.to_csv(public / "train.csv", index=False)
    test.drop(columns=list(TARGETS)).to_csv(public / "test.csv", index=False)
    sample.to_csv(public / "sample_submission.csv", index=False)


STATEMENT = """\
# Google QUEST Q&A Labeling

Questions and answers from StackExchange sites were rated by human raters on 30
subjective aspects: is the question well written, does it seek an opinion or a fact, is
the answer helpful, plausible, an instruction, ... For each test question-answer pair,
predict the 30 ratings.

## Data (read-only, in {data_dir})
- `train.csv`: rated pairs. Columns:
  - `qa_id`: the pair's integer id.
  - `question_title`, `question_body`, `question_user_name`, `question_user_page`.
  - `answer`, `answer_user_name`, `answer_user_page`.
  - `url`, `category` (CULTURE, LIFE_ARTS, SCIENCE, STACKOVERFLOW, TECHNOLOGY), `host`
    (the StackExchange site).
  - the 30 targets, 21 named `question_*` (about the title and body) and 9 named
    `answer_*` (about the answer); each is the raters' average, a value in [0, 1].
- `test.csv`: the pairs to rate, the first 11 columns above without the targets.
- `sample_submission.csv`: a valid submission in the right format (every column ranks
  the rows in file order, from 0 to 1).

Some questions appear several times with different answers, possibly in both files.

## Metric
For each of the 30 targets, Spearman's rank correlation between your predictions and the
ratings over the test pairs; the score is the mean of the 30. Only the order of the
predictions within a column matters. A column with the same value in every row has no
order and makes the submission invalid. Higher is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per `qa_id` in
`test.csv`, holding exactly `qa_id` and the 30 target columns (no other column):

```
qa_id,question_asker_intent_understanding,...,answer_well_written
39,0.92,...,0.87
46,0.71,...,0.90
```

Every target cell must be a number (values in [0, 1] are expected). Put your code in
`{code_dir}`.
"""

COMPETITION = Competition(
    id="google-quest-challenge",
    name="Google QUEST Q&A Labeling",
    split="medium",
    metric="mean_column_spearman",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="qa_id",
        columns=tuple(Column(name, "number") for name in TARGETS),
        answers_file="test.csv",
        allow_extra_columns=False,
    ),
    raw_files=("train.csv",),
    prepare=prepare,
    num_teams=1572,
    thresholds=Thresholds(gold=0.42278, silver=0.39597, bronze=0.37496, median=0.357205),
    sample_score=-0.01016,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "ba75781e8b1a5936533c4de82e515c98",
            "test.csv": "06f482b597547c3c975ff1fc59314011",
            "train.csv": "f41aa13133d70b94bfa53801762937aa",
        },
        private={"test.csv": "2bc3cc2878f0c50a05858f6562b12469"},
    ),
)
