"""The local sandbox's writable directories as tmpfs mounts bounded in bytes and in files.

Host directories would be bounded only by the host's disk and inodes (100,000 empty
files took 106,000 host inodes), and removing a large tree takes seconds. A tmpfs takes a
`size` and an `nr_inodes`, is charged to memory, and is gone at once when nothing holds
it. bubblewrap can give a tmpfs a size but no inode count, and its mounts end with its
shell, while the agent's files must survive a shell restart. So `unshare` mounts them
once per episode, on the episode's host directories, in a mount namespace of their own
(inside a user namespace of its own when this process is not root) and exits; this
process keeps descriptors of those namespaces, and each bubblewrap it starts is preceded by
`nsenter` (util-linux), which enters them through this process's /proc entries of those
descriptors (`enter_argv`; passing the descriptors themselves would hand them on through
bubblewrap to the agent). The host's own view of the directories stays empty; the
host reaches the files as before, through the sandbox's `/proc/<pid>/root`. `close` drops
the descriptors: the mounts and every file in them go with the last shell.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from mle_gym.sandbox import fd_wait

#: Files (inodes) each workspace mount may hold, on both backends: about 1 KiB of kernel
#: memory each, charged to the sandbox's memory limit like the files' bytes.
DEFAULT_FILES = 1_000_000

_READY = b"ready\n"
_START_TIMEOUT = 30.0
# Mounts each tmpfs given as an argument with the options in $0, says so, and waits for
# its stdin to close: the namespaces must outlive it only through the host's descriptors.
_SCRIPT = (
    'for d in "$@"; do mount -t tmpfs -o "$0" mle-gym-workspace "$d" || exit 1; done; '
    "echo ready; read _"
)

_NSENTER = shutil.which("nsenter") or "nsenter"


class WorkspaceUnavailable(Exception):
    """The tmpfs mounts could not be made (no `unshare`, or user namespaces refused)."""


class Workspace:
    """tmpfs mounts on `mountpoints` of at most `size` bytes and `files` inodes each,
    owned by `uid` (None: by this process's user)."""

    def __init__(
        self, mountpoints: Sequence[Path], *, size: int | None, files: int, uid: int | None
    ) -> None:
        self.mountpoints = list(mountpoints)
        options = ["mode=0755", "nosuid", "nodev", f"nr_inodes={files}"]
        if size:
            options.append(f"size={size}")
        if uid is not None:
            options += [f"uid={uid}", f"gid={uid}"]
        self.options = ",".join(options)
        #: (descriptor, nsenter's option for it), in the order they are entered
        self._namespaces: list[tuple[int, str]] = []

    def create(self) -> None:
        """Mount the tmpfs mounts; raise WorkspaceUnavailable with the reason if impossible."""
        own_user = os.geteuid() != 0  # a user may mount only in a user namespace of its own
        argv = [
            "unshare",
            *(["--user", "--map-root-user"] if own_user else []),
            "--mount",
            "--propagation",
            "private",
            "--",
            "sh",
            "-c",
            _SCRIPT,
            self.options,
            *map(str, self.mountpoints),
        ]
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                close_fds=True,
            )
        except OSError as exc:
            raise WorkspaceUnavailable(f"could not run unshare: {exc}") from None
        assert proc.stdin is not None and proc.stdout is not None
        try:
            ready = fd_wait.readable([proc.stdout.fileno()], _START_TIMEOUT)
            if not ready or proc.stdout.readline() != _READY:
                proc.kill()
                _, error = proc.communicate(timeout=_START_TIMEOUT)
                reason = error.decode(errors="replace").strip() or "no answer"
                raise WorkspaceUnavailable(f"could not mount the workspace: {reason}")
            kinds = [("user", "--user")] if own_user else []
            for name, option in [*kinds, ("mnt", "--mount")]:
                fd = os.open(f"/proc/{proc.pid}/ns/{name}", os.O_RDONLY | os.O_CLOEXEC)
                self._namespaces.append((fd, option))
        except BaseException:
            self.close()
            raise
        finally:
            if proc.poll() is None:
                proc.stdin.close()
                try:
                    proc.wait(timeout=_START_TIMEOUT)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            for stream in (proc.stdin, proc.stdout, proc.stderr):
                if stream is not None and not stream.closed:
                    stream.close()

    def enter_argv(self) -> list[str]:
        """Words to put before a command so that it runs in the workspace's namespaces
        (the user namespace first: the mount namespace belongs to it)."""
        own = f"/proc/{os.getpid()}/fd"
        entries = [f"{option}={own}/{fd}" for fd, option in self._namespaces]
        return [_NSENTER, "--preserve-credentials", *entries, "--"]

    def close(self) -> None:
        """Let the mounts go (at once, or when the last process inside them ends)."""
        namespaces, self._namespaces = self._namespaces, []
        for fd, _ in namespaces:
            os.close(fd)
