"""Runs a batch's episodes as Ray tasks on an existing Ray cluster (`--ray auto|ADDRESS`).

Each episode is one task that asks Ray for the episode's CPUs, memory and GPUs, so Ray
places as many episodes on each node as fit. On its node the task starts the same worker
process as a local run, in a temporary directory, and returns that directory's files (the
trajectory, submission, report, result, log, and the episode's checkpoints), which the
driver writes into the run directory: nodes need no shared filesystem. A task that resumes
an episode from a checkpoint is sent the episode's checkpoints and trajectory to start
from. With GPUs, the sandbox gets exactly the devices Ray assigned to the task
(`ray.get_gpu_ids()`).

If the driver dies, Ray kills its tasks' processes outright (SIGKILL), leaving no chance to
clean up; so each task keeps its sandboxes' workspaces inside its own temporary directory,
with a file naming its process, and every task first removes the directories of tasks whose
process is gone.

Every node needs mle-gym installed (with the same version) and the competitions' data
prepared in its own MLE_GYM_HOME, and, for `--backend docker`, a Docker engine with the
agent image.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

from mle_gym.batch.launch import start_worker
from mle_gym.batch.resources import EpisodeResources
from mle_gym.batch.spec import EpisodeTask
from mle_gym.runs.jsonfile import write_json
from mle_gym.runs.layout import (
    CHECKPOINTS_DIR,
    LOG_FILE,
    STATUS_FILE,
    TASK_FILE,
    TRAJECTORY_FILE,
)
from mle_gym.runs.store import Outcome, read_outcome
from mle_gym.sandbox.scratch import OWNER_FILE, discard, owned_dir, sweep

#: How long cancelled tasks get to close their sandboxes before they are killed.
STOP_GRACE_SECONDS = 30.0


def run_on_node(
    task: dict[str, Any], secrets: dict[str, Any], carried: dict[str, bytes] | None = None
) -> dict[str, Any]:
    """The body of an episode's Ray task: the worker process, and its files as bytes.
    `carried`: files of the episode's folder by relative path (a resumed episode's
    checkpoints and trajectory), put in place before the worker starts."""
    import ray

    gpus = [str(g) for g in ray.get_gpu_ids()]
    # Ray SIGKILLs a dead driver's tasks, so each task's files name their owner and the
    # next task on the node removes what killed tasks left.
    directory = owned_dir("ray")
    try:
        sweep(directory.parent)
        (directory / "tmp").mkdir()
        write_files(directory, carried or {})
        write_json(directory / TASK_FILE, task)
        with open(directory / LOG_FILE, "ab") as log:
            process = start_worker(
                directory, log, gpus=gpus or None, secrets=secrets, tmpdir=directory / "tmp"
            )
            try:
                exit_code = process.wait()
            except BaseException:  # ray.cancel: let the worker close its sandbox first
                process.terminate()
                try:
                    process.wait(STOP_GRACE_SECONDS)
                except subprocess.TimeoutExpired:
                    process.kill()
                raise
        files = {
            p.name: p.read_bytes()
            for p in directory.iterdir()
            if p.is_file() and p.name not in (TASK_FILE, OWNER_FILE)
        }
        files.update(read_files(directory, CHECKPOINTS_DIR))
    finally:
        discard(directory)
    return {"exit_code": exit_code, "node": ray.util.get_node_ip_address(), "files": files}


def read_files(directory: Path, folder: str) -> dict[str, bytes]:
    """The files under `directory/folder`, by their path relative to `directory`."""
    root = directory / folder
    if not root.is_dir():
        return {}
    return {
        str(p.relative_to(directory)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def write_files(directory: Path, files: dict[str, bytes]) -> None:
    """Write `files` (relative path -> bytes) under `directory`; a path that would leave it
    is refused."""
    for name, data in files.items():
        relative = Path(name)
        if relative.is_absolute() or ".." in relative.parts or not relative.parts:
            raise ValueError(f"refused to write {name!r}: not a path inside the episode folder")
        target = directory / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


class RayScheduler:
    """Episodes as Ray tasks; `capacity` caps how many are submitted at once (None: all)."""

    name = "ray"
    shares_host_cache = False

    def __init__(
        self,
        address: str,
        resources: EpisodeResources,
        *,
        capacity: int | None = None,
        secrets: dict[str, Any] | None = None,
    ) -> None:
        try:
            import ray
        except ImportError:
            raise RuntimeError("--ray needs Ray: pip install 'mle-gym[ray]'") from None
        self._ray = ray
        try:
            ray.init(address=address, log_to_driver=False, logging_level="ERROR")
        except ConnectionError as exc:
            raise RuntimeError(
                f"no Ray cluster reachable at {address!r} ({exc}); start one "
                "with `ray start --head` (see docs/batch.md)"
            ) from None
        self.capacity = capacity
        self.resources = resources
        self.secrets = secrets or {}
        self._remote = ray.remote(max_calls=1)(run_on_node)
        self._pending: dict[Any, tuple[EpisodeTask, Path]] = {}

    def running(self) -> list[EpisodeTask]:
        return [task for task, _ in self._pending.values()]

    def start(self, task: EpisodeTask, directory: Path) -> None:
        options: dict[str, Any] = {
            "num_cpus": self.resources.cpus,
            "num_gpus": self.resources.gpus,
            "name": f"mle-gym {task.key}",
        }
        if self.resources.memory:
            options["memory"] = self.resources.memory
        carried = {}
        if task.resume_checkpoint is not None:  # the node needs what the episode goes on from
            carried = read_files(directory, CHECKPOINTS_DIR)
            if (directory / TRAJECTORY_FILE).is_file():
                carried[TRAJECTORY_FILE] = (directory / TRAJECTORY_FILE).read_bytes()
        ref = self._remote.options(**options).remote(task.to_dict(), self.secrets, carried)
        self._pending[ref] = (task, directory)

    def wait(self, timeout: float) -> list[tuple[EpisodeTask, Outcome]]:
        if not self._pending:
            return []
        ready, _ = self._ray.wait(
            list(self._pending), num_returns=len(self._pending), timeout=timeout
        )
        ended = []
        for ref in ready:
            task, directory = self._pending.pop(ref)
            ended.append((task, self._collect(ref, directory)))
        return ended

    def stop(self) -> list[EpisodeTask]:
        """Cancel every submitted task; wait (bounded) for their workers to clean up."""
        refs = list(self._pending)
        for ref in refs:
            self._ray.cancel(ref)
        if refs:
            self._ray.wait(refs, num_returns=len(refs), timeout=STOP_GRACE_SECONDS)
        stopped = self.running()
        self._pending.clear()
        return stopped

    def close(self) -> None:
        self._ray.shutdown()

    def _collect(self, ref: Any, directory: Path) -> Outcome:
        try:
            returned = self._ray.get(ref)
        except self._ray.exceptions.RayError as exc:
            return Outcome(False, f"the Ray task failed: {exc}")
        files = {k: v for k, v in returned["files"].items() if k != STATUS_FILE}
        if any(Path(name).parts[0] == CHECKPOINTS_DIR for name in files):
            # the node's store, pruned there, replaces the one here (its blobs are read-only)
            shutil.rmtree(directory / CHECKPOINTS_DIR, ignore_errors=True)
        write_files(directory, files)
        return read_outcome(directory, returned["exit_code"], returned["node"])
