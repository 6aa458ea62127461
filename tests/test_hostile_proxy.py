"""The harness proxy spends only model calls, for this episode only (issue 24, item 3).

A hostile harness (or a host user) against the real recording proxy: lengths that would make
it read a whole stream into host memory, routes that would spend or empty the operator's
account, requests that would flood the host's stderr, connections from outside the episode,
and format checks that would fork host graders without bound. What a sandbox can reach is
tried from inside a local sandbox, as a harness would.
"""

from __future__ import annotations

import json
import os
import re
import select
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from mle_gym.harness import run_harness
from mle_gym.harness.intake import MAX_COMPLAINTS, MAX_REQUEST_BYTES
from mle_gym.harness.proxy import VALIDATE_PATH, ModelProxy
from mle_gym.sandbox import scratch
from tests.conftest import REPO, require_bwrap
from tests.llm_server import ScriptedLLMServer, text
from tests.prerequisites import require

pytestmark = pytest.mark.timeout(300)

COMPETITION = "sklearn-digits"
_MIB = 1024**2


@pytest.fixture
def digits(digits_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MLE_GYM_HOME", str(digits_home))
    return digits_home


def _connect(path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(30)
    sock.connect(str(path))
    return sock


def _answer(sock: socket.socket) -> bytes:
    """What the proxy said before it closed the connection."""
    data = b""
    try:
        while chunk := sock.recv(1 << 16):
            data += chunk
    except (ConnectionResetError, TimeoutError):
        pass
    return data


def _push(path: Path, head: bytes, chunk: bytes, planned: int) -> tuple[bytes, int]:
    """Send `head`, then `chunk` again and again up to `planned` bytes, stopping as soon as
    the proxy answers or hangs up; (its answer, body bytes sent)."""
    sock = _connect(path)
    sent = 0
    try:
        sock.sendall(head)
        while sent < planned and not select.select([sock], [], [], 0)[0]:
            try:
                sock.sendall(chunk)
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += len(chunk)
        if sent >= planned:
            sock.shutdown(socket.SHUT_WR)  # all of it: whatever the proxy does now, it has read
        return _answer(sock), sent
    finally:
        sock.close()


def test_bad_lengths_are_refused_before_the_body_is_read(tmp_path: Path) -> None:
    """(a) A length that is not a number (or is too large), or a chunked body past the cap,
    is answered while most of a 256 MiB body is still unsent, and nothing goes upstream."""
    post = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    cases = {
        "negative": (post + b"Content-Length: -1\r\n\r\n", b"x" * _MIB, 400),
        "not a number": (post + b"Content-Length: lots\r\n\r\n", b"x" * _MIB, 400),
        "two lengths": (post + b"Content-Length: 2\r\nContent-Length: 900\r\n\r\n", b"x", 400),
        "huge": (post + b"Content-Length: " + b"9" * 40 + b"\r\n\r\n", b"x" * _MIB, 413),
        "too large": (post + b"Content-Length: %d\r\n\r\n" % (1 << 30), b"x" * _MIB, 413),
        "one huge chunk": (post + b"Transfer-Encoding: chunked\r\n\r\nfffffff\r\n", b"x", 413),
        "many chunks": (
            post + b"Transfer-Encoding: chunked\r\n\r\n",
            b"100000\r\n" + b"x" * _MIB + b"\r\n",
            413,
        ),
        "both": (post + b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", b"x", 400),
    }
    planned = 256 * _MIB
    with ScriptedLLMServer([]) as server:
        proxy = ModelProxy(server.url, tmp_path / "model.sock", tmp_path / "calls.jsonl")
        with proxy:
            for name, (head, chunk, status) in cases.items():
                answer, sent = _push(proxy.socket_path, head, chunk, planned)
                assert answer.startswith(b"HTTP/1.1 %d " % status), (name, answer[:200], sent)
                # refused once at most the cap was taken: most of the body never left
                assert sent <= MAX_REQUEST_BYTES + 2 * _MIB < planned, (name, sent)
                assert b'"invalid_request_error"' in answer, name
    assert server.seen == [] and proxy.requests == 0


#: A harness that asks for a model list, the account's files and more, then a model call.
ROUTES_PROBE = r"""
import json, os, urllib.error, urllib.request
base = os.environ["OPENAI_BASE_URL"]
tries = [("GET", "/models"), ("GET", "/files"), ("GET", "/files/file-abc/content"),
         ("DELETE", "/files/file-abc"), ("POST", "/files"), ("POST", "/fine_tuning/jobs"),
         ("POST", "/batches"), ("PUT", "/chat/completions"), ("GET", "/chat/completions"),
         ("POST", "/chat/completions")]
statuses = []
for method, path in tries:
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()
    call = urllib.request.Request(base + path, body if method != "GET" else None,
                                  {"Content-Type": "application/json"}, method=method)
    try:
        with urllib.request.urlopen(call, timeout=30) as answer:
            statuses.append(answer.status)
    except urllib.error.HTTPError as exc:
        statuses.append(exc.code)
print("ROUTES" + json.dumps(statuses))
"""


def _script(name: str, source: str) -> str:
    """A shell command line that writes `source` to /tmp and runs it with the sandbox's
    Python."""
    return f"cat > /tmp/{name} <<'PYEOF'\n{source}PYEOF\npython3 /tmp/{name}"


def _printed(result_output: Path, marker: str) -> object:
    output = result_output.read_text()
    assert marker in output, output[-3000:]
    return json.loads(output.split(marker, 1)[1].splitlines()[0])


def test_only_model_routes_leave_the_sandbox_and_each_counts(digits: Path, tmp_path: Path) -> None:
    """(b) From inside a local sandbox: the model list and a model call reach the endpoint
    (both counted); listing, fetching, uploading or deleting files, fine-tuning, batches and
    other methods are answered 404 by the proxy and never reach it."""
    require_bwrap()
    with ScriptedLLMServer([text("hello")]) as server:
        result = run_harness(
            COMPETITION,
            _script("routes.py", ROUTES_PROBE),
            server.url,
            backend="local",
            time_limit=120,
            run_dir=tmp_path / "run",
            api_key="the-operator-key",
        )
    assert server.seen == [("GET", "/v1/models"), ("POST", "/v1/chat/completions")]
    statuses = _printed(result.output_path, "ROUTES")
    assert statuses == [200, 404, 404, 404, 404, 404, 404, 404, 404, 200]
    assert result.requests == 2 and result.refused == 0
    lines = [json.loads(line) for line in result.log_path.read_text().splitlines()]
    assert [line["counted"] for line in lines if line["status"] == 200] == [True, True]


#: Started in a process of its own so that its stderr is the host's, as in a real run.
PROXY_PROCESS = r"""
import sys
from pathlib import Path
from mle_gym.harness.proxy import ModelProxy
where = Path(sys.argv[1])
with ModelProxy("http://127.0.0.1:1/v1", where / "model.sock", where / "calls.jsonl"):
    print("ready", flush=True)
    sys.stdin.read()
"""


#: A request on a kept-alive connection whose answer is never read: the harness hangs up
#: on it, and the proxy's wait for the next request fails.
HANG_UP = b"GET /v1/files HTTP/1.1\r\nHost: x\r\n\r\n"


def _bad_requests() -> Iterator[bytes]:
    """Malformed requests of every kind, with their control characters, and hang-ups."""
    post = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
    kinds = [
        post + b"Content-Length: nope\x1b[31m\r\n\r\n",
        post + b"Content-Length: -1\r\n\r\n",
        post + b"Transfer-Encoding: chunked\r\n\r\nzz\r\n",
        post + b"Transfer-Encoding: gzip\r\n\r\n",
        b"POST /v1/../../admin HTTP/1.1\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
        b"GET /v1/files HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        b"GARBAGE\x1b]0;owned\x07\r\n\r\n",
        HANG_UP,
    ]
    for _ in range(15):
        yield from kinds


def test_bad_requests_get_one_short_line_each_for_the_first_few(tmp_path: Path) -> None:
    """(c) 120 malformed requests and hang-ups: no traceback on the host's stderr, one short
    line each for the first few, a count for the rest, no terminal control characters."""
    where = tmp_path / "proxy"
    where.mkdir()
    process = subprocess.Popen(
        [sys.executable, "-c", PROXY_PROCESS, str(where)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        assert process.stdout is not None and process.stdout.readline() == b"ready\n"
        for request in _bad_requests():
            sock = _connect(where / "model.sock")
            sock.sendall(request)
            if request == HANG_UP:  # the answer is there; leave it unread
                assert select.select([sock], [], [], 30)[0]
            else:
                assert _answer(sock)  # every one answered (with an error)
            sock.close()
    finally:
        _, stderr = process.communicate(b"", timeout=60)
    lines = stderr.decode().splitlines()
    assert "Traceback" not in stderr.decode() and "\x1b" not in stderr.decode()
    assert len(lines) <= MAX_COMPLAINTS + 2, lines[:5]
    assert all(len(line) < 300 for line in lines)
    assert re.fullmatch(r".*: \d+ further bad request\(s\) were not shown", lines[-1]), lines[-1]


def _peer_probe(socket_path: Path) -> str:
    """Connect and ask for the model list: refused (errno), closed unanswered, or answered."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(30)
    try:
        sock.connect(str(socket_path))
    except OSError as exc:
        return f"refused {exc.errno}"
    try:
        sock.sendall(b"GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n")
        data = sock.recv(64)
    except OSError:
        data = b""
    return "answered" if data else "closed"


#: The harness: a model call that says its uid, a bounded wait for the test's go-ahead,
#: and a second call (still admitted after strangers were refused).
WAITS = r"""
import json, os, sys, time, urllib.request
def ask(words):
    body = {"model": "m", "messages": [{"role": "user", "content": words}]}
    call = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions",
                                  json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(call, timeout=30) as answer:
        return answer.status
first = ask(f"uid {os.getuid()}")
for _ in range(1200):
    if os.path.exists("/opt/mle-gym/go"):
        break
    time.sleep(0.1)
print("CALLS" + json.dumps([first, ask("again")]))
"""


def _as_user(uid: int, socket_path: Path) -> str:
    """`_peer_probe` in a host process of `uid` (and group, no others), outside any sandbox:
    a fork, since no interpreter need be readable by that user."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: drop to `uid`, probe, say what happened, leave
        verdict = "error"
        try:
            os.close(read_end)
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            verdict = _peer_probe(socket_path)
        except BaseException as exc:
            verdict = f"error {exc!r}"
        finally:
            os.write(write_end, verdict.encode())
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as answer:
        verdict = answer.read().decode()
    os.waitpid(pid, 0)
    return verdict


def _recording_owned_dirs(monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    made: dict[str, Path] = {}
    original = scratch.owned_dir

    def owned_dir(kind: str, parent: Path | None = None) -> Path:
        made[kind] = directory = original(kind, parent)
        return directory

    monkeypatch.setattr(scratch, "owned_dir", owned_dir)
    return made


def _in_background(work: Callable[[], object]) -> tuple[threading.Thread, dict[str, object]]:
    outcome: dict[str, object] = {}

    def target() -> None:
        try:
            outcome["value"] = work()
        except BaseException as exc:  # the main thread reports it
            outcome["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, outcome


def test_only_the_episodes_sandbox_reaches_the_proxy(
    backend: str, digits: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """(d) While a harness runs in a sandbox, host processes try the proxy's socket:
    another user (nobody) cannot connect; a process of the agent's own uid outside the
    sandbox, and root, connect but are hung up on unanswered; the sandbox's relay is
    answered before and after."""
    require(os.geteuid() == 0, "acting as other host users needs root (CI runs as root)")
    made = _recording_owned_dirs(monkeypatch)

    with ScriptedLLMServer([text("one"), text("two")]) as server:

        def probe() -> dict[str, str]:
            for _ in range(1200):  # until the harness's first call arrived
                if server.requests:
                    break
                time.sleep(0.1)
            agent_uid = int(server.requests[0]["messages"][0]["content"].split()[1])
            sock = made["proxy"] / "model.sock"
            try:
                return {
                    "nobody": _as_user(65534, sock),
                    "agent's uid, outside": _as_user(agent_uid, sock),
                    "root": _as_user(0, sock),
                }
            finally:
                (made["proxy"] / "go").touch()

        thread, outcome = _in_background(probe)
        result = run_harness(
            COMPETITION,
            _script("waits.py", WAITS),
            server.url,
            backend=backend,
            time_limit=150,
            run_dir=tmp_path / "run",
        )
        thread.join(timeout=120)
    assert "error" not in outcome, outcome.get("error")
    assert outcome["value"] == {
        "nobody": "refused 13",  # EACCES: the directory and socket admit the agent alone
        "agent's uid, outside": "closed",  # the peer check: not the sandbox's pid namespace
        "root": "closed",  # root passes any permission, not the peer check
    }
    assert _printed(result.output_path, "CALLS") == [200, 200]
    assert result.requests == 2 and len(server.requests) == 2


#: Five format checks in a row.
CHECKS = r"""
import json, os, urllib.error, urllib.request
statuses = []
for _ in range(5):
    call = urllib.request.Request(os.environ["MLE_GYM_VALIDATE_URL"], data=b"", method="POST")
    try:
        with urllib.request.urlopen(call, timeout=120) as answer:
            statuses.append([answer.status, json.load(answer)["valid"]])
    except urllib.error.HTTPError as exc:
        statuses.append([exc.code, json.load(exc)["error"]["code"]])
print("CHECKS" + json.dumps(statuses))
"""


def test_format_checks_are_bounded_per_episode(digits: Path, tmp_path: Path) -> None:
    """(e) From inside a local sandbox: each check forks a grader on the host, so an
    episode gets `max_validations` of them; the rest are refused with a final 403."""
    require_bwrap()
    with ScriptedLLMServer([]) as server:
        result = run_harness(
            COMPETITION,
            "cp /home/data/sample_submission.csv /home/submission/submission.csv && "
            + _script("checks.py", CHECKS),
            server.url,
            backend="local",
            time_limit=200,
            max_validations=2,
            run_dir=tmp_path / "run",
        )
    assert _printed(result.output_path, "CHECKS") == [
        [200, True],
        [200, True],
        [403, "validation_budget"],
        [403, "validation_budget"],
        [403, "validation_budget"],
    ]
    assert result.validations == 2 and result.requests == 0 and server.seen == []


def test_format_checks_run_one_at_a_time(tmp_path: Path) -> None:
    """(e) A second check while one runs is refused at once (429), not queued on a host
    thread; the first still answers."""
    entered, release = threading.Event(), threading.Event()

    def slow_check() -> tuple[bool, str]:
        entered.set()
        release.wait(60)
        return True, "The submission is valid."

    def check(path: Path) -> bytes:
        sock = _connect(path)
        sock.sendall(
            f"POST {VALIDATE_PATH} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode()
        )
        return _answer(sock)

    proxy = ModelProxy("http://127.0.0.1:1/v1", tmp_path / "model.sock", tmp_path / "calls.jsonl")
    proxy.validate = slow_check
    with proxy:
        thread, first = _in_background(lambda: check(proxy.socket_path))
        assert entered.wait(60)
        try:
            second = check(proxy.socket_path)
        finally:
            release.set()
            thread.join(60)
    assert second.startswith(b"HTTP/1.1 429 ") and b"validation_busy" in second
    assert isinstance(first["value"], bytes) and first["value"].startswith(b"HTTP/1.1 200 ")
    assert proxy.validations == 1
