"""What every hub adapter keeps of an episode, with no framework imported: the task prompt
a chat shows, the grade an episode ends with, and one episode driven by tool calls.

The adapters (SkyRL, verifiers, NeMo-Gym, OpenEnv) differ in how a trainer reaches the env
(text tags, MCP, HTTP endpoints, a WebSocket); the episode behind them is the same, so its
bookkeeping lives here once.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import gymnasium as gym

import mle_gym
from mle_gym.envs.config import ADAPTER, option_names
from mle_gym.grading.outcome import trainer_fields
from mle_gym.grading.report import MEDALS, summarize
from mle_gym.tools import ActionError

#: What a tool answers once the episode is over.
EPISODE_OVER = "The episode is over (it was submitted or its budget ran out); no more steps."

#: `gym.make` options an adapter takes from its configuration or a dataset row.
MAKE_OPTIONS = option_names(ADAPTER)


def task_prompt(info: Mapping[str, Any]) -> str:
    """What a chat prompt gives a model of the task, from reset()'s `info`: the task
    statement and the budget, without the text manual of dict actions (a chat prompt gives
    the tools as function schemas instead)."""
    return f"{info['task'].rstrip()}\n\n## Budget\n{info['budget']['text']}\n"


def grade(reward: float, report: dict[str, Any] | None) -> dict[str, Any]:
    """The numbers a trainer logs for a graded episode, from its reward and grading report:
    `outcome`'s fields, plus which medal as booleans."""
    summary = summarize(report)
    return {
        "reward": float(reward),
        **trainer_fields(summary),
        **{f"{medal}_medal": bool(summary[f"{medal}_medal"]) for medal in MEDALS},
    }


class ToolEpisode:
    """One mle_gym episode stepped by a model's tool calls, for adapters that serve it.

    `call` runs one tool call (a malformed one gets mle_gym's message back and spends no
    step); `finish` grades the submission present if the model never submitted. Calls are
    serialized, so a server may run them from any thread. The outcome's reward is the sum of
    the episode's rewards: the terminal reward, or with reward_mode="dense" the changes paid
    along the way and the rest at the end (together, the final normalised score);
    `last_reward` is the last step's own.
    """

    def __init__(self, competition_id: str, seed: int | None = None, **make_options: Any):
        self.competition_id = competition_id
        self.seed = seed
        self.env = gym.make(f"mle/{competition_id}-v0", **make_options)
        self._lock = threading.Lock()
        self.steps = 0
        self.invalid_calls = 0
        self.done = False
        self.truncated = False
        self.last_reward = 0.0
        self.total_reward = 0.0
        self.outcome: dict[str, Any] = {}
        self.report: dict[str, Any] | None = None
        self.graded_submission: str | None = None

    def reset(self) -> str:
        """The task statement (cheap: the sandbox starts on the first tool call)."""
        with self._lock:
            _, info = self.env.reset(seed=self.seed)
            self.steps = self.invalid_calls = 0
            self.done = self.truncated = False
            self.last_reward = self.total_reward = 0.0
            self.outcome, self.report, self.graded_submission = {}, None, None
            return task_prompt(info)

    def call(self, name: str, arguments: str | dict[str, Any] | None) -> str:
        """Run one tool call and return what the model sees."""
        with self._lock:
            if self.done:
                return EPISODE_OVER
            try:
                action = mle_gym.action_from_tool_call(name, arguments)
            except ActionError as exc:
                self.invalid_calls += 1
                return str(exc)
            return self._step(action)

    def finish(self) -> dict[str, Any]:
        """The episode's grade, submitting first (the submission present) if it is not over."""
        with self._lock:
            if not self.done:
                self._step({"tool": "submit"})
            return {**self.outcome, "steps": self.steps, "invalid_calls": self.invalid_calls}

    def _step(self, action: dict[str, Any]) -> str:
        observation, reward, terminated, truncated, info = self.env.step(action)
        self.steps += 1
        self.last_reward = float(reward)
        self.total_reward += self.last_reward
        if terminated or truncated:
            self.done, self.truncated = True, bool(truncated)
            self.report = info.get("report") or {}
            self.outcome = grade(self.total_reward, self.report)
            self.graded_submission = info.get("graded_submission")
        return str(observation)

    def close(self) -> None:
        """Stop the sandbox (an unfinished episode is dropped ungraded); safe to repeat."""
        self.env.close()
