"""What would stop every sandbox from starting is refused up front: GPUs the engine cannot
give fail gym.make and a batch's start; a sandbox that still cannot start is the
infrastructure's failure (an exception for the env, nothing graded), never the agent's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

from mle_gym.sandbox.base import SandboxError
from tests.batch_support import mle_gym

pytestmark = pytest.mark.docker
ENV_ID = "mle/sklearn-digits-v0"


@pytest.fixture
def no_gpu_runtime(docker_engine: Any) -> None:
    """These machines have no NVIDIA runtime; one that has it cannot show the refusal."""
    if "nvidia" in (docker_engine.info().get("Runtimes") or {}):
        pytest.skip("this Docker engine has an NVIDIA runtime: GPUs would be given")


def test_gpus_the_engine_cannot_give_fail_gym_make(mle_home: Path, no_gpu_runtime: None) -> None:
    for gpus in ("all", ["0"]):
        with pytest.raises(SandboxError, match=r"cannot give the sandbox the GPUs.*Toolkit"):
            gym.make(ENV_ID, backend="docker", sandbox_options={"gpus": gpus})


def test_a_batch_asking_for_gpus_the_engine_cannot_give_does_not_start(
    digits_home: Path, tmp_path: Path, no_gpu_runtime: None
) -> None:
    run_dir = tmp_path / "run"
    args = ["run", "sklearn-digits", "--policy", "scripted", "--backend", "docker"]
    result = mle_gym(*args, "--gpus", "0", "--run-dir", str(run_dir), home=digits_home, ok=False)
    out = result.stdout + result.stderr
    assert result.returncode == 2 and "error:" in out and "GPUs" in out, out
    assert not (run_dir / "episodes").exists()  # no episode was run, or graded 0


def test_a_container_that_cannot_start_raises_at_the_first_step(
    mle_home: Path, docker_engine: Any
) -> None:
    """Docker refuses a memory limit under 6 MB when it creates the container."""
    with gym.make(ENV_ID, backend="docker", sandbox_options={"memory": "4m"}) as env:
        env.reset(seed=0)
        with pytest.raises(SandboxError, match=r"could not start.*call reset"):
            env.step("true")
        assert not env.unwrapped.started
        observation, reward, *_ = env.step("true")
        assert "episode is over" in observation and reward == 0.0
