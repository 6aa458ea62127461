"""An episode checkpointed mid-way and resumed in a fresh sandbox after the process that ran
it was SIGKILLed, on both backends; branches from one checkpoint; refused checkpoints."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

import mle_gym
from mle_gym.checkpoints.store import CHECKSUM, MANIFEST, CheckpointError
from mle_gym.envs import CompetitionEnv
from mle_gym.envs.config import EnvConfig
from mle_gym.envs.episode import Episode
from mle_gym.envs.episode_checkpoint import checked_meta
from mle_gym.sandbox.scratch import sweep

SUBMISSION = "/home/submission/submission.csv"
OPTIONS = {"step_timeout": 30, "max_steps": 20, "time_limit": 900}
STEPS_BEFORE = 8

# The first segment, in a process of its own: it prints the checkpoint, then waits to be killed.
_FIRST_SEGMENT = """
import json, sys, time
from mle_gym.envs import CompetitionEnv
backend, first, second, store = sys.argv[1:5]
env = CompetitionEnv("sklearn-digits", backend=backend, **json.loads(sys.argv[5]))
env.reset(seed=5)
for action in (
    {"tool": "create", "path": "/home/code/notes/a.txt", "file_text": "hello"},
    "mkdir -p /home/code/work && cd /home/code/work && export MY_VAR='kept value'",
    {"tool": "create", "path": "/home/code/sub.csv", "file_text": open(first).read()},
    "cp /home/code/sub.csv /home/submission/submission.csv",
    {"tool": "validate"},
    {"tool": "create", "path": "/home/code/notes/b.csv", "file_text": open(second).read()},
    "mv /home/code/notes/b.csv /home/submission/submission.csv",
    {"tool": "validate"},
):
    observation, _, terminated, truncated, info = env.step(action)
    assert not (terminated or truncated), observation
folder = env.checkpoint(store)
print(json.dumps({"checkpoint": str(folder), "steps_left": info["steps_left"]}), flush=True)
time.sleep(600)
"""


@pytest.fixture
def digits_env_home(digits_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MLE_GYM_HOME", str(digits_home))
    return digits_home


def _two_submissions(home: Path, folder: Path) -> tuple[Path, Path]:
    """The sample submission (all 0) and the right answers, as files for the first segment."""
    answers = pd.read_csv(home / "sklearn-digits" / "private" / "test.csv")
    first, second = folder / "first.csv", folder / "second.csv"
    answers.assign(label=0).to_csv(first, index=False)
    answers.to_csv(second, index=False)
    return first, second


def _first_segment_killed(backend: str, home: Path, tmp_path: Path) -> dict:
    """Run the first segment in its own process, SIGKILL it once it printed its checkpoint,
    and clear what it left (its scratch folders, its container)."""
    first, second = _two_submissions(home, tmp_path)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    args = [backend, str(first), str(second), str(tmp_path / "store"), json.dumps(OPTIONS)]
    process = subprocess.Popen(
        [sys.executable, "-c", _FIRST_SEGMENT, *args],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(scratch)},
        start_new_session=True,
    )
    try:
        line = process.stdout.readline() if process.stdout else ""
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(30)
        if process.stdout:
            process.stdout.close()
        if backend == "docker":
            import docker

            from mle_gym.sandbox.containers import collect_garbage

            collect_garbage(docker.from_env())
        sweep(scratch)
    assert line, "the first segment printed no checkpoint"
    return json.loads(line)


def test_an_episode_resumes_after_its_process_was_killed(
    digits_env_home: Path, backend: str, tmp_path: Path
) -> None:
    printed = _first_segment_killed(backend, digits_env_home, tmp_path)
    folder = Path(printed["checkpoint"])
    assert printed["steps_left"] == OPTIONS["max_steps"] - STEPS_BEFORE
    meta = json.loads((folder / MANIFEST).read_text())["meta"]
    assert "not captured" in meta["background_processes"]
    assert meta["steps"] == STEPS_BEFORE and meta["seed"] == 5
    assert len(meta["snapshots"]["kept"]) == 2

    env = CompetitionEnv("sklearn-digits", backend=backend, **OPTIONS)
    try:
        observation, info = env.reset(options={"checkpoint": str(folder)})
        assert f"resumes from a checkpoint taken after step {STEPS_BEFORE}" in observation
        assert "running processes" in observation  # what was not restored
        lineage = info["resumed_from"]
        assert lineage["checkpoint"] == str(folder.resolve()) and lineage["parent"] is None
        assert lineage["steps"] == STEPS_BEFORE and lineage["seconds"] == meta["time_used"] > 0
        assert info["step"] == STEPS_BEFORE and info["seed"] == 5
        assert info["steps_left"] == OPTIONS["max_steps"] - STEPS_BEFORE
        assert info["time_left"] <= OPTIONS["time_limit"] - int(meta["time_used"])

        observation, *_, info = env.step('pwd; echo "$MY_VAR"; cat /home/code/notes/a.txt')
        assert observation.split()[:4] == ["/home/code/work", "kept", "value", "hello"]
        assert info["step"] == STEPS_BEFORE + 1
        assert info["steps_left"] == OPTIONS["max_steps"] - STEPS_BEFORE - 1

        *_, reward, terminated, _, info = env.step({"tool": "submit"})
        assert terminated and info["report"]["score"] == 1.0 and reward > 0
        kept = info["snapshots"]["kept"]
        assert [s["final"] for s in kept] == [False, True]
        assert [s["step"] for s in kept] == [s["step"] for s in meta["snapshots"]["kept"]]
        for snapshot in kept:  # the earlier segment's copies, on this host again
            content = (Path(info["snapshots"]["dir"]) / snapshot["file"]).read_bytes()
            assert hashlib.sha256(content).hexdigest() == snapshot["sha256"]
        graded = mle_gym.evaluate_snapshots("sklearn-digits", info["snapshots"])
        assert [g["score"] for g in graded][-1] == 1.0 and graded[0]["score"] < 0.5
        integrity = info["integrity"]
        assert integrity["validations"] == 2 and integrity["grades_before_end"] == 0
        assert integrity["submission_snapshots"] == 2
        assert integrity["last_submission_write_step"] == kept[-1]["step"]
        assert integrity["resumed_from"] == lineage
    finally:
        env.close()


def test_four_branches_from_one_checkpoint_run_apart(
    digits_env_home: Path, backend: str, tmp_path: Path
) -> None:
    envs = [CompetitionEnv("sklearn-digits", backend=backend, **OPTIONS) for _ in range(4)]
    parent = envs[0]
    try:
        parent.reset(seed=1)
        parent.step("echo base > /home/code/base.txt")
        folder = parent.checkpoint(tmp_path / "store")
        # the env that took it and three new ones, each a branch
        infos = [env.reset(options={"checkpoint": folder})[1] for env in envs]
        assert {i["resumed_from"]["checkpoint"] for i in infos} == {str(folder.resolve())}
        assert all(i["step"] == 1 and i["seed"] == 1 for i in infos)
        for n, env in enumerate(envs):
            env.step(f"echo {n} > /home/code/branch-{n}.txt")
        for n, env in enumerate(envs):
            observation, *_ = env.step("ls /home/code")
            assert sorted(observation.split()) == ["base.txt", f"branch-{n}.txt"]
        # a checkpoint of a branch names the checkpoint that branch came from
        child = envs[1].checkpoint(tmp_path / "store")
        _, info = envs[2].reset(options={"checkpoint": child})
        assert info["resumed_from"]["parent"] == infos[1]["resumed_from"]
        assert info["step"] == 3
        observation, *_ = envs[2].step("ls /home/code")
        assert sorted(observation.split()) == ["base.txt", "branch-1.txt"]
    finally:
        for env in envs:
            env.close()


def test_a_checkpoint_of_another_competition_or_configuration_is_refused(
    digits_env_home: Path, tmp_path: Path
) -> None:
    env = CompetitionEnv("sklearn-digits", backend="local", **OPTIONS)
    other = CompetitionEnv("sklearn-digits", backend="local", **{**OPTIONS, "max_steps": 5})
    try:
        with pytest.raises(RuntimeError, match="no episode is running"):
            env.checkpoint(tmp_path / "store")
        env.reset(seed=0)
        env.step("echo x > /home/code/x")
        folder = env.checkpoint(tmp_path / "store")
        other.reset(seed=0)
        other.step("echo running > /home/code/mine")
        with pytest.raises(ValueError, match=r"another configuration: max_steps=20"):
            other.reset(options={"checkpoint": folder})
        # a refused checkpoint ends nothing: the running episode goes on
        observation, *_ = other.step("cat /home/code/mine")
        assert observation.strip() == "running"

        # the GPU devices a batch's worker slot hands the episode may differ, not their number
        def on_gpus(*ids: str):
            return lambda meta: meta["config"].update(sandbox_options={"gpus": list(ids)})

        on_one = Episode.open("sklearn-digits", EnvConfig(**OPTIONS, backend="local"))
        # (this host has no GPU to start such a sandbox: only the recorded option differs)
        on_one.config = replace(on_one.config, sandbox_options={"gpus": ["1"]})
        checked_meta(on_one, _forged(folder, on_gpus("0")))
        with pytest.raises(ValueError, match=r"sandbox_options=\{'gpus': 2\}"):
            checked_meta(on_one, _forged(folder, on_gpus("0", "1")))

        # the same checkpoint, rewritten (checksum and all) as another competition's
        forged = _forged(folder, lambda meta: meta.update(competition_id="spaceship-titanic"))
        with pytest.raises(ValueError, match="checkpoint of 'spaceship-titanic'"):
            env.reset(options={"checkpoint": forged})
    finally:
        env.close()
        other.close()


def _forged(folder: Path, change) -> Path:
    """A copy of the checkpoint in `folder` with its meta changed by `change` and the
    checksum recomputed (what someone able to write the run's folder could make)."""
    manifest = json.loads((folder / MANIFEST).read_text())
    change(manifest["meta"])
    forged = folder.parent / f"forged-{len(list(folder.parent.iterdir()))}"
    forged.mkdir()
    data = json.dumps(manifest).encode()
    (forged / MANIFEST).write_bytes(data)
    (forged / CHECKSUM).write_text(hashlib.sha256(data).hexdigest())
    return forged


def test_snapshots_in_a_checkpoint_are_checked_before_they_are_restored(
    digits_env_home: Path, tmp_path: Path
) -> None:
    """SECURITY: a resumed episode's snapshots land only in its own snapshot folder, with
    the content the checkpoint's sha256 names."""
    env = CompetitionEnv("sklearn-digits", backend="local", **OPTIONS)
    try:
        env.reset(seed=0)
        env.step(f"cp /home/data/sample_submission.csv {SUBMISSION}")
        env.step(f"rm {SUBMISSION}")  # its content is then the snapshot's alone
        folder = env.checkpoint(tmp_path / "store")
        kept = json.loads((folder / MANIFEST).read_text())["meta"]["snapshots"]["kept"]
        assert len(kept) == 1

        def escape(meta: dict) -> None:
            meta["snapshots"]["kept"][0]["file"] = "../../escaped.csv"

        with pytest.raises(CheckpointError, match="escaped"):
            env.reset(options={"checkpoint": _forged(folder, escape)})
        assert not (Path(tempfile.gettempdir()) / "escaped.csv").exists()
        assert not list(tmp_path.rglob("escaped.csv"))

        blob = tmp_path / "store" / "blobs" / kept[0]["sha256"][:2] / kept[0]["sha256"]
        blob.chmod(0o644)
        blob.write_bytes(blob.read_bytes().replace(b"0", b"7"))
        with pytest.raises(CheckpointError, match="sha256"):
            env.reset(options={"checkpoint": folder})
    finally:
        env.close()
