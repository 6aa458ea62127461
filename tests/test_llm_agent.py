"""The tool-calling LLM agent, end to end against the scripted OpenAI-compatible server."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from mle_gym_baselines.llm_agent import EndpointError, LLMAgentPolicy, Prices
from mle_gym_baselines.llm_agent.context import compact
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


def fixed_plan() -> list[Reply]:
    """Look, write the script, run it, validate, submit; each reply checks the last output."""
    return [
        tool("bash", command=LOOK),
        tool("create", expect="sample_submission.csv", path=SCRIPT_PATH, file_text=TRAIN_SCRIPT),
        tool("bash", expect="File created", command=RUN),
        tool("validate", expect="wrote"),
        tool("submit", expect="The submission is valid."),
    ]


def _episode(env_id: str, backend: str, policy: Policy) -> Episode:
    return run_policy_episode(env_id, backend, policy, max_steps=20)


@pytest.mark.parametrize("env_id", ["mle/sklearn-digits-v0", "mle/spaceship-titanic-v0"])
def test_full_episode_is_graded_with_accounting(
    env_id: str, backend: str, request: pytest.FixtureRequest
) -> None:
    request.getfixturevalue("spaceship_home" if "spaceship" in env_id else "mle_home")
    with ScriptedLLMServer(fixed_plan()) as server:
        policy = LLMAgentPolicy(base_url=server.url, model="scripted-model", api_key="k")
        episode = _episode(env_id, backend, policy)
    assert server.mismatches == []
    assert [s.info["tool"] for s in episode.steps] == [
        "bash",
        "create",
        "bash",
        "validate",
        "submit",
    ]
    assert episode.steps[2].info["exit_code"] == 0, episode.steps[2].observation
    assert episode.steps[-1].terminated and episode.report["valid_submission"]
    assert episode.report["score"] > 0.7 and episode.total_reward > 0
    # accounting: the server's usage figures, summed per step and over the episode
    assert len(policy.records) == len(episode.steps) == policy.usage.calls == 5
    assert [r.action for r in policy.records] == [s.action for s in episode.steps]
    sent = [len(json.dumps(r["messages"])) // 4 for r in server.requests]
    assert [r.prompt_tokens for r in policy.records] == sent
    assert policy.usage.prompt_tokens == sum(sent) and policy.usage.completion_tokens > 0
    assert all(r["model"] == "scripted-model" for r in server.requests)
    assert server.requests[0]["messages"][1]["content"] == episode.first_observation
    assert {t["function"]["name"] for t in server.requests[0]["tools"]} == {
        "bash",
        "view",
        "create",
        "str_replace",
        "insert",
        "validate",
        "submit",
    }
    trajectory = policy.trajectory()
    assert trajectory["usage"]["total_tokens"] == policy.usage.total_tokens
    assert trajectory["messages"][-1]["tool_calls"][0]["function"]["name"] == "submit"


def test_dead_endpoint_ends_the_episode_with_a_clear_error(mle_home: Path) -> None:
    require_bwrap()
    url = dead_endpoint()
    policy = LLMAgentPolicy(base_url=url, model="m", max_retries=2, backoff=0.05)
    started = time.monotonic()
    with pytest.raises(EndpointError, match=re.escape(url) + ".*connection refused"):
        _episode("mle/sklearn-digits-v0", "local", policy)
    assert time.monotonic() - started < 60


def test_retries_are_bounded_and_counted(mle_home: Path) -> None:
    require_bwrap()
    busy = Reply(content="overloaded", status=503)
    plan = [busy, tool("bash", command="echo hi"), busy, tool("submit", expect="hi")]
    with ScriptedLLMServer(plan) as server:
        policy = LLMAgentPolicy(base_url=server.url, model="m", backoff=0.01)
        episode = _episode("mle/sklearn-digits-v0", "local", policy)
        assert [s.info["tool"] for s in episode.steps] == ["bash", "submit"]
        assert policy.usage.calls == 2 and policy.usage.attempts == 4
    with ScriptedLLMServer([busy] * 10) as server:
        policy = LLMAgentPolicy(base_url=server.url, model="m", max_retries=3, backoff=0.01)
        with pytest.raises(EndpointError, match="HTTP 503"):
            _episode("mle/sklearn-digits-v0", "local", policy)
        assert len(server.requests) == 4
    refused = Reply(content="bad key", status=401)
    with ScriptedLLMServer([refused] * 3) as server:
        policy = LLMAgentPolicy(base_url=server.url, model="m", backoff=0.01)
        with pytest.raises(EndpointError, match=r"HTTP 401: .*bad key"):
            _episode("mle/sklearn-digits-v0", "local", policy)
        assert len(server.requests) == 1


def test_malformed_calls_and_chatter_cost_no_steps(mle_home: Path) -> None:
    require_bwrap()
    broken = Reply(
        tool_calls=[
            ("bash", {"command": "echo one"}),
            ("rm_rf", {}),
            ("bash", {"command": "echo two"}),
        ]
    )
    plan = [
        text("Let me think about it."),
        broken,
        Reply(tool_calls=[("view", {"path": "/home/data", "bogus": 1})], expect="two"),
        text("done?", expect="unexpected: bogus"),
        text("done."),
        text("really done."),
    ]
    with ScriptedLLMServer(plan) as server:
        policy = LLMAgentPolicy(base_url=server.url, model="m", max_idle_replies=3)
        episode = _episode("mle/sklearn-digits-v0", "local", policy)
    assert server.mismatches == []
    assert [s.action for s in episode.steps] == [
        {"tool": "bash", "command": "echo one"},
        {"tool": "bash", "command": "echo two"},
        {"tool": "submit"},
    ]
    # the unknown tool and the call with a bogus argument were answered to the model
    # directly (with the env's own message for the latter), without a step
    unknown = server.requests[2]["messages"]
    assert any(m["role"] == "tool" and "unknown tool 'rm_rf'" in m["content"] for m in unknown)
    assert server.requests[1]["messages"][-1]["content"].startswith("Continue with a tool call")
    assert len(policy.records[0].calls) == 2  # the chatter and the call that became step 1


def test_cost_from_the_server_or_from_prices(mle_home: Path) -> None:
    require_bwrap()
    plan = [tool("bash", command="true"), tool("submit")]
    with ScriptedLLMServer(list(plan), cost_per_call=0.25) as server:
        policy = LLMAgentPolicy(base_url=server.url, model="m", prices=Prices(1000, 1000))
        _episode("mle/sklearn-digits-v0", "local", policy)
    assert policy.usage.cost_usd == pytest.approx(0.5)
    with ScriptedLLMServer(list(plan)) as server:
        policy = LLMAgentPolicy(base_url=server.url, model="m", prices=Prices(2.0, 10.0))
        _episode("mle/sklearn-digits-v0", "local", policy)
    usage = policy.usage
    expected = (usage.prompt_tokens * 2.0 + usage.completion_tokens * 10.0) / 1e6
    assert usage.cost_usd == pytest.approx(expected) and usage.cost_usd > 0
    assert policy.last_step_info["cost_usd"] == pytest.approx(policy.records[-1].cost_usd)


def test_long_episode_keeps_the_context_within_budget(mle_home: Path) -> None:
    require_bwrap()
    steps = 14
    plan = [tool("bash", command=f"echo step-{i}; seq 1 2000") for i in range(steps)]
    plan.append(tool("submit", expect="step-13"))
    with ScriptedLLMServer(plan) as server:
        policy = LLMAgentPolicy(
            base_url=server.url,
            model="m",
            recent_turns=3,
            old_output_chars=200,
            max_context_chars=40_000,
        )
        episode = _episode("mle/sklearn-digits-v0", "local", policy)
    assert server.mismatches == [] and episode.steps[-1].terminated
    sizes = [len(json.dumps(r["messages"])) for r in server.requests]
    assert max(sizes) < 40_000 < len(json.dumps(policy.messages))
    last = server.requests[-1]["messages"]
    assert last[1]["content"] == episode.first_observation  # the task is never dropped
    assert "earlier turns were dropped" in json.dumps(last)
    answered = {m["tool_call_id"] for m in last if m["role"] == "tool"}
    asked = {c["id"] for m in last if m["role"] == "assistant" for c in m.get("tool_calls", [])}
    assert answered == asked  # every call sent keeps its answer
    assert "characters elided" in json.dumps(last) and "step-12" in json.dumps(last)


def test_compact_shortens_old_outputs_and_file_contents() -> None:
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "task"}]
    for i in range(6):
        args = json.dumps({"path": f"/f{i}", "file_text": "x" * 5000})
        messages += [
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": f"c{i}",
                        "type": "function",
                        "function": {"name": "create", "arguments": args},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": f"c{i}", "content": f"out{i} " + "y" * 5000},
        ]
    view = compact(messages, recent_turns=2, old_output_chars=100, max_chars=10**6)
    assert len(view) == len(messages) and view[:2] == messages[:2]
    assert view[-4:] == messages[-4:]
    old_args = json.loads(view[2]["tool_calls"][0]["function"]["arguments"])
    assert old_args["path"] == "/f0" and len(old_args["file_text"]) < 200
    assert view[3]["content"].startswith("out0") and "elided" in view[3]["content"]
    assert messages[3]["content"].endswith("y")  # the transcript itself is untouched


def test_endpoint_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1/")
    monkeypatch.setenv("OPENAI_API_KEY", "secret")
    monkeypatch.setenv("MLE_GYM_MODEL", "some-model")
    policy = make_policy("llm")
    assert isinstance(policy, LLMAgentPolicy)
    assert (policy.endpoint.chat_url, policy.endpoint.model, policy.endpoint.api_key) == (
        "http://127.0.0.1:9/v1/chat/completions",
        "some-model",
        "secret",
    )
    assert make_policy("llm", model="other").endpoint.model == "other"
    monkeypatch.delenv("MLE_GYM_MODEL")
    with pytest.raises(ValueError, match="MLE_GYM_MODEL"):
        make_policy("llm")


def test_cli_runs_the_llm_policy(mle_home: Path) -> None:
    require_bwrap()
    with ScriptedLLMServer(fixed_plan()) as server:
        result = run_cli_policy("llm", server.url, "scripted", "--api-key", "k")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "step 5: submit" in result.stdout and "valid_submission" in result.stdout
    assert server.mismatches == [] and len(server.requests) == 5
