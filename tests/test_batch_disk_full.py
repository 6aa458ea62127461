"""A full disk during a batch: a graded episode is never run again (its whole result.json
is the proof, whatever its status says), no temporary file is left, and the CLI says
"disk full" instead of a traceback."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from tests.batch_support import batch_args, mle_gym
from tests.conftest import require_bwrap


def test_a_graded_episode_whose_status_was_not_written_is_not_run_again(
    local_batch: Path, digits_home: Path, tmp_path: Path
) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(local_batch, run_dir)
    status_path = run_dir / "episodes" / "sklearn-digits" / "seed-0" / "status.json"
    status = json.loads(status_path.read_text())
    # the driver graded it but could not write "done": the disk was full
    status_path.write_text(json.dumps({**status, "state": "running"}))
    again = mle_gym(*batch_args(run_dir), home=digits_home)
    assert "already done 3" in again.stdout, again.stdout
    repaired = json.loads(status_path.read_text())
    assert repaired["state"] == "done" and repaired["attempt"] == status["attempt"]


def test_a_write_on_a_full_disk_leaves_no_temporary_file_and_says_so(tmp_path: Path) -> None:
    """The run store's writes on a 64 KiB tmpfs (a bubblewrap namespace), then a batch run
    on it once it is full."""
    require_bwrap()
    code = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "from mle_gym.runs.jsonfile import write_json\n"
        "try:\n"
        "    write_json(Path('/mnt/status.json'), {'x': 'y' * 200_000})\n"
        "except OSError as exc:\n"
        "    print('refused', exc.errno)\n"
        "print(sorted(os.listdir('/mnt')))\n"
        "with open('/mnt/filler', 'wb', buffering=0) as filler:\n"  # the rest of the disk
        "    try:\n"
        "        while True: filler.write(bytes(4096))\n"
        "    except OSError: pass\n"
        "from mle_gym import cli\n"
        "sys.exit(cli.main(['run', 'sklearn-digits', '--policy', 'scripted', "
        "'--run-dir', '/mnt/run']))\n"
    )
    command = [
        "bwrap", "--dev-bind", "/", "/", "--size", str(64 << 10), "--tmpfs", "/mnt",
        "--setenv", "MLE_GYM_HOME", str(tmp_path / "home"), sys.executable, "-c", code,
    ]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    out = result.stdout + result.stderr
    assert "refused 28" in out and "[]" in out, out
    assert "error: disk full" in out and "Traceback" not in out, out


def test_run_directory_errors_come_first_and_leave_nothing(
    local_batch: Path, digits_home: Path, tmp_path: Path
) -> None:
    """Other settings in the run directory, or a competition not prepared: an error before
    the run's header and progress display, and no file written."""
    run_dir = tmp_path / "run"
    shutil.copytree(local_batch, run_dir)
    before = sorted(str(p.relative_to(run_dir)) for p in run_dir.rglob("*"))
    other = mle_gym(*batch_args(run_dir, "--max-steps", "7"), home=digits_home, ok=False)
    assert other.returncode == 2 and "other settings" in other.stderr, other.stderr
    assert "mle-gym run:" not in other.stdout  # no header came first
    assert sorted(str(p.relative_to(run_dir)) for p in run_dir.rglob("*")) == before
    fresh = tmp_path / "fresh"
    missing = mle_gym(
        "run", "spaceship-titanic", "--policy", "scripted", "--run-dir", str(fresh),
        home=tmp_path / "empty-home", ok=False,
    )  # fmt: skip
    assert missing.returncode == 2 and "not prepared" in missing.stderr, missing.stderr
    assert "mle-gym run:" not in missing.stdout and not fresh.exists()
