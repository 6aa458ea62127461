"""Shared by the grading benchmarks: timing the env's bounded grader in a child process.

Each measurement runs in a fresh interpreter (`run_child`), so one case's peak memory does
not carry into the next; inside it, `time_grades` grades as the env does (`grade_bounded`:
a forked, bounded grading child) and measures that child's peak above a fork doing nothing,
since a forked child's peak counts only the pages it touches.
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
    times, score, error = [], None, None
    for _ in range(1 + repeats):
        start = time.perf_counter()
        report = grade_bounded(competition, folder / "submission.csv", folder / "private")
        times.append(time.perf_counter() - start)
        score, error = report.score, report.error
        if error:
            break
    warm = statistics.median(times[1:]) if len(times) > 1 else None
    return {"cold": times[0], "warm": warm, "mib": _children_peak_mib() - base, "score": score,
            "error": error}  # fmt: skip


def run_child(script: str, *args: str) -> dict:
    """Run `script --child ARGS` in a fresh interpreter; its last output line is JSON."""
    out = subprocess.run(
        [sys.executable, script, "--child", *args], capture_output=True, text=True, check=False
    )
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip().splitlines()[-1] if out.stderr else "child failed")
    return json.loads(out.stdout.strip().splitlines()[-1])
