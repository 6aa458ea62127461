"""MLE-bench's shuffled splits of a CSV too big to hold, written byte for byte as pandas would.

MLE-bench reads a whole table, lets `train_test_split` shuffle it and writes each part with
`to_csv`. Both the shuffle and the text pandas writes for a cell depend on little of the
table: the shuffle only on the number of rows (or groups), a cell's text only on its value
and its column's type. So here:

1. the split is drawn on row positions (`holdout_order`, `group_holdout_order`), giving each
   source row a part and a rank (its position in that part's file): a few bytes a row;
2. the file is read in chunks of rows; each chunk's rows of each part go through the
   caller's `Output.make` (drop a column, renumber ids, a constant sample column) and
   `to_csv`, and each formatted line is appended to a bucket file chosen by its rank;
3. each bucket (a block of consecutive ranks) is loaded, its rows put in rank order and
   appended to the output file.

A cell may hold a line break: `to_csv` then quotes it (doubling its quotes), so a line
break ends a row exactly where an even number of quotes precede it in the formatted text
(`row_ends`); counting the raw file's rows goes the same way.

Peak memory is one chunk, one bucket and the per-row index, whatever the file's size.

Pandas infers a column's type per chunk, MLE-bench's single read over the whole file: they
agree unless a column changes type between chunks. Every chunk's types are recorded; where
a column was read as integers in one chunk and floats in another (or as empty floats and
text), the whole pass is redone with the type the whole read gives. Where the whole read's
result would depend on pandas' internal chunking (numbers in one place, text in another),
or where the formatted rows cannot be told apart by their quotes (`to_csv` arguments that do
not quote line breaks), `NotStreamable` is raised and the caller uses its in-memory path.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mle_gym.competitions.prepare_progress import Progress, note
from mle_gym.lazy import np, pd

#: Rows pandas parses at a time, at most, and about how many raw bytes.
CHUNK_ROWS = 500_000
CHUNK_BYTES = 64 << 20
#: Consecutive ranks per bucket (the lines held at once while one is put in order), at most,
#: and about how many bytes.
BUCKET_ROWS = 2_000_000
BUCKET_BYTES = 128 << 20
#: Bytes of the raw file read at a time when counting its lines.
COUNT_BLOCK = 1 << 24

Make = Callable[["pd.DataFrame", "np.ndarray"], "pd.DataFrame"]


class NotStreamable(Exception):
    """The file cannot be split chunk by chunk with MLE-bench's bytes (the reason says why)."""


def _same(rows: pd.DataFrame, rank: np.ndarray) -> pd.DataFrame:
    return rows


@dataclass(frozen=True)
class Output:
    """One file written from one part: `make(rows, ranks)` turns a chunk's rows of the part
    (with their ranks in it) into the frame to write; `write` adds `to_csv` arguments."""

    path: Path
    make: Make = _same
    write: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Order:
    """Where each source row goes: `part[i]` (-1: nowhere) and `rank[i]` within that part."""

    part: np.ndarray
    rank: np.ndarray

    def sizes(self, parts: int) -> list[int]:
        counts = np.bincount(self.part[self.part >= 0], minlength=parts)
        return [int(c) for c in counts]


def _rank_type(rows: int) -> Any:
    return np.int32 if rows < 2**31 else np.int64


def holdout_order(rows: int, test_size: float | int) -> Order:
    """`train_test_split(table, test_size=test_size, random_state=0)` on row positions: part
    0 is train, 1 is test, each in the order it returns them."""
    from sklearn.model_selection import ShuffleSplit

    # train_test_split without stratify is ShuffleSplit's first split over the rows; a
    # zero-width array of `rows` rows gives it the row count without the rows.
    splitter = ShuffleSplit(test_size=test_size, train_size=None, random_state=0)
    train, test = next(splitter.split(np.empty((rows, 0))))
    return order_of_parts(rows, [train, test])


def order_of_parts(rows: int, parts: Sequence[np.ndarray]) -> Order:
    """Part `n` holds the rows `parts[n]` lists, in that order; the other rows go nowhere."""
    kind = _rank_type(rows)
    part = np.full(rows, -1, dtype=np.int8)
    rank = np.zeros(rows, dtype=kind)
    for number, positions in enumerate(parts):
        part[positions] = number
        rank[positions] = np.arange(len(positions), dtype=kind)
    return Order(part, rank)


def group_holdout_order(keys: np.ndarray, test_size: float = 0.1) -> Order:
    """MLE-bench's split by group (see `group_holdout`) on row positions: the groups sorted
    by key are shuffled; each part's rows come group by group, in file order within one."""
    from sklearn.model_selection import train_test_split

    groups, group_of_row = np.unique(keys, return_inverse=True)
    shuffled = train_test_split(np.arange(len(groups)), test_size=test_size, random_state=0)
    parts = []
    for in_part in shuffled:
        group_rank = np.full(len(groups), -1, dtype=np.int64)
        group_rank[in_part] = np.arange(len(in_part))
        row_rank = group_rank[group_of_row]
        mine = np.flatnonzero(row_rank >= 0)
        parts.append(mine[np.argsort(row_rank[mine], kind="stable")])
    return order_of_parts(len(keys), parts)


def filter_order(kept: np.ndarray) -> Order:
    """Part 0 is the rows where `kept` is true, in file order (MLE-bench's boolean filter)."""
    return order_of_parts(len(kept), [np.flatnonzero(kept)])


def _breaks(block: Any, inside: bool) -> tuple[np.ndarray, bool]:
    """Offsets just past each line break of `block` outside quotes, and whether it ends
    inside quotes (`inside`: whether it starts so). A line break is outside quotes when an
    even number of quotes precede it; quotes are few beside bytes, so they are counted by a
    search over their positions rather than a running sum over every byte."""
    data = np.frombuffer(block, dtype=np.uint8)
    quotes = np.flatnonzero(data == ord('"'))
    breaks = np.flatnonzero(data == ord("\n"))
    outside = (np.searchsorted(quotes, breaks) + inside) % 2 == 0
    return breaks[outside] + 1, bool((len(quotes) + inside) % 2)


def row_ends(text: bytes) -> np.ndarray:
    """Offsets just past each row of CSV `text` whose quoted cells may hold line breaks,
    found block by block so that the scratch arrays stay small."""
    view = memoryview(text)
    pieces = [np.empty(0, dtype=np.int64)]
    inside = False
    for start in range(0, len(text), COUNT_BLOCK):
        ends, inside = _breaks(view[start : start + COUNT_BLOCK], inside)
        pieces.append(ends + start)
    return np.concatenate(pieces)


def count_rows(path: Path) -> int:
    """Data rows of a CSV with a header, counting line breaks outside quotes: exact unless
    lines are blank or a quote stands inside an unquoted cell, which `split_csv` detects
    and corrects."""
    lines = 0
    last = b"\n"
    inside = False
    with open(path, "rb") as source:
        while block := source.read(COUNT_BLOCK):
            if not inside and b'"' not in block:
                lines += block.count(b"\n")
            else:
                ends, inside = _breaks(block, inside)
                lines += len(ends)
            last = block[-1:]
    return max(lines - 1 + (last != b"\n" and not inside), 0)


def read_column(path: Path, column: str, read: Mapping[str, Any]) -> np.ndarray:
    """One column of the CSV, read in chunks (the keys of a group split or a filter)."""
    kwargs = {**read, "usecols": [column], "chunksize": CHUNK_ROWS}
    if isinstance(read.get("dtype"), Mapping):
        kwargs["dtype"] = {k: v for k, v in read["dtype"].items() if k == column}
    with _read_csv(path, **kwargs) as chunks:
        pieces = [chunk[column].to_numpy() for chunk in chunks]
    return np.concatenate(pieces) if pieces else np.empty(0)


def column_codes(path: Path, column: str) -> tuple[np.ndarray, np.ndarray]:
    """(codes, keys): each row's text key as its position among the sorted distinct keys,
    what `np.unique(keys, return_inverse=True)` gives, read in chunks. 4 bytes a row where
    `read_column` holds a Python string a row (~70 bytes); a missing key is NotStreamable."""
    known: pd.Index | None = None  # distinct keys, in order of first appearance
    pieces = []
    with _read_csv(path, usecols=[column], chunksize=CHUNK_ROWS) as chunks:
        for chunk in chunks:
            codes, uniques = pd.factorize(chunk[column])
            if (codes < 0).any():
                raise NotStreamable(f"{path.name} has rows without a {column}")
            uniques = pd.Index(uniques)
            if known is None:
                known = uniques
            else:
                known = known.append(uniques[known.get_indexer(uniques) < 0])
            pieces.append(known.get_indexer(uniques).astype(np.int32)[codes])
    if known is None:
        return np.empty(0, np.int32), np.empty(0, object)
    keys = known.to_numpy(dtype=object)
    by_key = np.argsort(keys, kind="stable")
    rank = np.empty(len(keys), np.int32)
    rank[by_key] = np.arange(len(keys), dtype=np.int32)
    return rank[np.concatenate(pieces)], keys[by_key]


def column_isin(path: Path, column: str, values: np.ndarray) -> np.ndarray:
    """Whether each row's `column` is among `values` (pandas' `isin`, as MLE-bench filters),
    read in chunks: a byte a row."""
    wanted = pd.Index(values)
    with _read_csv(path, usecols=[column], chunksize=CHUNK_ROWS) as chunks:
        pieces = [chunk[column].isin(wanted).to_numpy(dtype=bool) for chunk in chunks]
    return np.concatenate(pieces) if pieces else np.zeros(0, bool)


def _read_csv(source: Any, **kwargs: Any) -> Any:
    """`pd.read_csv` with MLE-bench's round-trip float parsing (see `csv_io`)."""
    if int(pd.__version__.split(".")[0]) < 3:
        kwargs.setdefault("float_precision", "round_trip")
    return pd.read_csv(source, **kwargs)


def _common_type(types: set[Any]) -> Any:
    """The type MLE-bench's whole read gives a column read as `types` in different chunks,
    where that does not depend on how pandas chunks its own read; else NotStreamable."""
    names = {str(t) for t in types}
    if names <= {"int64", "float64"}:
        return "float64"
    text = names - {"float64"}
    if len(text) == 1 and text <= {"object", "str"}:  # a chunk of empty cells reads as floats
        return text.pop()
    raise NotStreamable(f"a column is read as {sorted(names)} in different parts of the file")


@dataclass(frozen=True)
class _Sizes:
    """Rows per chunk and per bucket for a file of `rows` rows in `nbytes` bytes."""

    chunk: int
    bucket: int

    @staticmethod
    def of(rows: int, nbytes: int) -> _Sizes:
        per_row = max(nbytes / max(rows, 1), 1.0)
        return _Sizes(
            chunk=max(1, min(CHUNK_ROWS, int(CHUNK_BYTES / per_row))),
            bucket=max(1, min(BUCKET_ROWS, int(BUCKET_BYTES / per_row))),
        )


class _Buckets:
    """The formatted lines of one output, appended to one file per bucket with their ranks."""

    def __init__(self, folder: Path, size: int, rows: int) -> None:
        folder.mkdir()
        self.folder = folder
        self.rows = rows
        self.count = -(-size // rows)
        self.size = size

    def add(self, frame: pd.DataFrame, rank: np.ndarray, write: Mapping[str, Any]) -> None:
        """Format `frame` (rows ranked `rank`) bucket by bucket into the bucket files."""
        bucket = rank // self.rows
        order = np.argsort(bucket, kind="stable")
        bounds = np.flatnonzero(np.diff(bucket[order])) + 1
        for picked in np.split(order, bounds):
            number = int(bucket[picked[0]])
            text = _text(frame.iloc[picked], write)
            with open(self.folder / f"{number}.txt", "ab") as lines:
                lines.write(text)
            with open(self.folder / f"{number}.rank", "ab") as ranks:
                rank[picked].astype(np.int64).tofile(ranks)

    def expected(self, number: int) -> int:
        return min(self.rows, self.size - number * self.rows)

    def ordered(self) -> Iterator[bytes]:
        """Each bucket's lines in rank order, bucket by bucket, the files removed once read."""
        for number in range(self.count):
            text, ranks = self.folder / f"{number}.txt", self.folder / f"{number}.rank"
            lines = _rows(text.read_bytes())
            position = np.fromfile(ranks, dtype=np.int64) - number * self.rows
            expected = self.expected(number)
            if len(lines) != expected or len(position) != expected:
                raise AssertionError(f"bucket {number} holds {len(lines)} of {expected} lines")
            text.unlink()
            ranks.unlink()
            yield b"".join(map(lines.__getitem__, np.argsort(position).tolist()))
            del lines


def _rows(text: bytes) -> list[bytes]:
    """The rows of `to_csv` text, each with its line break (and those of its quoted cells)."""
    if b'"' not in text and b"\r" not in text:
        return text.splitlines(keepends=True)
    ends = row_ends(text).tolist()
    return [text[start:end] for start, end in zip([0, *ends[:-1]], ends, strict=True)]


def _text(frame: pd.DataFrame, write: Mapping[str, Any]) -> bytes:
    """`frame`'s rows as `to_csv` writes them, or NotStreamable where line breaks inside
    cells would not be told from those between rows."""
    text = frame.to_csv(index=False, header=False, lineterminator="\n", **write).encode()
    if text.count(b"\n") != len(frame) and len(row_ends(text)) != len(frame):
        raise NotStreamable("a formatted cell holds a line break outside quotes")
    return text


def _header(make: Make, first: pd.DataFrame, write: Mapping[str, Any]) -> bytes:
    empty = make(first.iloc[:0], np.empty(0, dtype=np.int64))
    return empty.to_csv(index=False, lineterminator="\n", **write).encode()


class _RowCount(Exception):
    def __init__(self, rows: int) -> None:
        self.rows = rows


def _scatter(
    path: Path,
    read: Mapping[str, Any],
    order: Order,
    parts: Sequence[Sequence[Output]],
    work: Path,
) -> tuple[list[list[_Buckets]], list[list[bytes]], dict[str, set[Any]]]:
    """Pass 2 of the module docstring: every chunk formatted and its lines bucketed."""
    sizes = order.sizes(len(parts))
    rows_per = _Sizes.of(len(order.part), path.stat().st_size)
    buckets = [
        [_Buckets(work / f"{p}-{o}", sizes[p], rows_per.bucket) for o in range(len(outs))]
        for p, outs in enumerate(parts)
    ]
    headers: list[list[bytes]] = []
    types: dict[str, set[Any]] = {}
    start = 0
    total = len(order.part)
    with (
        open(path, "rb") as source,
        _read_csv(source, chunksize=rows_per.chunk, **read) as chunks,
        Progress(f"reading {path.name}", total, unit="rows") as progress,
    ):
        for chunk in chunks:
            end = start + len(chunk)
            for column, kind in chunk.dtypes.items():
                types.setdefault(column, set()).add(kind)
            if not headers:
                headers = [[_header(o.make, chunk, o.write) for o in outs] for outs in parts]
            if end <= total:
                part, rank = order.part[start:end], order.rank[start:end]
                for number, outs in enumerate(parts):
                    picked = np.flatnonzero(part == number)
                    if not len(picked):
                        continue
                    rows = chunk.iloc[picked]
                    for output, bucket in zip(outs, buckets[number], strict=True):
                        frame = output.make(rows, rank[picked])
                        bucket.add(frame, rank[picked], output.write)
            start = end
            progress.add(source.tell() - progress.nbytes, files=len(chunk))
    if start != total:
        raise _RowCount(start)
    if not headers:  # no data rows: the header alone
        first = _read_csv(path, nrows=0, **read)
        headers = [[_header(o.make, first, o.write) for o in outs] for outs in parts]
    return buckets, headers, types


Parts = Sequence[Sequence[Output]]


def split_csv(
    path: Path,
    order: Order | Callable[[int], Order],
    parts: Parts | Callable[[list[int]], Parts],
    *,
    read: Mapping[str, Any] | None = None,
    work: Path | None = None,
) -> None:
    """Write each part's outputs from `path`, rows placed as `order` says (an `Order`, or a
    function of the row count, called again if `count_rows` miscounted). `parts` lists each
    part's outputs, or is a function of the parts' sizes that does (for ids that continue
    from one part to the next).

    `read` holds `pd.read_csv` arguments (as MLE-bench passes them); scratch files (about the
    outputs' size) go to a temporary folder in `work` (default: beside the first output).
    """
    try:
        _split_csv(path, order, parts, dict(read or {}), work)
    except NotStreamable as reason:
        note(f"{path.name} cannot be split in chunks ({reason}): it is read whole instead")
        raise


def _split_csv(
    path: Path,
    order: Order | Callable[[int], Order],
    parts: Parts | Callable[[list[int]], Parts],
    read: dict[str, Any],
    work: Path | None,
) -> None:
    make_order = order if callable(order) else (lambda _rows: order)
    current = make_order(count_rows(path) if callable(order) else len(order.part))
    scratch: Path | None = None
    try:
        while True:
            outputs = parts(current.sizes(_part_count(current))) if callable(parts) else parts
            if scratch is None:
                folder = work or outputs[0][0].path.parent
                scratch = Path(tempfile.mkdtemp(prefix=".split-", dir=folder))
            attempt = Path(tempfile.mkdtemp(dir=scratch))
            try:
                buckets, headers, types = _scatter(path, read, current, outputs, attempt)
            except _RowCount as miscount:
                if not callable(order):
                    raise NotStreamable(
                        f"{path.name} has {miscount.rows} rows, the order {len(order.part)}"
                    ) from None
                current = make_order(miscount.rows)
                shutil.rmtree(attempt)
                continue
            changed = {c: _common_type(t) for c, t in types.items() if len(t) > 1}
            if not changed:
                break
            given = read.get("dtype")
            if given is not None and not isinstance(given, Mapping):
                raise NotStreamable(f"columns {sorted(changed)} change type under dtype={given}")
            read["dtype"] = {**(given or {}), **changed}
            shutil.rmtree(attempt)
        _gather(outputs, buckets, headers)
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


def _part_count(order: Order) -> int:
    return int(order.part.max()) + 1 if len(order.part) else 1


def _gather(
    parts: Sequence[Sequence[Output]],
    buckets: list[list[_Buckets]],
    headers: list[list[bytes]],
) -> None:
    """Pass 3 of the module docstring: each output written bucket by bucket."""
    for outs, part_buckets, part_headers in zip(parts, buckets, headers, strict=True):
        for output, bucket, header in zip(outs, part_buckets, part_headers, strict=True):
            with (
                open(output.path, "wb") as target,
                Progress(f"writing {output.path.name}", bucket.size, unit="rows") as progress,
            ):
                target.write(header)
                for number, block in enumerate(bucket.ordered()):
                    target.write(block)
                    progress.add(len(block), files=bucket.expected(number))
