"""Progress of long prepare steps, in files (or rows) and bytes, through `prepare`'s log.

Image sets run to millions of files and hours of placing; a competition's prepare function
only sees its folders, so the log travels in a context variable set by `mle_gym.data.prepare`.
Messages are rate-limited so that a million files do not print a million lines.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

Log = Callable[[str], None]

_log: ContextVar[Log | None] = ContextVar("mle_gym_prepare_log", default=None)

#: Seconds between two progress lines of one step.
REPORT_EVERY = 5.0


@contextmanager
def reporting_to(log: Log) -> Iterator[None]:
    """Send the progress of every prepare step run inside the block to `log`."""
    token = _log.set(log)
    try:
        yield
    finally:
        _log.reset(token)


def note(message: str) -> None:
    """Send one line to the log of the prepare running, if any."""
    log = _log.get()
    if log is not None:
        log(message)


def _size(nbytes: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if nbytes < 1000 or unit == "GB":
            return f"{nbytes:,.0f} {unit}" if unit == "B" else f"{nbytes:,.1f} {unit}"
        nbytes /= 1000
    raise AssertionError("unreachable")


class Progress:
    """Counts files (or rows: `unit`) and bytes of one step and reports them every few seconds
    and at the end."""

    def __init__(self, what: str, total: int | None = None, unit: str = "files") -> None:
        self.what = what
        self.total = total
        self.unit = unit
        self.files = 0
        self.nbytes = 0
        self._log = _log.get()
        self._start = time.monotonic()
        self._last = self._start

    def add(self, nbytes: int = 0, files: int = 1) -> None:
        self.files += files
        self.nbytes += nbytes
        now = time.monotonic()
        if self._log is not None and now - self._last >= REPORT_EVERY:
            self._last = now
            self._log(self._line())

    def done(self) -> None:
        if self._log is not None:
            self._log(self._line() + f" in {time.monotonic() - self._start:,.1f} s")

    def _line(self) -> str:
        of = f" of {self.total:,}" if self.total is not None else ""
        return f"{self.what}: {self.files:,}{of} {self.unit}, {_size(self.nbytes)}"

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, exc_type: object, *_: object) -> None:
        if exc_type is None:
            self.done()
