"""mini-swe-agent's own loop driving the env, end to end against the scripted server."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import mle_gym
from mle_gym_baselines.scaffolds.mini_swe_agent import MiniSweAgentPolicy
from mle_gym.inversion import ScaffoldError
from mle_gym.policies import make_policy
from mle_gym.runner import Episode, Policy
from tests.agent_support import run_cli_policy, run_policy_episode
from tests.conftest import require_bwrap
from tests.llm_server import (
    LOOK,
    RUN,
    SCRIPT_PATH,
    TRAIN_SCRIPT,
    Reply,
    ScriptedLLMServer,
    dead_endpoint,
    text,
    tool,
)

pytestmark = pytest.mark.timeout(300)

COMMANDS = [
    (LOOK, None),
    (f"cat > {SCRIPT_PATH} <<'PYEOF'\n{TRAIN_SCRIPT}PYEOF", "sample_submission.csv"),
    (RUN, "[no output]"),
    ("echo MLE_GYM_VALIDATE", "predictions to /home/submission/submission.csv"),
    ("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", "The submission is valid."),
]


def tool_plan() -> list[Reply]:
    """The `mini` config: one bash tool call per reply. Its observations are JSON."""
    return [tool("bash", expect=expect, command=command) for command, expect in COMMANDS]


def text_plan() -> list[Reply]:
    """The `mini_textbased` config: a thought and one ```mswea_bash_command block per reply."""
    return [
        text(f"THOUGHT: next step.\n\n```mswea_bash_command\n{command}\n```", expect=expect)
        for command, expect in COMMANDS
    ]


def _episode(env_id: str, backend: str, policy: Policy) -> Episode:
    return run_policy_episode(env_id, backend, policy, max_steps=20)


def _check_graded(episode: mle_gym.runner.Episode, policy: MiniSweAgentPolicy) -> None:
    assert [s.info["tool"] for s in episode.steps] == ["bash", "bash", "bash", "validate", "submit"]
    assert episode.steps[2].info["exit_code"] == 0, episode.steps[2].observation
    assert episode.steps[-1].terminated and episode.report["valid_submission"]
    assert episode.report["score"] > 0.7 and episode.total_reward > 0
    trajectory = policy.trajectory()
    assert trajectory["info"]["exit_status"] == "Submitted"
    assert policy.usage["calls"] == 5 and not policy.running


@pytest.mark.parametrize("env_id", ["mle/sklearn-digits-v0", "mle/spaceship-titanic-v0"])
def test_full_episode_with_tool_calls(
    env_id: str, backend: str, request: pytest.FixtureRequest
) -> None:
    request.getfixturevalue("spaceship_home" if "spaceship" in env_id else "mle_home")
    with ScriptedLLMServer(tool_plan()) as server:
        policy = MiniSweAgentPolicy(base_url=server.url, model="scripted", api_key="k")
        episode = _episode(env_id, backend, policy)
    assert server.mismatches == []
    _check_graded(episode, policy)
    first = server.requests[0]
    assert first["model"] == "scripted" and first["tools"][0]["function"]["name"] == "bash"
    task = first["messages"][1]["content"]
    assert "/home/submission/submission.csv" in task and "MLE_GYM_VALIDATE" in task
    assert '{"tool": "create"' not in task  # the env's own tool manual is left out
    messages = policy.trajectory()["messages"]
    assert messages[-1]["role"] == "exit" and len(messages) == 2 + 5 * 2 - 1 + 1


def test_textbased_config_with_markdown_bash_blocks(mle_home: Path) -> None:
    require_bwrap()
    with ScriptedLLMServer(text_plan()) as server:
        policy = MiniSweAgentPolicy(base_url=server.url, model="scripted", config="mini_textbased")
        episode = _episode("mle/sklearn-digits-v0", "local", policy)
    assert server.mismatches == []
    assert "tools" not in server.requests[0]
    _check_graded(episode, policy)


def test_dead_endpoint_ends_the_episode_with_a_clear_error(mle_home: Path) -> None:
    require_bwrap()
    url = dead_endpoint()
    policy = MiniSweAgentPolicy(base_url=url, model="m", retries=2)
    started = time.monotonic()
    with pytest.raises(
        ScaffoldError,
        match=r"mini-swe-agent: the scaffold stopped with "
        r".*Connection error",
    ):
        _episode("mle/sklearn-digits-v0", "local", policy)
    assert time.monotonic() - started < 120 and not policy.running


def test_a_server_error_mid_episode_is_retried_by_mini_swe_agent(mle_home: Path) -> None:
    require_bwrap()
    plan = [
        tool("bash", command="echo hello"),
        Reply(content="overloaded", status=503),
        tool("bash", expect="hello", command="echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"),
    ]
    with ScriptedLLMServer(plan) as server:
        policy = MiniSweAgentPolicy(
            base_url=server.url, model="m", retries=3, model_kwargs={"max_retries": 0}
        )
        episode = _episode("mle/sklearn-digits-v0", "local", policy)
    assert server.mismatches == [] and len(server.requests) == 3
    assert [s.action for s in episode.steps][-1] == {"tool": "submit"}
    assert not episode.report["valid_submission"]  # nothing was written: graded as missing


def test_registry_and_cli(mle_home: Path) -> None:
    require_bwrap()
    assert isinstance(make_policy("mini-swe-agent", model="m"), MiniSweAgentPolicy)
    with ScriptedLLMServer(tool_plan()) as server:
        result = run_cli_policy("mini-swe-agent", server.url, "scripted")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "step 5: submit" in result.stdout and "valid_submission" in result.stdout
    assert server.mismatches == []
