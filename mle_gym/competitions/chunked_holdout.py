"""MLE-bench's holdout split (`train_test_split`, random_state 0) of a CSV too big to load.

MLE-bench loads the whole table and lets `train_test_split` shuffle it. That shuffle depends
only on the number of rows, so here the rows are counted in one streamed pass, the split is
drawn on row positions, and a second pass scatters each chunk's rows to files on disk, one
per block of consecutive output positions. Each block is then loaded, put in order and
handed back, so peak memory is about one chunk plus one block, whatever the file's size.
Written block by block with `append_csv`, the output has the bytes of MLE-bench's, provided
every chunk is read with the same column types (e.g. `dtype=str` for text tables).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from mle_gym.lazy import np, pd

ChunkReader = Callable[[], Iterable["pd.DataFrame"]]
#: Rows per block handed back; a few hundred MB of text for the tables this serves.
BLOCK_ROWS = 500_000
_POSITION = "__position__"


def _scatter(
    read_chunks: ChunkReader, workdir: Path, part_of: np.ndarray, rank: np.ndarray, block_rows: int
) -> None:
    """Pickle each chunk's rows into `<part>-<block>-<chunk>.pkl` files with their rank."""
    start = 0
    for number, chunk in enumerate(read_chunks()):
        rows = np.arange(start, start + len(chunk))
        start += len(chunk)
        for part in (0, 1):
            mine = rows[part_of[rows] == part]
            blocks = rank[mine] // block_rows
            for block in np.unique(blocks):
                picked = mine[blocks == block]
                piece = chunk.iloc[picked - rows[0]].assign(**{_POSITION: rank[picked]})
                piece.to_pickle(workdir / f"{part}-{block}-{number}.pkl")


def _blocks(workdir: Path, part: int, count: int) -> Iterator[pd.DataFrame]:
    for block in range(count):
        files = sorted(workdir.glob(f"{part}-{block}-*.pkl"))
        pieces = [pd.read_pickle(path) for path in files]
        for path in files:
            path.unlink()
        ordered = pd.concat(pieces).sort_values(_POSITION, kind="stable")
        yield ordered.drop(columns=_POSITION)


def chunked_holdout(
    read_chunks: ChunkReader,
    workdir: Path,
    *,
    test_size: float = 0.1,
    block_rows: int = BLOCK_ROWS,
) -> tuple[Iterator[pd.DataFrame], Iterator[pd.DataFrame]]:
    """(train blocks, test blocks): the rows `train_test_split(table, test_size=test_size,
    random_state=0)` would give, in its order, as consecutive frames.

    `read_chunks` is called twice and must yield the table's rows in file order both times;
    `workdir` holds the scattered rows (about the table's size) until the blocks are read.
    """
    from sklearn.model_selection import train_test_split

    total = sum(len(chunk) for chunk in read_chunks())
    train_rows, test_rows = train_test_split(np.arange(total), test_size=test_size, random_state=0)
    part_of = np.zeros(total, dtype=np.int8)
    part_of[test_rows] = 1
    rank = np.empty(total, dtype=np.int64)
    rank[train_rows] = np.arange(len(train_rows))
    rank[test_rows] = np.arange(len(test_rows))
    _scatter(read_chunks, workdir, part_of, rank, block_rows)
    counts = (-(-len(train_rows) // block_rows), -(-len(test_rows) // block_rows))
    return _blocks(workdir, 0, counts[0]), _blocks(workdir, 1, counts[1])


def append_csv(frame: pd.DataFrame, path: Path, first: bool) -> None:
    """Write `frame` as the first block of `path` (with the header) or append it."""
    frame.to_csv(path, index=False, header=first, mode="w" if first else "a")
