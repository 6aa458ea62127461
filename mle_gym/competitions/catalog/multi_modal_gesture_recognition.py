"""Multi-modal Gesture Recognition (ChaLearn 2013): the Italian signs performed in a video.

Kaggle kept the labels of its final test videos, so MLE-bench uses its own fixed split:
the fourth training archive, `training4.tar.gz`, becomes the test set (`test.tar.gz`);
`training.csv` loses the rows of its samples, which become the answers; `test.csv` lists
their ids and `randomPredictions.csv` (the sample submission) gives each a random order of
the 20 gestures (`random.seed(0)`). Every other archive is placed unchanged, by hard link.

The leak (openai/mle-bench issue 77): each sample's zip holds `<sample>_data.mat`, whose
`Video.Labels` struct lists the sample's gestures by name with their first and last
frames, so MLE-bench's test archive contains its own answers. We rewrite that archive
with `Video.Labels` cut to an empty struct array (fields `Name`, `Begin`, `End` kept, no
elements; Kaggle's own validation and test samples have this field empty); every other
field of the `.mat` file keeps its bytes (`mat_struct_fields`), and every other file of
each zip keeps its content (entries are re-deflated). Every zip in the archive is treated
so, though only top-level ones count as samples (as in MLE-bench); a zip without a `Labels`
field to empty stops the preparation rather than publish a layout we have not checked.

Grading (`gesture_edit_distance`): every test `Id` needs exactly one row, as MLE-bench
requires. MLE-bench lets pandas read `Id` as an integer, so `0300`, `300` and `300.0` all
name sample 0300; the answers' ids are read as integers here too. Sequences must be
integers separated by spaces; an empty cell is refused (MLE-bench fails on it).
"""

from __future__ import annotations

import copy
import gzip
import random
import shutil
import tarfile
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import IO

from mle_gym.competitions.csv_io import read_csv
from mle_gym.competitions.dev_ids import ids_in
from mle_gym.competitions.dev_rules import rebuilt_raw
from mle_gym.competitions.hardlink_helpers import link_or_copy, place_file
from mle_gym.competitions.mat_struct_fields import empty_struct_field
from mle_gym.competitions.prepare_progress import Progress
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    SubmissionFormat,
    Thresholds,
)
from mle_gym.competitions.zip_members import FIXED_TIME
from mle_gym.lazy import pd

TEST_ARCHIVE = "training4.tar.gz"
#: The public training archive a development split holds out, as MLE-bench held out the
#: last of Kaggle's.
DEV_TEST_ARCHIVE = "training3.tar.gz"
PLACED_AS_THEY_ARE = (
    "training1.tar.gz",
    "training2.tar.gz",
    "training3.tar.gz",
    "validation1.tar.gz",
    "validation2.tar.gz",
    "validation3.tar.gz",
    "devel01-40.7z",
    "valid_all_files_combined.7z",
    "sample_code_mmrgc.zip",
)
LABEL_FIELD = "Labels"
GESTURES = 20
#: Zips up to this size are rewritten in memory, larger ones through a temporary file.
_SPOOL_BYTES = 512 * 1024 * 1024


def _copied_info(info: zipfile.ZipInfo) -> zipfile.ZipInfo:
    """A new entry with `info`'s name, time, compression method and attributes (deflated
    entries are written at level 1: they hold compressed video, and speed matters more)."""
    entry = zipfile.ZipInfo(info.filename, info.date_time)
    entry.compress_type = info.compress_type
    entry.external_attr = info.external_attr
    entry.create_system = info.create_system
    entry.comment = info.comment
    return entry


def _strip_sample(source: IO[bytes], target: IO[bytes], sample: str) -> None:
    """Copy the zip `source` into `target`, every `.mat` file's `Labels` emptied."""
    emptied = 0
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w", compresslevel=1) as zout:
        zout.comment = zin.comment
        for info in zin.infolist():
            if info.filename.lower().endswith(".mat"):
                data, found = empty_struct_field(zin.read(info), LABEL_FIELD)
                emptied += found
                zout.writestr(_copied_info(info), data)
                continue
            large = info.file_size >= zipfile.ZIP64_LIMIT
            with (
                zin.open(info) as src,
                zout.open(_copied_info(info), "w", force_zip64=large) as dst,
            ):
                shutil.copyfileobj(src, dst, 1 << 20)
    if not emptied:
        raise ValueError(
            f"{sample} in {TEST_ARCHIVE} holds no .mat file with a {LABEL_FIELD!r} field; its "
            "layout differs from the one whose labels this preparation removes"
        )


def _is_top_level(member: tarfile.TarInfo) -> bool:
    """A zip at the archive's top level: the files MLE-bench counts as test samples."""
    return PurePosixPath(member.name).parent == PurePosixPath(".")


@contextmanager
def _new_tar_gz(dest: Path, compresslevel: int = 1) -> Iterator[tarfile.TarFile]:
    """A gzip-compressed tar open for writing, its gzip header's time fixed."""
    with (
        gzip.GzipFile(dest, "wb", compresslevel=compresslevel, mtime=FIXED_TIME) as packed,
        tarfile.open(fileobj=packed, mode="w") as tar,
    ):
        yield tar


def write_test_archive(source: Path, dest: Path) -> list[str]:
    """`source` (a tar.gz of sample zips) rewritten to `dest` with every zip's labels
    stripped; returns the test ids (each top-level zip's last four name characters), sorted.
    """
    ids = []
    with (
        tarfile.open(source, "r|gz") as tin,
        _new_tar_gz(dest) as tout,
        Progress("test samples without labels") as progress,
    ):
        for member in tin:
            if not (member.isfile() and member.name.endswith(".zip")):
                tout.addfile(member, tin.extractfile(member) if member.isfile() else None)
                continue
            if _is_top_level(member):
                ids.append(PurePosixPath(member.name).stem[-4:])
            with (
                tempfile.SpooledTemporaryFile(_SPOOL_BYTES, dir=dest.parent) as original,
                tempfile.SpooledTemporaryFile(_SPOOL_BYTES, dir=dest.parent) as stripped,
            ):
                shutil.copyfileobj(tin.extractfile(member), original, 1 << 20)
                _strip_sample(original, stripped, member.name)
                rewritten = copy.copy(member)
                rewritten.size = stripped.tell()
                stripped.seek(0)
                tout.addfile(rewritten, stripped)
            progress.add(rewritten.size)
    if not ids:
        raise ValueError(f"{source.name} holds no sample zip at its top level")
    return sorted(ids)


def _random_orders(ids: list[str]) -> pd.DataFrame:
    """MLE-bench's sample submission: each id gets the 20 gestures in a random order."""
    rng = random.Random(0)
    orders = [" ".join(map(str, rng.sample(range(1, GESTURES + 1), GESTURES))) for _ in ids]
    return pd.DataFrame({"Id": ids, "Sequence": orders})


def prepare(raw: Path, public: Path, private: Path) -> None:
    """MLE-bench's fixed split (see the module docstring), the test labels stripped."""
    test_ids = write_test_archive(raw / TEST_ARCHIVE, public / "test.tar.gz")
    labels = read_csv(raw / "training.csv", dtype={"Id": str, "Sequence": str})
    held_out = labels["Id"].isin(test_ids)
    if held_out.sum() != len(test_ids):
        raise ValueError(f"training.csv lacks rows for some of the {len(test_ids)} test ids")

    labels[~held_out].to_csv(public / "training.csv", index=False)
    labels[held_out].to_csv(private / "test.csv", index=False)
    pd.DataFrame({"Id": test_ids}).to_csv(public / "test.csv", index=False)
    _random_orders(test_ids).to_csv(public / "randomPredictions.csv", index=False)
    for name in PLACED_AS_THEY_ARE:
        place_file(raw / name, public / name)


def load_answers(private: Path) -> pd.DataFrame:
    """The answers with ids as integers (`0300` -> `300`), as MLE-bench's pandas reads them."""
    answers = read_csv(private / "test.csv", dtype=str, keep_default_na=False)
    return answers.assign(Id=answers["Id"].astype(int).astype(str))


def _public_as_raw(folder: Path, raw: Path) -> None:
    """Kaggle's layout from the public files, one training archive short: the last public
    one, training3.tar.gz, plays training4.tar.gz (the archive the split holds out), and
    raw training3.tar.gz is an empty archive; every other file is the public one."""
    for name in ("training.csv", *PLACED_AS_THEY_ARE):
        if name != DEV_TEST_ARCHIVE:
            link_or_copy(folder / name, raw / name)
    link_or_copy(folder / DEV_TEST_ARCHIVE, raw / TEST_ARCHIVE)
    with _new_tar_gz(raw / DEV_TEST_ARCHIVE):
        pass


STATEMENT = """\
# Multi-modal Gesture Recognition

Each sample is a recording, made with a Kinect, of one person performing a sequence of
Italian cultural signs while talking, among other movements that are not signs. The
vocabulary has 20 signs, numbered 1 to 20: 1 vattene, 2 vieniqui, 3 perfetto, 4 furbo,
5 cheduepalle, 6 chevuoi, 7 daccordo, 8 seipazzo, 9 combinato, 10 freganiente, 11 ok,
12 cosatifarei, 13 basta, 14 prendere, 15 noncenepiu, 16 fame, 17 tantotempo,
18 buonissimo, 19 messidaccordo, 20 sonostufo. For every test sample, give the signs it
contains, in the order they are performed.

## Data (read-only, in {data_dir})
- `training1.tar.gz`, `training2.tar.gz`, `training3.tar.gz`: labelled training samples;
  `test.tar.gz`: the test samples. Each archive holds one zip per sample,
  `SampleNNNNN.zip`, with `SampleNNNNN_color.mp4` (RGB video), `SampleNNNNN_depth.mp4`
  (depth video), `SampleNNNNN_user.mp4` (user segmentation mask), `SampleNNNNN_audio.wav`
  (sound) and `SampleNNNNN_data.mat`, a MATLAB file with a struct `Video`: `NumFrames`,
  `FrameRate`, `MaxDepth`, `Frames` (the Kinect skeleton of each frame: joint types and
  world/pixel positions and rotations) and `Labels` (each sign's `Name`, `Begin` and
  `End` frame; empty in test and validation samples).
- `training.csv`: the signs of every training sample: `Id` (the last four digits of the
  sample's number, e.g. `0001` for `Sample00001.zip`) and `Sequence` (the sign numbers in
  order, separated by spaces, e.g. `2 14 20 6 7 3 1`).
- `validation1.tar.gz`, `validation2.tar.gz`, `validation3.tar.gz`,
  `valid_all_files_combined.7z`: Kaggle's validation samples, in the same layout but
  without labels (extra unlabelled data).
- `devel01-40.7z`: further development data Kaggle shipped with the competition (batches
  `devel01` to `devel40`); `sample_code_mmrgc.zip`: the organisers' MATLAB sample code.
- `test.csv`: the `Id` of every test sample.
- `randomPredictions.csv`: a valid submission in the right format (the 20 signs in a
  random order for every sample).

The test samples are the ones of Kaggle's fourth training archive, recorded like the rest
of the training data; their rows were removed from `training.csv`.

## Metric
For each sample, the Levenshtein distance between your sequence and the true one: the
fewest signs to insert, delete or substitute to turn one into the other. The score is the
sum of these distances over the test samples divided by the number of true signs in all
test samples; lower is better, and it can exceed 1 (e.g. with too many predicted signs).

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per `Id` in
`test.csv`:

```
Id,Sequence
0300,2 14 20 6 7 3 1 13
0301,5 11 9
```

Each sequence holds integers separated by single spaces; a cell must not be empty. Put
your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="multi-modal-gesture-recognition",
    name="Multi-modal Gesture Recognition",
    split="medium",
    metric="gesture_edit_distance",
    lower_is_better=True,
    submission=SubmissionFormat(
        id_column="Id",
        columns=(Column("Sequence", "text"),),
        answers_file="test.csv",
        sample_file="randomPredictions.csv",
        load_answers=load_answers,
    ),
    raw_files=(TEST_ARCHIVE, "training.csv", *PLACED_AS_THEY_ARE),
    prepare=prepare,
    num_teams=19,
    thresholds=Thresholds(gold=0.13304, silver=0.1769, bronze=0.24926, median=0.322),
    sample_score=0.91966,
    statement=STATEMENT,
    dev_variant=DevVariant(
        prepare=rebuilt_raw(prepare, _public_as_raw),
        train_ids=ids_in("training.csv", "Id", form=lambda v: str(int(v))),
        seed=None,
    ),
    checksums=Checksums(
        public={
            "randomPredictions.csv": "f91424deb15d00eb184f5a1447cf9907",
            "test.csv": "1d20628560ba011f2866a054a7551780",
            "training.csv": "8cfa71cc5e9865ef8912e8e6efbb3acb",
        },
        private={"test.csv": "3bf5058c005b39736340bca90f69d4d9"},
    ),
)
