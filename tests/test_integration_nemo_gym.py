"""NeMo-Gym adapter, end to end with the real `nemo-gym` package: `ng_run` starts mle_gym's
resources server, NeMo-Gym's own simple_agent and its vllm_model server (pointed at the
scripted OpenAI-compatible server), and `ng_collect_rollouts` runs a dataset row through the
agent's /run; the rollout's verify output is mle_gym's grade.

nemo-gym 0.4 needs Python >= 3.12 and pins openai <= 2.7.2 and mcp < 2, so it lives in a venv
of its own (.ci/setup.d/rl_hubs.sh); everything NeMo-Gym runs there, as subprocesses.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import mle_gym
from mle_gym.data.cache import CompetitionDirs
from tests.conftest import require_bwrap
from tests.llm_server import (
    LOOK,
    RUN,
    SCRIPT_PATH,
    TRAIN_SCRIPT,
    Reply,
    ScriptedLLMServer,
    text,
    tool,
)
from tests.prerequisites import REPO, rl_hub_venv

pytestmark = pytest.mark.timeout(600)

SUBMISSION = "/home/submission/submission.csv"
#: NeMo-Gym's own model server config (Responses API in front of a chat-completions endpoint).
MODEL_CONFIG = "responses_api_models/vllm_model/configs/vllm_model.yaml"
#: Runs in the venv: the environment directory ng_run starts, with the dataset's rows.
LAYOUT = """
import json, sys
from mle_gym.integrations.nemo_gym import dataset_row, share_venv, write_environment

rows = [dataset_row(c, seed=s) for c, s in json.loads(sys.argv[2])]
rows[-1]["responses_create_params"]["input"][1]["content"] += sys.argv[3]
print(share_venv(sys.argv[1]))
print(write_environment(sys.argv[1], rows, backend="local", max_steps=20,
                        max_output_chars=1000000, max_agent_steps=12))
"""
#: The dataset: a full episode on each competition, then one that never submits (its prompt
#: ends with QUICK, so the scripted model knows which conversation it is in).
ROWS = [("sklearn-digits", 2), ("spaceship-titanic", 2), ("sklearn-digits", 5)]
QUICK = "\n\n(A quick one: copy the sample submission.)"


def nemo_bin() -> Path:
    """The bin directory of the NeMo-Gym venv (ng_run, ng_collect_rollouts, python)."""
    return rl_hub_venv("nemo-gym") / "bin"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def venv_env() -> dict[str, str]:
    """This checkout's mle_gym first on the path, the venv's tools first on PATH."""
    return {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "PATH": f"{nemo_bin()}:{os.environ.get('PATH', '')}",
        "WANDB_MODE": "disabled",
        # ng_run's Ray cluster on loopback only, as in tests/test_ray.py
        "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
        "RAY_AUTH_MODE": "disabled",
        "RAY_USAGE_STATS_ENABLED": "0",
    }


@contextmanager
def ng_run(root: Path, config: Path, llm_url: str, head_port: int) -> Iterator[None]:
    """`ng_run` with mle_gym's config and NeMo-Gym's model server, every server in the venv
    (share_venv's links under root/venvs); until all servers are up."""
    venvs = root / "venvs"
    log_path = root / "ng_run.log"
    command = [
        str(nemo_bin() / "ng_run"),
        f"+config_paths=[{config},{MODEL_CONFIG}]",
        f"+head_server={{host: 127.0.0.1, port: {head_port}}}",
        "+default_host=127.0.0.1",
        "+skip_venv_if_present=true",
        f"+uv_venv_dir={venvs}",
        f"+policy_base_url={llm_url}",
        "+policy_api_key=k",
        "+policy_model_name=scripted",
    ]
    with log_path.open("w") as log:
        process = subprocess.Popen(
            command, cwd=root, env=venv_env(), stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        try:
            for _ in range(300):  # bounded: about 5 minutes on a loaded 2-core machine
                if process.poll() is not None:
                    pytest.fail(f"ng_run exited:\n{log_path.read_text()[-5000:]}")
                if "servers ready!" in log_path.read_text():
                    break
                time.sleep(1)
            else:
                pytest.fail(f"ng_run's servers did not start:\n{log_path.read_text()[-5000:]}")
            yield
        finally:
            os.killpg(process.pid, signal.SIGINT)  # ng_run stops its servers and Ray
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def collect(root: Path, data: Path, head_port: int) -> list[dict[str, Any]]:
    """`ng_collect_rollouts` over the dataset through mle_gym's simple_agent."""
    out = root / "rollouts.jsonl"
    result = subprocess.run(
        [
            str(nemo_bin() / "ng_collect_rollouts"),
            "+agent_name=mle_gym_simple_agent",
            f"+input_jsonl_fpath={data}",
            f"+output_jsonl_fpath={out}",
            f"+head_server={{host: 127.0.0.1, port: {head_port}}}",
        ],
        cwd=root, env=venv_env(), capture_output=True, text=True, timeout=400,
    )  # fmt: skip
    assert result.returncode == 0, (result.stdout + result.stderr)[-5000:]
    rollouts = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    return sorted(rollouts, key=lambda r: r["_ng_task_index"])  # written as they finish


def episode() -> list:
    """Look, write the script, a malformed call, run, validate, print the file, submit, stop."""
    return [
        tool("bash", command=LOOK),
        tool("create", path=SCRIPT_PATH, file_text=TRAIN_SCRIPT, expect="sample_submission"),
        tool("bash", expect="File created: /home/code/train.py"),
        tool("bash", command=RUN, expect="needs the argument 'command'"),
        tool("validate", expect="predictions to /home/submission"),
        tool("bash", command=f"cat {SUBMISSION}", expect="The submission is valid."),
        tool("submit"),
        text("I submitted the predictions."),
    ]


def unsubmitted() -> list:
    """Copy the sample submission and stop without submitting."""
    return [
        tool("bash", command=f"cp /home/data/sample_submission.csv {SUBMISSION} && echo ok"),
        text("That will do.", expect="ok"),
    ]


def respond(request: dict[str, Any]) -> Reply:
    """The reply for a conversation's next turn: rows run concurrently, in any order."""
    messages = request["messages"]
    replies = unsubmitted() if messages[1]["content"].endswith(QUICK) else episode()
    return replies[sum(m["role"] == "tool" for m in messages)]


def conversation(requests: list[dict[str, Any]], prompt_part: str) -> list[dict[str, Any]]:
    """The requests of the conversation whose task statement contains `prompt_part`, in order."""
    found = [r for r in requests if prompt_part in r["messages"][1]["content"]]
    return sorted(found, key=lambda r: len(r["messages"]))


def test_rollout_collection_grades_episodes(spaceship_home: Path, tmp_path: Path) -> None:
    """One ng_run, three rows run in order: spaceship-titanic's data is the real Kaggle
    files (the cache spaceship_home made), sklearn-digits is prepared into it on demand."""
    nemo_bin()  # skips, or fails under CI=true, without the venv
    require_bwrap()
    root = tmp_path / "gym"
    layout = subprocess.run(
        [str(nemo_bin() / "python"), "-c", LAYOUT, str(root), json.dumps(ROWS), QUICK],
        env=venv_env(), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert layout.returncode == 0, layout.stderr[-3000:]
    *_, venvs, config = (Path(line) for line in layout.stdout.strip().splitlines())
    assert venvs == root / "venvs"
    data = config.parent.parent / "data" / "example.jsonl"
    head_port = free_port()

    with ScriptedLLMServer(respond) as llm, ng_run(root, config, llm.url, head_port):
        rollouts = collect(root, data, head_port)

    assert llm.mismatches == [] and len(llm.requests) == 8 + 8 + 2
    assert [(r["competition_id"], r["seed"]) for r in rollouts] == ROWS
    statements = {"sklearn-digits": "Handwritten digits", "spaceship-titanic": "Spaceship"}
    for index, (competition_id, statement) in enumerate(statements.items()):
        requests = conversation(llm.requests, statement)
        if competition_id == "sklearn-digits":
            requests = [r for r in requests if not r["messages"][1]["content"].endswith(QUICK)]
        assert len(requests) == 8
        first = requests[0]
        assert [m["role"] for m in first["messages"]] == ["system", "user"]
        assert SUBMISSION in first["messages"][1]["content"]
        assert sorted(t["function"]["name"] for t in first["tools"]) == sorted(
            s["function"]["name"] for s in mle_gym.tool_schemas()
        )
        printed = requests[6]["messages"][-1]
        assert printed["role"] == "tool"
        kept = tmp_path / f"{competition_id}.csv"
        kept.write_text(str(printed["content"]).rstrip("\n") + "\n")
        expected = mle_gym.evaluate(competition_id, kept)

        rollout = rollouts[index]
        assert rollout["submitted"] is True
        assert rollout["reward"] == pytest.approx(expected["reward"]) and expected["reward"] > 0
        for key in ("score", "valid", "above_median", "any_medal", "medal", "normalized_score"):
            assert rollout[key] == pytest.approx(expected[key]), (competition_id, key)
        assert rollout["valid"] and rollout["score"] > 0.7
        assert rollout["steps"] == 6 and rollout["invalid_calls"] == 1
        calls = [o["name"] for o in rollout["response"]["output"] if o["type"] == "function_call"]
        assert calls == ["bash", "create", "bash", "bash", "validate", "bash", "submit"]

    # The model stopped without submitting: /verify graded the submission present.
    sample = CompetitionDirs.of("sklearn-digits").public / "sample_submission.csv"
    expected = mle_gym.evaluate("sklearn-digits", sample)
    assert rollouts[2]["submitted"] is False and rollouts[2]["steps"] == 2
    assert rollouts[2]["valid"] and rollouts[2]["score"] == pytest.approx(expected["score"])
    assert rollouts[2]["reward"] == pytest.approx(expected["reward"])


#: Runs in the venv: an episode made as /seed_session makes it, from a server config with
#: data="dev" and reward_mode="dense", stepped as the tool endpoints step it, ended as
#: /verify ends it (the submission present is graded).
DEV_EPISODE = """
import json, sys
from mle_gym.integrations.episode import ToolEpisode
from mle_gym.integrations.nemo_gym import MleGymResourcesServerConfig

config = MleGymResourcesServerConfig(
    host="127.0.0.1", port=0, entrypoint="app.py", name="mle_gym", data="dev",
    reward_mode="dense", max_steps=10, step_timeout=120,
)
episode = ToolEpisode("sklearn-digits", 0, **config.make_options())
outputs = [episode.reset()]
rewards = []
for tool, arguments in json.loads(sys.argv[1]):
    outputs.append(episode.call(tool, arguments))
    rewards.append(episode.last_reward)
outcome = episode.finish()
episode.close()
print(json.dumps({"options": config.make_options(), "outputs": outputs, "rewards": rewards,
                  "outcome": outcome}))
"""


def test_the_dev_variant_and_the_dense_reward_reach_the_env(
    digits_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server config's data="dev" and reward_mode="dense" reach its episodes: the task
    names the development variant, validate reports the development score, and /verify's
    reward is the sum of the dense rewards, the final normalised score."""
    require_bwrap()
    monkeypatch.setenv("MLE_GYM_HOME", str(digits_home))
    actions = [
        ("create", {"path": SCRIPT_PATH, "file_text": TRAIN_SCRIPT}),
        ("bash", {"command": RUN}),
        ("validate", {}),
    ]
    result = subprocess.run(
        [str(nemo_bin() / "python"), "-c", DEV_EPISODE, json.dumps(actions)],
        env=venv_env(), capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    answer = json.loads(result.stdout.strip().splitlines()[-1])
    assert answer["options"]["data"] == "dev" and answer["options"]["reward_mode"] == "dense"
    assert "development variant" in answer["outputs"][0]
    assert "Development score" in answer["outputs"][3]
    outcome = answer["outcome"]
    assert answer["rewards"][1] > 0.5 and outcome["valid"]
    assert outcome["reward"] == pytest.approx(max(0.0, outcome["normalized_score"]), abs=1e-9)
