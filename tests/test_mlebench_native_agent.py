"""An agent written only against MLE-bench's contract runs unchanged as a harness in
task="mlebench" on both backends and is graded; in task="mle_gym" it stops, saying which of
MLE-bench's paths is absent."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mle_gym.harness import run_harness
from tests.conftest import REPO, require_bwrap
from tests.llm_server import ScriptedLLMServer
from tests.prerequisites import require_shared

ID = "spaceship-titanic"

#: MLE-bench's contract only: its files, its variables, its endpoint and its script.
START_SH = """\
#!/bin/bash
# A minimal agent for MLE-bench's container: it knows nothing of mle_gym.
for needed in /home/instructions.txt /home/data/description.md /home/validate_submission.sh; do
  if [ ! -f "$needed" ]; then
    echo "agent: $needed is missing: this is not MLE-bench's container" >&2
    exit 2
  fi
done
grep -c "MLE-bench" /home/instructions.txt
head -n 1 /home/data/description.md
# as MLE-bench's runner does before it starts an agent: wait for the grading server
timeout 60s sh -c 'while ! curl -s http://localhost:5000/health > /dev/null; do sleep 1; done'
echo "competition $COMPETITION_ID, $STEP_LIMIT steps, $TIME_LIMIT, agent in $AGENT_DIR"
cp /home/data/sample_submission.csv "${SUBMISSION_DIR}/submission.csv"
/home/validate_submission.sh "${SUBMISSION_DIR}/submission.csv" 2>/dev/null
echo
"""


@pytest.fixture(scope="module")
def checkout() -> Path:
    return require_shared("mlebench", "environment", module=True).parent


@pytest.fixture
def agent_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "agent"
    folder.mkdir()
    (folder / "start.sh").write_text(START_SH)
    (folder / "start.sh").chmod(0o755)
    return folder


def test_native_agent_runs_unchanged_and_is_graded(
    backend, checkout, spaceship_home, agent_dir, tmp_path
):
    with ScriptedLLMServer([]) as server:
        result = run_harness(
            ID,
            'bash "$AGENT_DIR/start.sh"',
            server.url,
            backend=backend,
            harness_dir=agent_dir,
            run_dir=tmp_path / "run",
            time_limit=300,
            task="mlebench",
            mlebench_dir=checkout,
        )
    output = result.output_path.read_text()
    assert result.exit_code == 0, output
    assert f"competition {ID}, " in output and "agent in /home/agent" in output
    assert json.loads(output.strip().splitlines()[-1]) == {"result": "Submission is valid."}
    assert result.report["valid_submission"] and result.report["score"] is not None
    assert result.requests == 0 and server.requests == []


def test_native_agent_says_what_is_missing_in_mle_gyms_own_task(
    checkout, spaceship_home, agent_dir, tmp_path
):
    require_bwrap()
    with ScriptedLLMServer([]) as server:
        result = run_harness(
            ID,
            "bash /opt/harness/start.sh",
            server.url,
            harness_dir=agent_dir,
            run_dir=tmp_path / "run",
            time_limit=120,
        )
    output = result.output_path.read_text()
    assert result.exit_code == 2
    assert "/home/instructions.txt is missing: this is not MLE-bench's container" in output
    assert not result.report["submission_exists"] and result.report["error"]


def test_the_run_command_takes_the_task(checkout, spaceship_home, agent_dir, tmp_path):
    """`mle-gym run ID --harness CMD --task mlebench --mlebench-dir DIR`; batches get the same
    env options."""
    require_bwrap()
    from mle_gym.cli import build_parser
    from mle_gym.cli.common import env_kwargs_from as _env_kwargs

    args = build_parser().parse_args(
        ["run", ID, "--seeds", "2", "--task", "mlebench-obfuscated", "--mlebench-dir", "/x"]
    )
    assert _env_kwargs(args) == {
        "backend": "local",
        "task": "mlebench-obfuscated",
        "mlebench_dir": "/x",
    }
    with ScriptedLLMServer([]) as server:
        done = subprocess.run(
            [sys.executable, "-m", "mle_gym.cli", "run", ID, "--harness",
             "bash /opt/harness/start.sh", "--harness-dir", str(agent_dir),
             "--model-endpoint", server.url, "--run-dir", str(tmp_path / "run"),
             "--task", "mlebench", "--mlebench-dir", str(checkout)],
            capture_output=True, text=True, timeout=300, cwd=REPO,
        )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Submission is valid." in (tmp_path / "run" / "harness.log").read_text()
