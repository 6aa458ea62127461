"""Chat-message observations, async steps on one event loop, and Gymnasium's own make_vec
(issue 13, items 2 and 4)."""

from __future__ import annotations

import asyncio

import gymnasium as gym
import pytest

import mle_gym
from mle_gym.vector import AsyncTextVectorEnv
from tests.conftest import require_bwrap

ENV_ID = "mle/sklearn-digits-v0"


@pytest.fixture
def home(digits_home, monkeypatch):
    require_bwrap()
    monkeypatch.setenv("MLE_GYM_HOME", str(digits_home))
    return digits_home


def test_messages_open_with_system_and_user_then_one_tool_message_per_step(home):
    env = gym.make(ENV_ID, observation_format="messages")
    try:
        opening, _ = env.reset(seed=3)
        system, user = opening
        assert (system["role"], user["role"]) == ("system", "user")
        assert "## Tools" in system["content"] and "## Budget" in system["content"]
        assert "Handwritten digits" in user["content"] and "## Tools" not in user["content"]
        assert env.observation_space.contains(opening)
        action = mle_gym.action_from_tool_call("bash", '{"command": "echo $MLE_GYM_SEED"}', "c1")
        message, *_ = env.step(action)
        assert message == {"role": "tool", "name": "bash", "content": "3", "tool_call_id": "c1"}
        assert env.observation_space.contains(message)
        broken, *_ = env.step({"tool": "view", "tool_call_id": "c2"})
        assert broken["tool_call_id"] == "c2" and "needs the argument 'path'" in broken["content"]
        last, _, terminated, _, info = env.step({"tool": "submit", "tool_call_id": "c3"})
        assert terminated and last["content"] == "Submitted." and "report" in info
    finally:
        env.close()


def test_text_stays_the_default_and_bad_formats_fail_at_make(home):
    env = gym.make(ENV_ID)
    try:
        observation, _ = env.reset(seed=0)
        assert isinstance(observation, str) and "## Tools" in observation
    finally:
        env.close()
    with pytest.raises(ValueError, match="observation_format must be one of text, messages"):
        gym.make(ENV_ID, observation_format="json")


TIMED = "date +%s.%N; sleep 2; date +%s.%N"


def test_eight_envs_step_at_once_on_one_event_loop(home):
    envs = [gym.make(ENV_ID).unwrapped for _ in range(8)]

    async def episode(env, seed, barrier):
        await env.areset(seed=seed)
        await env.astep("true")  # starts the sandbox
        await barrier.wait()  # every sandbox is up before the timed commands
        output, *_ = await env.astep(TIMED)
        await env.astep("cp /home/data/sample_submission.csv /home/submission/submission.csv")
        *_, info = await env.astep({"tool": "submit"})
        start, end = map(float, output.split())
        return start, end, info["report"]

    async def run():
        ticks = 0
        done = asyncio.Event()

        async def ticker():
            nonlocal ticks
            while not done.is_set():
                ticks += 1
                await asyncio.sleep(0.01)

        tick = asyncio.create_task(ticker())
        barrier = asyncio.Barrier(len(envs))
        results = await asyncio.gather(*(episode(e, s, barrier) for s, e in enumerate(envs)))
        done.set()
        await tick
        return results, ticks

    try:
        results, ticks = asyncio.run(run())
    finally:
        for env in envs:
            env.close()
    starts, ends = [r[0] for r in results], [r[1] for r in results]
    assert max(starts) < min(ends)  # all eight commands were running at the same moment
    assert ticks > 8  # the loop kept running while they did
    assert all(r[2]["valid_submission"] for r in results)


def test_aclose_stops_every_sandbox_of_envs_closed_together(home):
    envs = [gym.make(ENV_ID).unwrapped for _ in range(4)]

    async def run():
        await asyncio.gather(*(e.areset(seed=s) for s, e in enumerate(envs)))
        await asyncio.gather(*(e.astep("(sleep 600 &); echo up") for e in envs))
        roots = [e.sandbox.root for e in envs]
        groups = [e.sandbox.cgroup for e in envs]
        await asyncio.gather(*(e.aclose() for e in envs))
        return roots, groups

    try:
        roots, groups = asyncio.run(run())
    finally:
        for env in envs:
            env.close()
    assert all(root is not None and not root.exists() for root in roots)
    assert all(group is not None and not group.dirs for group in groups)  # removed
    assert all(e.sandbox.shell is None and e.step("true")[2] for e in envs)


def test_sandboxes_starting_together_probe_their_runtime_once(home, monkeypatch):
    from mle_gym.tools import runtime

    monkeypatch.setattr(runtime, "_probed", {})
    probes = []
    real_probe = runtime._probe
    monkeypatch.setattr(runtime, "_probe", lambda *a: probes.append(1) or real_probe(*a))
    envs = [gym.make(ENV_ID).unwrapped for _ in range(4)]

    async def run():
        await asyncio.gather(*(e.areset(seed=s) for s, e in enumerate(envs)))
        await asyncio.gather(*(e.astep("true") for e in envs))
        return [e.episode._runtime for e in envs]

    try:
        found = asyncio.run(run())
    finally:
        for env in envs:
            env.close()
    assert len(probes) == 1
    assert found[0].get("python") and all(f == found[0] for f in found)


@pytest.mark.parametrize("mode", ["async", "sync"])
def test_gymnasium_make_vec_in_its_own_modes(home, mode):
    env = gym.make_vec(ENV_ID, num_envs=3, vectorization_mode=mode)
    try:
        observations, info = env.reset(seed=5)
        assert all("Handwritten digits" in o for o in observations)
        actions = ['echo "héllo ✓ #$MLE_GYM_SEED"', {"tool": "view", "path": "/home/code"}, "true"]
        observations, *_, info = env.step(actions)
        assert observations[0] == "héllo ✓ #5" and "/home/code" in observations[1]
        assert list(info["exit_code"]) == [0, None, 0]  # numbers and None in one batch
        observations, *_ = env.step(["echo a", "echo b", {"tool": "submit"}])
        assert observations[:2] == ("a", "b") and observations[2] == "Submitted."
    finally:
        env.close()


def test_gymnasium_make_vec_by_default_builds_ours(home):
    env = gym.make_vec(ENV_ID, num_envs=2)
    try:
        assert isinstance(env, AsyncTextVectorEnv)
        env.reset(seed=0)
        assert env.step(["echo x", "echo y"])[0] == ("x", "y")
    finally:
        env.close()
