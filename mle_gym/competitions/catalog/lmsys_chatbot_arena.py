"""LMSYS - Chatbot Arena Human Preference Predictions: which of two chatbot answers a user
preferred, graded by multi-class log loss.

MLE-bench holds out 10% of Kaggle's judged conversations as the test set (the public test
keeps only the prompt and the two responses, not the models' names). Its grader refuses
probabilities outside [0, 1] and rows whose sum, rounded to six decimals, is not exactly 1
(`lmsys` metric); it then computes scikit-learn's log loss, which clips probabilities and
does not rescale rows (the project's `multiclass_log_loss`). Extra columns are ignored.
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
from mle_gym.competitions.streamed_split import NotStreamable, Output, holdout_order, split_csv
from mle_gym.lazy import pd

OUTCOMES = ("winner_model_a", "winner_model_b", "winner_tie")
#: The sample submission's probability for each outcome, as MLE-bench writes it.
THIRD = 0.3333333333333333
#: The public test's columns (the models' names and the verdicts are left out).
TEST_COLUMNS = ("id", "prompt", "response_a", "response_b")


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split (10% of Kaggle's judged conversations become the hidden test set),
    streamed (see `streamed_split`; quoted cells may hold line breaks): the bytes of
    `prepare_in_memory` in bounded memory."""
    try:
        split_csv(
            raw / "train.csv",
            lambda rows: holdout_order(rows, 0.1),
            [
                [Output(public / "train.csv")],
                [
                    Output(private / "answers.csv"),
                    Output(public / "test.csv", lambda rows, _: rows[list(TEST_COLUMNS)]),
                    Output(public / "sample_submission.csv", _sample),
                ],
            ],
        )
    except NotStreamable:
        prepare_in_memory(raw, public, private)


def _sample(rows: pd.DataFrame, _rank: object) -> pd.DataFrame:
    return rows[["id"]].assign(**dict.fromkeys(OUTCOMES, THIRD))


def prepare_in_memory(raw: Path, public: Path, private: Path) -> None:
    """The reference: the whole table in memory, as MLE-bench does; the sample gives each
    outcome a third."""
    prepare_csv_holdout(
        raw,
        public,
        private,
        id_column="id",
        sample_values=dict.fromkeys(OUTCOMES, THIRD),
        answers_file="answers.csv",
        test_columns=TEST_COLUMNS,
    )


STATEMENT = """\
# LMSYS - Chatbot Arena Human Preference Predictions

In Chatbot Arena, a user sends one or more prompts to two anonymous large language
models, reads both conversations, and votes for the better one, or for a tie. Predict,
for each test conversation, the probability of each of the three verdicts. This is the
task of a reward (preference) model; known human biases include favouring the first
answer shown and longer answers.

## Data (read-only, in {data_dir})
- `train.csv`: judged conversations. Columns:
  - `id`: an integer identifier.
  - `model_a`, `model_b`: the names of the two models (only in train).
  - `prompt`: the user's prompts, a JSON list of strings (one per turn).
  - `response_a`, `response_b`: each model's replies, JSON lists aligned with `prompt`
    (a reply may be `null`).
  - `winner_model_a`, `winner_model_b`, `winner_tie`: the targets, one-hot (exactly one
    of them is 1).
- `test.csv`: the conversations to predict, columns `id`, `prompt`, `response_a` and
  `response_b`.
- `sample_submission.csv`: a valid submission in the right format (a third for each
  verdict).

The data contains text that may be profane, vulgar or offensive.

## Metric
Multi-class logarithmic loss: the mean over test conversations of `-log(p)`, where `p` is
the probability you gave to the user's actual verdict. Probabilities are clipped to
[2.2e-16, 1 - 2.2e-16] before taking the logarithm. Lower is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per `id` in
`test.csv`:

```
id,winner_model_a,winner_model_b,winner_tie
136060,0.4,0.35,0.25
211333,0.2,0.5,0.3
```

Every probability must lie in [0, 1], and the three values of each row, summed and
rounded to 6 decimals, must equal exactly 1 (they are not rescaled for you). Put your
code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="lmsys-chatbot-arena",
    name="LMSYS - Chatbot Arena Human Preference Predictions",
    split="medium",
    metric="log_loss_sum_rounds_to_one",
    lower_is_better=True,
    submission=SubmissionFormat(
        id_column="id",
        columns=tuple(Column(outcome, "probability") for outcome in OUTCOMES),
        answers_file="answers.csv",
    ),
    raw_files=("train.csv",),
    prepare=prepare,
    num_teams=1688,
    thresholds=Thresholds(gold=0.98392, silver=0.99277, bronze=1.00283, median=1.05212),
    sample_score=1.09861,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "e67f89b25eb382df62d821e72bed8d4b",
            "test.csv": "fa5d6d46adf7cfa5d7f7dc3ef3e358c8",
            "train.csv": "e11dec14f6fc839a97fb21abcaebdaa4",
        },
        private={"answers.csv": "43ef7dc300c731231796afc046cf4230"},
    ),
)
