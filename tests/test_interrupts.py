"""Ctrl-C cuts the step it lands in, on every backend and in a vector env, and nothing more;
a sandbox destroyed from outside ends its episode ungraded, with an error naming reset()."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import mle_gym
from mle_gym.sandbox.base import SandboxLost
from tests.conftest import require_bwrap

ENV_ID = "mle/sklearn-digits-v0"
SUBMIT_SAMPLE = "cp /home/data/sample_submission.csv /home/submission/submission.csv"


def _ctrl_c_in(seconds: float, pids: tuple[int, ...] = ()) -> threading.Timer:
    """SIGINT to this process (and `pids`, as a terminal's Ctrl-C reaches every process of
    its foreground group) after `seconds`."""

    def press() -> None:
        for pid in (os.getpid(), *pids):
            os.kill(pid, signal.SIGINT)

    timer = threading.Timer(seconds, press)
    timer.start()
    return timer


@pytest.mark.docker
@pytest.mark.timeout(300)
def test_ctrl_c_on_docker_cuts_the_step_and_keeps_every_sandbox(
    mle_home: Path, docker_engine: Any
) -> None:
    """Two sandboxes of one process; Ctrl-C during a step of the first: both containers
    stay, the submission written before is graded valid, the idle one goes on too."""
    first = gym.make(ENV_ID, backend="docker", step_timeout=60)
    idle = gym.make(ENV_ID, backend="docker", step_timeout=60)
    try:
        first.reset(seed=0)
        idle.reset(seed=1)
        first.step(SUBMIT_SAMPLE)
        idle.step("echo ready > /home/code/state")
        timer = _ctrl_c_in(2.0)
        try:
            with pytest.raises(KeyboardInterrupt):
                first.step("sleep 30; echo never")
        finally:
            timer.cancel()
        observation, *_ = first.step("wc -l < /home/submission/submission.csv")
        assert observation.strip().isdigit(), observation
        observation, *_ = idle.step("cat /home/code/state")
        assert observation == "ready", observation
        _, _, terminated, _, info = first.step({"tool": "submit"})
        assert terminated and info["report"]["valid_submission"], info["report"]
    finally:
        first.close()
        idle.close()


@pytest.mark.docker
@pytest.mark.timeout(300)
def test_a_sandbox_removed_from_outside_ends_the_episode_ungraded(
    mle_home: Path, docker_engine: Any
) -> None:
    with gym.make(ENV_ID, backend="docker", step_timeout=60) as env:
        env.reset(seed=0)
        env.step(SUBMIT_SAMPLE)
        docker_engine.containers.get(env.unwrapped.sandbox.container.id).remove(force=True)
        with pytest.raises(SandboxLost, match=r"call reset\(\)"):
            env.step("echo hello")
        assert not env.unwrapped.started  # a batch runs such an episode again
        observation, reward, *_ = env.step("echo hello")
        assert "call reset()" in observation and reward == 0.0
        env.reset(seed=0)
        observation, *_ = env.step("echo again")
        assert observation == "again"
        # a submit that finds the sandbox gone is no grade either
        docker_engine.containers.get(env.unwrapped.sandbox.container.id).remove(force=True)
        with pytest.raises(SandboxLost):
            env.step({"tool": "submit"})


@pytest.mark.timeout(300)
def test_ctrl_c_during_an_async_vector_step_leaves_it_usable(
    mle_home: Path, tmp_path: Path
) -> None:
    """Ctrl-C reaching the main process and the workers (a terminal's) mid-step: the call
    raises KeyboardInterrupt, the episodes go on, the next step and close() work."""
    require_bwrap()
    env = mle_gym.make_vec(ENV_ID, 2, step_timeout=60)
    try:
        env.reset(seed=0)
        env.step(["echo kept > /home/code/state"] * 2)
        workers = tuple(p.pid for p in env.processes)
        timer = _ctrl_c_in(2.0, workers)
        try:
            with pytest.raises(KeyboardInterrupt):
                env.step(["sleep 30; echo never"] * 2)
        finally:
            timer.cancel()
        observations, *_ = env.step(["cat /home/code/state"] * 2)
        assert observations == ("kept", "kept")
        # and a Ctrl-C that reaches only the main process (a notebook's interrupt)
        timer = _ctrl_c_in(2.0)
        try:
            with pytest.raises(KeyboardInterrupt):
                env.step(["sleep 30; echo never"] * 2)
        finally:
            timer.cancel()
        observations, *_ = env.step(["echo $MLE_GYM_SEED"] * 2)
        assert observations == ("0", "1")
    finally:
        env.close()
    assert all(not p.is_alive() for p in env.processes)
