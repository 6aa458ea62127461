"""MLAB (MLAgentBench's ResearchAgent loop) driving the env, end to end against the scripted
server: its text format parsed, its actions mapped onto env steps, the episode graded."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import mle_gym
from mle_gym_baselines.scaffolds.mlab import ENTRIES, MlabPolicy, parse_response
from mle_gym.policies import make_policy
from tests.agent_support import run_cli_policy, run_policy_episode
from tests.conftest import require_bwrap
from tests.llm_server import TRAIN_SCRIPT, Reply, ScriptedLLMServer, last_text, sequence, text
from tests.prerequisites import require_shared

pytestmark = pytest.mark.timeout(300)

#: The training script the "AI edit" writes: reads /home/data, writes the submission.
SCRIPT = TRAIN_SCRIPT.replace(
    '("./input", "./working/submission.csv")', '("/home/data", "/home/submission/submission.csv")'
)


def answer(action: str, action_input: str, status: str = "1. look at the data") -> str:
    return (
        f"Reflection: nothing yet\nResearch Plan and Status: {status}\nFact Check: none\n"
        f"Thought: next, {action}\nAction: {action}\nAction Input: {action_input}\n"
    )


def mlab_plan(prompts: list[str]) -> Any:
    """The main loop's answers in order (one malformed, one with bad JSON); the edit LLM's
    answer is picked by its prompt. Every prompt is kept for the test to read."""
    replies = [
        answer("List Files", '{"dir_path": "/home/data"}'),
        "Thought: I forgot the format",  # asked again
        answer("Edit Script (AI)", '{"script_name": "train.py", "edit_instruction": "a forest",'),
        answer(
            "Edit Script (AI)",
            json.dumps(
                {"script_name": "train.py", "edit_instruction": "a forest", "save_name": "train.py"}
            ),
        ),
        answer("Execute Script", '```json\n{"script_name": "train.py"}\n```'),
        answer("Validate Submission", "{}"),
        answer("Final Answer", '{"final_answer": "a random forest"}', "**done**"),
    ]
    lock = threading.Lock()

    def plan(request: dict[str, Any]) -> Reply:
        prompt = last_text(request)
        with lock:
            prompts.append(prompt)
            if prompt.startswith("Given this python script"):
                return text(f"Here it is.\n```python\n{SCRIPT}```\n")
            return text(replies.pop(0))

    return plan


def test_research_agent_is_graded(mle_home: Path, backend: str) -> None:
    prompts: list[str] = []
    with ScriptedLLMServer(mlab_plan(prompts)) as server:
        policy = MlabPolicy(base_url=server.url, model="scripted-mlab", max_tokens=512)
        episode = run_policy_episode("mle/sklearn-digits-v0", backend, policy, max_steps=20)
        assert {r.get("max_tokens") for r in server.requests} == {512}
    tools = [s.info["tool"] for s in episode.steps]
    # ls; cat (the script is new); create; python; validate; submit
    assert tools == ["bash", "bash", "create", "bash", "validate", "submit"], tools
    assert episode.steps[2].action["path"] == "/home/code/train.py"
    assert "validation score" in episode.steps[3].observation
    assert episode.steps[4].observation == "The submission is valid."
    assert episode.report["valid_submission"] and episode.report["score"] > 0.7
    # the prompt: the research problem, every tool, the format; history reaches the model
    first = prompts[0]
    assert "Research Problem:" in first and "/home/data" in first and "digit" in first.lower()
    assert all(f"- {name}:" in first for name in ("List Files", "Edit Script (AI)"))
    assert all(f"{entry}:" in first for entry in ENTRIES)
    assert "sample_submission.csv" in prompts[1]  # List Files' observation
    assert "incorrect format (missing entries" in prompts[2]
    assert "ActionInputParsingError" in prompts[3] and '"save_name"' in prompts[3]
    assert "validation score" in prompts[6]  # Execute Script's output
    assert "ActionInputParsingError" not in prompts[6]  # dropped once an action parsed
    assert [h["entries"]["Action"] for h in policy.history] == [
        "List Files",
        "Edit Script (AI)",
        "Execute Script",
        "Validate Submission",
        "Final Answer",
    ]  # the step with the input error is dropped once another parses, as in MLAgentBench
    assert policy.usage["calls"] == len(prompts) == 8 and not policy.running


def test_in_mlebench_task_the_research_problem_is_mlebench_instructions(
    spaceship_home: Path, backend: str
) -> None:
    """With task="mlebench" the prompt carries MLE-bench's own instructions (read from the
    user's checkout), as MLE-bench's MLAB run gave them; the episode is graded."""
    checkout = require_shared("mlebench", "environment").parent
    first_line = (checkout / "environment" / "instructions.txt").read_text().splitlines()[0]
    replies = [
        answer("List Files", '{"dir_path": "/home/data"}'),
        answer(
            "Copy File",
            json.dumps(
                {
                    "source": "/home/data/sample_submission.csv",
                    "destination": "/home/submission/submission.csv",
                }
            ),
        ),
        answer("Final Answer", '{"final_answer": "the sample"}'),
    ]
    with ScriptedLLMServer(sequence([text(r) for r in replies])) as server:
        policy = MlabPolicy(base_url=server.url, model="m")
        make = {"backend": backend, "max_steps": 10, "task": "mlebench", "mlebench_dir": checkout}
        with gym.make("mle/spaceship-titanic-v0", **make) as env:
            episode = mle_gym.run_episode(env, policy, seed=0)
        prompt = last_text(server.requests[0])
    assert f"Research Problem: {first_line}" in prompt
    assert "description.md" in episode.steps[0].observation
    assert "copied to /home/submission/submission.csv" in episode.steps[1].observation
    assert episode.report["valid_submission"]


def test_parse_response_needs_every_entry_and_a_known_action() -> None:
    entries = parse_response(answer("List Files", '{"dir_path": "."}\nObservation: imagined'))
    assert entries["Action"] == "List Files" and entries["Action Input"] == '{"dir_path": "."}'
    with pytest.raises(ValueError, match="unknown action 'Run Shell'"):
        parse_response(answer("Run Shell", "{}"))
    with pytest.raises(ValueError, match="missing entries: Fact Check"):
        parse_response(answer("List Files", "{}").replace("Fact Check: none\n", ""))


def test_no_well_formed_answer_submits_what_is_there(mle_home: Path) -> None:
    """After max_retries bad answers the loop ends; the policy submits (nothing: invalid)."""
    require_bwrap()
    with ScriptedLLMServer(lambda _r: text("I will not follow the format.")) as server:
        policy = MlabPolicy(base_url=server.url, model="m", max_retries=2)
        episode = run_policy_episode("mle/sklearn-digits-v0", "local", policy, max_steps=5)
        assert len(server.requests) == 2
    assert [s.info["tool"] for s in episode.steps] == ["submit"]
    assert not episode.report["valid_submission"]


def test_cli_runs_mlab(mle_home: Path) -> None:
    require_bwrap()
    prompts: list[str] = []
    with ScriptedLLMServer(mlab_plan(prompts)) as server:
        result = run_cli_policy("mlab", server.url, "scripted-mlab", "--max-steps", "20")
    assert result.returncode == 0, result.stdout + result.stderr  # 0: a valid submission
    assert float(result.stdout.rsplit("reward (normalized):", 1)[1].split()[0]) > 0.5
    assert isinstance(make_policy("mlab", model="m"), MlabPolicy)


def test_long_observations_are_summarised_in_blocks(mle_home: Path) -> None:
    """An output over 5,000 characters reaches the history as the model's summary: one call
    per 10,000-character block, then one that joins them."""
    require_bwrap()
    loud = "print('x' * 15000)\n"
    main = [
        answer(
            "Edit Script (AI)",
            json.dumps(
                {
                    "script_name": "loud.py",
                    "edit_instruction": "print a lot",
                    "save_name": "loud.py",
                }
            ),
        ),
        answer("Execute Script", '{"script_name": "loud.py"}'),
        answer("Final Answer", '{"final_answer": "none"}'),
    ]
    prompts: list[str] = []

    def plan(request: dict[str, Any]) -> Reply:
        prompt = last_text(request)
        prompts.append(prompt)
        if prompt.startswith("Given this python script"):
            return text(f"```python\n{loud}```")
        if "The full observation is too long. Given this part" in prompt:
            return text("[Observation]: a part of the x's")
        if "Given summaries of each of its segments" in prompt:
            assert "Segment 0:" in prompt and "Segment 1:" in prompt
            return text("[Observation]: 15000 x characters were printed")
        return text(main.pop(0))

    with ScriptedLLMServer(plan) as server:
        policy = MlabPolicy(base_url=server.url, model="m")
        run_policy_episode("mle/sklearn-digits-v0", "local", policy, max_steps=10)
        assert len(server.requests) == 7  # 3 actions, 1 edit, 2 blocks, 1 join
    executed = policy.history[1]
    assert executed["observation"] == "15000 x characters were printed"
    assert "15000 x characters were printed" in prompts[-1] and "x" * 200 not in prompts[-1]
