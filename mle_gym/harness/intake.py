"""What the proxy takes from a harness before anything is forwarded.

The harness is untrusted, and the proxy runs in the host's process: a request's body is
taken only when its length is well formed and within `MAX_REQUEST_BYTES` (checked before a
byte is read; a chunked body is counted as it arrives), only model routes go upstream
(the operator's key must not list, fetch or delete the account's files), and bad requests
are said on the host's stderr in one short line each, the first few only.
"""

from __future__ import annotations

import logging
import re
import threading
from email.message import Message
from typing import BinaryIO

#: Largest request body taken from the harness.
MAX_REQUEST_BYTES = 32 * 1024**2
#: The routes forwarded upstream, by method, as paths after `/v1`: the calls agents make
#: (chat completions, completions, responses, embeddings) and the model list clients look
#: up. Nothing else (files, uploads, fine-tuning, batches, assistants) leaves the host.
MODEL_ROUTES: dict[str, tuple[str, ...]] = {
    "POST": ("/chat/completions", "/completions", "/responses", "/embeddings"),
    "GET": ("/models",),
}
#: Bad requests said on stderr before the rest are only counted.
MAX_COMPLAINTS = 20

_DIGITS = re.compile(r"[0-9]+")
_CHUNK_LINE = re.compile(rb"([0-9A-Fa-f]{1,8})(;[^\r\n]*)?\r?\n")
_MAX_TRAILER_LINES = 32
_LOG = logging.getLogger("mle_gym.harness.proxy")


class Refused(Exception):
    """A request answered with an error and not forwarded: its status and why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def declared_length(headers: Message) -> int | None:
    """The body's length from the headers (None: chunked); `Refused` for a length that is
    missing a number, ambiguous, or over `MAX_REQUEST_BYTES`, before anything is read."""
    lengths = [value.strip() for value in headers.get_all("Content-Length") or []]
    codings = [value.strip().lower() for value in headers.get_all("Transfer-Encoding") or []]
    if codings:
        if lengths:
            raise Refused(400, "a request may not carry both Content-Length and Transfer-Encoding")
        if codings != ["chunked"]:
            raise Refused(400, f"transfer coding {codings!r} is not accepted, only chunked")
        return None
    if not lengths:
        return 0
    if len(set(lengths)) > 1 or not _DIGITS.fullmatch(lengths[0]):
        raise Refused(400, f"malformed Content-Length {printable(', '.join(lengths))!r}")
    if len(lengths[0]) > 15 or int(lengths[0]) > MAX_REQUEST_BYTES:
        raise Refused(413, f"a request body over {MAX_REQUEST_BYTES} bytes is refused")
    return int(lengths[0])


def read_body(headers: Message, stream: BinaryIO) -> bytes:
    """The request's body, never more than `MAX_REQUEST_BYTES` of it held."""
    length = declared_length(headers)
    if length is None:
        return _read_chunked(stream)
    body = stream.read(length) if length else b""
    if len(body) < length:
        raise ConnectionResetError("the harness closed the connection mid-body")
    return body


def _read_chunked(stream: BinaryIO) -> bytes:
    body = bytearray()
    while True:
        match = _CHUNK_LINE.fullmatch(stream.readline(1024))
        if match is None:
            raise Refused(400, "malformed chunked body")
        size = int(match[1], 16)
        if size == 0:
            break
        if len(body) + size > MAX_REQUEST_BYTES:
            raise Refused(413, f"a request body over {MAX_REQUEST_BYTES} bytes is refused")
        chunk = stream.read(size)
        if len(chunk) < size:
            raise ConnectionResetError("the harness closed the connection mid-body")
        body += chunk
        if stream.readline(3) not in (b"\r\n", b"\n"):
            raise Refused(400, "malformed chunked body")
    for _ in range(_MAX_TRAILER_LINES):
        if stream.readline(1024) in (b"\r\n", b"\n", b""):
            return bytes(body)
    raise Refused(400, "malformed chunked body: too many trailer lines")


def model_route(method: str, path: str) -> str | None:
    """The upstream path (after the endpoint's own) of a model call; None for any other
    request. `path` is the harness's, with or without the `/v1` prefix."""
    rest = path[3:] if path == "/v1" or path.startswith(("/v1/", "/v1?")) else path
    route = rest.split("?", 1)[0].rstrip("/")
    return rest if route in MODEL_ROUTES.get(method, ()) else None


def printable(text: str, limit: int = 160) -> str:
    """`text` cut to `limit` with control characters replaced: it goes to a terminal."""
    return "".join(c if c.isprintable() else "?" for c in text[:limit])


class Complaints:
    """Bad requests on the host's stderr (through logging), one short line each for the
    first `limit`, then only counted: a harness must not flood the host's log."""

    def __init__(self, limit: int = MAX_COMPLAINTS) -> None:
        self.limit = limit
        self.count = 0
        self._lock = threading.Lock()

    def note(self, line: str) -> None:
        with self._lock:
            self.count += 1
            count = self.count
        if count <= self.limit:
            _LOG.warning("mle_gym proxy: %s", printable(line, 200))
        if count == self.limit:
            _LOG.warning("mle_gym proxy: further bad requests are counted, not shown")

    def summary(self) -> None:
        """One line for those not shown (the episode's JSON Lines log has each request)."""
        if self.count > self.limit:
            _LOG.warning(
                "mle_gym proxy: %d further bad request(s) were not shown", self.count - self.limit
            )
