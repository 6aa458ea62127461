"""Answer keys kept on disk, so a competition's answers are parsed and sorted once.

An RL run grades every rollout of every group against the same answers. Reading a
million-row answers file, typing its columns and sorting it by id is most of the work of
a grade; the result depends only on the answers and the submission format, so it is
written once (Arrow IPC, beside the answers in private/, which no sandbox sees) and
memory-mapped by every later grade, with the index that lines submitted ids up with it
(`id_index`) in columns of its own. The file's name carries a fingerprint of the answers
files, the format and mle_gym's version: a change to any of them makes a new key. A key
that cannot be written (a read-only private/) or read is simply built again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from mle_gym.competitions.spec import Competition
from mle_gym.grading.id_index import index_from_columns
from mle_gym.grading.validation import AnswerKey, answer_key
from mle_gym.version import __version__

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import pyarrow as pa

FOLDER = ".answer-keys"
#: Bump when the key's content changes meaning (how ids are stripped, values typed...).
LAYOUT = 4
#: Prefix of the id index's columns in the key file; no submission column is named so.
INDEX_PREFIX = "mle_gym.index."


def _format_text(comp: Competition) -> str:
    """The submission format as text that is the same in every process: a custom answers
    reader is named, since a function's repr holds its address."""
    fmt = comp.submission
    reader = fmt.load_answers
    named = f"{reader.__module__}.{reader.__qualname__}" if reader is not None else None
    return repr(dataclasses.replace(fmt, load_answers=None)) + f"|{named}"


def _fingerprint(comp: Competition, private_dir: Path) -> str:
    digest = hashlib.sha256(f"{LAYOUT}|{__version__}|{comp.id}|{_format_text(comp)}".encode())
    for path in sorted(private_dir.rglob("*")):
        if path.is_file() and FOLDER not in path.relative_to(private_dir).parts:
            stat = path.stat()
            digest.update(
                f"|{path.relative_to(private_dir)}:{stat.st_size}:{stat.st_mtime_ns}".encode()
            )
    return digest.hexdigest()[:32]


def _read(path: Path, id_column: str) -> AnswerKey | None:
    import pyarrow as pa

    try:
        with pa.memory_map(str(path)) as source:
            table = pa.ipc.open_file(source).read_all()
        integer_ids = (table.schema.metadata or {}).get(b"integer_ids") == b"1"
        own = [n for n in table.column_names if not n.startswith(INDEX_PREFIX)]
        frame = table.select(own).to_pandas()
        index = {
            n.removeprefix(INDEX_PREFIX): _array(table.column(n))
            for n in table.column_names
            if n.startswith(INDEX_PREFIX)
        }
    except (OSError, pa.ArrowException):
        return None
    if id_column not in frame.columns:
        return None
    ids = table.column(id_column)
    return AnswerKey(frame, integer_ids, index_from_columns(index, ids) if index else None)


def _array(column: pa.ChunkedArray) -> np.ndarray:
    """A numeric column as numpy, without a copy when it is one piece (memory-mapped); a
    column of fixed-size lists as a matrix of one row per list."""
    import numpy as np
    import pyarrow as pa

    if pa.types.is_fixed_size_list(column.type):
        width = column.type.list_size
        flat = [np.asarray(c.flatten()) for c in column.chunks]
        values = flat[0] if len(flat) == 1 else np.concatenate(flat)
        return values.reshape(len(column), width)
    if column.num_chunks == 1:
        return np.asarray(column.chunk(0))
    return column.to_numpy()


def _column(values: np.ndarray) -> pa.Array:
    """An index array as an Arrow column: a matrix becomes one fixed-size list per row."""
    import pyarrow as pa

    if values.ndim == 2:
        return pa.FixedSizeListArray.from_arrays(pa.array(values.ravel()), values.shape[1])
    return pa.array(values)


def _write(path: Path, key: AnswerKey) -> None:
    """Write atomically, dropping keys of earlier answers; any failure leaves no file."""
    import pyarrow as pa

    try:
        # One thread: under the grading child's memory limit a thread may not start.
        table = pa.Table.from_pandas(key.frame, preserve_index=False, nthreads=1)
    except (pa.ArrowException, TypeError, ValueError):
        return  # values Arrow cannot hold: this key is rebuilt each time
    if key.ids is not None:
        for name, values in key.ids.columns().items():
            table = table.append_column(INDEX_PREFIX + name, _column(values))
    table = table.replace_schema_metadata({"integer_ids": "1" if key.integer_ids else "0"})
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}")
    try:
        path.parent.mkdir(exist_ok=True)
        with pa.OSFile(str(tmp), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
        os.replace(tmp, path)
        for old in path.parent.glob("*.arrow"):
            if old != path:
                old.unlink(missing_ok=True)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)


def load_key(
    comp: Competition, private_dir: Path, load_answers: Callable[[], pd.DataFrame]
) -> AnswerKey:
    """The answer key of `comp`, from disk when an up-to-date one is there."""
    path = private_dir / FOLDER / f"{_fingerprint(comp, private_dir)}.arrow"
    if path.is_file():
        key = _read(path, comp.submission.id_column)
        if key is not None:
            return key
    key = answer_key(load_answers(), comp.submission)
    _write(path, key)
    return key
