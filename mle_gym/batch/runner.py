"""Runs every (competition, seed) episode of a batch that is not finished yet.

Resuming is running again: finished episodes are skipped, failed and interrupted ones are
run again, from their newest checkpoint when they have one (batch/checkpoints.py), else
anew. The scheduler decides where episodes run (worker processes here, or Ray tasks); the
listener is told what happens, for a progress display.
"""

from __future__ import annotations

import signal
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from mle_gym.batch.checkpoints import resume_point
from mle_gym.batch.provenance import run_provenance
from mle_gym.batch.spec import POLICY_RUNNER, BatchSpec, EpisodeTask
from mle_gym.competitions import get_competition
from mle_gym.data import require_all_prepared
from mle_gym.grading import build_answer_key
from mle_gym.runs.layout import KEPT_ON_RESUME
from mle_gym.runs.store import Outcome, RunStore

#: How often the listener's `tick` is called while episodes run.
TICK_SECONDS = 0.5


class Scheduler(Protocol):
    name: str
    capacity: int | None
    shares_host_cache: bool

    def start(self, task: EpisodeTask, directory: Path) -> None: ...

    def running(self) -> list[EpisodeTask]: ...

    def wait(self, timeout: float) -> list[tuple[EpisodeTask, Outcome]]: ...

    def stop(self) -> list[EpisodeTask]: ...


class Listener(Protocol):
    def skipped(self, task: EpisodeTask, result: dict[str, Any] | None) -> None: ...

    def started(self, task: EpisodeTask, directory: Path) -> None: ...

    def finished(
        self, task: EpisodeTask, status: dict[str, Any], result: dict[str, Any] | None
    ) -> None: ...

    def tick(self) -> None: ...


@dataclass(frozen=True)
class BatchResult:
    total: int
    skipped: int
    done: int
    failed: int

    @property
    def ok(self) -> bool:
        return self.failed == 0


def run_batch(
    spec: BatchSpec, store: RunStore, scheduler: Scheduler, listener: Listener
) -> BatchResult:
    """Run the unfinished episodes of `spec` into `store` (the caller writes the report).

    SIGTERM and Ctrl-C stop the running workers (their sandboxes are closed) and mark their
    episodes failed, so the next run retries them; one already graded is marked done.
    """
    preflight(spec, store, scheduler)
    with store.locked(), _terminate_raises():
        store.open(spec)
        store.record_provenance(run_provenance(spec.agent, spec.public_options(), spec.env_kwargs))
        tasks = spec.tasks()
        queue: deque[EpisodeTask] = deque()
        for task in tasks:
            if store.is_done(task):
                listener.skipped(task, store.result(task))
            else:
                queue.append(task)
        skipped, done, failed = len(tasks) - len(queue), 0, 0
        begun: EpisodeTask | None = None  # marked running, not yet the scheduler's
        try:
            while queue or scheduler.running():
                while queue and (
                    scheduler.capacity is None or len(scheduler.running()) < scheduler.capacity
                ):
                    task = begun = resumed(spec, store, queue.popleft())
                    keep = KEPT_ON_RESUME if task.resume_checkpoint else ()
                    directory = store.begin(task, keep)
                    scheduler.start(task, directory)
                    begun = None
                    listener.started(task, directory)
                for task, outcome in scheduler.wait(TICK_SECONDS):
                    status = store.finish(task, outcome)
                    done, failed = done + outcome.ok, failed + (not outcome.ok)
                    listener.finished(task, status, store.result(task))
                listener.tick()
        except BaseException:
            # a stop between marking an episode running and starting it leaves it to us
            stopped = list(scheduler.stop())
            if begun is not None and begun not in stopped:
                stopped.append(begun)
            for task in stopped:
                store.interrupted(task)
            raise
    return BatchResult(len(tasks), skipped, done, failed)


def resumed(spec: BatchSpec, store: RunStore, task: EpisodeTask) -> EpisodeTask:
    """The task as this attempt runs it: from the episode's newest checkpoint, if an earlier
    attempt left one and the batch resumes from checkpoints (`resume_from`), else from the
    start. Only the policy runner takes checkpoints."""
    if spec.resume_from != "checkpoint" or task.runner != POLICY_RUNNER:
        return task
    return resume_point(task, store.episode_dir(task))


def preflight(spec: BatchSpec, store: RunStore, scheduler: Scheduler) -> None:
    """Everything that would stop the run, checked before anything is written or shown:
    the run directory (busy, other settings), the data (not prepared) and, on this
    machine, the sandbox (engine, image, GPUs). Safe to call twice."""
    store.check(spec)
    if scheduler.shares_host_cache:
        ensure_prepared(spec.competitions)
        check_sandbox(spec.env_kwargs, getattr(scheduler, "gpus", None))


def check_sandbox(env_kwargs: dict[str, Any], gpus: list[str] | None) -> None:
    """Build one sandbox as the episodes will (not started): what every episode's start
    would hit (no Docker engine, no image, GPUs the engine cannot give) fails the run here,
    once, instead of failing each episode."""
    from mle_gym.sandbox.factory import make_sandbox

    options = dict(env_kwargs.get("sandbox_options") or {})
    if gpus:
        options["gpus"] = list(gpus)
    make_sandbox(env_kwargs.get("backend", "local"), **options)


def ensure_prepared(competitions: tuple[str, ...]) -> None:
    """Prepare competitions with bundled data; fail early, naming them, if others are not.
    Then build each one's answer key here, once, rather than in every worker's first grade."""
    for competition_id, dirs in zip(competitions, require_all_prepared(competitions), strict=True):
        build_answer_key(get_competition(competition_id), dirs.private)


class Terminated(SystemExit):
    """SIGTERM arrived while the batch ran: the workers were stopped, as for Ctrl-C. Exits
    with 128 + SIGTERM where nobody catches it."""


@contextmanager
def _terminate_raises() -> Iterator[None]:
    """Turn SIGTERM into `Terminated` while the batch runs, so the cleanup above happens."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, _frame: Any) -> None:
        raise Terminated(128 + signum)

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
