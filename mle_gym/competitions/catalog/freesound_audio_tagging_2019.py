"""Freesound Audio Tagging 2019: which of 80 sound classes occur in each clip, graded by lwlrap.

No split is made: Kaggle's files go to public/ as they are (hard-linked), and the answers
are the labels of the test clips that the organisers published after the competition in
FSDKaggle2019.meta.zip on Zenodo (record 3612637): the rows of `test_post_competition.csv`
whose `usage` is `Private`, the clips of Kaggle's test.zip. MLE-bench downloads that file
while preparing; here nothing is downloaded: it must be in the raw directory, either as
`FSDKaggle2019.meta.zip` or unpacked as `FSDKaggle2019.meta/test_post_competition.csv`,
and preparing without it says where to get it. Of the raw directory only Kaggle's six
files reach public/, so neither that archive nor anything else a user puts beside it can.

Grading (`mle_gym.grading.metrics.lwlrap`): every test clip exactly once, and the header is
exactly `fname` and the 80 classes (MLE-bench refuses other columns too; it also wants the
classes in Kaggle's order, which we do not need since columns are read by name). Scores
must be finite numbers; like MLE-bench we accept any finite value, not only [0, 1], because
lwlrap only ranks each clip's scores (a warning says so).

The development variant holds out a tenth of the curated clips (seed 0; the test clips
were labelled by people like them, the noisy ones by a machine): their rows leave
train_curated.csv, their audio moves from train_curated.zip to a development test.zip, and
their labels become a development `test_post_competition.csv`, on which `prepare` runs.
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterable
from pathlib import Path

from mle_gym.competitions.csv_io import read_csv
from mle_gym.competitions.dev_ids import ids_in
from mle_gym.competitions.dev_rules import rebuilt_raw
from mle_gym.competitions.hardlink_helpers import link_or_copy, place_files
from mle_gym.competitions.holdout import holdout
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.lazy import pd

#: Kaggle's files, placed in public/ unchanged.
KAGGLE_FILES = (
    "sample_submission.csv",
    "test.zip",
    "train_curated.csv",
    "train_curated.zip",
    "train_noisy.csv",
    "train_noisy.zip",
)
META_ZIP = "FSDKaggle2019.meta.zip"
META_DIR = "FSDKaggle2019.meta"
TEST_LABELS = "test_post_competition.csv"
ZENODO_RECORD = "https://zenodo.org/records/3612637"

#: The 80 classes, in the column order of Kaggle's sample submission.
CLASSES = (
    "Accelerating_and_revving_and_vroom", "Accordion", "Acoustic_guitar", "Applause", "Bark",
    "Bass_drum", "Bass_guitar", "Bathtub_(filling_or_washing)", "Bicycle_bell",
    "Burping_and_eructation", "Bus", "Buzz", "Car_passing_by", "Cheering",
    "Chewing_and_mastication", "Child_speech_and_kid_speaking", "Chink_and_clink",
    "Chirp_and_tweet", "Church_bell", "Clapping", "Computer_keyboard", "Crackle", "Cricket",
    "Crowd", "Cupboard_open_or_close", "Cutlery_and_silverware", "Dishes_and_pots_and_pans",
    "Drawer_open_or_close", "Drip", "Electric_guitar", "Fart", "Female_singing",
    "Female_speech_and_woman_speaking", "Fill_(with_liquid)", "Finger_snapping",
    "Frying_(food)", "Gasp", "Glockenspiel", "Gong", "Gurgling", "Harmonica", "Hi-hat", "Hiss",
    "Keys_jangling", "Knock", "Male_singing", "Male_speech_and_man_speaking",
    "Marimba_and_xylophone", "Mechanical_fan", "Meow", "Microwave_oven", "Motorcycle",
    "Printer", "Purr", "Race_car_and_auto_racing", "Raindrop", "Run", "Scissors", "Screaming",
    "Shatter", "Sigh", "Sink_(filling_or_washing)", "Skateboard", "Slam", "Sneeze", "Squeak",
    "Stream", "Strum", "Tap", "Tick-tock", "Toilet_flush", "Traffic_noise_and_roadway_noise",
    "Trickle_and_dribble", "Walk_and_footsteps", "Water_tap_and_faucet", "Waves_and_surf",
    "Whispering", "Writing", "Yell", "Zipper_(clothing)",
)  # fmt: skip


def missing_labels_message(raw: Path) -> str:
    return (
        f"preparing freesound-audio-tagging-2019 needs the test labels, which Kaggle does not "
        f"ship: {META_ZIP} from {ZENODO_RECORD} (direct link: {ZENODO_RECORD}/files/"
        f"{META_ZIP}?download=1). Put it, or its unpacked folder {META_DIR}/ holding "
        f"{TEST_LABELS}, in {raw} (or in the folder given to --raw) and prepare again."
    )


def read_test_labels(raw: Path) -> pd.DataFrame:
    """`test_post_competition.csv` from the unpacked folder, else from the Zenodo archive."""
    unpacked = raw / META_DIR / TEST_LABELS
    if unpacked.is_file():
        return read_csv(unpacked)
    if not (raw / META_ZIP).is_file():
        raise FileNotFoundError(missing_labels_message(raw))
    with (
        zipfile.ZipFile(raw / META_ZIP) as archive,
        archive.open(f"{META_DIR}/{TEST_LABELS}") as handle,
    ):
        return read_csv(handle)


def many_hot(labelled: pd.DataFrame) -> pd.DataFrame:
    """`fname` and one 0/1 column per class from comma-joined `labels`, rows kept in order."""
    tags = [set(labels.split(",")) for labels in labelled["labels"]]
    columns = {name: [int(name in clip) for clip in tags] for name in CLASSES}
    return pd.DataFrame({"fname": labelled["fname"].to_numpy(), **columns})


def prepare(raw: Path, public: Path, private: Path) -> None:
    """Kaggle's files as public/; the published private-leaderboard labels as answers."""
    labels = read_test_labels(raw)
    answers = many_hot(labels[labels["usage"] == "Private"])
    sample = read_csv(raw / "sample_submission.csv")
    if sorted(sample["fname"]) != sorted(answers["fname"]):
        raise ValueError(
            f"the Private rows of {TEST_LABELS} name other clips than sample_submission.csv: "
            "the raw files do not come from the same release"
        )
    answers.to_csv(private / "test.csv", index=False)
    place_files(((raw / n, public / n) for n in KAGGLE_FILES), "Kaggle files", len(KAGGLE_FILES))


def _development_raw(folder: Path, raw: Path) -> None:
    """Raw files for `prepare` from the public ones in `folder`: a tenth of the curated clips
    (seed 0) as the test clips and their labels (see the module docstring)."""
    curated, held_out = holdout(read_csv(folder / "train_curated.csv"))
    for name in ("train_noisy.csv", "train_noisy.zip"):
        link_or_copy(folder / name, raw / name)
    curated.to_csv(raw / "train_curated.csv", index=False)
    _copy_members(folder / "train_curated.zip", raw / "train_curated.zip", curated["fname"])
    _copy_members(folder / "train_curated.zip", raw / "test.zip", held_out["fname"])
    sample = held_out[["fname"]].assign(**dict.fromkeys(CLASSES, 0))
    sample.to_csv(raw / "sample_submission.csv", index=False)
    (raw / META_DIR).mkdir()
    held_out.assign(usage="Private").to_csv(raw / META_DIR / TEST_LABELS, index=False)


def _copy_members(source: Path, target: Path, names: Iterable[str]) -> None:
    """A zip of `source`'s members `names`, each with its entry (time, method) kept, so
    that the same split gives the same bytes."""
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w") as zout:
        for name in names:
            info = zin.getinfo(name)
            zout.writestr(info, zin.read(info))


STATEMENT = """\
# Freesound Audio Tagging 2019

Tag audio clips with the sound classes they contain, from a vocabulary of 80 classes of
Google's AudioSet ontology (musical instruments, human voice and body sounds, animals,
vehicles, water, household sounds, ...). A clip may carry one label or several. Training
data comes in two parts: a small set labelled by people, and a larger set of clips from
Flickr videos whose labels were inferred automatically and are often wrong. The test
clips are labelled by people, like the curated set.

## Data (read-only, in {data_dir})
All clips are uncompressed 16-bit PCM, 44.1 kHz, mono WAV files.
- `train_curated.zip` (4,970 clips, 0.3 to 30 s, about 10.5 hours) and `train_curated.csv`:
  columns `fname` (e.g. `0006ae4e.wav`) and `labels`, one or more class names separated by
  commas (e.g. `"Walk_and_footsteps,Slam"`). Five curated clips are known to carry a wrong
  label (`f76181c4.wav`, `77b925c2.wav`, `6a1f682a.wav`, `c7db12aa.wav`, `7752cc8a.wav`)
  and `1d44b0bd.wav` holds no signal.
- `train_noisy.zip` (19,815 clips, mostly 15 s, about 80 hours) and `train_noisy.csv`: same
  columns; these labels are noisy.
- `test.zip`: the test clips to tag.
- `sample_submission.csv`: a valid submission in the required format, listing every test
  clip, its columns in the required order.

Unpack the archives where you can write (e.g. `unzip -q {data_dir}/test.zip -d test`).

## Metric
Label-weighted label-ranking average precision (lwlrap). For each clip the 80 classes are
ranked by your scores; for each true label of the clip, the precision is the share of true
labels among the classes ranked at or above it (ties count against you). lwlrap is the mean
of these precisions over all true (clip, label) pairs, so each label occurrence weighs the
same. Only the order of the scores within a clip matters. Higher is better (1 is perfect).

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per test clip:
`fname`, then one score column per class, named and ordered as in `sample_submission.csv`
(no other columns):

```
fname,Accelerating_and_revving_and_vroom,Accordion,...,Zipper_(clothing)
000ccb97.wav,0.1,0.02,...,0.3
```

Scores are finite numbers, usually probabilities between 0 and 1. Put your code in
`{code_dir}`.
"""

COMPETITION = Competition(
    id="freesound-audio-tagging-2019",
    name="Freesound Audio Tagging 2019",
    split="medium",
    metric="lwlrap",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="fname",
        columns=tuple(Column(name, "score") for name in CLASSES),
        answers_file="test.csv",
        sample_file="sample_submission.csv",
        allow_extra_columns=False,
    ),
    raw_files=KAGGLE_FILES,
    prepare=prepare,
    num_teams=418,
    thresholds=Thresholds(gold=0.74399, silver=0.7181, bronze=0.69233, median=0.54819),
    sample_score=0.02197,
    statement=STATEMENT,
    checksums=Checksums(
        public={
            "sample_submission.csv": "9e937378f06d20d2bbe5816ec3d7ae11",
            "train_curated.csv": "f4144b2a64918cf6fa53f4a4640f397a",
            "train_noisy.csv": "3bda3cf565fd3a9082b6405e9698f61f",
        },
        private={"test.csv": "1c2444d48bddb7853be3637b30425c6f"},
    ),
    dev_variant=DevVariant(
        prepare=rebuilt_raw(prepare, _development_raw),
        train_ids=ids_in("train_curated.csv", "fname"),
    ),
)
