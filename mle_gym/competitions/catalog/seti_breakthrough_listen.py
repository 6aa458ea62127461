"""SETI Breakthrough Listen: find simulated technosignatures in cadence snippets, by ROC AUC.

MLE-bench holds out 10% of Kaggle's labelled snippets and places each snippet's `.npy`
file under public/train or public/test, in a folder named by the id's first character.
The snippets and the pre-relaunch data (`old_leaky_data/`) come to about 156 GB, so every
file is hard-linked (copied only where links are impossible) and none is ever opened.

`old_leaky_data/` goes to public/ as in MLE-bench. Its labels are those of the data before
the relaunch, whose ids have 12 hex digits; the relaunched snippets, and so the hidden
test set, have 15-digit ids, so it names none of the test snippets.

Grading matches MLE-bench's: scikit-learn's ROC AUC of the submitted probabilities, rows
matched by id.
"""

from __future__ import annotations

from pathlib import Path

from mle_gym.competitions.csv_io import read_csv
from mle_gym.competitions.dev_ids import ids_in
from mle_gym.competitions.hardlink_helpers import place_file, place_tree
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.lazy import pd, train_test_split


def _place_snippets(raw: Path, dest: Path, ids: pd.Series) -> None:
    for snippet in ids:
        name = f"{snippet[0]}/{snippet}.npy"
        place_file(raw / "train" / name, dest / name)


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split: 10% of the labelled snippets become the hidden test set."""
    labels = read_csv(raw / "train_labels.csv")
    train, test = train_test_split(labels, test_size=0.1, random_state=0)

    train.to_csv(public / "train_labels.csv", index=False)
    test.to_csv(private / "test.csv", index=False)
    test.assign(target=0.5).to_csv(public / "sample_submission.csv", index=False)

    place_tree(raw / "old_leaky_data", public / "old_leaky_data")
    _place_snippets(raw, public / "train", train["id"])
    _place_snippets(raw, public / "test", test["id"])


STATEMENT = """\
# SETI Breakthrough Listen - E.T. Signal Search

Breakthrough Listen searches radio telescope data for signs of technology beyond Earth.
Its Green Bank Telescope observes a target star in a "cadence" of six five-minute
observations, alternating on-target and off-target: ABACAD (A is the target; B, C, D are
three other stars). A signal that appears only in the A observations may come from the
target; one that appears in the others too is interference from human technology. Simulated
signals ("needles") were injected into some real cadence snippets and every snippet was
normalised. Predict, for each test snippet, the probability that it contains a needle.

## Data (read-only, in {data_dir})
- `train_labels.csv`: `id,target` for the training snippets; `target` is 1 when a needle
  was injected, 0 otherwise (about 10% are positive).
- `train/<c>/<id>.npy` and `test/<c>/<id>.npy`: one snippet per file, in the folder named
  by the first character `<c>` of its id. Each is a numpy float16 array of shape
  (6, 273, 256): the six observations of the cadence (in the order A, B, A, C, A, D), each
  a spectrogram of 273 time steps by 256 frequency channels. A needle, when present, shows
  in some or all of the A observations (indices 0, 2, 4) and in none of the others; it is
  often a drifting line, but not always.
- `old_leaky_data/`: the data of the competition before its relaunch (`train_old/`,
  `test_old/` and their label files `train_labels_old.csv`, `test_labels_old.csv`). Its
  ids differ from the current ones; it may or may not help.
- `sample_submission.csv`: a valid submission listing every test snippet (it predicts 0.5).

Each snippet file is about 0.8 MB and there are tens of thousands of them: load them a
batch at a time.

## Metric
Area under the ROC curve between your probabilities and the true targets. Higher is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per test snippet:

```
id,target
000bf832cae6ff1,0.06
000c74cc71a1140,0.91
```

`target` is the probability of a needle, between 0 and 1. Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="seti-breakthrough-listen",
    name="SETI Breakthrough Listen - E.T. Signal Search",
    split="medium",
    metric="roc_auc",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="id",
        columns=(Column("target", "probability"),),
        answers_file="test.csv",
    ),
    raw_files=("train_labels.csv", "train", "old_leaky_data"),
    prepare=prepare,
    num_teams=769,
    thresholds=Thresholds(gold=0.79806, silver=0.78095, bronze=0.77439, median=0.75889),
    sample_score=0.5,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "6bec1773dc78bbe72a70a539e86a8bac",
            "train_labels.csv": "c2dc9aa0bb1a60ba40215f979d81df6c",
        },
        private={"test.csv": "bde6668df6af0c858a8eea028a140bfb"},
    ),
    dev_variant=DevVariant(train_ids=ids_in("train_labels.csv", "id")),
)
