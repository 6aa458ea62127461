"""Shared by the grading benchmarks: timing the env's bounded grader in a child process.

Each measurement runs in a fresh interpreter (`run_child`), so one case's peak memory does
not carry into the next; inside it, `time_grades` grades as the env does (`grade_bounded`:
a forked, bounded grading child) and measures that child's peak above a fork doing nothing,
since a forked child's peak counts only the pages it touches, and its CPU time, which other
work on a shared machine does not inflate as it does the wall-clock time.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path


def _children_peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def time_grades(competition: str, folder: Path, repeats: int) -> dict:
    """Grade `folder/submission.csv` against `folder/private` once cold (the first grade
    writes the answer key) and `repeats` times warm; stops at the first invalid report."""
    from mle_gym.competitions import get_competition
    from mle_gym.grading.bounded import _preload, grade_bounded

    _preload()
    get_competition(competition)
    pid = os.fork()  # does nothing: the baseline of the grading child's memory
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    base = _children_peak_mib()
    times, cpu, score, error = [], [], None, None
    for _ in range(1 + repeats):
        start, used = time.perf_counter(), _children_cpu()
        report = grade_bounded(competition, folder / "submission.csv", folder / "private")
        times.append(time.perf_counter() - start)
        cpu.append(_children_cpu() - used)
        score, error = report.score, report.error
        if error:
            break
    warm = statistics.median(times[1:]) if len(times) > 1 else None
    warm_cpu = statistics.median(cpu[1:]) if len(cpu) > 1 else None
    return {"cold": times[0], "warm": warm, "warm_cpu": warm_cpu,
            "mib": _children_peak_mib() - base, "score": score, "error": error}  # fmt: skip


def run_child(script: str, *args: str, checkout: str | None = None) -> dict:
    """Run `script --child ARGS` in a fresh interpreter; its last output line is JSON.
    `checkout`: a folder whose `mle_gym` the child imports instead of this one's."""
    env = {**os.environ, "PYTHONPATH": checkout} if checkout else None
    out = subprocess.run(
        [sys.executable, script, "--child", *args], capture_output=True, text=True, check=False,
        env=env,
    )  # fmt: skip
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip().splitlines()[-1] if out.stderr else "child failed")
    return json.loads(out.stdout.strip().splitlines()[-1])
