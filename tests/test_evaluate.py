"""`mle_gym.evaluate`: the off-box grader gives what an episode ending with the same file
gives, changes nothing, and says what is wrong (issue 13, item 5)."""

from __future__ import annotations

import os
from pathlib import Path

import gymnasium as gym
import pytest

import mle_gym
from mle_gym.data.cache import NotPrepared
from tests.conftest import require_bwrap

KEYS = {"reward", "score", "valid", "any_medal", "medal", "above_median", "normalized_score",
        "error", "reward_mode", "report"}  # fmt: skip


@pytest.mark.parametrize("reward_mode", ["normalized", "medal", "score"])
def test_same_reward_and_report_as_the_episode(reward_mode, digits_home, monkeypatch, tmp_path):
    require_bwrap()
    monkeypatch.setenv("MLE_GYM_HOME", str(digits_home))
    env = gym.make("mle/sklearn-digits-v0", reward_mode=reward_mode)
    try:
        env.reset(seed=0)
        env.step(
            "python3 -c \"import pandas as pd; s = pd.read_csv('/home/data/sample_submission.csv');"
            " s.iloc[:, 1] = 3; s.to_csv('/home/submission/submission.csv', index=False)\""
        )
        _, reward, terminated, _, info = env.step({"tool": "submit"})
        assert terminated
        kept = tmp_path / "graded.csv"
        kept.write_bytes(Path(info["graded_submission"]).read_bytes())
    finally:
        env.close()
    result = mle_gym.evaluate("sklearn-digits", kept, reward_mode=reward_mode)
    assert set(result) == KEYS
    assert result["reward"] == reward
    assert result["valid"] and result["score"] == info["report"]["score"]
    assert result["normalized_score"] == info["report"]["normalized_score"]
    assert result["error"] is None and result["reward_mode"] == reward_mode


def test_changes_nothing(digits_home, tmp_path):
    sample = digits_home / "sklearn-digits" / "public" / "sample_submission.csv"
    path = tmp_path / "submission.csv"
    path.write_bytes(sample.read_bytes())
    os.utime(path, ns=(10**18, 10**18))
    before = path.read_bytes()
    result = mle_gym.evaluate("sklearn-digits", path, root=digits_home)
    assert result["valid"] and result["reward"] == 0.0  # the sample scores the zero
    assert path.read_bytes() == before and path.stat().st_mtime_ns == 10**18
    assert sorted(p.name for p in tmp_path.iterdir()) == ["submission.csv"]


def test_a_missing_or_broken_file_is_an_invalid_submission(digits_home, tmp_path):
    missing = mle_gym.evaluate("sklearn-digits", tmp_path / "nope.csv", root=digits_home)
    assert not missing["valid"] and missing["reward"] == 0.0 and "no submission" in missing["error"]
    broken = tmp_path / "broken.csv"
    broken.write_text("id,label\n1,2\n")
    result = mle_gym.evaluate("sklearn-digits", broken, root=digits_home)
    assert not result["valid"] and result["reward"] == 0.0 and result["error"]


def test_bad_arguments_raise_with_a_reason(digits_home, tmp_path):
    with pytest.raises(ValueError, match="unknown reward_mode"):
        mle_gym.evaluate("sklearn-digits", tmp_path / "x.csv", reward_mode="best")
    with pytest.raises(KeyError, match="unknown competition"):
        mle_gym.evaluate("sklearn-digitz", tmp_path / "x.csv", root=digits_home)
    with pytest.raises(NotPrepared, match="mle-gym prepare spaceship-titanic"):
        mle_gym.evaluate("spaceship-titanic", tmp_path / "x.csv", root=tmp_path)
