"""Reads a CSV file with every cell kept as the exact text written.

Grading reads two files per submission (the submission and the answers), each up to
millions of rows, every time an agent submits; in RL training that is every rollout; and
competitions read their answer files with it to pack them. The pyarrow CSV reader parses
in parallel and several times faster than pandas' parser, so it reads the common,
well-formed file. Anything it refuses (an empty file, ragged rows, bad UTF-8, repeated or
blank column names) is read again by pandas, whose behaviour and messages are the
reference: the fast path changes speed, never the outcome.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

#: Longest header line the fast path reads; a longer one goes to pandas.
_HEADER_BYTES = 1 << 20
#: Bytes per block the reader parses at once (its default is 1 MiB): smaller blocks keep
#: less in flight, for a lower peak at the same speed (benchmarks/grading_speed.py).
_BLOCK_BYTES = 1 << 19


def _header(path: Path) -> list[str] | None:
    with open(path, "rb") as handle:
        line = handle.readline(_HEADER_BYTES)
    if not line.endswith(b"\n"):
        return None
    try:
        text = line.decode("utf-8-sig").rstrip("\r\n")
    except UnicodeDecodeError:
        return None
    return next(csv.reader([text]), None)


def read_table(path: Path, types: Mapping[str, pa.DataType] | None = None) -> pa.Table | None:
    """The file as an Arrow table of text columns (or of `types`, for the columns named
    there: booleans as True/true and False/false only), or None where pandas must decide
    what it means, or a cell is not of its column's type. Text is read as pandas holds
    it (large_string), so making the frame copies nothing."""
    import pyarrow as pa
    import pyarrow.csv as pv

    names = _header(path)
    if not names or any(n.strip() == "" for n in names) or len(set(names)) != len(names):
        return None
    try:
        table = pv.read_csv(
            path,
            read_options=pv.ReadOptions(block_size=_BLOCK_BYTES),
            parse_options=pv.ParseOptions(newlines_in_values=True),
            convert_options=pv.ConvertOptions(
                column_types={n: (types or {}).get(n, pa.large_string()) for n in names},
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
                true_values=["True", "true"],
                false_values=["False", "false"],
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowException):
        return None
    if table.column_names != names or table.num_rows == 0:
        return None
    return table


class UnreadableCsv(ValueError):
    """The file is empty or not a CSV file pandas can read; `reason` says which."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.reason = reason


def read_with_pandas(path: Path) -> pd.DataFrame:
    """The file as pandas reads it, every cell as text: the reference reading."""
    import pandas as pd

    try:
        return pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False)
    except pd.errors.EmptyDataError:
        raise UnreadableCsv(path, "is empty") from None
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        if "out of memory" in str(exc):  # pandas' tokenizer says so as a parser error
            raise MemoryError(f"reading {path.name} ran out of memory: {exc}") from None
        raise UnreadableCsv(path, f"is not a readable CSV file: {exc}") from None


def read_as_text(path: Path) -> pd.DataFrame:
    """Read a CSV keeping every cell and column name as the exact text written, so no value
    is reinterpreted. Names keep their spaces, as MLE-bench's `read_csv` keeps them (a
    header ` id` names no `id` column there either); a repeated name comes back renamed by
    pandas (`x.1`), never twice. Raises UnreadableCsv."""
    table = read_table(path)
    frame = table.to_pandas() if table is not None else read_with_pandas(path)
    frame.columns = [str(c) for c in frame.columns]
    return frame
