"""Learning Agency Lab - Automated Essay Scoring 2.0: score student essays from 1 to 6.

MLE-bench holds out 10% of Kaggle's scored essays as the test set and grades scikit-learn's
quadratic weighted kappa (the project's `kappa` metric computes the same). Its grader
types the submitted column with pandas, so `3.0` counts as 3 and any other whole number
(0, 7, ...) is scored as a further point of the rating scale, while a fractional score
makes scikit-learn refuse the file; the `open_labels` score column reads them the same
way. The sample submission holds random scores (numpy's RandomState(42)), as MLE-bench's.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from mle_gym.competitions.holdout import prepare_csv_holdout
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    SubmissionFormat,
    Thresholds,
)

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

SCORES = ("1", "2", "3", "4", "5", "6")


def _random_scores(sample: pd.DataFrame) -> np.ndarray:
    import numpy as np

    return np.random.RandomState(42).randint(1, 7, size=len(sample))


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split; the sample submission draws each score uniformly from 1 to 6."""
    prepare_csv_holdout(
        raw,
        public,
        private,
        id_column="essay_id",
        sample_values={"score": _random_scores},
        answers_file="answers.csv",
    )


STATEMENT = """\
# Learning Agency Lab - Automated Essay Scoring 2.0

Teachers spend many hours grading essays. Given argumentative essays written by students
(grades 6 to 12, in the United States), predict the holistic score, from 1 to 6, that
trained raters gave each essay following a scoring rubric.

## Data (read-only, in {data_dir})
- `train.csv`: scored essays. Columns:
  - `essay_id`: a 7-character hexadecimal identifier.
  - `full_text`: the essay (multi-line text, quoted in the CSV).
  - `score`: the target, an integer from 1 (lowest) to 6 (highest).
- `test.csv`: the essays to score, columns `essay_id` and `full_text`.
- `sample_submission.csv`: a valid submission in the right format (it holds random
  scores).

## Metric
Quadratic weighted kappa between your scores and the true ones: the agreement between two
raters beyond what chance would give, where a disagreement costs the square of its
distance on the rating scale. 1 is perfect agreement, 0 is chance level, and it can be
negative. Higher is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per `essay_id` in
`test.csv`:

```
essay_id,score
000d118,3
000fe60,4
```

`score` must be a whole number (normally 1 to 6; a whole number written as `3.0` counts
as 3). Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="learning-agency-lab-automated-essay-scoring-2",
    name="Learning Agency Lab - Automated Essay Scoring 2.0",
    split="medium",
    metric="quadratic_weighted_kappa",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="essay_id",
        columns=(Column("score", "label", labels=SCORES, open_labels=True),),
        answers_file="answers.csv",
    ),
    raw_files=("train.csv",),
    prepare=prepare,
    num_teams=2708,
    thresholds=Thresholds(gold=0.83583, silver=0.83518, bronze=0.83471, median=0.828265),
    sample_score=0.01323,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "e62f0d933304a49b8af9c110ad0214e2",
            "test.csv": "04a299576e54a568db57c9a252e9ea0b",
            "train.csv": "8288235ab42c523d4a3c32498e307807",
        },
        private={"answers.csv": "834401684a4041881fe174146dfb54c5"},
    ),
)
