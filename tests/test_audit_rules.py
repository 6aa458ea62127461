"""`mle-gym audit rules`: the LLM judge, end to end against the scripted OpenAI-compatible
server (the only stand-in for a model)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mle_gym.analysis.rules import QUESTIONS
from mle_gym.cli import main
from tests.llm_server import Reply, ScriptedLLMServer, last_text

KEY = "sk-test-secret-key-123"


def _episode(root: Path, seed: int, steps: list[tuple[str, str]], code: dict[str, str]) -> None:
    directory = root / "episodes" / "spaceship-titanic" / f"seed-{seed}"
    (directory / "code").mkdir(parents=True)
    (directory / "status.json").write_text(json.dumps({"state": "done", "attempt": 1}))
    lines = [{"event": "reset", "episode": 0, "observation": "task", "info": {}}]
    for i, (action, observation) in enumerate(steps, 1):
        lines.append({"event": "step", "step": i, "action": action, "observation": observation})
    (directory / "trajectory.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    for name, text in code.items():
        (directory / "code" / name).write_text(text)


def _verdict(**yes: str) -> str:
    answers = {k: {"answer": "yes" if k in yes else "no", "evidence": yes.get(k, "")}
               for k in QUESTIONS}  # fmt: skip
    return "Here is my verdict:\n" + json.dumps(answers)


def test_the_judge_reads_each_episode_and_its_verdicts_are_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    run = tmp_path / "run"
    _episode(
        run, 0,
        [("cat /home/data/test.csv | head", "PassengerId,..."),
         ("python -c \"open('/home/submission/submission.csv','w').write(MY_GUESSES)\"", "")],
        {"guess.py": "MY_GUESSES = 'hand written labels'\n"},
    )  # fmt: skip
    _episode(
        run,
        1,
        [("python /home/code/train.py", "cv accuracy 0.79 TRAINED_MODEL")],
        {"train.py": "from sklearn.ensemble import RandomForestClassifier  # TRAINED_MODEL\n"},
    )
    _episode(run, 2, [("ls", "x" * 500_000)], {})  # a huge trajectory: cut to the bound

    def plan(request: dict) -> Reply:
        text = last_text(request)
        if "MY_GUESSES" in text:
            return Reply(content=_verdict(hand_labelled="step 2 writes MY_GUESSES"))
        if "TRAINED_MODEL" in text:
            return Reply(content=_verdict())
        return Reply(content="not JSON at all")

    monkeypatch.setenv("JUDGE_KEY", KEY)
    with ScriptedLLMServer(plan) as server:
        code = main(
            ["audit", "rules", str(run), "--model-endpoint", server.url, "--model", "judge-1",
             "--api-key-env", "JUDGE_KEY", "--max-input-chars", "20000", "--max-tokens", "300",
             "--json"]
        )  # fmt: skip
    printed = json.loads(capsys.readouterr().out)
    assert code == 1  # an episode is flagged
    assert printed == json.loads((run / "audits" / "rules.json").read_text())
    assert len(server.requests) == 3
    assert all(r["model"] == "judge-1" and r["max_tokens"] == 300 for r in server.requests)
    assert all(len(last_text(r)) < 20000 + 3000 for r in server.requests)  # + the questions
    by_seed = {v["seed"]: v for v in printed["episodes"]}
    assert by_seed[0]["flagged"] and by_seed[0]["answers"]["hand_labelled"]["answer"] == "yes"
    assert "MY_GUESSES" in by_seed[0]["answers"]["hand_labelled"]["evidence"]
    assert not by_seed[1]["flagged"]
    assert {a["answer"] for a in by_seed[1]["answers"].values()} == {"no"}
    assert {a["answer"] for a in by_seed[2]["answers"].values()} == {"unclear"}
    assert by_seed[2]["input_chars"] <= 20000 and by_seed[0]["usage"]["total_tokens"] > 0
    # the key went only to the server, never to the run directory
    for path in run.rglob("*"):
        assert not path.is_file() or KEY not in path.read_text(errors="replace")


def test_an_unreachable_judge_is_an_error_per_episode(tmp_path: Path) -> None:
    run = tmp_path / "run"
    _episode(run, 0, [("ls", "")], {})
    assert main(["audit", "rules", str(run), "--model-endpoint", "http://127.0.0.1:9/v1"]) == 2
    verdict = json.loads((run / "audits" / "rules.json").read_text())["episodes"][0]
    assert verdict["error"] and not verdict["flagged"]
