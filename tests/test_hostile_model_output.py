"""Nothing a model writes can end an episode ungraded: whatever the text of its tool calls,
the parsers answer with an invalid-call message, and the episode goes on to its grade."""

from __future__ import annotations

import json
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import mle_gym
from mle_gym_baselines.llm_agent import LLMAgentPolicy
from mle_gym.tools import ActionError
from tests.agent_support import run_policy_episode
from tests.conftest import require_bwrap
from tests.llm_server import Reply, tool
from tests.model_output_support import (
    COPY,
    NESTED_ARRAYS,
    NESTED_OBJECTS,
    RAW,
    RawArgumentsServer,
    stubborn_plan,
)
from tests.prerequisites import require

pytestmark = pytest.mark.timeout(300)


@pytest.mark.parametrize(
    "arguments",
    [
        NESTED_ARRAYS,
        NESTED_OBJECTS,
        '{"command": ' + NESTED_ARRAYS + "}",
        '{"command": "ls", "x": ' + NESTED_OBJECTS + "}",
        '{"command": ' + "9" * 5000 + "}",  # over Python's integer digit limit
    ],
    ids=["arrays", "objects", "nested-value", "nested-extra", "long-integer"],
)
def test_any_undecodable_arguments_are_an_action_error(arguments: str) -> None:
    with pytest.raises(ActionError, match="the arguments of tool 'bash'"):
        mle_gym.action_from_tool_call("bash", arguments)


def test_a_tool_name_of_any_type_is_an_action_error() -> None:
    for name in (["bash"], {"a": 1}, None, 3):
        with pytest.raises(ActionError, match="unknown tool"):
            mle_gym.action_from_tool_call(name, "{}")  # type: ignore[arg-type]


def test_the_llm_policy_answers_a_deeply_nested_call_and_the_episode_is_graded(
    mle_home: Path,
) -> None:
    require_bwrap()
    plan = [
        tool("bash", command=COPY),
        Reply(tool_calls=[("bash", {RAW: '{"command": ' + NESTED_ARRAYS + "}"})]),
        Reply(tool_calls=[("view", {RAW: NESTED_OBJECTS}), ("bash", {"command": "echo on"})]),
        tool("bash", expect="on", command="echo still here"),
        tool("submit", expect="still here"),
    ]
    with RawArgumentsServer(plan) as server:
        # one recent turn: the nested calls are soon old, and compacted, in what is sent
        policy = LLMAgentPolicy(base_url=server.url, model="m", recent_turns=1)
        episode = run_policy_episode("mle/sklearn-digits-v0", "local", policy, max_steps=20)
    assert server.mismatches == [] and len(server.requests) == 5
    assert [s.info["tool"] for s in episode.steps] == ["bash", "bash", "bash", "submit"]
    assert episode.steps[-1].terminated and episode.report["valid_submission"]
    answers = [m["content"] for m in server.requests[2]["messages"] if m["role"] == "tool"]
    assert "Error: the arguments of tool 'bash': JSON nested too deeply to decode" in answers
    last = server.requests[-1]["messages"]
    assert any("JSON nested too deeply" in str(m.get("content")) for m in last)


def test_the_skyrl_env_answers_a_deeply_nested_call_and_the_episode_is_graded(
    mle_home: Path,
) -> None:
    require(find_spec("skyrl_gym") is not None, "skyrl-gym is not installed: pip install skyrl-gym")
    import skyrl_gym

    from mle_gym.integrations.skyrl import ENV_ID

    require_bwrap()
    extras = {"competition_id": "sklearn-digits", "max_turns": 5}
    with skyrl_gym.make(ENV_ID, env_config=None, extras=extras) as env:
        env.init([])
        copy = {"name": "bash", "arguments": {"command": COPY}}
        first = env.step(f"<tool_call>{json.dumps(copy)}</tool_call>")
        nested = env.step(
            f"<tool_call>{NESTED_ARRAYS}</tool_call>"
            # the arguments as a JSON string, which some models write
            f"<tool_call>{json.dumps({'name': 'bash', 'arguments': NESTED_OBJECTS})}</tool_call>"
        )
        last = env.step('<tool_call>{"name": "submit", "arguments": {}}</tool_call>')
        metrics = env.get_metrics()
    assert not first["done"] and not nested["done"]
    assert nested["metadata"]["errors"] == [
        "the tool call: JSON nested too deeply to decode",
        "the arguments of tool 'bash': JSON nested too deeply to decode",
    ]
    assert "Invalid tool call: the tool call: JSON nested" in nested["observations"][0]["content"]
    assert last["done"] and last["metadata"]["valid"] and last["reward"] >= 0.0
    assert metrics["graded"] and metrics["invalid_calls"] == 2 and metrics["steps"] == 2


def test_a_verifiers_rollout_answers_deeply_nested_calls_and_is_graded(
    mle_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """verifiers decodes the model's calls itself (on the host and in its chat program);
    a model that keeps writing the same call must get an answer, not a dead rollout."""
    require(find_spec("verifiers.v1") is not None, "verifiers 0.4 is not installed")
    from tests.test_integration_verifiers import rollout

    require_bwrap()
    plan = stubborn_plan("bash", "invalid JSON", tool("bash", command=COPY), tool("submit"))
    gym.make("mle/sklearn-digits-v0").close()  # prepares sklearn-digits
    with RawArgumentsServer(plan) as server:
        trace = rollout(server, monkeypatch, "sklearn-digits", max_steps=10)
    last = [str(m.get("content")) for m in server.requests[-1]["messages"]]
    assert sum("JSON in tool arguments (maximum recursion depth" in m for m in last) == 2
    assert trace.stop_condition == "episode_over" and trace.state.done
    assert trace.metrics["valid"] == 1.0 and trace.metrics["steps"] == 2.0
    assert trace.state.report["valid_submission"]


def test_mini_swe_agent_answers_deeply_nested_calls_and_the_episode_is_graded(
    mle_home: Path,
) -> None:
    """mini-swe-agent answers a call it cannot parse with a format error; litellm, which
    converts each response first, must not fail the model call (it would be retried with
    the same conversation, the same call, until the scaffold dies)."""
    require(find_spec("minisweagent") is not None, "mini-swe-agent is not installed")
    from mle_gym_baselines.scaffolds.mini_swe_agent import MiniSweAgentPolicy

    require_bwrap()
    done = tool("bash", command="echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT")
    answer = "Error parsing tool call arguments"
    plan = stubborn_plan("bash", answer, tool("bash", command=COPY), done)

    with RawArgumentsServer(plan) as server:
        policy = MiniSweAgentPolicy(base_url=server.url, model="m", api_key="k", retries=2)
        episode = run_policy_episode("mle/sklearn-digits-v0", "local", policy, max_steps=20)
    assert len(server.requests) == 4
    assert [s.info["tool"] for s in episode.steps] == ["bash", "submit"]
    assert episode.steps[-1].terminated and episode.report["valid_submission"]


def test_aide_asks_again_for_a_review_it_cannot_decode_and_the_episode_is_graded(
    mle_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """AIDE decodes its review's function call itself and stops at one it cannot decode,
    with no way to tell the model: the adapter asks again (bounded) instead."""
    require(find_spec("aide") is not None, "aideml is not installed")
    from mle_gym_baselines.scaffolds.aide import AidePolicy
    from tests.llm_server import TRAIN_SCRIPT
    from tests.test_aide import SEARCH, aide_plan

    require_bwrap()
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)  # AIDE's client reads these
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    answer = aide_plan(draft=TRAIN_SCRIPT)
    reviews: list[dict[str, Any]] = []

    def plan(request: dict[str, Any]) -> Reply:
        if request.get("tools"):
            reviews.append(request)
            if len(reviews) == 1:
                return Reply(tool_calls=[("submit_review", {RAW: NESTED_OBJECTS})])
        return answer(request)

    with RawArgumentsServer(plan) as server:
        policy = AidePolicy(base_url=server.url, model="m", steps=1, config=SEARCH)
        episode = run_policy_episode("mle/sklearn-digits-v0", "local", policy, max_steps=20)
    assert len(reviews) == 2 and reviews[0]["messages"] == reviews[1]["messages"]
    assert [n["is_buggy"] for n in policy.trajectory()] == [False]
    assert [s.info["tool"] for s in episode.steps][-2:] == ["validate", "submit"]
    assert episode.report["valid_submission"] and episode.report["score"] > 0.7


def test_openhands_answers_deeply_nested_calls_and_the_episode_is_graded(mle_home: Path) -> None:
    """The OpenHands SDK answers a call it cannot parse with an error event, and litellm
    converts its responses first: neither may let the model's call end the conversation."""
    from tests.test_openhands import run_in_venv

    require_bwrap()
    first, done = tool("terminal", command=COPY), tool("finish", message="done")
    plan = stubborn_plan("terminal", "nested too deeply", first, done)

    with RawArgumentsServer(plan) as server:
        result = run_in_venv(
            "mle/sklearn-digits-v0", "local", base_url=server.url, model="m", num_retries=1
        )
    assert result.returncode == 0, result.stderr[-2000:]
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert len(server.requests) == 4 and out["events"].count("AgentErrorEvent") == 2
    assert [s[2] for s in out["steps"]] == ["bash", "submit"]
    assert out["report"]["valid_submission"]
