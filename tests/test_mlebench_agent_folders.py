"""MLE-bench's own agent folders (the user's clone, ../shared/mlebench/agents) run unchanged in
task="mlebench" on both backends: the dummy through to a graded valid submission; AIDE's and
MLAB's start.sh through to their agent program, a stand-in that checks what start.sh built."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mle_gym.competitions.registry import get_competition
from mle_gym.data.cache import CompetitionDirs
from mle_gym.grading.grader import grade
from mle_gym.harness import run_harness
from tests.conftest import REPO, require_bwrap
from tests.llm_server import ScriptedLLMServer
from tests.prerequisites import require_shared

ID = "spaceship-titanic"

#: AIDE's program, as its start.sh calls it: checks what start.sh assembled, then submits
#: through the links start.sh made.
AIDE = r"""#!/bin/bash
set -e
fail() { echo "stand-in aide: $*" >&2; exit 3; }
[ "$CONDA_DEFAULT_ENV" = agent ] || fail "conda env not active"
[ "$PWD" = /home/agent ] || fail "not run from AGENT_DIR: $PWD"
grep -q "COMPETITION INSTRUCTIONS" full_instructions.txt || fail "no competition part"
grep -q "ADDITIONAL NOTES" full_instructions.txt || fail "no additional notes"
grep -q "a CPU" full_instructions.txt || fail "HARDWARE not substituted"
grep -q "/home/" full_instructions.txt && fail "/home/ paths left in the instructions"
[ "$(readlink logs/exp)" = "$LOGS_DIR" ] || fail "logs link"
[ "$(readlink workspaces/exp/best_submission)" = "$SUBMISSION_DIR" ] || fail "submission link"
echo "args: $*"
for wanted in data_dir=/home/data/ desc_file=/home/agent/full_instructions.txt exp_name=exp \
    agent.steps=8 agent.code.model=gpt-4o-2024-08-06 copy_data=False; do
  case " $* " in *" $wanted "*) ;; *) fail "missing argument $wanted";; esac
done
cp /home/data/sample_submission.csv workspaces/exp/best_submission/submission.csv
echo "journal" > logs/exp/journal.json
echo "stand-in aide: done"
"""

#: MLAB's two modules, as its start.sh runs them (`python -m MLAgentBench.<name>` from
#: $AGENT_DIR/MLAgentBench, where the Dockerfile's COPY put the benchmark's files).
PREPARE = """\
import os, sys
os.makedirs("workdir", exist_ok=True)
print("stand-in prepare_task", sys.argv[1:])
"""
RUNNER = r"""
import os, pathlib, shutil, sys
bench = pathlib.Path(os.environ["AGENT_DIR"], "MLAgentBench/MLAgentBench/benchmarks/mlebench")
problem = (bench / "scripts/research_problem.txt").read_text()
edited = pathlib.Path("/home/instructions.txt").read_text()
checks = {
    "instructions edited in place": "/home/" not in edited and "ADDITIONAL NOTES" in edited,
    "research problem": problem == edited,
    "notes substituted": "a CPU" in problem and "${STEP_LIMIT}" not in problem,
    "submission link": os.readlink(bench / "env/submission") == os.environ["SUBMISSION_DIR"],
    "data link": os.readlink(bench / "env/data") == "/home/data",
    "validation tool": (bench / "env/validate_submission.sh").is_file(),
    "logs link": os.readlink(os.environ["AGENT_DIR"] + "/logs/agent_log") == os.environ["LOGS_DIR"],
    "arguments": " ".join(sys.argv[1:]).endswith(
        "--max-steps 2000 --agent-max-steps 2000 --max-time 86400 --max-retries 10 "
        "--max-tokens 16384"
    ) and "--llm-name gpt-4o-2024-08-06 --edit-script-llm-name" in " ".join(sys.argv),
}
failed = [name for name, ok in checks.items() if not ok]
if failed:
    sys.exit(f"stand-in runner: {failed}")
shutil.copy("/home/data/sample_submission.csv", bench / "env/submission/submission.csv")
pathlib.Path("workdir/train.py").write_text("print(1)\n")
print("stand-in runner: done")
"""


@pytest.fixture(scope="module")
def agents() -> Path:
    return require_shared("mlebench", "agents", module=True)


@pytest.fixture(scope="module")
def stand_ins(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A --harness-dir with the agents' programs: bin/aide, and MLAgentBench's two modules
    (a namespace portion beside the one in $AGENT_DIR/MLAgentBench)."""
    root = tmp_path_factory.mktemp("stand-ins")
    (root / "bin").mkdir()
    (root / "bin" / "aide").write_text(AIDE)
    (root / "MLAgentBench").mkdir()
    (root / "MLAgentBench" / "prepare_task.py").write_text(PREPARE)
    (root / "MLAgentBench" / "runner.py").write_text(RUNNER)
    for path in [root, *root.rglob("*")]:
        path.chmod(0o755)
    return root


def _sample_score() -> float:
    competition = get_competition(ID)
    dirs = CompetitionDirs.of(ID)
    return grade(competition, dirs.public / "sample_submission.csv", dirs.private).score


def test_dummy_runs_unchanged_to_a_graded_submission(backend, agents, spaceship_home, tmp_path):
    with ScriptedLLMServer([]) as server:
        result = run_harness(
            ID, None, server.url, backend=backend, mlebench_agent=agents / "dummy",
            run_dir=tmp_path / "run", time_limit=300,
        )  # fmt: skip
    log = result.output_path.read_text()
    assert result.exit_code == 0, log
    assert "Sample submission copied to /home/submission/submission.csv" in log
    for line in ("touch /home/code/code.py", "touch /home/agent_logs/run.log"):
        assert line in log, log
    assert "cannot touch" not in log and "conda: command not found" not in log
    assert '"result": "Submission is valid."' in log
    assert result.report["valid_submission"]
    assert result.report["score"] == pytest.approx(_sample_score())
    assert (result.agent_logs_path / "run.log").is_file()
    assert (result.run_dir / "code" / "files" / "code.py").is_file()  # $CODE_DIR, kept


def test_aide_start_sh_reaches_its_program(backend, agents, stand_ins, spaceship_home, tmp_path):
    with ScriptedLLMServer([]) as server:
        result = run_harness(
            ID, None, server.url, backend=backend, mlebench_agent=agents / "aide",
            agent_config="aide/dev", harness_dir=stand_ins, run_dir=tmp_path / "run",
            time_limit=300,
        )  # fmt: skip
    log = result.output_path.read_text()
    assert "stand-in aide: done" in log, log
    assert result.report["valid_submission"], log
    assert (result.agent_logs_path / "journal.json").is_file()


def test_mlagentbench_start_sh_reaches_its_program(
    backend, agents, stand_ins, spaceship_home, tmp_path
):
    with ScriptedLLMServer([]) as server:
        result = run_harness(
            ID, None, server.url, backend=backend, mlebench_agent=agents / "mlagentbench",
            harness_dir=stand_ins, run_dir=tmp_path / "run", time_limit=300,
        )  # fmt: skip
    log = result.output_path.read_text()
    assert "stand-in runner: done" in log, log
    assert '"result": "Submission is valid."' in log  # its own check
    assert result.report["valid_submission"], log


def test_the_command_line_takes_a_folder_both_ways(agents, spaceship_home, tmp_path):
    """`--mlebench-agent DIR` as a batch (run again: resumed, nothing re-run), and the older
    `--task mlebench --harness ... --harness-dir` as one episode."""
    require_bwrap()
    checkout = agents.parent
    ways = {
        "folder": ["--mlebench-agent", str(agents / "dummy"), "--seeds", "1"],
        "harness": ["--task", "mlebench", "--mlebench-dir", str(checkout), "--harness",
                    'bash "$AGENT_DIR/start.sh"', "--harness-dir", str(agents / "dummy")],
    }  # fmt: skip
    logs = {
        "folder": tmp_path / "folder/episodes" / ID / "seed-0/harness/harness.log",
        "harness": tmp_path / "harness/harness.log",
    }

    def run(name: str, endpoint: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "mle_gym.cli", "run", ID, *ways[name], "--model-endpoint",
             endpoint, "--run-dir", str(tmp_path / name), "--time-limit", "300"],
            capture_output=True, text=True, timeout=300, cwd=REPO,
        )  # fmt: skip

    with ScriptedLLMServer([]) as server:
        for name in ways:
            done = run(name, server.url)
            log = logs[name].read_text() if logs[name].is_file() else ""
            assert done.returncode == 0, done.stdout + done.stderr + log
            assert "touch /home/agent/agent_was_here.txt" in log and "cannot touch" not in log
        again = run("folder", server.url)
    assert again.returncode == 0 and "0 episode(s) run, 1 already done" in again.stdout


# -- SECURITY: what an agent folder brings in, and what the agent's writable home reaches ----

#: A folder's start.sh that writes everywhere MLE-bench's container lets it.
GREEDY = """\
#!/bin/bash
sed -i 's/MLE-bench/EDITED/' /home/instructions.txt && grep -c EDITED /home/instructions.txt
echo changed >> /home/agent/notes.txt && echo "agent copy changed"
ln -s /etc/passwd "$LOGS_DIR/passwd-link"; echo log > "$LOGS_DIR/own.log"
dd if=/dev/zero of=/home/big bs=1M count=24 2>&1 | grep -o "No space left on device"
echo "dd status ${PIPESTATUS[0]}"
"""


def test_writable_home_changes_nothing_outside_and_is_bounded(
    backend, agents, spaceship_home, tmp_path
):
    folder = tmp_path / "greedy"
    folder.mkdir()
    (folder / "start.sh").write_text(GREEDY)
    (folder / "notes.txt").write_text("the agent's notes\n")
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    with ScriptedLLMServer([]) as server:
        result = run_harness(
            ID, None, server.url, backend=backend, mlebench_agent=folder,
            mlebench_dir=agents.parent, run_dir=tmp_path / "run", time_limit=120,
            sandbox_options={"disk": "16m"},
        )  # fmt: skip
    log = result.output_path.read_text()
    assert log.startswith("1\nagent copy changed\n"), log  # its own copies, edited
    assert "dd status 1" in log and "No space left on device" in log, log  # bounded
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    assert "EDITED" not in (agents.parent / "environment" / "instructions.txt").read_text()
    kept = result.agent_logs_path
    assert (kept / "own.log").read_text() == "log\n"
    assert not (kept / "passwd-link").exists()  # kept: the agent's files, never a link out


def test_a_folder_with_a_symlink_out_is_refused(tmp_path):
    from mle_gym.harness.mlebench_agent import AgentFolderError, load_agent, stage

    folder = tmp_path / "agent"
    folder.mkdir()
    (folder / "start.sh").write_text("true\n")
    (folder / "notes.txt").symlink_to("/etc/passwd")
    with pytest.raises(AgentFolderError, match="symlink"):
        stage(load_agent(folder), tmp_path / "staged")
    assert not (tmp_path / "staged" / "agent" / "notes.txt").exists()


def test_a_folder_past_its_bounds_is_refused(tmp_path):
    from mle_gym.harness.mlebench_agent import (
        MAX_FOLDER_BYTES,
        AgentFolderError,
        load_agent,
        stage,
    )

    folder = tmp_path / "agent"
    folder.mkdir()
    (folder / "start.sh").write_text("true\n")
    with open(folder / "weights.bin", "wb") as sparse:
        sparse.truncate(MAX_FOLDER_BYTES + 1)
    with pytest.raises(AgentFolderError, match="more than"):
        stage(load_agent(folder), tmp_path / "staged")
    (folder / "weights.bin").unlink()
    (folder / "/".join(["d"] * 40)).mkdir(parents=True)  # deep, though empty
    with pytest.raises(AgentFolderError, match="levels deep"):
        stage(load_agent(folder), tmp_path / "staged-again")


def test_config_yaml_is_read_as_mlebench_reads_it(agents, monkeypatch):
    """Anchors and merge keys, kwargs in both styles, secrets from the host's environment
    (the model key stays with the proxy), the Dockerfile's COPY lines and WORKDIR."""
    from mle_gym.harness.mlebench_agent import load_agent

    monkeypatch.setenv("OPENAI_API_KEY", "sk-host-only")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "from-the-host")
    aide = load_agent(agents / "aide", "aide/dev")
    assert "agent.steps=8" in aide.arguments and "agent.search.debug_prob=1" in aide.arguments
    assert aide.variables == {"TIME_LIMIT_SECS": "86400", "STEP_LIMIT": "500"}
    assert aide.task() == "mlebench" and aide.workdir == "/home"
    claude = load_agent(agents / "aide", "aide/claude-3-5-sonnet")
    assert claude.variables["ANTHROPIC_API_KEY"] == "from-the-host"
    hidden = load_agent(agents / "aide", "aide/obfuscated")
    assert hidden.task() == "mlebench-obfuscated" and "agent.obfuscate=True" in hidden.arguments
    assert "OBFUSCATE" not in hidden.sandbox_variables("mlebench-obfuscated")
    mlab = load_agent(agents / "mlagentbench")
    assert mlab.arguments[:2] == ("--llm-name", "gpt-4o-2024-08-06")
    assert mlab.workdir == "/home/agent/MLAgentBench"
    assert (Path("additional_notes.txt"), "/home/additional_notes.txt") in mlab.copies
    assert (Path("start.sh"), "/home/agent") in mlab.copies


def _wheel(directory: Path) -> None:
    """A one-module wheel with a console script, made here: the test needs no index."""
    import base64
    import hashlib
    import zipfile

    info = "standin_agent-1.0.dist-info"
    files = {
        "standin_agent/__init__.py": "def main():\n    print('stand-in agent, from its wheel')\n",
        f"{info}/METADATA": "Metadata-Version: 2.1\nName: standin-agent\nVersion: 1.0\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
        f"{info}/entry_points.txt": "[console_scripts]\nstandin-agent = standin_agent:main\n",
    }
    record = []
    with zipfile.ZipFile(directory / "standin_agent-1.0-py3-none-any.whl", "w") as wheel:
        for name, text in files.items():
            wheel.writestr(name, text)
            digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest())
            record.append(f"{name},sha256={digest.decode().rstrip('=')},{len(text)}")
        wheel.writestr(f"{info}/RECORD", "\n".join([*record, f"{info}/RECORD,,"]) + "\n")


def test_requirements_are_built_offline_for_both_backends(
    backend, agents, spaceship_home, tmp_path
):
    folder, wheels = tmp_path / "agent", tmp_path / "wheels"
    folder.mkdir()
    wheels.mkdir()
    _wheel(wheels)
    (folder / "requirements.txt").write_text("# what the agent needs\nstandin-agent==1.0\n")
    (folder / "start.sh").write_text(
        'eval "$(conda shell.bash hook)"\nconda activate agent\nstandin-agent\n'
        'cp /home/data/sample_submission.csv "$SUBMISSION_DIR/submission.csv"\n'
    )
    with ScriptedLLMServer([]) as server:
        result = run_harness(
            ID, None, server.url, backend=backend, mlebench_agent=folder,
            mlebench_dir=agents.parent, agent_wheels=wheels, run_dir=tmp_path / "run",
            time_limit=120,
        )  # fmt: skip
    log = result.output_path.read_text()
    assert "stand-in agent, from its wheel" in log, log
    assert result.report["valid_submission"]
    scripts = [p / "bin" / "standin-agent" for p in (spaceship_home / "agent-envs").iterdir()]
    assert scripts and all(s.read_text().startswith("#!/usr/bin/env python3\n") for s in scripts)


def test_requirements_are_built_once(tmp_path):
    from mle_gym.harness.agent_requirements import build_requirements

    folder, wheels = tmp_path / "agent", tmp_path / "wheels"
    folder.mkdir()
    wheels.mkdir()
    _wheel(wheels)
    (folder / "requirements.txt").write_text("standin-agent==1.0\n")
    built = build_requirements(folder, wheels, home=tmp_path / "home")
    assert built is not None and (built / "standin_agent" / "__init__.py").is_file()
    for wheel in wheels.iterdir():
        wheel.unlink()  # a second build would fail now
    assert build_requirements(folder, wheels, home=tmp_path / "home") == built
    (folder / "requirements.txt").write_text("# nothing\n")
    assert build_requirements(folder, wheels, home=tmp_path / "home") is None
