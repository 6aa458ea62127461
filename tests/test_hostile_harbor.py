"""Hostile agents on the Harbor paths (issue 24, item 6): the exported verifier, mle_gym's
Harbor provider and the agent's container apply the env's bounds.

- The verifier refuses a submission over the env's copy-out cap by its size alone: an
  invalid submission with the env's reason, the grader never given the file.
- The provider streams a download to disk (host memory stays flat) and refuses one over
  the task's submission cap, keeping nothing of it.
- Every place the agent's user can write in the agent's container is a tmpfs bounded in
  bytes and in files, as the docker backend's workspace is.

The provider runs in Harbor's interpreter (Python >= 3.12, .ci/setup.d/harbor.sh), so its
tests drive it through a script there, on the Docker engine.
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from mle_gym.competitions import get_competition
from mle_gym.data import prepare
from mle_gym.data.cache import CompetitionDirs
from mle_gym.export import verify
from mle_gym.export.harbor import HarborOptions, export_harbor
from mle_gym.grading import bounded
from mle_gym.grading.submission_cap import submission_cap
from mle_gym.sandbox.cgroup import parse_bytes
from mle_gym.sandbox.docker import DEFAULT_DISK
from mle_gym.sandbox.workspace import DEFAULT_FILES
from tests.test_harbor_export import OFFLINE, harbor_python

MiB = 1 << 20


@pytest.fixture
def digits(mle_home: Path) -> CompetitionDirs:
    prepare(get_competition("sklearn-digits"), root=mle_home)
    return CompetitionDirs.of("sklearn-digits", mle_home)


@pytest.mark.parametrize("size", ["over the cap", "a real submission"])
def test_verifier_refuses_an_over_cap_submission_unread(
    size: str, digits: CompetitionDirs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A submission one byte over the env's cap (sparse: nothing to write) is an invalid
    submission with the env's reason, and the grader is never handed the file; the control,
    the answers as a file of their own, is graded (so the watch on the grader is live)."""
    cap = submission_cap(digits.private)
    submission = tmp_path / "submission.csv"
    answers = (digits.private / "test.csv").read_bytes()
    if size == "over the cap":
        with open(submission, "wb") as out:
            out.write(answers.splitlines(keepends=True)[0])  # a valid header, then a hole
            out.truncate(cap + 1)
    else:
        submission.write_bytes(answers)

    graded: list[Path | None] = []
    real = bounded.grade_bounded

    def watched(competition_id: str, path: Path | None, *args, **kwargs):
        graded.append(path)
        if path is not None and size == "over the cap":
            pytest.fail(f"the grader was handed the over-cap file {path}")
        return real(competition_id, path, *args, **kwargs)

    monkeypatch.setattr(bounded, "grade_bounded", watched)
    out = tmp_path / "out"
    verify.main(
        ["--competition", "sklearn-digits", "--submission", str(submission),
         "--answers", str(digits.private), "--out", str(out)]
    )  # fmt: skip
    rewards = json.loads((out / "reward.json").read_text())
    report = json.loads((out / "report.json").read_text())
    if size == "over the cap":
        assert graded == [None]  # only the missing-submission report was made
        assert rewards == {"reward": 0.0, "valid": 0, "above_median": 0, "any_medal": 0}
        assert report["error"] == (
            f"the submission could not be read: {submission} is over the {cap:,}-byte limit"
        )
        assert report["report"]["submission_exists"] is True
    else:
        assert graded == [submission]
        assert rewards["valid"] == 1 and report["error"] is None


# Drives mle_gym's provider as Harbor's trial does: start the task's agent environment,
# run commands in it, download paths from it; prints what happened as JSON.
DRIVER = textwrap.dedent(
    """
    import asyncio, json, sys
    from pathlib import Path
    from harbor.models.task.config import NetworkMode, NetworkPolicy
    from harbor.models.task.task import Task
    from harbor.models.trial.paths import TrialPaths
    from mle_gym.integrations.harbor import MleGymDockerEnvironment

    task_dir, trial_dir, plan = Path(sys.argv[1]), Path(sys.argv[2]), json.loads(sys.argv[3])

    def status_kib(key):  # VmRSS: resident now; VmHWM: the peak since the last reset
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith(key + ":"))

    def reset_peak():
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")

    async def main():
        task = Task(task_dir)
        env = MleGymDockerEnvironment(
            environment_dir=task.paths.environment_dir, environment_name=task.short_name,
            session_id="hostile-harbor__env", trial_paths=TrialPaths(trial_dir),
            task_env_config=task.config.environment,
            network_policy=NetworkPolicy(network_mode=NetworkMode.NO_NETWORK),
            **plan["kwargs"])
        result = {"runs": {}, "downloads": {}}
        await env.start(force_build=False)
        try:
            for name, command, user in plan["commands"]:
                done = await env.exec(command, user=user)
                result["runs"][name] = [done.return_code, done.stdout, done.stderr]
            for name, source, target in plan["downloads"]:
                before = status_kib("VmRSS")
                reset_peak()
                try:
                    await env.download_dir(source, trial_dir / target)
                    error = None
                except Exception as exc:
                    error = f"{type(exc).__name__}: {exc}"
                growth = status_kib("VmHWM") - before
                result["downloads"][name] = {"error": error, "peak_kib": growth}
        finally:
            await env.stop(delete=True)
        print(json.dumps(result))

    asyncio.run(main())
    """
)


def drive(task_dir: Path, trial_dir: Path, plan: dict) -> dict:
    done = subprocess.run(
        [str(harbor_python()), "-c", DRIVER, str(task_dir), str(trial_dir), json.dumps(plan)],
        capture_output=True, text=True, timeout=600,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


@pytest.fixture
def agent_task(digits: CompetitionDirs, docker_engine, tmp_path: Path) -> Path:
    harbor_python()
    (task,) = export_harbor(["sklearn-digits"], tmp_path / "tasks", HarborOptions(image=OFFLINE))
    return task.path


def files_under(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_size for p in root.rglob("*") if p.is_file()}


def test_provider_streams_downloads_and_refuses_one_over_the_cap(
    agent_task: Path, digits: CompetitionDirs, tmp_path: Path
) -> None:
    """A 48 MiB download leaves the provider's peak memory where it was (it was read
    whole: +96 MiB); a submission folder holding a 66 MiB file, over the task's cap (the
    env's 64 MiB floor here), is refused with the reason and nothing of it stays on disk."""
    cap = submission_cap(digits.private) + MiB  # and room for the archive's headers
    plan = {
        "kwargs": {},
        "commands": [
            ["fill", "mkdir -p /home/code/out && head -c 48M /dev/zero > /home/code/out/big "
             "&& truncate -s 66M /home/submission/submission.csv", None],
            ["mounts", "cat /proc/mounts", None],
        ],
        "downloads": [
            ["under", "/home/code/out", "under"],
            ["over", "/home/submission", "artifacts/home/submission"],
        ],
    }  # fmt: skip
    trial = tmp_path / "trial"
    result = drive(agent_task, trial, plan)
    assert result["runs"]["fill"][0] == 0, result["runs"]["fill"]

    under = result["downloads"]["under"]
    assert under["error"] is None
    assert files_under(trial / "under") == {"big": 48 * MiB}
    assert under["peak_kib"] < 16 * 1024, under  # streamed in chunks, not held whole

    over = result["downloads"]["over"]
    assert over["error"] == (
        f"DownloadTooLarge: /home/submission is over the {cap:,}-byte download limit (the "
        "task's submission cap; --environment-kwarg max_download_bytes=N changes it)"
    )
    assert files_under(trial / "artifacts") == {}  # nothing kept, not even a part

    # The defaults are the docker backend's workspace: 8g and a million files a mount.
    mounts = {line.split()[1]: line.split()[3] for line in result["runs"]["mounts"][1].splitlines()}
    for place in ("/home/code", "/home/submission", "/home/agent", "/tmp", "/var/tmp", "/logs"):
        options = mounts[place].split(",")
        assert f"size={parse_bytes(DEFAULT_DISK) // 1024}k" in options, (place, options)
        assert f"nr_inodes={DEFAULT_FILES}" in options, (place, options)


# Run as the agent's user: what it can write outside tmpfs mounts, then each writable
# place filled past its bytes, then one filled with empty files past its inodes.
PROBE = textwrap.dedent(
    """
    tmpfs=$(awk '$3 == "tmpfs" {print $2}' /proc/mounts)
    find / -xdev \\( -path /proc -o -path /sys \\) -prune -o -writable ! -type l -print \\
        2>/dev/null | grep -vxF "$tmpfs" | sed 's/^/writable: /'
    for place in /home/code /home/submission /home/agent /tmp /var/tmp /run/lock; do
        error=$(head -c 32M /dev/zero 2>&1 > "$place/fill")
        echo "bytes $place $? $(stat -c %s "$place/fill") $error"
        rm -f "$place/fill"
    done
    cd /home/code && n=0
    while [ "$n" -lt 5000 ] && : 2>/tmp/err > "f$n"; do n=$((n + 1)); done
    echo "files $n $(cat /tmp/err)"
    """
)


def test_agent_container_writes_only_to_bounded_tmpfs(agent_task: Path, tmp_path: Path) -> None:
    """With a 16 MiB, 1,000-file workspace: the agent's user can write nowhere but the
    tmpfs mounts, 32 MiB into any of them fails with ENOSPC at 16 MiB, and files stop at
    the inode bound (on the container's own layer all of it would reach the host's disk)."""
    plan = {
        "kwargs": {"workspace_disk": "16m", "workspace_inodes": 1000},
        "commands": [["probe", PROBE, "agent"]],
        "downloads": [],
    }
    _code, out, err = drive(agent_task, tmp_path / "trial", plan)["runs"]["probe"]
    lines = out.splitlines()
    assert not [line for line in lines if line.startswith("writable: ")], out
    fills = [line.split(" ", 4) for line in lines if line.startswith("bytes ")]
    assert len(fills) == 6, out + err
    for _, place, status, size, error in fills:
        assert status != "0" and "No space left on device" in error, (place, status, error)
        assert int(size) <= 16 * MiB, (place, size)
    (files,) = [line.split(" ", 2) for line in lines if line.startswith("files ")]
    assert int(files[1]) < 1000 and "No space left on device" in files[2], files
