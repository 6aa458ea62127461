"""What the batch resume tests (local and Ray) share: a scripted model whose episode is
killed after its checkpoints, the kill, and the checks of the resumed episode and report."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mle_gym.checkpoints.retention import intact
from mle_gym.checkpoints.store import CheckpointStore
from tests.batch_support import _status, _wait_for
from tests.llm_server import Reply, ScriptedLLMServer, tool

EVERY, BEFORE_KILL, MAX_STEPS, TIME_LIMIT = 2, 7, 20, 900
RESUMED = "resumes from a checkpoint taken after step"
CHECK = 'pwd; echo "var=$MY_VAR"; cat /home/code/notes.txt; ls /home/code'
EPISODE = Path("episodes") / "sklearn-digits" / "seed-0"


def plan(gate: threading.Event) -> Callable[[dict[str, Any]], Reply]:
    """Step 1 changes directory, exports a variable and starts notes.txt; steps 2-6 add to
    it (step 2 also writes the submission); step 7 writes a file the kill loses (taken after
    the last checkpoint, after step 6); the 8th request waits for the kill. A resumed
    episode looks at what it has, then submits."""

    def reply(request: dict[str, Any]) -> Reply:
        messages = request.get("messages") or []
        done = sum(m.get("role") == "tool" for m in messages)
        if any(RESUMED in str(m.get("content")) for m in messages):
            return tool("bash", command=CHECK) if done == 0 else tool("submit")
        if done == 0:
            return tool(
                "bash",
                command="mkdir -p /home/code/work && cd /home/code/work && "
                "export MY_VAR=kept && echo 1 > /home/code/notes.txt",
            )
        if done == 1:
            return tool(
                "bash",
                command="cp /home/data/sample_submission.csv /home/submission/submission.csv"
                " && echo 2 >> /home/code/notes.txt",
            )
        if done < BEFORE_KILL - 1:
            return tool("bash", command=f"echo {done + 1} >> /home/code/notes.txt")
        if done == BEFORE_KILL - 1:
            return tool("bash", command="echo lost > /home/code/lost.txt")
        gate.wait(120)  # the worker is killed meanwhile
        return tool("submit")

    return reply


def worker_pids(marker: Path) -> list[int]:
    """The batch workers whose episode folder lies under `marker`."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes()
        except OSError:
            continue
        if b"mle_gym.batch.worker" in text and str(marker).encode() in text:
            found.append(int(cmdline.parent.name))
    return found


def batch_command(server: ScriptedLLMServer, run_dir: Path, *extra: str) -> list[str]:
    args = ["mle-gym", "run", "sklearn-digits", "--policy", "llm", "--seeds", "1"]
    args += ["--base-url", server.url, "--model", "m", "--api-key", "k"]
    args += ["--max-steps", str(MAX_STEPS), "--time-limit", str(TIME_LIMIT)]
    return [*args, "--run-dir", str(run_dir), "--checkpoint-every-steps", str(EVERY), *extra]


def kill_then_resume(
    command: list[str],
    env: dict[str, str],
    server: ScriptedLLMServer,
    gate: threading.Event,
    run_dir: Path,
    marker: Path,
) -> subprocess.CompletedProcess:
    """Run the batch, SIGKILL its worker (found under `marker`) while the model waits after
    step 7, check what the first run left, then rerun it with --resume; the rerun."""
    first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    try:
        _wait_for(lambda: len(server.requests) > BEFORE_KILL, 240, "the request after step 7")
        pids = worker_pids(marker)
        assert len(pids) == 1, pids
        os.kill(pids[0], signal.SIGKILL)
    finally:
        gate.set()
        output = first.communicate(timeout=300)[0].decode()
    assert first.returncode == 1, output
    status = _status(run_dir, 0)
    assert status["state"] == "failed" and "worker exited with -9" in status["error"]
    episode = run_dir / EPISODE
    assert not (episode / "result.json").exists()
    taken = [m["meta"]["steps"] for _, m in intact(CheckpointStore(episode / "checkpoints"))]
    assert taken == [4, 6]  # every 2 steps, the newest two kept (the one after 2 pruned)
    return subprocess.run(
        [*command, "--resume"], capture_output=True, text=True, timeout=300, env=env
    )


def check_resumed(run_dir: Path, report: dict[str, Any], printed: str) -> None:
    """The episode went on from the checkpoint after step 6, was graded once with its
    lineage, and `report` (`mle-gym report --json --episodes`) and the `printed` report
    count it once."""
    status = _status(run_dir, 0)
    assert status["state"] == "done" and status["attempt"] == 2
    episode = run_dir / EPISODE
    events = [json.loads(line) for line in (episode / "trajectory.jsonl").read_text().splitlines()]
    resets = [e for e in events if e["event"] == "reset"]
    assert len(resets) == 2 and "resumed_from" not in resets[0]["info"]
    info = resets[1]["info"]
    checkpoint = info["resumed_from"]
    assert checkpoint["steps"] == 6 and checkpoint["parent"] is None
    assert info["step"] == 6 and info["steps_left"] == MAX_STEPS - 6
    assert info["time_left"] <= TIME_LIMIT - int(checkpoint["seconds"])
    assert RESUMED in resets[1]["observation"]
    after = [e for e in events[events.index(resets[1]) :] if e["event"] == "step"]
    assert [e["step"] for e in after] == [7, 8] and after[-1]["terminated"]
    looked = after[0]["observation"].split()
    assert looked[:8] == ["/home/code/work", "var=kept", "1", "2", "3", "4", "5", "6"]
    assert "notes.txt" in looked and "lost.txt" not in looked  # step 7 of the killed segment

    result = json.loads((episode / "result.json").read_text())
    assert result["valid_submission"] and result["steps"] == 8
    lineage = result["lineage"]
    assert lineage["checkpoints"] == [
        {"id": checkpoint["id"], "steps": 6, "seconds": checkpoint["seconds"]}
    ]
    assert [(s["from"], s["steps"]) for s in lineage["segments"]] == [
        (None, 6),
        (checkpoint["id"], 2),
    ]
    assert lineage["segments"][0]["seconds"] == pytest.approx(checkpoint["seconds"], abs=1e-3)
    assert lineage["seconds"] == pytest.approx(sum(s["seconds"] for s in lineage["segments"]))
    assert result["seconds"] == lineage["seconds"] > checkpoint["seconds"]
    integrity = result["integrity"]
    assert integrity["lineage"] == lineage and integrity["resumed_from"] == checkpoint

    assert report["episodes"]["done"] == 1 and report["episodes"]["failed"] == 0
    assert report["competitions"]["sklearn-digits"]["seeds"] == 1
    assert report["cost"]["total"]["episodes"] == 1
    assert report["cost"]["episodes"]["sklearn-digits/seed-0"]["seconds"] == lineage["seconds"]
    assert report["integrity"]["resumed"] == {"sklearn-digits/seed-0": 2}
    assert [(r["seed"], r["attempt"]) for r in report["episode_rows"]] == [(0, 2)]
    assert "resumed from checkpoints (each counted once): sklearn-digits/seed-0 (2" in printed
