"""Readers of the ids a development variant is checked on, for `DevVariant.train_ids`/`test_ids`.

A development split is clean when its ids come from the public training table and none is a
real test id. Competitions keep those ids in different places (a labels table, file names in
a folder, a JSON list) and sometimes in another form than the submission's (one row per
patient and week); these build the readers that bring them to one comparable form.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from mle_gym.competitions.spec import IdsFn


def ids_in(
    file: str,
    column: str,
    *more: str,
    form: Callable[[str], str] | None = None,
    sep: str = ",",
) -> IdsFn:
    """The values of `column` in the CSV `file` of a folder (zipped too; `sep` for TSV);
    with `more` columns, each row's values joined by "_" (as `patient_week` ids are);
    `form` maps each id."""
    columns = [column, *more]

    def read(folder: Path) -> set[str]:
        import pandas as pd

        frame = pd.read_csv(
            folder / file, sep=sep, usecols=columns, dtype=str, keep_default_na=False
        )
        joined = frame[column].str.cat(frame[list(more)], sep="_") if more else frame[column]
        values = joined.tolist()  # far faster than iterating an Arrow-backed column
        return {form(v) for v in values} if form else set(values)

    return read


def files_in(subfolder: str, pattern: str = "*", *, stem: bool = True) -> IdsFn:
    """Names of the files matching `pattern` anywhere under `subfolder` (without suffix
    when `stem`): image sets whose file name is the id."""

    def read(folder: Path) -> set[str]:
        found = (p for p in (folder / subfolder).rglob(pattern) if p.is_file())
        return {p.stem if stem else p.name for p in found}

    return read


def dirs_in(subfolder: str, depth: int = 1, sep: str = "-") -> IdsFn:
    """Folders `depth` levels under `subfolder`, their path parts joined by `sep`: one folder
    per record (`<record_id>/`) or per trip (`<drive>/<phone>/`)."""

    def read(folder: Path) -> set[str]:
        base = folder / subfolder
        found = base.glob("/".join(["*"] * depth))
        return {sep.join(p.relative_to(base).parts) for p in found if p.is_dir()}

    return read


def json_ids(file: str, key: str) -> IdsFn:
    """The `key` of each record of a JSON list, or of JSON lines."""

    def read(folder: Path) -> set[str]:
        import pandas as pd

        path = folder / file
        with path.open() as handle:
            lines = handle.read(1).strip() != "["
        frame = pd.read_json(path, lines=lines, dtype=False)
        return set(frame[key].astype(str))

    return read


def parquet_ids(file: str, column: str) -> IdsFn:
    """The values of `column` in a Parquet table."""

    def read(folder: Path) -> set[str]:
        import pandas as pd

        return set(pd.read_parquet(folder / file, columns=[column])[column].astype(str))

    return read


def union(*readers: IdsFn) -> IdsFn:
    """The ids any of `readers` finds (e.g. image-level and study-level tables)."""

    def read(folder: Path) -> set[str]:
        found: set[str] = set()
        for reader in readers:
            found |= reader(folder)
        return found

    return read


def mapped(reader: IdsFn, form: Callable[[str], str]) -> IdsFn:
    """`reader`'s ids brought to another form (e.g. a submission row id to its group)."""

    def read(folder: Path) -> set[str]:
        return {form(v) for v in reader(folder)}

    return read


def digest(content: bytes) -> str:
    """A short content id: 64 bits of md5 (no collision is expected among a few million)."""
    import hashlib

    return hashlib.md5(content, usedforsecurity=False).hexdigest()[:16]


def row_digests(file: str, *, exclude: tuple[str, ...] = ("id",)) -> IdsFn:
    """The digest of each row of the CSV `file` (zipped too), its cells but the `exclude`d
    ones in column-name order: the ids of a table whose prepare renumbers its id column,
    traced through what the rows hold. Identical rows share one id, so an identical pair
    split across two parts counts as an id in both."""

    def read(folder: Path) -> set[str]:
        import pandas as pd

        frame = pd.read_csv(folder / file, dtype=str, keep_default_na=False)
        columns = sorted(set(frame.columns) - set(exclude))
        first, *rest = (frame[c].astype(object) for c in columns)
        joined = first.str.cat(list(rest), sep="\x1f") if rest else first
        return {digest(row.encode()) for row in joined.tolist()}

    return read


def public_of(folder: Path) -> Path:
    """The public folder of the split `folder` (its public/ or private/) belongs to: answers
    name their rows, the public files hold what the rows are."""
    return folder.parent / "public"


def file_digests(names: IdsFn, template: str) -> IdsFn:
    """The digest of the file `template.format(name)` in the split's public folder, for each
    name `names` reads: image sets whose prepare renames the files but keeps their bytes."""

    def read(folder: Path) -> set[str]:
        public = public_of(folder)
        return {digest((public / template.format(n)).read_bytes()) for n in names(folder)}

    return read
