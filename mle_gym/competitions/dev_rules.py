"""Development rules for competitions whose public files lack the layout of their raw files.

The natural development split is the competition's own `prepare` applied to its public files
as if they were raw. Where Kaggle shipped the training table zipped (`train.zip` holding
`train.csv`) or under another name, MLE-bench's public/ holds it unzipped or renamed; these
rules rebuild that raw layout from the public files (links, or archives packed from them) in
a scratch folder and run the competition's own `prepare` on it, so grouping, ratio and seed
stay the competition's.
"""

from __future__ import annotations

import tempfile
import zipfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from mle_gym.competitions.csv_io import read_csv
from mle_gym.competitions.hardlink_helpers import link_or_copy
from mle_gym.competitions.holdout import holdout
from mle_gym.competitions.spec import PrepareFn

if TYPE_CHECKING:
    import pandas as pd


def public_as_raw(
    prepare: PrepareFn,
    *,
    links: Mapping[str, str] | None = None,
    zips: Mapping[str, Mapping[str, str]] | None = None,
) -> PrepareFn:
    """`prepare` run on the public files laid out as raw files.

    `links` maps a raw file's name to the public file that plays it; `zips` maps a raw
    archive's name to its members, each member name (a file, or a folder prefix) to the
    public file or folder packed under it."""

    def carve(folder: Path, public: Path, private: Path) -> None:
        with tempfile.TemporaryDirectory(prefix=".raw-", dir=folder.parent) as scratch:
            raw = Path(scratch)
            for raw_name, public_name in (links or {}).items():
                link_or_copy(folder / public_name, raw / raw_name)
            for archive, members in (zips or {}).items():
                _pack(folder, raw / archive, members)
            prepare(raw, public, private)

    carve.__qualname__ = f"public_as_raw({prepare.__module__}.{prepare.__qualname__})"
    return carve


def holdout_as_raw(
    prepare: PrepareFn,
    test_file: str,
    *,
    source: str = "train.csv",
    test_size: float = 0.1,
    shape: Callable[[pd.DataFrame], pd.DataFrame] | None = None,
) -> PrepareFn:
    """`prepare` run on the public labelled table split in two, for competitions whose test
    set was Kaggle's own labelled test file rather than a share of the training rows.

    The public `source` is split with MLE-bench's holdout convention (`test_size`, seed 0):
    its training rows become raw `source`, its held-out rows raw `test_file`, reshaped by
    `shape` into that file's columns. Other public files are left where they are."""

    def carve(folder: Path, public: Path, private: Path) -> None:
        with tempfile.TemporaryDirectory(prefix=".raw-", dir=folder.parent) as scratch:
            raw = Path(scratch)
            train, test = holdout(read_csv(folder / source), test_size)
            train.to_csv(raw / source, index=False)
            (shape(test) if shape else test).to_csv(raw / test_file, index=False)
            prepare(raw, public, private)

    carve.__qualname__ = f"holdout_as_raw({prepare.__module__}.{prepare.__qualname__})"
    return carve


def _pack(folder: Path, archive: Path, members: Mapping[str, str]) -> None:
    """An uncompressed zip (the prepare only reads it back) of public files and folders."""
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_STORED) as packed:
        for member, public_name in members.items():
            source = folder / public_name
            if source.is_dir():
                for path in sorted(source.rglob("*")):
                    if path.is_file():
                        packed.write(path, f"{member}/{path.relative_to(source).as_posix()}")
            else:
                packed.write(source, member)


def rebuilt_raw(prepare: PrepareFn, build: Callable[[Path, Path], None]) -> PrepareFn:
    """`prepare` run on raw files that `build(folder, raw)` makes from the public files in
    `folder`, for raw archives whose members public/ lays out differently (a folder inside
    the zip, a different archive format) than `links` and `zips` can say."""

    def carve(folder: Path, public: Path, private: Path) -> None:
        with tempfile.TemporaryDirectory(prefix=".raw-", dir=folder.parent) as scratch:
            raw = Path(scratch)
            build(folder, raw)
            prepare(raw, public, private)

    carve.__qualname__ = f"rebuilt_raw({prepare.__module__}.{prepare.__qualname__})"
    return carve


def scaled_count(held_out: int, public_rows: int) -> int:
    """A fixed held-out count brought to the public part: the share `held_out` rows were of
    Kaggle's training set (the public rows and the held-out ones), of `public_rows`, leaving
    at least one row on each side."""
    share = round(held_out * public_rows / (public_rows + held_out))
    return max(1, min(public_rows - 1, share))
