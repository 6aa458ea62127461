"""Many independent episodes at once: `make_vec` builds a Gymnasium vector env of sandboxes.

Each sub-env is a `CompetitionEnv` with its own sandbox. In the default "async" mode each
sub-env lives in its own worker process, so the sub-envs' commands run at the same time:
`step` returns when the slowest sub-env's command is done (the vector API returns all
results together), but no sub-env waits for another one's command before starting its own.

Observations are text. Gymnasium's async vector env passes observations through shared
memory by default, which stores a `Text` observation as indices into the space's character
set and fails (KeyError in the worker) on any other character: spaces, punctuation and
newlines, so on every real observation. `make_vec` always turns shared memory off, so
observations arrive whole, as a tuple of `str`.

Infos: Gymnasium merges the sub-envs' infos into arrays (with `_key` masks) typed after the
first value it sees, which fails on our infos (an `exit_code` is an int or None, a report's
`score` a float or None). Here an array whose type cannot hold a later value becomes an
object array instead, so every value arrives as the sub-env gave it.

Seeds: `reset(seed=s)` seeds sub-env i with `s + i` (Gymnasium's rule); `info["seed"][i]`
shows it. A list of seeds gives each sub-env its own.

GPUs (both backends): with `gpus=[...]` (device ids) and `gpus_per_env=k`, sub-env i gets
`assign_gpus(gpus, i, k)`: devices i*k .. i*k+k-1 of the list, wrapping around when there
are more envs than devices, passed as `sandbox_options={"gpus": [...]}`.

Autoreset (`autoreset_mode`, declared in `vec_env.metadata["autoreset_mode"]`):
- "next_step" (default): the step after a sub-env's episode ends ignores that sub-env's
  action and returns the first observation of its next episode (reward 0, not done). Its
  sandbox stays up until then, so a finished episode's files can still be inspected.
- "same_step": the ending step already returns the next episode's first observation; the
  last observation and info are in `info["final_obs"]` and `info["final_info"]`.
- "disabled": a finished sub-env must be reset by the caller (`reset(options={"reset_mask":
  mask})`).

Ctrl-C (async mode): as with one env, it cuts the step it lands in and nothing more. The
vector env forwards it to the workers, whose sub-envs cut their commands and return a step
that says so (the episodes go on); their results are dropped, the KeyboardInterrupt reaches
the caller, and the vector env takes the next call (or `close()`) as usual. A worker ignores
Ctrl-C outside a step, so a terminal's Ctrl-C (which reaches every process) ends no worker.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AsyncVectorEnv, AutoresetMode, SyncVectorEnv, VectorEnv
from gymnasium.vector.async_vector_env import AsyncState

from mle_gym.sandbox.gpus import assign_gpus

AUTORESET_MODES = {
    "next_step": AutoresetMode.NEXT_STEP,
    "same_step": AutoresetMode.SAME_STEP,
    "disabled": AutoresetMode.DISABLED,
}
VECTORIZATION_MODES = ("async", "sync")
_POLL_SLICE = 0.2


def make_vec(
    env_id: str,
    num_envs: int,
    *,
    vectorization_mode: str = "async",
    autoreset_mode: str | AutoresetMode = "next_step",
    gpus: Sequence[int | str] | None = None,
    gpus_per_env: int = 1,
    context: str | None = None,
    **env_kwargs: Any,
) -> VectorEnv:
    """`num_envs` copies of `env_id` (e.g. "mle/sklearn-digits-v0") as one vector env.

    `env_kwargs` go to every sub-env's `gym.make` (backend, time_limit, sandbox_options, ...);
    `concurrent_episodes` defaults to `num_envs`, so the default memory limits fit the host.
    "sync" steps the sub-envs one after the other in this process (for debugging); "async"
    runs them in parallel worker processes started with multiprocessing `context`.
    """
    if num_envs < 1:
        raise ValueError(f"num_envs must be at least 1, got {num_envs}")
    if vectorization_mode not in VECTORIZATION_MODES:
        raise ValueError(f"vectorization_mode must be one of {VECTORIZATION_MODES}")
    mode = _autoreset_mode(autoreset_mode)
    # the sub-envs share the host: each one's default memory limits are its share of it
    env_kwargs.setdefault("concurrent_episodes", num_envs)
    env_fns = [
        partial(gym.make, env_id, **kwargs)
        for kwargs in per_env_kwargs(num_envs, env_kwargs, gpus, gpus_per_env)
    ]
    if vectorization_mode == "sync":
        return SyncTextVectorEnv(env_fns, autoreset_mode=mode)
    workers = [partial(_interruptible_worker_env, make) for make in env_fns]
    return AsyncTextVectorEnv(workers, shared_memory=False, context=context, autoreset_mode=mode)


def from_registry(num_envs: int, competition_id: str, **env_kwargs: Any) -> VectorEnv:
    """The vector entry point of every `mle/<id>-v0`: `gymnasium.make_vec(id, num_envs)`
    (or `vectorization_mode="vector_entry_point"`) builds `make_vec`'s vector env."""
    from mle_gym.competitions import get_competition

    return make_vec(get_competition(competition_id).env_id, num_envs, **env_kwargs)


def per_env_kwargs(
    num_envs: int, env_kwargs: dict[str, Any], gpus: Sequence[int | str] | None, per_env: int
) -> list[dict[str, Any]]:
    """Each sub-env's `gym.make` arguments: the common ones plus its own GPU devices."""
    if not gpus:
        return [dict(env_kwargs) for _ in range(num_envs)]
    options = dict(env_kwargs.get("sandbox_options") or {})
    if "gpus" in options:
        raise ValueError("give the devices either as gpus=... or in sandbox_options, not both")
    return [
        {**env_kwargs, "sandbox_options": {**options, "gpus": assign_gpus(gpus, i, per_env)}}
        for i in range(num_envs)
    ]


def _autoreset_mode(mode: str | AutoresetMode) -> AutoresetMode:
    if isinstance(mode, AutoresetMode):
        return mode
    try:
        return AUTORESET_MODES[mode]
    except KeyError:
        raise ValueError(f"autoreset_mode must be one of {', '.join(AUTORESET_MODES)}") from None


class _LosslessInfos:
    """Merges infos like Gymnasium, but widens a typed array to `object` rather than failing
    on (or silently rounding) a later value it cannot hold."""

    num_envs: int

    def _add_info(
        self, vector_infos: dict[str, Any], env_info: dict[str, Any], env_num: int
    ) -> dict[str, Any]:
        for key, value in env_info.items():
            array = vector_infos.get(key)
            if isinstance(array, np.ndarray) and key != "final_obs" and not _fits(array, value):
                vector_infos[key] = array.astype(object)
        return super()._add_info(vector_infos, env_info, env_num)  # type: ignore[misc]


def _fits(array: np.ndarray, value: Any) -> bool:
    kind = array.dtype.kind
    if kind == "O":
        return True
    if isinstance(value, (bool, np.bool_)):
        return kind == "b"
    if isinstance(value, (int, np.integer)):
        return kind in "iuf"
    if isinstance(value, (float, np.floating)):
        return kind == "f"
    return isinstance(value, np.ndarray) and value.shape == array.shape[1:]


class AsyncTextVectorEnv(_LosslessInfos, AsyncVectorEnv):
    """Sub-envs in worker processes, stepped in parallel; Ctrl-C cuts the pending call only."""

    _interrupted = False

    def step_wait(self, timeout: float | None = None) -> Any:
        self._wait_interruptibly(timeout)
        return super().step_wait(timeout)

    def reset_wait(self, timeout: float | None = None) -> Any:
        self._wait_interruptibly(timeout)
        return super().reset_wait(timeout)

    def call_wait(self, timeout: float | None = None) -> Any:
        self._wait_interruptibly(timeout)
        return super().call_wait(timeout)

    def step_async(self, actions: Any) -> None:
        self._settle()
        super().step_async(actions)

    def reset_async(self, *args: Any, **kwargs: Any) -> None:
        self._settle()
        super().reset_async(*args, **kwargs)

    def call_async(self, name: str, /, *args: Any, **kwargs: Any) -> None:
        self._settle()
        super().call_async(name, *args, **kwargs)

    def set_attr(self, name: str, values: Any) -> None:
        self._settle()
        super().set_attr(name, values)

    def close_extras(self, timeout: float | None = None, terminate: bool = False) -> None:
        if not terminate:
            self._settle()
        super().close_extras(timeout=timeout, terminate=terminate)

    def _wait_interruptibly(self, timeout: float | None) -> None:
        """Wait until every worker has answered, reading nothing: a KeyboardInterrupt here
        leaves the pipes whole, so the pending call can still be settled."""
        try:
            self._all_answered(timeout)
        except KeyboardInterrupt:
            self._interrupted = True
            self._settle()
            raise

    def _all_answered(self, timeout: float | None) -> None:
        # Short polls: a signal the kernel hands to another thread (a Timer, a notebook's)
        # does not wake a blocked poll; Python raises it once the main thread runs again.
        end = None if timeout is None else time.monotonic() + timeout
        for pipe in self.parent_pipes:
            while pipe is not None and not pipe.closed:
                left = _POLL_SLICE if end is None else min(_POLL_SLICE, end - time.monotonic())
                if pipe.poll(max(0.0, left)) or left <= 0:
                    break

    def _settle(self) -> None:
        """After a Ctrl-C: cut the workers' steps and drop the pending call's results, so
        the next call finds the workers idle. A second Ctrl-C meanwhile leaves it to the
        next call."""
        if not self._interrupted or self.closed or self._state == AsyncState.DEFAULT:
            self._interrupted = False
            return
        for process in self.processes:
            if process.is_alive():
                os.kill(process.pid, signal.SIGINT)
        self._all_answered(None)
        self._interrupted = False
        getattr(AsyncVectorEnv, f"{self._state.value}_wait")(self)


def _interruptible_worker_env(make: Callable[[], gym.Env]) -> gym.Env:
    """A worker process's sub-env, made to take Ctrl-C as a cut step (see the module's
    docstring). Gymnasium also calls it once in the main process (to read the spaces),
    whose Ctrl-C is left as it is."""
    env = _StepInterruptible(make())
    if multiprocessing.parent_process() is not None:  # a worker, in its main thread
        signal.signal(signal.SIGINT, env.on_interrupt)
    return env


class _StepInterruptible(gym.Wrapper):
    """Turns a KeyboardInterrupt during a step into the step result that says so."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self._stepping = False

    def on_interrupt(self, _signum: int, _frame: Any) -> None:
        # one interrupt per step: a terminal's Ctrl-C and the main process's forwarded one
        # both reach a worker, and the second must not cut the step's interrupted result
        if self._stepping:
            self._stepping = False
            raise KeyboardInterrupt

    def step(self, action: Any) -> Any:
        self._stepping = True
        try:
            return self.env.step(action)
        except KeyboardInterrupt:
            return self.env.unwrapped.interrupted_step(action)
        finally:
            self._stepping = False


class SyncTextVectorEnv(_LosslessInfos, SyncVectorEnv):
    """Sub-envs in this process, stepped one after the other."""
