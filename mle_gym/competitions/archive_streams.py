"""Reading 7z archive members and JSON arrays as streams, never whole.

Some raw sets come as 7z archives of gigabytes (statoil's test.json unpacks to 1.5 GB,
invasive-species-monitoring's train.7z holds thousands of photographs). MLE-bench unpacks
them on disk and loads them; here each member's bytes are handed over chunk by chunk as
py7zr decompresses them, and a JSON array is parsed value by value from those chunks.
py7zr is an optional dependency, imported only where an archive is read.
"""

from __future__ import annotations

import codecs
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from mle_gym.competitions.zip_members import FIXED_TIME


class Receiver(Protocol):
    """Takes one archive member's bytes: `write` for each chunk, `close` at its end."""

    def write(self, chunk: bytes) -> object: ...

    def close(self) -> None: ...


#: A member's name (as stored in the archive) to the receiver of its bytes.
Consumer = Callable[[str], Receiver]


class _Sink:
    """What py7zr writes one member into: chunks and the member's end go to a `Receiver`.

    py7zr only calls these methods (it needs no subclass of its `Py7zIO`); a member's bytes
    are never kept here.
    """

    def __init__(self, receiver: Receiver) -> None:
        self._receiver = receiver
        self._size = 0

    def write(self, chunk: bytes | bytearray) -> int:
        self._receiver.write(bytes(chunk))
        self._size += len(chunk)
        return len(chunk)

    def read(self, size: int | None = None) -> bytes:
        return b""

    def seek(self, offset: int, whence: int = 0) -> int:
        return 0

    def flush(self) -> None:
        return None

    def size(self) -> int:
        return self._size

    def close(self) -> None:
        self._receiver.close()


class _SinkFactory:
    def __init__(self, consumer: Consumer) -> None:
        self._consumer = consumer

    def create(self, filename: str) -> _Sink:
        return _Sink(self._consumer(filename))


def member_names(archive: Path) -> list[str]:
    """The names of the files stored in a 7z archive (folders left out)."""
    import py7zr

    with py7zr.SevenZipFile(archive, mode="r") as opened:
        return [info.filename for info in opened.list() if not info.is_directory]


def stream_7z(archive: Path, members: list[str], consumer: Consumer) -> None:
    """Decompress the named members of `archive`, passing each one's bytes as they come
    to the receiver `consumer(name)` returns for it, and closing it at the member's end."""
    import py7zr

    with py7zr.SevenZipFile(archive, mode="r") as opened:
        opened.extract(targets=members, factory=_SinkFactory(consumer))


def only_member_named(archive: Path, basename: str) -> str:
    """The one member of `archive` whose file name is `basename`, whatever its folder."""
    found = [name for name in member_names(archive) if name.rsplit("/", 1)[-1] == basename]
    if len(found) != 1:
        raise ValueError(f"{archive.name} holds {len(found)} files named {basename}, not one")
    return found[0]


class JsonArrayReader:
    """Parses a JSON array fed in byte chunks, calling `on_value` with each element.

    After `limit` elements the rest of the input is skipped unread. A pending element is
    decoded again only once its text has doubled, so a long element split over many chunks
    costs linear time.
    """

    def __init__(self, on_value: Callable[[Any], None], limit: int | None = None) -> None:
        self._on_value = on_value
        self._limit = limit
        self._decode = json.JSONDecoder().raw_decode
        self._text = codecs.getincrementaldecoder("utf-8")()
        self._buffer = ""
        self._retry_at = 0
        self._state = "open"  # then "value" (element or "]"), "next" ("," or "]"), "closed"
        self.count = 0

    @property
    def stopped(self) -> bool:
        return self._state == "closed" or self.count == self._limit

    def write(self, chunk: bytes) -> None:
        if self.stopped:
            return
        self._buffer += self._text.decode(chunk)
        if len(self._buffer) >= self._retry_at:
            self._parse(final=False)

    def close(self) -> None:
        """Check that the whole array was read (unless `limit` stopped reading early)."""
        if self.stopped:
            return
        self._buffer += self._text.decode(b"", final=True)
        self._parse(final=True)
        if not self.stopped:
            raise ValueError(f"JSON array: the input ends after {self.count} element(s)")

    def _parse(self, final: bool) -> None:
        text, position = self._buffer, 0
        while not self.stopped:
            while position < len(text) and text[position] in " \t\r\n":
                position += 1
            if position == len(text):
                break
            char = text[position]
            if self._state == "open":
                if char != "[":
                    raise ValueError("JSON array: the input does not start with '['")
                self._state, position = "value", position + 1
            elif self._state in ("value", "next") and char == "]":
                self._state, position = "closed", position + 1
            elif self._state == "next":
                if char != ",":
                    raise ValueError(f"JSON array: expected ',' after element {self.count}")
                self._state, position = "value", position + 1
            else:
                try:
                    value, end = self._decode(text, position)
                except json.JSONDecodeError:
                    if final:
                        raise
                    break
                if not final and (end == len(text) or text[end] not in " \t\r\n,]"):
                    break  # a number cut by the chunk's end ("1.5e" of "1.5e-07") goes on
                self._on_value(value)
                self.count += 1
                self._state, position = "next", end
        self._buffer = text[position:]
        self._retry_at = 2 * len(self._buffer)


def add_with_fixed_time(target: Any, path: Path, arcname: str) -> None:
    """Add the file at `path` to `target`, a py7zr archive open for writing, as `arcname`.

    7z records each member's write time; it is fixed first, so that the archive's bytes
    depend only on what it holds and two preparations give the same md5."""
    os.utime(path, (FIXED_TIME, FIXED_TIME))
    target.write(path, arcname=arcname)
