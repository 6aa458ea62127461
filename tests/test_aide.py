"""AIDE's own tree search driving the env, end to end against the scripted server."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import mle_gym
from mle_gym_baselines.scaffolds.aide import AidePolicy
from mle_gym.inversion import ScaffoldError
from mle_gym.policies import make_policy
from mle_gym.runner import Episode, Policy
from tests.agent_support import run_cli_policy, run_policy_episode
from tests.conftest import require_bwrap
from tests.llm_server import TRAIN_SCRIPT, Reply, ScriptedLLMServer, dead_endpoint, text, tool

pytestmark = pytest.mark.timeout(300)

BUGGY = 'import pandas as pd\n\npd.read_csv("./input/no_such_file.csv")\n'
IMPROVED = TRAIN_SCRIPT.replace("n_estimators=100", "n_estimators=150")
#: AIDE's search made deterministic: one draft, then always debug a buggy leaf if any.
SEARCH = {"agent": {"search": {"num_drafts": 1, "debug_prob": 1.0}}}


@pytest.fixture(autouse=True)
def _restore_openai_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    """AIDE's client is configured by process variables, which the policy sets if unset."""
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def aide_plan(draft: str = BUGGY) -> Any:
    """Draft (buggy), debug, improve; reviews read the execution output AIDE shows them.

    AIDE asks for a plan and one markdown code block, and reviews through the
    `submit_review` function.
    """

    def plan(request: dict[str, Any]) -> Reply:
        prompt = request["messages"][0]["content"]
        if request.get("tools"):
            assert request["tools"][0]["function"]["name"] == "submit_review"
            output = prompt.split("# Execution output", 1)[1]
            score = re.search(r"validation score: ([0-9.]+)", output)
            buggy = "Traceback" in output or score is None
            return tool(
                "submit_review",
                is_bug=buggy,
                lower_is_better=False,
                summary="it failed" if buggy else "it ran",
                metric=None if buggy else float(score.group(1)),
            )
        if "Your previous solution had a bug" in prompt:
            assert "no_such_file.csv" in prompt  # the failing run's output reached AIDE
            return text(f"Read the right files.\n\n```python\n{TRAIN_SCRIPT}```")
        if "previously developed solution" in prompt:
            return text(f"More trees.\n\n```python\n{IMPROVED}```")
        assert "sample_submission.csv" in prompt  # the data preview from the sandbox
        return text(f"A first attempt.\n\n```python\n{draft}```")

    return plan


def _episode(env_id: str, backend: str, policy: Policy) -> Episode:
    return run_policy_episode(env_id, backend, policy, max_steps=30)


@pytest.mark.parametrize("env_id", ["mle/sklearn-digits-v0", "mle/spaceship-titanic-v0"])
def test_draft_debug_improve_is_graded(
    env_id: str, backend: str, request: pytest.FixtureRequest
) -> None:
    request.getfixturevalue("spaceship_home" if "spaceship" in env_id else "mle_home")
    with ScriptedLLMServer(aide_plan()) as server:
        policy = AidePolicy(base_url=server.url, model="scripted-aide", steps=3, config=SEARCH)
        episode = _episode(env_id, backend, policy)
    tree = policy.trajectory()
    assert [n["stage"] for n in tree] == ["draft", "debug", "improve"]
    assert [n["parent"] for n in tree] == [None, 0, 1]
    assert [n["is_buggy"] for n in tree] == [True, False, False]
    best = 2 if tree[2]["metric"] > tree[1]["metric"] else 1
    copies = [
        s.action for s in episode.steps if isinstance(s.action, str) and s.action.startswith("cp ")
    ]
    assert [c.split()[1] for c in copies] == [
        f"/home/code/aide/{i + 1}/working/submission.csv" for i in ([1, 2] if best == 2 else [1])
    ]
    tools = [s.info["tool"] for s in episode.steps]
    assert tools == ["bash"] + ["create", "bash"] * 2 + ["bash"] + ["create", "bash"] + (
        ["bash"] if best == 2 else []
    ) + ["validate", "submit"]
    assert "FileNotFoundError" in episode.steps[2].observation
    assert episode.steps[-2].observation == "The submission is valid."
    assert episode.report["valid_submission"] and episode.report["score"] > 0.7
    assert episode.report["score"] == pytest.approx(tree[best]["metric"], abs=0.1)
    # 3 codes + 3 reviews, all to the configured endpoint and model, counted
    assert len(server.requests) == 6 and policy.usage["calls"] == 6
    assert {r["model"] for r in server.requests} == {"scripted-aide"}
    assert policy.usage["prompt_tokens"] > 0 and not policy.running


def test_dead_endpoint_ends_the_episode_with_a_clear_error(mle_home: Path) -> None:
    require_bwrap()
    url = dead_endpoint()
    policy = AidePolicy(base_url=url, model="m", max_retries=1)
    started = time.monotonic()
    with pytest.raises(
        ScaffoldError,
        match="aide: the scaffold stopped with EndpointError: "
        + re.escape(f"{url}/chat/completions: ")
        + "connection refused",
    ):
        _episode("mle/sklearn-digits-v0", "local", policy)
    assert time.monotonic() - started < 120 and not policy.running


def test_reset_stops_a_run_waiting_on_its_llm(mle_home: Path) -> None:
    """An episode cut short (here by the step budget) leaves no AIDE thread behind."""
    require_bwrap()
    with ScriptedLLMServer(aide_plan(draft=TRAIN_SCRIPT)) as server:
        policy = AidePolicy(base_url=server.url, model="m", steps=5, config=SEARCH)
        with gym.make("mle/sklearn-digits-v0", max_steps=2) as env:
            episode = mle_gym.run_episode(env, policy, seed=0)
            assert episode.steps[-1].truncated
            policy.reset()
    assert not policy.running
    assert not any(t.name == "scaffold-aide" for t in threading.enumerate())


def test_provider_model_names_are_refused() -> None:
    for name in ("gpt-4o", "o1-mini", "claude-3-5-sonnet", "gemini-2.0-flash"):
        with pytest.raises(ValueError, match="ignores the base URL"):
            AidePolicy(base_url="http://127.0.0.1:9/v1", model=name)
    assert isinstance(make_policy("aide", model="qwen2.5-coder"), AidePolicy)


def test_cli_runs_aide(mle_home: Path) -> None:
    require_bwrap()
    with ScriptedLLMServer(aide_plan(draft=TRAIN_SCRIPT)) as server:
        result = run_cli_policy("aide", server.url, "scripted-aide", "--max-steps", "6")
    assert result.returncode == 0, result.stdout + result.stderr  # 0: a valid submission
    # the step budget ends AIDE's search; the best node's submission, copied at step 4, counts
    assert "step 4: bash" in result.stdout and "step 6: bash" in result.stdout
    assert float(result.stdout.rsplit("reward (normalized):", 1)[1].split()[0]) > 0.5


def test_importing_the_adapter_keeps_the_host_warnings() -> None:

    code = (
        "import warnings; original = warnings.warn\n"
        "import mle_gym_baselines.scaffolds.aide\n"
        "print(warnings.warn is original)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "True", out.stderr
