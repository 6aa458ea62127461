"""SkyRL-Gym adapter, end to end: skyrl_gym.make + init + step, the model behind an OpenAI
client being the scripted server, which writes Hermes-style <tool_call> tags as text."""

from __future__ import annotations

import asyncio
import json
import shutil
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import require_bwrap
from tests.llm_server import (
    LOOK,
    RUN,
    SCRIPT_PATH,
    TRAIN_SCRIPT,
    Reply,
    ScriptedLLMServer,
    text,
)
from tests.prerequisites import require

require(
    find_spec("skyrl_gym") is not None and find_spec("openai") is not None,
    "skyrl-gym or openai is not installed: pip install skyrl-gym==0.4.0 openai",
    module=True,
)

import openai  # noqa: E402
import skyrl_gym  # noqa: E402
from omegaconf import OmegaConf  # noqa: E402
from skyrl_gym.metrics import aggregate_for_environment  # noqa: E402

import mle_gym  # noqa: E402
from mle_gym.integrations.skyrl import (  # noqa: E402
    ENV_ID,
    MleGymTextEnv,
    dataset_row,
    parse_tool_calls,
    register_env,
)

pytestmark = pytest.mark.timeout(120)


def call(name: str, closed: bool = True, **arguments: Any) -> str:
    """A tool call as Hermes / Qwen models write it; `closed=False` as a trainer that stops
    generation at `</tool_call>` returns it."""
    body = json.dumps({"name": name, "arguments": arguments})
    return f"<tool_call>\n{body}\n" + ("</tool_call>" if closed else "")


def plan() -> list[Reply]:
    """Look, write the script, a malformed call, run, validate, submit."""
    return [
        text("Let me look at the data first.\n" + call("bash", command=LOOK)),
        text(call("create", path=SCRIPT_PATH, file_text=TRAIN_SCRIPT), expect="sample_submission"),
        text(call("bash"), expect="File created: /home/code/train.py"),
        text(call("bash", command=RUN), expect="needs the argument 'command'"),
        text(call("validate", closed=False), expect="predictions to /home/submission"),
        text("Done.\n" + call("submit"), expect="The submission is valid."),
    ]


async def rollout(
    url: str, row: dict[str, Any], env_config: dict[str, Any], keep: Path
) -> tuple[list[dict], dict, dict[str, Any]]:
    """SkyRLGymGenerator.agent_loop's shape: make from the row, init, generate, step in a
    worker thread until done, metrics, close. Keeps the graded file in `keep`."""
    prompt, env_class = row["prompt"], row["env_class"]
    extras = {k: v for k, v in row.items() if k not in ("prompt", "env_class")}
    extras["max_turns"] = 10  # what the generator adds
    env = skyrl_gym.make(env_class, env_config=env_config, extras=extras)
    client = openai.AsyncOpenAI(base_url=url, api_key="k", max_retries=0)
    try:
        chat, _ = await asyncio.to_thread(env.init, prompt)
        done, output = False, None
        while not done:
            reply = await client.chat.completions.create(
                model="scripted", messages=chat, stop=["</tool_call>"]
            )
            action = reply.choices[0].message.content or ""
            output = await asyncio.to_thread(env.step, action)
            chat = [*chat, {"role": "assistant", "content": action}, *output["observations"]]
            done = output["done"]
        assert output is not None
        shutil.copy(output["metadata"]["graded_submission"], keep)
        return chat, output, env.get_metrics()
    finally:
        await client.close()
        await asyncio.to_thread(env.close)


@pytest.mark.parametrize("competition", ["sklearn-digits", "spaceship-titanic"])
def test_rollout_is_graded_as_evaluate_grades_its_file(
    competition: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    require_bwrap()
    request.getfixturevalue("spaceship_home" if "spaceship" in competition else "mle_home")
    row = dataset_row(competition)
    assert row["env_class"] == ENV_ID and row["competition_id"] == competition
    kept = tmp_path / "graded.csv"
    with ScriptedLLMServer(plan()) as server:
        chat, last, metrics = asyncio.run(rollout(server.url, row, {"backend": "local"}, kept))
    assert server.mismatches == [] and len(server.requests) == 6
    first = server.requests[0]["messages"]
    assert [m["role"] for m in first] == ["system", "user"]
    assert "<tools>" in first[0]["content"] and '"name": "submit"' in first[0]["content"]
    assert "/home/submission/submission.csv" in first[1]["content"]
    assert '{"tool": "create"' not in first[1]["content"]  # the dict-action manual is left out
    assert chat[-1]["role"] == "assistant"  # the final step adds no observation

    meta = last["metadata"]
    expected = mle_gym.evaluate(competition, kept)
    assert last["done"] and meta["tool_calls"] == ["submit"] and not meta["truncated"]
    assert last["reward"] == pytest.approx(expected["reward"]) and last["reward"] > 0
    for key in ("score", "valid", "above_median", "any_medal", "medal", "normalized_score"):
        assert meta[key] == pytest.approx(expected[key]), key
    assert meta["valid"] and meta["score"] > 0.7
    assert metrics["reward"] == last["reward"] and metrics["valid"] is True
    assert metrics["steps"] == 5 and metrics["turns"] == 6 and metrics["invalid_calls"] == 1
    logged = aggregate_for_environment(ENV_ID, [metrics, {**metrics, "valid": False}])
    assert logged["valid"] == 0.5 and logged["reward"] == pytest.approx(last["reward"])


def test_turn_limit_grades_the_submission_present(mle_home: Path) -> None:
    require_bwrap()
    copy = "cp /home/data/sample_submission.csv /home/submission/submission.csv"
    replies = [call("bash", command=copy), "I think I am done."]
    extras = {"competition_id": "sklearn-digits", "max_turns": 2}
    with skyrl_gym.make(ENV_ID, env_config=None, extras=extras) as env:
        chat, _ = env.init([])
        first = env.step(replies[0])
        last = env.step(replies[1])
        assert env.step(call("submit")) == {
            "observations": [],
            "reward": 0.0,
            "done": True,
            "metadata": {},
        }
        graded = Path(last["metadata"]["graded_submission"])
        expected = mle_gym.evaluate("sklearn-digits", graded)
    assert not first["done"] and "<tool_response>" in first["observations"][0]["content"]
    assert last["done"] and last["metadata"]["truncated"] and last["metadata"]["valid"]
    assert last["metadata"]["errors"] == [
        "No tool call found. Call a tool as <tool_call>{...}</tool_call>."
    ]
    assert last["reward"] == expected["reward"] and last["metadata"]["score"] == expected["score"]
    assert chat[0]["role"] == "system"


def test_parsing_the_models_text() -> None:
    reply = (
        '<think>maybe <tool_call>{"name": "submit"}</tool_call>?</think>'
        + call("bash", command="ls")
        + "then\n"
        + call("view", path="/home/data", view_range=[1, 5])
        + "<tool_call>not json</tool_call>"
        + call("create", path="/x")
        + '<tool_call>{"arguments": {}}</tool_call>'
        + call("validate", closed=False)
    )
    calls = parse_tool_calls(reply)
    assert [c.name for c in calls] == ["bash", "view", None, "create", None, "validate"]
    assert calls[0].action == {"tool": "bash", "command": "ls"}
    assert calls[1].action == {"tool": "view", "path": "/home/data", "view_range": [1, 5]}
    assert "not valid JSON" in calls[2].error and calls[2].action is None
    assert calls[3].error == "tool 'create' needs the argument 'file_text'"
    assert '"name"' in calls[4].error
    assert calls[5].action == {"tool": "validate"}
    stringified = (
        '<tool_call>{"name": "bash", "arguments": "{\\"command\\": \\"pwd\\"}"}</tool_call>'
    )
    assert parse_tool_calls(stringified)[0].action == {"tool": "bash", "command": "pwd"}
    assert parse_tool_calls("no call here") == []


def test_options_registration_and_tool_role(mle_home: Path) -> None:
    require_bwrap()
    assert skyrl_gym.registry[ENV_ID].entry_point == "mle_gym.integrations.skyrl:MleGymTextEnv"
    register_env()  # idempotent
    register_env("mle_gym_scored", reward_mode="score", max_output_chars=5000)
    env = skyrl_gym.make(
        "mle_gym_scored",
        env_config=OmegaConf.create({"time_limit": 600, "sandbox_options": {"memory": "4g"}}),
        extras={"competition_id": "sklearn-digits", "max_turns": 7, "seed": 3, "data_source": "x"},
    )
    assert isinstance(env, MleGymTextEnv) and env.max_turns == 7 and env.seed == 3
    inner = env.env.unwrapped
    assert (inner.reward_mode, inner.max_output_chars, inner.time_limit) == ("score", 5000, 600)
    assert inner.max_steps == 7 and inner.episode.sandbox_options == {"memory": "4g"}
    _, info = env.init(None)
    assert info == {"competition_id": "sklearn-digits", "seed": 3}
    assert not inner.started  # init is cheap: no sandbox yet
    env.close()
    with pytest.raises(ValueError, match="competition_id"):
        skyrl_gym.make(ENV_ID, env_config={}, extras={})
    tool_env = MleGymTextEnv(extras={"competition_id": "sklearn-digits"}, observation_role="tool")
    with tool_env:
        prompt = [{"role": "user", "content": "my own prompt"}]
        assert tool_env.init(prompt)[0] == prompt
        assert tool_env.init(json.dumps(prompt))[0] == prompt  # a row stored as JSON text
        out = tool_env.step(call("bash", command="echo hi") + call("bash", command="echo there"))
    assert [m["role"] for m in out["observations"]] == ["tool", "tool"]
    assert out["observations"][0]["content"].strip() == "hi"


def test_the_dev_variant_and_the_dense_reward_reach_the_env(
    digits_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """data="dev" and reward_mode="dense" from `env_config` reach the env: the prompt names
    the development variant, validate reports the development score, each turn is paid the
    change of the normalised development score its calls made, and the turns' rewards sum to
    the final normalised score (the metrics' reward)."""
    require_bwrap()
    monkeypatch.setenv("MLE_GYM_HOME", str(digits_home))
    config = {"data": "dev", "reward_mode": "dense", "step_timeout": 120}
    extras = {"competition_id": "sklearn-digits", "max_turns": 6}
    sample = "cp /home/data/sample_submission.csv /home/submission/submission.csv"
    with skyrl_gym.make(ENV_ID, env_config=config, extras=extras) as env:
        chat, _ = env.init([])
        inner = env.env.unwrapped
        assert (inner.config.data, inner.config.reward_mode) == ("dev", "dense")
        assert "development variant" in chat[1]["content"]
        turns = [
            env.step(call("bash", command=sample)),
            env.step(call("create", path=SCRIPT_PATH, file_text=TRAIN_SCRIPT)),
            env.step(call("bash", command=RUN) + call("validate")),
            env.step(call("submit")),
        ]
        metrics = env.get_metrics()
    assert "Development score" in turns[2]["observations"][0]["content"]
    rewards = [turn["reward"] for turn in turns]
    assert rewards[1] == 0.0 and rewards[2] > 0.5 and turns[3]["done"]
    final = max(0.0, turns[3]["metadata"]["normalized_score"])
    assert sum(rewards) == pytest.approx(final, abs=1e-9)
    assert turns[3]["metadata"]["reward"] == metrics["reward"] == pytest.approx(sum(rewards))
