"""One pinned agent runtime: on the local and the docker backend, the same interpreter with
the same importable modules, so the same code gets the same score."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest

import mle_gym  # noqa: F401  (registers the envs)
from mle_gym.sandbox import agent_runtime
from mle_gym.sandbox.base import SandboxSpec
from mle_gym.sandbox.docker import DockerSandbox
from mle_gym.sandbox.local import LocalSandbox, agent_python
from tests.conftest import require_bwrap

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


# Every top-level module the agent's `python3` finds (the standard library's, compiled-in
# ones and the installed packages'), imported, with its version or why it failed to import;
# the interpreter's full version string; every installed distribution. Modules that act on
# import (a browser, printed text) are listed but not imported.
MODULES = """
import importlib, importlib.metadata as metadata, json, pkgutil, sys
ACTING = {'antigravity', 'this', '__hello__', '__phello__'}
def version(name):
    if name in ACTING:
        return 'not imported'
    try:
        module = importlib.import_module(name)
    except BaseException as exc:
        return 'import fails: ' + type(exc).__name__
    return str(getattr(module, '__version__', ''))
names = sorted({m.name for m in pkgutil.iter_modules()} | set(sys.builtin_module_names))
listing = {
    'python': sys.version,
    'modules': {name: version(name) for name in names},
    'distributions': sorted(d.metadata['Name'] + '==' + d.version
                            for d in metadata.distributions()),
}
print(json.dumps(listing))
"""


def _modules(sandbox: LocalSandbox | DockerSandbox, public: Path) -> dict:
    sandbox.start(SandboxSpec(public))
    try:
        result = sandbox.run(
            f"python3 - <<'PY' 2>/dev/null{MODULES}PY", 300, max_output_chars=1_000_000
        )
    finally:
        sandbox.stop()
    assert result.exit_code == 0, result.output[-2000:]
    return json.loads(result.output.strip().splitlines()[-1])


def test_both_backends_run_the_same_interpreter_with_the_same_modules(
    runtime_home: Path, tmp_path: Path
) -> None:
    require_bwrap()
    root = agent_runtime.built_root(runtime_home)
    assert root is not None
    public = tmp_path / "public"
    public.mkdir()
    local = _modules(LocalSandbox(runtime=root), public)
    docker = _modules(DockerSandbox(image=agent_runtime.runtime_image()), public)
    assert local["python"] == docker["python"]
    differ = {
        name: (local["modules"].get(name), docker["modules"].get(name))
        for name in local["modules"].keys() | docker["modules"].keys()
        if local["modules"].get(name) != docker["modules"].get(name)
    }
    assert not differ, differ
    assert local["distributions"] == docker["distributions"]
    # the lock's packages, and nothing the base image installed for its own Python
    pins = {pin.lower() for pin in agent_runtime.pins()}
    assert {name.lower() for name in local["distributions"]} == pins
    assert local["modules"]["sklearn"] == "1.6.1" and "xgboost" not in local["modules"]


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
    runtime_home: Path, spaceship_home: Path
) -> None:
    require_bwrap()
    root = agent_runtime.built_root(runtime_home)
    assert root is not None
    with pytest.MonkeyPatch.context() as patch:  # the default finds it where it was built
        patch.setenv("MLE_GYM_HOME", str(runtime_home))
        assert agent_python("auto") == root
    image = agent_runtime.runtime_image()
    local_score, local = _score("local", {"runtime": str(root)})
    docker_score, docker = _score("docker", {"image": image})
    pinned = dict(pin.split("==") for pin in agent_runtime.pins())
    for sandbox in (local, docker):  # each episode records the lock's versions
        for name in ("numpy", "pandas", "scikit-learn", "scipy", "lightgbm"):
            assert sandbox["runtime"][name] == pinned[name], (name, sandbox)
    assert local["runtime"] == docker["runtime"]
    assert local["agent_python"] == str(root) and docker["image"] == image
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
    assert agent_runtime.built_root() is None
    assert agent_python("host") is None
    with pytest.raises(ValueError, match="a venv or a runtime's root is expected"):
        agent_python(tmp_path)


def test_a_sandbox_that_cannot_run_on_the_runtime_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Unisolated or with GPUs, the local sandbox runs on the host's system: "auto" falls
    back to this Python with a warning, and a runtime named outright is refused."""
    monkeypatch.setenv("MLE_GYM_HOME", str(tmp_path))
    root = agent_runtime.runtime_dir() / "root"
    (root / agent_runtime.VENV.lstrip("/")).mkdir(parents=True)
    (root / agent_runtime.VENV.lstrip("/") / "pyvenv.cfg").write_text("home = /usr/bin\n")
    assert agent_runtime.built_root() == root
    assert agent_python("auto") == root.resolve()
    with pytest.warns(RuntimeWarning, match="needs bubblewrap and no `gpus`"):
        assert agent_python("auto", on_host_system=True) is None
    with pytest.raises(ValueError, match="needs bubblewrap and no `gpus`"):
        agent_python(root, on_host_system=True)
    with pytest.warns(RuntimeWarning, match="NOT ISOLATED"):  # the other was said once
        box = LocalSandbox(isolation="none")
    assert box.runtime is None and box.describe()["agent_python"] == "host"
