"""Grading a submission in a child process with memory, CPU-time and wall-clock limits.

A submission is written by the agent, so parsing it is parsing hostile input: pathological
headers cost quadratic time, tiny rows cost many times the file in memory. The env grades
in a child that the kernel stops at its limits; a stopped child is an invalid submission
whose report says which limit it hit, never an exception and never a stuck host. The one
exception is a damaged answer key (`AnswerKeyError`), raised here as in `grade`: it is no
submission's fault, so it is never reported as an invalid one.

The child is a fork of the env's own process, made after the grader and its libraries
are imported (once per process): a grade costs a fork, the child shares the parent's pages
until it writes, and nothing is imported in the child (an import there could wait on a
lock another thread of the host held at the fork). Forking needs no multiprocessing, so
it also works inside Gymnasium's daemonic vector workers.
"""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import resource
import select
import signal
import tempfile
import warnings
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from mle_gym.competitions import get_competition
from mle_gym.extras import install_hint
from mle_gym.forks import FORK_LOCK
from mle_gym.grading.budget import GradingBudget, GradingBudgetSpent
from mle_gym.grading.errors import AnswerKeyError
from mle_gym.grading.grader import check_submission, grade
from mle_gym.grading.report import GradeReport


@dataclass(frozen=True)
class GradingLimits:
    """What one grade may use: address space (bytes), CPU seconds and wall-clock seconds.

    `memory` caps the child's whole address space; with `memory_added` it caps what the
    child may add to the address space it inherits from the fork. That inheritance (the
    env's threads' stacks and malloc arenas: 1-2 GiB, mostly never backed by memory) is no
    memory the grade spends, so an episode's share of the host is counted this way."""

    memory: int = 8 * 1024**3
    cpu_seconds: int = 900
    wall_seconds: float = 1200.0
    memory_added: bool = False


def _failed(competition_id: str, shown: str | None, reason: str) -> GradeReport:
    base = grade(get_competition(competition_id), None, Path("/nonexistent"), shown_path=shown)
    return replace(
        base, submission_exists=True, error=f"the submission could not be graded: {reason}"
    )


def _grade_in_child(
    competition_id: str, submission: Path | None, private: Path, shown: str | None,
    limits: GradingLimits, out: Path, check_only: bool = False,
) -> None:  # fmt: skip
    """The forked child: take the limits, grade, leave the pickled report in `out`. With
    `check_only`, only validate: the pickled result is the reason the file is invalid or
    None, and no metric runs (no score exists to leak)."""
    import pyarrow  # imported by `_preload` before the fork: no import happens here

    # The parent's objects are not this child's garbage: left out of its collections, they
    # are not walked, so their pages are not copied.
    gc.freeze()
    cap = limits.memory + (_address_space() if limits.memory_added else 0)
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a killed grade dumps no GBs of core
    # SIGXCPU at the limit (a hard limit equal to it would be a bare SIGKILL, which reads
    # as a memory kill); SIGKILL a second later should the signal be caught
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1))
    # The system allocator hands freed blocks back, where pyarrow's default pools keep them:
    # a grade's peak memory is then what it holds, not what it once held. (jemalloc peaks
    # lower still, but at the memory limit it crashed the child where malloc fails cleanly.)
    pyarrow.set_memory_pool(pyarrow.system_memory_pool())
    try:
        comp = get_competition(competition_id)
        if check_only:
            out.write_bytes(pickle.dumps(check_submission(comp, submission, private)))
            return
        report = grade(comp, submission, private, shown_path=shown)
    except AnswerKeyError as exc:  # the parent raises it
        out.write_bytes(pickle.dumps(AnswerKeyError(str(exc))))
        return
    except ModuleNotFoundError as exc:
        hint = install_hint(exc)
        reason = f"the grader needs the package {exc.name!r}" + (f": {hint}" if hint else "")
        report = _failed(competition_id, shown, reason)
    except MemoryError:
        beyond = " beyond the grading process's start" if limits.memory_added else ""
        reason = f"it needed more than {limits.memory:,} bytes of memory{beyond}"
        report = _failed(competition_id, shown, reason)
    except Exception as exc:  # a grader bug must still give a report
        report = _failed(competition_id, shown, f"the grader failed: {type(exc).__name__}: {exc}")
    out.write_bytes(pickle.dumps(report))


def _address_space() -> int:
    """This process's virtual size in bytes."""
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[0]) * resource.getpagesize()


def _wait(pid: int, gone: int, seconds: float) -> tuple[int, float] | None:
    """The child's wait status and the CPU seconds it used, or None when it is still
    running after `seconds`. `gone` is a pipe's read end whose write end only the child
    holds: it reads EOF the moment the child ends, so the wait is exact and costs no
    polling."""
    poller = select.poll()  # not select(): a process holding many sandboxes passes fd 1024
    poller.register(gone, select.POLLIN)
    if not poller.poll(round(seconds * 1000)):
        return None
    return _reap(pid)


def _reap(pid: int) -> tuple[int, float]:
    """Wait for the ended child: its status and its CPU seconds (user and system)."""
    _pid, status, usage = os.wait4(pid, 0)
    return status, usage.ru_utime + usage.ru_stime


@lru_cache(maxsize=1)
def _preload() -> None:
    """Import everything grading uses, in this process, before the first fork, and fill the
    caches libraries fill on first use, which every grading child would fill again."""
    import codecs

    import numpy  # noqa: F401
    import pandas  # noqa: F401
    import pyarrow.compute
    import pyarrow.csv
    import sklearn.metrics

    codecs.lookup("utf-8-sig")  # the CSV header's codec, imported on first use
    pyarrow.table({"a": ["b"]}).to_pandas()  # the first conversion imports pyarrow's pandas parts
    # scikit-learn's first metric call looks for narwhals plugins in the metadata of every
    # installed package (16 ms a grade, in a fresh child)
    sklearn.metrics.mean_absolute_error([0.0], [0.0])

    from mle_gym.grading.metrics import METRICS, SCORED_ROWS
    from mle_gym.grading.validation import validate  # noqa: F401

    len(METRICS), len(SCORED_ROWS)  # gathers every metric module


def warm_up() -> None:
    """Import the grader's libraries now (once per process): an env does it before its
    clock starts, so the first validate or grade charges no seconds of imports to the
    agent's budget."""
    _preload()


def grade_bounded(
    competition_id: str,
    submission: Path | None,
    private_dir: Path,
    *,
    shown_path: str | None = None,
    limits: GradingLimits | None = None,
    budget: GradingBudget | None = None,
) -> GradeReport:
    """`grade` in a child process under `limits`; any failure is an invalid report. With a
    `budget`, the child gets at most what is left of it, and with nothing left the grade
    is not run: its report is invalid and says why."""
    if budget is None:
        return _bounded(competition_id, submission, private_dir, shown_path, limits, False)
    try:
        return grade_within(
            competition_id, submission, private_dir, budget, shown_path=shown_path, limits=limits
        )
    except GradingBudgetSpent as exc:
        return _failed(competition_id, shown_path, str(exc))


def grade_within(
    competition_id: str,
    submission: Path | None,
    private_dir: Path,
    budget: GradingBudget,
    *,
    shown_path: str | None = None,
    limits: GradingLimits | None = None,
    keep: float = 0.0,
) -> GradeReport:
    """`grade_bounded` spending `budget` down to `keep` at most; with less left it raises
    GradingBudgetSpent and nothing runs."""
    return _bounded(  # type: ignore[return-value]
        competition_id, submission, private_dir, shown_path, limits, False, budget, keep
    )


def check_bounded(
    competition_id: str,
    submission: Path | None,
    private_dir: Path,
    *,
    shown_path: str | None = None,
    limits: GradingLimits | None = None,
    budget: GradingBudget | None = None,
    keep: float = 0.0,
) -> str | None:
    """Whether `submission` would be graded, checked in a bounded child without computing
    any score (the validate tool): None when valid, else the reason. With a `budget`, the
    check may spend it down to `keep`; past that it raises GradingBudgetSpent, unrun."""
    if submission is None or not submission.is_file():
        return "no submission file"
    result = _bounded(
        competition_id, submission, private_dir, shown_path, limits, True, budget, keep
    )
    if isinstance(result, GradeReport):  # the child failed: the failure's report says why
        return result.error
    return result


def _bounded(
    competition_id: str,
    submission: Path | None,
    private_dir: Path,
    shown_path: str | None,
    limits: GradingLimits | None,
    check_only: bool,
    budget: GradingBudget | None = None,
    keep: float = 0.0,
) -> GradeReport | str | None:  # fmt: skip
    limits = limits or GradingLimits()
    _preload()
    get_competition(competition_id)  # loads the catalog here, not in the child
    if budget is None:
        return _run_child(
            competition_id, submission, private_dir, shown_path, limits, check_only, None
        )[0]
    granted = budget.grant(limits.cpu_seconds, keep)
    used = float(granted)  # charged in full should the wait itself fail
    try:
        result, used = _run_child(
            competition_id, submission, private_dir, shown_path,
            replace(limits, cpu_seconds=granted), check_only,
            budget if granted < limits.cpu_seconds else None,
        )  # fmt: skip
    finally:
        budget.settle(granted, used)
    return result


def _run_child(
    competition_id: str,
    submission: Path | None,
    private_dir: Path,
    shown_path: str | None,
    limits: GradingLimits,
    check_only: bool,
    cut_by: GradingBudget | None,
) -> tuple[GradeReport | str | None, float]:  # fmt: skip
    """Fork the grading child under `limits`: its result and the CPU seconds it used.
    `cut_by` is the budget that set its CPU limit below the per-grade one, if any."""
    with tempfile.TemporaryDirectory(prefix="mle-gym-grade-") as scratch:
        out = Path(scratch) / "report.pickle"
        gone, alive = os.pipe()
        with FORK_LOCK, warnings.catch_warnings():
            # Python 3.12 warns about fork() with threads; the child only grades and exits
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:
            os.close(gone)
            code = 0
            try:
                _grade_in_child(
                    competition_id, submission, private_dir, shown_path, limits, out, check_only
                )
            except BaseException:
                code = 1
            finally:
                os._exit(code)
        os.close(alive)
        try:
            ended = _wait(pid, gone, limits.wall_seconds)
        finally:
            os.close(gone)
        if ended is None:
            os.kill(pid, signal.SIGKILL)
            status, used = None, _reap(pid)[1]
        else:
            status, used = ended
        if status is not None and os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGXCPU:
            used = max(used, limits.cpu_seconds)  # the kernel's count passed the limit
        if (
            status is not None
            and os.WIFEXITED(status)
            and os.WEXITSTATUS(status) == 0
            and out.is_file()
        ):
            unread = object()
            loaded: object = unread
            with contextlib.suppress(Exception):
                loaded = pickle.loads(out.read_bytes())
            if isinstance(loaded, AnswerKeyError):
                raise loaded
            if loaded is not unread:  # a check's None (valid) is a result too
                return loaded, used  # type: ignore[return-value]
    if status is None:
        reason = f"grading took longer than {limits.wall_seconds:g} s"
    elif os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGXCPU:
        reason = f"grading used more than {limits.cpu_seconds} s of CPU time" + (
            f", the rest of this episode's host grading budget ({cut_by.seconds:g} CPU "
            "seconds for all its grades)"
            if cut_by is not None
            else ""
        )
    elif os.WIFSIGNALED(status):
        reason = f"the grading process was killed (signal {os.WTERMSIG(status)}), likely for memory"
    else:
        reason = "the grading process ended without a report"
    return _failed(competition_id, shown_path, reason), used
