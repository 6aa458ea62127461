"""1st and Future - Player Contact Detection: player-player and player-ground contact, MCC.

MLE-bench holds out a tenth of Kaggle's labelled plays: `train_test_split` (random_state 0)
over `train_labels.csv`'s `game_play` values in order of first appearance. Every table is
then filtered by play, rows in file order: the labels (train to public/, test to
private/test.csv), the baseline helmet boxes, the 10 Hz tracking and the video metadata
(each as a train_ and a test_ file in public/). The three videos of each play (All29,
Endzone, Sideline; a few GB in all) are hard-linked into public/train or public/test
instead of copied. Kaggle's own test/ folder and test_*.csv (mock plays copied from the
training set) are not read, as in MLE-bench. The sample submission predicts 0 everywhere.

Memory: MLE-bench loads each table whole, and so do we, one at a time: the largest,
train_labels.csv (4.7 million rows, about 0.4 GB of text), peaks near 2 GB, far below the
machine's memory, and reading the whole file is what gives each column the type, hence
the written text, that MLE-bench's file has. The plays go to `train_test_split` as a
NumPy object array: pandas 3's string array of `unique()` cannot be indexed by it.

Answers: no public file but train_labels.csv has a `contact` column, and that file holds
training plays only.

Grading (metric `matthews_corrcoef`): scikit-learn's MCC of `contact` over the test rows,
as MLE-bench computes it. Decisions where MLE-bench's grader is lenient:
- Each test `contact_id` must appear exactly once (MLE-bench's checks amount to the same).
- `contact` must be integer labels. 1.0 is read as 1, as pandas reads it; other integers
  than 0 and 1 are scored as MLE-bench scores them (scikit-learn's multiclass MCC) with a
  warning. True/False, which pandas would read as booleans, is refused: the format is 0/1.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from mle_gym.competitions.csv_io import read_csv
from mle_gym.competitions.dev_ids import ids_in
from mle_gym.competitions.hardlink_helpers import place_files
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.lazy import np, train_test_split

VIEWS = ("All29", "Endzone", "Sideline")
#: Tables besides the labels, each split by play into train_<name>.csv and test_<name>.csv.
TABLES = ("baseline_helmets", "player_tracking", "video_metadata")


def _videos(raw: Path, public: Path, plays: dict[str, np.ndarray]) -> Iterator[tuple[Path, Path]]:
    for part, part_plays in plays.items():
        for play in part_plays:
            for view in VIEWS:
                name = f"{play}_{view}.mp4"
                yield raw / "train" / name, public / part / name


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split by play (see the module docstring)."""
    labels = read_csv(raw / "train_labels.csv")
    plays_in_order = np.asarray(labels["game_play"].unique(), dtype=object)
    train_plays, test_plays = train_test_split(plays_in_order, test_size=0.1, random_state=0)
    train = labels[labels["game_play"].isin(train_plays)]
    test = labels[labels["game_play"].isin(test_plays)]
    train.to_csv(public / "train_labels.csv", index=False)
    test.to_csv(private / "test.csv", index=False)
    test[["contact_id"]].assign(contact=0).to_csv(public / "sample_submission.csv", index=False)
    del labels, train, test

    for table in TABLES:
        rows = read_csv(raw / f"train_{table}.csv")
        for part, part_plays in (("train", train_plays), ("test", test_plays)):
            kept = rows[rows["game_play"].isin(part_plays)]
            kept.to_csv(public / f"{part}_{table}.csv", index=False)
        del rows

    plays = {"train": train_plays, "test": test_plays}
    for part in plays:
        (public / part).mkdir(exist_ok=True)
    total = len(VIEWS) * sum(len(part_plays) for part_plays in plays.values())
    place_files(_videos(raw, public, plays), "videos", total)


STATEMENT = """\
# 1st and Future - Player Contact Detection

The NFL wants to know when players touch: each other, or the ground with anything but
their feet. For every pair of players on the field, and every player with the ground, at
every tenth of a second of a play, predict whether they are in contact. You have three
videos of each play, each player's sensor tracking at 10 Hz, and the output of a helmet
detector that also guesses which player each helmet belongs to.

## Data (read-only, in {data_dir})
Plays are named by `game_play`, `<game_key>_<play_id>` (e.g. `58168_003392`); the test
plays are not in any train file.
- `train_labels.csv`: one row per pair (or player and ground) per time step of each
  training play. Columns:
  - `contact_id`: `<game_play>_<step>_<nfl_player_id_1>_<nfl_player_id_2>`.
  - `game_play`, `datetime` (10 Hz timestamp), `step` (0 at the start of the play, +1
    every 0.1 s).
  - `nfl_player_id_1`, `nfl_player_id_2`: the pair, lower id first; for contact with the
    ground, `nfl_player_id_2` is `G`.
  - `contact`: the target, 1 for contact and 0 for none. The labels are expected to be
    within about one time step of the true moment, and some are wrong.
- `train/`, `test/`: `<game_play>_<view>.mp4` for the views `Endzone` and `Sideline`
  (synchronised frame by frame, each showing some of the players) and `All29` (meant to
  show every player, not guaranteed in sync). 59.94 frames per second; the snap comes 5
  seconds in.
- `train_player_tracking.csv`, `test_player_tracking.csv`: each player's sensor readings
  at 10 Hz: `game_play, game_key, play_id, nfl_player_id, datetime, step, team` (home or
  away)`, position, jersey_number, x_position, y_position` (yards along the long and the
  short axis of the field)`, speed` (yards/s)`, distance` (yards since the previous
  reading)`, direction` (of motion, degrees)`, orientation` (degrees)`, acceleration`
  (magnitude, yards/s^2)`, sa` (acceleration along the direction of motion).
- `train_baseline_helmets.csv`, `test_baseline_helmets.csv`: helmet boxes found by a
  model in the Endzone and Sideline videos, with the player each was assigned to (often
  wrong): `game_play, game_key, play_id, view, video, frame, nfl_player_id, player_label`
  (home H or visitor V plus the jersey number)`, left, width, top, height` (pixels).
- `train_video_metadata.csv`, `test_video_metadata.csv`: for each Endzone and Sideline
  video, `start_time`, `end_time` and `snap_time`, to line the frames up with the
  tracking timestamps.
- `sample_submission.csv`: every `contact_id` to predict, with 0 for each.

## Metric
Matthews correlation coefficient between your `contact` values and the true ones over all
test rows. It ranges from -1 to 1; predicting one class everywhere scores 0. Higher is
better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per
`contact_id` of `sample_submission.csv`:

```
contact_id,contact
58168_003392_0_38590_43854,0
58168_003392_0_38590_G,1
```

`contact` must be 0 or 1. Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="nfl-player-contact-detection",
    name="1st and Future - Player Contact Detection",
    split="high",
    metric="matthews_corrcoef",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="contact_id",
        columns=(Column("contact", "label", labels=("0", "1"), open_labels=True),),
    ),
    raw_files=(
        "train_labels.csv",
        *(f"train_{table}.csv" for table in TABLES),
        *(f"train/*_{view}.mp4" for view in VIEWS),
    ),
    prepare=prepare,
    num_teams=940,
    thresholds=Thresholds(gold=0.78167, silver=0.72203, bronze=0.69652, median=0.69139),
    sample_score=0.0,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "e4fe9463edad278506f9911fd86b17f3",
            "test_baseline_helmets.csv": "2981cca0abdb9305780edfea905a7ff4",
            "test_player_tracking.csv": "dfa825f54143e63aa4b7ccba897e4d3f",
            "test_video_metadata.csv": "6978a882a8cf8ec2141e5df6959c2617",
            "train_baseline_helmets.csv": "063ba03e0ca7acf3c17bd74d704983f0",
            "train_labels.csv": "8721fe87ec4fb244ecf217522045ab8c",
            "train_player_tracking.csv": "5f8604c4c541db8d1f0247de34e99cd2",
            "train_video_metadata.csv": "5ba91169bc8df45c0334db954c86cbc3",
        },
        private={"test.csv": "fa42cdab2f042c5bd0665d7739a715fb"},
    ),
    dev_variant=DevVariant(train_ids=ids_in("train_labels.csv", "contact_id")),
)
