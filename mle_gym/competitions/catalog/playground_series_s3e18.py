"""Playground Series S3E18: two of six enzyme-class labels per molecule, mean ROC AUC.

MLE-bench holds out 10% of Kaggle's labelled rows (random_state=0), keeps their original ids,
and scores the macro ROC AUC of EC1 and EC2. AUC only ranks the predictions, so any finite
number is scored, as MLE-bench scores it (kind "score": outside [0, 1] with a warning).
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

GRADED = ("EC1", "EC2")
LABELS = ("EC1", "EC2", "EC3", "EC4", "EC5", "EC6")


def prepare(raw: Path, public: Path, private: Path) -> None:
    """10% of train.csv becomes the test set; the sample predicts 0.5 for both labels."""
    from sklearn.model_selection import train_test_split

    train, test = train_test_split(read_csv(raw / "train.csv"), test_size=0.1, random_state=0)
    sample = test[["id"]].assign(**dict.fromkeys(GRADED, 0.5))

    sample.to_csv(public / "sample_submission.csv", index=False)
    test.to_csv(private / "test.csv", index=False)
    train.to_csv(public / "train.csv", index=False)
    test.drop(columns=list(LABELS)).to_csv(public / "test.csv", index=False)


STATEMENT = """\
# Explore Multi-Label Classification with an Enzyme Substrate Dataset

A Kaggle Playground competition on synthetic data: a deep learning model, trained on a
real data set of enzyme substrates, generated molecules with a few chemical descriptors and
the enzyme classes (EC numbers) they belong to. A molecule can belong to several classes.
Predict, for each test molecule, the probability of belonging to classes EC1 and EC2.

## Data (read-only, in {data_dir})
- `train.csv`: labelled molecules. Columns:
  - `id`: the row identifier.
  - 31 numeric molecular descriptors (e.g. `BertzCT`, `Chi1`, `ExactMolWt`,
    `FpDensityMorgan1`, `HallKierAlpha`, `PEOE_VSA10`, `SMR_VSA5`, `fr_COO`, ...).
  - `EC1` ... `EC6`: binary labels (`1` if the molecule belongs to that class). Only
    `EC1` and `EC2` are predicted; the other four may help as auxiliary targets.
- `test.csv`: the molecules to predict, same columns without the six labels.
- `sample_submission.csv`: a valid submission in the right format (0.5 everywhere).

The feature distributions are close to, but not exactly those of, the original data set.

## Metric
The area under the ROC curve of `EC1` and of `EC2`, averaged. Only the ranking of the
predictions within each column matters. Higher is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per `id` in
`test.csv`:

```
id,EC1,EC2
14838,0.22,0.71
14839,0.78,0.43
```

`EC1` and `EC2` must be finite numbers (probabilities are expected). Put your code in
`{code_dir}`.
"""

COMPETITION = Competition(
    id="playground-series-s3e18",
    name="Explore Multi-Label Classification with an Enzyme Substrate Dataset",
    split="dev",
    metric="roc_auc",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="id",
        columns=tuple(Column(name, "score") for name in GRADED),
        answers_file="test.csv",
    ),
    raw_files=("train.csv",),
    prepare=prepare,
    num_teams=1049,
    thresholds=Thresholds(gold=0.66088, silver=0.65988, bronze=0.6588, median=0.64603),
    sample_score=0.5,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "9bb782a52ccbfd6873f9a1e9cc3e97d3",
            "test.csv": "1a77aa7922b712e3085a771b8fe73c5f",
            "train.csv": "e19b27b614d5a3bb74b930c52d659799",
        },
        private={"test.csv": "f744297d99692b67dc82c54f672a4745"},
    ),
)
