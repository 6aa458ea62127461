"""`mle-gym export harbor --task mlebench`: MLE-bench's own prompt and paths in a Harbor task,
read from the user's MLE-bench checkout at export; no validation server there, and the agent
is told so. A Harbor trial runs an agent written against MLE-bench's contract and is graded."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import mle_gym
from mle_gym.data.cache import CompetitionDirs
from mle_gym.envs.mlebench_task import MLEBenchNotFound, fill_placeholders
from mle_gym.export.harbor import HarborOptions, export_harbor
from mle_gym.export.harbor_mlebench import NOT_AVAILABLE
from tests.conftest import REPO
from tests.prerequisites import require_shared
from tests.test_harbor_export import OFFLINE, grader_image, harbor_python, leak_probe, run_trial

__all__ = ["grader_image"]  # the module fixture, shared with the plain export's tests

ID = "spaceship-titanic"


@pytest.fixture(scope="module")
def checkout() -> Path:
    return require_shared("mlebench", "environment", module=True).parent


def _export(tmp_path: Path, checkout: Path, task: str = "mlebench", **options) -> Path:
    settings = {"image": OFFLINE, "task": task, "mlebench_dir": str(checkout), **options}
    (exported,) = export_harbor([ID], tmp_path / "tasks", HarborOptions(**settings))
    assert exported.skipped is None
    return exported.path


def test_the_task_carries_mlebench_text_at_its_paths(
    checkout: Path, spaceship_home: Path, tmp_path: Path
) -> None:
    task = _export(tmp_path, checkout, time_limit=3600)
    instructions = (checkout / "environment" / "instructions.txt").read_text()
    description = (checkout / "mlebench" / "competitions" / ID / "description.md").read_text()
    context = task / "environment" / "mlebench"
    assert (context / "instructions.txt").read_text() == instructions  # as MLE-bench's image
    assert (context / "description.md").read_text() == description
    assert (context / "instructions_obfuscated.txt").is_file()
    prompt = (task / "instruction.md").read_text()
    filled = fill_placeholders(instructions, {"TIME_LIMIT": "1hrs 0mins 0secs"}).rstrip()
    assert prompt.startswith(filled) and NOT_AVAILABLE in prompt
    dockerfile = (task / "environment" / "Dockerfile").read_text()
    for line in (
        "COPY mlebench/instructions.txt /home/instructions.txt",
        "COPY mlebench/description.md /home/data/description.md",
        "COPY mlebench/validate_submission.sh /home/validate_submission.sh",
        'COMPETITION_ID="spaceship-titanic"',
        'TIME_LIMIT="1hrs 0mins 0secs"',
        'SUBMISSION_DIR="/home/submission"',
    ):
        assert line in dockerfile, line
    # the public data's entries are bound one by one beside description.md, never the folder
    compose = (task / "environment" / "docker-compose.yaml").read_text()
    public = CompetitionDirs.of(ID).public
    for entry in public.iterdir():
        assert f"target: /home/data/{entry.name}\n" in compose
    assert "target: /home/data\n" not in compose
    assert f"source: {json.dumps(str(public))}\n" not in compose
    meta = (task / "task.toml").read_text()
    assert 'task = "mlebench"' in meta


def test_obfuscated_task_has_only_the_obfuscated_text(
    checkout: Path, spaceship_home: Path, tmp_path: Path
) -> None:
    task = _export(tmp_path, checkout, task="mlebench-obfuscated", data="copy")
    folder = checkout / "mlebench" / "competitions" / ID
    context = task / "environment" / "mlebench"
    hidden = (checkout / "environment" / "instructions_obfuscated.txt").read_text()
    assert (context / "description.md").read_text() == (
        folder / "description_obfuscated.md"
    ).read_text()
    assert (context / "instructions.txt").read_text() == hidden
    assert not (context / "instructions_obfuscated.txt").exists()
    plain = (folder / "description.md").read_text()
    for path in (p for p in task.rglob("*") if p.is_file() and p.suffix in (".md", ".txt")):
        assert plain not in path.read_text(errors="replace")
    dockerfile = (task / "environment" / "Dockerfile").read_text()
    assert dockerfile.index("COPY data/ /home/data/") < dockerfile.index("description.md")


def test_missing_checkout_and_non_mlebench_competitions_say_why(
    mle_home: Path, tmp_path: Path, checkout: Path
) -> None:
    """Before anything is written; an unprepared competition is still checked first."""
    out, missing = str(tmp_path / "t"), str(tmp_path / "no")
    command = [sys.executable, "-m", "mle_gym.cli", "export", "harbor", ID, "--out", out,
               "--task", "mlebench", "--mlebench-dir", missing]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode != 0
    assert f"no MLE-bench checkout at {tmp_path / 'no'}" in done.stderr
    assert "git clone https://github.com/openai/mle-bench" in done.stderr
    assert not (tmp_path / "t" / ID).exists()
    options = HarborOptions(task="mlebench", mlebench_dir=str(checkout))
    with pytest.raises(MLEBenchNotFound, match="sklearn-digits is not an MLE-bench competition"):
        export_harbor(["sklearn-digits"], tmp_path / "t", options)
    skipped = export_harbor([ID], tmp_path / "t", options)  # MLE-bench's, not prepared here
    assert skipped[0].skipped and not (tmp_path / "t" / ID).exists()


#: An agent that knows only MLE-bench's contract, run as Harbor's oracle solution.
NATIVE_AGENT = """\
cd /logs/agent
head -n 1 /home/instructions.txt > seen.txt
head -n 1 /home/data/description.md >> seen.txt
echo "$COMPETITION_ID $SUBMISSION_DIR $TIME_LIMIT" >> seen.txt
( echo tamper >> /home/data/description.md ) 2> /dev/null && echo writable >> seen.txt
set +e
/home/validate_submission.sh /home/data/sample_submission.csv > validate.out 2>&1
echo "exit $?" >> validate.out
set -e
cp /home/data/sample_submission.csv "$SUBMISSION_DIR/submission.csv"
"""


def test_a_native_agent_runs_in_a_harbor_trial_and_is_graded(
    checkout: Path, spaceship_home: Path, grader_image: str, tmp_path: Path
) -> None:
    harbor_python()
    task = _export(tmp_path, checkout, grader_image=grader_image, time_limit=1800)
    dirs = CompetitionDirs.of(ID)
    solution = task / "solution" / "solve.sh"
    solution.parent.mkdir()
    solution.write_text(
        "#!/bin/bash\nset -e\n" + leak_probe(dirs, "/logs/agent/leaks.txt") + NATIVE_AGENT
    )
    trial = run_trial(task, tmp_path / "trials")

    agent = trial / "agent"
    assert (agent / "leaks.txt").read_text() == ""
    instructions = (checkout / "environment" / "instructions.txt").read_text()
    description = (checkout / "mlebench" / "competitions" / ID / "description.md").read_text()
    assert (agent / "seen.txt").read_text().splitlines() == [
        instructions.splitlines()[0],
        description.splitlines()[0],
        f"{ID} /home/submission 0hrs 30mins 0secs",
    ]  # and description.md was not writable
    validated = (agent / "validate.out").read_text()
    assert NOT_AVAILABLE in validated and validated.rstrip().endswith("exit 1")
    rewards = json.loads((trial / "verifier" / "reward.json").read_text())
    expected = mle_gym.evaluate(ID, dirs.public / "sample_submission.csv")
    assert rewards["valid"] == 1 and rewards["reward"] == expected["reward"]
