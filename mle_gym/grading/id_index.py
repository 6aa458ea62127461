"""Lines submitted ids up with the answers' ids by hashing, in time linear in the rows.

Sorting a million text ids to line them up was most of a grade (pyarrow's string sort
alone takes about half a second here; MLE-bench's pandas sort is slower still). The
answers' ids never change, so an index over them is built once, with the answer key:
each id's bytes packed into one to eight 64-bit words, a hash of those words, and the
ids ordered by hash. A submission's ids are packed and hashed the same way, found bucket
by bucket, and then compared word by word, so a match is exact, never a hash's guess.
The key's packed ids are kept row by row (one id's words side by side): the comparison
fetches each submitted id's key row at random, and one row is then one cache line, where
a column per word cost a miss per word (H&M's 64-character ids: 8 misses per id).
Integer ids that fill enough of their range skip the hashing: a table over the range
gives each one's row (`IntegerIdIndex`).

The index answers only the common case: ids of printable ASCII with no space at either
end (so no reading of them could differ), each test id once. Anything else (spaces around
an id, other characters, an unknown, missing or repeated id) gives None, and the general
path in `validation` decides and explains.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

#: Longest id the index holds, in 64-bit words; longer ids take the general path.
MAX_WORDS = 8
#: Rows handled at once where a whole-length temporary array would only add to the peak.
_SLICE = 1 << 16
_MULTIPLIER = 0x9E3779B97F4A7C15  # odd, so multiplying by it loses no bits
_DIGIT_0, _DIGIT_9 = ord("0"), ord("9")


def _buffers(column: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, bytes) of a string array, as numpy views of its Arrow buffers."""
    import numpy as np

    wide = str(column.type) in ("large_string", "large_utf8")
    offsets = np.frombuffer(column.buffers()[1], dtype=np.int64 if wide else np.int32)
    offsets = offsets[column.offset : column.offset + len(column) + 1]
    raw = column.buffers()[2]
    data = np.frombuffer(raw, dtype=np.uint8) if raw is not None else np.zeros(0, np.uint8)
    return offsets, data[offsets[0] : offsets[-1]]


def _plain(column: pa.Array) -> tuple[np.ndarray, np.ndarray] | None:
    """The offsets and bytes of `column` when every id is non-empty printable ASCII that
    neither starts nor ends with a space (then no stripping or decoding could read it
    otherwise); None otherwise."""
    if column.null_count:
        return None
    offsets, data = _buffers(column)
    if len(data) and (data.min() < 0x20 or data.max() > 0x7E):
        return None
    starts, ends = offsets[:-1] - offsets[0], offsets[1:] - offsets[0]
    if (ends == starts).any() or (data[starts] == 0x20).any() or (data[ends - 1] == 0x20).any():
        return None
    return offsets, data


def _canonical_integers(offsets: np.ndarray, data: np.ndarray) -> bool:
    """Whether every id is a plain non-negative integer as `str(int)` writes it (digits,
    no leading zero) of one to 18 digits (always within int64): otherwise the general
    path reads, and warns about, other spellings."""
    if len(data) and (data.min() < _DIGIT_0 or data.max() > _DIGIT_9):
        return False
    lengths = offsets[1:] - offsets[:-1]
    if len(lengths) and (lengths.min() < 1 or lengths.max() > 18):
        return False
    starts = offsets[:-1] - offsets[0]
    return not ((data[starts] == _DIGIT_0) & (lengths > 1)).any()


def _all_of_width(offsets: np.ndarray, width: int) -> bool:
    """Whether every id is exactly `width` bytes long (then its bytes are its packed words)."""
    lengths = offsets[1:] - offsets[:-1]
    return bool(len(lengths) and lengths.min() == lengths.max() == width)


def _pack(column: pa.Array, offsets: np.ndarray, data: np.ndarray, words: int) -> np.ndarray:
    """Each id's bytes, padded with spaces to `words` * 8 bytes, as a (rows, words) uint64
    matrix. No id ends with a space, so two ids pack alike only when they are equal."""
    import numpy as np
    import pyarrow.compute as pc

    width = 8 * words
    if _all_of_width(offsets, width):
        block = data
    else:
        padded = pc.utf8_rpad(column, width=width, padding=" ")
        block = _buffers(padded)[1]
    return np.ascontiguousarray(block).reshape(len(offsets) - 1, width).view("<u8")


def _hash(packed: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each packed row, with its top bits well mixed (they pick buckets)."""
    import numpy as np

    mixed = np.zeros(len(packed), dtype=np.uint64)
    for k in range(packed.shape[1]):
        mixed ^= packed[:, k]
        mixed *= np.uint64(_MULTIPLIER)
        mixed ^= mixed >> np.uint64(29)
    mixed *= np.uint64(_MULTIPLIER)
    return mixed


def _chunks(ids: pa.Array | pa.ChunkedArray, rows: int) -> list[pa.Array] | None:
    """The non-empty pieces of `ids`, when they hold `rows` ids in all; None otherwise."""
    import pyarrow as pa

    if len(ids) != rows or rows == 0:
        return None
    return [c for c in (ids.chunks if isinstance(ids, pa.ChunkedArray) else [ids]) if len(c)]


def _bucket(hashes: np.ndarray, buckets: int) -> np.ndarray:
    """Each hash's bucket among `buckets`: its top 32 bits scaled to that range, so the
    buckets follow the hashes' order."""
    import numpy as np

    return (((hashes >> np.uint64(32)) * np.uint64(buckets)) >> np.uint64(32)).astype(np.intp)


def _inverse(found: np.ndarray) -> np.ndarray | None:
    """From the key row of each submitted row to the submitted row of each key row; None
    unless every key row is found exactly once."""
    import numpy as np

    order = np.full(len(found), -1, dtype=np.int32 if len(found) < 2**31 else np.int64)
    _scatter_positions(order, found)
    return None if (order < 0).any() else order


def _scatter_positions(target: np.ndarray, at: np.ndarray) -> None:
    """`target[at[i]] = i` for every i, a slice at a time (no array of all positions)."""
    import numpy as np

    for start in range(0, len(at), _SLICE):
        piece = at[start : start + _SLICE]
        target[piece] = np.arange(start, start + len(piece), dtype=target.dtype)


@dataclass(frozen=True)
class TextIdIndex:
    """The answers' ids packed into words (in the key's row order), hashed and ordered."""

    #: The packed ids, a (rows, words) matrix in the key's row order.
    packed: np.ndarray
    #: Hashes in increasing order, and the key row each belongs to.
    hashes: np.ndarray
    rows: np.ndarray
    #: Where each bucket's run of `hashes` starts (see `_lookup`).
    starts: np.ndarray
    #: Whether `packed` is the ids' own bytes (every id exactly 8 x words long, as H&M's
    #: 64-character customer ids): a stored key then keeps those bytes once, in its id
    #: column, and a grade touches one copy of them, not two.
    is_ids: bool = False

    def match(self, submitted: pa.Array | pa.ChunkedArray) -> np.ndarray | None:
        """The order that puts the submitted ids into the key's row order (row `i` of the
        key is row `order[i]` of the submission), when the submission holds each test id
        exactly once, written as the key writes it; None otherwise.

        Chunk by chunk, as the CSV reader gives them: the packed ids are made again for
        the final comparison rather than all kept at once."""
        import numpy as np

        chunks = _chunks(submitted, len(self.rows))
        if chunks is None:
            return None
        hashes, start = np.empty(len(self.rows), dtype=np.uint64), 0
        for chunk in chunks:
            packed = self._packed(chunk)
            if packed is None:
                return None
            hashes[start : start + len(chunk)] = _hash(packed)
            start += len(chunk)
        found = self._lookup(hashes)
        del hashes
        if found is None:
            return None
        start = 0
        for chunk in chunks:
            rows, start = found[start : start + len(chunk)], start + len(chunk)
            # np.take of whole rows: numpy's fancy indexing of a matrix is several times slower
            if not np.array_equal(np.take(self.packed, rows, axis=0), self._packed(chunk)):
                return None
        return _inverse(found)

    def _packed(self, chunk: pa.Array) -> np.ndarray | None:
        plain = _plain(chunk)
        if plain is None:
            return None
        offsets, data = plain
        words = self.packed.shape[1]
        if (offsets[1:] - offsets[:-1]).max() > 8 * words:
            return None
        return _pack(chunk, offsets, data, words)

    def _lookup(self, hashes: np.ndarray) -> np.ndarray | None:
        """The key row whose hash equals each of `hashes`, or None if one has none.

        A hash's bucket is its top 32 bits scaled to the number of ids; the sorted hashes
        fill the buckets in order, so a bucket is a short run of them, starting at
        `starts[bucket]`, and most lookups end at its first entry. A hash not there is
        looked for further along while the sorted hashes are still below it."""
        import numpy as np

        last = len(self.hashes) - 1
        at = np.minimum(self.starts[_bucket(hashes, len(self.hashes))], last)
        seen = self.hashes[at]
        found = np.where(seen == hashes, self.rows[at], -1).astype(self.rows.dtype, copy=False)
        pending = np.flatnonzero((seen < hashes) & (at < last))
        at = at[pending]
        while len(pending):
            at += 1
            seen = self.hashes[at]
            hit = seen == hashes[pending]
            found[pending[hit]] = self.rows[at[hit]]
            further = ~hit & (seen < hashes[pending]) & (at < last)
            pending, at = pending[further], at[further]
        return None if (found < 0).any() else found

    def columns(self) -> dict[str, np.ndarray]:
        """Its arrays to store, one value (or, for `packed`, one row) per key row; `packed`
        is left out when the key's id column holds it (see `index_from_columns`)."""
        own = {"hashes": self.hashes, "rows": self.rows, "starts": self.starts}
        return own if self.is_ids else {"packed": self.packed, **own}


@dataclass(frozen=True)
class IntegerIdIndex:
    """Non-negative integer ids that fill at least 1/`SPREAD` of their range: a submitted
    id's key row is one look-up in a table over the range, with no hashing."""

    #: The ids' values, in the key's row order.
    values: np.ndarray

    def match(self, submitted: pa.Array | pa.ChunkedArray) -> np.ndarray | None:
        """As `TextIdIndex.match`; ids must be written as plain integers.

        Each submitted id writes its row into a table over the key's range; the key's ids
        then read their submitted rows from it. As many rows as the key's, so a repeated
        or unknown id leaves some key id without a row, and that is a refusal."""
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        chunks = _chunks(submitted, len(self.values))
        if chunks is None:
            return None
        low = int(self.values.min())
        span = int(self.values.max()) - low + 1
        table = np.full(span, -1, dtype=np.int32 if len(self.values) < 2**31 else np.int64)
        start = 0
        for chunk in chunks:
            if chunk.null_count or not _canonical_integers(*_buffers(chunk)):
                return None
            offset = pc.cast(chunk, pa.int64()).to_numpy() - low
            if offset.min() < 0 or offset.max() >= span:
                return None
            table[offset] = np.arange(start, start + len(chunk), dtype=table.dtype)
            start += len(chunk)
        order = np.empty(len(self.values), dtype=table.dtype)
        for at in range(0, len(self.values), _SLICE):
            order[at : at + _SLICE] = table[self.values[at : at + _SLICE] - low]
        return None if (order < 0).any() else order

    def columns(self) -> dict[str, np.ndarray]:
        return {"values": self.values}


IdIndex = TextIdIndex | IntegerIdIndex
#: Most range, per id, the table of an `IntegerIdIndex` may span.
SPREAD = 8


def _integer_index(ids: pa.Array, offsets: np.ndarray, data: np.ndarray) -> IntegerIdIndex | None:
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    if not _canonical_integers(offsets, data):
        return None
    values = pc.cast(ids, pa.int64()).to_numpy()
    low, span = int(values.min()), int(values.max()) - int(values.min()) + 1
    if span > SPREAD * len(values):
        return None
    taken = np.zeros(span, dtype=bool)
    taken[values - low] = True
    return IntegerIdIndex(values) if int(taken.sum()) == len(values) else None


def build_index(ids: pa.Array, integers: bool) -> IdIndex | None:
    """The index of the key's ids (`ids`, in the key's row order), or None when they are
    not all plain, short and distinct: then every submission takes the general path.
    `integers`: whether the key reads ids as integers (see `validation.AnswerKey`)."""
    import numpy as np

    plain = _plain(ids)
    if plain is None or len(ids) == 0:
        return None
    offsets, data = plain
    if integers and (index := _integer_index(ids, offsets, data)) is not None:
        return index
    words = -(-int((offsets[1:] - offsets[:-1]).max()) // 8)
    if words > MAX_WORDS:
        return None
    packed = _pack(ids, offsets, data, words)
    hashes = _hash(packed)
    rows = np.argsort(hashes, kind="stable")
    ordered = hashes[rows]
    starts = np.searchsorted(_bucket(ordered, len(ids)), np.arange(len(ids))).astype(np.int32)
    is_ids = _all_of_width(offsets, 8 * words)
    index = TextIdIndex(packed, ordered, rows.astype(np.int32), starts, is_ids)
    own = index._lookup(hashes)
    if own is None or not np.array_equal(own, np.arange(len(ids))):
        return None  # repeated ids, or two ids with one hash: the general path decides
    return index


def _ids_as_words(ids: pa.ChunkedArray) -> np.ndarray | None:
    """The ids' bytes as a (rows, words) matrix, without a copy, when every id is exactly
    8 x words bytes long; None otherwise."""
    if ids.num_chunks != 1 or ids.null_count:
        return None
    offsets, data = _buffers(ids.chunk(0))
    width = int(offsets[1] - offsets[0]) if len(offsets) > 1 else 0
    if not width or width % 8 or width > 8 * MAX_WORDS or not _all_of_width(offsets, width):
        return None
    return data.reshape(len(offsets) - 1, width).view("<u8")


def index_from_columns(
    columns: dict[str, np.ndarray], ids: pa.ChunkedArray | None = None
) -> IdIndex | None:
    """The index `columns()` gave, read back (from a stored answer key whose id column,
    in the key's row order, is `ids`)."""
    if "values" in columns:
        return IntegerIdIndex(columns["values"])
    if not all(name in columns for name in ("hashes", "rows", "starts")):
        return None
    if "packed" in columns:
        packed, is_ids = columns["packed"], False
    elif ids is not None and (packed := _ids_as_words(ids)) is not None:
        is_ids = True
    else:
        return None
    return TextIdIndex(packed, columns["hashes"], columns["rows"], columns["starts"], is_ids)
