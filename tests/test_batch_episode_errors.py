"""A batch episode cannot veto its own grade: once the agent has had a step, an error of its
policy or env ends the episode graded on the submission present, and the next run leaves it
be. `failed` (retried) is kept for episodes the infrastructure broke before any step."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from mle_gym.competitions import get_competition
from mle_gym.grading import grade
from tests.batch_support import mle_gym
from tests.conftest import require_bwrap
from tests.llm_server import Reply, last_text, tool
from tests.model_output_support import COPY, NESTED_ARRAYS, RAW, RawArgumentsServer

pytestmark = pytest.mark.timeout(600)

#: Seed 1's policy raises mid-episode; seed 2 leaves a tree that made the env's close() raise.
POLICY_RAISES, CLOSE_RAISES = 1, 2
DEEP_TREE = (
    'cd /home/code && python3 -c \'import os\nfor _ in range(1500): os.mkdir("d"); '
    'os.chdir("d")\' && echo deep tree made'
)


def plan(request: dict[str, Any]) -> Reply:
    """Every seed writes the sample submission; seed 0 then submits. Seed 1 sends a call no
    JSON decoder takes, then the endpoint refuses, so the policy raises (the nested call is
    too long to stay in the context: only the last message decides). Seed 2 makes a tree
    1,500 directories deep in /home/code, which Python's rmtree cannot remove, then submits."""
    if len(request.get("messages", [])) <= 2:
        return tool("bash", command=f"echo seed=$MLE_GYM_SEED && {COPY}")
    last = last_text(request)
    if "seed=0" in last or "deep tree made" in last:
        return tool("submit")
    if f"seed={POLICY_RAISES}" in last:
        return Reply(tool_calls=[("bash", {RAW: '{"command": ' + NESTED_ARRAYS + "}"})])
    if f"seed={CLOSE_RAISES}" in last:
        return tool("bash", command=DEEP_TREE)
    return Reply(content=f"this request is refused; the last message was {last[:200]}", status=400)


def _episode(run_dir: Path, seed: int) -> Path:
    return run_dir / "episodes" / "sklearn-digits" / f"seed-{seed}"


def _read(directory: Path, name: str) -> Any:
    return json.loads((directory / name).read_text())


def test_episodes_whose_policy_or_env_raises_are_graded_and_not_retried(
    digits_home: Path, tmp_path: Path
) -> None:
    require_bwrap()
    run_dir, scratch = tmp_path / "run", tmp_path / "tmp"  # the sandboxes' temp dir
    scratch.mkdir()
    try:
        with RawArgumentsServer(plan) as server:
            args = ["run", "sklearn-digits", "--policy", "llm", "--seeds", "3"]
            args += ["--base-url", server.url, "--model", "m", "--api-key", "k"]
            args += ["--run-dir", str(run_dir)]
            first = mle_gym(*args, home=digits_home, tmp=scratch, timeout=240)
            requests = len(server.requests)
            again = mle_gym(*args, home=digits_home, tmp=scratch, timeout=240)
            assert len(server.requests) == requests  # nothing was run again
    finally:  # GNU rm removes any depth
        subprocess.run(["rm", "-rf", str(scratch)], check=True)
    assert "failed 0" in first.stdout and "failed 0" in again.stdout
    sample = digits_home / "sklearn-digits" / "public" / "sample_submission.csv"
    private = digits_home / "sklearn-digits" / "private"
    expected = grade(get_competition("sklearn-digits"), sample, private).to_dict()
    for seed in (0, POLICY_RAISES, CLOSE_RAISES):
        directory = _episode(run_dir, seed)
        status, result = _read(directory, "status.json"), _read(directory, "result.json")
        report = _read(directory, "report.json")
        assert status["state"] == "done" and status["attempt"] == 1, status
        assert result["valid_submission"] and report["score"] == pytest.approx(expected["score"])
        assert (directory / "submission.csv").read_bytes() == sample.read_bytes()
        if seed != POLICY_RAISES:
            assert result["episode_error"] is None and result["terminated"]
    hostile = _episode(run_dir, POLICY_RAISES)
    error = _read(hostile, "result.json")["episode_error"]
    assert error.startswith("EndpointError:") and "HTTP 400" in error
    events = [json.loads(line) for line in (hostile / "trajectory.jsonl").read_text().splitlines()]
    assert [e["event"] for e in events] == ["reset", "step", "error", "step"]
    assert events[-1]["action"] == {"tool": "submit"} and events[-1]["terminated"]
    assert "policy_info" not in events[-1]  # the grading step was no choice of the policy's
    report = _read(run_dir, "report.json")
    assert report["episodes"]["done"] == 3 and report["episodes"]["failed"] == 0
    assert report["competitions"]["sklearn-digits"]["valid_submission"]["mean"] == 1.0


@pytest.mark.docker
def test_an_episode_whose_sandbox_cannot_start_fails_and_is_retried(
    digits_home: Path, tmp_path: Path, docker_engine: Any
) -> None:
    """A memory limit under the engine's 6 MB minimum: the engine refuses to create the
    container, so the sandbox never starts (the check a run makes first builds a sandbox
    but starts none). That is not the agent's doing: failed, not graded 0."""
    run_dir = tmp_path / "run"
    args = ["run", "sklearn-digits", "--policy", "scripted", "--backend", "docker"]
    args += ["--memory-per-episode", "4m", "--run-dir", str(run_dir)]
    first = mle_gym(*args, home=digits_home, ok=False)
    directory = _episode(run_dir, 0)
    status = _read(directory, "status.json")
    assert first.returncode != 0 and status["state"] == "failed"
    assert "could not start" in status["error"] and not (directory / "result.json").exists()
    report = _read(run_dir, "report.json")
    assert report["episodes"]["done"] == 0 and report["episodes"]["failed"] == 1
    mle_gym(*args, home=digits_home, ok=False)
    assert _read(directory, "status.json")["attempt"] == 2  # run again, as failed ones are
