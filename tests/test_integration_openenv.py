"""OpenEnv adapter, end to end with the real `openenv` package: mle_gym's OpenEnv server on
127.0.0.1, and OpenEnv's own WebSocket client (EnvClient, typed with mle_gym's action and
observation) stepping a graded episode; then the class TRL's `environment_factory` takes.

openenv pins mcp < 2 (through fastmcp), which conflicts with the mini-swe-agent extra's
mcp 2, so it lives in a venv of its own (.ci/setup.d/rl_hubs.sh) and runs as subprocesses.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import mle_gym
from mle_gym.data.cache import CompetitionDirs
from tests.conftest import require_bwrap
from tests.llm_server import LOOK, RUN, SCRIPT_PATH, TRAIN_SCRIPT
from tests.prerequisites import REPO, rl_hub_venv

pytestmark = pytest.mark.timeout(300)

SUBMISSION = "/home/submission/submission.csv"

#: Runs in the openenv venv: OpenEnv's client steps the actions given, and prints each result.
CLIENT = """
import json, sys
from mle_gym.integrations.openenv import MleGymAction, MleGymEnvClient

spec = json.loads(sys.argv[1])
results = []
with MleGymEnvClient(base_url=spec["url"], message_timeout_s=600).sync() as client:
    first = client.reset(competition_id=spec["competition_id"], seed=3)
    results.append({"output": first.observation.output, "done": first.done})
    for tool, arguments in spec["actions"]:
        step = client.step(MleGymAction(tool=tool, arguments=arguments))
        results.append({"output": step.observation.output, "done": step.done,
                        "reward": step.reward, "grade": step.observation.grade})
    state = client.state()
print(json.dumps({"results": results, "state": state.model_dump()}))
"""

#: Runs in the openenv venv: the class TRL's GRPOTrainer(environment_factory=...) makes.
TRL_ENV = """
import inspect, json, sys
from mle_gym.integrations.openenv import tool_environment

factory = tool_environment(sys.argv[1])
env = factory()  # TRL calls it with no arguments
first = env.reset(competition_id="sklearn-digits", seed=1, prompt="a dataset column")
tools = sorted(n for n, m in inspect.getmembers(env, inspect.ismethod)
               if not n.startswith("_") and n not in ("reset", "close"))
out = env.bash("cp /home/data/sample_submission.csv /home/submission/submission.csv && echo ok")
end = env.submit()
try:
    env.bash("ls")
    after = None
except ValueError as exc:
    after = str(exc)
print(json.dumps({"first": first, "tools": tools, "bash_doc": env.bash.__doc__, "out": out,
                  "end": end, "reward": env.reward, "grade": env.grade, "after": after}))
env.close()
"""


def openenv_python() -> Path:
    """The OpenEnv venv's interpreter; skips (fails under CI=true) without the venv."""
    return rl_hub_venv("openenv") / "bin" / "python"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def venv_env() -> dict[str, str]:
    """This checkout's mle_gym first on the venv's path; the data cache as the test set it."""
    return {**os.environ, "PYTHONPATH": str(REPO)}


@contextmanager
def openenv_server(default_competition: str, log_path: Path) -> Iterator[str]:
    """`python -m mle_gym.integrations.openenv` on 127.0.0.1, in the openenv venv, with the
    data cache the test set (MLE_GYM_HOME)."""
    openenv_python()
    require_bwrap()
    port = free_port()
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [str(openenv_python()), "-m", "mle_gym.integrations.openenv", default_competition,
             "--port", str(port), "--max-steps", "20", "--max-output-chars", "1000000"],
            env=venv_env(), stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        url = f"http://127.0.0.1:{port}"
        try:
            for _ in range(240):  # bounded: about 60 s
                if process.poll() is not None:
                    pytest.fail(f"the server exited: {log_path.read_text()}")
                try:
                    with urllib.request.urlopen(f"{url}/health", timeout=2) as answer:
                        if answer.status == 200:
                            break
                except OSError:
                    time.sleep(0.25)
            else:
                pytest.fail(f"the server did not start: {log_path.read_text()}")
            yield url
        finally:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def run_in_venv(script: str, *args: str) -> dict[str, Any]:
    result = subprocess.run(
        [str(openenv_python()), "-c", script, *args],
        env=venv_env(), capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("competition_id", ["sklearn-digits", "spaceship-titanic"])
def test_client_steps_a_graded_episode(
    competition_id: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """The client picks the competition at reset (spaceship-titanic on a server whose default
    is sklearn-digits); the last step's grade is what mle_gym.evaluate gives the same file."""
    request.getfixturevalue("spaceship_home" if "spaceship" in competition_id else "mle_home")
    actions = [
        ("bash", {"command": LOOK}),
        ("create", {"path": SCRIPT_PATH, "file_text": TRAIN_SCRIPT}),
        ("bash", {}),  # malformed: no command
        ("bash", {"command": RUN}),
        ("validate", {}),
        ("bash", {"command": f"cat {SUBMISSION}"}),
        ("submit", {}),
        ("bash", {"command": "ls"}),  # after the end
    ]
    with openenv_server("sklearn-digits", tmp_path / "server.log") as url:
        spec = {"url": url, "competition_id": competition_id, "actions": actions}
        answer = run_in_venv(CLIENT, json.dumps(spec))
    results, state = answer["results"], answer["state"]

    assert SUBMISSION in results[0]["output"] and not results[0]["done"]
    assert '{"tool": "create"' not in results[0]["output"]  # the dict-action manual is left out
    assert "sample_submission" in results[1]["output"]
    assert results[3]["output"] == "tool 'bash' needs the argument 'command'"
    assert "predictions to /home/submission" in results[4]["output"]
    assert "valid" in results[5]["output"].lower()
    assert [r["done"] for r in results] == [False] * 7 + [True, True]
    assert "episode is over" in results[8]["output"]

    kept = tmp_path / "submission.csv"
    kept.write_text(results[6]["output"].rstrip("\n") + "\n")
    expected = mle_gym.evaluate(competition_id, kept)
    grade = results[7]["grade"]
    assert results[7]["reward"] == pytest.approx(expected["reward"]) and expected["reward"] > 0
    for key in ("score", "valid", "above_median", "any_medal", "medal", "normalized_score"):
        assert grade[key] == pytest.approx(expected[key]), key
    assert grade["valid"] and grade["score"] > 0.7 and grade["steps"] == 6

    assert state["competition_id"] == competition_id and state["done"]
    assert state["step_count"] == 6 and state["invalid_calls"] == 1
    assert state["grade"]["reward"] == pytest.approx(expected["reward"])


def test_trl_environment_factory_class(mle_home: Path, tmp_path: Path) -> None:
    """TRL builds one instance per generation with no arguments, calls reset(**row), exposes
    the public methods as tools (schemas from their docstrings), reads `reward`."""
    with openenv_server("sklearn-digits", tmp_path / "server.log") as url:
        answer = run_in_venv(TRL_ENV, url)
    assert answer["tools"] == sorted(t["function"]["name"] for t in mle_gym.tool_schemas())
    assert "Args:\n    command: the command line" in answer["bash_doc"]
    assert SUBMISSION in answer["first"] and answer["out"].strip() == "ok"
    sample = CompetitionDirs.of("sklearn-digits").public / "sample_submission.csv"
    expected = mle_gym.evaluate("sklearn-digits", sample)
    assert answer["reward"] == pytest.approx(expected["reward"])
    assert answer["grade"]["valid"] and answer["grade"]["score"] == pytest.approx(expected["score"])
    assert "episode is over" in answer["after"]


#: Runs in the openenv venv: the server's command line with --data dev --reward-mode dense
#: (uvicorn left out), then an episode of the environment it would serve, step by step.
DEV_SERVER = """
import json, sys
import uvicorn
import mle_gym.integrations.openenv as served
from mle_gym.integrations.openenv import MleGymAction, MleGymEnvironment

options = []
served.create_server = lambda competition, sessions, **given: options.append(given)
uvicorn.run = lambda *args, **kwargs: None
served.main(["sklearn-digits", "--data", "dev", "--reward-mode", "dense", "--max-steps", "10"])
env = MleGymEnvironment("sklearn-digits", **options[0])
results = [{"output": env.reset(seed=0).output}]
for tool, arguments in json.loads(sys.argv[1]):
    step = env.step(MleGymAction(tool=tool, arguments=arguments))
    results.append({"output": step.output, "reward": step.reward, "grade": step.grade})
env.close()
print(json.dumps({"options": options[0], "results": results}))
"""


def test_the_dev_variant_and_the_dense_reward_reach_the_env(
    digits_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--data dev --reward-mode dense` reach the served env: its task names the development
    variant, validate reports the development score, each step's reward is the change it
    made, and the grade's reward is their sum, the final normalised score."""
    require_bwrap()
    monkeypatch.setenv("MLE_GYM_HOME", str(digits_home))
    actions = [
        ("bash", {"command": f"cp /home/data/sample_submission.csv {SUBMISSION}"}),
        ("create", {"path": SCRIPT_PATH, "file_text": TRAIN_SCRIPT}),
        ("bash", {"command": RUN}),
        ("validate", {}),
        ("submit", {}),
    ]
    answer = run_in_venv(DEV_SERVER, json.dumps(actions))
    options, results = answer["options"], answer["results"]
    assert options["data"] == "dev" and options["reward_mode"] == "dense"
    assert "development variant" in results[0]["output"]
    assert "Development score" in results[4]["output"]
    rewards = [r["reward"] for r in results[1:]]
    assert rewards[1] == rewards[3] == 0.0 and rewards[2] > 0.5
    grade = results[5]["grade"]
    assert grade["reward"] == pytest.approx(sum(rewards))
    assert grade["reward"] == pytest.approx(max(0.0, grade["normalized_score"]), abs=1e-9)
