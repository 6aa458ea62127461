"""The local sandbox's writable directories as tmpfs mounts bounded in bytes and in files.

Host directories would be bounded only by the host's disk and inodes (100,000 empty
files took 106,000 host inodes), and removing a large tree takes seconds. A tmpfs takes a
`size` and an `nr_inodes`, is charged to memory, and is gone at once when nothing holds
it. bubblewrap can give a tmpfs a size but no inode count, and its mounts end with its
shell, while the agent's files must survive a shell restart. So `unshare` mounts them
once per episode, on the episode's host directories, in a mount namespace of their own,
and this process keeps a descriptor of that namespace (and of its user namespace when this
process is not root). As root, a short-lived thread of this process makes the namespace
and the mounts itself (unshare(2), mount(2)) and ends, so a start runs no program for
them; otherwise `unshare` (util-linux) makes a user namespace too, which a thread of a
multithreaded process cannot, mounts them and exits. Each bubblewrap started later is
preceded by `nsenter` (util-linux), which enters them through this process's /proc entries
of those descriptors (`enter_argv`; passing the descriptors themselves would hand them on
through bubblewrap to the agent). The host's own view of the directories stays empty; the
host reaches the files as before, through the sandbox's `/proc/<pid>/root`. `close` drops
the descriptors: the mounts and every file in them go with the last shell.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import threading
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
_libc = ctypes.CDLL(None, use_errno=True)
_CLONE_NEWNS = 0x00020000
_MS_NOSUID, _MS_NODEV, _MS_REC, _MS_PRIVATE = 0x2, 0x4, 0x4000, 0x40000


class WorkspaceUnavailable(Exception):
    """The tmpfs mounts could not be made (no `unshare`, or user namespaces refused)."""


class Workspace:
    """tmpfs mounts on `mountpoints` of at most `size` bytes and `files` inodes each,
    owned by `uid` (None: by this process's user)."""

    def __init__(
        self, mountpoints: Sequence[Path], *, size: int | None, files: int, uid: int | None
    ) -> None:
        self.mountpoints = list(mountpoints)
        data = ["mode=0755", f"nr_inodes={files}"]
        if size:
            data.append(f"size={size}")
        if uid is not None:
            data += [f"uid={uid}", f"gid={uid}"]
        #: tmpfs's own options (mount(2)'s data); `options` adds the flags, as mount(8) reads them
        self.data = ",".join(data)
        self.options = ",".join(["nosuid", "nodev", *data])
        #: (descriptor, nsenter's option for it), in the order they are entered
        self._namespaces: list[tuple[int, str]] = []

    def create(self) -> None:
        """Mount the tmpfs mounts; raise WorkspaceUnavailable with the reason if impossible."""
        if os.geteuid() == 0:
            self._create_in_thread()
        else:  # a user may mount only in a user namespace of its own
            self._create_with_unshare()

    def _create_in_thread(self) -> None:
        """The namespace and mounts made by a thread that ends right after: unshare(2)
        moves only the calling thread, and its namespace lives on through the descriptor."""
        failure: list[str] = []

        def make() -> None:
            try:
                _call("unshare", _libc.unshare(_CLONE_NEWNS))
                # as `unshare --propagation private`: nothing mounted here reaches the host
                _call("mount", _libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None))
                for target in self.mountpoints:
                    _call("mount", _libc.mount(
                        b"mle-gym-workspace", os.fsencode(target), b"tmpfs",
                        _MS_NOSUID | _MS_NODEV, self.data.encode(),
                    ))  # fmt: skip
                fd = os.open("/proc/thread-self/ns/mnt", os.O_RDONLY | os.O_CLOEXEC)
                self._namespaces.append((fd, "--mount"))
            except OSError as exc:
                failure.append(str(exc))

        thread = threading.Thread(target=make, name="mle-gym-workspace")
        thread.start()
        try:
            thread.join()
        except BaseException:  # interrupted: let the thread end, then drop what it made
            thread.join()
            self.close()
            raise
        if failure:
            raise WorkspaceUnavailable(f"could not mount the workspace: {failure[0]}")

    def _create_with_unshare(self) -> None:
        """A user namespace with the mount namespace in it, made by `unshare`, which mounts
        and waits for its stdin to close."""
        argv = [
            "unshare",
            "--user",
            "--map-root-user",
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
            for name, option in (("user", "--user"), ("mnt", "--mount")):
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


def _call(name: str, result: int) -> None:
    """Raise OSError with the reason when a libc call failed."""
    if result != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{name}: {os.strerror(code)}")
