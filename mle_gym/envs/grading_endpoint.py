"""MLE-bench's validation server for `task="mlebench"`, answered on the host.

MLE-bench's agents post their submission to `http://localhost:5000/validate` (multipart,
field `file`) and read `{"result": "Submission is valid."}` or `"Submission invalid! ..."`;
`GET /health` says the server runs. Here the sandbox keeps no network: the harness's relay
(`mle_gym.sandbox.socket_relay`, run as the agent) listens on the sandbox's own 127.0.0.1:5000 and
pipes each connection to this server's unix socket, bound read-only into the sandbox. The
answer comes from the env on the host, where the answers stay (its format check, or the
metric when the env is asked to decide as MLE-bench's server does): never a score, and these
two routes are all there is.

The sandbox is untrusted: only its processes may connect (`sandbox.socket_peers`), a body is
bounded before it is read and written to disk, not held, one check runs at a time (each
forks a grader), at most `max_validations` per episode, and connections are capped.
"""

from __future__ import annotations

import json
import mmap
import re
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from mle_gym.sandbox.bounded_server import BoundedUnixServer

#: Checks answered per episode, connections served at once, and idle seconds per connection.
MAX_VALIDATIONS = 100
MAX_CONNECTIONS = 16
IDLE_TIMEOUT = 60.0
_BOUNDARY = re.compile(r'boundary="?([^";]+)"?')
_FIELD = re.compile(rb'\bname="([^"]*)"')


class _Server(BoundedUnixServer):
    def __init__(self, path: str, endpoint: GradingEndpoint) -> None:
        self.endpoint = endpoint
        super().__init__(path, _Handler, MAX_CONNECTIONS)

    def verify_request(self, request: Any, client_address: Any) -> bool:
        from mle_gym.sandbox.socket_peers import peer_of

        try:
            return self.endpoint.admit(peer_of(request))
        except OSError:
            return False

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a broken connection from the sandbox is the sandbox's own business


class GradingEndpoint:
    """Answers MLE-bench's two routes on `socket_path`. `check_file(path)` gives (valid,
    message) for a submission file on the host; `max_bytes` bounds an upload, which goes
    to `upload_dir` (a directory of this process's own) while it is checked."""

    def __init__(
        self,
        socket_path: Path,
        upload_dir: Path,
        check_file: Callable[[Path], tuple[bool, str]],
        *,
        max_bytes: int,
        max_validations: int | None = None,
    ) -> None:
        self.socket_path = socket_path
        self.upload_dir = upload_dir
        self.check_file = check_file
        self.max_bytes = max_bytes
        self.max_validations = MAX_VALIDATIONS if max_validations is None else max_validations
        #: Checks answered, and requests refused (busy, spent, too large, unknown route).
        self.validations = 0
        self.refused = 0
        #: Whether a connecting process may talk to the server (set once the sandbox runs);
        #: until then nobody may.
        self.admit: Callable[[Any], bool] = lambda peer: False
        self.busy = threading.Lock()
        self._server: _Server | None = None

    def start(self) -> None:
        self._server = _Server(str(self.socket_path), self)
        self._server.serve_in_background("mle-gym-grading-endpoint")

    def close(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None
        self.socket_path.unlink(missing_ok=True)

    def spend(self) -> bool:
        """Count one check; False once the episode's are spent."""
        if self.validations >= self.max_validations:
            return False
        self.validations += 1
        return True


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "mle-gym-grading"
    timeout = IDLE_TIMEOUT
    server: _Server

    def log_message(self, *_args: Any) -> None:
        pass

    def _reply(self, status: int, payload: dict[str, str]) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _refuse(self, status: int, message: str) -> None:
        self.server.endpoint.refused += 1
        self.close_connection = True  # any body left unread is not read
        self._reply(status, {"error": message})

    def do_GET(self) -> None:
        if self.path.split("?", 1)[0] == "/health":
            self._reply(200, {"status": "running"})
        else:
            self._refuse(404, "not found: this server answers POST /validate and GET /health")

    def do_POST(self) -> None:
        if self.path.split("?", 1)[0] != "/validate":
            self._refuse(404, "not found: this server answers POST /validate and GET /health")
            return
        endpoint = self.server.endpoint
        length = self.headers.get("Content-Length", "")
        if not length.isdigit() or len(length) > 15:
            self._refuse(411, "a POST /validate needs a Content-Length")
            return
        if int(length) > endpoint.max_bytes:
            self._refuse(413, f"a submission over {endpoint.max_bytes} bytes is refused")
            return
        boundary = _BOUNDARY.search(self.headers.get("Content-Type", ""))
        if boundary is None:
            self._refuse(400, "post the submission as multipart/form-data, field `file`")
            return
        if not endpoint.busy.acquire(blocking=False):
            self._refuse(429, "a submission is being validated: ask again when it has answered")
            return
        try:
            answer = self._validate(endpoint, int(length), boundary[1].encode())
        finally:  # free before answering: the client may ask again as soon as it reads
            endpoint.busy.release()
        if answer is not None:
            self._reply(*answer)

    def do_PUT(self) -> None:
        self._refuse(405, "method not allowed")

    do_DELETE = do_PATCH = do_PUT

    def _validate(
        self, endpoint: GradingEndpoint, length: int, boundary: bytes
    ) -> tuple[int, dict[str, str]] | None:
        """The answer to one upload (None when the client hung up mid-body)."""
        if not endpoint.spend():
            endpoint.refused += 1
            self.close_connection = True
            return 429, {
                "error": f"this episode's {endpoint.max_validations} validations are spent"
            }
        scratch = endpoint.upload_dir
        try:
            raw = scratch / "upload"
            with raw.open("wb") as sink:
                left = length
                while left:
                    chunk = self.rfile.read(min(left, 1 << 20))
                    if not chunk:
                        self.close_connection = True
                        return None
                    sink.write(chunk)
                    left -= len(chunk)
            # MLE-bench saves every upload as a .csv before checking it
            submission = scratch / "submission_to_validate.csv"
            if not _extract_field(raw, boundary, b"file", submission):
                return 400, {"error": "no multipart field named `file` in the request"}
            try:
                _valid, message = endpoint.check_file(submission)
            except Exception as exc:  # as MLE-bench's server: a 500 that says why
                return 500, {"error": "An unexpected error occurred.", "details": str(exc)}
            return 200, {"result": message}
        finally:
            for leftover in ("upload", "submission_to_validate.csv"):
                (scratch / leftover).unlink(missing_ok=True)


def _extract_field(raw: Path, boundary: bytes, name: bytes, dest: Path) -> bool:
    """Copy the content of multipart field `name` in the body at `raw` to `dest`, without
    holding the body in memory; False when there is no such field."""
    if raw.stat().st_size == 0:
        return False
    delimiter = b"--" + boundary
    with raw.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as body:
        at = body.find(delimiter)
        while at != -1:
            headers_start = at + len(delimiter) + 2  # past the delimiter's line break
            headers_end = body.find(b"\r\n\r\n", headers_start)
            if headers_end == -1:
                return False
            end = body.find(b"\r\n" + delimiter, headers_end + 4)
            if end == -1:
                return False
            field = _FIELD.search(body[headers_start:headers_end])
            if field is not None and field[1] == name:
                with dest.open("wb") as out:
                    for start in range(headers_end + 4, end, 1 << 20):
                        out.write(body[start : min(end, start + (1 << 20))])
                return True
            at = end + 2
    return False
