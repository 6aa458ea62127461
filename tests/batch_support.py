"""Helpers the batch tests (local and Ray) share: running `mle-gym`, reading run dirs."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

SEEDS = 3
EPISODE = "sklearn-digits/seed-{}"


def mle_gym_env(home: Path, tmp: Path | None = None) -> dict[str, str]:
    env = {**os.environ, "MLE_GYM_HOME": str(home), "COLUMNS": "200"}
    if tmp is not None:  # the workers' sandboxes then live under `tmp`, where a test can look
        env["TMPDIR"] = str(tmp)
    return env


def mle_gym(
    *args: str, home: Path, tmp: Path | None = None, ok: bool = True, timeout: float = 600
) -> subprocess.CompletedProcess:
    result = subprocess.run(
        ["mle-gym", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=mle_gym_env(home, tmp),
    )
    if ok:
        assert result.returncode == 0, result.stdout + result.stderr
    return result


def batch_args(run_dir: Path, *extra: str) -> list[str]:
    return [
        "run",
        "sklearn-digits",
        "--policy",
        "scripted",
        "--seeds",
        str(SEEDS),
        "--run-dir",
        str(run_dir),
        *extra,
    ]


def _status(run_dir: Path, seed: int) -> dict | None:
    path = run_dir / "episodes" / EPISODE.format(seed) / "status.json"
    return json.loads(path.read_text()) if path.is_file() else None


def _has_steps(run_dir: Path, seed: int) -> bool:
    path = run_dir / "episodes" / EPISODE.format(seed) / "trajectory.jsonl"
    return path.is_file() and len(path.read_text().splitlines()) >= 2


def _wait_for(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)
