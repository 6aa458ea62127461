"""Jigsaw Unintended Bias in Toxicity Classification: toxicity scores judged with a bias AUC.

No split: Kaggle released the labels of its private test set (test_private_expanded.csv),
and MLE-bench uses that set as the test set and Kaggle's train.csv unchanged.

Grading follows MLE-bench's own variant of the metric exactly, thresholds included (see
`mle_gym.grading.metrics.jigsaw_bias`): predictions count only as >= 0.5 or not. Decisions
where MLE-bench's grader is loose: it also accepts a `toxicity` column in place of
`prediction` (to grade its own answer file); we require `prediction`, as the statement
says. It reads a missing prediction as non-toxic; we refuse empty or non-numeric cells.
Like MLE-bench we score `inf` and `-inf` (toxic and non-toxic: only the side of 0.5
counts).
"""

from __future__ import annotations

from pathlib import Path

from mle_gym.competitions.csv_io import read_csv
from mle_gym.competitions.dev_rules import holdout_as_raw
from mle_gym.competitions.hardlink_helpers import link_or_copy
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.lazy import pd

LABELLED_TEST = "test_private_expanded.csv"


def prepare(raw: Path, public: Path, private: Path) -> None:
    """Kaggle's labelled private test set is the test set; train.csv is used unchanged."""
    test = read_csv(raw / LABELLED_TEST, usecols=["id", "comment_text"])
    link_or_copy(raw / LABELLED_TEST, private / "test.csv")
    link_or_copy(raw / "train.csv", public / "train.csv")
    test.to_csv(public / "test.csv", index=False)
    test[["id"]].assign(prediction=0.0).to_csv(public / "sample_submission.csv", index=False)


def load_answers(private: Path) -> pd.DataFrame:
    """The test ids with their toxicity and identity flags packed into `prediction`."""
    # the metric module needs numpy and pandas: imported when grading, not at registration
    from mle_gym.formats.packed_answers import IDENTITIES, pack_labels

    answers = read_csv(
        private / "test.csv", usecols=["id", "toxicity", *IDENTITIES], dtype={"id": str}
    )
    return pd.DataFrame({"id": answers["id"], "prediction": pack_labels(answers).astype(str)})


STATEMENT = """\
# Jigsaw Unintended Bias in Toxicity Classification

Predict how toxic an online comment is, without being biased against the identities a
comment mentions. Models trained on such data learn to flag harmless comments that name
frequently attacked identities ("I am a gay woman"); this competition measures that bias.
The comments come from the Civil Comments platform (2015-2017); each was rated by several
human raters.

## Data (read-only, in {data_dir})
- `train.csv`: about 1.8 million labelled comments, 45 columns, among them:
  - `id` (integer), `comment_text`.
  - `target`: the share of raters who found the comment toxic (0 to 1); the comment is
    toxic when `target >= 0.5`.
  - toxicity subtypes, also shares of raters: `severe_toxicity`, `obscene`, `threat`,
    `insult`, `identity_attack`, `sexual_explicit`.
  - 24 identity columns (`male`, `female`, `transgender`, `homosexual_gay_or_lesbian`,
    `christian`, `jewish`, `muslim`, `black`, `white`, `psychiatric_or_mental_illness`,
    ...): the share of raters who found that identity mentioned; empty for the comments
    that were not rated for identities.
  - metadata: `created_date`, `publication_id`, `parent_id`, `article_id`, `rating`,
    reactions (`funny`, `wow`, `sad`, `likes`, `disagree`), `identity_annotator_count`,
    `toxicity_annotator_count`.
- `test.csv`: the comments to score, columns `id` and `comment_text`.
- `sample_submission.csv`: a valid submission in the right format (it predicts 0.0 for
  every comment).

Some different comments have exactly the same text. The data contains profane, vulgar and
offensive text.

## Metric
Your predictions and the true toxicity are first turned into 0 or 1 at 0.5 (a value
`>= 0.5` is toxic), and a test comment mentions an identity when at least half its raters
said so. Nine identities count: male, female, homosexual_gay_or_lesbian, christian, jewish,
muslim, black, white, psychiatric_or_mental_illness. For each identity, three ROC AUCs are
computed: on the comments that mention it (subgroup AUC); on the non-toxic comments that
mention it together with the toxic comments that do not (BPSN); and on the toxic comments
that mention it together with the non-toxic ones that do not (BNSP). Each kind is combined
over the nine identities by a power mean with p = -5, which is dominated by the worst
identity. The score is 0.25 x the AUC over all comments + 0.25 x each of the three power
means. Higher is better. Since only the side of 0.5 counts, the score rewards a good
decision threshold rather than a fine ranking.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per `id` in
`test.csv`:

```
id,prediction
7097320,0.0
7097321,0.83
```

`prediction` must be a number (a toxicity probability is expected). Put your code in
`{code_dir}`.
"""

COMPETITION = Competition(
    id="jigsaw-unintended-bias-in-toxicity-classification",
    name="Jigsaw Unintended Bias in Toxicity Classification",
    split="medium",
    metric="jigsaw_bias_auc",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="id",
        columns=(Column("prediction", "number", infinite=True),),
        answers_file="test.csv",
        load_answers=load_answers,
    ),
    raw_files=("train.csv", LABELLED_TEST),
    prepare=prepare,
    num_teams=2634,
    thresholds=Thresholds(gold=0.94608, silver=0.94304, bronze=0.94088, median=0.93417),
    sample_score=0.5,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "6f6dce475d8d7d068e965f57dd491e03",
            "test.csv": "a887551e003361bad9e054d7501333cd",
            "train.csv": "7a687c299462dd009e90db97ac053eef",
        },
        private={"test.csv": "57d838e932f0d2a66785f7b719adfd91"},
    ),
    # No split to repeat (Kaggle labelled its own test comments): a tenth of the public
    # training comments, seed 0, becomes the labelled test file, `target` named as there.
    dev_variant=DevVariant(
        prepare=holdout_as_raw(
            prepare,
            LABELLED_TEST,
            shape=lambda test: test.rename(columns={"target": "toxicity"}),
        )
    ),
)
