"""A host uid of its own for each running sandbox, so no two share a per-user kernel quota.

The kernel counts some resources per user across the whole host, whatever namespace a
process is in: inotify instances (`fs.inotify.max_user_instances`, often 128) and watches,
processes (RLIMIT_NPROC), pending signals, POSIX message-queue bytes. Sandboxes sharing
one uid share those quotas, so one agent could take all of them from the others. Each
sandbox therefore leases a uid from `AGENT_UIDS`: an exclusive `flock` on that uid's lock
file, held for the sandbox's life. The kernel drops the lock when its holder ends, however
it ends, so the uid of a killed process is free again, and two processes never get the same
one. The lock files live in a directory private to this user at a fixed path (not the temp
dir, which a batch worker may point elsewhere), so every process of the user sees them.
"""

from __future__ import annotations

import fcntl
import os
import stat
import threading
from dataclasses import dataclass
from pathlib import Path

from mle_gym.sandbox.base import SandboxError

#: Host uids given to sandboxes (none is a login user's on a usual system).
AGENT_UIDS = range(61000, 65000)
#: Where this process's next search starts: just past the uid it leased last, so a process
#: starting a thousand sandboxes tries a few lock files each, not every one leased before.
_cursor = 0
_cursor_lock = threading.Lock()


@dataclass
class UidLease:
    """One uid, held until `release()` (or until this process ends)."""

    uid: int
    _fd: int | None

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the only descriptor drops the lock
            self._fd = None


def lock_dir() -> Path:
    """The user's private directory of uid lock files (/run for root, else /tmp)."""
    base = Path("/run") if os.geteuid() == 0 and os.access("/run", os.W_OK) else Path("/tmp")
    directory = base / f"mle-gym-uids-{os.geteuid()}"
    try:
        directory.mkdir(mode=0o700)
    except FileExistsError:
        pass
    info = directory.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077:
        raise SandboxError(f"{directory} is not a private directory of this user: remove it")
    return directory


def lease_uid() -> UidLease:
    """A uid of `AGENT_UIDS` that no running sandbox holds: the first free one after this
    process's last lease, wrapping around."""
    global _cursor
    directory = lock_dir()
    with _cursor_lock:
        first = _cursor
    count = len(AGENT_UIDS)
    for step in range(count):
        offset = (first + step) % count
        uid = AGENT_UIDS[offset]
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(directory / str(uid), flags, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        with _cursor_lock:
            _cursor = (offset + 1) % count
        return UidLease(uid, fd)
    raise SandboxError(
        f"all {len(AGENT_UIDS)} sandbox uids ({AGENT_UIDS.start}-{AGENT_UIDS.stop - 1}) are in use"
    )
