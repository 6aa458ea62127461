"""Running one episode of an env with a policy, keeping the trajectory."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import gymnasium as gym


class Policy(Protocol):
    """Anything that turns an observation and info into an action."""

    def reset(self) -> None: ...

    def act(self, observation: str, info: dict[str, Any]) -> Any: ...


@dataclass
class Step:
    action: Any
    observation: str
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any]
    #: What the policy reported about choosing this action (e.g. LLM tokens and cost).
    policy_info: dict[str, Any] | None = None


@dataclass
class Episode:
    first_observation: str
    steps: list[Step] = field(default_factory=list)

    @property
    def report(self) -> dict[str, Any] | None:
        return self.steps[-1].info.get("report") if self.steps else None

    @property
    def total_reward(self) -> float:
        return sum(s.reward for s in self.steps)


def run_episode(
    env: gym.Env,
    policy: Policy,
    *,
    seed: int | None = None,
    options: dict[str, Any] | None = None,
    on_step: Callable[[Step], None] | None = None,
) -> Episode:
    """reset (with `options`, e.g. `{"checkpoint": path}` to resume a checkpointed episode),
    then act and step until the episode terminates or is truncated."""
    policy.reset()
    observation, info = env.reset(seed=seed, options=options)
    episode = Episode(observation)
    done = False
    while not done:
        action = policy.act(observation, info)
        policy_info = getattr(policy, "last_step_info", None)
        observation, reward, terminated, truncated, info = env.step(action)
        step = Step(action, observation, float(reward), terminated, truncated, info, policy_info)
        episode.steps.append(step)
        if on_step is not None:
            on_step(step)
        done = terminated or truncated
    return episode
