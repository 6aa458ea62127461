"""task="mlebench" / "mlebench-obfuscated": MLE-bench's text read at run time from the user's
checkout (../shared/mlebench stands in for it; nothing of it is copied here)."""

from __future__ import annotations

import sys
from pathlib import Path

import gymnasium as gym
import pytest

import mle_gym  # noqa: F401  (registers the envs)
from mle_gym.envs.mlebench_task import (
    MLEBenchNotFound,
    MLEBenchTask,
    fill_placeholders,
    find_mlebench_dir,
    format_time_limit,
)
from tests.prerequisites import require_shared

ID = "spaceship-titanic"


@pytest.fixture(scope="module")
def checkout() -> Path:
    return require_shared("mlebench", "environment", module=True).parent


def _make(task: str, checkout: Path | None, **kwargs):
    return gym.make(f"mle/{ID}-v0", task=task, mlebench_dir=checkout, **kwargs)


def test_reset_shows_mlebench_instructions_then_the_tool_manual(checkout, spaceship_home):
    env = _make("mlebench", checkout, max_steps=7)
    try:
        observation, _ = env.reset(seed=0)
    finally:
        env.close()
    instructions = (checkout / "environment" / "instructions.txt").read_text()
    assert observation.startswith(instructions)
    rest = observation[len(instructions) :]
    assert "## Tools" in rest and "At most 7 steps" in rest
    # the competition's page is not inlined: the instructions point the agent to it
    description = (checkout / "mlebench/competitions" / ID / "description.md").read_text()
    assert description[:200] not in observation


def test_obfuscated_task_shows_the_obfuscated_instructions(checkout, spaceship_home):
    env = _make("mlebench-obfuscated", checkout)
    try:
        observation, _ = env.reset(seed=0)
        task = env.unwrapped.mlebench
    finally:
        env.close()
    hidden = (checkout / "environment" / "instructions_obfuscated.txt").read_text()
    assert observation.startswith(hidden)
    assert task.obfuscated and task.other_instructions is None
    assert (
        task.description
        == (checkout / "mlebench/competitions" / ID / "description_obfuscated.md").read_text()
    )


def test_default_task_is_mle_gyms_own_statement(spaceship_home):
    env = gym.make(f"mle/{ID}-v0")
    try:
        observation, _ = env.reset(seed=0)
        assert env.unwrapped.task == "mle_gym" and env.unwrapped.mlebench is None
    finally:
        env.close()
    assert "MLE-bench*" not in observation and "## Tools" in observation


def test_unknown_task_is_refused(spaceship_home):
    with pytest.raises(ValueError, match="task must be one of mle_gym, mlebench"):
        gym.make(f"mle/{ID}-v0", task="kaggle")


def test_missing_checkout_says_where_to_get_mlebench(tmp_path, monkeypatch, spaceship_home):
    monkeypatch.delenv("MLE_GYM_MLEBENCH_DIR", raising=False)
    with pytest.raises(MLEBenchNotFound, match=r"git clone https://github\.com/openai/mle-bench"):
        _make("mlebench", tmp_path / "nowhere")
    (tmp_path / "mlebench" / "competitions" / ID).mkdir(parents=True)
    with pytest.raises(MLEBenchNotFound) as missing:
        _make("mlebench", tmp_path)
    assert str(tmp_path / "environment" / "instructions.txt") in str(missing.value)
    assert "git clone" in str(missing.value)


def test_competition_outside_mlebench_has_no_mlebench_task(checkout):
    with pytest.raises(MLEBenchNotFound, match="sklearn-digits is not an MLE-bench competition"):
        MLEBenchTask.load(checkout, "sklearn-digits", obfuscated=False)


def test_checkout_from_variable_and_from_an_importable_package(checkout, tmp_path, monkeypatch):
    monkeypatch.setenv("MLE_GYM_MLEBENCH_DIR", str(checkout))
    assert find_mlebench_dir() == checkout
    monkeypatch.delenv("MLE_GYM_MLEBENCH_DIR")
    clone = tmp_path / "clone"
    (clone / "mlebench").mkdir(parents=True)
    (clone / "mlebench" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(clone))
    monkeypatch.delitem(sys.modules, "mlebench", raising=False)
    assert find_mlebench_dir() == clone.resolve()


def test_placeholders_are_filled_from_the_envs_budget(checkout, tmp_path, spaceship_home):
    """A checkout whose instructions carry the placeholders MLE-bench's agents fill with
    envsubst gets them filled from the env's own budget and sandbox."""
    clone = tmp_path / "clone"
    (clone / "environment").mkdir(parents=True)
    for name in ("instructions_obfuscated.txt", "validate_submission.sh"):
        (clone / "environment" / name).symlink_to(checkout / "environment" / name)
    (clone / "environment" / "instructions.txt").write_text(
        "steps ${STEP_LIMIT}, time $TIME_LIMIT on ${HARDWARE}; left alone: ${ELSEWHERE} $5\n"
    )
    (clone / "mlebench" / "competitions").mkdir(parents=True)
    (clone / "mlebench" / "competitions" / ID).symlink_to(checkout / "mlebench/competitions" / ID)
    env = _make("mlebench", clone, max_steps=12, time_limit=5430)
    try:
        observation, _ = env.reset(seed=0)
    finally:
        env.close()
    assert observation.startswith(
        "steps 12, time 1hrs 30mins 30secs on a CPU; left alone: ${ELSEWHERE} $5\n"
    )


def test_fill_placeholders_and_time_format():
    assert fill_placeholders("$A ${B} $AB ${C}", {"A": "1", "B": "2"}) == "1 2 $AB ${C}"
    assert format_time_limit(86400) == "24hrs 0mins 0secs"


def test_make_vec_passes_the_task_to_every_sub_env(checkout, spaceship_home):
    from mle_gym.vector import make_vec

    envs = make_vec(f"mle/{ID}-v0", 2, vectorization_mode="sync", task="mlebench",
                    mlebench_dir=str(checkout))  # fmt: skip
    try:
        observations, _ = envs.reset(seed=0)
    finally:
        envs.close()
    instructions = (checkout / "environment" / "instructions.txt").read_text()
    assert all(str(o).startswith(instructions) for o in observations)
