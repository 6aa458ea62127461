"""Grading a submission in a child process with memory, CPU-time and wall-clock limits.

A submission is written by the agent, so parsing it is parsing hostile input: pathological
headers cost quadratic time, tiny rows cost many times the file in memory. The env grades
in a child that the kernel stops at its limits; a stopped child is an invalid submission
whose report says which limit it hit, never an exception and never a stuck host.

Children are forked by a grading server: one helper process per host process, started
with `subprocess` (so it works inside Gymnasium's daemonic vector workers, which may not
have multiprocessing children), single-threaded (so forking it is safe however many
threads the host has), and with the grader imported once (so a grade costs a fork, not an
interpreter start). It dies with its parent.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from mle_gym.competitions import get_competition
from mle_gym.grading.grader import grade
from mle_gym.grading.report import GradeReport


@dataclass(frozen=True)
class GradingLimits:
    """What one grade may use: address space (bytes), CPU seconds and wall-clock seconds."""

    memory: int = 8 * 1024**3
    cpu_seconds: int = 900
    wall_seconds: float = 1200.0


def _failed(competition_id: str, shown: str | None, reason: str) -> GradeReport:
    base = grade(get_competition(competition_id), None, Path("/nonexistent"), shown_path=shown)
    return replace(
        base, submission_exists=True, error=f"the submission could not be graded: {reason}"
    )


# -- the server side ----------------------------------------------------------------------------
def _grade_in_child(request: dict, out: str) -> None:
    """The forked child: take the limits, grade, leave the pickled report in `out`."""
    limits = GradingLimits(**request["limits"])
    resource.setrlimit(resource.RLIMIT_AS, (limits.memory, limits.memory))
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds))
    comp_id, shown = request["competition_id"], request["shown"]
    submission = Path(request["submission"]) if request["submission"] else None
    try:
        report = grade(
            get_competition(comp_id), submission, Path(request["private"]), shown_path=shown
        )
    except MemoryError:
        report = _failed(comp_id, shown, f"it needed more than {limits.memory:,} bytes of memory")
    except Exception as exc:  # a grader bug must still give a report
        report = _failed(comp_id, shown, f"the grader failed: {type(exc).__name__}: {exc}")
    Path(out).write_bytes(pickle.dumps(report))


def _wait(pid: int, seconds: float) -> int | None:
    """The child's wait status, or None when it is still running after `seconds`."""
    deadline = time.monotonic() + seconds
    pause = 0.001
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        if time.monotonic() >= deadline:
            return None
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def _preload() -> None:
    """Import what grading uses before any child is forked under its limits: an import
    inside a child with a small address space would fail as a missing library, not as
    the memory limit it is."""
    import numpy  # noqa: F401
    import pandas  # noqa: F401
    import sklearn.metrics  # noqa: F401

    from mle_gym.grading.metrics import METRICS
    from mle_gym.grading.validation import validate  # noqa: F401

    len(METRICS)  # gathers every metric module


def serve() -> None:
    """Read one JSON request a line; fork a child per request; answer with its fate."""
    _preload()
    for line in sys.stdin:
        request = json.loads(line)
        out = request["out"]
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                _grade_in_child(request, out)
            except BaseException:
                code = 1
            finally:
                os._exit(code)
        status = _wait(pid, request["limits"]["wall_seconds"])
        if status is None:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            answer = {"timeout": True}
        elif os.WIFSIGNALED(status):
            answer = {"signal": os.WTERMSIG(status)}
        else:
            answer = {"exit": os.WEXITSTATUS(status)}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


# -- the host side ------------------------------------------------------------------------------
def _die_with_parent() -> None:
    import ctypes

    ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class _Server:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.process: subprocess.Popen[str] | None = None
        self.owner = 0

    def ask(self, request: dict) -> dict:
        with self.lock:
            if self.process is None or self.process.poll() is not None or self.owner != os.getpid():
                self.process = subprocess.Popen(
                    [sys.executable, "-c", "from mle_gym.grading.bounded import serve; serve()"],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    text=True,
                    preexec_fn=_die_with_parent,
                )
                self.owner = os.getpid()
            assert self.process.stdin is not None and self.process.stdout is not None
            self.process.stdin.write(json.dumps(request) + "\n")
            self.process.stdin.flush()
            answer = self.process.stdout.readline()
            if not answer:
                self.process = None
                return {"exit": None}
            return json.loads(answer)


_server = _Server()


def grade_bounded(
    competition_id: str,
    submission: Path | None,
    private_dir: Path,
    *,
    shown_path: str | None = None,
    limits: GradingLimits | None = None,
) -> GradeReport:
    """`grade` in a child process under `limits`; any failure is an invalid report."""
    limits = limits or GradingLimits()
    with tempfile.TemporaryDirectory(prefix="mle-gym-grade-") as scratch:
        out = Path(scratch) / "report.pickle"
        answer = _server.ask(
            {
                "competition_id": competition_id,
                "submission": str(submission) if submission else None,
                "private": str(private_dir),
                "shown": shown_path,
                "limits": asdict(limits),
                "out": str(out),
            }
        )
        if answer.get("exit") == 0 and out.is_file():
            with contextlib.suppress(Exception):
                return pickle.loads(out.read_bytes())
    if answer.get("timeout"):
        reason = f"grading took longer than {limits.wall_seconds:g} s"
    elif answer.get("signal") == signal.SIGXCPU:
        reason = f"grading used more than {limits.cpu_seconds} s of CPU time"
    elif answer.get("signal"):
        reason = f"the grading process was killed (signal {answer['signal']}), likely for memory"
    else:
        reason = "the grading process ended without a report"
    return _failed(competition_id, shown_path, reason)
