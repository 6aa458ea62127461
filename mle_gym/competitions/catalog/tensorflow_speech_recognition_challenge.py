"""TensorFlow Speech Recognition Challenge: which word a one-second recording says, by accuracy.

Kaggle's test set was never labelled, so MLE-bench lists every `train/audio/<label>/*.wav`
of train.7z, sorts the list by `<label>_<file name>`, holds out 10% with
`train_test_split(test_size=0.1, random_state=0)`, and renames the held-out recordings
`clip_<8-digit position>.wav` in the split's order. We keep that split and its answers
exactly, with two known flaws of it (openai/mle-bench issue 63):

- the answers are the raw folder names (30 words such as `bed` or `wow`, and
  `_background_noise_`), not Kaggle's 12 classes, so `unknown` and `silence` never match
  and the Kaggle leaderboard's thresholds are hard to reach; the statement says so;
- the same speakers appear in training and test recordings.

Nothing public maps a clip back to its original name or folder: the speaker-hash file
names, Kaggle's validation_list.txt / testing_list.txt, README and LICENSE of the archive
stay out (MLE-bench copies only the wavs too), and the clips are written after all training
files, in clip order, as fresh files, so neither their inode numbers nor their times follow
the archive's label-sorted order. The archive is read as a stream (py7zr, the `archives`
extra): each training wav goes straight to its place, held-out ones through private/.
Only the host keeps each clip's origin (`private/clip_sources.csv`), for the check that a
development split, which holds out public training recordings the same way, shares none
with the real test clips.

Grading: exact-match accuracy of the label strings (`text_accuracy`), as MLE-bench's
`accuracy_score` compares them; every test clip exactly once. An empty or missing label
is scored as a wrong answer, where MLE-bench's scikit-learn call fails on it.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from mle_gym.competitions.archive_streams import member_names, stream_7z
from mle_gym.competitions.hardlink_helpers import place_files
from mle_gym.competitions.holdout import holdout
from mle_gym.competitions.prepare_progress import Progress
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.lazy import pd

ARCHIVE = "train.7z"
AUDIO = PurePosixPath("train/audio")


def labelled_wavs(archive: Path) -> list[tuple[str, str]]:
    """(label, member) of every wav under train/audio/<label>/, sorted as MLE-bench sorts."""
    found = []
    for name in member_names(archive):
        member = PurePosixPath(name)
        if member.suffix == ".wav" and AUDIO in member.parents:
            found.append((member.parent.name, name))
    return sorted(found, key=lambda item: f"{item[0]}_{PurePosixPath(item[1]).name}")


class _Wav:
    """Writes one member's bytes to a file as py7zr decompresses them."""

    def __init__(self, path: Path, progress: Progress) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file: BinaryIO = path.open("wb")
        self._progress = progress

    def write(self, chunk: bytes) -> None:
        self._file.write(chunk)

    def close(self) -> None:
        self._progress.add(self._file.tell())
        self._file.close()


def clip_name(position: int) -> str:
    return f"clip_{position:08d}.wav"


#: Host-only record of each test clip's origin, `<label>/<file name>` (a public training
#: file's place under train/audio/), so a development split can be checked against it.
SOURCES = "clip_sources.csv"

#: Puts each (label, member) source's bytes at the path it is mapped to.
Fetch = Callable[[dict[str, Path]], None]


def _split(files: list[tuple[str, str]], fetch: Fetch, public: Path, private: Path) -> None:
    """MLE-bench's split of `files`, (label, member) in its sorted order: the training
    files go to train/audio/<label>/, the held-out ones become numbered clips."""
    train, test = holdout(files, 0.1)
    destination = {
        member: public / "train" / "audio" / label / PurePosixPath(member).name
        for label, member in train
    }
    (public / "test" / "audio").mkdir(parents=True)
    with tempfile.TemporaryDirectory(dir=private) as held_out:
        for position, (_, member) in enumerate(test):
            destination[member] = Path(held_out) / clip_name(position)
        fetch(destination)
        clips = (clip_name(position) for position in range(len(test)))
        place_files(  # new files in clip order: creation order tells nothing
            ((Path(held_out) / n, public / "test" / "audio" / n) for n in clips),
            "test recordings",
            len(test),
            fresh=True,
        )

    names = [clip_name(i) for i in range(len(test))]
    answers = pd.DataFrame({"fname": names, "label": [lab for lab, _ in test]})
    answers.to_csv(private / "test.csv", index=False)
    answers.assign(label="silence").to_csv(public / "sample_submission.csv", index=False)
    sources = [f"{label}/{PurePosixPath(member).name}" for label, member in test]
    pd.DataFrame({"fname": names, "source": sources}).to_csv(private / SOURCES, index=False)


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's split of the labelled recordings (see the module docstring)."""
    archive = raw / ARCHIVE
    files = labelled_wavs(archive)

    def fetch(destination: dict[str, Path]) -> None:
        with Progress("train.7z recordings", len(files)) as progress:
            stream_7z(archive, list(destination), lambda m: _Wav(destination[m], progress))

    _split(files, fetch, public, private)


def _public_wavs(folder: Path) -> list[tuple[str, str]]:
    """(label, path under `folder`) of every public training wav, sorted as MLE-bench
    sorts the archive's."""
    found = [
        (path.parent.name, path.relative_to(folder).as_posix())
        for path in (folder / AUDIO).glob("*/*.wav")
    ]
    return sorted(found, key=lambda item: f"{item[0]}_{PurePosixPath(item[1]).name}")


def dev_prepare(folder: Path, public: Path, private: Path) -> None:
    """The same split of the public training recordings (`folder` holds the public files):
    the public train/audio/ folders are train.7z's unpacked, so they are read in place."""
    files = _public_wavs(folder)

    def fetch(destination: dict[str, Path]) -> None:
        place_files(((folder / m, d) for m, d in destination.items()), "recordings", len(files))

    _split(files, fetch, public, private)


def _train_ids(public: Path) -> set[str]:
    """`<label>/<file name>` of every training recording in a public folder."""
    return {member.removeprefix(f"{AUDIO}/") for _, member in _public_wavs(public)}


def _test_ids(private: Path) -> set[str]:
    """The training recordings the test clips were cut from, as `_train_ids` names them."""
    if not (private / SOURCES).is_file():
        raise FileNotFoundError(
            f"{private / SOURCES} is missing: this split was prepared before the clips' "
            "origins were recorded; prepare it again"
        )
    return set(pd.read_csv(private / SOURCES, dtype=str)["source"])


STATEMENT = """\
# TensorFlow Speech Recognition Challenge

Recognise a spoken word from a one-second recording. Google's Speech Commands data set
holds tens of thousands of short utterances of 30 English words by thousands of different
speakers, recorded through browsers and phones in everyday conditions.

## Data (read-only, in {data_dir})
- `train/audio/<label>/<speaker>_nohash_<n>.wav`: the training recordings, one folder per
  label; the file name starts with an id of the speaker. The 30 word folders are `bed`,
  `bird`, `cat`, `dog`, `down`, `eight`, `five`, `four`, `go`, `happy`, `house`, `left`,
  `marvin`, `nine`, `no`, `off`, `on`, `one`, `right`, `seven`, `sheila`, `six`, `stop`,
  `three`, `tree`, `two`, `up`, `wow`, `yes`, `zero`. The folder `_background_noise_` holds
  six long recordings of noise (about a minute each: white and pink noise, a running tap,
  an exercise bike, dishes being washed, a person miaowing), also treated as a label.
- `test/audio/clip_<8 digits>.wav`: the test recordings, 10% of the labelled recordings,
  held out at random. Speakers of the test clips also appear in the training folders.
- `sample_submission.csv`: a valid submission listing every test clip (it predicts
  `silence` everywhere, which is never right).

Recordings are 16-bit mono WAV files at 16 kHz, one second long or a little shorter
(except the background noise files).

## Metric
Accuracy: the share of test clips whose predicted label equals the true label exactly.
The true label of a clip is the name of the folder it came from: one of the 30 words
above, or `_background_noise_`. (The original Kaggle task asked for 12 classes, with
`unknown` for the other words and `silence`; those two never match here, so predict the
word itself.) Higher is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per test clip:

```
fname,label
clip_00000000.wav,yes
clip_00000001.wav,bird
```

Labels are compared exactly as written (case and spaces matter). Put your code in
`{code_dir}`.
"""

COMPETITION = Competition(
    extras=("archives",),
    id="tensorflow-speech-recognition-challenge",
    name="TensorFlow Speech Recognition Challenge",
    split="medium",
    metric="text_accuracy",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="fname",
        columns=(Column("label", "text"),),
        answers_file="test.csv",
        sample_file="sample_submission.csv",
    ),
    raw_files=(ARCHIVE,),
    prepare=prepare,
    num_teams=1314,
    thresholds=Thresholds(gold=0.90485, silver=0.89627, bronze=0.88793, median=0.77722),
    sample_score=0.0,
    statement=STATEMENT,
    dev_variant=DevVariant(prepare=dev_prepare, train_ids=_train_ids, test_ids=_test_ids),
    checksums=Checksums(
        public={"sample_submission.csv": "0b22e4798056a81416614ee8aa3c6ae5"},
        private={"test.csv": "5f4d739491ce2cc9acecaffca9787367"},
    ),
)
