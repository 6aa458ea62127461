"""`CompetitionEnv`: one Kaggle competition as a Gymnasium environment.

reset() starts a fresh sandbox with the public data; each step runs one tool; the episode
ends at `submit` (terminated) or when the step or wall-clock budget is spent (truncated).
At the end the submission is copied out of the sandbox and graded on the host, where the
private answers stay. The env is the Gymnasium face of three parts: its options
(`EnvConfig`), what the agent is given (a `Task`) and the episode itself (`Episode`: the
sandbox, the budget, the tools, the grade).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym

from mle_gym.data.cache import NotPrepared  # noqa: F401  (mle_gym.envs.NotPrepared)
from mle_gym.envs import shared_text  # noqa: F401  (UnicodeText in async vector envs)
from mle_gym.envs.config import RENDER_MODES, EnvConfig, option_names
from mle_gym.envs.episode import Episode
from mle_gym.envs.kept_code import CodeBounds
from mle_gym.envs.messages import ChatMessages, opening, tool_result
from mle_gym.envs.mlebench_task import MLEBenchTask
from mle_gym.envs.own_thread import OwnThread
from mle_gym.envs.render import render
from mle_gym.envs.spaces import ToolActionSpace, UnicodeText
from mle_gym.envs.task import MLEBenchContract
from mle_gym.grading.bounded import GradingLimits
from mle_gym.sandbox.base import ReadOnlyBind, Sandbox
from mle_gym.tools.actions import CALL_ID

_OPTIONS = frozenset(option_names())


class CompetitionEnv(gym.Env):
    """`gym.make("mle/<id>-v0", **options)`: the options are `EnvConfig`'s fields (or pass
    `config=EnvConfig(...)`)."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": list(RENDER_MODES), "render_fps": 1}

    def __init__(
        self, competition_id: str, config: EnvConfig | None = None, **options: Any
    ) -> None:
        if config is not None and options:
            raise TypeError("give the env's options as a config or as keywords, not both")
        self.config = config if config is not None else EnvConfig(**options)
        #: The episode behind the env: its public API is what a harness drives.
        self.episode = Episode.open(competition_id, self.config)
        self.render_mode = self.config.render_mode
        self.action_space = ToolActionSpace()
        self.observation_space = (
            ChatMessages()
            if self.config.observation_format == "messages"
            else UnicodeText(
                max_length=max(self.config.max_output_chars, 20_000) + 80_000, min_length=0
            )
        )
        self._last_observation = ""
        self._own_thread = OwnThread()

    # -- the Gymnasium API --------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict]:
        """A new episode (its sandbox starts on the first step), or with
        `options={"checkpoint": path}` the checkpointed one resumed in a fresh sandbox
        (`checkpoint()`; `info["resumed_from"]` names it). `info` gains the task
        (`task`), the tools' manual (`tools_manual`) and the budget (`budget`), the parts
        the first observation joins, for scaffolds that show them their own way."""
        super().reset(seed=seed)
        # gym.make(..., max_episode_steps=N) asks for N steps: the episode is graded then.
        seed = seed if seed is not None else int(self.np_random.integers(2**31 - 1))
        checkpoint = (options or {}).get("checkpoint")
        if checkpoint is not None:  # the episode checkpointed there goes on
            given = self.episode.resume(Path(checkpoint), _time_limit_above())
        else:
            given = self.episode.reset(seed, _time_limit_above())
        self._last_observation = given.observation
        info = self.episode.info()
        info.update(task=given.task, tools_manual=given.tools_manual, budget=given.budget())
        if self.config.observation_format == "messages":
            return opening(given.manual, given.task), info
        return self._last_observation, info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        """One tool call. Total: whatever the action or the agent's files do, the step
        returns, and the last step always carries a graded report."""
        result = self.episode.step(action)
        observation = self._observe(result.observation, result.tool, _call_id(action))
        return observation, result.reward, result.terminated, result.truncated, result.info

    def interrupted_step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        """What a step cut short on the host (Ctrl-C) returns where a step must return
        something (a vector env's worker): nothing graded, the episode goes on, and the next
        command starts in a clean shell (shell.py)."""
        text = "[The step was interrupted on the host (Ctrl-C); its command was cut short.]"
        observation = self._observe(text, "none", _call_id(action))
        return observation, 0.0, False, False, self.episode.info()

    def render(self) -> str | None:
        return render(
            self.render_mode, self.competition.id, self.episode.steps, self._last_observation
        )

    def close(self) -> None:
        self.episode.close()
        self._own_thread.shutdown()

    # -- async: each env steps in its own thread (envs/own_thread.py) -------------------------
    async def areset(
        self, *, seed: int | None = None, options: dict | None = None
    ) -> tuple[Any, dict]:
        """`reset` that leaves the event loop free (it may stop the previous sandbox)."""
        return await self._own_thread.run(self.reset, seed=seed, options=options)

    async def astep(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        """`step` in this env's own worker thread, so the event loop runs on while the
        command does; any number of envs step at once, one env takes one call at a time."""
        return await self._own_thread.run(self.step, action)

    async def aclose(self) -> None:
        """`close` in this env's own worker thread (after any call it is running), so that
        many envs stop their sandboxes at once: a stop mostly waits for processes to end."""
        await self._own_thread.run(self.episode.teardown)
        self.close()

    # -- the episode's API, as the env has always offered it ---------------------------------
    def start(self, binds: Sequence[ReadOnlyBind] = (), writable_home: bool = False) -> None:
        """`Episode.start`: the sandbox starts now rather than on the first step."""
        self.episode.start(binds, writable_home)

    @property
    def started(self) -> bool:
        return self.episode.started

    @property
    def sandbox(self) -> Sandbox:
        return self.episode.sandbox

    @property
    def competition(self) -> Any:
        return self.episode.competition

    @property
    def dirs(self) -> Any:
        return self.episode.dirs

    @property
    def task(self) -> str:
        """The `task` option: "mle_gym" or MLE-bench's ("mlebench", "mlebench-obfuscated")."""
        return self.episode.task.name

    @property
    def mlebench(self) -> MLEBenchTask | None:
        """MLE-bench's task files read from the user's checkout (None for mle_gym's task)."""
        task = self.episode.task
        return task.files if isinstance(task, MLEBenchContract) else None

    @property
    def episode_seed(self) -> int | None:
        return self.episode.seed

    @property
    def max_steps(self) -> int:
        return self.episode.max_steps

    def __getattr__(self, name: str) -> Any:
        """The env's options read as its attributes (`env.unwrapped.reward_mode`), as ever."""
        if name in _OPTIONS and "config" in self.__dict__:
            return getattr(self.config, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def grading_limits(self) -> GradingLimits:
        return self.episode.grading_limits

    @grading_limits.setter
    def grading_limits(self, limits: GradingLimits) -> None:
        self.episode.grading_limits = limits

    def statement(self) -> str:
        return self.episode.statement()

    def mlebench_variables(self) -> dict[str, str]:
        """The variables MLE-bench's agents expect, from this env's budget and sandbox."""
        return self.episode.task_variables()

    def check_submission(self) -> tuple[bool, str]:
        return self.episode.check_submission()

    def check_file(self, path: Path) -> tuple[bool, str]:
        return self.episode.check_file(path)

    def keep_code(self, dest: Path, bounds: CodeBounds | None = None) -> dict[str, Any] | None:
        return self.episode.keep_code(dest, bounds)

    def checkpoint(self, directory: Path | None = None) -> Path:
        """`Episode.checkpoint`: the running episode saved; reset(options={"checkpoint":
        path}) on this env or a new one goes on from it."""
        return self.episode.checkpoint(directory)

    # -- helpers ------------------------------------------------------------------------------
    def _observe(self, text: str, tool: str, call_id: str | None) -> str | dict[str, str]:
        self._last_observation = text
        if self.config.observation_format == "messages":
            return tool_result(text, tool, call_id)
        return text


def _call_id(action: Any) -> str | None:
    call_id = action.get(CALL_ID) if isinstance(action, dict) else None
    return call_id if isinstance(call_id, str) else None


def _time_limit_above() -> int | None:
    """The step limit of a Gymnasium `TimeLimit` wrapping this env, if one is calling.

    `gym.make(id, max_episode_steps=N)` wraps the env in `TimeLimit`, which would cut the
    episode at step N without the grading our own budget does, and Gymnasium hides N from
    the env it wraps (its spec says None). The wrapper is on the call stack of `reset()`,
    so the env reads N there and makes it its own graded step budget.
    """
    frame = sys._getframe(2)
    for _ in range(16):
        if frame is None:
            return None
        caller = frame.f_locals.get("self")
        if isinstance(caller, gym.wrappers.TimeLimit):
            return int(caller._max_episode_steps)
        frame = frame.f_back
    return None
