"""Smaller things a new user trips over: the grader's imports are not charged to the
agent's budget, bad env arguments get clear errors, the CLI refuses what it would ignore
and says a Kaggle how-to once."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest

from tests.batch_support import mle_gym, mle_gym_env
from tests.conftest import require_bwrap

ENV_ID = "mle/sklearn-digits-v0"


def test_the_grader_is_imported_before_the_budget_starts(digits_home: Path) -> None:
    """A fresh process: once the sandbox has started (the clock with it), the grader's
    libraries are already imported, so the first validate pays nothing for them."""
    require_bwrap()
    code = (
        "import sys, gymnasium as gym, mle_gym\n"
        f"env = gym.make({ENV_ID!r}); env.reset(seed=0)\n"
        "assert 'sklearn.metrics' not in sys.modules\n"
        "env.unwrapped.start()\n"
        "print(all(m in sys.modules for m in ('sklearn.metrics', 'pyarrow.compute', 'pandas')))\n"
        "env.close()\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
        env=mle_gym_env(digits_home),
    )  # fmt: skip
    assert out.returncode == 0 and out.stdout.strip() == "True", out.stdout + out.stderr


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"sandbox_options": "memory=4g"}, "sandbox_options must be a dict"),
        ({"max_steps": 2.5}, "max_steps must be a whole number"),
        ({"network": "yes"}, "network must be False, True or 'proxy'"),
        ({"network_policy": "package-index"}, "network_policy governs network='proxy'"),
        ({"network": "proxy", "network_policy": "nope"}, "unknown network policy 'nope'"),
    ],
)
def test_bad_env_arguments_are_refused_clearly(
    digits_home: Path, monkeypatch: pytest.MonkeyPatch, kwargs: dict, message: str
) -> None:
    monkeypatch.setenv("MLE_GYM_HOME", str(digits_home))
    with pytest.raises((TypeError, ValueError), match=message):
        gym.make(ENV_ID, **kwargs)


def test_prepare_without_credentials_says_how_once(tmp_path: Path) -> None:
    env = {k: v for k, v in mle_gym_env(tmp_path / "home").items() if not k.startswith("KAGGLE")}
    env["HOME"] = str(tmp_path)  # no ~/.kaggle/kaggle.json
    result = subprocess.run(
        ["mle-gym", "prepare", "--split", "lite"], capture_output=True, text=True, timeout=300,
        env=env,
    )  # fmt: skip
    out = result.stdout + result.stderr
    assert result.returncode == 2, out
    assert out.count("Create an API token") == 1, out
    assert "competition(s) not prepared" in out


def test_an_interrupted_batch_says_how_to_resume(digits_home: Path, tmp_path: Path) -> None:
    require_bwrap()
    run_dir = tmp_path / "run"
    command = ["mle-gym", "run", "sklearn-digits", "--policy", "scripted", "--seeds", "2"]
    process = subprocess.Popen(
        [*command, "--run-dir", str(run_dir)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, env=mle_gym_env(digits_home),
    )  # fmt: skip
    try:
        # Ctrl-C once an episode runs (its directory exists)
        for _ in range(600):
            if any(run_dir.glob("episodes/*/seed-*")):
                break
            subprocess.run(["sleep", "0.1"], check=True)
        process.send_signal(signal.SIGINT)
        out, _ = process.communicate(timeout=120)
    finally:
        process.kill()
    assert process.returncode == 130, out
    assert "run the same command again to resume" in out, out


def test_the_memory_limit_is_named_once_even_when_a_later_command_succeeds(
    digits_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_bwrap()
    monkeypatch.setenv("MLE_GYM_HOME", str(digits_home))
    hog = 'python3 -c "x = bytearray(900_000_000); print(len(x))"'
    with gym.make(ENV_ID, sandbox_options={"memory": "200m"}) as env:
        env.reset(seed=0)
        alone, *_ = env.step(hog)
        followed, *_ = env.step(f"{hog}; echo after")
    for observation in (alone, followed):
        assert observation.count("killed: out of memory, limit 200m") == 1, observation
    assert followed.splitlines()[-1] != "after"  # the note comes last, where it is read


@pytest.mark.docker
def test_export_harbor_warns_when_its_agent_image_is_not_built(
    digits_home: Path, tmp_path: Path, docker_engine: object
) -> None:
    args = ["export", "harbor", "sklearn-digits", "--out", str(tmp_path / "tasks")]
    missing = mle_gym(*args, "--image", "mle-gym-agent:not-built", home=digits_home)
    assert "warning: the tasks name the agent image mle-gym-agent:not-built" in missing.stdout
    built = mle_gym(*args, "--image", "mle-gym-agent:offline", home=digits_home)
    assert "warning" not in built.stdout, built.stdout


def test_the_runtime_warning_names_the_users_line_and_the_cli_says_it_in_one_line(
    digits_home: Path, tmp_path: Path
) -> None:
    """No pinned runtime in this cache: Python's warning names the caller's `gym.make` line
    (not one of mle_gym's), and the `mle-gym` command prints one `warning:` line."""
    require_bwrap()
    script = tmp_path / "user.py"
    script.write_text(f"import gymnasium as gym, mle_gym\nenv = gym.make({ENV_ID!r})\nenv.close()")
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300,
        env=mle_gym_env(digits_home),
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert f"{script}:2: RuntimeWarning: mle_gym: the pinned agent runtime" in out.stderr
    assert "mle_gym/" not in out.stderr and "gym.make(" in out.stderr, out.stderr

    cli = mle_gym("run", "sklearn-digits", "--max-steps", "1", home=digits_home, ok=False)
    said = [line for line in cli.stderr.splitlines() if "pinned agent runtime" in line]
    assert said and said[0].startswith("warning: mle_gym: the pinned"), cli.stderr
    assert "RuntimeWarning" not in cli.stderr and ".py:" not in cli.stderr, cli.stderr
