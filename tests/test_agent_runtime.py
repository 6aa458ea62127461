"""One pinned agent runtime: the same code, on the local and the docker backend, gets the
same libraries and so the same score (issue 30 item 4)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest

import mle_gym  # noqa: F401  (registers the envs)
from mle_gym.sandbox import agent_runtime
from mle_gym.sandbox.local import agent_python
from tests.conftest import require_bwrap
from tests.prerequisites import require

# A fixed, deterministic model on spaceship-titanic's real data: its score moves with the
# scikit-learn and pandas versions (0.80345 on the host's 1.9.1 against 0.81724 on Debian's
# 1.2.1 before the runtime), so equal scores say the two backends ran the same libraries.
SCRIPT = """
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier
train = pd.read_csv('/home/data/train.csv')
test = pd.read_csv('/home/data/test.csv')
def features(frame):
    out = frame[['Age', 'RoomService', 'FoodCourt', 'ShoppingMall', 'Spa', 'VRDeck']].copy()
    for column in ('HomePlanet', 'CryoSleep', 'Destination', 'VIP'):
        out[column] = frame[column].astype('category').cat.codes
    cabin = frame['Cabin'].str.split('/', expand=True)
    out['deck'] = cabin[0].astype('category').cat.codes
    out['side'] = cabin[2].astype('category').cat.codes
    return out
model = HistGradientBoostingClassifier(max_iter=200, learning_rate=0.1, random_state=0)
model.fit(features(train), train['Transported'])
pd.DataFrame({'PassengerId': test['PassengerId'],
              'Transported': model.predict(features(test)).astype(bool)}
             ).to_csv('/home/submission/submission.csv', index=False)
print('written')
"""


@pytest.fixture(scope="module")
def runtime_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The runtime built from the lock (its wheels fetched from the package registry)."""
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


def _score(backend: str, options: dict) -> tuple[float, dict]:
    with gym.make(
        "mle/spaceship-titanic-v0", backend=backend, step_timeout=300, sandbox_options=options
    ) as env:
        env.reset(seed=0)
        observation, *_ = env.step({"tool": "bash", "command": f"python3 - <<'PY'{SCRIPT}PY"})
        assert "written" in observation, observation
        _, _, terminated, _, info = env.step({"tool": "submit"})
    assert terminated and info["report"]["valid_submission"], info["report"]
    return info["report"]["score"], info["sandbox"]


def test_local_and_docker_score_the_same_under_the_pinned_runtime(
    runtime_home: Path, spaceship_home: Path, docker_engine
) -> None:
    require_bwrap()
    venv = agent_runtime.built_venv(runtime_home)
    assert venv is not None
    with pytest.MonkeyPatch.context() as patch:  # the default finds it where it was built
        patch.setenv("MLE_GYM_HOME", str(runtime_home))
        assert agent_python("auto") == venv
    image = agent_runtime.build_image(home=runtime_home, log=lambda _line: None).path
    local_score, local = _score("local", {"runtime": str(venv)})
    docker_score, docker = _score("docker", {"image": image})
    pinned = dict(pin.split("==") for pin in agent_runtime.pins())
    for sandbox in (local, docker):  # each episode records the lock's versions
        for name in ("numpy", "pandas", "scikit-learn", "scipy", "lightgbm"):
            assert sandbox["runtime"][name] == pinned[name], (name, sandbox)
    assert local["agent_python"] == str(venv) and docker["image"] == image
    assert local_score == docker_score


def test_runtime_is_named_by_its_pins_and_missing_one_falls_back_to_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lock = tmp_path / "lock.txt"
    lock.write_text("# a comment\nnumpy==2.2.6\n\npandas==2.2.3  # trailing\n")
    assert agent_runtime.pins(lock) == ["numpy==2.2.6", "pandas==2.2.3"]
    other = tmp_path / "other.txt"
    other.write_text("numpy==2.2.5\npandas==2.2.3\n")
    assert agent_runtime.lock_hash(lock) != agent_runtime.lock_hash(other)
    monkeypatch.setenv("MLE_GYM_HOME", str(tmp_path))
    assert agent_runtime.built_venv() is None
    assert agent_python("host") is None
    with pytest.raises(ValueError, match="a venv is expected"):
        agent_python(tmp_path)
