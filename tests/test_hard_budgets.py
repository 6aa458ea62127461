"""Hard budgets with no stragglers: a step returns near its timeout whatever the command
does, and close() ends an episode at once even while a command runs in another thread
(issue 13, item 6)."""

from __future__ import annotations

import threading
import time

import gymnasium as gym

ENV_ID = "mle/sklearn-digits-v0"
STUBBORN = "trap '' INT TERM HUP; while :; do sleep 1; done"


def _running(env) -> bool:
    sandbox = env.unwrapped.sandbox
    return sandbox.shell is not None or getattr(sandbox, "container", None) is not None


def test_a_command_that_ignores_signals_is_cut_at_its_timeout(digits_home, backend, monkeypatch):
    monkeypatch.setenv("MLE_GYM_HOME", str(digits_home))
    with gym.make(ENV_ID, backend=backend, step_timeout=2) as env:
        env.reset(seed=0)
        env.step("true")
        begun = time.monotonic()
        _, _, terminated, truncated, info = env.step(STUBBORN)
        took = time.monotonic() - begun
        assert info["timed_out"] and not terminated and not truncated
        assert took < 2 + 15, f"the step took {took:.1f} s for a 2 s timeout"  # a hang guard
        assert env.step("echo alive")[0].endswith("alive")


def test_close_ends_a_running_command_and_leaves_nothing(digits_home, backend, monkeypatch):
    monkeypatch.setenv("MLE_GYM_HOME", str(digits_home))
    env = gym.make(ENV_ID, backend=backend, step_timeout=600)
    env.reset(seed=0)
    env.step("true")
    outcome: dict = {}

    def stuck() -> None:
        outcome["step"] = env.unwrapped.step(STUBBORN)

    worker = threading.Thread(target=stuck, daemon=True)
    worker.start()
    time.sleep(1.0)  # the command is running
    env.close()
    worker.join(timeout=30)
    assert not worker.is_alive(), "the step still runs 30 s after close()"
    observation, *_ = outcome["step"]
    assert "stopped" in observation or "failed" in observation
    assert not _running(env)
    time.sleep(1.0)
    assert not _running(env)  # nothing started a new shell afterwards
    assert "episode is over" in env.step("true")[0]
