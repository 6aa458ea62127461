"""reset() gives the task statement without starting a sandbox; the first step (or
`env.unwrapped.start()`) starts it and the wall-clock budget counts from then; what would
fail at start fails at gym.make (issue 13, item 3)."""

from __future__ import annotations

import time

import gymnasium as gym
import pytest

from mle_gym.sandbox.base import SandboxError
from mle_gym.sandbox.engine import DockerUnavailableError
from tests.conftest import require_bwrap

ENV_ID = "mle/sklearn-digits-v0"


def _running(env) -> bool:
    """Whether the sandbox has a live shell (local) or a container (docker)."""
    sandbox = env.unwrapped.sandbox
    return sandbox.shell is not None or getattr(sandbox, "container", None) is not None


def test_reset_starts_nothing_and_the_first_step_starts_the_sandbox(
    digits_home, backend, monkeypatch
):
    monkeypatch.setenv("MLE_GYM_HOME", str(digits_home))
    env = gym.make(ENV_ID, backend=backend)
    try:
        for seed in range(20):  # datasets are built by resetting many times
            observation, info = env.reset(seed=seed)
            assert "Handwritten digits" in observation and "/home/submission" in observation
            assert not _running(env) and not env.unwrapped.started
            assert info["sandbox"]["started"] is False and info["time_left"] is None
        output, *_ = env.step("echo seed=$MLE_GYM_SEED")
        assert output == "seed=19" and _running(env) and env.unwrapped.started
    finally:
        env.close()
    assert not _running(env)


def test_start_starts_it_explicitly(digits_home, backend, monkeypatch):
    monkeypatch.setenv("MLE_GYM_HOME", str(digits_home))
    env = gym.make(ENV_ID, backend=backend)
    try:
        env.reset(seed=1)
        env.unwrapped.start()
        assert _running(env)
        env.unwrapped.start()  # a no-op once started
        assert env.step("echo $MLE_GYM_SEED")[0] == "1"
    finally:
        env.close()


def test_the_time_budget_counts_from_the_start_not_the_reset(digits_home, monkeypatch):
    require_bwrap()
    monkeypatch.setenv("MLE_GYM_HOME", str(digits_home))
    env = gym.make(ENV_ID, time_limit=3)
    try:
        env.reset(seed=0)
        time.sleep(3.5)  # longer than the whole budget, before anything started
        _, _, terminated, truncated, info = env.step("true")
        assert not terminated and not truncated and info["time_left"] > 0
    finally:
        env.close()


def test_bad_options_and_a_missing_engine_fail_at_make(digits_home, monkeypatch):
    monkeypatch.setenv("MLE_GYM_HOME", str(digits_home))
    with pytest.raises(ValueError):
        gym.make(ENV_ID, sandbox_options={"memory": "lots"})
    with pytest.raises(ValueError, match="unknown sandbox option"):
        gym.make(ENV_ID, sandbox_options={"colour": "blue"})
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    with pytest.raises(DockerUnavailableError, match="cannot reach the Docker engine"):
        gym.make(ENV_ID, backend="docker")


def test_a_sandbox_that_cannot_start_raises_and_grades_nothing(digits_home, monkeypatch):
    """The infrastructure's failure, not the agent's: an exception, no reward recorded."""
    require_bwrap()
    monkeypatch.setenv("MLE_GYM_HOME", str(digits_home))
    env = gym.make(ENV_ID)
    try:
        env.reset(seed=0)

        def refuse(spec):
            raise OSError("no space left on device")

        monkeypatch.setattr(env.unwrapped.sandbox, "start", refuse)
        with pytest.raises(SandboxError, match=r"could not start.*no space left.*reset"):
            env.step("true")
        assert not env.unwrapped.started
        assert "episode is over" in env.step("true")[0]
    finally:
        env.close()
