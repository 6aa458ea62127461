"""Capturing a running sandbox's workspace into a checkpoint, and restoring one into a fresh
sandbox.

Capture takes every writable place of the agent's (`Sandbox.writable_places`), listed and
copied by mle_gym's own code (`list_tree`, `copy_files`: never the agent's shell, never
through a link), the host-written command logs, and the shell's working directory and
exported variables (shell_state.py). Files go into the run's content-addressed store
(store.py); symlinks are kept as their text; FIFOs, sockets and devices are not kept;
set-uid, set-gid and sticky bits are dropped. Running processes are not captured: a
checkpoint says so, and a restore reports it.

Restore checks the whole checkpoint first (store.load: checksums, kinds, modes, paths,
bounds) and only then writes, as the agent, into places of a fresh sandbox (`put_tree`:
new names only, never through a link, permission bits only, never a hard link).
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mle_gym.checkpoints.store import (
    DEFAULT_BOUNDS,
    FORMAT,
    CheckpointBounds,
    CheckpointStore,
    load,
)
from mle_gym.sandbox.base import GONE, LATE, Sandbox, SandboxError, SandboxFileError
from mle_gym.sandbox.shell_state import ShellState, read_shell_state, restore_shell_state
from mle_gym.sandbox.tree import TreeEntry, clean_relative

#: What no checkpoint holds, said in every checkpoint and every restore report.
NOT_KEPT = (
    "running processes (background jobs, servers, notebooks) and what they held in memory "
    "are not captured: start them again after a resume",
    "/dev/shm (shared memory) is not captured",
)
DEFAULT_MAX_SECONDS = 600.0
#: Bytes of files copied out at once; a bigger file is streamed alone.
GROUP_BYTES = 64 * 1024**2
#: Files up to this size are read into memory (where the backend can): writing each to a
#: scratch file costs more than its bytes, and an unchanged one then costs no write at all.
#: Bigger ones go through a scratch file, hashed there and renamed into the store (one copy
#: fewer).
SMALL_FILE_BYTES = 256 * 1024


@dataclass
class RestoreReport:
    """What a restore put back, and what it did not (with the reason each)."""

    checkpoint: Path
    meta: dict[str, Any]
    files: int = 0
    bytes: int = 0
    entries: int = 0
    not_restored: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "checkpoint": str(self.checkpoint),
            "files": self.files,
            "bytes": self.bytes,
            "entries": self.entries,
            "not_restored": self.not_restored,
        }


def capture(
    sandbox: Sandbox,
    store: CheckpointStore,
    meta: dict[str, Any],
    *,
    name: str | None = None,
    bounds: CheckpointBounds = DEFAULT_BOUNDS,
    max_seconds: float = DEFAULT_MAX_SECONDS,
) -> Path:
    """Write a checkpoint of `sandbox`'s workspace and shell into `store` with the caller's
    `meta` (JSON: the episode's step count, budget, configuration...); its folder."""
    deadline = time.monotonic() + max_seconds
    store.root.mkdir(parents=True, exist_ok=True)
    left = _Budget(bounds)
    not_captured: list[str] = []
    places = {
        place: _capture_place(sandbox, store, place, left, not_captured, deadline)
        for place in sandbox.writable_places()
    }
    logs = _capture_logs(sandbox, store, left, not_captured)
    try:
        shell: dict | None = read_shell_state(sandbox).to_json()
    except SandboxError as exc:
        shell = None
        not_captured.append(str(exc))
    manifest = {
        "format": FORMAT,
        "created": time.time(),
        "backend": sandbox.describe().get("backend"),
        "meta": meta,
        "places": places,
        "logs": logs,
        "shell": shell,
        "not_captured": [*NOT_KEPT, *not_captured],
    }
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    return store.write(name or f"checkpoint-{stamp}-{secrets.token_hex(3)}", manifest)


class _Budget:
    """What is left of the bounds as places are captured."""

    def __init__(self, bounds: CheckpointBounds) -> None:
        self.bounds = bounds
        self.entries = bounds.max_entries
        self.bytes = bounds.max_bytes

    def refuse(self, size: int) -> str | None:
        """Why a file of `size` bytes is not taken, or None (it is, and counted)."""
        if self.entries <= 0:
            return f"past the bound of {self.bounds.max_entries:,} entries"
        if size > self.bounds.max_file_bytes:
            return f"{size:,} bytes, over the bound of {self.bounds.max_file_bytes:,} a file"
        if size > self.bytes:
            return f"past the bound of {self.bounds.max_bytes:,} bytes in all"
        self.entries -= 1
        self.bytes -= size
        return None


def _capture_place(
    sandbox: Sandbox,
    store: CheckpointStore,
    place: str,
    left: _Budget,
    not_captured: list[str],
    deadline: float,
) -> list[dict[str, Any]]:
    listed, truncated = sandbox.list_tree(place, max(left.entries, 0))
    if truncated:
        not_captured.append(f"{place}: more entries than the bound; the rest is not kept")
    records, files, dropped = [], [], 0
    for entry in listed:
        if clean_relative(entry.path) is None:
            continue
        shown = f"{place}/{entry.path}"
        if entry.kind == "other":
            not_captured.append(f"{shown}: a FIFO, socket or device is not kept")
            continue
        dropped += bool(entry.mode & ~0o777)
        reason = left.refuse(entry.size if entry.kind == "file" else 0)
        if reason is not None:
            not_captured.append(f"{shown}: {reason}")
        elif entry.kind == "file":
            files.append(entry)
        else:
            record = {"path": entry.path, "type": entry.kind, "mode": entry.mode & 0o777}
            records.append({**record, **({"target": entry.target} if entry.target else {})})
    if dropped:
        not_captured.append(
            f"{place}: set-uid, set-gid and sticky bits of {dropped} entries dropped"
        )
    small = [e for e in files if e.size <= SMALL_FILE_BYTES]
    large = [e for e in files if e.size > SMALL_FILE_BYTES]
    plan = [(g, True) for g in _groups(small)] + [(g, False) for g in _groups(large)]
    for group, in_memory in plan:
        read = _read(sandbox, place, group, left, deadline) if in_memory else None
        with tempfile.TemporaryDirectory(dir=store.root, prefix=".capture-") as scratch:
            if read is None:
                missed = _copy(sandbox, place, group, Path(scratch), left, deadline)
            else:
                contents, missed = read
            for entry in group:
                if entry.path in missed:
                    not_captured.append(f"{place}/{entry.path}: {missed[entry.path]}")
                    continue
                if read is None:
                    digest, size = store.add_blob(Path(scratch) / entry.path)
                else:
                    digest, size = store.add_bytes(contents.pop(entry.path))
                records.append(
                    {"path": entry.path, "type": "file", "mode": entry.mode & 0o777,
                     "size": size, "sha256": digest}
                )  # fmt: skip
    return sorted(records, key=lambda r: r["path"])


def _read(
    sandbox: Sandbox, place: str, group: list[TreeEntry], left: _Budget, deadline: float
) -> tuple[dict[str, bytes], dict[str, str]] | None:
    """A group of small files read into memory where the backend offers it (`read_files`):
    only contents the store lacks are then written; None where it does not."""
    total = sum(e.size for e in group) + left.bytes
    bound = left.bounds.max_file_bytes
    return sandbox.read_files(place, [e.path for e in group], bound, total, deadline)


def _groups(files: list[TreeEntry]) -> list[list[TreeEntry]]:
    """Files in groups of at most `GROUP_BYTES` (a big file alone), so a group copied at once
    (docker holds one group's archive in memory) stays small."""
    groups: list[list[TreeEntry]] = [[]]
    size = 0
    for entry in files:
        if groups[-1] and size + entry.size > GROUP_BYTES:
            groups.append([])
            size = 0
        groups[-1].append(entry)
        size += entry.size
    return [group for group in groups if group]


def _copy(
    sandbox: Sandbox, place: str, group: list[TreeEntry], scratch: Path, left: _Budget,
    deadline: float,
) -> dict[str, str]:  # fmt: skip
    """A group of small files in one `copy_files`; a file bigger than the group's size
    streamed alone with `copy_out`."""
    bound = left.bounds.max_file_bytes
    if len(group) > 1 or group[0].size <= GROUP_BYTES:
        total = sum(e.size for e in group) + left.bytes
        return sandbox.copy_files(place, [e.path for e in group], scratch, bound, total, deadline)
    entry = group[0]
    target = scratch / entry.path
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        if time.monotonic() > deadline:
            return {entry.path: LATE}
        if not sandbox.copy_out(
            f"{place}/{entry.path}", target, min(bound, entry.size + left.bytes)
        ):
            return {entry.path: GONE}
    except SandboxFileError as exc:
        return {entry.path: str(exc)}
    return {}


def _capture_logs(
    sandbox: Sandbox, store: CheckpointStore, left: _Budget, not_captured: list[str]
) -> list[dict[str, Any]]:
    """The command logs mle_gym wrote on the host (the sandbox sees them read-only): the
    regular files directly in the folder, none through a link."""
    logs: Path | None = getattr(sandbox, "logs_dir", None)
    if logs is None:
        return []
    records = []
    for item in sorted(os.scandir(logs), key=lambda e: e.name):
        if not item.is_file(follow_symlinks=False):
            continue
        reason = left.refuse(item.stat(follow_symlinks=False).st_size)
        if reason is not None:
            not_captured.append(f"log {item.name}: {reason}")
            continue
        with tempfile.NamedTemporaryFile(dir=store.root, prefix=".log-", delete=False) as out:
            fd = os.open(item.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            with os.fdopen(fd, "rb") as source:
                shutil.copyfileobj(source, out)
        digest, size = store.add_blob(Path(out.name))
        records.append({"path": item.name, "type": "file", "mode": 0o644, "size": size,
                        "sha256": digest})  # fmt: skip
    return records


def restore(
    sandbox: Sandbox, folder: Path, bounds: CheckpointBounds = DEFAULT_BOUNDS
) -> RestoreReport:
    """Put the checkpoint in `folder` into the freshly started `sandbox`: its places, logs,
    working directory and variables. `CheckpointError` (nothing written) when the checkpoint
    is damaged, edited or outside `bounds`."""
    checkpoint = load(folder, bounds)
    meta = checkpoint.manifest.get("meta")
    report = RestoreReport(Path(folder), meta if isinstance(meta, dict) else {})
    report.not_restored.extend(NOT_KEPT)

    def blob(entry: TreeEntry) -> Path:
        return checkpoint.store.blob_path(entry.sha256 or "")

    here = set(sandbox.writable_places())
    for place, entries in checkpoint.places.items():
        if place not in here:
            if entries:
                report.not_restored.append(
                    f"{place}: not a writable place of this sandbox; its {len(entries)} "
                    "entries were not restored"
                )
            continue
        missed = sandbox.put_tree(place, entries, blob) if entries else {}
        for entry in entries:
            if entry.path in missed:
                report.not_restored.append(f"{place}/{entry.path}: {missed[entry.path]}")
            else:
                report.entries += 1
                report.files += entry.kind == "file"
                report.bytes += entry.size
    _restore_logs(sandbox, checkpoint.logs, blob, report)
    shell = checkpoint.manifest.get("shell")
    if shell is None:
        report.not_restored.append("the shell's state was not captured")
    else:
        try:
            state = ShellState.from_json(shell)
        except ValueError as exc:
            report.not_restored.append(f"the shell's state was not restored: {exc}")
        else:
            report.not_restored.extend(restore_shell_state(sandbox, state))
    return report


def _restore_logs(
    sandbox: Sandbox,
    logs: list[TreeEntry],
    blob: Callable[[TreeEntry], Path],
    report: RestoreReport,
) -> None:
    """Logs go back into the new sandbox's host-side log folder, each as a new file
    (O_EXCL, O_NOFOLLOW: never over or through what is there)."""
    folder: Path | None = getattr(sandbox, "logs_dir", None)
    if folder is None or not logs:
        return
    folder_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        for entry in logs:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            try:
                fd = os.open(entry.path, flags, 0o644, dir_fd=folder_fd)
            except OSError as exc:
                report.not_restored.append(f"log {entry.path}: {exc.strerror}")
                continue
            with os.fdopen(fd, "wb") as out, open(blob(entry), "rb") as source:
                shutil.copyfileobj(source, out)
    finally:
        os.close(folder_fd)
