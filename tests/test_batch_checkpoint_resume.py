"""A batch episode whose worker is SIGKILLed mid-episode goes on, with `--resume`, from its
newest periodic checkpoint: same files, directory, variable and remaining budget, its steps
counted on, graded once, its result carrying the lineage, and the report counting one
episode. (The same on Ray: tests/test_ray.py.)"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from tests.batch_support import mle_gym, mle_gym_env
from tests.conftest import require_bwrap
from tests.llm_server import ScriptedLLMServer
from tests.resume_support import EPISODE, batch_command, check_resumed, kill_then_resume, plan

pytestmark = pytest.mark.timeout(600)


def test_a_killed_worker_resumes_its_episode_from_the_last_checkpoint(
    digits_home: Path, tmp_path: Path
) -> None:
    require_bwrap()
    run_dir, scratch = tmp_path / "run", tmp_path / "tmp"
    scratch.mkdir()
    gate = threading.Event()
    with ScriptedLLMServer(plan(gate)) as server:
        command = batch_command(server, run_dir)
        marker = (run_dir / EPISODE).resolve()
        env = mle_gym_env(digits_home, scratch)
        resumed = kill_then_resume(command, env, server, gate, run_dir, marker)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "1 episode(s) run, 0 already done, 0 failed" in resumed.stdout, resumed.stdout
    assert server.mismatches == []
    report = mle_gym("report", str(run_dir), "--json", "--episodes", home=digits_home).stdout
    printed = mle_gym("report", str(run_dir), home=digits_home).stdout
    check_resumed(run_dir, json.loads(report), printed)


def test_resume_refuses_a_directory_without_a_run(digits_home: Path, tmp_path: Path) -> None:
    run = mle_gym("run", "sklearn-digits", "--run-dir", str(tmp_path / "nothing"), "--resume",
                  home=digits_home, ok=False)  # fmt: skip
    assert run.returncode != 0 and "holds no run to resume" in run.stderr
    assert not (tmp_path / "nothing").exists()
