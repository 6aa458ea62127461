"""The scripted baseline through the env's tools: full episodes on real data."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym

import mle_gym  # noqa: F401
from baselines.scripted import ScriptedTabularPolicy
from mle_gym.grading.grader import normalized_score
from mle_gym.runner import run_episode
from tests.conftest import require_bwrap


def _episode(env_id: str, **kwargs):
    require_bwrap()
    with gym.make(env_id, **kwargs) as env:
        return run_episode(env, ScriptedTabularPolicy(), seed=0)


def test_spaceship_titanic_lands_above_the_median(spaceship_home: Path) -> None:
    episode = _episode("mle/spaceship-titanic-v0")
    last = episode.steps[-1]
    assert last.terminated and not last.truncated
    assert [s.info["tool"] for s in episode.steps] == ["bash", "create", "bash", "validate", "submit"]
    assert episode.steps[2].info["exit_code"] == 0
    report = episode.report
    assert report["valid_submission"] and report["above_median"]
    median_value = normalized_score(0.79565, 0.50345, 0.82066, lower_is_better=False)
    assert episode.total_reward == last.reward > median_value


def test_demo_competition_lands_above_the_median(mle_home: Path) -> None:
    episode = _episode("mle/sklearn-digits-v0")
    report = episode.report
    assert episode.steps[-1].terminated
    assert report["valid_submission"] and report["above_median"]
    assert episode.total_reward > normalized_score(0.94861, 0.075, 0.98889, False)
