"""Shared fixtures: data caches, the real spaceship-titanic files, and the Docker engine."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mle_gym.competitions import get_competition
from mle_gym.data import prepare
from tests.batch_support import batch_args, mle_gym
from tests.prerequisites import IN_CI, REPO, SHARED, SPACESHIP_RAW, require, require_shared

__all__ = ["IN_CI", "REPO", "SHARED", "SPACESHIP_RAW"]


@pytest.fixture
def mle_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty data cache, used as MLE_GYM_HOME for the test."""
    home = tmp_path / "cache"
    home.mkdir()
    monkeypatch.setenv("MLE_GYM_HOME", str(home))
    return home


@pytest.fixture(scope="session")
def spaceship_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache with spaceship-titanic prepared from the real Kaggle files in ../shared."""
    require_shared("data", "spaceship-titanic", "raw")
    root = tmp_path_factory.mktemp("spaceship-cache")
    prepare(get_competition("spaceship-titanic"), SPACESHIP_RAW, root=root)
    return root


@pytest.fixture
def spaceship_home(spaceship_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """MLE_GYM_HOME pointing at the prepared spaceship-titanic cache."""
    monkeypatch.setenv("MLE_GYM_HOME", str(spaceship_cache))
    return spaceship_cache


def require_bwrap() -> None:
    """bubblewrap is part of the test machine's setup: missing it is a failure, not a skip."""
    if shutil.which("bwrap") is None:
        pytest.fail("bubblewrap (bwrap) is required for these tests: apt-get install bubblewrap")


@pytest.fixture(scope="session")
def docker_engine():
    """A reachable Docker engine with an agent image; CI (CI=true) fails without one."""
    from mle_gym.sandbox.engine import DockerUnavailableError, connect
    from mle_gym.sandbox.image import build_offline_image

    try:
        client = connect()
    except DockerUnavailableError as exc:
        if IN_CI:
            pytest.fail(f"CI=true but Docker is unavailable: {exc}", pytrace=False)
        pytest.skip(f"Docker engine unreachable: {exc}")
    build_offline_image(log=lambda _line: None)
    yield client
    client.close()


@pytest.fixture(params=["local", "docker"])
def backend(request: pytest.FixtureRequest) -> str:
    """Each env-level test runs on both sandboxes ("docker-runsc", given by `WITH_RUNSC`:
    docker with every container under gVisor)."""
    if request.param.startswith("docker"):
        if request.param == "docker-runsc":
            request.getfixturevalue("runsc")
        request.getfixturevalue("docker_engine")
        return "docker"
    require_bwrap()
    return request.param


@pytest.fixture
def runsc(docker_engine, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every docker sandbox of the test (its subprocesses' too) runs under gVisor's runsc,
    through $MLE_GYM_DOCKER_RUNTIME; CI's engine has it registered (.ci/docker-up.sh)."""
    from mle_gym.sandbox.docker_runtime import RUNTIME_VARIABLE

    require(
        "runsc" in (docker_engine.info().get("Runtimes") or {}),
        "the Docker engine has no runtime runsc: run .ci/docker-up.sh as root",
    )
    monkeypatch.setenv(RUNTIME_VARIABLE, "runsc")
    return "runsc"


@pytest.fixture(params=["default", "runsc"])
def docker_runtime(request: pytest.FixtureRequest) -> str:
    """A docker test run on the engine's default runtime and again under gVisor's runsc."""
    if request.param == "runsc":
        request.getfixturevalue("runsc")
    return request.param


#: A security test taking `backend` that must hold under gVisor too.
WITH_RUNSC = pytest.mark.parametrize("backend", ["local", "docker", "docker-runsc"], indirect=True)


@pytest.fixture(scope="session")
def digits_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data cache with the demo competition prepared, shared by the batch tests."""
    home = tmp_path_factory.mktemp("batch-cache")
    prepare(get_competition("sklearn-digits"), root=home)
    return home


@pytest.fixture(scope="session")
def runtime_home(tmp_path_factory: pytest.TempPathFactory, docker_engine) -> Path:
    """The pinned agent runtime built from the lock by `mle-gym build-runtime` (its wheels
    fetched from the package registry), once for the session: both backends then run the
    same interpreter and packages."""
    home = tmp_path_factory.mktemp("runtime-home")
    built = subprocess.run(
        [sys.executable, "-m", "mle_gym.cli", "build-runtime"],
        env={**os.environ, "MLE_GYM_HOME": str(home), "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    # no registry reachable: the wheels cannot be fetched
    require(built.returncode == 0, f"the agent runtime could not be built: {built.stdout}")
    assert "runtime ready" in built.stdout
    return home


@pytest.fixture(scope="session")
def local_batch(digits_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo competition, 3 seeds, scripted policy, 2 local workers: its run directory."""
    require_bwrap()
    run_dir = tmp_path_factory.mktemp("local-batch") / "run"
    mle_gym(*batch_args(run_dir, "--workers", "2"), home=digits_home)
    return run_dir


@pytest.fixture(autouse=True)
def _model_variables_restored():
    """Some scaffolds set OPENAI_BASE_URL / OPENAI_API_KEY for their libraries (AIDE does,
    with setdefault); a test must not hand them on to the next one's subprocesses."""
    names = ("OPENAI_BASE_URL", "OPENAI_API_KEY", "MLE_GYM_MODEL")
    saved = {name: os.environ.get(name) for name in names}
    yield
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(autouse=True)
def _sandbox_warnings_unsaid(monkeypatch: pytest.MonkeyPatch) -> None:
    """The local sandbox gives each warning once per process; every test starts as a fresh
    process would, so one that expects a warning sees it whatever ran before it."""
    local = sys.modules.get("mle_gym.sandbox.local")
    if local is not None:
        monkeypatch.setattr(local, "_warned", set())
