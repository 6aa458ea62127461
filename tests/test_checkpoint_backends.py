"""A checkpoint of one backend goes on on the other under the same data and runtime (the
pinned runtime: the same interpreter and packages on both), and is refused, naming what
differs, under another runtime or other data."""

from __future__ import annotations

from pathlib import Path

import pytest

from mle_gym.data.identity import data_identity
from mle_gym.envs import CompetitionEnv
from mle_gym.sandbox import agent_runtime
from tests.conftest import require_bwrap
from tests.test_episode_checkpoint import OPTIONS, _forged


def _pinned(backend: str, runtime_home: Path) -> dict:
    """The env options that run `backend` on the pinned runtime."""
    if backend == "local":
        root = agent_runtime.built_root(runtime_home)
        assert root is not None
        return {"runtime": str(root)}
    return {"image": agent_runtime.runtime_image()}


@pytest.mark.parametrize("source,target", [("local", "docker"), ("docker", "local")])
def test_a_checkpoint_goes_on_on_the_other_backend(
    source: str,
    target: str,
    runtime_home: Path,
    digits_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    require_bwrap()
    monkeypatch.setenv("MLE_GYM_HOME", str(digits_home))
    taken = CompetitionEnv(
        "sklearn-digits", backend=source, sandbox_options=_pinned(source, runtime_home), **OPTIONS
    )
    resumed = CompetitionEnv(
        "sklearn-digits", backend=target, sandbox_options=_pinned(target, runtime_home), **OPTIONS
    )
    try:
        taken.reset(seed=3)
        taken.step({"tool": "create", "path": "/home/code/notes/a.txt", "file_text": "hello"})
        taken.step("echo scratch > /tmp/scratch.txt && echo mine > ~/in-home.txt")
        *_, info = taken.step("mkdir -p /home/code/work && cd /home/code/work && export MY_VAR=7")
        runtime = info["sandbox"]["runtime"]
        folder = taken.checkpoint(tmp_path / "store")

        opening, info = resumed.reset(options={"checkpoint": str(folder)})
        assert f"taken on the {source} backend and goes on on {target}" in opening
        assert info["resumed_from"]["backend"] == source and info["step"] == 3
        assert info["steps_left"] == OPTIONS["max_steps"] - 3
        observation, *_, info = resumed.step(
            'pwd; echo "$MY_VAR"; cat /home/code/notes/a.txt; echo; cat /tmp/scratch.txt'
        )
        assert observation.split() == ["/home/code/work", "7", "hello", "scratch"]
        assert info["step"] == 4 and info["sandbox"]["runtime"] == runtime
        if source == "docker":  # docker's home, /home/agent, is no place of the local sandbox
            assert "/home/agent: not a writable place of this sandbox; its 1 entries" in opening
        else:  # the local sandbox's home is /tmp, a place of both
            observation, *_ = resumed.step("cat /tmp/in-home.txt")
            assert observation.strip() == "mine"

        # the same checkpoint under another runtime or on other data: refused, naming what
        # differs, before the running episode is touched
        other_runtime = _forged(folder, lambda meta: meta["runtime"].update(numpy="1.0.0"))
        with pytest.raises(ValueError, match=r"another runtime: numpy 1\.0\.0 \(this env: 2\."):
            resumed.reset(options={"checkpoint": other_runtime})
        other_data = _forged(folder, lambda meta: meta.update(data_identity="sha256:0"))
        with pytest.raises(ValueError, match="taken on other data: its /home/data is sha256:0"):
            resumed.reset(options={"checkpoint": other_data})
        observation, *_ = resumed.step("cat /home/code/notes/a.txt")
        assert observation.strip() == "hello"
    finally:
        taken.close()
        resumed.close()


def test_a_new_env_under_another_runtime_refuses_the_checkpoint(
    digits_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A new env knows its runtime only once its sandbox runs: the resume starts it, finds
    the runtime differs, and closes it before restoring anything."""
    require_bwrap()
    monkeypatch.setenv("MLE_GYM_HOME", str(digits_home))
    host = {"sandbox_options": {"runtime": "host"}, **OPTIONS}
    env = CompetitionEnv("sklearn-digits", backend="local", **host)
    fresh = CompetitionEnv("sklearn-digits", backend="local", **host)
    try:
        env.reset(seed=0)
        env.step("echo x > /home/code/x")
        folder = env.checkpoint(tmp_path / "store")
        forged = _forged(folder, lambda meta: meta["runtime"].update(python="2.7.18"))
        with pytest.raises(ValueError, match=r"another runtime: python 2\.7\.18 \(this env: 3\."):
            fresh.reset(options={"checkpoint": forged})
        assert fresh.episode.done and not fresh.episode.started
        _, info = fresh.reset(options={"checkpoint": folder})  # the same runtime: it goes on
        assert info["step"] == 1
    finally:
        env.close()
        fresh.close()


def test_the_host_s_python_and_docker_s_image_are_not_one_runtime(
    digits_home: Path, docker_engine, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Without the pinned runtime, a local checkpoint (this host's Python and packages) does
    not go on in docker (its image's): refused, naming the packages."""
    require_bwrap()
    monkeypatch.setenv("MLE_GYM_HOME", str(digits_home))
    local = CompetitionEnv(
        "sklearn-digits", backend="local", sandbox_options={"runtime": "host"}, **OPTIONS
    )
    docker = CompetitionEnv("sklearn-digits", backend="docker", **OPTIONS)
    try:
        local.reset(seed=0)
        local.step("echo x > /home/code/x")
        folder = local.checkpoint(tmp_path / "store")
        with pytest.raises(ValueError, match=r"another runtime: .*packages [0-9a-f]{16} \(this"):
            docker.reset(options={"checkpoint": folder})
        assert docker.episode.done and not docker.episode.started
    finally:
        local.close()
        docker.close()


def test_data_identity_follows_the_files_content(tmp_path: Path) -> None:
    folders = [tmp_path / name / "public" for name in ("one", "two", "three", "four")]
    for folder in folders:
        (folder / "images").mkdir(parents=True)
        (folder / "train.csv").write_text("id,label\n1,0\n")
        (folder / "images" / "1.png").write_bytes(b"\x89PNG")
    one, two, three, four = folders
    (three / "train.csv").write_text("id,label\n1,1\n")  # same size, other content
    (four / "images" / "1.png").rename(four / "images" / "2.png")
    assert data_identity(one) == data_identity(two)
    assert (one.parent / ".public.identity.json").is_file()  # kept beside the folder
    assert data_identity(three) != data_identity(one) != data_identity(four)
