"""reset() gives the task, the tools' manual and the budget as info fields, and the adapters
and scaffolds build their prompts from these fields: renaming a heading of the manual (the
words agents read) breaks none of them."""

from __future__ import annotations

from importlib.util import find_spec
from pathlib import Path

import gymnasium as gym
import pytest

from mle_gym.integrations.episode import ToolEpisode, task_prompt
from mle_gym.tools import help as manual
from tests.conftest import require_bwrap
from tests.prerequisites import require

pytestmark = pytest.mark.timeout(300)

SUBMISSION = "/home/submission/submission.csv"
COPY_SAMPLE = f"cp /home/data/sample_submission.csv {SUBMISSION}"


@pytest.fixture
def digits(digits_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MLE_GYM_HOME", str(digits_home))
    return digits_home


@pytest.fixture
def renamed_heading(monkeypatch: pytest.MonkeyPatch) -> str:
    """The tools' manual under another heading, as an edit of its wording would leave it."""
    heading = "## What you can do"
    monkeypatch.setattr(manual, "TOOL_HELP", manual.TOOL_HELP.replace(manual.HEADING, heading))
    return heading


def _fields(**options: object) -> tuple[str, dict]:
    with gym.make("mle/sklearn-digits-v0", **options) as env:
        return env.reset(seed=0)


def test_reset_info_holds_the_task_the_manual_and_the_budget(digits: Path) -> None:
    observation, info = _fields(max_steps=7, time_limit=600, step_timeout=100)
    budget = info["budget"]
    assert {k: budget[k] for k in ("max_steps", "time_limit", "step_timeout")} == {
        "max_steps": 7,
        "time_limit": 600.0,
        "step_timeout": 100.0,
    }
    assert budget["text"].startswith("At most 7 steps and 600 seconds; each command may run")
    assert "There is no network access." in budget["text"]
    assert info["tools_manual"].startswith("## Tools\n") and SUBMISSION in info["tools_manual"]
    assert "Handwritten digits" in info["task"] and "## Tools" not in info["task"]
    # the observation is these fields, in the words agents have always read
    expected = f"{info['task']}\n{info['tools_manual']}\n## Budget\n{budget['text']}\n"
    assert observation == expected
    messages, same = _fields(max_steps=7, time_limit=600, step_timeout=100,
                             observation_format="messages")  # fmt: skip
    assert messages[0]["content"] == expected[len(info["task"]) + 1 :]
    assert messages[1]["content"] == info["task"] and same["task"] == info["task"]


def test_the_prompt_is_task_and_budget(digits: Path) -> None:
    observation, info = _fields()
    prompt = task_prompt(info)
    assert prompt == f"{info['task'].rstrip()}\n\n## Budget\n{info['budget']['text']}\n"
    assert "Every step is one action" in observation and "Every step is one action" not in prompt


def test_a_hub_episode_works_with_a_renamed_heading(digits: Path, renamed_heading: str) -> None:
    """NeMo-Gym's and OpenEnv's episode: the prompt is the task without the manual, and the
    episode runs to a graded submission."""
    require_bwrap()
    observation, info = _fields(max_steps=5)
    assert renamed_heading in observation and "## Tools" not in observation
    episode = ToolEpisode("sklearn-digits", seed=0, backend="local", max_steps=5)
    try:
        prompt = episode.reset()
        assert prompt == task_prompt(info)
        assert renamed_heading not in prompt and "Every step is one action" not in prompt
        assert episode.call("bash", {"command": COPY_SAMPLE}) == "[no output]"
        assert episode.call("validate", {}) == "The submission is valid."
        outcome = episode.finish()
    finally:
        episode.close()
    assert outcome["valid"] and outcome["steps"] == 3


def test_a_scaffold_works_with_a_renamed_heading(digits: Path, renamed_heading: str) -> None:
    """mini-swe-agent's own loop: its task message is the task without the env's manual."""
    require_bwrap()
    from mle_gym_baselines.scaffolds.mini_swe_agent import MiniSweAgentPolicy

    from tests.agent_support import run_policy_episode
    from tests.llm_server import ScriptedLLMServer, tool

    plan = [
        tool("bash", command=COPY_SAMPLE),
        tool("bash", command="echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"),
    ]
    with ScriptedLLMServer(plan) as server:
        policy = MiniSweAgentPolicy(base_url=server.url, model="scripted", api_key="k")
        episode = run_policy_episode("mle/sklearn-digits-v0", "local", policy, max_steps=5)
    assert server.mismatches == []
    task = server.requests[0]["messages"][1]["content"]
    assert "Handwritten digits" in task and SUBMISSION in task and "## Budget\nAt most 5" in task
    assert renamed_heading not in task and "Every step is one action" not in task
    assert episode.report["valid_submission"]


def test_skyrl_prompt_with_a_renamed_heading(digits: Path, renamed_heading: str) -> None:
    require(find_spec("skyrl_gym") is not None, "skyrl-gym is not installed: pip install skyrl-gym")
    from mle_gym.integrations.skyrl import MleGymTextEnv

    env = MleGymTextEnv(extras={"competition_id": "sklearn-digits", "seed": 0})
    with env:
        messages, _ = env.init(None)
        _, info = env.env.reset(seed=0)
    assert messages[1] == {"role": "user", "content": task_prompt(info)}
    assert renamed_heading not in messages[1]["content"]
