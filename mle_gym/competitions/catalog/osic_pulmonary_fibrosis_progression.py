"""OSIC Pulmonary Fibrosis Progression: forecast lung capacity (FVC) with a confidence.

MLE-bench holds out 10% of Kaggle's training patients (whole patients, `train_test_split`
over the patient groups, seed 0). The public test table keeps each held-out patient's
earliest visit; the answers list every held-out patient at every week from the earliest to
the latest week of any held-out visit, with an empty FVC where no visit took place. Each
patient's CT folder (`train/<Patient>/<n>.dcm`, tens of slices to about a thousand) is
hard-linked, copied only where links are impossible, and never opened.

Grading, as MLE-bench's grader does it: only each patient's three latest measured weeks are
scored (Kaggle's rule), by the modified Laplace log-likelihood (see
`mle_gym.grading.metrics.laplace_log_likelihood`).

Decisions where MLE-bench's grader is lenient (recorded in docs/fidelity.md):
- MLE-bench scores a submission that lists only some `Patient_Week`s, averaging over the
  scored weeks it happens to list: leaving out the weeks one predicts badly raises the
  score, and listing none of them gives NaN. We require every `Patient_Week` of the sample
  submission exactly once, FVC and Confidence finite numbers in every row.
- MLE-bench reads an empty Confidence as 0 (hence 70 after clipping), scores an empty FVC
  on a scored week as NaN (and ignores it elsewhere), an infinite FVC as a 1000 ml error and
  an infinite Confidence as -inf. Empty and non-finite cells are refused here in every row,
  so that a refusal tells nothing about which weeks are scored.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from mle_gym.competitions.case_folder_helpers import place_case_folders
from mle_gym.competitions.dev_ids import ids_in
from mle_gym.competitions.group_holdout import split_groups
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    SubmissionFormat,
    Thresholds,
)

if TYPE_CHECKING:
    import pandas as pd

#: Kaggle scores each patient's last this many measured weeks.
SCORED_VISITS = 3


def _every_week(test: pd.DataFrame) -> pd.DataFrame:
    """The answers: each test patient at each week of the test visits' range, unmeasured
    weeks empty, keyed by `<Patient>_<Weeks>` (MLE-bench's rows, columns and order)."""
    import pandas as pd

    weeks = range(test["Weeks"].min(), test["Weeks"].max() + 1)
    grid = pd.DataFrame(
        [(patient, week) for patient in test["Patient"].unique() for week in weeks],
        columns=["Patient", "Weeks"],
    )
    answers = grid.merge(test, on=["Patient", "Weeks"], how="left")
    answers["Patient_Week"] = answers["Patient"] + "_" + answers["Weeks"].astype(str)
    answers["Confidence"] = 100
    if answers["Patient_Week"].duplicated().any():
        raise ValueError("a held-out patient has two visits in one week; MLE-bench refuses this")
    return answers


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split by patient (see the module docstring); the sample predicts 2000
    ml with confidence 100 for every patient and week."""
    from mle_gym.competitions.csv_io import read_csv

    train, test = split_groups(read_csv(raw / "train.csv"), "Patient")
    first_visits = test.sort_values(by="Weeks").groupby("Patient").first().reset_index()
    answers = _every_week(test)

    train.to_csv(public / "train.csv", index=False)
    first_visits.to_csv(public / "test.csv", index=False)
    answers.to_csv(private / "test.csv", index=False)
    answers[["Patient_Week"]].assign(FVC=2000, Confidence=100).to_csv(
        public / "sample_submission.csv", index=False
    )

    place_case_folders(raw / "train", public / "train", train["Patient"].unique(), "train scans")
    place_case_folders(raw / "train", public / "test", test["Patient"].unique(), "test scans")


def load_answers(private: Path) -> pd.DataFrame:
    """Every `Patient_Week` with its FVC where it is scored (the patient's last three
    measured weeks) and the metric's `UNSCORED` marker elsewhere; Confidence unused."""
    import pandas as pd

    from mle_gym.formats.packed_answers import UNSCORED

    answers = pd.read_csv(
        private / "test.csv", usecols=["Patient", "Weeks", "FVC", "Patient_Week"], dtype=str
    )
    measured = answers[answers["FVC"].notna()]
    weeks = measured["Weeks"].astype(int)
    latest = weeks.groupby(measured["Patient"]).rank(method="first", ascending=False)
    scored = answers.index.isin(latest[latest <= SCORED_VISITS].index)
    return pd.DataFrame(
        {
            "Patient_Week": answers["Patient_Week"],
            "FVC": answers["FVC"].where(scored, repr(UNSCORED)),
            "Confidence": "100",
        }
    )


STATEMENT = """\
# OSIC Pulmonary Fibrosis Progression

Pulmonary fibrosis scars the lungs; some patients stay stable for years while others
decline fast. From a patient's baseline chest CT scan, their details and a first lung
capacity measurement, forecast how their forced vital capacity (FVC, the volume of air
they can exhale, in ml) evolves over the following weeks, with a confidence for each
forecast.

## Data (read-only, in {data_dir})
- `train.csv`: the full visit history of the training patients, one row per visit:
  - `Patient`: the patient's id (also the name of their CT folder).
  - `Weeks`: the visit's week relative to the baseline CT scan (negative: before it).
  - `FVC`: the measured lung capacity in ml.
  - `Percent`: the FVC as a percentage of the typical FVC of a similar person.
  - `Age`, `Sex`, `SmokingStatus` (`Ex-smoker`, `Never smoked`, `Currently smokes`).
- `test.csv`: the test patients' first visit only, same columns.
- `train/<Patient>/` and `test/<Patient>/`: each patient's baseline CT scan, one DICOM file
  per slice (`1.dcm`, `2.dcm`, ...). Scans differ in slice count and resolution.
- `sample_submission.csv`: a valid submission listing every `Patient_Week` to predict (it
  predicts 2000 ml with confidence 100 everywhere).

Visits are irregular: a patient is measured every few weeks over one to two years, and
the timing differs between patients.

## Metric
For each scored week you predict an FVC and a confidence (a standard deviation, in ml).
With `sigma = max(Confidence, 70)` and `delta = min(|FVC_true - FVC_predicted|, 1000)`,
the week scores `-sqrt(2) * delta / sigma - ln(sqrt(2) * sigma)`; the score is the mean
over the scored weeks. Only each patient's last three measured visits are scored, but
which weeks they fall on is not given, so every week is asked for. Scores are negative;
higher is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per
`Patient_Week` of `sample_submission.csv` (`<Patient>_<Weeks>`):

```
Patient_Week,FVC,Confidence
ID00007637202177411956430_-12,2315,200
ID00007637202177411956430_-11,2310,205
```

`FVC` and `Confidence` must be finite numbers in every row. Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="osic-pulmonary-fibrosis-progression",
    name="OSIC Pulmonary Fibrosis Progression",
    split="medium",
    metric="laplace_log_likelihood",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="Patient_Week",
        columns=(Column("FVC", "number"), Column("Confidence", "number")),
        answers_file="test.csv",
        load_answers=load_answers,
    ),
    raw_files=("train.csv", "train"),
    prepare=prepare,
    num_teams=2097,
    thresholds=Thresholds(gold=-6.8412, silver=-6.8533, bronze=-6.8683, median=-6.8993),
    sample_score=-14.9683,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "6204ba4dd60cbf2629cd43c60144b9a7",
            "test.csv": "4d8bf1fd3b55feae1a1e3b5088a2f268",
            "train.csv": "dd984a7b700fcd6f167c89ebbbe8619e",
        },
        private={"test.csv": "0487bd97c387b5e6c28d5060026462d9"},
    ),
    dev_variant=DevVariant(
        train_ids=ids_in("train.csv", "Patient"), test_ids=ids_in("test.csv", "Patient")
    ),
)
