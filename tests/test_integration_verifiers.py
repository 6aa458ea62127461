"""verifiers adapter, end to end: verifiers' own Env runs rollouts whose model is the scripted
server (reached through verifiers' interception and its OpenAI-client chat program) and whose
tool calls step a real mle_gym env; the trace's reward is mle_gym's."""

from __future__ import annotations

import asyncio
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

from tests.conftest import require_bwrap
from tests.llm_server import (
    LOOK,
    RUN,
    SCRIPT_PATH,
    TRAIN_SCRIPT,
    Reply,
    ScriptedLLMServer,
    tool,
)
from tests.prerequisites import require

require(
    find_spec("verifiers") is not None and find_spec("verifiers.v1") is not None,
    "verifiers (>= 0.4, with verifiers.v1) is not installed: pip install verifiers==0.4.0",
    module=True,
)

import verifiers.v1 as vf  # noqa: E402

import mle_gym  # noqa: E402
from mle_gym.data.cache import CompetitionDirs  # noqa: E402
from mle_gym.integrations.verifiers import load_environment  # noqa: E402

pytestmark = pytest.mark.timeout(120)

SUBMISSION = "/home/submission/submission.csv"
KEY_VAR = "MLE_GYM_TEST_VERIFIERS_KEY"


def rollout(
    server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch, competition_id: str, **kwargs: Any
) -> vf.Trace:
    """One rollout through verifiers' Env API, as a trainer or `eval` runs it."""
    monkeypatch.setenv(KEY_VAR, "k")
    env = load_environment(competition_id, backend="local", num_examples=1, **kwargs)
    client = vf.EvalClientConfig(base_url=server.url, api_key_var=KEY_VAR)
    ctx = vf.ModelContext(model="scripted", client=client)

    async def run() -> vf.Episode:
        async with env.serving():
            (task,) = list(env.taskset)
            return await env.run_episode(task, ctx)

    episode = asyncio.run(run())
    assert episode.errors == [] and len(episode.traces) == 1
    trace = episode.traces[0]
    assert trace.last_error is None, trace.last_error
    return trace


def tool_results(request: dict[str, Any]) -> int:
    """How many tool results a chat request's conversation holds: the rollout's step."""
    return sum(m.get("role") == "tool" for m in request["messages"])


def sample_text(competition_id: str) -> str:
    return (CompetitionDirs.of(competition_id).public / "sample_submission.csv").read_text()


@pytest.mark.parametrize("competition_id", ["sklearn-digits", "spaceship-titanic"])
def test_rollout_is_a_graded_episode(
    competition_id: str,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    require_bwrap()
    request.getfixturevalue("spaceship_home" if "spaceship" in competition_id else "mle_home")
    gym.make(f"mle/{competition_id}-v0").close()  # prepares sklearn-digits on first use
    sample = sample_text(competition_id)
    plan = [
        tool("bash", command=LOOK),
        tool("create", expect="sample_submission.csv", path=SUBMISSION, file_text=sample),
        tool("validate", expect="File created: "),
        tool("submit", expect="The submission is valid."),
    ]
    with ScriptedLLMServer(plan) as server:
        trace = rollout(server, monkeypatch, competition_id, reward_mode="score", max_steps=10)
    assert server.mismatches == [] and len(server.requests) == 4  # nothing after submit
    first = server.requests[0]
    advertised = {t["function"]["name"]: t["function"] for t in first["tools"]}
    ours = {s["function"]["name"]: s["function"] for s in mle_gym.tool_schemas()}
    assert sorted(advertised) == sorted(ours)
    for name, function in ours.items():  # the model sees mle_gym's own tools
        assert advertised[name]["description"] == function["description"]
        parameters = advertised[name]["parameters"]
        properties = function["parameters"]["properties"]
        assert set(parameters.get("properties", {})) == set(properties)
        assert sorted(parameters.get("required", [])) == sorted(function["parameters"]["required"])
        for arg, schema in properties.items():  # signatures from the same table of tools
            assert parameters["properties"][arg]["description"] == schema["description"]
    assert "/home/submission/submission.csv" in first["messages"][-1]["content"]
    assert trace.stop_condition == "episode_over"
    assert trace.metrics == {
        "valid": 1.0,
        "above_median": 0.0,
        "any_medal": 0.0,
        "gold_medal": 0.0,
        "episode_done": 1.0,
        "steps": 4.0,
    }
    path = tmp_path / "submission.csv"
    path.write_text(sample)
    expected = mle_gym.evaluate(competition_id, path, reward_mode="score")
    assert expected["valid"] and expected["reward"] != 0
    assert list(trace.rewards) == ["mle_gym_reward"]
    assert trace.reward == pytest.approx(expected["reward"])
    assert trace.state.report["score"] == pytest.approx(expected["score"])


def test_trained_submission_earns_the_normalized_reward(
    mle_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The model trains a model; the file it writes (read back with cat) grades to the
    trace's reward by `mle_gym.evaluate`."""
    require_bwrap()
    plan = [
        tool("create", path=SCRIPT_PATH, file_text=TRAIN_SCRIPT),
        tool("bash", expect="File created: ", command=RUN),
        tool("bash", expect="predictions to", command=f"cat {SUBMISSION}"),
        tool("submit", expect="id,label"),
    ]
    with ScriptedLLMServer(plan) as server:
        trace = rollout(server, monkeypatch, "sklearn-digits")
    assert server.mismatches == []
    written = server.requests[3]["messages"][-1]["content"]
    path = tmp_path / "submission.csv"
    path.write_text(written + "\n")
    expected = mle_gym.evaluate("sklearn-digits", path)
    assert expected["valid"] and expected["reward"] > 0
    assert trace.reward == pytest.approx(expected["reward"])
    assert trace.metrics["valid"] == 1.0 and trace.metrics["above_median"] == 1.0


def test_budget_end_and_malformed_calls(mle_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A malformed call comes back as mle_gym's message (no step is spent); the step budget
    ends the episode, graded, and the rollout stops there."""
    require_bwrap()
    plan = [
        tool("view", path="/home/data", view_range=[1]),
        tool("bash", expect="view_range must be", command="echo one"),
        tool("bash", expect="one", command="echo two"),
        tool("bash", command="echo never sent"),
    ]
    with ScriptedLLMServer(plan) as server:
        trace = rollout(server, monkeypatch, "sklearn-digits", max_steps=2)
    assert server.mismatches == [] and len(server.requests) == 3
    assert trace.stop_condition == "episode_over"
    assert trace.metrics["episode_done"] == 1.0 and trace.metrics["steps"] == 2.0
    assert trace.metrics["valid"] == 0.0 and trace.reward == 0.0
    assert trace.state.report is not None and not trace.state.report["valid_submission"]


def test_a_group_of_rollouts_runs_side_by_side(
    mle_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A GRPO-style group: two rollouts of one task at once, each with its own env."""
    require_bwrap()
    gym.make("mle/sklearn-digits-v0").close()
    sample = sample_text("sklearn-digits")
    steps = [
        tool("bash", command="echo x >> /home/code/log && wc -l < /home/code/log"),
        tool("create", path=SUBMISSION, file_text=sample),
        tool("submit"),
    ]

    def plan(request: dict[str, Any]) -> Reply:
        """Each rollout's next step, by how many tool results its conversation holds."""
        return steps[tool_results(request)]

    monkeypatch.setenv(KEY_VAR, "k")
    env = load_environment("sklearn-digits", num_examples=1, reward_mode="score")
    client = vf.EvalClientConfig(base_url="", api_key_var=KEY_VAR)

    async def run(url: str) -> list[vf.Episode]:
        ctx = vf.ModelContext(model="scripted", client=client.model_copy(update={"base_url": url}))
        async with env.serving():
            (task,) = list(env.taskset)
            return await asyncio.gather(*(env.run_slot(s, ctx) for s in env.slots(task, 2)))

    with ScriptedLLMServer(plan) as server:
        episodes = asyncio.run(run(server.url))
    assert len(server.requests) == 6
    counts = [r["messages"][-1]["content"] for r in server.requests if tool_results(r) == 1]
    assert counts == ["1", "1"]  # each rollout appended to a log of its own
    path = tmp_path / "submission.csv"
    path.write_text(sample)
    expected = mle_gym.evaluate("sklearn-digits", path, reward_mode="score")["reward"]
    traces = [episode.traces[0] for episode in episodes]
    assert [t.reward for t in traces] == pytest.approx([expected, expected])
    assert all(t.stop_condition == "episode_over" and t.metrics["valid"] for t in traces)
    assert traces[0].id != traces[1].id


def test_the_dev_variant_and_the_dense_reward_reach_the_env(
    digits_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """data="dev" and reward_mode="dense" given to `load_environment` reach each rollout's
    env: validate reports the development score, and the trace's one reward is the sum of
    the episode's dense rewards, its final normalised score."""
    require_bwrap()
    monkeypatch.setenv("MLE_GYM_HOME", str(digits_home))
    plan = [
        tool("create", path=SCRIPT_PATH, file_text=TRAIN_SCRIPT),
        tool("bash", expect="File created: ", command=RUN),
        tool("validate", expect="predictions to"),
        tool("submit", expect="Development score"),
    ]
    with ScriptedLLMServer(plan) as server:
        trace = rollout(
            server, monkeypatch, "sklearn-digits", data="dev", reward_mode="dense", step_timeout=120
        )
    assert server.mismatches == [] and trace.state.done
    final = max(0.0, trace.state.report["normalized_score"])
    assert final > 0.5 and trace.reward == pytest.approx(final, abs=1e-9)
