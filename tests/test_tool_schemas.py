"""Tool schemas for models and tool calls back into actions, from the one tool definition
(issue 13, item 1)."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

import mle_gym
from mle_gym_baselines.llm_agent.tools import TOOLS as BASELINE_TOOLS
from mle_gym_baselines.llm_agent.tools import parse_calls
from mle_gym.tools import TOOL_NAMES, ActionError, parse_action

VALID = {
    "bash": {"command": "echo hi"},
    "view": {"path": "/home/code", "view_range": [1, 5]},
    "create": {"path": "/home/code/a.py", "file_text": "x = 1\n"},
    "str_replace": {"path": "/home/code/a.py", "old_str": "x = 1", "new_str": "x = 2"},
    "insert": {"path": "/home/code/a.py", "insert_line": 0, "new_str": "# top\n"},
    "validate": {},
    "submit": {},
}


def test_one_schema_per_tool_with_the_envs_argument_names():
    schemas = mle_gym.tool_schemas()
    assert [s["function"]["name"] for s in schemas] == list(TOOL_NAMES)
    for schema in schemas:
        params = schema["function"]["parameters"]
        name = schema["function"]["name"]
        assert set(params["properties"]) >= set(VALID[name])
        assert schema["type"] == "function" and schema["function"]["description"]
        for required in params["required"]:  # dropping a required argument is refused
            call = {k: v for k, v in VALID[name].items() if k != required}
            with pytest.raises(ActionError, match=f"needs the argument '{required}'"):
                mle_gym.action_from_tool_call(name, json.dumps(call))
    assert json.loads(json.dumps(schemas)) == schemas  # plain JSON


def test_the_llm_baseline_uses_the_same_schemas():
    assert mle_gym.tool_schemas() == BASELINE_TOOLS


def test_schemas_are_a_fresh_copy():
    mle_gym.tool_schemas()[0]["function"]["name"] = "changed"
    assert mle_gym.tool_schemas()[0]["function"]["name"] == "bash"


@pytest.mark.parametrize("name", sorted(VALID))
def test_valid_calls_become_actions_the_env_accepts(name):
    action = mle_gym.action_from_tool_call(name, json.dumps(VALID[name]))
    assert action == {"tool": name, **VALID[name]}
    assert parse_action(action).tool == name
    assert mle_gym.action_from_tool_call(name, VALID[name]) == action  # decoded arguments too


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("bash", "{not json", "not valid JSON"),
        ("bash", "[1, 2]", "must be a JSON object"),
        ("bash", '{"command": 3}', "'command' of tool 'bash' must be a str"),
        ("teleport", "{}", "unknown tool 'teleport'"),
        ("view", '{"path": "/a", "extra": 1}', "unexpected: extra"),
        ("bash", '{"tool": "submit", "command": "ls"}', "no argument 'tool'"),
        ("insert", '{"path": "/a", "insert_line": true, "new_str": ""}', "must be a int"),
    ],
)
def test_malformed_calls_get_the_envs_message(name, arguments, message):
    with pytest.raises(ActionError, match=message):
        mle_gym.action_from_tool_call(name, arguments)


def test_empty_arguments_are_an_empty_object():
    assert mle_gym.action_from_tool_call("submit", "") == {"tool": "submit"}
    assert mle_gym.action_from_tool_call("validate", None) == {"tool": "validate"}


def test_the_baseline_answers_malformed_calls_with_the_same_message():
    message = {
        "tool_calls": [
            {"id": "a", "function": {"name": "bash", "arguments": '{"command": "ls"}'}},
            {"id": "b", "function": {"name": "insert", "arguments": '{"path": "/a"}'}},
        ]
    }
    good, bad = parse_calls(message)
    assert good.action == {"tool": "bash", "command": "ls"} and good.error is None
    assert bad.action is None and "needs the argument 'insert_line'" in bad.error


def test_a_tool_call_steps_the_env(tmp_path, monkeypatch):
    monkeypatch.setenv("MLE_GYM_HOME", str(tmp_path))
    env = gym.make("mle/sklearn-digits-v0", sandbox_options={"isolation": "none"})
    try:
        env.reset(seed=0)
        action = mle_gym.action_from_tool_call("bash", '{"command": "echo from-a-tool-call"}')
        observation, *_ = env.step(action)
        assert "from-a-tool-call" in observation
    finally:
        env.close()
