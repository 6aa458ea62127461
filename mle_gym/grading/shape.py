"""Refuses submissions far beyond the competition's shape before pandas reads them.

pandas spends memory and CPU in proportion to what it is given (tens of thousands of
columns cost seconds and quadratic time; millions of short rows cost many times the file
in memory). A submission's shape is known in advance — the id column plus the targets, one
row per test id — so a bounded read of the header and a streaming line count are enough to
refuse what could never be valid, cheaply and with a reason the agent can act on.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import TYPE_CHECKING

from mle_gym.grading.errors import InvalidSubmission

if TYPE_CHECKING:
    import numpy as np

#: Columns allowed beyond the expected ones: extra columns are sometimes tolerated (an
#: index column, a comment), never thousands of them.
COLUMN_FACTOR = 2
COLUMN_SLACK = 16
#: Bytes the header line may take: generous for long column names, bounded all the same.
HEADER_BASE_BYTES = 64 * 1024
HEADER_BYTES_PER_COLUMN = 512
#: Longest cell the record count reads (the csv module's default is 128 KiB).
_CELL_LIMIT = 16 * 1024**2
#: Lines allowed per expected row, plus slack (quoted cells may span lines; blank lines
#: and a header add a few).
ROW_FACTOR = 3
ROW_SLACK = 1000
_CHUNK = 1 << 20
_LF, _CR = 0x0A, 0x0D


def header_limit(expected_columns: int) -> int:
    return HEADER_BASE_BYTES + HEADER_BYTES_PER_COLUMN * expected_columns


def read_header(path: Path, expected_columns: int) -> list[str]:
    """The header's column names as written (spaces kept), read with a bounded read."""
    limit = header_limit(expected_columns)
    with open(path, "rb") as handle:
        head = handle.read(limit + 1)
    if not head.strip():
        raise InvalidSubmission("the submission file is empty")
    end = _line_end(head)
    if end < 0 and len(head) > limit:
        raise InvalidSubmission(
            f"the header line is longer than {limit} bytes; expected {expected_columns} "
            "column(s): the id column and the target column(s)"
        )
    line = (head if end < 0 else head[:end]).decode("utf-8-sig", errors="replace")
    return next(csv.reader([line]), [])


def check_header(names: list[str], expected_columns: int) -> None:
    """Too many columns, or a name written twice (which of the two is the prediction would
    be a guess; pandas would rename the second `x.1`). Names are compared as written, as
    MLE-bench's pandas reads them: `id` and ` id` are two columns."""
    most = COLUMN_FACTOR * expected_columns + COLUMN_SLACK
    if len(names) > most:
        raise InvalidSubmission(
            f"the header has {len(names)} columns; expected {expected_columns} (the id column "
            f"and the target column(s)), and at most {most} are read"
        )
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise InvalidSubmission(
                f"column {name!r} appears more than once in the header; write each column once"
            )
        seen.add(name)


def check_line_count(path: Path, expected_rows: int) -> None:
    """Count line endings as pandas and pyarrow end a row (LF, CRLF and a bare CR) in
    fixed-size chunks, stopping as soon as the bound is passed; past it, count CSV
    records instead (a sample that keeps long multi-line text cells, such as a question's
    body, has many lines per row) before refusing."""
    import numpy as np

    most = ROW_FACTOR * expected_rows + ROW_SLACK
    lines = 0
    carried_cr = False  # a CR ended the last chunk: an LF first here is its CRLF
    # one buffer and one scratch array for every chunk: fresh ones each time cost page
    # faults, which in the grading child are much of a pass over a large file
    capacity = max(1, min(_CHUNK, path.stat().st_size))
    buffer = bytearray(capacity)
    scratch = np.empty(capacity, dtype=bool)
    with open(path, "rb", buffering=0) as handle:
        while size := handle.readinto(buffer):
            lines += _line_endings(buffer, size, scratch) - (carried_cr and buffer[0] == _LF)
            carried_cr = buffer[size - 1] == _CR
            if lines > most:
                break
        else:
            return
    if _records_over(path, most):
        raise InvalidSubmission(
            f"the submission has more than {most} rows; expected {expected_rows} rows "
            "(one per test id) plus the header"
        )


def _line_endings(buffer: bytearray, size: int, scratch: np.ndarray) -> int:
    """Line endings in the first `size` bytes of `buffer`: each LF, and each CR not
    followed by an LF.

    This pass reads the whole submission before it is parsed, so it is kept to one
    vectorised count of LFs (numpy's is several times quicker than `bytes.count`), into
    `scratch`; CRs are counted only in a chunk that has one (almost no file does), which
    a memchr finds."""
    import numpy as np

    view = np.frombuffer(buffer, dtype=np.uint8, count=size)
    lines = int(np.count_nonzero(np.equal(view, _LF, out=scratch[:size])))
    if buffer.find(b"\r", 0, size) >= 0:
        lines += buffer.count(b"\r", 0, size) - buffer.count(b"\r\n", 0, size)
    return lines


def _line_end(head: bytes) -> int:
    """Where the first line of `head` ends (at a CR or an LF), or -1."""
    ends = [at for at in (head.find(b"\n"), head.find(b"\r")) if at >= 0]
    return min(ends, default=-1)


def _records_over(path: Path, most: int) -> bool:
    """Whether the file holds more than `most` CSV records, streamed record by record."""
    csv.field_size_limit(_CELL_LIMIT)
    with open(path, newline="", encoding="utf-8", errors="replace") as handle:
        try:
            for count, _record in enumerate(csv.reader(handle), start=1):
                if count > most:
                    return True
        except csv.Error as exc:
            raise InvalidSubmission(f"the submission is not a readable CSV file: {exc}") from None
    return False


def check_shape(path: Path, expected_columns: int, expected_rows: int) -> None:
    """Raise InvalidSubmission when the file is far beyond the expected shape."""
    check_header(read_header(path, expected_columns), expected_columns)
    check_line_count(path, expected_rows)
