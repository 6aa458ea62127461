"""What an agent inside the bubblewrap sandbox cannot do: read answers, reach the network,
write its data, or harm anything outside its episode."""

from __future__ import annotations

import os
import socket
import sys
import threading
from pathlib import Path

import gymnasium as gym
import pytest

import mle_gym  # noqa: F401
from mle_gym.data import CompetitionDirs
from mle_gym.data.checksums import md5_of
from mle_gym.sandbox.uids import AGENT_UIDS
from tests.conftest import REPO, SHARED, require_bwrap


@pytest.fixture
def env(spaceship_home: Path):
    require_bwrap()
    with gym.make("mle/spaceship-titanic-v0", step_timeout=60) as env:
        env.reset(seed=0)
        assert env.unwrapped.sandbox.describe()["isolation"] == "bwrap"
        yield env


def run(env, command: str) -> str:
    observation, *_ = env.step(command)
    return observation


def test_private_answers_are_unreachable(env, spaceship_home: Path) -> None:
    private = CompetitionDirs.of("spaceship-titanic", spaceship_home).private / "test.csv"
    answer_md5 = md5_of(private)
    python_root = Path(sys.prefix).resolve()
    for path in map(Path, (private, spaceship_home, SHARED, REPO, "/work")):
        if python_root.is_relative_to(path):  # a venv inside the clone: only the way down
            assert run(env, f"ls -A {path}").split() == [python_root.relative_to(path).parts[0]]
        else:
            assert "No such file" in run(env, f"ls {path} 2>&1 | head -1"), path
    # The host's home shows at most the path down to the bound Python installation.
    if python_root.is_relative_to(Path.home()):
        visible = run(env, f"ls -A {Path.home()}").split()
        assert visible == [python_root.relative_to(Path.home()).parts[0]]
    sums = run(env, "find / -type f -name '*.csv' -readable 2>/dev/null | xargs -r md5sum")
    assert answer_md5 not in sums
    found = run(env, "grep -rl --include='*.csv' 'Transported' / 2>/dev/null | sort")
    assert found.split() == ["/home/data/sample_submission.csv", "/home/data/train.csv"]


def test_no_network_connection(env) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    accepted: list[socket.socket] = []
    thread = threading.Thread(target=lambda: accepted.append(server.accept()[0]), daemon=True)
    thread.start()
    try:
        script = (
            "import socket\n"
            f"for host, port in [('127.0.0.1', {port}), ('1.1.1.1', 53), ('8.8.8.8', 443)]:\n"
            "    try:\n"
            "        socket.create_connection((host, port), timeout=3); print('CONNECTED', host)\n"
            "    except OSError as exc:\n"
            "        print('refused', host, exc.errno)\n"
        )
        output = run(env, f'python3 -c "{script}"')
        assert "CONNECTED" not in output and output.count("refused") == 3, output
        assert not accepted
        interfaces = run(env, "tail -n +3 /proc/net/dev | cut -d: -f1").split()
        assert interfaces == ["lo"]
    finally:
        server.close()


def test_data_is_read_only(env, spaceship_home: Path) -> None:
    public = CompetitionDirs.of("spaceship-titanic", spaceship_home).public
    before = {p.name: md5_of(p) for p in public.iterdir()}
    output = run(
        env,
        "echo x >> /home/data/train.csv; rm -f /home/data/test.csv; "
        "touch /home/data/new; chmod 777 /home/data/train.csv; echo done",
    )
    assert output.count("Read-only file system") >= 3
    assert {p.name: md5_of(p) for p in public.iterdir()} == before


def test_rm_rf_of_everything_writable_harms_nothing_outside(env, spaceship_home, tmp_path) -> None:
    sentinel = tmp_path / "sentinel.txt"
    sentinel.write_text("keep me")
    public = CompetitionDirs.of("spaceship-titanic", spaceship_home).public
    before = {p.name: md5_of(p) for p in public.iterdir()}
    # Only after checking the host is out of sight is the destructive command run.
    assert "No such file" in run(env, f"ls {tmp_path} {REPO} 2>&1")
    agent_uid = int(run(env, "id -u"))
    assert agent_uid in AGENT_UIDS if os.geteuid() == 0 else agent_uid == 1000
    run(env, "rm -rf --no-preserve-root / 2>/dev/null; echo finished")
    assert sentinel.read_text() == "keep me"
    assert {p.name: md5_of(p) for p in public.iterdir()} == before
    assert (REPO / "setup.cfg").is_file()
    assert run(env, "echo still here").strip() == "still here"
