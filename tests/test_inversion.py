"""Scaffolds that own their loop, inverted into policies the researcher's loop steps."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import gymnasium as gym
import pytest

import mle_gym
from mle_gym.inversion import Bridge, EpisodeEnded, InvertedPolicy, ScaffoldError
from tests.conftest import require_bwrap
from tests.llm_server import LOOK, RUN, SCRIPT_PATH, TRAIN_SCRIPT

pytestmark = pytest.mark.timeout(120)


def own_loop_scaffold(bridge: Bridge) -> None:
    """A scaffold with its own loop: it reads each observation and decides what comes next."""
    assert "Submission" in bridge.first.observation
    listing = bridge.step(LOOK)
    assert "sample_submission.csv" in listing.observation
    bridge.step({"tool": "create", "path": SCRIPT_PATH, "file_text": TRAIN_SCRIPT})
    run = bridge.step({"tool": "bash", "command": RUN})
    assert run.info["exit_code"] == 0, run.observation
    assert bridge.step({"tool": "validate"}).observation == "The submission is valid."
    # returning without submitting: the policy submits what is there


def test_a_scaffold_with_its_own_loop_runs_a_graded_episode(backend: str, mle_home: Path) -> None:
    policy = InvertedPolicy(own_loop_scaffold)
    with gym.make("mle/sklearn-digits-v0", backend=backend) as env:
        episode = mle_gym.run_episode(env, policy, seed=0)
    assert [s.info["tool"] for s in episode.steps] == [
        "bash",
        "create",
        "bash",
        "validate",
        "submit",
    ]
    assert episode.report["valid_submission"] and episode.total_reward > 0
    assert not policy.running


def test_submit_from_the_scaffold_ends_its_thread(mle_home: Path) -> None:
    require_bwrap()
    after_submit: list[str] = []

    def scaffold(bridge: Bridge) -> None:
        bridge.step("echo hello")
        try:
            bridge.step({"tool": "submit"})
        finally:
            after_submit.append("unwound")
        after_submit.append("kept going")

    policy = InvertedPolicy(scaffold)
    with gym.make("mle/sklearn-digits-v0") as env:
        episode = mle_gym.run_episode(env, policy, seed=0)
    assert [s.action for s in episode.steps] == ["echo hello", {"tool": "submit"}]
    assert not episode.report["valid_submission"]
    assert after_submit == ["unwound"] and not policy.running


def test_scaffold_errors_surface_in_act(mle_home: Path) -> None:
    require_bwrap()

    def scaffold(bridge: Bridge) -> None:
        bridge.step("ls")
        raise ConnectionError("LLM endpoint unreachable")

    policy = InvertedPolicy(scaffold)
    policy.name = "my-scaffold"
    with gym.make("mle/sklearn-digits-v0") as env, pytest.raises(ScaffoldError) as caught:
        mle_gym.run_episode(env, policy, seed=0)
    assert str(caught.value) == (
        "my-scaffold: the scaffold stopped with ConnectionError: LLM endpoint unreachable"
    )
    assert isinstance(caught.value.__cause__, ConnectionError)
    assert not policy.running


def test_a_stuck_scaffold_is_an_error_not_a_hang() -> None:
    release = threading.Event()

    def scaffold(bridge: Bridge) -> None:
        release.wait(30)  # e.g. retrying a dead endpoint for ever
        bridge.step("ls")

    policy = InvertedPolicy(scaffold, act_timeout=0.5, join_timeout=0.1)
    policy.reset()
    started = time.monotonic()
    with pytest.raises(ScaffoldError, match=r"gave no action within 0\.5 s"):
        policy.act("task", {"step": 0})
    assert time.monotonic() - started < 5
    release.set()  # when it wakes up, its next step ends it
    deadline = time.monotonic() + 5
    while any(t.name.startswith("scaffold-") for t in threading.enumerate()):
        assert time.monotonic() < deadline, "the scaffold thread did not end"
        time.sleep(0.05)


def test_reset_ends_a_scaffold_that_swallows_exceptions() -> None:
    seen: list[str] = []

    def scaffold(bridge: Bridge) -> None:
        for i in range(100):
            try:
                bridge.step(f"echo {i}")
            except Exception as exc:  # what careless scaffolds do
                seen.append(f"swallowed {exc}")
        seen.append("finished the loop")

    policy = InvertedPolicy(scaffold)
    policy.reset()
    assert policy.act("task", {"step": 0}) == "echo 0"
    assert policy.act("0", {"step": 1}) == "echo 1"
    thread = policy._thread
    policy.reset()  # a new episode: the old scaffold must stop
    assert thread is not None and not thread.is_alive()
    assert seen == [] and not policy.running
    assert policy.act("task", {"step": 0}) == "echo 0"  # a fresh scaffold run
    policy.close()


def test_truncated_episode_then_reset_leaves_no_thread(mle_home: Path) -> None:
    require_bwrap()

    def endless(bridge: Bridge) -> None:
        while True:
            bridge.step("true")

    policy = InvertedPolicy(endless)
    with gym.make("mle/sklearn-digits-v0", max_steps=3) as env:
        episode = mle_gym.run_episode(env, policy, seed=0)
        assert episode.steps[-1].truncated and len(episode.steps) == 3
        assert policy.running  # blocked on an observation that will never come
        episode = mle_gym.run_episode(env, policy, seed=1)  # reset() ends the old one
        assert len(episode.steps) == 3
    policy.close()
    assert not policy.running
    assert not any(t.name.startswith("scaffold-") for t in threading.enumerate())


def test_lockstep_over_several_envs(mle_home: Path) -> None:
    """What a vectorised env does: one act per env per tick, scaffolds in their own threads."""
    require_bwrap()

    def counter(bridge: Bridge) -> None:
        for i in range(3):
            out = bridge.step(f"echo {bridge.first.info['seed']}-{i}")
            assert out.observation.startswith(f"{bridge.first.info['seed']}-{i}")

    envs = [gym.make("mle/sklearn-digits-v0") for _ in range(2)]
    policies = [InvertedPolicy(counter) for _ in envs]
    try:
        results = [env.reset(seed=seed) for seed, env in enumerate(envs)]
        for policy in policies:
            policy.reset()
        done = [False, False]
        actions: list[list] = [[], []]
        while not all(done):
            for k, (env, policy) in enumerate(zip(envs, policies, strict=True)):
                if done[k]:
                    continue
                action = policy.act(*results[k])
                actions[k].append(action)
                obs, _, term, trunc, info = env.step(action)
                results[k] = (obs, info)
                done[k] = term or trunc
    finally:
        for env in envs:
            env.close()
    assert actions == [
        ["echo 0-0", "echo 0-1", "echo 0-2", {"tool": "submit"}],
        ["echo 1-0", "echo 1-1", "echo 1-2", {"tool": "submit"}],
    ]


def test_parallel_tool_calls_take_turns_and_get_their_own_answers(mle_home: Path) -> None:
    """Scaffolds that run tools in a thread pool: each caller gets its own command's output."""
    require_bwrap()
    from concurrent.futures import ThreadPoolExecutor

    def scaffold(bridge: Bridge) -> None:
        with ThreadPoolExecutor(4) as pool:
            answers = list(pool.map(lambda i: bridge.step(f"echo call-{i}"), range(8)))
        for i, answer in enumerate(answers):
            assert answer.observation == f"call-{i}", (i, answer.observation)

    policy = InvertedPolicy(scaffold)
    with gym.make("mle/sklearn-digits-v0") as env:
        episode = mle_gym.run_episode(env, policy, seed=0)
    assert sorted(s.action for s in episode.steps[:-1]) == sorted(
        f"echo call-{i}" for i in range(8)
    )
    assert episode.steps[-1].action == {"tool": "submit"}


def test_episode_ended_is_not_an_exception() -> None:
    assert not issubclass(EpisodeEnded, Exception)
