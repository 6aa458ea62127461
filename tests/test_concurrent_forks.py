"""Graders and local sandboxes started from many threads at once, in a process that imports
filelock >= 4 (as trainers' libraries do: Hugging Face's, Ray's, NeMo-Gym's). Its audit hook
makes a fork raise while another thread is forking; mle_gym's forks take one lock
(mle_gym.forks) so that none is lost. Without that lock, about half of 40 concurrent
evaluations raised RuntimeError here.

Runs in the NeMo-Gym venv (.ci/setup.d/rl_hubs.sh), which has filelock 4 where the NeMo-Gym
resources server met this; the shared venv's filelock is 3.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import require_bwrap
from tests.prerequisites import REPO, rl_hub_venv

RACE = """
import json, threading
import filelock, gymnasium as gym
import mle_gym
from mle_gym.data.cache import CompetitionDirs

env = gym.make("mle/sklearn-digits-v0", backend="local")
env.reset()  # prepares the data once, before the threads
sample = CompetitionDirs.of("sklearn-digits").public / "sample_submission.csv"
errors, graded, started = [], [], []

def grade():
    for _ in range(5):
        try:
            report = mle_gym.evaluate("sklearn-digits", sample)
            graded.append(report["valid"])
        except Exception as exc:
            errors.append(repr(exc))

def start():
    for _ in range(2):
        try:
            own = gym.make("mle/sklearn-digits-v0", backend="local")
            own.reset()
            started.append(own.step({"tool": "bash", "command": "echo up"})[0].strip())
            own.close()
        except Exception as exc:
            errors.append(repr(exc))

threads = [threading.Thread(target=grade) for _ in range(8)]
threads += [threading.Thread(target=start) for _ in range(2)]
[t.start() for t in threads]
[t.join() for t in threads]
env.close()
print(json.dumps({"filelock": filelock.__version__, "errors": errors[:3],
                  "graded": graded, "started": started}))
"""


@pytest.mark.timeout(600)
def test_forks_from_many_threads_with_filelock_4(mle_home: Path) -> None:
    python = rl_hub_venv("nemo-gym") / "bin" / "python"
    require_bwrap()
    result = subprocess.run(
        [str(python), "-c", RACE],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=500,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    answer = json.loads(result.stdout.strip().splitlines()[-1])
    assert int(answer["filelock"].split(".")[0]) >= 4  # the hook this test is about
    assert answer["errors"] == []
    assert answer["graded"] == [True] * 40 and answer["started"] == ["up"] * 4
