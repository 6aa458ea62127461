"""ML2021Spring HW2: framewise phoneme classification of TIMIT (39 classes), graded by accuracy.

Kaggle's test labels are hidden, so MLE-bench re-splits the labelled frames, holding out the
same share that Kaggle's test set had (about 27%, random_state=0), and numbers the test
frames 0..n-1 in the order of its new test_11.npy.

The training matrix is about 2 GB of float32. Its rows are read one by one and written one
block at a time, so preparing takes little memory; the bytes equal np.save's.

Its development variant is that prepare on the public files, whose test_11.npy gives the
share to hold out: public test / (public train + public test) is MLE-bench's share again.
The held-out frames are numbered from 0 again, so each frame is traced by its features'
bytes and its label.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

import numpy as np

from mle_gym.competitions.dev_ids import digest, public_of
from mle_gym.competitions.spec import (
    Checksums,
    Column,
    Competition,
    DevVariant,
    SubmissionFormat,
    Thresholds,
)

FOLDER = Path("timit_11") / "timit_11"
#: The phoneme classes, written as integers in the label file and the answers.
CLASSES = tuple(str(i) for i in range(39))
#: Rows gathered per block written (~35 MB of float32 rows for TIMIT's 429 features).
BLOCK_ROWS = 20_000


def _read_header(handle: BinaryIO, source: Path) -> tuple[tuple[int, ...], np.dtype, int]:
    """(shape, dtype, bytes per row) of the C-ordered .npy array `handle` reads, which is
    left at the array's first row."""
    version = np.lib.format.read_magic(handle)
    read_header = (
        np.lib.format.read_array_header_1_0
        if version == (1, 0)
        else np.lib.format.read_array_header_2_0
    )
    shape, fortran_order, dtype = read_header(handle)
    if fortran_order:
        raise ValueError(f"{source} is stored in Fortran order; expected C order")
    return shape, dtype, dtype.itemsize * int(np.prod(shape[1:]))


def save_rows(source: Path, rows: np.ndarray, dest: Path) -> None:
    """Write `source[rows]` as np.save would, reading the rows one by one into blocks.

    Rows are read with pread rather than through a memory map: a mapped file's pages count
    as the process's memory, and gathering rows from all over the file would map all of it.
    """
    with source.open("rb") as handle:
        shape, dtype, width = _read_header(handle, source)
        start = handle.tell()
        header = {
            "descr": np.lib.format.dtype_to_descr(dtype),
            "fortran_order": False,
            "shape": (len(rows), *shape[1:]),
        }
        with dest.open("wb") as out:
            np.lib.format.write_array_header_1_0(out, header)
            for first in range(0, len(rows), BLOCK_ROWS):
                block = rows[first : first + BLOCK_ROWS]
                out.write(
                    b"".join(os.pread(handle.fileno(), width, start + r * width) for r in block)
                )


def prepare(raw: Path, public: Path, private: Path) -> None:
    """Hold out len(test) / (len(train) + len(test)) of the labelled frames (random_state=0)."""
    import pandas as pd
    from sklearn.model_selection import train_test_split

    source = raw / FOLDER
    frames = len(np.load(source / "train_11.npy", mmap_mode="r"))
    unlabelled = len(np.load(source / "test_11.npy", mmap_mode="r"))
    train_rows, test_rows = train_test_split(
        range(frames), test_size=unlabelled / (frames + unlabelled), random_state=0
    )
    train_rows, test_rows = np.asarray(train_rows), np.asarray(test_rows)

    labels = np.load(source / "train_label_11.npy")
    answers = pd.DataFrame({"Id": range(len(test_rows)), "ClassId": labels[test_rows]})

    dest = public / FOLDER
    dest.mkdir(parents=True)
    save_rows(source / "train_11.npy", train_rows, dest / "train_11.npy")
    np.save(dest / "train_label_11.npy", labels[train_rows])
    save_rows(source / "train_11.npy", test_rows, dest / "test_11.npy")
    answers.assign(ClassId=0).to_csv(public / "sampleSubmission.csv", index=False)
    answers.to_csv(private / "answers.csv", index=False)


def _rows(source: Path) -> Iterator[bytes]:
    """The bytes of each row of a .npy array, read block by block in file order."""
    with source.open("rb") as handle:
        _, _, width = _read_header(handle, source)
        while block := handle.read(width * BLOCK_ROWS):
            yield from (block[i : i + width] for i in range(0, len(block), width))


def _frame_digests(rows: Iterable[bytes], labels: Iterable[object]) -> set[str]:
    return {
        digest(row + b"\x1f" + str(label).encode()) for row, label in zip(rows, labels, strict=True)
    }


def training_frames(public: Path) -> set[str]:
    """Each labelled frame of a public folder, as its features' bytes and its label."""
    folder = public / FOLDER
    return _frame_digests(_rows(folder / "train_11.npy"), np.load(folder / "train_label_11.npy"))


def answer_frames(private: Path) -> set[str]:
    """Each answer's frame (its `Id` is its row in the public test_11.npy) and label."""
    import pandas as pd

    answers = pd.read_csv(private / "answers.csv", dtype=str)
    labels = dict(zip(answers["Id"].astype(int), answers["ClassId"], strict=True))
    frames = _rows(public_of(private) / FOLDER / "test_11.npy")
    return _frame_digests(frames, (labels[i] for i in range(len(labels))))


STATEMENT = """\
# ML2021Spring-hw2

Framewise phoneme classification on the TIMIT speech corpus (homework 2 of the 2021
Machine Learning course at National Taiwan University). Each sample is one frame of speech,
described by its acoustic features and those of its neighbours; predict which of 39
phoneme classes the frame belongs to.

## Data (read-only, in {data_dir})
- `timit_11/timit_11/train_11.npy`: a float32 NumPy array of shape (frames, 429): for each
  frame, 39 MFCC features of 11 consecutive frames (the frame itself, 5 before, 5 after).
- `timit_11/timit_11/train_label_11.npy`: the class of each training frame, as the text of
  an integer from `0` to `38` (convert with `.astype(int)`).
- `timit_11/timit_11/test_11.npy`: the frames to classify, same layout as `train_11.npy`.
  Row `i` is the frame with `Id` `i`.
- `sampleSubmission.csv`: a valid submission in the right format (class 0 everywhere).

The training matrix is about 1.5 GB: `np.load(path, mmap_mode="r")` reads it lazily.

## Metric
Accuracy: the share of test frames whose class is predicted exactly. Higher is better.

## Submission
Write a CSV file to `{submission_path}` with a header and exactly one row per test frame,
`Id` from 0 to the number of test frames minus one:

```
Id,ClassId
0,36
1,5
```

`ClassId` is an integer class. Put your code in `{code_dir}`.
"""

COMPETITION = Competition(
    id="ml2021spring-hw2",
    name="ML2021Spring-hw2",
    split="dev",
    metric="accuracy",
    lower_is_better=False,
    submission=SubmissionFormat(
        id_column="Id",
        # MLE-bench reads the classes as numbers: `5.0` counts as class 5, and an integer
        # outside 0..38 is scored (as wrong), so both are accepted with a warning.
        columns=(Column("ClassId", "label", labels=CLASSES, open_labels=True),),
        answers_file="answers.csv",
        sample_file="sampleSubmission.csv",
    ),
    raw_files=tuple(
        str(FOLDER / name) for name in ("train_11.npy", "train_label_11.npy", "test_11.npy")
    ),
    prepare=prepare,
    num_teams=1524,
    thresholds=Thresholds(gold=0.76705, silver=0.76261, bronze=0.76105, median=0.72566),
    sample_score=0.05167,
    statement=STATEMENT,
    checksums=Checksums(
        public={"sampleSubmission.csv": "4fe69a042cfe9e066c088e603917eec4"},
        private={"answers.csv": "9fde0306ed6a02eea1b27686c54ce2bf"},
    ),
    dev_variant=DevVariant(train_ids=training_frames, test_ids=answer_frames),
)
