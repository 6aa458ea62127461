"""The batch runner on Ray: a local Ray instance (started here) runs the same batch."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.batch_support import SEEDS, _has_steps, _status, _wait_for, batch_args, mle_gym_env
from tests.conftest import IN_CI, require_bwrap
from tests.llm_server import ScriptedLLMServer
from tests.resume_support import batch_command, check_resumed, kill_then_resume, plan

# Ray on loopback only (as it runs on macOS), without token auth: a test cluster on 127.0.0.1.
RAY_ENV = {
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
    "RAY_AUTH_MODE": "disabled",
    "RAY_USAGE_STATS_ENABLED": "0",
}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def node_tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Ray node's temporary directory (TMPDIR of its processes)."""
    return tmp_path_factory.mktemp("ray-node-tmp")


@pytest.fixture(scope="module")
def ray_cluster(digits_home: Path, node_tmp: Path) -> Iterator[str]:
    """A one-node Ray cluster of 2 CPUs on 127.0.0.1 (`ray start --head --block`, stopped
    with SIGTERM, which ends every process it started); yields its address."""
    if importlib.util.find_spec("ray") is None:
        if IN_CI:
            pytest.fail("Ray is part of the ci extra: pip install -e '.[ci]'")
        pytest.skip("Ray is not installed (pip install 'mle-gym[ray]')")
    ray_tmp = Path(tempfile.mkdtemp(prefix="mlegym-ray-", dir="/tmp"))  # short: socket paths
    port = _free_port()
    log = open(ray_tmp / "head.log", "w")  # noqa: SIM115  (closed below)
    head = subprocess.Popen(
        [
            "ray",
            "start",
            "--head",
            "--block",
            f"--port={port}",
            "--num-cpus=2",
            "--include-dashboard=false",
            "--disable-usage-stats",
            f"--temp-dir={ray_tmp}",
            "--object-store-memory=100000000",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env={**mle_gym_env(digits_home, node_tmp), **RAY_ENV},  # the node's data cache
    )
    try:
        deadline = time.monotonic() + 120
        while "Ray runtime started" not in (ray_tmp / "head.log").read_text():
            assert head.poll() is None, (ray_tmp / "head.log").read_text()
            assert time.monotonic() < deadline, "Ray did not start in 120 s"
            time.sleep(0.5)
        yield f"127.0.0.1:{port}"
    finally:
        head.send_signal(signal.SIGTERM)
        try:
            head.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(head.pid, signal.SIGKILL)
            head.wait()
        log.close()
        shutil.rmtree(ray_tmp, ignore_errors=True)


def _report(run_dir: Path, home: Path, *extra: str) -> dict:
    out = subprocess.run(
        ["mle-gym", "report", str(run_dir), "--json", *extra],
        capture_output=True,
        text=True,
        timeout=60,
        env=mle_gym_env(home),
        check=True,
    ).stdout
    return json.loads(out)


@pytest.mark.timeout(900)
def test_the_same_batch_on_ray_gives_the_same_report(
    ray_cluster: str, local_batch: Path, digits_home: Path, tmp_path: Path
) -> None:
    require_bwrap()
    run_dir = tmp_path / "ray-run"
    ray_options = ("--ray", ray_cluster, "--cpus-per-episode", "1", "--memory-per-episode", "1g")
    result = subprocess.run(
        ["mle-gym", *batch_args(run_dir, *ray_options)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**mle_gym_env(digits_home), **RAY_ENV},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"Ray at {ray_cluster}" in result.stdout
    assert "3 episode(s) run, 0 already done, 0 failed" in result.stdout
    for seed in range(SEEDS):
        directory = run_dir / "episodes" / "sklearn-digits" / f"seed-{seed}"
        status = json.loads((directory / "status.json").read_text())
        assert status["state"] == "done" and status["node"] == "127.0.0.1"  # ran on the node
        for name in (
            "trajectory.jsonl",
            "submission.csv",
            "report.json",
            "result.json",
            "provenance.json",
        ):
            assert (directory / name).is_file(), name
        assert "episode sklearn-digits/seed-" in (directory / "episode.log").read_text()
    # the same figures; cost (wall time) and provenance (times, nodes) say how each ran
    ray_report, local_report = _report(run_dir, digits_home), _report(local_batch, digits_home)
    for how in ("cost", "provenance"):
        ray_report.pop(how), local_report.pop(how)
    assert ray_report == local_report


@pytest.mark.timeout(600)
def test_a_killed_driver_resumes_on_ray_and_its_leftovers_are_swept(
    ray_cluster: str, digits_home: Path, node_tmp: Path, tmp_path: Path
) -> None:
    """Ray SIGKILLs the tasks of a dead driver (no cleanup): the next task on the node removes
    what they left, and rerunning finishes the episode."""
    require_bwrap()
    run_dir = tmp_path / "ray-run"
    command = [
        "mle-gym",
        "run",
        "sklearn-digits",
        "--seeds",
        "1",
        "--run-dir",
        str(run_dir),
        "--ray",
        ray_cluster,
    ]
    env = {**mle_gym_env(digits_home), **RAY_ENV}
    driver = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
    )
    task_dirs = lambda: list(node_tmp.glob("mle-gym-ray-*"))  # noqa: E731
    try:
        _wait_for(
            lambda: any(d.glob("tmp/mle-gym-episode-*") for d in task_dirs()),
            120,
            "the episode's sandbox on the node",
        )
    finally:
        # The task and its worker die first with no chance to clean up, as when Ray kills a
        # dead driver's tasks (whether Ray gets there first otherwise is a race).
        ours = str(node_tmp).encode()
        pids = [int((d / "owner").read_text().split(":")[0]) for d in task_dirs()]
        pids += [
            int(cmdline.parent.name)
            for cmdline in Path("/proc").glob("[0-9]*/cmdline")
            if b"mle_gym.batch.worker" in _read(cmdline) and ours in _read(cmdline)
        ]
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        driver.send_signal(signal.SIGKILL)
        driver.wait(30)
    orphans = task_dirs()
    _wait_for(
        lambda: (
            not [
                p
                for p in Path("/proc").glob("[0-9]*/cmdline")
                if b"mle_gym.batch.worker" in _read(p) and ours in _read(p)
            ]
        ),
        30,
        "Ray to end the task",
    )
    assert orphans and all(d.exists() for d in orphans), orphans
    assert _status(run_dir, 0)["state"] == "running", _status(run_dir, 0)

    result = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert _status(run_dir, 0)["state"] == "done" and _status(run_dir, 0)["attempt"] == 2
    assert _has_steps(run_dir, 0)
    assert not any(d.exists() for d in orphans) and task_dirs() == []


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


@pytest.mark.timeout(600)
def test_a_killed_worker_resumes_its_episode_from_the_last_checkpoint_on_ray(
    ray_cluster: str, digits_home: Path, node_tmp: Path, tmp_path: Path
) -> None:
    """The task sends the episode's checkpoints back with its files; the rerun's task gets
    them and the episode goes on from the newest (tests/resume_support.py)."""
    require_bwrap()
    run_dir, gate = tmp_path / "ray-run", threading.Event()
    env = {**mle_gym_env(digits_home), **RAY_ENV}
    with ScriptedLLMServer(plan(gate)) as server:
        command = batch_command(server, run_dir, "--ray", ray_cluster)
        resumed = kill_then_resume(command, env, server, gate, run_dir, node_tmp)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert server.mismatches == []
    check_resumed(
        run_dir,
        _report(run_dir, digits_home, "--episodes"),
        subprocess.run(
            ["mle-gym", "report", str(run_dir)],
            capture_output=True,
            text=True,
            timeout=60,
            env=mle_gym_env(digits_home),
            check=True,
        ).stdout,
    )
