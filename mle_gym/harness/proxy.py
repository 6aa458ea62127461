"""The host side of the harness's one network route: a recording OpenAI-compatible proxy.

It listens on a unix socket (the sandbox reaches it through `relay.py`), forwards each
request to the caller's model endpoint, passes the answer back (server-sent events as they
arrive), and writes one JSON line per exchange: the request (messages, tools), the response
or the stream's events, the assembled assistant message with its tool calls, token usage,
logprobs and token ids when the upstream returns them, status and timings. Only model
routes are forwarded (`intake.MODEL_ROUTES`), and a request budget counts every forwarded
request; past it the proxy answers 403 with an OpenAI-style error, a status clients treat
as final (429 or 5xx would be retried until the wall clock ran out).

One path is answered by the proxy itself: `VALIDATE_PATH` checks the submission file's
format (never its score), as the env's validate tool and MLE-bench's validation server do,
without counting as a model call; each check forks a grader on the host, so they run one
at a time and at most `max_validations` per episode.

The harness never sees the real API key: the proxy adds it to the upstream request. Only
the upstream's own host is ever contacted, and only at paths under the endpoint's path.
Only the sandbox connects (`peers`); bodies are bounded before they are read (`intake`).
Standard library only (`http.server`, `http.client`): one route, one JSON shape.
"""

from __future__ import annotations

import http.client
import json
import re
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import SplitResult, urlsplit

from mle_gym.harness.intake import Complaints, Refused, model_route, printable, read_body
from mle_gym.harness.recording import Recorder, exchange_record
from mle_gym.sandbox.bounded_server import BoundedUnixServer
from mle_gym.sandbox.socket_peers import Peer, peer_of, this_user

#: Largest response body passed back whole (requests: `intake.MAX_REQUEST_BYTES`).
MAX_RESPONSE_BYTES = 64 * 1024**2
#: Connections served at once (more are closed at once), and how long one may sit idle:
#: the harness is untrusted and must not tie up the host's memory or threads.
MAX_CONNECTIONS = 32
IDLE_TIMEOUT = 300.0
#: Request headers passed upstream (no Accept-Encoding: the log keeps readable bodies).
_FORWARDED_HEADERS = ("Content-Type", "Accept", "User-Agent", "OpenAI-Beta")
#: Answered here, not forwarded: the submission's format check, and how many an episode gets.
VALIDATE_PATH = "/mle-gym/validate"
MAX_VALIDATIONS = 100
_PATH = re.compile(r"/[A-Za-z0-9._~/:@!$&'()*+,;=-]*(\?[^\s#]*)?")


def openai_error(message: str, kind: str, code: str | None = None) -> bytes:
    """An error body in the OpenAI shape clients parse."""
    return json.dumps({"error": {"message": message, "type": kind, "code": code}}).encode()


def check_endpoint(url: str) -> SplitResult:
    """The parts of an http(s) base URL; ValueError for anything else."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"model_endpoint must be an http(s) URL, got {url!r}")
    return parts


class _UnixHTTPServer(BoundedUnixServer):
    """A thread per connection, at most MAX_CONNECTIONS of them, each from an admitted
    peer; a handler's failure is one short line, not a traceback."""

    request_queue_size = 64

    def __init__(self, path: str, handler: type[BaseHTTPRequestHandler], proxy: ModelProxy):
        self.proxy = proxy
        super().__init__(path, handler, MAX_CONNECTIONS)

    def verify_request(self, request: Any, client_address: Any) -> bool:
        try:
            peer = peer_of(request)
        except OSError:
            return False
        if self.proxy.admit(peer):
            return True
        self.proxy.strangers += 1
        self.proxy.complaints.note(
            f"refused a connection from pid {peer.pid} uid {peer.uid}: not the episode's sandbox"
        )
        return False

    def handle_error(self, request: Any, client_address: Any) -> None:
        exc = sys.exc_info()[1]
        self.proxy.complaints.note(f"a harness request failed: {type(exc).__name__}: {exc}")


class ModelProxy:
    """Forwards the harness's requests to `upstream` (an OpenAI-style base URL such as
    http://host:8000/v1) and records them in `log_path` (JSON Lines, at most
    `max_log_bytes`). Use as a context manager, or `start()` and `close()`."""

    def __init__(
        self,
        upstream: str,
        socket_path: Path,
        log_path: Path,
        *,
        max_requests: int | None = None,
        max_validations: int = MAX_VALIDATIONS,
        api_key: str | None = None,
        timeout: float = 600.0,
        max_log_bytes: int = 256 * 1024**2,
        validate: Callable[[], tuple[bool, str]] | None = None,
    ) -> None:
        parts = check_endpoint(upstream)
        if max_requests is not None and max_requests < 0:
            raise ValueError(f"max_requests must be 0 or more, got {max_requests}")
        if max_validations < 0:
            raise ValueError(f"max_validations must be 0 or more, got {max_validations}")
        self._scheme, self._netloc = parts.scheme, parts.netloc
        self._base_path = parts.path.rstrip("/")
        self.socket_path = socket_path
        self.max_requests = max_requests
        self.max_validations = max_validations
        self.api_key = api_key
        self.timeout = timeout
        self.recorder = Recorder(log_path, max_log_bytes)
        #: Requests forwarded (they count against `max_requests`), and calls refused.
        self.requests = 0
        self.refused = 0
        #: Format checks answered, and connections refused for their peer.
        self.validations = 0
        self.strangers = 0
        #: Checks the submission (valid, message) for `VALIDATE_PATH` (the episode's check).
        self.validate = validate
        #: Whether a connecting process may talk to the proxy (`peers.sandbox_peers` for an
        #: episode); on its own the proxy admits its own user.
        self.admit: Callable[[Peer], bool] = this_user
        self.complaints = Complaints()
        self._lock = threading.Lock()
        self._validating = threading.Lock()  # one check at a time: they share the copied file
        self._server: _UnixHTTPServer | None = None

    # -- lifecycle ----------------------------------------------------------------------
    def start(self) -> None:
        self._server = _UnixHTTPServer(str(self.socket_path), _ProxyHandler, self)
        self._server.serve_in_background("mle-gym-model-proxy")

    def close(self) -> None:
        """Stop answering; exchanges still in flight are recorded if they end."""
        if self._server is not None:
            self._server.stop()
            self._server = None
        self.socket_path.unlink(missing_ok=True)

    def __enter__(self) -> ModelProxy:
        self.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
        self.recorder.close()
        self.complaints.summary()

    # -- one exchange -------------------------------------------------------------------
    def _spend(self) -> tuple[bool, bool]:
        """(counted, refused) for a request to forward: each counts, under the budget."""
        with self._lock:
            if self.max_requests is not None and self.requests >= self.max_requests:
                self.refused += 1
                return False, True
            self.requests += 1
            return True, False

    def _connection(self) -> http.client.HTTPConnection:
        kind = (
            http.client.HTTPSConnection if self._scheme == "https" else http.client.HTTPConnection
        )
        return kind(self._netloc, timeout=self.timeout)

    def _upstream_headers(self, incoming: Any, length: int) -> dict[str, str]:
        headers = {name: incoming[name] for name in _FORWARDED_HEADERS if incoming[name]}
        headers["Content-Length"] = str(length)
        auth = f"Bearer {self.api_key}" if self.api_key else incoming["Authorization"]
        if auth:
            headers["Authorization"] = auth
        return headers


class _ProxyHandler(BaseHTTPRequestHandler):
    """One connection from the harness: each request is refused, answered here (the format
    check) or forwarded upstream, and recorded by the server's `ModelProxy`."""

    protocol_version = "HTTP/1.1"
    server_version = "mle-gym-proxy"
    timeout = IDLE_TIMEOUT
    server: _UnixHTTPServer

    @property
    def proxy(self) -> ModelProxy:
        return self.server.proxy

    def log_message(self, *_args: Any) -> None:  # the JSON Lines log says it all
        pass

    def log_error(self, message: str, *args: Any) -> None:
        # http.server's own refusals (a bad request line, too many headers)
        self.proxy.complaints.note(message % args)

    def do_GET(self) -> None:
        self._exchange("GET")

    def do_POST(self) -> None:
        self._exchange("POST")

    def do_DELETE(self) -> None:
        self._exchange("DELETE")

    def do_PUT(self) -> None:
        self._exchange("PUT")

    def do_PATCH(self) -> None:
        self._exchange("PATCH")

    def _reply(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _refuse(
        self,
        record: dict[str, Any],
        status: int,
        message: str,
        kind: str = "invalid_request_error",
        code: str | None = None,
    ) -> None:
        record["status"], record["error"] = status, message
        self._reply(status, openai_error(message, kind, code))

    def _spent(self, record: dict[str, Any], limit: object, what: str, code: str) -> None:
        """403, which clients take as final (they retry 429 and 5xx)."""
        message = (
            f"the episode's budget of {limit} {what} is spent; no further {what} will be answered"
        )
        self._refuse(record, 403, message, "budget_exceeded", f"{code}_budget")

    def _exchange(self, method: str) -> None:
        started, clock = time.time(), time.monotonic()
        record: dict[str, Any] = {"method": method, "path": self.path}
        try:
            self._forward(method, record)
        except (BrokenPipeError, ConnectionResetError):  # the harness hung up
            record.setdefault("error", "the harness closed the connection")
            self.close_connection = True
        record["time"], record["seconds"] = started, time.monotonic() - clock
        self.proxy.recorder.write(exchange_record(record, self.proxy.recorder.max_body_bytes))

    def _validate(self, record: dict[str, Any]) -> None:
        """One check at a time (each forks a grader on the host), a few per episode."""
        assert self.proxy.validate is not None
        if not self.proxy._validating.acquire(blocking=False):
            message = "a format check is already running: ask again when it has answered"
            self._refuse(record, 429, message, "rate_limit_error", "validation_busy")
            return
        try:
            with self.proxy._lock:
                spent = self.proxy.validations >= self.proxy.max_validations
                self.proxy.validations += not spent
            if spent:
                self._spent(record, self.proxy.max_validations, "format checks", "validation")
                return
            try:
                valid, message = self.proxy.validate()
            except Exception as exc:  # the sandbox is gone, say: the harness hears why
                valid, message = False, f"the submission could not be checked: {exc}"
        finally:
            self.proxy._validating.release()
        record["status"], record["validation"] = 200, message
        self._reply(200, json.dumps({"valid": valid, "message": message}).encode())

    def _forward(self, method: str, record: dict[str, Any]) -> None:
        try:
            body = read_body(self.headers, self.rfile)
        except Refused as refusal:  # nothing more is read from this connection
            self.close_connection = True
            self._refuse(record, refusal.status, str(refusal))
            self.proxy.complaints.note(f"{method} {printable(self.path)}: {refusal}")
            return
        record["request_body"] = body
        path = self.path
        if not _PATH.fullmatch(path) or "/../" in f"{path.split('?')[0]}/":
            self._refuse(record, 400, "malformed request path")
            self.proxy.complaints.note(f"{method} {printable(path)}: malformed request path")
            return
        if path == VALIDATE_PATH and self.proxy.validate is not None:
            self._validate(record)
            return
        rest = model_route(method, path)
        if rest is None:
            message = (
                f"mle_gym proxy: {method} {path} is not forwarded; only model calls "
                "are (POST chat/completions, completions, responses, embeddings; "
                "GET models)"
            )
            self._refuse(record, 404, message)
            self.proxy.complaints.note(f"{method} {printable(path)}: not a model route")
            return
        counted, refused = self.proxy._spend()
        record["counted"], record["refused"] = counted, refused
        if refused:
            self._spent(record, self.proxy.max_requests, "model calls", "request")
            return
        connection = self.proxy._connection()
        try:
            connection.request(
                method,
                self.proxy._base_path + rest,
                body=body,
                headers=self.proxy._upstream_headers(self.headers, len(body)),
            )
            response = connection.getresponse()
        except (OSError, http.client.HTTPException) as exc:
            connection.close()
            record["status"] = 502
            record["error"] = f"the model endpoint could not be reached: {exc}"
            self._reply(502, openai_error(f"mle_gym proxy: {record['error']}", "upstream"))
            return
        try:
            record["status"] = response.status
            kind = response.getheader("Content-Type") or "application/json"
            if kind.startswith("text/event-stream"):
                record["stream_body"] = self._stream(response, kind)
            else:
                data = response.read(MAX_RESPONSE_BYTES + 1)
                if len(data) > MAX_RESPONSE_BYTES:
                    raise http.client.HTTPException("the response body is too large")
                record["response_body"] = data
                self.send_response(response.status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
        except (OSError, http.client.HTTPException) as exc:
            record["error"] = f"the model endpoint broke off: {exc}"
            self.close_connection = True
        finally:
            connection.close()

    def _stream(self, response: http.client.HTTPResponse, kind: str) -> bytes:
        """Pass server-sent events on as they arrive (chunked); keep them for the log."""
        self.send_response(response.status)
        self.send_header("Content-Type", kind)
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        kept = bytearray()
        while chunk := response.read1(1 << 16):
            if len(kept) < self.proxy.recorder.max_body_bytes:
                kept += chunk
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        return bytes(kept)
