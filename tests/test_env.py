"""CompetitionEnv: the Gymnasium contract, tools, budgets, rewards and bad input."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import mle_gym
from mle_gym.envs import CompetitionEnv
from tests.conftest import require_bwrap

SUBMISSION = "/home/submission/submission.csv"


@pytest.fixture
def env(spaceship_home: Path, backend: str):
    with gym.make(
        "mle/spaceship-titanic-v0", backend=backend, step_timeout=10, max_steps=50
    ) as env:
        env.reset(seed=0)
        yield env


def test_every_competition_is_registered() -> None:
    ids = {env_id for env_id in gym.registry if env_id.startswith("mle/")}
    assert {"mle/spaceship-titanic-v0", "mle/sklearn-digits-v0"} <= ids
    assert set(mle_gym.ENV_IDS) == ids


def test_make_works_in_a_fresh_process(spaceship_home: Path) -> None:
    code = (
        "import gymnasium as gym; env = gym.make('mle_gym:mle/spaceship-titanic-v0');"
        "print(type(env.unwrapped).__name__); env.close()"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "CompetitionEnv"


def test_check_env_passes(spaceship_home: Path, backend: str) -> None:
    env = CompetitionEnv("spaceship-titanic", backend=backend, step_timeout=10)
    try:
        check_env(env, skip_render_check=True)
    finally:
        env.close()


def test_reset_gives_a_clean_workspace_and_exposes_the_seed(env) -> None:
    env.step(
        "echo data > /home/code/leftover.txt; cp /home/data/sample_submission.csv " + SUBMISSION
    )
    observation, info = env.reset(seed=42)
    assert "Spaceship Titanic" in observation and "/home/submission/submission.csv" in observation
    assert info["seed"] == 42 and info["step"] == 0
    output, *_ = env.step("ls -A /home/code /home/submission; echo seed=$MLE_GYM_SEED")
    assert output.split() == ["/home/code:", "/home/submission:", "seed=42"]


def test_close_twice_and_step_after_close(spaceship_home: Path, backend: str) -> None:
    env = gym.make("mle/spaceship-titanic-v0", backend=backend)
    env.reset()
    env.step("true")
    assert env.unwrapped.started
    env.close()
    env.close()
    assert not env.unwrapped.started
    observation, reward, terminated, *_ = env.step("true")
    assert "episode is over" in observation and terminated and reward == 0.0


def test_info_carries_step_time_exit_code_and_timeout(env) -> None:
    _, _, _, _, info = env.step("exit_with() { return 3; }; exit_with")
    assert info["step"] == 1 and info["exit_code"] == 3 and not info["timed_out"]
    assert 0 < info["time_left"] <= env.unwrapped.time_limit
    _, _, _, _, info = env.step({"tool": "bash", "command": "sleep 60"})
    assert info["timed_out"] and info["exit_code"] is None
    observation, *_ = env.step("echo next")
    assert observation == "next"


MALFORMED = [
    ({"tool": "teleport"}, "unknown tool 'teleport'"),
    ({"command": "ls"}, "the action has no 'tool' key"),
    ({"tool": "bash"}, "needs the argument 'command'"),
    ({"tool": "bash", "command": 42}, "must be a str"),
    ({"tool": "view", "path": "/x", "view_range": "1-3"}, "must be a list"),
    ({"tool": "view", "path": "/home/data/train.csv", "view_range": [1]}, "view_range must be"),
    ({"tool": "insert", "path": "/x", "insert_line": "3", "new_str": "a"}, "must be a int"),
    ({"tool": "create", "path": "/x", "file_text": "a", "mode": 7}, "unexpected: mode"),
    ({"tool": "bash", "command": "x" * 9_000_000}, "the limit is 8,000,000"),
    ("echo a\x00; rm -rf /home/code", "cannot contain NUL"),
    (None, "not NoneType"),
    (["ls"], "not list"),
    ({"tool": "view", "path": "relative.txt"}, "path must be absolute"),
    ({"tool": "view", "path": "/nowhere"}, "does not exist"),
]


@pytest.mark.parametrize(("action", "message"), MALFORMED, ids=[m for _, m in MALFORMED])
def test_malformed_actions_are_observations(env, action, message) -> None:
    observation, reward, terminated, truncated, _info = env.step(action)
    assert message in observation
    assert reward == 0.0 and not terminated and not truncated
    assert env.step("echo ok")[0] == "ok"


def test_malformed_actions_spend_steps_unless_the_env_is_told_otherwise(
    spaceship_home: Path,
) -> None:
    require_bwrap()
    with gym.make("mle/spaceship-titanic-v0", max_steps=3) as env:  # the default: they count
        env.reset(seed=0)
        steps = [env.step({"tool": "teleport"}) for _ in range(3)]
        assert [info["step"] for *_, info in steps] == [1, 2, 3]
        assert steps[-1][3] and "report" in steps[-1][4]  # truncated, graded
    with gym.make(
        "mle/spaceship-titanic-v0", max_steps=3, malformed_action_costs_step=False
    ) as env:
        env.reset(seed=0)
        for _ in range(5):
            observation, _, terminated, truncated, info = env.step({"tool": "teleport"})
            assert "unknown tool 'teleport'" in observation and not (terminated or truncated)
            assert info["step"] == 0 and info["steps_left"] == 3
        assert env.step("echo ok")[4]["step"] == 1
    with pytest.raises(TypeError, match="malformed_action_costs_step must be True or False"):
        gym.make("mle/spaceship-titanic-v0", malformed_action_costs_step="no")


def test_editor_tools(env) -> None:
    path = "/home/code/model.py"
    assert (
        "File created"
        in env.step({"tool": "create", "path": path, "file_text": "a = 1\nb = 2\n"})[0]
    )
    assert "already exists" in env.step({"tool": "create", "path": path, "file_text": ""})[0]
    out = env.step({"tool": "str_replace", "path": path, "old_str": "b = 2", "new_str": "b = 3"})[0]
    assert "b = 3" in out
    env.step({"tool": "insert", "path": path, "insert_line": 1, "new_str": "a = 1"})
    out = env.step({"tool": "str_replace", "path": path, "old_str": "a = 1", "new_str": "c"})[0]
    assert "occurs 2 times" in out and "lines 1, 2" in out
    assert "does not occur" in env.step({"tool": "str_replace", "path": path, "old_str": "zzz"})[0]
    assert env.step({"tool": "view", "path": path, "view_range": [2, -1]})[0] == (
        "     2\ta = 1\n     3\tb = 3"
    )
    assert "/home/data/train.csv" in env.step({"tool": "view", "path": "/home/data"})[0]
    out = env.step({"tool": "create", "path": "/home/data/x.py", "file_text": "x"})[0]
    assert "Read-only file system" in out


def test_validate_never_reveals_a_score(env) -> None:
    assert "No submission yet" in env.step({"tool": "validate"})[0]
    env.step(f"head -n 100 /home/data/sample_submission.csv > {SUBMISSION}")
    assert "have no row" in env.step({"tool": "validate"})[0]
    env.step(f"cp /home/data/sample_submission.csv {SUBMISSION}")
    observation, reward, terminated, _, info = env.step({"tool": "validate"})
    assert observation == "The submission is valid." and reward == 0.0 and not terminated
    assert "report" not in info and "dev_score" not in info


def test_submit_grades_and_terminates(env) -> None:
    env.step(f"cp /home/data/sample_submission.csv {SUBMISSION}")
    _, reward, terminated, truncated, info = env.step({"tool": "submit"})
    assert terminated and not truncated
    assert info["report"]["score"] == pytest.approx(0.50345) and reward == 0.0
    assert "episode is over" in env.step("ls")[0]


def test_missing_or_broken_submission_gives_zero_with_reason(env) -> None:
    _, reward, terminated, _, info = env.step({"tool": "submit"})
    assert terminated and reward == 0.0
    assert not info["report"]["submission_exists"] and "no submission" in info["report"]["error"]
    env.reset()
    env.step(f"echo 'PassengerId,Transported' > {SUBMISSION}")
    _, reward, _, _, info = env.step({"tool": "submit"})
    assert reward == 0.0 and not info["report"]["valid_submission"]
    assert "have no row" in info["report"]["error"]


def test_symlinked_submission_resolves_inside_the_sandbox(env, spaceship_home: Path) -> None:
    private = spaceship_home / "spaceship-titanic" / "private" / "test.csv"
    env.step(f"ln -s {private} {SUBMISSION}")
    _, reward, _, _, info = env.step({"tool": "submit"})
    assert not info["report"]["valid_submission"] and reward == 0.0


def test_step_budget_truncates_and_grades(spaceship_home: Path, backend: str) -> None:
    with gym.make("mle/spaceship-titanic-v0", backend=backend, max_steps=2) as env:
        env.reset()
        _, _, terminated, truncated, _ = env.step(
            f"cp /home/data/sample_submission.csv {SUBMISSION}"
        )
        assert not terminated and not truncated
        observation, _, terminated, truncated, info = env.step("echo last")
        assert truncated and not terminated and "budget is spent" in observation
        assert info["report"]["valid_submission"]


def test_time_budget_truncates_and_caps_commands(spaceship_home: Path, backend: str) -> None:
    with gym.make(
        "mle/spaceship-titanic-v0", backend=backend, time_limit=2, step_timeout=60
    ) as env:
        env.reset()
        _, _, terminated, truncated, info = env.step("sleep 30")
        assert truncated and not terminated and info["timed_out"]
        assert info["report"]["submission_exists"] is False


@pytest.mark.parametrize(
    ("mode", "expected"), [("normalized", 1.0), ("medal", 3.0), ("score", 1.0)]
)
def test_reward_modes(spaceship_home: Path, backend: str, mode: str, expected: float) -> None:
    answers = spaceship_home / "spaceship-titanic" / "private" / "test.csv"
    perfect = answers.read_text()
    with gym.make("mle/spaceship-titanic-v0", backend=backend, reward_mode=mode) as env:
        env.reset()
        env.step({"tool": "create", "path": SUBMISSION, "file_text": perfect})
        _, reward, *_ = env.step({"tool": "submit"})
    assert reward == pytest.approx(
        expected if mode != "normalized" else (1 - 0.50345) / (0.82066 - 0.50345)
    )


def test_bad_options_fail_early(spaceship_home: Path) -> None:
    with pytest.raises(ValueError, match="backend"):
        CompetitionEnv("spaceship-titanic", backend="vm")
    with pytest.raises(ValueError, match="reward_mode"):
        CompetitionEnv("spaceship-titanic", reward_mode="elo")
    with pytest.raises(KeyError, match="unknown competition"):
        CompetitionEnv("no-such-competition")


def test_unprepared_competition_says_how_to_prepare(mle_home: Path) -> None:
    from mle_gym.envs import NotPrepared

    with pytest.raises(NotPrepared, match="mle-gym prepare spaceship-titanic --raw"):
        gym.make("mle/spaceship-titanic-v0")
