"""Reads a clean submission straight from the Arrow table, without the general readings.

Most submissions need none of the readings `validation` supports (ids written as floats,
booleans as 1/0, spaces around numbers, extra columns): their ids are written as the
answers write them, each test id once, and every cell already has its final form. For
those, every column is typed from the CSV reader's Arrow table and the rows are lined up
through the answer key's id index, in time linear in the rows. Anything short of that
returns None, and the general path reads the file, warns and explains: this path changes
speed, never the outcome.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from mle_gym.competitions.spec import Column, SubmissionFormat
from mle_gym.formats.csv_text import read_table
from mle_gym.grading.id_index import IdIndex

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import pyarrow as pa


def in_order(values: pd.Series, order: np.ndarray) -> pd.Series:
    """`values` reordered; numpy-backed columns by plain indexing, which is many times
    faster than pandas' take."""
    import pandas as pd

    if isinstance(values.array, pd.arrays.NumpyExtensionArray) or values.dtype.kind in "biufc":
        return pd.Series(values.to_numpy()[order], name=values.name)
    return values.take(order).reset_index(drop=True)


def _taken(column: pa.ChunkedArray, order: np.ndarray) -> pa.Array:
    """`column`'s cells in `order`. pyarrow's take of a chunked array first joins every
    chunk into one copy; that copy is kept when most cells are wanted, but a few rows of
    many chunks (H&M scores a tenth of its customers) are taken chunk by chunk instead,
    so only the wanted cells are copied."""
    import numpy as np
    import pyarrow as pa

    if column.num_chunks == 1 or 2 * len(order) >= len(column):
        return column.combine_chunks().take(order)
    sizes = np.fromiter((len(c) for c in column.chunks), np.int64, column.num_chunks)
    starts = np.concatenate(([0], np.cumsum(sizes)))
    chunk_of = np.searchsorted(starts, order, side="right") - 1
    by_chunk = np.argsort(chunk_of, kind="stable")
    bounds = np.searchsorted(chunk_of[by_chunk], np.arange(column.num_chunks + 1))
    pieces = [
        column.chunk(k).take(order[by_chunk[bounds[k] : bounds[k + 1]]] - starts[k])
        for k in range(column.num_chunks)
        if bounds[k + 1] > bounds[k]
    ]
    back = np.empty_like(by_chunk)
    back[by_chunk] = np.arange(len(by_chunk))
    return pa.concat_arrays(pieces).take(back) if pieces else column.chunk(0).slice(0, 0)


def _text(column: pa.ChunkedArray, name: str, order: np.ndarray) -> pd.Series:
    """The column's cells in `order`, as the general path's text frame holds them (same
    conversion, same dtype: read as large_string, so the conversion copies nothing)."""
    import pyarrow as pa

    return pa.table({name: _taken(column, order)}).to_pandas()[name]


def _unpadded(column: pa.ChunkedArray) -> bool:
    """Whether no cell is empty or starts or ends with anything a strip could remove (only
    printable ASCII other than a space is allowed at either end)."""
    import pyarrow.compute as pc

    if column.null_count or len(column) == 0:
        return False
    edges = (pc.utf8_slice_codeunits(column, 0, 1), pc.utf8_slice_codeunits(column, -1))
    return all(pc.all(pc.match_substring_regex(e, r"^[!-~]$")).as_py() for e in edges)


def _numbers(column: pa.ChunkedArray, spec: Column) -> pd.Series | None:
    import numpy as np
    import pandas as pd

    if column.null_count:
        return None  # empty cells, or nan and other words: the general path reads them
    values = column.to_numpy()
    if not (np.isfinite(values) | (spec.infinite & np.isinf(values))).all():
        return None
    if spec.kind in ("probability", "score") and ((values < 0) | (values > 1)).any():
        return None
    return pd.Series(values)


def _booleans(column: pa.ChunkedArray) -> pd.Series | None:
    import pandas as pd

    return None if column.null_count else pd.Series(column.to_numpy())


def _labels(column: pa.ChunkedArray, spec: Column, order: np.ndarray) -> pd.Series | None:
    """A column of a closed label set, read dictionary-encoded (see `_types`) and reordered
    through each cell's place in the set (cheaper than reordering text); None when a cell
    is not one of the labels as written."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    labels = pa.array(spec.labels, type=pa.string())
    # the codes are narrowed: a label set is small, so a row's code takes a byte, not four
    narrow = np.int8 if len(labels) <= 127 else np.int32
    pieces = []
    for chunk in column.chunks:  # each chunk has a dictionary of its own few values
        place = pc.index_in(chunk.dictionary, value_set=labels)
        if place.null_count:
            return None
        pieces.append(place.to_numpy().astype(narrow)[chunk.indices.to_numpy()])
    reordered = np.concatenate(pieces)[order] if pieces else np.zeros(0, narrow)
    text = pc.cast(pa.DictionaryArray.from_arrays(pa.array(reordered), labels), pa.large_string())
    return pa.table({spec.name: text}).to_pandas()[spec.name]


def _column(table: pa.Table, spec: Column, order: np.ndarray) -> pd.Series | None:
    """One column typed by its kind and put in the key's row order, when no reading beyond
    the plain one is needed; None otherwise."""
    column = table.column(spec.name)
    if spec.kind == "label" and spec.labels is not None:
        return _labels(column, spec, order)
    if spec.kind in ("probability", "score", "number"):
        values = _numbers(column, spec)
    elif spec.kind == "bool":
        values = _booleans(column)
    elif spec.kind == "text" or _unpadded(column):
        return _text(column, spec.name, order)
    else:
        values = None
    return None if values is None else in_order(values, order)


def _types(fmt: SubmissionFormat) -> dict[str, pa.DataType]:
    """The columns the CSV reader types itself: numbers (it reads them as the general
    path's parser does, spaces around them ignored) and booleans (True/true, False/false);
    a cell it cannot read makes the whole read fail, and the general path reads the file."""
    import pyarrow as pa

    kinds = {"probability": pa.float64(), "score": pa.float64(), "number": pa.float64(),
             "bool": pa.bool_()}  # fmt: skip
    # Ids and closed labels are only looked up, never made into pandas text: ids as the
    # narrower string type, labels dictionary-encoded (a chunk's few distinct values once).
    narrow = {c.name: pa.dictionary(pa.int32(), pa.string())
              for c in fmt.columns if c.kind == "label" and c.labels}  # fmt: skip
    typed = {c.name: kinds[c.kind] for c in fmt.columns if c.kind in kinds}
    return {fmt.id_column: pa.string(), **narrow, **typed}


def clean_predictions(
    path: Path, fmt: SubmissionFormat, index: IdIndex, expected_ids: pd.Series,
    rows: np.ndarray | None = None,
) -> pd.DataFrame | None:  # fmt: skip
    """The predictions of the submission at `path`, lined up with the answer key's rows
    (ids `expected_ids`) and typed; or None when it needs the general path. `rows`: the
    only key rows wanted (then `expected_ids` are theirs); every row is checked still."""
    import pandas as pd

    table = read_table(path, _types(fmt))
    if table is None:
        return None
    if sorted(table.column_names) != sorted([fmt.id_column, *fmt.target_names]):
        return None
    order = index.match(table.column(fmt.id_column))
    if order is None:
        return None
    if rows is not None:
        order = order[rows]
    table = table.drop_columns([fmt.id_column])  # its memory is free for the columns' copies
    typed = {}
    for spec in fmt.columns:
        typed[spec.name] = _column(table, spec, order)
        if typed[spec.name] is None:
            return None
    return pd.DataFrame({fmt.id_column: expected_ids, **typed})
