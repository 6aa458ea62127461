"""Spaceship Titanic: binary classification of passengers, graded by accuracy."""

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
from mle_gym.lazy import train_test_split


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split: 10% of Kaggle's labelled train becomes the hidden test set."""
    original = read_csv(raw / "train.csv")
    train, test = train_test_split(original, test_size=0.1, random_state=0)

    sample = test[["PassengerId", "Transported"]].copy()
    sample["Transported"] = False
    sample.to_csv(public / "sample_submission.csv", index=False)

    test.to_csv(private / "test.csv", index=False)
    train.to_csv(public / "train.csv", index=False)
    test.drop(columns="Transported").to_csv(public / "test.csv", index=False)


STATEMENT = """\
# Spaceship Titanic

The passenger liner *Spaceship Titanic* collided with a spacetime anomaly, and about half
of its passengers were transported to another dimension. From the personal records the
ship's computer recovered, predict for each passenger whether they were transported.

## Data (read-only, in {data_dir})
- `train.csv`: passengers with the answer. Columns:
  - `PassengerId`: `gggg_pp`, where `gggg` is the travel group and `pp` the passenger's
    number within it (groups are often families).
  - `HomePlanet`: the planet the passenger departed from.
  - `CryoSleep`: whether the passenger was in suspended animation for the voyage
    (such passengers stayed in their cabins).
  - `Cabin`: `deck/num/side`; side is `P` (port) or `S` (starboard).
  - `Destination`: the planet the passenger was travelling to.
  - `Age`, `VIP`.
  - `RoomService`, `FoodCourt`, `ShoppingMall`, `Spa`, `VRDeck`: amounts the passenger
    spent on each of the ship's amenities.
  - `Name`: first and last name.
  - `Transported`: the target, `True` or `False`.
- `test.csv`: the passengers to predict, same columns without `Transported`.
- `sample_submission.csv`: a valid submission in the right format (it predicts `False`
  for everyone).

Some values are missing in both files.

## Metric
Classification accuracy: the fraction of test passengers whose `Transported` value you
predict correctly. Higher is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per passenger in
`test.csv`:

```
PassengerId,Transported
0013_01,False
0018_01,True
```

`Transported` must be `True` or `False`. Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="spaceship-titanic",
    name="Spaceship Titanic",
    split="dev",
    metric="accuracy",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="PassengerId",
        columns=(Column("Transported", "bool"),),
        answers_file="test.csv",
    ),
    raw_files=("train.csv",),
    prepare=prepare,
    num_teams=2288,
    thresholds=Thresholds(gold=0.82066, silver=0.81388, bronze=0.80967, median=0.79565),
    sample_score=0.50345,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "5414b5da6ebcff454de1c9ed39b73774",
            "test.csv": "8186bd4048aece25f1ed45708f8f34e1",
            "train.csv": "564a1614ecef9d9611cec4efdce4c412",
        },
        private={"test.csv": "1cb99c65efecaba968128577722a83ef"},
    ),
)
