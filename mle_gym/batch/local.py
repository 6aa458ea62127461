"""Runs a batch's episodes as worker processes on this machine, a fixed number at a time.

GPUs: with `gpus` (device ids) the worker slot k (0 <= k < workers) hands its episode
`assign_gpus(gpus, k, gpus_per_episode)`, so episodes running at the same time spread over
the devices and share them only when workers * gpus_per_episode exceeds the device count.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from mle_gym.batch.launch import start_worker
from mle_gym.batch.spec import EpisodeTask
from mle_gym.runs.layout import LOG_FILE
from mle_gym.runs.store import Outcome, read_outcome
from mle_gym.sandbox.gpus import assign_gpus

#: How long stopped workers get to close their sandboxes before they are killed.
STOP_GRACE_SECONDS = 30.0


@dataclass
class _Running:
    task: EpisodeTask
    directory: Path
    slot: int
    process: subprocess.Popen
    log: IO[bytes]


class LocalScheduler:
    """At most `workers` episodes at once, each in its own process."""

    name = "local"
    shares_host_cache = True

    def __init__(
        self,
        workers: int = 1,
        *,
        gpus: Sequence[int | str] = (),
        gpus_per_episode: int = 1,
        secrets: dict[str, Any] | None = None,
    ) -> None:
        if workers < 1:
            raise ValueError("workers must be at least 1")
        self.capacity: int | None = workers
        self.gpus = [str(g) for g in gpus]
        self.gpus_per_episode = gpus_per_episode
        self.secrets = secrets or {}
        self._running: list[_Running] = []

    def running(self) -> list[EpisodeTask]:
        return [r.task for r in self._running]

    def start(self, task: EpisodeTask, directory: Path) -> None:
        busy = {r.slot for r in self._running}
        slot = next(k for k in range(len(busy) + 1) if k not in busy)
        gpus = assign_gpus(self.gpus, slot, self.gpus_per_episode) if self.gpus else None
        log = open(directory / LOG_FILE, "ab")  # noqa: SIM115  (closed when the worker ends)
        process = start_worker(
            directory, log, gpus=gpus, secrets=self.secrets, concurrent=self.capacity
        )
        self._running.append(_Running(task, directory, slot, process, log))

    def wait(self, timeout: float) -> list[tuple[EpisodeTask, Outcome]]:
        """The episodes that ended within `timeout` seconds (none if none did)."""
        deadline = time.monotonic() + timeout
        while True:
            ended = [r for r in self._running if r.process.poll() is not None]
            if ended or time.monotonic() >= deadline:
                break
            time.sleep(min(0.1, max(0.0, deadline - time.monotonic())))
        for run in ended:
            self._running.remove(run)
            run.log.close()
        return [(r.task, read_outcome(r.directory, r.process.returncode)) for r in ended]

    def stop(self) -> list[EpisodeTask]:
        """Stop every running worker (SIGTERM, then SIGKILL after the grace period)."""
        for run in self._running:
            _signal_group(run.process, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        for run in self._running:
            try:
                run.process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal_group(run.process, signal.SIGKILL)
                run.process.wait()
            run.log.close()
        stopped = [r.task for r in self._running]
        self._running = []
        return stopped


def _signal_group(process: subprocess.Popen, signum: int) -> None:
    """Signal the worker's session (the worker and anything it started outside a sandbox)."""
    try:
        os.killpg(process.pid, signum)
    except ProcessLookupError:
        pass
