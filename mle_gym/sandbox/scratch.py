"""Scratch directories that name their owner, so a killed process's leftovers get removed.

Each directory holds an `owner` file with the creating process's pid and start time (a
reused pid does not pass for the owner). `sweep` removes the directories whose owner is
gone; sandboxes call it when a process starts its first one, and `mle-gym gc` calls it.
`discard` removes the owner file last, so a folder that could not be removed whole still
names its owner, and a later sweep tries again. Neither ever raises: a tree an agent
shaped must not break the next episode's start.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from mle_gym.sandbox.teardown import attempt, remove_tree

PREFIX = "mle-gym-"
OWNER_FILE = "owner"


def process_identity(pid: int) -> str | None:
    """`pid:start-time` of a live process (None if there is no such process)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return f"{pid}:{handle.read().rsplit(')', 1)[1].split()[19]}"
    except (OSError, IndexError):
        return None


#: This process's pid and identity, read once (a forked child reads its own).
_own: tuple[int, str] = (0, "")


def _own_identity() -> str:
    global _own
    pid = os.getpid()
    if _own[0] != pid:
        _own = (pid, process_identity(pid) or "")
    return _own[1]


def owned_dir(kind: str, parent: Path | None = None) -> Path:
    """A new directory `mle-gym-<kind>-*` (in the temp dir) owned by this process."""
    directory = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{kind}-", dir=parent))
    (directory / OWNER_FILE).write_text(_own_identity())
    return directory


def owner_alive(directory: Path) -> bool | None:
    """Whether the directory's owner still runs (None: not an owned directory, or not yet)."""
    try:
        owner = (directory / OWNER_FILE).read_text()
        pid = int(owner.split(":", 1)[0])
    except (OSError, ValueError):
        return None
    return process_identity(pid) == owner


def discard(directory: Path) -> bool:
    """Remove an owned directory, its owner file last; True when nothing is left."""
    return remove_tree(directory, last=OWNER_FILE)


def sweep(parent: Path | None = None, pattern: str = f"{PREFIX}*") -> list[Path]:
    """Remove the owned directories under `parent` (the temp dir) whose owner is gone;
    return those removed. What cannot be removed is logged and left for the next sweep."""
    removed = []
    try:
        candidates = list(Path(parent or tempfile.gettempdir()).glob(pattern))
    except OSError:
        return removed
    for directory in candidates:
        try:
            dead = directory.is_dir() and owner_alive(directory) is False
        except OSError:
            continue
        if dead and discard(directory):
            removed.append(directory)
    return removed


_swept = False


def sweep_once() -> None:
    """`sweep`, the first time a process calls it (when it starts its first sandbox)."""
    global _swept
    if not _swept:
        _swept = True
        attempt("sweeping scratch folders of dead processes", sweep)
