"""reset() gives the parts of the first observation in `info` (the task, the tools' manual,
the budget), and the observation itself stays as agents have always read it."""

from __future__ import annotations

import gymnasium as gym
import pytest

import mle_gym  # noqa: F401
from mle_gym.envs.config import EnvConfig
from mle_gym.envs.messages import opening
from mle_gym.tools import TOOL_HELP

ENV_ID = "mle/sklearn-digits-v0"


@pytest.fixture
def digits_env(digits_home, monkeypatch):
    monkeypatch.setenv("MLE_GYM_HOME", str(digits_home))

    def make(**options):
        return gym.make(ENV_ID, backend="local", **options)

    return make


def test_reset_info_holds_the_parts_of_the_unchanged_first_observation(digits_env):
    env = digits_env(max_steps=7, time_limit=90, step_timeout=30)
    try:
        observation, info = env.reset(seed=3)
        inner = env.unwrapped
        p = inner.sandbox.paths
        statement = inner.competition.render_statement(p.data, p.code, p.submission)
        submission = f"{p.submission}/{inner.competition.submission.filename}"
        tools = TOOL_HELP.replace("{logs_dir}", p.logs).replace("{submission_path}", submission)
        budget = (
            "At most 7 steps and 90 seconds; each command may run for at most 30 seconds. "
            "There is no network access."
        )
        # the text agents read, composed as it always was
        assert observation == f"{statement}\n{tools}\n## Budget\n{budget}\n"
        assert info["task"] == statement and info["tools_manual"] == tools
        assert info["tools_manual"].startswith("## Tools\n")
        assert info["budget"] == {
            "max_steps": 7,
            "time_limit": 90.0,
            "step_timeout": 30.0,
            "text": budget,
        }
        assert not inner.started  # reset still starts nothing
    finally:
        env.close()


def test_budget_info_follows_a_time_limit_wrapper_and_the_messages_format(digits_env):
    env = gym.make(ENV_ID, backend="local", max_episode_steps=4, observation_format="messages")
    try:
        first, info = env.reset(seed=0)
        assert info["budget"]["max_steps"] == 4 and "At most 4 steps" in info["budget"]["text"]
        manual = f"{info['tools_manual']}\n## Budget\n{info['budget']['text']}\n"
        assert first == opening(manual, info["task"])
    finally:
        env.close()


def test_options_come_as_keywords_or_as_one_config(digits_env):
    config = EnvConfig(max_steps=5, reward_mode="medal")
    env = gym.make(ENV_ID, config=config)
    try:
        assert env.unwrapped.config is config and env.unwrapped.max_steps == 5
    finally:
        env.close()
    with pytest.raises(TypeError, match="as a config or as keywords, not both"):
        gym.make(ENV_ID, config=config, max_steps=3)
    with pytest.raises(AttributeError):
        config.max_steps = 9  # type: ignore[misc]  (frozen: validated once)
