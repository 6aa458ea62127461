"""PetFinder.my - Pawpularity Contest: predict how much attention a pet's photograph draws.

Kaggle's test set was hidden behind a code competition, so MLE-bench holds out 10% of the
9,912 labelled photographs. Its sample submission predicts random scores, drawn with numpy's
`default_rng(0)` and rounded to two decimals; we draw the same numbers.

Grading follows MLE-bench: RMSE, and a submission with any prediction outside [1, 100] is
refused rather than scored (`mle_gym.grading.metrics.rmse_in_range`).
"""

from __future__ import annotations

from pathlib import Path

from mle_gym.competitions.csv_io import read_csv
from mle_gym.competitions.held_out_images import place_images
from mle_gym.competitions.holdout import holdout
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.lazy import np


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split: 10% of the labelled photographs held out, seed 0."""
    original = read_csv(raw / "train.csv")
    train, test = holdout(original, 0.1)
    guesses = np.random.default_rng(0).uniform(1, 100, len(test)).round(2)

    train.to_csv(public / "train.csv", index=False)
    test.drop(columns="Pawpularity").to_csv(public / "test.csv", index=False)
    test[["Id"]].assign(Pawpularity=guesses).to_csv(public / "sample_submission.csv", index=False)
    test.to_csv(private / "test.csv", index=False)

    for part, folder in ((train, "train"), (test, "test")):
        place_images(raw / "train", public / folder, part["Id"] + ".jpg")


STATEMENT = """\
# PetFinder.my - Pawpularity Contest

PetFinder.my, a Malaysian animal welfare platform, lists pets for adoption; a photograph
that draws attention helps a pet find a home sooner. Predict each photograph's
Pawpularity: a score from 1 to 100 derived from the traffic of the pet's profile page
(normalised across pages and platforms, without duplicate clicks, bots or sponsored
profiles).

## Data (read-only, in {data_dir})
- `train/<Id>.jpg`: the training photographs (about 8,900), one per pet profile, of
  varying size; `<Id>` is 32 hexadecimal characters.
- `train.csv`: one row per training photograph: `Id`, twelve hand-labelled 0/1 photo
  attributes (`Subject Focus`, `Eyes`, `Face`, `Near`, `Action`, `Accessory`, `Group`,
  `Collage`, `Human`, `Occlusion`, `Info`, `Blur`), then the target `Pawpularity`. The
  attributes were labelled by hand and are not used to compute the score.
- `test/<Id>.jpg` and `test.csv`: the photographs to score (about 990) and their
  attributes, the same columns without `Pawpularity`.
- `sample_submission.csv`: a valid submission listing every test photograph (its scores
  are random numbers between 1 and 100).

## Metric
Root mean squared error between predicted and true Pawpularity. Lower is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per photograph
in `test.csv`:

```
Id,Pawpularity
0007de18844b0dbbb5e1f607da0606e0,38.5
0009c66b9439883ba2750fb825e1d7db,27.0
```

Every prediction must be a number between 1 and 100 (inclusive); a file with any value
outside that range is refused. Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="petfinder-pawpularity-score",
    name="PetFinder.my - Pawpularity Contest",
    split="medium",
    metric="rmse_1_to_100",
    lower_is_better=True,
    submission=SubmissionFormat(
        id_column="Id",
        columns=(Column("Pawpularity", "number"),),
        answers_file="test.csv",
    ),
    raw_files=("train.csv", "train/*.jpg"),
    prepare=prepare,
    num_teams=3538,
    thresholds=Thresholds(gold=16.95041, silver=17.06636, bronze=17.0971, median=17.702985),
    sample_score=37.37587,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "569c9d854c4242c647c421e0b003b915",
            "test.csv": "7c709809dbba57d5fd14a9a3f9abc240",
            "train.csv": "619372a40df4773bcae08197ede2fab7",
        },
        private={"test.csv": "da4c520ad07c54f8a67b8b414bc368e9"},
    ),
)
