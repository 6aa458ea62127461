"""The scripted baseline through the env's tools: full episodes on real data, both backends."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym

import mle_gym  # noqa: F401
from mle_gym_baselines.scripted import ScriptedTabularPolicy
from mle_gym.grading.grader import normalized_score
from mle_gym.runner import run_episode


def _episode(env_id: str, backend: str):
    with gym.make(env_id, backend=backend) as env:
        return run_episode(env, ScriptedTabularPolicy(), seed=0)


def test_spaceship_titanic_lands_above_the_median(spaceship_home: Path, backend: str) -> None:
    episode = _episode("mle/spaceship-titanic-v0", backend)
    last = episode.steps[-1]
    assert last.terminated and not last.truncated
    assert [s.info["tool"] for s in episode.steps] == [
        "bash",
        "create",
        "bash",
        "validate",
        "submit",
    ]
    assert episode.steps[2].info["exit_code"] == 0
    report = episode.report
    assert report["valid_submission"] and report["above_median"]
    median_value = normalized_score(0.79565, 0.50345, 0.82066, lower_is_better=False)
    assert episode.total_reward == last.reward > median_value


def test_demo_competition_lands_above_the_median(mle_home: Path, backend: str) -> None:
    episode = _episode("mle/sklearn-digits-v0", backend)
    report = episode.report
    assert episode.steps[-1].terminated
    assert report["valid_submission"] and report["above_median"]
    assert episode.total_reward > normalized_score(0.94861, 0.075, 0.98889, False)


def test_docker_episode_matches_local_reward_included(spaceship_home: Path, docker_engine) -> None:
    local = _episode("mle/spaceship-titanic-v0", "local")
    docker = _episode("mle/spaceship-titanic-v0", "docker")
    assert [s.info["tool"] for s in docker.steps] == [s.info["tool"] for s in local.steps]
    assert [s.observation for s in docker.steps[1:]] == [s.observation for s in local.steps[1:]]
    for key in ("score", "normalized_score", "valid_submission", "any_medal", "above_median"):
        assert docker.report[key] == local.report[key], key
    assert docker.total_reward == local.total_reward
