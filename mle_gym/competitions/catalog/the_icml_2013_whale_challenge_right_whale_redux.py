"""ICML 2013 Whale Challenge (Right Whale Redux): detect right whale up-calls in audio clips.

Kaggle's labelled training clips cover four recording days; MLE-bench keeps the first two
days for training and turns the last two into the test set, graded by ROC AUC.

Each clip written keeps its archive entry's time (MLE-bench's files get the time they were
written), so the zips repeat byte for byte. The development variant is the same split of
the two public days: the first for training, the second held out. Its ids are the clips'
recording times (`<date>_<time>_<offset>_`, kept by every renaming), so the held-out clips
are traced to public training clips and apart from the real test days.
"""

from __future__ import annotations

import os
import re
import shutil
import time
import zipfile
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from mle_gym.competitions.dev_ids import ids_in
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.lazy import pd

#: Kaggle's training clips are `YYYYMMDD_HHMMSS_<offset>_TRAIN<idx>_<label>.aif`.
TRAIN_FOLDER = "train2"
TEST_FOLDER = "test2"
DAYS = 4

Rename = Callable[[str, int], str]


def _clips_by_day(archive: zipfile.ZipFile, expected: int) -> dict[str, list[str]]:
    """Members of train2/ (files directly inside it), grouped by their recording date."""
    days: dict[str, list[str]] = defaultdict(list)
    for member in archive.namelist():
        path = PurePosixPath(member)
        if not member.endswith("/") and path.parent == PurePosixPath(TRAIN_FOLDER):
            days[path.name.split("_")[0]].append(member)
    if len(days) != expected:
        raise ValueError(f"expected {expected} recording days in train2.zip, found {len(days)}")
    return days


def _copy_renamed(
    archive: zipfile.ZipFile, members: list[str], folder: Path, rename: Rename
) -> list[tuple[str, str]]:
    """Copy the clips in file-name order (so new indices follow time) under new names.

    Returns (original name, new name) pairs in that order.
    """
    folder.mkdir()
    pairs = []
    latest = 0.0
    for idx, member in enumerate(sorted(members, key=lambda m: PurePosixPath(m).name)):
        old = PurePosixPath(member).name
        new = rename(old, idx)
        (folder / new).write_bytes(archive.read(member))
        stamp = time.mktime((*archive.getinfo(member).date_time, 0, 0, -1))
        os.utime(folder / new, (stamp, stamp))
        latest = max(latest, stamp)
        pairs.append((old, new))
    os.utime(folder, (latest, latest))
    return pairs


def _zip_folder(public: Path, name: str) -> None:
    """Zip public/<name>/ as <name>.zip (entries under `<name>/`) and drop the folder."""
    shutil.make_archive(str(public / name), "zip", public, name)
    shutil.rmtree(public / name)


def _train_name(name: str, idx: int) -> str:
    return re.sub(r"TRAIN\d+", f"TRAIN{idx}", name)


def _test_name(name: str, idx: int) -> str:
    """Drop the training index and label: `<date>_<time>_<offset>_Test<idx>.aif`."""
    return name.split("TRAIN")[0] + f"Test{idx}.aif"


def prepare(raw: Path, public: Path, private: Path, *, days: int = DAYS) -> None:
    """The first half of the `days` recording days becomes train2.zip, the second half
    test2.zip (renumbered)."""
    with zipfile.ZipFile(raw / "train2.zip") as archive:
        by_day = _clips_by_day(archive, days)
        ordered = sorted(by_day)
        train = [clip for day in ordered[: days // 2] for clip in by_day[day]]
        test = [clip for day in ordered[days // 2 :] for clip in by_day[day]]
        _copy_renamed(archive, train, public / TRAIN_FOLDER, _train_name)
        renamed = _copy_renamed(archive, test, public / TEST_FOLDER, _test_name)

    answers = pd.DataFrame(
        [(new, int(PurePosixPath(old).stem.endswith("_1"))) for old, new in renamed],
        columns=["clip", "probability"],
    )
    _zip_folder(public, TRAIN_FOLDER)
    _zip_folder(public, TEST_FOLDER)
    answers.to_csv(private / "test.csv", index=False)
    answers.assign(probability=0).to_csv(public / "sampleSubmission.csv", index=False)


def prepare_dev(raw: Path, public: Path, private: Path) -> None:
    """The development split: the public train2.zip's two days, one for each part."""
    prepare(raw, public, private, days=DAYS // 2)


def _recording_time(clip: str) -> str:
    """`<date>_<time>_<offset>_` of a training or test clip name."""
    return re.split(r"TRAIN\d|Test\d", PurePosixPath(clip).name)[0]


def _training_clips(folder: Path) -> set[str]:
    with zipfile.ZipFile(folder / "train2.zip") as archive:
        names = [n for n in archive.namelist() if n.endswith(".aif")]
    return {_recording_time(name) for name in names}


STATEMENT = """\
# The ICML 2013 Whale Challenge - Right Whale Redux

Marine autonomous recording units (hydrophones) listened to the ocean for days. Each
recording was cut into short clips (about 2 seconds, sampled at 2 kHz). Predict, for
each test clip, the probability that it contains the up-call of a North Atlantic right
whale rather than only noise.

## Data (read-only, in {data_dir})
- `train2.zip`: the labelled clips as AIFF audio, in a folder `train2/`. A clip is named
  `<YYYYMMDD>_<HHMMSS>_<offset>_TRAIN<idx>_<label>.aif` (e.g.
  `20090328_000000_010s2ms_TRAIN3_0.aif`): the date and time the recording started, the
  clip's offset into it, its index, and the label: `_1.aif` is a whale call, `_0.aif`
  noise.
- `test2.zip`: the clips to score, in a folder `test2/`, named
  `<YYYYMMDD>_<HHMMSS>_<offset>_Test<idx>.aif`.
- `sampleSubmission.csv`: a valid submission in the right format (it predicts 0 for
  every clip).

Training clips come from two recording days and test clips from two later days; within
each file, indices follow time.

## Metric
Area under the ROC curve of your probabilities against the true labels. Higher is
better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per clip in
`test2.zip`, naming the clip by its file name:

```
clip,probability
20090330_000000_015s2ms_Test0.aif,0.07
20090330_000000_020s0ms_Test1.aif,0.93
```

`probability` must lie between 0 and 1. Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="the-icml-2013-whale-challenge-right-whale-redux",
    name="The ICML 2013 Whale Challenge - Right Whale Redux",
    split="lite",
    metric="roc_auc",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="clip",
        columns=(Column("probability", "probability"),),
        answers_file="test.csv",
        sample_file="sampleSubmission.csv",
    ),
    raw_files=("train2.zip",),
    prepare=prepare,
    num_teams=129,
    thresholds=Thresholds(gold=0.98961, silver=0.95017, bronze=0.90521, median=0.86521),
    sample_score=0.5,
    statement=STATEMENT,
    checksums=Checksums(
        public={"sampleSubmission.csv": "76160a892fbd2db6d847bd444f576cee"},
        private={"test.csv": "199fdb3b74d7e1bc30fabc4fe4c66743"},
    ),
    dev_variant=DevVariant(
        prepare=prepare_dev,
        train_ids=_training_clips,
        test_ids=ids_in("test.csv", "clip", form=_recording_time),
        seed=None,
    ),
)
