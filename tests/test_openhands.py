"""OpenHands (V1 SDK) driving the env, end to end against the scripted server.

The SDK needs Python >= 3.12: each episode runs in the Python 3.12 venv that
`.ci/setup.d/agents.sh` makes (mle_gym installed editable there), as a subprocess; the
scripted server runs here, in the parent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.agent_support import run_cli_policy
from tests.conftest import REPO, require_bwrap
from tests.llm_server import (
    LOOK,
    RUN,
    SCRIPT_PATH,
    TRAIN_SCRIPT,
    Reply,
    ScriptedLLMServer,
    dead_endpoint,
    tool,
)
from tests.prerequisites import require_openhands_venv, setup_piece

pytestmark = pytest.mark.timeout(300)

VENV_PYTHON = setup_piece("MLE_GYM_OPENHANDS_VENV", "venv-openhands") / "bin" / "python"

#: One episode in the 3.12 interpreter; prints the trajectory as JSON on its last line.
EPISODE = """
import json, sys
import gymnasium as gym
import mle_gym
from mle_gym.policies import make_policy
env_id, backend, options = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
policy = make_policy("openhands", **options)
with gym.make(env_id, backend=backend, max_steps=20) as env:
    episode = mle_gym.run_episode(env, policy, seed=0)
events = [type(e).__name__ for e in policy.conversation.state.events]
print(json.dumps({"steps": [[s.action, s.observation, s.info["tool"]] for s in episode.steps],
                  "report": episode.report, "usage": policy.usage, "events": events,
                  "running": policy.running}))
"""


def openhands_plan() -> list[Reply]:
    """OpenHands' tools: `terminal`, `file_editor` (create), then `finish`."""
    return [
        tool("terminal", command=LOOK),
        tool(
            "file_editor",
            expect="sample_submission.csv",
            command="create",
            path=SCRIPT_PATH,
            file_text=TRAIN_SCRIPT,
        ),
        tool("terminal", expect="File created", command=RUN),
        tool("terminal", expect="predictions to", command="echo MLE_GYM_VALIDATE"),
        tool("finish", expect="The submission is valid.", message="Submission written."),
    ]


def run_in_venv(env_id: str, backend: str, **options: Any) -> subprocess.CompletedProcess:
    require_openhands_venv(VENV_PYTHON)
    return subprocess.run(
        [str(VENV_PYTHON), "-c", EPISODE, env_id, backend, json.dumps(options)],
        check=False,
        capture_output=True,
        text=True,
        timeout=240,
        cwd=REPO,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )


@pytest.mark.parametrize("env_id", ["mle/sklearn-digits-v0", "mle/spaceship-titanic-v0"])
def test_full_episode_is_graded(env_id: str, backend: str, request: pytest.FixtureRequest) -> None:
    request.getfixturevalue("spaceship_home" if "spaceship" in env_id else "mle_home")
    with ScriptedLLMServer(openhands_plan()) as server:
        result = run_in_venv(env_id, backend, base_url=server.url, model="scripted", api_key="k")
    assert result.returncode == 0, result.stderr[-4000:]
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert server.mismatches == []
    assert [s[2] for s in out["steps"]] == ["bash", "create", "bash", "validate", "submit"]
    assert out["steps"][1][0]["path"] == SCRIPT_PATH
    assert out["report"]["valid_submission"] and out["report"]["score"] > 0.7
    assert out["usage"]["calls"] == 5 and out["usage"]["prompt_tokens"] > 0
    assert out["events"].count("ActionEvent") == 5 and not out["running"]
    first = server.requests[0]
    assert first["model"] == "scripted"
    assert {t["function"]["name"] for t in first["tools"]} >= {"terminal", "file_editor", "finish"}
    editor = next(t for t in first["tools"] if t["function"]["name"] == "file_editor")
    assert "working directory is: /home/code" in editor["function"]["description"]


def test_dead_endpoint_ends_the_episode_with_a_clear_error(mle_home: Path) -> None:
    require_bwrap()
    url = dead_endpoint()
    result = run_in_venv(
        "mle/sklearn-digits-v0",
        "local",
        base_url=url,
        model="m",
        num_retries=1,
        retry_min_wait=1,
        retry_max_wait=1,
    )
    assert result.returncode != 0
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("mle_gym.inversion.ScaffoldError: openhands: the scaffold stopped"), (
        result.stderr[-3000:]
    )
    assert "Connection" in last or "connect" in last


def test_unsupported_terminal_input_is_told_to_the_model(mle_home: Path) -> None:
    require_bwrap()
    plan = [
        tool("terminal", command="sleep 1", is_input=True),
        tool(
            "file_editor",
            expect="each command runs to completion",
            command="undo_edit",
            path="/home/code/x.py",
        ),
        tool("file_editor", expect="undo_edit is not available", command="view", path="/home/nope"),
        tool("finish", expect="Error", message="giving up"),
    ]
    with ScriptedLLMServer(plan) as server:
        result = run_in_venv("mle/sklearn-digits-v0", "local", base_url=server.url, model="m")
    assert result.returncode == 0, result.stderr[-4000:]
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert server.mismatches == []
    assert [s[0] for s in out["steps"]] == [
        {"tool": "view", "path": "/home/nope"},
        {"tool": "submit"},
    ]
    assert not out["report"]["valid_submission"]


def test_the_cli_in_the_venv_and_a_clear_error_elsewhere(mle_home: Path) -> None:
    require_bwrap()
    with ScriptedLLMServer(openhands_plan()) as server:
        result = run_cli_policy(
            "openhands",
            server.url,
            "scripted",
            python=str(VENV_PYTHON),
            env={"PYTHONWARNINGS": "ignore"},
        )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "step 5: submit" in result.stdout and server.mismatches == []
    if sys.version_info < (3, 12):  # this interpreter: the policy says what it needs
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "mle_gym.cli",
                "run",
                "sklearn-digits",
                "--policy",
                "openhands",
                "--model",
                "m",
            ],
            check=False,
            capture_output=True,
            text=True,
            timeout=120,
            cwd=REPO,
            env={**os.environ, "COLUMNS": "200"},
        )
        assert result.returncode == 2
        assert "Python >= 3.12" in result.stderr and "mle-gym[openhands]" in result.stderr
