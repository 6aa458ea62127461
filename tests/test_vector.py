"""make_vec: independent sandboxes stepped together, autoreset, overlap and clean close."""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import mle_gym
from mle_gym.checkpoints.store import MANIFEST
from mle_gym.sandbox.containers import LABEL_PID
from mle_gym.vector import per_env_kwargs
from tests.conftest import require_bwrap

ENV_ID = "mle/sklearn-digits-v0"
SUBMIT_SAMPLE = "cp /home/data/sample_submission.csv /home/submission/submission.csv"


@pytest.fixture
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temp dir of the test's own for the sandboxes' workspaces (forked workers inherit it)."""
    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    return root


def _bwrap_workspaces_under(root: Path) -> set[str]:
    """The workspaces (under `root`) of running bubblewrap processes."""
    found = set()
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = cmdline.read_bytes().decode(errors="replace").split("\0")
        except OSError:  # the process ended meanwhile
            continue
        if Path(args[0]).name == "bwrap":
            found |= {Path(a).relative_to(root).parts[0] for a in args if a.startswith(f"{root}/")}
    return found


def _leftovers(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir())


@pytest.mark.timeout(300)
def test_four_local_envs_step_autoreset_and_close_cleanly(
    mle_home: Path, private_tmp: Path
) -> None:
    require_bwrap()
    env = mle_gym.make_vec(ENV_ID, 4, step_timeout=30)
    try:
        assert env.metadata["autoreset_mode"].value == "NextStep"
        observations, info = env.reset(seed=7)
        assert list(info["seed"]) == [7, 8, 9, 10]
        assert all("Handwritten digits" in o for o in observations)
        assert len(_bwrap_workspaces_under(private_tmp)) == 0  # they start on the first step

        # Text survives whole (no shared-memory charset), and each sandbox is its own.
        text = "héllo, wörld! ✓ $MLE_GYM_SEED"
        observations, rewards, terminated, truncated, info = env.step([f'echo "{text}"'] * 4)
        assert len(_bwrap_workspaces_under(private_tmp)) == 4
        assert observations == tuple(f"héllo, wörld! ✓ {s}" for s in (7, 8, 9, 10))
        env.step(["touch /home/code/mine-$MLE_GYM_SEED"] * 4)
        observations, *_ = env.step(["ls /home/code"] * 4)
        assert observations == ("mine-7", "mine-8", "mine-9", "mine-10")

        # Sub-env 3 submits: graded alone; the others go on.
        env.step(["true", "true", "true", SUBMIT_SAMPLE])
        observations, rewards, terminated, truncated, info = env.step(
            ["echo a", "echo b", "echo c", {"tool": "submit"}]
        )
        assert list(terminated) == [False, False, False, True] and not truncated.any()
        assert list(info["_report"]) == [False, False, False, True]
        assert info["report"]["valid_submission"][3] and info["report"]["score"][3] is not None
        assert info["exit_code"][3] is None and info["exit_code"][0] == 0

        # Next step: sub-env 3 ignores its action and starts a fresh episode (NEXT_STEP).
        observations, rewards, terminated, truncated, info = env.step(
            ["echo d", "echo e", "echo f", "touch /home/code/ignored"]
        )
        assert observations[:3] == ("d", "e", "f")
        assert "Handwritten digits" in observations[3] and rewards[3] == 0.0
        assert not terminated.any() and list(info["step"]) == [6, 6, 6, 0]
        assert info["seed"][3] not in (7, 8, 9, 10)
        observations, *_ = env.step(["ls /home/code /home/submission"] * 4)
        assert observations[3].split() == ["/home/code:", "/home/submission:"]
        assert "mine-7" in observations[0]
    finally:
        env.close()
    time.sleep(0.5)
    assert _bwrap_workspaces_under(private_tmp) == set()
    assert _leftovers(private_tmp) == []


@pytest.mark.timeout(120)
def test_same_step_autoreset_returns_the_final_observation_in_info(
    mle_home: Path, private_tmp: Path
) -> None:
    require_bwrap()
    env = mle_gym.make_vec(ENV_ID, 2, autoreset_mode="same_step", vectorization_mode="sync")
    try:
        assert env.metadata["autoreset_mode"].value == "SameStep"
        env.reset(seed=0)
        observations, _, terminated, _, info = env.step(["echo a", {"tool": "submit"}])
        assert observations[0] == "a" and "Handwritten digits" in observations[1]
        assert list(terminated) == [False, True]
        assert info["final_obs"][1] == "Submitted." and list(info["_final_info"]) == [False, True]
        assert not info["final_info"]["report"]["submission_exists"][1]
        assert info["step"][1] == 0
    finally:
        env.close()
    assert _leftovers(private_tmp) == []


BARRIER = (
    'touch {dir}/$MLE_GYM_SEED; until [ "$(ls {dir} | wc -l)" -ge {n} ]; do sleep 0.05;'
    " done; echo met"
)


@pytest.mark.timeout(180)
@pytest.mark.filterwarnings("ignore:.*NOT ISOLATED:RuntimeWarning")
def test_commands_of_different_envs_run_at_the_same_time(mle_home: Path, tmp_path: Path) -> None:
    """A barrier: each env's command waits until every env's command has started. Stepped
    one after the other, the first would wait out its timeout; overlapped, all meet."""
    unisolated = {"sandbox_options": {"isolation": "none"}}  # so the envs share a directory
    for mode, n, timeout in (("async", 4, 60), ("sync", 2, 3)):
        barrier = tmp_path / mode
        barrier.mkdir()
        env = mle_gym.make_vec(
            ENV_ID, n, vectorization_mode=mode, step_timeout=timeout, **unisolated
        )
        try:
            env.reset(seed=0)
            observations, _, _, _, info = env.step([BARRIER.format(dir=barrier, n=n)] * n)
        finally:
            env.close()
        if mode == "async":
            assert observations == ("met",) * n and not info["timed_out"].any()
        else:  # the control: stepped in turn, the first command never sees the second start
            assert list(info["timed_out"]) == [True, False]


def test_gpu_devices_are_assigned_round_robin() -> None:
    kwargs = per_env_kwargs(
        4, {"backend": "docker", "sandbox_options": {"memory": "8g"}}, ["0", "1", "2"], 1
    )
    assert [k["sandbox_options"] for k in kwargs] == [
        {"memory": "8g", "gpus": [d]} for d in ("0", "1", "2", "0")
    ]
    pairs = per_env_kwargs(2, {"backend": "docker"}, [0, 1, 2, 3], 2)
    assert [k["sandbox_options"]["gpus"] for k in pairs] == [["0", "1"], ["2", "3"]]
    assert per_env_kwargs(2, {"backend": "local"}, None, 1) == [{"backend": "local"}] * 2
    local = per_env_kwargs(2, {"backend": "local"}, [0, 1], 1)
    assert [k["sandbox_options"] for k in local] == [{"gpus": ["0"]}, {"gpus": ["1"]}]
    with pytest.raises(ValueError, match="not both"):
        per_env_kwargs(2, {"backend": "docker", "sandbox_options": {"gpus": [0]}}, [0], 1)


def test_bad_arguments_fail_early() -> None:
    with pytest.raises(ValueError, match="num_envs"):
        mle_gym.make_vec(ENV_ID, 0)
    with pytest.raises(ValueError, match="autoreset_mode"):
        mle_gym.make_vec(ENV_ID, 2, autoreset_mode="sometimes")


@pytest.mark.docker
@pytest.mark.timeout(300)
def test_two_docker_envs_step_autoreset_and_leave_no_container(
    docker_engine, mle_home: Path, private_tmp: Path
) -> None:
    env = mle_gym.make_vec(ENV_ID, 2, backend="docker", step_timeout=30)
    workers = [str(p.pid) for p in env.processes]

    def containers() -> list:
        return [
            c
            for pid in workers
            for c in docker_engine.containers.list(
                all=True, filters={"label": f"{LABEL_PID}={pid}"}
            )
        ]

    try:
        observations, info = env.reset(seed=3)
        assert list(info["seed"]) == [3, 4] and len(containers()) == 0  # started on step 1
        assert list(info["sandbox"]["backend"]) == ["docker", "docker"]
        observations, *_ = env.step(["echo $MLE_GYM_SEED $(whoami)", SUBMIT_SAMPLE])
        assert observations[0] == "3 agent" and len(containers()) == 2
        _, _, terminated, _, info = env.step(["echo x", {"tool": "submit"}])
        assert list(terminated) == [False, True] and info["report"]["valid_submission"][1]
        observations, _, _, _, info = env.step(["echo y", "echo ignored"])
        assert observations[0] == "y" and "Handwritten digits" in observations[1]
        # sub-env 1 was reset: its container is gone, the next one starts on its next step
        assert list(info["step"]) == [3, 0] and len(containers()) == 1
    finally:
        env.close()
    assert containers() == []
    assert _leftovers(private_tmp) == []
    assert np.all([not p.is_alive() for p in env.processes])


@pytest.mark.timeout(300)
def test_a_vector_env_branches_from_one_checkpoint(
    mle_home: Path, private_tmp: Path, tmp_path: Path
) -> None:
    """reset(options={"checkpoint": ...}) goes to every sub-env: each resumes the episode in
    its own sandbox, they diverge, and each branch's own checkpoint names its parent."""
    require_bwrap()
    store = tmp_path / "store"
    with gym.make(ENV_ID, step_timeout=30) as single:
        single.reset(seed=4)
        single.step("echo base > /home/code/base.txt && cd /home/code && export KEPT=yes")
        folder = single.unwrapped.checkpoint(store)
    env = mle_gym.make_vec(ENV_ID, 3, step_timeout=30)
    try:
        _, info = env.reset(options={"checkpoint": str(folder)})
        assert list(info["resumed_from"]["checkpoint"]) == [str(folder.resolve())] * 3
        assert list(info["step"]) == [1, 1, 1] and list(info["seed"]) == [4, 4, 4]
        observations, *_ = env.step([f'echo "$KEPT" > branch-{n}.txt; ls' for n in range(3)])
        for n, observation in enumerate(observations):
            assert observation.split() == ["base.txt", f"branch-{n}.txt"]
        children = env.call("checkpoint", store)
        for n, child in enumerate(children):
            meta = json.loads((Path(child) / MANIFEST).read_text())["meta"]
            assert meta["resumed_from"]["checkpoint"] == str(folder.resolve())
            assert meta["steps"] == 2
            assert [e["path"] for e in _code_files(Path(child))] == ["base.txt", f"branch-{n}.txt"]
    finally:
        env.close()


def _code_files(checkpoint: Path) -> list[dict]:
    """The files of /home/code a checkpoint holds."""
    places = json.loads((checkpoint / MANIFEST).read_text())["places"]
    return [e for e in places["/home/code"] if e["type"] == "file"]
