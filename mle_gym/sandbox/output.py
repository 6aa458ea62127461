"""Turning a command's raw byte stream into a bounded, readable observation.

Output can be gigabytes of binary noise; the host keeps only a head and a tail of it in
memory (the whole stream goes to a log file), then decodes them safely.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import BinaryIO

# CSI and OSC escape sequences, and lone escapes, as terminals and progress bars emit them.
_ANSI = re.compile(rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


@dataclass
class BoundedCapture:
    """Keeps the first and last `limit` bytes of a stream and counts the rest.

    The log gets at most `log_limit` bytes of the stream's head; `finish_log` then adds
    the kept tail, so a step printing at full speed for an hour writes megabytes, not
    hundreds of gigabytes, to the host.
    """

    limit: int
    log: BinaryIO | None = None
    log_limit: int = 1 << 62
    head: bytearray = field(default_factory=bytearray)
    tail: bytearray = field(default_factory=bytearray)
    total: int = 0

    def feed(self, data: bytes) -> None:
        if not data:
            return
        if self.log is not None and self.total < self.log_limit:
            self.log.write(data[: self.log_limit - self.total])
        self.total += len(data)
        room = self.limit - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > self.limit:
                del self.tail[: len(self.tail) - self.limit]

    def finish_log(self) -> int:
        """Close the log's account: past the limit, say what was left out and add the tail.
        Returns the bytes the log holds."""
        if self.log is None:
            return 0
        if self.total <= self.log_limit:
            return self.total
        tail = bytes(self.tail[-min(len(self.tail), self.total - self.log_limit) :])
        note = (
            f"\n[... the log keeps the first {self.log_limit:,} and the last {len(tail):,} "
            f"of {self.total:,} bytes ...]\n"
        ).encode()
        self.log.write(note + tail)
        return self.log_limit + len(note) + len(tail)

    @property
    def complete(self) -> bool:
        """True when nothing was dropped, i.e. head + tail is the whole stream."""
        return self.total <= 2 * self.limit

    def data(self) -> bytes:
        """The whole stream; only valid when `complete`."""
        return bytes(self.head + self.tail)


def clean_text(raw: bytes) -> str:
    """Decode bytes for a reader: invalid UTF-8 replaced, escapes and control bytes removed,
    and carriage-return rewrites (progress bars) collapsed to what a terminal would show."""
    text = _ANSI.sub(b"", raw).decode("utf-8", errors="replace")
    text = text.replace("\r\n", "\n")
    if "\r" in text:
        text = "\n".join(
            line.rsplit("\r", 1)[-1] if line.strip("\r") else line.replace("\r", "")
            for line in text.split("\n")
        )
    return _CONTROL.sub("", text)


def render(capture: BoundedCapture, max_chars: int, log_hint: str | None = None) -> str:
    """At most about `max_chars` characters: the head and tail with a marker between."""
    if capture.complete:
        text = clean_text(capture.data())
        if len(text) <= max_chars:
            return text
        head_text, tail_text = text, text
    else:
        head_text, tail_text = clean_text(bytes(capture.head)), clean_text(bytes(capture.tail))
    half = max(max_chars // 2, 1)
    head, tail = head_text[:half], tail_text[-half:]
    where = f"; the full output is in {log_hint}" if log_hint else ""
    marker = (
        f"\n[... output truncated: {capture.total:,} bytes in all, showing the first and last "
        f"{half:,} characters{where} ...]\n"
    )
    return head + marker + tail
