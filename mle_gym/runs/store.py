"""Reading and writing one run directory: its lock, its settings, each episode's status,
and the records a reader gets back.

Only the driver writes status.json. An episode is finished when its result.json is whole
(`graded`), whatever its status says: a run stopped or killed between the worker's last write
and the driver's leaves the status behind, and every reader (resume, report) goes by the
result. While a run holds the directory's lock, a "running" status left by an earlier run on
an episode without a result means that run died, and the episode is run again.

The store takes a batch's spec and tasks by what they have (`RunSettings`, `EpisodeKey`),
so the records layer knows nothing of how batches are scheduled.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import socket
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from mle_gym.grading.report import summarize
from mle_gym.runs.jsonfile import read_json, write_json
from mle_gym.runs.layout import (
    BATCH_FILE,
    EPISODES_DIR,
    LOCK_FILE,
    LOG_FILE,
    REPORT_FILE,
    RESULT_FILE,
    STATUS_FILE,
    TASK_FILE,
    episode_key,
)
from mle_gym.runs.provenance import add_invocation

LOG_TAIL_CHARS = 2000


class RunDirBusy(RuntimeError):
    """Another process is running a batch in this directory."""


class SettingsMismatch(RuntimeError):
    """The run directory holds episodes of other settings (policy, env options)."""


class EpisodeKey(Protocol):
    """An episode as the store files it (a batch's `EpisodeTask`)."""

    @property
    def key(self) -> str: ...

    def to_dict(self) -> dict[str, Any]: ...


class RunSettings(Protocol):
    """What a run is asked to hold (a batch's `BatchSpec`)."""

    competitions: Sequence[str]
    seeds: Sequence[int]

    def settings(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Outcome:
    """How a worker ended: `ok` when it exited cleanly and left its result."""

    ok: bool
    error: str | None = None
    node: str | None = None


@dataclass(frozen=True)
class EpisodeRecord:
    """A finished or attempted episode as the run directory holds it."""

    competition_id: str
    seed: int
    state: str
    attempt: int
    report: dict[str, Any] | None
    result: dict[str, Any] | None
    error: str | None

    @property
    def key(self) -> str:
        """Its folder under the run's episodes/, e.g. `sklearn-digits/seed-2`."""
        return episode_key(self.competition_id, self.seed)

    @property
    def grade(self) -> dict[str, Any]:
        """Its report's summary (`GradeReport.summary`), every field None without one."""
        return summarize(self.report)


def graded(directory: Path) -> bool:
    """Whether the episode in `directory` was graded: its result.json (written after its
    report, atomically) is whole. A graded episode is never run again, whatever its status
    says (a driver that could not write "done", e.g. on a full disk)."""
    try:
        return isinstance(read_json(directory / RESULT_FILE), dict)
    except (OSError, ValueError):
        return False


def log_tail(directory: Path) -> str:
    path = directory / LOG_FILE
    if not path.is_file():
        return ""
    with open(path, "rb") as handle:
        handle.seek(max(0, path.stat().st_size - LOG_TAIL_CHARS))
        return handle.read().decode(errors="replace").strip()


def read_outcome(directory: Path, exit_code: int | None, node: str | None = None) -> Outcome:
    """A worker's outcome from its exit code and the files it left in `directory`."""
    if graded(directory):
        return Outcome(True, node=node)
    tail = log_tail(directory)
    return Outcome(False, f"worker exited with {exit_code}" + (f":\n{tail}" if tail else ""), node)


class RunStore:
    """Reads and writes one run directory."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.episodes = self.root / EPISODES_DIR

    # -- the run as a whole -----------------------------------------------------------------
    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the directory for this process; the kernel lets go if the process dies."""
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / LOCK_FILE, "w") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise RunDirBusy(f"another mle-gym run is using {self.root}") from None
            yield

    def check(self, spec: RunSettings) -> None:
        """Refuse now, writing nothing, a directory that `locked` or `open` would refuse:
        one another run holds, or one with episodes of other settings."""
        lock = self.root / LOCK_FILE
        if lock.is_file():
            with open(lock) as handle:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    raise RunDirBusy(f"another mle-gym run is using {self.root}") from None
                fcntl.flock(handle, fcntl.LOCK_UN)
        self._check_settings(spec)

    def _check_settings(self, spec: RunSettings) -> None:
        batch = read_json(self.root / BATCH_FILE)
        if batch is not None and batch["settings"] != json.loads(json.dumps(spec.settings())):
            raise SettingsMismatch(
                f"{self.root} holds a run with other settings ({batch['settings']}); "
                "use another --run-dir"
            )

    def has_run(self) -> bool:
        """Whether a batch ran in this directory before (its batch.json is there)."""
        return (self.root / BATCH_FILE).is_file()

    def open(self, spec: RunSettings) -> None:
        """Record the settings, or check they match those of the episodes already here."""
        self._check_settings(spec)
        self.episodes.mkdir(parents=True, exist_ok=True)
        batch = read_json(self.root / BATCH_FILE)
        competitions = sorted(set(batch["competitions"] if batch else ()) | set(spec.competitions))
        seeds = sorted(set(batch["seeds"] if batch else ()) | set(spec.seeds))
        write_json(
            self.root / BATCH_FILE,
            {"settings": spec.settings(), "competitions": competitions, "seeds": seeds},
        )

    def record_provenance(self, entry: dict[str, Any]) -> None:
        """Add this invocation's record (a resume may run elsewhere, or another version)."""
        add_invocation(self.root, entry)

    # -- one episode ------------------------------------------------------------------------
    def episode_dir(self, task: EpisodeKey) -> Path:
        return self.episodes / task.key

    def status(self, task: EpisodeKey) -> dict[str, Any] | None:
        return read_json(self.episode_dir(task) / STATUS_FILE)

    def is_done(self, task: EpisodeKey) -> bool:
        status = self.status(task)
        if status is None:
            return False
        if status["state"] != "done" and graded(self.episode_dir(task)):
            self.finish(task, Outcome(True, node=status.get("node")))  # the status it missed
            return True
        return status["state"] == "done"

    def begin(self, task: EpisodeKey, keep: Sequence[str] = ()) -> Path:
        """Clear what an earlier attempt left, but the entries named in `keep` (an episode
        resumed from a checkpoint keeps `layout.KEPT_ON_RESUME`), and mark the episode
        running."""
        previous = self.status(task) or {}
        directory = self.episode_dir(task)
        if keep and directory.is_dir():
            for entry in directory.iterdir():
                if entry.name in keep:
                    continue
                if entry.is_dir() and not entry.is_symlink():
                    shutil.rmtree(entry, ignore_errors=True)
                else:
                    entry.unlink(missing_ok=True)
        else:
            shutil.rmtree(directory, ignore_errors=True)
        directory.mkdir(parents=True, exist_ok=True)
        write_json(directory / TASK_FILE, task.to_dict())
        write_json(
            directory / STATUS_FILE,
            {
                "state": "running",
                "attempt": previous.get("attempt", 0) + 1,
                "started_at": time.time(),
                "driver": f"{socket.gethostname()}:{os.getpid()}",
            },
        )
        return directory

    def finish(self, task: EpisodeKey, outcome: Outcome) -> dict[str, Any]:
        directory = self.episode_dir(task)
        status = read_json(directory / STATUS_FILE) or {"attempt": 1}
        status.update(
            state="done" if outcome.ok else "failed",
            finished_at=time.time(),
            error=outcome.error,
            node=outcome.node,
        )
        write_json(directory / STATUS_FILE, status)
        return status

    def interrupted(self, task: EpisodeKey) -> dict[str, Any]:
        """Mark a stopped episode failed, to run again, unless it was graded before the stop
        landed (its worker was closing its sandbox): then it is done."""
        if graded(self.episode_dir(task)):
            return self.finish(task, Outcome(True))
        return self.finish(task, Outcome(False, "interrupted: the run was stopped"))

    def result(self, task: EpisodeKey) -> dict[str, Any] | None:
        return read_json(self.episode_dir(task) / RESULT_FILE)

    # -- reading a run ----------------------------------------------------------------------
    def records(self) -> list[EpisodeRecord]:
        """Every episode that was attempted, sorted by competition then seed."""
        found = []
        for status_path in self.episodes.glob(f"*/seed-*/{STATUS_FILE}"):
            directory = status_path.parent
            status = read_json(status_path)
            done = graded(directory)  # the rule `is_done` resumes by, whatever the status
            found.append(
                EpisodeRecord(
                    competition_id=directory.parent.name,
                    seed=int(directory.name.removeprefix("seed-")),
                    state="done" if done else status["state"],
                    attempt=status.get("attempt", 1),
                    report=read_json(directory / REPORT_FILE),
                    result=read_json(directory / RESULT_FILE),
                    error=None if done else status.get("error"),
                )
            )
        return sorted(found, key=lambda r: (r.competition_id, r.seed))
