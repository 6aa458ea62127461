"""What a new user meets first (issue 30, item 10): warnings said once, medals named, hints
that fit the terminal, one error format, and gymnasium's checker kept short."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

#: A few episodes, each a sandbox start: enough for a once-per-process warning to repeat.
STARTS = """
import gymnasium as gym
import mle_gym  # noqa: F401

for seed in range(3):
    env = gym.make(
        "mle/sklearn-digits-v0",
        max_steps=2,
        sandbox_options={"isolation": "none", "runtime": "host"},
    )
    env.reset(seed=seed)
    env.step("echo hi")
    env.close()
"""


def path_without_bwrap(tmp_path: Path) -> str:
    """A PATH holding everything this one does except `bwrap`: a machine without
    bubblewrap, as far as mle_gym can tell."""
    farm = tmp_path / "bin-without-bwrap"
    farm.mkdir()
    for folder in os.environ["PATH"].split(os.pathsep):
        if not os.path.isdir(folder):
            continue
        for name in os.listdir(folder):
            link = farm / name
            if name != "bwrap" and not os.path.lexists(link):
                link.symlink_to(os.path.join(folder, name))
    return f"{Path(sys.executable).parent}{os.pathsep}{farm}"


def run_without_bwrap(tmp_path: Path, home: Path, *argv: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "PATH": path_without_bwrap(tmp_path),
        "MLE_GYM_HOME": str(home),
        "PYTHONPATH": str(REPO),
        "COLUMNS": "80",
    }
    return subprocess.run(
        [sys.executable, *argv], capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path
    )


def test_unisolated_warning_is_said_once_however_many_sandboxes_start(
    tmp_path: Path, digits_home: Path
) -> None:
    result = run_without_bwrap(tmp_path, digits_home, "-c", STARTS)
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("NOT ISOLATED") == 1, result.stderr


def test_demo_without_bwrap_says_so_once(tmp_path: Path, digits_home: Path) -> None:
    result = run_without_bwrap(tmp_path, digits_home, "-m", "mle_gym.cli", "demo")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert output.count("bubblewrap is not installed") == 1, output
    assert "NOT ISOLATED" not in output, output
