"""HMS Harmful Brain Activity Classification: expert votes on EEG segments, graded by KL divergence.

MLE-bench splits Kaggle's labelled set by spectrogram (10% of spectrogram ids become the
test set), which keeps every EEG recording and patient window on one side. A test
recording keeps all of its labelled rows, so an `eeg_id` can appear on several rows of
test.csv, sample_submission.csv and the answers; the public test.csv omits the offsets
that tell those rows apart. The recordings and spectrograms (parquet files, tens of GB)
are hard-linked into public/ instead of copied.

Grading (metric `kl_divergence`) follows Kaggle's metric as MLE-bench runs it: the answers
are each row's votes divided by their total (MLE-bench's gold_submission.csv holds exactly
that), predictions are clipped to [1e-15, 1 - 1e-15], and the score is the mean over rows of
the KL divergence of answer from prediction. Each row's probabilities must sum to 1 after
rounding to 5 decimals, as MLE-bench requires.

Decisions where MLE-bench's grader is fragile:
- MLE-bench checks only that the submission has as many rows as the answers and the same
  set of ids, then pairs rows after an unstable sort by `eeg_id`. Here each `eeg_id` must
  have exactly as many rows as in test.csv, and the k-th row of an `eeg_id` in the
  submission is paired with its k-th row in test.csv. For rows in test.csv's order (as the
  sample submission is) both pairings agree, so the scores are equal; when all rows of an
  `eeg_id` carry the same prediction, any row order gives MLE-bench's score.
- MLE-bench also runs Kaggle's probability checks over every submitted column besides the
  id, so extra columns fail unless they are numbers that leave the row sums at one; here
  extra columns are ignored.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from mle_gym.competitions.csv_io import read_csv
from mle_gym.competitions.hardlink_helpers import place_file
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.lazy import pd, train_test_split

VOTES = ("seizure_vote", "lpd_vote", "gpd_vote", "lrda_vote", "grda_vote", "other_vote")


def _place_parquets(raw_folder: Path, dest: Path, ids: pd.Series) -> None:
    dest.mkdir()
    for file_id in ids.unique():
        place_file(raw_folder / f"{file_id}.parquet", dest / f"{file_id}.parquet")


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split: 10% of the spectrogram ids, with all their rows, become the test set."""
    labels = read_csv(raw / "train.csv")
    _, test_spectrograms = train_test_split(
        labels["spectrogram_id"].unique(), test_size=0.1, random_state=0
    )
    in_test = labels["spectrogram_id"].isin(test_spectrograms)
    train, test = labels[~in_test], labels[in_test]

    train.to_csv(public / "train.csv", index=False)
    test.to_csv(private / "test.csv", index=False)
    test[["spectrogram_id", "eeg_id", "patient_id"]].to_csv(public / "test.csv", index=False)

    votes = list(VOTES)
    gold = test[["eeg_id", *votes]].copy()
    gold[votes] = gold[votes].div(gold[votes].sum(axis=1), axis=0)
    gold.to_csv(private / "gold_submission.csv", index=False)
    gold[votes] = 1 / len(votes)
    gold.to_csv(public / "sample_submission.csv", index=False)

    shutil.copytree(raw / "example_figures", public / "example_figures")
    for kind, key in (("eegs", "eeg_id"), ("spectrograms", "spectrogram_id")):
        _place_parquets(raw / f"train_{kind}", public / f"train_{kind}", train[key])
        _place_parquets(raw / f"train_{kind}", public / f"test_{kind}", test[key])


STATEMENT = """\
# HMS - Harmful Brain Activity Classification

Critically ill patients are monitored with electroencephalography (EEG). Experts review
the recordings for six patterns: seizure (SZ), generalized periodic discharges (GPD),
lateralized periodic discharges (LPD), lateralized rhythmic delta activity (LRDA),
generalized rhythmic delta activity (GRDA), or "other". Several experts labelled each
sample and often disagreed. Predict, for each test row, the share of expert votes each
pattern received.

## Data (read-only, in {data_dir})
- `train.csv`: one row per labelled sample. Columns:
  - `eeg_id`, `eeg_sub_id`, `eeg_label_offset_seconds`: the EEG recording, and where the
    labelled 50-second window starts in it (the label is for its central 10 seconds).
  - `spectrogram_id`, `spectrogram_sub_id`, `spectrogram_label_offset_seconds`: the
    matching spectrogram and where its 10-minute window (centred on the same moment) starts.
  - `label_id`, `patient_id`.
  - `expert_consensus`: the pattern with the most votes (for convenience).
  - `seizure_vote`, `lpd_vote`, `gpd_vote`, `lrda_vote`, `grda_vote`, `other_vote`: how
    many experts chose each pattern (the targets, as counts).
- `test.csv`: `spectrogram_id,eeg_id,patient_id` for each row to predict. A recording has
  one row per labelled window, so an `eeg_id` may repeat; the offsets are not given.
- `train_eegs/<eeg_id>.parquet`, `test_eegs/<eeg_id>.parquet`: whole EEG recordings, one
  column per electrode (Fp1, F3, C3, P3, F7, T3, T5, O1, Fz, Cz, Pz, Fp2, F4, C4, P4, F8, T4,
  T6, O2) plus an EKG lead, 200 samples per second.
- `train_spectrograms/<spectrogram_id>.parquet`, `test_spectrograms/...`: spectrograms
  of the recordings: a `time` column (seconds), then power per frequency (0.59 to 19.92 Hz)
  for four electrode chains, in columns like `LL_1.17` (LL left lateral, RL right lateral,
  LP left parasagittal, RP right parasagittal).
- `example_figures/`: example images of each pattern.
- `sample_submission.csv`: a valid submission with one row per row of `test.csv`, in the
  same order (it predicts 1/6 everywhere).

Test recordings and spectrograms never appear in the training files (a patient may
appear in both). The parquet files take tens of gigabytes.

## Metric
Kullback-Leibler divergence of the true vote distribution from your predicted
distribution, averaged over rows. Each row's true distribution is its votes divided by
their total; your probabilities are clipped to [1e-15, 1 - 1e-15]. Lower is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per row of
`test.csv` (an `eeg_id` repeated as often as there), in the order of `test.csv`:

```
eeg_id,seizure_vote,lpd_vote,gpd_vote,lrda_vote,grda_vote,other_vote
568657,0.1,0.5,0.1,0.1,0.1,0.1
568657,0.1,0.5,0.1,0.1,0.1,0.1
```

Each row's six probabilities must lie in [0, 1] and sum to 1 (after rounding to 5
decimals). Rows sharing an `eeg_id` are matched to that id's rows of `test.csv` in order.
Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="hms-harmful-brain-activity-classification",
    name="HMS - Harmful Brain Activity Classification",
    split="high",
    metric="kl_divergence",
    lower_is_better=True,
    submission=SubmissionFormat(
        id_column="eeg_id",
        columns=tuple(Column(name, "probability") for name in VOTES),
        answers_file="gold_submission.csv",
    ),
    raw_files=("train.csv", "example_figures", "train_eegs", "train_spectrograms"),
    prepare=prepare,
    num_teams=2767,
    thresholds=Thresholds(gold=0.290807, silver=0.353323, bronze=0.375383, median=0.473828),
    sample_score=1.40995,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "5e8cb4e5956283462cbc704e1f09af4d",
            "test.csv": "dfe1f087a65ffa7c7341cdcdfc143554",
            "train.csv": "c82b8b6f36e0a20932c5566957f6eb63",
        },
        private={
            "gold_submission.csv": "ba90c5dda42c504e3638af6ee7dc46fb",
            "test.csv": "205ee658cf7e8cfd317e7bee6045dffd",
        },
    ),
)
