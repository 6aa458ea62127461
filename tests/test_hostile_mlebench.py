"""task="mlebench" opens a route out of the sandbox (localhost:5000 to the host's format
check): the agent still cannot reach the answers, the route answers two paths and never a
score, only the sandbox may use it, and a flood of checks is bounded, on both backends."""

from __future__ import annotations

import hashlib
import json
import socket
from pathlib import Path

import gymnasium as gym
import pytest

import mle_gym  # noqa: F401  (registers the envs)
from mle_gym.data.cache import CompetitionDirs
from tests.prerequisites import require_shared

ID = "spaceship-titanic"

#: Runs in the sandbox: raw HTTP to localhost:5000, one request per line of output.
_CLIENT = r"""
import socket, sys, json
def ask(raw, read=True):
    s = socket.create_connection(("127.0.0.1", 5000), timeout=30)
    s.sendall(raw)
    if not read:
        return s
    data = b""
    while chunk := s.recv(65536):
        data += chunk
        if b"\r\n\r\n" in data:
            head, body = data.split(b"\r\n\r\n", 1)
            length = [l for l in head.split(b"\r\n") if l.lower().startswith(b"content-length")]
            if length and len(body) >= int(length[0].split(b":")[1]):
                break
    s.close()
    return data.split(b"\r\n", 1)[0].decode() + " " + data.split(b"\r\n\r\n", 1)[-1].decode()
"""


@pytest.fixture(scope="module")
def checkout() -> Path:
    return require_shared("mlebench", "environment", module=True).parent


@pytest.fixture
def env(backend, checkout, spaceship_home):
    made = gym.make(f"mle/{ID}-v0", backend=backend, task="mlebench", mlebench_dir=checkout,
                    max_steps=50)  # fmt: skip
    made.reset(seed=0)
    made.step("cp /home/data/sample_submission.csv /tmp/sample.csv")
    yield made
    made.close()


def _python(env, script: str) -> str:
    observation, *_ = env.step(f"python3 - <<'EOF'\n{_CLIENT}\n{script}\nEOF")
    return observation


def _post(path: str = "/validate", body: bytes = b"", length: int | None = None) -> bytes:
    boundary = b"xyzzy"
    head = (
        f"POST {path} HTTP/1.1\r\nHost: localhost\r\n"
        f"Content-Type: multipart/form-data; boundary={boundary.decode()}\r\n"
        f"Content-Length: {len(body) if length is None else length}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body


def test_answers_are_out_of_reach(env):
    """The answers' file is nowhere in the sandbox (scanned by size and md5), and the
    endpoint's own directory holds only the relay and the socket."""
    answers = CompetitionDirs.of(ID).private / "test.csv"
    size, digest = answers.stat().st_size, hashlib.md5(answers.read_bytes()).hexdigest()
    observation, *_ = env.step(
        "find / \\( -path /proc -o -path /sys -o -path /dev \\) -prune -o -type f "
        f"-size {size}c -print 2>/dev/null | xargs -r md5sum; echo scanned"
    )
    assert "scanned" in observation and digest not in observation
    listing, *_ = env.step("ls -A /opt/mle-gym-grading")
    assert set(listing.split()) <= {"relay.py", "grading.sock", "owner"}


def test_no_score_and_no_other_route(env):
    sample = Path(env.unwrapped.dirs.public / "sample_submission.csv").read_bytes()
    body = (
        b'--xyzzy\r\nContent-Disposition: form-data; name="file"; filename="s.csv"\r\n\r\n'
        + sample
        + b"\r\n--xyzzy--\r\n"
    )
    script = f"""
print(ask({_post(body=body)!r}))
for raw in [b"GET / HTTP/1.1\\r\\nConnection: close\\r\\n\\r\\n",
            b"GET /v1/models HTTP/1.1\\r\\nConnection: close\\r\\n\\r\\n",
            b"GET http://example.com/ HTTP/1.1\\r\\nConnection: close\\r\\n\\r\\n",
            b"GET /health/../private/test.csv HTTP/1.1\\r\\nConnection: close\\r\\n\\r\\n",
            {_post("/v1/chat/completions", b"{}")!r},
            b"DELETE /validate HTTP/1.1\\r\\nConnection: close\\r\\n\\r\\n"]:
    print(ask(raw))
"""
    lines = _python(env, script).strip().splitlines()
    status, _, payload = lines[0].partition(" {")
    assert "200" in status and json.loads("{" + payload) == {"result": "Submission is valid."}
    assert len(lines) == 7
    for line in lines[1:]:
        assert line.split()[1] in ("404", "405"), line
        assert "score" not in line.lower() and "Transported" not in line


def test_only_the_sandbox_may_connect(env):
    """A host process (here the test, as another uid or outside the sandbox's namespaces)
    is refused at the socket: the connection closes without an answer."""
    path = env.unwrapped.episode._task_service.endpoint.socket_path
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.settimeout(30)
    client.connect(str(path))
    try:
        client.sendall(b"GET /health HTTP/1.1\r\nConnection: close\r\n\r\n")
        answer = client.recv(1024)
    except (BrokenPipeError, ConnectionResetError):
        answer = b""
    finally:
        client.close()
    assert answer == b""


def test_a_flood_of_checks_is_bounded(env, monkeypatch):
    """Past the episode's budget every check is refused; a check while another runs is
    refused; a body over the cap is refused before it is read."""
    endpoint = env.unwrapped.episode._task_service.endpoint
    script = f"""
held = ask({_post(length=1000)!r} + b"--xyzzy\\r\\n", read=False)
import time; time.sleep(2)
print(ask({_post(length=10)!r} + b"0123456789"))
held.close()
print(ask({_post(length=10**12)!r}))
"""
    busy, too_large = _python(env, script).strip().splitlines()
    assert busy.split()[1] == "429" and "being validated" in busy
    assert too_large.split()[1] == "413"
    monkeypatch.setattr(endpoint, "max_validations", endpoint.validations + 3)
    out, *_ = env.step(
        "for i in $(seq 8); do curl -s -o /dev/null -w '%{http_code}\\n' "
        "-F file=@/tmp/sample.csv http://localhost:5000/validate; done"
    )
    assert out.split() == ["200"] * 3 + ["429"] * 5
    assert endpoint.validations == endpoint.max_validations


@pytest.fixture
def metric_calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every run of spaceship-titanic's metric appends a line to the returned file (grades
    run in forks of this process, which inherit the wrapper)."""
    from mle_gym.competitions import get_competition
    from mle_gym.grading.metrics import METRICS

    log = tmp_path / "metric-calls"
    log.touch()
    name = get_competition(ID).metric
    original = METRICS[name]

    def counted(*args, **kwargs):
        with open(log, "a") as handle:
            handle.write("metric\n")
        return original(*args, **kwargs)

    monkeypatch.setitem(METRICS._all(), name, counted)
    return log


def _validate_27_times_and_submit(env) -> dict:
    out, *_ = env.step(
        "cp /home/data/sample_submission.csv /home/submission/submission.csv; "
        "for i in $(seq 27); do curl -s -F file=@/tmp/sample.csv "
        "http://localhost:5000/validate; echo; done"
    )
    assert out.count('{"result": "Submission is valid."}') == 27, out
    *_, terminated, _, info = env.step({"tool": "submit"})
    assert terminated and info["report"]["valid_submission"]
    return info["integrity"]


def test_validations_keep_the_answers_out_of_the_verdict(env, metric_calls):
    """By default /validate answers from the format check, as the validate tool: 27 checks
    run no metric on the answers, and the record shows no score exposed."""
    integrity = _validate_27_times_and_submit(env)
    assert metric_calls.read_text() == "metric\n"  # the final grade alone
    assert integrity["validations"] == 27 and integrity["metric_runs_for_validity"] == 0
    assert integrity["grades_before_end"] == 0 and not integrity["score_exposed_during_episode"]


def test_the_metric_for_validity_is_an_option_counted_apart(checkout, spaceship_home, metric_calls):
    """mlebench_validation="metric" decides as MLE-bench's server does, by grading; the
    runs are counted as metric runs for validity, and still no score is exposed."""
    made = gym.make(f"mle/{ID}-v0", backend="local", task="mlebench", mlebench_dir=checkout,
                    max_steps=10, mlebench_validation="metric")  # fmt: skip
    try:
        made.reset(seed=0)
        made.step("cp /home/data/sample_submission.csv /tmp/sample.csv")
        integrity = _validate_27_times_and_submit(made)
    finally:
        made.close()
    assert metric_calls.read_text() == "metric\n" * 28
    assert integrity["validations"] == 27 and integrity["metric_runs_for_validity"] == 27
    assert integrity["grades_before_end"] == 0 and not integrity["score_exposed_during_episode"]
    with pytest.raises(ValueError, match="needs task='mlebench'"):
        gym.make(f"mle/{ID}-v0", backend="local", mlebench_validation="metric")
